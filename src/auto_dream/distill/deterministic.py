"""The deterministic distiller: word overlap decides create, merge, supersede or skip (docs/dream.md).

The Claude distiller (distill.claude) asks Claude instead, and falls back to this one.
"""

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from auto_dream.distill.base import (
    Create,
    DistillRequest,
    DistillResult,
    Fold,
    MergeInto,
    NewMemory,
    Operation,
    Skip,
    Supersede,
    Thresholds,
)
from auto_dream.distill.folds import EXTENDS, added_text, extended_description
from auto_dream.judge.memory_type import guess_type
from auto_dream.judge.pairs import word_ranks
from auto_dream.judge.recent import RECENT_LIMIT, RecentIndex
from auto_dream.judge.similarity import Profile, is_contradiction, overlap
from auto_dream.judge.statements import SIZE_LINE, Side, document_says, judge_statements, said_verbatim
from auto_dream.judge.titles import HOW_LINE, WHY_LINE, title_of
from auto_dream.store.index import shorten
from auto_dream.store.memory import Memory

# ---------------------------------------------------------------- memory text from entries


def body_from_text(memory_type: str, text: str) -> str:
    """The entry as a memory body; feedback and project rules get **Why:** / **How to apply:** lines."""
    rule, why, how = [], [], []
    for line in text.strip().split("\n"):
        if WHY_LINE.match(line):
            why.append(WHY_LINE.sub("", line, count=1).strip())
        elif HOW_LINE.match(line):
            how.append(HOW_LINE.sub("", line, count=1).strip())
        else:
            rule.append(line)
    if memory_type not in ("feedback", "project") or not (why or how) or not "".join(rule).strip():
        return text.strip()
    parts = ["\n".join(rule).strip()]
    if why:
        parts.append("**Why:** " + " ".join(why))
    if how:
        parts.append("**How to apply:** " + " ".join(how))
    return "\n\n".join(parts)


def new_memory_from_text(memory_type: str, text: str) -> NewMemory:
    """A new memory of `text`: its name and description as judge.titles writes them (a short,
    complete phrase; a sentence that adds to it), its body the text."""
    title = title_of(text, memory_type)
    return NewMemory(type=memory_type, name=title.name, description=title.description,
                     body=body_from_text(memory_type, text))


def alike(evidence: str) -> str:
    """The judge's evidence for a merge, said of an entry that adds a fact: alike, not the same."""
    return "alike: " + evidence.removeprefix("says the same: ")


def adds_words(text: str, known: frozenset[str]) -> bool:
    """Whether `text` has a significant word the memory does not (else only its source is added)."""
    return not Profile.of(text).words <= known


# ---------------------------------------------------------------- the deterministic distiller


@dataclass
class _Pending:
    """A memory this batch will create, still open to later entries."""

    type: str
    texts: list[str]
    sources: list[str]
    profile: Profile
    replaces: str | None = None  # a live memory it supersedes
    reason: str = ""
    time: datetime | None = None  # its newest entry's time
    folds: list[Fold] = field(default_factory=list)  # the entries after the first that joined it
    extensions: list[tuple[str, str]] = field(default_factory=list)  # (what an entry added, its text)


class DeterministicDistiller:
    """Word overlap: contradiction first (the newer wins), then duplicate (merge), else create."""

    def distill(self, request: DistillRequest) -> DistillResult:
        memories, thresholds = request.memories, request.thresholds
        grown_profiles: dict[str, Profile] = {}  # merges change profiles here, never in the request

        def profile_of(path: str) -> Profile:
            return grown_profiles[path] if path in grown_profiles else request.profiles[path]

        # a pair without a signal is at most a duplicate: below that threshold it is nothing
        low = min(thresholds.duplicate, thresholds.contradiction)
        nearby = request.neighbours(low, thresholds.duplicate)
        retired: set[str] = set()
        pending: list[_Pending] = []
        # the entries of this run before each one, by type, as the memories they will become
        profiles = [Profile.of(entry.text) for entry in request.entries]
        ranks = word_ranks(Counter(word for profile in profiles for word in profile.words))
        earlier: dict[str, RecentIndex] = {}

        def remember(index: int) -> None:
            group = pending[index]
            if group.type not in earlier:  # made once a type (setdefault would make one each call)
                earlier[group.type] = RecentIndex(ranks, low, max(low, thresholds.duplicate))
            earlier[group.type].put(index, group.profile.words, group.profile.grounds)
        merges: list[MergeInto] = []
        skips: list[Skip] = []
        profile_of_entry = {entry.id: profile for entry, profile in zip(request.entries, profiles)}
        for entry in sorted(request.entries, key=lambda e: e.at):
            entry_type = entry.type or guess_type(entry.text)
            profile = profile_of_entry[entry.id]
            entry_time = request.entry_time(entry)
            # the memories this batch merged into changed their words: they are checked always
            near = nearby.get(entry.id, set()) | grown_profiles.keys()
            entry_side = Side(entry.text, profile, entry_time)
            same_type = earlier.get(entry_type)
            groups = sorted(same_type.recent(profile.words, profile.grounds, RECENT_LIMIT)) if same_type else []
            target = self._closest(entry_side, entry_type, memories, profile_of, retired, pending, thresholds, near,
                                   request.now, groups)
            request.progress.advance()
            if target is None:
                pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_time,
                                        reason=f"new fact from entry {entry.id}"))
                remember(len(pending) - 1)
                continue
            kind, key, evidence = target
            if isinstance(key, str) and kind == "contradiction":
                memory = memories[key]
                if memory.mtime > entry_time:  # known: the judge orders only known times
                    skips.append(Skip((entry.id,), f"contradicted by the newer memory {key}"))
                elif memory.read_only or memory.pinned:
                    pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_time,
                                            reason="new entry (contradicts a memory that is "
                                            + ("pinned" if memory.pinned else "read-only") + f": {key})"))
                    remember(len(pending) - 1)
                else:
                    retired.add(key)
                    pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_time,
                                            replaces=key,
                                            reason=f"entry {entry.id} contradicts {key}: {evidence}; the newer wins"))
                    remember(len(pending) - 1)
            elif isinstance(key, str):  # a duplicate, or said already
                adds = kind == "duplicate" and adds_words(entry.text, profile_of(key).words)
                addition = entry.text.strip() if adds else ""
                added = added_text(memories[key].body or memories[key].description, addition) if adds else ""
                reason = (f"entry {entry.id} {EXTENDS} {key}, adding \u201c{added}\u201d ({alike(evidence)})" if added
                          else f"entry {entry.id} repeats {key}: {evidence}")
                merges.append(MergeInto(key, addition, (entry.id,), reason))
                grown_profiles[key] = profile_of(key).merged_with(profile)
            elif kind == "contradiction":
                old = pending[key]
                skips.append(Skip(tuple(old.sources), f"superseded in the same run by entry {entry.id}"))
                # the new entry replaces what the old one replaced only if it contradicts that too
                replaces = old.replaces
                if replaces and not is_contradiction(profile, profile_of(replaces), thresholds.contradiction):
                    retired.discard(replaces)
                    replaces = None
                pending[key] = _Pending(entry_type, [entry.text], [entry.id], profile, time=entry_time,
                                        replaces=replaces,
                                        reason=f"entry {entry.id} supersedes earlier entries of this run")
                remember(key)
            else:
                group = pending[key]
                added = ""
                if kind == "duplicate" and adds_words(entry.text, group.profile.words):
                    added = added_text("\n\n".join(group.texts), entry.text)
                    group.texts.append(entry.text.strip())
                    group.extensions.append((added, entry.text))
                first = group.sources[0]
                group.folds.append(Fold(entry.id, added,
                                        f"entry {entry.id} {EXTENDS} the memory of entry {first}, adding "
                                        f"\u201c{added}\u201d ({alike(evidence)})" if added
                                        else f"entry {entry.id} repeats entry {first}: {evidence}"))
                group.sources.append(entry.id)
                group.profile = group.profile.merged_with(profile)
                group.time = entry_time
                remember(key)
        operations: list[Operation] = []
        for group in pending:
            new = new_memory_from_text(group.type, group.texts[0])
            if len(group.texts) > 1:
                description = new.description
                for added, text in group.extensions:
                    description = extended_description(description, added, text)
                new = NewMemory(new.type, new.name, description, "\n\n".join([new.body, *group.texts[1:]]))
            if group.replaces:
                operations.append(Supersede(group.replaces, new, tuple(group.sources), group.reason,
                                            tuple(group.folds)))
            else:
                operations.append(Create(new, tuple(group.sources), group.reason, tuple(group.folds)))
        return DistillResult(operations=[*operations, *merges, *skips])

    @staticmethod
    def _closest(entry: Side, entry_type: str, memories: Mapping[str, Memory], profile_of: Callable[[str], Profile],
                 retired: set[str], pending: list[_Pending], thresholds: Thresholds, near: set[str],
                 now: datetime | None, groups: list[int]) -> tuple[str, str | int, str] | None:
        """The best ('contradiction'|'duplicate'|'said', memory path or pending index, evidence), or None.

        An entry is a statement: against a statement memory the judge's statement rules decide
        (judge.judge_statements); a document takes it only when it already says it, and then
        only its source ('said'). What the judge is not certain of becomes a new memory, and the
        memory check lists the pair for review."""
        best: tuple[tuple[bool, float], str, str | int, str] | None = None
        for key, candidate in _candidates(entry_type, memories, profile_of, retired, pending, near, groups):
            score = overlap(entry.profile.words, candidate.words)
            if score < thresholds.contradiction:
                continue
            if isinstance(key, str):
                side = Side.of(memories[key], candidate, now)
            else:
                side = Side("\n\n".join(pending[key].texts), candidate, pending[key].time)
            if said := said_verbatim(side.text, entry.core):
                kind, evidence = "said", f'it already says "{shorten(said, 120)}"'
            elif side.statement and entry.statement and len(side.text) < SIZE_LINE:
                verdict = judge_statements(side, entry, thresholds.duplicate, thresholds.contradiction)
                if verdict.outcome == "supersede":
                    kind = "contradiction"
                elif verdict.outcome == "merge":
                    kind = "duplicate"
                else:
                    continue
                evidence = verdict.evidence
            elif said := document_says(side.text, entry.text):
                kind, evidence = "said", f'it already says "{shorten(said, 120)}"'
            else:
                continue
            if kind == "duplicate" and isinstance(key, str) and memories[key].read_only:
                continue  # never rewritten: a new memory instead
            rank = (kind == "contradiction", score)
            if best is None or rank > best[0]:
                best = (rank, kind, key, evidence)
        return best[1:] if best else None


def _candidates(entry_type: str, memories: Mapping[str, Memory], profile_of: Callable[[str], Profile],
                retired: set[str], pending: list[_Pending], near: set[str],
                groups: list[int]) -> Iterator[tuple[str | int, Profile]]:
    """The memories near the entry, then the groups of this run that `groups` names (oldest first)."""
    for path in sorted(near):
        # a memory a person marked deprecated or superseded takes no new fact: it becomes a memory of its own
        if path not in retired and memories[path].type == entry_type and memories[path].status is None:
            yield path, profile_of(path)
    for index in groups:
        yield index, pending[index].profile
