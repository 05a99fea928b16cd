"""consolidate: new entries become memories (through the distiller), then duplicates and
contradictions among the memories this run changed and the rest (--full: among all)."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from auto_dream.distill.base import (
    Create,
    Distiller,
    DistillRequest,
    Fold,
    MergeInto,
    NewMemory,
    ReviewCase,
    Reviewer,
    Skip,
    Supersede,
    Thresholds,
)
from auto_dream.distill.deterministic import new_memory_from_text
from auto_dream.distill.folds import added_text, extended_description
from auto_dream.dream.actions import REVIEW_KINDS, CreateMemory, ReviewKind, ReviewPair, SkipEntries, UpdateMemory
from auto_dream.dream.candidates import StoreNeighbours, memory_pairs, word_rarity
from auto_dream.dream.snapshot import Decisions, Snapshot
from auto_dream.judge.fences import fenced
from auto_dream.judge.memory_type import guess_type
from auto_dream.judge.similarity import Profile, overlap, significant_words
from auto_dream.judge.statements import ABSORB_LIMIT, Side, Verdict, judge
from auto_dream.judge.status import Status, resolve_pointer
from auto_dream.progress import CHECKING, DISTILLING, NO_PROGRESS, REVIEWING, Progress
from auto_dream.store.daylog import aware
from auto_dream.store.index_render import index_marks
from auto_dream.store.memory import Memory, TakenNames, memory_file_name
from auto_dream.store.review_queue import KeptPair, memory_fingerprint

# The review item a verdict's kind makes (any other: a possible duplicate)
_REVIEW_KINDS: dict[str, ReviewKind] = {"conflict": "possible_conflict", "marked": "marked_superseded"}


def consolidate(snapshot: Snapshot, decisions: Decisions, distiller: Distiller,
                progress: Progress = NO_PROGRESS) -> None:
    """Into `decisions`: the memories the new entries make or change, then what is retired or
    left for review among the memories this run changed and the rest. `progress` hears of
    each entry distilled and each pair checked."""
    run = _Run(snapshot, decisions, progress)
    if snapshot.new_entries:
        config = snapshot.context.config
        thresholds = Thresholds(config.duplicate_overlap, config.contradiction_overlap)
        entries = list(snapshot.new_entries)
        progress.start(DISTILLING, len(entries))
        result = distiller.distill(DistillRequest(
            entries, decisions.live.copy(), decisions.profiles, thresholds, snapshot.context.tz,
            StoreNeighbours(snapshot, decisions, entries), now=snapshot.now, progress=progress))
        decisions.usage = result.usage
        decisions.warnings.extend(result.notes)
        for operation in result.operations:
            run.apply_operation(operation)
    run.raise_marked()  # first: what a person wrote of a pair is its evidence, before what the judge finds
    run.check_memory_pairs()
    run.ask_reviewer(distiller)
    run.finish()


class _Run:
    """consolidate's bookkeeping while it plans: what it created and updated so far."""

    def __init__(self, snapshot: Snapshot, decisions: Decisions, progress: Progress):
        self.snapshot, self.decisions, self.progress = snapshot, decisions, progress
        self.entries = {e.id: e for e in snapshot.new_entries}
        self.created: dict[str, CreateMemory] = {}
        self.updates: dict[str, dict] = {}  # path -> {"before", "entry_ids", "merged_paths", "reasons"}
        self.taken: dict[Path, TakenNames] = {}
        self.absorbed: dict[str, int] = {}  # survivor path -> memories merged into it this run
        self.reviewed: set[tuple[str, str]] = set()
        self.index_marks: dict[str, Status] | None = None  # what MEMORY.md says of memories' status, when asked

    # -------------------------------------------------------- entries

    def apply_operation(self, operation) -> None:
        match operation:
            case Create(new=new, sources=sources, reason=reason, folds=folds):
                self._create(new, sources, reason, folds)
            case MergeInto(memory=path, addition=addition, sources=sources, reason=reason):
                self._merge_entries(path, addition, sources, reason)
            case Supersede(memory=path, new=new, sources=sources, reason=reason, folds=folds):
                created = self._create(new, sources, reason, folds)
                old = self.decisions.live.get(path)
                if old is not None and self.decisions.retire(old, "supersede", created.path, reason):
                    self._carry_unretracted(old, created)
            case Skip(sources=sources, reason=reason):
                self.decisions.actions.append(SkipEntries(tuple(sources), reason))

    def _entry_time(self, sources: Sequence[str]) -> datetime:
        """The newest entry's time, never later than now: a back-dated entry dated in the future
        must not make a memory that outranks every later correction."""
        times = [aware(self.entries[s].at, self.snapshot.context.tz) for s in sources if s in self.entries]
        return min(max(times), self.snapshot.now) if times else self.snapshot.now

    def _create(self, new: NewMemory, sources, reason: str, folds: tuple[Fold, ...] = ()) -> Memory:
        mtime = self._entry_time(sources)
        paths = self.snapshot.context.paths
        name = memory_file_name(new.name, mtime.date(), self._taken(new.type),
                                paths.new_file_prefix(new.type, mtime.date()))
        self._taken(new.type).add(name)
        path = paths.memory_path(new.type, name)
        memory = Memory(path=path, name=new.name, description=new.description, type=new.type,
                        mtime=mtime, body=new.body, sources=tuple(sources))
        self.created[memory.path] = CreateMemory(memory, tuple(sources), reason, folds)
        self.decisions.live[memory.path] = memory
        self.decisions.profiles[memory.path] = Profile.of(memory.text())
        return memory

    def _taken(self, memory_type: str) -> TakenNames:
        """The names taken in the folder a new memory of the type goes to (one folder may hold every type)."""
        folder = self.snapshot.context.paths.memory_dir(memory_type)
        if folder not in self.taken:
            self.taken[folder] = TakenNames(self.snapshot.folder_names.get(folder, ()))
        return self.taken[folder]

    def _merge_entries(self, path: str, addition: str, sources, reason: str) -> None:
        current = self.decisions.live.get(path)
        if current is None:  # retired meanwhile: the entries still become a memory
            first = self.entries[sources[0]]
            kind = first.type or guess_type(first.text)
            self._create(new_memory_from_text(kind, addition or first.text), sources, reason)
            return
        adds = bool(addition) and addition not in current.body
        body = current.body + ("\n\n" + addition if adds else "")
        # what the entry adds shows in the description too, so MEMORY.md's line says it
        description = extended_description(current.description, added_text(current.body or current.description,
                                                                            addition), addition) if adds \
            else current.description
        mtime = max(current.mtime, self._entry_time(sources))
        self._update(current, body=body, sources=union_sources(current.sources, sources), mtime=mtime,
                     entry_ids=tuple(sources), reason=reason, description=description)

    def _update(self, current: Memory, *, body: str, sources, mtime, entry_ids=(), merged_path=None,
                reason: str, words: frozenset[str] | None = None, description: str | None = None) -> None:
        updated = replace(current, body=body, sources=tuple(sources), mtime=mtime,
                          description=current.description if description is None else description)
        self.decisions.live[current.path] = updated
        self.decisions.profiles.rewritten(updated, words)
        if current.path in self.created:
            old = self.created[current.path]
            self.created[current.path] = CreateMemory(updated, old.entry_ids + tuple(entry_ids), old.reason, old.folds)
            return
        record = self.updates.setdefault(current.path, {"before": self.snapshot.memories[current.path],
                                                        "entry_ids": [], "merged_paths": [], "reasons": []})
        record["after"] = updated
        record["entry_ids"].extend(entry_ids)
        if merged_path:
            record["merged_paths"].append(merged_path)
        record["reasons"].append(reason)

    # -------------------------------------------------------- memories among themselves

    def check_memory_pairs(self) -> None:
        """Judge each pair of a changed memory and another (judge.judge): act only when certain,
        list the pair for review when not, leave it when there is nothing to say."""
        snapshot, decisions = self.snapshot, self.decisions
        config = snapshot.context.config
        changed = {p for p in (*snapshot.changed, *self.created, *self.updates) if p in decisions.live}
        if not changed:
            return
        thresholds = Thresholds(config.duplicate_overlap, config.contradiction_overlap)
        rarity = word_rarity(snapshot, decisions)
        judged = []
        pairs = sorted(memory_pairs(snapshot, decisions, changed, thresholds))
        self.progress.start(CHECKING, len(pairs))
        sides: dict[str, Side] = {}  # nothing changes while the pairs are judged: one side per memory

        def side(path: str) -> Side:
            if path not in sides:
                sides[path] = self._side(path)
            return sides[path]

        for a, b in pairs:
            verdict = judge(side(a), side(b), config.duplicate_overlap, config.contradiction_overlap, rarity)
            if verdict.outcome != "none":
                judged.append((overlap(decisions.profiles[a].words, decisions.profiles[b].words), verdict, a, b))
            self.progress.advance()
        for _, verdict, a, b in sorted(judged, key=lambda p: (-p[0], p[2], p[3])):
            if a not in decisions.live or b not in decisions.live:
                continue
            if verdict.outcome == "review":
                self._review(verdict, a, b)
                continue
            leaving, staying = self._retiree(verdict, decisions.live[a], decisions.live[b], self._side(a),
                                             self._side(b))
            if marked := self._marked(a) or self._marked(b):
                self._review(verdict, a, b, f"a memory marked {marked.kind} by a person is never merged or "
                             "superseded automatically; ")
            elif leaving.pinned or leaving.read_only or staying.read_only:
                self._review(verdict, a, b, f"{'a pinned' if leaving.pinned else 'a read-only'} "
                             "memory is never retired automatically; ")
            elif verdict.outcome == "supersede":
                self._retire("supersede", leaving, staying,
                             f"contradicted by the newer {staying.path}: {verdict.evidence}; the newer wins")
            elif self.absorbed.get(staying.path, 0) >= ABSORB_LIMIT:
                self._review(verdict, a, b, f"{staying.path} already absorbed {ABSORB_LIMIT} "
                             "memories in this run; ")
            else:
                self._retire("merge", leaving, staying, f"duplicate of {staying.path}: {verdict.evidence}")

    def _index_marks(self) -> dict[str, Status]:
        """What MEMORY.md (a Claude Code folder's) says of memories' status, read when first asked."""
        if self.index_marks is None:
            self.index_marks = index_marks(self.snapshot.context, self.snapshot.index_inputs, self.decisions.live)
        return self.index_marks

    def _marked(self, path: str) -> Status | None:
        """What a person wrote of the memory's status: in it, or (a Claude Code folder) in MEMORY.md."""
        memory = self.decisions.live.get(path)
        return (memory.status if memory is not None else None) or self._index_marks().get(path)

    def raise_marked(self) -> None:
        """A memory a person marked superseded, a duplicate, moved or split, whose line names the
        one its content went to: the pair waits for a reader, quoting that line (the reader, or
        Claude, supersedes it by the one named, or keeps both). Real case: application-pipeline's
        MEMORY.md says of feedback_cover_letter_quality.md "SUPERSEDED by unified rules below"."""
        live = self.decisions.live
        probes = sorted(p for p in (*self.snapshot.changed, *self.created, *self.updates) if p in live)
        in_index = self._index_marks()
        # the statuses of every live memory at once (the cache's index answers for the unchanged):
        # a full dream's probes are every memory, and reading each to ask was most of this step
        statuses = live.marked()
        marked = {path: status for path in probes
                  if (status := statuses.get(path) or in_index.get(path)) is not None and status.points_to}
        if not marked:
            return
        names = {path: live[path].name for path in live}
        for path, status in marked.items():
            target = resolve_pointer(status.points_to, {p: name for p, name in names.items() if p != path})
            if target is None:
                continue
            other = live[target]
            said = next((line.strip() for line in (other.body or other.description).split("\n") if line.strip()),
                        other.name)
            self._review(Verdict("review", "marked", f"{path} says it is {status.kind}: \u201c{status.quote}\u201d, "
                                 f"naming {target}", (status.quote, " ".join(said.split()))), path, target)

    def ask_reviewer(self, distiller: Distiller) -> None:
        """The pairs left for review, this run's and those the review queue holds, go to the LLM
        when the distiller can review: what it decides to merge or supersede is carried out like
        the judge's own acts, within the budget; a pair it keeps is remembered as kept (the queue
        does not raise it again while both stay as they are); one it could not decide stays."""
        decisions = self.decisions
        live = decisions.live
        if not isinstance(distiller, Reviewer):
            return
        pairs: list[tuple[str, str, ReviewKind, str, str | None]] = []  # (path, target, kind, evidence, queue item id)
        for item in decisions.review:
            if item.path in live and item.target in live:
                pairs.append((item.path, item.target, item.kind, item.evidence, None))
        listed = {frozenset((p[0], p[1])) for p in pairs}
        for queued in self.snapshot.review_queue.items:
            a, b = queued.memories
            if a in live and b in live and frozenset((a, b)) not in listed and all(
                    memory_fingerprint(live[path]) == seen for path, seen in zip(queued.memories, queued.fingerprints)):
                pairs.append((a, b, REVIEW_KINDS[queued.kind], queued.reason, queued.id))
        if not pairs:
            return
        cases = [ReviewCase(live[a], live[b], kind, evidence) for a, b, kind, evidence, _ in pairs]
        self.progress.start(REVIEWING, len(cases))
        result = distiller.review(cases, decisions.usage.calls)
        self.progress.advance(len(cases))
        decisions.usage.add(result.usage)
        decisions.warnings.extend(result.notes)
        now = self.snapshot.now.isoformat(timespec="seconds")
        for decision in result.decisions:
            a, b, _, evidence, queued_id = pairs[decision.case]
            in_run = next((r for r in decisions.review if {r.path, r.target} == {a, b}), None)
            if a not in live or b not in live:
                if in_run is not None:
                    decisions.review.remove(in_run)  # one of the two left in an earlier decision of this run
                continue
            if queued_id is not None:
                decisions.resolved.append(queued_id)
            if decision.action == "keep" or decision.retire is None:  # only a keep retires nothing
                decisions.kept.append(KeptPair((a, b), (memory_fingerprint(live[a]), memory_fingerprint(live[b])),
                                               now, f"Claude: keep both ({decision.reason})"))
                if in_run is not None:
                    decisions.review[decisions.review.index(in_run)] = replace(
                        in_run, evidence=f"{in_run.evidence}; Claude: keep both ({decision.reason})")
            else:
                if in_run is not None:
                    decisions.review.remove(in_run)
                leaving = live[decision.retire]
                staying = live[b if decision.retire == a else a]
                self._retire(decision.action, leaving, staying,
                             f"Claude: {decision.reason} (the judge found: {evidence})")

    def _retire(self, kind: str, leaving: Memory, staying: Memory, reason: str) -> None:
        """Supersede or merge `leaving` into `staying`, within the mode and the budget: a merge
        carries its whole text in, a supersede the facts it does not retract."""
        decisions = self.decisions
        if kind == "supersede":
            if decisions.retire(leaving, "supersede", staying.path, reason):
                self._carry_unretracted(leaving, decisions.live[staying.path])
            return
        if decisions.next_retirement() == "apply":
            self._carry(leaving, staying)
            self.absorbed[staying.path] = self.absorbed.get(staying.path, 0) + 1
        decisions.retire(leaving, "merge", staying.path, reason)

    def _side(self, path: str) -> Side:
        return Side.of(self.decisions.live[path], self.decisions.profiles[path], self.snapshot.now)

    @staticmethod
    def _retiree(verdict, a: Memory, b: Memory, a_side: Side, b_side: Side) -> tuple[Memory, Memory]:
        """(the memory that leaves, the one that stays). A supersede retires the older (the judge
        made sure the times differ); a merge keeps the document a statement joins, else the newer,
        else the longer, and carries the other in whole."""
        if verdict.outcome == "merge" and a_side.statement != b_side.statement:
            return (a, b) if a_side.statement else (b, a)
        if a.mtime != b.mtime:
            return (a, b) if a.mtime < b.mtime else (b, a)
        return (a, b) if (len(a.body), a.path) < (len(b.body), b.path) else (b, a)

    def _review(self, verdict, a: str, b: str, why: str = "") -> None:
        """List the pair (judged as judge(a, b)) for a reader, unless someone decided to keep
        both as they are now."""
        kind = _REVIEW_KINDS.get(verdict.kind, "possible_duplicate")
        pair = (a, b) if a <= b else (b, a)
        if pair in self.reviewed:
            return
        self.reviewed.add(pair)
        live = self.decisions.live
        if self.snapshot.review_queue.is_kept(a, memory_fingerprint(live[a]), b, memory_fingerprint(live[b])):
            return
        self.decisions.review.append(ReviewPair(kind, a, b, why + verdict.evidence, verdict.quotes))

    def _carry_unretracted(self, older: Memory, newer: Memory) -> None:
        """A superseded memory's other facts (not the retracted statement, nor its Why/How) live on."""
        config = self.snapshot.context.config
        successor = self.decisions.profiles.words(newer.path)
        kept, kept_words = [], []
        for paragraph in (p.strip() for p in older.body.split("\n\n")):
            if not paragraph or paragraph.startswith(("**Why:**", "**How to apply:**")):
                continue
            words = significant_words(paragraph)  # the words alone: a full profile reads every signal
            # the retracted statement is the one about what the successor says
            if overlap(words, successor) >= config.contradiction_overlap \
                    or words <= successor or paragraph == older.body.strip():
                continue
            kept.append(paragraph)
            kept_words.append(words)
        if kept:
            # paragraphs never share a word across their blank line: the words of the whole are the union
            self._update(newer, body="\n\n".join([newer.body.strip(), *kept]), sources=newer.sources,
                         mtime=newer.mtime, merged_path=older.path, words=successor.union(*kept_words),
                         reason=f"kept the facts of {older.path} that it does not retract")

    def _carry(self, older: Memory, newer: Memory) -> None:
        """The retired duplicate's text goes into the survivor whole, under a heading that names it
        and its date: every paragraph the survivor does not already hold, as written (headings,
        lists, **Why:** / **How to apply:** included). Its sources go along. Nothing is lost."""
        self._update(newer, body=carried_body(older, newer), sources=union_sources(newer.sources, older.sources),
                     mtime=newer.mtime, merged_path=older.path, reason=f"carried in the text of {older.path}")

    # -------------------------------------------------------- the actions

    def finish(self) -> None:
        # A memory created or updated and then retired in the same run still gets its
        # action: its entries are accounted for, and apply() archives its final text.
        creates = list(self.created.values())
        updates = [UpdateMemory(record["before"], record["after"], tuple(record["entry_ids"]),
                                tuple(record["merged_paths"]), "; ".join(record["reasons"]))
                   for record in self.updates.values()]
        self.decisions.actions[:0] = [*creates, *updates]


def carried_body(older: Memory, newer: Memory) -> str:
    """`newer`'s body with every paragraph of `older` it does not already hold, as written, under
    a heading that names `older` and its date (headings, lists, **Why:** lines included)."""
    blocks = [block for block in _blocks(older.body) if block.strip() and block.strip() not in newer.body]
    if not blocks:
        return newer.body
    heading = f"## Merged from \"{older.name}\" ({older.file_name}, {older.mtime:%Y-%m-%d})"
    return "\n\n".join([newer.body.rstrip(), heading, *blocks])


def _blocks(body: str) -> list[str]:
    """A body's paragraphs, split at blank lines outside fenced code (judge.fences: a fence is one block)."""
    blocks: list[str] = []
    current: list[str] = []
    lines = body.strip("\n").split("\n")
    for line, code in zip(lines, fenced(lines)):
        if not line.strip() and not code:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def union_sources(first, second) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))
