"""The actions a dream can plan: a closed set of frozen dataclasses, each with its reason.
Phases build them, plan.py turns them into file changes, apply() carries them out."""

from dataclasses import dataclass
from typing import Literal

from auto_dream.distill.base import Fold
from auto_dream.store.memory import Memory
from auto_dream.store.review_queue import ItemKind

# How a memory leaves the live store (RetireMemory.kind), and what a pair left for a reader is
# (ReviewPair.kind): each vocabulary defined once, here.
RetireKind = Literal["supersede", "merge", "archive"]
ReviewKind = Literal["possible_duplicate", "possible_conflict", "marked_superseded"]
# ... and the review queue's kind of item for each (store/review_queue.py), both ways
QUEUE_KINDS: dict[ReviewKind, ItemKind] = {"possible_conflict": "conflict", "possible_duplicate": "duplicate",
                                           "marked_superseded": "superseded"}
REVIEW_KINDS: dict[ItemKind, ReviewKind] = {queued: kind for kind, queued in QUEUE_KINDS.items()}


@dataclass(frozen=True)
class CreateMemory:
    memory: Memory
    entry_ids: tuple[str, ...]
    reason: str
    folds: tuple[Fold, ...] = ()  # entries of the run folded into it after the first (each a merge)


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
    kind: RetireKind
    target: str | None  # the memory that replaces it
    reason: str
    proposed: bool = False  # --propose: listed, not applied
    archived: Memory | None = None  # the copy archive/ will hold (its path and frontmatter): planned last


@dataclass(frozen=True)
class SkipEntries:
    """Entries that become no memory (retracted by a newer memory, or trivia); the log keeps them."""

    entry_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class ReviewPair:
    """A pair dream did not act on: kept both, listed for a person (or the LLM) to decide."""

    kind: ReviewKind  # marked_superseded: a person marked `path` so
    path: str
    target: str
    evidence: str
    quotes: tuple[str, str] = ("", "")  # the deciding sentence of `path`, then of `target`, whole


@dataclass(frozen=True)
class RebuildIndex:
    text: str
    listed: int
    omitted: int


Action = CreateMemory | UpdateMemory | RetireMemory | SkipEntries | RebuildIndex
