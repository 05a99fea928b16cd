"""Plans kept by id, so that a plan looked at is the plan applied (the MCP tool `dream`).

A dry run can keep its plan: `.state/plans/<id>.json` holds the options it was made with, a
fingerprint of what it read (every file of the store but dream's caches: the memories, the
archive, the logs, MEMORY.md, config.toml, and dream's own records of what was distilled and
what waits for review) and the digest of its report (`plan_digest`: every action, skip,
review item, the entries it distils and the sha256 of the MEMORY.md it leaves).

Applying an id then re-checks the fingerprint (a store changed since is refused, nothing
written) and, under the dream lock, plans again from the store as it is and applies that plan
only when its digest is the kept one: two plans from one snapshot decide the same
(ARCHITECTURE.md), so an unchanged store gives the same plan, and anything else that moved it
(the clock past midnight, a lookup that changed what decays) is refused too, never planned
afresh in silence. Nothing is written outside the store."""

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from auto_dream.dream.bookkeeping import DISTILLED, LAST_DREAM, LOGS_DONE, RECHECK
from auto_dream.dream.report import DreamReport
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.errors import InputError, StoreError
from auto_dream.store.files import make_dirs, write_atomic
from auto_dream.store.paths import StoreLayout
from auto_dream.store.review_queue import QUEUE_FILE

PLANS = "plans"  # under .state/
KEPT = 20  # the newest plans kept; older ones are removed when a new one is saved
PLAN_ID = re.compile(r"p[0-9a-f]{16}")
STATE_INPUTS = (DISTILLED, LAST_DREAM, LOGS_DONE, RECHECK, QUEUE_FILE, "config.toml")
# A report's parts that are not the decision: the run's number and time, dry or not, what Claude cost.
NOT_DECIDED = ("run_id", "dry_run", "warnings")


class PlanChangedError(StoreError):
    """The store changed since a kept plan was made: the plan is not applied."""


@dataclass(frozen=True)
class KeptPlan:
    plan_id: str
    options: dict[str, object]
    fingerprint: str
    digest: str


def plan_digest(report: DreamReport) -> str:
    """What a plan decides, as a sha256: its report less the run's id, dry-run flag, warnings and
    Claude's usage."""
    document = {key: value for key, value in report.as_json().items() if key not in NOT_DECIDED}
    document["stats"] = {key: value for key, value in document["stats"].items() if not key.startswith("llm_")}
    return hashlib.sha256(json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8",
                                                                                         "surrogateescape")).hexdigest()


def inputs_fingerprint(paths: StoreLayout) -> str:
    """A sha256 of the name, size and mtime of every file a plan reads: the store's files outside
    .state/, the logs wherever they are, and dream's records in .state/ (not its caches, the
    consult log, the lock or the runs)."""
    state = paths.state.resolve() if paths.state.exists() else paths.state
    rows: list[str] = []

    def walk(top: Path, skip: Path | None) -> None:
        for folder, folders, files in os.walk(top):
            here = Path(folder)
            if skip is not None:
                folders[:] = [name for name in folders if (here / name).resolve() != skip]
            for name in files:
                _stat_row(here / name, paths.root, rows)

    walk(paths.root, state)
    logs = paths.logs
    if logs.exists() and (logs.resolve() == state or state in logs.resolve().parents):
        walk(logs, None)
    for name in STATE_INPUTS:
        _stat_row(paths.state / name, paths.root, rows)
    return hashlib.sha256("\n".join(sorted(rows)).encode("utf-8", "surrogateescape")).hexdigest()


def _stat_row(path: Path, root: Path, rows: list[str]) -> None:
    try:
        stat = path.lstat()
    except OSError:
        return
    rows.append(f"{os.path.relpath(path, root)}\0{stat.st_size}\0{stat.st_mtime_ns}")


def options_of(options: DreamOptions) -> dict[str, object]:
    return {"propose": options.propose, "full": options.full, "budget": options.budget}


def save_plan(paths: StoreLayout, report: DreamReport, options: DreamOptions, fingerprint: str) -> str:
    """Keep a dry run's plan; its id (the same plan of the same store: the same id)."""
    digest = plan_digest(report)
    kept = options_of(options)
    plan_id = "p" + hashlib.sha256(f"{fingerprint}\0{digest}\0{json.dumps(kept, sort_keys=True)}".encode())\
        .hexdigest()[:16]
    folder = paths.state / PLANS
    make_dirs(folder)
    document = {"plan_id": plan_id, "options": kept, "fingerprint": fingerprint, "digest": digest}
    write_atomic(folder / f"{plan_id}.json", (json.dumps(document, indent=1) + "\n").encode("utf-8"))
    _prune(folder)
    return plan_id


def _prune(folder: Path) -> None:
    try:
        kept = sorted((entry for entry in folder.iterdir() if PLAN_ID.fullmatch(entry.stem)),
                      key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for old in kept[KEPT:]:
        old.unlink(missing_ok=True)


def load_plan(paths: StoreLayout, plan_id: str) -> KeptPlan:
    """The plan kept under `plan_id`; an InputError when there is none (never kept, or pruned)."""
    if not PLAN_ID.fullmatch(plan_id):
        raise InputError(f"no plan {plan_id!r}: a plan id is the `plan_id` a dry dream returned (p and 16 hex digits)")
    try:
        document = json.loads((paths.state / PLANS / f"{plan_id}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no plan {plan_id!r} in this store (only the newest {KEPT} are kept): "
                         "plan again with a dry dream") from None
    except (OSError, ValueError) as error:
        raise StoreError(f"the plan {plan_id!r} cannot be read ({error}): plan again with a dry dream") from None
    return KeptPlan(plan_id, document["options"], document["fingerprint"], document["digest"])


def check_unchanged(paths: StoreLayout, kept: KeptPlan, options: DreamOptions) -> None:
    """PlanChangedError unless the store's inputs and the options are those the plan was made from."""
    if options_of(options) != kept.options:
        raise InputError(f"plan {kept.plan_id} was made with {kept.options}, not {options_of(options)}: "
                         "apply it with the options it was made with, or plan again")
    if inputs_fingerprint(paths) != kept.fingerprint:
        raise PlanChangedError(f"the store changed since plan {kept.plan_id} was made: nothing was applied; "
                               "plan again")
