"""Running a dream end to end: lock, recover, plan (orient, gather, consolidate, prune, then every
change), apply, record, report. A dry run takes the same path and stops after the plan."""

import json
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime

from auto_dream.distill.base import Distiller
from auto_dream.dream import bookkeeping
from auto_dream.dream.apply import Applied, StepHook, apply
from auto_dream.dream.bookkeeping import dream_is_due
from auto_dream.dream.claude_lock import RECORD, Hold, check_free, consolidate_lock, recover
from auto_dream.dream.consolidate import consolidate
from auto_dream.dream.decide import Decision, plan_decision
from auto_dream.dream.gather import gather
from auto_dream.dream.journal import (
    APPLYING,
    Restored,
    check_run_id,
    clean_leftovers,
    last_done_run,
    read_journal,
    restore,
    roll_back_interrupted,
    run_dir,
    run_ids,
    run_number,
    run_status,
)
from auto_dream.dream.lock import dream_lock
from auto_dream.dream.orient import load_cache, orient
from auto_dream.dream.plan import Plan, make_plan, read_kept
from auto_dream.dream.prune import prune
from auto_dream.dream.report import DreamReport, build_report, render_markdown
from auto_dream.dream.saved_plans import PlanChangedError, plan_digest
from auto_dream.dream.snapshot import Decisions, DreamOptions, Snapshot
from auto_dream.errors import InputError, StoreError
from auto_dream.progress import NO_PROGRESS, PLANNING, READING, RECORDING, Progress
from auto_dream.store.cache import ParseCache
from auto_dream.store.context import StoreContext
from auto_dream.store.files import fingerprint, make_dirs, write_atomic
from auto_dream.store.memory import Memory, read_memory
from auto_dream.store.memory_md import rebuild_index
from auto_dream.store.parsed import Parsed
from auto_dream.store.paths import StoreLayout
from auto_dream.store.recall_index import refresh_paths


@dataclass(frozen=True)
class DreamOutcome:
    report: DreamReport | None  # None when --if-due found it not due
    markdown: str
    not_due: str | None = None
    plan_id: str | None = None  # a dry run's plan, kept (dream/saved_plans.py)


# Handed what a run holds in memory, for a caller that keeps it to its exit (runner.dream's `keep`)
Keep = Callable[[object], None]


def _free(_: object) -> None:
    """The default `keep`: the working set is freed with the run."""


def new_run_id(paths: StoreLayout, now: datetime) -> str:
    """`0042-20261201T031500`: a sequence number first, so runs sort in the order they ran
    even when two finish within a second or the clock goes back."""
    ids = run_ids(paths)  # in number order
    return f"{(run_number(ids[-1]) if ids else 0) + 1:04d}-{now:%Y%m%dT%H%M%S}"


def plan_dream(snapshot: Snapshot, distiller: Distiller, decisions: Decisions | None = None,
               progress: Progress = NO_PROGRESS) -> Plan:
    """orient and gather have read `snapshot`; consolidate → prune decide (into `decisions`, or
    a new Decisions), then the plan of every change (decide_dream, which opens no file); what
    its rewrites keep of the files they edit is read last (read_kept)."""
    return read_kept(decide_dream(snapshot, distiller, decisions, progress))


def decide_dream(snapshot: Snapshot, distiller: Distiller, decisions: Decisions | None = None,
                 progress: Progress = NO_PROGRESS) -> Plan:
    """consolidate → prune → make_plan over `snapshot` alone: no file is opened, no folder
    listed, no program run (the repository is the Snapshot's Repository)."""
    decisions = Decisions.start(snapshot) if decisions is None else decisions
    consolidate(snapshot, decisions, distiller, progress)
    progress.start(PLANNING, None)
    prune(snapshot, decisions)
    return make_plan(snapshot, decisions)


def _not_due(snapshot: Snapshot) -> str | None:
    config = snapshot.context.config
    last = bookkeeping.read_last_dream(snapshot.context.paths)
    if dream_is_due(last, len(snapshot.new_entries), config.due_hours, config.due_entries, snapshot.now):
        return None
    since = f"last dream {last:%Y-%m-%d %H:%M}" if last else "no dream yet"
    return (f"not due: {len(snapshot.new_entries)} entries waiting (needs {config.due_entries}), {since} "
            f"(needs {config.due_hours:g} hours)")


def dream(context: StoreContext, now: datetime, options: DreamOptions, distiller: Distiller,
          *, if_due: bool = False, step_hook: StepHook | None = None,
          progress: Progress = NO_PROGRESS, expect: str | None = None, keep: Keep | None = None) -> DreamOutcome:
    """Plan, then apply. With `expect` (a kept plan's digest: dream/saved_plans.py) the plan
    is applied only if it decides what the kept one did; else PlanChangedError, nothing written.
    A dry run plans the same way and stops before the lock: no
    roll-back, no journal, not a byte written. `progress` hears of each stage (progress.py) and
    is finished when the run ends, however it ends. `keep` is handed the run's working set (its
    snapshot and decisions) for a caller that would rather exit than free it object by object:
    the command line, where that takes a third of a second at 100,000 memories (__main__).

    In a Claude Code folder a real run also holds Claude Code's own `.consolidate-lock`, as
    its Auto Dream does (claude_lock): busy is exit 3; after a run that changed files its mtime
    says when the folder was last consolidated, and a run that fails, finds it is not due or
    changes nothing puts it back (a killed one: the next dream or undo does)."""
    dry_run = options.dry_run
    claude = context.paths.shares_claude_lock
    if claude and dry_run:
        check_free(context.paths.root, time.time())
    try:
        with (consolidate_lock(context.paths.root, time.time, context.paths.state / RECORD) if claude and not dry_run
              else nullcontext()) as hold:
            if not dry_run:
                _writable_store(context)  # a folder Claude Code is consolidating gains nothing
            return _dream(context, now, options, distiller, if_due=if_due, step_hook=step_hook, progress=progress,
                          hold=hold, expect=expect, keep=keep or _free)
    except _NotDue as not_due:
        return not_due.outcome
    finally:
        progress.finish()  # before the caller prints the report, or the line that says what stopped it


class _NotDue(Exception):
    """--if-due found the run not due: raised through the Claude Code lock so that it is put back."""

    def __init__(self, outcome: DreamOutcome):
        super().__init__(outcome.not_due)
        self.outcome = outcome


def _dream(context: StoreContext, now: datetime, options: DreamOptions, distiller: Distiller,
           *, if_due: bool, step_hook: StepHook | None, progress: Progress, hold: Hold | None,
           expect: str | None = None, keep: Keep) -> DreamOutcome:
    dry_run = options.dry_run
    with nullcontext() if dry_run else dream_lock(context.paths, now):
        progress.start(READING, None)
        recovered = _interrupted_warning(context.paths) if dry_run else _recover(context.paths)
        run_id = new_run_id(context.paths, now)  # under the lock: no other dream takes the same number
        cache = load_cache(context, options)
        snapshot = gather(orient(context, now, run_id, options, cache))
        snapshot = replace(snapshot, warnings=(*recovered, *snapshot.warnings))
        keep(snapshot)
        if if_due and (reason := _not_due(snapshot)):
            raise _NotDue(DreamOutcome(None, ("[DRY RUN] " if dry_run else "") + reason + "\n", not_due=reason))
        decisions = Decisions.start(snapshot)
        keep(decisions)
        plan = plan_dream(snapshot, distiller, decisions, progress)
        if dry_run:
            report = build_report(plan)
            return DreamOutcome(report, render_markdown(report))
        if expect is not None and plan_digest(build_report(plan)) != expect:
            raise PlanChangedError("the store changed since that plan was made (the dream plans differently "
                                   "now): nothing was applied; plan again")
        return _carry_out(snapshot, plan, cache, hold, step_hook, progress)


def _carry_out(snapshot: Snapshot, plan: Plan, cache: ParseCache, hold: Hold | None, step_hook: StepHook | None,
               progress: Progress, *, dreamed: bool = True) -> DreamOutcome:
    """Apply a run's plan, then record it: the report beside its journal, the caches, the state."""
    context = snapshot.context
    applied = apply(plan, snapshot, step_hook, progress)
    if hold is not None and applied.changes:
        hold.consolidated()  # Claude Code's lock says so, even if this process dies before its end
    progress.start(RECORDING, None)
    report = build_report(plan, applied)
    markdown = render_markdown(report)
    if applied.changes:
        folder = run_dir(context.paths, plan.run_id)
        write_atomic(folder / context.paths.report_name, markdown.encode("utf-8"))
        write_atomic(folder / "report.json",
                     json.dumps(report.as_json(), ensure_ascii=False, indent=1).encode("utf-8"))
    _record(snapshot, plan, applied, cache, dreamed=dreamed)
    return DreamOutcome(report, markdown)


def decide(context: StoreContext, now: datetime, decision: Decision, progress: Progress = NO_PROGRESS) -> DreamOutcome:
    """Carry out a reader's decision (dream/decide.py) as a run of its own: under dream's lock
    (and Claude Code's, in its folder), journaled, so `undo` reverses it. Nothing is distilled."""
    claude = context.paths.shares_claude_lock
    try:
        with (consolidate_lock(context.paths.root, time.time, context.paths.state / RECORD) if claude
              else nullcontext()):
            _writable_store(context)
            with dream_lock(context.paths, now):
                progress.start(READING, None)
                recovered = _recover(context.paths)
                run_id = new_run_id(context.paths, now)
                options = DreamOptions()  # a decision is carried out, never proposed
                cache = load_cache(context, options)
                snapshot = orient(context, now, run_id, options, cache)
                snapshot = replace(snapshot, warnings=(*recovered, *snapshot.warnings))
                plan = plan_decision(snapshot, decision)
                # Claude Code's lock is held while it runs and put back after: a decision is not a consolidation
                return _carry_out(snapshot, plan, cache, None, None, progress, dreamed=False)
    finally:
        progress.finish()


def _recover(paths: StoreLayout) -> list[str]:
    """Under the lock, before a real run: interrupted runs rolled back, a killed one's leftovers removed."""
    _, recovered = roll_back_interrupted(paths)
    clean_leftovers(paths)
    return recovered


def _interrupted_warning(paths: StoreLayout) -> list[str]:
    """A dry run rolls nothing back: it says that the next real run will."""
    if any(run_status(paths, r) == APPLYING and read_journal(paths, r).get("status") == APPLYING
           for r in run_ids(paths)):
        return ["an interrupted dream will be rolled back by the next real run"]
    return []


def _record(snapshot: Snapshot, plan: Plan, applied: Applied, cache: ParseCache, *, dreamed: bool = True) -> None:
    """After a run: when it finished (a dream, not a reader's decision: `dreamed`), the parse
    cache (`cache`, the one orient read through) and the recall index as the files are now,
    what to recheck."""
    paths = snapshot.context.paths
    if dreamed:
        bookkeeping.write_last_dream(paths, plan.run_id, snapshot.now)
    for change in applied.changes:
        if paths.is_memory_path(change.path):
            cache.drop(change.path)
            if not change.removes and (seen := fingerprint(paths.root / change.path)):
                parsed = read_memory(paths.root / change.path, paths.root, snapshot.context.tz, paths.untyped)
                if isinstance(parsed, Memory):
                    cache.put(Parsed.of(seen, parsed))
    if applied.changes:
        for path in applied.live.missing(cache.paths()):
            cache.drop(path)
    cache.save()
    if applied.changes:  # the recall index, when there is one, for the files written (recall catches the rest)
        refresh_paths(paths, snapshot.context.tz, [change.path for change in applied.changes])
    distilled = snapshot.distilled_ids | set(applied.distilled_entry_ids)
    done = dict(snapshot.logs_done)
    done.update({log: seen for log, (seen, ids) in snapshot.logs_read.items() if ids <= distilled})
    bookkeeping.write_logs_done(paths, done)
    recheck = {d.memory.path for d in plan.deferred} | {d.target for d in plan.deferred if d.target}
    bookkeeping.write_recheck(paths, recheck)


def _writable_store(context: StoreContext) -> None:
    """What dream and undo need before they lock: .state/ (recreated if deleted), and a
    MEMORY.md that is a file: a symbolic link would be replaced, or lead out of the store."""
    make_dirs(context.paths.state)
    if context.paths.index.is_symlink():
        raise StoreError(f"{context.paths.index} is a symbolic link: auto-dream writes MEMORY.md itself; "
                         "replace the link with the file it points to, or remove it")


def undo(context: StoreContext, now: datetime, run_id: str | None, *, force: bool) -> Restored:
    """Reverse a dream run (default: the last one applied), refusing files changed since.
    Our own MEMORY.md is put back byte for byte, or, changed since the run (or a file left as
    it is), rebuilt from the memories as the undo leaves them."""
    if run_id is not None:
        check_run_id(run_id)
    if context.paths.shares_claude_lock:
        check_free(context.paths.root, time.time())  # Claude Code is not rewriting what undo restores
    _writable_store(context)
    with dream_lock(context.paths, now):
        if context.paths.shares_claude_lock:
            recover(context.paths.root, context.paths.state / RECORD)  # a killed dream's hold on Claude Code's lock
        rolled, _ = roll_back_interrupted(context.paths)
        clean_leftovers(context.paths)
        if rolled and run_id is None:
            if any(result.rebuild_index for result in rolled):
                rebuild_index(context, moves=False)
            return rolled[-1]  # undoing the interrupted run is what was asked
        target = run_id or last_done_run(context.paths)
        if target is None:
            raise StoreError("no dream run to undo")
        if not (run_dir(context.paths, target) / "journal.json").is_file():
            raise InputError(f"no dream run {target!r} (see .state/runs/)")
        status = read_journal(context.paths, target).get("status")
        if status != "done":
            raise StoreError(f"run {target} is {status}, there is nothing to undo")
        restored = restore(context.paths, target, force=force)
        if restored.rebuild_index:
            # ours is derived from the memories; a Claude Code folder's MEMORY.md is theirs,
            # restored byte for byte like its topic files (or, changed since, refused)
            rebuild_index(context, moves=False)
        _revert_last_dream(context.paths, target)
        return restored


def _revert_last_dream(paths: StoreLayout, run_id: str) -> None:
    """When the undone run is the one last_dream.json names, it names the run before it again."""
    try:
        named = json.loads((paths.state / bookkeeping.LAST_DREAM).read_text(encoding="utf-8")).get("run_id")
    except (OSError, ValueError, AttributeError):
        return
    if named != run_id:
        return
    previous = last_done_run(paths)
    finished = read_journal(paths, previous).get("finished") if previous else None
    try:
        when = datetime.fromisoformat(finished) if isinstance(finished, str) else None
    except ValueError:
        when = None
    if previous is None or when is None:
        (paths.state / bookkeeping.LAST_DREAM).unlink(missing_ok=True)
    else:
        bookkeeping.write_last_dream(paths, previous, when)
