"""`dream` and `undo`: the flags resolved against the store's config (once, here), the
distiller chosen, the run."""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from auto_dream.commands.discover import discover_folders
from auto_dream.distill.base import Distiller
from auto_dream.dream.apply import StepHook
from auto_dream.dream.journal import Restored
from auto_dream.dream.runner import DreamOutcome, Keep
from auto_dream.dream.runner import dream as run_dream
from auto_dream.dream.runner import undo as undo_run
from auto_dream.dream.saved_plans import check_unchanged, inputs_fingerprint, load_plan, save_plan
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.errors import InputError, failure_line
from auto_dream.progress import NO_PROGRESS, Progress
from auto_dream.store.config import Config
from auto_dream.store.context import StoreContext, open_context
from auto_dream.store.discovery import Found


@dataclass(frozen=True, kw_only=True)
class DreamRequest:
    """What a front door asks of one dream, as its flags say it — the command line's, the
    arguments of the library's Store.dream (and so the MCP tools') — built once there and
    resolved against the store's config here (flags beat config)."""

    dry_run: bool = False
    propose: bool = False  # retirements are listed, not applied
    full: bool = False  # every pair of memories, not only the changed ones
    budget: int | None = None  # retirements this run (None: config `budget`)
    llm: bool | None = None  # --llm / --no-llm (None: config `llm`)
    if_due: bool = False  # only when due (config due_hours, due_entries)
    api_key: str | None = None  # for Claude
    base_url: str | None = None  # the Messages API's address (None: Anthropic's)
    keep_plan: bool = False  # a dry run keeps its plan under an id
    plan_id: str | None = None  # a real run applies that kept plan and no other


def resolve_options(config: Config, request: DreamRequest) -> DreamOptions:
    """Flags beat config: propose with --propose or `mode = "propose"`; --budget N, else `budget`."""
    if request.budget is not None and request.budget < 0:
        raise InputError(f"budget must be 0 or more, not {request.budget}")
    return DreamOptions(dry_run=request.dry_run, propose=request.propose or config.mode == "propose",
                        full=request.full, budget=config.budget if request.budget is None else request.budget)


def choose_distiller(context: StoreContext, *, llm: bool | None, api_key: str | None,
                     base_url: str | None) -> Distiller:
    """--llm/--no-llm beat config `llm`; `auto` uses Claude when an API key is given."""
    from auto_dream.distill.deterministic import DeterministicDistiller

    api_key = (api_key or "").strip()
    config = context.config
    wanted = llm if llm is not None else {"on": True, "off": False}.get(config.llm, bool(api_key))
    if not wanted:
        return DeterministicDistiller()
    if not api_key:
        raise InputError("the LLM distiller needs ANTHROPIC_API_KEY in the environment (or use --no-llm)")
    from auto_dream.distill.claude import AnthropicDistiller, LlmSettings  # the only importer of anthropic

    settings = LlmSettings(model=config.model, api_key=api_key, base_url=base_url or None,
                           max_calls=config.max_llm_calls, timeout=config.llm_timeout,
                           batch_entries=config.llm_batch_entries)
    return AnthropicDistiller(settings, context.paths.templates)


def dream(context: StoreContext, now: datetime, request: DreamRequest = DreamRequest(), *,
          step_hook: StepHook | None = None, progress: Progress = NO_PROGRESS,
          keep: Keep | None = None) -> DreamOutcome:
    """Distil, tidy and report (dream/runner.py); with `dry_run`, only plan and report. `progress`
    hears how far the run has got (auto_dream.progress). `keep_plan` (a dry run) keeps the plan
    under an id (the outcome's `plan_id`); `plan_id` (a real run) applies that plan and no other
    (dream/saved_plans.py): a store changed since is a PlanChangedError, nothing written. `keep`:
    runner.dream's, for a caller that exits rather than free the run's working set."""
    options = resolve_options(context.config, request)
    expect = None
    if request.plan_id is not None:
        if request.dry_run:
            raise InputError("a plan id is for applying that plan: a dry run makes a new one")
        kept = load_plan(context.paths, request.plan_id)
        check_unchanged(context.paths, kept, options)
        expect = kept.digest
    fingerprint = inputs_fingerprint(context.paths) if request.keep_plan and request.dry_run else None
    distiller = choose_distiller(context, llm=request.llm, api_key=request.api_key, base_url=request.base_url)
    outcome = run_dream(context, now, options, distiller, if_due=request.if_due, step_hook=step_hook,
                        progress=progress, expect=expect, keep=keep)
    if fingerprint is not None and outcome.report is not None:
        outcome = replace(outcome, plan_id=save_plan(context.paths, outcome.report, options, fingerprint))
    return outcome


def undo(context: StoreContext, now: datetime, run_id: str | None = None, *, force: bool = False) -> Restored:
    """Reverse a dream run (default: the last one), byte for byte."""
    return undo_run(context, now, run_id, force=force)


@dataclass(frozen=True)
class FolderDream:
    """One folder of `dream --all`: its report, or the one line that stopped it and its exit code."""

    found: Found
    outcome: DreamOutcome | None
    error: str | None = None
    exit_code: int = 0


def dream_all(path: Path, home: Path | None, claude_config_dir: Path | None, now: datetime,
              request: DreamRequest = DreamRequest(), *, progress: Progress = NO_PROGRESS) -> Iterator[FolderDream]:
    """Dream each memory folder `discover` finds under `path` and in `home`, one at a time, each
    on its own: the memories of two agents or projects are never compared with each other. A
    folder that fails (its lock held, a bad config) is reported and the next one dreamed.
    `progress` hears of each folder's dream, finished before the folder is yielded."""
    for found in discover_folders(path, home):
        try:
            context = open_context(found.path, home=home, claude_config_dir=claude_config_dir)
            outcome = dream(context, now, request, progress=progress)
        except Exception as error:
            failure = failure_line(error)
            if failure is None:
                raise  # a bug: the traceback says where
            yield FolderDream(found, None, failure[0], failure[1])
            continue
        yield FolderDream(found, outcome)
