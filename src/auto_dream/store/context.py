"""A store opened for a command: its paths, its config and its timezone."""

from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from auto_dream.store.config import Config, load_config
from auto_dream.store.daylog import load_timezone
from auto_dream.store.paths import StoreLayout, ensure_store, open_store

if TYPE_CHECKING:  # a type only: `recall` opens a context, and need not import what reads memory files
    from auto_dream.store.parsed import Parsed


@dataclass
class ReadMemo:
    """The memory files a long-lived caller (a library Store, the MCP server) has read, by path,
    each with its fingerprint, and how they were read (the timezone, the type of an untyped file)."""

    files: "dict[str, Parsed]" = field(default_factory=dict)
    read_as: tuple[object, object] | None = None


@dataclass(frozen=True)
class StoreContext:
    paths: StoreLayout
    config: Config
    tz: tzinfo | None
    # The user's home and Claude Code's config folder (CLAUDE_CONFIG_DIR), as the interface
    # found them: where ~/.claude.json names the project behind a Claude Code folder. None: unknown.
    home: Path | None = None
    claude_config_dir: Path | None = None
    # The memory files a long-lived caller (a library Store, the MCP server) has read, by path,
    # each with its fingerprint: a file whose size, mtime and inode are as they were is not read
    # again (store.scan.scan_store). Empty for a one-shot command.
    read_memo: ReadMemo = field(default_factory=ReadMemo, compare=False, repr=False)


def open_context(root: Path, *, create: bool = False, home: Path | None = None,
                 claude_config_dir: Path | None = None, read_memo: ReadMemo | None = None) -> StoreContext:
    """The store at `root` with its config; `create` makes a missing store (for writers);
    `read_memo` the files a long-lived caller read before (StoreContext.read_memo)."""
    paths = ensure_store(root) if create else open_store(root)
    config = load_config(paths.config)
    return StoreContext(paths=paths, config=config, tz=load_timezone(config.timezone), home=home,
                        claude_config_dir=claude_config_dir, read_memo=ReadMemo() if read_memo is None else read_memo)
