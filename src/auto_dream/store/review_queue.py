"""The review queue: the decisions dream leaves to someone who can read meaning, kept between runs.

Dream acts only when it is certain. A pair it is not certain of (a possible duplicate, a
possible conflict) becomes an item here, in `.state/review.json`, with a stable id, both
memories' paths and fingerprints, and the deciding sentence of each side quoted whole. The
item waits until someone decides it (`auto-dream resolve`, the MCP tool `resolve`, or
Claude with `dream --llm`), or until one side changes or goes: then it is dropped, and the
next dream judges the pair again. A decision to keep both is remembered here too, with the
fingerprints it was made on, so the pair is not raised again while both stay as they are.

The file is dream's own: written only through a run's plan (so `undo` restores it), read
leniently (an item that cannot be read is left out, never a crash).
"""

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from auto_dream.errors import StoreError
from auto_dream.store.files import read_regular
from auto_dream.store.paths import StoreLayout

if TYPE_CHECKING:  # a type only: the memory reader loads YAML, which `context` needs only with items waiting
    from auto_dream.store.memory import Memory

QUEUE_FILE = "review.json"
MAX_QUEUE_BYTES = 64 * 1024 * 1024

# duplicate: may say the same; conflict: may contradict each other; superseded: a person marked
# one superseded (or moved, a duplicate…) and named the other
ItemKind = Literal["duplicate", "conflict", "superseded"]
ITEM_KINDS: tuple[str, ...] = ("duplicate", "conflict", "superseded")


def memory_fingerprint(memory: "Memory") -> str:
    """What a decision about a memory was made on: its text as a person reads it (name,
    description, body). Dream's own bookkeeping keys (mtime, sources) do not count."""
    return hashlib.sha256(memory.text().encode("utf-8", "surrogatepass")).hexdigest()[:16]


def item_id(a: str, b: str) -> str:
    """The stable id of the pair of memory paths `a` and `b` (in any order)."""
    first, second = sorted((a, b))
    return "r" + hashlib.sha256(f"{first}\0{second}".encode("utf-8", "surrogatepass")).hexdigest()[:7]


@dataclass(frozen=True)
class ReviewItem:
    """One pending decision: two memories, what may be wrong with them, and the evidence."""

    id: str
    kind: ItemKind
    memories: tuple[str, str]  # paths relative to the root
    fingerprints: tuple[str, str]
    evidence: tuple[str, str]  # the deciding sentence of each side, whole
    reason: str  # what the judge found, in one line
    first_seen: str  # ISO 8601, with its offset

    def as_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "memories": list(self.memories),
                "evidence": list(self.evidence), "reason": self.reason, "first_seen": self.first_seen,
                "fingerprints": list(self.fingerprints)}


@dataclass(frozen=True)
class KeptPair:
    """A decision to keep both memories of a pair, remembered while both are as they were."""

    memories: tuple[str, str]
    fingerprints: tuple[str, str]
    decided: str  # ISO 8601
    reason: str = ""

    def as_json(self) -> dict:
        return {"memories": list(self.memories), "fingerprints": list(self.fingerprints),
                "decided": self.decided, "reason": self.reason}


@dataclass(frozen=True)
class ReviewQueue:
    items: tuple[ReviewItem, ...] = ()
    kept: tuple[KeptPair, ...] = ()

    def item(self, wanted: str) -> ReviewItem | None:
        return next((item for item in self.items if item.id == wanted), None)

    def is_kept(self, a: str, a_print: str, b: str, b_print: str) -> bool:
        """Whether someone decided to keep both of this pair, as they are now."""
        wanted = {(a, a_print), (b, b_print)}
        return any(set(zip(kept.memories, kept.fingerprints)) == wanted for kept in self.kept)

    def render(self) -> bytes:
        document = {"version": 1, "items": [item.as_json() for item in self.items],
                    "kept": [kept.as_json() for kept in self.kept]}
        return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


EMPTY_QUEUE = ReviewQueue()


def queue_path(paths: StoreLayout):
    return paths.state / QUEUE_FILE


def read_queue(paths: StoreLayout) -> tuple[ReviewQueue, bytes | None]:
    """The queue as the file holds it, and the file's bytes (None: there is none). An item or a
    decision that cannot be read is left out; a file that is not a queue at all reads as empty."""
    try:
        data = read_regular(queue_path(paths), MAX_QUEUE_BYTES)
    except StoreError:
        return EMPTY_QUEUE, None
    if data is None:
        return EMPTY_QUEUE, None
    return parse_queue(data), data


def parse_queue(data: bytes) -> ReviewQueue:
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return EMPTY_QUEUE
    if not isinstance(document, dict):
        return EMPTY_QUEUE
    items = [item for raw in _list(document.get("items")) if (item := _item(raw)) is not None]
    kept = [pair for raw in _list(document.get("kept")) if (pair := _kept(raw)) is not None]
    return ReviewQueue(tuple(items), tuple(kept))


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _pair(value: object) -> tuple[str, str] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0], value[1]
    return None


def _item(raw: object) -> ReviewItem | None:
    if not isinstance(raw, dict):
        return None
    memories, prints, evidence = _pair(raw.get("memories")), _pair(raw.get("fingerprints")), _pair(raw.get("evidence"))
    fields = (raw.get("id"), raw.get("kind"), raw.get("reason", ""), raw.get("first_seen"))
    if memories is None or prints is None or evidence is None or not all(isinstance(f, str) for f in fields):
        return None
    if raw["kind"] not in ITEM_KINDS or raw["id"] != item_id(*memories):
        return None
    return ReviewItem(raw["id"], raw["kind"], memories, prints, evidence, raw.get("reason", ""), raw["first_seen"])


def _kept(raw: object) -> KeptPair | None:
    if not isinstance(raw, dict):
        return None
    memories, prints = _pair(raw.get("memories")), _pair(raw.get("fingerprints"))
    decided, reason = raw.get("decided"), raw.get("reason", "")
    if memories is None or prints is None or not isinstance(decided, str) or not isinstance(reason, str):
        return None
    return KeptPair(memories, prints, decided, reason)


# ---------------------------------------------------------------- what a run does to it


@dataclass(frozen=True)
class Raised:
    """A pair a run found worth a reader's time."""

    kind: ItemKind
    memories: tuple[str, str]
    evidence: tuple[str, str]
    reason: str


def next_queue(queue: ReviewQueue, live: Mapping[str, "Memory"], raised: Iterable[Raised], now: str,
               resolved: Iterable[str] = (), kept: Iterable[KeptPair] = ()) -> ReviewQueue:
    """The queue after a run: what it held, less the items `resolved` and those whose memories
    changed or went (the next dream judges them again), plus what the run `raised` (an item
    already there keeps its first sighting; a pair kept as it is now is not raised); the kept
    decisions, less those whose memories changed or went, plus `kept`."""
    prints: dict[str, str | None] = {}

    def current(path: str) -> str | None:
        if path not in prints:
            memory = live.get(path)
            prints[path] = memory_fingerprint(memory) if memory is not None else None
        return prints[path]

    def unchanged(paths: tuple[str, str], fingerprints: tuple[str, str]) -> bool:
        return all(current(path) == print_ for path, print_ in zip(paths, fingerprints))

    done = set(resolved)
    decisions = [pair for pair in (*queue.kept, *kept) if unchanged(pair.memories, pair.fingerprints)]
    remembered = ReviewQueue(kept=tuple(decisions))
    items: dict[str, ReviewItem] = {item.id: item for item in queue.items
                                    if item.id not in done and unchanged(item.memories, item.fingerprints)}
    for pair in raised:
        a, b = pair.memories
        a_print, b_print = current(a), current(b)
        if a_print is None or b_print is None or remembered.is_kept(a, a_print, b, b_print):
            continue
        identity = item_id(a, b)
        if identity in done:
            continue
        before = items.get(identity)
        items[identity] = ReviewItem(identity, pair.kind, (a, b), (a_print, b_print), pair.evidence, pair.reason,
                                     before.first_seen if before is not None else now)
    ordered = sorted(items.values(), key=lambda item: (item.first_seen, item.id))
    return ReviewQueue(tuple(ordered), tuple(sorted(set(decisions), key=lambda k: (k.decided, k.memories))))


def pending(queue: ReviewQueue, live: Mapping[str, "Memory"]) -> tuple[list[ReviewItem], list[ReviewItem]]:
    """(the items still to decide, the items a side of which changed or went since: the next
    dream judges those again)."""
    waiting: list[ReviewItem] = []
    changed: list[ReviewItem] = []
    for item in queue.items:
        memories = [live.get(path) for path in item.memories]
        fresh = all(m is not None and memory_fingerprint(m) == f for m, f in zip(memories, item.fingerprints))
        (waiting if fresh else changed).append(item)
    return waiting, changed


def without(queue: ReviewQueue, item: ReviewItem) -> ReviewQueue:
    return replace(queue, items=tuple(i for i in queue.items if i.id != item.id))


def read_sides(paths: StoreLayout, queue: ReviewQueue) -> "dict[str, Memory]":
    """The memories the queue's items name, as they are now (one that cannot be read is left out)."""
    from auto_dream.store.memory import Memory, read_memory

    found: dict[str, Memory] = {}
    for path in {path for item in queue.items for path in item.memories}:
        if paths.is_memory_path(path):
            memory = read_memory(paths.root / path, paths.root, None, paths.untyped)
            if isinstance(memory, Memory):
                found[path] = memory
    return found


def pending_count(paths: StoreLayout) -> int:
    """How many decisions wait for a reader now (check, the report and a session's context say so)."""
    queue, _ = read_queue(paths)
    return len(pending(queue, read_sides(paths, queue))[0]) if queue.items else 0
