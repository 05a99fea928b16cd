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


def fingerprint(path: Path) -> Fingerprint | None:
    try:
        stat = path.lstat()
    except FileNotFoundError:
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino)


def memory_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(`*.md` files, folders named like one) under `folder`, in a stable order; dot-files skipped."""
    files, odd_folders = [], []
    if not folder.is_dir():
        return files, odd_folders
    for current, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(current)
        for d in dirs:
            if d.endswith(".md"):
                odd_folders.append(here / d)
        files.extend(here / n for n in sorted(names) if n.endswith(".md") and not n.startswith("."))
    return files, odd_folders


def scan_memories(paths: StorePaths, tz: tzinfo | None, archived: bool = False,
                  cache: ParseCache | None = None) -> MemoryScan:
    """Every memory under memories/ (or archive/), parsed; the files that are not memories, reported.

    With a cache, a file whose fingerprint the cache holds is not read again, and files
    that were read are added to it (the caller decides whether to save it).
    """
    folder = paths.archive if archived else paths.memories
    files, odd_folders = memory_files(folder)
    scan = MemoryScan(memories=[], unreadable=[])
    for path in files:
        seen = fingerprint(path)
        relative = paths.relative(path)
        hit = cache.get(relative, seen) if cache is not None else None
        if hit is not None:
            scan.memories.append(hit.memory)
            scan.parsed[relative] = hit
            scan.unchanged.add(relative)
            scan.fingerprints[relative] = seen
            continue
        parsed = read_memory(path, paths.root, tz)
        if isinstance(parsed, Memory):
            scan.memories.append(parsed)
            if seen is not None:
                scan.fingerprints[relative] = seen
                if cache is not None:
                    scan.parsed[relative] = Parsed.of(seen, parsed)
                    cache.put(scan.parsed[relative])
        else:
            scan.unreadable.append(parsed)
    scan.unreadable.extend(Unreadable(paths.relative(p), "a folder named like a memory file") for p in odd_folders)
    return scan
