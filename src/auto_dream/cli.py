"""The command line: Typer parses, a command (commands/) runs, Rich renders; the one place that prints.

This is the composition root: only here (and in shell.py, which it uses) is the environment
read (AUTO_DREAM_ROOT, ANTHROPIC_API_KEY, the current directory, the home folder, the clock),
and only here are errors turned into exit codes and one line on stderr (console.tell_failure).
"""

import gc
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Optional, cast

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from auto_dream import __version__
from auto_dream.commands.append import append_text
from auto_dream.console import OutputLost, stderr_file, stdout_file, tell, tell_failure, write_out
from auto_dream.errors import InputError, StoreError
from auto_dream.shell import (
    APPEND_OPTIONS,
    CONTEXT_FLAGS,
    RECALL_FLAGS,
    RECALL_OPTIONS,
    auto_dream_command,
    claude_config_dir,
    codex_home_dir,
    entry_text,
    given_folder,
    home_folder,
    local_time,
    openclaw_config_path,
    openclaw_state_dir,
    openclaw_workspace,
    run_owed_checks,
    store_root,
    xdg_config_home,
)
from auto_dream.store.context import StoreContext, open_context
from auto_dream.store.paths import MEMORY_TYPES, STORE_DIR_NAME, store_dir_for_init
from auto_dream.store.text import shown

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    from auto_dream.commands.dream import DreamRequest, FolderDream
    from auto_dream.commands.install import Places
    from auto_dream.commands.install import Plan as InstallPlan
    from auto_dream.commands.schedule import Installed
    from auto_dream.commands.schedule import Plan as SchedulePlan
    from auto_dream.dream.apply import StepHook
    from auto_dream.dream.runner import DreamOutcome
    from auto_dream.judge.status import Status
    from auto_dream.progress import Progress

# Typer writes each argument's Python type after its name in --help ("DIR <str>", "TEXT
# <list[str]>"): the metavars and help already say what to give, and a Python type says nothing
# to someone at a shell (typer/core.py, TyperArgument.get_help_record).
typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]

# What a dream's apply calls at each of its steps (dream/apply.py's StepHook): None in the
# command as shipped. The crash tests set it in a child process (tests/conftest.py's
# run_killed_at), to kill a dream at a chosen step; the product reads no setting for it.
STEP_HOOK: "StepHook | None" = None


app = typer.Typer(
    name="auto-dream",
    help="A long-term memory for AI agents: append facts to a daily log, dream them into "
    "typed memory files and a compact MEMORY.md index.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
# No emoji codes or highlighting: user text is printed as it was written. Piped output is
# never wrapped, so paths stay whole for grep. Both write through console.py: a closed,
# broken or full stdout is an OutputLost, and stderr drops what it cannot take.
# (Rich uses only write, flush, isatty, encoding and fileno of its file.)
stdout = Console(file=cast(IO[str], stdout_file), highlight=False, soft_wrap=True, emoji=False,
                 width=None if stdout_file.isatty() else 100_000)
stderr = Console(file=cast(IO[str], stderr_file), highlight=False, soft_wrap=True, emoji=False)

FRESHNESS_STYLE = {"green": "green", "yellow": "yellow", "red": "red"}


# ---------------------------------------------------------------- composition root


def _root(ctx: typer.Context) -> Path:
    return store_root(ctx.obj.get("root"))


def _store_changed(ctx: typer.Context) -> None:
    """What the command was for is done: an output lost from here on must not invite a retry
    (a second append, the undo of one more run)."""
    ctx.obj["store_changed"] = True


kept_until_exit: list[object] = []  # the last dream's working set, never freed: the exit trick in __main__


def _keep_until_exit(working_set: object) -> None:
    kept_until_exit.append(working_set)


def _context(ctx: typer.Context, *, create: bool = False) -> StoreContext:
    return open_context(_root(ctx), create=create, home=home_folder(), claude_config_dir=claude_config_dir())


def _warn(message: str) -> None:
    stderr.print(f"auto-dream: warning: {message}", markup=False)


def _print_json(document: object) -> None:
    write_out(json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def _version(*, value: bool) -> None:
    if value:
        stdout.print(f"auto-dream {__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    root: Annotated[Optional[str], typer.Option(
        "--root", metavar="PATH",
        help="The store to use. Default: $AUTO_DREAM_ROOT, else the nearest .auto-dream/ "
        "in this folder or its parents, else ~/.openclaw/workspace/.auto-dream when it exists, "
        "else ~/.auto-dream.")] = None,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    ctx.ensure_object(dict)["root"] = root


# ---------------------------------------------------------------- commands


@app.command()
def init(
    ctx: typer.Context,
    directory: Annotated[Optional[str], typer.Argument(
        metavar="DIR", help="Create DIR/.auto-dream (default: the current folder).")] = None,
) -> None:
    """Create a store: logs/, memories/ by type, archive/, MEMORY.md and a commented config.toml."""
    from auto_dream.commands.init import init_store

    result = init_store(store_dir_for_init(directory, ctx.obj.get("root"), Path.cwd()))
    _store_changed(ctx)
    verb = "created a store" if result.created else "already a store"
    stdout.print(f"{verb} at {result.root}", markup=False)


@app.command()
def append(
    ctx: typer.Context,
    text: Annotated[list[str], typer.Argument(
        metavar="TEXT", help="The fact to remember; several words are joined by spaces. "
        "`-` reads the text from standard input.")],
    entry_type: Annotated[Optional[str], typer.Option(
        *APPEND_OPTIONS["entry_type"], metavar="TYPE", help="user, feedback, project or reference.")] = None,
    at: Annotated[Optional[str], typer.Option(
        *APPEND_OPTIONS["at"], metavar="WHEN", help="Back-date the entry: ISO 8601 or 'YYYY-MM-DD HH:MM' (in the "
        "store's timezone unless it has an offset), or 'yesterday 15:00', '2h ago', 'now'.")] = None,
) -> None:
    """Add one entry to today's log (the store is created if it does not exist yet)."""
    entry, log_path = append_text(_root(ctx), entry_text(text), entry_type, at)
    _store_changed(ctx)
    stdout.print(f"appended {entry.id} to {log_path}", markup=False)


@app.command("list")
def list_command(
    ctx: typer.Context,
    memory_type: Annotated[Optional[str], typer.Option(
        "--type", "-t", metavar="TYPE", help="Only memories of this type.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="List the archive instead.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list on stdout.")] = False,
) -> None:
    """Memories grouped by type, newest first, with their age."""
    from auto_dream.commands.listing import list_memories
    from auto_dream.store.paths import check_memory_type

    check_memory_type(memory_type)  # before the store is opened: a bad flag is named first
    now = local_time()
    result = list_memories(_context(ctx), now, memory_type, archived=archived)
    for bad in result.unreadable:
        _warn(f"{bad.path}: {bad.reason} (left untouched)")
    if as_json:
        _print_json([m.as_json() for m in result.memories])
        return
    if not result.memories:
        stdout.print("no archived memories" if archived else "no memories yet", markup=False)
        return
    import pendulum

    for memory_type_name in MEMORY_TYPES:
        group = [m for m in result.memories if m.type == memory_type_name]
        if not group:
            continue
        stdout.print(Text(f"{memory_type_name.upper()} ({len(group)})", style="italic"))
        ages = [pendulum.instance(m.mtime).diff_for_humans() for m in group]  # "3 days ago"
        age_width = max(map(len, ages))
        for m, age in zip(group, ages):
            # what people wrote is shown as written, never read as Rich markup (`[/]`, `[red]`)
            name = Text(("📌 " if m.pinned else "") + m.name)
            if m.status:
                name.append(f" [{_status_marker(m.status)}]", style="yellow")
            stdout.print(_list_line(name, age.ljust(age_width), Text(m.description), m.path, stdout.width))


def _list_line(name: Text, age: str, description: Text, path: str, width: int) -> Text:
    """One memory on one line of `width` cells: the path, what one copies, and the age whole; the
    name and the description cut to what is left (…). When that leaves them too little (a narrow
    terminal), the path goes on a line of its own below. Piped output is never cut (width is huge)."""
    room = width - cell_len(path) - cell_len(age) - 6
    if cell_len(name.plain) + cell_len(description.plain) <= room:  # it all fits (piped output always does)
        return Text("  ").join([name, Text(age), description, Text(path, style="dim")])
    own_line = room < 30
    if own_line:
        room = width - cell_len(age) - 4
    name.truncate(max(8, min(48, room * 2 // 5)), overflow="ellipsis")
    description.truncate(max(8, room - cell_len(name.plain)), overflow="ellipsis")
    line = Text()
    for part in (name, Text(age), description):
        if line:
            line.append("  ")
        line.append(part)
    line.append("\n  " if own_line else "  ")
    line.append(path, style="dim")
    return line


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[list[str], typer.Argument(
        metavar="QUERY", help="The words to look for; several words are joined by spaces (any of them may match).")],
    limit: Annotated[int, typer.Option(*RECALL_OPTIONS["limit"], metavar="N", min=1,
                                       help="At most N memories.")] = 10,
    memory_type: Annotated[Optional[str], typer.Option(
        *RECALL_OPTIONS["memory_type"], metavar="TYPE",
        help="Only memories of this type: user, feedback, project or reference.")] = None,
    archived: Annotated[bool, typer.Option(
        *RECALL_FLAGS["archived"], help="Search the archive as well as the live memories: memories dream retired "
        "(superseded, merged, stale). (`list --archived` lists the archive instead of the live memories.)")] = False,
    as_json: Annotated[bool, typer.Option(
        *RECALL_FLAGS["as_json"], help="Print one JSON list of {path, name, type, description, score, snippet, "
        "pending}; a pending hit (a log entry not yet dreamed) also has id and at, and its path is its day log.")]
    = False,
) -> None:
    """Find the memories that best answer QUERY, best first: name, type, path, score, description
    and a snippet with the matched words in **bold**. Ranking is BM25 over name, description and
    body (name and description weigh more), English words by their stem, Chinese and Japanese by
    two-character words; ties go to the newer memory. Log entries not yet dreamed are ranked with
    them, marked pending, with their id and day log. Open one whole with `auto-dream show PATH|ID`.
    No match: one line saying so (with --json, []), exit 0."""
    from auto_dream.commands.recall import check_query, recall_owing, render_hits
    from auto_dream.store.paths import check_memory_type

    text = " ".join(query)
    check_query(text)  # before the store is opened: bad input is named first
    check_memory_type(memory_type)
    hits, owed = recall_owing(_context(ctx), text, limit, memory_type, archived=archived, now=local_time())
    if as_json:
        _print_json([hit.as_json() for hit in hits])
    else:
        write_out(render_hits(hits, text))
    run_owed_checks([owed])


@app.command()
def show(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(
        metavar="PATH|NAME|ID", help="The memory's path relative to the store (as recall, list and MEMORY.md "
        "show it), or its name (exact, else in any case), or the id of a log entry not yet dreamed (as recall "
        "gives it).")],
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print {path, name, type, description, mtime, body, sources} instead (a pending entry: "
        "also pending and id; path its day log, name its id, body its text).")] = False,
) -> None:
    """Print one memory file whole, as it is on disk: what to open after a recall or a line of
    MEMORY.md; or a log entry not yet dreamed, by its id, as its day log holds it. A name that
    several memories share is an error listing their paths."""
    from auto_dream.commands.recall import PendingEntry, file_text, show_owing

    context = _context(ctx)
    found, owed = show_owing(context, memory, local_time())
    if isinstance(found, PendingEntry) and as_json:
        _print_json(found.as_json())
    elif as_json:
        _print_json({"path": found.path, "name": found.name, "type": found.type, "description": found.description,
                     "mtime": found.mtime.isoformat(timespec="seconds"), "body": found.body,
                     "sources": list(found.sources)})
    else:
        text = file_text(context, found)
        write_out(text if text.endswith("\n") else text + "\n")
    run_owed_checks([owed])


@app.command()
def check(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> None:
    """Freshness of every memory, entries waiting for a dream, whether a dream is due, index drift."""
    from auto_dream.commands.check import check_store

    result = check_store(_context(ctx), local_time())
    for bad in result.unreadable:
        _warn(f"{bad.path}: {bad.reason} (left untouched)")
    for problem in result.log_problems:
        _warn(f"{problem.path}:{problem.line}: {problem.message}")
    if as_json:
        _print_json(result.as_json())
        return
    last = result.last_dream.strftime("%Y-%m-%d %H:%M") if result.last_dream else "never"
    stdout.print(f"entries waiting for a dream: {result.undistilled_entries}", markup=False)
    stdout.print(f"last dream: {last}; dream due: {'yes' if result.dream_due else 'no'}", markup=False)
    if result.decay_days:
        where = ", listed last in MEMORY.md" if result.decay_in_index else ""
        stdout.print(f"decayed (neither changed nor looked up in {result.decay_days} days{where}): "
                     f"{result.decayed}", markup=False)
    stdout.print("MEMORY.md: " + ("in sync" if result.index_in_sync
                                  else "out of date (run `auto-dream build-index`)"), markup=False)
    if result.review_pending:
        stdout.print(f"decisions waiting for a reader: {result.review_pending} (`auto-dream review` lists them)",
                     markup=False)
    if result.memories:
        table = Table(box=None, pad_edge=False)
        for column in ("age", "type", "staleness", "memory"):
            table.add_column(column, overflow="fold")
        for m in result.memories:
            colour = FRESHNESS_STYLE[m.freshness]
            staleness = m.staleness or "—"
            if m.missing_refs:
                staleness += " (missing: " + ", ".join(m.missing_refs) + ")"
            path = Text(m.path)
            if m.status:
                path.append(f" [{_status_marker(m.status)}]", style="yellow")
            table.add_row(Text(f"{m.age_days}d", style=colour), m.type, Text(staleness), path)
        stdout.print(table)


def _status_marker(status: "Status") -> str:
    """`superseded → feedback_b.md`: what a person marked a memory, and where it points (the first)."""
    return status.kind + (f" → {shown(status.points_to[0])}" if status.points_to else "")


@app.command("build-index")
def build_index_command(ctx: typer.Context) -> None:
    """Rebuild MEMORY.md from the memory files (an index already up to date is left as it is). In a
    Claude Code folder every line of MEMORY.md is kept: only lines for unlisted memories are added."""
    from auto_dream.commands.build_index import build_index

    built = build_index(_context(ctx))
    _store_changed(ctx)
    for bad in built.unreadable:
        _warn(f"{bad.path}: {bad.reason} (left untouched, not in MEMORY.md)")
    for warning in built.result.warnings:
        _warn(warning)
    result = built.result
    verb = "wrote" if built.changed else "MEMORY.md already up to date:"
    marked = f" ({result.marked} marked deprecated, superseded or moved)" if result.marked else ""
    stdout.print(f"{verb} {len(result.listed)} memories listed"
                 + (f", {result.omitted} counted in the 'more' line{marked}" if result.omitted else "")
                 + f"; {result.line_count} lines, {result.byte_count:,} bytes", markup=False)


@app.command("dream")
def dream_command(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run",
                                          help="Print the plan, prefixed [DRY RUN]; write nothing.")] = False,
    propose: Annotated[bool, typer.Option(
        "--propose", help="Apply only what adds (new memories, merges); list retirements as proposals.")] = False,
    llm: Annotated[Optional[bool], typer.Option(
        "--llm/--no-llm", help="Ask Claude to distil and to decide the pairs left for review "
        "(default: config llm = auto, i.e. when ANTHROPIC_API_KEY is set).")] = None,
    full: Annotated[bool, typer.Option("--full",
                                       help="Check every pair of memories, not only the changed ones.")] = False,
    if_due: Annotated[bool, typer.Option(
        "--if-due", help="Run only when due: 24 h since the last dream and 5 entries waiting (config).")] = False,
    budget: Annotated[Optional[int], typer.Option(
        "--budget", metavar="N", min=0, help="At most N retirements this run (default: config budget, 25).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON document.")] = False,
    every_folder: Annotated[bool, typer.Option(
        "--all", help="Dream every memory folder `discover` finds under PATH and your own, each on its own.")] = False,
    path: Annotated[Optional[str], typer.Argument(
        metavar="PATH", help="With --all: the folder to look under (default: the current folder).")] = None,
) -> None:
    """Distil new log entries into memories, merge duplicates, resolve contradictions, archive
    stale memories, rebuild MEMORY.md; print the report. Only what is certain is acted on: pairs
    that might be duplicates or conflicts are kept and listed for review (with --llm, Claude
    decides them). Every run can be undone. A Claude Code memory folder is dreamed in place. On a
    terminal, a dream that takes more than a second shows its progress on stderr (not with --json)."""
    from auto_dream.commands.dream import DreamRequest, dream
    from auto_dream.dream.report import render_markdown

    if path is not None and not every_folder:
        raise InputError(f"PATH ({path}) is for `dream --all`; to dream one store or folder, give --root")
    request = DreamRequest(dry_run=dry_run, propose=propose, full=full, budget=budget, llm=llm, if_due=if_due,
                           api_key=os.environ.get("ANTHROPIC_API_KEY"), base_url=os.environ.get("ANTHROPIC_BASE_URL"))
    if every_folder:
        _dream_all(ctx, Path(path).expanduser().absolute() if path else Path.cwd(), as_json=as_json, request=request)
        return
    context = _context(ctx)
    progress = _dream_progress(as_json=as_json)
    # The exit trick (see __main__): no collection during the dream, and its working set kept
    # to the exit; a caller of run() in the same process gets the collector back.
    collecting = gc.isenabled()
    gc.disable()
    try:
        kept_until_exit.clear()  # the last dream's alone
        outcome = dream(context, local_time(), request, step_hook=STEP_HOOK, progress=progress, keep=_keep_until_exit)
    finally:
        progress.finish()  # the dream finished it already; this is for an error before it began
        if collecting:
            gc.enable()
    if not dry_run:
        _store_changed(ctx)
    if outcome.report is None:
        stderr.print(outcome.markdown.rstrip(), markup=False)
        if as_json:
            _print_json({"dream_due": False, "reason": outcome.not_due})
        return
    for warning in outcome.report.warnings:
        _warn(warning)
    if as_json:
        _print_json(outcome.report.as_json())
    else:  # each warning was told once, on stderr
        stdout.print(render_markdown(outcome.report, warnings=False).rstrip(), markup=False)


def _dream_all(ctx: typer.Context, under: Path, *, as_json: bool, request: "DreamRequest") -> None:
    """`dream --all`: a report per folder as it is dreamed, then one summary; the exit code is
    the worst of the folders' (a folder that failed does not stop the others)."""
    from auto_dream.commands.dream import dream_all

    done = []
    # each folder's bar is taken down before its report is printed (dream_all's runs finish it)
    for folder in dream_all(under, home_folder(), claude_config_dir(), local_time(), request,
                            progress=_dream_progress(as_json=as_json)):
        done.append(folder)
        if not request.dry_run and folder.outcome is not None:
            _store_changed(ctx)
        if as_json:
            continue
        stdout.print(f"# {folder.found.path} ({folder.found.layout})\n", markup=False)
        if folder.error is not None:
            stdout.print(f"error: {folder.error}\n", markup=False)
        elif folder.outcome is not None:
            stdout.print(folder.outcome.markdown.rstrip() + "\n", markup=False)
    rows = [_folder_summary(folder) for folder in done]
    if as_json:
        _print_json({"folders": rows})
    elif not done:
        stdout.print("no memory folders found", markup=False)
    else:
        table = Table(title="Summary", box=None, pad_edge=False)
        for column in ("folder", "layout", "result", "created", "merged", "superseded", "archived", "review"):
            table.add_column(column, overflow="fold")
        for row in rows:
            counts = row.get("counts", {})
            table.add_row(Text(row["path"]), row["layout"], row["result"],
                          *(str(counts.get(key, "")) for key in ("created", "merged", "superseded", "archived",
                                                                  "review")))
        stdout.print(table)
    worst = max((folder.exit_code for folder in done), default=0)
    if worst:
        failed = [folder for folder in done if folder.exit_code]
        stderr.print(f"auto-dream: error: {len(failed)} of {len(done)} memory folders were not dreamed "
                     f"(first: {failed[0].found.path}: {failed[0].error})", markup=False)
        raise typer.Exit(worst)


def _folder_summary(folder: "FolderDream") -> dict:
    row: dict = {"path": str(folder.found.path), "layout": folder.found.layout}
    if folder.outcome is None:
        row.update(result="failed", error=folder.error, exit_code=folder.exit_code)
        return row
    report = folder.outcome.report
    if report is None:
        row.update(result="not due", reason=folder.outcome.not_due)
        return row
    document = report.as_json()
    stats = report.stats
    row.update(result="dry run" if report.dry_run else "dreamed", run_id=report.run_id, counts={
        "created": stats.created, "merged": stats.merged, "superseded": stats.superseded,
        "archived": stats.archived_stale,
        "review": stats.review}, report=document)
    return row


PROGRESS_DELAY = 1.0  # seconds a dream runs before its bar is drawn: a quick dream shows none
PROGRESS_UPDATE = 0.05  # seconds between two updates of the bar's counts (a dream counts a step in microseconds)


def _dream_progress(*, as_json: bool) -> "Progress":
    """How a dream shows how far it has got: a bar on stderr when stderr is a terminal that can
    draw one (not TERM=dumb); nothing with --json or when stderr is piped (a real isatty, so
    FORCE_COLOR, which makes Rich draw in a log file, does not)."""
    from auto_dream.progress import NO_PROGRESS

    if as_json or not stderr_file.isatty():
        return NO_PROGRESS
    console = Console(file=cast(IO[str], stderr_file), highlight=False, emoji=False)
    return TerminalProgress(console, PROGRESS_DELAY) if console.is_interactive else NO_PROGRESS


class TerminalProgress:
    """A run's stages (auto_dream.progress) as a Rich progress display on `console`: one line per
    stage with its count and time, drawn once the run has taken `delay` seconds and erased when
    it finishes (`transient`), so the report printed next starts on a clean line.

    A Rich Progress is made when a run starts and stopped when it finishes (the API as read in Rich
    15's rich/progress.py and rich/live.py, and https://rich.readthedocs.io/en/stable/progress.html:
    `start()` begins the Live display with its refresh thread, `stop()` ends it, `transient=True`
    erases it and shows the cursor again). It redirects neither stdout nor stderr: Live would swap
    sys.stdout for a proxy that prints through this stderr console, and console.py's streams write
    to whatever sys.stdout is. A timer draws it when no step comes within `delay` (orient on a large
    store, a call to Claude)."""

    def __init__(self, console: Console, delay: float):
        self.console, self.delay = console, delay
        self._lock = threading.Lock()  # the timer's thread and the dream's
        self._bar: "RichProgress | None" = None
        self._task: "TaskID | None" = None
        self._timer: threading.Timer | None = None
        self._shown = False
        self._show_at = self._next_update = 0.0
        self._total: int | None = None
        self._done = 0

    def start(self, stage: str, total: int | None) -> None:
        with self._lock:
            if self._bar is None:  # a run begins: its clock starts
                from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress

                self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                         TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                                         console=self.console, transient=True,
                                         redirect_stdout=False, redirect_stderr=False)
                self._show_at = time.monotonic() + self.delay
                if self.delay > 0:
                    self._timer = threading.Timer(self.delay, self._show)
                    self._timer.daemon = True
                    self._timer.start()
            self._end_stage()
            self._total, self._done = total, 0
            self._task = self._bar.add_task(stage, total=total, count=self._count())
        self._update()

    def advance(self, done: int = 1) -> None:
        self._done += done
        if time.monotonic() >= self._next_update:  # cheap between two updates: a dream counts thousands
            self._update()

    def finish(self) -> None:
        with self._lock:
            timer = self._timer
            if self._bar is not None and self._shown:
                self._end_stage()
                self._bar.stop()
            self._bar, self._task, self._timer, self._shown = None, None, None, False
        if timer is not None:  # outside the lock, which a timer that has just fired waits for
            timer.cancel()
            timer.join()  # no thread outlives the run

    def _count(self) -> str:
        return "" if self._total is None else f"{self._done}/{self._total}"

    def _end_stage(self) -> None:
        """The stage under way is over: its line shows what it did (one of unknown length, full)."""
        if self._bar is not None and self._task is not None:
            if self._total is None:
                self._bar.update(self._task, total=1, completed=1)
            else:
                self._bar.update(self._task, completed=self._done, count=self._count())

    def _update(self) -> None:
        now = time.monotonic()
        self._next_update = now + PROGRESS_UPDATE
        with self._lock:
            if self._bar is None or self._task is None:
                return
            if self._total is not None:
                self._bar.update(self._task, completed=self._done, count=self._count())
            if not self._shown and now >= self._show_at:
                self._bar.start()
                self._shown = True

    def _show(self) -> None:
        """The timer: the run has taken `delay` and no step came to draw the bar."""
        with self._lock:
            if self._bar is not None and not self._shown:
                self._bar.start()
                self._shown = True


@app.command()
def undo(
    ctx: typer.Context,
    run_id: Annotated[Optional[str], typer.Argument(metavar="RUN_ID", help="Default: the last dream run.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Restore files changed since the run too, discarding "
                                        "those changes: each version replaced is copied into the run's folder "
                                        "first.")] = False,
) -> None:
    """Reverse a dream run: every file it touched is restored byte for byte. A file changed since
    the run stops it (unless --force); one changed while it runs is left as it is, and said so."""
    from auto_dream.commands.dream import undo as undo_run

    result = undo_run(_context(ctx), local_time(), run_id, force=force)
    _store_changed(ctx)
    for path in result.conflicts:
        if result.interrupted:
            _warn(f"{path} had changed since the interrupted run; left as it is")
        elif path in result.replaced:
            _warn(f"{path} had changed since the run; restored anyway (--force): the version with those changes "
                  f"is kept as {result.replaced[path]}")
        else:
            _warn(f"{path} had changed since the run; restored anyway (--force)")
    for warning in result.warnings:
        _warn(warning)
    verb = "rolled back the interrupted run" if result.interrupted else "undid run"
    left = (f"; {len(result.left)} changed while undo ran, left as they are (`auto-dream undo {result.run_id}` "
            "again finishes it)") if result.left and not result.interrupted else ""
    stdout.print(f"{verb} {result.run_id}: {len(result.restored)} files restored{left}", markup=False)


@app.command()
def review(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> None:
    """The decisions dream left for someone who can read meaning: pairs of memories that may say
    the same thing or contradict each other, each with the deciding sentence of both quoted.
    Decide one with `auto-dream resolve ID keep|merge|supersede`."""
    from auto_dream.commands.review import review_items

    result = review_items(_context(ctx))
    if as_json:
        _print_json(result.as_json())
        return
    if result.changed:
        stdout.print(f"{len(result.changed)} item(s) left out: a memory changed since; the next dream judges "
                     "them again", markup=False)
    if not result.items:
        stdout.print("no decisions wait", markup=False)
        return
    for item in result.items:
        stdout.print(f"{item.id}  possible {item.kind}  (first seen {item.first_seen[:16].replace('T', ' ')})",
                     markup=False)
        for path, quote in zip(item.memories, item.evidence):
            stdout.print(f"  {shown(path)}", markup=False)
            stdout.print(f"    \u201c{quote}\u201d", markup=False)
    stdout.print(f"\n{len(result.items)} decision(s) wait. Decide one: auto-dream resolve ID keep | merge --into PATH "
                 "| supersede --winner PATH (undo reverses it)", markup=False)


@app.command()
def resolve(
    ctx: typer.Context,
    item: Annotated[str, typer.Argument(metavar="ID", help="The item's id, as `auto-dream review` shows it.")],
    action: Annotated[str, typer.Argument(metavar="keep|merge|supersede", help="keep both (remembered), merge "
                                          "one into the other, or supersede one by the other.")],
    into: Annotated[Optional[str], typer.Option(
        "--into", metavar="PATH", help="merge: the memory that stays and takes the other's whole text.")] = None,
    winner: Annotated[Optional[str], typer.Option(
        "--winner", metavar="PATH", help="supersede: the memory that stays; the other is archived.")] = None,
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why, kept with the decision.")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> None:
    """Decide one review item: keep both (not asked again while both stay as they are), merge
    the other into --into (its whole text is carried in, then it is archived), or supersede the
    other by --winner (it is archived). Journaled like a dream: `auto-dream undo` reverses it."""
    from auto_dream.commands.review import resolve as resolve_item

    outcome = resolve_item(_context(ctx), local_time(), item, action, into=into, winner=winner, reason=reason)
    _store_changed(ctx)
    _print_decision(outcome, as_json=as_json, what=f"resolved {item.strip()}: {action}")


@app.command()
def forget(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(metavar="PATH|NAME", help="The memory: its path (as `list --json` "
                                          "gives it), file name or name.")],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why it is wrong, kept in the "
                                        "archived copy.")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> None:
    """Archive a memory that is wrong, with the reason: it leaves MEMORY.md and recall, and its
    file is kept in the archive. Journaled like a dream: `auto-dream undo` reverses it."""
    from auto_dream.commands.review import forget as forget_memory

    outcome = forget_memory(_context(ctx), local_time(), memory, reason=reason)
    _store_changed(ctx)
    _print_decision(outcome, as_json=as_json, what="forgot")


def _print_decision(outcome: "DreamOutcome", *, as_json: bool, what: str) -> None:
    report = outcome.report
    assert report is not None  # a decision is never "not due"
    for warning in report.warnings:
        _warn(warning)
    if as_json:
        _print_json(report.as_json())
        return
    done = [f"{action.kind} {shown(action.path)}" + (f" -> {shown(action.target)}" if action.target else "")
            for action in report.actions if action.kind != "index"]
    stdout.print(f"{what}" + (f": {'; '.join(done)}" if done else "") + f" (run {report.run_id}; "
                 "`auto-dream undo` reverses it)", markup=False)
    if report.stats.review_pending:
        stdout.print(f"{report.stats.review_pending} decision(s) still wait: auto-dream review", markup=False)


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    root: Annotated[Optional[str], typer.Option(
        "--root", metavar="PATH", help="The store to serve (as `auto-dream --root PATH`; default: as every "
        "command finds it).")] = None,
) -> None:
    """Serve the store to an MCP client (Claude Code, Claude Desktop, OpenClaw, …) over stdio:
    the tools remember, recall, show, list_memories, check, dream (a plan unless told to apply),
    undo, review, resolve and forget, and MEMORY.md as the resource auto-dream://MEMORY.md. Runs until the client
    closes the connection."""
    from auto_dream.mcp_server import serve

    serve(store_root(root) if root is not None else _root(ctx))


import_app = typer.Typer(help="Bring another agent's notes into the log.", no_args_is_help=True,
                         rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(import_app, name="import")


@import_app.command("openclaw")
def import_openclaw_command(
    ctx: typer.Context,
    workspace: Annotated[Optional[str], typer.Argument(
        metavar="WORKSPACE", help="The OpenClaw workspace (default: ~/.openclaw/workspace).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> None:
    """Import OpenClaw's daily notes (WORKSPACE/memory/YYYY-MM-DD.md) into the log: each section (a
    heading and the lists, tables, paragraphs and code under it) becomes an entry of the note's day
    (at 12:00), its heading path first; a Misc / メモ / その他 section, one entry per item.
    Importing again adds only what was written since."""
    from auto_dream.commands.import_openclaw import import_openclaw

    result = import_openclaw(_root(ctx), openclaw_workspace(workspace))
    if result.entries_added:
        _store_changed(ctx)
    for skipped in result.skipped:
        _warn(skipped.warning)
    if as_json:
        _print_json(result.as_json())
        return
    earlier = (f"; {result.earlier_notes} {'note was' if result.earlier_notes == 1 else 'notes were'} imported one "
               "entry per item by an earlier version and stay so" if result.earlier_notes else "")
    stdout.print(f"read {result.notes_read} notes from {shown(str(result.workspace / 'memory'))}: "
                 f"{result.entries_added} {'entry' if result.entries_added == 1 else 'entries'} added, "
                 f"{result.already_there} already in the log{earlier}", markup=False)


schedule_app = typer.Typer(
    help="Run dream on a schedule for this store: cron, a systemd user timer or launchd. Each store has at "
    "most one schedule per scheduler; these commands write only its crontab lines, unit files or plist "
    "(with install and uninstall, the only commands that write outside the store).",
    no_args_is_help=True, rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(schedule_app, name="schedule")

SCHEDULER_FLAGS = {
    "cron": "Use cron: a marked line in your crontab (`crontab -l`, `crontab -`).",
    "systemd": "Use a systemd user timer: auto-dream-<id>.timer and .service in ~/.config/systemd/user "
               "($XDG_CONFIG_HOME), enabled with systemctl --user.",
    "launchd": "Use launchd (macOS): ~/Library/LaunchAgents/com.auto-dream.dream.<id>.plist, loaded with "
               "launchctl bootstrap.",
}


def _scheduler(*, cron: bool, systemd: bool, launchd: bool) -> str | None:
    asked = [name for name, flag in (("cron", cron), ("systemd", systemd), ("launchd", launchd)) if flag]
    if len(asked) > 1:
        raise InputError(f"choose one scheduler, not {' and '.join('--' + name for name in asked)}")
    return asked[0] if asked else None


def _print_schedule(schedule: "Installed") -> None:
    stdout.print(f"  when: {schedule.when or '?'}", markup=False)
    stdout.print(f"  runs: {schedule.runs or '?'}", markup=False)
    stdout.print(f"  in:   {', '.join(schedule.where)}", markup=False)


def _describe_schedule(schedule: "Installed") -> str:
    frequency = f"{schedule.frequency} " if schedule.frequency else "changed-by-hand "
    return f"{frequency}{schedule.scheduler} schedule"


def _print_plan(plan: "SchedulePlan", *, dry_run: bool) -> None:
    from auto_dream.commands.schedule import describe_step

    for warning in plan.warnings:
        _warn(warning)
    if dry_run:
        for step in plan.steps:
            for line in describe_step(step):
                stdout.print(f"[DRY RUN] {line}", markup=False)
        if not plan.changes:
            stdout.print("[DRY RUN] no file or crontab line would change", markup=False)


@schedule_app.command("install")
def schedule_install(
    ctx: typer.Context,
    weekly: Annotated[bool, typer.Option(
        "--weekly", help="A full dream every Sunday at 03:00 (the default).")] = False,
    hourly: Annotated[bool, typer.Option(
        "--hourly", help="Every hour at :17, `dream --if-due`: a dream only when 24 h passed since the last "
        "and 5 entries wait (config.toml).")] = False,
    cron: Annotated[bool, typer.Option("--cron", help=SCHEDULER_FLAGS["cron"])] = False,
    systemd: Annotated[bool, typer.Option("--systemd", help=SCHEDULER_FLAGS["systemd"])] = False,
    launchd: Annotated[bool, typer.Option("--launchd", help=SCHEDULER_FLAGS["launchd"])] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would change, prefixed [DRY RUN]; change nothing.")] = False,
) -> None:
    """Install cron/'s weekly (or hourly) dream for this store, with the store's path and this
    auto-dream (its Python, `-m auto_dream`) put in. The scheduler: launchd on macOS, a systemd
    user timer where systemd runs, else cron. Installing again replaces the store's schedule
    (--weekly then --hourly leaves the hourly one); other stores' schedules and every other
    crontab line stay as they are. Without the scheduler's tool: one line saying what to run
    instead, exit 1, nothing written."""
    from auto_dream.commands.schedule import apply_plan, plan_install
    from auto_dream.shell import run_tool, schedule_surroundings

    if weekly and hourly:
        raise InputError("choose --weekly or --hourly, not both")
    scheduler = _scheduler(cron=cron, systemd=systemd, launchd=launchd)
    surroundings = schedule_surroundings()
    plan = plan_install(_root(ctx), "hourly" if hourly else "weekly", scheduler, surroundings, run_tool)
    _print_plan(plan, dry_run=dry_run)
    if dry_run:
        return
    apply_plan(plan, surroundings, run_tool)
    schedule = plan.schedules[0]
    verb = "installed" if plan.changes else "already installed, nothing changed:"
    stdout.print(f"{verb} the {_describe_schedule(schedule)} of {plan.root}", markup=False)
    _print_schedule(schedule)


@schedule_app.command("remove")
def schedule_remove(
    ctx: typer.Context,
    cron: Annotated[bool, typer.Option("--cron", help="Only the crontab line.")] = False,
    systemd: Annotated[bool, typer.Option("--systemd", help="Only the systemd user timer.")] = False,
    launchd: Annotated[bool, typer.Option("--launchd", help="Only the launchd agent.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would change, prefixed [DRY RUN]; change nothing.")] = False,
) -> None:
    """Take out this store's schedules (from every scheduler, or the one named): its two marked
    crontab lines (every other byte of the crontab is kept, so an untouched one is as it was
    before the install), its systemd timer (disabled, both unit files deleted) or its launchd
    agent (booted out, plist deleted). Other stores' schedules and everything else are left
    as they are. Nothing installed: one line saying so, exit 0."""
    from auto_dream.commands.schedule import apply_plan, plan_remove
    from auto_dream.shell import run_tool, schedule_surroundings

    scheduler = _scheduler(cron=cron, systemd=systemd, launchd=launchd)
    surroundings = schedule_surroundings()
    plan = plan_remove(_root(ctx), scheduler, surroundings, run_tool)
    if not plan.schedules:
        stdout.print(f"no {scheduler + ' ' if scheduler else ''}schedule installed for {plan.root}", markup=False)
        return
    _print_plan(plan, dry_run=dry_run)
    if dry_run:
        return
    apply_plan(plan, surroundings, run_tool)
    for schedule in plan.schedules:
        stdout.print(f"removed the {_describe_schedule(schedule)} of {plan.root}", markup=False)


@schedule_app.command("status")
def schedule_status_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print {store, id, schedules: [{scheduler, frequency, when, runs, where}], "
        "not_checked: [{scheduler, reason}]}.")] = False,
) -> None:
    """Which schedules this store has, in which scheduler, when they run and what they run.
    Reads only; exit 0 whether or not one is installed."""
    from auto_dream.commands.schedule import schedule_status
    from auto_dream.shell import run_tool, schedule_surroundings

    status = schedule_status(_root(ctx), schedule_surroundings(), run_tool)
    if as_json:
        _print_json(status.as_json())
        return
    if not status.schedules:
        stdout.print(f"no schedule installed for {status.root} (`auto-dream schedule install` adds one)",
                     markup=False)
    for schedule in status.schedules:
        stdout.print(f"{_describe_schedule(schedule)} of {status.root}", markup=False)
        _print_schedule(schedule)
    for scheduler, reason in status.not_checked:
        stdout.print(f"{scheduler}: not looked at: {reason}", markup=False)


@app.command("context")
def context_command(ctx: typer.Context, as_json: Annotated[bool, typer.Option(
        *CONTEXT_FLAGS["as_json"], help="Print it as the JSON a Gemini CLI SessionStart hook answers with: "
        '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT}}.')] = False,
        cursor_json: Annotated[bool, typer.Option(
            *CONTEXT_FLAGS["cursor_json"], help='Print it as the JSON a Cursor sessionStart hook answers with: '
            '{"additional_context": TEXT}; with nothing to say, {}.')] = False) -> None:
    """Print the store's MEMORY.md as a session should start with it: one line naming the store
    (MEMORY.md's links are relative to it), then MEMORY.md within Claude Code's caps — 10,000
    characters of a hook's output, 200 lines, 25,000 bytes — and a last line saying where it was
    cut, when it was; then, in the room left, the newest log entries not yet dreamed and how many
    more there are. No store, or neither MEMORY.md nor a pending entry: nothing, exit 0. The
    session-start hooks that `auto-dream install claude-code`, `install gemini-cli` and `install cursor`
    add run it."""
    from auto_dream.commands.session_context import check_hook_format, hook_output, session_context

    check_hook_format(as_json=as_json, cursor_json=cursor_json)  # before the store is read
    text = hook_output(session_context(_root(ctx)), as_json=as_json, cursor_json=cursor_json)
    if text:
        write_out(text)


ScopeOption = Annotated[str, typer.Option(
    "--scope", metavar="project|local|user",
    help="project: the project's .mcp.json, .claude/settings.json and .claude/skills/ (store: "
    "<project>/.auto-dream), files a repository shares; local: only you, in this project: ~/.claude.json's "
    "projects[<project>].mcpServers, .claude/settings.local.json and a git-ignored .claude/skills/auto-dream/ "
    "(store: <project>/.auto-dream); user: ~/.claude.json, ~/.claude/settings.json and ~/.claude/skills/ "
    "($CLAUDE_CONFIG_DIR when set; store: ~/.auto-dream). `auto-dream --root PATH install …` names another "
    "store.")]
ProjectOption = Annotated[Optional[str], typer.Option(
    "--project", metavar="DIR", help="With --scope project: the project's folder (default: the current folder).")]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the change (and each JSON file's diff); "
                                            "write nothing.")]

install_app = typer.Typer(help="Wire auto-dream into an agent: its MCP server, hooks, skill or instructions. "
                          "Every other setting, server, hook, skill and line is kept as it was; installing twice "
                          "changes nothing.",
                          no_args_is_help=True, rich_markup_mode=None,
                          context_settings={"help_option_names": ["-h", "--help"]})
uninstall_app = typer.Typer(help="Remove exactly what `auto-dream install` added, and nothing else.",
                            no_args_is_help=True, rich_markup_mode=None,
                            context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(install_app, name="install")


@install_app.callback(invoke_without_command=True)
def install_main(ctx: typer.Context, list_agents: Annotated[bool, typer.Option(
        "--list", help="List the agents found on this machine, which auto-dream can install into today "
        "(claude-code, codex, openclaw, gemini-cli, cursor, opencode) and where it is installed; write nothing.")
        ] = False) -> None:
    """Wire auto-dream into an agent: its MCP server, hooks and skill."""
    if ctx.invoked_subcommand is not None:
        return
    if not list_agents:
        write_out(ctx.get_help() + "\n")
        return
    from auto_dream.commands.install import find_agents

    rows = []
    for agent in find_agents(home_folder(), Path.cwd(), claude_config_dir(), openclaw_state_dir(), shutil.which,
                             xdg_config_home(), codex_home_dir()):
        found = "found (" + ", ".join(agent.found) + ")" if agent.found else "not found"
        if agent.command is None:
            can = "not supported yet"
        else:
            can = f"supported: auto-dream install {agent.command}"
        installed = ("installed: " + ", ".join(agent.installed) if agent.installed != ("yes",) else "installed") \
            if agent.installed else "not installed"
        rows.append(f"{agent.name}: {found}; {can}" + (f"; {installed}" if agent.command else ""))
    write_out("\n".join(rows) + "\n")
app.add_typer(uninstall_app, name="uninstall")


def _claude_code_places(scope: str, project: Optional[str]) -> "tuple[Places, Path]":
    from auto_dream.commands.install import claude_code_places

    folder = given_folder(project, "--project") or Path.cwd()
    if scope in ("project", "local") and not folder.is_dir():
        raise InputError(f"no project folder {folder}")
    return claude_code_places(scope, folder, home_folder(), claude_config_dir()), folder


@install_app.command("claude-code")
def install_claude_code(
    ctx: typer.Context,
    scope: ScopeOption = "project",
    project: ProjectOption = None,
    dry_run: DryRunOption = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an MCP server named auto-dream that install did not add (one that runs "
        "something else, or your own registration of auto-dream), or a skill named auto-dream that is not "
        "ours.")] = False,
) -> None:
    """Register auto-dream's MCP server where Claude Code reads it for the scope, add a SessionStart
    hook (MEMORY.md as context, by `auto-dream context`) and a SessionEnd hook (`dream --if-due`, in
    the background), and install the skill. The commands written name the store (--root) and this
    auto-dream by its absolute path."""
    from auto_dream.commands.install import other_scopes_installed, scope_warning

    places, folder = _claude_code_places(scope, project)
    _install(ctx, places, folder, dry_run=dry_run, force=force)
    others = other_scopes_installed(places, folder, home_folder(), claude_config_dir())
    if others:
        _warn(scope_warning(places, others))
    if places.scope == "project" and not dry_run:
        _warn("these files hold this machine's paths (the store, this auto-dream): do not commit "
              f"{folder / '.mcp.json'}, {folder / '.claude' / 'settings.json'} or {places.skill_dir}/; "
              "`auto-dream install claude-code --scope local` writes only to your personal, git-ignored places")


@install_app.command("openclaw")
def install_openclaw(
    ctx: typer.Context,
    dry_run: DryRunOption = False,
    force: Annotated[bool, typer.Option("--force", help="Replace a skill named auto-dream that is not ours.")] = False,
) -> None:
    """Install the skill where OpenClaw loads skills for every local agent:
    ~/.openclaw/skills/auto-dream/ ($OPENCLAW_STATE_DIR/skills/ when set), and register the MCP server in
    `mcp.servers` of ~/.openclaw/openclaw.json ($OPENCLAW_STATE_DIR/openclaw.json, or $OPENCLAW_CONFIG_PATH,
    when set; JSON5: its comments, unquoted keys and the rest kept as they are). Its commands name the store
    (--root; default ~/.openclaw/workspace/.auto-dream) and this auto-dream by its absolute path."""
    from auto_dream.commands.install import openclaw_places

    places = openclaw_places(home_folder(), openclaw_state_dir(), openclaw_config_path())
    _install(ctx, places, Path.cwd(), dry_run=dry_run, force=force)


CodexDryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the change (and each file's diff); "
                                                 "write nothing.")]


@install_app.command("codex")
def install_codex(ctx: typer.Context, dry_run: CodexDryRunOption = False) -> None:
    """Register auto-dream's MCP server in ~/.codex/config.toml ([mcp_servers.auto-dream]) and add a
    marked block to ~/.codex/AGENTS.md telling Codex when to read MEMORY.md, recall and remember
    ($CODEX_HOME instead of ~/.codex when set). Both are appended as text: every other byte of your
    files stays. The commands name the store (--root; default ~/.auto-dream) and this auto-dream by
    its absolute path. A server named auto-dream that install did not add is refused."""
    from auto_dream.commands import install_codex as codex

    places = codex.codex_places(home_folder(), codex_home_dir())
    root = given_folder(ctx.obj.get("root"), "--root") or codex.default_store(home_folder())
    if root.exists() and not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")
    _carry_out_codex(codex.plan_codex_install(places, codex.read_codex_snapshot(places), auto_dream_command(), root),
                     dry_run=dry_run)


@uninstall_app.command("codex")
def uninstall_codex(ctx: typer.Context, dry_run: CodexDryRunOption = False) -> None:
    """Remove the [mcp_servers.auto-dream] table and the AGENTS.md block `install codex` added: each
    file comes back byte for byte (a file install created goes). A table or block you changed since
    is kept, and a warning says so. The store and its memories are not touched."""
    from auto_dream.commands import install_codex as codex

    places = codex.codex_places(home_folder(), codex_home_dir())
    _carry_out_codex(codex.plan_codex_uninstall(places, codex.read_codex_snapshot(places)), dry_run=dry_run)


def _carry_out_codex(plan: Any, *, dry_run: bool) -> None:
    """Apply a Codex install or uninstall plan (not for a dry run), say what it did, warn its notes."""
    from auto_dream.commands import install_codex as codex

    if not dry_run and not plan.empty:
        codex.apply_codex_plan(plan)
    write_out(codex.describe(plan, dry_run=dry_run))
    for note in plan.notes:
        _warn(note)


@uninstall_app.command("claude-code")
def uninstall_claude_code(ctx: typer.Context, scope: ScopeOption = "project", project: ProjectOption = None,
                          dry_run: DryRunOption = False) -> None:
    """Remove the MCP server, the hooks and the skill `install claude-code` added for the scope. A file
    or folder install created goes when nothing else is in it; a file nobody changed since is back
    byte for byte. A server you gave an env or other key since, or a skill you edited, is kept, and
    a warning says so. The store and its memories are not touched."""
    from auto_dream.commands.install import plan_uninstall, read_snapshot

    places, _ = _claude_code_places(scope, project)
    _show_plan(ctx, plan_uninstall(places, read_snapshot(places)), dry_run=dry_run)


@uninstall_app.command("openclaw")
def uninstall_openclaw(ctx: typer.Context, dry_run: DryRunOption = False) -> None:
    """Remove the skill and the MCP server `install openclaw` added. The store and its memories are not touched."""
    from auto_dream.commands.install import openclaw_places, plan_uninstall, read_snapshot

    places = openclaw_places(home_folder(), openclaw_state_dir(), openclaw_config_path())
    _show_plan(ctx, plan_uninstall(places, read_snapshot(places)), dry_run=dry_run)


AgentScopeOption = Annotated[str, typer.Option(
    "--scope", metavar="project|user",
    help="project: the project's own files (store: <project>/.auto-dream); user: your home folder's, for every "
    "project (store: ~/.auto-dream). `auto-dream --root PATH install …` names another store.")]
AgentForceOption = Annotated[bool, typer.Option(
    "--force", help="Replace an MCP server named auto-dream that install did not add, or a rule named "
    "auto-dream.mdc that is not ours.")]


def _agent_places(agent: str, scope: str, project: Optional[str]) -> "tuple[Places, Path]":
    """Gemini CLI's, Cursor's or OpenCode's places for the scope, and the project folder."""
    from auto_dream.commands.install import cursor_places, gemini_cli_places, opencode_places

    folder = given_folder(project, "--project") or Path.cwd()
    if scope == "project" and not folder.is_dir():
        raise InputError(f"no project folder {folder}")
    if agent == "gemini-cli":
        return gemini_cli_places(scope, folder, home_folder()), folder
    if agent == "cursor":
        return cursor_places(scope, folder, home_folder()), folder
    return opencode_places(scope, folder, home_folder(), xdg_config_home()), folder


def _install_agent(ctx: typer.Context, agent: str, scope: str, project: Optional[str], *, dry_run: bool,
                   force: bool) -> None:
    places, folder = _agent_places(agent, scope, project)
    _install(ctx, places, folder, dry_run=dry_run, force=force)
    if places.scope == "project" and not dry_run:
        _warn(f"these files hold this machine's paths (the store, this auto-dream): do not commit what "
              f"`auto-dream install {agent}` wrote in {folder}; `--scope user` writes to your home folder instead")


def _uninstall_agent(ctx: typer.Context, agent: str, scope: str, project: Optional[str], *, dry_run: bool) -> None:
    from auto_dream.commands.install import plan_uninstall, read_snapshot

    places, _ = _agent_places(agent, scope, project)
    _show_plan(ctx, plan_uninstall(places, read_snapshot(places)), dry_run=dry_run)


@install_app.command("gemini-cli")
def install_gemini_cli(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                       dry_run: DryRunOption = False, force: AgentForceOption = False) -> None:
    """Register auto-dream's MCP server in Gemini CLI's settings.json (`mcpServers` of
    <project>/.gemini/settings.json, or ~/.gemini/settings.json at --scope user), add a SessionStart
    hook (MEMORY.md as context, by `auto-dream context --json`) and a SessionEnd hook (`dream --if-due`,
    in the background) to its `hooks`, and a marked block to GEMINI.md (the project's, or
    ~/.gemini/GEMINI.md) saying when to recall and remember. Comments in settings.json are kept."""
    _install_agent(ctx, "gemini-cli", scope, project, dry_run=dry_run, force=force)


@install_app.command("cursor")
def install_cursor(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                   dry_run: DryRunOption = False, force: AgentForceOption = False) -> None:
    """Register auto-dream's MCP server in Cursor's mcp.json (<project>/.cursor/mcp.json, or
    ~/.cursor/mcp.json at --scope user), add a sessionStart hook (MEMORY.md as context, by `auto-dream
    context --cursor-json`) and a sessionEnd hook (`dream --if-due`, in the background) to hooks.json in
    the same folder and, for a project, the rule .cursor/rules/auto-dream.mdc saying when to recall and
    remember (Cursor keeps user rules in its settings, not in a file). Comments in those files are kept."""
    _install_agent(ctx, "cursor", scope, project, dry_run=dry_run, force=force)


@install_app.command("opencode")
def install_opencode(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                     dry_run: DryRunOption = False, force: AgentForceOption = False) -> None:
    """Register auto-dream's MCP server in OpenCode's opencode.json (`mcp` of the project's, or of
    ~/.config/opencode/opencode.json at --scope user; opencode.jsonc when that is there instead) and add
    a marked block to AGENTS.md (the project's, or ~/.config/opencode/AGENTS.md) saying when to recall and
    remember. Comments and trailing commas in the config are kept."""
    _install_agent(ctx, "opencode", scope, project, dry_run=dry_run, force=force)


@uninstall_app.command("gemini-cli")
def uninstall_gemini_cli(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                         dry_run: DryRunOption = False) -> None:
    """Remove the MCP server, the hooks and the GEMINI.md block `install gemini-cli` added; the rest is kept
    byte for byte."""
    _uninstall_agent(ctx, "gemini-cli", scope, project, dry_run=dry_run)


@uninstall_app.command("cursor")
def uninstall_cursor(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                     dry_run: DryRunOption = False) -> None:
    """Remove the MCP server, the hooks and the rule `install cursor` added; the rest is kept byte for byte."""
    _uninstall_agent(ctx, "cursor", scope, project, dry_run=dry_run)


@uninstall_app.command("opencode")
def uninstall_opencode(ctx: typer.Context, scope: AgentScopeOption = "project", project: ProjectOption = None,
                       dry_run: DryRunOption = False) -> None:
    """Remove the MCP server and the AGENTS.md block `install opencode` added; the rest is kept byte for byte."""
    _uninstall_agent(ctx, "opencode", scope, project, dry_run=dry_run)


def _install(ctx: typer.Context, places: "Places", project: Path, *, dry_run: bool, force: bool) -> None:
    from auto_dream.commands.install import default_store, plan_install, read_snapshot
    from auto_dream.store.templates import load_template

    root = given_folder(ctx.obj.get("root"), "--root") or default_store(places, project, home_folder())
    if root.exists() and not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")  # exit 1, as for every other command
    plan = plan_install(places, read_snapshot(places), auto_dream_command(), root, load_template("SKILL.md"),
                        force=force)
    _show_plan(ctx, plan, dry_run=dry_run)
    # A project install names <project>/.auto-dream: made now (as `init` makes it), every later command
    # run in the project finds it, instead of falling back to ~/.auto-dream until a first append.
    if places.scope in ("project", "local") and root == project / STORE_DIR_NAME and not root.is_dir():
        if dry_run:
            write_out(f"[DRY RUN] would create the store {root} (as `auto-dream init` does)\n")
        else:
            from auto_dream.commands.init import init_store

            init_store(root)
            _store_changed(ctx)
            write_out(f"created the store {root} (as `auto-dream init` does): commands run in {project} use it\n")


_DONE = {"create": "created", "update": "updated", "remove": "removed"}


def _show_plan(ctx: typer.Context, plan: "InstallPlan", *, dry_run: bool) -> None:
    """Apply the plan (unless a dry run) and say what changed, one line a file."""
    from auto_dream.commands.install import RECORD_NAME, apply_plan

    verb = "uninstall" if plan.uninstall else "install"
    title = plan.places.label + (f", store {plan.root}" if plan.root is not None else "")
    if plan.empty:
        state = "not installed" if plan.uninstall else "already installed"
        stdout.print(f"{'[DRY RUN] ' if dry_run else ''}auto-dream is {state} for {title}: nothing to change",
                     markup=False)
    else:
        if not dry_run:
            apply_plan(plan)
            _store_changed(ctx)
        lines = [f"{'[DRY RUN] ' if dry_run else ''}{verb} for {title}:"]
        lines += [f"  {'would create' if dry_run else 'created'} folder {folder}" for folder in plan.make_folders]
        for change in plan.changes:
            lines.append(f"  {'would ' + change.verb if dry_run else _DONE[change.verb]} {change.path}: {change.what}")
            if dry_run and change.path.suffix == ".json" and change.path.name != RECORD_NAME:
                lines += ["    " + line for line in change.diff().splitlines()]
        lines += [f"  {'would remove' if dry_run else 'removed'} folder {folder}" for folder in plan.remove_folders]
        write_out("\n".join(lines) + "\n")
    for note in plan.notes:
        _warn(note)


@app.command()
def discover(
    path: Annotated[Optional[str], typer.Argument(
        metavar="PATH", help="The folder to look under (default: the current folder).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list on stdout.")] = False,
) -> None:
    """List the memory folders under PATH and your own (~/.claude/projects/*/memory,
    ~/.claude/agent-memory/*, ~/.auto-dream): each one's layout (auto-dream or claude-code) and
    how many memories it holds. Reads only; --root is not used."""
    from auto_dream.commands.discover import discover_folders

    found = discover_folders(Path(path).expanduser().absolute() if path else Path.cwd(), home_folder())
    if as_json:
        _print_json([folder.as_json() for folder in found])
        return
    if not found:
        stdout.print("no memory folders found", markup=False)
        return
    table = Table(box=None, pad_edge=False)
    for column in ("path", "layout", "memories"):
        table.add_column(column, overflow="fold", justify="right" if column == "memories" else "left")
    for folder in found:
        count = f"{folder.memories} (index only)" if folder.index_only else str(folder.memories)
        table.add_row(Text(str(folder.path)), folder.layout, count)
    stdout.print(table)


# ---------------------------------------------------------------- running


def run(argv: list[str]) -> int:
    """Run the CLI on `argv`; every failure becomes one line on stderr and an exit code."""
    command = typer.main.get_command(app)
    argv = argv or ["--help"]  # a bare `auto-dream` asks for help; it is not an error
    session = {"root": None, "store_changed": False}
    try:
        outcome = command.main(args=argv, prog_name="auto-dream", standalone_mode=False, obj=session)
    except OutputLost as lost:
        if lost.reader_gone:  # `auto-dream check | head -2`: the reader took what it wanted
            return 0
        if session["store_changed"]:  # done; what was lost is only the telling of it
            tell(f"auto-dream: warning: done, but the output could not be written ({lost})")
            return 0
        tell(f"auto-dream: error: the output could not be written ({lost})")
        return 1
    except typer.TyperException as error:  # usage errors from the parser
        tell(f"auto-dream: error: {error.format_message()}")
        return 2
    except typer.Exit as done:
        return done.exit_code
    except (KeyboardInterrupt, Exception) as error:
        code = tell_failure(KeyboardInterrupt() if isinstance(error, typer.Abort) else error)  # Abort: Typer's Ctrl-C
        if code is None:
            raise
        return code
    return outcome if isinstance(outcome, int) else 0


def main() -> None:
    sys.exit(run(sys.argv[1:]))
