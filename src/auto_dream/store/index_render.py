"""MEMORY.md made from the memories and what it is made from besides them (IndexInputs), in
either layout, without reading a file: a dream's planning renders it from what orient read;
memory_md.py reads the inputs, and compares and writes the file."""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from urllib.parse import quote

from auto_dream.judge.status import Status
from auto_dream.store.claude_index import lines_by_link, rebuild_claude_index, statuses_in_index
from auto_dream.store.context import StoreContext
from auto_dream.store.index import NO_ACTIVITY, Activity, IndexLimits, IndexResult, IndexSource, build_index
from auto_dream.store.memory import Memory, Unreadable
from auto_dream.store.paths import OVERFLOW_NAME


def index_limits(context: StoreContext) -> IndexLimits:
    config = context.config
    return IndexLimits(config.index_max_lines, config.index_max_bytes, config.index_line_chars)


@dataclass(frozen=True)
class IndexInputs:
    """What MEMORY.md is made from and compared with besides the memories, read together: a
    dream's orient reads them, so that planning reads no file.

    Our own layout: the header template and what was consulted lately (decay). A Claude Code
    folder: MEMORY.md and its overflow as they are (every hand-written line is kept), their
    fingerprints taken before they were read (a later write shows), and the names the archive
    holds (their lines are dropped)."""

    current: bytes | None  # MEMORY.md as it is (None: absent); ours, its first memory_md.INDEX_READ_LIMIT bytes
    activity: Activity = NO_ACTIVITY
    header: str = ""
    overflow: str | None = None
    read_from: tuple[tuple[str, object], ...] = ()  # (path, fingerprint) of MEMORY.md and its overflow
    archived: frozenset[str] = frozenset()

    def differs(self, data: bytes) -> bool:
        """Whether MEMORY.md as read is not exactly `data` (a missing file differs)."""
        return self.current != data


def rendered_index(context: StoreContext, memories: list[Memory] | IndexSource, inputs: IndexInputs, *,
                   unreadable: Sequence[Unreadable] = (), retiring: Collection[str] = (), now: datetime) -> IndexResult:
    """MEMORY.md for `memories` at `now` (aware): derived from them alone in our own layout, the
    decayed ones left out first when not all fit (inputs.activity); in a Claude Code folder, the
    file as `inputs` hold it with every hand-written line kept (claude_index), `retiring` (memory
    paths this run archives) and the files the archive holds dropped from it."""
    if context.paths.person_index:
        live = list(memories.values()) if isinstance(memories, Mapping) else list(memories)  # type: ignore[arg-type]
        return _claude_index(context, live, unreadable, retiring, now.date(), inputs)
    return build_index(memories, inputs.header, index_limits(context), context.tz, [u.path for u in unreadable],
                       inputs.activity)


def _claude_index(context: StoreContext, live: list[Memory], unreadable: Sequence[Unreadable],
                  retiring: Collection[str], today: date, inputs: IndexInputs) -> IndexResult:
    existing = None if inputs.current is None else inputs.current.decode("utf-8")
    names = {m.path for m in live}
    retired = (set(retiring) | inputs.archived) - names
    built = rebuild_claude_index(existing, live, retired, index_limits(context), today, inputs.overflow,
                                 OVERFLOW_NAME, [u.path for u in unreadable])
    listed = [m.path for m in live if _links(built.text, m.path)]
    linked = set(listed)
    marked = sum(1 for m in live if m.status is not None and m.path not in linked)  # given no line of ours
    warnings = list(built.warnings)
    files = ((OVERFLOW_NAME, built.overflow_text),) if built.overflow_text is not None else ()
    dropped_lines = tuple((path, tuple(lines)) for path, lines in lines_by_link(built.dropped, retired).items())
    return IndexResult(text=built.text, listed=listed, omitted=len(live) - len(listed), warnings=warnings,
                       files=files, moved=built.moved, dropped=len(built.dropped), read_from=inputs.read_from,
                       dropped_lines=dropped_lines, marked=marked)


def index_marks(context: StoreContext, inputs: IndexInputs, live: Collection[str]) -> dict[str, Status]:
    """What a Claude Code folder's MEMORY.md, as `inputs` hold it (read_index_inputs read it
    whole, as UTF-8), says of the status of the `live` files it names (claude_index.statuses_in_index);
    nothing in our own layout, whose MEMORY.md dream writes."""
    if not context.paths.person_index or not inputs.current:
        return {}
    return statuses_in_index(inputs.current.decode("utf-8"), list(live))


def _links(text: str, path: str) -> bool:
    return f"({path})" in text or f"({quote(path)})" in text or f"(./{path})" in text or f"<{path}>" in text
