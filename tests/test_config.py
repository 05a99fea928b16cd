"""config.toml (docs/store.md, "config.toml"): defaults, reading, validation, and that it takes effect."""

import re
from dataclasses import fields
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from auto_dream.errors import StoreError
from auto_dream.store.config import Config, load_config
from builders import memory_text
from conftest import tree_hash, write_memory_file

DOCUMENTED_KEYS = ("timezone", "mode", "llm", "model", "max_llm_calls", "budget", "index_max_lines",
               "index_max_bytes", "index_line_chars", "guard_days", "duplicate_overlap",
               "contradiction_overlap", "due_hours", "due_entries", "repo")

EVERY_KEY = """\
timezone = "Asia/Shanghai"
mode = "propose"
llm = "off"
model = "claude-test-model"
max_llm_calls = 3
budget = 7
index_max_lines = 120
index_max_bytes = 9000
index_line_chars = 100
guard_days = 30
duplicate_overlap = 0.75
contradiction_overlap = 0.5
due_hours = 12
due_entries = 9
repo = "/src/project"
"""


def write_config(root: Path, text: str) -> Path:
    path = root / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def assert_one_error_line(result, code: int) -> str:
    assert result.code == code, result
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("auto-dream: error: ")
    assert "Traceback" not in result.err
    return lines[0]


# ---------------------------------------------------------------- reading


def test_missing_config_means_the_documented_defaults(tmp_path):
    config = load_config(tmp_path / "config.toml")
    assert config == Config()
    assert (config.timezone, config.mode, config.llm) == (None, "apply", "auto")
    assert (config.index_max_lines, config.index_max_bytes, config.index_line_chars) == (200, 25_000, 150)
    assert (config.guard_days, config.duplicate_overlap, config.contradiction_overlap) == (14, 0.6, 0.4)
    assert (config.due_hours, config.due_entries) == (24, 5)


def test_config_knows_every_key_of_the_design():
    assert set(DOCUMENTED_KEYS) <= {f.name for f in fields(Config)}


def test_every_design_key_is_read(tmp_path):
    config = load_config(write_config(tmp_path, EVERY_KEY))
    assert config == Config(
        timezone="Asia/Shanghai", mode="propose", llm="off", model="claude-test-model",
        max_llm_calls=3, budget=7, index_max_lines=120, index_max_bytes=9000, index_line_chars=100,
        guard_days=30, duplicate_overlap=0.75, contradiction_overlap=0.5, due_hours=12,
        due_entries=9, repo="/src/project")


def test_a_partial_config_keeps_defaults_for_the_rest(tmp_path):
    config = load_config(write_config(tmp_path, 'mode = "propose"\n'))
    assert config == Config(mode="propose")


def test_every_line_of_the_init_template_is_accepted_when_uncommented(cli, tmp_path):
    cli("init", tmp_path)
    template = (tmp_path / ".auto-dream" / "config.toml").read_text(encoding="utf-8")
    settings = [m.group(1) for m in re.finditer(r"^# ?([a-z_]+ = .*)$", template, re.MULTILINE)]
    keys = {line.split(" = ")[0] for line in settings}
    assert keys == {f.name for f in fields(Config)}  # every setting, the store's and the LLM limits
    config = load_config(write_config(tmp_path, "\n".join(settings) + "\n"))
    assert config.timezone == "Asia/Shanghai"  # the example the template shows


def test_fractional_values_are_accepted_where_the_setting_is_a_float(tmp_path):
    # due_hours is a number of hours ("dream at most every 12.5 hours"), typed float.
    config = load_config(write_config(tmp_path, "due_hours = 0.5\nduplicate_overlap = 1\n"))
    assert config.due_hours == 0.5
    assert config.duplicate_overlap == 1


@pytest.mark.parametrize("text, complaint", [
    ('mode = "sometimes"\n', "mode"),
    ('llm = "maybe"\n', "llm"),
    ("budget = -1\n", "budget"),
    ("duplicate_overlap = 1.5\n", "duplicate_overlap"),
    ("contradiction_overlap = 0\n", "contradiction_overlap"),
    ('timezone = "Mars/Olympus_Mons"\n', "Mars/Olympus_Mons"),
    ('timezone = ""\n', "timezone"),
    ('budget = "5"\n', "budget"),
    ("due_entries = true\n", "due_entries"),
    ("index_max_lines = 150.5\n", "index_max_lines"),
    ("index_max_lines = 3\n", "index_max_lines"),
    ("colour = \"blue\"\n", "colour"),
    ("budget = \n", "TOML"),
    ('[dream]\nbudget = 5\n', "dream"),
])
def test_a_bad_value_stops_with_the_file_named(tmp_path, text, complaint):
    path = write_config(tmp_path, text)
    with pytest.raises(StoreError) as raised:
        load_config(path)
    message = str(raised.value)
    assert str(path) in message
    assert complaint in message
    assert "\n" not in message


def test_config_that_is_not_utf8_is_reported(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "caf\xe9"\n')
    with pytest.raises(StoreError, match=re.escape(str(path))):
        load_config(path)


def test_config_that_is_a_folder_is_reported(tmp_path):
    (tmp_path / "config.toml").mkdir()
    with pytest.raises(StoreError, match="config.toml"):
        load_config(tmp_path / "config.toml")


# ---------------------------------------------------------------- through the CLI


@pytest.mark.parametrize("command", [
    ["list"], ["list", "--json"], ["check", "--json"], ["build-index"],
    ["append", "--at", "2026-04-01 09:00", "a fact"],
])
def test_cli_with_a_bad_config_exits_1_with_one_line_naming_the_file(cli, root, command):
    config = write_config(root, 'mode = "sometimes"\n')
    before = tree_hash(root)
    result = cli("--root", root, *command)
    line = assert_one_error_line(result, 1)
    assert str(config) in line
    assert result.out == ""
    assert tree_hash(root) == before


@pytest.mark.slow  # starts the installed command
def test_installed_append_with_a_bad_config_exits_1(root):
    from conftest import run_installed

    config = write_config(root, 'llm = "maybe"\n')
    before = tree_hash(root)
    done = run_installed("--root", root, "append", "a fact")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("auto-dream: error: ") and str(config) in done.stderr
    assert "Traceback" not in done.stderr
    assert tree_hash(root) == before


# ---------------------------------------------------------------- the config takes effect


def test_timezone_decides_the_day_file_of_a_back_dated_entry(cli, root):
    write_config(root, 'timezone = "Asia/Shanghai"\n')
    result = cli("--root", root, "append", "--at", "2026-04-01T23:30:00+00:00", "late in London")
    assert result.code == 0, result
    assert "logs/2026/04/2026-04-02.md" in result.out
    assert not (root / "logs/2026/04/2026-04-01.md").exists()
    log = root / "logs/2026/04/2026-04-02.md"
    assert log.read_text(encoding="utf-8") == "- [2026-04-02 07:30:00] late in London\n"


def test_timezone_reads_an_at_without_offset_as_store_time(cli, root):
    write_config(root, 'timezone = "Asia/Shanghai"\n')
    assert cli("--root", root, "append", "--at", "2026-04-01 23:30", "store time").code == 0
    log = root / "logs/2026/04/2026-04-01.md"
    assert log.read_text(encoding="utf-8") == "- [2026-04-01 23:30:00] store time\n"


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12"])  # UTC+14 and UTC-12
def test_timezone_decides_today_for_an_entry_without_at(cli, root, zone):
    write_config(root, f'timezone = "{zone}"\n')
    before = datetime.now(ZoneInfo(zone))
    assert cli("--root", root, "append", "now").code == 0
    after = datetime.now(ZoneInfo(zone))
    written = sorted(p.relative_to(root).as_posix() for p in root.glob("logs/*/*/*.md"))
    expected = {f"logs/{d:%Y}/{d:%m}/{d:%Y-%m-%d}.md" for d in (before, after)}
    assert len(written) == 1 and written[0] in expected
    stamp = (root / written[0]).read_text(encoding="utf-8")[3:22]
    stamped = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
    assert before.replace(tzinfo=None, microsecond=0) <= stamped <= after.replace(tzinfo=None)


def memory(name: str, days_old: int) -> str:
    mtime = datetime.now().astimezone() - timedelta(days=days_old, hours=1)
    return memory_text(name, "project", mtime, "Body.", f"About {name}")


def test_index_max_lines_from_config_is_honoured_by_build_index(cli, root):
    for number in range(10):
        write_memory_file(root, f"memories/project/2026040{number}_Memory_{number}.md",
                          memory(f"Memory {number}", days_old=number))
    assert cli("--root", root, "build-index").code == 0
    full = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert all(f"[Memory {n}]" in full for n in range(10))

    write_config(root, "index_max_lines = 12\n")
    result = cli("--root", root, "build-index")

    assert result.code == 0, result
    capped = (root / "MEMORY.md").read_text(encoding="utf-8")
    lines = capped.splitlines()
    assert len(lines) <= 12
    listed = [n for n in range(10) if f"[Memory {n}]" in capped]
    assert listed == list(range(len(listed)))  # the newest are the ones kept
    more = [line for line in lines if "not listed here" in line]
    assert len(more) == 1 and f"and {10 - len(listed)} older" in more[0]
    assert "auto-dream: warning:" in result.err


def test_index_line_chars_from_config_shortens_entry_lines(cli, root):
    long_description = "a description that goes on " * 10
    write_memory_file(root, "memories/user/20260401_Long.md",
                      f"---\nname: Long\ndescription: {long_description}\ntype: user\n---\nBody.\n")
    write_config(root, "index_line_chars = 60\n")
    assert cli("--root", root, "build-index").code == 0
    entry = [line for line in (root / "MEMORY.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("- [Long]")]
    assert len(entry) == 1 and len(entry[0]) <= 60 and entry[0].endswith("…")


def test_due_entries_from_config_decides_whether_a_dream_is_due(cli, root):
    import json

    write_config(root, "due_entries = 2\n")
    cli("--root", root, "append", "--at", "2026-04-01 09:00", "one")
    first = json.loads(cli("--root", root, "check", "--json").out)
    cli("--root", root, "append", "--at", "2026-04-01 09:01", "two")
    second = json.loads(cli("--root", root, "check", "--json").out)
    assert (first["dream_due"], second["dream_due"]) == (False, True)
