"""`init`: a store with its folders, a commented config.toml and an empty MEMORY.md."""

from dataclasses import dataclass
from pathlib import Path

from auto_dream.store.context import open_context
from auto_dream.store.files import write_atomic
from auto_dream.store.memory_md import rebuild_index
from auto_dream.store.paths import STORE_DIR_NAME, ensure_store, layout_at
from auto_dream.store.templates import load_template


@dataclass(frozen=True)
class Initialized:
    root: Path
    created: bool  # False: it was a store already (what was missing in it is added, nothing replaced)


def init_store(root: Path) -> Initialized:
    """Create the store at `root`, or complete it: a config.toml or MEMORY.md already there is kept."""
    existed = root.is_dir() and (layout_at(root).layout != "claude-code" or (root / STORE_DIR_NAME).is_dir())
    paths = ensure_store(root)
    if not paths.config.exists():
        write_atomic(paths.config, load_template("config.toml").encode("utf-8"))
    if not paths.index.exists():
        rebuild_index(open_context(root))
    return Initialized(root, created=not existed)
