"""`install` / `uninstall` gemini-cli, cursor and opencode (and openclaw's MCP server): ours added,
everything else kept byte for byte.

HOME, XDG_CONFIG_HOME, the project and the store are in tmp_path. The agents' files already hold
the user's own servers and keys, written as people write them (4-space indents, tabs, one-line
objects, no final newline, CRLF), beside which ours goes and from which it comes out again."""

import json
from pathlib import Path

import pytest
import yaml

from auto_dream.commands.install import BLOCK_BEGIN, BLOCK_END, RECORD_NAME
from auto_dream.shell import auto_dream_command
from conftest import tree_hash

GEMINI_SETTINGS = """{
    "theme": "Dracula",
    "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}},
\t"general": {"vimMode": true}
}"""  # a one-line mcpServers, a tab, no final newline

CURSOR_MCP = """{\r\n  "mcpServers": {\r\n    "playwright": {\r\n      "command": "npx",\r\n      "args": [\r\n \
       "@playwright/mcp@latest"\r\n      ]\r\n    }\r\n  }\r\n}\r\n"""  # CRLF

OPENCODE_JSON = """{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "sentry": {"type": "remote", "url": "https://mcp.sentry.dev/mcp"},
    "local-one": {
      "type": "local",
      "command": ["npx", "-y", "my-mcp-command"],
      "enabled": true
    }
  },
  "model": "anthropic/claude-sonnet-4-5",
  "n": 1e3
}
"""

USER_NOTES = "# Project instructions\n\n- Run `bun typecheck` after changing TypeScript.\n"  # final newline
USER_NOTES_NO_NEWLINE = "Use tabs, never spaces."

# (agent, scope) -> (the JSON file, the keys to the servers, the instructions file or None, the rule or None),
# relative to the project (scope project) or to HOME (scope user; OpenCode: to XDG_CONFIG_HOME).
CASES = {
    ("gemini-cli", "project"): (".gemini/settings.json", ("mcpServers",), "GEMINI.md", None),
    ("gemini-cli", "user"): (".gemini/settings.json", ("mcpServers",), ".gemini/GEMINI.md", None),
    ("cursor", "project"): (".cursor/mcp.json", ("mcpServers",), None, ".cursor/rules/auto-dream.mdc"),
    ("cursor", "user"): (".cursor/mcp.json", ("mcpServers",), None, None),
    ("opencode", "project"): ("opencode.json", ("mcp",), "AGENTS.md", None),
    ("opencode", "user"): ("opencode/opencode.json", ("mcp",), "opencode/AGENTS.md", None),
}
USER_JSON = {"gemini-cli": GEMINI_SETTINGS, "cursor": CURSOR_MCP, "opencode": OPENCODE_JSON}


def _base(places: dict, agent: str, scope: str) -> Path:
    if scope == "project":
        return places["project"]
    return places["config"] if agent == "opencode" else places["home"]


def _run(cli, places: dict, *argv: str):
    done = cli("--root", places["store"], *argv)
    assert done.code == 0, done.err
    return done


@pytest.mark.parametrize("agent,scope", sorted(CASES))
@pytest.mark.parametrize("notes", [USER_NOTES, USER_NOTES_NO_NEWLINE])
def test_install_then_uninstall_gives_every_file_back(cli, places, tmp_path, agent, scope, notes):
    """The user's own files (their servers, other keys, odd whitespace, their instructions) around ours:
    install adds ours; a second install changes nothing; uninstall gives every byte back."""
    json_file, keys, instructions, rule = CASES[agent, scope]
    base = _base(places, agent, scope)
    (base / json_file).parent.mkdir(parents=True, exist_ok=True)
    (base / json_file).write_bytes(USER_JSON[agent].encode())
    if instructions:
        (base / instructions).write_text(notes)
    before = tree_hash(tmp_path)

    assert "[DRY RUN]" in _run(cli, places, "install", agent, "--scope", scope, "--dry-run").out
    assert tree_hash(tmp_path) == before  # --dry-run writes nothing

    _run(cli, places, "install", agent, "--scope", scope)
    value = json.loads((base / json_file).read_text())
    servers = value
    for key in keys:
        servers = servers[key]
    theirs = json.loads(USER_JSON[agent])
    for key in keys:
        theirs = theirs[key]
    assert {name: entry for name, entry in servers.items() if name != "auto-dream"} == theirs
    _assert_runs_our_server(servers["auto-dream"], agent, places["store"])
    if instructions:
        text = (base / instructions).read_text()
        assert text.startswith(notes) and text.count(BLOCK_BEGIN) == 1 and text.endswith(BLOCK_END + "\n")
        assert f"--root {places['store']}" in text and "recall" in text and "remember" in text
    if rule:
        _assert_cursor_rule(base / rule, places["store"])

    installed = tree_hash(tmp_path)
    assert "already installed" in _run(cli, places, "install", agent, "--scope", scope).out
    assert tree_hash(tmp_path) == installed  # a second install changes nothing

    assert "[DRY RUN]" in _run(cli, places, "uninstall", agent, "--scope", scope, "--dry-run").out
    assert tree_hash(tmp_path) == installed
    _run(cli, places, "uninstall", agent, "--scope", scope)
    assert tree_hash(tmp_path) == before  # every file back byte for byte, nothing left of ours
    assert "not installed" in _run(cli, places, "uninstall", agent, "--scope", scope).out


@pytest.mark.parametrize("agent,scope", sorted(CASES))
def test_install_into_nothing_and_uninstall_leaves_nothing(cli, places, tmp_path, agent, scope):
    """No agent files yet: install creates them (folders too), uninstall removes every one it created."""
    json_file, keys, instructions, rule = CASES[agent, scope]
    base = _base(places, agent, scope)
    before = tree_hash(tmp_path)
    _run(cli, places, "install", agent, "--scope", scope)
    value = json.loads((base / json_file).read_text())
    for key in keys:
        value = value[key]
    assert list(value) == ["auto-dream"]
    _assert_runs_our_server(value["auto-dream"], agent, places["store"])
    if instructions:
        assert (base / instructions).read_text().startswith(BLOCK_BEGIN)
    if rule:
        _assert_cursor_rule(base / rule, places["store"])
    record = json.loads(next(tmp_path.rglob(RECORD_NAME)).read_text())
    assert record["installed_with"] == f"auto-dream install {agent} --scope {scope}"
    _run(cli, places, "uninstall", agent, "--scope", scope)
    assert tree_hash(tmp_path) == before


def test_project_install_creates_the_project_store(cli, places):
    """Without --root, a project install names <project>/.auto-dream and creates it, as claude-code's does."""
    done = cli("install", "gemini-cli")
    assert done.code == 0, done.err
    store = places["project"] / ".auto-dream"
    assert store.is_dir()
    entry = json.loads((places["project"] / ".gemini" / "settings.json").read_text())["mcpServers"]["auto-dream"]
    assert entry["args"][-3:] == ["--root", str(store), "mcp"]
    assert "do not commit" in done.err


def test_a_server_named_auto_dream_that_is_not_ours_is_refused(cli, places, tmp_path):
    (places["project"] / "opencode.json").write_text(
        '{"mcp": {"auto-dream": {"type": "local", "command": ["something-else"]}}}\n')
    before = tree_hash(tmp_path)
    done = cli("--root", places["store"], "install", "opencode")
    assert done.code == 1 and "does not run auto-dream" in done.err
    assert tree_hash(tmp_path) == before


def test_our_server_given_an_environment_is_kept_by_uninstall(cli, places):
    """A key the user gave our server (OpenCode's `environment` with an API key) makes it theirs."""
    _run(cli, places, "install", "opencode")
    path = places["project"] / "opencode.json"
    value = json.loads(path.read_text())
    value["mcp"]["auto-dream"]["environment"] = {"ANTHROPIC_API_KEY": "sk-secret"}
    path.write_text(json.dumps(value, indent=2) + "\n")
    done = _run(cli, places, "uninstall", "opencode")
    assert "environment ANTHROPIC_API_KEY" in done.err and "sk-secret" not in done.err
    assert "auto-dream" in json.loads(path.read_text())["mcp"]
    assert BLOCK_BEGIN not in (places["project"] / "AGENTS.md").read_text() if (places["project"] / "AGENTS.md") \
        .exists() else True


def test_the_block_changed_by_another_store_is_replaced_in_place(cli, places, tmp_path):
    """Installing for another store replaces our block where it is; the user's text after it stays."""
    agents_md = places["project"] / "AGENTS.md"
    agents_md.write_text(USER_NOTES)
    _run(cli, places, "install", "opencode")
    agents_md.write_text(agents_md.read_text() + "\n## Later, by hand\n")
    other = tmp_path / "other" / ".auto-dream"
    assert cli("--root", other, "install", "opencode").code == 0
    text = agents_md.read_text()
    assert text.count(BLOCK_BEGIN) == 1 and f"--root {other}" in text and text.endswith("\n## Later, by hand\n")
    assert cli("--root", other, "uninstall", "opencode").code == 0
    assert agents_md.read_text() == USER_NOTES + "\n\n## Later, by hand\n"


def test_a_crlf_instructions_file_gets_a_crlf_block_and_comes_back_byte_for_byte(cli, places):
    agents_md = places["project"] / "AGENTS.md"
    mine = USER_NOTES.replace("\n", "\r\n").encode()
    agents_md.write_bytes(mine)
    _run(cli, places, "install", "opencode")
    installed = agents_md.read_bytes()
    assert BLOCK_BEGIN.encode() in installed and b"\n" not in installed.replace(b"\r\n", b"")  # no bare LF
    _run(cli, places, "uninstall", "opencode")
    assert agents_md.read_bytes() == mine


def test_install_list_marks_the_agents_supported(cli, places, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    (places["home"] / ".gemini").mkdir()
    _run(cli, places, "install", "cursor")
    lines = {line.split(":", 1)[0]: line for line in cli("install", "--list").out.splitlines()}
    assert lines["Gemini CLI"] == "Gemini CLI: found (~/.gemini); supported: auto-dream install gemini-cli; " \
        "not installed"
    assert lines["Cursor"] == "Cursor: not found; supported: auto-dream install cursor; installed: project"
    assert lines["OpenCode"].endswith("supported: auto-dream install opencode; not installed")


def _assert_runs_our_server(entry: dict, agent: str, store: Path) -> None:
    """The entry runs this auto-dream with --root the store, in the agent's own shape."""
    argv = [*auto_dream_command(), "--root", str(store), "mcp"]
    if agent == "opencode":
        assert entry == {"type": "local", "command": argv, "enabled": True}
    else:
        assert entry == {"command": argv[0], "args": argv[1:]}
    assert Path(argv[0]).is_absolute()


def _assert_cursor_rule(path: Path, store: Path) -> None:
    text = path.read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["alwaysApply"] is True and "recall" in front["description"]
    assert f"--root {store}" in text and "`remember`" in text


OPENCLAW_JSON = """{
  "agents": {"defaults": {"workspace": "~/.openclaw/workspace"}},
  "mcp": {
    "servers": {
      "context7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]}
    }
  },
  "gateway": {"port": 18789}
}"""


@pytest.mark.parametrize("existing", [OPENCLAW_JSON, '{"gateway": {"port": 18789}}\n', None])
def test_openclaw_server_in_mcp_servers_installed_and_removed_byte_for_byte(cli, places, tmp_path, existing):
    """`install openclaw` registers the server in `mcp.servers` of ~/.openclaw/openclaw.json beside the
    skill; uninstall gives the config back byte for byte (or removes the one it created)."""
    config = places["home"] / ".openclaw" / "openclaw.json"
    if existing is not None:
        config.parent.mkdir()
        config.write_text(existing)
        config.chmod(0o600)
    before = tree_hash(tmp_path)
    _run(cli, places, "install", "openclaw", "--dry-run")
    assert tree_hash(tmp_path) == before
    _run(cli, places, "install", "openclaw")
    servers = json.loads(config.read_text())["mcp"]["servers"]
    _assert_runs_our_server(servers["auto-dream"], "openclaw", places["store"])
    if existing == OPENCLAW_JSON:
        assert servers["context7"] == {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]}
    assert config.stat().st_mode & 0o777 == 0o600  # OpenClaw keeps tokens there
    assert (places["home"] / ".openclaw" / "skills" / "auto-dream" / "SKILL.md").is_file()
    _again_then_uninstall(cli, places, tmp_path, before)


def _again_then_uninstall(cli, places, tmp_path, before: str) -> None:
    """A second `install openclaw` changes nothing; uninstall gives back the tree as it was `before`."""
    installed = tree_hash(tmp_path)
    assert "already installed" in _run(cli, places, "install", "openclaw").out
    assert tree_hash(tmp_path) == installed
    _run(cli, places, "uninstall", "openclaw")
    assert tree_hash(tmp_path) == before


def test_openclaw_json5_config_gets_the_server_and_is_given_back_byte_for_byte(cli, places, tmp_path):
    """OpenClaw's config is JSON5 (comments, trailing commas, unquoted keys, single quotes): the server
    goes in among them, and uninstall gives every byte back."""
    config = places["home"] / ".openclaw" / "openclaw.json"
    config.parent.mkdir()
    text = "{\n  // my gateway\n  gateway: {port: 18789, bind: 'loopback',},\n}\n"
    config.write_text(text)
    before = tree_hash(tmp_path)
    done = _run(cli, places, "install", "openclaw")
    assert "JSON5" not in done.err
    after = config.read_text()
    assert after.startswith("{\n  // my gateway\n  gateway: {port: 18789, bind: 'loopback',},\n")
    from auto_dream.store.json_text import load

    _assert_runs_our_server(load(after, "json5")["mcp"]["servers"]["auto-dream"], "openclaw", places["store"])
    assert (places["home"] / ".openclaw" / "skills" / "auto-dream" / "SKILL.md").is_file()
    _run(cli, places, "uninstall", "openclaw")
    assert tree_hash(tmp_path) == before


@pytest.mark.parametrize("existing", ["{\n  // moved here\n  gateway: {port: 18789},\n}\n", None])
def test_openclaw_config_path_moves_the_config_the_server_goes_in(cli, places, tmp_path, monkeypatch, existing):
    """OPENCLAW_CONFIG_PATH names OpenClaw's config instead of ~/.openclaw/openclaw.json
    (https://docs.openclaw.ai/help/environment): the server goes there, `~` in it is the home folder,
    the skill stays in ~/.openclaw/skills/, and uninstall gives that file back byte for byte (or
    removes the one it created)."""
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", "~/dotfiles/openclaw/config.json5")
    config = places["home"] / "dotfiles" / "openclaw" / "config.json5"
    config.parent.mkdir(parents=True)
    if existing is not None:
        config.write_text(existing)
    before = tree_hash(tmp_path)
    _run(cli, places, "install", "openclaw", "--dry-run")
    assert tree_hash(tmp_path) == before
    done = _run(cli, places, "install", "openclaw")
    assert str(config) in done.out
    from auto_dream.store.json_text import load

    servers = load(config.read_text(), "json5")["mcp"]["servers"]
    _assert_runs_our_server(servers["auto-dream"], "openclaw", places["store"])
    if existing is not None:
        assert config.read_text().startswith(existing[:-3])  # `}\n` ends it; the rest is as it was
    else:
        assert config.stat().st_mode & 0o777 == 0o600  # OpenClaw keeps tokens there
    assert not (places["home"] / ".openclaw" / "openclaw.json").exists()
    assert (places["home"] / ".openclaw" / "skills" / "auto-dream" / "SKILL.md").is_file()
    _again_then_uninstall(cli, places, tmp_path, before)


def test_openclaw_config_path_in_a_folder_that_is_not_there_is_refused(cli, places, tmp_path, monkeypatch):
    """Install makes no folder for a config outside OpenClaw's state folder (its record keeps only the
    skill's folders, so uninstall could not take them away again): one error line, nothing written."""
    config = tmp_path / "nowhere" / "openclaw.json"
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(config))
    before = tree_hash(tmp_path)
    done = cli("--root", places["store"], "install", "openclaw")
    assert done.code == 1 and f"there is no folder {config.parent} for {config}" in done.err
    assert tree_hash(tmp_path) == before


# ---------------------------------------------------------------- Cursor's hooks (https://cursor.com/docs/hooks)

CURSOR_HOOKS = ('{\r\n  "version": 1,\r\n  // mine\r\n  "hooks": {\r\n'
                '    "sessionStart": [{ "command": "./session-init.sh" }],\r\n'
                '    "afterFileEdit": [{ "command": "./hooks/format.sh", "timeout": 30 }]\r\n'
                '  }\r\n}\r\n')  # CRLF, a comment


def _cursor_hooks(command: tuple[str, ...], store: Path) -> dict:
    """Our sessionStart and sessionEnd hooks, as Cursor lists them: `{"command"}` under each event."""
    base = " ".join([*command, "--root", str(store)])
    marker = "# added by auto-dream install cursor"
    return {"sessionStart": [{"command": f"{base} context --cursor-json {marker}"}],
            "sessionEnd": [{"command": f"nohup {base} dream --if-due </dev/null >/dev/null 2>&1 & {marker}"}]}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_cursor_hooks_go_beside_the_users_own_and_come_out_byte_for_byte(cli, places, tmp_path, scope):
    """`install cursor` adds a sessionStart hook (the context) and a sessionEnd hook (a dream when due) to
    hooks.json, after the user's own hooks of those events; installing again changes nothing, installing
    for another store replaces ours only, --dry-run writes nothing, uninstall gives every byte back."""
    hooks_json = _base(places, "cursor", scope) / ".cursor" / "hooks.json"
    hooks_json.parent.mkdir(parents=True, exist_ok=True)
    hooks_json.write_bytes(CURSOR_HOOKS.encode())
    before = tree_hash(tmp_path)
    assert "sessionStart and sessionEnd hooks" in _run(cli, places, "install", "cursor", "--scope", scope,
                                                       "--dry-run").out
    assert tree_hash(tmp_path) == before

    _run(cli, places, "install", "cursor", "--scope", scope)
    from auto_dream.store.json_text import load

    ours = _cursor_hooks(auto_dream_command(), places["store"])
    value = load(hooks_json.read_text(), "comments")
    assert value["version"] == 1 and "// mine" in hooks_json.read_text()
    assert value["hooks"] == {"sessionStart": [{"command": "./session-init.sh"}, *ours["sessionStart"]],
                              "afterFileEdit": [{"command": "./hooks/format.sh", "timeout": 30}],
                              "sessionEnd": ours["sessionEnd"]}
    installed = tree_hash(tmp_path)
    assert "already installed" in _run(cli, places, "install", "cursor", "--scope", scope).out
    assert tree_hash(tmp_path) == installed

    other = tmp_path / "other" / ".auto-dream"
    assert cli("--root", other, "install", "cursor", "--scope", scope).code == 0
    theirs = _cursor_hooks(auto_dream_command(), other)
    assert load(hooks_json.read_text(), "comments")["hooks"]["sessionStart"] == [
        {"command": "./session-init.sh"}, *theirs["sessionStart"]]
    assert cli("--root", other, "uninstall", "cursor", "--scope", scope, "--dry-run").code == 0
    assert cli("--root", other, "uninstall", "cursor", "--scope", scope).code == 0
    assert tree_hash(tmp_path) == before


def test_cursor_hooks_json_install_creates_is_version_1_and_goes_again(cli, places, tmp_path):
    """A hooks.json install creates holds `"version": 1` (Cursor's schema version) and our hooks; once
    the user adds a hook of their own to it, uninstall takes ours out and keeps the file."""
    hooks_json = places["project"] / ".cursor" / "hooks.json"
    _run(cli, places, "install", "cursor")
    assert json.loads(hooks_json.read_text()) == {"version": 1,
                                                  "hooks": _cursor_hooks(auto_dream_command(), places["store"])}
    value = json.loads(hooks_json.read_text())
    value["hooks"]["stop"] = [{"command": "./audit.sh"}]
    hooks_json.write_text(json.dumps(value, indent=2) + "\n")
    _run(cli, places, "uninstall", "cursor")
    assert json.loads(hooks_json.read_text()) == {"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}}


def test_context_cursor_json_is_what_a_cursor_session_start_hook_answers(cli, places, root):
    """`context --cursor-json` prints `{"additional_context": TEXT}`, TEXT what `context` prints; with
    nothing to say, `{}` (a JSON answer with no fields, so Cursor has nothing to add)."""
    assert json.loads(cli("--root", root, "context", "--cursor-json").out) == {}
    assert cli("--root", root, "append", "--type", "project", "The hooks run in the project's root").code == 0
    plain = cli("--root", root, "context").out
    assert "The hooks run in the project's root" in plain
    assert json.loads(cli("--root", root, "context", "--cursor-json").out) == {"additional_context": plain}
    done = cli("--root", root, "context", "--json", "--cursor-json")
    assert done.code == 2 and "give one" in done.err
