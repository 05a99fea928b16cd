"""`check`: freshness and staleness of every memory, entries waiting, whether a dream is due,
whether MEMORY.md is in sync."""

from dataclasses import dataclass, field, replace
from datetime import datetime

from auto_dream.commands.listing import age_days, freshness
from auto_dream.dream.bookkeeping import dream_is_due, read_distilled_ids, read_last_dream
from auto_dream.judge.staleness import assess_staleness
from auto_dream.judge.status import Status
from auto_dream.store.cache import ParseCache
from auto_dream.store.claude_home import repo_for_folder
from auto_dream.store.context import StoreContext
from auto_dream.store.daylog import LogProblem, read_all_entries
from auto_dream.store.memory import Unreadable, shown
from auto_dream.store.memory_md import activity_at, index_in_sync, marked_memories
from auto_dream.store.repository import open_repository
from auto_dream.store.review_queue import pending, read_queue
from auto_dream.store.scan import scan_memories


@dataclass(frozen=True)
class MemoryHealth:
    """One memory as `check` shows it (`path` and `name` safe to print); `as_json` gives the exact path."""

    path: str
    name: str
    type: str
    age_days: int
    freshness: str
    staleness: str  # EVERGREEN, FRESH, PARTIALLY_STALE or FULLY_STALE
    missing_refs: list[str] = field(default_factory=list)
    exact_path: str = field(default="", repr=False, compare=False)
    status: Status | None = None  # what a person wrote of its status: deprecated, superseded… (judge.status)

    def as_json(self) -> dict[str, object]:
        return {"path": self.exact_path or self.path, "freshness": self.freshness, "staleness": self.staleness,
                "missing_refs": self.missing_refs, "status": self.status.as_json() if self.status else None}


@dataclass(frozen=True)
class CheckResult:
    undistilled_entries: int
    last_dream: datetime | None
    dream_due: bool
    index_in_sync: bool
    memories: list[MemoryHealth]
    unreadable: list[Unreadable]
    log_problems: list[LogProblem]
    decayed: int = 0  # memories neither changed nor looked up within decay_days
    decay_days: int = 0
    decay_in_index: bool = True  # our own MEMORY.md lists the decayed last; a Claude Code folder's is theirs
    review_pending: int = 0  # decisions dream left for a reader (`auto-dream review`)

    def as_json(self) -> dict[str, object]:
        return {
            "undistilled_entries": self.undistilled_entries,
            "last_dream": self.last_dream.isoformat(timespec="seconds") if self.last_dream else None,
            "dream_due": self.dream_due,
            "index_in_sync": self.index_in_sync,
            "decayed": self.decayed,
            "review_pending": self.review_pending,
            "memories": [m.as_json() for m in self.memories],
        }


def check_store(context: StoreContext, now: datetime) -> CheckResult:
    scan = scan_memories(context.paths, context.tz, cache=ParseCache.load(context.paths), memo=context.read_memo)
    entries, log_problems = read_all_entries(context.paths)
    distilled = read_distilled_ids(context.paths)
    waiting = sum(1 for e in entries if e.id not in distilled)
    last_dream = read_last_dream(context.paths)
    repo, _ = repo_for_folder(context.paths.root, context.config.repo, context.home, context.claude_config_dir)
    staleness = assess_staleness(scan.memories, open_repository(repo, exclude=context.paths.root),
                                 {path: parsed.refs for path, parsed in scan.parsed.items()})
    activity = activity_at(context, now)
    newest = max((memory.mtime for memory in scan.memories), default=None)
    activity = replace(activity, newest=newest) if activity.cutoff is not None else activity
    marked = marked_memories(context, scan.memories)
    health = []
    for memory in sorted(scan.memories, key=lambda m: m.path):
        days = age_days(memory, now)
        result = staleness[memory.path]
        health.append(MemoryHealth(shown(memory.path), shown(memory.name), memory.type, days, freshness(days),
                                   result.classification, result.missing_refs, exact_path=memory.path,
                                   status=marked.get(memory.path)))
    return CheckResult(
        undistilled_entries=waiting,
        last_dream=last_dream,
        dream_due=dream_is_due(last_dream, waiting, context.config.due_hours, context.config.due_entries, now),
        index_in_sync=index_in_sync(context, scan, now),
        memories=health,
        unreadable=scan.unreadable,
        log_problems=log_problems,
        decayed=sum(1 for memory in scan.memories if activity.decayed(memory)),
        decay_in_index=not context.paths.person_index,
        decay_days=context.config.decay_days,
        review_pending=len(pending(read_queue(context.paths)[0], {m.path: m for m in scan.memories})[0]),
    )
