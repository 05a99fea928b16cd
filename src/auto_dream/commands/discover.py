"""`discover`: the memory folders under a path and the user's own, with their layout and size."""

from pathlib import Path

from auto_dream.errors import InputError
from auto_dream.store.discovery import Found, discover


def discover_folders(path: Path, home: Path | None) -> list[Found]:
    """Every memory folder under `path` and in `home` (store/discovery.py); reads only."""
    if not path.is_dir():
        raise InputError(f"{path} is not a folder" if path.exists() else f"no folder at {path}")
    return discover(path, home)
