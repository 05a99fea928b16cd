"""`append`: one entry added to the day's log, shared by the Typer CLI, the fast path in
__main__ and the library.

Nothing heavy is imported here: an agent calls `append` many times a session.
"""

from datetime import datetime
from pathlib import Path

from auto_dream.errors import StoreError
from auto_dream.store.config import load_config
from auto_dream.store.daylog import Entry, append_entry, load_timezone, local_now, make_entry, parse_when
from auto_dream.store.paths import ensure_store, layout_at


def append_text(root: Path, text: str, entry_type: str | None, at: str | None,
                now: datetime | None = None) -> tuple[Entry, str]:
    """Validate and append one entry; returns it and its log path relative to the root."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")
    config = load_config(layout_at(root).config)
    tz = load_timezone(config.timezone)
    when = parse_when(at, tz, now) if at is not None else local_now(tz, now)
    entry = make_entry(text, entry_type, when)  # bad input stops here, before anything is created
    paths = ensure_store(root)
    log_path = append_entry(paths, entry)
    return entry, paths.relative(log_path)
