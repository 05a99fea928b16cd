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
from auto_dream.store.files import FILE_MODE, make_dirs, read_regular
from auto_dream.store.paths import StoreLayout

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


def consult_records(paths: StoreLayout, now: datetime, days: int) -> tuple[list[tuple[datetime, dict]], list[int]]:
    """The consult log's lookups within `days` of `now`, as (time, record), and the numbers of
    its lines that are no JSON object with a readable time (agents write this file too; a line
    nested past Python's limit is one of them). A time is POSIX seconds or ISO 8601 (without an
    offset, in now's timezone). StoreError for a link or a FIFO where the log should be."""
    data = read_regular(paths.state / CONSULT_LOG)
    if data is None:
        return [], []
    cutoff = now - timedelta(days=days)
    found: list[tuple[datetime, dict]] = []
    skipped: list[int] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            when = _when(record.get("ts"), now)
        except (ValueError, AttributeError, TypeError, OverflowError, OSError, RecursionError):
            when = None
        if when is None:
            skipped.append(number)
        elif when >= cutoff:
            found.append((when, record))
    return found, skipped


def _when(value: object, now: datetime) -> datetime | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # out of range raises (OverflowError, OSError, ValueError for nan): the line is skipped
        return datetime.fromtimestamp(value, tz=now.tzinfo)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=now.tzinfo)
    return None


def last_consulted(paths: StoreLayout, now: datetime, days: int) -> dict[str, datetime]:
    """Each memory path a lookup returned within `days` of `now`, and when last (dream's consult
    gate warns of the lines it cannot read; decay passes over them)."""
    try:
        records, _ = consult_records(paths, now, days)
    except StoreError:
        return {}  # a link or a FIFO where the log should be: nothing was looked up, as far as decay knows
    last: dict[str, datetime] = {}
    for when, record in records:
        when = min(when, now)  # a clock set ahead does not keep a memory in use for good
        found = record.get("paths")
        for path in found if isinstance(found, list) else ():
            if isinstance(path, str) and (path not in last or last[path] < when):
                last[path] = when
    return last
