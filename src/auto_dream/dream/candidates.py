"""Which memories a changed memory or a new entry is compared with (the pairs docs/dream.md describes).

Memories the last dream saw and that have not changed since (`Snapshot.stored`) are found
through the parse cache's pair index (pairs.stored_pairs, asked through the MemorySource's
stored_matches, each set of words once a run), which reads only the postings of the words
asked about. The rest — new, changed, created or updated this run; on a first or --full run,
all of them — are indexed in memory (pairs.indexed_pairs), by the very search a distiller runs
over plain profiles (distill.neighbours). Both are exact. Two thresholds: see
distill.neighbours.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from auto_dream.distill.base import Thresholds
from auto_dream.distill.neighbours import entry_pairs, entry_profiles, relatable_pairs, search_range
from auto_dream.dream.snapshot import Decisions, Snapshot
from auto_dream.judge.partners import MENTION_MARKS, mentions, name_keys
from auto_dream.judge.recent import RECENT_LIMIT, recent_pairs
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, anchored_floor, significant_words
from auto_dream.judge.statements import STOP_MARKS, idf_weights, stopped_things
from auto_dream.judge.subjects import SUBJECT_LENGTHS, Change, change_of, changed_subject, changes_taken
from auto_dream.store.daylog import Entry
from auto_dream.store.live import LiveView, MemorySource


def memory_pairs(snapshot: Snapshot, decisions: Decisions, probes: Iterable[str],
                 thresholds: Thresholds) -> set[tuple[str, str]]:
    """Every pair of live memories of one type, one of them a probe, whose overlap reaches the
    duplicate threshold, or the lower one when their grounds let it (similarity.from_low: one side
    aims, or both pin something down)."""
    low, high = search_range(min(thresholds.duplicate, thresholds.contradiction), thresholds.duplicate)
    live, profiles = decisions.live, decisions.profiles
    probes = [p for p in sorted(set(probes)) if p in live]
    stored = snapshot.stored - set(probes)
    fresh = live.outside(stored)
    live.load(fresh)  # every memory's type and profile asked for below: read together, not one by one
    profiles.load([*fresh, *probes])
    grounds = {p: profiles[p].grounds for p in probes}
    # A memory this run made from an entry is compared with the newest RECENT_LIMIT of the others
    # that pass (thousands of entries alike in one dream stay near-linear); one that was on disk
    # (a full dream asks of every memory) with every other that passes: its pairs are searched whole.
    made = {p for p in probes if p not in snapshot.memories}
    found: set[tuple[str, str]] = set()
    for kind in {live[p].type for p in probes}:
        pool = {p: profiles[p].words for p in fresh if live[p].type == kind}
        if recent := [p for p in probes if p in pool and p in made]:  # none on a full dream: no index to build
            found |= recent_pairs(recent, pool, lambda p: profiles[p].grounds, lambda p: (live[p].mtime, p), low,
                                  high, RECENT_LIMIT)
        if whole := [p for p in probes if p in pool and p not in made]:
            found |= relatable_pairs(whole, pool, lambda p: profiles[p].grounds, low, high)
    if stored:
        matches = _stored_relatable(snapshot.memories, {p: profiles[p].words for p in probes}, grounds, low, high)
        found |= {_ordered(a, b) for a, others in matches.items() for b in others
                  if b in stored and b in live and live[a].type == live[b].type}
    source = snapshot.memories
    return (found | named_pairs(decisions, probes, source) | stopped_pairs(decisions, probes, source)
            | subject_pairs(decisions, probes))


def _ordered(a: str, b: str) -> tuple[str, str]:
    """A pair of paths as every search gives it: the lesser first, so each pair is found once."""
    return (a, b) if a <= b else (b, a)


def named_pairs(decisions: Decisions, probes: Iterable[str], source: MemorySource) -> set[tuple[str, str]]:
    """The pairs of a probe and a live memory it names by file name (judge.partners), of any type
    and whatever words they share: "This extends the existing "never defer to human" feedback"
    pairs the memory with `feedback_never_defer_to_human.md`. A memory the cache holds whose body
    has no mark a mention needs (partners.MENTION_MARKS) is not read: the cache says so in one query."""
    live = decisions.live
    wanted = {probe: mentioned for probe in _may_hold(live, probes, source, MENTION_MARKS)
              if (mentioned := mentions(live[probe].body))}
    if not wanted:
        return set()
    by_key: dict[str, set[str]] = {}
    for path in live.path_set():
        for key in name_keys(path.rsplit("/", 1)[-1]):
            by_key.setdefault(key, set()).add(path)
    return {_ordered(a, b) for a, keys in wanted.items() for key in keys
            for b in by_key.get(key, ()) if b != a}


def _may_hold(live: LiveView, probes: Iterable[str], source: MemorySource, marks: Sequence[str]) -> list[str]:
    """The probes whose body may hold one of `marks`: a memory the cache holds whose body has not
    been read is asked of the cache, for all of them in one query, rather than read."""
    probes = list(probes)
    if unread := {p for p in probes if live.body_unread(p)}:
        holding = source.bodies_holding(marks)
        probes = [p for p in probes if p not in unread or p in holding]
    return probes


def stopped_pairs(decisions: Decisions, probes: Iterable[str], source: MemorySource) -> set[tuple[str, str]]:
    """The pairs of a probe that says something stopped ("msw is no longer used in fieldnotes tests",
    statements.stopped_things) and a live memory of its type whose name or description names that
    thing ("Mock HTTP with msw in fieldnotes tests"), whatever words the two share: a memory that
    takes back what another is about is read beside it (statements.retracted_object decides). A
    memory the cache holds whose body has no mark of a retraction is not read (one query)."""
    live = decisions.live
    wanted = {probe: things for probe in _may_hold(live, probes, source, STOP_MARKS)
              if (things := stopped_things(live[probe].body))}
    if not wanted:
        return set()
    # each significant word of every memory's name and description, to the memories that hold it
    by_word: dict[str, set[str]] = {}
    labels: dict[str, str] = {}
    for path, memory in live.items():  # every cached memory loaded in one go, not one query each
        labels[path] = label = f"{memory.name}\n{memory.description}".lower()
        for word in significant_words(label):
            by_word.setdefault(word, set()).add(path)
    found = set()
    for probe, things in wanted.items():
        for thing in things:
            words = significant_words(thing)
            holders = set.intersection(*(by_word.get(word, set()) for word in words)) if words else set()
            found |= {_ordered(probe, other) for other in holders
                      if other != probe and live[other].type == live[probe].type and thing.lower() in labels[other]}
    return found


def subject_pairs(decisions: Decisions, probes: Iterable[str]) -> set[tuple[str, str]]:
    """The pairs of a probe whose name or description says what changed about the Chinese or
    Japanese subject it opens with ("王磊从十月起在平台组", "公测延期了": subjects.changed_subject) and a
    live memory of its type whose name or description opens with that subject and says what such a
    change takes back ("王磊在增长组", "公测定在6月1日上线": subjects.changes_taken), whatever else the two
    share: a handful of characters, too few for any overlap (statements.about_one_subject decides).
    Names and descriptions only: no body is read. Each probe is paired with the newest RECENT_LIMIT
    of those memories, found through one index of openings: a dream stays near-linear."""
    live = decisions.live
    wanted = {probe: (subject, change_of(label)) for probe in probes
              for label in (live[probe].name, live[probe].description) if (subject := changed_subject(label))}
    if not wanted:
        return set()
    # each memory by the openings of its name and description that a subject may be (two to eight
    # characters), its type and a change that takes back what it says
    openings: dict[tuple[str, str, Change], set[str]] = {}
    for path, memory in live.items():
        for label in {memory.name.lstrip(), memory.description.lstrip()}:
            for change in changes_taken(label):
                for length in range(SUBJECT_LENGTHS[0], min(len(label), SUBJECT_LENGTHS[1]) + 1):
                    openings.setdefault((label[:length], memory.type, change), set()).add(path)
    found = set()
    for probe, (subject, change) in wanted.items():
        opening = openings.get((subject, live[probe].type, change), set()) - {probe}
        for other in sorted(opening, key=lambda path: (live[path].mtime, path))[-RECENT_LIMIT:]:
            found.add(_ordered(probe, other))
    return found


class StoreNeighbours:
    """The distiller's Neighbours (distill.base) in a dream: the memories the parse cache does not
    answer for are searched as distill.neighbours searches plain profiles, the rest through the
    cache's pair index. A search is made once per pair of thresholds: the Claude distiller's
    fallback asks again for each batch, and the store has not changed in between."""

    def __init__(self, snapshot: Snapshot, decisions: Decisions, entries: list[Entry]):
        self.snapshot, self.decisions, self.entries = snapshot, decisions, entries
        self._found: dict[tuple[float, float], dict[str, set[str]]] = {}

    def candidates(self, threshold: float, aimless_threshold: float | None = None) -> dict[str, set[str]]:
        low, high = search_range(threshold, aimless_threshold)
        if (low, high) not in self._found:
            self._found[low, high] = self._search(low, high)
        return {entry_id: set(paths) for entry_id, paths in self._found[low, high].items()}

    def _search(self, low: float, high: float) -> dict[str, set[str]]:
        decisions = self.decisions
        live, stored = decisions.live, self.snapshot.stored
        profiles = entry_profiles(self.entries)
        found = entry_pairs(profiles, {p: decisions.profiles[p] for p in live.outside(stored)}, low, high)
        if stored:
            words = {entry_id: profile.words for entry_id, profile in profiles.items()}
            matches = _stored_relatable(self.snapshot.memories, words, {e: p.grounds for e, p in profiles.items()},
                                        low, high)
            for entry_id, paths in matches.items():
                if paths := {p for p in paths if p in stored and p in live}:
                    found.setdefault(entry_id, set()).update(paths)
        return found


def _stored_relatable(source: MemorySource, probes: Mapping[str, frozenset[str]], grounds: Mapping[str, int],
                      low: float, high: float) -> dict[str, set[str]]:
    """The stored memories whose overlap with a probe reaches `high` (source.stored_matches), plus
    from `low` up those that aim (all of them, for a probe that aims), and those that pin
    something down, for a probe that does; from the anchored floor up (similarity.anchored_floor)
    those that hold anchors, for a probe that does."""
    floor = anchored_floor(low)
    anchoring = {key: words for key, words in probes.items() if grounds[key] & ANCHORS} if floor < low else {}
    if high <= low:
        searches = [source.stored_matches(probes, low)]
    else:
        aiming = {key: words for key, words in probes.items() if grounds[key] & AIMS}
        aimless = {key: words for key, words in probes.items() if not grounds[key] & AIMS}
        pinning = {key: words for key, words in aimless.items() if grounds[key] & PINS}
        searches = [source.stored_matches(aiming, low),
                    source.stored_matches(aimless, high),
                    source.stored_matches(aimless, low, among=AIMS),
                    source.stored_matches(pinning, low, among=PINS)]
    if anchoring:
        searches.append(source.stored_matches(anchoring, floor, among=ANCHORS))
    found: dict[str, set[str]] = {key: set() for key in probes}
    for matches in searches:
        for key, paths in matches.items():
            found[key] |= paths
    return found


def word_rarity(snapshot: Snapshot, decisions: Decisions) -> Callable[[Iterable[str]], dict[str, float]]:
    """Each word's weight by its rarity among the live memories (judge.weighted_jaccard): counted
    in the parse cache's postings for the stored memories, in memory for the rest, when first asked."""
    weights: dict[str, float] = {}
    fresh: Counter | None = None
    live, source = decisions.live, snapshot.memories

    def rarity(words: Iterable[str]) -> dict[str, float]:
        nonlocal fresh
        words = set(words)
        if missing := [w for w in words if w not in weights]:
            if fresh is None:
                fresh = Counter(w for path in live.outside(snapshot.stored) for w in decisions.profiles.words(path))
            counts = source.document_frequency(missing) if snapshot.stored else {}
            frequency = {w: fresh.get(w, 0) + counts.get(w, 0) for w in missing}
            weights.update(idf_weights(frequency, len(live)))
        return {w: weights[w] for w in words}

    return rarity
