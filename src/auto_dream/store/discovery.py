"""Finding memory folders: which layout a folder has, and every memory folder under a path and
in the user's home. Reads only: nothing is written, no link is followed.

The rule (detect_layout), first match wins:
- "auto-dream": the folder has real `memories/` and `logs/` folders (a store as `init` makes it,
  whatever its name; `.auto-dream` is the usual one).
- "claude-code": the folder is where Claude Code keeps a memory folder — `.claude/memory/`,
  `.claude/projects/<project>/memory/`, `.claude/agent-memory/<agent>/` or
  `.claude/agent-memory-local/<agent>/` (paths.py cites Claude Code's documentation) — and holds
  a MEMORY.md or a markdown topic file.
- anything else: None (not listed).
"""

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from auto_dream.store.paths import (
    STORE_DIR_NAME,
    Layout,
    StorePaths,
    claude_topic_files,
    is_claude_code_folder,
    is_native_store,
)
from auto_dream.store.scan import walk_memory_files

MAX_DEPTH = 12  # folders deeper than this below PATH are not looked into: a bounded walk of any tree
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages"})  # besides dot-folders
KEPT_DOT_FOLDERS = frozenset({".claude", STORE_DIR_NAME})  # the only dot-folders walked into


@dataclass(frozen=True)
class Found:
    """A memory folder: its path (absolute), layout, and memory count — for auto-dream, the memory
    files under memories/; for Claude Code, the topic files beside MEMORY.md (MEMORY.md not counted)."""

    path: Path
    layout: Layout
    memories: int

    @property
    def index_only(self) -> bool:
        """A Claude Code folder that keeps everything inside MEMORY.md, with no topic file."""
        return self.layout == "claude-code" and self.memories == 0

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "layout": self.layout, "memories": self.memories}


def detect_layout(folder: Path) -> Layout | None:
    """The layout of `folder` by the rule in this module's docstring, or None."""
    if is_native_store(folder):
        return "auto-dream"
    if is_claude_code_folder(folder):
        return "claude-code"
    return None


def count_memories(folder: Path, layout: Layout) -> int:
    if layout == "auto-dream":
        memories = StorePaths(folder).memory_folder()
        files, _ = walk_memory_files(folder / memories, memories, ordered=False)  # the files `list` reads
        return len(files)
    return len(claude_topic_files(folder))


def discover(path: Path, home: Path | None) -> list[Found]:
    """Every memory folder under `path` (itself included), then the user's own in `home` (None:
    none): ~/.claude/projects/*/memory, ~/.claude/agent-memory/*, ~/.auto-dream. Sorted by path,
    each folder once. The walk skips dot-folders other than .claude and .auto-dream, SKIPPED_FOLDERS,
    links and folders it may not read; it goes MAX_DEPTH folders down at most, and does not look
    inside a memory folder it found."""
    candidates = list(_walk(Path(os.path.abspath(path))))
    if home is not None:
        candidates.extend(_home_folders(Path(os.path.abspath(home))))
    found: dict[tuple[int, int], Found] = {}  # by device and inode: a folder reached twice is listed once
    for folder, layout in candidates:
        key = _identity(folder)
        if key is not None and key not in found:
            found[key] = Found(folder, layout, count_memories(folder, layout))
    return sorted(found.values(), key=lambda item: str(item.path))


def _walk(top: Path) -> Iterator[tuple[Path, Layout]]:
    pending = [(top, 0)]
    while pending:
        folder, depth = pending.pop()
        layout = detect_layout(folder)
        if layout is not None:
            yield folder, layout
            continue
        if depth < MAX_DEPTH:
            walked = [name for name in _subfolder_names(folder)
                      if name not in SKIPPED_FOLDERS and (not name.startswith(".") or name in KEPT_DOT_FOLDERS)]
            pending.extend((folder / name, depth + 1) for name in reversed(walked))


def _home_folders(home: Path) -> Iterator[tuple[Path, Layout]]:
    claude = home / ".claude"
    folders = [claude / "projects" / name / "memory" for name in _subfolder_names(claude / "projects")]
    folders.extend(claude / "agent-memory" / name for name in _subfolder_names(claude / "agent-memory"))
    folders.append(home / STORE_DIR_NAME)
    for folder in folders:
        layout = detect_layout(folder)
        if layout is not None:
            yield folder, layout


def _subfolder_names(folder: Path) -> list[str]:
    """The names of the real folders in `folder` (links not followed), sorted; none if it cannot be read."""
    names = []
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        names.append(entry.name)
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(names)


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(folder)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
