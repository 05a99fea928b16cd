"""`install` / `uninstall` claude-code and openclaw: ours added, everything else kept byte for byte.

Every test has HOME and the project in tmp_path, and settings files that already hold other
servers, hooks and keys, written the way people write them (4-space indents, no final newline,
one-line objects)."""

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from auto_dream.commands.install import (
    HOOK_MARKER,
    RECORD_NAME,
    AgentFiles,
    claude_code_places,
    plan_install,
    render_skill,
)
from auto_dream.shell import auto_dream_command
from auto_dream.store.templates import load_template
from conftest import installed_command

SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm test)", "Read(~/.zshrc)"],
        "deny": ["Read(./.env)"]
    },
    "env": {"FOO": "1"},
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "echo 'branch: main'"}]
            }
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5}]}
        ]
    },
    "model": "opus"
}"""  # 4-space indents, one-line objects, no final newline

MCP_JSON = """{
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    },
    "db": {"command": "npx", "args": ["-y", "@bytebase/dbhub", "--dsn", "${DB_URL:-postgres://localhost}"]}
  }
}
"""

CLAUDE_JSON = """{
  "numStartups": 42,
  "theme": "dark",
  "oauthAccount": {"emailAddress": "someone@example.com"},
  "projects": {
    "/work/app": {
      "allowedTools": [],
      "mcpServers": {"local-one": {"type": "stdio", "command": "local-server", "args": [], "env": {}}},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "notes": {
      "type": "stdio",
      "command": "notes-mcp",
      "args": [],
      "env": {}
    }
  },
  "cachedChangelog": "# 2.1.0\\n\\u00e9t\\u00e9 1e3"
}
"""

USER_SETTINGS = ('{\n  "hooks": {\n    "SessionEnd": [\n      {"hooks": [{"type": "command", "command": "say bye"}]}\n'
                 '    ]\n  }\n}\n')


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch):
    for name in ("CLAUDE_CONFIG_DIR", "OPENCLAW_STATE_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path) -> Path:
    """A project whose .claude/settings.json and .mcp.json hold other keys, hooks and servers."""
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(SETTINGS)
    (folder / ".mcp.json").write_text(MCP_JSON)
    (folder / "src").mkdir()
    return folder


@pytest.fixture
def user_home(isolated_env) -> Path:
    """A home whose ~/.claude.json and ~/.claude/settings.json hold Claude Code's own state and other hooks."""
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude.json").write_text(CLAUDE_JSON)
    (isolated_env / ".claude.json").chmod(0o600)
    (isolated_env / ".claude" / "settings.json").write_text(USER_SETTINGS)
    return isolated_env


def tree_hash(folder: Path) -> str:
    """conftest's tree_hash, less the project store a project install makes (as `init` does) and
    uninstall leaves: the store and its memories are not the agent's files."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if ".auto-dream" in path.relative_to(folder).parts:
            continue
        digest.update(str(path.relative_to(folder)).encode("utf-8", "surrogateescape"))
        digest.update(oct(path.lstat().st_mode).encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def files_under(*folders: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for folder in folders for path in sorted(folder.rglob("*"))
            if path.is_file()}


def without_ours(settings: dict) -> dict:
    """settings.json's value with the hooks install adds taken out (and containers left empty)."""
    hooks = {event: [group for group in groups
                     if not any(HOOK_MARKER in handler.get("command", "") for handler in group["hooks"])]
             for event, groups in settings.get("hooks", {}).items()}
    return {**settings, "hooks": {event: groups for event, groups in hooks.items() if groups}}


def ours(settings: dict, event: str) -> list[dict]:
    return [group for group in settings["hooks"].get(event, [])
            if any(HOOK_MARKER in handler["command"] for handler in group["hooks"])]


# ---------------------------------------------------------------- Claude Code, project scope


def test_install_adds_the_server_hooks_and_skill_and_keeps_everything_else(cli, project, isolated_env):
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 0, done.err
    exe = auto_dream_command()
    store = project / ".auto-dream"

    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["auto-dream"] == {"type": "stdio", "command": exe[0], "args": [
        *exe[1:], "--root", str(store), "mcp"], "env": {}}
    assert {k: v for k, v in mcp["mcpServers"].items() if k != "auto-dream"} == json.loads(MCP_JSON)["mcpServers"]
    assert (project / ".mcp.json").read_text().startswith(MCP_JSON.rstrip("\n}").rstrip() + ",")

    text = (project / ".claude" / "settings.json").read_text()
    settings = json.loads(text)
    assert without_ours(settings) == json.loads(SETTINGS)  # their keys, hooks and order untouched
    assert list(settings) == ["permissions", "env", "hooks", "model"]
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "echo 'branch: main'"  # theirs first
    [start] = ours(settings, "SessionStart")
    [end] = ours(settings, "SessionEnd")
    assert start["matcher"] == "startup|clear|compact"
    assert start["hooks"][0]["command"].startswith(shlex.join([*exe, "--root", str(store), "context"]))
    assert " dream --if-due </dev/null >/dev/null 2>&1 & " in end["hooks"][0]["command"]
    their_group_end = SETTINGS.index('\n        ],\n        "PreToolUse"')
    assert text.startswith(SETTINGS[:their_group_end] + ",\n")  # every byte before ours as it was
    assert text.endswith(SETTINGS[SETTINGS.index('\n    },\n    "model"'):])  # and after
    assert '\n            {\n                "matcher": "startup|clear|compact",' in text  # their 4-space indents
    assert not text.endswith("\n")  # no final newline before, none after

    skill = (project / ".claude" / "skills" / "auto-dream" / "SKILL.md").read_text()
    front = yaml.safe_load(skill.split("---\n")[1])
    assert front["name"] == "auto-dream" and "recall" in front["description"]
    assert f"{shlex.join([*exe, '--root', str(store)])} recall deploy schedule --json" in skill
    assert "`remember`" in skill and "`list_memories`" in skill
    assert "created" in done.out and str(project / ".mcp.json") in done.out
    assert (store / "MEMORY.md").is_file() and (store / "config.toml").is_file()  # made as `init` makes it
    assert f"created the store {store}" in done.out
    assert not (isolated_env / ".claude").exists()  # the user's scope is not touched


def test_installing_twice_changes_no_byte(cli, project, isolated_env):
    assert cli("install", "claude-code", "--project", project).code == 0
    before = files_under(project, isolated_env)
    mtimes = {path: os.stat(path).st_mtime_ns for path in before}
    again = cli("install", "claude-code", "--project", project)
    assert again.code == 0, again.err
    assert "already installed" in again.out
    assert files_under(project, isolated_env) == before
    assert {path: os.stat(path).st_mtime_ns for path in before} == mtimes  # not even rewritten


def test_uninstall_gives_back_every_file_byte_for_byte(cli, project, isolated_env, tmp_path):
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--project", project).code == 0
    assert tree_hash(tmp_path) != before
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0, done.err
    assert tree_hash(tmp_path) == before  # bytes, modes, and the folders install made gone again
    assert "removed" in done.out
    assert "not installed" in cli("uninstall", "claude-code", "--project", project).out


def test_uninstall_removes_only_ours_from_files_changed_since(cli, project):
    assert cli("install", "claude-code", "--project", project).code == 0
    settings_file, mcp_file = project / ".claude" / "settings.json", project / ".mcp.json"
    settings = json.loads(settings_file.read_text())
    settings["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "notify-send done"}]})
    settings["permissions"]["allow"].append("Bash(make)")
    settings_file.write_text(json.dumps(settings, indent=2))  # as an editor or Claude Code would rewrite it
    mcp = json.loads(mcp_file.read_text())
    mcp["mcpServers"]["later"] = {"command": "later-mcp"}
    mcp_file.write_text(json.dumps(mcp, indent=2) + "\n")

    assert cli("uninstall", "claude-code", "--project", project).code == 0
    settings = json.loads(settings_file.read_text())
    assert not ours(settings, "SessionStart") and not ours(settings, "SessionEnd")
    assert settings["hooks"]["SessionEnd"] == [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    assert settings["permissions"]["allow"][-1] == "Bash(make)"
    assert "SessionStart" in settings["hooks"]  # theirs is still there
    assert set(json.loads(mcp_file.read_text())["mcpServers"]) == {"github", "db", "later"}
    assert not (project / ".claude" / "skills").exists()


def test_a_project_without_claude_files_gets_them_and_loses_them_again(cli, tmp_path, monkeypatch):
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)  # the current folder is the default project
    assert cli("install", "claude-code").code == 0
    assert json.loads((bare / ".mcp.json").read_text())["mcpServers"]["auto-dream"]["args"][-2:] == [
        str(bare / ".auto-dream"), "mcp"]
    assert set(json.loads((bare / ".claude" / "settings.json").read_text())["hooks"]) == {"SessionStart", "SessionEnd"}
    assert (bare / ".mcp.json").read_text().endswith("}\n")
    assert cli("uninstall", "claude-code").code == 0
    assert list(bare.iterdir()) == [bare / ".auto-dream"]  # the files and the .claude folder install created are
    # gone; the store install made stays, with whatever was remembered in it


def test_root_names_another_store_in_every_command(cli, project, tmp_path):
    store = tmp_path / "shared store"
    assert cli("--root", store, "install", "claude-code", "--project", project).code == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [start] = ours(settings, "SessionStart")
    assert shlex.split(start["hooks"][0]["command"], comments=True)[-3:] == ["--root", str(store), "context"]
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["auto-dream"]["args"][-3:] == [
        "--root", str(store), "mcp"]
    # installing again for another store replaces ours, and only ours
    assert cli("install", "claude-code", "--project", project).code == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert len(ours(settings, "SessionStart")) == 1 and len(ours(settings, "SessionEnd")) == 1
    assert str(project / ".auto-dream") in ours(settings, "SessionStart")[0]["hooks"][0]["command"]


# ---------------------------------------------------------------- Claude Code, user scope


def test_user_scope_edits_only_our_key_of_claude_json(cli, user_home, tmp_path):
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--scope", "user")
    assert done.code == 0, done.err
    text = (user_home / ".claude.json").read_text()
    value = json.loads(text)
    original = json.loads(CLAUDE_JSON)
    assert value["mcpServers"]["notes"] == original["mcpServers"]["notes"]
    assert value["mcpServers"]["auto-dream"]["args"][-3:] == ["--root", str(user_home / ".auto-dream"), "mcp"]
    assert value["projects"] == original["projects"]  # the local scope's servers are not ours to touch
    assert {k: v for k, v in value.items() if k != "mcpServers"} == {
        k: v for k, v in original.items() if k != "mcpServers"}
    assert '"cachedChangelog": "# 2.1.0\\n\\u00e9t\\u00e9 1e3"' in text  # escapes left as written
    assert oct((user_home / ".claude.json").stat().st_mode & 0o777) == "0o600"
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["SessionEnd"][0] == {"hooks": [{"type": "command", "command": "say bye"}]}
    assert (user_home / ".claude" / "skills" / "auto-dream" / "SKILL.md").is_file()

    assert cli("install", "claude-code", "--scope", "user").out.startswith("auto-dream is already installed")
    assert cli("uninstall", "claude-code", "--scope", "user").code == 0
    assert tree_hash(tmp_path) == before


def test_claude_config_dir_moves_the_user_scope(cli, isolated_env, tmp_path, monkeypatch):
    config = tmp_path / "claude-work"
    config.mkdir()
    (config / ".claude.json").write_text(CLAUDE_JSON)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--scope", "user").code == 0
    assert "auto-dream" in json.loads((config / ".claude.json").read_text())["mcpServers"]
    assert "SessionStart" in json.loads((config / "settings.json").read_text())["hooks"]
    assert (config / "skills" / "auto-dream" / "SKILL.md").is_file()
    assert list(isolated_env.iterdir()) == []  # ~/.claude and ~/.claude.json are another account's
    assert cli("uninstall", "claude-code", "--scope", "user").code == 0
    assert tree_hash(tmp_path) == before


# ---------------------------------------------------------------- dry runs and refusals


def test_dry_run_prints_the_change_and_writes_nothing(cli, project, tmp_path):
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--project", project, "--dry-run")
    assert done.code == 0, done.err
    assert tree_hash(tmp_path) == before
    assert done.out.startswith("[DRY RUN] install for Claude Code (project scope)")
    assert f"would update {project / '.mcp.json'}" in done.out
    assert f"would create {project / '.claude' / 'skills' / 'auto-dream' / 'SKILL.md'}" in done.out
    assert '+    "auto-dream": {' in done.out  # the diff of each JSON file
    assert "+                \"matcher\": \"startup|clear|compact\"," in done.out
    assert '"permissions"' not in done.out  # no context lines: the rest of the file is not echoed

    assert cli("install", "claude-code", "--project", project).code == 0
    installed = tree_hash(tmp_path)
    undo = cli("uninstall", "claude-code", "--project", project, "--dry-run")
    assert undo.code == 0 and "would remove" in undo.out
    assert tree_hash(tmp_path) == installed


@pytest.mark.parametrize("broken, says", [
    ('{\n    "hooks": {"SessionStart": [\n}', "is not valid JSON (line 3, column 1"),
    ('{"hooks": []}', "'hooks' is not a JSON object"),
    ('["not", "an", "object"]', "is not a JSON object at its top level"),
    (b"\xff\xfe{}", "is not UTF-8 text"),
])
def test_a_settings_file_that_is_not_a_json_object_stops_with_one_line(cli, project, tmp_path, broken, says):
    settings = project / ".claude" / "settings.json"
    settings.write_bytes(broken if isinstance(broken, bytes) else broken.encode())
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1
    assert done.err.count("\n") == 1 and done.err.startswith("auto-dream: error: ")
    assert str(settings) in done.err and says in done.err
    assert "nothing was written" in done.err
    assert tree_hash(tmp_path) == before  # .mcp.json, the skill: nothing


def test_another_server_named_auto_dream_is_kept_unless_forced(cli, project, tmp_path):
    mcp_file = project / ".mcp.json"
    mcp_file.write_text('{"mcpServers": {"auto-dream": {"command": "npx", "args": ["dream-server"]}}}')
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1 and done.err.count("\n") == 1
    assert "already has an MCP server named 'auto-dream'" in done.err and "--force" in done.err
    assert tree_hash(tmp_path) == before
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert mcp_file.read_text() == '{"mcpServers": {"auto-dream": {"command": "npx", "args": ["dream-server"]}}}'

    assert cli("install", "claude-code", "--project", project, "--force").code == 0
    assert json.loads(mcp_file.read_text())["mcpServers"]["auto-dream"]["args"][-1] == "mcp"


def test_someone_elses_skill_named_auto_dream_is_kept(cli, project, tmp_path):
    theirs = project / ".claude" / "skills" / "auto-dream" / "SKILL.md"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("---\nname: auto-dream\ndescription: my own\n---\nMine.\n")
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1 and "is not the skill auto-dream installed" in done.err
    assert tree_hash(tmp_path) == before
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0 and "kept" in done.err
    assert theirs.read_text().endswith("Mine.\n")


def test_a_skill_edited_since_install_is_kept_by_uninstall(cli, project):
    assert cli("install", "claude-code", "--project", project).code == 0
    skill = project / ".claude" / "skills" / "auto-dream" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nMy own note.\n")
    assert cli("install", "claude-code", "--project", project).code == 1  # not overwritten either
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0
    assert skill.read_text().endswith("My own note.\n") and f"kept {skill}" in done.err
    assert not (skill.parent / RECORD_NAME).exists()


def test_bad_usage_is_exit_2(cli, tmp_path):
    assert cli("install", "claude-code", "--scope", "global").code == 2
    done = cli("install", "claude-code", "--project", tmp_path / "missing")
    assert done.code == 2 and "no project folder" in done.err


def test_a_store_that_is_a_file_is_exit_1_as_for_every_command(cli, project, tmp_path):
    (tmp_path / "notes").write_text("not a store\n")
    before = tree_hash(tmp_path)
    for argv in (("install", "claude-code", "--project", project), ("install", "openclaw"), ("append", "x")):
        done = cli("--root", tmp_path / "notes", *argv)
        assert (done.code, done.err) == (1, f"auto-dream: error: store root {tmp_path / 'notes'} is a file, "
                                             "not a folder\n")
    assert tree_hash(tmp_path) == before


def test_a_symlinked_settings_file_is_edited_where_it_lives(cli, project, tmp_path):
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(SETTINGS)
    link = project / ".claude" / "settings.json"
    link.unlink()
    link.symlink_to(dotfiles)
    assert cli("install", "claude-code", "--project", project).code == 0
    assert link.is_symlink() and ours(json.loads(dotfiles.read_text()), "SessionStart")
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert link.is_symlink() and dotfiles.read_text() == SETTINGS


def test_a_settings_link_to_a_file_not_made_yet_keeps_its_link_and_loses_our_file(cli, user_home, tmp_path):
    """A dotfiles link (in the home folder, which user scope manages) whose file is not there yet:
    install writes the file where the link points; uninstall removes that file (it made it), not
    the user's link."""
    dotfiles = user_home / "dotfiles"
    dotfiles.mkdir()
    link = user_home / ".claude" / "settings.json"
    link.unlink()
    link.symlink_to(dotfiles / "settings.json")
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--scope", "user").code == 0
    assert link.is_symlink() and ours(json.loads((dotfiles / "settings.json").read_text()), "SessionStart")
    assert cli("uninstall", "claude-code", "--scope", "user").code == 0
    assert tree_hash(tmp_path) == before  # the link, dangling again; no file of ours in dotfiles/


def test_a_file_made_through_a_link_out_of_the_project_is_emptied_not_deleted(cli, project, tmp_path):
    """The same link in a project, to a folder outside it: uninstall deletes nothing outside the
    project, so the file install made there stays, with nothing of ours in it, and a warning says so."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    link = project / ".claude" / "settings.json"
    link.unlink()
    link.symlink_to(dotfiles / "settings.json")
    assert cli("install", "claude-code", "--project", project).code == 0
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0, done
    assert link.is_symlink() and (dotfiles / "settings.json").read_text() == "{}\n"
    assert f"kept {link}, a link to {dotfiles / 'settings.json'}: that is outside {project}" in done.err
    assert f"removed {link}" not in done.out and f"updated {link}" in done.out


# ---------------------------------------------------------------- OpenClaw


def test_openclaw_skill_in_openclaws_format_installed_and_removed(cli, isolated_env, tmp_path):
    other = isolated_env / ".openclaw" / "skills" / "weather" / "SKILL.md"
    other.parent.mkdir(parents=True)
    other.write_text("---\nname: weather\ndescription: Weather\n---\n")
    before = tree_hash(tmp_path)
    done = cli("install", "openclaw")
    assert done.code == 0, done.err
    skill = (isolated_env / ".openclaw" / "skills" / "auto-dream" / "SKILL.md").read_text()
    front = yaml.safe_load(skill.split("---\n")[1])
    assert front["name"] == "auto-dream" and front["description"]
    assert front["metadata"] == {"openclaw": {"emoji": "🌙"}}
    assert [line for line in skill.split("---\n")[1].splitlines() if line.startswith("metadata:")] == [
        'metadata: {"openclaw": {"emoji": "🌙"}}']  # one line: OpenClaw's single-line parser reads it too
    store = isolated_env / ".openclaw" / "workspace" / ".auto-dream"
    assert f"{shlex.join([*auto_dream_command(), '--root', str(store)])} append --type user" in skill
    assert "整理记忆" in skill

    installed = tree_hash(tmp_path)
    assert "already installed" in cli("install", "openclaw").out
    assert tree_hash(tmp_path) == installed
    assert cli("uninstall", "openclaw").code == 0
    assert tree_hash(tmp_path) == before  # the weather skill and its folders as they were


def test_openclaw_state_dir_moves_the_skill(cli, isolated_env, tmp_path, monkeypatch):
    state = tmp_path / "openclaw-work"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    assert cli("install", "openclaw", "--dry-run").code == 0
    assert not state.exists()
    assert cli("install", "openclaw").code == 0
    assert (state / "skills" / "auto-dream" / "SKILL.md").is_file()
    assert not (isolated_env / ".openclaw").exists()
    assert cli("uninstall", "openclaw").code == 0
    assert not state.exists()  # install made it, and it is empty again


# ---------------------------------------------------------------- the plan, without the file system


def test_the_plan_is_pure_and_a_second_plan_after_it_is_empty(tmp_path):
    places = claude_code_places("project", tmp_path / "p", None, None)
    empty = AgentFiles({path: None for path in places.files()},
                     {places.skill_dir: None, places.skill_dir.parent: None, places.skill_dir.parent.parent: None,
                      tmp_path / "p": frozenset(), tmp_path: frozenset({"p"})})
    command = ("/opt/auto-dream/bin/auto-dream",)
    plan = plan_install(places, empty, command, tmp_path / "p" / ".auto-dream", load_template("SKILL.md"))
    assert [change.verb for change in plan.changes] == ["create"] * 4
    assert plan.make_folders == (places.skill_dir.parent.parent, places.skill_dir.parent, places.skill_dir)
    after = AgentFiles({change.path: change.after for change in plan.changes},
                     {**empty.folders, places.skill_dir: frozenset({"SKILL.md", RECORD_NAME}),
                      places.skill_dir.parent: frozenset({"auto-dream"}),
                      places.skill_dir.parent.parent: frozenset({"skills", "settings.json"})})
    assert plan_install(places, after, command, tmp_path / "p" / ".auto-dream", load_template("SKILL.md")).empty


def test_the_template_is_a_skill_for_both_agents():
    template = load_template("SKILL.md")
    front = yaml.safe_load(template.split("---\n")[1])
    assert front["name"] == "auto-dream" and len(front["description"]) <= 1024  # the Agent Skills limit
    rendered = render_skill(template, "claude-code", ("/x y/auto-dream",), Path("/s"))
    assert "'/x y/auto-dream' --root /s recall deploy schedule --json" in rendered
    assert rendered.count("'/x y/auto-dream' --root /s ") >= 8  # every command line of the examples


def test_the_command_written_is_this_auto_dream_by_absolute_path():
    command = auto_dream_command()
    assert os.path.isabs(command[0]) and os.path.isfile(command[0])
    assert Path(command[0]).name == "auto-dream" or command[1:] == ("-m", "auto_dream")


# ---------------------------------------------------------------- the hooks, run as Claude Code runs them


def run_hook(command: str, home: Path, cwd: Path) -> subprocess.CompletedProcess:
    """A hook's command through bash, as Claude Code runs shell-form hooks, with its stdout and stderr
    on pipes (Claude Code waits until they close)."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}  # not the venv's: the command must name it
    return subprocess.run(["bash", "-c", command], input='{"hook_event_name": "SessionEnd", "reason": "other"}',
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


@pytest.mark.slow  # runs the hook commands as the shell would (child processes)
def test_the_hook_commands_give_memory_at_start_and_dream_in_the_background_at_end(cli, project, isolated_env,
                                                                                      tmp_path):
    assert auto_dream_command()[0] == installed_command() or sys.executable in auto_dream_command()
    store = project / ".auto-dream"
    assert cli("init", project).code == 0
    for n in range(6):
        fact = f"fact {n} about subsystem{n} owned by team{n}"
        assert cli("--root", store, "append", "-t", "project", fact).code == 0
    assert cli("install", "claude-code", "--project", project).code == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [start], [end] = ours(settings, "SessionStart"), ours(settings, "SessionEnd")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()

    done = run_hook(start["hooks"][0]["command"], isolated_env, elsewhere)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == cli("--root", store, "context").out
    assert done.stdout.startswith(f"auto-dream memory: MEMORY.md of the store at {store}")

    # The dream the hook starts is kept waiting: this test holds the flock dream_lock takes on the
    # store's .state folder. The hook returns all the same (a hook that waited for its dream would
    # time out here), so it fits Claude Code's 1.5-second SessionEnd budget whatever the dream takes.
    state = os.open(store / ".state", os.O_RDONLY)
    fcntl.flock(state, fcntl.LOCK_EX)
    try:
        done = run_hook(end["hooks"][0]["command"], isolated_env, elsewhere)
        assert done.returncode == 0 and done.stdout == done.stderr == ""
        assert not list((store / "memories" / "project").glob("*.md"))  # its dream still waits
    finally:
        fcntl.flock(state, fcntl.LOCK_UN)
        os.close(state)
    deadline = time.monotonic() + 60
    while len(list((store / "memories" / "project").glob("*.md"))) < 6 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(list((store / "memories" / "project").glob("*.md"))) == 6  # the dream ran, in the background
    assert list(elsewhere.iterdir()) == []  # no nohup.out, nothing outside the store

    done = run_hook(end["hooks"][0]["command"], isolated_env, elsewhere)  # not due now: harmless
    assert done.returncode == 0 and done.stdout == done.stderr == ""


# ---------------------------------------------------------------- found in review


@pytest.mark.parametrize("scope", ["project", "user"])
def test_an_auto_dream_server_the_user_registered_is_neither_replaced_nor_removed(cli, project, user_home, tmp_path,
                                                                                  scope):
    """`claude mcp add auto-dream -e … -- auto-dream mcp`, done by hand before install: theirs (its
    env, its store), not install's, so install does not overwrite it and uninstall does not take it."""
    mcp_file = project / ".mcp.json" if scope == "project" else user_home / ".claude.json"
    theirs = {"type": "stdio", "command": "auto-dream", "args": ["--root", "/notes", "mcp"],
              "env": {"ANTHROPIC_API_KEY": "sk-mine"}}
    value = json.loads(mcp_file.read_text())
    value["mcpServers"]["auto-dream"] = theirs
    mcp_file.write_text(json.dumps(value, indent=2) + "\n")
    before = tree_hash(tmp_path)
    args = ("claude-code", "--project", project, "--scope", scope)

    done = cli("install", *args)
    assert done.code == 1 and done.err.count("\n") == 1 and "--force" in done.err
    assert "already has an MCP server named 'auto-dream'" in done.err
    assert tree_hash(tmp_path) == before
    assert cli("uninstall", *args).code == 0
    assert tree_hash(tmp_path) == before


def test_a_server_like_ours_that_was_there_before_install_stays_after_uninstall(cli, project, tmp_path):
    """Registered by hand exactly as install would: install leaves it, and so does uninstall."""
    mcp_file = project / ".mcp.json"
    exe = auto_dream_command()
    same = {"type": "stdio", "command": exe[0], "args": [*exe[1:], "--root", str(project / ".auto-dream"), "mcp"],
            "env": {}}
    mcp_file.write_text(json.dumps({"mcpServers": {"auto-dream": same}}, indent=2) + "\n")
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--project", project).code == 0
    assert json.loads(mcp_file.read_text())["mcpServers"]["auto-dream"] == same
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0 and "kept the MCP server 'auto-dream'" in done.err
    assert tree_hash(tmp_path) == before


def test_env_the_user_gave_our_server_survives_installing_again(cli, project, tmp_path):
    """The MCP server's `env` is where a key for dream's LLM goes; installing again (the same store,
    or another) keeps it and every other key the user gave the server."""
    assert cli("install", "claude-code", "--project", project).code == 0
    mcp_file = project / ".mcp.json"
    value = json.loads(mcp_file.read_text())
    value["mcpServers"]["auto-dream"]["env"] = {"ANTHROPIC_API_KEY": "sk-mine"}
    value["mcpServers"]["auto-dream"]["timeout"] = 30000
    mcp_file.write_text(json.dumps(value, indent=2) + "\n")
    edited = mcp_file.read_bytes()
    again = cli("install", "claude-code", "--project", project)
    assert again.code == 0 and "already installed" in again.out
    assert mcp_file.read_bytes() == edited
    assert cli("--root", tmp_path / "other", "install", "claude-code", "--project", project).code == 0
    server = json.loads(mcp_file.read_text())["mcpServers"]["auto-dream"]
    assert server["args"][-3:] == ["--root", str(tmp_path / "other"), "mcp"]
    assert server["env"] == {"ANTHROPIC_API_KEY": "sk-mine"} and server["timeout"] == 30000


def test_a_record_written_before_it_noted_the_server_still_lets_uninstall_remove_ours(cli, project, tmp_path):
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--project", project).code == 0
    record_file = project / ".claude" / "skills" / "auto-dream" / RECORD_NAME
    record = json.loads(record_file.read_text())
    del record["files"]["mcp"]["server"]  # as the first install command wrote it
    record_file.write_text(json.dumps(record, indent=2) + "\n")
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert tree_hash(tmp_path) == before


def test_a_file_where_the_skill_folder_goes_stops_install_before_anything_is_written(cli, project, tmp_path):
    (project / ".claude" / "skills").mkdir()
    (project / ".claude" / "skills" / "auto-dream").write_text("not a folder\n")
    before = tree_hash(tmp_path)
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1 and done.err.count("\n") == 1
    assert str(project / ".claude" / "skills" / "auto-dream") in done.err
    assert tree_hash(tmp_path) == before  # .mcp.json and settings.json too


def test_a_write_that_fails_half_way_puts_back_what_was_written(cli, project, tmp_path, monkeypatch):
    """The disk fills up while the skill is written: .mcp.json and settings.json, already replaced,
    are put back, and the folders made for the skill are gone."""
    real_replace = os.replace

    def full_disk(source, target, *args, **kwargs):
        if str(target).endswith("SKILL.md"):
            raise OSError(28, "No space left on device")
        return real_replace(source, target, *args, **kwargs)

    before = tree_hash(tmp_path)
    monkeypatch.setattr(os, "replace", full_disk)
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1 and done.err.count("\n") == 1 and "No space left on device" in done.err
    assert tree_hash(tmp_path) == before

    monkeypatch.setattr(os, "replace", real_replace)
    assert cli("install", "claude-code", "--project", project).code == 0
    installed = tree_hash(tmp_path)
    real_unlink = os.unlink

    def read_only(path, *args, **kwargs):
        if str(path).endswith(RECORD_NAME):
            raise OSError(30, "Read-only file system")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", read_only)
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 1 and "Read-only file system" in done.err
    assert tree_hash(tmp_path) == installed  # the skill, removed before the record failed, is back


@pytest.mark.parametrize("agent", ["claude-code", "openclaw"])
def test_a_store_path_that_is_not_utf8_is_one_error_line_not_a_traceback(cli, tmp_path, monkeypatch, agent):
    """JSON and SKILL.md are UTF-8 text: a folder named with other bytes cannot be written into them."""
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    folder.mkdir()
    monkeypatch.chdir(folder)
    before = tree_hash(tmp_path)
    done = cli("--root", folder / ".auto-dream", "install", agent)
    assert done.code == 1 and done.err.count("\n") == 1 and "not UTF-8" in done.err
    assert tree_hash(tmp_path) == before


def test_a_skill_kept_by_uninstall_stays_the_users_through_later_installs_and_uninstalls(cli, project):
    """Edited, then kept by uninstall (which says so): from then on it is the user's skill. Neither
    a second uninstall nor a later install may delete or overwrite their edits."""
    assert cli("install", "claude-code", "--project", project).code == 0
    skill = project / ".claude" / "skills" / "auto-dream" / "SKILL.md"
    edited = skill.read_text() + "\nMy own note.\n"
    skill.write_text(edited)
    assert f"kept {skill}" in cli("uninstall", "claude-code", "--project", project).err
    again = cli("uninstall", "claude-code", "--project", project)
    assert again.code == 0 and f"kept {skill}" in again.err
    assert skill.read_text() == edited
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 1 and "is not the skill auto-dream installed" in done.err
    assert skill.read_text() == edited
    assert not (project / ".mcp.json").read_text().count('"auto-dream"')  # nothing written


@pytest.mark.parametrize("mcp_text, settings_text", [
    ('{\n  "mcpServers": {\n  }\n}\n', '{\n    "hooks": {\n    }\n}'),
    ('{\n}\n', '{\n  "hooks": {\n    "SessionStart": [ ],\n    "SessionEnd": [\n    ]\n  }\n}\n'),
])
def test_empty_objects_written_with_space_inside_come_back_byte_for_byte(cli, project, tmp_path, mcp_text,
                                                                         settings_text):
    """`"mcpServers": {\n  }`, left when a person deleted their last server by hand: install fills
    it, uninstall empties it again, with the space it had."""
    (project / ".mcp.json").write_text(mcp_text)
    (project / ".claude" / "settings.json").write_text(settings_text)
    before = tree_hash(tmp_path)
    assert cli("install", "claude-code", "--project", project).code == 0
    assert cli("--root", tmp_path / "other", "install", "claude-code", "--project", project).code == 0
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert (project / ".mcp.json").read_text() == mcp_text
    assert (project / ".claude" / "settings.json").read_text() == settings_text
    assert tree_hash(tmp_path) == before


def test_a_record_can_put_back_only_whitespace(cli, project):
    """The record is a file anyone can edit: what it says to put inside an emptied object is taken
    only when it is whitespace, never spliced into the user's JSON as text."""
    mcp_file = project / ".mcp.json"
    mcp_file.write_text('{\n  "mcpServers": {\n  }\n}\n')
    assert cli("install", "claude-code", "--project", project).code == 0
    record_file = project / ".claude" / "skills" / "auto-dream" / RECORD_NAME
    record = json.loads(record_file.read_text())
    assert record["files"]["mcp"]["blanks"] == [{"path": ["mcpServers"], "inside": "\n  "}]
    record["files"]["mcp"]["blanks"][0]["inside"] = '"evil": {"command": "rm"}'
    record_file.write_text(json.dumps(record))
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert json.loads(mcp_file.read_text()) == {"mcpServers": {}}


# ---------------------------------------------------------------- hardening round 2


HUGE_INTEGER = '{\n  "n": ' + "9" * 5000 + "\n}\n"
DEEP_NESTING = '{\n  "deep": ' + "[" * 100_000 + "]" * 100_000 + "\n}\n"


@pytest.mark.parametrize("which", ["settings", "mcp", "claude_json"])
@pytest.mark.parametrize("bad, says", [(HUGE_INTEGER, "is JSON with an integer too long to be read"),
                                       (DEEP_NESTING, "is JSON nested too deeply to be read")])
def test_json_python_cannot_hold_is_one_error_line_for_install_and_uninstall(cli, project, user_home, tmp_path,
                                                                            which, bad, says):
    """A 5,000-digit integer (past Python's int limit) or 100,000 nested arrays (past its recursion
    limit) in a settings file: one error line, exit 1, as for any file that is not JSON; no traceback."""
    scope = "user" if which == "claude_json" else "project"
    path = {"settings": project / ".claude" / "settings.json", "mcp": project / ".mcp.json",
            "claude_json": user_home / ".claude.json"}[which]
    args = ("claude-code", "--scope", scope, "--project", project)
    for installed_first in (False, True):
        if installed_first:
            path.write_text({"settings": SETTINGS, "mcp": MCP_JSON, "claude_json": CLAUDE_JSON}[which])
            assert cli("install", *args).code == 0
        path.write_text(bad)
        before = tree_hash(tmp_path)
        for verb in ("install", "uninstall"):
            done = cli(verb, *args)
            assert done.code == 1, done
            assert done.err.count("\n") == 1 and done.err.startswith(f"auto-dream: error: {path} {says}")
            assert "nothing was written" in done.err
            assert tree_hash(tmp_path) == before


@pytest.mark.parametrize("bad", [HUGE_INTEGER, DEEP_NESTING])
def test_an_install_record_python_cannot_hold_is_read_as_no_record(cli, project, tmp_path, bad):
    """The record is a file anyone can edit: one that cannot be read is no record, never a traceback."""
    assert cli("install", "claude-code", "--project", project).code == 0
    (project / ".claude" / "skills" / "auto-dream" / RECORD_NAME).write_text(bad)
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0, done
    assert not ours(json.loads((project / ".claude" / "settings.json").read_text()), "SessionStart")


def test_uninstall_keeps_our_server_once_the_user_gave_it_an_env_and_says_so(cli, project, tmp_path):
    """`env` is where a key for dream's LLM goes: uninstall does not drop it without a word. It
    keeps the server the user added to, names what they added (never the values), and removes
    the rest of ours."""
    assert cli("install", "claude-code", "--project", project).code == 0
    mcp_file = project / ".mcp.json"
    value = json.loads(mcp_file.read_text())
    value["mcpServers"]["auto-dream"]["env"] = {"ANTHROPIC_API_KEY": "sk-mine"}
    value["mcpServers"]["auto-dream"]["timeout"] = 30000
    mcp_file.write_text(json.dumps(value, indent=2) + "\n")
    edited = mcp_file.read_bytes()
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0, done
    assert mcp_file.read_bytes() == edited  # the server with the user's key and timeout, as they wrote it
    assert done.err == (f"auto-dream: warning: kept the MCP server 'auto-dream' in {mcp_file}: you gave it "
                        "env ANTHROPIC_API_KEY and 'timeout' since install; delete it yourself when you no "
                        "longer need them\n")
    assert "sk-mine" not in done.out + done.err
    assert not ours(json.loads((project / ".claude" / "settings.json").read_text()), "SessionStart")
    assert not (project / ".claude" / "skills").exists()


def test_uninstall_removes_our_server_with_the_empty_env_claude_code_writes(cli, project):
    assert cli("install", "claude-code", "--project", project).code == 0
    mcp_file = project / ".mcp.json"
    value = json.loads(mcp_file.read_text())
    del value["mcpServers"]["auto-dream"]["type"]  # as another tool may rewrite it: still nothing of the user's
    mcp_file.write_text(json.dumps(value, indent=2) + "\n")
    assert cli("uninstall", "claude-code", "--project", project).code == 0
    assert "auto-dream" not in json.loads(mcp_file.read_text())["mcpServers"]


def plant(project: Path, victim: Path, how: str) -> None:
    """What a cloned repository could ship: links from its .claude/ to the user's files outside it,
    and an install record saying install made them (the skill's hash is the linked file's)."""
    skill_dir = project / ".claude" / "skills" / "auto-dream"
    settings = project / ".claude" / "settings.json"
    settings.unlink()
    settings.symlink_to(victim / "prefs.json")
    record = {"installed_with": "auto-dream install claude-code", "store": str(project / ".auto-dream"),
              "skill_sha256": hashlib.sha256((victim / "notes.md").read_bytes()).hexdigest(),
              "files": {"mcp": {"created": False, "containers": [], "server": True},
                        "settings": {"created": True, "containers": [["hooks"]]}},
              "folders": [".", "..", "../.."]}
    if how == "skill folder linked":
        (victim / RECORD_NAME).write_text(json.dumps(record))
        skill_dir.parent.mkdir(parents=True)
        skill_dir.symlink_to(victim)
        (victim / "SKILL.md").symlink_to(victim / "notes.md")
        return
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").symlink_to(victim / "notes.md")
    if how == "record linked":
        (skill_dir / RECORD_NAME).symlink_to(victim / "diary.txt")
    else:
        (skill_dir / RECORD_NAME).write_text(json.dumps(record))


@pytest.mark.parametrize("how", ["files linked", "record linked", "skill folder linked"])
def test_uninstall_deletes_nothing_through_links_a_repository_planted(cli, project, tmp_path, how):
    victim = tmp_path / "home" / "mine"
    victim.mkdir(parents=True)
    (victim / "prefs.json").write_text("{}\n")
    (victim / "notes.md").write_text("my notes\n")
    (victim / "diary.txt").write_text("dear diary\n")
    plant(project, victim, how)
    outside = tree_hash(victim)
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0, done
    assert tree_hash(victim) == outside  # every file out there, as it was
    for path in (victim / "prefs.json", victim / "notes.md", victim / "diary.txt"):
        assert str(path) not in done.out  # nothing said removed there
    assert "outside" in done.err or "not the skill auto-dream installed" in done.err
    done = cli("install", "claude-code", "--project", project)  # and install writes nothing of its own there
    assert done.code == 1 and done.err.count("\n") == 1 and "nothing was written" in done.err
    assert tree_hash(victim) == outside


# A child process that runs the command line and SIGKILLs itself at its Nth change to the file
# system: before an os.mkdir, os.rmdir, os.unlink or os.replace, or right after tempfile.mkstemp
# made a temporary file (empty, as a kill while writing it leaves it). N past the last change:
# the command completes (exit 0).
KILLED_AT = r"""
import os, signal, sys, tempfile
at, count = int(sys.argv[1]), [0]
def killing(function, after=False):
    def changed(*args, **kwargs):
        count[0] += 1
        if count[0] == at and not after:
            os.kill(os.getpid(), signal.SIGKILL)
        result = function(*args, **kwargs)
        if count[0] == at and after:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return changed
for name in ("mkdir", "rmdir", "unlink", "replace"):
    setattr(os, name, killing(getattr(os, name)))
tempfile.mkstemp = killing(tempfile.mkstemp, after=True)
from auto_dream.cli import run
sys.exit(run(sys.argv[2:]))
"""


def killed_at(step: int, *argv: object) -> int:
    """Run the command line, killed at its `step`th change: the exit status (-9 when killed)."""
    return subprocess.run([sys.executable, "-c", KILLED_AT, str(step), *map(str, argv)], capture_output=True,
                          timeout=60).returncode


def every_kill(make_project, before_kill, argv, after_kill) -> int:
    """For each step of `argv` in turn: a fresh project, `before_kill(project)`, `argv` killed at that
    step, `after_kill(project)`; until `argv` runs to its end. The number of steps it has."""
    step = 0
    while True:
        step += 1
        project = make_project(step)
        before_kill(project)
        code = killed_at(step, *argv(project))
        if code == 0:
            return step - 1
        assert code == -signal.SIGKILL, code
        after_kill(project)


@pytest.mark.slow  # kills the installed command at each step (child processes)
@pytest.mark.parametrize("shape", ["bare", "with settings"])
def test_an_install_killed_at_any_step_is_finished_by_the_next_and_undone_by_uninstall(cli, tmp_path, shape):
    """A kill between any two writes of install (the folders, .mcp.json, settings.json, the skill,
    the record, their temporary files): installing again and uninstalling gives back the user's
    files byte for byte — no server kept "as it was there before", no empty hook arrays, no .tmp."""
    originals: dict[Path, str] = {}

    def make_project(step: int) -> Path:
        folder = tmp_path / f"{shape}-{len(originals)}"
        folder.mkdir()
        if shape == "with settings":
            (folder / ".claude").mkdir()
            (folder / ".claude" / "settings.json").write_text('{\n    "hooks": {\n    }\n}')
            (folder / ".mcp.json").write_text(MCP_JSON)
        originals[folder] = tree_hash(folder)
        return folder

    def finish_then_uninstall(project: Path) -> None:
        assert cli("install", "claude-code", "--project", project).code == 0
        assert cli("install", "claude-code", "--project", project).out.startswith("auto-dream is already installed")
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        assert len(ours(settings, "SessionStart")) == len(ours(settings, "SessionEnd")) == 1
        done = cli("uninstall", "claude-code", "--project", project)
        assert done.code == 0 and "kept" not in done.err, done
        assert tree_hash(project) == originals[project]

    steps = every_kill(make_project, lambda project: None,
                       lambda project: ("install", "claude-code", "--project", project), finish_then_uninstall)
    assert steps >= 10  # the folders, then each file's temporary file and its rename

    def uninstall_alone(project: Path) -> None:  # or, never installed again: uninstall takes it out
        done = cli("uninstall", "claude-code", "--project", project)
        assert done.code == 0 and "kept" not in done.err, done
        assert tree_hash(project) == originals[project]

    every_kill(make_project, lambda project: None,
               lambda project: ("install", "claude-code", "--project", project), uninstall_alone)


@pytest.mark.slow  # kills the installed command at each step (child processes)
def test_an_install_for_another_store_killed_at_any_step_is_finished_and_undone(cli, tmp_path):
    originals: dict[Path, str] = {}

    def make_project(step: int) -> Path:
        folder = tmp_path / f"p{step}"
        (folder / ".claude").mkdir(parents=True)
        (folder / ".claude" / "settings.json").write_text(SETTINGS)
        (folder / ".mcp.json").write_text(MCP_JSON)
        originals[folder] = tree_hash(folder)
        return folder

    def installed(project: Path) -> None:
        assert cli("install", "claude-code", "--project", project).code == 0

    def finish_then_uninstall(project: Path) -> None:
        assert cli("--root", tmp_path / "other", "install", "claude-code", "--project", project).code == 0
        done = cli("uninstall", "claude-code", "--project", project)
        assert done.code == 0 and "kept" not in done.err, done
        assert tree_hash(project) == originals[project]

    every_kill(make_project, installed,
               lambda project: ("--root", tmp_path / "other", "install", "claude-code", "--project", project),
               finish_then_uninstall)


@pytest.mark.slow  # kills the installed command at each step (child processes)
def test_an_uninstall_killed_at_any_step_is_finished_by_the_next(cli, tmp_path):
    originals: dict[Path, str] = {}

    def make_project(step: int) -> Path:
        folder = tmp_path / f"p{step}"
        folder.mkdir()
        (folder / ".mcp.json").write_text('{\n  "mcpServers": {\n  }\n}\n')
        originals[folder] = tree_hash(folder)
        return folder

    def installed(project: Path) -> None:
        assert cli("install", "claude-code", "--project", project).code == 0

    def finish(project: Path) -> None:
        done = cli("uninstall", "claude-code", "--project", project)
        assert done.code == 0 and "kept" not in done.err, done
        assert tree_hash(project) == originals[project]

    assert every_kill(make_project, installed, lambda project: ("uninstall", "claude-code", "--project", project),
                      finish) >= 5


class Killed(BaseException):
    """A kill, as far as the code under it can tell: nothing catches it, nothing is put back."""


def test_an_install_stopped_after_mcp_json_is_finished_and_undone_byte_for_byte(cli, project, tmp_path, monkeypatch):
    """Stopped after it wrote .mcp.json, before settings.json and the skill (and a temporary file
    of an earlier stopped write lying beside .mcp.json): installing again and uninstalling gives
    back the user's files byte for byte — our server is not taken for one that was there before."""
    before = tree_hash(tmp_path)
    (project / "..mcp.json.k3x9_q2a.tmp").write_text('{"half": ')
    real_replace = os.replace

    def killed_at_settings(source, target, *args, **kwargs):
        if str(target).endswith("settings.json"):
            raise Killed
        return real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", killed_at_settings)
    with pytest.raises(Killed):
        cli("install", "claude-code", "--project", project)
    monkeypatch.setattr(os, "replace", real_replace)
    assert "auto-dream" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 0, done
    assert f"removed {project / '..mcp.json.k3x9_q2a.tmp'}: a temporary file" in done.out
    done = cli("uninstall", "claude-code", "--project", project)
    assert done.code == 0 and done.err == "", done
    assert tree_hash(tmp_path) == before


def test_append_in_the_project_after_install_writes_to_the_store_install_named(cli, tmp_path, monkeypatch,
                                                                                isolated_env):
    """install printed "store <project>/.auto-dream" but, that store not existing yet, a plain
    `append` in the project wrote to ~/.auto-dream."""
    folder = tmp_path / "app"
    folder.mkdir()
    monkeypatch.chdir(folder)
    done = cli("install", "claude-code")
    assert done.code == 0, done.err
    assert f"store {folder / '.auto-dream'}" in done.out
    assert cli("append", "The deploy script lives in ops/").code == 0
    logs = list((folder / ".auto-dream" / "logs").rglob("*.md"))
    assert len(logs) == 1 and "ops/" in logs[0].read_text()
    assert not (isolated_env / ".auto-dream").exists()


def test_a_dry_run_says_it_would_create_the_store_and_does_not(cli, tmp_path, monkeypatch):
    folder = tmp_path / "app"
    folder.mkdir()
    done = cli("install", "claude-code", "--project", folder, "--dry-run")
    assert done.code == 0, done.err
    assert f"would create the store {folder / '.auto-dream'}" in done.out
    assert list(folder.iterdir()) == []


# ---------------------------------------------------------------- Claude Code, local scope


@pytest.mark.slow  # runs the installed hook commands (child processes)
def test_local_scope_writes_only_to_personal_places_and_uninstall_gives_them_back(cli, project, user_home, tmp_path):
    before = tree_hash(tmp_path)
    shared = {name: (project / name).read_bytes() for name in (".mcp.json", ".claude/settings.json")}
    done = cli("install", "claude-code", "--scope", "local", "--project", project)
    assert done.code == 0, done.err
    store = project / ".auto-dream"
    assert {name: (project / name).read_bytes() for name in shared} == shared  # the committed files: untouched
    claude = json.loads((user_home / ".claude.json").read_text())
    server = claude["projects"][str(project)]["mcpServers"]["auto-dream"]
    assert server["args"][-3:] == ["--root", str(store), "mcp"]
    assert claude["projects"]["/work/app"] == json.loads(CLAUDE_JSON)["projects"]["/work/app"]
    assert "auto-dream" not in claude["mcpServers"]  # not the user scope
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert len(ours(local, "SessionStart")) == 1 and len(ours(local, "SessionEnd")) == 1
    skill_dir = project / ".claude" / "skills" / "auto-dream"
    assert (skill_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (skill_dir / "SKILL.md").is_file() and not (user_home / ".claude" / "skills").exists()
    if shutil.which("git"):  # git ignores the skill folder, itself included
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        ignored = subprocess.run(["git", "-C", str(project), "check-ignore", "-q",
                                  ".claude/skills/auto-dream/SKILL.md"], check=False)
        assert ignored.returncode == 0
        shutil.rmtree(project / ".git")
    assert cli("install", "claude-code", "--scope", "local", "--project", project).out.startswith(
        "auto-dream is already installed")
    gone = cli("uninstall", "claude-code", "--scope", "local", "--project", project)
    assert gone.code == 0, gone.err
    assert tree_hash(tmp_path) == before  # ~/.claude.json, the project: byte for byte, modes too


def test_project_and_local_scope_share_the_skill_folder_so_one_refuses_the_other(cli, project, user_home):
    assert cli("install", "claude-code", "--project", project).code == 0
    refused = cli("install", "claude-code", "--scope", "local", "--project", project)
    assert refused.code == 1 and "installed here at --scope project" in refused.err
    assert "auto-dream" not in json.loads((user_home / ".claude.json").read_text())["projects"].get(str(project), {})
    assert cli("uninstall", "claude-code", "--scope", "local", "--project", project).code == 1
    assert (project / ".claude" / "skills" / "auto-dream" / "SKILL.md").is_file()  # the project's, kept


def test_a_second_scope_warns_and_names_what_claude_code_uses(cli, project, user_home, monkeypatch):
    """a project install plus a user install gave no warning, yet the personal skill overrides the
    project's and both SessionStart hooks run."""
    monkeypatch.chdir(project)
    first = cli("install", "claude-code")
    assert "also installed" not in first.err
    second = cli("install", "claude-code", "--scope", "user")
    assert second.code == 0, second.err
    assert "also installed for Claude Code at --scope project" in second.err
    assert "use the user-scope skill" in second.err and "the project-scope MCP server" in second.err
    assert "hooks of both" in second.err
    again = cli("install", "claude-code")  # and from the project's side
    assert "also installed for Claude Code at --scope user" in again.err
    assert cli("uninstall", "claude-code", "--scope", "user").code == 0
    assert "also installed" not in cli("install", "claude-code").err


def test_a_project_install_says_which_files_not_to_commit(cli, project):
    done = cli("install", "claude-code", "--project", project)
    assert done.code == 0
    assert f"do not commit {project / '.mcp.json'}, {project / '.claude' / 'settings.json'}" in done.err
    assert "--scope local" in done.err


def test_install_list_shows_agents_found_supported_and_installed(cli, project, user_home, monkeypatch, tmp_path):
    """`install --list`. Agents found that auto-dream cannot install into say so."""
    (user_home / ".codex").mkdir()
    (user_home / ".config" / "opencode").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # no `claude`, no `codex` on it
    monkeypatch.chdir(project)
    assert cli("install", "claude-code", "--scope", "local").code == 0
    done = cli("install", "--list")
    assert done.code == 0, done.err
    lines = {line.split(":", 1)[0]: line for line in done.out.splitlines()}
    assert set(lines) == {"Claude Code", "OpenClaw", "Codex", "Cursor", "Gemini CLI", "OpenCode"}
    assert lines["Claude Code"] == ("Claude Code: found (~/.claude); supported: auto-dream install claude-code; "
                                    "installed: local")
    assert lines["OpenClaw"] == "OpenClaw: not found; supported: auto-dream install openclaw; not installed"
    assert lines["Codex"] == "Codex: found (~/.codex); supported: auto-dream install codex; not installed"
    assert lines["OpenCode"] == "OpenCode: found (~/.config/opencode); supported: auto-dream install opencode; " \
        "not installed"
    assert lines["Cursor"] == "Cursor: not found; supported: auto-dream install cursor; not installed"
    codex = bin_dir / "codex"
    codex.write_text("#!/bin/sh\n")
    codex.chmod(0o755)
    assert "Codex: found (`codex` on PATH, ~/.codex); supported: auto-dream install codex; not installed" \
        in cli("install", "--list").out
