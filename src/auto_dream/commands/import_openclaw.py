"""`import openclaw`: OpenClaw's daily notes (`WORKSPACE/memory/YYYY-MM-DD.md`) into the log.

Each section of a note (a heading and its blocks, store/openclaw.py) becomes one untyped entry
of the note's day, its heading path first; dream types and distils them as any entry.

The time of day. A note gives its day, not the time of each line, so every entry of a note
is written at 12:00:00 of that day (store wall-clock time, as every log time is): noon keeps
the entry on its note's day, and an age counted from it is at most half a day off. One fixed
time also makes the entries an import wrote easy to find again: a second import reads the
day's entries at that time and adds only the items no entry of the same heading path holds
(store/openclaw.plan_note); and since dream sorts entries by time, stably, a note's entries
keep its order.
"""

import os
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path

from auto_dream.errors import InputError
from auto_dream.store.daylog import FIRST_YEAR, LAST_YEAR, MAX_LOG_BYTES, Entry, append_entry, make_entry, read_log
from auto_dream.store.files import NotRegular, TooLarge, read_file
from auto_dream.store.openclaw import SESSION_NOTE, NotePlan, note_day, plan_note
from auto_dream.store.paths import StoreLayout, ensure_store, layout_at
from auto_dream.store.text import shown

NOTE_TIME = time(12, 0)


@dataclass(frozen=True)
class SkippedNote:
    """A file of memory/ that was not imported, and why."""

    path: Path
    reason: str

    @property
    def warning(self) -> str:
        """What the command line says of it: the path written out as the other commands write one
        (store.text.shown), so a name holding a newline or ESC is one line a terminal shows as is."""
        return f"{shown(str(self.path))}: {self.reason}"


@dataclass(frozen=True)
class OpenClawImport:
    """What an import did: notes read, entries added, entries found already in the log, and the
    notes an earlier version had imported one entry per item (kept that way)."""

    workspace: Path
    notes_read: int
    entries_added: int
    already_there: int
    skipped: tuple[SkippedNote, ...]
    logs_written: tuple[str, ...]  # relative to the store's root
    earlier_notes: int = 0

    def as_json(self) -> dict:
        return {"workspace": shown(str(self.workspace)), "notes_read": self.notes_read,
                "entries_added": self.entries_added, "already_there": self.already_there,
                "earlier_notes": self.earlier_notes, "logs_written": list(self.logs_written),
                "skipped": [{"path": shown(str(s.path)), "reason": s.reason} for s in self.skipped]}


def import_openclaw(root: Path, workspace: Path) -> OpenClawImport:
    """Add every section of the workspace's daily notes (or what was written in it since) not yet
    in the store's log."""
    notes, skipped = _read_notes(workspace)
    paths: StoreLayout = layout_at(root)
    added = already = earlier = 0
    written: list[str] = []
    for day, path, text in notes:
        at = datetime.combine(day, NOTE_TIME)
        log_path = paths.log_file(day)
        logged = [e.text for e in read_log(log_path)[0] if e.at == at] if log_path.exists() else []
        plan: NotePlan = plan_note(text, day, logged)
        already += plan.already_there
        earlier += plan.earlier_import
        for entry in (_entry(entry_text, at, path, skipped) for entry_text in plan.texts):
            if entry is None:
                continue
            if not added:
                paths = ensure_store(root)  # only now: an import that adds nothing creates nothing
            relative = paths.relative(append_entry(paths, entry))
            if relative not in written:
                written.append(relative)
            added += 1
    return OpenClawImport(workspace, len(notes), added, already, tuple(skipped), tuple(written), earlier)


def _entry(text: str, at: datetime, path: Path, skipped: list[SkippedNote]) -> Entry | None:
    try:
        return make_entry(text, None, at)
    except InputError as refused:  # an item longer than an entry may be: the rest of the note goes in
        skipped.append(SkippedNote(path, f"an item was not imported ({refused}): {text[:60]!r}…"))
        return None


def _read_notes(workspace: Path) -> tuple[list[tuple[date, Path, str]], list[SkippedNote]]:
    """The daily notes of `workspace`, oldest first, with their text; every other .md file of memory/ skipped."""
    if not workspace.is_dir():
        what = "is not a folder" if workspace.exists() else "does not exist"
        raise InputError(f"no OpenClaw workspace at {shown(str(workspace))}: it {what}")
    folder = workspace / "memory"
    if not folder.is_dir():
        raise InputError(f"no daily notes in {shown(str(workspace))}: it has no memory/ folder "
                         "(OpenClaw keeps them in memory/YYYY-MM-DD.md)")
    notes: list[tuple[date, Path, str]] = []
    skipped: list[SkippedNote] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError as error:
        raise InputError(f"cannot read {shown(str(folder))}: {error.strerror}") from None
    for name in names:
        path = folder / name
        if not name.lower().endswith(".md") or path.is_dir():
            continue  # memory/projects/, an index's .sqlite: not daily notes
        day = note_day(name)
        if day is None:
            reason = ("a session summary (YYYY-MM-DD-<slug>.md), not a daily note: not imported"
                      if SESSION_NOTE.fullmatch(name) else "not named like a daily note (YYYY-MM-DD.md): not imported")
            skipped.append(SkippedNote(path, reason))
            continue
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            skipped.append(SkippedNote(path, f"dated outside the years {FIRST_YEAR}-{LAST_YEAR}: not imported"))
            continue
        text = _read_note(path, skipped)
        if text is not None:
            notes.append((day, path, text))
    return notes, skipped


LINKED = "a symbolic link: not read (it may lead out of the workspace, to a secret)"


def _read_note(path: Path, skipped: list[SkippedNote]) -> str | None:
    """The note's text; None (and why, in `skipped`) for a symbolic link (as a day's log that is
    one is not read: what it leads to would become memories, and go to Claude with --llm), a FIFO,
    a device, a huge file, not UTF-8."""
    try:
        raw, _ = read_file(path, MAX_LOG_BYTES)
    except NotRegular as refused:
        linked = refused.kind == "a symbolic link"
        skipped.append(SkippedNote(path, LINKED if linked else "not a regular file: not read"))
        return None
    except TooLarge:
        skipped.append(SkippedNote(path, f"larger than {MAX_LOG_BYTES:,} bytes: not read"))
        return None
    except OSError as error:
        skipped.append(SkippedNote(path, f"cannot read: {error.strerror}"))
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        skipped.append(SkippedNote(path, "not UTF-8 text: not read"))
        return None
