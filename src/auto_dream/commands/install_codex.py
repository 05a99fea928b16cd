"""`install codex` and `uninstall codex`: auto-dream's MCP server and a marked instructions block for
OpenAI's Codex, each added as text at the end of the user's own file and taken out byte for byte.

What Codex reads, and where (docs/agents.md's "Codex" section cites the same):

- MCP servers: `[mcp_servers.<name>]` tables in `~/.codex/config.toml`, the Codex home being
  `$CODEX_HOME` when set; a stdio server is a `command` and its `args`
  (https://developers.openai.com/codex/mcp, "Configure with config.toml";
  https://developers.openai.com/codex/config-reference, `mcp_servers.<id>.command` / `.args`;
  docs/config.md of openai/codex, "MCP integration" → "STDIO", and `$CODEX_HOME/config.toml`).
- Instructions: `AGENTS.md` in the Codex home is the global scope, read at the start of every run
  unless an `AGENTS.override.md` there is not empty; project AGENTS.md files follow it
  (https://developers.openai.com/codex/guides/agents-md, "How Codex discovers guidance").
- Hooks: Codex has them (https://developers.openai.com/codex/hooks), but a command hook that is not
  managed by an administrator must be reviewed and trusted in Codex before it runs, and older
  releases need a feature flag: an install cannot make one run by itself. So there are none: the
  instructions block tells Codex when to read MEMORY.md, recall and remember.

Both files are edited as text: our block is appended (after one blank line) and every other byte of
the file stays — comments, order, spacing, a last line without a newline (we end it, and record that
we did). tomllib checks that config.toml parses before and after, and that the only change to what
it holds is our table. A record in the Codex home (RECORD_NAME) keeps the exact text added to each
file, so that uninstall removes those bytes and nothing else; it is written first, as a journal.
A table or block changed since install is the user's: uninstall says so and leaves it.
"""

import json
import os
import shlex
import tomllib
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from auto_dream.commands import marked_block
from auto_dream.commands.install import (
    PRIVATE_FILE_MODE,
    RECORD_NAME,
    SERVER_NAME,
    AgentFileChange,
    _remove_made_folder,
    _write,
    read_file,
)
from auto_dream.commands.rollback import Rollback
from auto_dream.errors import InputError, StoreError
from auto_dream.store.files import fsync_dir
from auto_dream.store.paths import STORE_DIR_NAME

INSTALL_LINE = "auto-dream install codex"
CONFIG_MARK = "# Added by `auto-dream install codex`; `auto-dream uninstall codex` removes this table."
BLOCK_START = "<!-- auto-dream: added by `auto-dream install codex`; `auto-dream uninstall codex` removes it -->"
BLOCK_END = "<!-- auto-dream: end -->"
FOLDER_MODE = 0o755

# What Codex is told (the skill's "when" in short: AGENTS.md is read into every run, in 32 KiB shared
# with the project's files, so the whole skill would not fit).
INSTRUCTIONS = """\
## Long-term memory (auto-dream)

You have memory across sessions: auto-dream's store `{root}`, served by the MCP
server `auto-dream` (tools `recall`, `show`, `remember`, `list_memories`, `check`, `dream`, `undo`).
Without those tools, run `{command}` followed by the command:
`recall QUERY --json`, `show PATH`, `append --type TYPE "FACT"`.

- At the start of a task, read `MEMORY.md` in the store: one line per memory, linking its file
  (links are relative to the store). Open a linked memory when its line is relevant.
- Before you ask the user something they may have told you before, `recall` it; `show` gives one
  memory whole.
- When the user says "remember…", corrects you, states a preference, or a decision is made,
  `remember` one short, self-contained fact with its type: user (who they are, their preferences),
  feedback (how to work; add a `Reason:` line), project (decisions and context of the work),
  reference (where something lives: URLs, hosts, dashboards). Write absolute dates; never secrets.
- Tidy memory (`dream`) only when the user asks: it gives a plan first; apply it when told.
"""


@dataclass(frozen=True)
class CodexPlaces:
    """The Codex home and the files install touches in it."""

    home: Path  # ~/.codex, or $CODEX_HOME

    @property
    def config(self) -> Path:
        return self.home / "config.toml"

    @property
    def instructions(self) -> Path:
        return self.home / "AGENTS.md"

    @property
    def override(self) -> Path:
        return self.home / "AGENTS.override.md"

    @property
    def record(self) -> Path:
        return self.home / RECORD_NAME


def codex_places(home: Path | None, codex_home: Path | None) -> CodexPlaces:
    if codex_home is not None:
        return CodexPlaces(codex_home)
    if home is None:
        raise InputError("no home folder for ~/.codex (HOME is not set): set CODEX_HOME")
    return CodexPlaces(home / ".codex")


def default_store(home: Path | None) -> Path:
    """Codex's instructions and server are the user's, for every project: the user's store."""
    if home is None:
        raise InputError("no home folder for the store (HOME is not set): give it with --root")
    return home / STORE_DIR_NAME


@dataclass(frozen=True)
class CodexSnapshot:
    files: dict[Path, bytes | None]
    home_exists: bool


def read_codex_snapshot(places: CodexPlaces) -> CodexSnapshot:
    paths = (places.config, places.instructions, places.override, places.record)
    return CodexSnapshot({path: read_file(path) for path in paths}, os.path.isdir(places.home))


@dataclass(frozen=True)
class CodexPlan:
    places: CodexPlaces
    uninstall: bool
    root: Path | None
    changes: tuple[AgentFileChange, ...] = ()  # install: the record first (the journal)
    make_home: bool = False
    remove_home: bool = False
    notes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.changes or self.make_home or self.remove_home)


@dataclass
class _Added:
    """The text install appended to one file: `lead` (what ended the user's last line and left a
    blank line) then `block`; `created`: the file was not there."""

    block: str
    lead: str = ""
    created: bool = False

    def as_json(self) -> dict:
        return {"block": self.block, "lead": self.lead, "created": self.created}

    @classmethod
    def parse(cls, value: Any) -> "_Added | None":
        if not isinstance(value, dict) or not isinstance(value.get("block"), str) or not value["block"]:
            return None
        lead = value.get("lead")
        return cls(value["block"], lead if isinstance(lead, str) and not lead.strip() else "",
                   bool(value.get("created")))


@dataclass
class _CodexRecord:
    files: dict[str, _Added] = field(default_factory=dict)  # "config", "instructions"
    home_created: bool = False

    @classmethod
    def parse(cls, data: bytes | None) -> "_CodexRecord | None":
        if data is None:
            return None
        try:
            value = json.loads(data)
            if value.get("installed_with") != INSTALL_LINE:
                return None
            files = {role: added for role, entry in value["files"].items()
                     if role in ("config", "instructions") and (added := _Added.parse(entry)) is not None}
            return cls(files, bool(value.get("home_created")))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None

    def render(self, root: Path) -> bytes:
        document = {"installed_with": INSTALL_LINE, "store": str(root), "home_created": self.home_created,
                    "files": {role: added.as_json() for role, added in sorted(self.files.items())}}
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def is_installed(data: bytes | None) -> bool:
    """Whether a Codex home's RECORD_NAME is ours (`install --list`)."""
    return _CodexRecord.parse(data) is not None


# ---------------------------------------------------------------- the text added


def toml_string(value: str) -> str:
    """A TOML basic string: quote, backslash and the control characters TOML forbids, escaped."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 and char != "\t" or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def server_table(command: tuple[str, ...], root: Path) -> dict[str, Any]:
    """What Codex reads from our table: the stdio server `auto-dream … --root <store> mcp`."""
    return {"command": command[0], "args": [*command[1:], "--root", str(root), "mcp"]}


def config_block(command: tuple[str, ...], root: Path, newline: str) -> str:
    table = server_table(command, root)
    lines = [CONFIG_MARK, f"[mcp_servers.{SERVER_NAME}]", f"command = {toml_string(table['command'])}",
             "args = [" + ", ".join(toml_string(arg) for arg in table["args"]) + "]"]
    return newline.join(lines) + newline


def instructions_block(command: tuple[str, ...], root: Path, newline: str) -> str:
    text = INSTRUCTIONS.format(root=root, command=shlex.join([*command, "--root", str(root)]))
    return newline.join([BLOCK_START, *text.rstrip("\n").split("\n"), BLOCK_END]) + newline


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(f"{path} is not UTF-8 text: nothing was written") from None


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise StoreError(f"{path} is not valid TOML ({error}): fix it or move it away; nothing was written") from None


def _without_ours(value: dict[str, Any]) -> dict[str, Any]:
    """What config.toml holds, less our table (and `mcp_servers` when ours was its only one)."""
    servers = value.get("mcp_servers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return value
    rest = {name: server for name, server in servers.items() if name != SERVER_NAME}
    others = {key: item for key, item in value.items() if key != "mcp_servers"}
    return {**others, "mcp_servers": rest} if rest else others


def _server_in(value: dict[str, Any]) -> Any:
    servers = value.get("mcp_servers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _remove(text: str, added: _Added) -> str | None:
    """`text` less what install appended: the lead as well when our block still ends the file (the
    file then comes back byte for byte), the block alone when something was written after it; None
    when the block is not there exactly once (it was changed since)."""
    span = marked_block.exact_span(text, added.block)
    return None if span is None else marked_block.remove(text, span, added.lead)


# ---------------------------------------------------------------- the plan


def plan_codex_install(places: CodexPlaces, snapshot: CodexSnapshot, command: tuple[str, ...], root: Path) -> CodexPlan:
    """Our table at the end of config.toml, our block at the end of AGENTS.md, and the record. Run
    twice, the second plan is empty; for another store or executable, ours is replaced where it is.
    A server named auto-dream that install did not add stops it (StoreError): nothing is written."""
    for name in (str(root), *command):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreError(f"the path {os.fsencode(name).decode('utf-8', 'backslashreplace')} is not UTF-8 "
                             "text, and the files install writes it into are: nothing was written") from None
    record = _CodexRecord.parse(snapshot.files[places.record])
    if snapshot.files[places.record] is not None and record is None:
        raise StoreError(f"{places.record} is not auto-dream's record of an install into Codex: nothing was written; "
                         "move it away")
    new_record = _CodexRecord(home_created=not snapshot.home_exists or bool(record and record.home_created))
    changes: list[AgentFileChange] = []
    notes: list[str] = []

    # config.toml: the MCP server
    path, before = places.config, snapshot.files[places.config]
    text = "" if before is None else _decode(path, before)
    value = _parse_toml(path, text)
    previous = record.files.get("config") if record else None
    block = config_block(command, root, marked_block.newline_of(text))
    ours = previous is not None and text.count(previous.block) == 1
    existing = _server_in(value)
    if existing is not None and not ours:
        said = json.dumps(existing, ensure_ascii=False)[:120]
        why = "was changed since auto-dream install added it" if previous is not None else \
            "auto-dream install did not add"
        raise StoreError(f"{path} already has an MCP server [mcp_servers.{SERVER_NAME}] that {why} ({said}): "
                         "nothing was written; remove or rename it, then install again")
    if ours and previous is not None:
        added = _Added(block, previous.lead, previous.created)
        after = text.replace(previous.block, block, 1)
    else:
        added = _Added(block, marked_block.lead(text), before is None)
        after = text + added.lead + block
    result = _parse_toml(path, after) if after != text else value
    if _without_ours(result) != _without_ours(value) or _server_in(result) != server_table(command, root):
        raise StoreError(f"{path}: a [mcp_servers.{SERVER_NAME}] table added at its end would not read as auto-dream's "
                         "server (is `mcp_servers` an inline table?): nothing was written; add it by hand")
    new_record.files["config"] = added
    if after != text:
        # created private: people give a server an API key in this file
        changes.append(AgentFileChange(path, before, after.encode("utf-8"), f'the MCP server "{SERVER_NAME}"',
                                  PRIVATE_FILE_MODE))

    # AGENTS.md: when to recall and remember
    path, before = places.instructions, snapshot.files[places.instructions]
    text = "" if before is None else _decode(path, before)
    previous = record.files.get("instructions") if record else None
    block = instructions_block(command, root, marked_block.newline_of(text))
    if previous is not None and text.count(previous.block) == 1:
        added = _Added(block, previous.lead, previous.created)
        after = text.replace(previous.block, block, 1)
    elif BLOCK_START in text:
        why = "was changed since install" if previous is not None else "install did not record"
        raise StoreError(f"{path} has an auto-dream block that {why}: nothing was written; remove it, "
                         "then install again")
    else:
        added = _Added(block, marked_block.lead(text), before is None)
        after = text + added.lead + block
    new_record.files["instructions"] = added
    if after != text:
        changes.append(AgentFileChange(path, before, after.encode("utf-8"), "when to recall and remember"))
    override = snapshot.files[places.override]
    if override is not None and override.strip():
        notes.append(f"{places.override} is not empty, and Codex reads it instead of {places.instructions}: "
                     "copy the auto-dream block into it, or Codex will not see it")

    record_bytes = new_record.render(root)
    if snapshot.files[places.record] != record_bytes:
        changes.insert(0, AgentFileChange(places.record, snapshot.files[places.record], record_bytes,
                                     "what uninstall removes"))
    return CodexPlan(places, uninstall=False, root=root, changes=tuple(changes), make_home=not snapshot.home_exists,
                     notes=tuple(notes))


def plan_codex_uninstall(places: CodexPlaces, snapshot: CodexSnapshot) -> CodexPlan:
    """The text install appended taken out of each file (a file it created, left empty, removed),
    then the record, then the Codex home if install created it and it is empty. A table or block
    changed since install is kept, and a note says so."""
    data = snapshot.files[places.record]
    record = _CodexRecord.parse(data)
    if record is None:
        notes = []
        if data is not None:
            notes.append(f"kept {places.record}: it is not auto-dream's record of an install into Codex")
        config = snapshot.files[places.config]
        if config is not None and f"[mcp_servers.{SERVER_NAME}]".encode() in config:
            notes.append(f"kept [mcp_servers.{SERVER_NAME}] in {places.config}: no {RECORD_NAME} says auto-dream "
                         "install added it")
        return CodexPlan(places, uninstall=True, root=None, notes=tuple(notes))
    changes: list[AgentFileChange] = []
    notes = []
    kept = False
    for role, path, what in (("config", places.config, f'the MCP server "{SERVER_NAME}"'),
                             ("instructions", places.instructions, "when to recall and remember")):
        added, before = record.files.get(role), snapshot.files[path]
        if added is None or before is None:
            continue
        text = _decode(path, before)
        after = _remove(text, added)
        if after is None:
            if (BLOCK_START in text) if role == "instructions" else \
                    (_server_in(_parse_toml(path, text)) is not None):
                kept = True
                notes.append(f"kept the auto-dream {'table' if role == 'config' else 'block'} in {path}: it was "
                             "changed since install; delete it yourself when you no longer need it")
            continue
        if role == "config":
            value = _parse_toml(path, text)
            if _parses(added.block) and _server_in(value) != _server_in(tomllib.loads(added.block)):
                kept = True  # a key given to our table since (`startup_timeout_sec`, an `env`)
                notes.append(f"kept the auto-dream table in {path}: it was changed since install; delete it "
                             "yourself when you no longer need it")
                continue
            result = tomllib.loads(after) if _parses(after) else None
            if result is None or result != _without_ours(value):
                kept = True
                notes.append(f"kept the auto-dream table in {path}: taking it out would change the rest of the file")
                continue
        if added.created and not after and not os.path.islink(path):
            changes.append(AgentFileChange(path, before, None, what))
        else:
            changes.append(AgentFileChange(path, before, after.encode("utf-8"), what))
    if kept:  # the record stays, so that a later uninstall still knows what was ours
        return CodexPlan(places, uninstall=True, root=None, changes=tuple(changes), notes=tuple(notes))
    changes.append(AgentFileChange(places.record, data, None, "the install record"))
    removed = {change.path for change in changes if change.after is None}
    remove_home = record.home_created and not os.path.islink(places.home) and _only(places.home, removed)
    return CodexPlan(places, uninstall=True, root=None, changes=tuple(changes), remove_home=remove_home,
                     notes=tuple(notes))


def _parses(text: str) -> bool:
    try:
        tomllib.loads(text)
        return True
    except tomllib.TOMLDecodeError:
        return False


def _only(folder: Path, removed: set[Path]) -> bool:
    """Whether nothing but the files `removed` is in `folder`."""
    try:
        return all(folder / name in removed for name in os.listdir(folder))
    except OSError:
        return False


# ---------------------------------------------------------------- writing


def apply_codex_plan(plan: CodexPlan) -> None:
    """Write the plan, in order (the record first, at install): each file replaced whole, its mode
    kept, after checking that none changed since the plan was made. A write that fails puts back
    what was written before it."""
    for change in plan.changes:
        if read_file(change.path) != change.before:
            raise StoreError(f"{change.path} changed while auto-dream was planning: nothing was written; "
                             "run the command again")
    done = Rollback()
    try:
        if plan.make_home:
            try:
                os.makedirs(plan.places.home, FOLDER_MODE)
            except OSError as error:
                raise StoreError(f"cannot create {plan.places.home}: {error.strerror}") from None
            done.push(partial(_remove_made_folder, plan.places.home))
        for change in plan.changes:
            _write(change, done)
        if plan.remove_home:
            try:
                os.rmdir(plan.places.home)
                fsync_dir(plan.places.home.parent)
            except OSError:
                pass  # something appeared in it: it stays
    except StoreError as error:
        left = done.run()
        raise StoreError(f"{error}; " + (f"and {left} could not be put back as it was" if left
                                         else "nothing was changed")) from None


def describe(plan: CodexPlan, *, dry_run: bool) -> str:
    """What the plan does (or, with dry_run, would do), a line a file; a dry run shows each diff."""
    title = "Codex" + (f", store {plan.root}" if plan.root is not None else "")
    dry = "[DRY RUN] " if dry_run else ""
    if plan.empty:
        return f"{dry}auto-dream is {'not installed' if plan.uninstall else 'already installed'} for {title}: " \
               "nothing to change\n"
    done = {"create": "created", "update": "updated", "remove": "removed"}
    lines = [f"{dry}{'uninstall' if plan.uninstall else 'install'} for {title}:"]
    if plan.make_home:
        lines.append(f"  {'would create' if dry_run else 'created'} folder {plan.places.home}")
    for change in plan.changes:
        lines.append(f"  {'would ' + change.verb if dry_run else done[change.verb]} {change.path}: {change.what}")
        if dry_run and change.path != plan.places.record:
            lines += ["    " + line for line in change.diff().splitlines()]
    if plan.remove_home:
        lines.append(f"  {'would remove' if dry_run else 'removed'} folder {plan.places.home}")
    return "\n".join(lines) + "\n"

