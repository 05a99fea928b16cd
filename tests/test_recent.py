"""The newest records that pass the overlap rule, found through an index that grows, are the
ones the all-pairs scan finds; and one dream's entries are compared with a bounded number of
earlier entries of that dream, whatever its size."""

import random
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.distill.base import DistillRequest, Thresholds
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.judge import statements
from auto_dream.judge.pairs import word_ranks
from auto_dream.judge.recent import RECENT_LIMIT, RecentIndex, recent_pairs, reference_recent
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, significant_words
from auto_dream.store.daylog import Entry
from conftest import examples

# A small vocabulary makes most records pass, so a limit binds and ties abound.
WORDS = ["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice", "queue", "cache"]
word_sets = st.frozensets(st.sampled_from(WORDS), max_size=7)
# (0.4, 0.6) and (0.6, 0.6): the anchored floor lies below `low`; (0.1, 0.5): above it
thresholds = st.sampled_from([(0.4, 0.6), (0.25, 0.5), (0.6, 0.6), (0.33, 1.0), (0.1, 0.5)])
limits = st.one_of(st.none(), st.integers(1, 6))
# what lets a pair pass from `low` (similarity.from_low), or from the anchored floor (both ANCHORS)
any_grounds = st.sampled_from([0, AIMS, PINS, AIMS | PINS, PINS | ANCHORS, AIMS | PINS | ANCHORS])


def _grounded(*kinds: int):
    return st.sampled_from(kinds)


# Each ground alone, so that a pair that passes from `low` on it is found by it alone, and all of them.
@pytest.mark.parametrize("grounds", [_grounded(0, AIMS), _grounded(0, PINS), _grounded(0, PINS | ANCHORS), any_grounds])
@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), rule=thresholds, ranked=st.booleans())
def test_the_index_finds_the_newest_records_the_all_pairs_scan_finds(grounds, data, rule, ranked):
    """Records are added, grown and replaced in any order; each search gives exactly the
    reference's keys, newest first, up to the limit."""
    steps = data.draw(st.lists(st.tuples(st.integers(0, 12), word_sets, grounds), max_size=30))
    probes = data.draw(st.lists(st.tuples(word_sets, grounds, limits, st.integers(-1, 12)), min_size=1, max_size=5))
    low, high = rule
    frequency = {word: index for index, word in enumerate(WORDS)} if ranked else {}
    index = RecentIndex(word_ranks(frequency), low, high)
    records: dict[int, tuple[frozenset[str], int]] = {}
    for key, words, ground in steps:
        grown = records[key][0] | words if key in records and ground & AIMS else words  # grow, or replace
        index.put(key, grown, ground)
        records[key] = (grown, ground)
    for words, ground, limit, exclude in probes:
        assert index.recent(words, ground, limit, exclude) == reference_recent(words, ground, records, low, high,
                                                                               limit, exclude)


@settings(max_examples=examples(200), deadline=None)
@given(pool=st.dictionaries(st.integers(0, 40), word_sets, max_size=25),
       grounded=st.dictionaries(st.integers(0, 40), any_grounds), rule=thresholds, limit=limits, data=st.data())
def test_recent_pairs_are_each_probes_newest_partners(pool, grounded, rule, limit, data):
    low, high = rule
    probes = data.draw(st.lists(st.sampled_from(sorted(pool)), unique=True) if pool else st.just([]))
    age = {key: (-key % 7, key) for key in pool}  # an order that is not the keys' own
    ordered = sorted(pool, key=age.__getitem__)
    ground = lambda key: grounded.get(key, 0)  # noqa: E731
    records = {place: (pool[key], ground(key)) for place, key in enumerate(ordered)}
    expected = set()
    for probe in probes:
        for place in reference_recent(pool[probe], ground(probe), records, low, high, limit,
                                      ordered.index(probe)):
            expected.add(tuple(sorted((probe, ordered[place]))))
    assert recent_pairs(probes, pool, ground, age.__getitem__, low, high, limit) == expected


# ---------------------------------------------------------------- in a distillation

texts = st.lists(st.sampled_from(WORDS + ["never", "not", "instead", "always", "9:30", "10:00", "`make lint`"]),
                 min_size=1, max_size=6).map(" ".join)


def _request(entries: list[Entry]) -> DistillRequest:
    return DistillRequest(entries, {}, {}, Thresholds(), None)


def _entries(batch: list[tuple[str, str | None]]) -> list[Entry]:
    start = datetime(2026, 12, 1, 9, 0)
    return [Entry(start + timedelta(seconds=i), text, kind) for i, (text, kind) in enumerate(batch)]


def _all_pairs(self, words, ground, limit=None, exclude=None):
    """RecentIndex.recent the all-pairs way: every record checked, newest first."""
    records = {key: (self.words(key), self.grounds(key)) for key in self._words}
    return reference_recent(words, ground, records, self.low, self.high, limit, exclude)


@settings(max_examples=examples(150), deadline=None)
@given(batch=st.lists(st.tuples(texts, st.sampled_from([None, "project", "feedback"])), min_size=1, max_size=40))
def test_the_distiller_decides_as_with_the_all_pairs_search(batch):
    entries = _entries(batch)
    indexed = DeterministicDistiller().distill(_request(entries)).operations
    original = RecentIndex.recent
    RecentIndex.recent = _all_pairs  # type: ignore[method-assign]
    try:
        reference = DeterministicDistiller().distill(_request(entries)).operations
    finally:
        RecentIndex.recent = original  # type: ignore[method-assign]
    assert indexed == reference


def test_an_entry_is_judged_against_at_most_the_limit_of_earlier_entries(monkeypatch):
    """Two hundred entries over a dozen words: without the limit each would be judged against
    every earlier one that passes the rule (about a tenth of all), thousands of judgements."""
    calls = []
    judged = statements.judge_statements
    monkeypatch.setattr("auto_dream.distill.deterministic.judge_statements",
                        lambda *args: calls.append(1) or judged(*args))
    rng = random.Random(3)
    common = ["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice", "queue",
              "review", "cache", "redis"]
    entries = _entries([(" ".join([f"marker{chr(97 + i // 26)}{chr(97 + i % 26)}", *rng.sample(common, 4)]),
                         "project") for i in range(200)])
    assert all(len(significant_words(e.text)) == 5 for e in entries)
    DeterministicDistiller().distill(_request(entries))
    assert 0 < len(calls) <= 200 * RECENT_LIMIT



def test_a_dream_judges_each_new_memory_against_at_most_the_limit_of_others(root, monkeypatch):
    """300 entries over six words, each with a marker of its own: most pairs pass the rule.
    The dream still makes every memory, judging at most the limit of pairs per new memory where
    the all-pairs way judged thousands."""
    from auto_dream.dream import consolidate
    from auto_dream.dream.runner import dream
    from auto_dream.dream.snapshot import DreamOptions
    from auto_dream.store.context import open_context
    from auto_dream.store.daylog import append_entry
    from auto_dream.store.paths import StorePaths

    pairs_judged = []
    judge = consolidate.judge
    monkeypatch.setattr(consolidate, "judge", lambda *args: pairs_judged.append(1) or judge(*args))
    rng = random.Random(5)
    common = ["deploy", "billing", "kafka", "postgres", "rebase", "branch"]
    for entry in _entries([(" ".join([f"marker{chr(97 + i // 26)}{chr(97 + i % 26)}", *rng.sample(common, 4)]),
                            "project") for i in range(300)]):
        append_entry(StorePaths(root), entry)
    report = dream(open_context(root), datetime(2026, 12, 1, 12, 0).astimezone(), DreamOptions(),
                   DeterministicDistiller()).report.as_json()
    created = report["stats"]["created"]
    assert report["stats"]["entries_gathered"] == 300 and created >= 100
    assert len(pairs_judged) <= created * RECENT_LIMIT


def test_memories_on_disk_are_searched_whole_beyond_the_recent_budget(tmp_path):
    """The recent index's budget (RECENT_LIMIT newest candidates) is for memories a run makes from
    its entries; memories already on disk (a first dream over a folder of them, a full dream) are
    searched against each other whole. Two identical oldest memories, with more than RECENT_LIMIT
    newer ones like both, are found and merged."""
    from auto_dream.store.paths import ensure_store
    from test_dream import memory, run

    root = tmp_path / ".auto-dream"
    ensure_store(root)
    twin = "The billing service owns the ledger export queue and writes the nightly ledger report."
    memory(root, "memories/project/20260101_twin_a.md", "Ledger export", twin, "project", days_ago=90)
    memory(root, "memories/project/20260102_twin_b.md", "Ledger export again", twin, "project", days_ago=89)
    for number in range(RECENT_LIMIT + 2):  # newer, like the twins, each about a service of its own
        memory(root, f"memories/project/2026020{number:02d}_service.md", f"Service {number}",
               f"The service{number:02d} service owns the ledger export queue and writes the nightly report "
               f"for team{number:02d}.", "project", days_ago=60 - number)
    merged = [a for a in run(root)["actions"] if a["kind"] == "merge"]
    twins = {"memories/project/20260101_twin_a.md", "memories/project/20260102_twin_b.md"}
    assert any({a["path"], a["target"]} == twins for a in merged), merged
