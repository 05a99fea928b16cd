"""Every lookup is recorded: one consult-log line per `recall` and `show`, whole under
many processes at once, never touching a memory; dream's consult gate and decay read it."""

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest

from auto_dream.commands.recall import recall, show
from auto_dream.store.context import open_context
from test_staleness import NOW, add_stale_project, archive_actions, make_repo, run_dream


@pytest.fixture
def repo(root):
    """The store `root` (tmp/store/.auto-dream) inside a git work tree (tmp/store)."""
    return make_repo(root.parent)


def consult_lines(root) -> list[dict]:
    path = root / ".state" / "consult.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_recall_and_show_each_write_one_line_and_touch_no_memory(root, repo):
    relative = add_stale_project(root)
    before = (root / relative).stat().st_mtime_ns, (root / relative).read_bytes()
    context = open_context(root)
    hits = recall(context, "old module port", now=NOW)
    show(context, "Old module port", now=NOW)
    lines = consult_lines(root)
    assert [line["query"] for line in lines] == ["old module port", "Old module port"]
    assert lines[0]["paths"] == [hit.path for hit in hits] == [relative]
    assert lines[1] == {"ts": NOW.isoformat(timespec="seconds"), "query": "Old module port",
                        "names": ["Old module port"], "paths": [relative]}
    assert ((root / relative).stat().st_mtime_ns, (root / relative).read_bytes()) == before


def test_the_consult_gate_keeps_a_fully_stale_memory_recalled_last_week(root, repo):
    relative = add_stale_project(root)
    recall(open_context(root), "where is the old module port", now=NOW - timedelta(days=7))
    report = run_dream(root)
    assert archive_actions(report) == []
    assert (root / relative).is_file()


def test_without_the_lookup_the_same_memory_is_archived(root, repo):
    relative = add_stale_project(root)
    assert [a["path"] for a in archive_actions(run_dream(root))] == [relative]


@pytest.mark.slow  # starts a child Python
def test_sixteen_processes_recalling_at_once_each_leave_one_whole_line(root, repo):
    add_stale_project(root)
    env = {**os.environ, "AUTO_DREAM_ROOT": str(root)}
    children = [subprocess.Popen([sys.executable, "-m", "auto_dream", "recall", f"old module port {n}", "--json"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(16)]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert len(json.loads(out)) == 1
    lines = consult_lines(root)
    assert sorted(line["query"] for line in lines) == sorted(f"old module port {n}" for n in range(16))


# ---------------------------------------------------------------- the fast path agents call


RECALL_CASES = [["recall", "old", "module", "port"], ["recall", "port", "--json"], ["recall", "-n", "1", "port"],
                ["recall", "--limit=1", "--type", "project", "--archived", "port", "--json"],
                ["recall", "nothing", "matches", "this"], ["recall", "--", "--port"]]


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv", RECALL_CASES, ids=" ".join)
def test_the_fast_recall_path_and_typer_answer_alike(root, repo, cli, argv):
    from auto_dream.__main__ import quick_recall_arguments
    from conftest import run_installed

    add_stale_project(root)
    assert quick_recall_arguments(["--root", str(root), *argv]) is not None  # really the fast path
    fast = run_installed("--root", root, *argv)
    typer = cli("--root", root, *argv)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.code, typer.out, typer.err)
    assert fast.returncode == 0
    assert len(consult_lines(root)) == 2  # each recorded its lookup


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv", [["recall", " "], ["recall", "--type", "idea", "port"]], ids=" ".join)
def test_the_fast_recall_path_and_typer_fail_alike(root, cli, argv):
    fast = __import__("conftest").run_installed("--root", root, *argv)
    typer = cli("--root", root, *argv)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.code, typer.out, typer.err)
    assert fast.returncode == 2 and fast.stderr.count("\n") == 1


# ---------------------------------------------------------------- what a lookup must never do


def test_a_symlinked_recall_index_is_refused_and_its_target_left_alone(root, repo, cli, tmp_path):
    import sqlite3

    add_stale_project(root)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE precious (x)")
    (root / ".state" / "recall.sqlite3").symlink_to(other)
    before = other.read_bytes()
    result = cli("--root", root, "recall", "old module port")
    assert result.code == 1 and "is a symbolic link" in result.err and result.err.count("\n") == 1, result
    assert other.read_bytes() == before


@pytest.mark.slow  # starts a child Python
def test_a_fifo_where_the_consult_log_goes_never_blocks_a_lookup_or_a_check(root, repo, cli):
    add_stale_project(root)
    os.mkfifo(root / ".state" / "consult.jsonl")
    done = subprocess.run([sys.executable, "-m", "auto_dream", "--root", str(root), "recall", "old module port"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Old module port" in done.stdout, done.stderr
    checked = subprocess.run([sys.executable, "-m", "auto_dream", "--root", str(root), "check"],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_a_consult_line_nested_past_pythons_limit_is_passed_over(root, repo, cli):
    add_stale_project(root)
    (root / ".state" / "consult.jsonl").write_text("[" * 100_000 + "\n")
    assert cli("--root", root, "check").code == 0
    assert cli("--root", root, "dream", "--dry-run").code == 0


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("limit", ["²", "٣", "99999999999999999999"])
def test_an_odd_limit_gets_the_same_answer_on_both_paths(root, repo, cli, limit):
    from conftest import run_installed

    add_stale_project(root)
    fast = run_installed("--root", root, "recall", "--limit", limit, "port")
    typer = cli("--root", root, "recall", "--limit", limit, "port")
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.code, typer.out, typer.err)
    assert "Traceback" not in fast.stderr
