"""Which memories each new entry is compared with (the entry pairs docs/dream.md describes), by word profile.

Two thresholds, because below the duplicate one a pair can be judged only on its grounds
(similarity.from_low): a negation or change scope on one side (a contradiction), or something
pinned down on both (a value changed, the same specifics in other words). Such a pair is wanted
from the lower threshold up, any other pair only from the higher (duplicate) one. Most texts
have no grounds, so most searches run at the higher threshold, where prefixes are shorter and
candidates fewer.

`entry_pairs` is the search; `ProfileNeighbours` runs it over every memory of a plain
mapping of profiles. Dream runs the same search over the memories its parse cache does not
answer for, and asks the cache for the rest (dream.candidates.StoreNeighbours).
"""

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

from auto_dream.judge.pairs import indexed_pairs, word_ranks
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, Profile, anchored_floor
from auto_dream.store.daylog import Entry

Key = TypeVar("Key", bound=Hashable)  # a memory's path, or a tagged entry id or path


def search_range(threshold: float, aimless_threshold: float | None) -> tuple[float, float]:
    """(low, high): every pair from `threshold` up, a pair without grounds (similarity.from_low) from `high` up."""
    return threshold, threshold if aimless_threshold is None else max(threshold, aimless_threshold)


def entry_profiles(entries: list[Entry]) -> dict[str, Profile]:
    return {entry.id: Profile.of(entry.text) for entry in entries}


def entry_pairs(entries: Mapping[str, Profile], memories: Mapping[str, Profile], low: float,
                high: float) -> dict[str, set[str]]:
    """For each entry id, the memories whose overlap with it reaches `high`, or `low` when their
    grounds let it (similarity.from_low)."""
    # entries and memories share one pool, each under its own kind: an entry id is never a path
    pool: dict[tuple[str, str], frozenset[str]] = {("memory", path): profile.words
                                                   for path, profile in memories.items()}
    pool.update({("entry", entry_id): profile.words for entry_id, profile in entries.items()})

    def grounds(key: tuple[str, str]) -> int:
        return (entries if key[0] == "entry" else memories)[key[1]].grounds

    found: dict[str, set[str]] = {}
    for a, b in relatable_pairs([("entry", e) for e in entries], pool, grounds, low, high, across_only=True):
        entry_key, memory_key = (a, b) if a[0] == "entry" else (b, a)
        found.setdefault(entry_key[1], set()).add(memory_key[1])
    return found


def relatable_pairs(probes: list[Key], pool: Mapping[Key, frozenset[str]], grounds: Callable[[Key], int],
                    low: float, high: float, *, across_only: bool = False) -> set[tuple[Key, Key]]:
    """indexed_pairs at `high`, plus the pairs from `low` up whose grounds let them (similarity.from_low),
    and from the anchored floor up those of two records that hold anchors (similarity.relatable)."""
    floor = anchored_floor(low)
    anchoring = [p for p in probes if grounds(p) & ANCHORS] if floor < low else []
    if high <= low and not anchoring:
        return indexed_pairs(probes, pool, low, across_only=across_only)
    # one word order for the searches (any order finds the same pairs: pairs.indexed_pairs)
    ranks = word_ranks(Counter(word for words in pool.values() for word in words))
    found = _grounded_pairs(probes, pool, grounds, low, high, ranks, across_only=across_only)
    probe_set = set(probes)
    targets = {key: words for key, words in pool.items() if key not in probe_set and grounds(key) & ANCHORS}
    if anchoring and (targets or not across_only):  # against the records that hold anchors (and such probes)
        targets.update((p, pool[p]) for p in anchoring)
        found |= indexed_pairs(anchoring, targets, floor, ranks=ranks, across_only=across_only)
    return found


def _grounded_pairs(probes: list[Key], pool: Mapping[Key, frozenset[str]], grounds: Callable[[Key], int],
                    low: float, high: float, ranks: Mapping[str, int], *, across_only: bool) -> set[tuple[Key, Key]]:
    """indexed_pairs at `high`, plus the pairs from `low` up whose grounds let them (similarity.from_low)."""
    if high <= low:
        return indexed_pairs(probes, pool, low, ranks=ranks, across_only=across_only)
    found = indexed_pairs(probes, pool, high, ranks=ranks, across_only=across_only)
    aiming = [p for p in probes if grounds(p) & AIMS]
    aimless = [p for p in probes if not grounds(p) & AIMS]
    if aiming:  # against everything (but the other probes, if `across_only`)
        others = {p: pool[p] for p in aimless} if across_only else {}
        found |= indexed_pairs(aiming, {k: w for k, w in pool.items() if k not in others}, low, ranks=ranks,
                               across_only=across_only)
    probe_set = set(probes)
    targets = {key: words for key, words in pool.items() if key not in probe_set and grounds(key) & AIMS}
    if aimless and targets:  # against the records that aim, the probes that aim being done
        targets.update((p, pool[p]) for p in aimless)
        found |= indexed_pairs(aimless, targets, low, ranks=ranks, across_only=True)
    pinning = [p for p in aimless if grounds(p) & PINS]
    targets = {key: words for key, words in pool.items() if key not in probe_set and grounds(key) & PINS}
    if pinning and (targets or not across_only):  # against the records that pin (the other probes that pin too)
        targets.update((p, pool[p]) for p in pinning)
        found |= indexed_pairs(pinning, targets, low, ranks=ranks, across_only=across_only)
    return found


class ProfileNeighbours:
    """The Neighbours of distill.base over a plain mapping of profiles, every one of them searched."""

    def __init__(self, entries: list[Entry], profiles: Mapping[str, Profile]):
        self.entries, self.profiles = entries, profiles

    def candidates(self, threshold: float, aimless_threshold: float | None = None) -> dict[str, set[str]]:
        return entry_pairs(entry_profiles(self.entries), self.profiles, *search_range(threshold, aimless_threshold))
