"""The parse cache and pair index, `.state/cache.sqlite3`: a nightly dream costs the day's work.

For every memory file a dream has read, the cache holds the file's size and mtime (ns) and
what was read from it. When size and mtime are as cached the file is not read again, and it
counts as unchanged since the last dream, which is what makes a dream incremental.

It is one SQLite file (the standard library's sqlite3) because a run at 100,000 memories
must read only part of it: what it loads of every memory is its path, size and mtime, to
tell what changed. The rest is read when a run asks for it: a memory's name, type and
dates (`memories`), its body, sources and extra keys when they are used (`CachedMemory`),
its word profile for the pair checks, the newest memories for MEMORY.md (`top_paths`), the
ones that cite files for the staleness check (`cited`). JSON would have to be decoded
whole; pickle is never used, since a store may sit in a shared repository and loading it
must not run code.

The same file is the pair index (pairs.stored_pairs): each memory's significant words as
postings, each with how far into the memory's *prefix* the word lies, so changed memories
and new entries find their partners without loading the store. The word order behind the
prefixes (rarest first) is fixed when a word is first stored: a word first seen later ranks
below every stored word, so a stored prefix never needs recomputing. Any fixed order keeps
the search exact; rarest-first only keeps the lists it reads short.

dream saves the cache when it finishes (one transaction: a killed save leaves the previous
cache); list, check and dry runs only read it. A missing, damaged or foreign-version file, or
one whose tables, columns or indexes are not exactly this version's, is a miss: its memories
are parsed again. A value inside it that cannot be read (text where a date or JSON should
be) is found only when a run reads it: the command stops with one line asking to delete the
file, which holds nothing the memory files do not.
"""

import functools
import gc
import json
import os
import sqlite3
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Concatenate, Generic, ParamSpec, TypeVar, overload

from auto_dream.errors import StoreError
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, Profile
from auto_dream.judge.staleness import References
from auto_dream.judge.status import STATUS_KINDS, Status
from auto_dream.store.files import Fingerprint
from auto_dream.store.index import SAME_DAY_SLACK
from auto_dream.store.memory import Memory
from auto_dream.store.parsed import Parsed
from auto_dream.store.paths import FILE_MODE, StoreLayout

# PRAGMA user_version of the file; any other value is a foreign cache. Raise it whenever what
# is stored would read differently now (the schema, how frontmatter is read, what the judge
# derives from a text: words, stems, negation scopes, references), so every memory is parsed again.
VERSION = 22
FILE_NAME = "cache.sqlite3"
Posting = tuple[int, int, int, int]  # (word rank, memory row id, the memory's word count, the word's position)
Row = tuple  # a row as sqlite3 returns it: its values are what the SQL selects
_CHUNK = 500  # host parameters per statement, well under SQLite's limit
# The partial index and the column of the postings of the memories with each ground (similarity)
_GROUNDED = {AIMS: ("posting_aiming", "aims"), PINS: ("posting_pinning", "pins"),
             ANCHORS: ("posting_anchored", "anchored")}

_SCHEMA = """
-- what every dream reads of every memory, apart from what it reads of a few: a scan of
-- this table does not wade through bodies
CREATE TABLE memory (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    name TEXT NOT NULL, description TEXT NOT NULL, type TEXT NOT NULL, mtime TEXT NOT NULL,
    stamp REAL NOT NULL, -- mtime as POSIX seconds: the order of MEMORY.md
    pinned INTEGER NOT NULL, type_source TEXT NOT NULL, refs TEXT,
    status TEXT -- what a person wrote of the memory's own status (judge.status) as JSON, or NULL
);
CREATE INDEX memory_newest ON memory (pinned, stamp);
-- what every run reads of every memory, to tell what changed: scanned without the rest of the rows
CREATE INDEX memory_seen ON memory (path, size, mtime_ns);
CREATE INDEX memory_cited ON memory (id) WHERE refs IS NOT NULL;
-- the few memories a person marked deprecated, superseded…: MEMORY.md leaves them out and counts them
CREATE INDEX memory_marked ON memory (id) WHERE status IS NOT NULL;
CREATE TABLE memory_text (
    id INTEGER PRIMARY KEY,
    body TEXT NOT NULL, sources TEXT NOT NULL, extra TEXT, words TEXT NOT NULL, profile TEXT NOT NULL
);
-- the words' ranks, int32: what the pair search compares, for thousands of candidates a run,
-- in small rows of their own
CREATE TABLE memory_ranks (id INTEGER PRIMARY KEY, ranks BLOB NOT NULL);
CREATE TABLE word (word TEXT PRIMARY KEY, rank INTEGER NOT NULL UNIQUE) WITHOUT ROWID;
-- A memory of `size` words holds the word at `position` in rank order. reach = (size - position)
-- / size: the word is in the memory's prefix at threshold t when reach >= t. aims: the memory
-- carries a negation or change scope (Profile.aims), so it can contradict at the lower threshold;
-- pins: it pins something down (Profile.pins), so it is compared from there with another that does;
-- anchored: Chinese or Japanese text with an anchor (Profile.anchored), compared with another from lower still
CREATE TABLE posting (
    rank INTEGER NOT NULL, reach REAL NOT NULL, memory INTEGER NOT NULL, size INTEGER NOT NULL,
    position INTEGER NOT NULL, aims INTEGER NOT NULL, pins INTEGER NOT NULL, anchored INTEGER NOT NULL,
    PRIMARY KEY (rank, reach, memory)
) WITHOUT ROWID;
-- the few memories that aim, and those that pin, for the searches from the lower threshold, without
-- a walk through every posting
CREATE INDEX posting_aiming ON posting (rank, reach, memory, size, position) WHERE aims = 1;
CREATE INDEX posting_pinning ON posting (rank, reach, memory, size, position) WHERE pins = 1;
CREATE INDEX posting_anchored ON posting (rank, reach, memory, size, position) WHERE anchored = 1;
"""


_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


def _damage_is_an_error(
        method: "Callable[Concatenate[ParseCache, _P], _R]") -> "Callable[Concatenate[ParseCache, _P], _R]":
    """What is read lazily from the cache: a value it cannot read stops the command with one line."""

    @functools.wraps(method)
    def reading(self: "ParseCache", *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, ValueError, TypeError) as error:
            detail = " ".join(str(error).split())[:200]
            raise StoreError(f"the parse cache {self.file} is damaged ({detail}): delete it and run again; "
                             "it holds nothing the memory files do not") from None

    return reading


class _Stored(Generic[_T]):
    """A field of a cached memory that is read from the cache file the first time it is used."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> "_Stored[_T]": ...
    @overload
    def __get__(self, instance: "CachedMemory", owner: type | None = None) -> _T: ...

    def __get__(self, instance: "CachedMemory | None", owner: type | None = None) -> "_T | _Stored[_T]":
        if instance is None:
            return self
        instance.__dict__["_cache"]._load_body(instance)
        value: _T = instance.__dict__[self.name]
        return value


class _Pinned:
    """`pinned` as the cache row has it (a plain attribute: the index asks it of every memory),
    or, for a copy made by dataclasses.replace, from the extra keys as Memory has it."""

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> "_Pinned": ...
    @overload
    def __get__(self, instance: Memory, owner: type | None = None) -> bool: ...

    def __get__(self, instance: Memory | None, owner: type | None = None) -> "bool | _Pinned":
        if instance is None:
            return self
        return instance.extra.get("pinned") is True


class CachedMemory(Memory):
    """A Memory from the cache: body, sources and extra keys are read when first used.

    Unhashable, as Python makes every class that defines __eq__ alone: hashing one would
    read its body from the cache."""

    body: _Stored[str] = _Stored()
    sources: _Stored[tuple[str, ...]] = _Stored()
    extra: _Stored[dict] = _Stored()
    pinned: _Pinned = _Pinned()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Memory):
            return _fields(self) == _fields(other)
        return NotImplemented


class _Text:
    """The text of a cached memory for its word profile, read only if a negation check needs it."""

    def __init__(self, cache: "ParseCache", path: str):
        self.cache, self.path = cache, path

    def text(self) -> str:
        return self.cache.parsed([self.path])[self.path].memory.text()


def _fields(memory: Memory) -> tuple[object, ...]:
    return (memory.path, memory.name, memory.description, memory.type, memory.mtime, memory.body,
            memory.sources, memory.type_source, memory.read_only)


class ParseCache:
    def __init__(self, file: Path):
        self.file = file
        self.rows: dict[str, tuple[str, int, int, int]] = {}  # path -> (path, row id, size, mtime_ns), as loaded
        self.found = False  # a readable cache file of this version was there
        self._db: sqlite3.Connection | None = None
        self._puts: dict[str, Parsed] = {}
        self._drops: set[str] = set()
        # what the pair search has read this run: the two searches of a dream ask much the same
        self._postings_read: dict[tuple[int, float | None, int], list[Posting]] = {}
        self._rank_sets: dict[int, array[int]] = {}

    @classmethod
    def load(cls, paths: StoreLayout, *, writable: bool = False) -> "ParseCache":
        """The cache as the last dream left it. `writable` (a dream holding the lock) also rolls
        back a save that was killed; readers open it read-only and never create it."""
        cache = cls(paths.state / FILE_NAME)
        if not cache.file.is_file():
            return cache
        try:
            cache._db = _connect(cache.file, writable=writable)
            if not _is_this_version(cache._db):
                cache._close()
                return cache
            with _no_gc():  # a hundred thousand new tuples, no cycles: collecting is pure cost
                rows = cache._db.execute("SELECT path, id, size, mtime_ns FROM memory").fetchall()
                cache.rows = dict(zip(map(itemgetter(0), rows), rows))  # no Python code per row
            cache.found = True
        except sqlite3.Error:
            cache.rows = {}
            cache._close()
        return cache

    def is_current(self, path: str, fingerprint: Fingerprint | None) -> bool:
        """Whether the file's size and mtime are as cached (a copied store, another inode, still is)."""
        row = self.rows.get(path)
        return row is not None and fingerprint is not None and row[2] == fingerprint[0] and row[3] == fingerprint[1]

    def get(self, path: str, fingerprint: Fingerprint | None) -> Parsed | None:
        """The cached parse of one file when it is current, else None."""
        return self.parsed([path]).get(path) if self.is_current(path, fingerprint) else None

    @_damage_is_an_error
    def parsed(self, paths: list[str] | None = None) -> dict[str, Parsed]:
        """The cached parses of `paths` (None: of every cached memory), without bodies."""
        columns = "id, path, size, mtime_ns, ino, name, description, type, mtime, pinned, type_source, refs, status"
        with _no_gc():  # a hundred thousand new objects, no cycles: collecting is pure cost
            if paths is None:
                rows = self._query(f"SELECT {columns} FROM memory", ())
            else:
                rows = self._select_in(f"SELECT {columns} FROM memory WHERE path IN ({{}})", list(paths))
            return self._parsed_rows(rows)

    def _parsed_rows(self, rows: list[Row]) -> dict[str, Parsed]:
        # frozen dataclasses built without their generated __init__, which costs more than the row
        new, set_dict = object.__new__, object.__setattr__
        no_refs = References((), ())
        entries = {}
        for (row_id, path, size, mtime_ns, ino, name, description, kind, mtime, pinned, type_source, refs,
             status) in rows:
            memory = new(CachedMemory)
            set_dict(memory, "__dict__", {
                "path": path, "name": name, "description": description, "type": kind,
                "mtime": datetime.fromisoformat(mtime), "type_source": type_source, "read_only": None,
                "pinned": pinned == 1, "status": None if status is None else _status(status),
                "_cache": self, "_id": row_id})
            if refs is None:
                cited = no_refs
            else:
                cited = _references(refs)
            parsed = new(Parsed)
            set_dict(parsed, "__dict__", {"fingerprint": (size, mtime_ns, ino), "memory": memory, "profile": None,
                                          "refs": cited})
            entries[path] = parsed
        return entries

    @_damage_is_an_error
    def top_paths(self, count: int, *, pinned_first: bool = True) -> list[str]:
        """At least the first `count` cached memories in MEMORY.md's order (every pinned one,
        then the newest, with every one of the last one's day, index.SAME_DAY_SLACK;
        `pinned_first` False: the newest of all), maybe more: the caller sorts them."""
        if count <= 0:
            return []
        newest = "SELECT path FROM memory WHERE pinned = ? ORDER BY stamp DESC LIMIT ?"
        if not pinned_first:
            return [p for (p,) in (*self._query(newest, (1, count)), *self._query(newest, (0, count)))]
        pinned = [p for (p,) in self._query("SELECT path FROM memory WHERE pinned = 1", ())]
        last = self._query("SELECT stamp FROM memory WHERE pinned = 0 ORDER BY stamp DESC LIMIT 1 OFFSET ?",
                           (count - 1,))
        if not last:  # fewer than `count`: all of them
            return [*pinned, *(p for (p,) in self._query("SELECT path FROM memory WHERE pinned = 0", ()))]
        ties = self._query("SELECT path FROM memory WHERE pinned = 0 AND stamp >= ?",
                           (last[0][0] - SAME_DAY_SLACK.total_seconds(),))
        return [*pinned, *(p for (p,) in ties)]

    @_damage_is_an_error
    def older_than(self, moment: float) -> list[str]:
        """The cached unpinned memories whose mtime (POSIX seconds) is before `moment`."""
        return [p for (p,) in self._query("SELECT path FROM memory WHERE pinned = 0 AND stamp < ?", (moment,))]

    @_damage_is_an_error
    def marked(self) -> dict[str, Status]:
        """The cached memories a person marked deprecated, superseded… (Memory.status), by path."""
        return {path: _status(status)
                for path, status in self._query("SELECT path, status FROM memory WHERE status IS NOT NULL", ())}

    @_damage_is_an_error
    def cited(self) -> dict[str, References]:
        """The references of the cached memories that cite a file or symbol."""
        found = {}
        for path, refs in self._query("SELECT path, refs FROM memory WHERE refs IS NOT NULL", ()):
            found[path] = _references(refs)
        return found

    def put(self, parsed: Parsed) -> None:
        self._puts[parsed.memory.path] = parsed
        self._drops.discard(parsed.memory.path)

    def drop(self, path: str) -> None:
        self._puts.pop(path, None)
        if path in self.rows:
            self._drops.add(path)

    def paths(self) -> set[str]:
        """The memories the cache will hold once saved, as it stands."""
        return (self.rows.keys() - self._drops) | self._puts.keys()

    def keep_only(self, paths: set[str]) -> None:
        for path in [p for p in (*self.rows, *self._puts) if p not in paths]:
            self.drop(path)

    # ------------------------------------------------------------ reading parts on demand

    @_damage_is_an_error
    def _load_body(self, memory: CachedMemory) -> None:
        row = self._read("SELECT body, sources, extra FROM memory_text WHERE id = ?", memory.__dict__["_id"])
        body, sources, extra = row
        memory.__dict__.update(body=body, sources=tuple(json.loads(sources)),
                               extra=_decode_value(json.loads(extra)) if extra else {})

    @_damage_is_an_error
    def profile(self, path: str) -> Profile:
        """The word profile of a memory the cache holds as it is on disk."""
        words, rest = self._read("SELECT words, profile FROM memory_text WHERE id = ?", self.rows[path][1])
        return self._profile_of(path, words, rest)

    @_damage_is_an_error
    def profiles(self, paths: list[str]) -> dict[str, Profile]:
        """profile() of many memories, a few queries for all (a full dream asks of every memory)."""
        path_of = {self.rows[path][1]: path for path in paths}
        found = {path_of[row_id]: self._profile_of(path_of[row_id], words, rest) for row_id, words, rest in
                 self._select_in("SELECT id, words, profile FROM memory_text WHERE id IN ({})", list(path_of))}
        if len(found) != len(path_of):  # only a save in between could do it, and nothing reads after the save
            raise LookupError(f"the parse cache lost {len(path_of) - len(found)} rows")
        return found

    def _profile_of(self, path: str, words: str, rest: str) -> Profile:
        signals, replaced, negated, changed, pins, anchored = json.loads(rest)
        # its text is joined (and the body read) only if a negation needs it
        return Profile(frozenset(map(sys.intern, json.loads(words))), _set(signals), _set(replaced), _set(negated),
                       _set(changed), bool(pins), bool(anchored), source=_Text(self, path))

    def _read(self, sql: str, row_id: int) -> Row:
        row = self._db.execute(sql, (row_id,)).fetchone() if self._db is not None else None
        if row is None:  # only a save in between could do it, and nothing reads after the save
            raise LookupError(f"the parse cache lost row {row_id}")
        return row

    # ------------------------------------------------------------ the pair index (pairs.StoredPostings)

    @_damage_is_an_error
    def ranks(self, words: Iterable[str]) -> dict[str, int]:
        return dict(self._select_in("SELECT word, rank FROM word WHERE word IN ({})", list(words)))

    @_damage_is_an_error
    def document_frequency(self, words: Iterable[str]) -> dict[str, int]:
        """How many cached memories hold each word: its rarity, which weighs document similarity (judge)."""
        return dict(self._select_in("SELECT w.word, count(*) FROM word w JOIN posting p ON p.rank = w.rank "
                                    "WHERE w.word IN ({}) GROUP BY w.word", list(words)))

    @_damage_is_an_error
    def lowest_rank(self) -> int:
        rows = self._query("SELECT min(rank) FROM word", ())
        return rows[0][0] if rows and rows[0][0] is not None else 0

    def holders(self, ranks: Iterable[int], among: int = 0) -> dict[int, list[Posting]]:
        return self._postings(ranks, None, among)

    def prefix_holders(self, ranks: Iterable[int], threshold: float,
                       among: int = 0) -> dict[int, list[Posting]]:
        return self._postings(ranks, threshold, among)

    @_damage_is_an_error
    def _postings(self, ranks: Iterable[int], threshold: float | None, among: int) -> dict[int, list[Posting]]:
        """Postings (rank, memory, size, position) by rank, smallest memory first (`among`: of the
        memories with that ground, AIMS or PINS): one query for many words, each asked once a run."""
        ranks, memo = list(dict.fromkeys(ranks)), self._postings_read
        wanted = [rank for rank in ranks if (rank, threshold, among) not in memo]
        if wanted:
            index, column = _GROUNDED[among] if among else ("", "")
            # 1e-6 below: a float that rounds the wrong way can only lengthen a prefix
            sql = ("SELECT rank, memory, size, position FROM posting"
                   + (f" INDEXED BY {index}" if among else "") + " WHERE rank IN ({})"
                   + ("" if threshold is None else f" AND reach >= {threshold - 1e-6!r}")
                   + (f" AND {column} = 1" if among else "") + " ORDER BY rank, size")
            memo.update(((rank, threshold, among), []) for rank in wanted)
            for rank, rows in groupby(self._select_in(sql, wanted), key=itemgetter(0)):
                memo[rank, threshold, among] = list(rows)
        return {rank: memo[rank, threshold, among] for rank in ranks}

    @_damage_is_an_error
    def rank_sets(self, keys: Iterable[int]) -> "dict[int, array[int]]":
        wanted = [k for k in keys if k not in self._rank_sets]
        for row_id, blob in self._select_in("SELECT id, ranks FROM memory_ranks WHERE id IN ({})", wanted):
            ranks = self._rank_sets[row_id] = array("i")
            ranks.frombytes(blob)
        return self._rank_sets

    @_damage_is_an_error
    def paths_of(self, keys: Iterable[int]) -> dict[int, str]:
        return dict(self._select_in("SELECT id, path FROM memory WHERE id IN ({})", list(keys)))

    @_damage_is_an_error
    def bodies_holding(self, marks: Sequence[str]) -> set[str]:
        """The paths of the cached memories whose body holds any of `marks`, in one query: the
        bodies of the rest are never read (a full dream asks it of every memory)."""
        if not marks:
            return set()
        holds = " OR ".join("instr(t.body, ?) > 0" for _ in marks)
        rows = self._query(f"SELECT m.path FROM memory m JOIN memory_text t ON t.id = m.id WHERE {holds}",
                           tuple(marks))
        return {path for (path,) in rows}

    def _query(self, sql: str, values: tuple[object, ...]) -> list[Row]:
        return self._db.execute(sql, values).fetchall() if self._db is not None else []

    def _select_in(self, sql: str, values: Sequence[object]) -> list[Row]:
        return _select_in(self._db, sql, values) if self._db is not None else []

    # ------------------------------------------------------------ saving

    def save(self) -> bool:
        """Write what changed since the load, in one transaction. The cache holds nothing that
        is not in the memory files: one that is damaged is started afresh, and one that
        cannot be written now (locked, disk full) is left as it was, which only means more
        files are read next time. False when nothing could be saved."""
        if not self._puts and not self._drops and self.found:
            return True
        self._close()
        try:
            self._write()
        except sqlite3.OperationalError:  # locked, disk full: not now
            return False
        # damaged: start afresh with what this run read
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError):
            self._remove_file()
            self._drops.clear()  # what this run read is saved again, the rest is read again next time
            try:
                self._write()
            except (sqlite3.Error, OSError):
                return False
        except OSError:
            return False
        finally:
            self._puts.clear()
            self._drops.clear()
        return True

    def _write(self) -> None:
        if self.file.exists() and not self._is_current():
            self._remove_file()
        fresh = not self.file.exists()
        if fresh:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.file, os.O_CREAT | os.O_WRONLY, FILE_MODE))  # owner only, before SQLite opens it
        db = _connect(self.file, writable=True)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if fresh:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute(f"PRAGMA user_version = {VERSION}")
                self._write_changes(db)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            db.close()
        _remove_json_cache(self.file.parent / "cache")

    def _is_current(self) -> bool:
        try:
            db = _connect(self.file, writable=True)
            try:
                return _is_this_version(db)
            finally:
                db.close()
        except sqlite3.DatabaseError:
            return False

    def _write_changes(self, db: sqlite3.Connection) -> None:
        puts = [(p, profile) for p in self._puts.values() if (profile := _cacheable_profile(p)) is not None]
        removed: list[tuple[int, list[str]]] = []  # (row id, its words) of the rows that go or are replaced
        for path in sorted(self._drops | set(self._puts)):
            row = db.execute("SELECT memory.id, words FROM memory JOIN memory_text USING (id) WHERE path = ?",
                             (path,)).fetchone()
            if row is not None:
                removed.append((row[0], json.loads(row[1])))
        ranks: dict[str, int] = dict(_select_in(db, "SELECT word, rank FROM word WHERE word IN ({})",
                                                list({w for _, words in removed for w in words}
                                                     | {w for _, profile in puts for w in profile.words})))
        for row_id, words in removed:
            size = len(words)
            db.executemany("DELETE FROM posting WHERE rank = ? AND reach = ? AND memory = ?",
                           [(rank, (size - position) / size, row_id)
                            for position, rank in enumerate(sorted(ranks[word] for word in words))])
            db.execute("DELETE FROM memory WHERE id = ?", (row_id,))
            db.execute("DELETE FROM memory_text WHERE id = ?", (row_id,))
            db.execute("DELETE FROM memory_ranks WHERE id = ?", (row_id,))
        _rank_new_words(db, [profile.words for _, profile in puts], ranks)
        for parsed, profile in puts:
            memory, refs = parsed.memory, parsed.refs
            new_id = db.execute(
                "INSERT INTO memory (path, size, mtime_ns, ino, name, description, type, mtime, stamp, pinned, "
                "type_source, refs, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (memory.path, *parsed.fingerprint, memory.name, memory.description, memory.type,
                 memory.mtime.isoformat(), memory.mtime.timestamp(), int(memory.pinned), memory.type_source,
                 json.dumps([refs.files, refs.symbols]) if refs.files or refs.symbols else None,
                 None if memory.status is None else json.dumps(
                     [memory.status.kind, memory.status.quote, memory.status.points_to], ensure_ascii=False))
            ).lastrowid
            assert new_id is not None  # every INSERT into a rowid table sets it
            db.execute(
                "INSERT INTO memory_text (id, body, sources, extra, words, profile) VALUES (?,?,?,?,?,?)",
                (new_id, memory.body, json.dumps(memory.sources),
                 json.dumps(_encode_value(memory.extra)) if memory.extra else None,
                 json.dumps(sorted(profile.words)),
                 json.dumps([sorted(profile.signals), sorted(profile.replaced), sorted(profile.negated),
                             sorted(profile.changed), int(profile.pins), int(profile.anchored)])))
            db.execute("INSERT INTO memory_ranks (id, ranks) VALUES (?, ?)",
                       (new_id, array("i", sorted(ranks[word] for word in profile.words)).tobytes()))
            size, aims, pins, anchored = len(profile.words), int(profile.aims), int(profile.pins), int(profile.anchored)
            db.executemany("INSERT INTO posting (rank, reach, memory, size, position, aims, pins, anchored) "
                           "VALUES (?,?,?,?,?,?,?,?)",
                           [(rank, (size - position) / size, new_id, size, position, aims, pins, anchored)
                            for position, rank in enumerate(sorted(ranks[word] for word in profile.words))])

    def _remove_file(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.file}{suffix}").unlink(missing_ok=True)

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


_EMPTY: frozenset[str] = frozenset()


def _references(stored: str) -> References:
    """A memory's references as the cache keeps them: [files, symbols]."""
    files, symbols = json.loads(stored)
    return References(tuple(files), tuple(symbols))


def _status(stored: str) -> Status:
    """A memory's status as the cache keeps it: [kind, quote, points_to]."""
    kind, quote, points_to = json.loads(stored)
    if kind not in STATUS_KINDS:
        raise ValueError(f"a status of kind {kind!r}")
    return Status(kind, quote, tuple(points_to))


def _set(items: list[str]) -> frozenset[str]:
    return frozenset(items) if items else _EMPTY


@functools.cache
def _schema() -> list[Row]:
    """Every table, column and index of this version, as SQLite records them."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(_SCHEMA)
        return db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    finally:
        db.close()


def _is_this_version(db: sqlite3.Connection) -> bool:
    """The file's version is this one, and so are its tables, columns and indexes (a table
    dropped or redefined by hand would fail, or be misread, in the middle of a run)."""
    if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
        return False
    return db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall() == _schema()


def _connect(file: Path, *, writable: bool) -> sqlite3.Connection:
    mode = "rw" if writable else "ro"
    db = sqlite3.connect(f"{Path(os.path.abspath(file)).as_uri()}?mode={mode}", uri=True, timeout=10,
                         isolation_level=None)
    db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # a file that is not SQLite fails here
    return db


def _cacheable_profile(parsed: Parsed) -> Profile | None:
    """The profile to store with a parse, or None when it is not stored: one the cache already
    holds (profile None), and odd files (too deep, aliases, no frontmatter…), parsed each time."""
    memory = parsed.memory
    if memory.read_only is not None or _encode_value(memory.extra) is _UNSUPPORTED:
        return None
    return parsed.profile


def _select_in(db: sqlite3.Connection, sql: str, values: Sequence[object]) -> list[Row]:
    """`sql` with its `IN ({})` filled for `values`, a chunk of them per statement."""
    rows: list[Row] = []
    for start in range(0, len(values), _CHUNK):
        chunk = values[start:start + _CHUNK]
        rows.extend(db.execute(sql.format(",".join("?" * len(chunk))), chunk))
    return rows


def _rank_new_words(db: sqlite3.Connection, word_sets: list[frozenset[str]], ranks: dict[str, int]) -> None:
    """Rank the words no stored memory has (adding them to `ranks`): below every stored word, rarest lowest."""
    counts = Counter(word for words in word_sets for word in words if word not in ranks)
    new = sorted(counts, key=lambda w: (-counts[w], w))
    floor = db.execute("SELECT min(rank) FROM word").fetchone()[0] or 0
    added = {word: floor - 1 - place for place, word in enumerate(new)}
    db.executemany("INSERT INTO word (word, rank) VALUES (?, ?)", added.items())
    ranks.update(added)


def _remove_json_cache(folder: Path) -> None:
    """A `cache/` folder of JSON shards beside the database is this cache in an older form that
    nothing reads: it holds nothing the database does not, and would only take room."""
    if folder.is_dir():
        for shard in folder.glob("*.json"):
            shard.unlink(missing_ok=True)
        try:
            folder.rmdir()
        except OSError:
            pass


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: at 100k memories it triples the load time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------- extra keys in JSON

_UNSUPPORTED = object()


def _encode_value(value: object) -> object:
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, dict):
        encoded = {}
        for key, item in value.items():
            if not isinstance(key, str) or key.startswith("$"):
                return _UNSUPPORTED
            encoded[key] = _encode_value(item)
            if encoded[key] is _UNSUPPORTED:
                return _UNSUPPORTED
        return encoded
    if isinstance(value, list):
        items = [_encode_value(item) for item in value]
        return _UNSUPPORTED if any(item is _UNSUPPORTED for item in items) else items
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return _UNSUPPORTED


def _decode_value(value: object) -> object:
    if isinstance(value, dict):
        if set(value) == {"$datetime"}:
            return datetime.fromisoformat(value["$datetime"])
        if set(value) == {"$date"}:
            return date.fromisoformat(value["$date"])
        return {key: _decode_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode_value(item) for item in value]
    return value
