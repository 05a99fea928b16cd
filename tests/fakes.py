"""Stand-ins for what a dream reads from outside the store, for tests that decide without it: a
repository from two dicts, a distiller that answers what the test scripted and records what it is
asked, and a dream's Snapshot built in memory, with no store on disk."""

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from auto_dream.distill.base import DistillRequest, DistillResult, Operation
from auto_dream.dream.snapshot import DreamOptions, Snapshot
from auto_dream.judge.similarity import Profile
from auto_dream.judge.staleness import Evidence
from auto_dream.store.config import Config
from auto_dream.store.context import StoreContext
from auto_dream.store.daylog import Entry, load_timezone
from auto_dream.store.index import NO_ACTIVITY, Activity
from auto_dream.store.index_render import IndexInputs
from auto_dream.store.memory import Memory, Unreadable, parse_memory
from auto_dream.store.paths import MEMORY_TYPES, StorePaths
from auto_dream.store.scan import StoreScan
from auto_dream.store.templates import load_template
from auto_dream.store.views import StoreView


class DictRepository:
    """judge.staleness.Repository from two dicts: each file path and symbol name the repository
    has now (True) or its history proves gone (False); any other is unverifiable."""

    def __init__(self, files: dict[str, bool] | None = None, symbols: dict[str, bool] | None = None):
        self._files, self._symbols = files or {}, symbols or {}
        self.asked: list[tuple[str, frozenset[str]]] = []

    def files(self, paths: Collection[str]) -> Evidence:
        self.asked.append(("files", frozenset(paths)))
        return _evidence(self._files, paths)

    def symbols(self, names: Collection[str], written: Collection[datetime] = ()) -> Evidence:
        self.asked.append(("symbols", frozenset(names)))
        return _evidence(self._symbols, names)


def _evidence(known: dict[str, bool], asked: Collection[str]) -> Evidence:
    return Evidence(frozenset(a for a in asked if known.get(a) is True),
                    frozenset(a for a in asked if known.get(a) is False))


# What FakeDistiller may be scripted to answer to one request: the result, its operations, or a
# function of the request that gives either.
Answer = DistillResult | list[Operation] | Callable[[DistillRequest], "DistillResult | list[Operation]"]


class FakeDistiller:
    """distill.base.Distiller that records every request (`requests`, in order) and answers each
    with the next of the answers it was given (the constructor's, then `enqueue`'s), as llm's
    MockModel does. With none left it asks `otherwise` (a Distiller: DeterministicDistiller()
    makes this a recording spy on the real decisions), or fails the test, naming the request."""

    def __init__(self, *answers: Answer, otherwise=None):
        self._answers: list[Answer] = list(answers)
        self.otherwise = otherwise
        self.requests: list[DistillRequest] = []

    def enqueue(self, *answers: Answer) -> "FakeDistiller":
        self._answers.extend(answers)
        return self

    def distill(self, request: DistillRequest) -> DistillResult:
        self.requests.append(request)
        if not self._answers:
            assert self.otherwise is not None, (
                f"FakeDistiller asked {len(self.requests)} times, scripted for fewer: "
                f"{[entry.text for entry in request.entries]}")
            return self.otherwise.distill(request)
        answer = self._answers.pop(0)
        if callable(answer):
            answer = answer(request)
        return answer if isinstance(answer, DistillResult) else DistillResult(list(answer))

    @property
    def entries_asked(self) -> list[list[str]]:
        """The texts of the entries of each request, in order."""
        return [[entry.text for entry in request.entries] for request in self.requests]


# Where snapshot_of's store would be: no folder, so a plan that looked at the disk would find nothing.
NO_STORE = Path("/nonexistent/auto-dream-snapshot-of/.auto-dream")
HEADER = load_template("MEMORY_header.md")  # the packaged header orient reads when a store has none


def snapshot_of(memories: Mapping[str, str | Memory] | None = None,
                entries: Iterable[Entry | tuple[str, str | None, datetime]] = (), *, now: datetime,
                options: DreamOptions = DreamOptions(), config: Config = Config(), run_id: str | None = None,
                **fields) -> Snapshot:
    """The Snapshot orient and gather would read from a store holding `memories` (by path: a
    memory file's text, as builders.memory_text writes one, read as orient reads it, or a Memory)
    and the log `entries` (an Entry, or its text, type and time, the store's wall clock), at `now`
    (aware), before any dream: every memory is new, none was distilled, MEMORY.md is missing and
    its header is the packaged one, the archive empty, no repository. Built in memory: no file is
    written or read but the packaged header; `fields` replaces any other of the Snapshot's
    (repository=DictRepository(...), distilled_ids=…). Planning over it (runner.decide_dream)
    opens no file either."""
    context = StoreContext(paths=StorePaths(NO_STORE), config=config, tz=load_timezone(config.timezone))
    tz, paths = context.tz, context.paths
    read: dict[str, Memory] = {}
    unreadable: list[Unreadable] = []
    for path, memory in (memories or {}).items():
        parsed = memory if isinstance(memory, Memory) else parse_memory(memory.encode("utf-8"), path, now, tz)
        if isinstance(parsed, Unreadable):
            unreadable.append(parsed)
        else:
            read[path] = parsed
    # every memory read from its file, none held by a parse cache: the view never asks the cache (None)
    view = StoreView(StoreScan(paths=list(read), read=read, unchanged=set(), unreadable=unreadable,
                               fingerprints={}), cache=None)
    first: dict[str, Entry] = {}  # each once, oldest first, as gather reads them
    for given in entries:
        entry = given if isinstance(given, Entry) else Entry(given[2].replace(tzinfo=None), given[0], given[1])
        first.setdefault(entry.id, entry)
    logged = sorted(first.values(), key=lambda entry: entry.at)

    def profile(path: str) -> Profile:
        return Profile.of(view[path].text(), view[path])

    names: dict[Path, list[str]] = {paths.memory_dir(kind): [] for kind in MEMORY_TYPES}
    for path in [*read, *(bad.path for bad in unreadable)]:
        folder = paths.root / path.rsplit("/", 1)[0] if "/" in path else paths.root
        names.setdefault(folder, []).append(path.rsplit("/", 1)[-1])
    snapshot = Snapshot(
        context=context, now=now, run_id=run_id or f"0001-{now:%Y%m%dT%H%M%S}", options=options, memories=view,
        profile=profile, unreadable=tuple(unreadable), changed=frozenset(read), new_entries=tuple(logged),
        entry_logs={entry.id: paths.relative(paths.log_file(entry.at.date())) for entry in logged},
        index_inputs=IndexInputs(None, NO_ACTIVITY if not config.decay_days else  # nothing looked up yet
                                 Activity({}, now - timedelta(days=config.decay_days)), header=HEADER),
        folder_names={folder: tuple(sorted(found)) for folder, found in names.items()},
        archived_names={kind: () for kind in MEMORY_TYPES})
    return replace(snapshot, **fields) if fields else snapshot
