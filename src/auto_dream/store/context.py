"""A store opened for a command: its paths, its config and its timezone."""

from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path

from auto_dream.store.config import Config, load_config
from auto_dream.store.daylog import load_timezone
from auto_dream.store.paths import StoreLayout, ensure_store, open_store


@dataclass(frozen=True)
class StoreContext:
    paths: StoreLayout
    config: Config
    tz: tzinfo | None
    # The user's home and Claude Code's config folder (CLAUDE_CONFIG_DIR), as the interface
    # found them: where ~/.claude.json names the project behind a Claude Code folder. None: unknown.
    home: Path | None = None
    claude_config_dir: Path | None = None


def open_context(root: Path, create: bool = False, home: Path | None = None,
                 claude_config_dir: Path | None = None) -> StoreContext:
    """The store at `root` with its config; `create` makes a missing store (for writers)."""
    paths = ensure_store(root) if create else open_store(root)
    config = load_config(paths.config)
    return StoreContext(paths=paths, config=config, tz=load_timezone(config.timezone), home=home,
                        claude_config_dir=claude_config_dir)
