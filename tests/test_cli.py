"""The command line contract (docs/commands.md), run through the real entry points."""

import functools
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import auto_dream
import builders
from auto_dream.__main__ import quick_append_arguments
from conftest import installed_command, run_installed, tree_hash, write_memory_file

NOBODY = 65534
APPENDED = re.compile(r"appended [0-9a-f]{12} to (logs/\d{4}/\d\d/\d{4}-\d\d-\d\d\.md)\n")


def assert_one_error_line(code: int, err: str, expected_code: int) -> str:
    """Every error is one line on stderr starting `auto-dream: error:`, never a traceback."""
    assert code == expected_code, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("auto-dream: error: ")
    return lines[0]


def log_text(root: Path, day: str) -> str:
    year, month, _ = day.split("-")
    return (root / "logs" / year / month / f"{day}.md").read_text(encoding="utf-8")


def memory_text(name: str, memory_type: str, mtime: datetime, description: str | None = None) -> str:
    return builders.memory_text(name, memory_type, mtime, f"Body of {name}.", description or f"About {name}")


def days_ago(days: int) -> datetime:
    # An hour of margin so the age in whole days is exactly `days` while the test runs.
    return datetime.now().astimezone() - timedelta(days=days, hours=1)


# ---------------------------------------------------------------- version and help


def test_version(cli):
    result = cli("--version")
    assert result.code == 0
    assert result.out == f"auto-dream {auto_dream.__version__}\n"


def test_version_matches_the_installed_distribution(cli):
    from importlib.metadata import version

    assert cli("--version").out.split() == ["auto-dream", version("auto-dream")]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command(cli, flag):
    result = cli(flag)
    assert result.code == 0
    commands = re.findall(r"^\s{2}([a-z-]+)\s{2,}", result.out.split("Commands:")[1], re.MULTILINE)
    assert {"init", "append", "list", "check", "build-index"} <= set(commands)


def test_no_arguments_shows_the_help_not_an_error(cli):
    result = cli()
    shown = result.out + result.err
    assert "Commands:" in shown and "append" in shown
    assert "Traceback" not in shown
    # The help is not an error message: no "auto-dream: error: Usage: …" over 17 lines.
    assert "auto-dream: error:" not in shown, shown


@pytest.mark.parametrize("command, options", [("append", ["--type", "--at"]),
                                              ("list", ["--type", "--archived", "--json"]),
                                              ("check", ["--json"])])
def test_command_help_lists_its_options(cli, command, options):
    result = cli(command, "--help")
    assert result.code == 0, result
    assert all(option in result.out for option in options)


def test_unknown_command_is_one_error_line_exit_2(cli):
    result = cli("lst")
    assert "lst" in assert_one_error_line(result.code, result.err, 2)


@pytest.mark.slow  # starts a child Python
def test_python_dash_m_works():
    done = subprocess.run([sys.executable, "-m", "auto_dream", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"auto-dream {auto_dream.__version__}\n"


# ---------------------------------------------------------------- append


def test_append_writes_the_day_file_of_its_timestamp(cli, root):
    result = cli("--root", root, "append", "--type", "project", "--at", "2026-04-01 14:30", "Ship v2 on Friday")
    assert result.code == 0, result
    assert APPENDED.fullmatch(result.out).group(1) == "logs/2026/04/2026-04-01.md"
    assert log_text(root, "2026-04-01") == "- [2026-04-01 14:30:00] (project) Ship v2 on Friday\n"


def test_append_without_at_goes_to_todays_log(cli, root):
    before = datetime.now()
    assert cli("--root", root, "append", "right now").code == 0
    after = datetime.now()
    logs = [p.relative_to(root).as_posix() for p in root.glob("logs/*/*/*.md")]
    assert len(logs) == 1
    assert logs[0] in {f"logs/{d:%Y}/{d:%m}/{d:%Y-%m-%d}.md" for d in (before, after)}
    line = (root / logs[0]).read_text(encoding="utf-8")
    stamped = datetime.strptime(line[3:22], "%Y-%m-%d %H:%M:%S")
    assert before.replace(microsecond=0) <= stamped <= after
    assert line.endswith("] right now\n")


def test_entries_of_a_day_accumulate_in_order(cli, root):
    cli("--root", root, "append", "--at", "2026-04-01 09:00", "first")
    cli("--root", root, "append", "-t", "user", "--at", "2026-04-01 10:00", "second")
    cli("--root", root, "append", "--at", "2026-04-02 08:00", "next day")
    assert log_text(root, "2026-04-01") == ("- [2026-04-01 09:00:00] first\n"
                                            "- [2026-04-01 10:00:00] (user) second\n")
    assert log_text(root, "2026-04-02") == "- [2026-04-02 08:00:00] next day\n"


@pytest.mark.parametrize("entry_type", ["user", "feedback", "project", "reference"])
def test_append_type_marks_the_entry(cli, root, entry_type):
    assert cli("--root", root, "append", "--type", entry_type, "--at", "2026-04-01 09:00", "x").code == 0
    assert log_text(root, "2026-04-01") == f"- [2026-04-01 09:00:00] ({entry_type}) x\n"


@pytest.mark.parametrize("at, stamp", [
    ("2026-04-01 14:30", "2026-04-01 14:30:00"),
    ("2026-04-01T14:30:05", "2026-04-01 14:30:05"),
    ("2026-04-01T14:30:05+08:00", "2026-04-01 06:30:05"),
    ("2026-04-01T23:30:00-05:00", "2026-04-02 04:30:00"),
    ("2026-04-01T14:30:05Z", "2026-04-01 14:30:05"),
])
def test_append_at_accepts_both_documented_forms(cli, root, at, stamp):
    (root / "config.toml").write_text('timezone = "UTC"\n')
    assert cli("--root", root, "append", "--at", at, "dated").code == 0
    assert log_text(root, stamp[:10]) == f"- [{stamp}] dated\n"


def test_append_dash_reads_multiline_text_from_stdin(cli, root):
    text = "Don't mock the database in integration tests.\nReason: the mocked tests passed.\n"
    result = cli("--root", root, "append", "-t", "feedback", "--at", "2026-04-01 14:31:10", "-", stdin=text)
    assert result.code == 0, result
    assert log_text(root, "2026-04-01") == (
        "- [2026-04-01 14:31:10] (feedback) Don't mock the database in integration tests.\n"
        "  Reason: the mocked tests passed.\n")


def test_append_joins_several_words_with_spaces(cli, root):
    assert cli("--root", root, "append", "--at", "2026-04-01 09:00", "use", "uv,", "not", "pip").code == 0
    assert log_text(root, "2026-04-01") == "- [2026-04-01 09:00:00] use uv, not pip\n"


def test_append_keeps_cjk_and_a_leading_bracket_as_text(cli, root):
    cli("--root", root, "append", "--at", "2026-04-01 09:00", "--", "(project) 用户想通过内容平台分享知识")
    from auto_dream.store.daylog import read_all_entries
    from auto_dream.store.paths import StorePaths

    entries, problems = read_all_entries(StorePaths(root))
    assert problems == []
    assert [(e.text, e.type) for e in entries] == [("(project) 用户想通过内容平台分享知识", None)]


def test_append_creates_a_missing_store(cli, tmp_path):
    root = tmp_path / "new" / ".auto-dream"
    assert cli("--root", root, "append", "--at", "2026-04-01 09:00", "first fact").code == 0
    assert log_text(root, "2026-04-01") == "- [2026-04-01 09:00:00] first fact\n"
    assert all((root / d).is_dir() for d in ("memories/user", "archive", ".state"))


# ---------------------------------------------------------------- append: bad input


FUTURE = (datetime.now() + timedelta(days=3)).strftime("%Y-%m-%d %H:%M")

BAD_APPENDS = [
    pytest.param(["append", ""], None, "empty", id="empty text"),
    pytest.param(["append", "  \t  "], None, "empty", id="whitespace text"),
    pytest.param(["append", "-"], "  \n\n \t\n", "empty", id="whitespace stdin"),
    pytest.param(["append", "--type", "idea", "x"], None, "'idea'", id="unknown type"),
    pytest.param(["append", "--at", "next tuesday", "x"], None, "next tuesday", id="bad at"),
    pytest.param(["append", "--at", "2026-02-30 10:00", "x"], None, "2026-02-30", id="impossible date"),
    pytest.param(["append", "--at", FUTURE, "x"], None, "future", id="future at"),
    pytest.param(["append", "--colour", "red", "x"], None, "--colour", id="unknown option"),
    pytest.param(["append"], None, "TEXT", id="missing text"),
    pytest.param(["append", "--type", "user"], None, "TEXT", id="only a type"),
]


@pytest.mark.parametrize("argv, stdin, named", BAD_APPENDS)
def test_bad_append_is_one_error_line_exit_2_and_changes_nothing(cli, root, argv, stdin, named):
    cli("--root", root, "append", "--at", "2026-04-01 09:00", "already there")
    before = tree_hash(root)
    result = cli("--root", root, *argv, stdin=stdin)
    line = assert_one_error_line(result.code, result.err, 2)
    assert named in line
    assert result.out == ""
    assert tree_hash(root) == before


@pytest.mark.parametrize("argv, stdin, named", BAD_APPENDS)
def test_bad_append_does_not_create_the_store(cli, tmp_path, argv, stdin, named):
    root = tmp_path / "project" / ".auto-dream"
    result = cli("--root", root, *argv, stdin=stdin)
    assert_one_error_line(result.code, result.err, 2)
    assert not (tmp_path / "project").exists()


@pytest.mark.slow  # starts the installed command
def test_bad_append_through_the_installed_command(tmp_path):
    root = tmp_path / "project" / ".auto-dream"
    for argv in (["append", ""], ["append", "--type", "idea", "x"], ["append", "--at", "soon", "x"],
                 ["append", "--bogus", "x"], ["append"]):
        done = run_installed("--root", root, *argv)
        assert_one_error_line(done.returncode, done.stderr, 2)
        assert done.stdout == ""
    assert not (tmp_path / "project").exists()


def test_root_that_is_a_file_stops_append_with_exit_1(cli, tmp_path):
    root = tmp_path / "store"
    root.write_text("I am a file\n")
    before = tree_hash(tmp_path)
    result = cli("--root", root, "append", "a fact")
    line = assert_one_error_line(result.code, result.err, 1)
    assert str(root) in line
    assert tree_hash(tmp_path) == before
    assert root.read_text() == "I am a file\n"


@pytest.mark.parametrize("command", [["list"], ["check", "--json"], ["build-index"]])
def test_root_that_is_a_file_stops_other_commands_with_exit_1(cli, tmp_path, command):
    (tmp_path / "store").write_text("I am a file\n")
    result = cli("--root", tmp_path / "store", *command)
    line = assert_one_error_line(result.code, result.err, 1)
    assert str(tmp_path / "store") in line
    assert result.out == ""


# ---------------------------------------------------------------- append: a store it may not write


@functools.cache
def installed_runs_as(uid: int) -> bool:
    """Whether `uid` can run the installed command (the venv's interpreter may sit in /root)."""
    try:
        done = subprocess.run([installed_command(), "--version"], user=uid, group=uid, extra_groups=[],
                              cwd="/", capture_output=True, timeout=60)
    except OSError:
        return False
    return done.returncode == 0


def run_entry_point_as(uid: int, argv: list[str]) -> tuple[int, str, str]:
    """Run the installed entry point (`auto_dream.__main__.main`) in a forked process as `uid`.

    The fallback when `uid` cannot reach the venv's interpreter: the child drops its
    privileges for real, so the operating system, not the test, refuses the write.
    """
    import tomllib  # noqa: F401  stdlib the child could not import from a private prefix
    import zoneinfo  # noqa: F401

    from auto_dream.__main__ import main

    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            os.close(out_read)
            os.close(err_read)
            os.dup2(out_write, 1)
            os.dup2(err_write, 2)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            sys.stdin = io.StringIO("")
            os.chdir("/")
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            sys.argv = ["auto-dream", *argv]
            try:
                main()
                code = 0
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(out_write)
    os.close(err_write)
    with open(out_read, "rb") as out_file, open(err_read, "rb") as err_file:
        out, err = out_file.read(), err_file.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(), err.decode()


@pytest.fixture
def reachable_folder(tmp_path):
    """A folder another user can reach: tmp_path's parents are private to the user running pytest."""
    if os.geteuid() != 0:
        yield tmp_path
        for path in [tmp_path, *tmp_path.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o700)
        return
    folder = Path(tempfile.mkdtemp(prefix="auto-dream-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def deny_writes(root: Path) -> None:
    """Make `root` readable but not writable for the user `append_as_another_user` runs as."""
    # As root: root-owned and 0755, so `nobody` may read it; otherwise: our own, read-only.
    mode = 0o755 if os.geteuid() == 0 else 0o555
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        folder.chmod(mode)


def append_as_another_user(cli, root: Path, text: str) -> tuple[int, str, str]:
    """`append` into `root` as a user without write permission (`nobody` when tests run as root)."""
    argv = ["--root", str(root), "append", "--at", "2026-04-01 09:00", text]
    if os.geteuid() != 0:
        result = cli(*argv)
        return result.code, result.out, result.err
    if installed_runs_as(NOBODY):
        done = subprocess.run([installed_command(), *argv], user=NOBODY, group=NOBODY, extra_groups=[],
                              cwd="/", capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr
    return run_entry_point_as(NOBODY, argv)


@pytest.mark.slow  # starts the installed command
def test_append_to_a_store_it_cannot_write_exits_1_naming_the_path(cli, reachable_folder):
    from auto_dream.store.paths import ensure_store

    root = reachable_folder / ".auto-dream"
    ensure_store(root)
    deny_writes(root)
    before = tree_hash(root)
    code, out, err = append_as_another_user(cli, root, "not allowed")
    line = assert_one_error_line(code, err, 1)
    assert str(root) in line
    assert "permission denied" in line.lower()
    assert out == ""
    assert tree_hash(root) == before


@pytest.mark.slow  # starts the installed command
def test_append_to_a_root_folder_it_cannot_write_exits_1_naming_the_path(cli, reachable_folder):
    root = reachable_folder / "locked"
    root.mkdir()
    deny_writes(root)
    code, out, err = append_as_another_user(cli, root, "not allowed")
    line = assert_one_error_line(code, err, 1)
    assert str(root) in line
    assert out == ""
    assert list(root.iterdir()) == []


@pytest.mark.slow  # starts the installed command
def test_the_same_append_succeeds_once_writes_are_allowed(cli, reachable_folder):
    """The refusal above comes from the permissions, not from the way the command is run."""
    root = reachable_folder / "open"
    root.mkdir()
    if os.geteuid() == 0:
        os.chown(root, NOBODY, NOBODY)
    code, out, err = append_as_another_user(cli, root, "allowed")
    assert code == 0, err
    assert log_text(root, "2026-04-01") == "- [2026-04-01 09:00:00] allowed\n"


# ---------------------------------------------------------------- list


@pytest.fixture
def stocked(root) -> Path:
    """Three memories (two project, one user) and one archived."""
    write_memory_file(root, "memories/user/20260301_Reading.md",
                      memory_text("Reading goal", "user", days_ago(10), "One book a week"))
    write_memory_file(root, "memories/project/20260320_Deploy.md",
                      memory_text("Deploy day", "project", days_ago(2), "Deploys happen on Tuesdays"))
    write_memory_file(root, "memories/project/20260321_Freeze.md",
                      memory_text("Code freeze", "project", days_ago(1), "Freeze starts in May"))
    write_memory_file(root, "archive/feedback/20250101_Old.md",
                      memory_text("Old rule", "feedback", days_ago(200), "Retired long ago"))
    return root


def test_list_json_shape(cli, stocked):
    result = cli("--root", stocked, "list", "--json")
    assert result.code == 0, result
    assert result.err == ""
    listed = json.loads(result.out)
    assert isinstance(listed, list)
    assert all(set(m) == {"path", "name", "type", "description", "mtime", "age_days", "status"} for m in listed)
    assert all(m["status"] is None for m in listed)
    assert [(m["path"], m["type"], m["age_days"]) for m in listed] == [
        ("memories/user/20260301_Reading.md", "user", 10),
        ("memories/project/20260321_Freeze.md", "project", 1),  # newest first inside a type
        ("memories/project/20260320_Deploy.md", "project", 2),
    ]
    reading = listed[0]
    assert (reading["name"], reading["description"]) == ("Reading goal", "One book a week")
    assert abs(datetime.fromisoformat(reading["mtime"]) - days_ago(10)) < timedelta(minutes=1)
    assert not any(Path(m["path"]).is_absolute() for m in listed)
    assert all((stocked / m["path"]).is_file() for m in listed)


def test_list_type_filters(cli, stocked):
    listed = json.loads(cli("--root", stocked, "list", "--type", "project", "--json").out)
    assert [m["name"] for m in listed] == ["Code freeze", "Deploy day"]
    assert json.loads(cli("--root", stocked, "list", "-t", "reference", "--json").out) == []


def test_list_unknown_type_is_bad_input(cli, stocked):
    result = cli("--root", stocked, "list", "--type", "ideas")
    assert "'ideas'" in assert_one_error_line(result.code, result.err, 2)


def test_list_archived_shows_the_archive_instead(cli, stocked):
    listed = json.loads(cli("--root", stocked, "list", "--archived", "--json").out)
    assert [(m["path"], m["type"], m["name"]) for m in listed] == [
        ("archive/feedback/20250101_Old.md", "feedback", "Old rule")]


def test_list_human_output_groups_by_type_in_design_order(cli, stocked):
    result = cli("--root", stocked, "list")
    assert result.code == 0, result
    out = result.out
    assert "FEEDBACK" not in out and "REFERENCE" not in out  # empty groups are not shown
    order = [out.index(s) for s in ("USER (1)", "Reading goal", "PROJECT (2)", "Code freeze", "Deploy day")]
    assert order == sorted(order)
    assert "Old rule" not in out


def test_list_human_output_says_how_long_ago(cli, stocked):
    out = cli("--root", stocked, "list").out
    reading = next(line for line in out.splitlines() if "Reading goal" in line)
    assert "ago" in reading, reading  # "1 week ago", not "1 week before"


def test_list_human_output_keeps_each_path_whole_when_piped(cli, root):
    path = "memories/feedback/20260401_Do_not_mock_the_database_in_integration_tests.md"
    write_memory_file(root, path, memory_text("Do not mock the database in integration tests", "feedback",
                                              days_ago(1), "The mocked tests passed while the migration failed"))
    out = cli("--root", root, "list").out
    assert path in out, out


def test_list_and_check_show_what_a_person_marked_a_memory(cli, stocked):
    write_memory_file(stocked, "memories/project/20260310_Deploy_old.md",
                      memory_text("Deploy day (old)", "project", days_ago(20),
                                  "Superseded by `20260320_Deploy.md`: deploys moved to Tuesdays"))
    status = {"kind": "superseded", "quote": "Superseded by `20260320_Deploy.md`: deploys moved to Tuesdays",
              "points_to": ["20260320_Deploy.md"]}
    listed = {m["name"]: m["status"] for m in json.loads(cli("--root", stocked, "list", "--json").out)}
    assert listed == {"Reading goal": None, "Code freeze": None, "Deploy day": None, "Deploy day (old)": status}
    checked = {m["path"]: m["status"] for m in json.loads(cli("--root", stocked, "check", "--json").out)["memories"]}
    assert checked["memories/project/20260310_Deploy_old.md"] == status
    assert sum(1 for value in checked.values() if value) == 1
    marker = "[superseded → 20260320_Deploy.md]"
    assert [line for line in cli("--root", stocked, "list").out.splitlines() if marker in line] == [
        next(line for line in cli("--root", stocked, "list").out.splitlines() if "Deploy day (old)" in line)]
    assert marker in next(line for line in cli("--root", stocked, "check").out.splitlines()
                          if "20260310_Deploy_old.md" in line)


def test_list_empty_store_and_empty_archive(cli, root):
    assert cli("--root", root, "list").out.strip() == "no memories yet"
    assert cli("--root", root, "list", "--archived").out.strip() == "no archived memories"
    assert json.loads(cli("--root", root, "list", "--json").out) == []


def test_list_reports_a_broken_file_and_lists_the_good_ones(cli, stocked):
    broken = write_memory_file(stocked, "memories/project/20260322_Broken.md",
                               "---\nname: [unclosed\ndescription: x\n---\nbody\n")
    content = broken.read_bytes()
    result = cli("--root", stocked, "list", "--json")
    assert result.code == 0, result
    listed = json.loads(result.out)  # one JSON document despite the warning
    assert [m["name"] for m in listed] == ["Reading goal", "Code freeze", "Deploy day"]
    warnings = result.err.splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("auto-dream: warning: ") and "memories/project/20260322_Broken.md" in warnings[0]
    assert broken.read_bytes() == content

    human = cli("--root", stocked, "list")
    assert human.code == 0 and "Deploy day" in human.out and "20260322_Broken.md" in human.err


# ---------------------------------------------------------------- check


def test_check_json_shape(cli, stocked):
    result = cli("--root", stocked, "check", "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert set(report) == {"undistilled_entries", "last_dream", "dream_due", "index_in_sync", "decayed", "memories",
                           "review_pending"}
    assert report["review_pending"] == 0
    assert report["undistilled_entries"] == 0
    assert report["last_dream"] is None
    assert report["dream_due"] is False
    assert isinstance(report["index_in_sync"], bool)
    assert all(set(m) == {"path", "freshness", "staleness", "missing_refs", "status"} for m in report["memories"])
    assert sorted(m["path"] for m in report["memories"]) == [
        "memories/project/20260320_Deploy.md", "memories/project/20260321_Freeze.md",
        "memories/user/20260301_Reading.md"]
    assert all(isinstance(m["missing_refs"], list) for m in report["memories"])


def test_check_freshness_colours_at_the_boundaries(cli, root):
    ages = {0: "green", 7: "green", 8: "yellow", 30: "yellow", 31: "red"}
    for age in ages:
        write_memory_file(root, f"memories/project/age_{age:02}.md",
                          memory_text(f"Age {age}", "project", days_ago(age)))
    report = json.loads(cli("--root", root, "check", "--json").out)
    found = {m["path"]: m["freshness"] for m in report["memories"]}
    assert found == {f"memories/project/age_{age:02}.md": colour for age, colour in ages.items()}


def test_check_counts_appended_entries(cli, root):
    for minute in range(3):
        cli("--root", root, "append", "--at", f"2026-04-01 09:0{minute}", f"fact {minute}")
    cli("--root", root, "append", "--at", "2026-04-02 09:00", "on another day")
    report = json.loads(cli("--root", root, "check", "--json").out)
    assert report["undistilled_entries"] == 4


@pytest.mark.parametrize("waiting, due", [(4, False), (5, True)])
def test_check_dream_due_after_five_waiting_entries_with_no_dream(cli, root, waiting, due):
    for number in range(waiting):
        cli("--root", root, "append", "--at", f"2026-04-01 09:0{number}", f"fact {number}")
    report = json.loads(cli("--root", root, "check", "--json").out)
    assert (report["undistilled_entries"], report["dream_due"], report["last_dream"]) == (waiting, due, None)


def test_check_index_drift(cli, stocked):
    def in_sync() -> bool:
        return json.loads(cli("--root", stocked, "check", "--json").out)["index_in_sync"]

    assert not (stocked / "MEMORY.md").exists()
    assert in_sync() is False
    assert cli("--root", stocked, "build-index").code == 0
    assert in_sync() is True
    write_memory_file(stocked, "memories/reference/20260401_Api.md",
                      memory_text("API docs", "reference", days_ago(0)))
    assert in_sync() is False  # stale: a memory is missing from it
    cli("--root", stocked, "build-index")
    assert in_sync() is True
    with open(stocked / "MEMORY.md", "a", encoding="utf-8") as index:
        index.write("- [hand-added](nowhere.md)\n")
    assert in_sync() is False


def test_check_human_output(cli, stocked):
    cli("--root", stocked, "append", "--at", "2026-04-01 09:00", "one waiting")
    result = cli("--root", stocked, "check")
    assert result.code == 0, result
    assert "entries waiting for a dream: 1" in result.out
    assert "last dream: never; dream due: no" in result.out
    assert "auto-dream build-index" in result.out  # MEMORY.md is missing: says how to fix it
    assert "memories/user/20260301_Reading.md" in result.out


def test_check_json_stays_one_document_with_warnings(cli, stocked):
    write_memory_file(stocked, "memories/user/20260402_Bad.md", b"---\nname: x\n---\n\xff\xfe\n")
    logs = stocked / "logs" / "2026" / "04"
    logs.mkdir(parents=True)
    (logs / "2026-04-01.md").write_text("- [2026-04-01 09:00] fine\n- [2026-13-45 99:99] broken date\n")
    result = cli("--root", stocked, "check", "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert report["undistilled_entries"] == 1
    assert "20260402_Bad.md" in result.err and "2026-04-01.md:2" in result.err
    assert all(line.startswith("auto-dream: warning: ") for line in result.err.splitlines())


# ---------------------------------------------------------------- dream: flags beat config


@pytest.mark.parametrize("config, flags, mode", [("", [], "apply"), ('mode = "propose"\n', [], "propose"),
                                                 ("", ["--propose"], "propose")])
def test_dream_mode_is_the_flag_else_the_config(cli, root, config, flags, mode):
    (root / "config.toml").write_text(config)
    result = cli("--root", root, "dream", "--dry-run", "--json", *flags)
    assert result.code == 0, result
    assert json.loads(result.out)["mode"] == mode


# ---------------------------------------------------------------- a missing store


@pytest.mark.parametrize("command", [["list"], ["list", "--json"], ["check"], ["check", "--json"],
                                     ["build-index"]])
def test_reading_commands_on_a_missing_store_ask_for_init(cli, tmp_path, command):
    root = tmp_path / "nothing-here"
    result = cli("--root", root, *command)
    line = assert_one_error_line(result.code, result.err, 1)
    assert "auto-dream init" in line and str(root) in line
    assert result.out == ""
    assert not root.exists()


def test_missing_store_found_by_default_lookup_asks_for_init(cli, isolated_env):
    result = cli("list")
    line = assert_one_error_line(result.code, result.err, 1)
    assert "auto-dream init" in line and str(isolated_env / ".auto-dream") in line


# ---------------------------------------------------------------- errors print exactly what was given


def test_error_line_quotes_the_bad_value_as_typed(cli, root):
    result = cli("--root", root, "list", "--type", ":fire:")
    assert "':fire:'" in assert_one_error_line(result.code, result.err, 2)


# ---------------------------------------------------------------- the fast append path


@pytest.mark.parametrize("argv, expected", [
    (["append", "hello"], {"root": None, "type": None, "at": None, "words": ["hello"]}),
    (["append", "use", "uv"], {"root": None, "type": None, "at": None, "words": ["use", "uv"]}),
    (["--root", "R", "append", "x"], {"root": "R", "type": None, "at": None, "words": ["x"]}),
    (["--root=R", "append", "x"], {"root": "R", "type": None, "at": None, "words": ["x"]}),
    (["append", "--type", "user", "x"], {"root": None, "type": "user", "at": None, "words": ["x"]}),
    (["append", "-t", "user", "x"], {"root": None, "type": "user", "at": None, "words": ["x"]}),
    (["append", "--type=user", "x"], {"root": None, "type": "user", "at": None, "words": ["x"]}),
    (["append", "x", "--at", "2026-04-01 14:30"],
     {"root": None, "type": None, "at": "2026-04-01 14:30", "words": ["x"]}),
    (["append", "--at=2026-04-01T14:30:00+08:00", "x"],
     {"root": None, "type": None, "at": "2026-04-01T14:30:00+08:00", "words": ["x"]}),
    (["append", "--", "--type", "-t", "x"], {"root": None, "type": None, "at": None,
                                             "words": ["--type", "-t", "x"]}),
    (["append", "-t", "feedback", "-"], {"root": None, "type": "feedback", "at": None, "words": ["-"]}),
    (["--root", "R", "append", "-t", "project", "--at", "2026-04-01 09:00", "--", "-x", "y"],
     {"root": "R", "type": "project", "at": "2026-04-01 09:00", "words": ["-x", "y"]}),
])
def test_fast_path_recognises_plain_appends(argv, expected):
    assert quick_append_arguments(argv) == expected


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["-h"], ["--version"], ["append", "--help"], ["append", "-h"], ["append", "x", "--help"],
    ["append", "--bogus", "x"], ["append", "-x"], ["append"], ["append", "--"], ["append", "--type", "user"],
    ["append", "x", "--at"], ["list"], ["--root", "R", "list"], ["init"], ["check", "--json"],
    ["--root", "R"], ["append", "x", "--root", "R"],
])
def test_fast_path_leaves_everything_else_to_typer(argv):
    assert quick_append_arguments(argv) is None


PARITY_CASES = [
    pytest.param(["append", "--type", "feedback", "--at", "2026-04-01 14:30:05",
                  "Don't", "mock", "the", "DB."], None, id="words and type"),
    pytest.param(["append", "-t", "project", "--at=2026-04-01T14:30:00+00:00", "-"],
                 "first line\n  indented (user) \n\n- [2026-04-01 09:00] not an entry\tTab\n",
                 id="stdin multi-line"),
    pytest.param(["append", "--at", "2026-04-01 08:00", "--", "(user) 用户 \\ [x]"], None, id="tricky text"),
]


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv, stdin", PARITY_CASES)
def test_installed_fast_path_and_typer_write_identical_lines(cli, tmp_path, argv, stdin):
    fast_root, typer_root = tmp_path / "fast", tmp_path / "typer"
    config = 'timezone = "Asia/Shanghai"\n'
    for root in (fast_root, typer_root):
        root.mkdir()
        (root / "config.toml").write_text(config)
    assert quick_append_arguments(["--root", str(fast_root), *argv]) is not None  # really the fast path
    fast = run_installed("--root", fast_root, *argv, stdin=stdin)
    typer = cli("--root", typer_root, *argv, stdin=stdin)
    assert (fast.returncode, typer.code) == (0, 0), (fast.stderr, typer.err)
    assert fast.stdout == typer.out
    assert APPENDED.fullmatch(fast.stdout)
    fast_logs = {p.relative_to(fast_root): p.read_bytes() for p in fast_root.glob("logs/*/*/*.md")}
    typer_logs = {p.relative_to(typer_root): p.read_bytes() for p in typer_root.glob("logs/*/*/*.md")}
    assert fast_logs == typer_logs and len(fast_logs) == 1


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv", [["append", "--type", "idea", "x"], ["append", "--at", "someday", "x"],
                                  ["append", " "]])
def test_installed_fast_path_and_typer_fail_alike(cli, tmp_path, argv):
    root = tmp_path / "store"
    fast = run_installed("--root", root, *argv)
    typer = cli("--root", root, *argv)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.code, typer.out, typer.err)
    assert_one_error_line(fast.returncode, fast.stderr, 2)


@pytest.mark.slow  # starts the installed command
def test_installed_append_without_at_is_stamped_now(tmp_path):
    root = tmp_path / "store"
    before = datetime.now()
    done = run_installed("--root", root, "append", "-t", "user", "now")
    after = datetime.now()
    assert done.returncode == 0, done.stderr
    day_file = root / APPENDED.fullmatch(done.stdout).group(1)
    line = day_file.read_text(encoding="utf-8")
    assert before.replace(microsecond=0) <= datetime.strptime(line[3:22], "%Y-%m-%d %H:%M:%S") <= after
    assert line.endswith("] (user) now\n")


def wait_until_reading_stdin(process: subprocess.Popen) -> None:
    """Block until `process` sits in read(0, …), so a signal lands while it waits for input."""
    syscall = Path(f"/proc/{process.pid}/syscall")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if syscall.read_text().startswith("0 0x0 "):  # syscall 0 = read, on fd 0
                return
        except OSError:
            time.sleep(1)  # no /proc/PID/syscall here: give it time to start instead
            return
        time.sleep(0.01)


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("argv, fast", [(["append", "-"], True), (["append", "-tuser", "-"], False)],
                         ids=["fast path", "typer"])
def test_ctrl_c_while_append_reads_stdin_is_one_line_not_a_traceback(tmp_path, argv, fast):
    root = tmp_path / "store"
    assert (quick_append_arguments(argv) is not None) == fast
    # as from a terminal, where Ctrl-C is not ignored: a suite started in the background by a
    # non-interactive shell (`make test &`, nohup) passes SIGINT on ignored, and Python keeps that
    process = subprocess.Popen([installed_command(), "--root", str(root), *argv], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until_reading_stdin(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert "Traceback" not in err, err
    assert len(err.splitlines()) <= 1, err  # Typer exits quietly; at most one line like "aborted"
    assert (process.returncode, out) == (130, "")
    assert not root.exists()


def test_a_dream_without_claude_shows_no_llm_rows_and_tells_each_warning_once(cli, root):
    (root / "memories" / "project" / "broken.md").write_bytes(b"\xff\xfe not utf-8")
    assert cli("--root", root, "append", "--type", "project", "The billing service runs on Kafka").code == 0
    result = cli("--root", root, "dream", "--no-llm")
    assert result.code == 0
    assert "LLM calls" not in result.out and "LLM input tokens" not in result.out
    warning = next(line for line in result.err.splitlines() if "broken.md" in line)
    assert (result.out + result.err).count("broken.md") == 1, warning
    saved = next((root / ".state" / "runs").iterdir()) / "report.md"
    assert "broken.md" in saved.read_text()  # the saved report keeps it


def test_append_takes_a_relative_time(cli, root):
    result = cli("--root", root, "append", "--at", "yesterday 15:00", "The user moved to Porto")
    assert result.code == 0, result.err
    [log] = (root / "logs").rglob("*.md")
    assert "15:00:00] The user moved to Porto" in log.read_text()


@pytest.mark.parametrize("command", ["append", "init", "recall", "undo", "resolve", "forget", "show", "discover"])
def test_help_names_what_to_give_not_python_types(cli, command):
    result = cli(command, "--help")
    assert result.code == 0
    for python_type in ("<str>", "<list[str]>", "[[", "…}"):
        assert python_type not in result.out, (command, python_type)


@pytest.mark.parametrize("width", [60, 100, 160])
def test_list_fits_a_terminal_and_never_cuts_a_path(cli, stocked, monkeypatch, width):
    from rich.cells import cell_len
    from rich.console import Console

    import auto_dream.cli as cli_module
    from auto_dream.console import stdout_file

    monkeypatch.setattr(cli_module, "stdout", Console(file=stdout_file, width=width, highlight=False, emoji=False,
                                                      soft_wrap=True, color_system=None))
    out = cli("--root", stocked, "list").out
    paths = json.loads(cli("--root", stocked, "list", "--json").out)
    for memory in paths:
        assert memory["path"] in out  # whole, on one line
    assert all(cell_len(line) <= max(width, 2 + max(len(m["path"]) for m in paths)) for line in out.splitlines())
