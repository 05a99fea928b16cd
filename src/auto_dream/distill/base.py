"""The Distiller seam: what a distiller is asked (entries, live memories) and what it answers.

A distiller sees a batch of entries and the live memories and answers with operations:
create, merge into, supersede, skip. The deterministic distiller decides by word overlap
(docs/dream.md); the Claude one asks Claude and falls back to the deterministic one.

Which memories an entry is compared with is asked through `Neighbours`: dream answers from
its parse cache's pair index (dream.candidates), a request without one searches its profiles
(distill.neighbours). The seam points down: dream hands the distiller a Neighbours.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Literal, Protocol, runtime_checkable

from auto_dream.distill.neighbours import ProfileNeighbours
from auto_dream.judge import titles
from auto_dream.judge.similarity import Profile
from auto_dream.progress import NO_PROGRESS, Progress
from auto_dream.store.daylog import Entry, aware
from auto_dream.store.memory import Memory

# The longest name dream makes, from an entry or in Claude's answer (a name a person wrote is
# never cut): a title, not a sentence (judge.titles); and the longest description.
NAME_CHARS = titles.NAME_CHARS
DESCRIPTION_CHARS = titles.DESCRIPTION_CHARS


@dataclass(frozen=True)
class NewMemory:
    type: str
    name: str
    description: str
    body: str


@dataclass(frozen=True)
class Fold:
    """An entry folded into the memory another entry of the same run makes: the report counts it
    as a merge and names it; `added` is what it adds ("" when it only repeats)."""

    entry_id: str
    added: str
    reason: str


@dataclass(frozen=True)
class Create:
    new: NewMemory
    sources: tuple[str, ...]
    reason: str
    folds: tuple[Fold, ...] = ()  # sources after the first, folded into it


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
    folds: tuple[Fold, ...] = ()


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
    kind: Literal["possible_duplicate", "possible_conflict", "marked_superseded"]  # dream.actions.ReviewKind
    evidence: str


@dataclass(frozen=True)
class ReviewDecision:
    case: int  # index into the cases asked about
    action: Literal["merge", "supersede", "keep"]
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


class Neighbours(Protocol):
    """Which memories each entry of a request may be compared with."""

    def candidates(self, threshold: float, aimless_threshold: float | None = None) -> dict[str, set[str]]:
        """For each entry id, the memories whose overlap with it reaches `threshold`. With
        `aimless_threshold`, a pair without grounds (similarity.from_low: neither side can aim a
        signal, nor do both pin something down) must reach that one instead: it may be left out
        below it."""
        ...


@dataclass(frozen=True)
class DistillRequest:
    entries: list[Entry]  # new entries, oldest first
    memories: Mapping[str, Memory]  # live memories by path (in a dream, a view that loads them when asked)
    profiles: Mapping[str, Profile]  # their word profiles (read, never changed)
    thresholds: Thresholds
    tz: tzinfo | None  # the store's timezone, in which entry times are written
    # None: every memory of `profiles` is searched (distill.neighbours.ProfileNeighbours)
    nearby: Neighbours | None = None
    # The dream's time: no entry is later than when it was read, and a memory dated after it
    # has no known order (a back-dated entry or a skewed clock must not outrank every correction).
    now: datetime | None = None
    # told of each entry distilled (the caller has started the stage with the entries' count)
    progress: Progress = NO_PROGRESS

    def entry_time(self, entry: Entry) -> datetime:
        at = aware(entry.at, self.tz)
        return at if self.now is None else min(at, self.now)

    def neighbours(self, threshold: float, aimless_threshold: float | None = None) -> dict[str, set[str]]:
        """Neighbours.candidates of `nearby`, or of the search over `profiles`."""
        nearby = self.nearby if self.nearby is not None else ProfileNeighbours(self.entries, self.profiles)
        return nearby.candidates(threshold, aimless_threshold)


class Distiller(Protocol):
    """One method: entries plus the live memories in, operations out."""

    def distill(self, request: DistillRequest) -> DistillResult: ...


@runtime_checkable
class Reviewer(Protocol):
    """A distiller that can also decide the pairs the judge left for review (the LLM one does):
    merge, supersede or keep both. The deterministic distiller keeps both: it has no reviewer."""

    def review(self, cases: list[ReviewCase], calls_used: int) -> ReviewResult: ...
