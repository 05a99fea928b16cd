"""File mechanics, in one place: reading a file that may be hostile, writing one atomically.

Reading: a file is opened only when it is a regular file, never waiting on a FIFO (O_NONBLOCK),
never taking a terminal (O_NOCTTY), and unless the caller follows links, never through a
symbolic link (looked at first, so a device is not even opened; O_NOFOLLOW for one swapped in
since). Writing: the bytes go to a temporary file beside the target, are flushed to disk,
renamed into place, and the folder is flushed too, so a crash leaves the old file or the new
one, never half of either. Everything else of the store builds on these; this module imports
nothing of the store (an import-linter contract).
"""

import errno
import os
import stat
from pathlib import Path

from auto_dream.errors import StoreError

DIR_MODE = 0o700
FILE_MODE = 0o600
Fingerprint = tuple[int, int, int]  # (size, mtime_ns, inode) of a memory file: it changes when the file does


def fingerprint(path: Path) -> Fingerprint | None:
    """The file's fingerprint now (its link's, for a link), or None when it is gone."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return None
    return fingerprint_of(status)


def fingerprint_of(status: os.stat_result) -> Fingerprint:
    """The fingerprint of a file whose status is at hand (an open file's fstat)."""
    return (status.st_size, int64(status.st_mtime_ns), int64(status.st_ino))


def int64(value: int) -> int:
    """An unsigned stat field (an inode of 2**63 or more on some file systems, the mtime of a file
    touched to the year 2446) as the signed 64-bit integer SQLite keeps: equal values stay equal."""
    return value - 2**64 if value >= 2**63 else value


class NotRegular(Exception):
    """Something other than a regular file stands at the path: `kind` says what (kind_of)."""

    def __init__(self, path: Path, kind: str):
        super().__init__(f"{path} is {kind}")
        self.path, self.kind = path, kind


class TooLarge(Exception):
    """The file holds more than the reader takes: `size` bytes (at least), `limit` at most."""

    def __init__(self, path: Path, size: int, limit: int):
        super().__init__(f"{path} is {size:,} bytes (the limit is {limit:,})")
        self.path, self.size, self.limit = path, size, limit


# ---------------------------------------------------------------- looking


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is ("a FIFO", "a device"…), None for a regular one."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):  # it may lead anywhere, a secret included
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


def kind_at(path: Path) -> str | None:
    """kind_of what stands at `path`, not following a link; None when it is a regular file or
    nothing is there. OSError when it cannot be looked at."""
    try:
        return kind_of(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


def refuse_link(path: Path, where: str, *, folder: bool | None = None) -> None:
    """StoreError when `path` is a symlink, or (`folder` True/False) not a folder/regular file;
    nothing there is fine. `where` names it in the message. Nothing is written through a link out
    of the store, nor read from a FIFO named like its files."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise StoreError(f"cannot look at {path}: {error.strerror}") from None
    if stat.S_ISLNK(mode):
        raise StoreError(f"{where} is a symlink (to {os.readlink(path)!r}): auto-dream writes only inside its "
                         "store; put the real " + ("folder" if folder is not False else "file") + " there")
    if folder is True and not stat.S_ISDIR(mode):
        raise StoreError(f"{where} should be a folder, and is not")
    if folder is False and not stat.S_ISREG(mode):
        raise StoreError(f"{where} is not a regular file (a folder, a FIFO or a device): move it away")


# ---------------------------------------------------------------- reading


def open_regular(path: Path, *, follow: bool = False) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file at `path`, opened for reading, and its status.

    NotRegular when something else stands there: it is looked at before it is opened (a device
    is not opened at all) and again through the descriptor (something swapped in since); unless
    `follow`, a symbolic link is such a thing. OSError as the system gives it otherwise
    (FileNotFoundError when nothing is there)."""
    kind = kind_of((os.stat if follow else os.lstat)(path).st_mode)
    if kind is not None:
        raise NotRegular(path, kind)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:  # it became a link since it was looked at
            raise NotRegular(path, "a symbolic link") from None
        raise
    try:
        status = os.fstat(fd)
        kind = kind_of(status.st_mode)
        if kind is not None:
            raise NotRegular(path, kind)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def read_file(path: Path, max_bytes: int | None = None, *, follow: bool = False,
              shared_lock: bool = False) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` (open_regular) and its status as it was read.
    TooLarge when it holds more than `max_bytes` (its size says so before anything is read);
    `shared_lock` holds flock's shared lock while reading, so a locked writer's half-written
    append is never seen. NotRegular and OSError as open_regular raises them."""
    fd, status = open_regular(path, follow=follow)
    try:
        if max_bytes is not None and status.st_size > max_bytes:
            raise TooLarge(path, status.st_size, max_bytes)
        if shared_lock:
            import fcntl  # the day's log, whose appends take flock's lock, alone asks for it

            fcntl.flock(fd, fcntl.LOCK_SH)
        data = _read_up_to(fd, status.st_size, -1 if max_bytes is None else max_bytes + 1)
    finally:
        os.close(fd)
    if max_bytes is not None and len(data) > max_bytes:  # it grew since its size was looked at
        raise TooLarge(path, len(data), max_bytes)
    return data, status


def read_regular(path: Path, limit: int = -1, *, follow: bool = False) -> bytes | None:
    """A regular file's bytes (its first `limit`), None when there is none (with `follow`, nor
    the folder it would be in). Never through a symbolic link unless `follow` (an agent's settings: dotfiles
    keep them in a repository), never waiting on a FIFO: either, or a file that cannot be read,
    is a StoreError of one line."""
    found = read_regular_status(path, limit, follow=follow)
    return None if found is None else found[0]


def read_regular_status(path: Path, limit: int = -1, kind: str = "a regular file", *, follow: bool = False,
                        ) -> tuple[bytes, os.stat_result] | None:
    """read_regular, with the file's status as it was read (its mtime, its size); a file that is
    not regular is refused as not being `kind`."""
    try:
        fd, status = open_regular(path, follow=follow)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        if follow:  # an agent's settings where a file stands in a folder's place: there are none
            return None
        raise StoreError(f"cannot read {path}: {os.strerror(errno.ENOTDIR)}") from None
    except NotRegular as refused:
        if refused.kind == "a symbolic link":
            raise StoreError(f"{path} is a symbolic link: auto-dream does not follow it") from None
        raise StoreError(f"{path} is not {kind}: move it away" if follow else f"{path} is not {kind}") from None
    except OSError as error:
        raise StoreError(f"cannot read {path}: {error.strerror}") from None
    try:
        return _read_up_to(fd, status.st_size, limit), status
    finally:
        os.close(fd)


def _read_up_to(fd: int, size: int, limit: int) -> bytes:
    """The bytes of `fd` to its end, or its first `limit` (-1: all). `size`, the file's size when
    it was opened, sizes the first read: a buffer of the limit's size is never made for a small
    file (a memory of 300 bytes read under a limit of a million)."""
    chunks: list[bytes] = []
    total, want = 0, size + 1
    while limit < 0 or total < limit:
        chunk = os.read(fd, want if limit < 0 else min(want, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = 1 << 16  # it grew since: the rest in blocks
    return b"".join(chunks)


# ---------------------------------------------------------------- writing


def make_dirs(path: Path) -> None:
    """Create `path` and its missing parents, owner-only."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise


def write_atomic(path: Path, content: bytes) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename it into place. A file
    already there keeps its mode (a person's 0644 stays 0644); a new one is owner-only."""
    temporary = write_temporary(path, content, mode_of(path))
    try:
        os.replace(temporary, path)
    except BaseException:
        remove_temporary(temporary)
        raise
    fsync_dir(path.parent)


def mode_of(path: Path) -> int:
    """The permission bits of the regular file at `path`, FILE_MODE when there is none."""
    try:
        status = os.lstat(path)
    except OSError:
        return FILE_MODE
    return stat.S_IMODE(status.st_mode) if stat.S_ISREG(status.st_mode) else FILE_MODE


def write_temporary(path: Path, content: bytes, mode: int = FILE_MODE) -> str:
    """`content` in a new file beside `path` (`.name.XXXXXXXX.tmp`), on disk, with `mode`
    (owner-only unless given): its path."""
    import tempfile  # not on `append`'s path, which writes nothing atomically

    make_dirs(path.parent)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        remove_temporary(temporary)
        raise
    return temporary


def remove_temporary(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass


def fsync_dir(folder: Path) -> None:
    """Flush a folder to disk: a rename or a new name in it survives a crash."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
