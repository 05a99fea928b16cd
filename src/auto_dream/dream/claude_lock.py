"""Claude Code's own `.consolidate-lock` in a memory folder, honoured and taken the way it takes it.

What Claude Code does (src/services/autoDream/consolidationLock.ts of its 2.1.88 source, as
mirrored publicly, e.g. github.com/claude-code-best/claude-code at c465616; its isProcessRunning
is in src/utils/genericProcessUtils.ts):
- The body is `String(process.pid)`, no newline; the file's mtime is lastConsolidatedAt.
- Held when the mtime is less than HOLDER_STALE_MS = one hour before now (a future mtime
  counts as young) and `parseInt(body.trim(), 10)` names a running process. An empty or
  unparsable body, or a dead PID, is reclaimed at once; so is any lock an hour old.
- To take it, it writes its PID, then reads the file again and backs off when the PID is not
  its own ("two reclaimers both write, last wins the PID; loser bails on re-read").
- On success it leaves the file; on failure it writes an empty body and sets the mtime back
  (utimes), or unlinks the file when there was none.
Where we differ, deliberately: the PID test is dream.lock's `_alive`, which also counts PID 1
and another user's process as alive (Claude Code counts both dead): stricter, so we never take
a lock Claude Code would see as held. A run leaves the mtime at its end, not its start, and
only when it changed a file (a run that applied nothing consolidated nothing: Claude Code's
24-hour gate must not count it); a rollback restores the prior body too, and the mtime to the
nanosecond. We touch the file at the end only while it still names us, so a run that outlived
the hour never undoes a later holder. A run killed while holding it (SIGKILL: no handler runs)
left our dead PID and a fresh mtime, which Claude Code reads as "consolidated just now" for a
day: before touching the lock we record the prior one in a file of our own (`record`), and
the next dream or undo puts it back (`recover`), unless the run had applied its changes.
"""

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from auto_dream.dream.lock import _alive
from auto_dream.errors import LockHeldError, StoreError
from auto_dream.store.files import read_regular_status, write_atomic

LOCK_FILE = ".consolidate-lock"
RECORD = "claude_lock.json"  # in a run's state folder: the lock as it was before the run took it
HOLDER_STALE = 60 * 60  # seconds: Claude Code's HOLDER_STALE_MS (the PID-reuse guard)
MAX_LOCK_BYTES = 1 << 16  # a PID is a few bytes; anything far larger is not a lock
_LEADING_INTEGER = re.compile(r"[+-]?[0-9]+")  # what JavaScript's parseInt(text, 10) reads

Lock = tuple[bytes, os.stat_result]  # the file's bytes, and its status when they were read


def holder_pid(body: bytes) -> int | None:
    """The PID as Claude Code reads it, `parseInt(body.trim(), 10)`: leading digits, or None."""
    match = _LEADING_INTEGER.match(body.decode("utf-8", "replace").strip())
    return int(match.group()) if match else None


def read_lock(path: Path) -> Lock | None:
    """The lock's bytes and status, or None when there is none. Never through a symlink, never
    from a FIFO (files.read_regular_status, as store.memory_md.read_index)."""
    kind = "a Claude Code lock file (not a small regular file)"
    found = read_regular_status(path, MAX_LOCK_BYTES, kind)
    if found is not None and found[1].st_size > MAX_LOCK_BYTES:
        raise StoreError(f"{path} is not {kind}")
    return found


def _refuse_if_held(path: Path, lock: Lock | None, now: float) -> None:
    """LockHeldError when another live process took `lock` less than an hour before `now`."""
    if lock is None:
        return
    body, status = lock
    pid = holder_pid(body)
    if now - status.st_mtime >= HOLDER_STALE or pid is None or pid == os.getpid() or not _alive(pid):
        return  # stale, unparsable, ours (re-entrant) or dead: free, as Claude Code reclaims it
    since = datetime.fromtimestamp(status.st_mtime).astimezone()
    raise LockHeldError(f"Claude Code is consolidating this memory folder (pid {pid}, since "
                        f"{since:%Y-%m-%d %H:%M}); its lock is {path}; try again later")


def check_free(folder: Path, now: float) -> None:
    """Raise LockHeldError (exit 3) when Claude Code holds `folder`'s lock; read only (a dry run)."""
    path = folder / LOCK_FILE
    _refuse_if_held(path, read_lock(path), now)


def _nanoseconds(seconds: float) -> int:
    return round(seconds * 1_000_000_000)


def _stamp(path: Path, body: bytes, atime_ns: int, mtime_ns: int) -> None:
    write_atomic(path, body)
    os.utime(path, ns=(atime_ns, mtime_ns), follow_symlinks=False)


def _still_ours(path: Path) -> bool:
    lock = read_lock(path)
    return lock is not None and holder_pid(lock[0]) == os.getpid()


def _restore(path: Path, prior: Lock | None) -> None:
    """Put the lock back as it was before we took it: absent, or its bytes and times."""
    if prior is None:
        path.unlink(missing_ok=True)
    else:
        _stamp(path, prior[0], prior[1].st_atime_ns, prior[1].st_mtime_ns)


@dataclass
class Hold:
    """Our hold on the lock, for the block: told when the run has changed files."""

    record: Path | None
    taken: int
    prior: Lock | None
    changed: bool = False

    def consolidated(self) -> None:
        """The run changed files: the lock is left stamped with its end, even after a kill."""
        self.changed = True
        if self.record is not None:
            _write_record(self.record, self)


def _write_record(record: Path, hold: Hold) -> None:
    prior = None if hold.prior is None else {"body": hold.prior[0].hex(), "atime_ns": hold.prior[1].st_atime_ns,
                                             "mtime_ns": hold.prior[1].st_mtime_ns}
    write_atomic(record, json.dumps({"pid": os.getpid(), "taken_ns": hold.taken, "prior": prior,
                                     "consolidated": hold.changed}).encode())


def recover(folder: Path, record: Path) -> None:
    """A run killed while holding `folder`'s lock (its `record` is still there, and the lock still
    names it, dead): the lock is put back as it was before that run, unless the run had applied
    its changes. A record whose process lives belongs to a run still going: left alone. A lock
    taken by another since is theirs."""
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
        pid, prior, consolidated = saved["pid"], saved["prior"], saved["consolidated"]
        prior_lock = None if prior is None else (bytes.fromhex(prior["body"]), prior["atime_ns"], prior["mtime_ns"])
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):  # damaged: nothing to go by
        record.unlink(missing_ok=True)
        return
    if pid == os.getpid() or _alive(pid):
        return  # that run is still going (it removes its record when it ends)
    path = folder / LOCK_FILE
    lock = read_lock(path)
    if lock is not None and holder_pid(lock[0]) == pid and not consolidated:
        if prior_lock is None:
            path.unlink(missing_ok=True)
        else:
            _stamp(path, *prior_lock)
    record.unlink(missing_ok=True)


@contextmanager
def consolidate_lock(folder: Path, now: Callable[[], float] | float, record: Path | None = None) -> Iterator[Hold]:
    """Hold Claude Code's lock on `folder` for the block: LockHeldError (exit 3) when it is busy.

    `now` is a clock (or one frozen time). A run that ends well having changed files (the block
    calls `Hold.consolidated`) leaves the lock with our PID and the end time as its mtime, which
    Claude Code's 24-hour gate counts as a consolidation; one that changed nothing, or any
    exception, KeyboardInterrupt too, puts the file back as it was. `record` (a file of ours)
    keeps the prior lock while we hold it, so that `recover` can put it back after a kill.
    """
    clock: Callable[[], float] = now if callable(now) else (lambda: now)
    path = folder / LOCK_FILE
    if record is not None:
        recover(folder, record)
    prior = read_lock(path)
    _refuse_if_held(path, prior, clock())
    hold = Hold(record, _nanoseconds(clock()), prior)
    try:
        if record is not None:
            _write_record(record, hold)  # on disk before the lock changes
        _stamp(path, str(os.getpid()).encode(), hold.taken, hold.taken)
        if not _still_ours(path):  # another taker wrote after us and won: back off as Claude Code does
            winner = read_lock(path)
            raise LockHeldError(f"Claude Code took this memory folder's lock first (pid "
                                f"{holder_pid(winner[0]) if winner else 'gone'}); its lock is {path}; try again later")
        yield hold
    except BaseException:
        if _still_ours(path):  # a lock another process took since is theirs: left as it is
            _restore(path, prior)
        if record is not None:
            record.unlink(missing_ok=True)
        raise
    if _still_ours(path):
        if hold.changed:
            ended = _nanoseconds(clock())
            os.utime(path, ns=(ended, ended), follow_symlinks=False)
        else:
            _restore(path, prior)
    if record is not None:
        record.unlink(missing_ok=True)
