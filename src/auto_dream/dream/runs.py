"""The run journal: the pre-image of every file a dream touches, written before it touches any.

.state/runs/<run_id>/journal.json lists each touched path with its pre-image (a copy under
pre/, or absent), its mode, and the hash of what the run wrote. With it, `undo` restores a
run byte for byte, and a run killed half-way is rolled back by the next dream or undo.
"""

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from auto_dream import MEMORY_TYPES
from auto_dream.errors import StoreError
from auto_dream.memory import write_atomic
from auto_dream.paths import FILE_MODE, StorePaths, make_dirs

RUNS = "runs"
STATUS = "status"  # a run folder's one-word status, beside its journal
APPLYING, DONE, UNDONE, ROLLED_BACK = "applying", "done", "undone", "rolled_back"


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the root
    # None: the file is removed. A memory's bytes are rendered when needed (to hash them for
    # the journal, then to write them): a run that archives 20,000 memories holds none of them.
    content: bytes | Callable[[], bytes] | None

    @property
    def removes(self) -> bool:
        return self.content is None

    def data(self) -> bytes | None:
        return self.content() if callable(self.content) else self.content


def run_dir(paths: StorePaths, run_id: str) -> Path:
    return paths.state / RUNS / run_id


def write_journal(paths: StorePaths, run_id: str, changes: list[FileChange], started: datetime) -> None:
    """Record pre-images and intended results, durably, before the first change."""
    folder = run_dir(paths, run_id)
    make_dirs(folder / "pre")
    files = []
    for number, change in enumerate(changes):
        target = paths.root / change.path
        before = _read(target)
        stat = target.stat() if before is not None else None
        if before is not None:
            write_atomic(folder / "pre" / f"{number:05d}", before)
        files.append({"path": change.path, "pre": f"{number:05d}" if before is not None else None,
                      "pre_sha256": digest(before), "post_sha256": digest(change.data()),
                      "mode": stat.st_mode & 0o777 if stat else None,
                      # a memory without an mtime: key takes its age from the file's time
                      "mtime_ns": stat.st_mtime_ns if stat else None})
    journal = {"run_id": run_id, "started": started.isoformat(timespec="seconds"), "status": APPLYING,
               "files": files}
    write_atomic(folder / "journal.json", json.dumps(journal, indent=1, ensure_ascii=False).encode())
    write_atomic(folder / STATUS, APPLYING.encode())


def run_status(paths: StorePaths, run_id: str) -> str | None:
    """The run's status as its one-word `status` file has it, without parsing its journal.

    The file is written after journal.json, so it may lag behind it, never lead: callers
    confirm with read_journal before acting. A run recorded before the file existed is
    read from its journal.
    """
    try:
        return (run_dir(paths, run_id) / STATUS).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return read_journal(paths, run_id).get("status")
    except (OSError, UnicodeDecodeError):
        return None


def read_journal(paths: StorePaths, run_id: str) -> dict:
    try:
        return json.loads((run_dir(paths, run_id) / "journal.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"no dream run {run_id!r} (see .state/runs/)") from None
    except ValueError:
        raise StoreError(f"{run_dir(paths, run_id) / 'journal.json'}: not a readable journal") from None


def set_status(paths: StorePaths, run_id: str, status: str, **fields: object) -> None:
    journal = read_journal(paths, run_id)
    journal["status"] = status
    journal.update(fields)
    write_atomic(run_dir(paths, run_id) / "journal.json", json.dumps(journal, indent=1, ensure_ascii=False).encode())
    write_atomic(run_dir(paths, run_id) / STATUS, status.encode())


def run_ids(paths: StorePaths) -> list[str]:
    """Every recorded run, oldest first (run ids sort by time)."""
    folder = paths.state / RUNS
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "journal.json").is_file())


def apply_change(paths: StorePaths, change: FileChange) -> None:
    target = paths.root / change.path
    if change.removes:
        target.unlink(missing_ok=True)
    else:
        write_atomic(target, change.data())


@dataclass(frozen=True)
class Restored:
    run_id: str
    restored: list[str]
    conflicts: list[str]  # changed since the run: left as they are (or overwritten with force)
    interrupted: bool = False  # the run had been killed while applying


def restore(paths: StorePaths, run_id: str, force: bool, rolling_back: bool = False) -> Restored:
    """Put every file the run touched back as it was before the run.

    A file that is neither what the run wrote nor what was there before was changed by
    someone since: undo refuses (unless forced); a roll-back leaves it and reports it.
    """
    journal = read_journal(paths, run_id)
    folder = run_dir(paths, run_id)
    conflicts = []
    for record in journal["files"]:
        current = digest(_read(paths.root / record["path"]))
        if current not in (record["post_sha256"], record["pre_sha256"]):
            conflicts.append(record["path"])
    if conflicts and not force and not rolling_back:
        raise StoreError(f"cannot undo run {run_id}: {conflicts[0]} changed since that run"
                         + (f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else "")
                         + "; use --force to restore anyway")
    restored = []
    for record in reversed(journal["files"]):
        if record["path"] in conflicts and not force:
            continue
        target = paths.root / record["path"]
        if record["pre"] is None:
            if target.exists() or target.is_symlink():
                target.unlink()
                _remove_empty_folders(paths, target.parent)
                restored.append(record["path"])
            continue
        if digest(_read(target)) == record["pre_sha256"]:
            continue  # never changed (the run stopped before it): leave it, and its times, alone
        write_atomic(target, (folder / "pre" / record["pre"]).read_bytes())
        os.chmod(target, record["mode"] if record["mode"] is not None else FILE_MODE)
        if record.get("mtime_ns") is not None:
            os.utime(target, ns=(record["mtime_ns"], record["mtime_ns"]))
        restored.append(record["path"])
    set_status(paths, run_id, ROLLED_BACK if rolling_back else UNDONE)
    from auto_dream.dream.bookkeeping import forget_logs_done

    forget_logs_done(paths)  # the distilled record went back: every log must be read again
    return Restored(run_id, restored, conflicts, interrupted=rolling_back)


def _remove_empty_folders(paths: StorePaths, folder: Path) -> None:
    """Folders a run created (archive/<type>/) go when they are empty again; the store's own stay."""
    keep = {paths.root, paths.logs, paths.memories, paths.archive, paths.state,
            *(paths.memories / t for t in MEMORY_TYPES)}
    while folder not in keep and folder.is_relative_to(paths.root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def roll_back_interrupted(paths: StorePaths) -> tuple[list[Restored], list[str]]:
    """Reverse every run that was killed while applying; returns them, and warnings for the report."""
    rolled, warnings = [], []
    for run_id in run_ids(paths):  # a year of nightly runs: one small file each, not a journal
        if run_status(paths, run_id) == APPLYING and read_journal(paths, run_id).get("status") == APPLYING:
            result = restore(paths, run_id, force=False, rolling_back=True)
            rolled.append(result)
            warnings.append(f"run {run_id} was interrupted while applying: rolled back "
                            f"{len(result.restored)} files")
            warnings.extend(f"{path}: changed since the interrupted run {run_id}, left as it is"
                            for path in result.conflicts)
    return rolled, warnings


def last_done_run(paths: StorePaths) -> str | None:
    for run_id in reversed(run_ids(paths)):  # "applying" may be a status file lagging behind a done journal
        if run_status(paths, run_id) in (DONE, APPLYING, None) and read_journal(paths, run_id).get("status") == DONE:
            return run_id
    return None
