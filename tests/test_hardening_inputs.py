"""Hardening (issue 13): hostile input, damaged state files and a hostile process environment.

Each case was found by a hostile test of the code: a log that is a FIFO or a device, dates
outside what datetime can convert, config values that pass a type check but break the
arithmetic, damaged files under .state/, forged locks, an output that cannot be written, no
home folder, Ctrl-C during start-up, an API that reports absurd usage. Where the contract is
silent the answer is one line on stderr, the right exit code, nothing outside the store
touched and nothing a user wrote lost.
"""

import errno
import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from auto_dream import journal
from auto_dream.__main__ import quick_append_arguments, run_quick_append
from auto_dream.journal import Entry, format_entry, read_all_entries, read_log
from auto_dream.paths import StorePaths
from conftest import installed_command, run_installed, tree_hash

NOW = datetime.now().astimezone()
DAY = "logs/2026/12/2026-12-01.md"  # a day log's place, for the cases that put something odd there


def run_briefly(*argv, **kwargs) -> subprocess.CompletedProcess:
    """The installed command, given 20 seconds: the cases here used to hang for ever."""
    return subprocess.run([installed_command(), *map(str, argv)], capture_output=True, text=True, timeout=20,
                          **kwargs)


def one_line(err: str) -> str:
    """stderr of a failed command: exactly one line, never a traceback."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def log_line(days_ago: float, text: str) -> str:
    at = (NOW - timedelta(days=days_ago)).replace(tzinfo=None, microsecond=0)
    return format_entry(Entry(at, text, "project"))


def put(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.fixture
def waiting(root) -> Path:
    """A store with one good entry waiting for a dream, in a log of its own."""
    put(root, f"logs/{NOW:%Y/%m/%Y-%m-%d}.md", log_line(0, "The build server is called falcon."))
    return root


# ---------------------------------------------------------------- 1. a day log that is not a file


def make_fifo(root: Path) -> Path:
    path = root / DAY
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def make_zero_link(root: Path) -> Path:
    path = root / DAY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("make", [make_fifo, make_zero_link], ids=["fifo", "symlink to /dev/zero"])
@pytest.mark.parametrize("argv", [["check"], ["dream", "--no-llm"], ["dream", "--dry-run", "--no-llm"]],
                         ids=["check", "dream", "dry run"])
def test_a_day_log_that_is_not_a_regular_file_is_skipped_with_a_warning(waiting, make, argv):
    bad = make(waiting)
    done = run_briefly("--root", waiting, *argv)  # today's code blocks here for ever
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warned = [line for line in done.stderr.splitlines() if "2026-12-01.md" in line]
    assert len(warned) == 1 and warned[0].startswith("auto-dream: warning: ") and "not a regular file" in warned[0]
    assert bad.is_symlink() or stat.S_ISFIFO(bad.lstat().st_mode)  # left as it was


def test_append_into_a_fifo_named_like_the_day_log_is_refused_and_writes_nothing(root):
    fifo = make_fifo(root)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # holds the pipe open: a write would stay readable
    try:
        done = run_briefly("--root", root, "append", "--at", "2026-12-01 10:00", "a fact")
        try:
            leaked = os.read(reader, 4096)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(reader)
    assert leaked == b""
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith("auto-dream: error: ") and "2026-12-01.md" in line and "not a regular file" in line
    assert done.stdout == ""


def test_append_into_a_symlink_to_a_device_is_refused(root, cli):
    make_zero_link(root)
    result = cli("--root", root, "append", "--at", "2026-12-01 10:00", "a fact")
    assert result.code == 1
    assert "not a regular file" in one_line(result.err)
    assert result.out == ""


def test_a_day_log_above_the_size_limit_is_skipped_with_a_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "MAX_LOG_BYTES", 200)
    log = tmp_path / "2026-12-01.md"
    log.write_text(log_line(1, "x" * 300))
    entries, problems = read_log(log)
    assert entries == []
    assert len(problems) == 1 and "larger than" in problems[0].message
    small = tmp_path / "2026-12-02.md"
    small.write_text(log_line(1, "short"))
    assert [e.text for e in read_log(small)[0]] == ["short"]


def test_a_day_log_symlinked_to_a_regular_file_is_still_read(root, cli):
    real = root.parent / "elsewhere.md"
    real.write_text(log_line(0, "Linked logs are read."))
    link = root / DAY
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)
    result = cli("--root", root, "check", "--json")
    assert result.code == 0 and json.loads(result.out)["undistilled_entries"] == 1, result


# ---------------------------------------------------------------- 2. a log date datetime cannot convert


@pytest.mark.parametrize("stamp", ["0001-01-01 00:00", "0001-01-01 00:00:00", "1899-12-31 23:59"])
def test_a_log_line_dated_before_1900_is_a_warning_not_a_traceback(waiting, cli, stamp):
    put(waiting, DAY, f"- [{stamp}] text from the year one\n")
    for argv in (["check"], ["dream", "--no-llm", "--dry-run"], ["dream", "--no-llm"], ["list"]):
        result = cli("--root", waiting, *argv)
        assert result.code == 0, (argv, result)
        assert "Traceback" not in result.err
    check = cli("--root", waiting, "check", "--json")
    assert json.loads(check.out)["undistilled_entries"] == 0  # the good entry was distilled, the bad one skipped
    warned = [line for line in check.err.splitlines() if "2026-12-01.md:1" in line]
    assert len(warned) == 1 and warned[0].startswith("auto-dream: warning: ") and stamp in warned[0]
    assert (waiting / DAY).read_text() == f"- [{stamp}] text from the year one\n"  # never rewritten


def test_a_log_line_dated_9999_in_a_far_west_timezone_is_a_warning(root, cli):
    (root / "config.toml").write_text('timezone = "Etc/GMT+12"\n')  # 9999-12-31 23:59 here is year 10000 in UTC
    put(root, DAY, "- [9999-12-31 23:59] the last minute of the calendar\n")
    for argv in (["dream", "--no-llm"], ["check"], ["list"], ["build-index"]):
        result = cli("--root", root, *argv)
        assert result.code == 0 and "Traceback" not in result.err, (argv, result)
    assert "9999-12-31 23:59" in cli("--root", root, "check").err


# ---------------------------------------------------------------- 10. --at and invisible text


@pytest.mark.parametrize("at", ["1900-01-01T00:00:00+14:00", "1900-01-01T05:00:00+14:00"])
def test_at_that_lands_before_1900_in_the_store_timezone_is_bad_input(root, cli, at):
    (root / "config.toml").write_text('timezone = "UTC"\n')
    before = tree_hash(root)
    result = cli("--root", root, "append", "--at", at, "a fact")
    assert result.code == 2
    assert "1900" in one_line(result.err)
    assert tree_hash(root) == before


def test_at_that_lands_before_1900_through_the_fast_path(root, capsys):
    (root / "config.toml").write_text('timezone = "UTC"\n')
    before = tree_hash(root)
    found = quick_append_arguments(["--root", str(root), "append", "--at", "1900-01-01T00:00:00+14:00", "x"])
    assert found is not None
    assert run_quick_append(found) == 2
    assert "1900" in one_line(capsys.readouterr().err)
    assert tree_hash(root) == before


def test_at_beyond_the_calendar_after_conversion_is_bad_input(root, cli):
    (root / "config.toml").write_text('timezone = "UTC"\n')
    result = cli("--root", root, "append", "--at", "9999-12-31T23:59:00-12:00", "a fact")
    assert result.code == 2
    one_line(result.err)


INVISIBLE = ["\u200b", "\u3000", "\ufeff", "\u200b\u200c\u200d\u2060", "\u00ad", "\u3164", "\u2800",
             " \u200b\t\u3000\ufeff\n\u2028\u2029 ", "\u180e\u2061\u2062\u2063\u2064", "\ufe0f\u034f"]


@pytest.mark.parametrize("text", INVISIBLE, ids=[repr(t) for t in INVISIBLE])
def test_a_text_of_invisible_characters_is_refused_as_empty(root, cli, text):
    before = tree_hash(root)
    result = cli("--root", root, "append", text)
    assert result.code == 2
    assert "empty" in one_line(result.err)
    assert tree_hash(root) == before
    found = quick_append_arguments(["--root", str(root), "append", text])
    assert run_quick_append(found) == 2
    assert tree_hash(root) == before


@pytest.mark.parametrize("text", ["\u200bhello", "用户\u3000喜欢", "\u00e9", "\u0301a", "🙂", "\u3164\u1100"])
def test_a_text_with_something_visible_is_kept_as_written(root, cli, text):
    result = cli("--root", root, "append", text)
    assert result.code == 0, result
    entries = read_all_entries(StorePaths(root))[0]
    assert [e.text for e in entries] == [text.strip()]


# ---------------------------------------------------------------- 3. config values that break the arithmetic


@pytest.fixture
def dreamt(waiting, cli) -> Path:
    """A store a dream has run over: every command compares times with the last dream."""
    assert cli("--root", waiting, "dream", "--no-llm").code == 0
    return waiting


@pytest.mark.parametrize("setting", ["due_hours = inf", "due_hours = nan", "due_hours = 1e12", "due_hours = -inf",
                                     "guard_days = 1000000000", "guard_days = 9223372036854775807",
                                     "llm_timeout = inf", "llm_timeout = nan", "duplicate_overlap = nan",
                                     "contradiction_overlap = inf"])
@pytest.mark.parametrize("argv", [["check"], ["dream", "--no-llm"], ["dream", "--no-llm", "--if-due"], ["list"]],
                         ids=["check", "dream", "if-due", "list"])
def test_a_config_value_out_of_range_is_one_error_line_naming_file_and_key(dreamt, cli, setting, argv):
    config = dreamt / "config.toml"
    config.write_text(setting + "\n")
    before = tree_hash(dreamt)
    result = cli("--root", dreamt, *argv)
    assert result.code == 1, result
    line = one_line(result.err)
    assert line.startswith("auto-dream: error: ") and str(config) in line and setting.split()[0] in line
    assert result.out == ""
    assert tree_hash(dreamt) == before


@pytest.mark.parametrize("setting", ["due_hours = 0.5", "due_hours = 8760", "guard_days = 3650", "llm_timeout = 600"])
def test_a_large_but_sane_config_value_is_kept(dreamt, cli, setting):
    (dreamt / "config.toml").write_text(setting + "\n")
    assert cli("--root", dreamt, "check").code == 0
