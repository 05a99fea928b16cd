"""MEMORY.md of a Claude Code memory folder, rebuilt in place: every line a person wrote is kept.

Claude Code's MEMORY.md is partly hand-written: sections of the person's own, one-line hooks
after the links, whole notes kept inline with no topic file at all. `rebuild_claude_index` only
drops the lines that link a retired file, adds a line for each live memory nothing links, and,
when the file would outgrow what Claude Code loads, moves lines into an overflow topic file
(linked from MEMORY.md) instead of letting Claude Code cut the newest ones silently.
"""

import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from urllib.parse import unquote

from auto_dream.judge.fences import closes
from auto_dream.judge.status import Kind, Status, written_status
from auto_dream.store.index import SEPARATOR, IndexLimits, entry_text, link_path, shorten, unreadable_line
from auto_dream.store.markdown import block_tokens
from auto_dream.store.memory import Memory
from auto_dream.store.paths import MEMORY_TYPES, OVERFLOW_NAME

CLAUDE_TITLE = "# Memory Index"  # the title Claude Code gives a MEMORY.md it starts
OVERFLOW_LABEL = "Moved from MEMORY.md"
OVERFLOW_FRONTMATTER = (
    "---",
    f"name: {OVERFLOW_LABEL}",
    "description: Lines moved out of MEMORY.md to keep it within what Claude Code loads; nothing was cut",
    "type: reference",
    "pinned: true",
    "---",
)
# "The first 200 lines of MEMORY.md, or the first 25KB, whichever comes first, are loaded at the
# start of every conversation" (https://code.claude.com/docs/en/memory, "Auto memory").
CLAUDE_CODE_CAPS = (200, 25_000)

# What a line is, for what may happen to it.
_TITLE = "title"  # the first line, `# …`: never moves
_HAND = "hand"  # written by a person and not a link line to a live memory: moves first, from the bottom up
_LINK = "link"  # a link line to a live memory (the person's, or one added now): moves next, oldest memory first
_FIXED = "fixed"  # a link line to the overflow file: never moves
_NEW = "new"  # a heading or blank line of a section added now: goes when its last line moves

# A list item whose first element is `[`: `-`, `*`, `+`, `1.` or `1)`, any indentation.
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\[)")
_ANY_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
# An inline link's destination and title, after its `(` (CommonMark 0.31.2, "Links":
# https://spec.commonmark.org/0.31.2/#links): `<…>`, or no spaces with balanced parentheses.
_PARENS = r"\((?:[^\s()\\]|\\.)*\)"  # one level of balanced parentheses
_DESTINATION = (rf"[ \t]*(?P<dest><[^<>\n]*>|(?:[^\s()\\<]|\\.|{_PARENS})(?:[^\s()\\]|\\.|{_PARENS})*)?"
                r"(?:[ \t]+(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?[ \t]*\)")
_AFTER_LABEL = re.compile(_DESTINATION)
_ANY_LINK = re.compile(r"\]\(" + _DESTINATION)
_CODE_FILE = re.compile(r"(?<!`)`([^`\s]+\.md)`(?!`)")  # a code span that is a file name: `notes.md`
_DEFINITION = re.compile(r" {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*(?P<dest><[^<>\n]*>|\S+)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
# `## Feedback`, `## Projects`, `### References:`, `## Project Memories` (application-pipeline)
_TYPE_HEADING = re.compile(r"(user|feedback|project|reference)s?(?:[ \t]+memor(?:y|ies))?[ \t]*:?", re.IGNORECASE)
# A heading that retires what is under it: `## Archived (superseded 2026-03-26)`, `### Deprecated`,
# `## 已归档`, `## アーカイブ` (not `## Deprecated APIs`, a section about APIs)
_RETIRED_HEADING = re.compile(
    r"[^\w]*(?P<word>archived?|superseded|deprecated|obsolete|retired|已归档|归档|存档|已废弃|废弃|已弃用|已过时|过时"
    r"|アーカイブ|非推奨|廃止)(?:[ \t]+(?:memories|memory|notes?|entries|entry|files?|topics?|links?|rules?"
    r"|feedback|projects?|users?|references?))?[ \t]*(?:$|[(:：（\-–—/,|&]|and\b|or\b|の|的)", re.IGNORECASE)
# A file name written bare, as a person lists what a retiring heading holds: `- feedback_old.md — absorbed`
_BARE_FILE = re.compile(r"(?<![\w/.\-(\[`<])([\w.\-]+\.md)\b")
# index.unreadable_line's form, also when it was shortened right after the count
_UNREADABLE = re.compile(r"- Not read \(\d+(?:, `|…)")


@dataclass(frozen=True)
class ClaudeIndex:
    text: str  # the new MEMORY.md
    overflow_text: str | None  # the new content of the overflow topic file, or None when nothing moved
    moved: int  # lines moved into the overflow file this time
    added: list[str]  # memory paths given a new line, in file order
    dropped: list[str]  # lines removed because they link to a retired file (without their line end)
    warnings: list[str]


@dataclass(eq=False)  # lines are told apart by identity: two blank lines are two lines
class _Line:
    text: str  # as written, without its "\n" (a CRLF file's "\r" kept)
    kind: str
    memory: Memory | None = None  # the live memory a _LINK line links
    section: int = -1  # the number of the section added now that holds it
    written: bool = True  # in the file before this run
    fence: int = -1  # the fenced code block it is part of (its fence lines too): they move together

    @property
    def content(self) -> str:
        return self.text.removesuffix("\r")

    @property
    def cost(self) -> int:
        return len(self.text.encode()) + 1


def rebuild_claude_index(existing: str | None, live: Sequence[Memory], retired: Collection[str],
                         limits: IndexLimits, today: date, existing_overflow: str | None = None,
                         overflow_name: str = OVERFLOW_NAME, unreadable: Sequence[str] = ()) -> ClaudeIndex:
    """The new MEMORY.md of a Claude Code memory folder, from the file as it is (`existing`, None
    when there is none): every line kept byte for byte and in its order except the list items
    whose first link names a `retired` file (dropped) and the lines moved to the overflow file;
    a line `- [name](file.md) — description` for each `live` memory no link in MEMORY.md or in
    the overflow file names, at the end of the section named after its type (or of a section
    `## <Type>` added at the end; never under a heading such as `## Archived (superseded …)`, whose
    links stay and where a file named bare is listed too); none for a memory a person marked
    deprecated, superseded… (Memory.status); one line naming the `unreadable` files, last. Paths are
    file names relative to the folder. What does not fit `limits` moves, never cut: hand-written lines
    from the bottom up, then the link lines of the oldest memories; MEMORY.md links the overflow
    file (`overflow_name`), whose text is `existing_overflow` (None when there is none): a move
    appends to it, and a memory it links counts as listed. The text always ends with one line end
    after its last line (an empty file with nothing to add stays empty); a CRLF file stays CRLF.
    Pure: no I/O, and running it on its own output (and overflow text) changes nothing."""
    source = f"{CLAUDE_TITLE}\n\n" if existing is None else existing
    cr = "\r" if _uses_crlf(source) else ""
    live_by_path = {memory.path: memory for memory in live}
    names = _Names(live_by_path, retired)
    overflow_prefix = f"- [{OVERFLOW_LABEL}]({link_path(overflow_name)})"
    unread = unreadable_line(unreadable, limits.line_chars) if unreadable else None
    parsed = _parse(_split(source, cr), names, live_by_path, overflow_name, overflow_prefix, unread)
    linked = parsed.linked | _linked_in(existing_overflow or "", names)
    # a memory a person marked deprecated, superseded… (Memory.status) gets no new line; a line linking it stays
    unlisted = [m for m in live if m.path not in linked and m.path != overflow_name and m.status is None]
    lines = _place(parsed, unlisted, limits, cr)
    anchor = parsed.anchor
    overflow_memory = live_by_path.get(overflow_name)
    if anchor is None and overflow_memory is not None and overflow_name not in linked:
        anchor = _Line(entry_text(overflow_memory, limits.line_chars) + cr, _FIXED, overflow_memory, written=False)
        lines.append(anchor)  # the overflow file is listed by the line that will say what moved there

    warnings = []
    unread_line = _Line(unread + cr, _FIXED, written=False) if unread else None
    moves = _Moves(lines, anchor, unread_line, limits, overflow_prefix, today, cr)
    moved = moves.fit()
    if unread_line and moves.unread is None:
        unread_line = None  # caps this tight have no room for it: the warning names every file
        warnings.append(f"MEMORY.md has no room for the line naming {len(unreadable)} unreadable files")
    if moved:
        if anchor is None:
            anchor = _Line("", _FIXED, written=False)
            lines.append(anchor)
        anchor.text = moves.anchor_text(len(moved)) + cr
        noun = "line" if len(moved) == 1 else "lines"
        warnings.append(f"MEMORY.md would outgrow {limits.max_lines} lines or {limits.max_bytes:,} bytes: "
                        f"{len(moved)} {noun} moved to {overflow_name}, nothing cut")
    elif anchor is not None and anchor.kind == _FIXED and anchor.written and existing_overflow is None \
            and overflow_memory is None:
        lines = [line for line in lines if line is not anchor]  # ours, and the file it links is gone
        warnings.append(f"MEMORY.md linked {overflow_name}, which is not there: the line is removed")
    if not moves.fits():
        warnings.append(f"MEMORY.md is over {limits.max_lines} lines or {limits.max_bytes:,} bytes "
                        "with every line that may move moved")
    gone = set(map(id, moved)) | moves.vanished
    kept = [line for line in lines if id(line) not in gone]
    added = [line.memory.path for line in lines if not line.written and line.memory is not None]
    if unread_line:
        kept.append(unread_line)
    kept = _before_open_fence(kept, parsed.open_fence)
    # a hand-written line longer than limits.line_chars is kept whole, and not warned about at
    # every run: Claude Code loads it as it is (its caps are lines and bytes)
    return ClaudeIndex(
        text="".join(line.text + "\n" for line in kept),
        overflow_text=_overflow_text(existing_overflow, moved, today, cr) if moved else None,
        moved=len(moved),
        added=added,
        dropped=parsed.dropped,
        warnings=warnings,
    )


# ---------------------------------------------------------------- reading the file


def _uses_crlf(text: str) -> bool:
    return text.count("\r\n") * 2 > text.count("\n")


def _split(text: str, cr: str) -> list[str]:
    """The lines of `text` without their "\\n"; the last one ended like the others."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final line end
    elif cr and not lines[-1].endswith(cr):
        lines[-1] += cr
    return lines


class _Names:
    """Which memory file a link destination names, as MEMORY.md is read from the folder."""

    def __init__(self, live: Collection[str], retired: Collection[str]):
        self.known = set(live) | set(retired)
        # a destination written from elsewhere (`memory/foo.md` from the repository root) names
        # a live file by its last component, when only one has that name; a retired file only by
        # its own path: `../../docs/release.md` is a repository document, not the archived
        # release.md, and a line is dropped only when it surely links what dream retired
        self.by_name = _by_file_name(live)

    def resolve(self, destination: str) -> str | None:
        path = _ESCAPED.sub(r"\1", destination[1:-1] if destination[:1] == "<" else destination)
        if not path or _SCHEME.match(path) or path.startswith("//"):
            return None  # a URL
        path = unquote(path.split("#", 1)[0].split("?", 1)[0])  # a `#` or `?` in a file name is percent-encoded
        if not path:
            return None
        path = posixpath.normpath(path)  # `./foo.md`
        if path in self.known:
            return path
        return self.by_name.get(path.rsplit("/", 1)[-1])


def _by_file_name(paths: Collection[str]) -> dict[str, str | None]:
    """Each file name and the path that has it, or None when several have it."""
    found: dict[str, str | None] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        found[name] = path if found.get(name, path) == path else None
    return found


@dataclass(frozen=True)
class _Code:
    """The lines of a MEMORY.md that are code, as CommonMark reads the file (where nothing is a
    link or a heading): fenced and indented code blocks, a fence in a list or a quote ending
    with it, and a fence never closed running to the end of the file."""

    block: dict[int, int]  # line number: the code block it is part of (its fence lines too)
    open_at: int | None  # the first line of a fence never closed that runs to the end, or None

    @classmethod
    def of(cls, lines: Sequence[str]) -> "_Code":
        """`lines` without their line ends (a "\\r" left at the end of one is no line end of its own)."""
        block: dict[int, int] = {}
        open_at = None
        text = "".join(line.removesuffix("\r").replace("\r", " ") + "\n" for line in lines)
        blocks = [(token, token.map) for token in block_tokens(text)
                  if token.type in ("fence", "code_block") and token.map is not None]
        for number_of_block, (token, (first, end)) in enumerate(blocks):
            block.update(dict.fromkeys(range(first, end), number_of_block))
            if token.type == "fence" and token.level == 0 and end == len(lines) \
                    and not (end - 1 > first and closes(lines[end - 1], token.markup)):
                open_at = first
        return cls(block, open_at)


def _destinations(content: str, *, bare: bool = False) -> Iterator[str]:
    """The destination of every link on a line (inline links, link reference definitions), and
    every code span that names a markdown file: "See `prerelease-support.md` for the research"
    lists that topic file as well as a link does (orchestkit's agents write them so). With `bare`
    (under a heading that retires what it holds), a file name written bare too."""
    for match in _ANY_LINK.finditer(content):
        if match.group("dest"):
            yield match.group("dest")
    definition = _DEFINITION.match(content)
    if definition:
        yield definition.group("dest")
    for match in _CODE_FILE.finditer(content):
        yield match.group(1)
    if bare:
        for match in _BARE_FILE.finditer(content):
            yield match.group(1)


def _first_link(content: str) -> str | None:
    """The destination of the link that is the first element of a list item, or None."""
    item = _item_link(content)
    return item[1] if item else None


def _item_link(content: str) -> tuple[str, str, str] | None:
    """The label and destination of the link that is the first element of a list item, and what
    follows it on the line; None when the line is no such item."""
    item = _LIST_ITEM.match(content)
    if item is None:
        return None
    position, depth = item.end(), 0
    while position < len(content):  # the label: brackets nest, a backslash escapes
        char = content[position]
        if char == "\\":
            position += 1
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                break
        position += 1
    else:
        return None
    if content[position + 1: position + 2] != "(":
        return None
    match = _AFTER_LABEL.match(content, position + 2)
    if match is None or not match.group("dest"):
        return None
    return content[item.end() + 1: position], match.group("dest"), content[match.end():]


def _linked_in(overflow: str, names: _Names) -> set[str]:
    """The files the overflow file names. Its lines all moved from MEMORY.md, the lines under
    `## Archived` first (from the bottom up) and maybe without their heading: a file named bare
    there is listed too."""
    lines = overflow.split("\n")
    code = _Code.of(lines)
    return {path for number, line in enumerate(lines) if number not in code.block
            for destination in _destinations(line.removesuffix("\r"), bare=True)
            if (path := names.resolve(destination)) is not None}


@dataclass
class _Parsed:
    lines: list[_Line]
    linked: set[str]  # paths any kept line links
    dropped: list[str]
    after: dict[str, int]  # memory type: the index of the last non-blank line of its section
    anchor: _Line | None  # our line linking the overflow file
    open_fence: _Line | None = None  # the first line of a fence never closed that runs to the end


class _Retiring:
    """Whether a line is under a heading that retires what is under it (`## Archived (superseded …)`):
    its links stay where they are, a file named there bare is listed, and no new line goes there."""

    def __init__(self) -> None:
        self.heading: str | None = None  # the heading's line
        self.level = 0

    def see(self, content: str) -> None:
        heading = _HEADING.match(content)
        if heading is None:
            return
        level = len(heading.group(1))
        if self.heading is not None and level <= self.level:
            self.heading = None
        if self.heading is None and level >= 2 and _RETIRED_HEADING.match(heading.group(2) or ""):
            self.heading, self.level = content, level


def _parse(raw_lines: list[str], names: _Names, live: dict[str, Memory], overflow_name: str,
           overflow_prefix: str, unread: str | None) -> _Parsed:
    parsed = _Parsed([], set(), [], {}, None)
    code = _Code.of(raw_lines)
    open_sections: list[tuple[str, int]] = []  # (type, heading level) of the typed sections a line is in
    retiring = _Retiring()
    for number, text in enumerate(raw_lines):
        content = text.removesuffix("\r")
        if number in code.block:
            parsed.lines.append(_Line(text, _HAND, fence=code.block[number]))
            if code.open_at is not None and number >= code.open_at:
                parsed.open_fence = parsed.open_fence or parsed.lines[-1]
            elif retiring.heading is None:  # a new line after the last line of a fence never closed would be code too
                _note_section_line(parsed, open_sections, content)
            continue
        retiring.see(content)
        if number == 0 and content.lstrip("\ufeff").startswith("# "):
            line = _Line(text, _TITLE)
        elif _UNREADABLE.match(content) or content == unread:
            continue  # ours: made again at the end
        elif content.startswith(overflow_prefix):
            if parsed.anchor is not None:
                continue  # ours, twice: once is enough
            line = parsed.anchor = _Line(text, _FIXED)
        else:
            destination = _first_link(content)
            path = names.resolve(destination) if destination else None
            if path == overflow_name:
                line = _Line(text, _FIXED)
            elif path in live:
                line = _Line(text, _LINK, live[path])
            elif path is not None:  # a retired file
                parsed.dropped.append(content)
                continue
            else:
                line = _Line(text, _HAND)
        parsed.linked.update(path for destination in _destinations(content, bare=retiring.heading is not None)
                             if (path := names.resolve(destination)) is not None)
        parsed.lines.append(line)
        heading = _HEADING.match(content)
        if heading:
            level = len(heading.group(1))
            open_sections[:] = [(kind, at) for kind, at in open_sections if at < level]
            named = _TYPE_HEADING.fullmatch((heading.group(2) or "").strip())
            memory_type = named.group(1).lower() if named and level >= 2 else None
            if memory_type and memory_type not in parsed.after:
                open_sections.append((memory_type, level))
        if retiring.heading is None:  # a new line never goes under `## Archived`
            _note_section_line(parsed, open_sections, content)
    return parsed


def _note_section_line(parsed: _Parsed, open_sections: list[tuple[str, int]], content: str) -> None:
    if content.strip():
        for memory_type, _ in open_sections:
            parsed.after[memory_type] = len(parsed.lines) - 1


# ---------------------------------------------------------------- new lines


def _place(parsed: _Parsed, unlisted: list[Memory], limits: IndexLimits, cr: str) -> list[_Line]:
    """The file's lines with one new line for each memory in `unlisted`, newest first, at the end of
    its type's section; in an index with no type sections, after its last link to a topic file
    (orchestkit's `## Topic Files (read on demand)`), as a person adds one; else in a section
    `## <Type>` added at the end."""
    inserted: dict[int, list[_Line]] = {}
    added_sections: list[tuple[str, list[_Line]]] = []
    last_link = max((number for number, line in enumerate(parsed.lines) if line.kind == _LINK), default=None)
    for memory_type in MEMORY_TYPES:
        memories = sorted((m for m in unlisted if m.type == memory_type),
                          key=lambda m: (not m.pinned, -m.mtime.timestamp(), m.path))
        new = [_Line(entry_text(m, limits.line_chars) + cr, _LINK, m, written=False) for m in memories]
        if not new:
            continue
        if memory_type in parsed.after:
            inserted.setdefault(parsed.after[memory_type], []).extend(new)
        elif not parsed.after and last_link is not None:
            inserted.setdefault(last_link, []).extend(new)
        else:
            added_sections.append((memory_type, new))
    lines: list[_Line] = []
    for number, line in enumerate(parsed.lines):
        lines.append(line)
        lines.extend(inserted.get(number, ()))
    for section, (added_type, new) in enumerate(added_sections):
        if lines and lines[-1].content.strip():
            lines.append(_Line(cr, _NEW, section=section, written=False))
        lines.append(_Line(f"## {added_type.capitalize()}{cr}", _NEW, section=section, written=False))
        for line in new:
            line.section = section
        lines.extend(new)
    return lines


# ---------------------------------------------------------------- the caps


class _Moves:
    """What moves to the overflow file so that MEMORY.md fits its caps."""

    def __init__(self, lines: list[_Line], anchor: _Line | None, unread: _Line | None, limits: IndexLimits,
                 overflow_prefix: str, today: date, cr: str):
        self.lines, self.anchor, self.unread, self.limits = lines, anchor, unread, limits
        self.overflow_prefix, self.today, self.cr = overflow_prefix, today, cr
        # everything but the anchor and the unreadable line, whose costs change
        self.line_count = sum(1 for line in lines if line is not anchor)
        self.byte_count = sum(line.cost for line in lines if line is not anchor)
        self.moved: set[int] = set()  # ids of the lines moved
        self.vanished: set[int] = set()  # ids of the headings of added sections whose lines all moved

    def fit(self) -> list[_Line]:
        """The lines that move, in file order; `unread` None when the unreadable line has no room.

        Whether it has room is judged against the longest the overflow line can be (its length, once
        shortened, does not grow steadily with the count), and it comes back when it fits after the
        move: so the next run, on this output, decides the same."""
        if self.fits():
            return []
        unread = self.unread
        if unread is not None and not self._room_for_unread():
            self.unread = None
        moved = self.move()
        self.unread = unread  # back if it fits after all, as it will on the next run
        if not self.fits():
            self.unread = None
        return moved

    def anchor_text(self, moved: int) -> str:
        """Our line linking the overflow file, saying `moved` lines moved (without a CRLF file's "\\r")."""
        limits = self.limits
        caps = ("Claude Code's 200 lines / 25,000 bytes" if (limits.max_lines, limits.max_bytes) == CLAUDE_CODE_CAPS
                else f"{limits.max_lines} lines / {limits.max_bytes:,} bytes")
        noun = "line" if moved == 1 else "lines"
        note = f"{moved} {noun} moved here on {self.today.isoformat()} to keep MEMORY.md within {caps}"
        room = limits.line_chars - len(self.overflow_prefix) - len(SEPARATOR)
        # the link itself is never cut: it is how the next run knows the line for its own
        return self.overflow_prefix + (SEPARATOR + shorten(note, room) if room > 1 else "")

    def fits(self) -> bool:
        """Whether what is left fits, with the anchor saying how many lines moved (as it is, when none)."""
        lines, size = self.line_count, self.byte_count
        if self.moved:
            lines += 1
            size += len((self.anchor_text(len(self.moved)) + self.cr).encode()) + 1
        elif self.anchor is not None:
            lines += 1
            size += self.anchor.cost
        if self.unread is not None:
            lines += 1
            size += self.unread.cost
        return lines <= self.limits.max_lines and size <= self.limits.max_bytes

    def _room_for_unread(self) -> bool:
        """Whether the lines that never move, the longest anchor and the unreadable line fit by themselves."""
        assert self.unread is not None
        still = [line for line in self.lines if line.kind in (_TITLE, _FIXED) and line is not self.anchor]
        # the anchor's length hangs only on "line" or "lines" and on the count's digits
        counts = (1, *(2 * 10**digits for digits in range(10)))
        anchor = max(len((self.anchor_text(count) + self.cr).encode()) + 1 for count in counts)
        lines = len(still) + 2
        size = sum(line.cost for line in still) + anchor + self.unread.cost
        return lines <= self.limits.max_lines and size <= self.limits.max_bytes

    def move(self) -> list[_Line]:
        """The lines that move, in file order: hand-written ones from the bottom up, then the link
        lines of the oldest memories (pinned ones last), until the rest fits."""
        hand = [line for line in reversed(self.lines) if line.kind == _HAND]
        links = sorted((line for line in self.lines if line.kind == _LINK),
                       key=lambda line: _age(line.memory))  # sorted() is stable: file order among equals
        left_in_section: dict[int, int] = {}
        for line in links:
            if line.section >= 0:
                left_in_section[line.section] = left_in_section.get(line.section, 0) + 1
        blocks: dict[int, list[_Line]] = {}
        for line in self.lines:
            if line.fence >= 0:
                blocks.setdefault(line.fence, []).append(line)
        for line in (*hand, *links):
            if self.fits():
                break
            if id(line) in self.moved:
                continue
            for part in blocks.get(line.fence, [line]) if line.fence >= 0 else [line]:
                self.moved.add(id(part))  # a fenced block moves whole: never split at a fence
                self.line_count -= 1
                self.byte_count -= part.cost
            if line.section >= 0:
                left_in_section[line.section] -= 1
                if not left_in_section[line.section]:
                    self._vanish(line.section)
        return [line for line in self.lines if id(line) in self.moved]

    def _vanish(self, section: int) -> None:
        """An added section whose lines all moved: its heading and blank line go too."""
        for line in self.lines:
            if line.kind == _NEW and line.section == section:
                self.vanished.add(id(line))
                self.line_count -= 1
                self.byte_count -= line.cost


def _before_open_fence(lines: list[_Line], opening: _Line | None) -> list[_Line]:
    """`lines` with those added at the end moved to just before `opening`, the first line of a fence
    never closed: after it they would be code (CommonMark runs the fence to the end of the file),
    links no one reads as links, and the next run would add them again."""
    at = next((number for number, line in enumerate(lines) if line is opening), None)
    if at is None:
        return lines  # no such fence, or it moved to the overflow file
    added = [line for line in lines[at:] if not line.written]
    blank_before = at == 0 or not lines[at - 1].content.strip()
    if added and added[0].kind == _NEW and not added[0].content.strip() and blank_before:
        added = added[1:]  # the blank line before an added section: there is one before the fence already
    return [*lines[:at], *added, *(line for line in lines[at:] if line.written)]


def _age(memory: Memory | None) -> tuple:
    assert memory is not None
    return (memory.pinned, memory.mtime.timestamp(), memory.path)


def _overflow_text(existing: str | None, moved: list[_Line], today: date, cr: str) -> str:
    """The overflow file with a section `## Moved on <today>` of the moved lines, as written, at its end."""
    if existing is None:
        text = "".join(line + cr + "\n" for line in OVERFLOW_FRONTMATTER)
    else:
        if "\n" in existing:
            cr = "\r" if _uses_crlf(existing) else ""  # the file's own line ends
        text = existing if not existing or existing.endswith("\n") else existing + cr + "\n"
    if text and not text.endswith("\n" + cr + "\n"):
        text += cr + "\n"  # a blank line before the new section
    return text + f"## Moved on {today.isoformat()}{cr}\n" + "".join(line.text + "\n" for line in moved)


def lines_by_link(lines: Sequence[str], paths: Collection[str]) -> dict[str, list[str]]:
    """The `lines` (ClaudeIndex.dropped) by the file of `paths` each list item's first link
    names, as the rebuild resolved it when it dropped them: a retired file by its own path."""
    names = _Names((), paths)
    found: dict[str, list[str]] = {}
    for line in lines:
        destination = _first_link(line)
        path = names.resolve(destination) if destination else None
        if path is not None:
            found.setdefault(path, []).append(line)
    return found


# ---------------------------------------------------------------- what the lines say of the files


def statuses_in_index(text: str, live: Collection[str]) -> dict[str, Status]:
    """The status MEMORY.md's own lines give the `live` files they name (paths as the folder has
    them): the words after a list item's link (application-pipeline: `- [Cover letter quality](
    feedback_cover_letter_quality.md) — SUPERSEDED by unified rules below`), or after a file named
    bare under `## Archived …`; else, under such a heading, the heading itself. The quote is that
    line as written. A pointer that is no file name but the words of one other link line's label
    ("unified rules" for `[Unified resume/CL rules](…)`), in its section or else in the file,
    becomes that line's file."""
    names = _Names(live, ())
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    code = _Code.of(lines)
    retiring = _Retiring()
    section = 0
    items: list[tuple[int, str, str, str, str | None]] = []  # (section, path, label, line, heading)
    said: dict[str, tuple[int, str, str]] = {}  # path: (section, the words after its name, its line)
    for number, content in enumerate(lines):
        if number in code.block:
            continue
        if _HEADING.match(content):
            section += 1
        retiring.see(content)
        item = _item_link(content)
        path = names.resolve(item[1]) if item else None
        if item and path is not None:
            items.append((section, path, item[0], content, retiring.heading))
            said.setdefault(path, (section, _hook(item[2]), content))
        elif retiring.heading is not None and _ANY_ITEM.match(content):
            bare = _BARE_FILE.search(content)
            if bare and (path := names.resolve(bare.group(1))) is not None:
                items.append((section, path, "", content, retiring.heading))
                said.setdefault(path, (section, _hook(content[bare.end():]), content))
    labels = [(item_section, path, label) for item_section, path, label, _, _ in items if label]
    found: dict[str, Status] = {}
    for _, path, label, _, heading in items:
        if path in found:
            continue
        where, hook, line = said[path]
        status = written_status(_ESCAPED.sub(r"\1", label), hook, "")
        if status is not None:
            pointed = tuple(_pointed(pointer, path, where, names, labels) for pointer in status.points_to)
            found[path] = Status(status.kind, line, pointed)
        elif heading is not None:
            superseded = re.search(r"supersed|取代|替代|置き換", heading, re.IGNORECASE)
            kind: Kind = "superseded" if superseded else "deprecated"
            found[path] = Status(kind, heading)
    return found


def _hook(after: str) -> str:
    """What a person wrote after a link or a file name: `— SUPERSEDED by …` is `SUPERSEDED by …`."""
    return after.lstrip(" \t—–-:|,").strip()


def _pointed(pointer: str, itself: str, section: int, names: _Names,
             labels: Sequence[tuple[int, str, str]]) -> str:
    """The file a status line's pointer names: a file name or link as it resolves, else the one
    other link line (in the section, else in the file) whose label holds all its words; else the
    pointer as written."""
    path = names.resolve(pointer)
    if path is not None:
        return path
    words = set(re.findall(r"\w+", pointer.lower()))
    if not words:
        return pointer
    for scope in ([entry for entry in labels if entry[0] == section], labels):
        holders = {path for _, path, label in scope
                   if path != itself and words <= set(re.findall(r"\w+", label.lower()))}
        if len(holders) == 1:
            return holders.pop()
    return pointer
