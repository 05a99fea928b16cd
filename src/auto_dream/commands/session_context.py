"""`context`: the store's MEMORY.md as an agent's session starts with it, within the caps it is read under.

Claude Code adds a SessionStart hook's plain standard output to the session's context, and caps
what a hook adds at 10,000 characters: past that it saves the output to a file and gives Claude a
preview and the path (https://code.claude.com/docs/en/hooks, "Exit code 0" and "JSON output").
It reads a MEMORY.md itself only up to 200 lines or 25 KB (https://code.claude.com/docs/en/memory,
"How it works"). So the text here is MEMORY.md's first lines within all three, after one line
naming the store (MEMORY.md's links are relative to it), and, when not all of it fits, a last line
saying where it was cut and where the rest is. The first character is never `{`: Claude Code
would try to read such output as JSON.

After MEMORY.md comes a short section of the newest log entries no dream has distilled yet (what
the agent appended since the last dream: store/undistilled.py, as dream's gather finds them), in
the room MEMORY.md left under the 10,000 characters: it never pushes out a line of MEMORY.md, and
says how many more are pending when not all fit.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from auto_dream.errors import InputError
from auto_dream.store.daylog import Entry
from auto_dream.store.files import read_regular
from auto_dream.store.paths import open_store
from auto_dream.store.review_queue import pending_count
from auto_dream.store.text import shown as printable
from auto_dream.store.undistilled import open_logs, read_distilled_ids, read_undistilled

HOOK_OUTPUT_CHARS = 10_000  # Claude Code's cap on a hook's output, in JavaScript characters (UTF-16 units)
INDEX_MAX_LINES = 200  # Claude Code's caps on the MEMORY.md it loads
INDEX_MAX_BYTES = 25_000
MAX_READ = 16 * 1024 * 1024  # a MEMORY.md past this is no index: only its start is read
PENDING_SHOWN = 10  # at most this many undistilled entries listed, newest first
PENDING_LINE_CHARS = 200  # of an entry's text, on one line


@dataclass(frozen=True)
class SessionContext:
    text: str  # what to print, ending in a newline
    index: Path
    lines_shown: int
    lines_total: int
    pending_shown: int = 0  # log entries no dream has distilled yet, listed
    pending_total: int = 0  # … and how many there are


def check_hook_format(*, as_json: bool, cursor_json: bool) -> None:
    """An InputError for `context --json --cursor-json`: one format at a time."""
    if as_json and cursor_json:
        raise InputError("--json and --cursor-json: give one")


def hook_output(found: SessionContext | None, *, as_json: bool = False, cursor_json: bool = False) -> str:
    """What `context` prints of `found`: the text itself (Claude Code reads a SessionStart hook's
    plain output), nothing when there is nothing to say; `as_json`, the JSON a Gemini CLI
    SessionStart hook answers with (its context is hookSpecificOutput.additionalContext:
    https://geminicli.com/docs/hooks, "SessionStart"); `cursor_json`, the JSON a Cursor
    sessionStart hook answers with (`additional_context` joins the conversation's initial system
    context, and `{}` says nothing: https://cursor.com/docs/hooks, "sessionStart")."""
    if cursor_json:
        return json.dumps({"additional_context": found.text} if found is not None else {}, ensure_ascii=False) + "\n"
    if found is None:
        return ""
    if as_json:
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": found.text}},
                          ensure_ascii=False) + "\n"
    return found.text


def _chars(text: str) -> int:
    """Length as JavaScript counts it (Claude Code's cap): an emoji outside the BMP is two."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def session_context(root: Path, max_chars: int = HOOK_OUTPUT_CHARS) -> SessionContext | None:
    """The context for a session that starts with the store at `root`: MEMORY.md, then the newest
    log entries not yet dreamed in the room left; None when there is no store, or neither a
    MEMORY.md nor a pending entry (nothing to say, and a hook must not fail a session for it). A
    store that cannot be read (a MEMORY.md that is a symlink or a FIFO…) is a StoreError."""
    if not root.is_dir():
        return None
    paths = open_store(root)
    logs, _ = open_logs(paths)  # only the logs not recorded as fully distilled are read
    pending = read_undistilled(logs, read_distilled_ids(paths)).entries if logs else []
    data = read_regular(paths.index, MAX_READ)
    index_text = "" if data is None else data.decode("utf-8-sig", errors="replace")
    if not index_text.strip():
        if not pending:
            return None
        header = f"auto-dream memory: the store at {root} has no MEMORY.md yet (no dream has run)\n"
        text, listed = _with_pending(header, pending, max_chars)
        return SessionContext(text, paths.index, 0, 0, listed, len(pending))
    # Lines end at "\n" only, as Claude Code counts them: str.splitlines would also break at a form
    # feed, a lone CR or U+2028 inside a line, adding line breaks and lines that are not in the file.
    *ended, last = index_text.split("\n")
    lines = [line + "\n" for line in ended] + ([last] if last else [])
    header = f"auto-dream memory: MEMORY.md of the store at {root} (its links are relative to that folder)\n"
    waiting = pending_count(paths)
    if waiting:
        header += (f"{waiting} memory decision(s) wait for you: when the user asks to tidy memory, or at a "
                   "natural pause, call the MCP tool `review` (or run `auto-dream review`) and decide them\n")

    def cut_note(shown: int, *, within: bool = False) -> str:
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
        text, listed = _with_pending(header + "".join(kept) + "…\n" + cut_note(0, within=True), pending, max_chars)
        return SessionContext(text, paths.index, 0, len(lines), listed, len(pending))
    text = header + "".join(shown)
    if len(shown) < len(lines):
        text += cut_note(len(shown))
    text, listed = _with_pending(text, pending, max_chars)
    return SessionContext(text, paths.index, len(shown), len(lines), listed, len(pending))


def _with_pending(text: str, pending: list[Entry], max_chars: int) -> tuple[str, int]:
    """`text` and after it the newest of `pending` (oldest first), one line each, as many as fit in
    what `text` left of `max_chars`, and a line saying how many more there are; when not even one
    fits, the count alone if it fits. (text, how many entries were listed)."""
    if not pending:
        return text, 0
    room = max_chars - _chars(text)
    head = (f"\n[auto-dream: {len(pending)} log entr{'y' if len(pending) == 1 else 'ies'} not yet dreamed into "
            "memory, newest first; `auto-dream recall WORDS` (MCP `recall`) finds them with the memories, "
            "`auto-dream show ID` shows one]\n")

    def more(count: int) -> str:
        return f"- … and {count} more not yet dreamed\n" if count else ""

    lines: list[str] = []
    used = _chars(head)
    for entry in reversed(pending[-PENDING_SHOWN:]):
        line = _pending_line(entry)
        if used + _chars(line) + _chars(more(len(pending) - len(lines) - 1)) > room:
            break
        lines.append(line)
        used += _chars(line)
    if lines:
        return text + head + "".join(lines) + more(len(pending) - len(lines)), len(lines)
    alone = (f"\n[auto-dream: {len(pending)} log entr{'y' if len(pending) == 1 else 'ies'} not yet dreamed; "
             "`auto-dream recall WORDS` finds them]\n")
    return (text + alone if _chars(alone) <= room else text), 0


def _pending_line(entry: Entry) -> str:
    """One entry on one line: its id, time, type and the start of its text."""
    words = printable(" ".join(entry.text.split()))
    if len(words) > PENDING_LINE_CHARS:
        words = words[:PENDING_LINE_CHARS - 1].rstrip() + "…"
    kind = f" ({entry.type})" if entry.type else ""
    return f"- {entry.id} [{entry.at:%Y-%m-%d %H:%M}]{kind} {words}\n"
