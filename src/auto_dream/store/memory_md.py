"""MEMORY.md on disk: what it is made from read (IndexInputs), rendered from a store's memories
with its header and caps (index_render.py), compared with the file, rewritten only when it differs."""

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from auto_dream.errors import StoreError
from auto_dream.judge.status import Status
from auto_dream.store.cache import ParseCache
from auto_dream.store.claude_index import statuses_in_index
from auto_dream.store.consult import last_consulted
from auto_dream.store.context import StoreContext
from auto_dream.store.files import read_regular, write_atomic
from auto_dream.store.index import NO_ACTIVITY, Activity, IndexResult, IndexSource
from auto_dream.store.index_render import IndexInputs, rendered_index
from auto_dream.store.memory import Memory, Unreadable, archived_names
from auto_dream.store.paths import MEMORY_TYPES, OVERFLOW_NAME, StoreLayout
from auto_dream.store.replace import Expected, create_if_absent, replace_if_unchanged, sha256, side_names
from auto_dream.store.scan import MemoryScan, fingerprint, scan_memories
from auto_dream.store.templates import load_template

# What is read of our own MEMORY.md to tell whether it is current: far more than the index we
# render ever holds (its caps: index_max_bytes), so a longer file differs, as it should.
INDEX_READ_LIMIT = 8 * 1024 * 1024


def read_index_inputs(context: StoreContext, now: datetime) -> IndexInputs:
    """IndexInputs as the store holds them now."""
    paths = context.paths
    activity = activity_at(context, now)
    if paths.person_index:
        read_from = ((paths.relative(paths.index), fingerprint(paths.index)),
                     (OVERFLOW_NAME, fingerprint(paths.root / OVERFLOW_NAME)))  # before reading: a later change shows
        existing = _read_text(paths.index)
        return IndexInputs(None if existing is None else existing.encode("utf-8"), activity,
                           overflow=_read_text(paths.root / OVERFLOW_NAME), read_from=read_from,
                           archived=frozenset(_archived_names(paths)))
    return IndexInputs(read_regular(paths.index, INDEX_READ_LIMIT), activity,
                       header=load_template("MEMORY_header.md", paths.templates))


def render_index(context: StoreContext, memories: list[Memory] | IndexSource,
                 unreadable: Sequence[Unreadable] = (), retiring: Collection[str] = (),
                 now: datetime | None = None, inputs: IndexInputs | None = None) -> IndexResult:
    """MEMORY.md for `memories` at `now` (default: the clock): derived from them alone in our own
    layout, the decayed ones left out first when not all fit (activity_at); in a Claude Code
    folder, the file as it is with every hand-written line kept (claude_index), `retiring`
    (memory paths this run archives) and the files the archive holds dropped from it. What it
    is made from besides the memories is `inputs`, read now when not given."""
    now = now or datetime.now(timezone.utc).astimezone(context.tz)  # aware, in the local zone when tz is None
    inputs = inputs if inputs is not None else read_index_inputs(context, now)
    return rendered_index(context, memories, inputs, unreadable=unreadable, retiring=retiring, now=now)


def activity_at(context: StoreContext, now: datetime) -> Activity:
    """What was used lately (index.Activity): the consult log within config `decay_days`."""
    days = context.config.decay_days
    if not days:
        return NO_ACTIVITY
    return Activity(last_consulted(context.paths, now, days), now - timedelta(days=days))


def marked_memories(context: StoreContext, memories: Sequence[Memory]) -> dict[str, Status]:
    """Every one of `memories` a person marked deprecated, superseded, a duplicate, split or moved,
    with what they wrote: in the memory itself (Memory.status) and, in a Claude Code folder, on the
    MEMORY.md line that links it or the `## Archived …` heading it sits under (claude_index)."""
    found = {memory.path: memory.status for memory in memories if memory.status is not None}
    if context.paths.person_index:
        try:
            text = _read_text(context.paths.index)
        except StoreError:
            text = None  # not UTF-8: what it says cannot be read, and `check` says so
        if text:
            for path, status in statuses_in_index(text, [memory.path for memory in memories]).items():
                found.setdefault(path, status)
    return found


def _archived_names(paths: StoreLayout) -> set[str]:
    """The file names the archive holds, as they were named live: memories a dream retired."""
    return {name for memory_type in MEMORY_TYPES for name in archived_names(paths, memory_type)}


def _read_text(path: Path) -> str | None:
    """A file's text as it is (None: absent), never through a link; StoreError when it is not
    UTF-8: a file whose every line is kept must be read whole."""
    data = read_regular(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StoreError(f"{path} is not UTF-8 (bad byte at offset {error.start}): auto-dream keeps every line "
                         "of it and cannot read this one; save it as UTF-8") from None


@dataclass(frozen=True)
class IndexBuild:
    result: IndexResult
    changed: bool
    unreadable: list[Unreadable]


_ATTEMPTS = 3  # a Claude Code folder's MEMORY.md written to while it is made again: made again from it


def rebuild_index(context: StoreContext, *, moves: bool = True) -> IndexBuild:
    """Write MEMORY.md from memories/ alone; an index already up to date is not rewritten. In a
    Claude Code folder the file is theirs: lines that would move out (over Claude Code's caps)
    or go (linking a retired file) are a dream's to change, in a run `undo` reverses: refused
    here (StoreError), or, without `moves`, MEMORY.md is left as it is. And it is made from the
    file as it is: replaced only while it still is what was read (store/replace.py), else made
    again from it as it is then (StoreError if it keeps changing)."""
    scan = scan_memories(context.paths, context.tz, cache=ParseCache.load(context.paths), memo=context.read_memo)
    theirs = context.paths.person_index
    for _ in range(_ATTEMPTS):
        before = read_regular(context.paths.index) if theirs else None  # what the new one is made from
        result = render_index(context, scan.memories, scan.unreadable)
        if (result.moved or result.dropped) and not moves:
            return IndexBuild(result=result, changed=False, unreadable=scan.unreadable)
        if result.moved or result.dropped:
            what = (f"move {result.moved} hand-written lines to {OVERFLOW_NAME}" if result.moved
                    else f"drop {result.dropped} lines that link retired files")
            raise StoreError(f"rebuilding MEMORY.md would {what}: only `auto-dream dream` changes a person's lines, "
                             "in a run `auto-dream undo` reverses; nothing was written")
        data = result.text.encode("utf-8")
        if not index_differs(context, data):
            return IndexBuild(result=result, changed=False, unreadable=scan.unreadable)
        if not theirs:
            write_atomic(context.paths.index, data)  # ours: derived from the memories alone
            return IndexBuild(result=result, changed=True, unreadable=scan.unreadable)
        if _replace_theirs(context.paths, data, before):
            return IndexBuild(result=result, changed=True, unreadable=scan.unreadable)
    raise StoreError(f"{context.paths.index} kept changing while it was made again: nothing was written; "
                     "run build-index again")


def _replace_theirs(paths: StoreLayout, data: bytes, before: bytes | None) -> bool:
    """A Claude Code folder's MEMORY.md replaced by `data` if it is still `before` (None: absent);
    False when someone wrote it meanwhile (their file is left as they made it)."""
    if before is None:
        return create_if_absent(paths.index, data)
    held, staged = side_names(paths.index, "build-index")
    outcome = replace_if_unchanged(paths.index, data, Expected(sha256(before)), held, staged)
    if outcome.kept:
        names = ", ".join(paths.relative(path) for path in outcome.kept)
        raise StoreError(f"{paths.index} was written to while it was replaced: it is left as it was written, "
                         f"and a line written meanwhile is kept beside it as {names}; nothing else was changed")
    return outcome.status == "done"


def index_differs(context: StoreContext, data: bytes) -> bool:
    """Whether MEMORY.md on disk is not exactly `data` (a missing file differs): "is MEMORY.md
    current?", asked wherever it might be rewritten."""
    return read_index(context, len(data) + 1) != data


def read_index(context: StoreContext, limit: int) -> bytes | None:
    """MEMORY.md's first `limit` bytes (enough to compare it with what it should be), or None
    when it is not there. Never through a link, never from a FIFO (paths.check_layout refuses
    both when the store is opened; files.read_regular holds if one appears since)."""
    return read_regular(context.paths.index, limit)


def index_in_sync(context: StoreContext, scan: MemoryScan, now: datetime | None = None) -> bool:
    return not index_differs(context, render_index(context, scan.memories, scan.unreadable, now=now).text
                             .encode("utf-8"))
