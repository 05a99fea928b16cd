"""consolidate: new entries become memories (through the distiller), then duplicates and
contradictions among the memories this run changed and the rest (--full: among all)."""

import os
from dataclasses import replace

from auto_dream.distill import (Create, DistillRequest, Distiller, MergeInto, NewMemory, Skip, Supersede,
                                Thresholds, guess_type, new_memory_from_text)
from auto_dream.dream.plan import CreateMemory, SkipEntries, UpdateMemory
from auto_dream.dream.state import DreamState
from auto_dream.dream.views import LiveView
from auto_dream.journal import aware
from auto_dream.memory import Memory, TakenNames, memory_file_name
from auto_dream.dream.nearby import entry_neighbours, memory_pairs
from auto_dream.similarity import Profile, overlap, relation, significant_words


def consolidate(state: DreamState, distiller: Distiller) -> DreamState:
    state.live = LiveView(state.memories)
    run = _Run(state)
    if state.new_entries:
        config = state.context.config
        thresholds = Thresholds(config.duplicate_overlap, config.contradiction_overlap)
        result = distiller.distill(DistillRequest(
            state.new_entries, state.live.copy(), state.profiles, thresholds, state.context.tz,
            lambda threshold, aimless=None: entry_neighbours(state, state.new_entries, threshold, aimless)))
        state.usage = result.usage
        state.warnings.extend(result.notes)
        for operation in result.operations:
            run.apply_operation(operation)
    run.check_memory_pairs()
    run.finish()
    return state


class _Run:
    """The working copy of the store while consolidate plans."""

    def __init__(self, state: DreamState):
        self.state = state
        self.entries = {e.id: e for e in state.new_entries}
        self.created: dict[str, CreateMemory] = {}
        self.updates: dict[str, dict] = {}  # path -> {"before", "entry_ids", "merged_paths", "reasons"}
        self.taken: dict[str, TakenNames] = {}

    # -------------------------------------------------------- entries

    def apply_operation(self, operation) -> None:
        match operation:
            case Create(new=new, sources=sources, reason=reason):
                self._create(new, sources, reason)
            case MergeInto(memory=path, addition=addition, sources=sources, reason=reason):
                self._merge_entries(path, addition, sources, reason)
            case Supersede(memory=path, new=new, sources=sources, reason=reason):
                created = self._create(new, sources, reason)
                old = self.state.live.get(path)
                if old is not None and self.state.retire(old, "supersede", created.path, reason):
                    self._carry_unretracted(old, created)
            case Skip(sources=sources, reason=reason):
                self.state.actions.append(SkipEntries(tuple(sources), reason))

    def _entry_time(self, sources) -> object:
        times = [aware(self.entries[s].at, self.state.context.tz) for s in sources if s in self.entries]
        return max(times) if times else self.state.now

    def _create(self, new: NewMemory, sources, reason: str) -> Memory:
        mtime = self._entry_time(sources)
        folder = f"memories/{new.type}"
        name = memory_file_name(new.name, mtime.date(), self._taken(new.type))
        self._taken(new.type).add(name)
        memory = Memory(path=f"{folder}/{name}", name=new.name, description=new.description, type=new.type,
                        mtime=mtime, body=new.body, sources=tuple(sources))
        self.created[memory.path] = CreateMemory(memory, tuple(sources), reason)
        self.state.live[memory.path] = memory
        self.state.profiles[memory.path] = Profile.of(memory.text())
        return memory

    def _taken(self, memory_type: str) -> TakenNames:
        if memory_type not in self.taken:
            folder = self.state.context.paths.memory_dir(memory_type)
            self.taken[memory_type] = TakenNames(os.listdir(folder) if folder.is_dir() else ())
        return self.taken[memory_type]

    def _merge_entries(self, path: str, addition: str, sources, reason: str) -> None:
        current = self.state.live.get(path)
        if current is None:  # retired meanwhile: the entries still become a memory
            first = self.entries[sources[0]]
            kind = first.type or guess_type(first.text)
            self._create(new_memory_from_text(kind, addition or first.text), sources, reason)
            return
        body = current.body + ("\n\n" + addition if addition and addition not in current.body else "")
        mtime = max(current.mtime, self._entry_time(sources))
        self._update(current, body=body, sources=_union(current.sources, sources), mtime=mtime,
                     entry_ids=tuple(sources), reason=reason)

    def _update(self, current: Memory, *, body: str, sources, mtime, entry_ids=(), merged_path=None,
                reason: str, words: frozenset[str] | None = None) -> None:
        updated = replace(current, body=body, sources=tuple(sources), mtime=mtime)
        self.state.live[current.path] = updated
        self.state.profiles.rewritten(updated, words)
        if current.path in self.created:
            old = self.created[current.path]
            self.created[current.path] = CreateMemory(updated, old.entry_ids + tuple(entry_ids), old.reason)
            return
        record = self.updates.setdefault(current.path, {"before": self.state.memories[current.path],
                                                        "entry_ids": [], "merged_paths": [], "reasons": []})
        record["after"] = updated
        record["entry_ids"].extend(entry_ids)
        if merged_path:
            record["merged_paths"].append(merged_path)
        record["reasons"].append(reason)

    # -------------------------------------------------------- memories among themselves

    def check_memory_pairs(self) -> None:
        state = self.state
        config = state.context.config
        changed = {p for p in (*state.changed, *self.created, *self.updates) if p in state.live}
        if not changed:
            return
        pairs = []
        thresholds = Thresholds(config.duplicate_overlap, config.contradiction_overlap)
        for a, b in sorted(memory_pairs(state, changed, thresholds)):
            found = relation(state.profiles[a], state.profiles[b], config.duplicate_overlap,
                             config.contradiction_overlap)
            if found:
                pairs.append((overlap(state.profiles[a].words, state.profiles[b].words), found, a, b))
        for score, found, a, b in sorted(pairs, key=lambda p: (-p[0], p[2], p[3])):
            if a not in state.live or b not in state.live:
                continue
            older, newer = sorted((state.live[a], state.live[b]), key=lambda m: (m.mtime, m.path))
            if older.pinned or older.read_only or newer.read_only:
                state.warnings.append(f"{older.path} and {newer.path} look like a {found}, but "
                                      f"{'a pinned' if older.pinned else 'a read-only'} memory is never "
                                      "retired automatically: left for you to decide")
                continue
            if found == "contradiction":
                if state.retire(older, "supersede", newer.path,
                                f"contradicted by the newer {newer.path} (overlap {score:.2f}); the newer wins"):
                    self._carry_unretracted(older, state.live[newer.path])
            elif state.next_retirement() == "apply":
                self._carry(older, newer)
                state.retire(older, "merge", newer.path, f"duplicate of {newer.path} (overlap {score:.2f}); "
                             "its details and sources carried into the newer one")
            else:
                state.retire(older, "merge", newer.path, f"duplicate of {newer.path} (overlap {score:.2f})")

    def _carry_unretracted(self, older: Memory, newer: Memory) -> None:
        """A superseded memory's other facts (not the retracted statement, nor its Why/How) live on."""
        config = self.state.context.config
        successor = self.state.profiles.words(newer.path)
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
        """The older duplicate's distinct paragraphs and sources go into the survivor: lose no data."""
        known = self.state.profiles.words(newer.path)
        extra, extra_words = [], []
        for paragraph in (p.strip() for p in older.body.split("\n\n")):
            if paragraph and paragraph not in newer.body and not (words := significant_words(paragraph)) <= known:
                extra.append(paragraph)
                extra_words.append(words)
        body = "\n\n".join([newer.body.strip(), *extra]) if extra else newer.body
        # paragraphs never share a word across their blank line: the words of the whole are the union
        self._update(newer, body=body, sources=_union(newer.sources, older.sources), mtime=newer.mtime,
                     merged_path=older.path, words=known.union(*extra_words),
                     reason=f"carried in the details of {older.path}")

    # -------------------------------------------------------- the actions

    def finish(self) -> None:
        state = self.state
        # A memory created or updated and then retired in the same run still gets its
        # action: its entries are accounted for, and apply() archives its final text.
        creates = list(self.created.values())
        updates = [UpdateMemory(record["before"], record["after"], tuple(record["entry_ids"]),
                                tuple(record["merged_paths"]), "; ".join(record["reasons"]))
                   for record in self.updates.values()]
        state.actions[:0] = [*creates, *updates]


def _union(first, second) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))
