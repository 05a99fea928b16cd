"""The consult log, `<state>/consult.jsonl`: one JSON line per lookup (recall, show) with its
time, the query and the memories returned. Lookups append to it; dream reads it (the consult
gate keeps a memory looked up lately; decay lists an unused one last in MEMORY.md).

Many agents look things up at once: each line is written with one `write` on a file opened
O_APPEND, which POSIX keeps whole and in one piece among concurrent appenders; no memory file,
and no memory's mtime, is ever touched.
"""

import json
import os
import stat
from collections.abc import Sequence
from datetime import datetime, timedelta

from auto_dream.errors import StoreError
from auto_dream.store.paths import FILE_MODE, StoreLayout, make_dirs, read_regular

CONSULT_LOG = "consult.jsonl"  # {"ts": ISO 8601, "query": "...", "names": [...], "paths": [...]} per lookup


def append_consult(paths: StoreLayout, now: datetime, query: str, found: Sequence[tuple[str, str]]) -> None:
    """Record one lookup: `found` is (name, path) of each memory returned, best first."""
    record = {"ts": now.isoformat(timespec="seconds"), "query": query,
              "names": [name for name, _ in found], "paths": [path for _, path in found]}
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    make_dirs(paths.state)
    # never through a link, never blocking on a FIFO planted in its place (OSError: the caller
    # answers its lookup without recording it)
    fd = os.open(paths.state / CONSULT_LOG,
                 os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, FILE_MODE)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{paths.state / CONSULT_LOG} is not a regular file")
        os.write(fd, line)
    finally:
        os.close(fd)


def last_consulted(paths: StoreLayout, now: datetime, days: int) -> dict[str, datetime]:
    """Each memory path a lookup returned within `days` of `now`, and when last. A line that is
    not a JSON object with a readable time is passed over (dream's consult gate warns of it)."""
    try:
        data = read_regular(paths.state / CONSULT_LOG)
    except StoreError:
        return {}  # a link or a FIFO where the log should be: nothing was looked up, as far as decay knows
    if data is None:
        return {}
    text = data.decode("utf-8", errors="replace")
    cutoff = now - timedelta(days=days)
    last: dict[str, datetime] = {}
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            stamp = record.get("ts")
            when: datetime | None
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                when = datetime.fromtimestamp(stamp, tz=now.tzinfo)  # POSIX seconds, as the consult gate reads
            else:
                when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
                if when is not None and when.tzinfo is None:
                    when = when.replace(tzinfo=now.tzinfo)
        except (ValueError, AttributeError, TypeError, KeyError, OverflowError, OSError, RecursionError):
            continue  # an agent's line that is no JSON object with a time (nested past Python's limit, too)
        if when is None or when < cutoff or not isinstance(record.get("paths"), list):
            continue
        when = min(when, now)  # a clock set ahead does not keep a memory in use for good
        for path in record["paths"]:
            if isinstance(path, str) and (path not in last or last[path] < when):
                last[path] = when
    return last
