"""Finding a store's memory files without reading them: their paths and fingerprints. Light to
import (no YAML, no parse cache): every `recall` walks the store to see what changed."""

import os
from operator import itemgetter
from pathlib import Path
from stat import S_ISDIR, S_IWUSR
from typing import Any

from auto_dream.store.files import Fingerprint as Fingerprint  # re-exported: a walk gives them
from auto_dream.store.files import fingerprint as fingerprint
from auto_dream.store.files import fingerprint_of as fingerprint_of
from auto_dream.store.files import int64 as _int64
from auto_dream.store.text import Unreadable

FolderStamp = tuple[int, int]  # (mtime_ns, inode) of a folder: it changes when a name in it is added,
ABSENT: FolderStamp = (-1, -1)  # removed or renamed (not when a file in it is written in place)


def folder_stamp(folder: Path) -> FolderStamp:
    """The stamp of `folder` now, as a walk takes it (a link to a folder followed, as the walk
    follows one given as its start); ABSENT when it is missing or not a folder."""
    try:
        stat = os.stat(folder)
    except OSError:
        return ABSENT
    return (_int64(stat.st_mtime_ns), _int64(stat.st_ino)) if S_ISDIR(stat.st_mode) else ABSENT


def walk_memory_files(folder: Path, relative: str, *, ordered: bool = True, ext: str = ".md",
                      stamps: dict[str, FolderStamp] | None = None, locked: list[str] | None = None,
                      ) -> tuple[list[tuple[str, Fingerprint]], list[Unreadable]]:
    """(path relative to the root, fingerprint) of every `*.md` under `folder` (in path order
    if `ordered`), and what cannot be a memory, as Unreadable: a folder named like one, a name
    that is not UTF-8 (no text, JSON or MEMORY.md line can hold it; shown with its bytes
    written out). Dot-files and dot-folders are skipped. With `relative` "" (a Claude Code
    folder: its topic files lie flat in the root) only the root's own files are taken, MEMORY.md
    and the folders beside them (logs/) left out. `stamps`, when given, gets the stamp of every
    folder walked (`folder` itself ABSENT when it is not there), each taken before it was listed.
    `locked`, when given, gets the path of every file its owner may not write (chmod 0444), from
    the stat the fingerprint is taken from.

    os.scandir hands back each entry's type with its name, and, listing an open folder,
    stats each name relative to it rather than resolving the whole path again: at 100,000
    memories this walk is a few hundred milliseconds, where pathlib and relpath per file
    cost seconds.
    """
    files: list[tuple[str, Fingerprint]] = []
    odd: list[Unreadable] = []
    pending = [(str(folder), relative)]
    if stamps is not None:
        stamps[relative] = ABSENT
    while pending:
        current, prefix = pending.pop()
        listed = list_folder(current, prefix, flat=relative == "", ext=ext, odd=odd, fingerprints=True,
                             locked=locked)
        if listed is None:
            continue
        found, subfolders, stamp = listed
        if stamps is not None:
            stamps[prefix] = stamp
        pending.extend(subfolders)
        files.extend(found)
    if ordered:
        files.sort(key=itemgetter(0))  # strings compared as strings: twice as fast as the pairs
    odd.sort(key=lambda bad: bad.path)
    return files, odd


def list_folder(current: str, relative: str, *, flat: bool, ext: str, odd: list[Unreadable], fingerprints: bool,
                locked: list[str] | None = None,
                ) -> tuple[list[tuple[str, Any]], list[tuple[str, str]], FolderStamp] | None:
    """One folder of a walk: (its memory files as (path relative to the root, fingerprint), or
    without `fingerprints` as (path, inode) for no call per file; the subfolders to walk as
    (path, path relative to the root); the folder's stamp, taken before the listing), or None
    when it cannot be listed. What cannot be a memory goes to `odd`. `flat`: a Claude Code
    folder's root, whose subfolders hold no memories. `locked`: as walk_memory_files's (with `fingerprints`).

    An entry's type and inode come with its name (d_type, d_ino), so on Linux and macOS only
    a fingerprint costs a call per file; and a stat relative to the open folder does not
    resolve the whole path again."""
    prefix = relative + "/" if relative else ""
    try:
        fd = os.open(current, _FOLDER_FLAGS) if _SCANDIR_FD else None
    except OSError:
        return None
    files: list[tuple[str, Any]] = []
    subfolders: list[tuple[str, str]] = []
    try:
        stat = os.fstat(fd) if fd is not None else os.lstat(current)
        stamp = (_int64(stat.st_mtime_ns), _int64(stat.st_ino))
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
                if name.endswith(ext):  # a memory file, or a folder named like one
                    try:
                        if fingerprints:  # one lstat tells which, and is the fingerprint
                            stat = entry.stat(follow_symlinks=False)
                            if not S_ISDIR(stat.st_mode):
                                # the fingerprint, not the stat result: a fifth of the memory at 100,000 files
                                files.append((prefix + name, (stat.st_size, _int64(stat.st_mtime_ns),
                                                              _int64(stat.st_ino))))
                                if locked is not None and not stat.st_mode & S_IWUSR:
                                    locked.append(prefix + name)
                                continue
                        elif not entry.is_dir(follow_symlinks=False):
                            inode = entry.inode()
                            files.append((prefix + name, inode if inode < 2**63 else inode - 2**64))  # _int64
                            continue
                    except OSError:
                        continue
                    odd.append(Unreadable(prefix + name, "a folder named like a memory file"))
                    if not flat:
                        subfolders.append((f"{current}/{name}", prefix + name))
                    continue
                try:
                    if not flat and entry.is_dir(follow_symlinks=False):
                        subfolders.append((f"{current}/{name}", prefix + name))
                except OSError:
                    continue
    except OSError:
        return None
    finally:
        if fd is not None:
            os.close(fd)
    return files, subfolders, stamp


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode turned a byte that is not UTF-8 into a lone surrogate
        return False
    return True


_SCANDIR_FD = os.scandir in os.supports_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
