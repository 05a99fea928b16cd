"""The memories a dream works on, as mappings that do not make a Memory of every file.

A nightly dream over 100,000 memories touches a few hundred of them. A `MemorySource` is the
store as orient found it — `store.views.StoreView`: the memories read from their files this
run, and the ones the parse cache holds as they are on disk, loaded the first time they are
asked for — together with what planning asks of the parse cache without naming it: the pair
index over the stored memories, which bodies hold a mark, how many memories hold a word.
`LiveView` is the store as the plan leaves it: the source, less what is retired, with what is
created or updated. What needs every memory asks the views, not a loop over them: MEMORY.md
needs the first ~190 by priority (`first_by_priority`, `newest`), the staleness check the
memories that cite a file or symbol (`references`).

Both are `MemoryView`s: a Mapping of path to Memory, and those questions. `values()` and
`items()` load every cached memory in one go first (a store-wide walk pays one query, not
one a memory). Planning (consolidate, prune, the plan) reads memories through these alone:
it never names the parse cache (an import contract in pyproject.toml).
"""

from abc import abstractmethod
from collections.abc import ItemsView, Iterable, Iterator, Mapping, MutableMapping, Sequence, Set, ValuesView
from datetime import datetime

from auto_dream.judge.staleness import References, extract_references
from auto_dream.judge.status import Status
from auto_dream.store.index import NO_ACTIVITY, Activity, first_by_priority
from auto_dream.store.memory import Memory


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


class MemorySource(MemoryView):
    """The store as orient found it, and what planning asks of the parse cache behind it."""

    @abstractmethod
    def first(self, count: int, excluding: Set[str] = frozenset(), *, newest: bool = False) -> list[Memory]:
        """At least the first `count` memories outside `excluding` in MEMORY.md's order (or the
        newest, with `newest`), perhaps more: the caller sorts."""

    @abstractmethod
    def references(self, excluding: Set[str] = frozenset()) -> dict[str, References]:
        """The file and symbol references of every memory outside `excluding` that cites any."""

    @abstractmethod
    def marked(self, excluding: Set[str] = frozenset()) -> dict[str, Status]:
        """The memories outside `excluding` a person marked deprecated, superseded…, by path."""

    @abstractmethod
    def held(self, paths: Set[str]) -> set[str]:
        """Those of `paths` that are memories of the source: set operations, not a walk."""

    @abstractmethod
    def stored_matches(self, probes: Mapping[str, frozenset[str]], threshold: float, *,
                       among: int = 0) -> dict[str, set[str]]:
        """For each probe (a key and its words), the stored memories whose overlap with its words
        reaches `threshold` (with `among`, of those with that ground: similarity.AIMS, PINS or
        ANCHORS), found through the pair index (judge.pairs.stored_pairs); none without one."""

    @abstractmethod
    def bodies_holding(self, marks: Sequence[str]) -> set[str]:
        """The paths of the stored memories whose body holds any of `marks`, without reading the bodies here."""

    @abstractmethod
    def document_frequency(self, words: Iterable[str]) -> dict[str, int]:
        """How many stored memories hold each word."""

    @abstractmethod
    def body_unread(self, path: str) -> bool:
        """Whether the memory at `path` is a stored one whose body has not been read yet."""


class LiveView(MemoryView, MutableMapping[str, Memory]):
    """The store as a plan leaves it: `base` less what is removed, with what is set."""

    def __init__(self, base: MemorySource):
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
        return (paths - self.base.held(paths) - self.changed.keys()) | (paths & self.gone)

    def copy(self) -> "LiveView":
        copy = LiveView(self.base)
        copy.changed, copy.gone = dict(self.changed), set(self.gone)
        return copy

    def same_as(self, other: "LiveView") -> bool:
        """The same memories, as the same objects."""
        return (self.base is other.base and self.gone == other.gone and self.changed.keys() == other.changed.keys()
                and all(memory is other.changed[path] for path, memory in self.changed.items()))

    def body_unread(self, path: str) -> bool:
        """MemorySource.body_unread of the source, for a memory the plan has not rewritten."""
        return path not in self.changed and self.base.body_unread(path)

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
