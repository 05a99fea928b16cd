"""The `append` command, shared by the Typer CLI and the fast path in __main__.

Nothing heavy is imported here: an agent calls `append` many times a session.
"""

import sys
from datetime import datetime
from pathlib import Path

from auto_dream.errors import InputError, StoreError
from auto_dream.store.config import load_config
from auto_dream.store.daylog import Entry, append_entry, load_timezone, local_now, make_entry, parse_when
from auto_dream.store.paths import StorePaths, ensure_store, resolve_root


def append_text(root: Path, text: str, entry_type: str | None, at: str | None,
                now: datetime | None = None) -> tuple[Entry, str]:
    """Validate and append one entry; returns it and its log path relative to the root."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")
    config = load_config(StorePaths(root).config)
    tz = load_timezone(config.timezone)
    when = parse_when(at, tz, now) if at is not None else local_now(tz, now)
    entry = make_entry(text, entry_type, when)  # bad input stops here, before anything is created
    paths = ensure_store(root)
    log_path = append_entry(paths, entry)
    return entry, paths.relative(log_path)


def join_text_arguments(words: list[str], read_stdin) -> str:
    """TEXT… joined by spaces; a lone `-` reads the text from standard input."""
    if words == ["-"]:
        return read_stdin()
    return " ".join(words)


def read_stdin() -> str:
    """The text of standard input (`-`); a closed one (`<&-`) gives none to read."""
    if sys.stdin is None:
        raise InputError("nothing to append: standard input is closed")
    return sys.stdin.read()


def store_root(flag: str | None, env: str | None, cwd: Path) -> Path:
    """paths.resolve_root, asking for the home folder only when nothing nearer names the store:
    with --root or AUTO_DREAM_ROOT, or inside a store's folder, no HOME is needed."""
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME, and no passwd entry for this uid
        home = None
    if home is None and not (flag or env):
        # with cwd in the home folder's place, a store found nowhere comes back as cwd/.auto-dream
        found = resolve_root(None, None, cwd, cwd)
        if not found.is_dir():
            raise InputError("no store here and no home folder for ~/.auto-dream (HOME is not set): "
                             "give the store with --root PATH or AUTO_DREAM_ROOT")
        return found
    try:
        return resolve_root(flag, env, cwd, home or cwd)  # with flag or env, home is not used
    except RuntimeError:  # `~` in --root or AUTO_DREAM_ROOT, and no home folder to expand it to
        raise InputError(f"cannot expand '~' in the store's path {flag or env!r}: there is no home "
                         "folder (HOME is not set)") from None
