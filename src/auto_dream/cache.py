"""The parse cache under .state/cache/: unchanged memory files are not re-read.

Each memory file's entry is keyed by its size and mtime (in nanoseconds) and holds what a
dream needs of it: the parsed memory, its word profile and its references. dream saves the
cache when it finishes, so a hit also means "unchanged since the last dream" — which is
what makes a dream incremental. Other commands use it without writing it.

The cache is JSON (never pickle: a store may sit in a shared repository, and loading it must
not run code), sharded by type folder and month of the file name, so a nightly dream that
adds a hundred memories rewrites one or two shards, not the whole cache. A missing,
unreadable or foreign-version shard is simply a miss.
"""

import gc
import json
import sys
from contextlib import contextmanager

try:  # several times faster at 100k memories; plain json when it is not installed
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency, but the cache must not need it
    orjson = None
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from auto_dream.memory import Memory, write_atomic
from auto_dream.paths import StorePaths
from auto_dream.similarity import Profile
from auto_dream.staleness import References, extract_references

VERSION = 3  # 3: negated is what a negation's clause-bounded scope holds (similarity)
Fingerprint = tuple[int, int, int]


@dataclass(frozen=True)
class Parsed:
    """A memory file as a dream sees it."""

    fingerprint: Fingerprint
    memory: Memory
    profile: Profile
    refs: References

    @classmethod
    def of(cls, fingerprint: Fingerprint, memory: Memory) -> "Parsed":
        text = memory.text()
        return cls(tuple(fingerprint), memory, Profile.of(text, memory), extract_references(text))


def shard_of(path: str) -> str:
    """memories/project/20261130_x.md → memories-project-202611; anything else → its folder's shard."""
    parts = path.split("/")
    month = parts[-1][:6] if parts[-1][:6].isdigit() else "other"
    return "-".join([*parts[:-1], month]).replace(".", "_")


class ParseCache:
    def __init__(self, folder: Path):
        self.folder = folder
        self.entries: dict[str, Parsed] = {}
        self.dirty: set[str] = set()
        self.loaded_shards: set[str] = set()

    @classmethod
    def load(cls, paths: StorePaths) -> "ParseCache":
        cache = cls(paths.state / "cache")
        if not cache.folder.is_dir():
            return cache
        with _no_gc():  # hundreds of thousands of new objects, no cycles: collecting is pure cost
            cache._load_shards()
        return cache

    def _load_shards(self) -> None:
        cache = self
        for shard in sorted(cache.folder.glob("*.json")):
            try:
                data = _loads(shard.read_bytes())
                if data.get("version") != VERSION:
                    continue
                for path, raw in data["entries"].items():
                    cache.entries[path] = _decode(path, raw)
                cache.loaded_shards.add(shard.stem)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # a damaged shard is a miss: its files are parsed again

    def get(self, path: str, fingerprint: Fingerprint | None) -> Parsed | None:
        """The cached parse when the file's size and mtime are as cached (a copied store still hits)."""
        hit = self.entries.get(path)
        if hit is None or fingerprint is None:
            return None
        return hit if hit.fingerprint[:2] == tuple(fingerprint[:2]) else None

    def put(self, parsed: Parsed) -> None:
        self.entries[parsed.memory.path] = parsed
        self.dirty.add(shard_of(parsed.memory.path))

    def drop(self, path: str) -> None:
        if self.entries.pop(path, None) is not None:
            self.dirty.add(shard_of(path))

    def keep_only(self, paths: set[str]) -> None:
        for path in [p for p in self.entries if p not in paths]:
            self.drop(path)

    def save(self) -> None:
        """Write the shards that changed (and remove the ones left empty)."""
        by_shard: dict[str, dict] = {shard: {} for shard in self.dirty}
        for path, parsed in self.entries.items():
            shard = shard_of(path)
            if shard in by_shard:
                encoded = _encode(parsed)
                if encoded is not None:
                    by_shard[shard][path] = encoded
        for shard, entries in by_shard.items():
            target = self.folder / f"{shard}.json"
            if entries:
                document = {"version": VERSION, "entries": entries}
                write_atomic(target, _dumps(document))
            elif target.exists():
                target.unlink()
        self.dirty.clear()


# ---------------------------------------------------------------- JSON form


def _encode(parsed: Parsed) -> dict | None:
    memory = parsed.memory
    if memory.read_only:
        return None  # odd files (too deep, aliases, no frontmatter…) are parsed each time, never cached
    extra = _encode_value(memory.extra)
    if extra is _UNSUPPORTED:
        return None  # a YAML value JSON cannot hold: parse this file each time instead
    return {
        "fp": list(parsed.fingerprint),
        "name": memory.name, "description": memory.description, "type": memory.type,
        "mtime": memory.mtime.isoformat(), "body": memory.body, "sources": list(memory.sources),
        "extra": extra, "type_source": memory.type_source, "read_only": memory.read_only,
        "words": sorted(parsed.profile.words), "signals": sorted(parsed.profile.signals),
        "replaced": sorted(parsed.profile.replaced), "negated": sorted(parsed.profile.negated),
        "changed": sorted(parsed.profile.changed),
        "files": list(parsed.refs.files), "symbols": list(parsed.refs.symbols),
    }


@contextmanager
def _no_gc():
    """Pause the cyclic garbage collector: at 100k memories it triples the load time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _loads(data: bytes) -> dict:
    return orjson.loads(data) if orjson is not None else json.loads(data.decode("utf-8"))


def _dumps(document: dict) -> bytes:
    if orjson is not None:
        return orjson.dumps(document)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _frozen(cls, **fields):
    """A frozen dataclass instance without running __init__'s per-field object.__setattr__.

    The cache rebuilds every memory of the store on each run; at 100,000 memories the
    generated __init__ of four frozen dataclasses per memory is a second on its own.
    """
    instance = object.__new__(cls)
    instance.__dict__.update(fields)
    return instance


_EMPTY = frozenset()


def _decode(path: str, raw: dict) -> Parsed:
    memory = _frozen(Memory, path=path, name=raw["name"], description=raw["description"], type=raw["type"],
                     mtime=datetime.fromisoformat(raw["mtime"]), body=raw["body"], sources=tuple(raw["sources"]),
                     extra=_decode_value(raw["extra"]) if raw["extra"] else {}, type_source=raw["type_source"],
                     read_only=raw["read_only"])
    profile = _frozen(Profile, words=frozenset(map(sys.intern, raw["words"])),
                      signals=frozenset(raw["signals"]) if raw["signals"] else _EMPTY,
                      replaced=frozenset(raw["replaced"]) if raw["replaced"] else _EMPTY,
                      negated=frozenset(raw["negated"]) if raw["negated"] else _EMPTY,
                      changed=frozenset(raw["changed"]) if raw["changed"] else _EMPTY,
                      source=memory)  # its text is joined only if a negation needs it
    refs = _frozen(References, files=tuple(raw["files"]), symbols=tuple(raw["symbols"]))
    return _frozen(Parsed, fingerprint=tuple(raw["fp"]), memory=memory, profile=profile, refs=refs)


_UNSUPPORTED = object()


def _encode_value(value):
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, dict):
        encoded = {}
        for key, item in value.items():
            if not isinstance(key, str) or key.startswith("$"):
                return _UNSUPPORTED
            encoded[key] = _encode_value(item)
            if encoded[key] is _UNSUPPORTED:
                return _UNSUPPORTED
        return encoded
    if isinstance(value, list):
        items = [_encode_value(item) for item in value]
        return _UNSUPPORTED if any(item is _UNSUPPORTED for item in items) else items
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return _UNSUPPORTED


def _decode_value(value):
    if isinstance(value, dict):
        if set(value) == {"$datetime"}:
            return datetime.fromisoformat(value["$datetime"])
        if set(value) == {"$date"}:
            return date.fromisoformat(value["$date"])
        return {key: _decode_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode_value(item) for item in value]
    return value
