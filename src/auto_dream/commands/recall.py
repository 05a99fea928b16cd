"""`recall` and `show`: the memories that best answer a query, and one memory whole.

What an agent uses mid-conversation, past what MEMORY.md lists: `recall` searches every
memory through the recall index (store/recall_index.py), `show` opens the one it wants. Both find the
log entries no dream has distilled yet too (store/undistilled.py, as dream's gather finds them),
marked pending: what an agent appended this morning is found this afternoon, before any dream.
"""

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from auto_dream.errors import InputError, StoreError
from auto_dream.judge.words import SEARCH_SHORTEST, word_sequence, word_spans
from auto_dream.store.consult import append_consult
from auto_dream.store.context import StoreContext
from auto_dream.store.daylog import Entry, format_entry
from auto_dream.store.paths import check_memory_type
from auto_dream.store.recall_index import Found, FullCheck, RecallIndex, with_recall_index
from auto_dream.store.text import Unreadable, shown

if TYPE_CHECKING:
    from auto_dream.store.memory import Memory

SNIPPET_CHARS = 160  # of the memory's own text, the ** marks and … not counted
SNIPPET_LEAD = 40  # how much of the text before the first matched word a snippet shows
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class Hit:
    """One memory a recall found. `score` is BM25's, turned so that higher is better; `snippet`
    is a short piece of the memory's text around the first matched word, each matched word
    marked **so**."""

    path: str  # a pending entry's: its day log
    name: str  # a pending entry's: its id
    type: str | None  # None: a pending entry that names no type
    description: str
    score: float
    snippet: str
    mtime: datetime
    archived: bool = False
    entry: str | None = None  # the id of a log entry no dream has distilled yet, or None for a memory

    @property
    def pending(self) -> bool:
        return self.entry is not None

    @classmethod
    def of(cls, found: Found, words: frozenset[str]) -> "Hit":
        return cls(found.path, found.name, found.type, found.description, -found.bm25,
                   snippet(found, words), found.mtime, found.archived, found.entry)

    def as_json(self) -> dict[str, object]:
        found: dict[str, object] = {"path": self.path, "name": self.name, "type": self.type,
                                    "description": self.description, "score": self.score, "snippet": self.snippet,
                                    "pending": self.pending}
        if self.entry is not None:
            found.update(id=self.entry, at=self.mtime.isoformat(timespec="seconds"))
        return found


@dataclass(frozen=True)
class PendingEntry:
    """A log entry no dream has distilled yet, as `show` gives it: the fields of a Memory that
    `show` prints (`path` its day log, `name` its id, `body` its text, `mtime` its time), and the
    entry itself."""

    path: str
    name: str
    type: str | None
    mtime: datetime
    body: str
    description: str = ""
    sources: tuple[str, ...] = ()
    pending: bool = True

    @property
    def id(self) -> str:
        return self.name

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "type": self.type, "description": self.description,
                "mtime": self.mtime.isoformat(timespec="seconds"), "body": self.body, "sources": list(self.sources),
                "pending": True, "id": self.name}

    def text(self) -> str:
        """The entry as its day log holds it."""
        entry = Entry(self.mtime.replace(tzinfo=None), self.body, self.type)
        return f"{format_entry(entry)}".rstrip("\n") + "\n"


def check_query(query: str) -> None:
    if not query.strip():
        raise InputError("empty query: give the words to look for, e.g. `auto-dream recall deploy friday`")
    _check_unicode(query, "the query")


def _check_unicode(given: str, what: str) -> None:
    """InputError for text that holds a lone surrogate: a byte of the command line that is not
    UTF-8 (`recall $'caf\\xe9'`), or half an emoji sent by a JavaScript client. No memory holds
    such text, and the consult log could not record it."""
    try:
        given.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} '{shown(given)}' is not valid Unicode: it holds a byte that is not UTF-8, "
                         "or half a character") from None


def recall(context: StoreContext, query: str, limit: int = DEFAULT_LIMIT, memory_type: str | None = None,
           *, archived: bool = False, now: datetime | None = None) -> list[Hit]:
    """The memories that best answer `query`, best first: BM25 over name, description and body
    with the judge's words (English stems, CJK bigrams), name and description weighing more;
    ties go to the newer memory. The log entries no dream has distilled yet are ranked in the
    same search, their text as a body (Hit.pending). `archived`: the archive is searched too. No match: [].
    The lookup is recorded in the consult log at `now` (store.consult). Every file is checked
    for changes first."""
    return recall_owing(context, query, limit, memory_type, archived=archived, now=now, defer=False)[0]


def recall_owing(context: StoreContext, query: str, limit: int = DEFAULT_LIMIT, memory_type: str | None = None,
                 *, archived: bool = False, now: datetime | None = None,
                 defer: bool = True) -> tuple[list[Hit], FullCheck | None]:
    """recall's hits, and the full check a large store leaves owing when `defer` lets it wait
    until after the answer (store.recall.with_recall_index): the caller runs it once it has given
    the answer (shell.run_owed_checks forks it off; FullCheck.run runs it where it is called)."""
    check_query(query)
    check_memory_type(memory_type)
    if limit < 1:
        raise InputError(f"--limit must be at least 1, not {limit}")
    limit = min(limit, 1_000_000)  # more than any store holds; SQLite's LIMIT takes no bigger number
    words = word_sequence(query, SEARCH_SHORTEST)
    hits: list[Hit] = []
    owed = None
    if words:  # a query of stop words and one-letter words alone has nothing to find
        found, owed = with_recall_index(context.paths, context.tz,
                                        lambda index: index.search(words, limit, memory_type, archived=archived),
                                        defer=defer)
        hits = [Hit.of(each, frozenset(words)) for each in found]
    _consulted(context, now, query, [(hit.name, hit.path) for hit in hits])
    return hits, owed


def render_hits(hits: list[Hit], query: str) -> str:
    """What `recall` prints without --json: one block per memory, best first, or one line."""
    if not hits:
        return f"no memory matches {shown(query)!r}\n"
    return "\n\n".join(_pending_block(hit) if hit.pending else _memory_block(hit) for hit in hits) + "\n"


def _memory_block(hit: Hit) -> str:
    return (f"{shown(hit.name)}\n  type: {hit.type}" + (" (archived)" if hit.archived else "")
            + f"\n  path: {shown(hit.path)}\n  score: {hit.score:.3f}"
            + f"\n  description: {shown(hit.description)}\n  snippet: {shown(hit.snippet)}")


def _pending_block(hit: Hit) -> str:
    return (f"pending entry {hit.name} (logged, not yet dreamed)\n  type: {hit.type or '(none)'}"
            + f"\n  log: {shown(hit.path)}\n  at: {hit.mtime.isoformat(sep=' ', timespec='seconds')}"
            + f"\n  score: {hit.score:.3f}\n  snippet: {shown(hit.snippet)}")


def show(context: StoreContext, path_or_name: str, now: datetime | None = None) -> "Memory | PendingEntry":
    """One memory, whole: by its path relative to the store's root (an absolute path inside it
    too), else by its exact name, else by its name in any case; or a log entry no dream has
    distilled yet, by its id (as recall gives it). A live memory comes before an archived one of
    the same name. InputError when none is found, or several are."""
    return show_owing(context, path_or_name, now, defer=False)[0]


def show_owing(context: StoreContext, path_or_name: str, now: datetime | None = None,
               *, defer: bool = True) -> "tuple[Memory | PendingEntry, FullCheck | None]":
    """show's memory, and the full check it leaves owing, as recall_owing."""
    wanted = path_or_name.strip()
    if not wanted:
        raise InputError("give a memory's path (as recall and MEMORY.md show it) or its name")
    _check_unicode(wanted, "the memory's path or name")  # a file so named is never read as a memory
    path, owed = with_recall_index(context.paths, context.tz, lambda index: _find(index, context, wanted), defer=defer)
    if isinstance(path, Found):
        entry = PendingEntry(path.path, path.name, path.type, path.mtime, path.body)
        _consulted(context, now, path_or_name, [(entry.name, entry.path)])
        return entry, owed
    from auto_dream.store.memory import read_memory  # the YAML parser: only `show` needs it

    memory = read_memory(context.paths.root / path, context.paths.root, context.tz, context.paths.untyped)
    if isinstance(memory, Unreadable):
        raise StoreError(f"{memory.path} cannot be read as a memory: {memory.reason}")
    _consulted(context, now, path_or_name, [(memory.name, memory.path)])
    return memory, owed


def _consulted(context: StoreContext, now: datetime | None, query: str, found: list[tuple[str, str]]) -> None:
    """One line in the consult log: dream's consult gate and decay read it. A store that cannot
    be written (a read-only copy) still answers; the lookup is then not recorded."""
    try:
        append_consult(context.paths, now or datetime.now(timezone.utc).astimezone(context.tz), query, found)
    except OSError:
        pass


def file_text(context: StoreContext, memory: "Memory | PendingEntry") -> str:
    """A memory file's text as it is on disk (what `show` prints); a pending entry as its log holds it."""
    if isinstance(memory, PendingEntry):
        return memory.text()
    try:
        raw = (context.paths.root / memory.path).read_bytes()
    except OSError as error:
        raise StoreError(f"cannot read {memory.path}: {error.strerror}") from None
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _find(index: RecallIndex, context: StoreContext, wanted: str) -> str | Found:
    relative = _relative(context, wanted)
    if relative is not None and (named := index.file(relative)) is not None:
        return named.path
    if _ENTRY_ID.fullmatch(wanted) and (entry := index.entry(wanted)) is not None:
        return entry
    every = index.named()
    folded = wanted.casefold()
    for matches in ([m for m in every if m.name == wanted], [m for m in every if (m.name or "").casefold() == folded]):
        chosen = [m for m in matches if not m.archived] or matches  # a live memory before a retired one
        if len(chosen) == 1:
            return chosen[0].path
        if chosen:
            raise InputError(f"{len(chosen)} memories are named {wanted!r}: {', '.join(m.path for m in chosen)}; "
                             "give one's path")
    raise InputError(f"no memory at {wanted!r} or named so (`auto-dream recall WORDS` finds one by its words; "
                     "`auto-dream list` lists them)")


_ENTRY_ID = re.compile(r"[0-9a-f]{12}")


def _relative(context: StoreContext, given: str) -> str | None:
    """`given` as a path relative to the root, with forward slashes (None: it leads out of it)."""
    path = Path(given).expanduser()
    if path.is_absolute():
        path = Path(os.path.relpath(path, context.paths.root))
    relative = Path(os.path.normpath(path)).as_posix()
    return None if relative == ".." or relative.startswith("../") else relative


# ---------------------------------------------------------------- snippets


def snippet(found: Found, words: frozenset[str]) -> str:
    """Up to SNIPPET_CHARS of the memory's text around the first word of `words` in it (the body
    first: name and description are shown beside it), matched words marked **so**, white space
    run together; the start of the body when no word is found (a name that is all stop words)."""
    whole = "\n".join(part for part in (found.name, found.description, found.body) if part)
    for text in (found.body, whole):
        spans = _merged([(start, end) for start, end, word in word_spans(text, SEARCH_SHORTEST) if word in words])
        if spans:
            return _excerpt(text, spans)
    return _excerpt(found.body or whole, [])


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans as one: a CJK word's bigrams overlap (部署 and 署到 in 部署到)."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


_SPACE = re.compile(r"\s+")


def _excerpt(text: str, spans: list[tuple[int, int]]) -> str:
    first_start, first_end = spans[0] if spans else (0, 0)
    start = max(0, first_start - SNIPPET_LEAD)
    if start > 0 and (space := _SPACE.search(text, start, first_start)):
        start = space.end()  # not in the middle of a word
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        spaces = [space.start() for space in _SPACE.finditer(text, first_end, end)]
        end = spaces[-1] if spaces else end
    pieces, at = [], start
    for span_start, span_end in spans:
        if span_start < start or span_end > end:
            continue
        pieces += [text[at:span_start], "**", text[span_start:span_end], "**"]
        at = span_end
    pieces.append(text[at:end])
    shown = _SPACE.sub(" ", "".join(pieces)).strip()
    return ("…" if start > 0 else "") + shown + ("…" if end < len(text) else "")
