"""`review`, `resolve` and `forget`: the decisions dream left to a reader, and the reader's answers.

`review` lists the pending items of the review queue (store/review_queue.py); `resolve`
carries out a decision about one (keep both, merge, supersede) and `forget` archives a
memory someone says is wrong. Both are runs of their own (dream/decide.py): journaled, so
`auto-dream undo` reverses them.
"""

from dataclasses import dataclass
from datetime import datetime

from auto_dream.dream.decide import RESOLUTIONS, Decision
from auto_dream.dream.runner import DreamOutcome
from auto_dream.dream.runner import decide as run_decision
from auto_dream.errors import InputError
from auto_dream.progress import NO_PROGRESS, Progress
from auto_dream.store.context import StoreContext
from auto_dream.store.review_queue import ReviewItem, pending, read_queue, read_sides


@dataclass(frozen=True)
class ReviewList:
    items: list[ReviewItem]  # pending: both memories as the item saw them
    changed: list[ReviewItem]  # a side changed or went since: the next dream judges the pair again

    def as_json(self) -> dict[str, object]:
        return {"items": [item.as_json() for item in self.items],
                "changed": [item.id for item in self.changed]}


def review_items(context: StoreContext) -> ReviewList:
    """The decisions that wait, oldest first."""
    queue, _ = read_queue(context.paths)
    waiting, changed = pending(queue, read_sides(context.paths, queue))
    return ReviewList(waiting, changed)


def resolve(context: StoreContext, now: datetime, item: str, action: str, *, into: str | None = None,
            winner: str | None = None, reason: str = "", by: str = "a reader",
            progress: Progress = NO_PROGRESS) -> DreamOutcome:
    """Decide review item `item`: keep both (remembered while both stay as they are), merge the
    other into `into`, or supersede the other by `winner`. Journaled: `undo` reverses it."""
    if action not in RESOLUTIONS:
        raise InputError(f"unknown decision {action!r}: use keep, merge or supersede")
    if action == "merge" and winner or action == "supersede" and into:
        raise InputError("merge takes --into PATH, supersede takes --winner PATH")
    if action == "keep" and (into or winner):
        raise InputError("keep leaves both memories as they are: it takes no --into or --winner")
    memory = into if action == "merge" else winner
    return run_decision(context, now, Decision(action, item, memory, reason.strip(), by), progress)


def forget(context: StoreContext, now: datetime, memory: str, *, reason: str = "", by: str = "a reader",
           progress: Progress = NO_PROGRESS) -> DreamOutcome:
    """Archive the memory `memory` names (a path, file name or name), with the reason. Journaled:
    `undo` reverses it."""
    return run_decision(context, now, Decision("forget", None, memory, reason.strip(), by), progress)
