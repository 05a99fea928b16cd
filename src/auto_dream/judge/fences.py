"""Which lines of a Markdown text are fenced code, by CommonMark's rule for fences.

A fence opens with three or more backticks or tildes (a backtick fence's info string holds no
backtick) and closes with the same character, at least as many of it, then only spaces or tabs,
indented at most three spaces more than it opened; one never closed runs to the end of the
text. A line scan does not know which list item a line belongs to, so a fence may open at any
indent (one in a list item is indented). Every line scan of Markdown in the package asks this
module (a memory's paragraphs when a merge carries one body into another, the sentences a
document claims, the commands a skill page shows), so all of them agree on where code begins
and ends. A Claude Code folder's MEMORY.md and an OpenClaw note are read with the whole
CommonMark block grammar (markdown-it-py: lists, quotes, indented code), where a line scan is
not enough; their fence closes by this module's rule too. (store/openclaw_legacy.py keeps the
scan an earlier import ran, unchanged on purpose: it only recognises the entries that import
made.)
"""

import re
from collections.abc import Sequence
from typing import NamedTuple

_FENCE = re.compile(r"( *)(`{3,}|~{3,})(.*)$")


class Fence(NamedTuple):
    marks: str  # its run of backticks or tildes
    indent: int  # the spaces before it


def opening(line: str) -> Fence | None:
    """The fence `line` opens, or None when it opens none."""
    found = _FENCE.match(line.removesuffix("\r"))
    if found is None or (found.group(2)[0] == "`" and "`" in found.group(3)):
        return None
    return Fence(found.group(2), len(found.group(1)))


def closes(line: str, fence: Fence | str) -> bool:
    """Whether `line` closes `fence` (a fence opened at the margin, when given only its marks)."""
    marks, indent = (fence, 0) if isinstance(fence, str) else fence
    found = _FENCE.match(line.removesuffix("\r"))
    return bool(found and len(found.group(1)) <= indent + 3 and found.group(2)[0] == marks[0]
                and len(found.group(2)) >= len(marks) and not found.group(3).strip(" \t"))


def fenced(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it is part of fenced code: the fence lines themselves too."""
    flags: list[bool] = []
    fence: Fence | None = None
    for line in lines:
        if fence is None:
            fence = opening(line)
            flags.append(fence is not None)
        else:
            flags.append(True)
            if closes(line, fence):
                fence = None
    return flags
