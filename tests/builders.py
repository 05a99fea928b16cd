"""Builders the tests share: a memory file's text, a memory written into a store, an entry in
the day's log, the live memories a store holds. A test module keeps only its own defaults (its
NOW, its body) in a line that calls these."""

from datetime import datetime
from pathlib import Path

from auto_dream.store.daylog import Entry, append_entry
from auto_dream.store.memory import Memory
from auto_dream.store.paths import StorePaths
from auto_dream.store.scan import scan_memories
from conftest import write_memory_file


def memory_text(name: str, memory_type: str = "project", mtime: datetime | None = None, body: str = "",
                description: str | None = None, extra: str = "") -> str:
    """A memory file as auto-dream writes one: frontmatter with the name, the description (the
    name unless given; "" leaves the key out), the type, the mtime (to the second; None leaves
    the key out) and `extra` (whole lines), then the body."""
    described = name if description is None else description
    lines = [f"name: {name}\n", f"description: {described}\n" if described else "", f"type: {memory_type}\n",
             f"mtime: {mtime.isoformat(timespec='seconds')}\n" if mtime is not None else "", extra]
    return f"---\n{''.join(lines)}---\n{body}\n"


def write_memory(root: Path, relative: str, name: str, body: str, memory_type: str = "project",
                 mtime: datetime | None = None, description: str | None = None, extra: str = "") -> Path:
    """memory_text's memory at `root/relative`, its folders made."""
    return write_memory_file(root, relative, memory_text(name, memory_type, mtime, body, description, extra))


def add_entry(root: Path, text: str, memory_type: str | None, at: datetime) -> None:
    """An entry in the store's log at `at` (the store's wall clock: a zone is dropped), as `append` adds one."""
    append_entry(StorePaths(root), Entry(at.replace(tzinfo=None), text, memory_type))


def live_memories(root: Path) -> dict[str, Memory]:
    """The live memories of the store at `root`, by path."""
    return {memory.path: memory for memory in scan_memories(StorePaths(root), None).memories}
