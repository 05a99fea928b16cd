"""Hardening: hostile input, damaged state files and a hostile process environment.

Each case was found by a hostile test of the code: a log that is a FIFO or a device, dates
outside what datetime can convert, config values that pass a type check but break the
arithmetic, damaged files under .state/, forged locks, an output that cannot be written, no
home folder, Ctrl-C during start-up, an API that reports absurd usage. Where the contract is
silent the answer is one line on stderr, the right exit code, nothing outside the store
touched and nothing a user wrote lost.
"""

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from auto_dream.__main__ import quick_append_arguments, run_quick_append
from auto_dream.store import daylog as journal
from auto_dream.store.daylog import Entry, format_entry, read_all_entries, read_log
from auto_dream.store.paths import StorePaths
from conftest import installed_command, tree_hash

NOW = datetime.now().astimezone()
DAY = "logs/2025/01/2025-01-15.md"  # a day log's place, for the cases that put something odd there


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


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("make", [make_fifo, make_zero_link], ids=["fifo", "symlink to /dev/zero"])
@pytest.mark.parametrize("argv", [["check"], ["dream", "--no-llm"], ["dream", "--dry-run", "--no-llm"]],
                         ids=["check", "dream", "dry run"])
def test_a_day_log_that_is_not_a_regular_file_is_skipped_with_a_warning(waiting, make, argv):
    bad = make(waiting)
    done = run_briefly("--root", waiting, *argv)  # today's code blocks here for ever
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warned = [line for line in done.stderr.splitlines() if "2025-01-15.md" in line]
    assert len(warned) == 1 and warned[0].startswith("auto-dream: warning: ") and "not a regular file" in warned[0]
    assert bad.is_symlink() or stat.S_ISFIFO(bad.lstat().st_mode)  # left as it was


@pytest.mark.slow  # starts the installed command
def test_append_into_a_fifo_named_like_the_day_log_is_refused_and_writes_nothing(root):
    fifo = make_fifo(root)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # holds the pipe open: a write would stay readable
    try:
        done = run_briefly("--root", root, "append", "--at", "2025-01-15 10:00", "a fact")
        try:
            leaked = os.read(reader, 4096)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(reader)
    assert leaked == b""
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith("auto-dream: error: ") and "2025-01-15.md" in line and "not a regular file" in line
    assert done.stdout == ""


def test_append_into_a_symlink_to_a_device_is_refused(root, cli):
    make_zero_link(root)
    result = cli("--root", root, "append", "--at", "2025-01-15 10:00", "a fact")
    assert result.code == 1
    assert "is a symlink (to '/dev/zero')" in one_line(result.err)
    assert result.out == ""


def test_a_day_log_above_the_size_limit_is_skipped_with_a_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "MAX_LOG_BYTES", 200)
    log = tmp_path / "2025-01-15.md"
    log.write_text(log_line(1, "x" * 300))
    entries, problems = read_log(log)
    assert entries == []
    assert len(problems) == 1 and "larger than" in problems[0].message
    small = tmp_path / "2026-12-02.md"
    small.write_text(log_line(1, "short"))
    assert [e.text for e in read_log(small)[0]] == ["short"]


def test_a_day_log_symlinked_to_a_regular_file_is_named_not_read(root, cli):
    real = root.parent / "elsewhere.md"  # a link may lead anywhere, a secret included
    real.write_text(log_line(0, "Linked logs are not read."))
    link = root / DAY
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)
    result = cli("--root", root, "check", "--json")
    assert result.code == 0 and json.loads(result.out)["undistilled_entries"] == 0, result
    assert "symbolic link" in one_line(result.err)


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
    warned = [line for line in check.err.splitlines() if "2025-01-15.md:1" in line]
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


# ---------------------------------------------------------------- 4. files under .state/


@pytest.mark.parametrize("line", ['{"ts": 1e300}', '{"ts": -1e300}', '{"ts": 1e20}', '{"ts": NaN}',
                                  '{"ts": Infinity}', '{"ts": "yesterday"}', '{"ts": [1]}', '{"names": ["x"]}',
                                  "[1, 2]", "not json"])
def test_a_bad_consult_line_is_skipped_with_a_warning(waiting, cli, line):
    consult = waiting / ".state" / "consult.jsonl"
    good = json.dumps({"ts": NOW.isoformat(), "names": ["falcon"]})
    consult.write_text(f"{good}\n{line}\n")
    result = cli("--root", waiting, "dream", "--no-llm", "--json")
    assert result.code == 0, result
    assert "Traceback" not in result.err
    warned = [w for w in json.loads(result.out)["warnings"] if "consult.jsonl" in w]
    assert len(warned) == 1 and "line 2" in warned[0], json.loads(result.out)["warnings"]
    assert consult.read_text() == f"{good}\n{line}\n"  # agents write it; dream only reads it


@pytest.mark.parametrize("ts", ["0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59-12:00",
                                "9999-12-31T23:59:59"])
def test_a_consult_time_at_the_calendar_edge_is_read(waiting, cli, ts):
    (waiting / ".state" / "consult.jsonl").write_text(json.dumps({"ts": ts, "names": ["falcon"]}) + "\n")
    result = cli("--root", waiting, "dream", "--no-llm", "--json")
    assert result.code == 0 and "Traceback" not in result.err, result
    assert not [w for w in json.loads(result.out)["warnings"] if "consult.jsonl" in w]


def test_the_good_consult_lines_count_beside_a_bad_one(paths):
    from auto_dream.dream.bookkeeping import read_consulted_terms

    (paths.state / "consult.jsonl").write_text(
        '{"ts": 1e300, "names": ["ghost"]}\n'
        + json.dumps({"ts": NOW.isoformat(), "names": ["Falcon"], "query": "billing service"}) + "\n\n")
    warnings: list[str] = []
    terms = read_consulted_terms(paths, NOW, 14, warnings)
    assert "falcon" in terms and "ghost" not in terms
    assert len(warnings) == 1 and ".state/consult.jsonl" in warnings[0] and "1 line" in warnings[0]


def test_a_recheck_list_that_is_not_utf8_does_not_stop_a_dream(dreamt, cli):
    memory = next((dreamt / "memories").rglob("*.md")).relative_to(dreamt).as_posix()
    (dreamt / ".state" / "recheck.txt").write_bytes(b"\xff\xfe\xfd broken\n" + memory.encode() + b"\n")
    put(dreamt, f"logs/{NOW:%Y/%m/%Y-%m-%d}.md", log_line(0, "The build server is called falcon.")
        + log_line(0, "Deploys go out on Thursdays."))
    for argv in (["dream", "--no-llm", "--dry-run"], ["dream", "--no-llm"]):
        result = cli("--root", dreamt, *argv)
        assert result.code == 0 and "Traceback" not in result.err, (argv, result)


def test_a_last_dream_time_without_an_offset_is_local_time(dreamt, cli):
    (dreamt / ".state" / "last_dream.json").write_text('{"run_id": "x", "finished": "2026-01-02T03:04:05"}')
    check = cli("--root", dreamt, "check", "--json")
    assert check.code == 0, check
    assert json.loads(check.out)["last_dream"] == datetime(2026, 1, 2, 3, 4, 5).astimezone().isoformat()
    result = cli("--root", dreamt, "dream", "--no-llm", "--if-due")
    assert result.code == 0 and "Traceback" not in result.err, result


@pytest.mark.parametrize("finished", ["0001-01-01T00:00:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59"])
def test_a_last_dream_time_at_the_calendar_edge_does_not_stop_check(dreamt, cli, finished):
    (dreamt / ".state" / "last_dream.json").write_text(json.dumps({"run_id": "x", "finished": finished}))
    for argv in (["check"], ["check", "--json"], ["dream", "--no-llm", "--if-due"]):
        result = cli("--root", dreamt, *argv)
        assert result.code == 0 and "Traceback" not in result.err, (argv, result)


def damage(root: Path, *statements: str) -> None:
    db = sqlite3.connect(root / ".state" / "cache.sqlite3", isolation_level=None)
    try:
        for statement in statements:
            db.execute(statement)
    finally:
        db.close()


CACHE_DAMAGE = {
    "no memory table": ["DROP TABLE memory"],
    "no memory_text table": ["DROP TABLE memory_text"],
    "no memory_ranks table": ["DROP TABLE memory_ranks"],
    "no word table": ["DROP TABLE word"],
    "no posting table": ["DROP TABLE posting"],
    "no aiming index": ["DROP INDEX posting_aiming"],
    "memory with other column types": [
        "ALTER TABLE memory RENAME TO old_memory",
        "CREATE TABLE memory (id INTEGER PRIMARY KEY, path BLOB, size TEXT, mtime_ns TEXT, ino TEXT, name BLOB,"
        " description BLOB, type BLOB, mtime INTEGER, stamp TEXT, pinned TEXT, type_source BLOB, refs BLOB)",
        "INSERT INTO memory SELECT id, CAST(path AS BLOB), size, mtime_ns, ino, name, description, type, 12345,"
        " stamp, pinned, type_source, refs FROM old_memory",
        "DROP TABLE old_memory"],
    "memory_text with other columns": [
        "DROP TABLE memory_text",
        "CREATE TABLE memory_text (id INTEGER PRIMARY KEY, body INTEGER, sources INTEGER)"],
    "posting without reach": [
        "DROP TABLE posting",
        "CREATE TABLE posting (rank INTEGER, memory INTEGER, size INTEGER, position INTEGER, aims INTEGER)"],
}


@pytest.mark.parametrize("statements", CACHE_DAMAGE.values(), ids=CACHE_DAMAGE.keys())
def test_a_cache_with_missing_tables_or_other_column_types_is_a_miss(dreamt, cli, statements):
    # new entries that pair with the cached memory: the pair index, its profile and its body are read
    put(dreamt, f"logs/{NOW:%Y/%m/%Y-%m-%d}.md", log_line(0, "The build server is called falcon.")
        + log_line(0, "The build server is called falcon and runs Debian.") + log_line(0, "Never deploy on Fridays."))
    listed = json.loads(cli("--root", dreamt, "list", "--json").out)
    without_cache = dreamt.parent / "copy" / ".auto-dream"
    shutil.copytree(dreamt, without_cache, symlinks=True)
    (without_cache / ".state" / "cache.sqlite3").unlink()
    damage(dreamt, *statements)
    for argv in (["list", "--json"], ["check", "--json"], ["build-index"], ["dream", "--no-llm", "--dry-run"]):
        result = cli("--root", dreamt, *argv)
        assert result.code == 0 and "Traceback" not in result.err, (argv, result)
    assert json.loads(cli("--root", dreamt, "list", "--json").out) == listed
    dream = cli("--root", dreamt, "dream", "--no-llm", "--json")
    assert dream.code == 0, dream
    expected = json.loads(cli("--root", without_cache, "dream", "--no-llm", "--json").out)
    assert json.loads(dream.out)["actions"] == expected["actions"]  # as with no cache at all
    again = cli("--root", dreamt, "dream", "--no-llm", "--json")  # the rebuilt cache is sound
    assert again.code == 0 and json.loads(again.out)["actions"] == [], again


CACHE_COMMANDS = {"list": ["list"], "check": ["check"], "build-index": ["build-index"], "dream": ["dream", "--no-llm"]}
EVERY_COMMAND_STOPS = {"list": 1, "check": 1, "build-index": 1, "dream": 1}
ONLY_DREAM_STOPS = {"list": 0, "check": 0, "build-index": 0, "dream": 1}
# A value is read only when a command needs it, so a damaged one stops only the commands that read it:
# every command reads each memory's mtime and references; only a dream comparing a cached memory with a
# new entry reads its sources and word profile.
CACHE_VALUES = {
    "an mtime that is not a date": (["UPDATE memory SET mtime = 'yesterday'"], EVERY_COMMAND_STOPS),
    "references that are not JSON": (["UPDATE memory SET refs = '{'"], EVERY_COMMAND_STOPS),
    "sources that are not JSON": (["UPDATE memory_text SET sources = 'not json'"], ONLY_DREAM_STOPS),
    "a profile that is not JSON": (["UPDATE memory_text SET profile = '[1'"], ONLY_DREAM_STOPS),
}


@pytest.mark.parametrize("statements, codes", CACHE_VALUES.values(), ids=CACHE_VALUES.keys())
def test_a_cache_holding_values_it_cannot_read_is_one_error_line(dreamt, cli, statements, codes):
    put(dreamt, f"logs/{NOW:%Y/%m/%Y-%m-%d}.md", log_line(0, "The build server is called falcon.")
        + log_line(0, "The build server is called falcon and runs Debian."))
    damage(dreamt, *statements)
    before = tree_hash(dreamt / "memories")
    for command, argv in CACHE_COMMANDS.items():
        result = cli("--root", dreamt, *argv)
        assert result.code == codes[command], (command, result)
        if result.code == 1:
            line = one_line(result.err)
            assert "cache.sqlite3" in line and "delete it" in line, (command, line)
        else:
            assert result.err == "", (command, result)
    assert tree_hash(dreamt / "memories") == before  # the dream stopped before it wrote anything
    (dreamt / ".state" / "cache.sqlite3").unlink()
    assert cli("--root", dreamt, "dream", "--no-llm").code == 0


# ---------------------------------------------------------------- 5. forged locks


def write_lock(root: Path, pid: object, started: datetime | str) -> Path:
    lock = root / ".state" / "dream.lock"
    stamp = started if isinstance(started, str) else started.isoformat(timespec="seconds")
    lock.write_text(json.dumps({"pid": pid, "started": stamp}))
    return lock


@pytest.mark.parametrize("pid", [2**70, -2**70, 1e300, 2**31, 0, -1, -4096, True, "1", None, [1]],
                         ids=["2**70", "-2**70", "1e300", "2**31", "0", "-1", "-4096", "true", "string", "null",
                              "list"])
def test_a_lock_whose_pid_no_process_can_have_is_broken(waiting, cli, pid):
    lock = write_lock(waiting, pid, NOW)
    result = cli("--root", waiting, "dream", "--no-llm", "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["stats"]["created"] == 1
    assert not lock.exists()


def test_a_lock_file_holding_infinity_is_broken(waiting, cli):
    lock = waiting / ".state" / "dream.lock"
    lock.write_text('{"pid": Infinity, "started": "%s"}' % NOW.isoformat())
    result = cli("--root", waiting, "dream", "--no-llm")
    assert result.code == 0, result
    assert not lock.exists()


@pytest.mark.slow  # a child process holds the lock
@pytest.mark.parametrize("minutes, code", [(61, 0), (60 * 24 * 365 * 100, 0), (59, 3), (5, 3)])
def test_a_lock_started_in_the_future_expires_like_an_old_one(waiting, cli, sleeper, minutes, code):
    lock = write_lock(waiting, sleeper.pid, datetime.now().astimezone() + timedelta(minutes=minutes))
    result = cli("--root", waiting, "dream", "--no-llm")
    assert result.code == code, result
    assert lock.exists() == (code == 3)
    if code == 3:
        assert one_line(result.err).startswith("auto-dream: error: another dream is running")


@pytest.mark.slow  # a child process holds the lock
@pytest.mark.parametrize("started", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00",
                                     "9999-12-31T23:59:59"])
def test_a_lock_started_at_the_calendar_edge_is_broken(waiting, cli, sleeper, started):
    lock = write_lock(waiting, sleeper.pid, started)
    result = cli("--root", waiting, "dream", "--no-llm")
    assert result.code == 0, result
    assert not lock.exists()


# ---------------------------------------------------------------- 9. usage the API reports


BAD_USAGE = {
    "negative input": {"input_tokens": -5_000_000},
    "negative output": {"output_tokens": -1},
    "absurd output": {"output_tokens": 10**15},  # $15,000,000,000 at Sonnet's price
    "absurd cache read": {"cache_read_input_tokens": 2**62},
    "text": {"input_tokens": "many"},
    "a fraction": {"output_tokens": 12.5},
    "a list": {"cache_creation_input_tokens": [1]},
    "true": {"input_tokens": True},
    "usage is text": "lots",
}


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("usage", BAD_USAGE.values(), ids=BAD_USAGE.keys())
def test_usage_the_api_cannot_have_meant_is_unknown_with_a_warning(waiting, usage):
    from fake_anthropic import FakeAnthropic, answer, one_memory_per_entry, with_usage

    (waiting / "config.toml").write_text("llm_timeout = 5.0\n")
    with FakeAnthropic(with_usage(answer(one_memory_per_entry), usage)) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
        done = run_briefly("--root", waiting, "dream", "--llm", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    stats = report["stats"]
    assert stats["llm_calls"] == 1 and stats["created"] == 1 and stats["llm_fallback_batches"] == 0
    counted = [stats[k] for k in ("llm_input_tokens", "llm_output_tokens", "llm_cached_tokens",
                                  "llm_cache_write_tokens")]
    assert counted == [0, 0, 0, 0]  # unknown, not a made-up number
    assert stats["llm_estimated_cost_usd"] == 0
    warned = [w for w in report["warnings"] if "usage" in w]
    assert len(warned) == 1, report["warnings"]
    assert sum("usage" in line for line in done.stderr.splitlines()) == 1


@pytest.mark.slow  # starts the installed command
def test_usage_with_null_cache_fields_is_counted(waiting):
    from fake_anthropic import FakeAnthropic, answer, one_memory_per_entry, with_usage

    (waiting / "config.toml").write_text("llm_timeout = 5.0\n")
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": None,
             "cache_creation_input_tokens": None}
    with FakeAnthropic(with_usage(answer(one_memory_per_entry), usage)) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
        done = run_briefly("--root", waiting, "dream", "--llm", "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["stats"]["llm_input_tokens"], report["stats"]["llm_output_tokens"]) == (1200, 300)
    assert not [w for w in report["warnings"] if "usage" in w]


# ---------------------------------------------------------------- 6. an output that cannot be written


def run_with_stdout(argv: list, stdout, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([installed_command(), *map(str, argv)], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=20, **kwargs)


def closed_stdout(argv: list, **kwargs) -> subprocess.CompletedProcess:
    """`auto-dream … >&-`: the child starts with file descriptor 1 closed (sys.stdout is None)."""
    return run_with_stdout(argv, None, preexec_fn=lambda: os.close(1), **kwargs)


def broken_stdout(argv: list, **kwargs) -> subprocess.CompletedProcess:
    """stdout a pipe whose reader is gone: every write fails with EPIPE."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return run_with_stdout(argv, writer, **kwargs)
    finally:
        os.close(writer)


def full_stdout(argv: list, **kwargs) -> subprocess.CompletedProcess:
    """stdout /dev/full: every write fails with ENOSPC."""
    with open("/dev/full", "w") as full:
        return run_with_stdout(argv, full, **kwargs)


LOST_OUTPUTS = [closed_stdout, broken_stdout, full_stdout]
APPENDS = {"fast path": ["append", "a fact worth keeping"], "typer": ["append", "-tproject", "a fact worth keeping"]}


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("lose", LOST_OUTPUTS, ids=["closed", "broken pipe", "disk full"])
@pytest.mark.parametrize("argv", APPENDS.values(), ids=APPENDS.keys())
def test_an_append_whose_confirmation_is_lost_exits_0_and_writes_the_entry_once(root, lose, argv):
    assert (quick_append_arguments(argv) is not None) == (argv[1] != "-tproject")
    done = lose(["--root", root, *argv])
    assert done.returncode == 0, done.stderr  # a caller that retried on failure would append twice
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) <= 1 and all(line.startswith("auto-dream: warning: ") for line in lines), done.stderr
    entries = read_all_entries(StorePaths(root))[0]
    assert [e.text for e in entries] == ["a fact worth keeping"]


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv", APPENDS.values(), ids=APPENDS.keys())
def test_an_append_with_stdout_and_stderr_closed_exits_0(root, argv):
    def close_both():
        os.close(1)
        os.close(2)

    done = subprocess.run([installed_command(), "--root", str(root), *argv], timeout=20, preexec_fn=close_both)
    assert done.returncode == 0
    assert [e.text for e in read_all_entries(StorePaths(root))[0]] == ["a fact worth keeping"]


READERS = {"list": ["list"], "list --json": ["list", "--json"], "check": ["check"], "check --json": ["check", "--json"],
           "dry run": ["dream", "--no-llm", "--dry-run"], "version": ["--version"]}


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv", READERS.values(), ids=READERS.keys())
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(dreamt, argv):
    """`auto-dream check | head -2`: the reader has what it wanted; no error, exit 0."""
    before = tree_hash(dreamt)
    done = broken_stdout(["--root", dreamt, *argv])
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert tree_hash(dreamt) == before


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("lose", [closed_stdout, full_stdout], ids=["closed", "disk full"])
@pytest.mark.parametrize("argv", READERS.values(), ids=READERS.keys())
def test_a_command_whose_output_is_lost_fails_with_one_line(dreamt, lose, argv):
    before = tree_hash(dreamt)
    done = lose(["--root", dreamt, *argv])
    assert done.returncode == 1, done.stderr
    line = one_line(done.stderr)
    assert line.startswith("auto-dream: error: ") and "output" in line
    assert tree_hash(dreamt) == before


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("lose", LOST_OUTPUTS, ids=["closed", "broken pipe", "disk full"])
def test_a_dream_and_an_undo_whose_report_is_lost_are_done_and_exit_0(waiting, lose):
    done = lose(["--root", waiting, "dream", "--no-llm"])
    assert done.returncode == 0, done.stderr
    assert len(done.stderr.splitlines()) <= 1 and "Traceback" not in done.stderr
    assert len(list((waiting / "memories").rglob("*.md"))) == 1
    undone = lose(["--root", waiting, "undo"])
    assert undone.returncode == 0, undone.stderr  # retrying would undo one more run
    assert len(undone.stderr.splitlines()) <= 1 and "Traceback" not in undone.stderr
    assert list((waiting / "memories").rglob("*.md")) == []


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("lose", LOST_OUTPUTS, ids=["closed", "broken pipe", "disk full"])
def test_build_index_and_init_with_a_lost_output_are_done(tmp_path, lose):
    store = tmp_path / "new" / ".auto-dream"
    done = lose(["--root", store, "init"])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (store / "MEMORY.md").is_file()
    built = lose(["--root", store, "build-index"])
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr


@pytest.mark.slow  # starts the installed command
def test_append_dash_with_stdin_closed_is_bad_input(root):
    for argv in APPENDS.values():
        done = subprocess.run([installed_command(), "--root", str(root), *argv[:-1], "-"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=20,
                              preexec_fn=lambda: os.close(0))
        assert done.returncode == 2, done.stderr
        assert "standard input" in one_line(done.stderr)
    assert read_all_entries(StorePaths(root))[0] == []


# ---------------------------------------------------------------- 7. no home folder


@pytest.fixture
def homeless(monkeypatch):
    """No HOME, and a uid without a passwd entry: Path.home() raises RuntimeError."""
    import pwd

    monkeypatch.delenv("HOME", raising=False)

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    with pytest.raises(RuntimeError):
        Path.home()


@pytest.mark.parametrize("argv", [["list"], ["check"], ["build-index"], ["dream", "--no-llm"], ["undo"],
                                  ["append", "-tuser", "a fact"], ["append", "a fact"]])
def test_without_a_home_folder_root_and_env_still_name_the_store(dreamt, cli, homeless, monkeypatch, argv):
    by_flag = cli("--root", dreamt, *argv)
    assert by_flag.code == 0 and "Traceback" not in by_flag.err, by_flag
    assert "home" not in by_flag.err.lower(), by_flag
    monkeypatch.setenv("AUTO_DREAM_ROOT", str(dreamt))
    by_env = cli(*argv)
    assert by_env.code == (1 if argv == ["undo"] else 0) and "home" not in by_env.err.lower(), by_env


def test_without_a_home_folder_the_fast_path_uses_root(root, homeless, capsys):
    found = quick_append_arguments(["--root", str(root), "append", "a fact"])
    assert run_quick_append(found) == 0, capsys.readouterr()
    assert [e.text for e in read_all_entries(StorePaths(root))[0]] == ["a fact"]


def test_without_a_home_folder_a_store_found_upwards_is_used(tmp_path, cli, homeless, monkeypatch):
    project = tmp_path / "project"
    assert cli("init", project).code == 0
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    assert cli("append", "found upwards").code == 0
    assert [e.text for e in read_all_entries(StorePaths(project / ".auto-dream"))[0]] == ["found upwards"]


@pytest.mark.parametrize("argv", [["list"], ["append", "a fact"], ["append", "-tuser", "a fact"]])
def test_without_a_home_folder_and_no_store_named_is_one_error_line(tmp_path, cli, homeless, argv):
    before = tree_hash(tmp_path)
    result = cli(*argv)
    assert result.code == 2, result
    line = one_line(result.err)
    assert "--root" in line and "HOME" in line
    assert tree_hash(tmp_path) == before


def test_a_tilde_root_without_a_home_folder_is_one_error_line(cli, homeless):
    result = cli("--root", "~/.auto-dream", "list")
    assert result.code == 2
    assert "~" in one_line(result.err)


HOMELESS_CHILD = """
import pwd, sys
def no_entry(uid):
    raise KeyError(uid)
pwd.getpwuid = no_entry
sys.argv = ["auto-dream", *sys.argv[1:]]
from auto_dream.__main__ import main
main()
"""


@pytest.mark.slow  # starts a child Python
@pytest.mark.parametrize("argv", [["append", "a fact"], ["append", "-tuser", "a fact"], ["check"], ["list", "--json"]])
def test_a_process_without_home_or_passwd_entry_works_with_root(dreamt, argv):
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    done = subprocess.run([sys.executable, "-c", HOMELESS_CHILD, "--root", str(dreamt), *argv], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    unset = subprocess.run([sys.executable, "-c", HOMELESS_CHILD, *argv], capture_output=True, text=True,
                           timeout=60, env=env, cwd=dreamt.parent.parent)
    assert unset.returncode == 2
    assert "--root" in one_line(unset.stderr)


# ---------------------------------------------------------------- 8. Ctrl-C while starting


INTERRUPTED_CHILD = """
import builtins, sys
real_import = builtins.__import__
target = sys.argv[1]
def interrupted(name, *args, **kwargs):
    if name == target:
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)
builtins.__import__ = interrupted
sys.argv = ["auto-dream", *sys.argv[2:]]
from auto_dream.__main__ import main
main()
"""


@pytest.mark.slow  # starts a child Python
@pytest.mark.parametrize("module, argv", [
    ("auto_dream.cli", ["list"]), ("typer", ["check"]), ("rich.console", ["--version"]),
    ("auto_dream.commands.append", ["append", "a fact"]), ("auto_dream.store.daylog", ["append", "a fact"]),
    ("auto_dream.errors", ["append", "a fact"]), ("pathlib", ["append", "a fact"]),
    ("auto_dream.commands.append", ["append", "-tuser", "a fact"]),
])
def test_ctrl_c_during_the_first_imports_is_one_line_and_exit_130(tmp_path, module, argv):
    root = tmp_path / "store"
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_CHILD, module, "--root", str(root), *argv],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (130, "auto-dream: aborted\n", "")
    assert not root.exists()
