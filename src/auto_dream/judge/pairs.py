"""Candidate pairs for the overlap checks without comparing every pair.

The checks need every pair whose overlap |A∩B| / min(|A|, |B|) reaches a threshold t (the
lower of the duplicate and contradiction thresholds). Comparing all pairs costs n²/2 — 50
million at 10,000 memories. This module finds exactly the same pairs with *prefix
filtering*, the standard exact method for set-similarity joins, chosen over MinHash
because it is exact by construction (no false negatives to verify away) and needs no
tuning:

Order every word globally, rarest first. If A is the smaller set of a pair that reaches t,
they share at least o = ⌈t·|A|⌉ words, so at least one shared word lies among A's first
|A| − o + 1 words in that order (A's *prefix*): any o words of A include one of them. So a
pair can be found by looking up only prefix words — the rare ones, with short posting
lists — and then verified exactly. `reference_pairs` is the plain all-pairs version, kept
for tests and benchmarks to prove the two agree.

`indexed_pairs` builds its index in memory from the records it is given; `stored_pairs`
asks a persisted one (the parse cache's postings), so a dream's few changed memories find
their partners among 100,000 without loading them.
"""

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from operator import itemgetter
from typing import Protocol, TypeVar

from auto_dream.judge.similarity import overlap

Key = TypeVar("Key", bound=Hashable)  # how the caller names its records: a path, an entry id, a word set
Posting = tuple[int, int, int, int]  # (word rank, record id, the record's word count, the word's position in it)


def reference_pairs(records: Mapping[Key, frozenset[str]], threshold: float) -> set[tuple[Key, Key]]:
    """Every pair (a, b), a < b in sort order, with overlap ≥ threshold: the n²/2 way."""
    keys = sorted(records, key=repr)
    found = set()
    for i, a in enumerate(keys):
        words_a = records[a]
        for b in keys[i + 1:]:
            if _reaches(words_a, records[b], threshold):
                found.add(_ordered(a, b))
    return found


def word_ranks(frequency: Mapping[str, int]) -> dict[str, int]:
    """Each word's place in the global order: rarest first, ties by the word itself."""
    return {word: place for place, word in enumerate(sorted(frequency, key=lambda w: (frequency[w], w)))}


def indexed_pairs(probes: Iterable[Key], pool: Mapping[Key, frozenset[str]], threshold: float,
                  frequency: Mapping[str, int] | None = None,
                  ranks: Mapping[str, int] | None = None, *, across_only: bool = False) -> set[tuple[Key, Key]]:
    """Every pair (probe, other) with overlap ≥ threshold, other in the pool, as reference_pairs finds them.

    `probes` are keys of `pool` (the memories that changed); with every key as a probe this
    is the full self-join. The word order comes from `ranks` (word_ranks of a frequency
    table: pass one per run, it must cover every word outside the probes), else from
    `frequency`, else from the pool itself. Any order gives the same pairs; rare-first
    makes prefixes short lists of rare words. `across_only` leaves out pairs of two probes
    (new entries against the store need no entry-to-entry pairs).
    """
    probes = [p for p in dict.fromkeys(probes) if pool.get(p)]
    if not probes or (across_only and len(probes) == len(pool)):
        return set()
    if ranks is None:
        if frequency is None:
            frequency = Counter(word for words in pool.values() for word in words)
        ranks = word_ranks(frequency)
        unranked = set().union(*pool.values()) - ranks.keys()
    else:
        unranked = set().union(*(pool[p] for p in probes)) - ranks.keys()
    if unranked:  # words no count has seen are the rarest of all
        ranks = {**ranks, **{word: place - len(unranked) for place, word in enumerate(sorted(unranked))}}
    rank = ranks.__getitem__
    prefixes: dict[Key, list[str]] = {}

    def prefix(key: Key) -> list[str]:
        if key not in prefixes:
            words = pool[key]
            prefixes[key] = sorted(words, key=rank)[: len(words) - _needed(len(words), threshold) + 1]
        return prefixes[key]

    if len(probes) == len(pool) and not across_only:
        return _self_join(pool, prefix, threshold)
    probe_set = set(probes)
    # A pair (probe, other) is found from the smaller side's prefix: other's prefix when other
    # is the smaller, the probe's prefix when the probe is.
    probe_words = set().union(*(pool[p] for p in probes))
    probe_prefix_words = set().union(*(prefix(p) for p in probes))
    largest = max(len(pool[p]) for p in probes)
    holders: dict[str, list[Key]] = {}  # a probe's prefix word -> the records holding it
    small_by_prefix: dict[str, list[Key]] = {}  # a probe's word -> records with it in their prefix
    for key, words in pool.items():
        if not words or (across_only and key in probe_set):
            continue
        for word in words & probe_prefix_words:
            holders.setdefault(word, []).append(key)
        if len(words) <= largest and not words.isdisjoint(probe_words):
            for word in prefix(key):
                if word in probe_words:
                    small_by_prefix.setdefault(word, []).append(key)
    found = set()
    for probe in probes:
        words = pool[probe]
        size = len(words)
        candidates = {k for w in prefix(probe) for k in holders.get(w, ()) if len(pool[k]) >= size}
        candidates.update(k for w in words for k in small_by_prefix.get(w, ()) if len(pool[k]) <= size)
        candidates.discard(probe)
        if across_only:
            candidates -= probe_set
        for other in candidates:
            if _reaches(words, pool[other], threshold):
                found.add(_ordered(probe, other))
    return found


class StoredPostings(Protocol):
    """A persisted word index over stored records (cache.ParseCache is the one dream uses).

    Every stored record's words were ordered in one fixed global order, rarest first, that
    never changes for a word once stored; `ranks` gives it for the words it knows. Records
    are known by an id of the index's own, and outside it by their name (`paths_of`); a
    posting is (the word's rank, id, the record's word count, the word's position in the
    record's order). Postings are asked for many
    words at once: a store on disk answers one question faster than a thousand.
    """

    def ranks(self, words: Iterable[str]) -> Mapping[str, int]: ...

    def lowest_rank(self) -> int:
        """A rank no stored word has below it (0 for an empty index)."""

    def holders(self, ranks: Iterable[int], among: int = 0) -> Mapping[int, list[Posting]]:
        """By word, the postings of every stored record holding it (`among`, a ground of
        similarity: of the records whose grounds hold it), smallest record first."""

    def prefix_holders(self, ranks: Iterable[int], threshold: float,
                       among: int = 0) -> Mapping[int, list[Posting]]:
        """By word, the postings of the records with it in their prefix at `threshold` (or a little beyond)."""

    def rank_sets(self, keys: Iterable[int]) -> Mapping[int, Collection[int]]:
        """The ranks of all the words of each record."""

    def paths_of(self, keys: Iterable[int]) -> Mapping[int, str]:
        """The records' names outside the index."""


def stored_pairs(probes: Mapping[Key, frozenset[str]], stored: StoredPostings, threshold: float,
                 wanted: Callable[[str], bool] = lambda name: True,
                 among: int = 0) -> set[tuple[Key, str]]:
    """Every (probe, record) with overlap ≥ threshold, record a stored one whose name is
    `wanted` (and, with `among`, a ground of similarity, whose grounds hold it: AIMS, the
    records that can aim a signal; PINS, those that pin something down).

    Two lookups, as in indexed_pairs: a record at least as large as the probe holds a word
    of the probe's prefix; a smaller one has a word of the probe in its own stored prefix.
    Words the store has never seen rank below all it knows (no stored record holds them).
    Walking the probe's words in the global order also gives *positional filtering*
    (PPJoin, Xiao et al. 2008): at a shared word at position i of the probe and j of the
    record, with c shared words so far, they share at most c + min(words left after i,
    words left after j); a record that cannot reach the threshold is dropped before its
    words are read.
    """
    probes = {key: words for key, words in probes.items() if words}
    if not probes:
        return set()
    ranks = dict(stored.ranks(set().union(*probes.values())))
    floor = stored.lowest_rank()  # below every stored word: an unseen word must not share a rank
    unseen = set().union(*probes.values()) - ranks.keys()
    ranks.update({word: floor - 1 - place for place, word in enumerate(sorted(unseen))})
    # every posting list the probes will walk, read in two questions
    ordered = {probe: sorted(words, key=ranks.__getitem__) for probe, words in probes.items()}
    seen_ranks = {ranks[w] for words in probes.values() for w in words if w not in unseen}
    prefix_ranks = {ranks[w] for probe, words in ordered.items()
                    for w in words[:len(words) - _needed(len(words), threshold) + 1] if w not in unseen}
    read = {False: stored.holders(prefix_ranks, among),
            True: stored.prefix_holders(seen_ranks, threshold, among)}

    longest = 1
    accepted: dict[Key, list[int]] = {}  # found by their shared words alone
    unsure: dict[Key, list[int]] = {}  # to be verified on all their words
    for probe, words in probes.items():
        size = len(words)
        needed = _needed(size, threshold)
        shared: dict[int, int] = {}  # by record id
        length_of: dict[int, int] = {}
        dropped: set[int] = set()
        for place, word in enumerate(ordered[probe]):
            if word in unseen:
                continue
            left = size - place - 1
            if place <= size - needed:  # larger records (or as large), through the probe's prefix
                found = read[False][ranks[word]]
                for _, key, length, position in found[bisect_left(found, size, key=_length):]:
                    shared[key] = count = shared.get(key, 0) + 1
                    length_of[key] = length
                    after = length - position - 1
                    if count + (left if left < after else after) < needed:
                        dropped.add(key)
            found = read[True][ranks[word]]  # smaller records, through their own prefixes
            if found and found[0][2] < size:
                if found[-1][2] >= longest:
                    longest = found[-1][2] + 1
                    least = [_needed(n, threshold) if n else 0 for n in range(longest)]
                for _, key, length, position in found[:bisect_left(found, size, key=_length)]:
                    shared[key] = count = shared.get(key, 0) + 1
                    length_of[key] = length
                    after = length - position - 1
                    if count + (left if left < after else after) < least[length]:
                        dropped.add(key)
        accepted[probe], unsure[probe] = [], []
        for key, count in shared.items():
            if key not in dropped:
                # `count` shared words are a lower bound: enough of them settles it
                (accepted if count / min(size, length_of[key]) >= threshold else unsure)[probe].append(key)
    rank_sets = stored.rank_sets({key for keys in unsure.values() for key in keys})
    for probe, keys in unsure.items():
        probe_ranks = {ranks[word] for word in probes[probe]}
        for key in keys:
            other = rank_sets[key]
            # the very test overlap() makes, on ranks: one rank per word
            if len(probe_ranks.intersection(other)) / min(len(probe_ranks), len(other)) >= threshold:
                accepted[probe].append(key)
    names = stored.paths_of({key for keys in accepted.values() for key in keys})
    return {(probe, names[key]) for probe, keys in accepted.items() for key in keys
            if names[key] != probe and wanted(names[key])}


_length = itemgetter(2)


def _self_join(pool: Mapping[Key, frozenset[str]], prefix: Callable[[Key], list[str]],
               threshold: float) -> set[tuple[Key, Key]]:
    """All pairs: records in growing size, each looked up against the prefixes of those before it."""
    by_prefix: dict[str, list[Key]] = {}
    found = set()
    for key in sorted((k for k, w in pool.items() if w), key=lambda k: (len(pool[k]), repr(k))):
        words = pool[key]
        candidates = {k for w in words for k in by_prefix.get(w, ())}  # smaller or equal: their prefix decides
        for other in candidates:
            other_words = pool[other]
            # overlap() inlined, the very same float test: `other` is the smaller (or as large)
            if len(words.intersection(other_words)) / len(other_words) >= threshold:
                found.add(_ordered(key, other))
        for word in prefix(key):
            by_prefix.setdefault(word, []).append(key)
    return found


def _needed(size: int, threshold: float) -> int:
    """The fewest shared words that can reach `threshold` when `size` is the smaller set's size.

    Rounded down a hair so float error can only lengthen a prefix (more candidates, never fewer).
    """
    return max(1, math.ceil(threshold * size - 1e-6))


def _reaches(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    return overlap(a, b) >= threshold  # the very test the checks apply


def _ordered(a: Key, b: Key) -> tuple[Key, Key]:
    return (a, b) if repr(a) <= repr(b) else (b, a)
