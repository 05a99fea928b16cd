"""Finding the memory files of a store and reading them all."""

import os
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path

from auto_dream.cache import Fingerprint, ParseCache, Parsed
from auto_dream.memory import Memory, Unreadable, read_memory
from auto_dream.paths import StorePaths




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

    paths: list[str]  # every memory file, in path order
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
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino)


def walk_memory_files(folder: Path, relative: str):
    """(path relative to the root, fingerprint) of every `*.md` under `folder`, in path order,
    and the folders named like one. Dot-files and dot-folders are skipped.

    os.scandir hands back each entry's lstat with its name: at 100,000 memories this walk
    is a few hundred milliseconds, where pathlib and relpath per file cost seconds.
    """
    files, odd_folders = [], []
    if not folder.is_dir():
        return files, odd_folders
    pending = [(str(folder), relative)]
    while pending:
        current, prefix = pending.pop()
        prefix += "/"
        try:
            listing = os.scandir(current)
        except OSError:
            continue
        with listing:
            for entry in listing:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    is_folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_folder:
                    pending.append((entry.path, prefix + name))
                    if name.endswith(".md"):
                        odd_folders.append(prefix + name)
                elif name.endswith(".md"):
                    try:
                        stat = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    # the fingerprint, not the stat result: a fifth of the memory at 100,000 files
                    files.append((prefix + name, (stat.st_size, stat.st_mtime_ns, stat.st_ino)))
    files.sort(key=_first)
    odd_folders.sort()
    return files, odd_folders


def _first(pair):
    return pair[0]


def scan_store(paths: StorePaths, tz: tzinfo | None, archived: bool = False,
               cache: ParseCache | None = None) -> StoreScan:
    """Every memory file under memories/ (or archive/): the files the cache holds as they are
    are only named; the rest are read (and, with a cache, parsed for it: the caller decides
    whether to save it). Files that are not memories are reported."""
    folder_name = "archive" if archived else "memories"
    files, odd_folders = walk_memory_files(paths.root / folder_name, folder_name)
    scan = StoreScan(paths=[], read={}, unchanged=set(), unreadable=[], fingerprints={})
    in_order, read, parsed_by_path, unchanged, fingerprints = \
        scan.paths, scan.read, scan.parsed, scan.unchanged, scan.fingerprints
    is_current = cache.is_current if cache is not None else None
    for relative, seen in files:
        if is_current is not None and is_current(relative, seen):
            in_order.append(relative)
            unchanged.add(relative)
            fingerprints[relative] = seen
            continue
        parsed = read_memory(paths.root / relative, paths.root, tz)
        if isinstance(parsed, Memory):
            in_order.append(relative)
            read[relative] = parsed
            fingerprints[relative] = seen
            if cache is not None:
                parsed_by_path[relative] = Parsed.of(seen, parsed)
                cache.put(parsed_by_path[relative])
        else:
            scan.unreadable.append(parsed)
    scan.unreadable.extend(Unreadable(p, "a folder named like a memory file") for p in odd_folders)
    return scan


def scan_memories(paths: StorePaths, tz: tzinfo | None, archived: bool = False,
                  cache: ParseCache | None = None) -> MemoryScan:
    """Every memory under memories/ (or archive/), parsed; the files that are not memories, reported.

    With a cache, a file whose size and mtime the cache holds is not read again, and files
    that were read are added to it (the caller decides whether to save it).
    """
    scan = scan_store(paths, tz, archived, cache)
    parsed = dict(scan.parsed)
    if scan.unchanged:
        hits = cache.parsed(None if len(scan.unchanged) > len(cache.rows) // 2 else list(scan.unchanged))
        parsed.update((path, hits[path]) for path in scan.unchanged)
    memories = [scan.read[p] if p in scan.read else parsed[p].memory for p in scan.paths]
    return MemoryScan(memories=memories, unreadable=scan.unreadable, fingerprints=scan.fingerprints,
                      parsed=parsed, unchanged=scan.unchanged)
