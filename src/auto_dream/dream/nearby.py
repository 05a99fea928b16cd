"""Which memories a changed memory or a new entry is compared with (the pairs of DESIGN 3.2).

Memories the last dream saw and that have not changed since (`state.stored`) are found
through the parse cache's pair index (pairs.stored_pairs), which reads only the postings of
the words asked about. The rest — new, changed, created or updated this run; on a first or
--full run, all of them — are indexed in memory (pairs.indexed_pairs). Both are exact.
"""

from collections.abc import Iterable

from auto_dream.dream.state import DreamState
from auto_dream.journal import Entry
from auto_dream.pairs import indexed_pairs, stored_pairs
from auto_dream.similarity import Profile


def memory_pairs(state: DreamState, probes: Iterable[str], threshold: float) -> set[tuple[str, str]]:
    """Every pair of live memories of one type, one of them a probe, whose overlap reaches `threshold`."""
    live = state.live
    probes = [p for p in sorted(set(probes)) if p in live]
    stored = state.stored - set(probes)
    fresh = [p for p in live if p not in stored]
    found = set()
    for kind in {live[p].type for p in probes}:
        pool = {p: state.profiles[p].words for p in fresh if live[p].type == kind}
        found |= indexed_pairs([p for p in probes if p in pool], pool, threshold)
    if stored and state.cache is not None:
        matches = _stored_matches(state, {p: state.profiles[p].words for p in probes}, threshold)
        found |= {(a, b) if a <= b else (b, a) for a, others in matches.items() for b in others
                  if b in stored and b in live and live[a].type == live[b].type}
    return found


def entry_neighbours(state: DreamState, entries: list[Entry], threshold: float) -> dict[str, set[str]]:
    """For each entry id, the live memories (any type) whose overlap with it reaches `threshold`."""
    live, stored = state.live, state.stored
    words = {entry.id: Profile.of(entry.text).words for entry in entries}
    pool: dict = {("memory", p): state.profiles[p].words for p in live if p not in stored}
    pool.update({("entry", entry_id): entry_words for entry_id, entry_words in words.items()})
    found: dict[str, set[str]] = {}
    for a, b in indexed_pairs([("entry", e) for e in words], pool, threshold, across_only=True):
        entry_key, memory_key = (a, b) if a[0] == "entry" else (b, a)
        found.setdefault(entry_key[1], set()).add(memory_key[1])
    if stored and state.cache is not None:
        for entry_id, paths in _stored_matches(state, words, threshold).items():
            if paths := {p for p in paths if p in stored and p in live}:
                found.setdefault(entry_id, set()).update(paths)
    return found


def _stored_matches(state: DreamState, probes: dict, threshold: float) -> dict:
    """For each probe, the stored memories whose overlap with its words reaches `threshold`.

    Asked once per set of words: a memory created from an entry has the entry's words, so
    the memory check after the distiller repeats the entries' questions.
    """
    memo = state.stored_matches
    unasked = {words for words in probes.values() if (words, threshold) not in memo}
    for words in unasked:
        memo[words, threshold] = set()
    for words, path in stored_pairs({words: words for words in unasked}, state.cache, threshold):
        memo[words, threshold].add(path)
    return {key: memo[words, threshold] for key, words in probes.items()}
