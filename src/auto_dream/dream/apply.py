"""apply(plan): the only code that writes memories. Additions first, removals last, journaled."""

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from auto_dream.dream import bookkeeping
from auto_dream.dream.plan import CreateMemory, Plan, RebuildIndex, RetireMemory, SkipEntries, UpdateMemory
from auto_dream.dream.runs import DONE, FileChange, apply_change, set_status, write_journal
from auto_dream.dream.state import DreamState
from auto_dream.dream.views import LiveView
from auto_dream.index import IndexResult
from auto_dream.memory import Memory, TakenNames, render_memory
from auto_dream.status import render_index
from auto_dream.store import fingerprint

StepHook = Callable[[int], None]


@dataclass
class Applied:
    actions: list = field(default_factory=list)  # what was carried out
    skipped: list[str] = field(default_factory=list)  # warnings: actions left out and why
    changes: list[FileChange] = field(default_factory=list)
    live: LiveView | None = None  # the memories after the run
    distilled_entry_ids: tuple[str, ...] = ()  # entries this run recorded as distilled
    index: IndexResult | None = None  # MEMORY.md after the run


def _still_as_orient_saw(state: DreamState, path: str) -> bool:
    return fingerprint(state.context.paths.root / path) == state.fingerprints.get(path)


def select_actions(plan: Plan, state: DreamState) -> Applied:
    """Compare before write: drop what touches a file changed since orient, and what depends on it."""
    result = Applied()
    dropped: set[str] = set()  # memory paths whose create/update will not happen
    root = state.context.paths.root
    created = {a.memory.path for a in plan.actions if isinstance(a, CreateMemory)}
    for action in plan.actions:
        match action:
            case CreateMemory(memory=memory) if (root / memory.path).exists():
                dropped.add(memory.path)
                result.skipped.append(f"{memory.path} appeared since the dream started: not created "
                                      "(its entries wait for the next dream)")
                continue
            case UpdateMemory(before=before) if not _still_as_orient_saw(state, before.path):
                dropped.add(before.path)
                result.skipped.append(f"{before.path} changed since the dream started: not updated "
                                      "(its entries wait for the next dream)")
                continue
            case RetireMemory(proposed=True):
                pass  # reported, never carried out
            case RetireMemory(memory=memory, target=target):
                if target in dropped or memory.path in dropped:
                    result.skipped.append(f"{memory.path}: not retired, because {target or memory.path} "
                                          "was left as it is")
                    continue
                if memory.path not in created and not _still_as_orient_saw(state, memory.path):
                    result.skipped.append(f"{memory.path} changed since the dream started: not retired")
                    continue
        result.actions.append(action)
    return result


def _archive_path(memory: Memory, taken: dict[str, TakenNames], state: DreamState) -> str:
    """archive/<type>/<file name>, numbered when the archive already holds that name."""
    if memory.type not in taken:
        folder = state.context.paths.archive / memory.type
        taken[memory.type] = TakenNames(os.listdir(folder) if folder.is_dir() else ())
    names = taken[memory.type]
    name = memory.file_name
    if name in names:
        stem, number = name.removesuffix(".md"), 2
        while f"{stem}_{number}.md" in names:
            number += 1
        name = f"{stem}_{number}.md"
    names.add(name)
    return f"archive/{memory.type}/{name}"


def _rendered(memory: Memory) -> bytes:
    return render_memory(memory).encode("utf-8")


def file_changes(selected: Applied, plan: Plan, state: DreamState) -> list[FileChange]:
    """The final content of every path the run touches: writes first, then removals."""
    writes: dict[str, bytes | Callable[[], bytes]] = {}  # memories are rendered when journaled and written
    removals: list[str] = []
    live = LiveView(state.memories)
    for action in selected.actions:
        match action:
            case CreateMemory(memory=memory):
                writes[memory.path] = partial(_rendered, memory)
                live[memory.path] = memory
            case UpdateMemory(after=memory):
                writes[memory.path] = partial(_rendered, memory)
                live[memory.path] = memory
    archive_names: dict[str, TakenNames] = {}
    for action in selected.actions:
        if isinstance(action, RetireMemory) and not action.proposed:
            memory = action.memory
            archive = _archive_path(memory, archive_names, state)
            extra = {**memory.extra, "archived": state.now.isoformat(timespec="seconds"),
                     "archived_reason": action.reason, "archived_by_run": plan.run_id}
            if action.target:
                extra["superseded_by"] = action.target
            writes[archive] = partial(_rendered, replace(memory, extra=extra))
            writes.pop(memory.path, None)
            removals.append(memory.path)
            live.pop(memory.path, None)
    accounted = [i for a in selected.actions if isinstance(a, (CreateMemory, UpdateMemory, SkipEntries))
                 for i in a.entry_ids]
    selected.distilled_entry_ids = tuple(dict.fromkeys(accounted))
    if accounted:
        distilled = bookkeeping.distilled_path(state.context.paths)
        writes[state.context.paths.relative(distilled)] = bookkeeping.distilled_with(
            state.context.paths, tuple(dict.fromkeys(accounted)))
    if state.index is not None and live.same_as(state.live):
        index = state.index  # nothing was dropped since prune planned the index
    else:
        index = render_index(state.context, live)
    selected.live, selected.index = live, index
    data = index.text.encode("utf-8")
    try:
        current = state.context.paths.index.read_bytes()
    except OSError:
        current = None
    if data != current:
        writes["MEMORY.md"] = data
        if not any(isinstance(a, RebuildIndex) for a in selected.actions):
            selected.actions.append(RebuildIndex(index.text, len(index.listed), index.omitted))
    else:
        selected.actions = [a for a in selected.actions if not isinstance(a, RebuildIndex)]
    # writes in plan order (memories, archive copies, record, index), then removals
    return [*(FileChange(p, c) for p, c in writes.items()), *(FileChange(p, None) for p in removals)]


def apply(plan: Plan, state: DreamState, step_hook: StepHook | None = None) -> Applied:
    """Carry out the plan: journal every pre-image, then write, then mark the run done."""
    paths = state.context.paths
    selected = select_actions(plan, state)
    selected.changes = file_changes(selected, plan, state)
    if not selected.changes:
        return selected
    step = 0

    def reached() -> None:
        nonlocal step
        step += 1
        if step_hook is not None:
            step_hook(step)

    reached()
    write_journal(paths, plan.run_id, selected.changes, state.now)
    for change in selected.changes:
        reached()
        apply_change(paths, change)
    reached()
    set_status(paths, plan.run_id, DONE, finished=state.now.isoformat(timespec="seconds"))
    return selected
