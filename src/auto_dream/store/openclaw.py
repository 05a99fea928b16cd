"""OpenClaw's daily notes, `<workspace>/memory/YYYY-MM-DD.md`, read section by section for the log.

What the notes are, from public material (read before writing this):
- docs.openclaw.ai/concepts/memory: memory is plain Markdown in the agent workspace (default
  ~/.openclaw/workspace); `memory/YYYY-MM-DD.md` is the daily log, append-only, "running context
  and observations"; `memory/YYYY-MM-DD-<slug>.md` files are written by the session-memory hook.
- openclaw src/hooks/bundled/session-memory/HOOK.md: a slugged file is a session summary that
  opens with `# Session: <date> <time>` and `- **Session Key**: …` metadata bullets.
- skills that write the notes (erevusobolus/THERION-SYSTEM skills/memory-management/SKILL.md,
  zencrust-ai/minimal-memory scripts/daily.sh): a `# YYYY-MM-DD - Daily Memory Log` title,
  `## [TIME] - Topic` or `## [GOOD]` headings, `- ` bullets under them.

So a note is free Markdown whose unit is the section: a heading and the blocks under it, down
to the next heading, say one thing together (the candidates for a purchase, a decision and its
reason, a TODO list), and a bullet alone often does not say what it is about: its headings do.
A section becomes one entry: its heading path first, as a label (`Robots › Unitree G1 › 購入:`),
then its blocks as written — lists with their checkboxes, tables under their header line, a
`**Label:**` line with the list, table or code block it introduces, paragraphs, code. A section
named as a miscellany (`## メモ`, `## Misc`, `## その他`) holds unrelated items: each becomes an
entry of its own, with the same heading path. A section longer than an entry may be is split at
its items. The entry is untyped: dream types it from its text. The path line ends in a colon:
an entry is then the shape of an agent's `Decisions:` over a list, and is named and typed as
that is.

Which sections hold unrelated items is decided by the heading's name alone, the grouping its
author chose. Word overlap between items does not tell: two rules under `### Safety` (the
emergency stop, a speed limit) share no word and belong together, and any two Japanese
sentences share character pairs (いる, って). One thing more does: bullets that say who the
person is (typed user by their own words) and bullets that do not, side by side under
`## ユーザーについて`, are a user memory and a feedback one (_about_person).

Everything here is pure text; the command (commands/import_openclaw.py) reads the files.
"""

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from auto_dream.judge.memory_type import guess_type
from auto_dream.judge.titles import miscellany
from auto_dream.store.daylog import MAX_TEXT_CHARS
from auto_dream.store.markdown import block_tokens
from auto_dream.store.openclaw_legacy import earlier_entry_texts, note_body

if TYPE_CHECKING:
    from markdown_it.token import Token

DAILY_NOTE = re.compile(r"(\d{4}-\d\d-\d\d)\.md")
SESSION_NOTE = re.compile(r"\d{4}-\d\d-\d\d-.+\.md")  # the session-memory hook's summaries
PATH_SEPARATOR = " › "

# A note's title, when it does not name its day: a heading every section of it would carry.
DAILY_TITLES = frozenset({"daily memory log", "daily log", "daily notes", "daily note", "memory log", "today",
                          "日報", "今日のメモ", "作業ログ", "日志", "每日记录", "今日笔记"})

_WORD = re.compile(r"\w")
_COLONS = (":", "：")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
# `## [10:30] - Topic`: the time a heading was written at is not what its section is about.
_TIME_IN_FRONT = re.compile(r"\[?\d{1,2}:\d\d(?::\d\d)?\]?\s*(?:[-–—:|]\s*)?")
_CHECKED = re.compile(r"^([ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[X\](?=[ \t]|$)", re.M)
# An ordered list that does not start at 1 cannot follow a line of text: it would join it.
_BULLET = re.compile(r"\s*[-*+]\s")
_LATER_NUMBER = re.compile(r"(?!0*1[.)])\d{1,9}[.)]")


@dataclass(frozen=True)
class Unit:
    """One item of a section, as written: a list item (with its nested items), a table row, a
    paragraph, a code block or a quote. Items of one list, rows of one table share their `block`."""

    lines: tuple[str, ...]
    block: int
    label: tuple[str, ...] = ()  # the `**Label:**` line over its block
    header: tuple[str, ...] = ()  # a table row's header and delimiter lines

    @property
    def key(self) -> str:
        """What the item says, spaces aside: how a re-import knows it is in the log already."""
        return " ".join(" ".join(self.lines).split())

    @property
    def alone(self) -> bool:
        """A unit that is a whole thing of its own in a miscellany: all but a table's row."""
        return not self.header


@dataclass(frozen=True)
class Section:
    """A heading's own blocks (down to the next heading), with the headings above it."""

    path: tuple[str, ...]
    units: tuple[Unit, ...]

    @property
    def miscellany(self) -> bool:
        """MISCELLANY: `## メモ`, `### Misc.`: each item is an entry of its own."""
        return bool(self.path) and miscellany(self.path[-1])


@dataclass(frozen=True)
class NotePlan:
    """What importing one note adds: entry texts in the note's order, how many entries it found in
    the log already, and whether the earlier import (one entry per item) read this note."""

    texts: tuple[str, ...]
    already_there: int
    earlier_import: bool = False


def note_day(file_name: str) -> date | None:
    """The day a daily note is named for (`2026-04-01.md`), or None for any other name."""
    match = DAILY_NOTE.fullmatch(file_name)
    if match is None:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:  # 2026-02-30.md
        return None


# ---------------------------------------------------------------- what to add of a note


def plan_note(text: str, day: date | None, logged: Iterable[str], limit: int = MAX_TEXT_CHARS) -> NotePlan:
    """The entries a note adds to a log that already holds `logged` (the texts of its day's
    entries at the time the import writes at).

    An item already in an entry of the same heading path is not added again: a section a person
    added a line to since gets one entry holding the new line, under the same path (and its
    label, its table's header). A note the earlier import read (one entry per item, recognised
    by those entries: store/openclaw_legacy.py) gets what was written since as that version
    read it, so nothing it added is added again in the new form."""
    logged = [_normal(logged_text) for logged_text in logged]
    sections = note_sections(text, day)
    fresh_texts = {_normal(entry) for section in sections for entry in section_entries(section, limit=limit)}
    earlier = [_normal(entry) for entry in earlier_entry_texts(text, day)]
    in_log = set(logged)
    if any(entry in in_log and entry not in fresh_texts for entry in earlier):
        return _plan_earlier(earlier, in_log)
    covered = _covered(logged, {path_line(section.path): section.path for section in sections})
    texts: list[str] = []
    already = 0
    for section in sections:
        seen = covered.setdefault(section.path, set())
        fresh = [unit for unit in section.units if unit.key not in seen]
        seen.update(unit.key for unit in fresh)
        if fresh:
            texts.extend(section_entries(Section(section.path, tuple(fresh)), miscellany=section.miscellany,
                                         limit=limit))
        else:
            already += len(section_entries(section, limit=limit))
    return NotePlan(tuple(texts), already)


def _plan_earlier(earlier: list[str], in_log: set[str]) -> NotePlan:
    texts: list[str] = []
    already = 0
    for entry in earlier:
        if entry in in_log:
            already += 1
        else:
            texts.append(entry)
            in_log.add(entry)
    return NotePlan(tuple(texts), already, earlier_import=True)


def _normal(text: str) -> str:
    """A text as the log's entry ids read it (daylog.entry_id): trailing spaces aside."""
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _covered(logged: list[str], paths: dict[str, tuple[str, ...]]) -> dict[tuple[str, ...], set[str]]:
    """The items the logged entries hold, by the heading path their first line names."""
    covered: dict[tuple[str, ...], set[str]] = {}
    for entry in logged:
        first, _, rest = entry.partition("\n")
        path = paths.get(first)
        content = rest if path is not None else entry
        keys = covered.setdefault(path or (), set())
        for section in note_sections(content):
            keys.update(unit.key for unit in section.units)
    return covered


# ---------------------------------------------------------------- entries of a section


def path_line(path: tuple[str, ...]) -> str:
    """The first line of a section's entry: its heading path, as a label (`Robots › Unitree G1:`)."""
    return PATH_SEPARATOR.join(path) + ":" if path else ""


def section_entries(section: Section, *, miscellany: bool | None = None, limit: int = MAX_TEXT_CHARS) -> list[str]:
    """The entry texts of a section: one (or one per item of a miscellany), each at most `limit`
    characters where its items allow (a section is split between items, never inside one)."""
    if miscellany is None:
        miscellany = section.miscellany
    groups: list[list[Unit]] = []
    about_person: bool | None = None  # whether the group's list items are about the person
    for unit in section.units:
        person = _about_person(section.path, unit)
        if not groups or (miscellany and (unit.alone or unit.block != groups[-1][-1].block)) or (
                person is not None and about_person is not None and person != about_person):
            groups.append([])
            about_person = None
        groups[-1].append(unit)
        about_person = person if about_person is None else about_person
    return [entry_text(section.path, chunk) for group in groups for chunk in _within(section.path, group, limit)]


_ORDERED_ITEM = re.compile(r"\s*\d{1,9}[.)]")


def _about_person(path: tuple[str, ...], unit: Unit) -> bool | None:
    """Whether a bullet item says who the person is (its type by its own words is user), for a
    section that mixes the two: 「ユーザーについて」 with 「ユーザーは山口さん。平日は会社員…」 and then
    「返答は結論から先に、短めにしてほしい」 is a user memory and a feedback memory, not one user memory
    whose rules no feedback list shows. None for what is no bullet item: a numbered step, a
    table row, a paragraph stay with what they follow; so do two rules of which one the rules
    type as a fact (`### Safety`: the emergency stop, a speed limit)."""
    if unit.header or not unit.lines or _ORDERED_ITEM.match(unit.lines[0]) or not _BULLET.match(unit.lines[0]):
        return None
    return guess_type(entry_text(path, [unit])) == "user"


def entry_text(path: tuple[str, ...], units: Iterable[Unit]) -> str:
    """The path line, then the items as written: a blank line between blocks, each block's label
    and table header written once above its first item here."""
    lines = [path_line(path)] if path else []
    block: int | None = None
    for unit in units:
        if unit.block != block:
            if block is not None:
                lines.append("")
            lines.extend(unit.label)
            if lines and lines[-1] and _LATER_NUMBER.match(unit.lines[0]):
                lines.append("")  # `3.` right under the path or a label would join its line
            lines.extend(unit.header)
            block = unit.block
        lines.extend(unit.lines)
    return "\n".join(lines)


def _within(path: tuple[str, ...], units: list[Unit], limit: int) -> list[list[Unit]]:
    """`units` in runs whose entry holds at most `limit` characters (a unit longer than that
    alone is a run of its own: the import reports it)."""
    runs: list[list[Unit]] = []
    size = 0
    for unit in units:
        own = sum(len(line) + 1 for line in unit.lines)
        opening = sum(len(line) + 1 for line in (*unit.label, *unit.header)) + 2  # and a blank line
        if runs and runs[-1][-1].block == unit.block and size + own <= limit:
            size += own
        elif runs and size + opening + own <= limit:
            size += opening + own
        else:
            runs.append([])
            size = len(path_line(path)) + 1 + opening + own
        runs[-1].append(unit)
    return runs


# ---------------------------------------------------------------- reading a note


def note_sections(text: str, day: date | None = None) -> list[Section]:
    """The sections of a note that hold something, in the note's order. `day`: the note's date;
    a heading that only names it (`# 2026-04-01 - Daily Memory Log`) is its title, not context."""
    source = note_body(text)
    lines = source.split("\n")
    tokens = block_tokens(source)
    blocks = [at for at, token in enumerate(tokens) if token.level == 0 and token.nesting != -1]
    sections: list[Section] = []
    headings: dict[int, str] = {}
    units: list[Unit] = []
    label: tuple[str, ...] = ()

    def close() -> None:
        if units:
            sections.append(Section(tuple(headings[level] for level in sorted(headings)), tuple(units)))

    for number, at in enumerate(blocks):
        token = tokens[at]
        if token.type == "heading_open":
            close()
            units = []
            level = int(token.tag[1])
            headings = {lvl: name for lvl, name in headings.items() if lvl < level}
            name = _heading_name(_inline(tokens, at))
            if name and not _is_title(name, day):
                headings[level] = name
            label = ()
            continue
        following = tokens[blocks[number + 1]].type if number + 1 < len(blocks) else ""
        if token.type == "paragraph_open" and _is_label(_inline(tokens, at), following):
            start, end = token.map or (0, 0)
            label = _dedent(tuple(lines[start:end]))
            continue
        units.extend(_units(tokens, at, lines, label))
        label = ()
    close()
    return sections


def _units(tokens: list["Token"], at: int, lines: list[str], label: tuple[str, ...]) -> list[Unit]:
    """The items of the top-level block that opens at `tokens[at]`; `at` names the block."""
    token = tokens[at]
    start, end = token.map or (0, 0)
    if token.type in ("bullet_list_open", "ordered_list_open"):
        items: list[tuple[str, ...]] = []
        number = at + 1
        while number < len(tokens) and tokens[number].level > 0:  # up to the list's end
            inner = tokens[number]
            if inner.type == "list_item_open" and inner.level == 1 and inner.map:
                written = "\n".join(lines[inner.map[0]:inner.map[1]])
                items.append(_dedent(tuple(_CHECKED.sub(r"\1[x]", written).split("\n"))))
            number += 1
        return [Unit(item, at, label) for item in items if _WORD.search("\n".join(item))]
    if token.type == "table_open":
        header = tuple(line.strip() for line in lines[start:start + 2])
        return [Unit((row.strip(),), at, label, header) for row in lines[start + 2:end] if row.strip()]
    if token.type in ("paragraph_open", "fence", "code_block", "blockquote_open", "html_block"):
        block = _dedent(tuple(lines[start:end]))
        return [Unit(block, at, label)] if _WORD.search("\n".join(block)) else []
    return []  # a rule


def _is_label(inline: str, following: str) -> bool:
    """`**Decision:**`, `**決定事項**:`, `構成：` over a list, a table or a code block."""
    return _plain(inline).endswith(_COLONS) and following in (
        "bullet_list_open", "ordered_list_open", "table_open", "fence", "code_block")


def _inline(tokens: list["Token"], at: int) -> str:
    """The inline text of the heading or paragraph that opens at `tokens[at]`."""
    following = tokens[at + 1] if at + 1 < len(tokens) else None
    return following.content if following is not None and following.type == "inline" else ""


def _heading_name(inline: str) -> str:
    name = _plain(inline)
    untimed = _TIME_IN_FRONT.sub("", name, count=1) if _TIME_IN_FRONT.match(name) else name
    return (untimed or name).rstrip(" .:：。")


def _is_title(heading: str, day: date | None) -> bool:
    """A heading that names the note's own day, or calls it a daily log (DAILY_TITLES), is its
    title: it tells nothing the date does not."""
    if day is not None and (f"{day:%Y-%m-%d}" in heading or f"{day.year}年{day.month}月{day.day}日" in heading):
        return True
    return heading.casefold().strip(" .:：") in DAILY_TITLES


def _plain(text: str) -> str:
    """A heading or label without its emphasis marks: `**Decisions**:` → `Decisions:`."""
    return _EMPHASIS.sub(r"\2", text).strip()


def _dedent(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The block's lines, as written but for the indent they share, with no blank lines at its end."""
    kept = list(lines)
    while kept and not kept[-1].strip():
        kept.pop()
    return tuple(line.rstrip() for line in textwrap.dedent("\n".join(kept)).split("\n")) if kept else ()
