"""`StoreView`: the store as orient found it (store.live.MemorySource), over its scan and the parse cache."""

from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from datetime import datetime

from auto_dream.judge.pairs import stored_pairs
from auto_dream.judge.staleness import References, extract_references
from auto_dream.judge.status import Status
from auto_dream.store.cache import CachedMemory, ParseCache
from auto_dream.store.index import NO_ACTIVITY, Activity, first_by_priority
from auto_dream.store.live import LiveView as LiveView  # re-exported: the view a plan leaves
from auto_dream.store.live import MemorySource
from auto_dream.store.memory import Memory
from auto_dream.store.scan import StoreScan


class StoreView(MemorySource):
    """Every memory of the store by path, in path order."""

    def __init__(self, scan: StoreScan, cache: ParseCache):
        self._paths = scan.paths  # sorted when first walked (a nightly dream never does)
        self._sorted = False
        self._read = scan.read
        self._read_refs = {path: parsed.refs for path, parsed in scan.parsed.items()}
        self._cached = scan.unchanged  # what the cache answers for
        self._cache = cache
        self._loaded: dict[str, Memory] = {}
        # what the pair index answered, by (words, threshold, among): a memory a run creates from an
        # entry has the entry's words, so the memory check after the distiller repeats the entries' questions
        self._matches: dict[tuple[frozenset[str], float, int], set[str]] = {}

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

    def first(self, count: int, excluding: Set[str] = frozenset(), *, newest: bool = False) -> list[Memory]:
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


    def held(self, paths: Set[str]) -> set[str]:
        return {path for path in paths if path in self._read or path in self._cached}

    def stored_matches(self, probes: Mapping[str, frozenset[str]], threshold: float, *,
                       among: int = 0) -> dict[str, set[str]]:
        """Each set of words is asked of the pair index once in the view's life (one run)."""
        if not self._cached:
            return {key: set() for key in probes}
        memo = self._matches
        unasked = {words for words in probes.values() if (words, threshold, among) not in memo}
        for words in unasked:
            memo[words, threshold, among] = set()
        for words, path in stored_pairs({words: words for words in unasked}, self._cache, threshold, among=among):
            memo[words, threshold, among].add(path)
        return {key: memo[words, threshold, among] for key, words in probes.items()}

    def bodies_holding(self, marks: Sequence[str]) -> set[str]:
        return self._cache.bodies_holding(marks) if self._cached else set()

    def document_frequency(self, words: Iterable[str]) -> dict[str, int]:
        return self._cache.document_frequency(words) if self._cached else {}

    def body_unread(self, path: str) -> bool:
        if path in self._read or path not in self._cached:
            return False
        memory = self._loaded.get(path)
        return memory is None or (isinstance(memory, CachedMemory) and "body" not in memory.__dict__)
