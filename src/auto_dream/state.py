"""dream's bookkeeping under .state/: which entries are distilled, when the last dream ran."""

import json
from datetime import datetime
from pathlib import Path

from auto_dream.paths import StorePaths

DISTILLED_FILE = "distilled.txt"
LAST_DREAM_FILE = "last_dream.json"


def distilled_path(paths: StorePaths) -> Path:
    return paths.state / DISTILLED_FILE


def read_distilled_ids(paths: StorePaths) -> set[str]:
    """Ids of every entry a dream has distilled (one per line; a torn last line is ignored)."""
    try:
        text = distilled_path(paths).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return set()
    return {line.strip() for line in text.split("\n") if len(line.strip()) == 12}


def read_last_dream(paths: StorePaths) -> datetime | None:
    """When the last dream that changed or checked the store finished, or None."""
    try:
        data = json.loads((paths.state / LAST_DREAM_FILE).read_text(encoding="utf-8"))
        return datetime.fromisoformat(data["finished"])
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None
