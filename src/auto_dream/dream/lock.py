"""One dream at a time: a lock file with PID and start time; a dead or 60-minute-old lock is broken.

A lock is a file anyone can write: a pid no process can have (0 and -1 would name a process
group or every process to os.kill, a huge one overflows it) or a start time 60 minutes away
from now in either direction (a clock set back, or a forged future) leaves it broken too.
"""

import fcntl
import json
import os
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

from auto_dream.errors import LockHeldError
from auto_dream.store.files import write_atomic
from auto_dream.store.paths import StoreLayout

LOCK_FILE = "dream.lock"
STALE_AFTER = timedelta(minutes=60)


MAX_PID = 2**31 - 1  # pid_t is a signed 32-bit number; a process's pid is positive


def _alive(pid: int) -> bool:
    if not 0 < pid <= MAX_PID:
        return False  # no process has it; os.kill would signal a group, or overflow
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it lives, under another user
        return True
    return True


def read_lock(paths: StoreLayout) -> dict | None:
    try:
        data = json.loads((paths.state / LOCK_FILE).read_text(encoding="utf-8"))
        pid, started = data["pid"], datetime.fromisoformat(data["started"])
        if type(pid) is not int:  # a dream writes a whole number; true, 1.5 or "7" are not one
            raise TypeError(pid)
        return {"pid": pid, "started": started if started.tzinfo else started.astimezone()}
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
        return {"pid": 0, "started": datetime.fromtimestamp(0, timezone.utc)}  # unreadable: broken


def _held(held: dict, now: datetime) -> bool:
    """Held by another live process that started it within 60 minutes of now, before or after."""
    return held["pid"] != os.getpid() and _alive(held["pid"]) and abs(now - held["started"]) < STALE_AFTER


@contextmanager
def dream_lock(paths: StoreLayout, now: datetime):
    """Hold the store's dream lock for the duration of the block (LockHeldError: exit 3)."""
    lock_path = paths.state / LOCK_FILE
    key = os.path.realpath(lock_path)
    with _in_this_process_guard:  # a lock naming this process is held only if one of its threads has it
        if key in _in_this_process:
            raise LockHeldError(f"another dream is running in this process; its lock is {lock_path}")
        _in_this_process.add(key)
    try:
        folder = os.open(paths.state, os.O_RDONLY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)  # makes check-and-take one step among dreams
            held = read_lock(paths)
            if held is not None and _held(held, now):
                raise LockHeldError(f"another dream is running (pid {held['pid']}, started "
                                    f"{held['started']:%Y-%m-%d %H:%M}); its lock is {lock_path}")
            record = {"pid": os.getpid(), "started": now.isoformat(timespec="seconds")}
            write_atomic(lock_path, json.dumps(record).encode())
        finally:
            fcntl.flock(folder, fcntl.LOCK_UN)
            os.close(folder)
        try:
            yield
        finally:
            held = read_lock(paths)
            if held is not None and held["pid"] == os.getpid():
                lock_path.unlink(missing_ok=True)
    finally:
        with _in_this_process_guard:
            _in_this_process.discard(key)


# The lock file names a process, and one naming this process is taken for a leftover (its pid
# reused): threads of one process (an MCP server answering two calls at once, a library user)
# are kept apart by this set of the lock files it holds.
_in_this_process: set[str] = set()
_in_this_process_guard = threading.Lock()
