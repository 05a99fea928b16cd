"""orient: load the memories, what changed since the last dream, and dream's own state."""

from datetime import datetime

from auto_dream.context import StoreContext
from auto_dream.dream import bookkeeping
from auto_dream.dream.state import DreamOptions, DreamState
from auto_dream.similarity import Profile
from auto_dream.staleness import find_repo
from auto_dream.store import scan_memories


def orient(context: StoreContext, now: datetime, run_id: str, options: DreamOptions) -> DreamState:
    scan = scan_memories(context.paths, context.tz)
    state = DreamState(context=context, now=now, run_id=run_id, options=options)
    state.memories = {m.path: m for m in scan.memories}
    state.unreadable = scan.unreadable
    state.fingerprints = scan.fingerprints
    state.profiles = {m.path: Profile.of(m.text()) for m in scan.memories}
    previous = bookkeeping.read_fingerprints(context.paths)
    if options.full or previous is None:
        state.changed = set(state.memories)
    else:
        state.changed = {path for path, seen in scan.fingerprints.items()
                         if path in state.memories and previous.get(path) != list(seen)}
        state.changed |= bookkeeping.read_recheck(context.paths) & set(state.memories)
    state.distilled_ids = bookkeeping.read_distilled_ids(context.paths)
    state.repo = find_repo(context.paths.root, context.config.repo)
    for bad in scan.unreadable:
        state.warnings.append(f"{bad.path}: {bad.reason} (left untouched)")
    return state
