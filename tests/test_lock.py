"""One dream at a time (docs/dream.md, "Safety"): a lock with PID and start time; a dead or 60-minute-old lock
is broken; a live one makes `dream` and `undo` exit 3 with one line and change nothing."""

import hashlib
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from auto_dream.dream.lock import dream_lock
from auto_dream.store.daylog import Entry, format_entry
from auto_dream.store.paths import StorePaths
from conftest import installed_command, run_installed, tree_hash


def lock_file(root: Path) -> Path:
    return root / ".state" / "dream.lock"


def write_lock(root: Path, pid: int, started: datetime) -> None:
    lock_file(root).write_text(json.dumps({"pid": pid, "started": started.isoformat(timespec="seconds")}))


def now() -> datetime:
    return datetime.now().astimezone()


@pytest.fixture
def store(root, cli) -> Path:
    """A store with three entries waiting: a dream has work to do."""
    for text in ("The API gateway runs on port 8443.", "用户喜欢简洁的回答", "Never force-push to main."):
        assert cli("--root", root, "append", text).code == 0
    return root


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has it (until the kernel reuses it, far from now)


def refused_because_locked(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 3, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("auto-dream: error: another dream is running")


def memory_count(root: Path) -> int:
    return sum(1 for _ in (root / "memories").rglob("*.md"))


@pytest.mark.slow  # starts the installed command
def test_two_dreams_started_together_one_runs_the_other_exits_3(root, cli):
    # Enough distinct entries that a dream holds the lock for a good part of a second.
    def word(i: int, j: int) -> str:
        return "".join(chr(ord("a") + int(c, 16)) for c in hashlib.sha256(f"{i}-{j}".encode()).hexdigest()[:8])

    start = datetime(2026, 3, 2, 9, 0)
    log = StorePaths(root).log_file(start.date())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(format_entry(Entry(start + timedelta(seconds=i), " ".join(word(i, j) for j in range(5))
                                              + ".", "project")) for i in range(300)), encoding="utf-8")

    command = [installed_command(), "--root", str(root), "dream", "--json"]
    both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.returncode, out, err) for p in both for out, err in [p.communicate(timeout=60)]]

    assert sorted(code for code, _, _ in results) == [0, 3], results
    (_, out, _), = [r for r in results if r[0] == 0]
    (_, _, err), = [r for r in results if r[0] == 3]
    assert json.loads(out)["stats"]["created"] == 300
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("auto-dream: error: another dream is running"), err
    assert memory_count(root) == 300  # made once, not twice
    assert not lock_file(root).exists()
    assert json.loads(cli("--root", root, "dream", "--json").out)["actions"] == []


@pytest.mark.slow  # starts the installed command
def test_dream_and_undo_exit_3_while_another_process_holds_the_lock_but_a_dry_run_works(store, cli):
    assert cli("--root", store, "dream").code == 0
    assert cli("--root", store, "append", "Release notes live in docs/releases.md.").code == 0
    with dream_lock(StorePaths(store), now()):  # this test process is the other dream
        whole = tree_hash(store)
        refused_because_locked(run_installed("--root", store, "dream"))
        refused_because_locked(run_installed("--root", store, "undo"))
        assert tree_hash(store) == whole  # the waiting entry not distilled, the run not undone
        shown = run_installed("--root", store, "dream", "--dry-run")  # reads only: needs no lock
        assert shown.returncode == 0 and "[DRY RUN] Would create" in shown.stdout, shown.stderr
    assert not lock_file(store).exists()
    undone = run_installed("--root", store, "undo")
    assert undone.returncode == 0, undone.stderr


@pytest.mark.slow  # starts the installed command
def test_a_lock_held_by_a_live_recent_process_stops_the_dream_and_changes_nothing(store, sleeper):
    write_lock(store, sleeper.pid, now() - timedelta(minutes=5))
    whole = tree_hash(store)
    refused = run_installed("--root", store, "dream")
    refused_because_locked(refused)
    assert f"pid {sleeper.pid}" in refused.stderr
    assert tree_hash(store) == whole  # the lock itself included
    assert memory_count(store) == 0


@pytest.mark.slow  # starts the installed command
def test_a_lock_left_by_a_dead_process_is_broken(store):
    pid = dead_pid()
    write_lock(store, pid, now())
    ran = run_installed("--root", store, "dream")
    assert ran.returncode == 0, ran.stderr
    assert memory_count(store) == 3
    assert not lock_file(store).exists()


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("minutes, code", [(61, 0), (59, 3)])
def test_a_lock_older_than_60_minutes_is_broken_even_if_its_process_lives(store, sleeper, minutes, code):
    write_lock(store, sleeper.pid, now() - timedelta(minutes=minutes))
    result = run_installed("--root", store, "dream")
    assert result.returncode == code, result.stderr
    assert memory_count(store) == (3 if code == 0 else 0)
    assert lock_file(store).exists() == (code == 3)  # a broken lock is gone; a held one left alone


@pytest.mark.slow  # starts the installed command
def test_an_unreadable_lock_file_is_broken_not_a_crash(store):
    lock_file(store).write_text("")  # e.g. a lock file truncated by a full disk
    ran = run_installed("--root", store, "dream")
    assert ran.returncode == 0, ran.stderr
    assert memory_count(store) == 3
    assert not lock_file(store).exists()


@pytest.mark.slow  # starts the installed command
def test_the_lock_is_gone_after_a_dream_and_after_a_refused_undo(store, cli):
    ran = run_installed("--root", store, "dream")
    assert ran.returncode == 0, ran.stderr
    assert not lock_file(store).exists()
    assert json.loads(cli("--root", store, "dream", "--json").out)["actions"] == []
    assert not lock_file(store).exists()
    (created,) = (store / "memories").rglob("*API_gateway*.md")
    created.write_text(created.read_text(encoding="utf-8") + "\nAnd 8080 inside the cluster.\n", encoding="utf-8")
    refused = run_installed("--root", store, "undo")
    assert refused.returncode == 1 and "changed since that run" in refused.stderr
    assert not lock_file(store).exists()  # a refused undo does not block the next dream
    assert cli("--root", store, "append", "The cache TTL is ten minutes.").code == 0
    assert cli("--root", store, "dream").code == 0
    assert memory_count(store) == 4


def test_two_threads_of_one_process_never_hold_the_lock_at_once(store):
    """A lock naming this process is taken for a leftover of a reused pid; two threads of one
    process (the MCP server answers calls in threads) are kept apart all the same."""
    import threading

    from auto_dream.errors import LockHeldError

    inside, leave = threading.Event(), threading.Event()

    def first() -> None:
        with dream_lock(StorePaths(store), now()):
            inside.set()
            leave.wait(30)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert inside.wait(30)
        with pytest.raises(LockHeldError, match="another dream is running in this process"):
            with dream_lock(StorePaths(store), now()):
                pass
    finally:
        leave.set()
        thread.join()
    with dream_lock(StorePaths(store), now()):  # let go: the next one gets it
        assert lock_file(store).exists()
    assert not lock_file(store).exists()
