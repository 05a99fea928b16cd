"""Memory files: read every layout found in the wild, and render one (written atomically through store/files.py).

All Markdown and frontmatter I/O of memory files lives here (STYLE rule 7).
"""

import os
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timezone, tzinfo
from functools import cached_property
from pathlib import Path

import frontmatter
import yaml

from auto_dream.errors import StoreError
from auto_dream.judge.status import Status, written_status
from auto_dream.store.files import NotRegular, TooLarge, read_file
from auto_dream.store.paths import MEMORY_TYPES, OVERFLOW_NAME, StoreLayout
from auto_dream.store.text import Unreadable
from auto_dream.store.text import shown as shown  # re-exported: callers have always taken it from here

MAX_MEMORY_BYTES = 1_000_000  # larger than any memory a person or an agent writes
SLUG_MAX_CHARS = 50
KNOWN_KEYS = ("name", "description", "type", "mtime", "sources")
# The frontmatter keys dream writes into a memory that exists: when it merges, and when it
# archives one (dream/plan.py's archive_copies)
DREAM_KEYS = ("mtime", "sources", "archived", "archived_reason", "archived_by_run", "superseded_by",
              "memory_md_lines")
YAML_ERRORS = (yaml.YAMLError, ValueError, TypeError)


@dataclass(frozen=True)
class Memory:
    """One memory file, parsed. `path` is relative to the store root, with forward slashes."""

    path: str
    name: str
    description: str
    type: str
    mtime: datetime  # aware
    body: str = ""
    sources: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    # Where the type was found: "top", "metadata" (Claude Code's nested form) or "folder".
    type_source: str = "top"
    # Why this file must never be rewritten (no frontmatter, CRLF, a symlink…), or None.
    read_only: str | None = None

    @property
    def pinned(self) -> bool:
        return self.extra.get("pinned") is True

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @cached_property
    def status(self) -> Status | None:
        """What a person wrote of this memory's own status (deprecated, superseded, a duplicate,
        split, moved: judge.status), or None. The parse cache keeps it with the memory's row."""
        return written_status(self.name, self.description, self.body, self.file_name)

    def text(self) -> str:
        """Everything a person reads in it: name, description and body."""
        return "\n".join(part for part in (self.name, self.description, self.body) if part)


# ---------------------------------------------------------------- reading


def read_memory(path: Path, root: Path, tz: tzinfo | None, untyped: str | None = None) -> Memory | Unreadable:
    """Parse one memory file. Never raises for a bad file: it comes back as Unreadable.
    `untyped`: the layout's type for a file that names none (parse_memory)."""
    relative = Path(os.path.relpath(path, root)).as_posix()
    notes = []
    if path.is_symlink():
        target = Path(os.path.realpath(path))  # a loop comes back as a path that stat refuses (below)
        if not target.is_relative_to(os.path.realpath(root)):
            return Unreadable(relative, "a symlink to outside the store")
        notes.append("a symlink")
    try:
        raw, stat = read_file(path, MAX_MEMORY_BYTES, follow=True)  # a link inside the store is read
    except NotRegular:
        return Unreadable(relative, "not a regular file")
    except TooLarge as large:
        return Unreadable(relative, f"too large ({large.size:,} bytes; the limit is {MAX_MEMORY_BYTES:,})")
    except OSError as error:
        return Unreadable(relative, f"cannot read: {error.strerror}")
    file_mtime = file_time(stat.st_mtime, tz)
    if file_mtime is None:
        notes.append("its file time is not a usable date")
        file_mtime = UNKNOWN_TIME
    return parse_memory(raw, relative, file_mtime, tz, notes, untyped)


def file_time(seconds: float, tz: tzinfo | None) -> datetime | None:
    """A file's modification time as an aware datetime, or None when no datetime can hold it
    (a file touched to the year 36812)."""
    try:
        return usable_time(datetime.fromtimestamp(seconds, timezone.utc).astimezone(tz))
    except (OverflowError, OSError, ValueError):
        return None


def parse_memory(raw: bytes, relative: str, file_mtime: datetime, tz: tzinfo | None,
                 notes: list[str] | None = None, untyped: str | None = None) -> Memory | Unreadable:
    """Parse a memory file's bytes; `relative` is its path under the root.

    Where the type comes from: the frontmatter's `type:` (top level, or in a `metadata:`
    block), else the type folder it lies in. With `untyped` (a Claude Code folder, where topic
    files lie flat), a file that names no type takes it from its name as Claude Code names
    them (`feedback_testing.md`), else is read as `untyped`, and never rewritten."""
    notes = list(notes or [])
    if b"\x00" in raw:
        return Unreadable(relative, "binary content (NUL bytes)")
    if not raw.strip():
        return Unreadable(relative, "empty file")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        notes.append("starts with a byte-order mark")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return Unreadable(relative, f"not UTF-8 (bad byte at offset {error.start})")
    if text.split("\n", 1)[0].endswith("\r"):  # a CR inside a text is text; CRLF files are left as they are
        notes.append("has CR line ends")
    split = split_frontmatter(text, notes)
    if isinstance(split, str):
        return Unreadable(relative, split)
    metadata, body = split
    if metadata is None:
        notes.append("has no frontmatter")
        metadata = {}
    if untyped is not None and relative == OVERFLOW_NAME:
        notes.append("MEMORY.md's own overflow: lines moved out of it, kept as they were written")
    folder = _type_folder(relative)
    if folder is None and untyped is not None:
        folder = _type_from_file_name(relative)
    memory_type, type_source = _find_type(metadata, folder)
    if memory_type is None and untyped is not None:
        notes.append(f"names no type: read as {untyped}")
        memory_type, type_source = untyped, "folder"
    if memory_type is None:
        return Unreadable(relative, "no type: not in a type folder and no `type:` in its frontmatter")
    if memory_type not in MEMORY_TYPES:
        fallback = folder or untyped
        if fallback is None:
            return Unreadable(relative, f"unknown type {memory_type!r}")
        notes.append(f"unknown type {memory_type!r}; read as {fallback}")
        memory_type, type_source = fallback, "folder"
    name = _clean_line(metadata.get("name")) or _name_from_file(relative)
    description = _clean_line(metadata.get("description")) or _first_sentence(body) or name
    mtime = normalize_datetime(metadata.get("mtime"), tz)
    if mtime is None:
        if metadata.get("mtime") is not None:
            notes.append(f"mtime {metadata['mtime']!r} is not a usable date; its file time is used")
        mtime = own_time(metadata, tz) or file_mtime
    sources = _sources(metadata.get("sources"))
    if sources is None:
        notes.append("sources is not a list of ids")
        sources = ()
    if _too_deep(metadata):
        notes.append("frontmatter nested too deep to write back")
    extra = {k: v for k, v in metadata.items() if k not in KNOWN_KEYS}
    if "type" in metadata and type_source != "top":
        extra["type"] = metadata["type"]  # an unknown top-level type is kept as it was
    for key in ("name", "description"):
        if not _one_line_of_text(metadata.get(key)):
            # a list, several lines, a number, `!!binary`…: shown as one line, written back as it was
            extra[key] = metadata[key]
    return Memory(
        path=relative, name=name, description=description, type=memory_type, mtime=mtime,
        body=body, sources=sources, extra=extra, type_source=type_source,
        read_only="; ".join(notes) or None,
    )


_YAML_HANDLER = frontmatter.YAMLHandler()
# libyaml's parser when PyYAML has it (its wheels do): the same safe constructors, a fifth
# of the time, and far less garbage per file, which a first dream over 100,000 files feels.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def split_frontmatter(text: str, notes: list[str] | None = None) -> tuple[dict | None, str] | str:
    """(metadata or None when there is no frontmatter, body), or why the frontmatter is broken.

    Read as Claude Code reads it: a block that is not valid YAML as written (an unquoted `: `
    inside a description, a value that starts with a backtick) is read line by line, each value
    as written; an unquoted ` #` that YAML takes for a comment is part of a name or description,
    as the person wrote it. A note in `notes` says when a rewrite could not edit the block line
    by line (rewrite_memory), so that the file is read but never rewritten."""
    text = text.strip()
    if not _YAML_HANDLER.detect(text):
        return None, text
    try:
        block, body = _YAML_HANDLER.split(text)
    except ValueError:
        return "frontmatter block is never closed with ---"
    try:
        metadata = _YAML_HANDLER.load(block, Loader=_YAML_LOADER)
    except YAML_ERRORS as error:
        metadata = _read_lines(block)
        if metadata is None:
            return f"broken YAML frontmatter: {_first_line(error)}"
        if notes is not None and _yaml_but_for_dream_keys(block):
            notes.append("its frontmatter is not YAML only for a key dream writes, so a rewrite, writing that "
                         "key, would change how YAML reads the others")
        return metadata, body.strip()  # `key: value` lines by construction: a rewrite edits them as they are
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return "frontmatter is not a mapping of keys to values"
    metadata = {str(key): value for key, value in metadata.items()}
    metadata = _whole_values(metadata, block)
    if notes is not None and (problem := _line_edit_problem(block)):
        notes.append(problem)
    return metadata, body.strip()


def _line_edit_problem(block: str) -> str | None:
    """Why a rewrite could not change one key's lines of this (valid YAML) block and leave the
    others as they are, or None: the block must be a mapping of `key: value` entries from the
    first column, with no YAML anchor a changed value could be the target of."""
    first = next((line for line in block.split("\n") if line.strip() and not line.lstrip().startswith("#")), "")
    if first[:1] in (" ", "\t", "{", "[", "?", "!", "&", "*", "%", "@", "`", "|", ">"):
        return "its frontmatter is not written as `key: value` lines (a flow mapping, a tag, an anchor or an " \
               "indented block), which a rewrite cannot edit line by line"
    if any(_EXPLICIT.match(line) for line in block.split("\n")):
        return "its frontmatter has a document marker `...` or an explicit key `?`, which a rewrite cannot " \
               "edit line by line"
    if "&" in block and "*" in block and any(isinstance(event, yaml.AliasEvent)
                                             for event in yaml.parse(block, Loader=_YAML_LOADER)):
        return "its frontmatter uses YAML aliases (`*name`), which a rewrite changing a value could break"
    return None


def _yaml_but_for_dream_keys(block: str) -> bool:
    """Whether a block YAML refuses is YAML without the lines of the keys dream writes (`sources: a: b`)."""
    spans = [span for key, span in _line_entries(block).items() if key in DREAM_KEYS]
    if not spans:
        return False
    for start, end in sorted(spans, reverse=True):
        block = block[:start] + block[end:]
    try:
        yaml.load(block, Loader=_YAML_LOADER)
    except YAML_ERRORS:
        return False
    return True


_EXPLICIT = re.compile(r"(?:\.\.\.|\?)(?:[ \t]|$)")  # `...` (the document ends) or `? key` (an explicit key)


_KEY_LINE = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(.*))?$")
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'")


def _read_lines(block: str) -> dict | None:
    """A frontmatter block YAML refuses, read as `key: value` lines, each value as written (a
    quoted one unquoted), and one level of space-indented `key: value` under a key with no
    value (a `metadata:` block). None when a line is neither, or a value opens a YAML structure
    (`[`, `{`, `|`, an anchor, a tag) or indents with a tab: what that meant is not guessed at."""
    metadata: dict[str, object] = {}
    nested: dict[str, object] | None = None
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[:1] == " "
        match = _KEY_LINE.match(line.strip())
        if match is None or line[:1] == "\t" or (indented and nested is None):
            return None
        key, value = match.group(1), (match.group(2) or "").strip()
        if value[:1] == "[" and isinstance(listed := _flow_list(value), list):
            value = listed  # `sources: [3f9a1c0e22b4, 7d2e…]`, as a rewrite writes the ids
        elif value[:1] in ("[", "{", "|", ">", "&", "*", "!"):
            return None
        elif _QUOTED.fullmatch(value):
            try:
                value = yaml.safe_load(value)
            except YAML_ERRORS:
                return None
        else:
            value = _scalar(value)
        if indented:
            assert nested is not None
            nested[key] = value
        elif value == "":
            nested = metadata[key] = {}
        else:
            nested = None
            metadata[key] = value
    return metadata


def _flow_list(written: str) -> list | None:
    """`[a, b]` as YAML reads it when that is a list of strings and numbers, else None."""
    try:
        value = yaml.load(written, Loader=_YAML_LOADER)
    except YAML_ERRORS:
        return None
    if isinstance(value, list) and all(isinstance(item, (str, int, float)) for item in value):
        return value
    return None


def _scalar(written: str) -> object:
    """An unquoted value as YAML reads it when that is a date, a number, a boolean or null
    (`modified: 2026-03-01` stays a date when the file is written back), else the text as written."""
    try:
        value = yaml.load(written, Loader=_YAML_LOADER) if written else written
    except YAML_ERRORS:
        return written
    if not isinstance(value, (date, int, float)) and value is not None:
        return written
    # only when YAML writes it back as it was: `0755` (493), `9:30` (570), `1.10` (1.1) stay text
    return value if yaml.safe_dump(value, width=10**9).removesuffix("\n...\n").strip() == written else written


def _whole_values(metadata: dict, block: str) -> dict:
    """`name` and `description` YAML cut at an unquoted ` #` (a comment to YAML), made whole
    again: `name: Stray #[test] attribute` is "Stray #[test] attribute", and `description:
    2026-08-14 #1131 closed` is that whole line, not the date 2026-08-14: in these two the whole
    line is the value, as the person wrote it and as Claude Code shows it. Other keys keep YAML's
    reading: `type: feedback # from review` is a feedback memory, and a key auto-dream does not
    own reads as any YAML reader reads it."""
    if "#" not in block:
        return metadata  # nothing YAML could have taken for a comment
    lines = {}
    for line in block.splitlines():
        match = _KEY_LINE.match(line)
        if match is not None:
            lines[match.group(1)] = (match.group(2) or "").strip()  # the last wins, as in YAML
    for key in ("name", "description"):
        value, written = metadata.get(key), lines.get(key)
        if not written or written[0] in "'\"|>[{&*!" or written == value or isinstance(value, (dict, list)):
            continue
        # YAML's value is the part before the comment, typed: `2026-08-14 #1131 closed` is the date 2026-08-14
        before = _COMMENT.split(" " + written, maxsplit=1)[0].strip()
        if before != written and _yaml_reading(before) == (value, type(value)):
            metadata[key] = written
    return metadata


_COMMENT = re.compile(r"[ \t]#")  # where YAML takes the rest of a plain value for a comment


def _yaml_reading(written: str) -> tuple[object, type] | None:
    """What YAML reads `written` as, with its type (so that 1 is not True), or None when it cannot."""
    try:
        value = yaml.load(written, Loader=_YAML_LOADER)
    except YAML_ERRORS:
        return None
    return value, type(value)


def _sources(value: object) -> tuple[str, ...] | None:
    """The ids of a `sources:` value (a list, or one id written without brackets), or None when it is no list of ids."""
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(s, (str, int, float)) for s in value):
        return tuple(str(s) for s in value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return (str(value),) if value != "" else ()
    return None


def _too_deep(value: object, depth: int = 0, seen: set | None = None) -> bool:
    """Nesting past 50 levels, or more than 10,000 values (a YAML alias bomb), is never rewritten."""
    seen = seen if seen is not None else set()
    if depth > 50 or len(seen) > 10_000:
        return True
    if isinstance(value, (dict, list)):
        if id(value) in seen:
            return True  # an alias: a shared value written twice would be expanded
        seen.add(id(value))
        items = value.values() if isinstance(value, dict) else value
        return any(_too_deep(item, depth + 1, seen) for item in items)
    return False


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split())[:160]


def _type_folder(relative: str) -> str | None:
    parts = relative.split("/")
    for part in parts[:-1]:
        if part in MEMORY_TYPES:
            return part
    return None


def _type_from_file_name(relative: str) -> str | None:
    """`feedback` for `feedback_testing.md`: the type Claude Code's file name begins with."""
    prefix = relative.rsplit("/", 1)[-1].split("_", 1)[0].lower()
    return prefix if prefix in MEMORY_TYPES else None


def _find_type(metadata: dict, folder: str | None) -> tuple[str | None, str]:
    top = metadata.get("type")
    if isinstance(top, str) and top.strip():
        return top.strip().lower(), "top"
    nested = metadata.get("metadata")
    if isinstance(nested, dict) and isinstance(nested.get("type"), str):
        return nested["type"].strip().lower(), "metadata"
    return folder, "folder"


def _clean_line(value: object) -> str:
    if value is None or isinstance(value, (dict, list, bytes)):
        return ""
    return " ".join(str(value).split())


def _one_line_of_text(value: object) -> bool:
    """Absent, or a string that is its own one-line form: a rewrite can write it from the
    name or description the memory shows without changing a character of it."""
    return value is None or (isinstance(value, str) and _clean_line(value) == value)


def _name_from_file(relative: str) -> str:
    stem = relative.rsplit("/", 1)[-1].removesuffix(".md")
    stem = re.sub(r"^\d{8}_", "", stem)
    return " ".join(stem.replace("_", " ").split()) or stem


def _first_sentence(body: str) -> str:
    for line in body.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            return " ".join(line.split())
    return ""


# The times other tools write into a memory, most telling first (Claude Code's own
# `metadata.modified` among them). A git checkout gives every file one mtime: these are
# what still tells which of two memories is newer (a decision memo from the analysis it
# answers, round 2 of a brainstorm from round 1).
_OWN_TIME_KEYS = (("metadata", "modified"), ("modified",), ("updated",), ("metadata", "updated"), ("date",),
                  ("created",), ("metadata", "created"))


def own_time(metadata: dict, tz: tzinfo | None) -> datetime | None:
    """The memory's own time from its frontmatter when dream's `mtime` is not there, or None."""
    for keys in _OWN_TIME_KEYS:
        value: object = metadata
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None and (found := normalize_datetime(value, tz)) is not None:
            return found
    return None


def normalize_datetime(value: object, tz: tzinfo | None) -> datetime | None:
    """YAML gives dates, datetimes (naive or aware) or strings: make an aware datetime, or None
    when it is no date or not a usable one (see usable_time)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time())
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    try:
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=tz) if tz is not None else parsed.astimezone()
        return usable_time(parsed)
    except (OverflowError, OSError, ValueError):  # 0001-01-01 has no local time west of UTC
        return None


# Every time a memory holds is converted to other zones, compared, shifted by days and shown;
# at the ends of the calendar (0001-01-01, 9999-12-31T23:59:59-12:00) each of those overflows.
# Within these bounds a year either way is safe. Outside them a time is not when a memory was
# written: it counts as unknown.
USABLE_TIMES = (datetime(1000, 1, 1, tzinfo=timezone.utc), datetime(9999, 1, 1, tzinfo=timezone.utc))
UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=timezone.utc)  # when even the file's time is unusable


def usable_time(moment: datetime) -> datetime | None:
    """`moment` (aware) when it lies within USABLE_TIMES, else None."""
    try:
        return moment if USABLE_TIMES[0] <= moment < USABLE_TIMES[1] else None
    except (OverflowError, ValueError):  # an offset that pushes it past year 9999 when compared
        return None


# ---------------------------------------------------------------- writing


def _writable(text: str) -> str:
    """What a memory file can hold and still be read back: no NUL (the reader takes the file
    for binary). A log entry may carry one; the log keeps it exactly."""
    return text.replace("\x00", "\\x00")


# ---------------------------------------------------------------- rewriting a file in place


@dataclass(frozen=True)
class WrittenText:
    """What a rewrite keeps of a memory file as it was written: its frontmatter lines, and the
    white space around its body (the body itself is the memory's: Memory.body)."""

    before: str  # everything before the frontmatter's lines: white space, the opening `---` line
    block: str  # the frontmatter's lines, each with its line end
    closing: str  # the closing `---` line, with its line end when it has one
    gap: str  # the white space between the closing line and the body (Claude Code writes a blank line)
    after: str  # the white space after the body


_BOUNDARY = re.compile(r"-{3,}\s*")  # a frontmatter boundary line, as python-frontmatter finds it


def written_text(raw: bytes, body: str) -> WrittenText | None:
    """The parts of a memory file a rewrite keeps, or None when it cannot keep them (no
    frontmatter, not UTF-8, or a body that is not `body`, the memory's as it was read)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lead = len(text) - len(text.lstrip())
    first = text[lead:].split("\n", 1)[0]
    if text.startswith("\ufeff") or not _BOUNDARY.fullmatch(first):
        return None
    opened = lead + len(first) + 1  # after the opening line's line end
    offset = opened
    for line in text[opened:].split("\n"):
        if _BOUNDARY.fullmatch(line):
            closing_end = min(offset + len(line) + 1, len(text))
            rest = text[closing_end:]
            if rest.strip() != body:
                return None
            gap = rest[:len(rest) - len(rest.lstrip())]
            return WrittenText(before=text[:opened], block=text[opened:offset], closing=text[offset:closing_end],
                               gap=gap, after=rest[len(rest.rstrip()):] if rest.strip() else "")
        offset += len(line) + 1
    return None


def rewrite_memory(written: WrittenText | None, before: Memory, after: Memory) -> str:
    """The text of a memory file that held `written` (read as `before`), now `after`: the lines of
    the frontmatter keys whose value changed (dream's own: mtime and sources when it merges, the
    archive keys when it archives) replaced, or added at the end of the block, and every other
    line kept byte for byte; then the body, in the white space it had. A file with no text to
    keep (a new one) is rendered whole (render_memory).

    Raises StoreError when the edited text would not read back as `after` with every other key
    as it was: parse_memory marks a file whose frontmatter cannot be edited so (_line_edit_problem)
    read-only, so this does not happen to a file dream chose to rewrite."""
    if written is None:
        return render_memory(after)
    entries = _entries(written.block)
    changed = _changed_lines(before, after, set(entries))
    block = _edited_block(written.block, entries, changed) if changed else written.block
    closing = written.closing if written.closing.endswith("\n") or not after.body else written.closing + "\n"
    if after.body == before.body:
        text = written.before + block + closing + written.gap + after.body + written.after
    else:
        text = written.before + block + closing + written.gap + _writable(after.body) + (written.after or "\n")
    _check_rewrite(text, written, after, changed)
    return text


def _changed_lines(before: Memory, after: Memory, present: set[str]) -> dict[str, str]:
    """Each frontmatter key a rewrite writes, and its new lines (without the last line end); `present`:
    the keys the frontmatter has. A file says its name and description when its file name and
    body no longer do (an archive copy's name is numbered, a merge adds to the body), and an
    archive copy, a new file, says its time."""
    moved = after.path != before.path
    lines: dict[str, str] = {}
    if "name" not in after.extra and (after.name != before.name or (
            moved and "name" not in present and _name_from_file(after.path) != after.name)):
        lines["name"] = _yaml_line("name", _clean_line(after.name))
    derived = _first_sentence(after.body) or after.name  # the description of a file with none (parse_memory)
    if "description" not in after.extra and (after.description != before.description or (
            "description" not in present and derived != after.description)):
        lines["description"] = _yaml_line("description", _clean_line(after.description))
    if after.type != before.type and after.type_source == "top" and "type" not in after.extra:
        lines["type"] = _yaml_line("type", after.type)
    if after.mtime != before.mtime or (moved and "mtime" not in present):
        lines["mtime"] = f"mtime: {after.mtime.isoformat(timespec='seconds')}"
    if after.sources != before.sources:
        lines["sources"] = _sources_line(after.sources)
    for key, value in after.extra.items():
        if key not in before.extra or not _same(value, before.extra[key]):
            lines[key] = _entry_line(key, value)
    return lines


def _entry_line(key: str, value: object) -> str:
    """`key: value` for a frontmatter block, a string or a list of strings on one line (a string
    double-quoted when it must be): a block read line by line (_read_lines) reads no value over
    several lines."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return f"{key}: [{', '.join(_one_line_scalar(item) for item in value)}]"
    if isinstance(value, str):
        return f"{key}: {_one_line_scalar(value)}"
    return _dump_extra({key: value})


def _one_line_scalar(value: str) -> str:
    dumped = yaml.safe_dump(value, allow_unicode=True, width=10**9).removesuffix("\n...\n").rstrip("\n")
    if "\n" in dumped or dumped[:1] in ("-", "?", ":") or any(c in dumped for c in ",[]{}"):
        dumped = yaml.safe_dump(value, default_style='"', allow_unicode=True, width=10**9).rstrip("\n")
    return dumped


def _same(a: object, b: object) -> bool:
    return a == b or repr(a) == repr(b)  # a NaN is not equal to itself


# an entry id (hex) with a letter in it is a plain string to YAML; one of digits alone reads as a number
_PLAIN_ID = re.compile(r"(?!0b[01]*$)[0-9a-f]*[a-f][0-9a-f]*")  # 0b…: a binary number


def _sources_line(sources: tuple[str, ...]) -> str:
    if all(_PLAIN_ID.fullmatch(source) for source in sources):
        return f"sources: [{', '.join(sources)}]"  # as yaml.safe_dump writes it (tested against it)
    return "sources: " + yaml.safe_dump(list(sources), default_flow_style=True, width=10**9).strip()


def _edited_block(block: str, spans: dict[str, tuple[int, int]], changed: dict[str, str]) -> str:
    """`block` with each changed key's entry (`spans`: _entries) replaced by its new lines, or the
    lines added at its end."""
    for key in sorted((k for k in changed if k in spans), key=lambda k: -spans[k][0]):
        start, end = spans[key]
        block = block[:start] + changed[key] + block[end:]
    added = "".join(changed[key] + "\n" for key in changed if key not in spans)
    return block + added


def _entries(block: str) -> dict[str, tuple[int, int]]:
    """Where each top-level key's entry lies in `block`: from its key to the end of the line its
    value ends on (a comment after it included). The last entry of a key written twice, as YAML reads it."""
    try:
        root = yaml.compose(block, Loader=_YAML_LOADER)
    except YAML_ERRORS:
        return _line_entries(block)  # read line by line (_read_lines): each entry is its lines
    spans: dict[str, tuple[int, int]] = {}
    if not isinstance(root, yaml.MappingNode):
        return spans
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.start_mark.column == 0:
            spans[str(key.value)] = (key.start_mark.index, _entry_end(block, key.start_mark.index, value))
    return spans


def _entry_end(block: str, start: int, value: yaml.Node) -> int:
    """The end of the line a value's last character is on. A block collection or a block scalar
    ends, for YAML, where the next entry begins: the blank and comment lines before it are left."""
    end = value.end_mark.index
    block_scalar = isinstance(value, yaml.ScalarNode) and value.style in ("|", ">")
    if block_scalar or (isinstance(value, yaml.CollectionNode) and not value.flow_style):
        lines = block[start:end].split("\n")
        while len(lines) > 1 and (not lines[-1].strip() or (lines[-1].lstrip().startswith("#")
                                                            and (not block_scalar or lines[-1][:1] == "#"))):
            lines.pop()  # a blank line, or a comment (in a block scalar only one in the first column)
        end = start + len("\n".join(lines))
    line_end = block.find("\n", end)
    return line_end if line_end >= 0 else len(block)


def _line_entries(block: str) -> dict[str, tuple[int, int]]:
    """_entries of a block read line by line: a key's line and the indented lines under it."""
    spans: dict[str, tuple[int, int]] = {}
    offset, key = 0, None
    for line in block.split("\n"):
        match = _KEY_LINE.match(line)
        if match is not None:
            key = match.group(1)
            spans[key] = (offset, offset + len(line))
        elif key is not None and line[:1] == " " and line.strip() and not line.lstrip().startswith("#"):
            spans[key] = (spans[key][0], offset + len(line))
        offset += len(line) + 1
    return spans


def _check_rewrite(text: str, written: WrittenText, after: Memory, changed: dict[str, str]) -> None:
    """That `text` reads back as `after`, every key not in `changed` as it was written (StoreError if not)."""
    why = _misread(text, written, after, changed)
    if why:
        raise StoreError(f"{after.path}: cannot rewrite its frontmatter line by line ({why}); nothing was changed")


def _misread(text: str, written: WrittenText, after: Memory, changed: dict[str, str]) -> str | None:
    old = split_frontmatter(written.before + written.block + written.closing)
    new = split_frontmatter(text)
    if isinstance(new, str) or isinstance(old, str) or new[0] is None or old[0] is None:
        return "its frontmatter would not read back"
    new_meta, old_meta = new[0], old[0]
    if not _same({k: v for k, v in new_meta.items() if k not in changed},
                 {k: v for k, v in old_meta.items() if k not in changed}):
        return "a key it does not change would read differently"
    if any(k not in new_meta for k in changed) or not _reads_as(new_meta, after, changed):
        return "a key it changes would not read as written"
    if new[1] != _writable(after.body).strip():
        return "its body would not read back"
    return None


def _reads_as(metadata: dict, after: Memory, changed: dict[str, str]) -> bool:
    """Whether the changed keys of `metadata` say what `after` does."""
    for key in changed:
        value = metadata[key]
        if key == "mtime":
            read = normalize_datetime(value, after.mtime.tzinfo)
            if read != after.mtime.replace(microsecond=0):
                return False
        elif key == "sources":
            if _sources(value) != after.sources:
                return False
        elif key in ("name", "description"):
            if _clean_line(value) != _clean_line(getattr(after, key)):
                return False
        elif key == "type":
            if value != after.type:
                return False
        elif not _same(value, after.extra.get(key)):
            return False
    return True


def render_memory(memory: Memory) -> str:
    """The text of a new memory file: known keys first, the rest, then the body (a file that
    exists is rewritten by rewrite_memory, which keeps what it does not change)."""
    memory = replace(memory, name=_writable(memory.name), description=_writable(memory.description),
                     body=_writable(memory.body))
    # one line each, as a memory shows them; one kept in `extra` is written there, as it was (parse_memory)
    head = [_yaml_line(key, _clean_line(value)) for key, value in (("name", memory.name),
                                                                    ("description", memory.description))
            if key not in memory.extra]
    if memory.type_source != "metadata" and "type" not in memory.extra:
        head.append(_yaml_line("type", memory.type))
    head.append(f"mtime: {memory.mtime.isoformat(timespec='seconds')}")
    if memory.sources:
        head.append(_sources_line(memory.sources))
    if memory.extra:
        head.append(_dump_extra(memory.extra))
    body = memory.body.strip("\n")
    return "---\n" + "\n".join(head) + "\n---\n" + (body + "\n" if body else "")


def _dump_extra(extra: dict) -> str:
    dumped = yaml.safe_dump(extra, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**9)
    if yaml.safe_load(dumped) != extra:  # a character YAML folds when written raw (U+0085…): escape all
        dumped = yaml.safe_dump(extra, sort_keys=False, allow_unicode=False, default_flow_style=False,
                                width=10**9)
    return dumped.rstrip("\n")


# A value YAML writes as it is (a plain scalar): it starts with a letter (no number, date, tag,
# anchor, list or quote), holds none of the characters YAML gives a meaning to, and is not one
# of YAML 1.1's booleans or nulls. Most names and descriptions are; the rest go through PyYAML.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.,;()/+=-]*[A-Za-z0-9_.,;()/+=-]|[A-Za-z]")
_YAML_WORDS = frozenset("y n yes no true false on off null".split())


def _yaml_line(key: str, value: str) -> str:
    """`key: value` as yaml.safe_dump writes it (tested against it): its plain-scalar cases directly,
    a tenth of the time; a dream of 16,000 new memories writes three such lines for each, twice."""
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return f"{key}: {value}"
    return yaml.safe_dump({key: value}, allow_unicode=True, width=10**9).rstrip("\n")


# ---------------------------------------------------------------- naming


def slugify(text: str) -> str:
    """Unicode letters and digits stay (CJK stays CJK); everything else becomes `_`. At most
    SLUG_MAX_CHARS, cut where a word ends: at a `_`, else where scripts meet (Latin letters or
    digits and CJK, kana and kanji), never inside a word, a CJK run or a number (the slug of
    「…長期間残したいテストデータはseedスクリプト」 was cut at 「seedス」), unless one word
    is longer than that."""
    whole = _whole_slug(text)
    if len(whole) <= SLUG_MAX_CHARS:
        return whole or "memory"
    ends = [end for end in range(1, SLUG_MAX_CHARS + 1) if whole[end] == "_" or _script(whole[end - 1]) != _script(
        whole[end])]
    end = max(ends, default=0)
    if end < SLUG_MAX_CHARS // 3:  # one word takes nearly all of it: cut it, but not inside a number
        end = SLUG_MAX_CHARS
        while end > 1 and whole[end - 1].isdigit() and whole[end].isdigit():
            end -= 1
    return whole[:end].rstrip("_") or "memory"


def _script(char: str) -> str:
    """Which script a slug's character is in: ASCII letters and digits are one (v2, 10x)."""
    if char.isascii():
        return "ascii" if char.isalnum() else "other"
    if "\u3041" <= char <= "\u309f":
        return "hiragana"
    if "\u30a0" <= char <= "\u30ff":
        return "katakana"
    return "cjk" if unicodedata.east_asian_width(char) in "WF" else "letter"


def _whole_slug(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    chars = [c if unicodedata.category(c)[0] in "LN" else "_" for c in text]
    return re.sub(r"_+", "_", "".join(chars)).strip("_")


class TakenNames:
    """The file names in use in one folder, compared case-blind (as macOS and Windows folders do).

    Names are folded when first asked about, and only those beginning with the date the name
    asked about begins with: no character but an ASCII digit or `_` case-folds to one, so only
    a name that already begins `20261201_` can fold to one that does. A nightly run naming a
    hundred memories in a folder of 100,000 folds the few of that day, not the folder.
    """

    def __init__(self, names: Iterable[str] = ()):
        self._names = list(names)
        self._folded: dict[str, set[str]] = {}  # date prefix ("" for any name) -> folded names

    def __contains__(self, name: str) -> bool:
        folded = name.casefold()
        return folded in self._bucket(_date_prefix(folded))


    def first_free(self, file_name: str) -> str:
        """`file_name`, else `<stem>_2.md`, `<stem>_3.md`…: the first one the folder does not hold."""
        stem, number, candidate = file_name.removesuffix(".md"), 2, file_name
        while candidate in self:
            candidate = f"{stem}_{number}.md"
            number += 1
        return candidate

    def add(self, name: str) -> None:
        self._names.append(name)
        folded = name.casefold()
        for prefix, bucket in self._folded.items():
            if folded.startswith(prefix):
                bucket.add(folded)

    def _bucket(self, prefix: str) -> set[str]:
        bucket = self._folded.get(prefix)
        if bucket is None:
            bucket = self._folded[prefix] = {n.casefold() for n in self._names if n.startswith(prefix)}
        return bucket


def folder_names(folder: Path) -> tuple[str, ...]:
    """Every name in `folder` (none when it is not there): what a new file's name must not take."""
    return tuple(os.listdir(folder)) if folder.is_dir() else ()


def archived_names(paths: "StoreLayout", memory_type: str) -> list[str]:
    """The names of the archive's files of a type as they were named live (`x.md`, whatever
    the layout's archive_ext), for numbering a new archive copy against them."""
    try:
        names = os.listdir(paths.archive_dir(memory_type))
    except OSError:
        return []
    ext = paths.archive_ext
    return [name.removesuffix(ext) + ".md" for name in names if name.endswith(ext)]


_DATE_PREFIX = re.compile(r"[0-9]{8}_")


def _date_prefix(folded: str) -> str:
    return folded[:9] if _DATE_PREFIX.match(folded) else ""


def memory_file_name(name: str, day: date, taken: "TakenNames | set[str]", prefix: str | None = None) -> str:
    """`YYYYMMDD_<slug>.md` (or `<prefix><slug>.md`, as the layout names new files), with a
    numeric suffix when the name is taken (case-blind)."""
    if not isinstance(taken, TakenNames):
        taken = TakenNames(taken)
    if prefix is None:
        return taken.first_free(f"{day:%Y%m%d}_{slugify(name)}.md")
    return taken.first_free(f"{prefix}{_claude_slug(name)}.md")


def _claude_slug(name: str) -> str:
    """A slug as Claude Code names its topic files: lower case (`feedback_testing`)."""
    return slugify(name).lower()
