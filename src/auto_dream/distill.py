"""Turning new log entries into memory operations: the Distiller seam and its deterministic side.

A distiller sees a batch of entries and the live memories and answers with operations:
create, merge into, supersede, skip. The deterministic distiller decides by word overlap
(DESIGN 3.2); the Anthropic one (issue 4) asks Claude and falls back to this one.
"""

import re
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Protocol

from auto_dream.index import shorten
from auto_dream.journal import Entry, aware
from auto_dream.judge import SIZE_LINE, Side, document_says, judge_statements
from auto_dream.kinds import guess_type  # noqa: F401 (re-exported: the distiller's typing of untyped entries)
from auto_dream.memory import Memory
from auto_dream.pairs import indexed_pairs
from auto_dream.similarity import Profile, is_contradiction, overlap

NAME_CHARS = 60
DESCRIPTION_CHARS = 150


@dataclass(frozen=True)
class NewMemory:
    type: str
    name: str
    description: str
    body: str


@dataclass(frozen=True)
class Create:
    new: NewMemory
    sources: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class MergeInto:
    memory: str  # path of a live memory
    addition: str  # text to add to its body ("" when the entry adds no new word)
    sources: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Supersede:
    memory: str  # path of the live memory the new one replaces
    new: NewMemory
    sources: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Skip:
    sources: tuple[str, ...]
    reason: str


Operation = Create | MergeInto | Supersede | Skip


@dataclass(frozen=True)
class Thresholds:
    duplicate: float = 0.6
    contradiction: float = 0.4


@dataclass
class LlmUsage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated_cost_usd: float = 0.0
    fallback_batches: int = 0

    def add(self, other: "LlmUsage") -> None:
        for name in ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                     "estimated_cost_usd", "fallback_batches"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass(frozen=True)
class ReviewCase:
    """A pair the judge was not certain of (a possible duplicate or conflict), for the LLM to decide."""

    a: Memory
    b: Memory
    kind: str  # "possible_duplicate" | "possible_conflict"
    evidence: str


@dataclass(frozen=True)
class ReviewDecision:
    case: int  # index into the cases asked about
    action: str  # "merge" | "supersede" | "keep"
    retire: str | None  # path of the memory that leaves (merge, supersede)
    reason: str


@dataclass
class ReviewResult:
    decisions: list[ReviewDecision]
    usage: "LlmUsage"
    notes: list[str] = field(default_factory=list)  # batches that kept both because the LLM failed, and why


@dataclass
class DistillResult:
    operations: list[Operation]
    usage: LlmUsage = field(default_factory=LlmUsage)
    notes: list[str] = field(default_factory=list)  # batches that fell back, and why


@dataclass(frozen=True)
class DistillRequest:
    entries: list[Entry]  # new entries, oldest first
    memories: Mapping[str, Memory]  # live memories by path (in a dream, a view that loads them when asked)
    profiles: Mapping[str, Profile]  # their word profiles (read, never changed)
    thresholds: Thresholds
    tz: tzinfo | None  # the store's timezone, in which entry times are written
    # For each entry id, the memories whose overlap with it reaches a threshold: dream's pair
    # index (dream.nearby); None: searched here over `profiles`.
    nearby: Callable[[float, float | None], dict[str, set[str]]] | None = None
    # The dream's time: no entry is later than when it was read, and a memory dated after it
    # has no known order (a back-dated entry or a skewed clock must not outrank every correction).
    now: datetime | None = None

    def entry_time(self, entry: Entry) -> datetime:
        at = aware(entry.at, self.tz)
        return at if self.now is None else min(at, self.now)

    def neighbours(self, threshold: float, aimless_threshold: float | None = None) -> dict[str, set[str]]:
        """For each entry id, the memories whose overlap with it reaches `threshold`. With
        `aimless_threshold`, a pair in which neither side can aim a signal (Profile.aims, so
        no contradiction) must reach that one instead: it may be left out below it."""
        if self.nearby is not None:
            return self.nearby(threshold, aimless_threshold)
        return entry_candidates(self.entries, self.profiles, threshold)


class Distiller(Protocol):
    """One method: entries plus the live memories in, operations out."""

    def distill(self, request: DistillRequest) -> DistillResult: ...


class Reviewer(Protocol):
    """A distiller that can also decide the pairs the judge left for review (the LLM one does):
    merge, supersede or keep both. The deterministic distiller keeps both: it has no reviewer."""

    def review(self, cases: list[ReviewCase], calls_used: int) -> ReviewResult: ...


# ---------------------------------------------------------------- memory text from entries

_WHY = re.compile(r"^\s*(?:reason|why|because)\s*[:：]\s*|^\s*(?:原因|理由|因为)\s*[:：]\s*", re.IGNORECASE)
_HOW = re.compile(r"^\s*(?:how to apply|how|apply)\s*[:：]\s*|^\s*(?:做法|如何应用)\s*[:：]\s*", re.IGNORECASE)


def body_from_text(memory_type: str, text: str) -> str:
    """The entry as a memory body; feedback and project rules get **Why:** / **How to apply:** lines."""
    rule, why, how = [], [], []
    for line in text.strip().split("\n"):
        if _WHY.match(line):
            why.append(_WHY.sub("", line, count=1).strip())
        elif _HOW.match(line):
            how.append(_HOW.sub("", line, count=1).strip())
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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？；;])")


def new_memory_from_text(memory_type: str, text: str) -> NewMemory:
    """Name: the first sentence, short; description: the whole text on one line, ≤ 150 characters."""
    flat = " ".join(text.split())
    first = _SENTENCE_END.split(" ".join(text.strip().split("\n", 1)[0].split()), maxsplit=1)[0]
    name = shorten(first.rstrip(".。!！;；,， "), NAME_CHARS) or "memory"
    return NewMemory(type=memory_type, name=name, description=shorten(flat, DESCRIPTION_CHARS),
                     body=body_from_text(memory_type, text))


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
    time: object = None  # its newest entry's time


class DeterministicDistiller:
    """Word overlap: contradiction first (the newer wins), then duplicate (merge), else create."""

    def distill(self, request: DistillRequest) -> DistillResult:
        memories, thresholds = request.memories, request.thresholds
        live = ChainMap({}, request.profiles)  # merges change profiles here, never in the request
        # a pair without a signal is at most a duplicate: below that threshold it is nothing
        nearby = request.neighbours(min(thresholds.duplicate, thresholds.contradiction), thresholds.duplicate)
        retired: set[str] = set()
        grown: set[str] = set()  # memories this batch merged into: their words changed, check them always
        pending: list[_Pending] = []
        merges: list[MergeInto] = []
        skips: list[Skip] = []
        for entry in sorted(request.entries, key=lambda e: e.at):
            entry_type = entry.type or guess_type(entry.text)
            profile = Profile.of(entry.text)
            near = nearby.get(entry.id, set()) | grown
            entry_side = Side(entry.text, profile, request.entry_time(entry))
            target = self._closest(entry_side, entry_type, memories, live, retired, pending, thresholds, near,
                                   request.now)
            kind, key, evidence = target if target else (None, None, "")
            if kind == "contradiction" and isinstance(key, str):
                memory = memories[key]
                if memory.mtime > entry_side.time:  # known: the judge orders only known times
                    skips.append(Skip((entry.id,), f"contradicted by the newer memory {key}"))
                elif memory.read_only or memory.pinned:
                    pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_side.time,
                                            reason="new entry (contradicts a memory that is "
                                            + ("pinned" if memory.pinned else "read-only") + f": {key})"))
                else:
                    retired.add(key)
                    pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_side.time,
                                            replaces=key,
                                            reason=f"entry {entry.id} contradicts {key}: {evidence}; the newer wins"))
            elif kind == "contradiction":
                old = pending[key]
                skips.append(Skip(tuple(old.sources), f"superseded in the same run by entry {entry.id}"))
                # the new entry replaces what the old one replaced only if it contradicts that too
                replaces = old.replaces
                if replaces and not is_contradiction(profile, live[replaces], thresholds.contradiction):
                    retired.discard(replaces)
                    replaces = None
                pending[key] = _Pending(entry_type, [entry.text], [entry.id], profile, time=entry_side.time,
                                        replaces=replaces,
                                        reason=f"entry {entry.id} supersedes earlier entries of this run")
            elif kind in ("duplicate", "said") and isinstance(key, str):
                adds = kind == "duplicate" and adds_words(entry.text, live[key].words)
                addition = entry.text.strip() if adds else ""
                merges.append(MergeInto(key, addition, (entry.id,), f"entry {entry.id} repeats {key}: {evidence}"))
                live[key] = live[key].merged_with(profile)
                grown.add(key)
            elif kind in ("duplicate", "said"):
                group = pending[key]
                if kind == "duplicate" and adds_words(entry.text, group.profile.words):
                    group.texts.append(entry.text.strip())
                group.sources.append(entry.id)
                group.profile = group.profile.merged_with(profile)
                group.time = entry_side.time
            else:
                pending.append(_Pending(entry_type, [entry.text], [entry.id], profile, time=entry_side.time,
                                        reason=f"new fact from entry {entry.id}"))
        operations: list[Operation] = []
        for group in pending:
            new = new_memory_from_text(group.type, group.texts[0])
            if len(group.texts) > 1:
                new = NewMemory(new.type, new.name, new.description,
                                "\n\n".join([new.body, *group.texts[1:]]))
            if group.replaces:
                operations.append(Supersede(group.replaces, new, tuple(group.sources), group.reason))
            else:
                operations.append(Create(new, tuple(group.sources), group.reason))
        return DistillResult(operations=[*operations, *merges, *skips])

    @staticmethod
    def _closest(entry: "Side", entry_type, memories, live, retired, pending, thresholds, near, now=None):
        """The best ('contradiction'|'duplicate'|'said', memory path or pending index, evidence), or None.

        An entry is a statement: against a statement memory the judge's statement rules decide
        (judge.judge_statements); a document takes it only when it already says it, and then
        only its source ('said'). What the judge is not certain of becomes a new memory, and the
        memory check lists the pair for review."""
        best = None
        for key, candidate in _candidates(entry_type, memories, live, retired, pending, near):
            score = overlap(entry.profile.words, candidate.words)
            if score < thresholds.contradiction:
                continue
            if isinstance(key, str):
                side = Side.of(memories[key], candidate, now)
            else:
                side = Side("\n\n".join(pending[key].texts), candidate, pending[key].time)
            if side.statement and entry.statement and len(side.text) < SIZE_LINE:
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


def entry_candidates(entries: list[Entry], profiles: Mapping[str, Profile], threshold: float) -> dict[str, set[str]]:
    """For each entry, the memories whose words overlap it at `threshold` or more (found by index)."""
    pool: dict = {("memory", path): profile.words for path, profile in profiles.items()}
    pool.update({("entry", e.id): Profile.of(e.text).words for e in entries})
    found: dict[str, set[str]] = {}
    for a, b in indexed_pairs([("entry", e.id) for e in entries], pool, threshold, across_only=True):
        if a[0] != b[0]:
            entry_key, memory_key = (a, b) if a[0] == "entry" else (b, a)
            found.setdefault(entry_key[1], set()).add(memory_key[1])
    return found


def _candidates(entry_type, memories, live, retired, pending, near):
    for path in sorted(near):
        if path not in retired and memories[path].type == entry_type:
            yield path, live[path]
    for index, group in enumerate(pending):
        if group.type == entry_type:
            yield index, group.profile
