"""Torture: 16 processes × 200 appends through the library while `auto-dream dream` runs again
and again. Every entry ends up distilled exactly once (its id in .state/distilled.txt and in one
memory's `sources`) or waiting for the next dream — none lost, none doubled (docs/store.md and docs/dream.md:
"appends during a dream are never lost: they are distilled by the next run").
"""

import json
import multiprocessing
import time
from collections import Counter
from pathlib import Path

import pytest

from auto_dream.commands.append import append_text
from auto_dream.store.daylog import append_entry, local_now, make_entry, read_all_entries
from auto_dream.store.paths import MEMORY_TYPES, StorePaths, ensure_store
from auto_dream.store.scan import scan_memories
from conftest import run_installed

pytestmark = pytest.mark.slow  # a torture test: `make test` runs it, `make test-fast` leaves it out

WORKERS = 16
APPENDS = 200
# Before its 50th, 100th and 150th append a worker waits until the 1st, 2nd and 3rd dream has
# started, so at least three dreams run while every worker still has entries to append.
CHECKPOINTS = {50: 1, 100: 2, 150: 3}


def entry_text(worker: int, number: int) -> str:
    # Every significant word is the entry's own (the rest are stop words), so no two entries merge
    # into one memory; the second line checks a multi-line entry is never torn by a concurrent write.
    tag = f"{worker:02d}{number:03d}"
    return f"Note{worker:02d}x{number:03d} is k{tag}red and k{tag}blue.\nThen k{tag}green."


def entry_type(worker: int) -> str:
    return MEMORY_TYPES[worker % len(MEMORY_TYPES)]


def append_worker(root: str, worker: int, dreams_started) -> None:
    """Half the workers use append_text (the command's path), half append_entry directly."""
    for number in range(APPENDS):
        if number in CHECKPOINTS:
            deadline = time.monotonic() + 120
            while dreams_started.value < CHECKPOINTS[number]:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"worker {worker}: dream {CHECKPOINTS[number]} never started")
                time.sleep(0.005)
        text = entry_text(worker, number)
        if worker % 2:
            append_text(Path(root), text, entry_type(worker), None)
        else:
            append_entry(StorePaths(Path(root)), make_entry(text, entry_type(worker), local_now(None)))


def distilled_ids(root: Path) -> list[str]:
    return (root / ".state" / "distilled.txt").read_text(encoding="utf-8").split()


def memories_by_source(root: Path) -> dict[str, list]:
    """Entry id -> the memories (live or archived) whose `sources` name it."""
    paths = StorePaths(root)
    found: dict[str, list] = {}
    for archived in (False, True):
        scan = scan_memories(paths, None, archived=archived)
        assert scan.unreadable == [], scan.unreadable
        for memory in scan.memories:
            for source in memory.sources:
                found.setdefault(source, []).append(memory)
    return found


def skipped_in_saved_reports(root: Path) -> set[str]:
    return {entry for report in (root / ".state" / "runs").glob("*/report.json")
            for skipped in json.loads(report.read_text(encoding="utf-8"))["skipped"] for entry in skipped["entries"]}


def waiting(root: Path) -> int:
    check = run_installed("--root", root, "check", "--json")
    assert check.returncode == 0, check.stderr
    return json.loads(check.stdout)["undistilled_entries"]


def test_sixteen_processes_append_3200_entries_while_dreams_run_and_none_is_lost_or_doubled(tmp_path):
    root = tmp_path / ".auto-dream"
    ensure_store(root)
    context = multiprocessing.get_context("fork")
    dreams_started = context.Value("i", 0)
    workers = [context.Process(target=append_worker, args=(str(root), w, dreams_started))
               for w in range(WORKERS)]
    dreams = []
    try:
        for worker in workers:
            worker.start()
        while any(worker.is_alive() for worker in workers):
            with dreams_started.get_lock():
                dreams_started.value += 1
            dreams.append(run_installed("--root", root, "dream", "--json"))
        for worker in workers:
            worker.join(timeout=60)
    finally:  # a failed dream must not leave the workers waiting at a checkpoint
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
                worker.join()
    assert [w.exitcode for w in workers] == [0] * WORKERS

    assert [d.returncode for d in dreams] == [0] * len(dreams), [d.stderr[-500:] for d in dreams]
    gathered = [json.loads(d.stdout)["stats"]["entries_gathered"] for d in dreams]
    assert sum(1 for g in gathered if 0 < g < WORKERS * APPENDS) >= 3, gathered  # each took a part

    # Every entry is in the log exactly once, intact.
    entries, problems = read_all_entries(StorePaths(root))
    assert problems == []
    expected = {entry_text(w, n) for w in range(WORKERS) for n in range(APPENDS)}
    assert sorted(e.text for e in entries) == sorted(expected)
    ids = {e.id for e in entries}

    # Before the last dream: what was distilled is in exactly one memory (or a saved report's
    # skipped list), distilled once; the rest waits.
    distilled = distilled_ids(root)
    assert [i for i, n in Counter(distilled).items() if n > 1] == [], "an entry was distilled twice"
    assert set(distilled) <= ids
    by_source = memories_by_source(root)
    skipped = skipped_in_saved_reports(root)
    assert [i for i in distilled if len(by_source.get(i, [])) != 1 and i not in skipped] == []
    assert waiting(root) == len(ids) - len(distilled)

    # A last dream takes what waits; then every one of the 3,200 entries is accounted for.
    final = run_installed("--root", root, "dream", "--json")
    assert final.returncode == 0, final.stderr[-2000:]
    assert waiting(root) == 0
    distilled = distilled_ids(root)
    assert len(distilled) == len(set(distilled)) == len(ids) and set(distilled) == ids
    by_source = memories_by_source(root)
    for entry in entries:
        (memory,) = by_source[entry.id]  # exactly one memory carries it
        assert entry.text in memory.body
        assert memory.type == entry.type
    again = run_installed("--root", root, "dream", "--json")
    assert json.loads(again.stdout)["actions"] == []
