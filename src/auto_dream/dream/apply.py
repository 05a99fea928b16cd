"""apply(plan): the only code that writes memories. Journaled; additions first, then removals,
then the distilled record and MEMORY.md as the changes that happened leave them."""

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from auto_dream.dream import bookkeeping
from auto_dream.dream.plan import CreateMemory, Plan, RebuildIndex, RetireMemory, SkipEntries, UpdateMemory
from auto_dream.dream.runs import (
    DONE,
    FileChange,
    apply_change,
    digest,
    read_if_present,
    restore,
    set_post,
    set_status,
    write_journal,
)
from auto_dream.dream.state import DreamState
from auto_dream.errors import StoreError
from auto_dream.store.index import IndexResult
from auto_dream.store.memory import Memory, TakenNames, render_memory
from auto_dream.store.memory_md import render_index
from auto_dream.store.scan import fingerprint
from auto_dream.store.views import LiveView

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


def _read_only(state: DreamState, path: str) -> bool:
    """A memory file its owner may not write (chmod 0444): dream leaves it as it is."""
    try:
        return not os.lstat(state.context.paths.root / path).st_mode & stat.S_IWUSR
    except FileNotFoundError:
        return False


def select_actions(plan: Plan, state: DreamState) -> Applied:
    """Compare before write: drop what touches a file changed since orient or made read-only,
    and what depends on it."""
    result = Applied()
    dropped: set[str] = set()  # memory paths whose create/update will not happen
    root = state.context.paths.root
    created = {a.memory.path for a in plan.actions if isinstance(a, CreateMemory)}
    frozen = {a.memory.path for a in plan.actions if isinstance(a, RetireMemory) and not a.proposed
              and a.memory.path not in created and _read_only(state, a.memory.path)}
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
            case UpdateMemory(before=before) if _read_only(state, before.path):
                dropped.add(before.path)
                result.skipped.append(f"{before.path} is read-only: not updated "
                                      "(its entries wait for the next dream)")
                continue
            case UpdateMemory(before=before, merged_paths=merged) if frozen.intersection(merged):
                dropped.add(before.path)  # it would carry a memory that stays: both stay as they are
                result.skipped.append(f"{before.path}: not updated, because {min(frozen.intersection(merged))} "
                                      "is read-only and stays")
                continue
            case RetireMemory(proposed=True):
                pass  # reported, never carried out
            case RetireMemory(memory=memory, target=target):
                if memory.path in frozen:
                    result.skipped.append(f"{memory.path} is read-only: not retired")
                    continue
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


@dataclass(frozen=True)
class _Step:
    """One file change and what it hangs on: the memory paths whose own changes must have
    happened (a merge's survivor), and the live memory it archives (checked before its copy)."""

    change: FileChange
    needs: tuple[str, ...] = ()
    archives: str | None = None
    expected: object = None  # the fingerprint orient saw (a live memory), or None (a new file)
    derived: bool = False  # the distilled record or MEMORY.md: expected as the journal read it


def file_changes(selected: Applied, plan: Plan, state: DreamState) -> list[_Step]:
    """Every memory file the run writes or removes, in order: memories, archive copies,
    removals. The distilled record and MEMORY.md follow, once these are done (_derived)."""
    steps: dict[str, _Step] = {}  # memories are rendered when journaled and written
    removals: list[_Step] = []
    live = LiveView(state.memories)
    for action in selected.actions:
        match action:
            case CreateMemory(memory=memory) | UpdateMemory(after=memory):
                steps[memory.path] = _Step(FileChange(memory.path, partial(_rendered, memory)),
                                           expected=state.fingerprints.get(memory.path))
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
            needs = (action.target,) if action.target else ()
            steps[archive] = _Step(FileChange(archive, partial(_rendered, replace(memory, extra=extra))), needs,
                                   archives=memory.path)
            steps.pop(memory.path, None)
            removals.append(_Step(FileChange(memory.path, None), (*needs, archive),
                                  expected=state.fingerprints.get(memory.path)))
            live.pop(memory.path, None)
    selected.live = live
    return [*steps.values(), *removals]


def _accounted(actions: list) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for a in actions if isinstance(a, (CreateMemory, UpdateMemory, SkipEntries))
                               for i in a.entry_ids))


def _derived(selected: Applied, state: DreamState) -> list[FileChange]:
    """The distilled record and MEMORY.md as the memory changes that happened leave them."""
    paths = state.context.paths
    changes = []
    selected.distilled_entry_ids = _accounted(selected.actions)
    if selected.distilled_entry_ids:
        distilled = bookkeeping.distilled_path(paths)
        changes.append(FileChange(paths.relative(distilled),
                                  bookkeeping.distilled_with(paths, selected.distilled_entry_ids)))
    live = selected.live
    if state.index is not None and live.same_as(state.live):
        index = state.index  # nothing was dropped since prune planned the index
    else:
        index = render_index(state.context, live)
    selected.index = index
    data = index.text.encode("utf-8")
    try:
        current = paths.index.read_bytes()
    except OSError:
        current = None
    if data != current:
        changes.append(FileChange("MEMORY.md", data))
        if not any(isinstance(a, RebuildIndex) for a in selected.actions):
            selected.actions.append(RebuildIndex(index.text, len(index.listed), index.omitted))
    else:
        selected.actions = [a for a in selected.actions if not isinstance(a, RebuildIndex)]
    return changes


class _Writer:
    """Writes a run's journaled changes one by one, each only while its file is as orient saw
    it; a change left out takes the actions that hang on it with it."""

    def __init__(self, selected: Applied, state: DreamState, run_id: str, steps: list[_Step], seen: list):
        self.selected, self.state, self.run_id = selected, state, run_id
        self.steps, self.seen = steps, seen
        self.left: set[str] = set()  # paths whose change did not happen
        self.retiring = {s.archives: s.change.path for s in steps if s.archives}  # memory -> archive copy
        self.number = {s.change.path: n for n, s in enumerate(steps)}

    def write(self, number: int) -> None:
        step = self.steps[number]
        expected = self.seen[number] if step.derived else step.expected
        why = None
        if missing := [p for p in step.needs if p in self.left]:
            why = f"{missing[0]} was left as it is"
        elif step.expected is not None and self.seen[number] != step.expected:
            why = "changed since the dream started"
        elif step.archives and not _still_as_orient_saw(self.state, step.archives):
            why = f"{step.archives} changed since the dream started"
        if why is None:
            why = apply_change(self.state.context.paths, step.change, self.run_id, expected)
        if why is not None:
            self._leave(number, why)

    def _leave(self, number: int, why: str) -> None:
        """Record a change that did not happen, and take back the action it belonged to."""
        step = self.steps[number]
        path = step.change.path
        self.left.add(path)
        selected, live = self.selected, self.selected.live
        if step.derived:
            selected.skipped.append(f"{path} {why}: not rewritten"
                                    + (" (run `auto-dream build-index`)" if path == "MEMORY.md" else ""))
            if path == "MEMORY.md":
                selected.actions = [a for a in selected.actions if not isinstance(a, RebuildIndex)]
            return
        archive = self.retiring.get(path)
        if step.change.removes and archive is not None and archive not in self.left:
            copy = self.state.context.paths.root / archive  # written already: it goes, the memory stays
            if digest(read_if_present(copy)) == digest(self.steps[self.number[archive]].change.data()):
                copy.unlink()
            self.left.add(archive)
        before = self.state.memories
        for action in list(selected.actions):
            match action:
                case CreateMemory(memory=memory) | UpdateMemory(after=memory) if memory.path == path:
                    verb = "created" if isinstance(action, CreateMemory) else "updated"
                    selected.skipped.append(f"{path} {why}: not {verb} (its entries wait for the next dream)")
                case RetireMemory(memory=memory, proposed=False) \
                        if path in (memory.path, self.retiring.get(memory.path)):
                    selected.skipped.append(f"{memory.path}: not retired ({why})")
                case _:
                    continue
            selected.actions.remove(action)
            if memory.path in before:  # the memory stays as orient read it
                live[memory.path] = before[memory.path]
            else:
                live.pop(memory.path, None)

    def redo_derived(self, first: int) -> None:
        """Memory changes were left out: the record and the index are made again from what
        happened, and the journal learns their new content before either is written."""
        derived = {c.path: c for c in _derived(self.selected, self.state)}
        for number in range(first, len(self.steps)):
            path = self.steps[number].change.path
            change = derived.get(path) or FileChange(path, read_if_present(self.state.context.paths.root / path))
            self.steps[number] = _Step(change, derived=True)
            set_post(self.state.context.paths, self.run_id, number, change.data())


def apply(plan: Plan, state: DreamState, step_hook: StepHook | None = None) -> Applied:
    """Carry out the plan: journal every pre-image, then write, then mark the run done."""
    paths = state.context.paths
    selected = select_actions(plan, state)
    steps = file_changes(selected, plan, state)
    memory_steps = len(steps)
    steps += [_Step(change, derived=True) for change in _derived(selected, state)]
    selected.changes = [s.change for s in steps]
    if not steps:
        return selected
    step = 0

    def reached() -> None:
        nonlocal step
        step += 1
        if step_hook is not None:
            step_hook(step)

    reached()
    seen = write_journal(paths, plan.run_id, selected.changes, state.now)
    writer = _Writer(selected, state, plan.run_id, steps, seen)
    number = 0
    try:
        for number in range(len(steps)):
            reached()
            if number == memory_steps and writer.left:
                writer.redo_derived(number)
            writer.write(number)
    except OSError as error:
        raise _rolled_back(state, plan.run_id, steps[number].change.path, error) from None
    reached()
    set_status(paths, plan.run_id, DONE, finished=state.now.isoformat(timespec="seconds"))
    selected.changes = [s.change for s in steps if s.change.path not in writer.left]
    return selected


def _rolled_back(state: DreamState, run_id: str, path: str, error: OSError) -> StoreError:
    """A write failed half-way (a full disk, a read-only folder): put back what the run wrote."""
    why = error.strerror or str(error)
    try:
        restore(state.context.paths, run_id, force=False, rolling_back=True)  # MEMORY.md is written last
    except (OSError, StoreError):
        return StoreError(f"cannot write {path}: {why}; the run stopped half-way and the next dream "
                          "or undo rolls it back")
    return StoreError(f"cannot write {path}: {why}; the run was rolled back, nothing changed")
