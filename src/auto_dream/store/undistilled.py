"""The log entries no dream has distilled yet: what dream's gather reads, and what recall, show and
context find as pending.

An entry is undistilled while its id is not in the distilled record (`.state/distilled.txt`, one id a
line). A day log that a dream found fully distilled is recorded with its fingerprint in
`.state/logs_done.json` and not read again while it stays as it was: so finding the undistilled
entries costs a listing of the logs, one stat each, and a read of only the logs written since (or
not yet fully distilled), however many months of logs are all distilled.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from auto_dream.store.daylog import Entry, LogProblem, log_files, read_log
from auto_dream.store.files import Fingerprint, fingerprint
from auto_dream.store.paths import StoreLayout

DISTILLED = "distilled.txt"  # one entry id per line
LOGS_DONE = "logs_done.json"  # day logs fully distilled, by fingerprint: not read again while unchanged


def distilled_path(paths: StoreLayout) -> Path:
    return paths.state / DISTILLED


def read_distilled(paths: StoreLayout) -> bytes:
    """The distilled record as it is (empty when there is none)."""
    try:
        return distilled_path(paths).read_bytes()
    except FileNotFoundError:
        return b""


def read_distilled_ids(paths: StoreLayout) -> set[str]:
    """Ids of every entry a dream has distilled (a torn last line is ignored)."""
    return distilled_ids_in(read_distilled(paths))


def distilled_ids_in(data: bytes) -> set[str]:
    """The entry ids a distilled record holds (a torn last line is ignored)."""
    text = data.decode("utf-8", errors="replace")
    return {line.strip() for line in text.split("\n") if len(line.strip()) == 12}


def read_logs_done(paths: StoreLayout) -> dict[str, list[int]]:
    try:
        data = json.loads((paths.state / LOGS_DONE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class OpenLog:
    """A day log that may hold undistilled entries: not recorded as fully distilled as it is now."""

    path: Path
    relative: str  # to the store's root
    seen_as: Fingerprint | None  # None: gone since it was listed


def open_logs(paths: StoreLayout) -> tuple[list[OpenLog], dict[str, list[int]]]:
    """(the day logs to read, oldest first; the logs recorded as fully distilled and unchanged since,
    with their fingerprints). Reads no log."""
    done = read_logs_done(paths)
    to_read: list[OpenLog] = []
    still_done: dict[str, list[int]] = {}
    for log_path in log_files(paths):
        relative = paths.relative(log_path)
        seen_as = fingerprint(log_path)
        if seen_as is not None and done.get(relative) == list(seen_as):
            still_done[relative] = list(seen_as)
            continue
        to_read.append(OpenLog(log_path, relative, seen_as))
    return to_read, still_done


@dataclass(frozen=True)
class Undistilled:
    entries: list[Entry]  # oldest first, each id once
    entry_logs: dict[str, str]  # entry id -> its day log, relative to the root
    logs_read: dict[str, tuple[list[int], set[str]]]  # log -> (its fingerprint, the ids of all its entries)
    problems: list[LogProblem]


def read_undistilled(logs: list[OpenLog], distilled_ids: set[str] | frozenset[str]) -> Undistilled:
    """The entries of `logs` whose ids are not in `distilled_ids` (an entry copied into several logs
    is found once, in the first)."""
    seen: set[str] = set()
    entries: list[Entry] = []
    entry_logs: dict[str, str] = {}
    logs_read: dict[str, tuple[list[int], set[str]]] = {}
    problems: list[LogProblem] = []
    for log in logs:
        day_entries, day_problems = read_log(log.path)
        problems.extend(day_problems)
        if log.seen_as is not None:
            logs_read[log.relative] = (list(log.seen_as), {e.id for e in day_entries})
        for entry in day_entries:
            if entry.id in seen or entry.id in distilled_ids:
                continue
            seen.add(entry.id)
            entries.append(entry)
            entry_logs[entry.id] = log.relative
    entries.sort(key=lambda e: e.at)
    return Undistilled(entries, entry_logs, logs_read, problems)
