"""orient: load the memories, what changed since the last dream, and dream's own state, into
a frozen Snapshot (gather adds the log entries)."""

from datetime import datetime

from auto_dream.dream import bookkeeping
from auto_dream.dream.snapshot import DreamOptions, Snapshot
from auto_dream.judge.similarity import Profile
from auto_dream.store.cache import ParseCache
from auto_dream.store.claude_home import repo_for_folder
from auto_dream.store.context import StoreContext
from auto_dream.store.memory import archived_names, folder_names
from auto_dream.store.memory_md import read_index_inputs
from auto_dream.store.paths import MEMORY_TYPES
from auto_dream.store.repository import open_repository
from auto_dream.store.review_queue import read_queue
from auto_dream.store.scan import scan_store
from auto_dream.store.undistilled import distilled_ids_in
from auto_dream.store.views import StoreView

READ_ONLY_NAMED = 20


def orient(context: StoreContext, now: datetime, run_id: str, options: DreamOptions,
           cache: ParseCache | None = None) -> Snapshot:
    """The Snapshot of the store at `now`, its memories read through the parse cache `cache`
    (the runner's, which it updates after apply; None: loaded here, for a caller that plans only)."""
    cache = cache if cache is not None else load_cache(context, options)
    scan = scan_store(context.paths, context.tz, cache=cache)
    memories = StoreView(scan, cache)  # the cached memories are loaded when asked for

    def profile(path: str) -> Profile:
        parsed = scan.parsed.get(path)
        if parsed is not None and parsed.profile is not None:
            return parsed.profile
        if path in scan.unchanged:
            return cache.profile(path)
        return Profile.of(memories[path].text(), memories[path])

    def profiles_of(paths: list[str]) -> dict[str, Profile]:
        """profile() of those `paths` the cache answers for, in a few queries."""
        return cache.profiles([p for p in paths if p in scan.unchanged and p not in scan.parsed])

    if options.full or not cache.found:  # --full, or the first dream: every memory against every other
        changed, stored = frozenset(scan.paths), frozenset[str]()
    else:  # new or changed since the last dream saved the cache, and what a budget deferred
        changed = frozenset({*scan.read, *(p for p in bookkeeping.read_recheck(context.paths) if p in memories)})
        stored = frozenset(scan.unchanged - changed)  # the cache's pair index answers for these
    warnings = [f"{bad.path}: {bad.reason} (left untouched)" for bad in scan.unreadable]
    queue, queue_data = read_queue(context.paths)
    read_only = [m for m in scan.read.values()  # a cached memory never is; MEMORY.md's overflow always is
                 if m.read_only and m.path != context.paths.overflow_name]
    for memory in read_only[:READ_ONLY_NAMED]:
        warnings.append(f"{memory.path}: read, but never rewritten: {memory.read_only}")
    if len(read_only) > READ_ONLY_NAMED:  # a Claude Code store may hold hundreds without frontmatter
        warnings.append(f"… and {len(read_only) - READ_ONLY_NAMED} more memory files read but never "
                        "rewritten (no frontmatter, CRLF line ends…)")
    repo, no_repo = repo_for_folder(context.paths.root, context.config.repo, context.home, context.claude_config_dir)
    if repo is None and context.paths.expects_repository:
        warnings.append(f"no repository to check references against ({no_repo}): every file and symbol a "
                        "memory names is unverifiable, and none is archived as stale")
    distilled = bookkeeping.read_distilled(context.paths)
    return Snapshot(context=context, now=now, run_id=run_id, options=options, memories=memories, profile=profile,
                    unreadable=tuple(scan.unreadable), fingerprints=scan.fingerprints, locked=scan.locked,
                    changed=changed, stored=stored,
                    distilled_ids=frozenset(distilled_ids_in(distilled)), distilled_data=distilled,
                    index_inputs=read_index_inputs(context, now),
                    folder_names={folder: folder_names(folder)
                                  for folder in {context.paths.memory_dir(t) for t in MEMORY_TYPES}},
                    archived_names={t: tuple(archived_names(context.paths, t)) for t in MEMORY_TYPES},
                    repository=open_repository(repo, exclude=context.paths.root),
                    warnings=tuple(warnings), review_queue=queue, review_queue_data=queue_data, profiles_of=profiles_of)


def load_cache(context: StoreContext, options: DreamOptions) -> ParseCache:
    """The store's parse cache, as a run with `options` uses it (a dry run never saves it)."""
    return ParseCache.load(context.paths, writable=not options.dry_run)
