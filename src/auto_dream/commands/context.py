"""`context`: the store's MEMORY.md as an agent's session starts with it, within the caps it is read under.

Claude Code adds a SessionStart hook's plain standard output to the session's context, and caps
what a hook adds at 10,000 characters: past that it saves the output to a file and gives Claude a
preview and the path (https://code.claude.com/docs/en/hooks, "Exit code 0" and "JSON output").
It reads a MEMORY.md itself only up to 200 lines or 25 KB (https://code.claude.com/docs/en/memory,
"How it works"). So the text here is MEMORY.md's first lines within all three, after one line
naming the store (MEMORY.md's links are relative to it), and, when not all of it fits, a last line
saying where it was cut and where the rest is. The first character is never `{`: Claude Code
would try to read such output as JSON.
"""

from dataclasses import dataclass
from pathlib import Path

from auto_dream.store.paths import open_store, read_regular
from auto_dream.store.review_queue import pending_count

HOOK_OUTPUT_CHARS = 10_000  # Claude Code's cap on a hook's output, in JavaScript characters (UTF-16 units)
INDEX_MAX_LINES = 200  # Claude Code's caps on the MEMORY.md it loads
INDEX_MAX_BYTES = 25_000
MAX_READ = 16 * 1024 * 1024  # a MEMORY.md past this is no index: only its start is read


@dataclass(frozen=True)
class SessionContext:
    text: str  # what to print, ending in a newline
    index: Path
    lines_shown: int
    lines_total: int


def _chars(text: str) -> int:
    """Length as JavaScript counts it (Claude Code's cap): an emoji outside the BMP is two."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def session_context(root: Path, max_chars: int = HOOK_OUTPUT_CHARS) -> SessionContext | None:
    """The context for a session that starts with the store at `root`; None when there is no store
    or no MEMORY.md (nothing to say, and a hook must not fail a session for it). A store that
    cannot be read (a MEMORY.md that is a symlink or a FIFO…) is a StoreError."""
    if not root.is_dir():
        return None
    paths = open_store(root)
    data = read_regular(paths.index, MAX_READ)
    if data is None:
        return None
    index_text = data.decode("utf-8-sig", errors="replace")
    if not index_text.strip():
        return None
    # Lines end at "\n" only, as Claude Code counts them: str.splitlines would also break at a form
    # feed, a lone CR or U+2028 inside a line, adding line breaks and lines that are not in the file.
    *ended, last = index_text.split("\n")
    lines = [line + "\n" for line in ended] + ([last] if last else [])
    header = f"auto-dream memory: MEMORY.md of the store at {root} (its links are relative to that folder)\n"
    waiting = pending_count(paths)
    if waiting:
        header += (f"{waiting} memory decision(s) wait for you: when the user asks to tidy memory, or at a "
                   "natural pause, call the MCP tool `review` (or run `auto-dream review`) and decide them\n")

    def cut_note(shown: int, within: bool = False) -> str:
        where = f"in line {shown + 1}" if within else f"after line {shown}"
        return (f"[auto-dream: MEMORY.md is cut here, {where} of {len(lines)}, to fit what a session start "
                f"takes in; the rest is in {paths.index}]\n")

    budget = max_chars - _chars(header)
    reserve = _chars(cut_note(len(lines)))  # the note at its longest
    shown, used_chars, used_bytes = [], 0, 0
    for number, line in enumerate(lines, 1):
        line = line if line.endswith("\n") else line + "\n"
        chars, size = _chars(line), len(line.encode("utf-8"))
        fits_all = number == len(lines) and used_chars + chars <= budget
        if number > INDEX_MAX_LINES or used_bytes + size > INDEX_MAX_BYTES \
                or (used_chars + chars > budget - reserve and not fits_all):
            break
        shown.append(line)
        used_chars += chars
        used_bytes += size
    within = not shown and bool(lines)
    if within:  # one line longer than the whole budget: its start
        room, kept, chars, size = budget - reserve - 2, [], 0, 0
        for character in lines[0].rstrip("\n"):
            chars, size = chars + _chars(character), size + len(character.encode("utf-8"))
            if chars > room or size > INDEX_MAX_BYTES - 4:
                break
            kept.append(character)
        text = header + "".join(kept) + "…\n" + cut_note(0, within=True)
        return SessionContext(text, paths.index, 0, len(lines))
    text = header + "".join(shown)
    if len(shown) < len(lines):
        text += cut_note(len(shown))
    return SessionContext(text, paths.index, len(shown), len(lines))
