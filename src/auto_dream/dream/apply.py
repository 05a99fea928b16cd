"""apply(plan): the only code that writes memories. It checks that each file is still as
orient saw it (compare before write), journals every pre-image, then writes the plan's changes
in its order: additions, removals, then the distilled record and MEMORY.md.

It decides nothing the plan has not, with one exception: when a concurrent edit (a file
changed since orient, or made read-only) makes it leave a memory change out, the distilled
record and MEMORY.md are derived again from the changes that do happen (`_derived`,
`_Writer.redo_derived`), and the report says what was left out and why."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from auto_dream.dream.actions import Action, CreateMemory, RebuildIndex, RetireMemory, UpdateMemory
from auto_dream.dream.journal import (
    DONE,
    FileChange,
    Journaled,
    apply_change,
    digest,
    read_if_present,
    restore,
    set_post,
    set_status,
    write_journal,
)
from auto_dream.dream.plan import (
    Plan,
    PlannedChange,
    ReviewChange,
    derive,
    live_after,
    memory_changes,
    select_actions,
    still_as_orient_saw,
)
from auto_dream.dream.snapshot import Snapshot
from auto_dream.errors import StoreError
from auto_dream.progress import NO_PROGRESS, WRITING, Progress
from auto_dream.store.files import fingerprint
from auto_dream.store.index import IndexResult
from auto_dream.store.live import LiveView
from auto_dream.store.replace import sync_folders
from auto_dream.store.review_queue import EMPTY_QUEUE, ReviewQueue

StepHook = Callable[[int], None]


@dataclass
class Applied:
    """What a run carried out: the plan's, less what apply had to leave out."""

    actions: list[Action]
    live: LiveView  # the memories after the run
    index: IndexResult  # MEMORY.md after the run
    distilled_entry_ids: tuple[str, ...]  # entries this run recorded as distilled
    skipped: list[str] = field(default_factory=list)  # warnings: actions left out and why
    changes: list[FileChange] = field(default_factory=list)  # the file changes made
    review: ReviewChange | None = None  # what the run does to the review queue (derived again with the rest)
    queue: ReviewQueue = EMPTY_QUEUE  # the review queue after the run


def _derived(selected: Applied, snapshot: Snapshot) -> list[FileChange]:
    """The race fallback: the distilled record and MEMORY.md as the memory changes that
    happen leave them, when apply left some of the plan's out."""
    derived = derive(snapshot, selected.live, selected.actions, selected.review)
    selected.distilled_entry_ids, selected.index, selected.queue = derived.distilled_entry_ids, derived.index, \
        derived.queue
    selected.actions = [a for a in selected.actions if not isinstance(a, RebuildIndex)]
    if derived.index_changed:
        index = derived.index
        selected.actions.append(RebuildIndex(index.text, len(index.listed), index.omitted))
    return list(derived.changes)


class _Writer:
    """Writes a run's journaled changes one by one, each only while its file is as orient saw
    it; a change left out takes the actions that hang on it with it."""

    def __init__(self, selected: Applied, snapshot: Snapshot, run_id: str, steps: list[PlannedChange],
                 seen: list[Journaled]):
        self.selected, self.snapshot, self.run_id = selected, snapshot, run_id
        self.steps, self.seen = steps, seen
        self.left: set[str] = set()  # paths whose change did not happen
        self.retiring = {s.archives: s.change.path for s in steps if s.archives is not None}  # memory -> archive copy
        self.number = {s.change.path: n for n, s in enumerate(steps)}
        self.frozen: set[str] = set()  # derived files changed by someone since they were read: left alone
        # folders of new memories not yet synced: synced once, before the record and the index
        # that count on them are written (one sync per folder, not per file: 16,000 new memories)
        self.unsynced: set[Path] = set()

    def write(self, number: int) -> None:
        step, seen = self.steps[number], self.seen[number]
        expected = seen.stamp if step.derived else step.expected
        why = None
        if missing := [p for p in step.needs if p in self.left]:
            why = f"{missing[0]} was left as it is"
        elif step.expected is not None and seen.stamp != step.expected:
            why = "changed since the dream started"
        elif step.archives and not still_as_orient_saw(self.snapshot, step.archives):
            why = f"{step.archives} changed since the dream started"
        elif step.derived and step.change.path in self.frozen:
            why = "changed since the dream started"
        if why is None:
            why = apply_change(self.snapshot.context.paths, step.change, self.run_id, expected, seen.sha256,
                               None if step.derived else self.unsynced)
        if why is not None:
            self._leave(number, why)

    def _leave(self, number: int, why: str) -> None:
        """Record a change that did not happen, and take back the action it belonged to."""
        step = self.steps[number]
        path = step.change.path
        self.left.add(path)
        selected, live = self.selected, self.selected.live
        if step.derived:
            selected.skipped.append(f"{path} {why}: not rewritten" + _remade_by(self.snapshot, path))
            if path == "MEMORY.md":
                selected.actions = [a for a in selected.actions if not isinstance(a, RebuildIndex)]
            return
        archive = self.retiring.get(path)
        if step.change.removes and archive is not None and archive not in self.left:
            copy = self.snapshot.context.paths.root / archive  # written already: it goes, the memory stays
            if digest(read_if_present(copy)) == digest(self.steps[self.number[archive]].change.data()):
                copy.unlink()
            self.left.add(archive)
        before = self.snapshot.memories
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
        derived = {c.path: c for c in _derived(self.selected, self.snapshot)}
        for number in range(first, len(self.steps)):
            path = self.steps[number].change.path
            change = derived.get(path) or FileChange(path, read_if_present(self.snapshot.context.paths.root / path))
            self.steps[number] = PlannedChange(change, derived=True)
            set_post(self.snapshot.context.paths, self.run_id, number, change.data())
        if "MEMORY.md" not in self.number:  # not journaled, so not written: not rebuilt either
            self.selected.actions = [a for a in self.selected.actions if not isinstance(a, RebuildIndex)]


def _remade_by(snapshot: Snapshot, path: str) -> str:
    """What makes a derived file left as it is again. Never a command that would lose a line
    someone wrote into it meanwhile: in our own layout MEMORY.md holds nothing but what the
    memories make; a Claude Code folder's is made again from itself, every line kept."""
    if path != snapshot.context.paths.relative(snapshot.context.paths.index):
        return ""
    if snapshot.context.paths.person_index:
        return "; the next dream makes it again from it as it is then, keeping every line"
    return "; the next dream makes it again from the memories"


def apply(plan: Plan, snapshot: Snapshot, step_hook: StepHook | None = None,
          progress: Progress = NO_PROGRESS) -> Applied:
    """Carry out the plan: journal every pre-image, then write, then mark the run done
    (`progress` hears of each file written)."""
    paths = snapshot.context.paths
    kept, skipped = select_actions(plan.actions, snapshot, races=True)
    index_changed = [path for path, seen in plan.index.read_from if fingerprint(paths.root / path) != seen]
    if index_changed:  # a Claude Code folder's MEMORY.md, written by its agent while we planned
        skipped.append(f"{index_changed[0]} changed since the dream started: MEMORY.md is made again from it as "
                       "it is now")
    if len(kept) == len(plan.actions) and not index_changed:
        selected = Applied(kept, plan.live.copy(), plan.index, plan.distilled_entry_ids, skipped,
                           review=plan.review_change, queue=plan.review_queue)
        steps = list(plan.changes)
    else:  # a file changed since orient: what depends on the changes left out is derived again
        selected = Applied(kept, live_after(kept, snapshot.memories), plan.index, (), skipped,
                           review=plan.review_change, queue=plan.review_queue)
        steps = memory_changes(kept, snapshot.fingerprints, snapshot.context.paths.root)
        steps += [PlannedChange(change, derived=True) for change in _derived(selected, snapshot)]
    memory_steps = sum(1 for s in steps if not s.derived)
    selected.changes = [s.change for s in steps]
    if not steps:
        return selected
    step = 0

    def reached() -> None:
        nonlocal step
        step += 1
        if step_hook is not None:
            step_hook(step)

    progress.start(WRITING, len(steps))
    reached()
    seen = write_journal(paths, plan.run_id, selected.changes, snapshot.now)
    writer = _Writer(selected, snapshot, plan.run_id, steps, seen)
    # a Claude Code folder's MEMORY.md (or its overflow) written to since the index was made from
    # it: what was made would lose that line, so neither is rewritten this run
    if any(fingerprint(paths.root / path) != then for path, then in selected.index.read_from):
        writer.frozen = {path for path, _ in selected.index.read_from}
    number = 0
    try:
        for number in range(len(steps)):
            reached()
            if number == memory_steps:
                sync_folders(writer.unsynced)
                if writer.left:
                    writer.redo_derived(number)
            writer.write(number)
            progress.advance()
        sync_folders(writer.unsynced)
    except OSError as error:
        raise _rolled_back(snapshot, plan.run_id, steps[number].change.path, error) from None
    reached()
    set_status(paths, plan.run_id, DONE, finished=snapshot.now.isoformat(timespec="seconds"))
    selected.changes = [s.change for s in steps if s.change.path not in writer.left]
    return selected


def _rolled_back(snapshot: Snapshot, run_id: str, path: str, error: OSError) -> StoreError:
    """A write failed half-way (a full disk, a read-only folder): put back what the run wrote."""
    why = error.strerror or str(error)
    try:
        restore(snapshot.context.paths, run_id, force=False, rolling_back=True)  # MEMORY.md is written last
    except (OSError, StoreError):
        return StoreError(f"cannot write {path}: {why}; the run stopped half-way and the next dream "
                          "or undo rolls it back")
    return StoreError(f"cannot write {path}: {why}; the run was rolled back, nothing changed")
