"""A marked block auto-dream adds to a file a person owns (an agent's instructions file, Codex's
config.toml): put at the end, after a blank line, in the file's own line endings; found again
where it is; taken away with the blank line it brought, so a file install only appended to
comes back byte for byte.

One mechanism for `install <agent>` (commands/install.py: the block is found by its first
and last marker lines and replaced wherever it stands) and `install codex`
(commands/install_codex.py: by the exact text install recorded, and kept when it was changed
since). What each does when the block is missing or changed is its own; how a block goes in
and out is this.
"""

Span = tuple[int, int]  # where a block is in a text: [start, end), its final line ending included


def newline_of(text: str) -> str:
    """The text's line ending: CRLF when it has one, else LF."""
    return "\r\n" if "\r\n" in text else "\n"


def in_newlines(block: str, newline: str) -> str:
    """`block` (written with LF) in the line ending `newline`."""
    return block.replace("\r\n", "\n").replace("\n", newline)


def lead(text: str) -> str:
    """What goes between a person's text and a block appended to it: their last line ended, then
    a blank line; nothing when the text is empty or already ends in a blank line."""
    newline = newline_of(text)
    if not text or text.endswith(newline + newline) or text == newline:
        return ""
    return newline if text.endswith("\n") else newline + newline


def append(text: str, block: str) -> tuple[str, str]:
    """`text` with `block` at its end, and the lead put before it (which `remove` takes away)."""
    before = lead(text)
    return text + before + block, before


def marked_span(text: str, begin: str, end: str) -> Span | None:
    """Where the block that opens with a line starting `begin` and closes with `end` is, or None."""
    start = text.find(begin)
    while start > 0 and text[start - 1] != "\n":  # the marker starts a line
        start = text.find(begin, start + 1)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        return None
    stop += len(end)
    if text.startswith("\r\n", stop):
        stop += 2
    elif text.startswith("\n", stop):
        stop += 1
    return start, stop


def exact_span(text: str, block: str) -> Span | None:
    """Where `block`, as written, is in `text` when it is there exactly once; else None."""
    if text.count(block) != 1:
        return None
    start = text.index(block)
    return start, start + len(block)


def remove(text: str, span: Span, added_lead: str) -> str:
    """`text` without the block at `span`, and without the lead install put before it when the
    block still ends the file (what follows it was written since: the lead stays with it)."""
    before, after = text[:span[0]], text[span[1]:]
    if not after and added_lead and before.endswith(added_lead):
        before = before[:-len(added_lead)]
    return before + after
