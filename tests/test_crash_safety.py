"""The safety contract (docs/dream.md, "Safety"): a dream killed at any step leaves a store that parses and
loses nothing; the next dream completes it and `undo` reverses it; undo restores byte for byte;
dry runs write nothing; a memory changed after orient is not overwritten.

The kill points come from conftest.run_killed_at(N, ...): the installed command's entry point with
cli.STEP_HOOK set to SIGKILL `auto-dream dream` at step N of apply (1: journal, then one step per
file, then done).
"""

import hashlib
import json
import os
import shutil
import signal
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from auto_dream.cli import run
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.actions import UpdateMemory
from auto_dream.dream.apply import apply
from auto_dream.dream.bookkeeping import read_distilled_ids
from auto_dream.dream.gather import gather
from auto_dream.dream.orient import orient
from auto_dream.dream.runner import new_run_id, plan_dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.store.context import open_context
from auto_dream.store.daylog import read_all_entries
from auto_dream.store.paths import StorePaths, ensure_store
from auto_dream.store.scan import scan_memories
from builders import memory_text
from conftest import make_git_project, run_installed, run_killed_at, tree_hash, write_memory_file

NOW = datetime.now().astimezone()
USER_FACING = ("logs", "memories", "archive", "MEMORY.md")  # what undo must restore; .state/ is dream's own

ALWAYS_REBASE = "memories/feedback/always_rebase.md"
STAGING = "memories/project/staging_cluster.md"
STALE = "memories/project/legacy_importer.md"
ORIGINAL_MEMORIES = {
    ALWAYS_REBASE: ("Always rebase feature branches", "feedback", 10,
                    "Always rebase feature branches before merging."),
    STAGING: ("Deploys go through the staging cluster", "project", 5,
              "Deploys go through the staging cluster named kestrel before production rollout."),
    STALE: ("Legacy importer", "project", 40,
            "The legacy importer lives in src/gone/old.py and gone_func() parses the CSV export."),
    "memories/user/data_engineer.md": ("用户是数据工程师", "user", 3, "用户是数据工程师，负责维护夜间批处理任务。"),
}
NEVER_REBASE = "Never rebase feature branches; merge main into them instead."
STAGING_AGAIN = "Deploys go through the staging cluster kestrel before production rollout, with a smoke test gate."
ENTRIES = [  # (type, text), each becoming one change of the plan
    ("feedback", NEVER_REBASE),  # contradicts ALWAYS_REBASE: the newer wins
    ("project", STAGING_AGAIN),  # a duplicate of STAGING that adds a detail: merged into it
    ("user", "The user prefers concise answers with code samples."),
    ("user", "用户喜欢用 Vim 编辑配置文件"),
    ("project", "The billing service is written in Go and owned by team Falcon."),
    ("project", "项目的发布周期是每两周一次"),
    ("reference", "Grafana dashboard for latency is at https://grafana.example.com/d/latency"),
    ("reference", "The oncall runbook lives in the wiki under Operations/Oncall."),
    ("feedback", "Prefer pytest fixtures over setUp methods in new tests."),
    ("feedback", "不要在周五下午部署生产环境"),
    ("project", "Search indexing uses Elasticsearch version eight with nightly reindex jobs."),
    ("project", "移动端应用使用 Flutter 框架开发"),
    ("user", "The user is based in Lisbon and works mornings."),
    ("reference", "Design mockups are tracked in Figma project Aurora."),
    ("project", "Payments webhook retries follow exponential backoff capped at one hour."),
    ("feedback", "Always write commit messages in the imperative mood."),
]


def build_store(repo: Path) -> Path:
    """A store inside a git work tree, whose dream plan creates, merges, supersedes and archives."""
    make_git_project(repo, ("src/gone/old.py",), ("gone_func",))  # what STALE cites: gone, by the history
    root = repo / ".auto-dream"
    ensure_store(root)
    for relative, (name, memory_type, days, body) in ORIGINAL_MEMORIES.items():
        write_memory_file(root, relative, memory_text(name, memory_type, NOW - timedelta(days=days), body))
    os.chmod(root / STAGING, 0o644)  # a mode dream's writes do not use: undo must bring it back
    for minute, (entry_type, text) in enumerate(ENTRIES):
        at = NOW - timedelta(days=2) + timedelta(minutes=minute)
        assert run(["--root", str(root), "append", "--type", entry_type, "--at", f"{at:%Y-%m-%d %H:%M}", text]) == 0
    assert run(["--root", str(root), "build-index"]) == 0
    return root


def copy_repo(repo: Path, destination: Path) -> Path:
    shutil.copytree(repo, destination, symlinks=True)
    return destination / ".auto-dream"


def files(root: Path, parts=USER_FACING) -> dict[str, tuple[str, str]]:
    """Every file under `parts` of the store: relative path -> (mode, sha256). Folders are not files."""
    found = {}
    for part in parts:
        top = root / part
        for path in [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()):
            found[path.relative_to(root).as_posix()] = (oct(path.stat().st_mode),
                                                        hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def readable_memories(root: Path, archived: bool = False) -> dict[str, tuple]:
    """The memories a user sees (archived ones without the run id and time they were archived)."""
    scan = scan_memories(StorePaths(root), None, archived=archived)
    assert scan.unreadable == [], f"unreadable after the dream: {scan.unreadable}"
    seen = {}
    for m in scan.memories:
        extra = {k: v for k, v in m.extra.items() if k not in ("archived", "archived_by_run")}
        seen[m.path] = (m.name, m.type, m.description, m.body, m.sources,
                        m.mtime.isoformat(timespec="seconds"), sorted(extra.items()))
    return seen


def memory_corpus(root: Path) -> str:
    """The text of every file under memories/ and archive/, where no content may go missing."""
    return "\n".join(p.read_text(encoding="utf-8") for part in ("memories", "archive")
                     for p in sorted((root / part).rglob("*")) if p.is_file())


def journal_of_only_run(root: Path) -> dict:
    (run_folder,) = (root / ".state" / "runs").iterdir()
    return json.loads((run_folder / "journal.json").read_text(encoding="utf-8"))


def no_temporary_files(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in root.rglob(".*.tmp")]


@dataclass(frozen=True)
class Template:
    repo: Path  # the store at repo/.auto-dream, never dreamed
    before: dict  # files(), before any dream
    index_before: bytes
    steps: int  # apply's steps in a clean run: journal + one per file + done
    live_after: dict  # readable_memories() after a clean run
    archived_after: dict
    index_after: bytes


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Template:
    """Built once for the module; each test copies it. A clean run on a copy is the reference."""
    base = tmp_path_factory.mktemp("template")
    root = build_store(base / "repo")
    clean = copy_repo(base / "repo", base / "clean")
    assert run(["--root", str(clean), "dream"]) == 0
    journal = journal_of_only_run(clean)
    return Template(repo=base / "repo", before=files(root), index_before=(root / "MEMORY.md").read_bytes(),
                    steps=len(journal["files"]) + 2, live_after=readable_memories(clean),
                    archived_after=readable_memories(clean, archived=True),
                    index_after=(clean / "MEMORY.md").read_bytes())


def test_the_plan_has_every_kind_of_change_and_at_least_20_steps(template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    report = json.loads(cli("--root", root, "dream", "--dry-run", "--json").out)
    kinds = [a["kind"] for a in report["actions"]]
    assert {"create", "merge", "supersede", "archive", "index"} <= set(kinds)
    assert {(a["kind"], a["path"]) for a in report["actions"] if a["kind"] in ("supersede", "archive")} == \
        {("supersede", ALWAYS_REBASE), ("archive", STALE)}
    assert template.steps >= 20
    assert len(template.live_after) == 17 and set(template.archived_after) == \
        {ALWAYS_REBASE.replace("memories/", "archive/"), STALE.replace("memories/", "archive/")}


# The first 20 steps, plus the last file change (a removal) and the step that marks the run done.
KILL_POINTS = [*range(1, 21), -2, -1]


def kill_id(kill: int) -> str:
    return {-1: "mark-done", -2: "last-file"}.get(kill, f"step{kill}")


def kill_step(kill: int, template: Template) -> int:
    return kill if kill > 0 else template.steps + 1 + kill


def kill_dream(root: Path, step: int):
    killed = run_killed_at(step, "--root", root, "dream")
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    return killed


@pytest.mark.slow  # starts the installed command
def test_the_shipped_command_reads_no_kill_switch_from_the_environment(template, tmp_path):
    """The kill points are a test's hook (cli.STEP_HOOK, set in a child process), not a variable
    the product reads: a dream whose environment names one runs to the end."""
    root = copy_repo(template.repo, tmp_path / "repo")
    done = run_installed("--root", root, "dream", env={"AUTO_DREAM_TEST_KILL_AT_STEP": "1"})
    assert done.returncode == 0, (done.returncode, done.stderr)
    (run,) = (root / ".state" / "runs").iterdir()
    assert (run / "status").read_text() == "done" and not (root / STALE).exists()  # archived, to the end


@pytest.mark.slow  # kills a child Python at each step
@pytest.mark.parametrize("kill", KILL_POINTS, ids=kill_id)
def test_a_dream_killed_at_any_step_loses_nothing_and_the_next_dream_completes_it(kill, template, tmp_path,
                                                                                   cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    step = kill_step(kill, template)
    kill_dream(root, step)

    # The store as the kill left it: every memory file parses, no half-written file.
    readable_memories(root)
    readable_memories(root, archived=True)
    assert no_temporary_files(root) == []
    index = (root / "MEMORY.md").read_bytes()
    assert index in (template.index_before, template.index_after)
    # Nothing lost: logs untouched, every memory's text still somewhere, and an entry
    # recorded as distilled is in a memory (else it still waits in the log).
    assert files(root, ["logs"]) == {p: v for p, v in template.before.items() if p.startswith("logs/")}
    corpus = memory_corpus(root)
    for _name, _type, _days, body in ORIGINAL_MEMORIES.values():
        assert body in corpus
    entries, _ = read_all_entries(StorePaths(root))
    distilled = read_distilled_ids(StorePaths(root))
    for entry in entries:
        if entry.id in distilled:
            assert entry.text in corpus, f"entry {entry.id} marked distilled but in no memory"

    # The next dream rolls the interrupted run back and ends where an uninterrupted one ends.
    again = cli("--root", root, "dream", "--json")
    assert again.code == 0, again.err
    report = json.loads(again.out)
    if step > 1:  # a journal was written: there was something to roll back
        assert any("interrupted" in w for w in report["warnings"]), report["warnings"]
    assert readable_memories(root) == template.live_after
    assert readable_memories(root, archived=True) == template.archived_after
    assert (root / "MEMORY.md").read_bytes() == template.index_after
    corpus = memory_corpus(root)
    for entry in entries:
        assert entry.text in corpus
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == 0
    assert not (root / ".state" / "dream.lock").exists()
    # …and it is finished: one more dream has nothing to do.
    assert json.loads(cli("--root", root, "dream", "--json").out)["actions"] == []


def one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("auto-dream: error: ")
    return lines[0]


@pytest.mark.slow  # kills a child Python at each step
@pytest.mark.parametrize("kill", [1, 2, 12, -1], ids=kill_id)
def test_undo_after_a_killed_first_dream_restores_the_store_before_it(kill, template, tmp_path):
    root = copy_repo(template.repo, tmp_path / "repo")
    kill_dream(root, kill_step(kill, template))
    undone = run_installed("--root", root, "undo")
    # Undo reverses the interrupted run; killed before its journal existed, there is none.
    if undone.returncode == 0:
        assert "rolled back the interrupted run" in undone.stdout and undone.stderr == ""
    else:
        assert undone.returncode == 1, undone
        assert "no dream run to undo" in one_error_line(undone.stderr)
    assert files(root) == template.before
    assert not (root / ".state" / "dream.lock").exists()


@pytest.mark.slow  # kills a child Python at each step
@pytest.mark.parametrize("kill", [2, -1], ids=kill_id)
def test_undo_after_a_killed_dream_reverses_that_dream_only(kill, template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0  # a completed run, which must survive
    for text in ("Kafka topics are retained for seven days.", "Staging certificates renew every Monday at noon."):
        assert cli("--root", root, "append", "--type", "project", text).code == 0
    before = files(root)
    runs = set((root / ".state" / "runs").iterdir())
    second = 2 + 2 + 2  # journal, two new memories, distilled record, MEMORY.md, done
    kill_dream(root, kill if kill > 0 else second + 1 + kill)
    (interrupted,) = set((root / ".state" / "runs").iterdir()) - runs
    assert json.loads((interrupted / "journal.json").read_text())["status"] == "applying"
    assert len(json.loads((interrupted / "journal.json").read_text())["files"]) + 2 == second

    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 0, undone
    # Undo reverses the dream that was interrupted, not the completed one before it too.
    assert files(root) == before


@pytest.mark.slow  # starts the installed command
def test_undo_after_a_clean_dream_restores_memories_archive_and_index_byte_for_byte(template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0
    assert files(root) != template.before
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == 0

    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.startswith("undid run ")
    assert files(root) == template.before  # bytes and modes (STAGING was 0644)
    assert oct((root / STAGING).stat().st_mode & 0o777) == "0o644"
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == len(ENTRIES)
    assert cli("--root", root, "undo").code == 1  # nothing left to undo


@pytest.mark.slow  # starts the installed command
def test_undo_refuses_a_file_changed_since_the_run_and_force_restores_it(template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0
    created = next((root / "memories" / "feedback").glob("*_Never_rebase_feature_branches.md"))
    created.write_text(created.read_text(encoding="utf-8") + "\nUnless the branch is private.\n",
                       encoding="utf-8")
    whole = tree_hash(root)

    refused = run_installed("--root", root, "undo")
    assert refused.returncode == 1
    line = one_error_line(refused.stderr)
    assert created.relative_to(root).as_posix() in line and "--force" in line
    assert tree_hash(root) == whole  # nothing restored, not even the unchanged files

    forced = run_installed("--root", root, "undo", "--force")
    assert forced.returncode == 0, forced.stderr
    assert created.relative_to(root).as_posix() in forced.stderr  # the warning names what it overwrote
    assert files(root) == template.before


def test_undo_keeps_the_age_of_a_memory_dated_by_its_file_time(tmp_path, cli):
    """Claude Code's memory files carry no mtime: their age is the file's. Undo must not make them new."""
    repo = make_git_project(tmp_path / "repo", ("src/gone/export.py",), ("gone_export",))
    root = repo / ".auto-dream"
    ensure_store(root)
    stale = write_memory_file(root, "memories/project/legacy_exporter.md", memory_text(
        "Legacy exporter", "project", None, "The legacy exporter lives in src/gone/export.py and "
        "gone_export() writes the XML feed."))
    forty_days_ago = (NOW - timedelta(days=40)).timestamp()
    os.utime(stale, (forty_days_ago, forty_days_ago))
    first = json.loads(cli("--root", root, "dream", "--json").out)
    assert [(a["kind"], a["path"]) for a in first["actions"] if a["kind"] == "archive"] == \
        [("archive", "memories/project/legacy_exporter.md")]

    assert cli("--root", root, "undo").code == 0
    (listed,) = json.loads(cli("--root", root, "list", "--json").out)
    assert listed["age_days"] == 40, listed  # as old as before the dream
    again = json.loads(cli("--root", root, "dream", "--dry-run", "--json").out)
    assert [a["kind"] for a in again["actions"] if a["kind"] == "archive"] == ["archive"]


@pytest.mark.slow  # kills a child Python at each step
def test_after_a_kill_memories_dated_by_their_file_time_keep_their_age(template, tmp_path, cli):
    """Rolling back a run, even one killed before it changed a file, must not make old memories new."""
    root = copy_repo(template.repo, tmp_path / "repo")
    for relative, (name, memory_type, days, body) in ORIGINAL_MEMORIES.items():
        path = write_memory_file(root, relative, memory_text(name, memory_type, None, body))  # no mtime key
        when = (NOW - timedelta(days=days)).timestamp()
        os.utime(path, (when, when))
    clean = copy_repo(root.parent, tmp_path / "clean")  # copytree keeps file times
    assert cli("--root", clean, "dream").code == 0

    kill_dream(root, 2)  # the journal is written, no memory file touched yet
    report = json.loads(cli("--root", root, "dream", "--json").out)
    archived = [(a["kind"], a["path"]) for a in report["actions"] if a["kind"] == "archive"]
    assert archived == [("archive", STALE)], report["warnings"]  # still 40 days old: stale
    assert readable_memories(root) == readable_memories(clean)
    assert readable_memories(root, archived=True) == readable_memories(clean, archived=True)


@pytest.mark.slow  # starts the installed command
def test_dry_run_writes_nothing_and_takes_no_lock(template, tmp_path):
    root = copy_repo(template.repo, tmp_path / "repo")
    whole = tree_hash(root)
    shown = run_installed("--root", root, "dream", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("[DRY RUN]")
    assert f"[DRY RUN] Would archive: {STALE}" in shown.stdout  # it did plan work
    assert tree_hash(root) == whole  # .state/ included: no run, no journal, no lock
    assert not (root / ".state" / "dream.lock").exists()


def test_a_second_dream_right_after_a_clean_one_plans_nothing(template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0
    after_first = files(root)
    second = json.loads(cli("--root", root, "dream", "--json").out)
    assert second["actions"] == []
    assert second["stats"]["created"] == second["stats"]["merged"] == second["stats"]["superseded"] == 0
    assert files(root) == after_first
    assert len(list((root / ".state" / "runs").iterdir())) == 1  # nothing to undo from the second


def test_a_memory_changed_after_orient_is_not_overwritten_and_its_entries_wait(template, tmp_path, cli):
    root = copy_repo(template.repo, tmp_path / "repo")
    context = open_context(root)
    snapshot = gather(orient(context, NOW, new_run_id(context.paths, NOW), DreamOptions()))
    plan = plan_dream(snapshot, DeterministicDistiller())
    (merge,) = [a for a in plan.actions if isinstance(a, UpdateMemory)]
    assert merge.before.path == STAGING
    target = root / STAGING
    edited = target.read_text(encoding="utf-8") + "\nThe kestrel cluster moves to eu-west in June.\n"
    target.write_text(edited, encoding="utf-8")  # someone edits it while the dream plans

    applied = apply(plan, snapshot)
    assert target.read_text(encoding="utf-8") == edited
    assert merge not in applied.actions
    assert any(STAGING in warning and "not updated" in warning for warning in applied.skipped), applied.skipped
    assert set(merge.entry_ids).isdisjoint(read_distilled_ids(context.paths))
    check = json.loads(cli("--root", root, "check", "--json").out)
    assert check["undistilled_entries"] == len(merge.entry_ids)  # the rest was carried out
    assert (root / "archive" / "project" / "legacy_importer.md").exists()

    # The next dream distils the waiting entry, keeping the edit. (The edit made the memory three
    # sentences long: a document, which takes a new fact only when it already says it, so the
    # entry becomes a memory of its own.)
    assert cli("--root", root, "dream").code == 0
    assert "moves to eu-west in June" in target.read_text(encoding="utf-8")
    assert any("smoke test gate" in path.read_text(encoding="utf-8") for path in (root / "memories").rglob("*.md"))
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == 0


def test_a_run_recorded_without_a_status_file_is_still_found_by_undo_and_roll_back(template, tmp_path, cli):
    """Runs of earlier versions have only journal.json: their status is read from it."""
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0
    (run_folder,) = (root / ".state" / "runs").iterdir()
    assert (run_folder / "status").read_text() == "done"
    (run_folder / "status").unlink()
    assert cli("--root", root, "undo").code == 0
    assert files(root) == template.before
    assert (run_folder / "status").read_text() == "undone"


def test_a_status_file_that_lags_behind_its_journal_does_not_roll_back_a_finished_run(template, tmp_path, cli):
    """Killed between journal.json and status: the journal decides."""
    root = copy_repo(template.repo, tmp_path / "repo")
    assert cli("--root", root, "dream").code == 0
    after = files(root)
    (run_folder,) = (root / ".state" / "runs").iterdir()
    (run_folder / "status").write_text("applying")
    assert cli("--root", root, "dream").code == 0
    assert files(root) == after  # nothing rolled back, nothing new to do
    assert cli("--root", root, "undo").code == 0 and files(root) == template.before


def test_the_folder_of_new_memories_is_synced_once_before_what_counts_on_them(tmp_path, monkeypatch, cli):
    """A dream that creates many memories syncs their folder once (it synced it once a file:
    16,000 syncs for 16,000 new memories), and before the distilled record and MEMORY.md
    that count on the new files are written."""
    from auto_dream.dream import journal
    from auto_dream.store import replace

    root = tmp_path / "store"
    ensure_store(root)
    for n in range(30):
        assert cli("--root", root, "append", "--type", "project", f"zq{n:03d}x fact number {n} is unrelated").code == 0
    events: list[tuple[str, str]] = []
    real_sync, real_change = replace.fsync_dir, journal.apply_change
    monkeypatch.setattr(replace, "fsync_dir", lambda folder: events.append(("sync", str(folder))) or
                        real_sync(folder))
    monkeypatch.setattr("auto_dream.dream.apply.apply_change", lambda paths, change, *args: events.append(
        ("write", change.path)) or real_change(paths, change, *args))
    assert cli("--root", root, "dream", "--no-llm").code == 0
    folder = str(root / "memories" / "project")
    created = [i for i, (kind, path) in enumerate(events) if kind == "write" and path.startswith("memories/project/")]
    assert len(created) == 30
    syncs = [i for i, event in enumerate(events) if event == ("sync", folder)]
    assert len(syncs) == 1, f"the folder of 30 new memories was synced {len(syncs)} times"
    first_other = min(i for i, (kind, path) in enumerate(events)
                      if kind == "write" and not path.startswith("memories/"))
    assert created[-1] < syncs[0] < first_other
