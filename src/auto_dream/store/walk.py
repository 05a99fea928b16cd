"""Finding a store's memory files without reading them: their paths and fingerprints. Light to
import (no YAML, no parse cache): every `recall` walks the store to see what changed."""

import os
from operator import itemgetter
from pathlib import Path
from stat import S_ISDIR

from auto_dream.store.text import Unreadable

Fingerprint = tuple[int, int, int]  # (size, mtime_ns, inode) of a memory file


def fingerprint(path: Path) -> Fingerprint | None:
    try:
        stat = path.lstat()
    except FileNotFoundError:
        return None
    return (stat.st_size, _int64(stat.st_mtime_ns), _int64(stat.st_ino))


def _int64(value: int) -> int:
    """An unsigned stat field (an inode of 2**63 or more on some file systems, the mtime of a file
    touched to the year 2446) as the signed 64-bit integer SQLite keeps: equal values stay equal."""
    return value - 2**64 if value >= 2**63 else value


def walk_memory_files(folder: Path, relative: str, ordered: bool = True,
                      ext: str = ".md") -> tuple[list[tuple[str, Fingerprint]], list[Unreadable]]:
    """(path relative to the root, fingerprint) of every `*.md` under `folder` (in path order
    if `ordered`), and what cannot be a memory, as Unreadable: a folder named like one, a name
    that is not UTF-8 (no text, JSON or MEMORY.md line can hold it; shown with its bytes
    written out). Dot-files and dot-folders are skipped. With `relative` "" (a Claude Code
    folder: its topic files lie flat in the root) only the root's own files are taken, MEMORY.md
    and the folders beside them (logs/) left out.

    os.scandir hands back each entry's lstat with its name, and, listing an open folder,
    stats each name relative to it rather than resolving the whole path again: at 100,000
    memories this walk is a few hundred milliseconds, where pathlib and relpath per file
    cost seconds.
    """
    files: list[tuple[str, Fingerprint]] = []
    odd: list[Unreadable] = []
    if not folder.is_dir():
        return files, odd
    flat = relative == ""
    pending = [(str(folder), relative)]
    while pending:
        current, prefix = pending.pop()
        prefix = prefix + "/" if prefix else ""
        try:
            fd = os.open(current, _FOLDER_FLAGS) if _SCANDIR_FD else None
        except OSError:
            continue
        try:
            with os.scandir(fd) if fd is not None else os.scandir(current) as listing:
                for entry in listing:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    if not name.isascii() and not _is_utf8(name):
                        try:
                            if name.endswith(ext) or (not flat and entry.is_dir(follow_symlinks=False)):
                                odd.append(Unreadable(prefix + name, "its name is not UTF-8 (not read)"))
                        except OSError:
                            pass
                        continue
                    if flat and name == "MEMORY.md":
                        continue
                    if name.endswith(ext):  # one lstat tells a memory file from a folder named like one
                        try:
                            stat = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if S_ISDIR(stat.st_mode):
                            if not flat:
                                pending.append((f"{current}/{name}", prefix + name))
                            odd.append(Unreadable(prefix + name, "a folder named like a memory file"))
                        else:  # the fingerprint, not the stat result: a fifth of the memory at 100,000 files
                            files.append((prefix + name, (stat.st_size, _int64(stat.st_mtime_ns),
                                                          _int64(stat.st_ino))))
                        continue
                    try:
                        if not flat and entry.is_dir(follow_symlinks=False):
                            pending.append((f"{current}/{name}", prefix + name))
                    except OSError:
                        continue
        except OSError:
            continue
        finally:
            if fd is not None:
                os.close(fd)
    if ordered:
        files.sort(key=itemgetter(0))  # strings compared as strings: twice as fast as the pairs
    odd.sort(key=lambda bad: bad.path)
    return files, odd


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode turned a byte that is not UTF-8 into a lone surrogate
        return False
    return True


_SCANDIR_FD = os.scandir in os.supports_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
