"""A dream's plan: its actions (dream/actions.py) and every file change they make. Planning
decides everything; only apply() acts on it."""

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path

from auto_dream.distill.base import LlmUsage
from auto_dream.dream import bookkeeping
from auto_dream.dream.actions import (
    QUEUE_KINDS,
    Action,
    CreateMemory,
    RebuildIndex,
    RetireMemory,
    ReviewPair,
    SkipEntries,
    UpdateMemory,
)
from auto_dream.dream.journal import FileChange
from auto_dream.dream.snapshot import Decisions, Snapshot
from auto_dream.errors import StoreError
from auto_dream.store.config import Mode
from auto_dream.store.files import Fingerprint, fingerprint, read_regular
from auto_dream.store.index import NO_ACTIVITY, Activity, IndexResult
from auto_dream.store.index_render import rendered_index
from auto_dream.store.live import LiveView, MemorySource
from auto_dream.store.memory import (
    MAX_MEMORY_BYTES,
    Memory,
    TakenNames,
    WrittenText,
    rewrite_memory,
    written_text,
)
from auto_dream.store.paths import StoreLayout
from auto_dream.store.review_queue import EMPTY_QUEUE, KeptPair, Raised, ReviewQueue, next_queue, queue_path


def still_as_orient_saw(snapshot: Snapshot, path: str) -> bool:
    return fingerprint(snapshot.context.paths.root / path) == snapshot.fingerprints.get(path)


def _read_only(snapshot: Snapshot, path: str, *, races: bool) -> bool:
    """A memory file its owner may not write (chmod 0444): dream leaves it as it is. Planning
    asks what orient listed; apply (`races`) also the file as it is now."""
    if path in snapshot.locked:
        return True
    if not races:
        return False
    try:
        return not os.lstat(snapshot.context.paths.root / path).st_mode & stat.S_IWUSR
    except FileNotFoundError:
        return False


def select_actions(actions: Sequence[Action], snapshot: Snapshot, *, races: bool) -> tuple[list[Action], list[str]]:
    """`actions` less those that touch a read-only memory file (chmod 0444: planning leaves
    it as it is, so a dry run says so too) and, with `races` (apply, before it writes), a
    file changed since orient; less those that depend on one; and why each was left out."""
    kept: list[Action] = []
    skipped: list[str] = []
    dropped: set[str] = set()  # memory paths whose create/update will not happen
    root = snapshot.context.paths.root
    created = {a.memory.path for a in actions if isinstance(a, CreateMemory)}
    frozen = {a.memory.path for a in actions if isinstance(a, RetireMemory) and not a.proposed
              and a.memory.path not in created and _read_only(snapshot, a.memory.path, races=races)}
    for action in actions:
        match action:
            case CreateMemory(memory=memory) if races and (root / memory.path).exists():
                dropped.add(memory.path)
                skipped.append(f"{memory.path} appeared since the dream started: not created "
                               "(its entries wait for the next dream)")
                continue
            case UpdateMemory(before=before) if races and not still_as_orient_saw(snapshot, before.path):
                dropped.add(before.path)
                skipped.append(f"{before.path} changed since the dream started: not updated "
                               "(its entries wait for the next dream)")
                continue
            case UpdateMemory(before=before) if _read_only(snapshot, before.path, races=races):
                dropped.add(before.path)
                skipped.append(f"{before.path} is read-only: not updated (its entries wait for the next dream)")
                continue
            case UpdateMemory(before=before, merged_paths=merged) if frozen.intersection(merged):
                dropped.add(before.path)  # it would carry a memory that stays: both stay as they are
                skipped.append(f"{before.path}: not updated, because {min(frozen.intersection(merged))} "
                               "is read-only and stays")
                continue
            case RetireMemory(proposed=True):
                pass  # reported, never carried out
            case RetireMemory(memory=memory, target=target):
                if memory.path in frozen:
                    skipped.append(f"{memory.path} is read-only: not retired")
                    continue
                if target in dropped or memory.path in dropped:
                    skipped.append(f"{memory.path}: not retired, because {target or memory.path} "
                                   "was left as it is")
                    continue
                if races and memory.path not in created and not still_as_orient_saw(snapshot, memory.path):
                    skipped.append(f"{memory.path} changed since the dream started: not retired")
                    continue
        kept.append(action)
    return kept, skipped


def live_after(actions: list[Action], memories: MemorySource) -> LiveView:
    """The memories as `actions` leave them."""
    live = LiveView(memories)
    for action in actions:
        match action:
            case CreateMemory(memory=memory) | UpdateMemory(after=memory):
                live[memory.path] = memory
    for action in actions:
        if isinstance(action, RetireMemory) and action.archived is not None:
            live.pop(action.memory.path, None)
    return live




@dataclass(frozen=True)
class ReviewChange:
    """What a run does to the review queue: the queue it read (and its bytes), the pairs it
    raised, the items it decided, the pairs it was told to keep."""

    before: ReviewQueue = EMPTY_QUEUE
    before_data: bytes | None = None
    raised: tuple[Raised, ...] = ()
    resolved: tuple[str, ...] = ()
    kept: tuple[KeptPair, ...] = ()

    @classmethod
    def of(cls, snapshot: Snapshot, decisions: Decisions) -> "ReviewChange":
        raised = tuple(Raised(QUEUE_KINDS[pair.kind], (pair.path, pair.target), pair.quotes,
                              pair.evidence) for pair in decisions.review)
        return cls(snapshot.review_queue, snapshot.review_queue_data, raised, tuple(decisions.resolved),
                   tuple(decisions.kept))


@dataclass(frozen=True)
class PlannedChange:
    """One file change and what it hangs on: the memory paths whose own changes must have
    happened (a merge's survivor), and the live memory it archives (checked before its copy)."""

    change: FileChange
    needs: tuple[str, ...] = ()
    archives: str | None = None
    expected: Fingerprint | None = None  # the fingerprint orient saw (a live memory), or None (a new file)
    derived: bool = False  # the distilled record or MEMORY.md: expected as the journal read it
    kept: "KeptText | None" = None  # what its rewrite keeps of the file it edits or copies


@dataclass(frozen=True)
class Plan:
    """Everything a run decides. A dry run renders it; apply() checks, journals and writes it."""

    run_id: str
    dry_run: bool
    mode: Mode
    actions: tuple[Action, ...]
    deferred: tuple[RetireMemory, ...]  # over the retirement budget
    flagged: tuple[tuple[str, list[str]], ...]  # (path, missing refs)
    review: tuple[ReviewPair, ...]  # pairs left for a person to decide
    warnings: tuple[str, ...]
    counts: Mapping[str, int]  # evergreen, partially_stale
    usage: LlmUsage
    entry_logs: Mapping[str, str]  # entry id -> its log file
    entries_gathered: int
    memories_scanned: int
    # What the actions do to files, in the order apply writes them: memories, archive copies,
    # removals, then the distilled record and MEMORY.md (memories rendered when written).
    changes: tuple[PlannedChange, ...]
    live: LiveView  # the memories after the run
    index: IndexResult  # MEMORY.md after the run
    distilled_entry_ids: tuple[str, ...]  # entries the run records as distilled
    activity: Activity = NO_ACTIVITY  # what was used lately: decay (store.index.Activity)
    review_change: ReviewChange = ReviewChange()  # what the run does to the review queue
    review_queue: ReviewQueue = EMPTY_QUEUE  # the review queue after the run


def make_plan(snapshot: Snapshot, decisions: Decisions) -> Plan:
    """After prune: name the archive copies, render MEMORY.md and the distilled record, and
    list every file change, so that a dry run shows all that apply would do."""
    paths = snapshot.context.paths
    kept, left = select_actions(decisions.actions, snapshot, races=False)
    actions = archive_copies(kept, paths, snapshot.now, snapshot.run_id, snapshot.archived_names)
    live = decisions.live if len(kept) == len(decisions.actions) else live_after(actions, snapshot.memories)
    review = ReviewChange.of(snapshot, decisions)
    derived = derive(snapshot, live, actions, review)
    index = derived.index
    actions = with_index_lines(actions, index)
    if derived.index_changed:
        actions.append(RebuildIndex(index.text, len(index.listed), index.omitted))
    changes = [*memory_changes(actions, snapshot.fingerprints, paths.root),
               *(PlannedChange(c, derived=True) for c in derived.changes)]
    return Plan(run_id=snapshot.run_id, dry_run=snapshot.options.dry_run, mode=decisions.mode, actions=tuple(actions),
                deferred=tuple(decisions.deferred), flagged=tuple(decisions.flagged), review=tuple(decisions.review),
                warnings=(*snapshot.warnings, *decisions.warnings, *left, *index.warnings),
                counts=dict(decisions.counts),
                usage=decisions.usage, entry_logs=snapshot.entry_logs, entries_gathered=len(snapshot.new_entries),
                memories_scanned=len(snapshot.memories), changes=tuple(changes), live=live, index=index,
                distilled_entry_ids=derived.distilled_entry_ids, activity=derived.activity,
                review_change=review, review_queue=derived.queue)


def archive_copies(actions: list[Action], paths: StoreLayout, now: datetime, run_id: str,
                   archived: Mapping[str, tuple[str, ...]]) -> list[Action]:
    """Each retirement carried out, with the copy archive/ will hold: archive/<type>/<file name>
    (numbered when archive/ holds that name already: `archived`, by type) and frontmatter that
    says when, why and by which run."""
    taken: dict[str, TakenNames] = {}
    named: list[Action] = []
    for action in actions:
        if isinstance(action, RetireMemory) and not action.proposed:
            memory = action.memory
            extra = {**memory.extra, "archived": now.isoformat(timespec="seconds"),
                     "archived_reason": action.reason, "archived_by_run": run_id}
            if action.target:
                extra["superseded_by"] = action.target
            path = _archive_path(memory, taken, paths, archived)
            action = replace(action, archived=replace(memory, path=path, extra=extra))
        named.append(action)
    return named


def with_index_lines(actions: list[Action], index: IndexResult) -> list[Action]:
    """A Claude Code folder's MEMORY.md drops the lines that link a file the run retires: its
    archive copy keeps them, verbatim, in `memory_md_lines` (a hook a person wrote included),
    so they are found with the file and not only in the run's journal."""
    dropped = dict(index.dropped_lines)
    kept: list[Action] = []
    for action in actions:
        if isinstance(action, RetireMemory) and action.archived is not None and action.memory.path in dropped:
            archived = action.archived
            extra = {**archived.extra, "memory_md_lines": list(dropped[action.memory.path])}
            action = replace(action, archived=replace(archived, extra=extra))
        kept.append(action)
    return kept


def _archive_path(memory: Memory, taken: dict[str, TakenNames], paths: StoreLayout,
                  archived: Mapping[str, tuple[str, ...]]) -> str:
    if memory.type not in taken:
        taken[memory.type] = TakenNames(archived.get(memory.type, ()))
    names = taken[memory.type]
    name = names.first_free(memory.file_name)
    names.add(name)
    return paths.archive_path(memory.type, name)


class KeptText:
    """What a rewrite keeps of the file an update replaces, or an archive copy comes from, read as
    `memory`: its frontmatter lines and the white space around its body (the body is the
    memory's); None for a file not there. Read once (read_kept, right after make_plan), then
    kept, so every rendering of the plan agrees whatever happens to the file later."""

    def __init__(self, source: Path, memory: Memory):
        self.source, self.memory = source, memory
        self._read = False
        self._written: WrittenText | None = None

    def __call__(self) -> WrittenText | None:
        if not self._read:
            try:
                data = read_regular(self.source, MAX_MEMORY_BYTES)
            except StoreError:
                data = None
            self._written = written_text(data, self.memory.body) if data is not None else None
            self._read = True
        return self._written


def _rendered(kept: KeptText | None, before: Memory, after: Memory) -> bytes:
    return rewrite_memory(kept() if kept is not None else None, before, after).encode("utf-8")


def memory_changes(actions: list[Action] | tuple[Action, ...], fingerprints: Mapping[str, Fingerprint],
                   root: Path) -> list[PlannedChange]:
    """Every memory file the actions write or remove, in order: memories, archive copies, removals.
    A file that exists is edited, not written anew: only the frontmatter lines of the keys that
    change, and the body (store.memory.rewrite_memory)."""
    steps: dict[str, PlannedChange] = {}
    removals: list[PlannedChange] = []
    as_read: dict[str, Memory] = {}  # each memory path a run rewrites or archives: the memory its file holds
    for action in actions:
        match action:
            case UpdateMemory(before=before, after=memory):
                as_read[before.path] = before
                kept = KeptText(root / before.path, before)
                steps[memory.path] = PlannedChange(FileChange(memory.path, partial(_rendered, kept, before, memory)),
                                                   expected=fingerprints.get(memory.path), kept=kept)
            case CreateMemory(memory=memory):
                steps[memory.path] = PlannedChange(FileChange(memory.path, partial(_rendered, None, memory, memory)),
                                                   expected=fingerprints.get(memory.path))
    created = {a.memory.path for a in actions if isinstance(a, CreateMemory)}
    for action in actions:
        if isinstance(action, RetireMemory) and action.archived is not None:
            memory, copy = action.memory, action.archived
            before = as_read.get(memory.path, memory)
            source = None if memory.path in created else KeptText(root / memory.path, before)
            needs = (action.target,) if action.target else ()
            steps[copy.path] = PlannedChange(FileChange(copy.path, partial(_rendered, source, before, copy)),
                                             needs, archives=memory.path, kept=source)
            steps.pop(memory.path, None)
            removals.append(PlannedChange(FileChange(memory.path, None), (*needs, copy.path),
                                          expected=fingerprints.get(memory.path)))
    return [*steps.values(), *removals]


def read_kept(plan: Plan) -> Plan:
    """Read now what the plan's rewrites keep of the files they edit (KeptText), each file once.
    make_plan opens no file; this is the one read planning does, of the memory files the plan
    rewrites or archives, so that a dry run shows the bytes the real run then writes."""
    for step in plan.changes:
        if step.kept is not None:
            step.kept()
    return plan


def distilled_by(actions: list[Action] | tuple[Action, ...]) -> tuple[str, ...]:
    """The entries the actions account for: made into memories, merged, or skipped on purpose."""
    return tuple(dict.fromkeys(i for a in actions if isinstance(a, (CreateMemory, UpdateMemory, SkipEntries))
                               for i in a.entry_ids))


@dataclass(frozen=True)
class Derived:
    """The files made from the others: the distilled record, the review queue and MEMORY.md."""

    distilled_entry_ids: tuple[str, ...]
    index: IndexResult
    index_changed: bool  # MEMORY.md differs from what it should be
    changes: tuple[FileChange, ...]  # those of them that the run writes
    queue: ReviewQueue = EMPTY_QUEUE  # the review queue after the run
    activity: Activity = NO_ACTIVITY  # what was consulted lately (MEMORY.md's decay)


def derive(snapshot: Snapshot, live: LiveView, actions: list[Action] | tuple[Action, ...],
           review: ReviewChange | None = None) -> Derived:
    """The distilled record, the review queue and MEMORY.md as `actions` leave the store with
    `live` memories (and the unreadable files MEMORY.md names), from what orient read."""
    context, now = snapshot.context, snapshot.now
    paths = context.paths
    inputs = snapshot.index_inputs
    changes = []
    queue = EMPTY_QUEUE
    if review is not None:
        queue = next_queue(review.before, live, review.raised,
                           (now or datetime.now().astimezone()).isoformat(timespec="seconds"),
                           review.resolved, review.kept)
        data = queue.render()
        if data != review.before_data and (queue.items or queue.kept or review.before_data is not None):
            changes.append(FileChange(paths.relative(queue_path(paths)), data))
    distilled = distilled_by(actions)
    if distilled:
        changes.append(FileChange(paths.relative(bookkeeping.distilled_path(paths)),
                                  bookkeeping.distilled_with(snapshot.distilled_data, distilled)))
    retiring = {a.memory.path for a in actions if isinstance(a, RetireMemory) and a.archived is not None}
    index = rendered_index(context, live, inputs, unreadable=snapshot.unreadable, retiring=retiring, now=now)
    data = index.text.encode("utf-8")
    changed = inputs.differs(data)
    # what moves out of a Claude Code folder's MEMORY.md: written before it, journaled with it
    changes.extend(FileChange(path, text.encode("utf-8")) for path, text in index.files)
    if changed:
        changes.append(FileChange(paths.relative(paths.index), data))
    return Derived(distilled, index, changed, tuple(changes), queue, inputs.activity)
