"""The repository behind a memory folder: the project Claude Code records in
~/.claude.json for its auto memory folder, never a key decoded; no repository for the user's other
folders under ~/.claude; the git work tree holding any other folder."""

import json
import re
from pathlib import Path

from auto_dream.store.claude_home import (
    claude_project_repo,
    encode_project_path,
    is_under_claude_home,
    repo_for_folder,
)
from auto_dream.store.repository import find_repo


def key_of(path: Path) -> str:
    """What Claude Code names a short ASCII path's folder under projects/ (every non-alphanumeric a `-`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def memory_folder(home: Path, key: str) -> Path:
    folder = home / ".claude" / "projects" / key / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory\n")
    return folder


def record_projects(home: Path, *projects: Path | str) -> Path:
    """~/.claude.json as Claude Code keeps it: other state beside "projects", keyed by absolute path."""
    state = {"numStartups": 12, "theme": "dark",
             "projects": {str(p): {"allowedTools": [], "hasTrustDialogAccepted": True} for p in projects}}
    (home / ".claude.json").write_text(json.dumps(state, indent=2))
    return home / ".claude.json"


def git_tree(folder: Path) -> Path:
    (folder / ".git").mkdir(parents=True)
    return folder


def test_a_projects_folder_gives_the_one_recorded_project_whose_path_encodes_to_its_name(tmp_path, isolated_env):
    home = isolated_env
    app, other = tmp_path / "work" / "my.app", tmp_path / "work" / "other"
    app.mkdir(parents=True)
    other.mkdir()
    record_projects(home, other, app, tmp_path / "work")
    folder = memory_folder(home, key_of(app))
    assert claude_project_repo(folder, home) == (app, None)
    # a home given with a trailing slash or a `..` is the same home
    assert claude_project_repo(folder, Path(f"{home}/")) == (app, None)
    assert claude_project_repo(folder, home / ".." / home.name) == (app, None)
    assert repo_for_folder(folder, None, home) == (app, None)


def test_two_recorded_paths_with_one_folder_name_give_no_repository_and_name_both(tmp_path, isolated_env):
    home = isolated_env
    dotted, dashed = tmp_path / "x" / "a.b", tmp_path / "x" / "a-b"
    dotted.mkdir(parents=True)
    dashed.mkdir()
    record_projects(home, dotted, dashed)
    assert key_of(dotted) == key_of(dashed)
    repo, reason = claude_project_repo(memory_folder(home, key_of(dotted)), home)
    assert repo is None
    assert str(dotted) in reason and str(dashed) in reason and "\n" not in reason


def test_a_recorded_project_that_was_deleted_gives_no_repository(tmp_path, isolated_env):
    home = isolated_env
    gone = tmp_path / "deleted-project"
    record_projects(home, gone)
    repo, reason = claude_project_repo(memory_folder(home, key_of(gone)), home)
    assert repo is None
    assert str(gone) in reason and "no longer" in reason


def test_no_recorded_project_for_the_folder_gives_no_repository(tmp_path, isolated_env):
    home = isolated_env
    (tmp_path / "elsewhere").mkdir()
    record_projects(home, tmp_path / "elsewhere")
    repo, reason = claude_project_repo(memory_folder(home, "-somewhere-never-recorded"), home)
    assert repo is None
    assert "records no project for -somewhere-never-recorded" in reason


def test_a_malformed_or_missing_claude_json_gives_no_repository_and_says_why(tmp_path, isolated_env):
    home = isolated_env
    project = tmp_path / "project"
    project.mkdir()
    folder = memory_folder(home, key_of(project))
    assert claude_project_repo(folder, home) == (None, f"there is no {home / '.claude.json'}, where Claude Code "
                                                       "records its projects")
    (home / ".claude.json").write_text('{"projects": {"' + str(project) + '": {}')  # cut off mid-write
    repo, reason = claude_project_repo(folder, home)
    assert repo is None and "is not valid JSON" in reason and "\n" not in reason
    (home / ".claude.json").write_text('["not", "an", "object"]')
    assert claude_project_repo(folder, home) == (None, f'{home / ".claude.json"} has no "projects" object')


def test_a_projects_folder_never_takes_a_home_kept_in_git_for_its_repository(isolated_env):
    home = git_tree(isolated_env)
    folder = memory_folder(home, "-some-project")
    assert find_repo(folder, None) == home.resolve()  # what the plain walk up would have said
    repo, reason = repo_for_folder(folder, None, home)
    assert repo is None and "there is no" in reason


def test_a_user_agent_memory_folder_in_a_home_kept_in_git_has_no_repository(isolated_env):
    home = git_tree(isolated_env)
    folder = home / ".claude" / "agent-memory" / "reviewer"
    folder.mkdir(parents=True)
    assert is_under_claude_home(folder, home)
    assert find_repo(folder, None) == home.resolve()
    repo, reason = repo_for_folder(folder, None, home)
    assert repo is None and str(folder) in reason


def test_a_project_claude_memory_folder_gives_the_work_tree_holding_it(tmp_path, isolated_env):
    tree = git_tree(tmp_path / "repo")
    folder = tree / ".claude" / "memory"
    folder.mkdir(parents=True)
    assert not is_under_claude_home(folder, isolated_env)
    assert repo_for_folder(folder, None, isolated_env) == (tree.resolve(), None)
    repo, reason = repo_for_folder(tmp_path / "loose", None, isolated_env)
    assert repo is None and "no git work tree" in reason


def test_config_repo_beats_the_claude_project_and_the_work_tree(tmp_path, isolated_env):
    home = isolated_env
    chosen, recorded = tmp_path / "chosen", tmp_path / "recorded"
    chosen.mkdir()
    recorded.mkdir()
    record_projects(home, recorded)
    folder = memory_folder(home, key_of(recorded))
    assert repo_for_folder(folder, str(chosen), home) == (chosen.resolve(), None)
    repo, reason = repo_for_folder(folder, "../missing", home)
    assert repo is None and "'../missing'" in reason


def test_a_config_dir_folder_reads_the_projects_recorded_in_the_config_dir(tmp_path, isolated_env):
    home, config = isolated_env, tmp_path / "claude-config"
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    record_projects(home, theirs)  # ~/.claude.json: another account's projects
    folder = config / "projects" / key_of(mine) / "memory"
    folder.mkdir(parents=True)
    (config / ".claude.json").write_text(json.dumps({"projects": {str(mine): {}}}))
    assert is_under_claude_home(folder, home, config)
    assert repo_for_folder(folder, None, home, config) == (mine, None)
    assert claude_project_repo(memory_folder(home, key_of(theirs)), home, config) == (theirs, None)



def test_a_legacy_config_json_in_the_config_home_is_read_instead_as_claude_code_does(tmp_path, isolated_env):
    home = isolated_env
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    record_projects(home, new)
    folder = memory_folder(home, key_of(old))
    (home / ".claude" / ".config.json").write_text(json.dumps({"projects": {str(old): {}}}))
    assert claude_project_repo(folder, home) == (old, None)

def test_the_folder_name_is_claude_codes_encoding_of_the_path():
    assert encode_project_path("/home/u/my.app") == "-home-u-my-app"
    assert encode_project_path("C:\\git\\cc-plus") == "C--git-cc-plus"
    assert encode_project_path("/home/u/文档/😀 x") == "-home-u-------x"  # an astral character is two UTF-16 units
    # Past 200 characters: the first 200 and the base-36 hash, as Claude Code's Node build
    # writes it (checked with node: Math.abs of the int32 h = h*31 + charCode, .toString(36)).
    long_path = "/home/u/" + "deep/" * 45 + "project_x"
    assert encode_project_path(long_path) == "-home-u-" + "deep-" * 38 + "de-y12fsa"


def test_a_long_project_path_matches_whatever_hash_its_folder_name_ends_with(tmp_path, isolated_env):
    home = isolated_env
    base = tmp_path / ("d" * 120) / ("e" * 100)
    first, second = base / "first", base / "second"
    first.mkdir(parents=True)
    second.mkdir()
    prefix = key_of(first)[:200]
    assert len(key_of(first)) > 200 and key_of(second)[:200] == prefix
    record_projects(home, first)
    # a folder named by the 200 characters alone is a project whose path has exactly 200 (a parent of these)
    repo, reason = claude_project_repo(memory_folder(home, prefix), home)
    assert repo is None and reason.endswith(f"records no project for {prefix}")
    # the native build hashes with Bun.hash: any hash after the same 200 characters is this project
    assert claude_project_repo(memory_folder(home, prefix + "-1k2j3h4g5f"), home) == (first, None)
    record_projects(home, first, second)
    assert claude_project_repo(home / ".claude" / "projects" / (prefix + "-1k2j3h4g5f") / "memory", home)[0] is None
    # a folder with the Node build's hash of one of them is that one
    assert claude_project_repo(memory_folder(home, encode_project_path(str(second))), home) == (second, None)
