"""orient: load the memories, what changed since the last dream, and dream's own state."""

from collections import Counter
from datetime import datetime

from auto_dream.context import StoreContext
from auto_dream.dream import bookkeeping
from auto_dream.dream.state import DreamOptions, DreamState
from auto_dream.similarity import Profile
from auto_dream.staleness import find_repo
from auto_dream.cache import ParseCache
from auto_dream.pairs import word_ranks
from auto_dream.store import scan_memories


READ_ONLY_NAMED = 20


def orient(context: StoreContext, now: datetime, run_id: str, options: DreamOptions) -> DreamState:
    cache = ParseCache.load(context.paths)
    first_dream = not cache.loaded_shards
    scan = scan_memories(context.paths, context.tz, cache=cache)
    state = DreamState(context=context, now=now, run_id=run_id, options=options, cache=cache)
    state.memories = {m.path: m for m in scan.memories}
    state.unreadable = scan.unreadable
    state.fingerprints = scan.fingerprints
    for memory in scan.memories:
        parsed = scan.parsed.get(memory.path)
        state.profiles[memory.path] = parsed.profile if parsed else Profile.of(memory.text(), memory)
        if parsed:
            state.refs[memory.path] = parsed.refs
    state.word_ranks = word_ranks(Counter(w for profile in state.profiles.values() for w in profile.words))
    if options.full or first_dream:
        state.changed = set(state.memories)
    else:  # new or changed since the last dream saved the cache, and what a budget deferred
        state.changed = set(state.memories) - scan.unchanged
        state.changed |= bookkeeping.read_recheck(context.paths) & set(state.memories)
    state.distilled_ids = bookkeeping.read_distilled_ids(context.paths)
    state.repo = find_repo(context.paths.root, context.config.repo)
    for bad in scan.unreadable:
        state.warnings.append(f"{bad.path}: {bad.reason} (left untouched)")
    read_only = [m for m in scan.memories if m.read_only]
    for memory in read_only[:READ_ONLY_NAMED]:
        state.warnings.append(f"{memory.path}: read, but never rewritten: {memory.read_only}")
    if len(read_only) > READ_ONLY_NAMED:  # a Claude Code store may hold hundreds without frontmatter
        state.warnings.append(f"… and {len(read_only) - READ_ONLY_NAMED} more memory files read but never "
                              "rewritten (no frontmatter, CRLF line ends…)")
    return state
