"""The newest records close enough to a probe, searched through an index that grows.

One dream may take thousands of new entries. Each is compared with the entries of the same
run before it (the memories they will become, which grow as later entries join them), and
each memory the run made with the others. Comparing each with every other costs n²/2, and
a small shared vocabulary (a busy team's log, months of notes imported at once) makes a
large share of those pairs pass the overlap thresholds: no exact search can then avoid
n² work. So the comparison is budgeted, as judgement is everywhere else in dream: a probe
is compared with at most `limit` records, the *newest* that pass the overlap rule (what a
fact repeats or corrects is most often what was said shortly before). Below the limit the
answer is every record that passes, exactly as an all-pairs scan finds it
(`reference_recent` is that scan, kept for the tests).

The index is the prefix filter of judge.pairs, kept up to date as records grow: a record
at least as large as the probe holds a word of the probe's prefix (`_holders`); a smaller one
has a word of the probe in its own prefix (`_prefixes`). Posting lists are kept sorted by
key, so the search walks them newest first and stops at the limit.
"""

from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from auto_dream.judge.pairs import _needed, word_ranks
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, anchored_floor, overlap, relatable

Key = TypeVar("Key", bound=Hashable)

# How many records one probe is compared with at most: the newest that pass. Real logs stay
# well below it (all 2,541 LoCoMo observations dreamed at once: at most 26 candidates for an
# entry); a log of thousands of entries over a dozen words reaches it at every entry.
RECENT_LIMIT = 16


def passes(words: frozenset[str], grounds: int, other: frozenset[str], other_grounds: int, low: float,
           high: float) -> bool:
    """The overlap rule of every pair search (similarity.relatable): `high` (the duplicate threshold),
    `low` when the two sides' grounds let it (one aims a signal, or both pin something down), lower
    still when both hold anchors."""
    return relatable(overlap(words, other), grounds, other_grounds, low, high)


def reference_recent(words: frozenset[str], grounds: int, records: Mapping[int, tuple[frozenset[str], int]],
                     low: float, high: float, limit: int | None = None, exclude: object = None) -> list[int]:
    """The keys of the newest records (highest key first) that pass the rule with the probe,
    at most `limit` of them: the all-pairs way, for tests and benchmarks."""
    found = []
    for key in sorted(records, reverse=True):
        if key == exclude:
            continue
        other, other_grounds = records[key]
        if passes(words, grounds, other, other_grounds, low, high):
            found.append(key)
            if limit is not None and len(found) == limit:
                break
    return found


_NONE: frozenset[str] = frozenset()


class RecentIndex:
    """Records under integer keys (a higher key is newer), whose words may grow or be replaced.

    `ranks` orders the words rarest first (pairs.word_ranks); a word it does not know ranks
    below all it knows. `low` and `high` are the rule's thresholds (`passes`). Most records
    neither aim nor pin anything down and are searched for at `high`, where prefixes are
    shortest; the few that aim, and those that pin something down, are indexed again at `low`,
    and those that hold anchors at the anchored floor (similarity.anchored_floor).
    """

    def __init__(self, ranks: Mapping[str, int], low: float, high: float):
        self._ranks, self.low, self.high = dict(ranks), low, max(low, high)
        self.floor = anchored_floor(low)
        self._unranked = -1  # the next rank for a word `ranks` does not know: below all it knows
        self._words: dict[int, frozenset[str]] = {}
        self._grounds: dict[int, int] = {}
        # word -> keys, ascending: of every record holding it; of every record with it in its
        # prefix at `high`; at `low`; the same, by ground, for the records that aim (AIMS), for
        # those that pin something down (PINS), and at the floor for those that hold anchors (ANCHORS)
        self._holders: dict[str, list[int]] = {}
        self._high: dict[str, list[int]] = {}
        self._low: dict[str, list[int]] = {}
        self._grounded_holders: dict[int, dict[str, list[int]]] = {AIMS: {}, PINS: {}, ANCHORS: {}}
        self._grounded_low: dict[int, dict[str, list[int]]] = {AIMS: {}, PINS: {}, ANCHORS: {}}
        self._reach = {AIMS: low, PINS: low, ANCHORS: self.floor}  # the threshold each ground is indexed at

    def __len__(self) -> int:
        return len(self._words)

    def _ordered(self, words: frozenset[str]) -> list[str]:
        ranks = self._ranks
        for word in words:
            if word not in ranks:
                ranks[word] = self._unranked
                self._unranked -= 1
        return sorted(words, key=ranks.__getitem__)

    @staticmethod
    def _prefix(ordered: list[str], threshold: float) -> list[str]:
        """The words one of which any set reaching `threshold` with these shares (pairs' prefix filter)."""
        return ordered[:len(ordered) - _needed(len(ordered), threshold) + 1]

    def put(self, key: int, words: frozenset[str], grounds: int) -> None:
        """Add a record, or change one's words (grown, or replaced by another text) and grounds."""
        old_words, old_grounds = self._words.get(key, _NONE), self._grounds.get(key, 0)
        self._words[key], self._grounds[key] = words, grounds
        ordered = self._ordered(words)
        high, low = self._prefix(ordered, self.high), self._prefix(ordered, self.low)
        # a word a record no longer holds stays in its lists: the search checks every record it
        # meets against the words it holds now, so a stale posting costs a check, never a pair.
        # What a record was posted under is known again from its old words (ranks never change).
        old_ordered = self._ordered(old_words) if old_words else []
        old_high, old_low = self._prefix(old_ordered, self.high), self._prefix(old_ordered, self.low)
        postings = [(self._holders, words, old_words), (self._high, high, old_high), (self._low, low, old_low)]
        for bit in (AIMS, PINS, ANCHORS):
            if grounds & bit:
                reach = self._reach[bit]
                now_low = low if reach == self.low else self._prefix(ordered, reach)
                was = _NONE if not old_grounds & bit else old_low if reach == self.low else self._prefix(
                    old_ordered, reach)
                postings += [(self._grounded_holders[bit], words, old_words if old_grounds & bit else _NONE),
                             (self._grounded_low[bit], now_low, was)]
        for lists, now, before in postings:
            for word in now:
                if word in before:
                    continue
                keys = lists.get(word)
                if keys is None:
                    lists[word] = [key]
                elif keys[-1] < key:  # records come in ascending keys, mostly
                    keys.append(key)
                else:
                    insort(keys, key)

    def words(self, key: int) -> frozenset[str]:
        return self._words[key]

    def grounds(self, key: int) -> int:
        return self._grounds[key]

    def recent(self, words: frozenset[str], grounds: int, limit: int | None = None,
               exclude: int | None = None) -> list[int]:
        """reference_recent over the records of this index: the newest that pass, at most `limit`."""
        if not words or not self._words:
            return []
        ordered = self._ordered(words)
        if grounds & AIMS:  # every record from `low` up
            lists = [self._holders.get(w) for w in self._prefix(ordered, self.low)]
            lists += [self._low.get(w) for w in words]
        else:  # every record from `high` up; from `low` up the records that aim, and those that pin if it pins
            lists = [self._holders.get(w) for w in self._prefix(ordered, self.high)]
            lists += [self._high.get(w) for w in words]
            for bit in (AIMS, PINS) if grounds & PINS else (AIMS,):
                lists += [self._grounded_holders[bit].get(w) for w in self._prefix(ordered, self.low)]
                lists += [self._grounded_low[bit].get(w) for w in words]
        if grounds & ANCHORS and self.floor < self.low:  # from the floor up, the records that hold anchors too
            lists += [self._grounded_holders[ANCHORS].get(w) for w in self._prefix(ordered, self.floor)]
            lists += [self._grounded_low[ANCHORS].get(w) for w in words]
        found: list[int] = []
        size, low, high, records, known = len(words), self.low, self.high, self._words, self._grounds
        floor = self.floor
        for key in _newest_first([lst for lst in lists if lst]):
            if key == exclude:
                continue
            other = records[key]
            if not other:  # a record whose words were replaced by none
                continue
            # passes(), inlined: the very same float tests, on the hottest loop of a large dream
            score = len(words & other) / (size if size < len(other) else len(other))
            if score >= high or (score >= low and ((grounds | known[key]) & AIMS or grounds & known[key] & PINS)) or (
                    score >= floor and grounds & known[key] & ANCHORS):
                found.append(key)
                if limit is not None and len(found) == limit:
                    break
        return found


def _newest_first(lists: list[list[int]]) -> Iterator[int]:
    """The distinct keys of ascending lists, highest first.

    Taken a window at a time from the tails of the lists, sorted and deduplicated in C: a
    search stops after a few hundred keys of lists that may hold thousands."""
    ends = [len(lst) for lst in lists]
    window = 64
    while True:
        starts = [max(0, end - window) for end in ends]
        # every key above the highest key left unread in some list has been read from all lists
        floor = max((lst[start - 1] for lst, start in zip(lists, starts) if start > 0), default=None)
        chunk = set().union(*(lst[start:end] for lst, start, end in zip(lists, starts, ends)))
        if floor is None:
            yield from sorted(chunk, reverse=True)
            return
        yield from sorted((key for key in chunk if key > floor), reverse=True)
        ends = [bisect_right(lst, floor, 0, end) for lst, end in zip(lists, ends)]
        window *= 2


def recent_pairs(probes: Iterable[Key], pool: Mapping[Key, frozenset[str]], grounds: Callable[[Key], int],
                 age: Callable[[Key], Any], low: float, high: float,
                 limit: int | None = None) -> set[tuple[Key, Key]]:
    """Each probe (a key of `pool`) with the newest records of the pool that pass the rule with
    it, at most `limit` for each probe; `age` orders the records, oldest first. A pair is
    (a, b) with a ≤ b."""
    keys = sorted(pool, key=age)
    number = {key: place for place, key in enumerate(keys)}
    index = RecentIndex(word_ranks(Counter(w for words in pool.values() for w in words)), low, high)
    for place, key in enumerate(keys):
        index.put(place, pool[key], grounds(key))
    found = set()
    for probe in dict.fromkeys(probes):
        for other in index.recent(pool[probe], grounds(probe), limit, exclude=number[probe]):
            partner = keys[other]
            found.add((probe, partner) if probe <= partner else (partner, probe))  # type: ignore[operator]
    return found
