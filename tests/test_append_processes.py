"""End to end: the installed `auto-dream append` from many processes at once."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from auto_dream.store.daylog import read_all_entries
from auto_dream.store.paths import StorePaths
from conftest import installed_command

pytestmark = pytest.mark.slow  # every test starts the installed command or a child Python

WORKERS = 8
APPENDS = 100


def expected_text(worker: int, number: int) -> str:
    # Long and multi-line, so an interleaved or torn write could not parse back intact.
    return (f"worker {worker} entry {number}: 用户想通过内容平台分享知识 " + "x" * 200
            + f"\ncontinued line for {worker}/{number}\n  indented (project) [{worker}]")


def test_eight_processes_append_one_hundred_each_without_loss(tmp_path):
    root = tmp_path / ".auto-dream"
    command = installed_command()
    env = {**os.environ, "AUTO_DREAM_ROOT": str(root)}

    def worker(number: int) -> list[int]:
        codes = []
        for i in range(APPENDS):
            done = subprocess.run([command, "append", "--type", "project", "--at", "2026-04-01 10:00",
                                   expected_text(number, i)], env=env, capture_output=True, timeout=60)
            codes.append(done.returncode)
        return codes

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        codes = [code for result in pool.map(worker, range(WORKERS)) for code in result]
    assert codes == [0] * (WORKERS * APPENDS)

    entries, problems = read_all_entries(StorePaths(root))
    assert problems == []
    assert len(entries) == WORKERS * APPENDS
    assert sorted(e.text for e in entries) == sorted(
        expected_text(w, i) for w in range(WORKERS) for i in range(APPENDS))
    assert {e.type for e in entries} == {"project"}
    # every process's own entries are in the order it wrote them
    for w in range(WORKERS):
        mine = [e.text for e in entries if e.text.startswith(f"worker {w} ")]
        assert mine == [expected_text(w, i) for i in range(APPENDS)]


FAST_PATH_CHILD = """
import sys
from auto_dream.__main__ import _run
code = _run(["--root", sys.argv[1], "append", "--type", "user", "a fact"])
heavy = ("typer", "rich", "anthropic", "mcp", "pendulum", "markdown_it", "auto_dream.dream", "auto_dream.cli",
         "auto_dream.api")
print(code, sorted(m for m in sys.modules if m.startswith(heavy)))
"""


def test_the_fast_path_appends_without_loading_the_cli_the_sdk_or_the_dream(tmp_path):
    done = subprocess.run([sys.executable, "-c", FAST_PATH_CHILD, str(tmp_path / ".auto-dream")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"
    assert [e.text for e in read_all_entries(StorePaths(tmp_path / ".auto-dream"))[0]] == ["a fact"]
