"""The entries the earlier `import openclaw` made of a note, one per bullet: only to recognise them.

Until the import read a note by its sections (store/openclaw.py), it logged every list item and
paragraph of a note as an entry of its own, with the nearest heading (and the label lines over
it) in front: `Decisions: Use REST`. A workspace imported that way holds those entries in its
log; a re-import finds them through `earlier_entry_texts` and adds to such a note only what
was written in it since, as that version would have, rather than the whole note again in the
new form. The reader below is that version's, unchanged: a change to it would make old entries
unrecognisable.
"""

import re
from dataclasses import dataclass
from datetime import date

_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?")
_QUOTE = re.compile(r" {0,3}> ?")
_TABLE_ROW = re.compile(r" *\|")
_CHECKBOX = re.compile(r"\[[ xX]\][ \t]+")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_COLONS = (":", "：")
_WORD = re.compile(r"\w")
# A CJK character on both sides of a line break: the lines join without a space.
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class Fragment:
    """One fact of a note: its text as written, and the headings (and labels) it sits under."""

    text: str
    context: tuple[str, ...] = ()

    @property
    def entry_text(self) -> str:
        """The text the log gets: the context first, so a bullet reads whole on its own."""
        return join_context(self.context, self.text)


def join_context(context: tuple[str, ...], text: str) -> str:
    """`Python環境セットアップ：` + `Python 3.12 と uv を使う` → `Python環境セットアップ： Python 3.12 と uv を使う`;
    a heading without a colon gets one: `Decisions` + `Use REST` → `Decisions: Use REST`."""
    joined = ""
    for part in (*context, text):
        if joined:
            joined += " " if joined.endswith(_COLONS) else ": "
        joined += part
    return joined


@dataclass
class _Block:
    kind: str  # "item" or "para"
    indent: int
    lines: list[str]
    heading: tuple[str, ...]  # the nearest heading above it, if any


def earlier_entry_texts(text: str, day: date | None = None) -> list[str]:
    """The texts of the entries the earlier import made of a note, in the note's order."""
    return [fragment.entry_text for fragment in note_fragments(text, day)]


def note_fragments(text: str, day: date | None = None) -> list[Fragment]:
    """The fragments of one note, in the note's order. `day`: the note's date; a heading that
    only names it (`# 2026-04-01 - Daily Memory Log`) is the note's title, not context."""
    blocks = _blocks(note_body(text), day)
    fragments: list[Fragment] = []
    # The paragraphs ("Decisions:") and items ("- Setup:") that introduce a list: (indent, text),
    # a paragraph's indent -1 so that it holds for the whole list after it.
    labels: list[tuple[int, str]] = []
    for index, block in enumerate(blocks):
        body = _join_lines(block.lines)
        previous = blocks[index - 1] if index else None
        if block.kind == "para" or previous is None or previous.heading != block.heading:
            labels = []
        else:
            labels = [(indent, label) for indent, label in labels if indent < block.indent]
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if body.endswith(_COLONS) and following is not None and following.kind == "item" \
                and following.heading == block.heading \
                and (block.kind == "para" or following.indent > block.indent):
            labels.append((block.indent, _plain(body)))
            continue
        if not _WORD.search(body):
            continue  # "—", "...": nothing to remember
        fragments.append(Fragment(body, block.heading + tuple(label for _, label in labels)))
    return fragments


def note_body(text: str) -> str:
    """A note as both imports read it: without its front matter (a BOM, then `---` … `---` or
    `...`) and without HTML comments."""
    return _COMMENT.sub("", _without_frontmatter(text))


def _without_frontmatter(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[0].rstrip() == "---":
        for number, line in enumerate(lines[1:], start=1):
            if line.rstrip() in ("---", "..."):
                return "\n".join(lines[number + 1:])
    return text


def _blocks(text: str, day: date | None) -> list[_Block]:
    """List items and paragraphs, each with the headings above it; the rest is dropped."""
    blocks: list[_Block] = []
    headings: dict[int, str] = {}
    current: _Block | None = None
    fence: str | None = None
    blank_before = True
    quoted = False
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if fence is not None:  # inside a code block: nothing is a fact
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            continue
        quote = _QUOTE.match(line)
        if quote:
            line = line[quote.end():]
        if bool(quote) != quoted:  # a quote starts or ends a block of its own
            current, quoted = None, bool(quote)
        if not line.strip():
            current, blank_before = (current if current is not None and current.kind == "item" else None), True
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, current = opened.group(1), None
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            level = len(heading.group(1))
            headings = {lvl: name for lvl, name in headings.items() if lvl < level}
            name = _plain(heading.group(2) or "")
            if name and not _is_title(name, day):
                headings[level] = name
            current = None
            blank_before = False
            continue
        if _RULE.fullmatch(line) or _TABLE_ROW.match(line):
            current, blank_before = None, False
            continue
        item = _ITEM.fullmatch(line)
        if item:
            content = _CHECKBOX.sub("", item.group(2) or "", count=1)
            current = _Block("item", len(item.group(1).expandtabs()), [content],
                             _nearest(headings))
            blocks.append(current)
            blank_before = False
            continue
        indent = len(line.expandtabs()) - len(line.expandtabs().lstrip(" "))
        if current is not None and current.kind == "item" and (not blank_before or indent > current.indent):
            current.lines.append(line)  # the item goes on (a lazy line, or an indented one after a gap)
        elif current is not None and current.kind == "para" and not blank_before:
            current.lines.append(line)
        else:
            current = _Block("para", -1, [line], _nearest(headings))
            blocks.append(current)
        blank_before = False
    return blocks


def _nearest(headings: dict[int, str]) -> tuple[str, ...]:
    """The heading a fragment sits under is the nearest one: `## Setup` under `# Project X` gives `Setup`."""
    return (headings[max(headings)],) if headings else ()


def _is_title(heading: str, day: date | None) -> bool:
    """A heading that names the note's own day is its title: it tells nothing the date does not."""
    if day is None:
        return False
    return f"{day:%Y-%m-%d}" in heading or f"{day.year}年{day.month}月{day.day}日" in heading


def _plain(text: str) -> str:
    """A heading or label without its emphasis marks: `**Decisions**:` → `Decisions:`."""
    return re.sub(r"(\*\*|__)(.+?)\1", r"\2", text).strip()


def _join_lines(lines: list[str]) -> str:
    joined = ""
    for line in lines:
        part = line.strip().rstrip("\\").strip()
        if not part:
            continue
        if joined and not (_CJK.match(joined[-1]) and _CJK.match(part[0])):
            joined += " "
        joined += part
    return joined
