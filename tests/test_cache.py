"""The parse cache: what a dream saves is what the next one reads, and its pair index is exact."""

import sqlite3
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.judge.pairs import reference_pairs, stored_pairs
from auto_dream.judge.partners import MENTION_MARKS, may_mention, mentions
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, Profile, significant_words
from auto_dream.store.cache import FILE_NAME, CachedMemory, ParseCache
from auto_dream.store.memory import Memory
from auto_dream.store.parsed import Parsed
from auto_dream.store.paths import StorePaths
from conftest import examples

latin = st.sampled_from(["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice",
                         "queue", "review", "mock", "database", "tests", "release", "cache", "redis"])
cjk = st.sampled_from(["用户想通过内容平台分享知识", "不要用数据库", "项目改用缓存", "每周二发布", "支付网关负责人"])
texts = st.lists(st.one_of(latin, cjk), min_size=0, max_size=9).map(" ".join)
stores = st.dictionaries(st.integers(0, 300), texts, max_size=30)
thresholds = st.sampled_from([0.4, 0.6, 0.25, 0.5, 1.0, 0.33])
WHEN = datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc)


def aims(key) -> bool:
    return key % 3 == 0


def pins(key) -> bool:
    return key % 2 == 0


def anchored(key) -> bool:
    return key % 5 == 0


def parsed(key, text: str, size: int = 100) -> Parsed:
    memory = Memory(path=f"memories/project/{key}.md", name=f"note {key}", description="", type="project",
                    mtime=WHEN, body=text, sources=("a1b2c3d4e5f6",))
    words = significant_words(text)
    profile = Profile(words, negated=frozenset(sorted(words)[:1]) if aims(key) else frozenset(), pins=pins(key),
                      anchored=anchored(key))
    return Parsed((size, 1_000 + size, 7), memory, profile, Parsed.of((0, 0, 0), memory).refs)


def save(root: Path, store: dict) -> ParseCache:
    cache = ParseCache.load(StorePaths(root), writable=True)
    cache.keep_only({parsed(k, t).memory.path for k, t in store.items()})
    for key, text in store.items():
        cache.put(parsed(key, text))
    cache.save()
    return ParseCache.load(StorePaths(root))


@settings(max_examples=examples(300), deadline=None)
@given(first=stores, second=stores, probes=st.dictionaries(st.integers(1000, 1010), texts, max_size=6),
       threshold=thresholds)
def test_the_stored_index_finds_exactly_the_all_pairs_answer_after_any_update(first, second, probes, threshold):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".state").mkdir()
        save(root, first)
        cache = save(root, second)  # some memories gone, some changed, some new: their postings follow
        stored = {parsed(k, t).memory.path: significant_words(t) for k, t in second.items()}
        asked = {f"probe {k}": significant_words(t) for k, t in probes.items()}
        expected = {(a, b) if a.startswith("probe") else (b, a)
                    for a, b in reference_pairs({**stored, **asked}, threshold)
                    if a.startswith("probe") != b.startswith("probe")}
        assert stored_pairs(asked, cache, threshold) == expected
        for ground, has in ((AIMS, aims), (PINS, pins), (ANCHORS, anchored)):
            grounded = {f"memories/project/{k}.md" for k in second if has(k) and significant_words(second[k])}
            assert stored_pairs(asked, cache, threshold, among=ground) == {p for p in expected if p[1] in grounded}


def test_a_cached_memory_reads_back_every_field_and_its_body_only_when_used(tmp_path):
    (tmp_path / ".state").mkdir()
    original = Memory(path="memories/user/20261101_rust.md", name="Learning Rust", description="evenings",
                      type="user", mtime=WHEN, body="The user is learning Rust.\n\nUses the book.",
                      sources=("0123456789ab",), extra={"pinned": True, "when": datetime(2026, 1, 2, 3, 4)})
    cache = ParseCache.load(StorePaths(tmp_path), writable=True)
    cache.put(Parsed.of((10, 20, 30), original))
    cache.save()
    again = ParseCache.load(StorePaths(tmp_path))
    hit = again.get(original.path, (10, 20, 99))  # another inode: a copied store still hits
    assert isinstance(hit.memory, CachedMemory) and "body" not in hit.memory.__dict__
    assert hit.memory.pinned is True and "body" not in hit.memory.__dict__  # the index needs no body
    assert hit.memory == original and hit.memory.extra == original.extra
    assert again.profile(original.path) == Profile.of(original.text())
    assert again.get(original.path, (11, 20, 30)) is None  # another size: read the file again


def test_readers_never_create_the_cache_and_a_damaged_one_is_a_miss_then_rewritten(tmp_path):
    (tmp_path / ".state").mkdir()
    assert not ParseCache.load(StorePaths(tmp_path)).found
    assert not (tmp_path / ".state" / FILE_NAME).exists()
    (tmp_path / ".state" / FILE_NAME).write_bytes(b"not a database at all" * 100)
    cache = ParseCache.load(StorePaths(tmp_path), writable=True)
    assert not cache.found and cache.rows == {}
    cache.put(parsed(1, "kafka billing invoice"))
    cache.save()
    again = ParseCache.load(StorePaths(tmp_path))
    assert again.found and list(again.rows) == ["memories/project/1.md"]
    assert (tmp_path / ".state" / FILE_NAME).stat().st_mode & 0o777 == 0o600


def test_a_save_that_fails_half_way_leaves_the_previous_cache(tmp_path, monkeypatch):
    (tmp_path / ".state").mkdir()
    save(tmp_path, {1: "kafka billing invoice", 2: "redis cache review"})
    cache = ParseCache.load(StorePaths(tmp_path), writable=True)
    cache.drop("memories/project/1.md")
    cache.put(parsed(3, "postgres database release"))
    monkeypatch.setattr("auto_dream.store.cache._rank_new_words",
                        lambda *a: (_ for _ in ()).throw(sqlite3.OperationalError("disk I/O error")))
    try:
        cache._write()
    except sqlite3.OperationalError:
        pass
    assert sorted(ParseCache.load(StorePaths(tmp_path)).rows) == ["memories/project/1.md", "memories/project/2.md"]


def test_a_cache_that_cannot_be_written_is_left_as_it_was_and_the_dream_goes_on(tmp_path, monkeypatch):
    (tmp_path / ".state").mkdir()
    save(tmp_path, {1: "kafka billing invoice"})
    cache = ParseCache.load(StorePaths(tmp_path), writable=True)
    cache.put(parsed(2, "redis cache review"))
    monkeypatch.setattr("auto_dream.store.cache._rank_new_words",
                        lambda *a: (_ for _ in ()).throw(sqlite3.OperationalError("database is locked")))
    assert cache.save() is False
    assert sorted(ParseCache.load(StorePaths(tmp_path)).rows) == ["memories/project/1.md"]


def test_the_cache_names_the_bodies_that_may_mention_another_memory_without_reading_any(tmp_path):
    """A full dream looks for memories that name another (judge.partners) in every body: the
    cache answers which bodies hold a mark a mention needs, and the rest are never read."""
    (tmp_path / ".state").mkdir()
    cache = save(tmp_path, {1: "This extends feedback_never_defer_to_human.md for commands.",
                            2: 'Builds on the "release checklist" rule.', 3: "Plain words and nothing more.",
                            4: "See [[project_plan]] and `notes`.", 5: "A file named release.mdx is no mention"})
    holding = cache.bodies_holding(MENTION_MARKS)
    assert holding == {"memories/project/1.md", "memories/project/2.md", "memories/project/4.md",
                       "memories/project/5.md"}  # .mdx holds ".md": a candidate, which mentions() then rejects
    assert not may_mention("Plain words and nothing more.") and mentions("Plain words and nothing more.") == set()
