"""The indexed pair search finds exactly the pairs the all-pairs reference finds."""

import random
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.judge.pairs import indexed_pairs, reference_pairs
from auto_dream.judge.similarity import overlap, significant_words
from conftest import examples, write_memory_file

# Small vocabularies make overlaps frequent, so the property meets many true pairs;
# CJK sentences give bigrams.
latin = st.sampled_from(["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice",
                         "queue", "review", "mock", "database", "tests", "release", "cache", "redis"])
cjk = st.sampled_from(["用户想通过内容平台分享知识", "不要用数据库", "项目改用缓存", "每周二发布", "支付网关负责人"])
texts = st.lists(st.one_of(latin, cjk), min_size=0, max_size=9).map(" ".join)
stores = st.dictionaries(st.integers(0, 10_000), texts, min_size=0, max_size=40)
thresholds = st.sampled_from([0.4, 0.6, 0.25, 0.5, 1.0, 0.33])


@settings(max_examples=examples(300), deadline=None)
@given(store=stores, threshold=thresholds)
def test_self_join_equals_all_pairs(store, threshold):
    pool = {key: significant_words(text) for key, text in store.items()}
    assert indexed_pairs(list(pool), pool, threshold) == reference_pairs(pool, threshold)


@settings(max_examples=examples(300), deadline=None)
@given(store=stores, threshold=thresholds, data=st.data())
def test_changed_against_the_store_equals_all_pairs_touching_them(store, threshold, data):
    pool = {key: significant_words(text) for key, text in store.items()}
    probes = data.draw(st.lists(st.sampled_from(sorted(pool)), unique=True) if pool else st.just([]))
    expected = {pair for pair in reference_pairs(pool, threshold) if pair[0] in probes or pair[1] in probes}
    assert indexed_pairs(probes, pool, threshold) == expected


@settings(max_examples=examples(100), deadline=None)
@given(store=stores, threshold=thresholds, seed=st.randoms())
def test_any_word_order_gives_the_same_pairs(store, threshold, seed):
    pool = {key: significant_words(text) for key, text in store.items()}
    words = sorted(set().union(*pool.values())) if pool else []
    stale_counts = {word: seed.randrange(100) for word in words}  # an out-of-date frequency table
    assert indexed_pairs(list(pool), pool, threshold, stale_counts) == reference_pairs(pool, threshold)


def test_reference_is_the_overlap_definition():
    pool = {1: frozenset("abcde"), 2: frozenset("abcxy"), 3: frozenset("vwxyz"), 4: frozenset()}
    assert reference_pairs(pool, 0.6) == {(1, 2)}  # 3 of 5 shared
    assert reference_pairs(pool, 0.4) == {(1, 2), (2, 3)}
    assert all(overlap(pool[a], pool[b]) >= 0.4 for a, b in reference_pairs(pool, 0.4))


@settings(max_examples=examples(200), deadline=None)
@given(store=stores, threshold=thresholds, data=st.data())
def test_across_only_leaves_out_exactly_the_probe_to_probe_pairs(store, threshold, data):
    pool = {key: significant_words(text) for key, text in store.items()}
    probes = data.draw(st.lists(st.sampled_from(sorted(pool)), unique=True) if pool else st.just([]))
    expected = {(a, b) for a, b in reference_pairs(pool, threshold) if (a in probes) != (b in probes)}
    assert indexed_pairs(probes, pool, threshold, across_only=True) == expected


@settings(max_examples=examples(300), deadline=None)
@given(store=stores, low=thresholds, high=thresholds, across_only=st.booleans(), data=st.data())
def test_relatable_pairs_are_those_at_the_low_threshold_whose_grounds_let_them_and_the_rest_at_the_high(
        store, low, high, across_only, data):
    """From the lower threshold up: a pair with a side that aims, or two sides that pin something
    down; from the anchored floor up, two sides that hold anchors (similarity.relatable)."""
    from auto_dream.distill.neighbours import relatable_pairs
    from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, anchored_floor, relatable

    pool = {key: significant_words(text) for key, text in store.items()}
    keys = sorted(pool)
    probes = data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
    aiming = set(data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([])))
    pinning = set(data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([])))
    anchoring = set(data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([])))

    def grounds(key):
        return (AIMS if key in aiming else 0) | (PINS if key in pinning else 0) | (ANCHORS if key in anchoring else 0)

    touching = {(a, b) for a, b in reference_pairs(pool, anchored_floor(min(low, high)))
                if ((a in probes) != (b in probes) if across_only else (a in probes or b in probes))}
    expected = {(a, b) for a, b in touching
                if relatable(overlap(pool[a], pool[b]), grounds(a), grounds(b), min(low, high), max(low, high))}
    assert relatable_pairs(probes, pool, grounds, min(low, high), max(low, high), across_only=across_only) == expected


PHRASES = ["deploy billing on tuesday", "the invoice queue uses kafka", "don't rebase the release branch",
           "tests no longer mock the database", "redis cache instead of postgres", "review every release",
           "用户想通过内容平台分享知识", "不要用数据库", "项目改用缓存", "billing invoice queue on kafka",
           "the billing queue runs postgres 16"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold, aimless_threshold", [(0.4, 0.6), (0.25, None), (0.5, 0.5)])
def test_dream_finds_each_entrys_neighbours_as_the_search_over_every_profile_does(tmp_path, seed, threshold,
                                                                                    aimless_threshold):
    # dream asks its parse cache for the memories it holds and searches the rest in memory;
    # the plain search (distill.neighbours) searches all: they must find the same memories
    from auto_dream.distill.deterministic import DeterministicDistiller
    from auto_dream.distill.neighbours import ProfileNeighbours
    from auto_dream.dream.candidates import StoreNeighbours
    from auto_dream.dream.gather import gather
    from auto_dream.dream.orient import orient
    from auto_dream.dream.runner import dream
    from auto_dream.dream.snapshot import Decisions, DreamOptions
    from auto_dream.store.context import open_context
    from auto_dream.store.daylog import Entry, append_entry
    from auto_dream.store.paths import ensure_store

    chosen = random.Random(seed)
    now = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

    def text() -> str:
        return " and ".join(chosen.sample(PHRASES, chosen.randint(1, 3)))

    def write_memories(names: range) -> None:
        for n in names:
            kind = chosen.choice(["project", "feedback"])
            write_memory_file(tmp_path, f"memories/{kind}/2026010{n % 9 + 1}_m{n}.md",
                              f"---\nname: m{n}\ndescription: d{n}\ntype: {kind}\n---\n{text()}\n")

    paths = ensure_store(tmp_path)
    write_memories(range(12))
    dream(open_context(tmp_path), now, DreamOptions(), DeterministicDistiller())  # the cache holds these
    write_memories(range(12, 18))
    for n in range(8):
        append_entry(paths, Entry(datetime(2026, 2, 1, 9, 0, n), text(), "project"))
    snapshot = gather(orient(open_context(tmp_path), now, "0002-test", DreamOptions()))
    decisions = Decisions.start(snapshot)
    entries = list(snapshot.new_entries)
    assert snapshot.stored and decisions.live.outside(snapshot.stored) and len(entries) == 8
    every_profile = {path: decisions.profiles[path] for path in decisions.live}
    expected = ProfileNeighbours(entries, every_profile).candidates(threshold, aimless_threshold)
    found = StoreNeighbours(snapshot, decisions, entries).candidates(threshold, aimless_threshold)
    assert found == expected and expected
