"""The recall index, `recall.sqlite3` in dream's state folder: full-text search over every memory.

It is derived, like the parse cache (cache.py): it holds nothing the memory files do not, and
a missing, damaged or foreign-version file is built again without a word. Live and archived
memories are both in it, each marked. Every search first walks the memory files'
fingerprints (size, mtime_ns, inode, as scan.walk_memory_files takes them) and reads again
only the files new or changed since the index saw them, and forgets the ones gone: a memory
edited by hand is found by its new words at the next recall, and one changed file costs one
read, never a rebuild. A dream updates it for the files it wrote (refresh_paths).

Past FULL_CHECK_FILES files that walk (a stat per file) is most of a recall's time, so the
command line checks the folders instead before it answers (with_recall_index's `defer`): a
folder's mtime and inode, kept in the `folder` table, change when a name in it is added,
removed or renamed, and the inode of each name comes with its listing, so a file added,
removed or replaced is seen at once. A file written in place changes neither: the full walk
(the FullCheck with_recall_index returns with its answer) runs after the answer, in a process of
its own (shell.run_owed_checks), and its words are found from the recall after that.

The words are the judge's (judge.words.word_sequence: English Snowball stems, CJK runs as
overlapping bigrams, so a two-character Chinese or Japanese word is a whole term) and the
two-letter words the judge leaves out ("CI", "S3", "Go"), made here
in Python and stored space-joined; SQLite's FTS5 (in the standard library's sqlite3) only
splits them on the spaces again and ranks with its BM25 (https://sqlite.org/fts5.html,
sections 4.3 "Tokenizers" and 5.1.1 "The bm25() function").

Many processes may search at once. The file is in WAL mode (readers never wait for a
writer); an update is one write transaction that asks again, inside it, what is stale (a
process that waited for another's update finds nothing left to do); an update that cannot
get the lock in time is skipped, and that search answers from the index as it stands. A
store where the file cannot be written at all (read-only, a full disk) is searched through
an index built in memory for that one search.
"""

import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from auto_dream.errors import StoreError
from auto_dream.judge.words import SEARCH_SHORTEST, word_sequence
from auto_dream.store.daylog import aware
from auto_dream.store.files import FILE_MODE, kind_at, make_dirs
from auto_dream.store.paths import StoreLayout
from auto_dream.store.text import Unreadable
from auto_dream.store.undistilled import distilled_path, open_logs, read_distilled_ids, read_undistilled
from auto_dream.store.walk import (
    ABSENT,
    Fingerprint,
    FolderStamp,
    fingerprint,
    folder_stamp,
    list_folder,
    walk_memory_files,
)

if TYPE_CHECKING:  # the parser is imported only when a file must be read (read_memory below)
    from auto_dream.store.memory import Memory

# PRAGMA user_version of the file; any other value is a foreign index, built again. Raise it
# whenever what is stored would read differently now (the schema, the judge's words).
VERSION = 6
FILE_NAME = "recall.sqlite3"
SWEEP_LOCK_NAME = "recall.sqlite3-check"  # held by the process checking every file after a recall answered
# BM25 weights of the columns: a word in a memory's name or description says what the memory
# is about, where the same word in its body may be an aside; a name is a few words chosen to
# say it, so it weighs most.
NAME_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT = 4.0, 2.0, 1.0
BUSY_SECONDS = 30.0  # how long a search waits for another process's update before it answers without its own
DREAM_BUSY_SECONDS = 1.0  # a dream does not wait long: the next recall catches up anyway
_CHUNK = 500  # host parameters per statement, well under SQLite's limit

# Tokenizer `ascii`: every non-ASCII character is part of a token, only ASCII spaces and
# punctuation separate, only ASCII letters are folded. The stored words are letters and digits
# already lower-cased, so each one comes out of FTS5 exactly as word_sequence made it (test:
# tests/test_recall.py). `unicode61` would fold and split by its Unicode 6.1 tables, which
# can differ from Python's for letters newer than those tables.
_SCHEMA = """
CREATE TABLE memory (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    archived INTEGER NOT NULL,
    -- all NULL for a file that is no readable memory: kept for its fingerprint, so that it is
    -- not read again at every search
    type TEXT, name TEXT, description TEXT, body TEXT, mtime TEXT,
    stamp REAL -- mtime as POSIX seconds: ties go to the newer memory
);
-- the fingerprints alone, in path order: a folder's files are read without the bodies' pages
CREATE INDEX memory_seen ON memory (path, size, mtime_ns, ino);
-- every folder a full check walked, as it was then (walk.FolderStamp, an mtime_ns of -1 saying look again),
-- with the memory files directly in it: what the check of a large store's folders starts from
CREATE TABLE folder (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, files INTEGER NOT NULL);
CREATE VIRTUAL TABLE memory_words USING fts5(name, description, body, tokenize = 'ascii');
-- the log entries no dream has distilled yet (store/undistilled.py), searched with the memories: an
-- entry's words are memory_words' row -id, in the body column
CREATE TABLE entry (
    id INTEGER PRIMARY KEY, entry_id TEXT NOT NULL UNIQUE, log TEXT NOT NULL, type TEXT,
    at TEXT NOT NULL, stamp REAL NOT NULL, text TEXT NOT NULL
);
-- what the entry table was made from: each day log not recorded as fully distilled, and the
-- distilled record, with their fingerprints (NULLs: gone): while they match, no log is read
CREATE TABLE entry_source (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ino INTEGER);
"""

_T = TypeVar("_T")


@dataclass(frozen=True)
class Found:
    """A memory a search found: as its file was when the index read it."""

    path: str
    name: str
    description: str
    type: str | None  # None: a log entry that names no type
    mtime: datetime
    body: str
    archived: bool
    bm25: float  # FTS5's BM25: negative, the lower the better
    entry: str | None = None  # a log entry no dream has distilled yet (its id): `path` is its day log,
    # `name` its id, `description` empty, `body` its text, `mtime` its time, `type` None when it names none


@dataclass(frozen=True)
class Named:
    """A memory file the index holds, for looking one up by path or name; `name` is None when
    the file could not be read as a memory."""

    path: str
    name: str | None
    archived: bool


class RecallIndex:
    """An open recall index, current as of its opening (with_recall_index)."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def search(self, words: Iterable[str], limit: int, memory_type: str | None = None,
               *, archived: bool = False, pending: bool = True) -> list[Found]:
        """The `limit` memories best matching any of `words` (the judge's words), best first; ties
        go to the newer memory. Archived ones too when `archived`; `pending`: the log entries no
        dream has distilled yet too, ranked in the same search (their text as a body)."""
        expression = match_expression(words)
        if not expression:
            return []
        rows = self._db.execute(
            "SELECT coalesce(m.path, e.log), coalesce(m.name, e.entry_id), coalesce(m.description, ''), "
            "coalesce(m.type, e.type), coalesce(m.mtime, e.at), coalesce(m.body, e.text), coalesce(m.archived, 0), "
            f"e.entry_id, bm25(memory_words, {NAME_WEIGHT}, {DESCRIPTION_WEIGHT}, {BODY_WEIGHT}) AS score "
            "FROM memory_words LEFT JOIN memory AS m ON m.id = memory_words.rowid "
            "LEFT JOIN entry AS e ON e.id = -memory_words.rowid "
            "WHERE memory_words MATCH ? "
            "AND ((m.id IS NOT NULL AND (? OR m.archived = 0) AND (? IS NULL OR m.type = ?)) "
            "OR (e.id IS NOT NULL AND ? AND (? IS NULL OR e.type = ?))) "
            "ORDER BY score, coalesce(m.stamp, e.stamp) DESC, 1, 2 LIMIT ?",
            (expression, archived, memory_type, memory_type, pending, memory_type, memory_type, limit)).fetchall()
        return [Found(path, name, description, kind, datetime.fromisoformat(mtime), body, bool(archived_flag), score,
                      entry)
                for path, name, description, kind, mtime, body, archived_flag, entry, score in rows]

    def entry(self, entry_id: str) -> Found | None:
        """The undistilled log entry of this id (bm25 0), or None."""
        row = self._db.execute("SELECT log, entry_id, type, at, text FROM entry WHERE entry_id = ?",
                               (entry_id,)).fetchone()
        if row is None:
            return None
        log, found_id, kind, at, text = row
        return Found(log, found_id, "", kind, datetime.fromisoformat(at), text, archived=False, bm25=0.0,
                     entry=found_id)

    def file(self, path: str) -> Named | None:
        """The memory file at `path` (relative to the root), live or archived, readable or not."""
        row = self._db.execute("SELECT path, name, archived FROM memory WHERE path = ?", (path,)).fetchone()
        return None if row is None else Named(row[0], row[1], bool(row[2]))

    def named(self) -> list[Named]:
        """Every readable memory, live and archived, with its name."""
        rows = self._db.execute("SELECT path, name, archived FROM memory WHERE name IS NOT NULL ORDER BY path")
        return [Named(path, name, bool(archived)) for path, name, archived in rows]


def match_expression(words: Iterable[str]) -> str:
    """An FTS5 query matching any of `words`: each one quoted, so that no word is read as
    FTS5 syntax (AND, NEAR, a column filter, a `*`)."""
    quoted = ['"' + word.replace('"', '""') + '"' for word in dict.fromkeys(words) if word]
    return " OR ".join(quoted)


def words_of(text: str) -> str:
    """`text` as the index stores it: the judge's words and two-letter ones, space-joined."""
    return " ".join(word_sequence(text, SEARCH_SHORTEST))


# ---------------------------------------------------------------- opening, and keeping it current


def with_recall_index(paths: StoreLayout, tz: tzinfo | None, question: Callable[[RecallIndex], _T],
                      *, defer: bool = False) -> tuple[_T, "FullCheck | None"]:
    """`question`'s answer from the store's recall index, made current first, and the check it
    leaves owing (None: none). A damaged file is removed and built again; a file that cannot be
    used at all gives way to an index in memory.

    `defer` (what the command line asks): in a store of more than FULL_CHECK_FILES memory files
    only the folders are checked first, which tells every file added, removed or replaced (each
    write of auto-dream's, and of editors that save by renaming); the check of every file's
    fingerprint, which also tells a file written in place, is then owed: it comes back with the
    answer, for the caller to run once the answer is given (FullCheck.run, shell.run_owed_checks)."""
    file = paths.state / FILE_NAME
    for attempt in range(2):
        try:
            return _ask(_open(file), paths, tz, question, defer=defer)
        except _Damaged:
            pass
        except sqlite3.DatabaseError as error:
            if not _is_damage(error):
                break  # read-only, a full disk, an I/O error: not this file's fault, nothing to remove
        except OSError:  # its folder cannot be made, the file cannot be created
            break
        if attempt == 0:
            _remove(file)
    db = sqlite3.connect(":memory:", isolation_level=None)
    _create(db)
    return _ask(db, paths, tz, question, defer=False)


def _ask(db: sqlite3.Connection, paths: StoreLayout, tz: tzinfo | None, question: Callable[[RecallIndex], _T],
         *, defer: bool) -> tuple[_T, "FullCheck | None"]:
    try:
        owed = FullCheck(paths, tz) if _update(db, paths, tz, defer=defer) else None
        _update_entries(db, paths, tz)
        return question(RecallIndex(db)), owed
    finally:
        db.close()


# ---------------------------------------------------------------- the full check, owed by a large store

# Up to this many memory files, every recall checks each file's fingerprint before it answers
# (about 40 ms at 5,000 files here: bench/recall.py --scale); past it, a recall from the command
# line checks the folders first and each file after it has answered.
FULL_CHECK_FILES = 5_000
# A folder whose mtime is this close to the moment it was listed may change again within the same
# tick of the file system's clock, its mtime unchanged: it is recorded as "look again" (git's
# "racy" index entries, the same problem).
RACY_NS = 2_000_000_000

@dataclass(frozen=True)
class FullCheck:
    """The check of every file a recall of a large store left owing (with_recall_index's
    `defer`): the caller runs it once its answer is given, here (`run`, in a thread of a
    long-lived caller) or in a process of its own (shell.run_owed_checks)."""

    paths: StoreLayout
    tz: tzinfo | None

    def run(self) -> None:
        full_check(self.paths, self.tz)


def full_check(paths: StoreLayout, tz: tzinfo | None) -> None:
    """The index made current for every file, unless another process is at it or anything
    stands in the way (the next recall owes it again)."""
    lock = check_lock(paths)
    if lock is not None:
        try:
            check_every_file(paths, tz)
        finally:
            os.close(lock)


def check_lock(paths: StoreLayout) -> int | None:
    """The full check's lock file, opened and locked (flock: let go when the last process holding
    it ends, however it ends); None when another process holds it or it cannot be had."""
    try:
        fd = os.open(paths.state / SWEEP_LOCK_NAME, os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0),
                     FILE_MODE)
    except OSError:
        return None
    try:
        import fcntl
    except ImportError:  # no flock (Windows): no check runs behind a recall there to be kept apart
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def check_every_file(paths: StoreLayout, tz: tzinfo | None) -> None:
    """The index made current for every file; anything in the way leaves it to the next recall.
    The caller holds check_lock."""
    file = paths.state / FILE_NAME
    try:
        _refuse_links(file)
        db = _connect(file, BUSY_SECONDS)
        try:
            _update(db, paths, tz)
        finally:
            db.close()
    except (OSError, sqlite3.Error, _Damaged, StoreError):
        pass


def refresh_paths(paths: StoreLayout, tz: tzinfo | None, changed: Iterable[str]) -> None:
    """After a dream: the index, if there is one, made current for the files the dream wrote
    or removed (paths relative to the root; others are ignored). Anything in the way (another
    process updating it, a damaged file) leaves it as it is: the next recall catches up."""
    file = paths.state / FILE_NAME
    if not file.is_file() or file.is_symlink():
        return
    on_disk = _Files({}, set())
    asked: set[str] = set()
    for path in changed:
        archived = _archived(paths, path)
        if archived is None:
            continue
        asked.add(path)
        try:
            seen = fingerprint(paths.root / path)
        except OSError:  # cannot be looked at now: left to the next recall
            asked.discard(path)
            continue
        if seen is not None:
            on_disk.fingerprints[path] = seen
            if archived:
                on_disk.archived.add(path)
    if not asked:
        return
    try:
        db = _connect(file, DREAM_BUSY_SECONDS)
    except sqlite3.Error:
        return
    try:
        if _is_this_version(db):
            _write(db, paths, tz, on_disk, asked)
    except (sqlite3.Error, _Damaged):
        pass
    finally:
        db.close()


def _archived(paths: StoreLayout, path: str) -> bool | None:
    """Whether `path` is an archived memory file (True), a live one (False), or neither (None)."""
    archive = paths.memory_folder(archived=True) + "/"
    if path.startswith(archive):
        return True if path.endswith(paths.archive_ext) else None
    return False if paths.is_memory_path(path) and path.endswith(".md") else None


@dataclass(frozen=True)
class _Files:
    """Memory files on disk: the fingerprint of each, by path, and which of them are archived."""

    fingerprints: dict[str, Fingerprint]
    archived: set[str]


def _memory_files(paths: StoreLayout, stamps: dict[str, FolderStamp]) -> _Files:
    """Every memory file of the store, live and archived, as scan.scan_store finds them; the
    stamp of every folder walked goes to `stamps`."""
    found = _Files({}, set())
    for archived in (False, True):
        folder = paths.memory_folder(archived=archived)
        files, _ = walk_memory_files(paths.root / folder, folder, ordered=False,
                                     ext=paths.archive_ext if archived else ".md", stamps=stamps)
        found.fingerprints.update(files)
        if archived:
            found.archived.update(path for path, _ in files)
    return found


_FolderRow = tuple[int, int, int]  # a row of the folder table: mtime_ns, ino, files directly in it


def _update(db: sqlite3.Connection, paths: StoreLayout, tz: tzinfo | None, *, defer: bool = False) -> bool:
    """Make the index hold every memory file as it is now: read the new and changed ones,
    forget the ones gone. Skipped when another process holds the write lock too long. With
    `defer`, a large store's folders only (with_recall_index): then True, the full check owed."""
    current = _is_this_version(db)
    recorded = _recorded_folders(db) if current else {}
    if defer and recorded and sum(files for _, _, files in recorded.values()) > FULL_CHECK_FILES:
        _update_folders(db, paths, tz, recorded)
        return True
    started, stamps = time.time_ns(), dict[str, FolderStamp]()
    on_disk = _memory_files(paths, stamps)
    folders = _folder_rows(stamps, on_disk.fingerprints, started)
    if current:
        stale, gone = _stale(db, on_disk.fingerprints)
        if not stale and not gone and folders == recorded:
            return False
    _write(db, paths, tz, on_disk, None, folders)
    return False


def _update_folders(db: sqlite3.Connection, paths: StoreLayout, tz: tzinfo | None,
                    recorded: dict[str, _FolderRow]) -> None:
    """The index made current for what the folders tell: a folder whose stamp changed is listed
    again, each entry's inode coming with its name, and only its files that are new, of another
    inode, or gone are looked at; a new folder is walked whole. A file written in place keeps
    its folder's stamp and its own inode: only the full check sees it."""
    started = time.time_ns()
    changed = [folder for folder, (mtime_ns, ino, _) in recorded.items()
               if folder_stamp(paths.root / folder) != (mtime_ns, ino)]
    if not changed:
        return
    archive = paths.memory_folder(archived=True)
    roots = {paths.memory_folder(archived=False), archive}
    on_disk, asked = _Files({}, set()), set[str]()
    folders: dict[str, _FolderRow | None] = {}
    for folder in changed:
        archived = folder == archive or folder.startswith(archive + "/")
        ext = paths.archive_ext if archived else ".md"
        listed = list_folder(str(paths.root / folder), folder, flat=folder == "", ext=ext, odd=[], fingerprints=False)
        if listed is None:
            if folder_stamp(paths.root / folder) != ABSENT:
                continue  # there, but cannot be listed now: as the index holds it, looked at again next time
            inodes, subfolders, stamp = {}, [], ABSENT
        else:
            inodes, subfolders, stamp = dict(listed[0]), listed[1], listed[2]
        held = _inodes_in(db, folder, nested=any(other.startswith(folder + "/") for other in recorded))
        # a file new, gone, or of another inode (replaced) is asked again; _write compares its
        # fingerprint with the index's under the lock
        for path in {path for path, _ in inodes.items() - held.items()} | (held.keys() - inodes.keys()):
            asked.add(path)
            seen = fingerprint(paths.root / path)
            if seen is not None:
                on_disk.fingerprints[path] = seen
                if archived:
                    on_disk.archived.add(path)
        for start, relative in subfolders:
            if relative in recorded:
                continue
            stamps: dict[str, FolderStamp] = {}
            files, _ = walk_memory_files(Path(start), relative, ordered=False, ext=ext, stamps=stamps)
            on_disk.fingerprints.update(files)
            asked.update(path for path, _ in files)
            if archived:
                on_disk.archived.update(path for path, _ in files)
            folders.update(_folder_rows(stamps, (path for path, _ in files), started))
        gone = stamp == ABSENT and folder not in roots
        folders[folder] = None if gone else (*_settled(stamp, started), len(inodes))
    _write(db, paths, tz, on_disk, asked, folders)


def _folder_rows(stamps: dict[str, FolderStamp], files: Iterable[str], started: int) -> dict[str, _FolderRow]:
    """The folder table's rows for the folders a walk begun at `started` stamped, `files` the
    paths of the memory files it found."""
    counts = Counter(path.rpartition("/")[0] for path in files)
    return {folder: (*_settled(stamp, started), counts[folder]) for folder, stamp in stamps.items()}


def _settled(stamp: FolderStamp, started: int) -> FolderStamp:
    """`stamp` as recorded: a folder changed too close to the listing is recorded as "look again"."""
    return (-1, stamp[1]) if stamp != ABSENT and stamp[0] > started - RACY_NS else stamp


def _recorded_folders(db: sqlite3.Connection) -> dict[str, _FolderRow]:
    return {path: (mtime_ns, ino, files) for path, mtime_ns, ino, files in db.execute("SELECT * FROM folder")}


def _inodes_in(db: sqlite3.Connection, folder: str, *, nested: bool) -> dict[str, int]:
    """The inode the index holds of each file directly in `folder` (read through the covering
    index memory_seen: no body is read); `nested`: the folder has subfolders, whose files are
    left out."""
    if folder:
        rows = db.execute("SELECT path, ino FROM memory WHERE path > ? AND path < ?",
                          (folder + "/", folder + "0"))  # "0" follows "/": every path under folder/
    else:
        rows = db.execute("SELECT path, ino FROM memory")
    if folder == "" or nested:  # a Claude Code folder's root holds the archive's folder too
        start = len(folder) + 1 if folder else 0
        return {path: ino for path, ino in rows if "/" not in path[start:]}
    return dict(rows)


def _stale(db: sqlite3.Connection, on_disk: dict[str, Fingerprint],
           asked: set[str] | None = None) -> tuple[list[str], list[str]]:
    """(the files of `on_disk` the index does not hold as they are, the paths it holds that are
    gone); with `asked`, only among those paths."""
    if asked is None:
        rows = db.execute("SELECT path, size, mtime_ns, ino FROM memory").fetchall()
    else:
        rows = _select_in(db, "SELECT path, size, mtime_ns, ino FROM memory WHERE path IN ({})", sorted(asked))
    # a dict and one comparison per file: at 10,000 memories this is a hundredth of a second
    stored = {path: (size, mtime_ns, ino) for path, size, mtime_ns, ino in rows}
    if asked is not None:
        on_disk = {path: seen for path, seen in on_disk.items() if path in asked}
    stale = sorted(path for path, seen in on_disk.items() if stored.get(path) != seen)
    return stale, sorted(stored.keys() - on_disk.keys())


def _write(db: sqlite3.Connection, paths: StoreLayout, tz: tzinfo | None, on_disk: _Files,
           asked: set[str] | None, folders: dict[str, _FolderRow] | dict[str, _FolderRow | None] | None = None,
           ) -> None:
    """One write transaction: what is stale is asked again under the lock, then read and
    written (with `asked`, only among those paths). A lock not had in time: nothing is written.
    `folders`: the folder table's rows, all of them (`asked` None) or those changed (a None
    row: the folder is gone)."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if _is_busy(error):
            return  # another process is updating it: this search answers from the index as it stands
        raise
    try:
        fresh = not _is_this_version(db)
        if fresh:
            _reset(db)
        stale, gone = _stale(db, on_disk.fingerprints, asked)
        ids = [row_id for (row_id,) in _select_in(db, "SELECT id FROM memory WHERE path IN ({})", [*stale, *gone])]
        _select_in(db, "DELETE FROM memory_words WHERE rowid IN ({})", ids)
        _select_in(db, "DELETE FROM memory WHERE id IN ({})", ids)
        for path in stale:
            seen, archived = on_disk.fingerprints[path], path in on_disk.archived
            # read_memory by its module name, so that a test can count the files read
            _insert(db, path, seen, archived=archived,
                    read=read_memory(paths.root / path, paths.root, tz, paths.untyped))
        if folders is not None:
            if asked is None:
                db.execute("DELETE FROM folder")
            for path, row in folders.items():
                if row is None:
                    db.execute("DELETE FROM folder WHERE path = ?", (path,))
                else:
                    db.execute("INSERT OR REPLACE INTO folder VALUES (?,?,?,?)", (path, *row))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite rolls some failures (a full disk) back itself
            db.execute("ROLLBACK")
        raise
    if fresh:
        _use_wal(db)


# ---------------------------------------------------------------- the undistilled log entries


def _update_entries(db: sqlite3.Connection, paths: StoreLayout, tz: tzinfo | None) -> None:
    """Make the entry table hold the log entries no dream has distilled yet, as dream's gather finds
    them (store.undistilled). The logs recorded as fully distilled are only listed and stat'ed; the
    others and the distilled record are compared by fingerprint with what the table was made from,
    and read again only when one changed (an append, a dream). Skipped when another process holds the
    write lock too long, or the index is not this version's (then the memories were not written
    either)."""
    logs, _ = open_logs(paths)
    sources: dict[str, _Source] = {log.relative: log.seen_as for log in logs}
    if logs:  # a dream changes which of their entries are undistilled
        sources[paths.relative(distilled_path(paths))] = fingerprint(distilled_path(paths))
    if not _is_this_version(db) or _entry_sources(db) == sources:
        return
    found = read_undistilled(logs, read_distilled_ids(paths) if logs else set())
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if _is_busy(error):
            return
        raise
    try:
        if _is_this_version(db):
            ids = [row_id for (row_id,) in db.execute("SELECT id FROM entry")]
            _select_in(db, "DELETE FROM memory_words WHERE rowid IN ({})", [-row_id for row_id in ids])
            db.execute("DELETE FROM entry")
            db.execute("DELETE FROM entry_source")
            for entry in found.entries:
                at = aware(entry.at, tz)
                row_id = db.execute("INSERT INTO entry (entry_id, log, type, at, stamp, text) VALUES (?,?,?,?,?,?)",
                                    (entry.id, found.entry_logs[entry.id], entry.type, at.isoformat(), at.timestamp(),
                                     entry.text)).lastrowid
                db.execute("INSERT INTO memory_words (rowid, name, description, body) VALUES (?,?,?,?)",
                           (-(row_id or 0), "", "", words_of(entry.text)))
            for path, seen in sources.items():
                db.execute("INSERT INTO entry_source VALUES (?,?,?,?)", (path, *(seen or (None, None, None))))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


_Source = Fingerprint | None


def _entry_sources(db: sqlite3.Connection) -> dict[str, _Source]:
    return {path: (None if size is None else (size, mtime_ns, ino))
            for path, size, mtime_ns, ino in db.execute("SELECT * FROM entry_source")}


def read_memory(path: Path, root: Path, tz: tzinfo | None, untyped: str | None) -> "Memory | Unreadable":
    """store.memory.read_memory, imported the first time a file must be read: a recall over an
    index that is current never loads the YAML parser."""
    from auto_dream.store.memory import read_memory as read

    return read(path, root, tz, untyped)


def _insert(db: sqlite3.Connection, path: str, seen: Fingerprint, *, archived: bool,
            read: "Memory | Unreadable") -> None:
    if isinstance(read, Unreadable):
        db.execute("INSERT INTO memory (path, size, mtime_ns, ino, archived) VALUES (?,?,?,?,?)",
                   (path, *seen, int(archived)))
        return
    row_id = db.execute(
        "INSERT INTO memory (path, size, mtime_ns, ino, archived, type, name, description, body, mtime, stamp) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (path, *seen, int(archived), read.type, read.name, read.description, read.body,
         read.mtime.isoformat(), read.mtime.timestamp())).lastrowid
    db.execute("INSERT INTO memory_words (rowid, name, description, body) VALUES (?,?,?,?)",
               (row_id, words_of(read.name), words_of(read.description), words_of(read.body)))


# ---------------------------------------------------------------- the file


class _Damaged(Exception):
    """The file holds something this version cannot clear away: it is removed and built again."""


def _refuse_links(file: Path) -> None:
    """StoreError when the index, or SQLite's files beside it, is a symbolic link or not a
    regular file: SQLite would follow a link and write the index (or drop a foreign database's
    tables as an old version's) wherever it leads."""
    for path in (file, file.with_name(file.name + "-wal"), file.with_name(file.name + "-shm")):
        kind = kind_at(path)
        if kind is not None:
            raise StoreError(f"{path} is {'a symbolic link' if kind == 'a symbolic link' else 'not a regular file'}: "
                             "the recall index is auto-dream's own file; remove it (it is made again)")


def _open(file: Path) -> sqlite3.Connection:
    """The index file, created (owner only) when missing."""
    _refuse_links(file)
    if not file.exists():
        make_dirs(file.parent)
        # owner only, before SQLite opens it; never through a symlink planted in its place
        os.close(os.open(file, os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), FILE_MODE))
    return _connect(file, BUSY_SECONDS)


def _connect(file: Path, busy_seconds: float) -> sqlite3.Connection:
    db = sqlite3.connect(f"{Path(os.path.abspath(file)).as_uri()}?mode=rw", uri=True, timeout=busy_seconds,
                         isolation_level=None)
    try:
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # a file that is not SQLite fails here
    except sqlite3.Error:
        db.close()
        raise
    return db


def _create(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute(f"PRAGMA user_version = {VERSION}")


def _reset(db: sqlite3.Connection) -> None:
    """Inside a write transaction: whatever the file held (nothing, or a foreign version's
    tables) replaced by this version's empty index. Dropping in place, not removing the file,
    keeps every other process's open connection on the same file."""
    try:
        tables = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        # a virtual table first: it takes its own shadow tables with it
        for name, sql in sorted(tables, key=lambda table: not (table[1] or "").startswith("CREATE VIRTUAL")):
            db.execute(f"DROP TABLE IF EXISTS {_quoted(name)}")
        for kind, name in db.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall():
            db.execute(f"DROP {kind} IF EXISTS {_quoted(name)}")
    except sqlite3.Error as error:  # a virtual table of a module this SQLite lacks, …
        raise _Damaged(str(error)) from None
    _create(db)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _use_wal(db: sqlite3.Connection) -> None:
    """WAL mode (kept by the file once set): readers never wait for a writer. When another
    process is in the way it stays in rollback mode, which is as safe, only slower to share."""
    try:
        db.execute("PRAGMA journal_mode = WAL").fetchall()
    except sqlite3.OperationalError:
        pass


@cache
def _schema() -> list[tuple]:
    """Every table of this version, as SQLite records them (FTS5's own tables included)."""
    db = sqlite3.connect(":memory:")
    try:
        _create(db)
        return db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    finally:
        db.close()


def _is_this_version(db: sqlite3.Connection) -> bool:
    """This version's index, tables as this version makes them (cache.py checks its file so too)."""
    if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
        return False
    return db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall() == _schema()


def _is_damage(error: sqlite3.DatabaseError) -> bool:
    """A file that is not SQLite, or one whose pages or FTS5 index are damaged."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return not isinstance(error, sqlite3.OperationalError)
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _remove(file: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            Path(f"{file}{suffix}").unlink(missing_ok=True)
        except OSError:
            pass


def _select_in(db: sqlite3.Connection, sql: str, values: list) -> list[tuple]:
    """`sql` with its `IN ({})` filled for `values`, a chunk of them per statement."""
    rows: list[tuple] = []
    for start in range(0, len(values), _CHUNK):
        chunk = values[start:start + _CHUNK]
        rows.extend(db.execute(sql.format(",".join("?" * len(chunk))), chunk))
    return rows
