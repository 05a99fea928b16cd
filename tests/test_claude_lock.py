"""Claude Code's `.consolidate-lock` (issue 15): a live PID younger than an hour stops us with exit 3
and an untouched file; otherwise we take it as Claude Code does, keep it stamped with the end of a
good run, and put it back exactly as it was when the run fails."""

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auto_dream.dream import claude_lock
from auto_dream.dream.claude_lock import LOCK_FILE, check_free, consolidate_lock
from auto_dream.errors import LockHeldError, StoreError

HOUR = 3600


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has it (until the kernel reuses it, far from now)


def write_lock(folder: Path, body: str, age_seconds: float) -> Path:
    lock = folder / LOCK_FILE
    lock.write_text(body)
    when = time.time() - age_seconds
    os.utime(lock, (when, when))
    return lock


def as_it_is(lock: Path) -> tuple[bytes, int]:
    return lock.read_bytes(), lock.stat().st_mtime_ns


def test_a_live_recent_holder_stops_us_and_the_file_is_untouched(tmp_path, sleeper):
    lock = write_lock(tmp_path, str(sleeper.pid), age_seconds=300)
    before = as_it_is(lock)
    ran = []
    with pytest.raises(LockHeldError) as refused:
        with consolidate_lock(tmp_path, time.time):
            ran.append(True)
    with pytest.raises(LockHeldError):
        check_free(tmp_path, time.time())
    assert not ran and as_it_is(lock) == before
    message = str(refused.value)
    assert refused.value.exit_code == 3 and "\n" not in message
    assert message.startswith("Claude Code is consolidating this memory folder")
    assert f"pid {sleeper.pid}" in message and str(lock) in message and "try again later" in message


@pytest.mark.parametrize("body", ["{pid}\n", "  {pid}  ", "{pid}abc", "+{pid}"])
def test_the_pid_is_read_as_claude_codes_parseint_reads_it(tmp_path, sleeper, body):
    write_lock(tmp_path, body.format(pid=sleeper.pid), age_seconds=60)
    with pytest.raises(LockHeldError):
        check_free(tmp_path, time.time())


def test_a_live_holder_stamped_in_the_future_still_holds_it_as_in_claude_code(tmp_path, sleeper):
    write_lock(tmp_path, str(sleeper.pid), age_seconds=-2 * HOUR)  # Date.now() - mtime < 1 h
    with pytest.raises(LockHeldError):
        check_free(tmp_path, time.time())


def test_a_live_holder_two_hours_old_is_stale_and_taken(tmp_path, sleeper):
    lock = write_lock(tmp_path, str(sleeper.pid), age_seconds=2 * HOUR)
    check_free(tmp_path, time.time())
    with consolidate_lock(tmp_path, time.time):
        assert lock.read_text() == str(os.getpid())
    assert lock.read_text() == str(os.getpid())


def test_a_dead_holder_is_taken_and_stamped_with_the_end_of_the_run(tmp_path):
    lock = write_lock(tmp_path, str(dead_pid()), age_seconds=60)
    with consolidate_lock(tmp_path, time.time):
        ended = time.time()
    assert lock.read_bytes() == str(os.getpid()).encode()  # Claude Code's own form: no newline
    assert lock.stat().st_mtime >= ended


def test_the_end_time_comes_from_the_clock_we_are_given(tmp_path):
    readings = iter([1_000_000.0, 1_000_000.0, 1_050_000.5])
    with consolidate_lock(tmp_path, lambda: next(readings)):
        pass
    assert (tmp_path / LOCK_FILE).stat().st_mtime_ns == 1_050_000_500_000_000


@pytest.mark.parametrize("failure", [RuntimeError("distiller broke"), KeyboardInterrupt()])
def test_a_failed_run_puts_the_lock_back_byte_for_byte_and_to_the_nanosecond(tmp_path, failure):
    lock = write_lock(tmp_path, f"{dead_pid()}\n", age_seconds=0)
    os.utime(lock, ns=(1_700_000_000_123_456_789, 1_700_000_000_987_654_321))
    before = as_it_is(lock)
    with pytest.raises(type(failure)):
        with consolidate_lock(tmp_path, time.time):
            assert lock.read_text() == str(os.getpid())
            raise failure
    assert as_it_is(lock) == before


def test_a_failed_run_leaves_no_lock_where_there_was_none(tmp_path):
    with pytest.raises(RuntimeError):
        with consolidate_lock(tmp_path, time.time):
            assert (tmp_path / LOCK_FILE).exists()
            raise RuntimeError("boom")
    assert not (tmp_path / LOCK_FILE).exists()


@pytest.mark.parametrize("body", ["", "abc", "\n", "-"])
def test_an_unparsable_body_is_free_as_claude_code_reclaims_it(tmp_path, body):
    lock = write_lock(tmp_path, body, age_seconds=1)  # young: only the body makes it free
    check_free(tmp_path, time.time())
    with consolidate_lock(tmp_path, time.time):
        assert lock.read_text() == str(os.getpid())


@pytest.mark.parametrize("pid", [0, -1, 2**31, str(os.getpid())])
def test_no_process_or_our_own_process_counts_as_free(tmp_path, pid):
    write_lock(tmp_path, str(pid), age_seconds=1)
    check_free(tmp_path, time.time())
    with consolidate_lock(tmp_path, time.time):
        pass


def test_check_free_never_writes(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    check_free(folder, time.time())
    assert os.listdir(folder) == []
    lock = write_lock(folder, str(dead_pid()), age_seconds=60)
    before = as_it_is(lock)
    check_free(folder, time.time())
    assert as_it_is(lock) == before and os.listdir(folder) == [LOCK_FILE]


def test_a_symlink_named_like_the_lock_is_refused_and_not_followed(tmp_path, sleeper):
    target = tmp_path / "elsewhere"
    target.write_text(str(dead_pid()))
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / LOCK_FILE).symlink_to(target)
    before = as_it_is(target)
    for attempt in (lambda: check_free(folder, time.time()), lambda: consolidate_lock(folder, time.time).__enter__()):
        with pytest.raises(StoreError) as refused:
            attempt()
        assert "symbolic link" in str(refused.value) and "\n" not in str(refused.value)
    assert (folder / LOCK_FILE).is_symlink() and as_it_is(target) == before


def test_a_fifo_named_like_the_lock_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / LOCK_FILE)
    with pytest.raises(StoreError, match="not a Claude Code lock file"):
        check_free(tmp_path, time.time())


@pytest.mark.parametrize("fails", [True, False])
def test_a_lock_someone_took_over_during_our_run_is_left_to_them(tmp_path, sleeper, fails):
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext():
        with consolidate_lock(tmp_path, time.time):
            # A run that outlived the hour: Claude Code reclaimed the lock under it.
            before = as_it_is(write_lock(tmp_path, str(sleeper.pid), age_seconds=0))
            if fails:
                raise RuntimeError("boom")
    assert as_it_is(tmp_path / LOCK_FILE) == before


def test_losing_the_race_to_write_backs_off_and_leaves_the_winner(tmp_path, sleeper, monkeypatch):
    real_write = claude_lock.write_atomic

    def write_then_lose(path: Path, content: bytes) -> None:
        real_write(path, content)
        path.write_text(str(sleeper.pid))  # another taker wrote right after us

    monkeypatch.setattr(claude_lock, "write_atomic", write_then_lose)
    ran = []
    with pytest.raises(LockHeldError, match=f"pid {sleeper.pid}"):
        with consolidate_lock(tmp_path, time.time):
            ran.append(True)
    assert not ran and (tmp_path / LOCK_FILE).read_text() == str(sleeper.pid)
