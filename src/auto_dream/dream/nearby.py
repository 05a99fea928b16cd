"""Which memories a changed memory or a new entry is compared with (the pairs of DESIGN 3.2).

Memories the last dream saw and that have not changed since (`state.stored`) are found
through the parse cache's pair index (pairs.stored_pairs), which reads only the postings of
the words asked about. The rest — new, changed, created or updated this run; on a first or
--full run, all of them — are indexed in memory (pairs.indexed_pairs). Both are exact.

Two thresholds, because only a pair with a negation or change scope on one side can be a
contradiction (similarity.Profile.aims): such a pair is wanted from the lower threshold up,
any other pair only from the duplicate threshold up. Most memories aim at nothing, so most
searches run at the higher threshold, where prefixes are shorter and candidates fewer.
"""

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping

from auto_dream.distill.base import Thresholds
from auto_dream.dream.state import DreamState
from auto_dream.judge.pairs import indexed_pairs, stored_pairs
from auto_dream.judge.similarity import Profile
from auto_dream.judge.statements import idf_weights
from auto_dream.store.daylog import Entry


def memory_pairs(state: DreamState, probes: Iterable[str], thresholds: Thresholds) -> set[tuple[str, str]]:
    """Every pair of live memories of one type, one of them a probe, that may be a contradiction
    (overlap ≥ the lower threshold, one side aims) or a duplicate (overlap ≥ the duplicate one)."""
    low, high = _range(min(thresholds.duplicate, thresholds.contradiction), thresholds.duplicate)
    live, profiles = state.live, state.profiles
    probes = [p for p in sorted(set(probes)) if p in live]
    stored = state.stored - set(probes)
    fresh = live.outside(stored)
    aims = {p: profiles[p].aims for p in probes}
    found = set()
    for kind in {live[p].type for p in probes}:
        pool = {p: profiles[p].words for p in fresh if live[p].type == kind}
        found |= relatable_pairs([p for p in probes if p in pool], pool, lambda p: profiles[p].aims, low, high)
    if stored and state.cache is not None:
        matches = _stored_relatable(state, {p: profiles[p].words for p in probes}, aims, low, high)
        found |= {(a, b) if a <= b else (b, a) for a, others in matches.items() for b in others
                  if b in stored and b in live and live[a].type == live[b].type}
    return found


def entry_neighbours(state: DreamState, entries: list[Entry], threshold: float,
                     aimless_threshold: float | None = None) -> dict[str, set[str]]:
    """For each entry id, the live memories (any type) whose overlap with it reaches `threshold`
    — or, with `aimless_threshold`, reaches it when neither the entry nor the memory aims."""
    low, high = _range(threshold, aimless_threshold)
    live, stored = state.live, state.stored
    profiles = {entry.id: Profile.of(entry.text) for entry in entries}
    words = {entry_id: profile.words for entry_id, profile in profiles.items()}
    pool: dict = {("memory", p): state.profiles[p].words for p in live.outside(stored)}
    pool.update({("entry", entry_id): entry_words for entry_id, entry_words in words.items()})

    def aims(key) -> bool:
        return (profiles if key[0] == "entry" else state.profiles)[key[1]].aims

    found: dict[str, set[str]] = {}
    for a, b in relatable_pairs([("entry", e) for e in words], pool, aims, low, high, across_only=True):
        entry_key, memory_key = (a, b) if a[0] == "entry" else (b, a)
        found.setdefault(entry_key[1], set()).add(memory_key[1])
    if stored and state.cache is not None:
        matches = _stored_relatable(state, words, {e: p.aims for e, p in profiles.items()}, low, high)
        for entry_id, paths in matches.items():
            if paths := {p for p in paths if p in stored and p in live}:
                found.setdefault(entry_id, set()).update(paths)
    return found


def relatable_pairs(probes: list, pool: Mapping[Hashable, frozenset[str]], aims: Callable[[Hashable], bool],
                    low: float, high: float, across_only: bool = False) -> set[tuple]:
    """indexed_pairs at `high`, plus the pairs from `low` up that have a side that aims."""
    if high <= low:
        return indexed_pairs(probes, pool, low, across_only=across_only)
    found = indexed_pairs(probes, pool, high, across_only=across_only)
    aiming = [p for p in probes if aims(p)]
    aimless = [p for p in probes if not aims(p)]
    if aiming:  # against everything (but the other probes, if `across_only`)
        others = {p: pool[p] for p in aimless} if across_only else {}
        found |= indexed_pairs(aiming, {k: w for k, w in pool.items() if k not in others}, low,
                               across_only=across_only)
    probe_set = set(probes)
    targets = {key: words for key, words in pool.items() if key not in probe_set and aims(key)}
    if aimless and targets:  # against the records that aim, the probes that aim being done
        targets.update((p, pool[p]) for p in aimless)
        found |= indexed_pairs(aimless, targets, low, across_only=True)
    return found


def _range(low: float, high: float | None) -> tuple[float, float]:
    return low, low if high is None else max(low, high)


def _stored_relatable(state: DreamState, probes: dict, aims: dict, low: float, high: float) -> dict:
    """_stored_matches at `high`, plus from `low` up the stored memories that aim (all of them,
    for a probe that aims)."""
    if high <= low:
        return _stored_matches(state, probes, low)
    aiming = {key: words for key, words in probes.items() if aims[key]}
    aimless = {key: words for key, words in probes.items() if not aims[key]}
    found = {key: set() for key in probes}
    for matches in (_stored_matches(state, aiming, low), _stored_matches(state, aimless, high),
                    _stored_matches(state, aimless, low, aiming_only=True)):
        for key, paths in matches.items():
            found[key] |= paths
    return found


def _stored_matches(state: DreamState, probes: dict, threshold: float, aiming_only: bool = False) -> dict:
    """For each probe, the stored memories whose overlap with its words reaches `threshold`
    (with `aiming_only`, of those that aim).

    Asked once per set of words: a memory created from an entry has the entry's words, so
    the memory check after the distiller repeats the entries' questions.
    """
    memo = state.stored_matches
    unasked = {words for words in probes.values() if (words, threshold, aiming_only) not in memo}
    for words in unasked:
        memo[words, threshold, aiming_only] = set()
    for words, path in stored_pairs({words: words for words in unasked}, state.cache, threshold,
                                    aiming_only=aiming_only):
        memo[words, threshold, aiming_only].add(path)
    return {key: memo[words, threshold, aiming_only] for key, words in probes.items()}


def word_rarity(state: DreamState) -> Callable[[Iterable[str]], dict[str, float]]:
    """Each word's weight by its rarity among the live memories (judge.weighted_jaccard): counted
    in the parse cache's postings for the stored memories, in memory for the rest, when first asked."""
    weights: dict[str, float] = {}
    fresh: Counter | None = None

    def rarity(words: Iterable[str]) -> dict[str, float]:
        nonlocal fresh
        words = set(words)
        if missing := [w for w in words if w not in weights]:
            if fresh is None:
                fresh = Counter(w for path in state.live.outside(state.stored) for w in state.profiles.words(path))
            counts = state.cache.document_frequency(missing) if state.stored and state.cache is not None else {}
            frequency = {w: fresh.get(w, 0) + counts.get(w, 0) for w in missing}
            weights.update(idf_weights(frequency, len(state.live)))
        return {w: weights[w] for w in words}

    return rarity
