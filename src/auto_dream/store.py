"""Finding the memory files of a store and reading them all."""

import os
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path

from auto_dream.memory import Memory, Unreadable, read_memory
from auto_dream.paths import StorePaths


Fingerprint = tuple[int, int, int]  # size, mtime in ns, inode: what changes when a file is rewritten


@dataclass(frozen=True)
class MemoryScan:
    memories: list[Memory]
    unreadable: list[Unreadable]
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)  # by memory path, taken before reading


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


def scan_memories(paths: StorePaths, tz: tzinfo | None, archived: bool = False) -> MemoryScan:
    """Every memory under memories/ (or archive/), parsed; the files that are not memories, reported."""
    folder = paths.archive if archived else paths.memories
    files, odd_folders = memory_files(folder)
    memories, unreadable, fingerprints = [], [], {}
    for path in files:
        seen = fingerprint(path)
        parsed = read_memory(path, paths.root, tz)
        (memories if isinstance(parsed, Memory) else unreadable).append(parsed)
        if seen is not None:
            fingerprints[parsed.path] = seen
    unreadable.extend(Unreadable(paths.relative(p), "a folder named like a memory file") for p in odd_folders)
    return MemoryScan(memories=memories, unreadable=unreadable, fingerprints=fingerprints)
