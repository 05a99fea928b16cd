"""One dream at a time: a lock file with PID and start time; a dead or 60-minute-old lock is broken."""

import fcntl
import json
import os
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

from auto_dream.errors import LockHeldError
from auto_dream.memory import write_atomic
from auto_dream.paths import StorePaths

LOCK_FILE = "dream.lock"
STALE_AFTER = timedelta(minutes=60)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock(paths: StorePaths) -> dict | None:
    try:
        data = json.loads((paths.state / LOCK_FILE).read_text(encoding="utf-8"))
        started = datetime.fromisoformat(data["started"])
        return {"pid": int(data["pid"]), "started": started if started.tzinfo else started.astimezone()}
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return {"pid": -1, "started": datetime.fromtimestamp(0, timezone.utc)}  # unreadable: broken


@contextmanager
def dream_lock(paths: StorePaths, now: datetime):
    """Hold the store's dream lock for the duration of the block (LockHeldError: exit 3)."""
    lock_path = paths.state / LOCK_FILE
    folder = os.open(paths.state, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # makes check-and-take one step among dreams
        held = read_lock(paths)
        if held is not None and held["pid"] != os.getpid() and _alive(held["pid"]) \
                and now - held["started"] < STALE_AFTER:
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
