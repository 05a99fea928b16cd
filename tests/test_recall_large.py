"""A large store's recall (the 100,000-memory target): the folders are checked before the
answer, every file's fingerprint after it (store.recall.with_recall_index's `defer`).

FULL_CHECK_FILES is lowered so that a handful of files is "large"; the command-line recall is
run in a subprocess (shell.run_owed_checks forks the full check off), the rest in-process through
commands.recall.recall_owing, which returns the check it leaves owing with its answer."""

import fcntl
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

import auto_dream
import auto_dream.store.recall_index as recall_index
from auto_dream.commands.recall import recall_owing
from auto_dream.store.context import open_context
from auto_dream.store.walk import list_folder, walk_memory_files
from builders import write_memory

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def put(root: Path, relative: str, name: str, body: str) -> Path:
    return write_memory(root, relative, name, body, "project", NOW)


def replace(path: Path, text: str) -> None:
    """Write `path` as auto-dream and editors that save by renaming do: a new file (inode)."""
    spare = path.with_name(path.name + ".tmp")
    spare.write_text(text, encoding="utf-8")
    os.replace(spare, path)


def age_folders(root: Path) -> None:
    """Every folder's mtime put a minute back, as if nothing had happened lately: a recall then
    records it as it is (not as 'look again', store.recall.RACY_NS)."""
    back = time.time() - 60
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, (back, back))


@pytest.fixture
def large(root, monkeypatch) -> Path:
    """A store above the (lowered) full-check limit, its index built, its folders settled."""
    monkeypatch.setattr(recall_index, "FULL_CHECK_FILES", 3)
    for number in range(6):
        put(root, f"memories/project/note{number}.md", f"Note {number}", f"Ordinary text number {number}.")
    age_folders(root)
    assert recalled(root, "ordinary")[1] is None  # built: the full check, before the answer
    return root


def recalled(root: Path, query: str, defer: bool = True) -> tuple[list[str], recall_index.FullCheck | None]:
    """The paths a recall finds, and the full check it leaves owing."""
    hits, owed = recall_owing(open_context(root), query, limit=50, now=NOW, defer=defer)
    return [hit.path for hit in hits], owed


def paths_of(root: Path, query: str, defer: bool = True) -> list[str]:
    return recalled(root, query, defer)[0]


def test_a_file_written_in_place_is_found_after_the_full_check_the_recall_leaves_owing(large):
    target = large / "memories/project/note2.md"
    with target.open("a", encoding="utf-8") as file:  # in place: its folder and inode unchanged
        file.write("Now about a platypus.\n")
    found, owed = recalled(large, "platypus")
    assert found == [] and owed is not None and owed.paths.root == large  # answered from the folders' check
    owed.run()
    assert paths_of(large, "platypus") == ["memories/project/note2.md"]


def test_a_store_runs_the_checks_its_deferring_recalls_left_owing(large):
    """The library's Store keeps what its recalls with `defer` leave owing until its caller
    (the MCP server, in a thread) runs them."""
    store = auto_dream.open_store(large)
    with (large / "memories/project/note2.md").open("a", encoding="utf-8") as file:
        file.write("Now about a platypus.\n")
    assert store.recall("platypus", defer=True) == [] and store.show("Note 3", defer=True).name == "Note 3"
    store.run_owed_checks()
    assert [hit.path for hit in store.recall("platypus", defer=True)] == ["memories/project/note2.md"]
    assert [hit.path for hit in store.recall("platypus")] == ["memories/project/note2.md"]


def test_a_file_replaced_added_or_removed_is_seen_by_the_next_recall(large):
    replace(large / "memories/project/note1.md", "---\nname: Note 1\ntype: project\n---\nAbout a wombat.\n")
    assert paths_of(large, "wombat") == ["memories/project/note1.md"]
    assert "memories/project/note1.md" not in paths_of(large, "ordinary")
    put(large, "memories/user/fresh.md", "Fresh", "About a quokka.")  # a new folder's first file
    assert paths_of(large, "quokka") == ["memories/user/fresh.md"]
    (large / "memories/project/note3.md").unlink()
    assert "memories/project/note3.md" not in paths_of(large, "ordinary")
    assert all(paths_of(large, word) for word in ("wombat", "quokka"))  # nothing lost on the way


def test_a_new_subfolder_is_walked_and_a_removed_one_forgotten(large):
    put(large, "memories/project/deep/er/inner.md", "Inner", "About an axolotl.")
    assert paths_of(large, "axolotl") == ["memories/project/deep/er/inner.md"]
    age_folders(large)
    paths_of(large, "axolotl")  # the settled stamps recorded
    (large / "memories/project/deep/er/inner.md").unlink()
    (large / "memories/project/deep/er").rmdir()
    assert paths_of(large, "axolotl") == []
    assert len(paths_of(large, "ordinary")) == 6  # the folder above kept every file


def test_a_folder_changed_within_its_clocks_tick_is_looked_at_again(large):
    """A file added in the same tick of the file system's clock leaves its folder's mtime as the
    last listing saw it: a folder recorded that close to its listing is listed again."""
    folder = large / "memories/project"
    put(large, "memories/project/first.md", "First", "About a pangolin.")
    assert paths_of(large, "pangolin") == ["memories/project/first.md"]
    seen = folder.stat().st_mtime_ns
    put(large, "memories/project/second.md", "Second", "About a narwhal.")
    os.utime(folder, ns=(seen, seen))  # the second write within the same tick
    assert paths_of(large, "narwhal") == ["memories/project/second.md"]


def test_a_store_within_the_limit_checks_every_file_before_it_answers(root, monkeypatch):
    monkeypatch.setattr(recall_index, "FULL_CHECK_FILES", 100)
    put(root, "memories/project/only.md", "Only", "Ordinary text.")
    age_folders(root)
    assert paths_of(root, "ordinary") == ["memories/project/only.md"]
    with (root / "memories/project/only.md").open("a", encoding="utf-8") as file:
        file.write("Now about a platypus.\n")
    assert recalled(root, "platypus") == (["memories/project/only.md"], None)


def test_the_library_never_defers(large):
    with (large / "memories/project/note4.md").open("a", encoding="utf-8") as file:
        file.write("Now about a platypus.\n")
    assert recalled(large, "platypus", defer=False) == (["memories/project/note4.md"], None)


@pytest.mark.slow  # starts a child Python
def test_the_command_line_answers_then_checks_every_file_in_a_process_of_its_own(large):
    """`auto-dream recall` in a subprocess: its answer comes without the file written in place,
    its output closes at once (the check is off the caller's pipes), the check holds the lock
    file until it is done, and the next recall finds the new words."""
    target = large / "memories/project/note5.md"
    with target.open("a", encoding="utf-8") as file:
        file.write("Now about a platypus.\n")
    program = ("import sys, auto_dream.store.recall_index as r; r.FULL_CHECK_FILES = 3; "
               "from auto_dream.__main__ import main; sys.argv[0] = 'auto-dream'; main()")

    def recall_cli(*query: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", program, "--root", str(large), "recall", *query, "--json"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (0, "")
        return [hit["path"] for hit in json.loads(done.stdout)]

    assert recall_cli("platypus") == []
    lock = os.open(large / ".state" / recall_index.SWEEP_LOCK_NAME, os.O_WRONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the check the recall left running
    finally:
        os.close(lock)
    assert recall_cli("platypus") == ["memories/project/note5.md"]


def test_listing_a_folder_by_inode_takes_the_files_the_walk_takes(tmp_path):
    base = tmp_path / "memories"
    for name in ("a.md", "b.md", ".hidden.md", "notes.txt", "MEMORY.md", "sub/c.md", "sub/.dot/d.md"):
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("x")
    (base / "folder.md").mkdir()
    (base / "link.md").symlink_to(base / "a.md")
    if sys.platform != "darwin":  # macOS refuses a name that is not UTF-8
        (base / "name-\udcff.md").write_bytes(b"x")
    for relative, flat in (("memories", False), ("", True)):
        walked, walked_odd = walk_memory_files(base, relative, ordered=True)
        listed_odd: list = []
        listed = list_folder(str(base), relative, flat=flat, ext=".md", odd=listed_odd, fingerprints=False)
        assert listed is not None
        top = [path for path, _ in walked if "/" not in path[len(relative) + 1 if relative else 0:]]
        assert sorted(path for path, _ in listed[0]) == top
        assert dict(listed[0]) == {path: seen[2] for path, seen in walked if path in top}  # d_ino is st_ino
        assert [bad.path for bad in sorted(listed_odd, key=lambda bad: bad.path)] == \
            [bad.path for bad in walked_odd if "/" not in bad.path.removeprefix(relative + "/")]
