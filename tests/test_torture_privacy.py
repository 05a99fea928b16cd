"""Torture: a memory store is private. Every file the store creates is readable by its owner only
(0600) and every folder is 0700 — after init, append (library and installed command), dream
(memories, archive copies, MEMORY.md, .state files, the run journal and its pre-images, the
reports), build-index and undo — even under a permissive umask, so the modes do not come from it.
"""

import json
import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import run_installed

pytestmark = pytest.mark.slow  # a torture test: `make test` runs it, `make test-fast` leaves it out

NOW = datetime.now().astimezone()


@pytest.fixture
def permissive_umask():
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def loose_modes(root: Path) -> list[str]:
    """Everything under the store (the store itself too) that is not owner-only."""
    loose = []
    for path in [root, *sorted(root.rglob("*"))]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        wanted = 0o700 if path.is_dir() else 0o600
        if mode != wanted:
            loose.append(f"{path.relative_to(root.parent).as_posix()}: {mode:o}")
    return loose


def present(root: Path, *patterns: str) -> None:
    """The files whose modes are checked exist, so the check is not vacuous."""
    for pattern in patterns:
        assert list(root.glob(pattern)), f"nothing matches {pattern}"


def at(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%d %H:%M")


def test_every_file_and_folder_the_store_creates_is_owner_only(tmp_path, cli, permissive_umask):
    project = tmp_path / "project"
    project.mkdir()  # the user's folder: not the store's to lock down
    assert cli("init", project).code == 0
    root = project / ".auto-dream"
    present(root, "config.toml", "MEMORY.md", "logs", "memories/user", "archive", ".state")
    assert loose_modes(root) == []

    # append: through the library's command path and through the installed fast path, into
    # new year and month folders (a back-dated entry) as well as today's log.
    assert cli("--root", root, "append", "--type", "feedback", "--at", at(40),
               "Always rebase feature branches before merging.").code == 0
    appended = run_installed("--root", root, "append", "--type", "user", "The user reads logs in the morning.")
    assert appended.returncode == 0, appended.stderr
    present(root, f"logs/{NOW - timedelta(days=40):%Y/%m}/*.md", f"logs/{NOW:%Y/%m}/*.md")
    assert loose_modes(root) == []

    # dream: new memories, the index, dream's bookkeeping, a run journal and its reports.
    first = cli("--root", root, "dream", "--json")
    assert first.code == 0, first.err
    present(root, "memories/feedback/*.md", "memories/user/*.md", "MEMORY.md", ".state/distilled.txt",
            ".state/runs/*/report.md", ".state/runs/*/report.json")
    (run,) = (root / ".state" / "runs").iterdir()
    journal = [p for p in run.rglob("*") if p.is_file() and p.name not in ("report.md", "report.json")]
    assert len(journal) >= 2, journal  # the journal, and the pre-image of MEMORY.md at least
    assert loose_modes(root) == []

    # A contradiction: the old memory moves to archive/ (a new folder) through the installed command.
    assert cli("--root", root, "append", "--type", "feedback", "--at", at(1),
               "Never rebase feature branches; merge main into them instead.").code == 0
    second = run_installed("--root", root, "dream", "--json")
    assert second.returncode == 0, second.stderr
    present(root, "archive/feedback/*.md")
    assert loose_modes(root) == []

    # build-index writes MEMORY.md afresh.
    (root / "MEMORY.md").unlink()
    assert cli("--root", root, "build-index").code == 0
    present(root, "MEMORY.md")
    assert loose_modes(root) == []

    # undo restores the pre-images, and undoing the first run too empties memories/. (The runs are
    # named: two dreams within one second are not told apart by a bare `undo`, see test_torture_kills.)
    assert cli("--root", root, "undo", json.loads(second.stdout)["run_id"]).code == 0
    assert list(root.glob("archive/feedback/*.md")) == []
    assert loose_modes(root) == []
    assert cli("--root", root, "undo", json.loads(first.out)["run_id"]).code == 0
    assert list(root.glob("memories/*/*.md")) == []
    assert loose_modes(root) == []
