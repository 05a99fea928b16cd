"""The store's config.toml (docs/store.md, "config.toml"): defaults, reading, validation."""

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Literal

from auto_dream.errors import StoreError

# What a dream does with what it retires: apply it, or propose it (list it, change nothing)
Mode = Literal["apply", "propose"]
LlmChoice = Literal["auto", "on", "off"]


@dataclass(frozen=True)
class Config:
    timezone: str | None = None  # IANA name; None means the system's
    mode: Mode = "apply"
    llm: LlmChoice = "auto"
    model: str = "claude-sonnet-5-5"  # a current Sonnet in the SDK's model list, not deprecated
    max_llm_calls: int = 20
    llm_timeout: float = 60.0  # seconds per call; the SDK retries twice on 429, 5xx and timeouts
    llm_batch_entries: int = 40  # entries per call
    budget: int = 25
    index_max_lines: int = 200
    index_max_bytes: int = 25_000
    index_line_chars: int = 150
    guard_days: int = 14
    decay_days: int = 30  # neither looked up nor changed for this long: listed last in MEMORY.md (0: never)
    duplicate_overlap: float = 0.6
    contradiction_overlap: float = 0.4
    due_hours: float = 24.0
    due_entries: int = 5
    repo: str | None = None


def _replaced(config: Config, changes: Mapping[str, object]) -> Config:
    # mypy checks a ** mapping's value type against every field's; these values are checked
    # where they come from (_check_value, or a flag typed as its setting), one by one
    return replace(config, **changes)  # type: ignore[arg-type]


_CHOICES = {"mode": ("apply", "propose"), "llm": ("auto", "on", "off")}
_MINIMUMS = {"max_llm_calls": 0, "llm_timeout": 0.1, "llm_batch_entries": 1, "budget": 0, "index_max_lines": 10,
             "index_max_bytes": 1000, "index_line_chars": 40, "guard_days": 0, "decay_days": 0, "due_hours": 0,
             "due_entries": 0}
# Spans of time become timedeltas (at most 999,999,999 days) subtracted from now: a century
# is far beyond any use and keeps every date in range.
_MAXIMUMS = {"guard_days": 36_500, "decay_days": 36_500, "due_hours": 876_000, "llm_timeout": 3600}


def load_config(config_path: Path) -> Config:
    """Read config.toml; a missing file means all defaults. Bad values stop with the file named."""
    try:
        raw = config_path.read_bytes()
    except FileNotFoundError:
        return Config()
    except IsADirectoryError:
        raise StoreError(f"{config_path} is a folder, not a file") from None
    import tomllib  # only stores that have a config pay for the parser

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise StoreError(f"{config_path}: not valid TOML ({error})") from None
    return config_from_mapping(data, str(config_path))


def config_from_mapping(data: Mapping[str, object], source: str) -> Config:
    known = {f.name: f for f in fields(Config)}
    values: dict[str, object] = {}
    for key, value in data.items():
        if key not in known:
            raise StoreError(f"{source}: unknown setting {key!r} (known: {', '.join(known)})")
        values[key] = _check_value(key, value, known[key].default, source)
    return _replaced(Config(), values)


def _check_value(key: str, value: object, default: object, source: str) -> object:
    if key in ("timezone", "repo", "model"):
        if not isinstance(value, str) or not value.strip():
            raise StoreError(f"{source}: {key} must be a non-empty string")
        if key == "timezone":
            _check_timezone(value, source)
        return value
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            raise StoreError(f"{source}: {key} must be one of {', '.join(_CHOICES[key])}, not {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StoreError(f"{source}: {key} must be a number, not {value!r}")
    if isinstance(default, int) and not isinstance(value, int):
        raise StoreError(f"{source}: {key} must be a whole number, not {value!r}")
    if not math.isfinite(value):  # TOML has inf and nan, and nan passes every comparison below
        raise StoreError(f"{source}: {key} must be a finite number, not {value!r}")
    if key in ("duplicate_overlap", "contradiction_overlap") and not 0 < value <= 1:
        raise StoreError(f"{source}: {key} must be between 0 and 1, not {value!r}")
    if value < _MINIMUMS.get(key, 0):
        raise StoreError(f"{source}: {key} must be at least {_MINIMUMS.get(key, 0)}, not {value!r}")
    if key in _MAXIMUMS and value > _MAXIMUMS[key]:
        raise StoreError(f"{source}: {key} must be at most {_MAXIMUMS[key]:,}, not {value!r}")
    return value


def _check_timezone(name: str, source: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise StoreError(f"{source}: unknown timezone {name!r}") from None
