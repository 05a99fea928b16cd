"""dream's own files under .state/: distilled entries, last dream, recheck list, and the
consult log. Small, plain files a person can read (the parse cache lives in cache.py)."""

import json
from datetime import datetime, timedelta

from auto_dream.errors import StoreError
from auto_dream.judge.similarity import significant_words
from auto_dream.store.consult import CONSULT_LOG, consult_records
from auto_dream.store.files import write_atomic
from auto_dream.store.paths import StoreLayout
from auto_dream.store.undistilled import (  # re-exported: the distilled record is read where recall reads it too
    DISTILLED as DISTILLED,
)
from auto_dream.store.undistilled import LOGS_DONE as LOGS_DONE
from auto_dream.store.undistilled import distilled_path as distilled_path
from auto_dream.store.undistilled import read_distilled as read_distilled
from auto_dream.store.undistilled import read_distilled_ids as read_distilled_ids
from auto_dream.store.undistilled import read_logs_done as read_logs_done

LAST_DREAM = "last_dream.json"
RECHECK = "recheck.txt"  # memories whose checks a budget deferred


def distilled_with(current: bytes, new_ids: tuple[str, ...]) -> bytes:
    """The distilled record `current` with `new_ids` added."""
    if current and not current.endswith(b"\n"):
        current += b"\n"
    return current + "".join(f"{i}\n" for i in new_ids).encode()


def read_last_dream(paths: StoreLayout) -> datetime | None:
    """When the last dream finished; a time written without an offset is the system's local time."""
    try:
        data = json.loads((paths.state / LAST_DREAM).read_text(encoding="utf-8"))
        finished = datetime.fromisoformat(data["finished"])
        # aware, so that it compares with now; out of range there (year 1, year 9999) is unreadable
        return finished if finished.tzinfo else finished.astimezone()
    except (FileNotFoundError, ValueError, KeyError, TypeError, OverflowError):
        return None


def write_last_dream(paths: StoreLayout, run_id: str, finished: datetime) -> None:
    document = {"run_id": run_id, "finished": finished.isoformat(timespec="seconds")}
    write_atomic(paths.state / LAST_DREAM, (json.dumps(document) + "\n").encode())


def write_logs_done(paths: StoreLayout, done: dict[str, list[int]]) -> None:
    write_atomic(paths.state / LOGS_DONE, json.dumps(dict(sorted(done.items()))).encode())


def forget_logs_done(paths: StoreLayout) -> None:
    """After an undo the distilled record is older than this list: read every log again."""
    (paths.state / LOGS_DONE).unlink(missing_ok=True)


def read_recheck(paths: StoreLayout) -> set[str]:
    """Memory paths, decoded as file names are: a line that names no memory matches nothing."""
    try:
        text = (paths.state / RECHECK).read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return set()
    return {line for line in text.split("\n") if line}


def write_recheck(paths: StoreLayout, memory_paths: set[str]) -> None:
    target = paths.state / RECHECK
    if memory_paths:
        write_atomic(target, "".join(f"{p}\n" for p in sorted(memory_paths)).encode("utf-8", "surrogateescape"))
    elif target.exists():
        target.unlink()


def read_consulted_terms(paths: StoreLayout, now: datetime, days: int,
                         warnings: list[str] | None = None) -> set[str]:
    """Names and query words looked up within `days` (the seed computed this cutoff and never applied it).

    Query words are split like memory text, so a Chinese or Japanese query gives bigrams.
    Agents write this file: a line that is not a JSON object with a readable time is skipped,
    and one warning (added to `warnings`) says how many and where the first is.
    """
    consult_log = paths.state / CONSULT_LOG
    try:
        records, skipped = consult_records(paths, now, days)  # never a link followed, never a FIFO waited on
    except StoreError as error:
        if warnings is not None:
            warnings.append(f"{error}: the consult log was not read")
        return set()
    terms: set[str] = set()
    for _, record in records:
        names = record.get("names") or []
        if isinstance(names, list):
            terms.update(str(n).lower() for n in names if str(n).strip())
        if isinstance(record.get("query"), str):
            terms.update(significant_words(record["query"]))
    if skipped and warnings is not None:
        lines_word = "line" if len(skipped) == 1 else "lines"
        warnings.append(f"{paths.relative(consult_log)}: {len(skipped)} {lines_word} skipped, not a JSON object "
                        f"with a readable \"ts\" (first at line {skipped[0]})")
    return terms


def dream_is_due(last_dream: datetime | None, waiting_entries: int, due_hours: float,
                 due_entries: int, now: datetime) -> bool:
    """At least `due_hours` since the last dream and at least `due_entries` entries waiting."""
    long_enough = last_dream is None or now - last_dream >= timedelta(hours=due_hours)
    return long_enough and waiting_entries >= due_entries
