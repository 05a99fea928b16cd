"""dream's views of the store answer as a list of every memory would, however the files and the plan changed."""

import os
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.judge.staleness import extract_references
from auto_dream.store.cache import ParseCache
from auto_dream.store.index import IndexLimits, build_index, first_by_priority
from auto_dream.store.memory import Memory, render_memory
from auto_dream.store.paths import MEMORY_TYPES, StorePaths
from auto_dream.store.scan import scan_memories, scan_store
from auto_dream.store.views import LiveView, StoreView
from conftest import examples

BASE = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
# (hours after BASE: from few values, many ties, or many values; pinned; type; cites a file)
shapes = st.tuples(st.one_of(st.integers(0, 3), st.integers(0, 200)), st.booleans(), st.sampled_from(MEMORY_TYPES),
                   st.booleans())
stores = st.dictionaries(st.integers(0, 40), shapes, max_size=30)


def make(key: int, shape, version: int = 0) -> Memory:
    hours, pinned, kind, cites = shape
    body = f"Note {key} version {version}." + (" See `src/app/main.py` for it." if cites else "")
    return Memory(path=f"memories/{kind}/{key:03d}.md", name=f"note {key}", description=f"about {key}", type=kind,
                  mtime=BASE + timedelta(hours=hours), body=body, extra={"pinned": True} if pinned else {})


def write(root: Path, memory: Memory, stamp: int) -> None:
    file = root / memory.path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(render_memory(memory), encoding="utf-8")
    os.utime(file, ns=(stamp, stamp))  # a size-and-mtime change the cache must notice


@settings(max_examples=examples(150), deadline=None)
@given(first=stores, second=stores, data=st.data())
def test_views_answer_as_the_list_of_all_live_memories_would(first, second, data):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        paths = StorePaths(root)
        (root / ".state").mkdir()
        for key, shape in first.items():
            write(root, make(key, shape), 1_000_000_000 + key)
        cache = ParseCache.load(paths, writable=True)
        scan_memories(paths, None, cache=cache)
        cache.save()
        # then the files change under the cache: some gone, some rewritten, some new, some as they were
        for key, shape in first.items():
            if key not in second:
                (root / make(key, shape).path).unlink()
        for key, shape in second.items():
            if first.get(key) != shape:
                if key in first:
                    (root / make(key, first[key]).path).unlink()
                write(root, make(key, shape, version=1), 2_000_000_000 + key)
        cache = ParseCache.load(paths)
        first_paths = {make(key, shape).path for key, shape in first.items()}
        scan = scan_store(paths, None, cache=cache)
        view = StoreView(scan, cache)
        on_disk = {m.path: m for m in scan_memories(paths, None).memories}
        assert list(view) == sorted(on_disk) and len(view) == len(on_disk)
        assert {p: view[p] for p in view} == on_disk
        assert list(view.values()) == [on_disk[p] for p in sorted(on_disk)] and dict(view.items()) == on_disk
        # and a plan retires some, updates some, creates some
        live, expected = LiveView(view), dict(on_disk)
        for path in data.draw(st.lists(st.sampled_from(sorted(on_disk)), unique=True) if on_disk else st.just([])):
            del live[path]
            del expected[path]
        for key, shape in data.draw(st.dictionaries(st.integers(0, 60), shapes, max_size=8)).items():
            memory = make(key, shape, version=2)
            live[memory.path] = expected[memory.path] = memory
        assert set(live) == set(expected) == live.path_set() and len(live) == len(expected)
        assert dict(live.items()) == expected and sorted(live.values(), key=lambda m: m.path) == sorted(
            expected.values(), key=lambda m: m.path)
        stored = set(data.draw(st.lists(st.sampled_from(sorted(scan.unchanged)), unique=True)
                               if scan.unchanged else st.just([])))  # what the cache's index answers for
        assert sorted(live.outside(stored)) == sorted(set(expected) - stored)
        asked = set(data.draw(st.lists(st.sampled_from(sorted({*on_disk, *first_paths, *expected, "memories/x.md"})))))
        assert live.missing(asked) == asked - set(expected)
        assert all(p in live for p in expected) and all(p not in live for p in on_disk.keys() - expected.keys())
        everything = list(expected.values())
        for count in (0, 1, 3, data.draw(st.integers(0, len(everything) + 2)), len(everything)):
            assert live.first_by_priority(count) == first_by_priority(everything, count)
            assert view.first_by_priority(count) == first_by_priority(list(on_disk.values()), count)
        assert live.newest() == max((m.mtime for m in everything), default=None)
        cited = {m.path: refs for m in everything if (refs := extract_references(m.text())).files or refs.symbols}
        assert live.references() == cited
        limits = IndexLimits(max_lines=12)
        assert build_index(live, "# Memory\n", limits, None) == build_index(everything, "# Memory\n", limits, None)


def test_the_stored_matches_are_the_pair_indexs_and_each_set_of_words_is_asked_of_it_once(tmp_path, monkeypatch):
    """A memory a dream creates from an entry has the entry's words: the search after the
    distiller asks again what the search before it asked. The view answers it from what it was told."""
    import auto_dream.store.views as views
    from auto_dream.judge.pairs import stored_pairs

    paths = StorePaths(tmp_path)
    (tmp_path / ".state").mkdir()
    bodies = {1: "Deploys happen every Tuesday from the release branch", 2: "Deploys happen every Friday",
              3: "The billing service publishes invoices to Kafka"}
    for key, body in bodies.items():
        memory = Memory(path=f"memories/project/{key:03d}.md", name=f"note {key}", description=body, type="project",
                        mtime=BASE, body=body)
        write(tmp_path, memory, 1_000_000_000 + key)
    cache = ParseCache.load(paths, writable=True)
    scan_memories(paths, None, cache=cache)
    cache.save()
    cache = ParseCache.load(paths, writable=True)
    view = StoreView(scan_store(paths, None, cache=cache), cache)
    asked: list[frozenset[str]] = []

    def counted(probes, postings, threshold, among=0):
        asked.extend(probes)
        return stored_pairs(probes, postings, threshold, among=among)

    monkeypatch.setattr(views, "stored_pairs", counted)
    words = frozenset(cache.profile("memories/project/001.md").words)
    first = view.stored_matches({"entry": words}, 0.5)
    assert "memories/project/001.md" in first["entry"] and "memories/project/003.md" not in first["entry"]
    assert first == {"entry": {p for _, p in stored_pairs({words: words}, cache, 0.5)}}
    assert view.stored_matches({"memory": words, "entry": words}, 0.5) == {"memory": first["entry"],
                                                                           "entry": first["entry"]}
    assert asked == [words]  # asked once; the same words at another threshold are a new question
    view.stored_matches({"entry": words}, 0.9)
    assert asked == [words, words]
