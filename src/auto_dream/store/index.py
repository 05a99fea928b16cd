"""MEMORY.md: derived from the memory files alone, within the caps Claude Code loads."""

import heapq
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from typing import Protocol
from urllib.parse import quote

from auto_dream.errors import StoreError
from auto_dream.judge.status import Status
from auto_dream.judge.titles import language_of, without_person
from auto_dream.store.memory import Memory, shown
from auto_dream.store.paths import MEMORY_TYPES

SEPARATOR = " — "
ELLIPSIS = "…"
# What goes on from the name ("Safety: Always keep the emergency stop within reach" — "while the arm is
# powered"), cut shorter than this, says nothing a reader can use ("— while the…"): the line shows the
# name alone. A description of its own is shown however short ("— Reads Rust…"), but not cut
# inside its first word ("— R…"): that says nothing either.
SHORTEST_HOOK = 24
HEADER_TEMPLATE = "templates/MEMORY_header.md"  # where a store overrides the packaged header
# what would end or break a Markdown link, and control characters (percent-encoded, the link resolves)
_LINK_UNSAFE = re.compile(r"[\s()<>%\[\]#?\x00-\x1f\x7f-\x9f]")
_LABEL_SPECIAL = re.compile(r"([\\\[\]])")


@dataclass(frozen=True)
class IndexLimits:
    max_lines: int = 200
    max_bytes: int = 25_000
    line_chars: int = 150


@dataclass(frozen=True)
class IndexResult:
    text: str
    listed: list[str]  # memory paths, in file order
    omitted: int  # memories not listed (counted in the last line): listed + omitted == memories
    warnings: list[str]
    # Other files the index writes with it, (path, text): in a Claude Code folder, the topic
    # file that hand-written lines move to when MEMORY.md is over Claude Code's caps.
    files: tuple[tuple[str, str], ...] = ()
    moved: int = 0  # hand-written lines moved there
    dropped: int = 0  # in a Claude Code folder, list items dropped for linking a retired file
    # ... those lines, by the retired file each links: (path, lines)
    dropped_lines: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # In a Claude Code folder, the files the text was made from (MEMORY.md, the overflow file)
    # and their fingerprints then (None: absent): a file changed since makes it again (apply).
    read_from: tuple[tuple[str, object], ...] = ()
    marked: int = 0  # of the omitted, those a person marked deprecated, superseded… (Memory.status)

    @property
    def line_count(self) -> int:
        return self.text.count("\n")

    @property
    def byte_count(self) -> int:
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class Activity:
    """What an agent used lately (decay, docs/store.md, "MEMORY.md"): each memory path looked up within
    the decay window and when last (the consult log), and the window's start. A memory neither looked up
    nor changed since `cutoff` has decayed (a pinned one never, nor the newest of all): when
    MEMORY.md cannot list every memory, decayed ones are left out first."""

    consulted: Mapping[str, datetime]
    cutoff: datetime | None  # None: nothing decays (decay_days = 0)
    newest: datetime | None = None  # the newest memory's mtime: it always fits, decayed or not

    def decayed(self, memory: Memory) -> bool:
        return (self.cutoff is not None and memory.mtime < self.cutoff and not memory.pinned
                and (self.newest is None or memory.mtime < self.newest) and memory.path not in self.consulted)


NO_ACTIVITY = Activity({}, None)


class IndexSource(Protocol):
    """Memories as the index needs them, where a list of them would be too many to make (store.views)."""

    def __len__(self) -> int: ...

    def newest(self) -> datetime | None:
        """The latest mtime."""

    def first_by_priority(self, count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
        """sorted(memories, key=priority(activity))[:count]."""

    def marked(self) -> Mapping[str, Status]:
        """The memories a person marked deprecated, superseded… (Memory.status), by path."""


class _Listed:
    def __init__(self, memories: list[Memory]):
        self.memories = memories

    def __len__(self) -> int:
        return len(self.memories)

    def newest(self) -> datetime | None:
        return max((m.mtime for m in self.memories), default=None)

    def first_by_priority(self, count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
        return first_by_priority(self.memories, count, activity)

    def marked(self) -> Mapping[str, Status]:
        return {memory.path: memory.status for memory in self.memories if memory.status is not None}


def build_index(memories: list[Memory] | IndexSource, header_template: str, limits: IndexLimits,
                tz: tzinfo | None, unreadable: Sequence[str] = (), activity: Activity = NO_ACTIVITY) -> IndexResult:
    """The text of MEMORY.md for `memories`, and one line naming the files under memories/ that
    cannot be read as memories (`unreadable`, their paths): listed and counted, never dropped
    from every view. A memory a person marked deprecated, superseded… (Memory.status) is never
    listed: the last line counts it. Pure: the same memories give the same bytes."""
    if isinstance(memories, list):
        memories = _Listed(memories)
    last_updated = memories.newest()
    stamp = last_updated.astimezone(tz).strftime("%Y-%m-%d %H:%M") if last_updated else "never"
    header = header_template.replace("{last_updated}", stamp).rstrip("\n") + "\n\n"
    marked = memories.marked()
    check_header(header, limits, marked=bool(marked))
    unread = unreadable_line(unreadable, limits.line_chars) + "\n" if unreadable else ""
    if unread and not _fits(header, limits, unread, marked=bool(marked)):
        unread = ""  # caps this tight have no room for it: the warnings still name every file
    # no more than the line cap can ever be listed: only those need sorting and their lines built
    activity = replace(activity, newest=last_updated)  # the newest always fits
    room = max(limits.max_lines - len(MEMORY_TYPES) - header.count("\n"), 0)
    kept = [m for m in memories.first_by_priority(room + len(marked), activity) if m.path not in marked][:room]
    lines = {m.path: _entry_line(m, limits.line_chars) for m in kept}
    total = len(memories) - len(marked)  # the memories that may be listed
    while True:
        omitted = total - len(kept)
        fixed = [header, *(f"## {t.upper()}\n" for t in MEMORY_TYPES), unread]
        if omitted or marked:
            fixed.append(_more_line(omitted, len(marked)) + "\n")
        fixed_lines = sum(part.count("\n") for part in fixed)
        if fixed_lines + len(kept) > limits.max_lines and kept:  # check_header: with none, it fits
            kept = kept[: max(limits.max_lines - fixed_lines - (0 if omitted or marked else 1), 0)]
            continue
        available = limits.max_bytes - sum(len(part.encode()) for part in fixed)
        budget = _byte_budget([lines[m.path] for m in kept], available)
        if budget is not None or not kept:
            break
        kept.pop()  # even the shortest lines do not fit: leave out the lowest priority
    entries = {m.path: _fit_bytes(lines[m.path], budget) if budget is not None else lines[m.path]
               for m in kept}
    text = header
    listed = []
    for memory_type in MEMORY_TYPES:
        text += f"## {memory_type.upper()}\n"
        for memory in sorted((m for m in kept if m.type == memory_type), key=priority(activity)):
            text += entries[memory.path].render() + "\n"
            listed.append(memory.path)
    text += unread
    omitted = total - len(listed)
    warnings = []
    if omitted or marked:
        text += _more_line(omitted, len(marked)) + "\n"
    if omitted:
        which = "least used (decayed ones first)" if activity.consulted else "oldest"
        warnings.append(
            f"MEMORY.md lists {len(listed)} of {total + len(marked)} memories: the {omitted} {which} "
            f"are left out to stay within {limits.max_lines} lines and {limits.max_bytes:,} bytes"
            + (f", and {len(marked)} marked deprecated, superseded or moved" if marked else "")
            + " (`auto-dream list` shows them all)"
        )
    return IndexResult(text=text, listed=listed, omitted=omitted + len(marked), warnings=warnings,
                       marked=len(marked))


def _fits(header: str, limits: IndexLimits, unread: str = "", *, marked: bool = False) -> bool:
    """The header, the section headings, `unread` and the line counting what is left out (and what
    is `marked`) fit the caps."""
    more = _more_line(10**9, 10**9 if marked else 0)
    fixed = [header, *(f"## {t.upper()}\n" for t in MEMORY_TYPES), unread, more + "\n"]
    return (sum(part.count("\n") for part in fixed) <= limits.max_lines
            and sum(len(part.encode()) for part in fixed) <= limits.max_bytes)


def check_header(header: str, limits: IndexLimits, *, marked: bool = False) -> None:
    """Refuse a header that leaves no room, with the section headings and the line counting
    what is left out, within the caps: MEMORY.md could list no memory (and would loop to fit)."""
    if not _fits(header, limits, marked=marked):
        header_lines, header_bytes = header.count("\n"), len(header.encode())
        raise StoreError(
            f"the MEMORY.md header ({HEADER_TEMPLATE}) is {header_lines:,} lines and {header_bytes:,} bytes: "
            f"with the section headings it leaves no room within index_max_lines = {limits.max_lines} "
            f"and index_max_bytes = {limits.max_bytes:,}; shorten it")


def first_by_priority(memories: list[Memory], count: int, activity: Activity = NO_ACTIVITY) -> list[Memory]:
    """sorted(memories, key=priority(activity))[:count], without a priority key for every memory
    of a big store.

    Only the pinned, the looked-up, the newest `count` and the memories of their days can be
    among them: any other memory has `count` ones of a newer day before it, each in use when it
    is, and each more recently used."""
    pinned: list[Memory] = []
    others: list[Memory] = []
    seen: set[str] = set()
    for memory in memories:
        if memory.path not in seen:  # a view may hand one memory in twice (newest, and looked up)
            seen.add(memory.path)
            (pinned if memory.pinned else others).append(memory)
    memories = [*pinned, *others]
    key = priority(activity)
    if len(memories) <= count or len(pinned) >= count:
        return sorted(pinned if len(pinned) >= count else memories, key=key)[:count]
    # the newest unpinned ones; every memory of the same day as the last of them may rank before it
    cutoff = heapq.nlargest(count, (m.mtime for m in others))[-1] - SAME_DAY_SLACK
    candidates = [*pinned, *(m for m in others if m.mtime >= cutoff or m.path in activity.consulted)]
    return sorted(candidates, key=key)[:count]


def priority(activity: Activity) -> Callable[[Memory], tuple]:
    """Pinned first, then the newest memory of all (it always fits), then the ones in use
    (changed or looked up within the decay window), then the decayed; within each, newest day
    first, and in one day the sections in order (USER, FEEDBACK, PROJECT, REFERENCE), then
    newest first. A user's or feedback memory outranks a project fragment of the same day:
    an OpenClaw import dropped the user's day-one lessons as the oldest while that day's
    fragments stayed. Only a lookup that lifts a decayed memory moves a line across days."""
    newest = activity.newest
    if not activity.consulted:
        return lambda memory: (not memory.pinned, memory.mtime != newest, *_by_age(memory))
    return lambda memory: (not memory.pinned, memory.mtime != newest, activity.decayed(memory), *_by_age(memory))


def _by_age(memory: Memory) -> tuple:
    """Newest day first (the day of the memory's own time), then the sections in order, then
    newest first, then the path."""
    return (-age_day(memory), MEMORY_TYPES.index(memory.type), -memory.mtime.timestamp(), memory.path)


def age_day(memory: Memory) -> int:
    """The day a memory was written, in the time zone of its own time: its age, for MEMORY.md."""
    return memory.mtime.date().toordinal()


# Two memories of the same day (each in its own time zone, UTC-12 to UTC+14) are at most
# 50 hours apart: a memory more than that older than another is of an older day.
SAME_DAY_SLACK = timedelta(hours=50)


def unreadable_line(paths: Sequence[str], line_chars: int) -> str:
    """`- Not read (2): broken.md, notes.md`: file names, not links (one may be a link out of the
    store, or name no file a reader could open), cut to the line's length."""
    names = ", ".join(_escape_label(path.rsplit("/", 1)[-1]) for path in sorted(paths))
    return shorten(f"- Not read ({len(paths)}, `auto-dream check` says why): {names}", line_chars)


def _more_line(count: int, marked: int = 0) -> str:
    """The last line: how many memories are not listed, the oldest (`count`) and those a person
    marked deprecated, superseded… (`marked`)."""
    parts = [f"{count} older {_memories(count)}"] if count else []
    if marked:
        parts.append(f"{marked}{'' if count else ' ' + _memories(marked)} marked deprecated, superseded or moved")
    return f"- … and {' and '.join(parts)} not listed here: run `auto-dream list` to see them all."


def _memories(count: int) -> str:
    return "memory" if count == 1 else "memories"


@dataclass(frozen=True)
class _Line:
    prefix: str  # "- [name](link)"
    description: str

    def render(self) -> str:
        return self.prefix + SEPARATOR + self.description if self.description else self.prefix

    @property
    def full_bytes(self) -> int:
        return len(self.render().encode())

    @property
    def min_bytes(self) -> int:
        return len(self.prefix.encode())


def entry_text(memory: Memory, line_chars: int) -> str:
    """`- [name](path) — description`: a memory's line, at most `line_chars` characters."""
    return _entry_line(memory, line_chars).render()


def link_path(path: str) -> str:
    """`path` as a Markdown link's destination: what would end or break the link percent-encoded."""
    return _LINK_UNSAFE.sub(lambda m: quote(m.group(), safe=""), path)


def _entry_line(memory: Memory, line_chars: int) -> _Line:
    link = link_path(memory.path)
    name = shown(memory.name)  # an agent's context is no place for ESC or BEL: written out
    # a name that fits the line is never cut for its description's sake ("Do the DNS cutover only
    # after the TTL has…"): the description has what room is left, maybe none
    room_for_label = max(line_chars - len(f"- []({link})"), 8)
    if len(_escape_label(name)) > room_for_label:
        room_for_label = max(room_for_label - len(SEPARATOR) - 12, 8)
    label = name
    chars = room_for_label
    while len(_escape_label(label)) > room_for_label and chars >= 1:  # measured after escaping brackets
        label = shorten(name, chars)
        chars -= 1
    prefix = f"- [{_escape_label(label)}]({link})"
    room = line_chars - len(prefix) - len(SEPARATOR)
    whole = shown(memory.description)
    description = _beyond_name(whole, label)
    if len(description) > room and description != whole and room < SHORTEST_HOOK:
        description = ""  # what goes on from the name, cut to a few words: "— while the…"
    return _Line(prefix, _telling(shorten(description, room) if room > 1 else "", description))


# A Latin word cut before its end: "R…" of "Reason: …", "Doc…" of "Docs at …"
_WORD_PART = re.compile(r"\A[A-Za-z0-9'’_-]+\Z")


def _telling(shortened: str, description: str) -> str:
    """`shortened`, the description cut to fit, or "" when the cut falls inside its first word
    (Latin text: a CJK character says something on its own)."""
    kept = shortened.removesuffix(ELLIPSIS)
    if shortened == description or not _WORD_PART.match(kept):
        return shortened
    after = description[len(kept):len(kept) + 1]
    return "" if after.isalnum() else shortened


# A name's label ("Plan for Q3: ", "ステータス："): a description may go on from what follows it
_NAME_LABEL = re.compile(r"\A[^:：]{1,40}(?:: |：)")


def _beyond_name(description: str, name: str) -> str:
    """What the description says beyond the name: a line never repeats its own title, nor what
    follows the title's label ("Plan for Q3: split the monolith's auth module" — "Split the
    monolith's auth module into its own service…" shows "into its own service…"), with or
    without the person the description opens with ("Likes having a checklist at the start" —
    "User likes having a checklist at the start of any task…")."""
    stem = name.removesuffix(ELLIPSIS).rstrip(" .。")
    label = _NAME_LABEL.match(stem)
    said = without_person(description, language_of(description))  # as the name was made (titles)
    for head, text in ((stem, description), (stem[label.end():] if label else "", description),
                       (stem[label.end():] if label else stem, said)):
        if len(head) > 1 and text[:1].lower() == head[:1].lower() and text[1:].startswith(head[1:]):
            rest = text[len(head):].lstrip(" .,;:—-。，；：")
            return rest if len(rest) > 1 else ""
    return description


def _escape_label(name: str) -> str:
    return _LABEL_SPECIAL.sub(r"\\\1", name)


def _byte_budget(lines: list[_Line], available: int) -> int | None:
    """The largest per-line byte budget that fits all `lines` in `available` bytes, or None."""
    def cost(budget: int) -> int:
        return sum(max(line.min_bytes, min(line.full_bytes, budget)) + 1 for line in lines)

    if cost(0) > available:
        return None
    high = max((line.full_bytes for line in lines), default=0)
    if cost(high) <= available:
        return high
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if cost(middle) <= available:
            low = middle
        else:
            high = middle - 1
    return low


def _fit_bytes(line: _Line, budget: int) -> _Line:
    if line.full_bytes <= budget:
        return line
    room = budget - line.min_bytes - len(SEPARATOR.encode())
    return _Line(line.prefix, _telling(shorten_bytes(line.description, room), line.description))


def shorten(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return ""
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space >= max_chars * 0.6:  # a word boundary near the end; CJK text has none
        cut = cut[:space]
    return cut.rstrip(" ,;:.-—") + ELLIPSIS


def shorten_bytes(text: str, max_bytes: int) -> str:
    """The longest word-boundary shortening of `text` that is at most `max_bytes` in UTF-8."""
    if len(text.encode()) <= max_bytes:
        return text
    chars = min(len(text), max_bytes)
    while chars > 1:
        candidate = shorten(text, chars)
        if len(candidate.encode()) <= max_bytes:
            return candidate
        chars -= max(1, (len(candidate.encode()) - max_bytes) // 3)
    return ""
