"""`install` and `uninstall`: wire auto-dream into an agent (Claude Code, OpenClaw, Gemini CLI, Cursor,
OpenCode), touching nothing else.

Planning is pure (a snapshot of the files' bytes in, their new bytes out, as a `Plan`); only
`apply_plan` writes, so `--dry-run` renders the very plan a real run applies. What each agent
reads, and where (the sources are cited in docs/agents.md):

- Claude Code (https://code.claude.com/docs/en/mcp, "MCP installation scopes"): a project's MCP
  servers in `<project>/.mcp.json`, the user's at the top of `~/.claude.json`, both under
  `mcpServers`; hooks (https://code.claude.com/docs/en/hooks, "Hook locations") in
  `<project>/.claude/settings.json` or `~/.claude/settings.json`; skills
  (https://code.claude.com/docs/en/skills, "Where skills live") in `.claude/skills/<name>/SKILL.md`
  or `~/.claude/skills/<name>/SKILL.md`. CLAUDE_CONFIG_DIR moves every `~/.claude` path, and
  `.claude.json` with them (store.claude_home).
- OpenClaw (docs/tools/skills.md of openclaw/openclaw, "Loading order"): managed skills in
  `<state-dir>/skills/<name>/SKILL.md`, the state dir being `$OPENCLAW_STATE_DIR` or `~/.openclaw`;
  MCP servers in `mcp.servers` of `<state-dir>/openclaw.json` (https://docs.openclaw.ai/cli/mcp), or of
  `$OPENCLAW_CONFIG_PATH` (https://docs.openclaw.ai/help/environment), a JSON5 file
  (https://docs.openclaw.ai/gateway/configuration-reference).
- Gemini CLI (https://geminicli.com/docs/tools/mcp-server, https://geminicli.com/docs/cli/gemini-md,
  https://geminicli.com/docs/hooks): `mcpServers` and `hooks` (SessionStart, SessionEnd) of
  `.gemini/settings.json` or `~/.gemini/settings.json`; GEMINI.md, given a marked block.
- Cursor (https://cursor.com/docs/mcp, https://cursor.com/docs/rules, https://cursor.com/docs/hooks):
  `mcpServers` of `.cursor/mcp.json` or `~/.cursor/mcp.json`; `hooks` (sessionStart, sessionEnd) of
  `.cursor/hooks.json` or `~/.cursor/hooks.json`; a project rule `.cursor/rules/auto-dream.mdc`.
- OpenCode (https://opencode.ai/docs/mcp-servers, https://opencode.ai/docs/rules): `mcp` of
  `opencode.json` or `~/.config/opencode/opencode.json`, `{"type": "local", "command": [...]}`; AGENTS.md,
  given a marked block.

Edits are spliced into the JSON text (store.json_text): every other key, the indentation and the
final newline stay as they were, and so do the comments of the agents that read their files as JSON
with comments (Places.json_dialect). What install adds is marked — the server is named "auto-dream"
and runs `auto-dream … mcp`, each hook command ends with HOOK_MARKER, the skill carries
SKILL_MARKER for people to see — and a record beside the skill (RECORD_NAME) notes the skill's
hash, which files, JSON containers and folders install created, and whether the server is
install's (a user may have registered one of that name and command by hand), so that uninstall
removes exactly those and a file nobody else changed comes back byte for byte. The record is
written first, as a journal, so an install killed half way is finished by the next one or taken
out by uninstall (apply_plan). Nothing is deleted whose real path is outside the folders install
manages (Places.owned): a link a cloned repository ships cannot aim uninstall at the user's files.
"""

import contextlib
import difflib
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from auto_dream.commands import marked_block
from auto_dream.commands.rollback import Rollback
from auto_dream.errors import InputError, StoreError
from auto_dream.judge.fences import fenced
from auto_dream.store.claude_home import claude_homes
from auto_dream.store.files import fsync_dir, read_regular, remove_temporary, write_temporary
from auto_dream.store.json_text import (
    JsonTextError,
    append_item,
    blank_inside,
    load,
    new_document,
    remove_item,
    remove_member,
    set_blank_inside,
    set_member,
)
from auto_dream.store.paths import STORE_DIR_NAME

SERVER_NAME = "auto-dream"
SKILL_NAME = "auto-dream"
RECORD_NAME = ".auto-dream-install.json"
HOOK_MARKER = "# added by auto-dream install claude-code"
GEMINI_HOOK_MARKER = "# added by auto-dream install gemini-cli"
CURSOR_HOOK_MARKER = "# added by auto-dream install cursor"
HOOK_MARKERS = (HOOK_MARKER, GEMINI_HOOK_MARKER, CURSOR_HOOK_MARKER)
SKILL_MARKER = "<!-- Installed by `auto-dream install"
SCOPES = ("project", "local", "user")
AGENT_SCOPES = ("project", "user")  # Gemini CLI's, Cursor's and OpenCode's
AGENT_NAMES = {"claude-code": "Claude Code", "openclaw": "OpenClaw", "gemini-cli": "Gemini CLI", "cursor": "Cursor",
               "opencode": "OpenCode"}
# The marked block auto-dream adds to an agent's instructions file (GEMINI.md, AGENTS.md); BLOCK_BEGIN starts
# its first line, whatever agent it names.
BLOCK_BEGIN = "<!-- auto-dream: begin."
BLOCK_END = "<!-- auto-dream: end -->"
CURSOR_RULE = "auto-dream.mdc"
# A resumed or forked conversation already holds the memory it was given; a cleared or compacted
# one has lost it. (SessionStart matchers: https://code.claude.com/docs/en/hooks, "SessionStart".)
SESSION_START_MATCHER = "startup|clear|compact"
GEMINI_SESSION_START = ("startup", "clear")  # Gemini CLI's SessionStart sources that start without the context
# The events of the hooks install adds, in each agent's spelling (Cursor's: https://cursor.com/docs/hooks).
HOOK_EVENTS = {"cursor": ("sessionStart", "sessionEnd")}
CLAUDE_HOOK_EVENTS = ("SessionStart", "SessionEnd")  # Claude Code's and Gemini CLI's
OPENCLAW_STORE = Path(".openclaw") / "workspace" / STORE_DIR_NAME  # the OpenClaw skill's store
# --scope local keeps the skill in the project's .claude/skills/auto-dream/ (Claude Code has no personal
# skill folder for one project), with this .gitignore in it: git then ignores the folder, itself included.
LOCAL_IGNORE = (b"# auto-dream install claude-code --scope local: this folder holds this machine's paths, "
                b"so git ignores it\n*\n")
NEW_FILE_MODE = 0o644
PRIVATE_FILE_MODE = 0o600  # ~/.claude.json: Claude Code keeps its sign-in state there
FOLDER_MODE = 0o755


# ---------------------------------------------------------------- where each agent looks


@dataclass(frozen=True)
class Places:
    """The files and folders one agent (at one scope) reads auto-dream from."""

    agent: str  # the `auto-dream install` name: "claude-code", "openclaw", "gemini-cli", "cursor", "opencode"
    scope: str | None  # "project", "local" (Claude Code) or "user"; None: OpenClaw has one place
    skill_dir: Path  # the folder of our own file (skill_file) and of the record
    mcp_file: Path | None = None
    settings: Path | None = None  # the hooks' file: Claude Code's and Gemini CLI's settings, Cursor's hooks.json
    # The folders install manages: uninstall deletes no file (and no folder) whose real path is
    # outside them, so a link a cloned repository planted cannot make it delete what it names.
    owned: tuple[Path, ...] = ()
    # Where in mcp_file the object holding "mcpServers" is: the top (project, user), or for the
    # local scope ("projects", "<project path>") of ~/.claude.json.
    mcp_base: tuple[str, ...] = ()
    ignore: Path | None = None  # --scope local: the skill folder's .gitignore (LOCAL_IGNORE)
    # The keys from mcp_base to the object that holds the servers, and the shape of our entry in it
    # (server_entry): each agent's own.
    servers_key: tuple[str, ...] = ("mcpServers",)
    server_shape: str = "claude-code"
    skill_file: str | None = "SKILL.md"  # our own whole file in skill_dir (None: none)
    instructions: Path | None = None  # a Markdown file auto-dream adds a marked block to (GEMINI.md, AGENTS.md)
    own_folder: bool = True  # skill_dir is named for auto-dream (.../skills/auto-dream), not the agent's own
    # What the agent's JSON files may hold besides JSON (store.json_text.DIALECTS): "json" (Claude Code),
    # "comments" (Gemini CLI, Cursor), "jsonc" (comments and trailing commas: OpenCode), "json5" (OpenClaw).
    json_dialect: str = "json"

    @property
    def label(self) -> str:
        """For people: "Claude Code (project scope)", "OpenClaw"."""
        name = AGENT_NAMES.get(self.agent, self.agent)
        return f"{name} ({self.scope} scope)" if self.scope else name

    @property
    def install_line(self) -> str:
        return f"auto-dream install {self.agent}" + (f" --scope {self.scope}" if self.scope else "")

    @property
    def skill(self) -> Path | None:
        return self.skill_dir / self.skill_file if self.skill_file else None

    @property
    def record(self) -> Path:
        return self.skill_dir / RECORD_NAME

    def files(self) -> list[Path]:
        return [path for path in (self.mcp_file, self.settings, self.instructions, self.skill, self.record,
                                  self.ignore) if path is not None]


def claude_code_places(scope: str, project: Path, home: Path | None, config_dir: Path | None) -> Places:
    """Where Claude Code reads a project's (or the user's) servers, hooks and skills."""
    if scope not in SCOPES:
        raise InputError(f"unknown scope {scope!r}: use project, local or user")
    if scope == "project":
        return Places("claude-code", "project", project / ".claude" / "skills" / SKILL_NAME,
                      mcp_file=project / ".mcp.json", settings=project / ".claude" / "settings.json",
                      owned=(project,))
    if home is None:
        raise InputError("no home folder for Claude Code's user settings (HOME is not set)")
    config_home, claude_json = claude_homes(home, config_dir)[0]
    if scope == "local":
        # Claude Code's own personal places for one project: the MCP "local" scope, ~/.claude.json's
        # projects["<path>"].mcpServers (https://code.claude.com/docs/en/mcp, "Local scope"), and
        # .claude/settings.local.json (https://code.claude.com/docs/en/settings, "Settings files").
        skill_dir = project / ".claude" / "skills" / SKILL_NAME
        return Places("claude-code", "local", skill_dir, mcp_file=claude_json,
                      settings=project / ".claude" / "settings.local.json",
                      owned=tuple(dict.fromkeys((project, config_home, claude_json.parent))),
                      mcp_base=("projects", str(project)), ignore=skill_dir / ".gitignore")
    return Places("claude-code", "user", config_home / "skills" / SKILL_NAME,
                  mcp_file=claude_json, settings=config_home / "settings.json",
                  owned=tuple(dict.fromkeys((config_home, claude_json.parent))))


def other_scopes_installed(places: Places, project: Path, home: Path | None, config_dir: Path | None) -> list[Places]:
    """The other Claude Code scopes auto-dream is installed at, for this project (their install record is there)."""
    found = []
    for scope in SCOPES:
        if scope == places.scope or (home is None and scope != "project"):
            continue
        other = claude_code_places(scope, project, home, config_dir)
        record = _Record.parse(read_file(other.record)) if other.record != places.record else None
        line = record.installed_with if record is not None else None
        if line and (line == other.install_line or (scope == "project" and line == "auto-dream install claude-code")):
            found.append(other)
    return found


def scope_warning(places: Places, others: list[Places]) -> str:
    """What Claude Code does with auto-dream installed at two scopes. Sources: skills
    (https://code.claude.com/docs/en/skills, "Where skills live": a personal skill wins over a project
    skill of the same name); MCP (https://code.claude.com/docs/en/mcp, "Scope hierarchy and precedence":
    a server name defined at several scopes is taken from local, then project, then user); hooks
    (https://code.claude.com/docs/en/hooks: the hooks of every settings file run)."""
    scopes = [places.scope, *(other.scope for other in others)]
    skill = "user" if "user" in scopes else places.scope
    server = next(scope for scope in ("local", "project", "user") if scope in scopes)
    names = ", ".join(f"--scope {other.scope}" for other in others)
    return (f"auto-dream is also installed for Claude Code at {names}: Claude Code will use the {skill}-scope "
            f"skill (a personal skill wins over a project's) and the {server}-scope MCP server (local, then "
            "project, then user), and run the SessionStart and SessionEnd hooks of both; keep one: "
            + " or ".join(f"`auto-dream uninstall claude-code --scope {scope}`" for scope in scopes))


def openclaw_places(home: Path | None, state_dir: Path | None, config_path: Path | None = None) -> Places:
    """Where OpenClaw loads managed skills: `<state-dir>/skills`, shared by every local agent; and its
    MCP servers, `mcp.servers` of `<state-dir>/openclaw.json` (https://docs.openclaw.ai/cli/mcp,
    https://docs.openclaw.ai/gateway/configuration-reference), each `{"command", "args"}`, or of the
    file `config_path` names (OPENCLAW_CONFIG_PATH: https://docs.openclaw.ai/help/environment), whose
    folder install then manages too."""
    if state_dir is None:
        if home is None:
            raise InputError("no home folder for ~/.openclaw (HOME is not set): set OPENCLAW_STATE_DIR")
        state_dir = home / ".openclaw"
    config = config_path or state_dir / "openclaw.json"
    return Places("openclaw", None, state_dir / "skills" / SKILL_NAME, mcp_file=config,
                  owned=tuple(dict.fromkeys((state_dir, config.parent))), servers_key=("mcp", "servers"),
                  server_shape="openclaw", json_dialect="json5")


def gemini_cli_places(scope: str, project: Path, home: Path | None) -> Places:
    """Where Gemini CLI reads MCP servers (`mcpServers` of ~/.gemini/settings.json or
    <project>/.gemini/settings.json: https://geminicli.com/docs/tools/mcp-server), hooks (`hooks` of the
    same file: https://geminicli.com/docs/hooks) and its context files (~/.gemini/GEMINI.md, or GEMINI.md
    in the project: https://geminicli.com/docs/cli/gemini-md). The record goes in the .gemini folder.
    Gemini CLI reads settings.json as JSON after stripping comments (strip-json-comments, then
    JSON.parse, in packages/cli/src/config/settings.ts of google-gemini/gemini-cli; its docs write
    `//` comments in settings.json): comments, no trailing commas."""
    folder = _agent_folder(scope, project, home, ".gemini")
    instructions = folder / "GEMINI.md" if scope == "user" else project / "GEMINI.md"
    return Places("gemini-cli", scope, folder, mcp_file=folder / "settings.json", settings=folder / "settings.json",
                  instructions=instructions, owned=(folder if scope == "user" else project,),
                  server_shape="gemini-cli", skill_file=None, own_folder=False, json_dialect="comments")


def cursor_places(scope: str, project: Path, home: Path | None) -> Places:
    """Where Cursor reads MCP servers (`mcpServers` of ~/.cursor/mcp.json or <project>/.cursor/mcp.json:
    https://cursor.com/docs/mcp), hooks (`hooks` of ~/.cursor/hooks.json or <project>/.cursor/hooks.json:
    https://cursor.com/docs/hooks, "Configuration") and a project's rules (.cursor/rules/*.mdc:
    https://cursor.com/docs/rules). Cursor's user rules live in its settings, not in a file: --scope user
    adds the server and the hooks, and keeps the record in ~/.cursor. Cursor's docs do not say whether
    mcp.json or hooks.json may hold comments; those a user wrote are kept (install writes none), and a
    trailing comma, which Cursor reports as a JSON error in mcp.json, is refused."""
    folder = _agent_folder(scope, project, home, ".cursor")
    if scope == "user":
        return Places("cursor", scope, folder, mcp_file=folder / "mcp.json", settings=folder / "hooks.json",
                      owned=(folder,), server_shape="cursor", skill_file=None, own_folder=False,
                      json_dialect="comments")
    return Places("cursor", scope, folder / "rules", mcp_file=folder / "mcp.json", settings=folder / "hooks.json",
                  owned=(project,), server_shape="cursor", skill_file=CURSOR_RULE, own_folder=False,
                  json_dialect="comments")


def opencode_places(scope: str, project: Path, home: Path | None, config_home: Path | None) -> Places:
    """Where OpenCode reads MCP servers (`mcp` of opencode.json: the project's, or
    $XDG_CONFIG_HOME/opencode/opencode.json: https://opencode.ai/docs/mcp-servers, https://opencode.ai/docs/config)
    and instructions (AGENTS.md of the project, or ~/.config/opencode/AGENTS.md:
    https://opencode.ai/docs/rules). The record goes in <project>/.opencode (its project folder) or the
    config folder. OpenCode reads JSON and JSONC, comments and trailing commas (https://opencode.ai/docs/config,
    "Format"), from opencode.json or opencode.jsonc: install edits an opencode.jsonc that is there
    when no opencode.json is."""
    if scope == "user":
        if config_home is None and home is None:
            raise InputError("no home folder for ~/.config/opencode (HOME is not set)")
        folder = (config_home or home / ".config") / "opencode"  # type: ignore[operator]
        return Places("opencode", scope, folder, mcp_file=_opencode_config(folder),
                      instructions=folder / "AGENTS.md", owned=(folder,), servers_key=("mcp",),
                      server_shape="opencode", skill_file=None, own_folder=False, json_dialect="jsonc")
    _agent_folder(scope, project, home, ".opencode")
    return Places("opencode", scope, project / ".opencode", mcp_file=_opencode_config(project),
                  instructions=project / "AGENTS.md", owned=(project,), servers_key=("mcp",),
                  server_shape="opencode", skill_file=None, own_folder=False, json_dialect="jsonc")


def _opencode_config(folder: Path) -> Path:
    """opencode.json, or the opencode.jsonc that is there instead."""
    jsonc = folder / "opencode.jsonc"
    return jsonc if os.path.lexists(jsonc) and not os.path.lexists(folder / "opencode.json") else \
        folder / "opencode.json"


def _agent_folder(scope: str, project: Path, home: Path | None, name: str) -> Path:
    if scope not in AGENT_SCOPES:
        raise InputError(f"unknown scope {scope!r}: use project or user")
    if scope == "project":
        return project / name
    if home is None:
        raise InputError(f"no home folder for ~/{name} (HOME is not set)")
    return home / name


def default_store(places: Places, project: Path, home: Path | None) -> Path:
    """The store an install names when --root does not: the project's own `.auto-dream` (project
    scope); for the user, `~/.auto-dream`; for OpenClaw, the workspace store the OpenClaw skill used."""
    if places.scope in ("project", "local"):
        return project / STORE_DIR_NAME
    if home is None:
        raise InputError("no home folder for the store (HOME is not set): give it with --root")
    return home / (OPENCLAW_STORE if places.agent == "openclaw" else STORE_DIR_NAME)


@dataclass(frozen=True)
class AgentFound:
    """One agent `install --list` looks for: whether it is on this machine, whether auto-dream can
    install into it today, and where it is installed."""

    name: str  # as people write it
    command: str | None  # the `auto-dream install` name, None: not supported yet
    found: tuple[str, ...]  # how it was found: "`claude` on PATH", "~/.claude"
    installed: tuple[str, ...] = ()  # the scopes (or "yes") auto-dream is installed at


# (name, install command, the program on PATH, the folders under home) — where each agent keeps its state.
AGENTS: tuple[tuple[str, str | None, str | None, tuple[str, ...]], ...] = (
    ("Claude Code", "claude-code", "claude", (".claude",)),
    ("OpenClaw", "openclaw", None, (".openclaw",)),
    ("Codex", "codex", "codex", (".codex",)),  # commands/install_codex.py
    ("Cursor", "cursor", None, (".cursor",)),
    ("Gemini CLI", "gemini-cli", "gemini", (".gemini",)),
    ("OpenCode", "opencode", "opencode", (".config/opencode",)),
)


def find_agents(home: Path | None, project: Path, config_dir: Path | None, state_dir: Path | None,
                on_path: Any, config_home: Path | None = None, codex_dir: Path | None = None) -> list[AgentFound]:
    """Every agent of AGENTS, with how it was found (`on_path(name)`: the program's path or None) and,
    for those auto-dream installs into, where its install record is (project: the current folder;
    Codex: `codex_dir`, $CODEX_HOME, else ~/.codex)."""
    found: list[AgentFound] = []
    for name, command, program, folders in AGENTS:
        how = [f"`{program}` on PATH"] if program and on_path(program) else []
        for folder in folders:
            place = (config_dir if command == "claude-code" and config_dir else
                     state_dir if command == "openclaw" and state_dir else
                     config_home / "opencode" if command == "opencode" and config_home else
                     codex_dir if command == "codex" and codex_dir else
                     home / folder if home else None)
            if place is not None and place.is_dir():
                how.append(str(place) if place != (home / folder if home else None) else f"~/{folder}")
        installed: list[str] = []
        if command == "claude-code":
            for scope in SCOPES:
                if scope != "project" and home is None:
                    continue
                places = claude_code_places(scope, project, home, config_dir)
                record = _Record.parse(read_file(places.record))
                line = record.installed_with if record else None
                if line == places.install_line or (scope == "project" and line == "auto-dream install claude-code"):
                    installed.append(scope)
        elif command == "openclaw" and (home is not None or state_dir is not None):
            if _Record.parse(read_file(openclaw_places(home, state_dir).record)) is not None:
                installed.append("yes")
        elif command in ("gemini-cli", "cursor", "opencode"):
            for scope in AGENT_SCOPES:
                try:
                    places = (gemini_cli_places(scope, project, home) if command == "gemini-cli" else
                              cursor_places(scope, project, home) if command == "cursor" else
                              opencode_places(scope, project, home, config_home))
                except InputError:  # no home folder
                    continue
                record = _Record.parse(read_file(places.record))
                if record is not None and record.installed_with == places.install_line:
                    installed.append(scope)
        elif command == "codex" and (codex := codex_dir or (home / ".codex" if home else None)) is not None:
            try:  # install_codex's record (install_codex imports this module, so it is read here)
                record = json.loads(read_file(codex / RECORD_NAME) or b"null")
            except ValueError:
                record = None
            if isinstance(record, dict) and record.get("installed_with") == "auto-dream install codex":
                installed.append("yes")
        found.append(AgentFound(name, command, tuple(how), tuple(installed)))
    return found


# ---------------------------------------------------------------- what is installed


def server_entry(command: tuple[str, ...], root: Path, shape: str = "claude-code") -> dict:
    """The MCP server in each agent's own shape: as `claude mcp add` writes a stdio one (Claude Code);
    `command` and `args` (Gemini CLI, Cursor, OpenClaw's `mcp.servers`); one `command` array with
    `"type": "local"` (OpenCode, whose schema has no `args`: https://opencode.ai/docs/mcp-servers)."""
    argv = [*command, "--root", str(root), "mcp"]
    if shape == "claude-code":
        return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}
    if shape == "opencode":
        return {"type": "local", "command": argv, "enabled": True}
    return {"command": argv[0], "args": argv[1:]}


def _server_argv(entry: Any) -> list[str] | None:
    """What a server entry runs, in either shape: `command` and `args`, or one `command` array."""
    if not isinstance(entry, dict):
        return None
    command, args = entry.get("command"), entry.get("args", [])
    if isinstance(command, list) and all(isinstance(part, str) for part in command) and command:
        return list(command)
    if isinstance(command, str) and isinstance(args, list):
        return [command, *args]
    return None


def hook_groups(command: tuple[str, ...], root: Path, agent: str = "claude-code") -> dict[str, list[dict]]:
    """The matcher groups of the SessionStart hook (MEMORY.md as context) and the SessionEnd one (a
    dream when one is due), for Claude Code or Gemini CLI; for Cursor, its sessionStart and
    sessionEnd hooks themselves.

    Claude Code adds a SessionStart hook's plain stdout to the context. SessionEnd hooks share a
    1.5-second budget (https://code.claude.com/docs/en/hooks, "SessionEnd"), so the dream is started
    in the background: `&` lets the shell return at once, the redirections leave it none of the
    hook's pipes (a process holding them keeps whoever reads the hook's output waiting for it), and
    nohup keeps it from the hangup of a terminal closing. `--if-due` makes it a no-op unless 24
    hours passed and 5 entries wait; a dream already running holds the lock and this one exits.

    Gemini CLI (https://geminicli.com/docs/hooks and its reference, docs/hooks/reference.md of
    google-gemini/gemini-cli) runs the same `hooks` → event → [{matcher, hooks: [{type, command}]}]
    through the shell, but reads a hook's stdout as JSON: the context goes in
    `hookSpecificOutput.additionalContext` (`context --json`), and plain text would only be shown
    to the user. A lifecycle matcher is one exact source, so SessionStart has a group for `startup`
    and one for `clear` (not `resume`: a resumed session holds what it was given). SessionEnd is
    best effort (Gemini CLI does not wait for it): the dream goes to the background as for Claude
    Code. Each hook has a `name`, as `/hooks enable|disable` takes.

    Cursor (https://cursor.com/docs/hooks) lists under each event the hooks themselves, `{"command"}`
    (a shell string), with no matcher groups, and reads a hook's stdout as JSON: sessionStart's
    `additional_context` is added to the conversation's initial system context (`context
    --cursor-json`). sessionStart is called when a new conversation is created; sessionEnd is
    fire-and-forget, its output unused: the dream goes to the background as for Claude Code."""
    base = shlex.join([*command, "--root", str(root)])
    background = f"nohup {base} dream --if-due </dev/null >/dev/null 2>&1 &"
    if agent == "cursor":
        return {"sessionStart": [{"command": f"{base} context --cursor-json {CURSOR_HOOK_MARKER}"}],
                "sessionEnd": [{"command": f"{background} {CURSOR_HOOK_MARKER}"}]}
    if agent == "gemini-cli":
        start = {"name": "auto-dream-context", "type": "command",
                 "command": f"{base} context --json {GEMINI_HOOK_MARKER}"}
        end = {"name": "auto-dream-dream", "type": "command", "command": f"{background} {GEMINI_HOOK_MARKER}"}
        return {"SessionStart": [{"matcher": source, "hooks": [start]} for source in GEMINI_SESSION_START],
                "SessionEnd": [{"hooks": [end]}]}
    start = {"type": "command", "command": f"{base} context {HOOK_MARKER}"}
    end = {"type": "command", "command": f"{background} {HOOK_MARKER}"}
    return {"SessionStart": [{"matcher": SESSION_START_MATCHER, "hooks": [start]}], "SessionEnd": [{"hooks": [end]}]}


def render_skill(template: str, agent: str, command: tuple[str, ...], root: Path) -> str:
    """templates/SKILL.md for one installation: the marker, where its store is, and every command
    line of its examples written with this machine's executable and store (an agent's shell need
    not have `auto-dream` on its PATH). OpenClaw's copy adds its `metadata` line."""
    if not template.startswith("---\n") or "\n---\n" not in template[4:]:
        raise StoreError("templates/SKILL.md has no frontmatter (--- … ---)")
    head, body = template[4:].split("\n---\n", 1)
    if agent == "openclaw":
        # OpenClaw reads `metadata.openclaw` as one JSON object (docs/tools/skills.md, "Gating").
        # No `requires.bins`: it checks names on the gateway's PATH, and the commands here name
        # the executable by its absolute path, so a venv off that PATH still works.
        head += '\nmetadata: {"openclaw": {"emoji": "🌙"}}'
    full = shlex.join([*command, "--root", str(root)])
    here = (f"{SKILL_MARKER} {agent}`; `auto-dream uninstall {agent}` removes it. -->\n\n"
            f"On this machine the store is `{root}` and `auto-dream` is `{full}`: the commands below "
            "are written out with it; use it the same way wherever this page says `auto-dream`.\n")
    lines = body.split("\n")
    out, placed = [], False
    for line, code in zip(lines, fenced(lines)):
        if code and line.startswith("auto-dream "):  # a command the page shows, in a code block
            line = full + line[len("auto-dream"):]
        out.append(line)
        if not placed and line.startswith("# "):
            out.extend(["", here.rstrip("\n")])
            placed = True
    if not placed:
        out[:0] = [here]
    return "---\n" + head + "\n---\n" + "\n".join(out)


def render_instructions(agent: str, command: tuple[str, ...], root: Path) -> str:
    """When to recall and remember, for the agents that get no skill (and, but for Gemini CLI and Cursor, no hooks):
    the text of the marked block in GEMINI.md or AGENTS.md, and of Cursor's rule. Every command names this
    machine's executable and store, as the skill's do."""
    full = shlex.join([*command, "--root", str(root)])
    return (
        "## auto-dream: long-term memory\n\n"
        f"Long-term memory for this work is the auto-dream store `{root}`. Its MCP server `auto-dream` gives you "
        f"the tools below; without them, run `{full}` followed by the same command.\n\n"
        "- **At the start of a task**, and before you ask the user something they may have told you before (a "
        "preference, a decision, a name, how something is done here): `recall` with a few words of it, then "
        f"`show` a memory to read it whole (`{full} recall WORDS`, `{full} show PATH`). `MEMORY.md` in the store "
        "is the index of what is remembered.\n"
        "- **When you learn something worth keeping** (the user says \"remember\", corrects you, states a "
        "preference; a decision is made, and why; a fact about the project or where something lives): "
        "`remember` one short, self-contained sentence with its type: user, feedback, project or reference "
        f"(`{full} append --type project \"TEXT\"`).\n"
        "- Remember no secrets, nothing the code or its history already says. Run `dream` (which tidies the "
        "memories) only when the user asks.\n")


def render_block(agent: str, command: tuple[str, ...], root: Path) -> str:
    """The marked block install adds to an instructions file; uninstall removes it, markers and all."""
    return (f"{BLOCK_BEGIN} Added by `auto-dream install {agent}`; `auto-dream uninstall {agent}` removes it. -->\n"
            + render_instructions(agent, command, root) + BLOCK_END + "\n")


def render_cursor_rule(command: tuple[str, ...], root: Path) -> str:
    """Cursor's project rule: frontmatter (`alwaysApply: true`: in every chat; https://cursor.com/docs/rules),
    the marker, then the instructions."""
    return ("---\ndescription: auto-dream long-term memory, when to recall and when to remember\n"
            "alwaysApply: true\n---\n\n"
            f"{SKILL_MARKER} cursor`; `auto-dream uninstall cursor` removes it. -->\n\n"
            + render_instructions("cursor", command, root))


def _block_span(text: str) -> marked_block.Span | None:
    """Where our marked block is in `text` (its final line ending included), or None."""
    return marked_block.marked_span(text, BLOCK_BEGIN, BLOCK_END)


def _put_block(text: str, block: str) -> tuple[str, str]:
    """`text` with our block in it (replacing the one there), in the text's line endings, and the
    text put before it to separate it from the user's (a blank line), which uninstall takes away."""
    block = marked_block.in_newlines(block, marked_block.newline_of(text))
    span = _block_span(text)
    if span is not None:
        return text[:span[0]] + block + text[span[1]:], ""
    return marked_block.append(text, block)


def _remove_block(text: str, lead: str) -> str:
    span = _block_span(text)
    return text if span is None else marked_block.remove(text, span, lead)


def _is_our_handler(handler: Any) -> bool:
    """A hook whose command ends with one of our markers (Cursor's hooks have no `type`: a command is its default)."""
    return (isinstance(handler, dict) and handler.get("type", "command") == "command"
            and isinstance(handler.get("command"), str) and handler["command"].rstrip().endswith(HOOK_MARKERS))


def _is_our_server(entry: Any) -> bool:
    """A server entry that runs auto-dream's MCP server (`auto-dream … mcp`, or `python -m auto_dream … mcp`)."""
    argv = _server_argv(entry)
    if argv is None or "mcp" not in argv[1:]:
        return False
    return Path(argv[0]).name in ("auto-dream", "auto-dream.exe") or argv[1:3] == ["-m", "auto_dream"]


def _added_by_user(entry: dict) -> str:
    """What a person gave our server that install does not write (an `env` with an API key, a
    `timeout`), named for a note — an env's names, never its values — or "" when there is none."""
    added = [repr(key) for key in entry if key not in ("type", "command", "args", "env", "environment", "enabled")]
    for name in ("env", "environment"):  # OpenCode calls it `environment`
        env = entry.get(name)
        if isinstance(env, dict) and env:
            added.insert(0, f"{name} {', '.join(sorted(env))}")
        elif env not in ({}, None):
            added.insert(0, f"an {name}")
    return " and ".join(added)


def _same_server(entry: Any, wanted: dict) -> bool:
    """The same program with the same arguments. Claude Code may add an empty `env` or the `type`
    when it rewrites the file; the other keys (`env` with a key for dream's LLM, a `timeout`) are
    the user's to give, and are kept."""
    kind = wanted.get("type", "stdio")
    return (isinstance(entry, dict) and entry.get("type", kind) == kind
            and _server_argv(entry) == _server_argv(wanted) and type(entry.get("command")) is type(wanted["command"]))


# ---------------------------------------------------------------- the plan


@dataclass(frozen=True)
class AgentFiles:
    """What install read of an agent's files before it plans (dream's own is dream/snapshot.py):
    the bytes of every file a plan may touch (None: missing), the names in each folder it may
    create or remove (None: missing), the real path of each of those and of the owned folders
    (a path missing here is its own), and the temporary files an interrupted run left beside ours."""

    files: Mapping[Path, bytes | None]
    folders: Mapping[Path, frozenset[str] | None]
    real: Mapping[Path, Path] = field(default_factory=dict)
    leftovers: Mapping[Path, bytes] = field(default_factory=dict)  # temporary files, and journals in staged folders
    staged: tuple[Path, ...] = ()  # the staging folders of a stopped run (apply_plan), deepest first

    def outside(self, places: "Places", path: Path) -> Path | None:
        """The real path of `path` when it is outside every folder install manages, else None."""
        real = self.real.get(path, path)
        return None if _within(real, [self.real.get(root, root) for root in places.owned]) else real


def _within(real: Path, roots: list[Path]) -> bool:
    return any(real == root or root in real.parents for root in roots)


@dataclass(frozen=True)
class AgentFileChange:
    """One file of an agent's that install or uninstall writes whole, or removes (a dream's own
    changes to the store are dream/journal.py's FileChange)."""

    path: Path
    before: bytes | None  # None: the file did not exist
    after: bytes | None  # None: the file is removed
    what: str
    new_mode: int = NEW_FILE_MODE

    @property
    def verb(self) -> str:
        return "create" if self.before is None else "remove" if self.after is None else "update"

    def diff(self) -> str:
        """The change as a unified diff without context lines (a big settings file is not echoed)."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, str(self.path), str(self.path), n=0)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@dataclass(frozen=True)
class Plan:
    places: Places
    uninstall: bool
    root: Path | None  # the store the installed commands name
    changes: tuple[AgentFileChange, ...] = ()
    make_folders: tuple[Path, ...] = ()  # created in this order
    remove_folders: tuple[Path, ...] = ()  # removed in this order when empty
    notes: tuple[str, ...] = ()  # what was left as it was, and why
    # The record as it is to be, written before any other file (an install killed half way has
    # then said what it was adding), with the hash of the skill it replaces while it does.
    journal: bytes | None = None

    @property
    def empty(self) -> bool:
        return not (self.changes or self.make_folders or self.remove_folders)


@dataclass
class _FileRecord:
    created: bool = False  # install created the file
    containers: set[tuple[str, ...]] = field(default_factory=set)  # JSON members install created
    server: bool = False  # the MCP server "auto-dream" in it is install's (not one the user registered)
    blanks: dict[tuple[str, ...], str] = field(default_factory=dict)  # containers install filled: their space inside
    lead: str | None = None  # instructions: what install put before its block (a blank line), taken out with it


@dataclass(frozen=True)
class _Record:
    """What an install created, kept beside the skill (RECORD_NAME)."""

    skill_sha256: str | None
    files: dict[str, _FileRecord]
    folders: tuple[str, ...]  # relative to the skill folder: ".", "..", "../.."
    replacing: str | None = None  # in a journal: the hash of our skill the install is replacing
    installed_with: str | None = None  # the install line that wrote it ("auto-dream install claude-code --scope …")

    def owns_skill(self, data: bytes) -> bool:
        """The skill is ours while it is the one the record names, byte for byte (or, while an
        install that was stopped half way replaced it, the one before)."""
        return _sha256(data) in (self.skill_sha256, self.replacing)

    @classmethod
    def parse(cls, data: bytes | None) -> "_Record | None":
        if data is None:
            return None
        try:
            value = json.loads(data)
            # a record without "server" was written when install always took the server for its own
            files = {role: _FileRecord(bool(entry["created"]), {tuple(path) for path in entry["containers"]},
                                       bool(entry.get("server", role == "mcp")),
                                       {tuple(blank["path"]): blank["inside"] for blank in entry.get("blanks", [])
                                        if isinstance(blank["inside"], str) and not blank["inside"].strip(" \t\r\n")},
                                       entry["lead"] if isinstance(entry.get("lead"), str)
                                       and not entry["lead"].strip("\r\n") else None)
                     for role, entry in value["files"].items()}
            folders = tuple(str(folder) for folder in value["folders"] if folder in _LEVELS)
            skill, replacing = value["skill_sha256"], value.get("replacing_skill_sha256")
            line = value.get("installed_with")
            return cls(skill if isinstance(skill, str) else None, files, folders,
                       replacing if isinstance(replacing, str) else None, line if isinstance(line, str) else None)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # not ours to read: uninstall goes by the hook markers alone, and keeps the rest

    def render(self, command_line: str, root: Path) -> bytes:
        return new_document({
            "installed_with": command_line,
            "store": str(root),
            "skill_sha256": self.skill_sha256,
            "files": {role: {"created": entry.created, "containers": sorted(list(path) for path in entry.containers),
                             **({"server": entry.server} if role == "mcp" else {}),
                             **({"blanks": [{"path": list(path), "inside": inside}
                                            for path, inside in sorted(entry.blanks.items())]} if entry.blanks else {}),
                             **({"lead": entry.lead} if entry.lead is not None else {})}
                      for role, entry in sorted(self.files.items())},
            "folders": list(self.folders),
            **({"replacing_skill_sha256": self.replacing} if self.replacing else {}),
        }).encode("utf-8")


_LEVELS = (".", "..", "../..", "../../..", "../../../..")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _folder_chain(skill_dir: Path) -> list[Path]:
    """The skill folder and its parents, as far as _LEVELS reaches."""
    return [skill_dir, *list(skill_dir.parents)[:len(_LEVELS) - 1]]


def _text(path: Path, data: bytes, dialect: str = "json") -> str:
    """The file's text, once it is read as its agent reads it (`dialect`: store.json_text.DIALECTS)."""
    try:
        text = data.decode("utf-8")
        load(text, dialect)
        return text
    except UnicodeDecodeError:
        raise StoreError(f"{path} is not UTF-8 text: nothing was written") from None
    except JsonTextError as error:
        said = str(error).replace("not valid JSON ", "not valid JSON5 ", 1) if dialect == "json5" else str(error)
        raise StoreError(f"{path} is {said}: fix it or move it away; nothing was written") from None


def _value(text: str) -> Any:
    """The value of a text `_text` has read (or install has added to), in whatever it may be written."""
    return load(text, "json5")


def _member(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _object_at(path: Path, value: dict, key: str) -> dict | None:
    """value[key] when it is an object, None when absent; a StoreError for anything else."""
    found = value.get(key)
    if found is None and key not in value:
        return None
    if not isinstance(found, dict):
        raise StoreError(f"{path}: {key!r} is not a JSON object: fix it or move it away; nothing was written")
    return found


def plan_install(places: Places, snapshot: AgentFiles, command: tuple[str, ...], root: Path, template: str,
                 *, force: bool = False) -> Plan:
    """Everything `install` would change: the MCP server and hooks (Claude Code), the skill, the
    record. Run twice, the second plan is empty. A server named auto-dream that is not ours, or a
    SKILL.md that is not the one we installed, stops it (StoreError) unless `force`."""
    for name in (str(root), *command):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # os.fsdecode's stand-ins for bytes that are not UTF-8
            raise StoreError(f"the path {os.fsencode(name).decode('utf-8', 'backslashreplace')} is not UTF-8 text, "
                             "and the files install writes it into are: nothing was written") from None
    for path in (places.record, *(path for path in (places.skill, places.ignore) if path is not None)):
        real = snapshot.outside(places, path)
        if real is not None:  # wholly ours: never written through a link to somewhere else
            raise StoreError(f"{path} is a link to {real}, outside {_owned(places)}: install writes no file of its "
                             "own through it; nothing was written (remove the link)")
    record = _Record.parse(snapshot.files.get(places.record))
    _refuse_the_other_scope(places, record)
    chain = _folder_chain(places.skill_dir)
    for path in places.files():
        # A file outside the skill's folders (OpenClaw's config moved by OPENCLAW_CONFIG_PATH) goes only into a
        # folder that is there: the record says which folders install made, and only those of the skill's chain.
        if path.parent not in chain and path.parent in snapshot.folders and snapshot.folders[path.parent] is None:
            raise StoreError(f"there is no folder {path.parent} for {path}: create it, or name another file; "
                             "nothing was written")
    files: dict[str, _FileRecord] = {}
    changes: list[AgentFileChange] = []
    server, groups = server_entry(command, root, places.server_shape), hook_groups(command, root, places.agent)
    if places.instructions is not None:
        path = places.instructions
        before = snapshot.files[path]
        previous = record.files.get("instructions") if record else None
        text = _markdown(path, before)
        after_text, lead = _put_block(text, render_block(places.agent, command, root))
        if _block_span(text) is not None:
            lead = previous.lead if previous is not None and previous.lead is not None else ""
        files["instructions"] = _FileRecord(created=before is None or bool(previous and previous.created), lead=lead)
        if after_text.encode("utf-8") != before:
            changes.append(AgentFileChange(path, before, after_text.encode("utf-8"),
                                      "when to recall and remember (a marked block)"))
    notes: list[str] = []
    texts: dict[Path, str] = {}  # each JSON file's text as install leaves it (Gemini CLI's holds two roles)
    whats: dict[Path, list[str]] = {}
    for role, path, what in _json_roles(places):
        before = snapshot.files[path]
        previous = record.files.get(role) if record else None
        entry = _FileRecord(created=before is None or bool(previous and previous.created))
        if path in texts:
            text = texts[path]
        elif before is None:
            text = new_document(_new_value(places, role))
        else:
            text = _text(path, before, places.json_dialect)
        value = _value(text)
        # the containers an earlier install made, while they are still there
        entry.containers = {c for c in (previous.containers if previous else ()) if _member(value, c) is not None}
        # the empty ones it fills, written with space inside (`{\n  }`): uninstall puts that back
        entry.blanks = {c: blank for c, blank in (previous.blanks if previous else {}).items()
                        if _member(value, c) is not None}
        for container in _filled(places, role):
            blank = blank_inside(text, container)
            if blank:
                entry.blanks[container] = blank
        if role == "mcp":
            text, entry.server = _put_server(path, text, entry.containers, server,
                                             installed=bool(previous and previous.server), force=force,
                                             base=places.mcp_base, servers_key=places.servers_key)
        else:
            text = _put_hooks(path, text, entry.containers, groups)
        files[role] = entry
        texts[path] = text
        whats.setdefault(path, []).append(what)
    for path, text in texts.items():
        before, after = snapshot.files[path], text.encode("utf-8")
        if after != before:
            private = path.name == ".claude.json" or (places.agent == "openclaw" and path == places.mcp_file)
            mode = PRIVATE_FILE_MODE if private else NEW_FILE_MODE
            changes.append(AgentFileChange(path, before, after, " and ".join(whats[path]), mode))

    if places.skill is None:
        skill, current = b"", None
    elif places.agent == "cursor":
        skill = render_cursor_rule(command, root).encode("utf-8")
        current = snapshot.files[places.skill]
    else:
        skill = render_skill(template, places.agent, command, root).encode("utf-8")
        current = snapshot.files[places.skill]
    if places.skill is not None and current != skill:
        # The skill is ours while it is the one the record names, byte for byte. Its marker is no
        # proof: a skill edited since, that uninstall kept (and said so), still carries it.
        ours = current is None or (record is not None and record.owns_skill(current))
        if not ours and not force:
            raise StoreError(f"{places.skill} is not the {_skill_word(places)} auto-dream installed (another one "
                             "of that name, or changed since): nothing was written; give --force to replace it")
        changes.append(AgentFileChange(places.skill, current, skill, f"the {_skill_word(places)}"))
    if places.ignore is not None and snapshot.files[places.ignore] != LOCAL_IGNORE:
        changes.append(AgentFileChange(places.ignore, snapshot.files[places.ignore], LOCAL_IGNORE,
                                  "git ignores the skill's folder: it holds this machine's paths"))

    missing = [folder for folder in chain if snapshot.folders.get(folder) is None]
    made = {level for level, folder in zip(_LEVELS, chain) if folder in missing}
    kept = {level for level in (record.folders if record else ()) if snapshot.folders.get(_at_level(places, level))}
    new_record = _Record(_sha256(skill) if places.skill is not None else None, files,
                         tuple(level for level in _LEVELS if level in made | kept))
    record_bytes = new_record.render(places.install_line, root)
    journal = None
    if snapshot.files.get(places.record) != record_bytes:
        changes.append(AgentFileChange(places.record, snapshot.files.get(places.record), record_bytes,
                                  "what uninstall removes"))
        replacing = _sha256(current) if current is not None and current != skill and record is not None \
            and record.owns_skill(current) else None
        journal = replace(new_record, replacing=replacing).render(places.install_line, root)
    changes += _leftover_removals(snapshot)
    return Plan(places, uninstall=False, root=root, changes=tuple(changes), make_folders=tuple(reversed(missing)),
                remove_folders=snapshot.staged, notes=tuple(notes), journal=journal)


def _json_roles(places: Places) -> list[tuple[str, Path, str]]:
    """The JSON files install edits for `places`, with their role in the record."""
    roles = []
    if places.mcp_file is not None:
        roles.append(("mcp", places.mcp_file, f'the MCP server "{SERVER_NAME}"'))
    if places.settings is not None:
        start, end = _hook_events(places)
        roles.append(("settings", places.settings, f"the {start} and {end} hooks"))
    return roles


def _hook_events(places: Places) -> tuple[str, ...]:
    return HOOK_EVENTS.get(places.agent, CLAUDE_HOOK_EVENTS)


def _new_value(places: Places, role: str) -> dict:
    """What a JSON file install creates holds before ours goes in: Cursor's hooks.json its `"version": 1`
    (https://cursor.com/docs/hooks, "Global Configuration Options"), every other file nothing."""
    return {"version": 1} if places.agent == "cursor" and role == "settings" else {}


def _skill_word(places: Places) -> str:
    return "rule" if places.agent == "cursor" else "skill"


def _markdown(path: Path, data: bytes | None) -> str:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(f"{path} is not UTF-8 text: nothing was written") from None


def _owned(places: Places) -> str:
    return " and ".join(str(folder) for folder in places.owned) or "every folder install manages"


def _leftover_removals(snapshot: AgentFiles) -> list[AgentFileChange]:
    return [AgentFileChange(path, data, None, "a temporary file an interrupted install or uninstall left")
            for path, data in sorted(snapshot.leftovers.items())]


def _filled(places: Places, role: str) -> tuple[tuple[str, ...], ...]:
    """The objects and arrays that install may add to, in the file of `role`."""
    if role != "mcp":
        return ((), ("hooks",), *(("hooks", event) for event in _hook_events(places)))
    held = (*places.mcp_base, *places.servers_key)
    return tuple(held[:depth] for depth in range(len(held) + 1))


def _refuse_the_other_scope(places: Places, record: "_Record | None") -> None:
    """--scope project and --scope local keep their skill in the same folder, .claude/skills/auto-dream/:
    one at a time, or uninstall of one would take the other's skill."""
    found = record.installed_with if record is not None else None
    if places.agent != "claude-code":  # a project in the home folder: <project>/.gemini is ~/.gemini
        if found and found.startswith(f"auto-dream install {places.agent} ") and found != places.install_line:
            raise StoreError(f"auto-dream is installed in {places.skill_dir} by `{found}`: "
                             f"`{found.replace('install', 'uninstall', 1)}` first; nothing was written")
        return
    if places.scope not in ("project", "local") or not found or not found.startswith("auto-dream install claude-code"):
        return
    other = found.rsplit(" ", 1)[-1] if " --scope " in found else "project"
    if other != places.scope:
        raise StoreError(f"auto-dream is installed here at --scope {other} ({places.skill_dir} is its skill): "
                         f"`auto-dream uninstall claude-code --scope {other}` first; nothing was written")


def _at_level(places: Places, level: str) -> Path:
    return _folder_chain(places.skill_dir)[_LEVELS.index(level)]


def _put_server(path: Path, text: str, made: set[tuple[str, ...]], wanted: dict, *, installed: bool,
                force: bool, base: tuple[str, ...] = (),
                servers_key: tuple[str, ...] = ("mcpServers",)) -> tuple[str, bool]:
    """`text` with our server in it, and whether that server is install's: one that was there
    before install (`claude mcp add auto-dream …` by hand, with its own env or store) is the
    user's, kept as it is, and left by uninstall; `installed` says an earlier install put it there.
    `base`: where the object holding "mcpServers" is (Places.mcp_base)."""
    holder = _value(text)
    held = (*base, *servers_key)
    for depth, key in enumerate(held):
        found = _object_at(path, holder, key)
        if found is None:
            nested: dict = {SERVER_NAME: wanted}
            for outer in reversed(held[depth + 1:]):
                nested = {outer: nested}
            made.update(held[:level] for level in range(depth + 1, len(held) + 1))
            return set_member(text, held[:depth], key, nested), True
        holder = found
    servers = holder
    existing = servers.get(SERVER_NAME)
    if SERVER_NAME in servers and _same_server(existing, wanted):
        return text, installed
    if SERVER_NAME in servers and not force:
        if not _is_our_server(existing):
            raise StoreError(f"{path} already has an MCP server named {SERVER_NAME!r} that does not run auto-dream "
                             f"({json.dumps(existing, ensure_ascii=False)[:120]}): nothing was written; "
                             "give --force to replace it")
        if not installed:
            raise StoreError(f"{path} already has an MCP server named {SERVER_NAME!r} that auto-dream install did not "
                             f"add ({json.dumps(existing, ensure_ascii=False)[:120]}): nothing was written; "
                             "give --force to replace it")
    if installed and isinstance(existing, dict):  # ours, for another store or executable: the user's keys stay
        wanted = {**existing, **{key: value for key, value in wanted.items() if key != "env"}}
    return set_member(text, held, SERVER_NAME, wanted), True


def _put_hooks(path: Path, text: str, made: set[tuple[str, ...]], groups: dict[str, list[dict]]) -> str:
    for event, wanted in groups.items():
        hooks = _object_at(path, _value(text), "hooks")
        if hooks is None:
            made.add(("hooks",))
            text = set_member(text, (), "hooks", {})
            hooks = {}
        if event not in hooks:
            made.add(("hooks", event))
            text = set_member(text, ("hooks",), event, wanted)
            continue
        matchers = hooks[event]
        if not isinstance(matchers, list):
            raise StoreError(f"{path}: 'hooks' → {event!r} is not a JSON array: fix it or move it away; "
                             "nothing was written")
        if [found for found in matchers if _holds_ours(found)] == wanted:
            continue  # installed as it is
        text = _remove_handlers(text, event, matchers)
        for group in wanted:
            text = append_item(text, ("hooks", event), group)
    return text


def _holds_ours(group: Any) -> bool:
    """A matcher group holding one of our hooks, or (Cursor, where an event lists the hooks themselves) ours."""
    return _is_our_handler(group) or isinstance(group, dict) and isinstance(group.get("hooks"), list) \
        and any(_is_our_handler(handler) for handler in group["hooks"])


def _remove_handlers(text: str, event: str, matchers: list) -> str:
    """`text` without our handlers under hooks → event: a matcher group holding only ours goes whole
    (and under Cursor's events, which list the hooks themselves, each of ours)."""
    for index in reversed(range(len(matchers))):
        group = matchers[index]
        if _is_our_handler(group):
            text = remove_item(text, ("hooks", event), index)
            continue
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        mine = [at for at, handler in enumerate(handlers) if _is_our_handler(handler)]
        if mine and len(mine) == len(handlers):
            text = remove_item(text, ("hooks", event), index)
        else:
            for at in reversed(mine):
                text = remove_item(text, ("hooks", event, index, "hooks"), at)
    return text


def plan_uninstall(places: Places, snapshot: AgentFiles) -> Plan:
    """Everything `uninstall` would change: our server, hooks, skill and record removed; a file or
    JSON member install created removed once nothing else is in it; the folders it created
    removed when empty. What is not ours is left, and a note says so."""
    record = _Record.parse(snapshot.files.get(places.record))
    _refuse_the_other_scope(places, record)
    changes: list[AgentFileChange] = []
    notes: list[str] = []
    if places.instructions is not None and (before := snapshot.files[places.instructions]) is not None:
        path = places.instructions
        entry = record.files.get("instructions") if record else None
        text = _remove_block(_markdown(path, before), entry.lead or "" if entry is not None else "")
        after: bytes | None = text.encode("utf-8")
        if entry is not None and entry.created and not text:
            after = None  # the file install created, with nothing in it but ours
            if (real := snapshot.outside(places, path)) is not None:
                after = b""
                notes.append(f"kept {path}, a link to {real}: that is outside {_owned(places)}, where "
                             "uninstall deletes no file; what install added to it was taken out")
        if after != before:
            changes.append(AgentFileChange(path, before, after, "when to recall and remember (a marked block)"))
    texts: dict[Path, str] = {}  # each JSON file's text as uninstall leaves it (Gemini CLI's holds two roles)
    whats: dict[Path, list[str]] = {}
    made: dict[Path, dict] = {}  # the JSON files install created, and what such a file holds before ours
    for role, path, what in _json_roles(places):
        before = snapshot.files[path]
        if before is None:
            continue
        text = texts[path] if path in texts else _text(path, before, places.json_dialect)
        value = _value(text)
        entry = record.files.get(role) if record else None
        if role == "mcp":
            servers = _member(value, (*places.mcp_base, *places.servers_key))
            if isinstance(servers, dict) and SERVER_NAME in servers:
                if not _is_our_server(servers[SERVER_NAME]):
                    notes.append(f"kept the MCP server {SERVER_NAME!r} in {path}: it does not run auto-dream")
                elif entry is None or not entry.server:  # the user's own `claude mcp add auto-dream …`
                    why = "it was there before auto-dream install" if entry is not None else \
                        f"no {RECORD_NAME} says auto-dream install added it"
                    notes.append(f"kept the MCP server {SERVER_NAME!r} in {path}: {why}")
                elif added := _added_by_user(servers[SERVER_NAME]):
                    notes.append(f"kept the MCP server {SERVER_NAME!r} in {path}: you gave it {added} since "
                                 "install; delete it yourself when you no longer need them")
                else:
                    text = remove_member(text, (*places.mcp_base, *places.servers_key), SERVER_NAME)
        else:
            hooks = value.get("hooks")
            for event in _hook_events(places):
                if isinstance(hooks, dict) and isinstance(hooks.get(event), list):
                    text = _remove_handlers(text, event, hooks[event])
        if entry is not None:
            for container in sorted(entry.containers, key=len, reverse=True):
                if _member(_value(text), container) in ({}, []):
                    text = remove_member(text, container[:-1], container[-1])
        for container, blank in (entry.blanks.items() if entry is not None else ()):
            if blank_inside(text, container) == "":
                text = set_blank_inside(text, container, blank)
        texts[path] = text
        whats.setdefault(path, []).append(what)
        if entry is not None and entry.created:
            made[path] = _new_value(places, role)
    for path, text in texts.items():
        before, after = snapshot.files[path], text.encode("utf-8")
        if path in made and _value(text) == made[path]:
            after = None  # the file install created, with nothing in it but ours
            if (real := snapshot.outside(places, path)) is not None:
                after = text.encode("utf-8")
                notes.append(f"kept {path}, a link to {real}: that is outside {_owned(places)}, where "
                             "uninstall deletes no file; what install added to it was taken out")
        if after != before:
            changes.append(AgentFileChange(path, before, after, " and ".join(whats[path])))
    changes += _leftover_removals(snapshot)

    removed = {change.path for change in changes if change.after is None} | set(snapshot.staged)
    ours = [(places.record, "the install record")]
    if places.ignore is not None:
        ours.insert(0, (places.ignore, "the skill folder's .gitignore"))
    if places.skill is not None:
        ours.insert(0, (places.skill, f"the {_skill_word(places)}"))
    for path, what in ours:
        data = snapshot.files.get(path)
        if data is None:
            continue
        if path == places.skill and not (record is not None and record.owns_skill(data)):  # see plan_install
            notes.append(f"kept {path}: it is not the {_skill_word(places)} auto-dream installed, or it changed since")
        elif path == places.ignore and data != LOCAL_IGNORE:
            notes.append(f"kept {path}: it changed since install")
        elif (real := snapshot.outside(places, path)) is not None:
            notes.append(f"kept {path}, a link to {real}: that is outside {_owned(places)}, where uninstall "
                         "deletes no file")
        else:
            changes.append(AgentFileChange(path, data, None, what))
            removed.add(path)

    created = set(record.folders) if record else {"."} if places.own_folder else set()  # skills/auto-dream is ours
    remove_folders = list(snapshot.staged)
    for level, folder in zip(_LEVELS, _folder_chain(places.skill_dir)):
        names = snapshot.folders.get(folder)
        if names is None or level not in created or snapshot.outside(places, folder) is not None:
            break
        if any(folder / name not in removed for name in names):
            break
        remove_folders.append(folder)
        removed.add(folder)
    return Plan(places, uninstall=True, root=None, changes=tuple(changes), remove_folders=tuple(remove_folders),
                notes=tuple(notes))


# ---------------------------------------------------------------- files


def read_snapshot(places: Places) -> AgentFiles:
    """The bytes of the files `places` names, the names in the skill folder and its parents, the
    real path of each, and the temporary files of ours a stopped run left beside those files."""
    files = {path: read_file(path) for path in places.files()}
    chain = _folder_chain(places.skill_dir)
    folders = {folder: _names(folder) for folder in chain}
    for path in places.files():  # the folder of each file, which an install must not have to make (plan_install)
        if path.parent not in folders:
            folders[path.parent] = _names(path.parent)
    real = {path: Path(os.path.realpath(path)) for path in (*places.files(), *chain, *places.owned)}
    snapshot = AgentFiles(files, folders, real)
    leftovers: dict[Path, bytes] = {}
    for path in places.files():
        # where _replace writes its temporary file: beside the file, or beside the one a link names
        target = real[path] if os.path.islink(path) else path
        if snapshot.outside(places, path) is not None:
            continue
        pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")  # write_temporary's names
        names = folders[target.parent] if target.parent in folders else _names(target.parent)
        for name in names or ():
            if pattern.fullmatch(name) and (data := _regular_file(target.parent / name)) is not None:
                leftovers[target.parent / name] = data
    staged: list[Path] = []
    roots = [real[root] for root in places.owned]
    for level, folder in enumerate(chain):
        pattern = re.compile(rf"\.{re.escape(folder.name)}\.[0-9a-f]{{8}}\.tmp")  # _make_folders' names
        names = folders[folder.parent] if folder.parent in folders else _names(folder.parent)
        for name in sorted(names or ()):
            staging = folder.parent / name
            if pattern.fullmatch(name) and _within(Path(os.path.realpath(staging)), roots):
                inside = [below.name for below in reversed(chain[:level])]
                if (found := _staged_tree(staging, inside)) is not None:
                    leftovers.update(found[0])
                    staged += found[1]
    return replace(snapshot, leftovers=leftovers, staged=tuple(staged))


def _staged_tree(staging: Path, inside: list[str]) -> tuple[dict[Path, bytes], list[Path]] | None:
    """What apply_plan left in a staging folder when its run was killed: the folders `inside` one
    in the other, and in the skill's folder at the bottom the record (install's journal, or the
    record uninstall was removing), its temporary file, and the skill that record names. Their
    bytes by path, and the folders deepest first; None when anything else is in there (it is not
    ours to remove)."""
    files: dict[Path, bytes] = {}
    folders = [staging]
    record_temporary = re.compile(rf"\.{re.escape(RECORD_NAME)}\.[a-z0-9_]{{8}}\.tmp")
    for depth in range(len(inside) + 1):
        current = folders[-1]
        if os.path.islink(current) or not os.path.isdir(current):
            return None
        names = _names(current) or frozenset()
        if depth < len(inside):
            if not names <= {inside[depth]}:
                return None
            if not names:
                break  # killed before it made the next one, or after it removed it
            folders.append(current / inside[depth])
            continue
        for name in names:
            data = _regular_file(current / name)
            if data is None or not (name in (RECORD_NAME, "SKILL.md") or record_temporary.fullmatch(name)):
                return None
            files[current / name] = data
        skill = files.get(current / "SKILL.md")
        record = _Record.parse(files.get(current / RECORD_NAME))
        if skill is not None and not (record is not None and record.owns_skill(skill)):
            return None
    return files, list(reversed(folders))


def _names(folder: Path) -> frozenset[str] | None:
    try:
        with os.scandir(folder) as listing:
            return frozenset(entry.name for entry in listing)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise StoreError(f"cannot look at {folder}: {error.strerror}") from None


def _regular_file(path: Path) -> bytes | None:
    """A file's bytes when it is a regular file itself (no link followed), else None."""
    try:
        return read_regular(path)
    except StoreError:
        return None


def read_file(path: Path) -> bytes | None:
    """A settings file's bytes (through a symlink: dotfiles keep them in a repository), None when
    there is none; a FIFO or a folder in its place is refused, never waited on."""
    return read_regular(path, follow=True)


def apply_plan(plan: Plan) -> None:
    """Write the plan: each file replaced whole (a temporary file renamed into place, its mode kept)
    or removed — through a symlink, the file it names, the link kept — after checking that no
    file changed since the plan was made (Claude Code rewrites ~/.claude.json while it runs). A
    write that fails half way (a full disk, a file where a folder goes) puts back what was
    written before it: the files, bytes and modes, as they were, and the folders made for it gone.

    A run killed at any point leaves what the next one can finish or take out, byte for byte: an
    install writes its record first (the plan's journal), so it has said what it was adding
    before it adds it; the folders it makes appear at once with the journal in them, and the
    folders uninstall empties go aside at once (a `.name.XXXXXXXX.tmp` folder, which read_snapshot
    finds) before what is in them is removed."""
    owned = [Path(os.path.realpath(folder)) for folder in plan.places.owned]
    for change in plan.changes:
        if read_file(change.path) != change.before:
            raise StoreError(f"{change.path} changed while auto-dream was planning: nothing was written; "
                             "run the command again")
        real = Path(os.path.realpath(change.path))
        if change.after is None and not _within(real, owned):
            raise StoreError(f"{change.path} changed while auto-dream was planning (it now leads to {real}): "
                             "nothing was written; run the command again")
    chain = _folder_chain(plan.places.skill_dir)
    emptied = [folder for folder in plan.remove_folders if folder in chain]  # deepest first
    top = emptied[-1] if emptied else None
    aside = [change for change in plan.changes  # the skill and the record: removed with their folders
             if top is not None and change.path in (plan.places.skill, plan.places.record)]
    done = Rollback()
    try:
        if plan.journal is not None:
            record = next(change for change in plan.changes if change.path == plan.places.record)
            if plan.make_folders:
                _make_folders(plan)
                for folder in plan.make_folders:
                    done.push(partial(_remove_made_folder, folder))
                done.push(partial(_restore, replace(record, after=plan.journal), NEW_FILE_MODE), str(record.path))
            else:
                _write(replace(record, after=plan.journal), done)
        elif plan.make_folders:
            raise AssertionError("folders to make, and no record to write in them")
        for change in plan.changes:
            if change in aside or plan.journal is not None and change.path == plan.places.record \
                    and change.after == plan.journal:
                continue  # removed with its folder below; or the journal was the record as it is to be
            _write(change, done)
        for folder in plan.remove_folders:
            if folder not in chain:  # a stopped run's staging folder, emptied above
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
        if top is not None:
            _remove_aside(top, aside, emptied, done)
    except StoreError as error:
        left = done.run()
        raise StoreError(f"{error}; " + (f"and {left} could not be put back as it was" if left
                                         else "nothing was changed")) from None


def _staging_folder(folder: Path) -> Path:
    """A new, unused name beside `folder` for it while it is made or removed (read_snapshot's pattern)."""
    while True:
        staging = folder.parent / f".{folder.name}.{secrets.token_hex(4)}.tmp"
        if not os.path.lexists(staging):
            return staging


def _make_folders(plan: Plan) -> None:
    """The plan's folders with the journal in them, all at once: made under a staging name beside
    the first and renamed into place. An install killed on the way leaves no folder without its
    record (which no one could tell from one the user made), only the staging one, which the
    next run takes away."""
    assert plan.journal is not None
    top = plan.make_folders[0]
    if os.path.lexists(top):
        if os.path.isdir(top):
            raise StoreError(f"{top} appeared while auto-dream was planning: nothing was written; "
                             "run the command again")
        raise StoreError(f"cannot create the folder {top}: something else is in its place (move it away)")
    staging = _staging_folder(top)
    try:
        os.mkdir(staging, FOLDER_MODE)
    except OSError as error:
        raise StoreError(f"cannot create {top}: {error.strerror}") from None
    try:
        for folder in plan.make_folders[1:]:
            os.mkdir(staging / folder.relative_to(top), FOLDER_MODE)
        _replace(staging / plan.places.record.relative_to(top), plan.journal, NEW_FILE_MODE)
        os.rename(staging, top)
        fsync_dir(top.parent)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)  # made just now, by this run alone
        raise StoreError(f"cannot create {top}: {error.strerror}") from None


def _remove_aside(top: Path, aside: list[AgentFileChange], emptied: list[Path], done: Rollback) -> None:
    """Remove the files `aside` (the skill, the record) and the folders `emptied` (deepest first,
    `top` last): `top` renamed to a staging name first, so that a kill leaves either the record
    in place or a staging folder the next run takes away — never empty folders with no record to
    say whose they are. Something that appeared in them since keeps them, under their own name."""
    targets = {change.path: Path(os.path.realpath(change.path)) for change in aside}  # before the move
    modes = {change.path: _mode(change.path) for change in aside}
    staging = _staging_folder(top)
    try:
        os.rename(top, staging)
        fsync_dir(top.parent)
    except OSError:  # cannot be moved: removed where it is, as before
        for change in aside:
            _write(change, done)
        for folder in emptied:
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        return

    def moved(path: Path) -> Path:
        return staging / path.relative_to(top) if path == top or top in path.parents else path

    for index, change in enumerate(aside):
        try:
            os.unlink(moved(targets[change.path]))
        except OSError as error:
            with contextlib.suppress(OSError):  # else the rollback cannot put them back, and says so
                os.rename(staging, top)
            for removed in aside[:index]:
                done.push(partial(_restore, removed, modes[removed.path]), str(removed.path))
            raise StoreError(f"cannot write {change.path}: {error.strerror}") from None
    for folder in emptied:
        with contextlib.suppress(OSError):
            os.rmdir(moved(folder))
    if os.path.lexists(staging):  # something appeared in it: it stays, where it was
        with contextlib.suppress(OSError):
            os.rename(staging, top)


def _write(change: AgentFileChange, done: Rollback) -> None:
    """Make one change, and note how to put it back (the bytes and the mode the file had)."""
    mode = _mode(change.path)
    try:
        if change.after is None:  # through a symlink, the file install made where it points
            os.unlink(os.path.realpath(change.path))
        else:
            _replace(change.path, change.after, change.new_mode)
    except OSError as error:
        raise StoreError(f"cannot write {change.path}: {error.strerror}") from None
    done.push(partial(_restore, change, mode), str(change.path))


def _mode(path: Path) -> int:
    """The permission bits of the file `path` names, NEW_FILE_MODE when there is none."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return NEW_FILE_MODE


def _restore(change: AgentFileChange, mode: int) -> None:
    """Put the file of a change done back as it was: its bytes and `mode`, or no file."""
    if change.before is None:
        with contextlib.suppress(FileNotFoundError):  # the journal, then the record: one file
            os.unlink(os.path.realpath(change.path))
    else:
        _replace(change.path, change.before, mode)


def _remove_made_folder(folder: Path) -> None:
    """A folder made for the plan, gone again when nothing else is in it."""
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _replace(path: Path, content: bytes, new_mode: int) -> None:
    target = Path(os.path.realpath(path)) if os.path.islink(path) else path
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = new_mode
    temporary = write_temporary(target, content)
    try:
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        remove_temporary(temporary)
        raise
    fsync_dir(target.parent)
