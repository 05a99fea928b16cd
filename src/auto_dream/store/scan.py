"""Finding the memory files of a store and reading them all."""

import os
from dataclasses import dataclass, field
from datetime import tzinfo
from operator import itemgetter
from pathlib import Path
from stat import S_ISDIR

from auto_dream.store.cache import Fingerprint, ParseCache, Parsed
from auto_dream.store.memory import Memory, Unreadable, read_memory
from auto_dream.store.paths import StoreLayout


@dataclass(frozen=True)
class MemoryScan:
    memories: list[Memory]
    unreadable: list[Unreadable]
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)  # by memory path, taken before reading
    parsed: dict[str, Parsed] = field(default_factory=dict)  # with profiles and references (dream's view)
    unchanged: set[str] = field(default_factory=set)  # paths the cache had as they are: untouched since


@dataclass(frozen=True)
class StoreScan:
    """What a dream knows of memories/ before it reads any memory the parse cache holds."""

    paths: list[str]  # every memory file, in no particular order (sorting 100,000 costs a tenth of a second)
    read: dict[str, Memory]  # the memories read from their files this time, by path
    unchanged: set[str]  # the others: the cache holds them as they are on disk
    unreadable: list[Unreadable]
    fingerprints: dict[str, Fingerprint]  # by memory path, taken before reading
    parsed: dict[str, Parsed] = field(default_factory=dict)  # of the memories read, with a cache


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


def scan_store(paths: StoreLayout, tz: tzinfo | None, archived: bool = False,
               cache: ParseCache | None = None) -> StoreScan:
    """Every memory file under memories/ (or archive/): the files the cache holds as they are
    are only named; the rest are read (and, with a cache, parsed for it: the caller decides
    whether to save it). Files that are not memories are reported."""
    folder_name = paths.memory_folder(archived)
    files, odd = walk_memory_files(paths.root / folder_name, folder_name, ordered=False,
                                   ext=paths.archive_ext if archived else ".md")
    fingerprints = dict(files)
    rows = cache.rows if cache is not None else {}
    # a comprehension and set operations, not a loop of calls: this runs for every file of the store
    unchanged = {path for path, (size, mtime_ns, _) in files
                 if (row := rows.get(path)) is not None and row[2] == size and row[3] == mtime_ns}
    read: dict[str, Memory] = {}
    parsed_by_path: dict[str, Parsed] = {}
    unreadable: list[Unreadable] = []
    for relative in sorted(fingerprints.keys() - unchanged):
        parsed = read_memory(paths.root / relative, paths.root, tz, paths.untyped)
        if isinstance(parsed, Memory):
            read[relative] = parsed
            if cache is not None:
                parsed_by_path[relative] = Parsed.of(fingerprints[relative], parsed)
                cache.put(parsed_by_path[relative])
        else:
            unreadable.append(parsed)
            del fingerprints[relative]  # parsed.path is as shown, control characters written out
    unreadable.extend(odd)
    return StoreScan(paths=list(fingerprints), read=read, unchanged=unchanged, unreadable=unreadable,
                     fingerprints=fingerprints, parsed=parsed_by_path)


def scan_memories(paths: StoreLayout, tz: tzinfo | None, archived: bool = False,
                  cache: ParseCache | None = None) -> MemoryScan:
    """Every memory under memories/ (or archive/), parsed; the files that are not memories, reported.

    With a cache, a file whose size and mtime the cache holds is not read again, and files
    that were read are added to it (the caller decides whether to save it).
    """
    scan = scan_store(paths, tz, archived, cache)
    parsed = dict(scan.parsed)
    if scan.unchanged and cache is not None:  # only a cache finds a file unchanged
        hits = cache.parsed(None if len(scan.unchanged) > len(cache.rows) // 2 else list(scan.unchanged))
        parsed.update((path, hits[path]) for path in scan.unchanged)
    memories = [scan.read[p] if p in scan.read else parsed[p].memory for p in sorted(scan.paths)]
    return MemoryScan(memories=memories, unreadable=scan.unreadable, fingerprints=scan.fingerprints,
                      parsed=parsed, unchanged=scan.unchanged)
