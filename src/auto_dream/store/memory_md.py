"""MEMORY.md on disk: rendered from a store's memories with its header and caps, compared
with the file, rewritten only when it differs."""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from stat import S_ISREG

from auto_dream.errors import StoreError
from auto_dream.store.cache import ParseCache
from auto_dream.store.context import StoreContext
from auto_dream.store.index import IndexLimits, IndexResult, IndexSource, build_index
from auto_dream.store.memory import Memory, Unreadable, write_atomic
from auto_dream.store.scan import MemoryScan, scan_memories
from auto_dream.store.templates import load_template


def index_limits(context: StoreContext) -> IndexLimits:
    config = context.config
    return IndexLimits(config.index_max_lines, config.index_max_bytes, config.index_line_chars)


def render_index(context: StoreContext, memories: list[Memory] | IndexSource,
                 unreadable: Sequence[Unreadable] = ()) -> IndexResult:
    header = load_template("MEMORY_header.md", context.paths.templates)
    return build_index(memories, header, index_limits(context), context.tz, [u.path for u in unreadable])


@dataclass(frozen=True)
class IndexBuild:
    result: IndexResult
    changed: bool
    unreadable: list[Unreadable]


def rebuild_index(context: StoreContext) -> IndexBuild:
    """Write MEMORY.md from memories/ alone; an index already up to date is not rewritten."""
    scan = scan_memories(context.paths, context.tz, cache=ParseCache.load(context.paths))
    result = render_index(context, scan.memories, scan.unreadable)
    data = result.text.encode("utf-8")
    changed = index_differs(context, data)
    if changed:
        write_atomic(context.paths.index, data)
    return IndexBuild(result=result, changed=changed, unreadable=scan.unreadable)


def index_differs(context: StoreContext, data: bytes) -> bool:
    """Whether MEMORY.md on disk is not exactly `data` (a missing file differs): "is MEMORY.md
    current?", asked wherever it might be rewritten."""
    return read_index(context, len(data) + 1) != data


def read_index(context: StoreContext, limit: int) -> bytes | None:
    """MEMORY.md's first `limit` bytes (enough to compare it with what it should be), or None
    when it is not there. Never through a link, never from a FIFO (paths.check_layout refuses
    both when the store is opened; O_NOFOLLOW and O_NONBLOCK hold if one appears since)."""
    try:
        fd = os.open(context.paths.index, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StoreError(f"cannot read {context.paths.index}: {error.strerror}") from None
    try:
        if not S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{context.paths.index} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


def index_in_sync(context: StoreContext, scan: MemoryScan) -> bool:
    return not index_differs(context, render_index(context, scan.memories, scan.unreadable).text.encode("utf-8"))
