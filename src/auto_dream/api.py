"""The library: a store opened by its root, one method per command, results as data.

Each method opens the store as it is at that moment (its config.toml, its layout checks),
like a command line run; nothing here prints, reads the environment or exits. The clock is
a parameter: `now` (an aware datetime), by default the current time with the local zone.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from auto_dream.commands.append import append_text
from auto_dream.commands.build_index import build_index
from auto_dream.commands.check import CheckResult, check_store
from auto_dream.commands.init import init_store
from auto_dream.commands.listing import ListResult, list_memories
from auto_dream.commands.recall import DEFAULT_LIMIT, Hit, PendingEntry, recall_owing, show_owing
from auto_dream.errors import InputError, StoreError, failure_line
from auto_dream.shell import claude_config_dir, home_folder, local_time, local_zone_usable
from auto_dream.store.context import ReadMemo, StoreContext, open_context
from auto_dream.store.daylog import Entry
from auto_dream.store.memory import Memory
from auto_dream.store.memory_md import IndexBuild
from auto_dream.store.paths import StoreLayout, layout_at
from auto_dream.store.paths import open_store as open_store_paths
from auto_dream.store.recall_index import FullCheck

if TYPE_CHECKING:  # commands.dream brings the whole dream pipeline: imported when a dream or undo runs
    from auto_dream.commands.import_openclaw import OpenClawImport
    from auto_dream.commands.review import ReviewList
    from auto_dream.dream.journal import Restored
    from auto_dream.dream.runner import DreamOutcome
    from auto_dream.progress import Progress


Returned = TypeVar("Returned")
Arguments = ParamSpec("Arguments")


def _store_errors(method: Callable[Arguments, Returned]) -> Callable[Arguments, Returned]:
    """`method`, a failure of the file system it did not foresee (a name longer than the file
    system takes, a disk that is full) raised as the StoreError of its one line, the OSError as
    its cause: the library's errors are AutoDreamError subclasses, as its callers are told."""

    @functools.wraps(method)
    def checked(*args: Arguments.args, **kwargs: Arguments.kwargs) -> Returned:
        try:
            return method(*args, **kwargs)
        except OSError as error:
            failure = failure_line(error)
            raise StoreError(failure[0] if failure else str(error)) from error

    return checked


def open_store(root: str | PathLike[str], *, create: bool = False) -> "Store":
    """The store at `root` (a `.auto-dream` folder). A missing one is a StoreError, unless
    `create`: then it is made as `auto-dream init` makes it (a store already there is kept)."""
    path = Path(root).absolute()
    if "\0" in str(path):
        raise InputError(f"the store's path {str(path)!r} holds a NUL character, which no file name can")
    try:
        if create:
            init_store(path)
        else:
            open_store_paths(path)
    except OSError as error:  # one the store's own checks did not foresee: a name too long
        raise StoreError(f"cannot {'create' if create else 'open'} the store at {path}: "
                         f"{error.strerror or error}") from error
    return Store(path)


@dataclass(frozen=True)
class Store:
    """A store on disk. Errors are AutoDreamError subclasses: StoreError, InputError, LockHeldError."""

    root: Path
    # the memory files this Store has read, kept while they are unchanged (StoreContext.read_memo):
    # an agent's list, check and build-index calls through the MCP server do not read every file again
    _read_memo: ReadMemo = field(default_factory=ReadMemo, compare=False, repr=False)
    # the full checks its deferring recalls and shows left owing, until run_owed_checks runs them
    _owed: list[FullCheck] = field(default_factory=list, compare=False, repr=False)

    @property
    @_store_errors
    def paths(self) -> StoreLayout:
        """Where its logs, memories, archive, MEMORY.md and config.toml are."""
        return layout_at(self.root)

    def _context(self) -> StoreContext:
        # its config as it is now, and the home a command line run would see
        _check_local_zone()
        return open_context(self.root, home=home_folder(), claude_config_dir=claude_config_dir(),
                            read_memo=self._read_memo)

    @_store_errors
    def append(self, text: str, type: str | None = None, at: str | datetime | None = None,
               now: datetime | None = None) -> Entry:
        """Add one entry to its day's log; `type` is user, feedback, project or reference (None:
        dream decides), `at` back-dates it (a datetime, or text as `--at` takes it)."""
        when = at.isoformat() if isinstance(at, datetime) else at
        entry, _ = append_text(self.root, text, type, when, _now(now))
        return entry

    @_store_errors
    def dream(self, *, dry_run: bool = False, propose: bool = False, full: bool = False, budget: int | None = None,
              llm: bool | None = None, if_due: bool = False, api_key: str | None = None, base_url: str | None = None,
              now: datetime | None = None, progress: "Progress | None" = None, keep_plan: bool = False,
              plan_id: str | None = None) -> "DreamOutcome":
        """Distil the new entries into memories, merge, supersede, archive, rebuild MEMORY.md, as
        `auto-dream dream` does; the arguments are its flags, and beat config.toml as they do. Claude
        is asked only with an `api_key` (config `llm = "auto"`), or with `llm=True`, which needs one.
        `progress` (a `Progress`: start, advance, finish) hears how far the run has got.
        `keep_plan` (with `dry_run`) keeps the plan under an id, the outcome's `plan_id`; a real run
        given `plan_id` applies that plan and no other, or raises PlanChangedError (a StoreError)
        when the store changed since, writing nothing."""
        from auto_dream.commands.dream import DreamRequest, dream
        from auto_dream.progress import NO_PROGRESS

        request = DreamRequest(dry_run=dry_run, propose=propose, full=full, budget=budget, llm=llm, if_due=if_due,
                               api_key=api_key, base_url=base_url, keep_plan=keep_plan, plan_id=plan_id)
        return dream(self._context(), _now(now), request, progress=NO_PROGRESS if progress is None else progress)

    @_store_errors
    def undo(self, run_id: str | None = None, *, force: bool = False, now: datetime | None = None) -> "Restored":
        """Reverse a dream run (default: the last one) byte for byte; `force` restores files changed
        since, keeping a copy of each version it replaces (`Restored.replaced`)."""
        from auto_dream.commands.dream import undo

        return undo(self._context(), _now(now), run_id, force=force)

    @_store_errors
    def check(self, now: datetime | None = None) -> CheckResult:
        """Freshness and staleness of every memory, entries waiting, whether a dream is due, index drift."""
        return check_store(self._context(), _now(now))

    @_store_errors
    def build_index(self) -> IndexBuild:
        """Rebuild MEMORY.md from the memory files alone (one up to date is left as it is)."""
        return build_index(self._context())

    @_store_errors
    def import_openclaw(self, workspace: str | PathLike[str]) -> "OpenClawImport":
        """Add OpenClaw's daily notes (`workspace/memory/YYYY-MM-DD.md`) to the log, as `auto-dream
        import openclaw WORKSPACE` does: one untyped entry per section, at 12:00 of the note's day,
        its heading path first; what an earlier import added is not added again."""
        from auto_dream.commands.import_openclaw import import_openclaw

        return import_openclaw(self.root, Path(workspace).absolute())

    @_store_errors
    def recall(self, query: str, limit: int = DEFAULT_LIMIT, type: str | None = None,
               *, archived: bool = False, defer: bool = False) -> list[Hit]:
        """The memories that best answer `query`, best first (`archived`: the archive searched
        too), as `auto-dream recall` finds them; [] when none matches. The log entries no dream
        has distilled yet are ranked with them (`hit.pending`, `hit.entry` the entry's id, `hit.path`
        its day log). Every memory file is
        checked for changes first, unless `defer`: then a store of more than 5,000 files has
        only its folders checked, and the check of every file is left to the caller, who runs
        `run_owed_checks()` once the answer is given (as `auto-dream recall` and the MCP server
        do)."""
        hits, owed = recall_owing(self._context(), query, limit, type, archived=archived, now=local_time(), defer=defer)
        self._owe(owed)
        return hits

    @_store_errors
    def show(self, path_or_name: str, *, defer: bool = False) -> Memory | PendingEntry:
        """One memory, whole: by its path relative to the root, else by its name; or a log entry
        no dream has distilled yet, by its id as recall gives it (a PendingEntry: `path` its day
        log, `body` its text). `defer` as for recall."""
        found, owed = show_owing(self._context(), path_or_name, local_time(), defer=defer)
        self._owe(owed)
        return found

    def _owe(self, owed: FullCheck | None) -> None:
        if owed is not None and owed not in self._owed:
            self._owed.append(owed)

    def run_owed_checks(self) -> None:
        """Run, here and now, the checks of every file that this Store's recalls and shows with
        `defer` left owing (a long-lived caller runs this in a thread of its own once it has
        answered, as the MCP server does); each is run once."""
        while True:
            try:
                owed = self._owed.pop(0)  # two threads may run them at once: each check runs once
            except IndexError:
                return
            owed.run()

    @_store_errors
    def review(self) -> "ReviewList":
        """The decisions dream left for a reader, oldest first (`items`), and the ids of those a
        memory of which changed since (`changed`: the next dream judges them again)."""
        from auto_dream.commands.review import review_items

        return review_items(self._context())

    @_store_errors
    def resolve(self, item: str, action: str, *, into: str | None = None, winner: str | None = None,
                reason: str = "", by: str = "a reader", now: datetime | None = None) -> "DreamOutcome":
        """Decide review item `item`: "keep" both (remembered while both stay as they are),
        "merge" the other into `into`, or "supersede" the other by `winner`, as `auto-dream
        resolve` does. A run of its own: `undo` reverses it."""
        from auto_dream.commands.review import resolve

        return resolve(self._context(), _now(now), item, action, into=into, winner=winner, reason=reason, by=by)

    @_store_errors
    def forget(self, memory: str, reason: str = "", *, by: str = "a reader",
               now: datetime | None = None) -> "DreamOutcome":
        """Archive the memory `memory` names (path, file name or name) with the reason, as
        `auto-dream forget` does. A run of its own: `undo` reverses it."""
        from auto_dream.commands.review import forget

        return forget(self._context(), _now(now), memory, reason=reason, by=by)

    def entry_time(self, entry: Entry) -> datetime:
        """An entry's time (the log's wall-clock time in the store's timezone) with its UTC offset."""
        from auto_dream.store.daylog import aware

        return aware(entry.at, self._context().tz)

    # Last in the class: below this line `list` would name the method, not the builtin.
    @_store_errors
    def list(self, type: str | None = None, *, archived: bool = False, now: datetime | None = None) -> ListResult:
        """Memories grouped by type, newest first in each (`archived`: the archive instead)."""
        return list_memories(self._context(), _now(now), type, archived=archived)


def _check_local_zone() -> None:
    """StoreError when Python cannot hold the local time zone (`TZ=UTC+24`): every conversion to
    local time would fail. The command line takes such a zone as UTC (shell.settle_local_zone);
    the library, which leaves the process's environment alone, says so."""
    if not local_zone_usable():
        raise StoreError("the local time zone is 24 hours or more from UTC (TZ=UTC+24, say), more than "
                         "Python's clock can hold: run with another zone")


def _now(now: datetime | None) -> datetime:
    """The clock given, or the current time; a naive time is taken as local time."""
    _check_local_zone()
    if now is None:
        return local_time()
    return now if now.tzinfo is not None else now.astimezone()
