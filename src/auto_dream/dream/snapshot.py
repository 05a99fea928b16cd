"""What the phases share: the Snapshot orient and gather read (frozen), and the Decisions
consolidate and prune build from it."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from auto_dream.distill.base import LlmUsage
from auto_dream.dream.actions import Action, RetireKind, RetireMemory, ReviewPair
from auto_dream.judge.similarity import Profile
from auto_dream.judge.staleness import Repository
from auto_dream.store.config import Config, Mode
from auto_dream.store.context import StoreContext
from auto_dream.store.daylog import Entry, LogProblem
from auto_dream.store.files import Fingerprint
from auto_dream.store.index_render import IndexInputs
from auto_dream.store.live import LiveView, MemorySource
from auto_dream.store.memory import Memory, Unreadable
from auto_dream.store.review_queue import EMPTY_QUEUE, KeptPair, ReviewQueue


class Profiles(dict[str, Profile]):
    """Word profiles by memory path, made the first time one is asked for: a nightly dream
    over 100,000 memories needs a few hundred of them."""

    def __init__(self, make: Callable[[str], Profile],
                 make_many: Callable[[list[str]], dict[str, Profile]] | None = None):
        super().__init__()
        self._make, self._make_many = make, make_many
        self._rewritten: dict[str, Memory] = {}
        self._words: dict[str, frozenset[str]] = {}  # of rewritten memories, when known

    def __missing__(self, path: str) -> Profile:
        memory = self._rewritten.pop(path, None)
        self._words.pop(path, None)
        profile = self[path] = Profile.of(memory.text()) if memory is not None else self._make(path)
        return profile

    def load(self, paths: Iterable[str]) -> None:
        """Make the profiles of `paths` not made yet, together where `make_many` can (the rest
        are made one by one when asked for)."""
        if self._make_many is not None:
            wanted = [p for p in paths if p not in self and p not in self._rewritten]
            if wanted:
                self.update(self._make_many(wanted))
                for path in wanted:
                    self._words.pop(path, None)

    def words(self, path: str) -> frozenset[str]:
        """The memory's significant words, without a whole profile when they are known."""
        known = self._words.get(path)
        return known if known is not None and path not in self else self[path].words

    def rewritten(self, memory: Memory, words: frozenset[str] | None = None) -> None:
        """The memory's text changed (to have `words`, if known): its profile is made again
        when it is next asked for. A memory that absorbs twenty duplicates in a run is then
        profiled once, not twenty times, or not at all."""
        self.pop(memory.path, None)
        self._rewritten[memory.path] = memory
        if words is not None:
            self._words[memory.path] = words
        else:
            self._words.pop(memory.path, None)


@dataclass(frozen=True)
class DreamOptions:
    """A run's options, already resolved against the store's config (commands.dream.resolve_options:
    flags beat config there, once)."""

    dry_run: bool = False
    propose: bool = False  # retirements are listed, not applied
    full: bool = False
    budget: int = Config.budget  # retirements per run


@dataclass(frozen=True)
class Snapshot:
    """The store as orient read it and what gather added: what the phases read, never write.

    Frozen, and its containers are read-only types. Two objects in it answer on use, which
    nothing a phase decides can change: `memories` loads a cached memory when first asked for
    it, and `repository` asks git about the references prune checks (tests give a dict:
    tests/fakes.py). The parse cache itself is the runner's: it updates it after apply. The
    profiles consolidate updates as it rewrites memories are in Decisions, made with `profile`
    (`profiles_of` for many at once). Everything else planning needs, orient has read.
    """

    context: StoreContext
    now: datetime  # aware
    run_id: str
    options: DreamOptions
    memories: MemorySource  # as orient found them, by path, and what planning asks of the parse cache
    profile: Callable[[str], Profile]  # a memory's word profile as orient read it (Decisions.profiles keeps them)
    index_inputs: IndexInputs  # what MEMORY.md is made from besides the memories, as orient read it
    unreadable: tuple[Unreadable, ...] = ()
    fingerprints: Mapping[str, Fingerprint] = field(default_factory=dict)  # as orient saw them
    locked: frozenset[str] = frozenset()  # memory files their owner may not write (chmod 0444): left as they are
    changed: frozenset[str] = frozenset()  # new or changed since the last dream
    stored: frozenset[str] = frozenset()  # unchanged memories the cache's pair index answers for
    distilled_ids: frozenset[str] = frozenset()
    # what the memories' references are checked against: git in the repository the store cites (None: none)
    repository: Repository | None = None
    # gather adds these:
    new_entries: tuple[Entry, ...] = ()
    entry_logs: Mapping[str, str] = field(default_factory=dict)  # entry id -> log path
    logs_read: Mapping[str, tuple[list[int], set[str]]] = field(default_factory=dict)  # log -> (fingerprint, ids)
    logs_done: Mapping[str, list[int]] = field(default_factory=dict)  # logs skipped: fully distilled before
    log_problems: tuple[LogProblem, ...] = ()
    consulted_terms: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()  # what orient and gather found wrong (Decisions.warnings: the phases after)
    review_queue: ReviewQueue = EMPTY_QUEUE  # the decisions earlier runs left to a reader, and those made
    review_queue_data: bytes | None = None  # its file as read (None: there is none)
    distilled_data: bytes = b""  # the distilled record as orient read it
    # the names in each folder new memories go to (by folder), and in the archive (by type, as named live)
    folder_names: Mapping[Path, tuple[str, ...]] = field(default_factory=dict)
    archived_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the profiles of many memories at once, those `profile` would take from the cache one by one
    profiles_of: Callable[[list[str]], dict[str, Profile]] | None = None


@dataclass
class Decisions:
    """What consolidate and prune decide, built up as they run from one snapshot: the only
    mutable part of planning. make_plan(snapshot, decisions) turns it into the Plan."""

    live: LiveView  # what survives the plan
    profiles: Profiles  # by path, made on first use; consolidate tells it of the memories it writes
    mode: Mode  # propose: retirements are listed, not applied
    budget: int  # retirements per run
    actions: list[Action] = field(default_factory=list)
    deferred: list[RetireMemory] = field(default_factory=list)
    flagged: list[tuple[str, list[str]]] = field(default_factory=list)
    review: list[ReviewPair] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    usage: LlmUsage = field(default_factory=LlmUsage)
    warnings: list[str] = field(default_factory=list)
    retired: int = 0  # retirements planned to be carried out (the budget counts these)
    held_back: set[str] = field(default_factory=set)  # memories already proposed or deferred this run
    resolved: list[str] = field(default_factory=list)  # review items decided in this run (their ids)
    kept: list[KeptPair] = field(default_factory=list)  # pairs someone decided to keep, remembered from now

    @classmethod
    def start(cls, snapshot: Snapshot) -> "Decisions":
        """Nothing decided yet: every memory orient found is live."""
        options = snapshot.options
        return cls(live=LiveView(snapshot.memories), profiles=Profiles(snapshot.profile, snapshot.profiles_of),
                   mode="propose" if options.propose else "apply", budget=options.budget)

    def next_retirement(self) -> str:
        """What a retirement planned now becomes: 'apply', 'propose' (--propose) or 'defer' (budget spent)."""
        if self.mode == "propose":
            return "propose"
        return "apply" if self.retired < self.budget else "defer"

    def retire(self, memory: Memory, kind: RetireKind, target: str | None, reason: str) -> bool:
        """Plan a retirement within the mode and the budget; True when the memory leaves `live`."""
        outcome = self.next_retirement()
        if outcome != "apply" and memory.path in self.held_back:
            return False  # one proposal (or deferral) per memory is enough
        if outcome != "apply":
            self.held_back.add(memory.path)
        if outcome == "propose":
            self.actions.append(RetireMemory(memory, kind, target, reason, proposed=True))
        elif outcome == "defer":
            self.deferred.append(RetireMemory(memory, kind, target, reason))
        else:
            self.actions.append(RetireMemory(memory, kind, target, reason))
            self.live.pop(memory.path, None)
            self.retired += 1
        return outcome == "apply"
