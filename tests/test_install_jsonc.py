"""`install` / `uninstall` into agents' files written with comments (JSONC), and Gemini CLI's hooks.

Gemini CLI, Cursor, OpenCode and OpenClaw read files people write comments in: install adds our
server (and Gemini CLI's hooks) among them and uninstall gives back every byte; what an agent's own
reader would refuse (a trailing comma Gemini CLI's JSON.parse rejects) is refused, nothing written.
HOME, XDG_CONFIG_HOME, the project and the store are in tmp_path."""

import json
import re
import shlex

import pytest

from auto_dream.commands.install import GEMINI_HOOK_MARKER
from auto_dream.shell import auto_dream_command
from auto_dream.store.json_text import load
from conftest import tree_hash

GEMINI_SETTINGS = """{
  // My Gemini CLI settings. Keep the theme!
  "theme": "Dracula", /* dark */
  "mcpServers": {
    // git, for the agent
    "git": {"command": "uvx", "args": ["mcp-server-git"]} // added by hand
  },
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "./scan.sh"}]}
    ],
    "SessionStart": [
      /* my own start hook */
      {"matcher": "startup", "hooks": [{"name": "mine", "type": "command", "command": "echo '{}'"}]}
    ]
  }
  /* a last comment, "mcpServers": {} */
}
"""

CURSOR_MCP = """// Cursor's MCP servers\r
{\r
  "mcpServers": {\r
    /* "old": {"command": "x"} */\r
  }\r
}\r
"""  # CRLF, an object holding only a comment

OPENCODE_JSONC = """{
  "$schema": "https://opencode.ai/config.json",
  // Theme configuration
  "theme": "opencode",
  "mcp": {
    "sentry": {"type": "remote", "url": "https://mcp.sentry.dev/mcp",}, // trailing commas, as OpenCode allows
  },
  "autoupdate": true,
}"""  # no final newline

OPENCLAW_JSON5 = """{
  // my gateway, as OpenClaw's docs write it: JSON5
  gateway: {port: 18789, bind: 'loopback',},
  agents: { defaults: { workspace: "~/.openclaw/workspace" } },
  mcp: {servers: {
    context7: {command: 'npx', args: ['-y', '@upstash/context7-mcp']}, /* docs */
  }},
}
"""

# agent -> (scope, the JSON file relative to the project (or HOME for OpenClaw), its text, the keys to the servers)
CASES = {
    "gemini-cli": ("project", ".gemini/settings.json", GEMINI_SETTINGS, ("mcpServers",)),
    "cursor": ("project", ".cursor/mcp.json", CURSOR_MCP, ("mcpServers",)),
    "opencode": ("project", "opencode.jsonc", OPENCODE_JSONC, ("mcp",)),
    "openclaw": (None, ".openclaw/openclaw.json", OPENCLAW_JSON5, ("mcp", "servers")),
}


def _run(cli, places: dict, *argv: str):
    done = cli("--root", places["store"], *argv)
    assert done.code == 0, done.err
    return done


def _comments(text: str) -> list[str]:
    return [found for found in re.findall(r'"(?:[^"\\\n]|\\.)*"|//[^\r\n]*|/\*.*?\*/', text, re.DOTALL)
            if not found.startswith('"')]


def _scope(scope: str | None) -> tuple[str, ...]:
    return ("--scope", scope) if scope else ()


@pytest.mark.parametrize("agent", sorted(CASES))
def test_a_file_full_of_comments_is_installed_into_and_given_back_byte_for_byte(cli, places, tmp_path, agent):
    """Every comment, trailing comma and line end of the user's file stays where it was; our server
    goes among them; --dry-run writes nothing; uninstall gives back the original bytes."""
    scope, name, text, keys = CASES[agent]
    path = (places["home"] if agent == "openclaw" else places["project"]) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    before = tree_hash(tmp_path)

    assert "[DRY RUN]" in _run(cli, places, "install", agent, *_scope(scope), "--dry-run").out
    assert tree_hash(tmp_path) == before

    done = _run(cli, places, "install", agent, *_scope(scope))
    assert "JSON5" not in done.err  # OpenClaw's JSON5 is edited around, not skipped
    after = path.read_bytes().decode()
    assert _comments(after) == _comments(text)
    value = load(after, "json5")
    servers = value
    for key in keys:
        servers = servers[key]
    argv = [*auto_dream_command(), "--root", str(places["store"]), "mcp"]
    assert argv == (servers["auto-dream"]["command"] if agent == "opencode"
                    else [servers["auto-dream"]["command"], *servers["auto-dream"]["args"]])
    original = load(text, "json5")
    theirs = original
    for key in keys:
        theirs = theirs[key]
    assert {key: entry for key, entry in servers.items() if key != "auto-dream"} == theirs
    if agent in ("gemini-cli", "cursor"):
        load(after, "comments")  # what they read: comments, no trailing comma added

    installed = tree_hash(tmp_path)
    assert "already installed" in _run(cli, places, "install", agent, *_scope(scope)).out
    assert tree_hash(tmp_path) == installed
    _run(cli, places, "uninstall", agent, *_scope(scope))
    assert tree_hash(tmp_path) == before


def test_gemini_cli_gets_session_hooks_beside_the_users_own(cli, places, tmp_path):
    """SessionStart (startup, clear) gives MEMORY.md as Gemini CLI reads a hook's answer, JSON with
    hookSpecificOutput.additionalContext; SessionEnd dreams in the background; the user's hooks stay."""
    settings = places["project"] / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_SETTINGS)
    _run(cli, places, "install", "gemini-cli")
    hooks = load(settings.read_text(), "comments")["hooks"]
    assert hooks["BeforeTool"] == load(GEMINI_SETTINGS, "comments")["hooks"]["BeforeTool"]
    mine, *ours = hooks["SessionStart"]
    assert mine["hooks"][0]["name"] == "mine"
    assert [group["matcher"] for group in ours] == ["startup", "clear"]
    base = [*auto_dream_command(), "--root", str(places["store"])]
    for group in ours:
        (hook,) = group["hooks"]
        assert hook["type"] == "command" and hook["name"] == "auto-dream-context"
        assert hook["command"].endswith(GEMINI_HOOK_MARKER)
        assert shlex.split(hook["command"], comments=True) == [*base, "context", "--json"]
    (end,) = hooks["SessionEnd"]
    assert "matcher" not in end  # every way a session ends
    command = end["hooks"][0]["command"]
    assert command.startswith("nohup " + shlex.join([*base, "dream", "--if-due"])) and " & " in command

    done = cli("--root", places["store"], "context", "--json")
    assert done.code == 0 and done.out == ""  # no store yet: nothing, and no failed session
    _run(cli, places, "append", "--type", "project", "deploys go out on Fridays")
    answer = json.loads(cli("--root", places["store"], "context", "--json").out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "deploys go out on Fridays" in answer["hookSpecificOutput"]["additionalContext"]


def test_gemini_cli_hooks_into_a_file_without_hooks_come_out_again(cli, places, tmp_path):
    settings = places["project"] / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "theme": "Dracula" // mine\n}')
    before = tree_hash(tmp_path)
    _run(cli, places, "install", "gemini-cli")
    value = load(settings.read_text(), "comments")
    assert set(value) == {"theme", "mcpServers", "hooks"} and set(value["hooks"]) == {"SessionStart", "SessionEnd"}
    _run(cli, places, "uninstall", "gemini-cli")
    assert tree_hash(tmp_path) == before


@pytest.mark.parametrize("agent, name, text, message", [
    # Gemini CLI strips comments and calls JSON.parse: a trailing comma is an error to it
    ("gemini-cli", ".gemini/settings.json", '{\n  "theme": "Dracula",\n}\n', "not valid JSON (line 3, column 1"),
    ("cursor", ".cursor/mcp.json", '{"mcpServers": {"a": {"command": "x"},}}', "not valid JSON (line 1, column 39"),
    ("cursor", ".cursor/hooks.json", '{"version": 1, "hooks": []}\n', "'hooks' is not a JSON object"),
    ("cursor", ".cursor/hooks.json", '{"hooks": {"sessionEnd": {}}}', "'hooks' → 'sessionEnd' is not a JSON array"),
    ("opencode", "opencode.json", '{\n  "mcp": {} /* never closed\n}', "a /* comment that never ends"),
    ("opencode", "opencode.json", "{mcp: {}}", "not valid JSON (line 1, column 2"),
])
def test_what_the_agent_would_not_read_is_refused_and_nothing_written(cli, places, tmp_path, agent, name, text,
                                                                      message):
    path = places["project"] / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    before = tree_hash(tmp_path)
    done = cli("--root", places["store"], "install", agent)
    assert done.code == 1 and message in done.err and len(done.err.strip().splitlines()) == 1
    assert tree_hash(tmp_path) == before


def test_opencode_jsonc_is_edited_when_there_is_no_opencode_json(cli, places, tmp_path):
    """OpenCode reads opencode.jsonc: install edits it rather than making an opencode.json beside it."""
    jsonc = places["project"] / "opencode.jsonc"
    jsonc.write_text(OPENCODE_JSONC)
    _run(cli, places, "install", "opencode")
    assert not (places["project"] / "opencode.json").exists()
    assert "auto-dream" in load(jsonc.read_text(), "jsonc")["mcp"]
    _run(cli, places, "uninstall", "opencode")
    assert jsonc.read_text() == OPENCODE_JSONC


def test_openclaw_json5_that_openclaw_would_not_read_is_refused_and_nothing_written(cli, places, tmp_path):
    config = places["home"] / ".openclaw" / "openclaw.json"
    config.parent.mkdir()
    config.write_text("{\n  gateway: {port: 18789}\n  agents: {}\n}\n")  # a comma missing
    before = tree_hash(tmp_path)
    done = cli("--root", places["store"], "install", "openclaw")
    assert done.code == 1 and "is not valid JSON5 (line 3, column 3" in done.err
    assert tree_hash(tmp_path) == before
