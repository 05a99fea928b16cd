"""The plan is the whole decision: a dry run reports what the real run then does, and the real
run writes exactly the files the plan lists, with the bytes the plan holds."""

import hashlib
import json
import os
import sys
from dataclasses import FrozenInstanceError, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from auto_dream.demo import install_example, make_project
from auto_dream.distill.base import Skip
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.actions import CreateMemory, RetireMemory, SkipEntries, UpdateMemory
from auto_dream.dream.gather import gather
from auto_dream.dream.journal import digest
from auto_dream.dream.orient import orient
from auto_dream.dream.plan import read_kept
from auto_dream.dream.report import build_report
from auto_dream.dream.runner import decide_dream, dream, new_run_id, plan_dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.store.context import open_context
from auto_dream.store.paths import ensure_store
from builders import add_entry as add
from builders import memory_text
from conftest import make_git_project, tree_hash, write_memory_file
from fakes import DictRepository, FakeDistiller, snapshot_of

STALE = "memories/project/20260822_old_module_port.md"
REBASE = "memories/feedback/20261001_rebase.md"


def example(project: Path, now: datetime) -> Path:
    """The bundled example, in a project as `make run` sets it up."""
    project.mkdir()
    make_project(project)
    root = ensure_store(project / ".auto-dream").root
    install_example(root)
    return root


def archive_holds_the_names(project: Path, now: datetime) -> Path:
    """A stale memory and a superseded one whose file names archive/ already holds."""
    make_git_project(project, ("src/old/module.py",), ("old_handler",))  # the stale memory's file and function
    root = ensure_store(project / ".auto-dream").root
    write_memory_file(root, STALE, memory_text("Old module port", "project", now - timedelta(days=40),
                                               "Tracks the port of src/old/module.py; the entry point is "
                                               "`old_handler()`."))
    write_memory_file(root, REBASE, memory_text("Rebase", "feedback", now - timedelta(days=30),
                                                "Always rebase feature branches"))
    for earlier in ("archive/project/20260822_old_module_port.md", "archive/project/20260822_old_module_port_2.md",
                    "archive/feedback/20261001_rebase.md"):
        write_memory_file(root, earlier, memory_text("Archived before", "project", now - timedelta(days=90),
                                                     "Archived by an earlier dream."))
    add(root, "Never rebase feature branches", "feedback", now - timedelta(days=1))
    return root


def only_the_index_is_out_of_date(project: Path, now: datetime) -> Path:
    root = ensure_store(project / ".auto-dream").root
    write_memory_file(root, "memories/user/20261001_go.md", memory_text(
        "Go developer", "user", now - timedelta(days=30), "The user is a backend developer who mostly writes Go"))
    write_memory_file(root, "memories/reference/20261002_api.md", memory_text(
        "Fund API", "reference", now - timedelta(days=20), "Fund data API runs at localhost:5000"))
    (root / "MEMORY.md").write_text("# Memory index\n\n- an entry for a memory long gone\n", encoding="utf-8")
    return root


def merges_and_supersedes_held(now: datetime) -> tuple[dict[str, str], list[tuple[str, str, datetime]]]:
    """Its memory files (by path) and log entries (text, type, time)."""
    deploys = "Deploys happen every Tuesday afternoon from the release branch"
    memories = {
        "memories/project/20260901_a.md": memory_text("Deploy day", "project", now - timedelta(days=60),
                                                      f"{deploys}\n\nRollbacks need two approvals"),
        "memories/project/20261101_b.md": memory_text("Deploy schedule", "project", now - timedelta(days=20), deploys),
        REBASE: memory_text("Rebase policy", "feedback", now - timedelta(days=30), "Always rebase feature branches"),
        "memories/user/20261001_分享.md": memory_text("内容平台", "user", now - timedelta(days=30),
                                                    "用户想通过内容平台分享知识")}
    entries = [("Never rebase feature branches", "feedback", now - timedelta(days=1)),
               ("用户想通过内容平台分享知识和经验", "user", now - timedelta(days=1, hours=-1)),
               ("The billing service publishes invoices to the Kafka topic billing.invoices", "project",
                now - timedelta(days=1, hours=-2))]
    return memories, entries


def merges_and_supersedes(project: Path, now: datetime) -> Path:
    root = ensure_store(project / ".auto-dream").root
    memories, entries = merges_and_supersedes_held(now)
    for relative, text in memories.items():
        write_memory_file(root, relative, text)
    for text, kind, at in entries:
        add(root, text, kind, at)
    return root


def read_only_memories(project: Path, now: datetime) -> Path:
    """merges_and_supersedes with the superseded memory and one of the duplicates made read-only
    (chmod 0444): a fixed condition, so the plan leaves them as they are, not apply."""
    root = merges_and_supersedes(project, now)
    for path in (REBASE, "memories/project/20261101_b.md", "memories/project/20260901_a.md"):
        (root / path).chmod(0o444)
    return root


MARKED_LINE = "- [Cover letters](feedback_cover_letters.md) — SUPERSEDED by feedback_unified.md, kept for reference"


def a_claude_code_folder(project: Path, now: datetime) -> Path:
    """A Claude Code memory folder dreamed in place: its MEMORY.md (a person's file) marks one
    topic file superseded by another, which dream lists for a reader, and an entry repeats a
    topic file, which dream merges into it."""
    folder = project / ".claude" / "memory"
    write_memory_file(folder, "feedback_cover_letters.md", memory_text(
        "Cover letter quality", "feedback", now - timedelta(days=40), "Every cover letter names the NYC office."))
    write_memory_file(folder, "feedback_unified.md", memory_text(
        "Resume and cover letter quality", "feedback", now - timedelta(days=20),
        "Resumes are one page; cover letters run 550 to 700 words in four paragraphs."))
    (folder / "MEMORY.md").write_text(f"# Project memory\n\n## Feedback\n{MARKED_LINE}\n"
                                      "- [Unified rules](feedback_unified.md) — all rules in one place\n",
                                      encoding="utf-8")
    add(folder, "Resumes are one page; cover letters run 550 to 700 words in four paragraphs.", "feedback",
        now - timedelta(days=1))
    return folder


STORES = [example, archive_holds_the_names, only_the_index_is_out_of_date, merges_and_supersedes, read_only_memories,
          a_claude_code_folder]


def decisions(report: dict) -> dict:
    """Everything a report says but the run's own id and whether it was a dry run."""
    return {key: value for key, value in report.items() if key not in ("run_id", "dry_run")}


@pytest.mark.parametrize("make_store", STORES, ids=[s.__name__ for s in STORES])
def test_the_dry_run_reports_every_decision_the_real_run_then_carries_out(make_store, tmp_path, cli):
    root = make_store(tmp_path / "project", datetime.now(timezone.utc))
    before = tree_hash(root)
    dry = cli("--root", root, "dream", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert tree_hash(root) == before  # not a byte written
    real = cli("--root", root, "dream", "--json")
    assert real.code == 0, real.err
    planned, done = json.loads(dry.out), json.loads(real.out)
    assert (planned["dry_run"], done["dry_run"]) == (True, False)
    assert decisions(planned) == decisions(done)
    assert planned["actions"], "every store here gives the dream something to do"
    # what the dry run named is what is on disk now
    for row in planned["actions"]:
        if row["kind"] in ("supersede", "merge", "archive") and row["archive"] is not None:
            assert (root / row["archive"]).is_file() and not (root / row["path"]).exists(), row
    index = (root / "MEMORY.md").read_bytes()
    assert hashlib.sha256(index).hexdigest() == planned["index_sha256"]
    assert len(index) == planned["stats"]["index_bytes"]
    record = open_context(root).paths.state / "distilled.txt"  # .state/, or .auto-dream/ in a Claude Code folder
    recorded = record.read_text(encoding="utf-8").split() if record.exists() else []
    assert recorded[len(recorded) - len(planned["distilled_entries"]):] == planned["distilled_entries"]


def test_archive_numbering_is_decided_by_the_plan_and_shown_by_the_dry_run(tmp_path, cli):
    root = archive_holds_the_names(tmp_path / "project", datetime.now(timezone.utc))
    report = json.loads(cli("--root", root, "dream", "--dry-run", "--json").out)
    archives = {row["path"]: row["archive"] for row in report["actions"] if row["kind"] in ("archive", "supersede")}
    assert archives == {STALE: "archive/project/20260822_old_module_port_3.md",
                        REBASE: "archive/feedback/20261001_rebase_2.md"}
    text = cli("--root", root, "dream", "--dry-run").out
    assert f"[DRY RUN] Would archive: {STALE} (kept as archive/project/20260822_old_module_port_3.md)" in text
    assert cli("--root", root, "dream").code == 0
    assert "Always rebase" in (root / "archive/feedback/20261001_rebase_2.md").read_text(encoding="utf-8")
    assert "Archived by an earlier dream." in (root / "archive/feedback/20261001_rebase.md").read_text()


@pytest.mark.parametrize("make_store", STORES, ids=[s.__name__ for s in STORES])
def test_the_real_run_writes_exactly_the_files_and_bytes_the_plan_holds(make_store, tmp_path):
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    root = make_store(tmp_path / "project", now)
    context = open_context(root)
    snapshot = gather(orient(context, now, new_run_id(context.paths, now), DreamOptions(dry_run=True)))
    plan = plan_dream(snapshot, DeterministicDistiller())
    report = dream(open_context(root), now, DreamOptions(), DeterministicDistiller()).report
    assert report is not None and report.run_id == plan.run_id
    journal = json.loads((context.paths.state / "runs" / plan.run_id / "journal.json").read_text(encoding="utf-8"))
    assert [(f["path"], f["post_sha256"]) for f in journal["files"]] == \
        [(c.change.path, digest(c.change.data())) for c in plan.changes]
    for change in plan.changes:
        assert digest((root / change.change.path).read_bytes() if not change.change.removes else None) \
            == digest(change.change.data()), change.change.path
    retired = [a for a in plan.actions if isinstance(a, RetireMemory) and not a.proposed]
    assert all(a.archived is not None and a.archived.extra["archived_by_run"] == plan.run_id for a in retired)


def test_a_snapshot_cannot_be_changed_once_gather_has_read_the_logs(tmp_path):
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    root = merges_and_supersedes(tmp_path / "project", now)
    context = open_context(root)
    oriented = orient(context, now, new_run_id(context.paths, now), DreamOptions())
    snapshot = gather(oriented)
    assert len(snapshot.new_entries) == 3 and oriented.new_entries == ()  # gather made a new one
    for name, value in (("memories", {}), ("new_entries", ()), ("warnings", ()), ("changed", frozenset())):
        with pytest.raises(FrozenInstanceError):
            setattr(snapshot, name, value)


@pytest.mark.parametrize("make_store", STORES, ids=[s.__name__ for s in STORES])
def test_two_plans_from_one_snapshot_decide_the_same(make_store, tmp_path):
    """consolidate and prune write their decisions apart from the snapshot: planning leaves it as it was."""
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    root = make_store(tmp_path / "project", now)
    context = open_context(root)
    snapshot = gather(orient(context, now, new_run_id(context.paths, now), DreamOptions(dry_run=True)))
    first, second = (plan_dream(snapshot, DeterministicDistiller()) for _ in range(2))
    assert first.actions and first.actions == second.actions
    assert (first.warnings, first.review, first.deferred, first.counts) == \
        (second.warnings, second.review, second.deferred, second.counts)
    assert [(c.change.path, digest(c.change.data())) for c in first.changes] == \
        [(c.change.path, digest(c.change.data())) for c in second.changes]


def test_a_read_only_memory_is_left_by_the_plan_and_the_dry_run_says_so(tmp_path, cli):
    root = read_only_memories(tmp_path / "project", datetime.now(timezone.utc))
    report = json.loads(cli("--root", root, "dream", "--dry-run", "--json").out)
    assert any(w.startswith(f"{REBASE} is read-only") for w in report["warnings"]), report["warnings"]
    touched = {row["path"] for row in report["actions"] if row["kind"] in ("merge", "supersede", "archive")}
    assert REBASE not in touched and "memories/project/20261101_b.md" not in touched


# What a plan must not do: every way to read or write a file, list a folder or run a program
FILE_EVENTS = frozenset(("open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove", "os.rmdir",
                         "os.chmod", "os.utime", "os.symlink", "os.link", "shutil.copyfile", "subprocess.Popen",
                         "os.system", "os.exec", "os.posix_spawn", "sqlite3.connect", "glob.glob"))
_heard: list[tuple[str, object]] | None = None


def _audit(event: str, args: tuple) -> None:
    if _heard is not None and event in FILE_EVENTS:
        _heard.append((event, args[0] if args else None))


_hooked = False


def _listening(call, heard: list[str]):
    def listened(path, *args, **kwargs):
        heard.append(str(path))
        return call(path, *args, **kwargs)
    return listened


@pytest.mark.parametrize("make_store", STORES, ids=[s.__name__ for s in STORES])
def test_planning_opens_no_file_runs_no_program(make_store, tmp_path, monkeypatch):
    """orient and gather read everything planning needs (MEMORY.md, the template, the distilled
    record, folder and archive names, what was consulted); the repository is asked through the
    Snapshot's Repository, here a dict. consolidate, prune and make_plan (decide_dream) then touch
    no file: an audit hook hears none. read_kept then opens each memory file the plan rewrites or
    archives, once, and nothing else. The plan still decides (a stale memory archived under a
    numbered name)."""
    global _heard, _hooked
    if not _hooked:  # a hook stays for the process: this one hears only while _heard is a list
        sys.addaudithook(_audit)
        _hooked = True
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    root = make_store(tmp_path / "project", now)
    context = open_context(root)
    snapshot = gather(orient(context, now, new_run_id(context.paths, now), DreamOptions(dry_run=True)))
    repository = DictRepository(files={"src/old/module.py": False}, symbols={"old_handler": False})
    snapshot = replace(snapshot, repository=repository)
    stats: list[str] = []  # no audit event hears a stat: these two are listened to while planning decides
    for name in ("stat", "lstat"):
        monkeypatch.setattr(os, name, _listening(getattr(os, name), stats))
    _heard = []
    try:
        plan = decide_dream(snapshot, DeterministicDistiller())
        monkeypatch.undo()
        decided, _heard = _heard, []
        read_kept(plan)  # what its rewrites keep of the files they edit: read once each, and only those
    finally:
        kept, _heard = _heard, None
    assert decided == [] and stats == []
    # the file an update rewrites, or an archive copy is made from
    sources = {str(root / (c.archives or c.change.path)) for c in plan.changes if c.kept is not None}
    rewritten = [a for a in plan.actions if isinstance(a, (RetireMemory, UpdateMemory))]
    # (an "open" of a number is the descriptor just opened, wrapped in a file object)
    assert sorted(str(path) for event, path in kept if not isinstance(path, int)) == sorted(sources)
    assert {event for event, _ in kept} <= {"open"} and plan.actions
    assert bool(sources) == bool(rewritten), "a store with nothing rewritten or archived tests nothing here"
    if make_store is a_claude_code_folder:  # what MEMORY.md marks, read from the Snapshot
        assert [(r.kind, r.path, r.target) for r in plan.review] == \
            [("marked_superseded", "feedback_cover_letters.md", "feedback_unified.md")]
    if make_store is archive_holds_the_names:
        assert repository.asked
        archives = {a.memory.path: a.archived.path for a in plan.actions
                    if isinstance(a, RetireMemory) and a.archived is not None}
        assert archives[STALE] == "archive/project/20260822_old_module_port_3.md"


# ---------------------------------------------------------------- a snapshot without a store (tests/fakes.py)


def test_a_snapshot_built_in_memory_plans_as_the_one_orient_and_gather_read_from_the_store(tmp_path):
    """fakes.snapshot_of stands in for orient and gather: the store's memories and entries, given
    in memory, make the plan the store on disk makes. test_dream.py's cases that check only a
    decision plan over it."""
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    root = merges_and_supersedes(tmp_path / "project", now)
    options = DreamOptions(dry_run=True)
    read = gather(orient(open_context(root), now, "0001-20261130T120000", options))
    memories, entries = merges_and_supersedes_held(now)
    held = snapshot_of(memories, entries, now=now, options=options)
    assert held.run_id == read.run_id and held.memories.keys() == read.memories.keys()
    assert held.new_entries == read.new_entries and held.entry_logs == read.entry_logs
    on_disk, in_memory = (decide_dream(snapshot, DeterministicDistiller()) for snapshot in (read, held))
    assert in_memory.actions and build_report(in_memory).as_json() == build_report(on_disk).as_json()
    assert [c.change.path for c in in_memory.changes] == [c.change.path for c in on_disk.changes]
    assert in_memory.index.text == on_disk.index.text


def test_the_distiller_is_asked_once_with_every_new_entry_and_the_plan_carries_out_its_answer():
    """A FakeDistiller records what dream asks and answers what the test scripted: here, skip
    every entry. The plan creates nothing from them, and records them as distilled."""
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    memories, entries = merges_and_supersedes_held(now)
    snapshot = snapshot_of(memories, entries, now=now)
    ids = tuple(entry.id for entry in snapshot.new_entries)
    distiller = FakeDistiller([Skip(ids, "a person decides these")])
    plan = decide_dream(snapshot, distiller)
    [request] = distiller.requests
    assert distiller.entries_asked == [[text for text, _, _ in entries]]  # oldest first
    assert set(request.memories) == set(memories) and request.now == now
    assert [a for a in plan.actions if isinstance(a, SkipEntries)] == [SkipEntries(ids, "a person decides these")]
    assert not any(isinstance(a, CreateMemory) for a in plan.actions)
    assert set(plan.distilled_entry_ids) == set(ids)
