"""The run journal: the pre-image of every file a dream touches, written before it touches any.

.state/runs/<run_id>/journal.json lists each touched path with its pre-image (a copy under
pre/, or absent), its mode, and the hash of what the run wrote. With it, `undo` restores a
run byte for byte, and a run killed half-way is rolled back by the next dream or undo.
"""

import hashlib
import json
import os
import re
import shutil
import stat as stat_module
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from auto_dream.errors import InputError, StoreError
from auto_dream.store.files import (
    FILE_MODE,
    Fingerprint,
    NotRegular,
    fingerprint_of,
    make_dirs,
    open_regular,
    read_regular,
    write_atomic,
)
from auto_dream.store.paths import StoreLayout
from auto_dream.store.replace import (
    Expected,
    Replaced,
    create_if_absent,
    remove_if_unchanged,
    replace_if_unchanged,
    side_names,
)

RUNS = "runs"
STATUS = "status"  # a run folder's one-word status, beside its journal
APPLYING, DONE, UNDONE, ROLLED_BACK = "applying", "done", "undone", "rolled_back"
# `0042-20261201T031500`: a sequence number, then the time the run started
RUN_ID = re.compile(r"(\d{4,})-\d{8}T\d{6}")
_PRE_NAME = re.compile(r"\d{5}")
# write_atomic's temporary files (tempfile.mkstemp: a dot, the name, 8 random characters)
_TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_if_present(path: Path) -> bytes | None:
    """A regular file's bytes, None when there is none. A link is not followed and a FIFO not
    waited on (a planted one would block undo): either is a StoreError (files.read_regular)."""
    try:
        return read_regular(path)
    except StoreError as error:
        raise StoreError(f"{error}; nothing was changed") from None


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


def run_dir(paths: StoreLayout, run_id: str) -> Path:
    return paths.state / RUNS / run_id


def check_run_id(run_id: str) -> str:
    """A run id as `undo` takes it: anything else (a path, an empty word) is bad input."""
    if not RUN_ID.fullmatch(run_id):
        raise InputError(f"{run_id!r} is not a run id: run ids look like 0042-20261201T031500 "
                         "(the folders in .state/runs/)")
    return run_id


def run_number(run_id: str) -> int:
    """The sequence number a run id starts with (`0042-…` is 42)."""
    return int(check_run_id(run_id).split("-", 1)[0])


@dataclass(frozen=True)
class Journaled:
    """A file as write_journal read it: its fingerprint (None when absent, or changing while it
    was read) and its bytes' sha256 (None when absent). apply replaces it only while it is so."""

    stamp: Fingerprint | None
    sha256: str | None


def _side_name(run_id: str, name: str) -> re.Pattern[str]:
    """The hidden names a run (and its undo, `.undo`) gives a file beside it: replace.side_names."""
    return re.compile(re.escape(f".{name}.{run_id}") + r"(?:\.undo)?(?:-\d+)?\.(?:old|new)")


def _read_seen(path: Path) -> tuple[bytes | None, Fingerprint | None]:
    """The file's bytes and its fingerprint (store.fingerprint's), or (None, None) when absent.
    The fingerprint is None when the file changed while it was read."""
    try:
        fd, before = open_regular(path)
    except FileNotFoundError:
        return None, None
    except NotRegular:
        raise StoreError(f"{path}: not a regular file; dream writes only regular files") from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
        after = os.fstat(fd)
    seen = fingerprint_of(after)
    unchanged = fingerprint_of(before) == seen and len(data) == after.st_size
    return data, seen if unchanged else None


def write_journal(paths: StoreLayout, run_id: str, changes: list[FileChange],
                  started: datetime) -> list[Journaled]:
    """Record pre-images and intended results, durably, before the first change. Returns each
    file as its pre-image was read: apply replaces a file only while it still is so.

    A journal that cannot be written in whole (a full disk) leaves no run folder behind."""
    folder = run_dir(paths, run_id)
    try:
        return _write_journal(folder, paths, run_id, changes, started)
    except BaseException as error:
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(error, OSError):
            raise StoreError(f"cannot write the run journal in {folder}: {error.strerror or error}; "
                             "nothing was changed") from None
        raise


def _write_journal(folder: Path, paths: StoreLayout, run_id: str, changes: list[FileChange],
                   started: datetime) -> list[Journaled]:
    make_dirs(folder / "pre")
    files, seen = [], []
    for number, change in enumerate(changes):
        target = paths.root / change.path
        before, seen_as = _read_seen(target)
        if before is not None:
            write_atomic(folder / "pre" / f"{number:05d}", before)
        seen.append(Journaled(seen_as, digest(before)))
        mode = stat_module.S_IMODE(os.lstat(target).st_mode) if before is not None else None
        files.append({"path": change.path, "pre": f"{number:05d}" if before is not None else None,
                      "pre_sha256": digest(before), "post_sha256": digest(change.data()),
                      "mode": mode,
                      # a memory without an mtime: key takes its age from the file's time
                      "mtime_ns": seen_as[1] if seen_as else None})
    journal = {"run_id": run_id, "started": started.isoformat(timespec="seconds"), "status": APPLYING,
               "files": files}
    write_atomic(folder / "journal.json", json.dumps(journal, indent=1, ensure_ascii=False).encode())
    write_atomic(folder / STATUS, APPLYING.encode())
    return seen


def run_status(paths: StoreLayout, run_id: str) -> str | None:
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


def read_journal(paths: StoreLayout, run_id: str) -> dict:
    """The run's journal, checked: a journal is dream's own file, but a damaged or planted one
    must never make undo write outside the store."""
    file = run_dir(paths, run_id) / "journal.json"
    try:
        journal = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"no dream run {run_id!r} (see .state/runs/)") from None
    except (ValueError, OSError):
        raise StoreError(f"{file}: not a readable journal") from None
    problem = _journal_problem(journal, paths)
    if problem:
        raise StoreError(f"{file}: damaged journal ({problem}); nothing was restored")
    return journal


def _journal_problem(journal: object, paths: StoreLayout) -> str | None:
    if not isinstance(journal, dict) or not isinstance(journal.get("files", []), list):
        return "not a journal"
    for record in journal.get("files", []):
        if not isinstance(record, dict):
            return "a file record is not an object"
        path = record.get("path")
        if not isinstance(path, str) or not confined(path, paths):
            return f"the path {path!r} is not a file inside the store"
        pre = record.get("pre")
        if pre is not None and not (isinstance(pre, str) and _PRE_NAME.fullmatch(pre)):
            return f"the pre-image name {pre!r} is not one dream writes"
        for key in ("pre_sha256", "post_sha256"):
            if record.get(key) is not None and not isinstance(record[key], str):
                return f"{key} of {path} is not a hash"
        for key in ("mode", "mtime_ns"):
            value = record.get(key)
            if value is not None and (type(value) is not int or value < 0 or value.bit_length() > 63):
                return f"{key} of {path} is not a number"
    return None


def confined(path: str, paths: StoreLayout) -> bool:
    """A path a run may touch: relative, without `..`, one the layout lets a run write (memory
    files, the archive, dream's records, MEMORY.md)."""
    parts = PurePosixPath(path).parts
    return (bool(parts) and not path.startswith("/") and "\\" not in path and "\0" not in path
            and all(part not in ("..", ".") for part in parts) and paths.run_may_write(parts))


def set_status(paths: StoreLayout, run_id: str, status: str, **fields: object) -> None:
    journal = read_journal(paths, run_id)
    journal["status"] = status
    journal.update(fields)
    write_atomic(run_dir(paths, run_id) / "journal.json", json.dumps(journal, indent=1, ensure_ascii=False).encode())
    write_atomic(run_dir(paths, run_id) / STATUS, status.encode())


def set_post(paths: StoreLayout, run_id: str, number: int, data: bytes | None) -> None:
    """The run will write `data` to its file `number` instead of what the journal says."""
    journal = read_journal(paths, run_id)
    journal["files"][number]["post_sha256"] = digest(data)
    write_atomic(run_dir(paths, run_id) / "journal.json", json.dumps(journal, indent=1, ensure_ascii=False).encode())


def run_ids(paths: StoreLayout) -> list[str]:
    """Every recorded run, oldest first: by sequence number, as a number (run 10000 follows 9999)."""
    folder = paths.state / RUNS
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if RUN_ID.fullmatch(p.name) and (p / "journal.json").is_file()]
    return sorted(found, key=lambda run_id: (run_number(run_id), run_id))


def apply_change(paths: StoreLayout, change: FileChange, run_id: str, expected: Fingerprint | None,
                 pre_sha256: str | None, unsynced: set[Path] | None = None) -> str | None:
    """Put one change in place unless its file is no longer as journaled (`pre_sha256`, None:
    absent) and as expected (its fingerprint); returns why it was left alone, or None when done.

    The path is never empty and no one's write is lost (store/replace.py): a line an agent
    appends, or a shell writes through a descriptor it opened before the dream, while the file
    is replaced, leaves it as they made it; what was written to dream's new version meanwhile
    is kept beside it and named. A kill in between leaves hidden files beside the path, which
    recover_aside sorts out. A new file's folder is synced at once, or added to `unsynced` for
    the caller to sync once for all (replace.sync_folders) before the run is marked done.
    """
    target = paths.root / change.path
    data = change.data()
    if pre_sha256 is None:  # there was no file: a new one goes only where none has appeared
        if data is None or create_if_absent(target, data, unsynced):
            return None
        return "written by someone else since the dream started"
    if expected is None:  # it changed while it was journaled
        return "changed since the dream started"
    held, staged = side_names(target, run_id)
    wanted = Expected(pre_sha256, expected)
    outcome = (remove_if_unchanged(target, wanted, held) if data is None
               else replace_if_unchanged(target, data, wanted, held, staged))
    return None if outcome.status == "done" else _why_left(paths, outcome, "since the dream started")


def _why_left(paths: StoreLayout, outcome: Replaced, since: str) -> str:
    if outcome.status == "absent":
        return f"removed {since}"
    kept = ", ".join(paths.relative(path) for path in outcome.kept)
    return f"changed {since}" + (f" (a version written meanwhile is kept beside it as {kept})" if kept else "")


def recover_aside(paths: StoreLayout, run_id: str, journal: dict) -> list[str]:
    """The hidden files a killed run or undo left beside their paths (replace.side_names): one
    whose path has no file goes back to it; one holding what the journal or the path holds goes;
    any other stays, named in a warning."""
    warnings = []
    listed: dict[Path, list[str]] = {}
    for record in journal["files"]:
        target = paths.root / record["path"]
        if target.parent not in listed:
            listed[target.parent] = sorted(entry.name for entry in _entries(target.parent))
        pattern = _side_name(run_id, target.name)
        sides = [name for name in listed[target.parent] if pattern.fullmatch(name)]
        # the replaced file (.old) before the new one (.new): it is the one a path without a file lacks
        for name in sorted(sides, key=lambda name: name.endswith(".new")):
            side = target.with_name(name)
            kept = digest(read_if_present(side))
            if not os.path.lexists(target) and kept != record["post_sha256"]:
                os.rename(side, target)
            elif kept in (record["pre_sha256"], record["post_sha256"], digest(read_if_present(target))):
                side.unlink()  # the journal or the path holds it
            else:
                warnings.append(f"{record['path']}: another version is kept beside it as {paths.relative(side)}")
    return warnings


REPLACED = "replaced"  # a run folder's copies of the versions `undo --force` replaced


@dataclass(frozen=True)
class Restored:
    run_id: str
    restored: list[str]
    conflicts: list[str]  # changed since the run: left as they are (or, forced, replaced: see `replaced`)
    interrupted: bool = False  # the run had been killed while applying
    left: list[str] = field(default_factory=list)  # changed while undo ran: left as someone made them
    replaced: dict[str, str] = field(default_factory=dict)  # forced: path -> the copy of the version replaced
    warnings: list[str] = field(default_factory=list)  # files kept beside their paths, and why
    rebuild_index: bool = False  # our own MEMORY.md was not put back byte for byte: made again from the memories


def restore(paths: StoreLayout, run_id: str, *, force: bool, rolling_back: bool = False) -> Restored:
    """Put every file the run touched back as it was before the run.

    A file that is neither what the run wrote nor what was there before was changed by
    someone since: undo refuses (unless forced: the version replaced is copied into the run's
    folder first); a roll-back leaves it and reports it. Each file is checked again right
    before it is replaced (store/replace.py): one changed while undo runs is left as it is,
    reported, and the run stays `done`, so `undo` can finish it. Our MEMORY.md is derived:
    it never stops an undo; it is put back byte for byte when nothing changed it since the
    run, else the caller rebuilds it. A Claude Code folder's is theirs (lines a run moved out
    or dropped are only in its pre-image): it is a file like the others.
    """
    journal = read_journal(paths, run_id)
    folder = run_dir(paths, run_id)
    for record in journal["files"]:
        _check_inside(paths, paths.root / record["path"])
    warnings = recover_aside(paths, run_id, journal)
    current = {r["path"]: digest(read_if_present(paths.root / r["path"])) for r in journal["files"]}
    # rebuilt from the memories, never a reason to refuse an undo (in our own layout)
    derived = paths.relative(paths.index) if not paths.person_index else None
    conflicts = [r["path"] for r in journal["files"] if r["path"] != derived
                 and current[r["path"]] not in (r["post_sha256"], r["pre_sha256"])]
    if conflicts and not force and not rolling_back:
        raise StoreError(f"cannot undo run {run_id}: {conflicts[0]} changed since that run"
                         + (f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else "")
                         + "; use --force to restore anyway (the versions it replaces are kept in "
                         f"{paths.relative(folder / REPLACED)})")
    restored: list[str] = []
    left: list[str] = []
    replaced: dict[str, str] = {}
    rebuild = bool(conflicts) and not force
    for number, record in reversed(list(enumerate(journal["files"]))):
        path, now = record["path"], current[record["path"]]
        if path in conflicts and not force:
            continue
        if path == derived and now != record["post_sha256"]:
            rebuild = rebuild or now != record["pre_sha256"]  # rebuilt since the run: made again
            continue
        if now == record["pre_sha256"]:
            continue  # never changed (the run stopped before it): leave it, and its times, alone
        target = paths.root / path
        if path in conflicts and now is not None and (copy := _keep_replaced(paths, folder, number, target, now)):
            replaced[path] = copy
        why = _put_back_pre(paths, folder, run_id, record, target, now)
        if why is None:
            restored.append(path)
        elif path == derived:
            rebuild = True  # written to meanwhile: made again from the memories, as after any run
        else:
            left.append(path)
            warnings.append(f"{path} {why}: left as it is")
    rebuild = rebuild or bool(left)
    if rolling_back or not left:
        set_status(paths, run_id, ROLLED_BACK if rolling_back else UNDONE)
    from auto_dream.dream.bookkeeping import forget_logs_done

    forget_logs_done(paths)  # the distilled record went back: every log must be read again
    return Restored(run_id, restored, conflicts, interrupted=rolling_back, left=left, replaced=replaced,
                    warnings=warnings, rebuild_index=rebuild and derived is not None)


def _put_back_pre(paths: StoreLayout, folder: Path, run_id: str, record: dict, target: Path,
                  now: str | None) -> str | None:
    """The file as it was before the run, in place of the version read as `now` (its sha256,
    None: absent) if it still is that; returns why not, or None when done."""
    held, staged = side_names(target, f"{run_id}.undo")
    if record["pre"] is None:  # the run created it
        assert now is not None  # an absent file equals an absent pre-image: restore left it
        outcome = remove_if_unchanged(target, Expected(now), held)
        if outcome.status == "done":
            _remove_empty_folders(paths, target.parent)
    else:
        data = _read_pre(folder / "pre" / record["pre"])
        mode = record["mode"] if record["mode"] is not None else FILE_MODE
        if now is None:  # removed since the run (undo --force): made again where no file has appeared
            made = create_if_absent(target, data)
            if made:
                os.chmod(target, mode)
                if record.get("mtime_ns") is not None:
                    os.utime(target, ns=(record["mtime_ns"], record["mtime_ns"]))
            return None if made else "changed while undo ran"
        outcome = replace_if_unchanged(target, data, Expected(now), held, staged, mode, record.get("mtime_ns"))
    if outcome.status == "done" or (outcome.status == "absent" and record["pre"] is None):
        return None
    return _why_left(paths, outcome, "while undo ran")


def _keep_replaced(paths: StoreLayout, folder: Path, number: int, target: Path, now: str) -> str | None:
    """undo --force: a copy of the version it replaces, in the run's folder (its journal number
    for a name, so a Claude Code folder never takes it for a topic file); returns where, or None
    when the file is changing again (the replace then leaves it as it is)."""
    data = read_if_present(target)
    if data is None or digest(data) != now:
        return None
    copy = folder / REPLACED / f"{number:05d}"
    write_atomic(copy, data)
    return paths.relative(copy)


def _check_inside(paths: StoreLayout, target: Path) -> None:
    """Refuse a path whose folder leads out of the store (a symbolic link on the way)."""
    root = os.path.realpath(paths.root)
    if os.path.commonpath([root, os.path.realpath(target.parent)]) != root:
        raise StoreError(f"{paths.relative(target)}: its folder leads outside the store; nothing was restored")


def _read_pre(path: Path) -> bytes:
    data = read_if_present(path)
    if data is None:
        raise StoreError(f"{path}: a pre-image is missing; nothing more was restored")
    return data


def _remove_empty_folders(paths: StoreLayout, folder: Path) -> None:
    """Folders a run created (archive/<type>/) go when they are empty again; the store's own stay."""
    keep = {paths.root, *paths.skeleton()}
    while folder not in keep and folder.is_relative_to(paths.root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def roll_back_interrupted(paths: StoreLayout) -> tuple[list[Restored], list[str]]:
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
            warnings.extend(result.warnings)
    return rolled, warnings


def last_done_run(paths: StoreLayout) -> str | None:
    for run_id in reversed(run_ids(paths)):  # "applying" may be a status file lagging behind a done journal
        if run_status(paths, run_id) in (DONE, APPLYING, None) and read_journal(paths, run_id).get("status") == DONE:
            return run_id
    return None


def clean_leftovers(paths: StoreLayout) -> list[str]:
    """Under the dream lock: remove what a killed process left (temporary files, a run folder
    whose journal was never written, as a full disk leaves it); returns what was removed."""
    removed = []
    folders = [paths.root, paths.state, paths.state / RUNS]
    runs = paths.state / RUNS
    for entry in _entries(runs):
        if RUN_ID.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            if not os.path.lexists(Path(entry.path) / "journal.json"):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(paths.relative(Path(entry.path)))
            else:
                folders += [Path(entry.path), Path(entry.path) / "pre"]
    folders += paths.memory_folders()
    recent = time.time() - 60  # a temporary file this young may be another command's, still writing
    for folder in folders:
        for entry in _entries(folder):
            if _TEMPORARY.fullmatch(entry.name) and entry.is_file(follow_symlinks=False) \
                    and (folder != paths.root or entry.stat(follow_symlinks=False).st_mtime < recent):
                os.unlink(entry.path)
                removed.append(paths.relative(Path(entry.path)))
    return removed


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:  # absent, or not a folder
        return []
