"""The memories a dream works on, as mappings that do not make a Memory of every file.

A nightly dream over 100,000 memories touches a few hundred of them. `StoreView` is the
store as orient found it: the memories read from their files this run, and the ones the
parse cache holds as they are on disk, loaded from the cache the first time they are asked
for. `LiveView` is the store as the plan leaves it: the view, less what is retired, with
what is created or updated. What needs every memory asks the views, not a loop over them:
MEMORY.md needs the first ~190 by priority (`first_by_priority`, `newest`), the staleness
check the memories that cite a file or symbol (`references`).

Both are `MemoryView`s: a Mapping of path to Memory, and those questions. `values()` and
`items()` load every cached memory in one go first (a store-wide walk pays one query, not
one a memory).
"""

from abc import abstractmethod
from collections.abc import ItemsView, Iterable, Iterator, Mapping, MutableMapping, Set, ValuesView
from datetime import datetime

from auto_dream.judge.staleness import References, extract_references
from auto_dream.judge.status import Status
from auto_dream.store.cache import ParseCache
from auto_dream.store.index import NO_ACTIVITY, Activity, first_by_priority
from auto_dream.store.memory import Memory
from auto_dream.store.scan import StoreScan


class MemoryView(Mapping[str, Memory]):
    """Memories by path, with what needs every memory answered without a walk over them all.
    It is an index.IndexSource, so MEMORY.md is built from it directly."""

    @abstractmethod
    def load(self, paths: Iterable[str]) -> None:
        """Read these memories from the cache in one go (rather than one query each)."""

    @abstractmethod
    def load_all(self) -> None:
        """Read every memory the cache answers for, in one go."""

    @abstractmethod
    def outside(self, paths: Set[str]) -> list[str]:
        """The paths of the view not in `paths`, a set of cached ones, in no set order: what is
        left once the cache's index answers for `paths`, without a walk over the store."""

    @abstractmethod
    def first_by_priority(self, count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
        """index.first_by_priority over every memory of the view."""

    @abstractmethod
    def older_than(self, moment: datetime) -> set[str]:
        """The paths of the unpinned memories whose mtime is before `moment`."""

    def decayed(self, activity: Activity) -> int:
        """How many memories have decayed (index.Activity.decayed): unpinned, neither changed nor
        looked up since activity.cutoff, and older than the newest."""
        if activity.cutoff is None:
            return 0
        newest = self.newest()
        moment = activity.cutoff if newest is None else min(activity.cutoff, newest)
        return len(self.older_than(moment) - activity.consulted.keys())

    def _looked_up(self, activity: Activity) -> list[Memory]:
        """The memories of the view looked up lately: candidates however old they are."""
        paths = [path for path in activity.consulted if path in self]
        self.load(paths)
        return [self[path] for path in paths]

    @abstractmethod
    def newest(self) -> datetime | None:
        """The latest mtime."""

    @abstractmethod
    def references(self) -> dict[str, References]:
        """The file and symbol references of every memory that cites any."""

    @abstractmethod
    def marked(self) -> dict[str, Status]:
        """The memories a person marked deprecated, superseded… (Memory.status), by path."""

    def values(self) -> ValuesView[Memory]:
        self.load_all()
        return ValuesView(self)

    def items(self) -> ItemsView[str, Memory]:
        self.load_all()
        return ItemsView(self)


class StoreView(MemoryView):
    """Every memory of the store by path, in path order."""

    def __init__(self, scan: StoreScan, cache: ParseCache):
        self._paths = scan.paths  # sorted when first walked (a nightly dream never does)
        self._sorted = False
        self._read = scan.read
        self._read_refs = {path: parsed.refs for path, parsed in scan.parsed.items()}
        self._cached = scan.unchanged  # what the cache answers for
        self._cache = cache
        self._loaded: dict[str, Memory] = {}

    def __getitem__(self, path: str) -> Memory:
        memory = self._read.get(path) or self._loaded.get(path)
        if memory is None:
            if path not in self._cached:
                raise KeyError(path)
            self.load([path])
            memory = self._loaded[path]
        return memory

    def __contains__(self, path: object) -> bool:
        return path in self._read or path in self._cached

    def __iter__(self) -> Iterator[str]:
        if not self._sorted:
            self._paths.sort()
            self._sorted = True
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def outside(self, paths: Set[str]) -> list[str]:
        return [*self._read, *(self._cached - paths)]

    def load_all(self) -> None:
        self.load(self._cached)

    def load(self, paths: Iterable[str]) -> None:
        wanted = [p for p in paths if p in self._cached and p not in self._loaded]
        if not wanted:
            return
        bulk = len(wanted) > len(self._cache.rows) // 2
        parsed = self._cache.parsed(None if bulk else wanted)
        self._loaded.update((path, parsed[path].memory) for path in wanted)

    def first(self, count: int, excluding: Set[str] = frozenset(), newest: bool = False) -> list[Memory]:
        """At least the first `count` memories outside `excluding` in MEMORY.md's order (or the
        newest, with `newest`), perhaps more: the caller sorts. Every memory read this run is
        among them; of the cached ones, only those the cache ranks first."""
        found = [memory for path, memory in self._read.items() if path not in excluding]
        if self._cached and count > 0:
            # rows the cache holds that are not current (a file changed or gone) are skipped too
            slack = len(excluding) + len(self._cache.rows) - len(self._cached)
            paths = [p for p in self._cache.top_paths(count + slack, pinned_first=not newest)
                     if p in self._cached and p not in excluding]
            self.load(paths)
            found += [self._loaded[path] for path in paths]
        return found

    def references(self, excluding: Set[str] = frozenset()) -> dict[str, References]:
        """The file and symbol references of every memory outside `excluding` that cites any."""
        found = {path: refs for path, refs in self._read_refs.items()
                 if (refs.files or refs.symbols) and path not in excluding}
        for path in self._read:
            if path not in self._read_refs and path not in excluding:  # read without a cache
                refs = extract_references(self._read[path].text())
                if refs.files or refs.symbols:
                    found[path] = refs
        if self._cached:
            found.update((path, refs) for path, refs in self._cache.cited().items()
                         if path in self._cached and path not in excluding)
        return found

    def marked(self, excluding: Set[str] = frozenset()) -> dict[str, Status]:
        """The memories outside `excluding` a person marked deprecated, superseded…: the cache's index answers."""
        found = {path: memory.status for path, memory in self._read.items()
                 if memory.status is not None and path not in excluding}
        if self._cached:
            found.update((path, status) for path, status in self._cache.marked().items()
                         if path in self._cached and path not in excluding)
        return found

    def first_by_priority(self, count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
        return first_by_priority([*self.first(count), *self._looked_up(activity)], count, activity)

    def older_than(self, moment: datetime) -> set[str]:
        found = {path for path, memory in self._read.items() if memory.mtime < moment and not memory.pinned}
        if self._cached:
            found.update(p for p in self._cache.older_than(moment.timestamp()) if p in self._cached)
        return found

    def newest(self) -> datetime | None:
        return max((m.mtime for m in self.first(1, newest=True)), default=None)


class LiveView(MemoryView, MutableMapping[str, Memory]):
    """The store as a plan leaves it: `base` less what is removed, with what is set."""

    def __init__(self, base: StoreView):
        self.base = base
        self.changed: dict[str, Memory] = {}  # created or updated, by path
        self.gone: set[str] = set()  # paths of the base that are retired

    def __getitem__(self, path: str) -> Memory:
        if path in self.gone:
            raise KeyError(path)
        memory = self.changed.get(path)
        return memory if memory is not None else self.base[path]

    def __setitem__(self, path: str, memory: Memory) -> None:
        self.changed[path] = memory
        self.gone.discard(path)

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self.changed.pop(path, None)
        if path in self.base:
            self.gone.add(path)

    def __contains__(self, path: object) -> bool:
        return path not in self.gone and (path in self.changed or path in self.base)

    def __iter__(self) -> Iterator[str]:
        gone = self.gone
        yield from (path for path in self.base if path not in gone)
        yield from (path for path in self.changed if path not in self.base)

    def __len__(self) -> int:
        return (len(self.base) - sum(1 for path in self.gone if path in self.base)
                + sum(1 for path in self.changed if path not in self.base))

    def outside(self, paths: Set[str]) -> list[str]:
        gone, base = self.gone, self.base
        return [*(p for p in base.outside(paths) if p not in gone), *(p for p in self.changed if p not in base)]

    def path_set(self) -> set[str]:
        return (set(self.base) - self.gone) | self.changed.keys()

    def missing(self, paths: set[str]) -> set[str]:
        """Those of `paths` that are not live: set operations, not a walk over the store."""
        base = self.base
        return (paths - base._cached - base._read.keys() - self.changed.keys()) | (paths & self.gone)

    def copy(self) -> "LiveView":
        copy = LiveView(self.base)
        copy.changed, copy.gone = dict(self.changed), set(self.gone)
        return copy

    def same_as(self, other: "LiveView") -> bool:
        """The same memories, as the same objects."""
        return (self.base is other.base and self.gone == other.gone and self.changed.keys() == other.changed.keys()
                and all(memory is other.changed[path] for path, memory in self.changed.items()))

    def load(self, paths: Iterable[str]) -> None:
        self.base.load(p for p in paths if p not in self.changed)

    def load_all(self) -> None:
        self.base.load_all()

    def _excluded(self) -> set[str]:
        return self.gone | self.changed.keys()

    def first_by_priority(self, count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
        return first_by_priority([*self.base.first(count, self._excluded()), *self.changed.values(),
                                  *self._looked_up(activity)], count, activity)

    def older_than(self, moment: datetime) -> set[str]:
        return (self.base.older_than(moment) - self._excluded()) | {
            path for path, memory in self.changed.items() if memory.mtime < moment and not memory.pinned}

    def newest(self) -> datetime | None:
        candidates = [*self.base.first(1, self._excluded(), newest=True), *self.changed.values()]
        return max((m.mtime for m in candidates), default=None)

    def marked(self) -> dict[str, Status]:
        found = self.base.marked(self._excluded())
        found.update((path, memory.status) for path, memory in self.changed.items() if memory.status is not None)
        return found

    def references(self) -> dict[str, References]:
        found = self.base.references(self._excluded())
        for path, memory in self.changed.items():
            refs = extract_references(memory.text())
            if refs.files or refs.symbols:
                found[path] = refs
        return found
