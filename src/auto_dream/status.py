"""`list`, `check` and `build-index`: what is in a store and whether it is in order."""

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from stat import S_ISREG

from auto_dream import MEMORY_TYPES
from auto_dream.cache import ParseCache
from auto_dream.context import StoreContext
from auto_dream.dream.bookkeeping import read_distilled_ids, read_last_dream
from auto_dream.errors import StoreError
from auto_dream.index import IndexLimits, IndexResult, IndexSource, build_index
from auto_dream.journal import LogProblem, read_all_entries
from auto_dream.memory import Memory, Unreadable, shown, write_atomic
from auto_dream.store import MemoryScan, scan_memories
from auto_dream.templates import load_template

GREEN_DAYS = 7
YELLOW_DAYS = 30


def _cache(context: StoreContext) -> ParseCache:
    """dream's parse cache, read but never written here: list and check stay read-only."""
    return ParseCache.load(context.paths)


def age_days(memory: Memory, now: datetime) -> int:
    return max(int((now - memory.mtime).total_seconds() // 86400), 0)


def freshness(days: int) -> str:
    """green ≤ 7 days, yellow 8–30, red > 30."""
    if days <= GREEN_DAYS:
        return "green"
    return "yellow" if days <= YELLOW_DAYS else "red"


# ---------------------------------------------------------------- list


@dataclass(frozen=True)
class ListedMemory:
    """One memory as `list` shows it: `path`, `name` and `description` with their control
    characters written out (memory.shown), safe to print; `as_json` gives them exactly."""

    path: str
    name: str
    type: str
    description: str
    mtime: datetime
    age_days: int
    pinned: bool
    exact: tuple[str, str, str] | None = field(default=None, repr=False, compare=False)  # path, name, description

    @classmethod
    def of(cls, memory: Memory, now: datetime) -> "ListedMemory":
        return cls(shown(memory.path), shown(memory.name), memory.type, shown(memory.description), memory.mtime,
                   age_days(memory, now), memory.pinned, (memory.path, memory.name, memory.description))

    def as_json(self) -> dict:
        path, name, description = self.exact or (self.path, self.name, self.description)
        return {"path": path, "name": name, "type": self.type,
                "description": description, "mtime": self.mtime.isoformat(timespec="seconds"),
                "age_days": self.age_days}


@dataclass(frozen=True)
class ListResult:
    memories: list[ListedMemory]
    unreadable: list[Unreadable]


def list_memories(context: StoreContext, now: datetime, memory_type: str | None = None,
                  archived: bool = False) -> ListResult:
    """Memories grouped by type (in DESIGN order), newest first inside a type."""
    scan = scan_memories(context.paths, context.tz, archived=archived, cache=None if archived else _cache(context))
    chosen = [m for m in scan.memories if memory_type is None or m.type == memory_type]
    chosen.sort(key=lambda m: (MEMORY_TYPES.index(m.type), not m.pinned, -m.mtime.timestamp(), m.path))
    listed = [ListedMemory.of(m, now) for m in chosen]
    return ListResult(memories=listed, unreadable=scan.unreadable)


# ---------------------------------------------------------------- build-index


def index_limits(context: StoreContext) -> IndexLimits:
    config = context.config
    return IndexLimits(config.index_max_lines, config.index_max_bytes, config.index_line_chars)


def render_index(context: StoreContext, memories: list[Memory] | IndexSource) -> IndexResult:
    header = load_template("MEMORY_header.md", context.paths.templates)
    return build_index(memories, header, index_limits(context), context.tz)


@dataclass(frozen=True)
class IndexBuild:
    result: IndexResult
    changed: bool
    unreadable: list[Unreadable]


def rebuild_index(context: StoreContext) -> IndexBuild:
    """Write MEMORY.md from memories/ alone; an index already up to date is not rewritten."""
    scan = scan_memories(context.paths, context.tz, cache=_cache(context))
    result = render_index(context, scan.memories)
    data = result.text.encode("utf-8")
    changed = read_index(context, len(data) + 1) != data
    if changed:
        write_atomic(context.paths.index, data)
    return IndexBuild(result=result, changed=changed, unreadable=scan.unreadable)


def read_index(context: StoreContext, limit: int) -> bytes | None:
    """MEMORY.md's first `limit` bytes (enough to compare it with what it should be), or None
    when it is not there. Never through a link, never from a FIFO (paths.check_layout refuses
    both when the store is opened; O_NOFOLLOW and O_NONBLOCK hold if one appears since)."""
    try:
        fd = os.open(context.paths.index, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StoreError(f"cannot read {context.paths.index}: {error.strerror}") from None
    try:
        if not S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{context.paths.index} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


def index_in_sync(context: StoreContext, scan: MemoryScan) -> bool:
    expected = render_index(context, scan.memories).text.encode("utf-8")
    return read_index(context, len(expected) + 1) == expected


# ---------------------------------------------------------------- check


@dataclass(frozen=True)
class MemoryHealth:
    """One memory as `check` shows it (`path` and `name` safe to print); `as_json` gives the exact path."""

    path: str
    name: str
    type: str
    age_days: int
    freshness: str
    staleness: str  # EVERGREEN, FRESH, PARTIALLY_STALE or FULLY_STALE
    missing_refs: list[str] = field(default_factory=list)
    exact_path: str = field(default="", repr=False, compare=False)

    def as_json(self) -> dict:
        return {"path": self.exact_path or self.path, "freshness": self.freshness, "staleness": self.staleness,
                "missing_refs": self.missing_refs}


@dataclass(frozen=True)
class CheckResult:
    undistilled_entries: int
    last_dream: datetime | None
    dream_due: bool
    index_in_sync: bool
    memories: list[MemoryHealth]
    unreadable: list[Unreadable]
    log_problems: list[LogProblem]

    def as_json(self) -> dict:
        return {
            "undistilled_entries": self.undistilled_entries,
            "last_dream": self.last_dream.isoformat(timespec="seconds") if self.last_dream else None,
            "dream_due": self.dream_due,
            "index_in_sync": self.index_in_sync,
            "memories": [m.as_json() for m in self.memories],
        }


def dream_is_due(last_dream: datetime | None, waiting_entries: int, due_hours: float,
                 due_entries: int, now: datetime) -> bool:
    """At least `due_hours` since the last dream and at least `due_entries` entries waiting."""
    long_enough = last_dream is None or now - last_dream >= timedelta(hours=due_hours)
    return long_enough and waiting_entries >= due_entries


def check_store(context: StoreContext, now: datetime) -> CheckResult:
    scan = scan_memories(context.paths, context.tz, cache=_cache(context))
    entries, log_problems = read_all_entries(context.paths)
    distilled = read_distilled_ids(context.paths)
    waiting = sum(1 for e in entries if e.id not in distilled)
    last_dream = read_last_dream(context.paths)
    from auto_dream.dream.prune import assess_staleness
    from auto_dream.staleness import find_repo

    staleness = assess_staleness(scan.memories, find_repo(context.paths.root, context.config.repo),
                                 context.paths.root, {path: parsed.refs for path, parsed in scan.parsed.items()})
    health = []
    for memory in sorted(scan.memories, key=lambda m: m.path):
        days = age_days(memory, now)
        result = staleness[memory.path]
        health.append(MemoryHealth(shown(memory.path), shown(memory.name), memory.type, days, freshness(days),
                                   result.classification, result.missing_refs, exact_path=memory.path))
    return CheckResult(
        undistilled_entries=waiting,
        last_dream=last_dream,
        dream_due=dream_is_due(last_dream, waiting, context.config.due_hours, context.config.due_entries, now),
        index_in_sync=index_in_sync(context, scan),
        memories=health,
        unreadable=scan.unreadable,
        log_problems=log_problems,
    )
