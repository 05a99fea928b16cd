"""A dream's plan: a closed set of typed actions, each with its reason. Only apply() acts on it."""

from dataclasses import dataclass, field

from auto_dream.distill.base import LlmUsage
from auto_dream.store.memory import Memory


@dataclass(frozen=True)
class CreateMemory:
    memory: Memory
    entry_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class UpdateMemory:
    """A live memory that gains text and sources: merged entries, or a retired duplicate's details."""

    before: Memory
    after: Memory
    entry_ids: tuple[str, ...]
    merged_paths: tuple[str, ...]  # memories whose details were carried in
    reason: str


@dataclass(frozen=True)
class RetireMemory:
    """Move a memory to archive/: superseded, merged into another, or stale. Never a delete."""

    memory: Memory
    kind: str  # "supersede" | "merge" | "archive"
    target: str | None  # the memory that replaces it
    reason: str
    proposed: bool = False  # --propose: listed, not applied


@dataclass(frozen=True)
class SkipEntries:
    """Entries that become no memory (retracted by a newer memory, or trivia); the log keeps them."""

    entry_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class ReviewPair:
    """A pair dream did not act on: kept both, listed for a person (or the LLM) to decide."""

    kind: str  # "possible_duplicate" | "possible_conflict"
    path: str
    target: str
    evidence: str


@dataclass(frozen=True)
class RebuildIndex:
    text: str
    listed: int
    omitted: int


Action = CreateMemory | UpdateMemory | RetireMemory | SkipEntries | RebuildIndex


@dataclass
class Plan:
    run_id: str
    dry_run: bool
    mode: str  # "apply" | "propose"
    actions: list[Action] = field(default_factory=list)
    deferred: list[RetireMemory] = field(default_factory=list)  # over the retirement budget
    flagged: list[tuple[str, list[str]]] = field(default_factory=list)  # (path, missing refs)
    review: list[ReviewPair] = field(default_factory=list)  # pairs left for a person to decide
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # scanned, evergreen, partially_stale…
    usage: LlmUsage = field(default_factory=LlmUsage)
    entry_logs: dict[str, str] = field(default_factory=dict)  # entry id -> its log file
