"""The daily log: one entry per list item, appended under a lock, parsed back exactly.

This module is on `append`'s path, so it imports only light standard modules.
"""

import fcntl
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from functools import cached_property
from pathlib import Path

from auto_dream.errors import InputError, StoreError
from auto_dream.store.files import FILE_MODE, NotRegular, TooLarge, kind_of, make_dirs, read_file
from auto_dream.store.paths import MEMORY_TYPES, StoreLayout, check_memory_type

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
ENTRY_LINE = re.compile(r"- \[(\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?)\](.*)")
LOOKS_DATED = re.compile(r"- \[\d")  # a try at an entry; `- [ ] task` boxes are not
# Lines of Claude Code's own day logs, which its assistant mode keeps at this same path. Their
# form is not fixed, so they are reported, never read and never passed over in silence
# (docs/claude-code-daily-logs.md): "a short timestamped bullet" (the v2.1.88 prompt in
# src/memdir/memdir.ts), taken as a list item that opens with a time or a date; and the lines of
# the activity stream, prefix-coded `>` user, `<` assistant, `.` tool call (the v2.1.116 dream
# prompt, Piebald-AI/claude-code-system-prompts). Prose, headings and task boxes stay unread.
FOREIGN_NOTE = re.compile(r"[ \t]*[-*+][ \t]+[\[(*_`]*(?:\d{4}-\d\d-\d\d|\d{1,2}:\d\d)|[<>.][ \t]+\S")
UNDECODABLE = re.compile("[\ud800-\udfff]")  # bytes that were not UTF-8, or an escaped lone surrogate
TYPE_MARKER = re.compile(r"\((" + "|".join(MEMORY_TYPES) + r")\) ")
# Characters a text line cannot carry verbatim: they would break the line structure or
# be rewritten by editors. A text holding any of them is written as one JSON string.
_NEEDS_JSON = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CONTINUATION = "  "
MAX_TEXT_CHARS = 20_000
MAX_LOG_BYTES = 64 * 1024 * 1024  # a day's log, far above what a day of appends writes
# A log time converts to any timezone and back without leaving datetime's range (years 1 to
# 9999), and writes as YYYY-MM-DD; the logs people keep start long after 1900.
FIRST_YEAR, LAST_YEAR = 1900, 9998
# A text has something to read when it has a character outside these: no text to remember
# in a zero-width space, a BOM, an ideographic space, a soft hyphen or a Hangul filler.
_VISIBLE_ASCII = re.compile(r"[!-~]")
_BLANK_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp"}
_BLANK_CHARACTERS = set("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0") \
    | {chr(c) for c in range(0xFE00, 0xFE10)} | {chr(c) for c in range(0xE0100, 0xE01F0)}


@dataclass(frozen=True)
class Entry:
    """One fact in the log: when (wall-clock time in the store's timezone), what, and its type."""

    at: datetime
    text: str
    type: str | None = None

    @cached_property  # asked for a dozen times an entry in a dream
    def id(self) -> str:
        """Stable id from content, not position: whitespace-only edits keep it."""
        return entry_id(self.at, self.text)


def entry_id(at: datetime, text: str) -> str:
    normalized = "\n".join(line.rstrip() for line in text.strip().split("\n"))
    digest = hashlib.sha256(f"{at:{TIMESTAMP_FORMAT}}\n{normalized}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class LogProblem:
    """A line of a log that is not a readable entry."""

    path: Path
    line: int
    message: str


# ---------------------------------------------------------------- format and parse


def format_entry(entry: Entry) -> str:
    """The entry as log lines, ending in a newline. parse(format(e)) == e for any text."""
    marker = f"({entry.type}) " if entry.type else ""
    text = entry.text
    if _NEEDS_JSON.search(text):
        body = "\\" + json.dumps(text, ensure_ascii=False)
    else:
        first, *rest = text.split("\n")
        if first.startswith("\\") or TYPE_MARKER.match(first):
            first = "\\" + first  # keeps a leading "(project) " or "\" as text
        body = "\n".join([first, *(_CONTINUATION + line for line in rest)])
    return f"- [{entry.at:{TIMESTAMP_FORMAT}}] {marker}{body}\n"


def parse_log(content: str, path: Path = Path("<log>"),
              years: tuple[int, int] | None = None) -> tuple[list[Entry], list[LogProblem]]:
    """Entries of one day's log, and the lines that look like entries, or like notes in another
    log's format (FOREIGN_NOTE), but are not readable.

    `years` (first, last): an entry dated outside them is a problem, not an entry."""
    entries: list[Entry] = []
    problems: list[LogProblem] = []
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    current: tuple[int, datetime, str | None, list[str]] | None = None

    def finish() -> None:
        if current is None:
            return
        number, at, kind, parts = current
        text = "\n".join(parts)
        if not text.strip():
            problems.append(LogProblem(path, number, "entry has no text"))
        elif UNDECODABLE.search(text):
            problems.append(LogProblem(path, number, "entry is not valid UTF-8 text: skipped"))
        else:
            entries.append(Entry(at=at, text=text, type=kind))

    for index, raw in enumerate(lines):
        line = raw[:-1] if raw.endswith("\r") else raw
        if current is not None and _is_continuation(line, lines, index):
            current[3].append(line[2:] if line.startswith(_CONTINUATION) else line[1:])
            continue
        finish()
        current = None
        match = ENTRY_LINE.fullmatch(line)
        if match is None:
            if LOOKS_DATED.match(line):
                problems.append(LogProblem(path, index + 1, "not an entry: expected `- [YYYY-MM-DD HH:MM] text`"))
            elif FOREIGN_NOTE.match(line):
                problems.append(LogProblem(path, index + 1, "not read: a note in another log format (an entry is "
                                                            "`- [YYYY-MM-DD HH:MM] text`); left as it is"))
            continue
        stamp, rest = match.groups()
        try:
            at = datetime.strptime(stamp, TIMESTAMP_FORMAT if len(stamp) > 16 else "%Y-%m-%d %H:%M")
        except ValueError:
            problems.append(LogProblem(path, index + 1, f"bad date [{stamp}]"))
            continue
        if years is not None and not years[0] <= at.year <= years[1]:
            problems.append(LogProblem(path, index + 1, f"date [{stamp}] is outside the years "
                                                        f"{years[0]}-{years[1]}: entry skipped"))
            continue
        rest = rest[1:] if rest.startswith(" ") else rest
        kind = None
        marker = TYPE_MARKER.match(rest)
        if marker:
            kind = marker.group(1)
            rest = rest[marker.end():]
        if rest.startswith('\\"'):
            rest = _decode_json_text(rest[1:])
        elif rest.startswith("\\"):
            rest = rest[1:]
        current = (index + 1, at, kind, [rest])
    finish()
    return entries, problems


def _decode_json_text(encoded: str) -> str:
    try:
        decoded = json.loads(encoded)
    except ValueError:
        return encoded  # a hand-written line that only looks escaped: keep it as written
    return decoded if isinstance(decoded, str) else encoded


def _is_continuation(line: str, lines: list[str], index: int) -> bool:
    if line.startswith(_CONTINUATION) or line.startswith("\t"):
        return True
    # An editor that strips trailing spaces turns an empty continuation line into a blank
    # one; it still belongs to the entry when the entry goes on after it.
    if line == "":
        for later in lines[index + 1:]:
            later = later.rstrip("\r")
            if later != "":
                return later.startswith(_CONTINUATION)
    return False


# ---------------------------------------------------------------- time


def load_timezone(name: str | None) -> tzinfo | None:
    """The store's timezone; None means the system's own (with its DST rules)."""
    if name is None:
        return None
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def local_now(tz: tzinfo | None, now: datetime | None = None) -> datetime:
    """Wall-clock time in the store's timezone, to the second, without tzinfo."""
    now = now if now is not None else datetime.now().astimezone()
    return now.astimezone(tz).replace(tzinfo=None, microsecond=0)


# Relative times an agent or a person writes: "now", "yesterday 15:00", "today 9:30", "2h ago",
# "30 minutes ago", and the same in Chinese and Japanese (昨天 15:00, 昨日, 2小时前, 3時間前, 10分前).
_DAY_WORDS = {"today": 0, "yesterday": 1, "今天": 0, "今日": 0, "昨天": 1, "昨日": 1, "前天": 2, "一昨日": 2}
_DAY = re.compile(r"(?P<day>today|yesterday|今天|今日|昨天|昨日|前天|一昨日)(?:\s*(?:at\s*)?"
                  r"(?P<hour>\d{1,2})[:：](?P<minute>\d{2}))?", re.IGNORECASE)
_AGO = re.compile(r"(?P<count>\d{1,6})\s*(?P<unit>s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|"
                  r"w|weeks?|秒|分钟|分鐘|分|小时|小時|時間|天|日|周|週間?)\s*(?:ago|前)", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "秒": 1, "m": 60, "分": 60, "分钟": 60, "分鐘": 60, "h": 3600, "小时": 3600, "小時": 3600,
                 "時間": 3600, "d": 86400, "天": 86400, "日": 86400, "w": 604800, "周": 604800, "週": 604800,
                 "週間": 604800}


def _relative(text: str, tz: tzinfo | None, now: datetime | None) -> datetime | None:
    """A relative time as store wall-clock time, or None when `text` is not one."""
    current = local_now(tz, now)
    if text.lower() in ("now", "今", "现在", "現在"):
        return current
    if match := _DAY.fullmatch(text):
        day = current - timedelta(days=_DAY_WORDS[match["day"].lower()])
        if match["hour"] is None:
            return day if _DAY_WORDS[match["day"].lower()] == 0 else day.replace(hour=12, minute=0, second=0)
        hour, minute = int(match["hour"]), int(match["minute"])
        if hour > 23 or minute > 59:
            return None
        return day.replace(hour=hour, minute=minute, second=0)
    if match := _AGO.fullmatch(text):
        unit = match["unit"].lower()
        key = unit if unit in _UNIT_SECONDS else unit[0]
        return current - timedelta(seconds=int(match["count"]) * _UNIT_SECONDS[key])
    return None


def parse_when(value: str, tz: tzinfo | None, now: datetime | None = None) -> datetime:
    """`--at`: ISO 8601 (with or without an offset), `YYYY-MM-DD HH:MM`, or a relative time
    ("yesterday 15:00", "2h ago", "now"; 昨天 15:00, 3時間前), as store wall-clock time."""
    text = value.strip()
    try:
        relative = _relative(text, tz, now)
    except (OverflowError, ValueError):  # "999999 weeks ago": before the calendar
        raise InputError(f"the date {value!r} is outside the years {FIRST_YEAR}-{LAST_YEAR}") from None
    try:
        parsed = relative if relative is not None else datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"cannot read the date {value!r}: use ISO 8601 (2026-04-01T14:30:05+08:00), 'YYYY-MM-DD HH:MM' "
            "or a relative time ('yesterday 15:00', '2h ago')"
        ) from None
    if parsed.tzinfo is not None:
        try:
            parsed = parsed.astimezone(tz)
        except (OverflowError, ValueError):  # beyond the calendar once in the store's timezone
            raise InputError(f"the date {value!r} is outside the years {FIRST_YEAR}-{LAST_YEAR}") from None
    local = parsed.replace(tzinfo=None, microsecond=0)
    # checked in the store's timezone: 1900-01-01T00:00+14:00 is a day of 1899 there
    if local.year < FIRST_YEAR:
        raise InputError(f"the date {value!r} is before {FIRST_YEAR} in the store's timezone: "
                         "a log day is written YYYY-MM-DD")
    if local.year > LAST_YEAR:
        raise InputError(f"the date {value!r} is outside the years {FIRST_YEAR}-{LAST_YEAR}")
    if local > local_now(tz, now) + timedelta(days=1):
        raise InputError(f"the date {value!r} is in the future: --at only back-dates an entry")
    return local


# ---------------------------------------------------------------- append and read


def make_entry(text: str, entry_type: str | None, at: datetime) -> Entry:
    """Validate user input into an entry: non-empty text, known type."""
    check_memory_type(entry_type)
    text = text.strip()
    if not text or _is_blank(text):
        raise InputError("nothing to append: the text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise InputError(f"the text has {len(text)} characters; an entry holds at most {MAX_TEXT_CHARS}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the text is not valid Unicode (undecodable bytes in the input)") from None
    return Entry(at=at, text=text, type=entry_type)


def _is_blank(text: str) -> bool:
    """Only characters that show nothing: format, space and control characters, fillers."""
    if _VISIBLE_ASCII.search(text):
        return False  # nearly every text: decided without loading the Unicode database
    import unicodedata

    return all(c in _BLANK_CHARACTERS or unicodedata.category(c) in _BLANK_CATEGORIES for c in text)


def append_entry(paths: StoreLayout, entry: Entry) -> Path:
    """Add `entry` to its day's log: one locked write, so concurrent appends never interleave."""
    log_path = paths.log_file(entry.at.date())
    data = format_entry(entry).encode("utf-8")
    try:
        make_dirs(log_path.parent)
        _refuse_unless_regular(log_path)  # a device is not even opened
        # O_NONBLOCK: a FIFO put in the log's place since must not hang the open (a regular file ignores it)
        fd = os.open(log_path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY, FILE_MODE)
    except PermissionError:
        raise StoreError(f"cannot write to {log_path}: permission denied") from None
    except OSError as error:
        raise StoreError(f"cannot write to {log_path}: {error.strerror}") from None
    try:
        _refuse_unless_regular(log_path, os.fstat(fd).st_mode)
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a hand edit left the last line open
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    return log_path


def _refuse_unless_regular(log_path: Path, mode: int | None = None) -> None:
    """Nothing is appended to a pipe or a device that stands where the day's log should."""
    if mode is None:
        try:
            mode = os.stat(log_path).st_mode
        except FileNotFoundError:
            return
    kind = kind_of(mode)
    if kind is not None and kind != "a folder":  # a folder fails to open, with its own message
        raise StoreError(f"cannot write to {log_path}: it is not a regular file ({kind})")


def read_log(log_path: Path) -> tuple[list[Entry], list[LogProblem]]:
    """Parse one day's log, holding a shared lock so a half-written append is never seen.

    Only a regular file of at most MAX_LOG_BYTES is read: a FIFO or a device named like a
    day's log would block or never end, and a symbolic link may lead to anything."""
    try:
        raw, _ = read_file(log_path, MAX_LOG_BYTES, shared_lock=True)  # a device is not even opened
    except NotRegular as refused:
        why = ("a folder named like a day's log: nothing in it is read" if refused.kind == "a folder"
               else f"not a regular file ({refused.kind}): not read")
        return [], [LogProblem(log_path, 0, why)]
    except TooLarge:
        return [], [LogProblem(log_path, 0, f"larger than {MAX_LOG_BYTES:,} bytes: not read")]
    except OSError as error:
        return [], [LogProblem(log_path, 0, f"cannot read: {error.strerror}")]
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return parse_log(raw.decode("utf-8", "surrogateescape"), log_path, (FIRST_YEAR, LAST_YEAR))


def log_files(paths: StoreLayout) -> list[Path]:
    """Every daily log, oldest first."""
    if not paths.logs.is_dir():
        return []
    return sorted(p for p in paths.logs.glob("*/*/*.md") if _is_day_file(p))


def _is_day_file(path: Path) -> bool:
    """Named like a day's log (a folder so named is kept, so that reading it reports it)."""
    try:
        date.fromisoformat(path.stem)
    except ValueError:
        return False
    return True


def read_all_entries(paths: StoreLayout) -> tuple[list[Entry], list[LogProblem]]:
    """All entries of all logs in log order, each id once (a line copied by hand is one entry)."""
    entries: list[Entry] = []
    problems: list[LogProblem] = []
    seen: set[str] = set()
    for log_path in log_files(paths):
        day_entries, day_problems = read_log(log_path)
        problems.extend(day_problems)
        for entry in day_entries:
            if entry.id not in seen:
                seen.add(entry.id)
                entries.append(entry)
    return entries, problems


def aware(at: datetime, tz: tzinfo | None) -> datetime:
    """A log time (store wall-clock, naive) as an aware datetime."""
    return at.replace(tzinfo=tz) if tz is not None else at.astimezone()
