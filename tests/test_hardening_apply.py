"""Hardening: apply and undo against what a hostile test did to them.

Edits made while a dream applies, planted journals and run ids, interrupted runs, read-only
files, write errors half-way, leftovers of kills, a deleted .state/, a symlinked MEMORY.md,
and an entry back-dated into the future.
"""

import errno
import json
import os
import re
import signal
from datetime import datetime, timedelta, timezone

import pytest

from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream import journal
from auto_dream.dream.runner import dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.errors import StoreError
from auto_dream.store.context import open_context
from builders import add_entry, write_memory
from builders import live_memories as live
from conftest import run_installed, run_killed_at, tree_hash, write_memory_file

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
DEPLOYS = "Deploys happen every Tuesday afternoon from the release branch"


def run(root, now=NOW, step_hook=None, **options):
    return dream(open_context(root), now, DreamOptions(**options), DeterministicDistiller(),
                 step_hook=step_hook).report.as_json()


def add(root, text, kind="project", at=None):
    add_entry(root, text, kind, at or NOW - timedelta(days=1))


def memory(root, relative, name, body, kind="project", days_ago=30, extra=""):
    return write_memory(root, relative, name, body, kind, NOW - timedelta(days=days_ago), extra=extra)


def two_duplicates(root):
    """Two memories that dream merges: the older (a) into the newer (b)."""
    older = memory(root, "memories/project/20260901_a.md", "Deploy day",
                   f"{DEPLOYS}\n\nRollbacks need two approvals", days_ago=60)
    newer = memory(root, "memories/project/20261101_b.md", "Deploy schedule", DEPLOYS, days_ago=20)
    return older, newer


def edit_at_first_write(path, text):
    """A step hook that appends `text` to `path` once the journal is written, before any change."""
    def hook(step):
        if step == 2:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
    return hook


def run_folders(root):
    return sorted(p.name for p in (root / ".state" / "runs").iterdir())


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("auto-dream: error: "), stderr
    return lines[0]


# ---------------------------------------------------------------- an edit made during apply


def test_an_edit_to_the_survivor_made_while_dream_applies_is_kept_and_nothing_is_retired(root):
    older, newer = two_duplicates(root)
    report = run(root, step_hook=edit_at_first_write(newer, "\nEdited by hand during the dream.\n"))
    assert "Edited by hand during the dream." in newer.read_text(encoding="utf-8")
    # The merge needed its survivor: the retiree stays where it was, whole, and no archive copy is left.
    assert "Rollbacks need two approvals" in older.read_text(encoding="utf-8")
    assert not (root / "archive").exists() or not any((root / "archive").rglob("*.md"))
    assert [a["kind"] for a in report["actions"] if a["kind"] in ("merge", "supersede")] == []
    assert any("changed since the dream started" in w for w in report["warnings"]), report["warnings"]
    # MEMORY.md lists both, as they are on disk.
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "20260901_a.md" in index and "20261101_b.md" in index


@pytest.mark.slow  # starts the installed command
def test_an_edit_to_the_memory_being_retired_is_kept_live(root):
    older, newer = two_duplicates(root)
    report = run(root, step_hook=edit_at_first_write(older, "\nA detail added during the dream.\n"))
    text = older.read_text(encoding="utf-8")
    assert "A detail added during the dream." in text and "Rollbacks need two approvals" in text
    assert not any((root / "archive").rglob("*.md"))
    assert any("changed since the dream started" in w for w in report["warnings"]), report["warnings"]
    # Undo of this run leaves the hand edit alone: it is in no pre-image, and never overwritten.
    run_installed("--root", root, "undo")
    assert "A detail added during the dream." in older.read_text(encoding="utf-8")


def test_an_edit_to_a_memory_an_entry_updates_is_kept_and_the_entry_waits(root):
    path = memory(root, "memories/feedback/20261001_no_mocks.md", "No database mocks",
                  "Don't mock the database in integration tests.", "feedback")
    add(root, "Do not mock the database in integration tests: use the docker compose Postgres", "feedback")
    report = run(root, step_hook=edit_at_first_write(path, "\nHand edit.\n"))
    text = path.read_text(encoding="utf-8")
    assert "Hand edit." in text and "docker compose Postgres" not in text
    assert any("not updated" in w for w in report["warnings"]), report["warnings"]
    # The entry was not recorded as distilled: the next dream takes it.
    again = run(root, now=NOW + timedelta(minutes=5))
    assert "docker compose Postgres" in "\n".join(m.text() for m in live(root).values()), again
    assert "Hand edit." in "\n".join(m.text() for m in live(root).values())


def test_a_file_written_where_dream_creates_one_is_kept(root):
    add(root, "The staging cluster lives in eu-west-1.")
    seen = {}

    def hook(step):
        if step == 2:  # the journal names the file dream will create: put a hand-written one there
            (record,) = [f for f in json.loads(next((root / ".state" / "runs").glob("*/journal.json"))
                                              .read_text())["files"] if f["path"].startswith("memories/")]
            seen["path"] = root / record["path"]
            write_memory_file(root, record["path"], "---\nname: Mine\ntype: project\n---\nWritten by hand.\n")

    report = run(root, step_hook=hook)
    assert seen["path"].read_text(encoding="utf-8").endswith("Written by hand.\n")
    assert any("not created" in w for w in report["warnings"]), report["warnings"]


@pytest.mark.slow  # starts the installed command
def test_memory_md_edited_while_dream_applies_is_kept_and_the_report_says_so(root):
    two_duplicates(root)
    assert run_installed("--root", root, "build-index").returncode == 0
    index = root / "MEMORY.md"
    report = run(root, step_hook=edit_at_first_write(index, "\nA line written by hand.\n"))
    assert index.read_text(encoding="utf-8").endswith("A line written by hand.\n")
    assert "index" not in [a["kind"] for a in report["actions"]]
    assert any(w.startswith("MEMORY.md changed since the dream started") for w in report["warnings"]), \
        report["warnings"]


# ---------------------------------------------------------------- undo: ids and journals


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("bad", ["../..", "", "bogus-id", "0001-2026", "0001-20261130T120000/../.."])
def test_undo_refuses_a_bad_run_id_with_exit_2_and_writes_nothing(root, bad):
    two_duplicates(root)
    assert run_installed("--root", root, "dream").returncode == 0
    before = tree_hash(root)
    undone = run_installed("--root", root, "undo", bad)
    assert undone.returncode == 2, undone
    assert "not a run id" in one_error_line(undone.stderr)
    assert tree_hash(root) == before


@pytest.mark.slow  # starts the installed command
def test_undo_of_a_well_formed_run_id_that_does_not_exist_is_bad_input(root):
    two_duplicates(root)
    assert run_installed("--root", root, "dream").returncode == 0
    undone = run_installed("--root", root, "undo", "0099-20261130T120000")
    assert undone.returncode == 2, undone
    assert "no dream run" in one_error_line(undone.stderr)


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("planted", ["../outside.txt", "ABSOLUTE", "memories/../../outside.txt",
                                     42, None, "logs/2026/11/2026-11-30.md"])
def test_a_planted_journal_never_makes_undo_write_outside_what_a_run_touches(root, tmp_path, planted):
    two_duplicates(root)
    assert run_installed("--root", root, "dream").returncode == 0
    (run_id,) = run_folders(root)
    journal_file = root / ".state" / "runs" / run_id / "journal.json"
    journal = json.loads(journal_file.read_text())
    absolute = tmp_path / "absolute-outside.txt"
    journal["files"].append({"path": str(absolute) if planted == "ABSOLUTE" else planted, "pre": "00000",
                             "pre_sha256": "0" * 64, "post_sha256": None, "mode": 0o644, "mtime_ns": None})
    journal_file.write_text(json.dumps(journal))
    outside = [tmp_path / "store" / "outside.txt", tmp_path / "outside.txt", absolute]
    before = tree_hash(root)
    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 1, undone
    assert "damaged journal" in one_error_line(undone.stderr)
    assert tree_hash(root) == before
    assert not any(p.exists() for p in outside)


@pytest.mark.slow  # starts the installed command
def test_run_ids_sort_as_numbers_so_undo_takes_run_10000_after_9999(root):
    two_duplicates(root)
    assert run_installed("--root", root, "dream").returncode == 0
    add(root, "The staging cluster lives in eu-west-1.")
    assert run_installed("--root", root, "dream").returncode == 0
    first, second = run_folders(root)
    folder = root / ".state" / "runs"
    for old, new in ((first, "9999-20261130T120000"), (second, "10000-20261130T120100")):
        journal = json.loads((folder / old / "journal.json").read_text())
        journal["run_id"] = new
        (folder / old / "journal.json").write_text(json.dumps(journal))
        (folder / old).rename(folder / new)
    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 0, undone
    assert undone.stdout.startswith("undid run 10000-20261130T120100"), undone.stdout
    # and the next run is numbered after the highest
    add(root, "The production cluster lives in us-east-2.")
    assert run_installed("--root", root, "dream").returncode == 0
    assert any(name.startswith("10001-") for name in run_folders(root))


# ---------------------------------------------------------------- undo: MEMORY.md is derived


def index_targets(root) -> list[str]:
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    return re.findall(r"\]\(([^)]+\.md)\)", text)


@pytest.mark.slow  # kills a child Python at each step
def test_undo_of_an_interrupted_run_leaves_a_changed_file_says_so_and_the_index_has_no_dangling_link(root):
    add(root, "The staging cluster lives in eu-west-1.")
    add(root, "Release notes are written in the CHANGELOG.md file.")
    killed = run_killed_at(5, "--root", root, "dream")
    assert killed.returncode == -signal.SIGKILL
    created = sorted((root / "memories").rglob("*.md"))
    assert created, "the kill came after the memories were written"
    created[0].write_text(created[0].read_text(encoding="utf-8") + "\nEdited after the kill.\n",
                          encoding="utf-8")
    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 0, undone
    assert "rolled back the interrupted run" in undone.stdout
    assert "--force" not in undone.stderr and "left as it is" in undone.stderr, undone.stderr
    assert "Edited after the kill." in created[0].read_text(encoding="utf-8")
    for target in index_targets(root):
        assert (root / target).is_file(), f"MEMORY.md links {target}, which is gone"


@pytest.mark.slow  # starts the installed command
def test_undo_after_build_index_rebuilds_the_index_and_reverts_last_dream(root):
    two_duplicates(root)
    assert run_installed("--root", root, "dream").returncode == 0
    last = json.loads((root / ".state" / "last_dream.json").read_text())
    # A memory written by hand after the run, then build-index: MEMORY.md is no longer what the run wrote.
    memory(root, "memories/user/20261120_editor.md", "Editor", "The user edits in Helix.", "user", days_ago=10)
    assert run_installed("--root", root, "build-index").returncode == 0
    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 0, undone
    targets = index_targets(root)
    assert "memories/user/20261120_editor.md" in targets
    assert "memories/project/20260901_a.md" in targets  # restored by the undo, listed again
    assert all((root / t).is_file() for t in targets)
    assert not (root / ".state" / "last_dream.json").exists() or \
        json.loads((root / ".state" / "last_dream.json").read_text())["run_id"] != last["run_id"]


# ---------------------------------------------------------------- read-only files, write errors


def test_a_read_only_memory_is_neither_merged_into_nor_retired(root):
    older, newer = two_duplicates(root)
    older.chmod(0o444)
    before = {p: p.read_bytes() for p in (older, newer)}
    report = run(root)
    assert {p: p.read_bytes() for p in (older, newer)} == before
    assert not any((root / "archive").rglob("*.md"))
    assert any("read-only" in w for w in report["warnings"]), report["warnings"]


def test_a_read_only_memory_an_entry_would_update_is_left_and_the_entry_waits(root):
    path = memory(root, "memories/feedback/20261001_no_mocks.md", "No database mocks",
                  "Don't mock the database in integration tests.", "feedback")
    path.chmod(0o444)
    before = path.read_bytes()
    add(root, "Do not mock the database in integration tests: use the docker compose Postgres", "feedback")
    report = run(root)
    assert path.read_bytes() == before
    assert any("read-only" in w for w in report["warnings"]), report["warnings"]


def test_a_write_error_half_way_rolls_the_run_back(root, monkeypatch):
    two_duplicates(root)
    add(root, "The staging cluster lives in eu-west-1.")
    add(root, "Release notes are written in the CHANGELOG.md file.")
    before = tree_hash(root / "memories")
    index_before = (root / "MEMORY.md").read_bytes() if (root / "MEMORY.md").exists() else None
    real, calls = journal.apply_change, []

    def failing(paths, change, run_id, *expected):
        calls.append(change.path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(paths.root / change.path))
        return real(paths, change, run_id, *expected)

    monkeypatch.setattr("auto_dream.dream.apply.apply_change", failing)
    with pytest.raises(StoreError, match="rolled back"):
        run(root)
    assert tree_hash(root / "memories") == before
    assert not any((root / "archive").rglob("*.md"))
    assert ((root / "MEMORY.md").read_bytes() if (root / "MEMORY.md").exists() else None) == index_before
    (run_id,) = run_folders(root)
    assert (root / ".state" / "runs" / run_id / "status").read_text() == "rolled_back"
    monkeypatch.undo()
    assert [a["kind"] for a in run(root, now=NOW + timedelta(minutes=1))["actions"]].count("create") == 2


# ---------------------------------------------------------------- leftovers, .state, MEMORY.md link


@pytest.mark.slow  # starts the installed command
def test_the_next_run_removes_temporary_files_and_run_folders_a_kill_or_full_disk_left(root):
    two_duplicates(root)
    left = [root / "memories" / "project" / ".20261101_b.md.ab12cd34.tmp",
            root / ".state" / ".last_dream.json.zz9_x1y2.tmp", root / ".MEMORY.md.k3j4h5g6.tmp"]
    for path in left:
        path.write_text("half written")
    old = (NOW - timedelta(hours=1)).timestamp()
    os.utime(left[-1], (old, old))
    partial = root / ".state" / "runs" / "0007-20261129T030000"
    (partial / "pre").mkdir(parents=True)
    (partial / "pre" / "00000").write_text("a pre-image, but no journal")
    assert run_installed("--root", root, "dream").returncode == 0
    assert [p for p in left if p.exists()] == []
    assert not partial.exists()
    assert [p for p in root.rglob(".*.tmp")] == []


@pytest.mark.slow  # starts the installed command
def test_dream_and_undo_recreate_a_deleted_state_folder(root):
    two_duplicates(root)
    import shutil

    shutil.rmtree(root / ".state")
    undone = run_installed("--root", root, "undo")
    assert undone.returncode == 1 and "no dream run to undo" in one_error_line(undone.stderr)
    dreamt = run_installed("--root", root, "dream")
    assert dreamt.returncode == 0, dreamt
    assert (root / ".state" / "runs").is_dir()


@pytest.mark.slow  # starts the installed command
def test_a_symlinked_memory_md_is_refused_not_replaced(root, tmp_path):
    two_duplicates(root)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("# my own index\n")
    (root / "MEMORY.md").unlink(missing_ok=True)
    (root / "MEMORY.md").symlink_to(elsewhere)
    before = tree_hash(root)
    for command in ("dream", "undo"):
        result = run_installed("--root", root, command)
        assert result.returncode == 1, result
        assert "symlink" in one_error_line(result.stderr) or "symbolic link" in result.stderr
    assert (root / "MEMORY.md").is_symlink() and elsewhere.read_text() == "# my own index\n"
    assert tree_hash(root) == before


@pytest.mark.slow  # starts the installed command
def test_undo_gives_memory_md_back_its_mode(root):
    two_duplicates(root)
    assert run_installed("--root", root, "build-index").returncode == 0
    (root / "MEMORY.md").chmod(0o644)
    assert run_installed("--root", root, "dream").returncode == 0
    assert run_installed("--root", root, "undo").returncode == 0
    assert oct((root / "MEMORY.md").stat().st_mode & 0o777) == "0o644"


# ---------------------------------------------------------------- a back-dated entry in the future


def test_an_entry_dated_in_the_future_does_not_outrank_a_later_correction(root):
    local = NOW.replace(tzinfo=None)
    add(root, "The API gateway listens on port 8080.", at=local + timedelta(hours=20))
    run(root)
    (first,) = live(root).values()
    assert first.mtime <= NOW  # capped at the time it was read
    add(root, "The API gateway listens on port 9090.", at=local + timedelta(hours=2))
    report = run(root, now=NOW + timedelta(hours=3))
    text = "\n".join(m.text() for m in live(root).values())
    assert "9090" in text, report
    assert not any(a["kind"] == "skip" for a in report["actions"]), report["actions"]


def test_a_memory_dated_in_the_future_has_no_known_order_and_never_swallows_a_correction(root):
    path = memory(root, "memories/feedback/20991231_pnpm.md", "Package manager", "Use pnpm for installs",
                  "feedback", days_ago=-365 * 70)
    add(root, "Switched to npm instead of pnpm for installs", "feedback")
    report = run(root)
    text = "\n".join(m.text() for m in live(root).values())
    assert "Switched to npm" in text and path.exists(), report
    assert [(r["path"], r["target"]) for r in report["review"]] != [], report
    assert not any(a["kind"] == "skip" for a in report["actions"]), report["actions"]
