"""prune: staleness classes and guards; archive what is fully stale."""

import re
from datetime import timedelta

from auto_dream.dream.snapshot import Decisions, Snapshot
from auto_dream.judge.staleness import (
    EVERGREEN,
    FULLY_STALE,
    PARTIALLY_STALE,
    assess_staleness,
)
from auto_dream.store.memory import Memory

# A memory that exists to prevent a regression outlives the code it cites.
_DIRECTIVE = re.compile(r"\b(?:do not|don't|never|avoid)\b|不要|禁止|切勿|别再|しない|してはいけない|禁止", re.I)


def prune_guard(memory: Memory, snapshot: Snapshot) -> str | None:
    """Why a FULLY_STALE memory is kept anyway (flagged), or None when it may be archived."""
    guard_days = snapshot.context.config.guard_days
    if memory.type == "user":
        return "type user is never pruned for staleness"
    if memory.type in ("feedback", "reference"):
        return f"type {memory.type}: its value is the lesson, not its file references"
    if memory.pinned:
        return "pinned"
    if snapshot.now - memory.mtime < timedelta(days=guard_days):
        return f"modified within {guard_days} days"
    if _DIRECTIVE.search(memory.body):
        return "carries a do-not/never directive"
    if memory.read_only:
        return f"never rewritten ({memory.read_only})"
    if _consulted(memory, snapshot.consulted_terms):
        return f"looked up within {guard_days} days (consult log)"
    return None


def _consulted(memory: Memory, terms: frozenset[str]) -> bool:
    """Fuzzy on purpose, like the seed: a maybe-consulted memory is kept."""
    if not terms:
        return False
    slug = memory.file_name.removesuffix(".md").lower()
    name = memory.name.lower()
    return name in terms or any(t in slug or t in name for t in terms if len(t) >= 2)


def prune(snapshot: Snapshot, decisions: Decisions) -> None:
    """Into `decisions`: the staleness counts, the memories flagged, and the fully stale ones retired."""
    # A memory that cites no file or symbol is evergreen: only the others are looked at.
    live = decisions.live
    references = live.references()
    live.load(references)
    cited = [(live[path], references[path]) for path in sorted(references)]
    repository = snapshot.repository if cited else None
    staleness = assess_staleness([m for m, _ in cited], repository, {m.path: refs for m, refs in cited})
    counts = {"evergreen": len(live) - len(cited), "partially_stale": 0}
    for memory, _ in cited:
        result = staleness[memory.path]
        if result.classification == EVERGREEN:
            counts["evergreen"] += 1
        elif result.classification == PARTIALLY_STALE:
            counts["partially_stale"] += 1
            decisions.flagged.append((memory.path, result.missing_refs))
        elif result.classification == FULLY_STALE:
            guard = prune_guard(memory, snapshot)
            if guard:
                counts["partially_stale"] += 1
                decisions.flagged.append((memory.path, result.missing_refs))
                decisions.warnings.append(f"{memory.path}: every reference is gone, kept: {guard}")
            else:
                decisions.retire(memory, "archive", None, "fully stale: every referenced file and symbol is gone ("
                                 + ", ".join(result.missing_refs) + ")")
    decisions.counts = counts
