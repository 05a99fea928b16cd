"""`discover`: every memory folder under a path and the user's own, with layout and count; every
command on a Claude Code memory folder; the refusal of a folder that is neither layout."""

import json
import os
import shutil
from pathlib import Path

import pytest

import auto_dream
from auto_dream.store.discovery import detect_layout, discover
from auto_dream.store.paths import ensure_store
from conftest import tree_hash, write_memory_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "claude-memory"  # ../shared, see its README

TOPIC = "---\nname: {name}\ndescription: {name} in one line\nmetadata:\n  type: feedback\n---\n\n{name} body.\n"
NATIVE = "---\nname: {name}\ndescription: {name} in one line\ntype: project\n---\n\n{name} body.\n"


def claude_folder(folder: Path, *topics: str, index: bool = True) -> Path:
    """A Claude Code memory folder: topic files beside a MEMORY.md that links them."""
    folder.mkdir(parents=True, exist_ok=True)
    for topic in topics:
        (folder / f"{topic}.md").write_text(TOPIC.format(name=topic))
    if index:
        (folder / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- [{t}]({t}.md) — {t}\n" for t in topics))
    return folder


def native_store(root: Path, *names: str) -> Path:
    ensure_store(root)
    for name in names:
        write_memory_file(root, f"memories/project/{name}.md", NATIVE.format(name=name))
    return root


def found_by_path(result: list[dict]) -> dict[str, tuple[str, int]]:
    return {entry["path"]: (entry["layout"], entry["memories"]) for entry in result}


def test_every_claude_code_location_and_native_store_is_found_with_its_count(tmp_path, isolated_env, cli):
    home = isolated_env
    project = tmp_path / "project"
    expected = {
        claude_folder(project / ".claude" / "memory", "a", "b", "c"): ("claude-code", 3),
        claude_folder(project / ".claude" / "agent-memory" / "reviewer", "style"): ("claude-code", 1),
        claude_folder(project / ".claude" / "agent-memory-local" / "helper"): ("claude-code", 0),  # index only
        claude_folder(home / ".claude" / "projects" / "-work-project" / "memory", "x", "y"): ("claude-code", 2),
        claude_folder(home / ".claude" / "agent-memory" / "writer", "tone"): ("claude-code", 1),
        native_store(project / ".auto-dream", "one", "two"): ("auto-dream", 2),
        native_store(home / ".auto-dream", "mine"): ("auto-dream", 1),
    }
    result = cli("discover", project, "--json")
    assert result.code == 0, result
    listed = json.loads(result.out)
    assert all(set(entry) == {"path", "layout", "memories"} for entry in listed)
    assert found_by_path(listed) == {str(path): value for path, value in expected.items()}
    assert [entry["path"] for entry in listed] == sorted(entry["path"] for entry in listed)


def test_the_table_shows_path_layout_and_count_and_says_index_only(tmp_path, cli):
    claude_folder(tmp_path / "p" / ".claude" / "agent-memory" / "quiet")
    claude_folder(tmp_path / "p" / ".claude" / "memory", "a", "b")
    native_store(tmp_path / "p" / ".auto-dream", "n")
    result = cli("discover", tmp_path / "p")
    assert result.code == 0, result
    rows = [line.split() for line in result.out.splitlines()]
    assert rows[0] == ["path", "layout", "memories"]
    assert [str(tmp_path / "p" / ".auto-dream"), "auto-dream", "1"] in rows
    assert [str(tmp_path / "p" / ".claude" / "agent-memory" / "quiet"), "claude-code", "0", "(index", "only)"] in rows
    assert [str(tmp_path / "p" / ".claude" / "memory"), "claude-code", "2"] in rows


def test_path_defaults_to_the_current_folder_and_nested_folders_are_found(tmp_path, cli, monkeypatch):
    deep = claude_folder(tmp_path / "repo" / "docs" / "site" / ".claude" / "agent-memory" / "analyst", "ref")
    top = claude_folder(tmp_path / "repo" / ".claude" / "memory", "t")
    monkeypatch.chdir(tmp_path / "repo")
    result = cli("discover", "--json")
    assert result.code == 0, result
    assert found_by_path(json.loads(result.out)) == {str(top): ("claude-code", 1), str(deep): ("claude-code", 1)}


def test_folders_that_are_neither_layout_and_skipped_places_are_not_listed(tmp_path, isolated_env, cli):
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "MEMORY.md").write_text("# not in a Claude Code place\n")
    (project / "notes" / "idea.md").write_text("an idea\n")
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / "style.md").write_text("a rule, not a memory\n")
    (project / ".claude" / "agent-memory" / "unused").mkdir(parents=True)  # no MEMORY.md, no topic file
    (project / ".claude" / "agent-memory" / "unused" / "notes.txt").write_text("not markdown\n")
    for skipped in ("node_modules/pkg", ".git/x", ".venv/lib", ".cache/y"):
        claude_folder(project / skipped / ".claude" / "memory", "hidden")
    real = claude_folder(tmp_path / "elsewhere" / ".claude" / "memory", "linked")
    (project / "link").symlink_to(tmp_path / "elsewhere")  # not followed
    result = cli("discover", project, "--json")
    assert result.code == 0, result
    assert json.loads(result.out) == []
    assert cli("discover", project).out.strip() == "no memory folders found"
    assert detect_layout(project / "notes") is None
    assert detect_layout(project / ".claude" / "agent-memory" / "unused") is None
    assert detect_layout(real) == "claude-code"


def test_a_folder_reached_twice_is_listed_once(tmp_path, isolated_env):
    home = isolated_env
    agent = claude_folder(home / ".claude" / "agent-memory" / "writer", "tone")
    assert discover(home, home) == discover(tmp_path, home)
    assert [(found.path, found.layout, found.memories) for found in discover(home, home)] == [
        (agent, "claude-code", 1)]


def test_discover_writes_nothing(tmp_path, isolated_env, cli):
    home = isolated_env
    claude_folder(tmp_path / "p" / ".claude" / "memory", "a")
    claude_folder(home / ".claude" / "projects" / "k" / "memory", "b")
    native_store(tmp_path / "p" / ".auto-dream", "c")
    before = tree_hash(tmp_path)
    assert cli("discover", tmp_path / "p").code == 0
    assert cli("discover", tmp_path / "p", "--json").code == 0
    assert tree_hash(tmp_path) == before


def test_a_path_that_is_not_a_folder_is_a_usage_error(tmp_path, cli):
    (tmp_path / "file.md").write_text("x\n")
    for path in (tmp_path / "missing", tmp_path / "file.md"):
        result = cli("discover", path)
        assert result.code == 2 and result.err.count("\n") == 1 and str(path) in result.err, result


@pytest.fixture
def real_or_synthetic(tmp_path) -> Path:
    """Real Claude Code folders (../shared, copied, never changed there) when they are on this
    machine; else synthetic ones of the same shapes, so a clean clone tests the same rule."""
    sample = tmp_path / "sample"
    if SHARED.is_dir():
        for name in ("orchestkit", "recommendarr"):
            shutil.copytree(SHARED / name, sample / name)
        return sample
    claude_folder(sample / "recommendarr" / ".claude" / "memory", "feedback_testing", "feedback_lint")
    agents = sample / "orchestkit" / ".claude" / "agent-memory"
    claude_folder(agents / "ork-release-engineer", "prerelease-support", "release-please-configs")
    claude_folder(agents / "ork-ci-cd-engineer")  # everything inside MEMORY.md
    (agents / "ork-no-index").mkdir()
    (agents / "ork-no-index" / "topic.md").write_text(TOPIC.format(name="topic"))  # no MEMORY.md
    claude_folder(sample / "orchestkit" / "docs" / "site" / ".claude" / "agent-memory" / "ork-web", "ref")
    return sample


def test_real_claude_code_folders_are_found_with_their_topic_files(real_or_synthetic, isolated_env, cli):
    expected = {}
    for folder in [*real_or_synthetic.rglob(".claude/memory"), *real_or_synthetic.rglob(".claude/agent-memory/*")]:
        topics = [p for p in folder.glob("*.md") if p.name != "MEMORY.md"]
        if topics or (folder / "MEMORY.md").exists():
            expected[str(folder)] = ("claude-code", len(topics))
    assert len(expected) >= 4
    assert any(count == 0 for _, count in expected.values())  # an index-only agent is among them
    before = tree_hash(real_or_synthetic)
    result = cli("discover", real_or_synthetic, "--json")
    assert result.code == 0, result
    assert found_by_path(json.loads(result.out)) == expected
    assert tree_hash(real_or_synthetic) == before


# ---------------------------------------------------------------- every command works on a Claude Code folder


COMMANDS = [("list",), ("list", "--json"), ("check",), ("build-index",), ("dream", "--no-llm"),
            ("dream", "--dry-run", "--no-llm"), ("undo",), ("append", "a fact"), ("append", "--type", "user", "x"),
            ("init",)]
READERS = [("list",), ("list", "--json"), ("check",), ("build-index",), ("dream", "--dry-run", "--no-llm")]


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_commands_that_only_read_a_claude_code_folder_work_and_leave_it_as_it_is(tmp_path, isolated_env, cli,
                                                                                   command):
    folder = claude_folder(tmp_path / "p" / ".claude" / "memory", "a", "b")
    before = tree_hash(tmp_path)
    result = cli("--root", folder, *command)
    assert result.code == 0, result
    assert tree_hash(tmp_path) == before
    if command == ("list", "--json"):
        assert sorted(m["path"] for m in json.loads(result.out)) == ["a.md", "b.md"]


@pytest.mark.parametrize("command", [("dream", "--no-llm"), ("append", "a fact"), ("init",)], ids=" ".join)
def test_commands_that_write_keep_every_topic_file_and_write_only_into_dot_auto_dream_and_logs(
        tmp_path, isolated_env, cli, command):
    folder = claude_folder(tmp_path / "p" / ".claude" / "memory", "a", "b")
    before = {name: (folder / name).read_bytes() for name in ("a.md", "b.md", "MEMORY.md")}
    result = cli("--root", folder, *command)
    assert result.code == 0, result
    assert {name: (folder / name).read_bytes() for name in before} == before
    # .consolidate-lock: Claude Code's own lock, which a dream takes and leaves as Claude Code does
    assert set(os.listdir(folder)) <= {"a.md", "b.md", "MEMORY.md", ".auto-dream", "logs", ".consolidate-lock"}
    assert not (folder / "memories").exists() and not (folder / ".state").exists()


def test_undo_in_a_claude_code_folder_never_dreamed_says_so(tmp_path, isolated_env, cli):
    folder = claude_folder(tmp_path / "p" / ".claude" / "memory", "a")
    result = cli("--root", folder, "undo")
    assert result.code == 1 and result.err == "auto-dream: error: no dream run to undo\n", result


@pytest.mark.parametrize("command", [c for c in COMMANDS if c[0] not in ("append", "init")], ids=" ".join)
def test_every_command_but_those_that_make_a_store_refuses_a_folder_that_is_neither_layout(tmp_path, cli, command):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# my notes\n")
    (folder / "idea.md").write_text("an idea\n")
    (folder / "draft.txt").write_text("not markdown: not a memory folder\n")
    before = tree_hash(tmp_path)
    result = cli("--root", folder, *command)
    assert result.code == 1, result
    assert result.err.count("\n") == 1
    assert f"{folder} is neither an auto-dream store (memories/ and logs/) nor a Claude Code memory folder" \
        in result.err
    assert tree_hash(tmp_path) == before


def test_a_copy_of_a_claude_code_folder_anywhere_is_one(tmp_path, isolated_env, cli):
    folder = claude_folder(tmp_path / "backup" / "memory-2026-11", "a")  # not where Claude Code keeps one
    result = cli("--root", folder, "list", "--json")
    assert result.code == 0, result
    assert [m["path"] for m in json.loads(result.out)] == ["a.md"]


def test_a_claude_code_folder_an_earlier_run_left_state_in_is_dreamed_and_keeps_it(tmp_path, isolated_env, cli):
    folder = claude_folder(tmp_path / ".claude" / "agent-memory" / "reviewer", "style")
    (folder / ".state").mkdir()  # what `dream` left in such a folder before it could dream one
    result = cli("--root", folder, "dream", "--no-llm")
    assert result.code == 0, result
    # a run that changed nothing leaves Claude Code's lock as it was: here, absent
    assert sorted(os.listdir(folder)) == [".auto-dream", ".state", "MEMORY.md", "style.md"]


def test_the_library_opens_a_claude_code_folder_in_its_layout(tmp_path, isolated_env):
    folder = claude_folder(tmp_path / ".claude" / "memory", "a")
    for create in (False, True):
        store = auto_dream.open_store(folder, create=create)
        assert store.paths.layout == "claude-code"
        assert [m.path for m in store.list().memories] == ["a.md"]


@pytest.mark.parametrize("command", [("append", "a fact"), ("init",)], ids=" ".join)
def test_a_missing_or_empty_folder_still_becomes_a_store(tmp_path, cli, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".DS_Store").write_text("")  # dot-files do not make a folder someone else's
    for root in (tmp_path / "missing", empty):
        result = cli("--root", root, *command)
        assert result.code == 0, result
        assert detect_layout(root) == "auto-dream"


@pytest.mark.parametrize("command", [("append", "a fact"), ("init",)], ids=" ".join)
def test_append_and_init_still_make_a_store_in_a_folder_that_holds_other_things(tmp_path, cli, command):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "idea.md").write_text("an idea\n")
    result = cli("--root", tmp_path / "notes", *command)
    assert result.code == 0, result
    assert detect_layout(tmp_path / "notes") == "auto-dream"
    assert (tmp_path / "notes" / "idea.md").read_text() == "an idea\n"


def test_an_empty_folder_can_still_be_dreamed(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    result = cli("--root", tmp_path / "empty", "dream", "--no-llm", "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["run_id"]


def test_a_native_store_kept_at_a_claude_code_place_is_a_store(tmp_path, cli):
    root = native_store(tmp_path / ".claude" / "memory", "n")
    assert detect_layout(root) == "auto-dream"
    result = cli("--root", root, "list", "--json")
    assert result.code == 0, result
    assert [memory["name"] for memory in json.loads(result.out)] == ["n"]


def test_a_store_of_ours_at_a_claude_code_place_that_lost_its_memories_folder_is_still_ours(tmp_path, cli):
    root = tmp_path / ".claude" / "memory"
    assert cli("--root", root, "append", "a fact to keep").code == 0  # a store with MEMORY.md, like Claude's
    assert cli("--root", root, "dream").code == 0
    shutil.rmtree(root / "memories")
    assert cli("--root", root, "list").code == 0
    assert cli("--root", root, "append", "another fact").code == 0
    assert (root / "memories" / "user").is_dir()  # append made the store whole again, as it always did
