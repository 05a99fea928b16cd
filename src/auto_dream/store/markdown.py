"""Markdown's blocks as CommonMark reads them (GFM tables too): the one parser every reader of a
file's structure uses — a Claude Code folder's MEMORY.md (where code begins and ends:
claude_index) and an OpenClaw note (its sections, lists, tables: openclaw). A line scan
(judge/fences.py) answers only "is this line code", where no tree is needed.

markdown-it-py comes with Rich; it is imported when a file is parsed, never by `append`.
"""

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@cache
def _parser() -> "MarkdownIt":
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])  # blocks are all that is asked


def block_tokens(text: str) -> list["Token"]:
    """The block tokens of `text` (no inline parsing), each with its `map` of source lines."""
    return _parser().parse(text)
