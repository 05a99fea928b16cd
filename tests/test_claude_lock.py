"""Claude Code's `.consolidate-lock`: a live PID younger than an hour stops us with exit 3
and an untouched file; otherwise we take it as Claude Code does, keep it stamped with the end of a
good run, and put it back exactly as it was when the run fails."""

import contextlib
import json
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


@pytest.mark.slow  # a child process holds the lock
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


@pytest.mark.slow  # a child process holds the lock
@pytest.mark.parametrize("body", ["{pid}\n", "  {pid}  ", "{pid}abc", "+{pid}"])
def test_the_pid_is_read_as_claude_codes_parseint_reads_it(tmp_path, sleeper, body):
    write_lock(tmp_path, body.format(pid=sleeper.pid), age_seconds=60)
    with pytest.raises(LockHeldError):
        check_free(tmp_path, time.time())


@pytest.mark.slow  # a child process holds the lock
def test_a_live_holder_stamped_in_the_future_still_holds_it_as_in_claude_code(tmp_path, sleeper):
    write_lock(tmp_path, str(sleeper.pid), age_seconds=-2 * HOUR)  # Date.now() - mtime < 1 h
    with pytest.raises(LockHeldError):
        check_free(tmp_path, time.time())


@pytest.mark.slow  # a child process holds the lock
def test_a_live_holder_two_hours_old_is_stale_and_taken(tmp_path, sleeper):
    lock = write_lock(tmp_path, str(sleeper.pid), age_seconds=2 * HOUR)
    check_free(tmp_path, time.time())
    with consolidate_lock(tmp_path, time.time) as hold:
        assert lock.read_text() == str(os.getpid())
        hold.consolidated()
    assert lock.read_text() == str(os.getpid())


@pytest.mark.slow  # starts a child Python
def test_a_dead_holder_is_taken_and_stamped_with_the_end_of_the_run(tmp_path):
    lock = write_lock(tmp_path, str(dead_pid()), age_seconds=60)
    with consolidate_lock(tmp_path, time.time) as hold:
        hold.consolidated()
        ended = time.time()
    assert lock.read_bytes() == str(os.getpid()).encode()  # Claude Code's own form: no newline
    assert lock.stat().st_mtime >= ended


def test_the_end_time_comes_from_the_clock_we_are_given(tmp_path):
    readings = iter([1_000_000.0, 1_000_000.0, 1_050_000.5])
    with consolidate_lock(tmp_path, lambda: next(readings)) as hold:
        hold.consolidated()
    assert (tmp_path / LOCK_FILE).stat().st_mtime_ns == 1_050_000_500_000_000


@pytest.mark.slow  # starts a child Python
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


@pytest.mark.slow  # starts a child Python
def test_a_run_that_changed_nothing_puts_the_lock_back_byte_for_byte_and_to_the_nanosecond(tmp_path):
    """a dream that applied nothing left the lock stamped with its end, and Claude
    Code's 24-hour gate counted a consolidation that never happened."""
    lock = write_lock(tmp_path, f"{dead_pid()}", age_seconds=0)
    os.utime(lock, ns=(1_700_000_000_123_456_789, 1_700_000_000_987_654_321))
    before = as_it_is(lock)
    with consolidate_lock(tmp_path, time.time):
        assert lock.read_text() == str(os.getpid())
    assert as_it_is(lock) == before
    folder = tmp_path / "memory"
    folder.mkdir()
    with consolidate_lock(folder, time.time):
        assert (folder / LOCK_FILE).exists()
    assert not (folder / LOCK_FILE).exists()


def test_the_record_holds_the_prior_lock_while_held_and_goes_at_the_end(tmp_path):
    lock = write_lock(tmp_path, "2147483646", age_seconds=HOUR / 2)
    record = tmp_path / "state" / claude_lock.RECORD
    with consolidate_lock(tmp_path, time.time, record) as hold:
        saved = json.loads(record.read_text())
        assert saved["pid"] == os.getpid() and saved["consolidated"] is False
        assert bytes.fromhex(saved["prior"]["body"]) == b"2147483646"
        hold.consolidated()
        assert json.loads(record.read_text())["consolidated"] is True
    assert not record.exists() and lock.read_text() == str(os.getpid())


def killed_holder(folder: Path, record: Path, consolidated: bool) -> tuple[bytes, int]:
    """What a run SIGKILLed while holding the lock leaves: the lock naming its dead PID, stamped
    fresh, and its record of the lock before it. Returns the lock as it was before."""
    lock = write_lock(folder, "31337", age_seconds=3 * 24 * HOUR)  # Claude Code's, three days ago
    before = as_it_is(lock)
    pid = dead_pid()
    prior = {"body": before[0].hex(), "atime_ns": before[1], "mtime_ns": before[1]}
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"pid": pid, "taken_ns": time.time_ns(), "prior": prior,
                                  "consolidated": consolidated}))
    write_lock(folder, str(pid), age_seconds=0)
    return before


@pytest.mark.slow  # starts a child Python
def test_recover_puts_back_the_lock_a_killed_run_left(tmp_path):
    record = tmp_path / "state" / claude_lock.RECORD
    before = killed_holder(tmp_path, record, consolidated=False)
    claude_lock.recover(tmp_path, record)
    assert as_it_is(tmp_path / LOCK_FILE) == before and not record.exists()


@pytest.mark.slow  # starts a child Python
def test_recover_leaves_the_lock_of_a_killed_run_that_had_applied_its_changes(tmp_path):
    record = tmp_path / "state" / claude_lock.RECORD
    killed_holder(tmp_path, record, consolidated=True)
    left = as_it_is(tmp_path / LOCK_FILE)
    claude_lock.recover(tmp_path, record)
    assert as_it_is(tmp_path / LOCK_FILE) == left and not record.exists()


@pytest.mark.slow  # a child process holds the lock
def test_recover_leaves_a_lock_taken_since_and_a_record_whose_run_is_alive(tmp_path, sleeper):
    record = tmp_path / "state" / claude_lock.RECORD
    killed_holder(tmp_path, record, consolidated=False)
    taken = as_it_is(write_lock(tmp_path, str(sleeper.pid), age_seconds=0))  # Claude Code took it since
    claude_lock.recover(tmp_path, record)
    assert as_it_is(tmp_path / LOCK_FILE) == taken and not record.exists()
    record.write_text(json.dumps({"pid": sleeper.pid, "taken_ns": 1, "prior": None, "consolidated": False}))
    claude_lock.recover(tmp_path, record)  # a run still going: its record is its own
    assert as_it_is(tmp_path / LOCK_FILE) == taken and record.exists()


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


@pytest.mark.slow  # starts a child Python
def test_check_free_never_writes(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    check_free(folder, time.time())
    assert os.listdir(folder) == []
    lock = write_lock(folder, str(dead_pid()), age_seconds=60)
    before = as_it_is(lock)
    check_free(folder, time.time())
    assert as_it_is(lock) == before and os.listdir(folder) == [LOCK_FILE]


@pytest.mark.slow  # a child process holds the lock
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


@pytest.mark.slow  # a child process holds the lock
@pytest.mark.parametrize("fails", [True, False])
def test_a_lock_someone_took_over_during_our_run_is_left_to_them(tmp_path, sleeper, fails):
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext():
        with consolidate_lock(tmp_path, time.time):
            # A run that outlived the hour: Claude Code reclaimed the lock under it.
            before = as_it_is(write_lock(tmp_path, str(sleeper.pid), age_seconds=0))
            if fails:
                raise RuntimeError("boom")
    assert as_it_is(tmp_path / LOCK_FILE) == before


@pytest.mark.slow  # a child process holds the lock
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
