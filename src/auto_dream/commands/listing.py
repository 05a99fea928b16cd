"""`list`: the memories of a store (or its archive), grouped by type, newest first."""

from dataclasses import dataclass, field
from datetime import datetime

from auto_dream.judge.status import Status
from auto_dream.store.cache import ParseCache
from auto_dream.store.context import StoreContext
from auto_dream.store.memory import Memory, Unreadable, shown
from auto_dream.store.memory_md import marked_memories
from auto_dream.store.paths import MEMORY_TYPES, check_memory_type
from auto_dream.store.scan import scan_memories

GREEN_DAYS = 7
YELLOW_DAYS = 30


def age_days(memory: Memory, now: datetime) -> int:
    return max(int((now - memory.mtime).total_seconds() // 86400), 0)


def freshness(days: int) -> str:
    """green ≤ 7 days, yellow 8–30, red > 30."""
    if days <= GREEN_DAYS:
        return "green"
    return "yellow" if days <= YELLOW_DAYS else "red"


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
    status: Status | None = None  # what a person wrote of its status: deprecated, superseded… (judge.status)

    @classmethod
    def of(cls, memory: Memory, now: datetime, status: Status | None = None) -> "ListedMemory":
        return cls(shown(memory.path), shown(memory.name), memory.type, shown(memory.description), memory.mtime,
                   age_days(memory, now), memory.pinned, (memory.path, memory.name, memory.description), status)

    def as_json(self) -> dict[str, object]:
        path, name, description = self.exact or (self.path, self.name, self.description)
        return {"path": path, "name": name, "type": self.type,
                "description": description, "mtime": self.mtime.isoformat(timespec="seconds"),
                "age_days": self.age_days, "status": self.status.as_json() if self.status else None}


@dataclass(frozen=True)
class ListResult:
    memories: list[ListedMemory]
    unreadable: list[Unreadable]


def list_memories(context: StoreContext, now: datetime, memory_type: str | None = None,
                  *, archived: bool = False) -> ListResult:
    """Memories grouped by type (user, feedback, project, reference), newest first inside a type, each with the status
    a person wrote of it (memory_md.marked_memories)."""
    check_memory_type(memory_type)
    cache = None if archived else ParseCache.load(context.paths)  # dream's cache: read here, never written
    scan = scan_memories(context.paths, context.tz, archived=archived, cache=cache, memo=context.read_memo)
    chosen = [m for m in scan.memories if memory_type is None or m.type == memory_type]
    chosen.sort(key=lambda m: (MEMORY_TYPES.index(m.type), not m.pinned, -m.mtime.timestamp(), m.path))
    marked = marked_memories(context, chosen)
    listed = [ListedMemory.of(m, now, marked.get(m.path)) for m in chosen]
    return ListResult(memories=listed, unreadable=scan.unreadable)


