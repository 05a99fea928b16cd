"""Replacing a file that someone else may write at the same moment: an agent appending a line
to MEMORY.md (`echo "- fact" >> MEMORY.md`), a shell holding it open, an editor saving it.

`replace_if_unchanged` puts new bytes at a path only while the file there still holds what the
caller read, and loses no one's write:

- The path always names a whole file. The new file, whole and on disk beside the path, is
  swapped in by one rename(2); where the file system can, by exchanging the two names
  (`exchange`), so that what was swapped out is still at hand under the other name.
- The file being replaced is held from the check to the end by a second name and an open
  descriptor. After the swap it is checked again, before and after its names go: a write
  that reached it meanwhile (through the path, or through a descriptor opened long before)
  puts it, as it now is, back at the path. So does a file an editor renamed onto the path
  between the check and the swap, seen where names can be exchanged.
- When their file goes back, the new one comes off the path; if someone wrote to it while it
  stood there, it is kept beside the path (the `staged` name) and the outcome names it.
- A name of ours is removed only when what it holds is also at the path or is what the
  caller read (the caller keeps that: dream's journal holds it): else it is kept and named.

What no check can see, after the call returns: a write through a descriptor opened before the
call reaches a file no longer at the path (as after any editor's save). And where names cannot
be exchanged (no renameat2 or renamex_np, or a file system without it), a file an editor renames
onto the path in the instant between the last check and the swap is replaced unseen.
"""

import errno
import hashlib
import os
import stat as stat_module
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from auto_dream.store.files import Fingerprint, fingerprint_of, fsync_dir, mode_of, remove_temporary, write_temporary

Status = Literal["done", "absent", "changed"]


@dataclass(frozen=True)
class Expected:
    """What the file must still be: its bytes' sha256 and, when given, its (size, mtime_ns, inode)."""

    sha256: str
    stamp: Fingerprint | None = None


@dataclass(frozen=True)
class Replaced:
    """done: the change is made; absent: the file had gone, nothing was written; changed: the file
    is left as someone made it, and `kept` names the files kept beside it (a version written to
    while it stood at the path, or one taken off it), each holding something found nowhere else."""

    status: Status
    kept: list[Path] = field(default_factory=list)


def side_names(target: Path, tag: str) -> tuple[Path, Path]:
    """The two hidden names beside `target` a change tagged `tag` uses, `.NAME.TAG.old` (the file
    replaced, held) and `.NAME.TAG.new` (the new file, staged); numbered when a kept one has them."""
    number = 1
    while True:
        suffix = tag if number == 1 else f"{tag}-{number}"
        held, staged = (target.with_name(f".{target.name}.{suffix}.{end}") for end in ("old", "new"))
        if not (os.path.lexists(held) or os.path.lexists(staged)):
            return held, staged
        number += 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- exchanging two names


def exchange(first: Path, second: Path) -> bool:
    """Swap what two names name, in one step (Linux renameat2 RENAME_EXCHANGE, macOS renamex_np
    RENAME_SWAP); False when this system or file system cannot, and nothing was done."""
    call = _exchange_call()
    if call is None:
        return False
    if call(os.fsencode(first), os.fsencode(second)) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))


@cache
def _exchange_call() -> Callable[[bytes, bytes], int] | None:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        renameat2 = libc.renameat2
        renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        at_cwd, rename_exchange = -100, 2
        return lambda first, second: renameat2(at_cwd, first, at_cwd, second, rename_exchange)
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        renamex_np = libc.renamex_np
        renamex_np.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        rename_swap = 2
        return lambda first, second: renamex_np(first, second, rename_swap)
    return None


def _swap(source: Path, target: Path) -> bool:
    """Put `source` at `target` in one step; True when the names were exchanged (`source` now
    names what was at `target`), False when it was a rename (what was there has no name left)."""
    if exchange(source, target):
        return True
    os.rename(source, target)
    return False


# ---------------------------------------------------------------- a file held open


class _Held:
    """A file held by an open descriptor: its identity, and whether it still holds given bytes."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        self.status = os.fstat(self.fd)

    def __enter__(self) -> "_Held":
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)

    def read(self) -> bytes:
        """Every byte it holds now, from the start."""
        chunks, offset = [], 0
        while chunk := os.pread(self.fd, 1 << 20, offset):
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def holds(self, digest: str) -> bool:
        return sha256(self.read()) == digest

    def matches(self, expected: Expected) -> bool:
        status = os.fstat(self.fd)
        return (stat_module.S_ISREG(status.st_mode)
                and (expected.stamp is None or fingerprint_of(status) == expected.stamp)
                and self.holds(expected.sha256))

    def is_at(self, path: Path) -> bool:
        """Whether `path` names this very file (not a copy of it)."""
        try:
            status = os.lstat(path)
        except FileNotFoundError:
            return False
        return (status.st_dev, status.st_ino) == (self.status.st_dev, self.status.st_ino)


def _hold(path: Path) -> _Held | None:
    """`path` held open; None when it is not a regular file (a link, a FIFO planted there)."""
    try:
        held = _Held(path)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO):
            return None
        raise
    if not stat_module.S_ISREG(held.status.st_mode):
        os.close(held.fd)
        return None
    return held


_NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)


def _link(source: Path | str, name: Path) -> bool:
    """A second name for `source`'s file (FileExistsError when `name` is taken); False, with
    nothing done, on a file system without hard links (FAT, some network shares)."""
    try:
        os.link(source, name, follow_symlinks=False)
    except OSError as error:
        if error.errno not in _NO_HARD_LINKS:
            raise
        return False
    return True


def _move_to_free(source: Path | str, name: Path) -> None:
    """`source` renamed to `name`, which must be free (FileExistsError): where names cannot be
    linked, the narrow check-then-rename (the names are ours, or the path a removal emptied)."""
    if not _link(source, name):
        if os.path.lexists(name):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(name))
        os.rename(source, name)
        return
    os.unlink(source)


def _stage(name: Path, data: bytes, mode: int | None = None, mtime_ns: int | None = None) -> None:
    """`data` at `name`, whole and on disk (with `mode` and `mtime_ns` when given) before it is
    anywhere a reader looks. `name` is a fresh name of ours: a file there is never replaced."""
    temporary = write_temporary(name, data)
    try:
        if mode is not None:
            os.chmod(temporary, mode)
        if mtime_ns is not None:
            os.utime(temporary, ns=(mtime_ns, mtime_ns))
        _move_to_free(temporary, name)
    finally:
        remove_temporary(temporary)


# ---------------------------------------------------------------- replacing and removing


def replace_if_unchanged(target: Path, data: bytes, expected: Expected, held: Path, staged: Path,
                         mode: int | None = None, mtime_ns: int | None = None) -> Replaced:
    """Put `data` at `target` (with `mode` and `mtime_ns` when given; else with the mode of the file
    it replaces: a person's 0644 stays 0644) if the file there is still `expected`; `held` and
    `staged` are fresh hidden names beside it (side_names)."""
    _stage(staged, data, mode if mode is not None else mode_of(target), mtime_ns)
    with _Held(staged) as ours:
        try:
            linked = _link(target, held)  # without hard links, the file is held by its descriptor alone
            theirs = _hold(held if linked else target)
        except FileNotFoundError:
            os.unlink(staged)
            return Replaced("absent")
        except BaseException:
            os.unlink(staged)
            raise
        # From here a failure leaves both names beside the path, for the caller's recovery
        # (dream's journal knows what each one holds: runs.recover_aside).
        if theirs is None:  # a link or a FIFO at the path: not the file that was read
            os.unlink(staged)
            if linked:
                os.unlink(held)
            return Replaced("changed")
        with theirs:
            return _replace_held(target, expected, held, staged, theirs, ours, sha256(data))


def _replace_held(target: Path, expected: Expected, held: Path, staged: Path, theirs: _Held, ours: _Held,
                  written: str) -> Replaced:
    if not (theirs.matches(expected) and theirs.is_at(target)):
        os.unlink(staged)
        return Replaced("changed", _drop_held(held, theirs, target, expected))
    exchanged = _swap(staged, target)  # the new file is at the path
    back = staged if exchanged else held
    if (not exchanged or theirs.is_at(staged)) and theirs.holds(expected.sha256):
        if exchanged:
            os.unlink(staged)  # a second name of the file held
        if os.path.lexists(held):
            os.unlink(held)
        if theirs.holds(expected.sha256):  # nothing came through a descriptor before its names went
            fsync_dir(target.parent)
            return Replaced("done")
        back = held
    if not os.path.lexists(back):  # their file has no name left: its bytes are put back from the descriptor
        _stage(back, theirs.read())
    return _give_back(target, back, held, staged, theirs, ours, expected, written)


def _give_back(target: Path, back: Path, held: Path, staged: Path, theirs: _Held, ours: _Held,
               expected: Expected, written: str) -> Replaced:
    """Someone wrote to the file being replaced, or renamed a new one onto the path: their file
    (at `back`) goes back to the path; ours comes off it, kept at `staged` if written to there."""
    exchanged = _swap(back, target)
    kept: list[Path] = []
    if exchanged:  # `back` names what stood at the path: ours, unless an editor saved over it meanwhile
        if not ours.is_at(back):
            kept.append(back)
        elif ours.holds(written):
            os.unlink(back)
        else:
            if back != staged:
                os.rename(back, staged)
            kept.append(staged)
    elif not ours.holds(written):  # ours has no name left: what was written to it is saved from its descriptor
        _stage(staged, ours.read())
        kept.append(staged)
    if back != held:
        kept += _drop_held(held, theirs, target, expected)
    fsync_dir(target.parent)
    return Replaced("changed", kept)


def _drop_held(held: Path, theirs: _Held, target: Path, expected: Expected) -> list[Path]:
    """The held name goes when it is a second name of the file at the path, or holds what was
    read; else it is kept (returned)."""
    if not os.path.lexists(held):
        return []
    if theirs.is_at(held) and (theirs.is_at(target) or theirs.holds(expected.sha256)):
        os.unlink(held)
        return []
    return [held]


def create_if_absent(target: Path, data: bytes, unsynced: set[Path] | None = None) -> bool:
    """Write `data` to `target` only if no file is there (False when one is: it is left), durably:
    its folder is synced now, or added to `unsynced` for the caller to sync once for many files
    (sync_folders) before anything that counts on them is written."""
    temporary = write_temporary(target, data)
    try:
        try:
            _move_to_free(temporary, target)
        except FileExistsError:
            return False
        if unsynced is None:
            fsync_dir(target.parent)
        else:
            unsynced.add(target.parent)
        return True
    finally:
        remove_temporary(temporary)


def sync_folders(unsynced: set[Path]) -> None:
    """Sync the folders create_if_absent left unsynced (each once), and forget them."""
    for folder in sorted(unsynced):
        fsync_dir(folder)
    unsynced.clear()


def remove_if_unchanged(target: Path, expected: Expected, held: Path) -> Replaced:
    """Remove `target` if it is still `expected`. It is moved to `held` (a fresh hidden name beside
    it) and checked there: a file changed since goes back, or, when a new file has taken the path
    meanwhile, stays at `held` beside it (named in `kept`)."""
    try:
        os.rename(target, held)
    except FileNotFoundError:
        return Replaced("absent")
    theirs = _hold(held)
    if theirs is None:
        return _put_back(held, target)
    with theirs:
        if theirs.matches(expected):
            os.unlink(held)
            if theirs.holds(expected.sha256):  # nothing came through a descriptor before the name went
                fsync_dir(target.parent)
                return Replaced("done")
            _stage(held, theirs.read())
        return _put_back(held, target)


def _put_back(held: Path, target: Path) -> Replaced:
    try:
        _move_to_free(held, target)
    except FileExistsError:  # a new file took the path: both stay
        return Replaced("changed", [held])
    fsync_dir(target.parent)
    return Replaced("changed")
