"""`install codex` / `uninstall codex`: the MCP server as a [mcp_servers.auto-dream] table
appended to the user's config.toml and a marked block in AGENTS.md, both taken out byte for byte.

HOME (and every XDG folder) is in tmp_path (conftest's isolated_env); CODEX_HOME is unset unless a
test sets it, to a folder in tmp_path."""

import hashlib
import json
import os
import tomllib
from pathlib import Path

import pytest

from auto_dream.commands.install import RECORD_NAME
from auto_dream.commands.install_codex import BLOCK_END, BLOCK_START
from auto_dream.shell import auto_dream_command

# The user's own config: comments, their servers, odd spacing, a CRLF-free file whose last line has no newline.
CONFIG = (
    "# my Codex settings\n"
    'model   =  "gpt-5-codex"   # the one I like\n'
    "approval_policy = 'on-request'\n"
    "\n\n"
    "[mcp_servers.docs]\n"
    '  command = "npx"\n'
    '  args = [ "-y",   "docs-mcp" ]\n'
    "\n"
    "[mcp_servers.docs.env]\n"
    'DOCS_TOKEN = "secret"\n'
    "# a comment between tables\n"
    '[projects."/home/me/work"]\n'
    'trust_level = "trusted"'
)
AGENTS = "# My global rules\n\n- Answer in English.\n- Run the tests before you commit."  # no final newline


@pytest.fixture(autouse=True)
def no_codex_home(monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)


@pytest.fixture
def codex(isolated_env) -> Path:
    folder = isolated_env / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG)
    (folder / "AGENTS.md").write_text(AGENTS)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def digest(folder: Path) -> str:
    return hashlib.sha256(json.dumps({name: data.hex() for name, data in tree(folder).items()}).encode()).hexdigest()


def test_install_then_uninstall_gives_the_users_files_back_byte_for_byte(cli, codex, isolated_env):
    before = tree(codex)
    done = cli("install", "codex")
    assert done.code == 0, done.err
    config = (codex / "config.toml").read_text()
    assert config.startswith(CONFIG + "\n\n")  # their last line ended, a blank line, then ours
    value = tomllib.loads(config)
    store = isolated_env / ".auto-dream"
    command = auto_dream_command()
    assert value["mcp_servers"]["auto-dream"] == {"command": command[0],
                                                  "args": [*command[1:], "--root", str(store), "mcp"]}
    assert value["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"],
                                            "env": {"DOCS_TOKEN": "secret"}}
    assert value["model"] == "gpt-5-codex" and value["projects"] == {"/home/me/work": {"trust_level": "trusted"}}
    agents = (codex / "AGENTS.md").read_text()
    assert agents.startswith(AGENTS + "\n\n" + BLOCK_START + "\n")
    assert agents.endswith(BLOCK_END + "\n")
    assert "recall" in agents and "remember" in agents and str(store) in agents
    assert json.loads((codex / RECORD_NAME).read_text())["installed_with"] == "auto-dream install codex"

    undone = cli("uninstall", "codex")
    assert undone.code == 0, undone.err
    assert tree(codex) == before
    assert cli("uninstall", "codex").out.startswith("auto-dream is not installed for Codex")


def test_the_table_runs_our_executable_with_the_given_store(cli, codex, tmp_path):
    store = tmp_path / "elsewhere" / "store"
    assert cli("--root", store, "install", "codex").code == 0
    server = tomllib.loads((codex / "config.toml").read_text())["mcp_servers"]["auto-dream"]
    command = auto_dream_command()
    assert [server["command"], *server["args"]] == [*command, "--root", str(store), "mcp"]
    assert os.path.isabs(server["command"])
    assert server["args"][-3:] == ["--root", str(store), "mcp"]


def test_second_install_changes_nothing(cli, codex):
    assert cli("install", "codex").code == 0
    after = tree(codex)
    stats = {name: os.stat(codex / name).st_mtime_ns for name in after}
    again = cli("install", "codex")
    assert again.code == 0
    assert "already installed" in again.out
    assert tree(codex) == after
    assert {name: os.stat(codex / name).st_mtime_ns for name in after} == stats


def test_install_for_another_store_replaces_ours_where_it_is(cli, codex, tmp_path):
    assert cli("install", "codex").code == 0
    with open(codex / "config.toml", "a") as handle:  # Codex (or the user) adds a table after ours
        handle.write('\n[mcp_servers.later]\ncommand = "later"\n')
    other = tmp_path / "other-store"
    assert cli("--root", other, "install", "codex").code == 0
    value = tomllib.loads((codex / "config.toml").read_text())
    assert value["mcp_servers"]["auto-dream"]["args"][-2:] == [str(other), "mcp"]
    assert value["mcp_servers"]["later"] == {"command": "later"}
    assert (codex / "config.toml").read_text().count("[mcp_servers.auto-dream]") == 1
    assert cli("uninstall", "codex").code == 0
    config = (codex / "config.toml").read_text()
    assert "auto-dream" not in config and "[mcp_servers.later]" in config
    assert tomllib.loads(config)["mcp_servers"]["docs"]["command"] == "npx"


def test_a_users_own_auto_dream_server_is_refused_and_nothing_written(cli, codex):
    own = CONFIG + '\n\n[mcp_servers.auto-dream]\ncommand = "my-memory"\nargs = ["serve"]\n'
    (codex / "config.toml").write_text(own)
    before = tree(codex)
    done = cli("install", "codex")
    assert done.code != 0
    assert "already has an MCP server [mcp_servers.auto-dream]" in done.err
    assert "nothing was written" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert tree(codex) == before
    # uninstall, with no record of ours, leaves it too
    assert cli("uninstall", "codex").code == 0
    assert tree(codex) == before


def test_dry_run_writes_nothing(cli, codex, isolated_env):
    before = digest(isolated_env)
    done = cli("install", "codex", "--dry-run")
    assert done.code == 0, done.err
    assert done.out.startswith("[DRY RUN] install for Codex")
    assert "+[mcp_servers.auto-dream]" in done.out and "would update" in done.out
    assert digest(isolated_env) == before
    assert cli("install", "codex").code == 0
    installed = digest(isolated_env)
    undo = cli("uninstall", "codex", "--dry-run")
    assert undo.code == 0 and undo.out.startswith("[DRY RUN] uninstall for Codex")
    assert digest(isolated_env) == installed


def test_codex_home_is_honoured(cli, isolated_env, tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert cli("install", "codex").code == 0
    assert tomllib.loads((home / "config.toml").read_text())["mcp_servers"]["auto-dream"]["args"][-1] == "mcp"
    assert (home / "AGENTS.md").read_text().startswith(BLOCK_START)
    assert not (isolated_env / ".codex").exists()
    assert "Codex: found (" + str(home) + ")" in cli("install", "--list").out
    assert "; installed" in [line for line in cli("install", "--list").out.splitlines()
                             if line.startswith("Codex")][0]
    assert cli("uninstall", "codex").code == 0
    assert not home.exists()  # install created it, and nothing else is in it


def test_install_into_no_codex_folder_and_uninstall_leaves_none(cli, isolated_env):
    before = digest(isolated_env)
    done = cli("install", "codex")
    assert done.code == 0, done.err
    assert (isolated_env / ".codex" / "config.toml").stat().st_mode & 0o777 == 0o600
    assert tomllib.loads((isolated_env / ".codex" / "config.toml").read_text())["mcp_servers"]["auto-dream"]
    assert cli("uninstall", "codex").code == 0
    assert not (isolated_env / ".codex").exists()
    assert digest(isolated_env) == before


def test_uninstall_keeps_a_table_the_user_edited_and_says_so(cli, codex):
    assert cli("install", "codex").code == 0
    config = (codex / "config.toml").read_text()
    (codex / "config.toml").write_text(config + "startup_timeout_sec = 30\n")  # a key given to our table
    edited = (codex / "config.toml").read_bytes()
    done = cli("uninstall", "codex")
    assert done.code == 0
    assert "kept the auto-dream table" in done.err and "changed since install" in done.err
    assert (codex / "config.toml").read_bytes() == edited
    assert (codex / "AGENTS.md").read_text() == AGENTS  # the block, unchanged, still goes
    assert (codex / RECORD_NAME).exists()  # so a later uninstall still knows what was ours


def test_uninstall_keeps_an_edited_instructions_block(cli, codex):
    assert cli("install", "codex").code == 0
    agents = (codex / "AGENTS.md").read_text().replace("Tidy memory", "Tidy my memory")
    (codex / "AGENTS.md").write_text(agents)
    done = cli("uninstall", "codex")
    assert "kept the auto-dream block" in done.err
    assert (codex / "AGENTS.md").read_text() == agents
    assert (codex / "config.toml").read_text() == CONFIG


@pytest.mark.parametrize("config, said", [
    ("model = \n", "is not valid TOML"),  # not TOML
    ('mcp_servers = { docs = { command = "npx" } }\n', "nothing was written"),  # no table can be added to it
])
def test_a_config_install_cannot_add_to_is_refused_and_nothing_written(cli, codex, config, said):
    (codex / "config.toml").write_text(config)
    before = tree(codex)
    done = cli("install", "codex")
    assert done.code != 0 and said in done.err
    assert tree(codex) == before


def test_crlf_files_get_crlf_lines(cli, codex):
    (codex / "config.toml").write_bytes(b'model = "o3"\r\n')
    assert cli("install", "codex").code == 0
    data = (codex / "config.toml").read_bytes()
    assert b"[mcp_servers.auto-dream]\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert cli("uninstall", "codex").code == 0
    assert (codex / "config.toml").read_bytes() == b'model = "o3"\r\n'


def test_a_nonempty_agents_override_is_warned_about(cli, codex):
    (codex / "AGENTS.override.md").write_text("Only this.\n")
    done = cli("install", "codex")
    assert done.code == 0
    assert "AGENTS.override.md is not empty" in done.err
