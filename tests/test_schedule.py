"""`schedule install|remove|status`: cron/'s schedules for the current store, through fake
`crontab`, `systemctl` and `launchctl` commands first on PATH that record what they are asked."""

import json
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from auto_dream import shell
from auto_dream.commands.schedule import (
    Surroundings,
    Target,
    crontab_with,
    crontab_without,
    schedule_id,
    systemd_units,
)
from auto_dream.errors import StoreError
from auto_dream.store.daylog import Entry, append_entry
from auto_dream.store.paths import ensure_store

auto_dream_command = shell.auto_dream_command
RUNS = shlex.join(auto_dream_command())  # how the installed schedules start auto-dream, as the hooks do

# The fakes are Python scripts run by this test's Python. Each appends {tool, argv, stdin} to
# calls.jsonl. crontab keeps its table in crontab.table (none: `crontab -l` says "no crontab
# for", exit 1, as Vixie cron and cronie do) and takes a last line without a newline, as Vixie
# cron does (cronie refuses such a table, so none of its crontabs ends that way). systemctl
# keeps the enabled timers and launchctl the loaded agents, each answering as the real one does
# when asked the impossible (launchctl bootstrap of a loaded agent: "Bootstrap failed: 5",
# bootout of one not loaded: 3).
FAKE = r'''#!{python}
import json, os, plistlib, sys
STATE = {state!r}
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
stdin = sys.stdin.buffer.read() if name == "crontab" and args == ["-"] else b""
with open(os.path.join(STATE, "calls.jsonl"), "a") as log:
    log.write(json.dumps({{"tool": name, "argv": args, "stdin": stdin.decode("utf-8", "surrogateescape")}}) + "\n")
failing = os.path.join(STATE, name + ".fails")
once = os.path.join(STATE, name + ".fails-once")
if os.path.exists(failing) and open(failing).read().strip() in args:
    sys.stderr.write(name + ": it went wrong\n")
    sys.exit(1)
if os.path.exists(once) and open(once).read().strip() in args:
    os.remove(once)
    sys.stderr.write(name + ": it went wrong this time\n")
    sys.exit(1)
table = os.path.join(STATE, "crontab.table")
def listed(kind):
    path = os.path.join(STATE, kind)
    return set(open(path).read().split()) if os.path.exists(path) else set()
def keep(kind, names):
    open(os.path.join(STATE, kind), "w").write("\n".join(sorted(names)))
if name == "crontab":
    if args == ["-l"]:
        if not os.path.exists(table):
            sys.stderr.write("no crontab for tester\n")
            sys.exit(1)
        sys.stdout.buffer.write(open(table, "rb").read())
    elif args == ["-"]:
        open(table, "wb").write(stdin)
    elif args == ["-r"]:
        os.remove(table)
    else:
        sys.exit(2)
elif name == "systemctl":
    if args[:1] != ["--user"]:
        sys.exit(1)
    enabled = listed("enabled")
    if args[1:3] == ["enable", "--now"]:
        keep("enabled", enabled | {{args[3]}})
    elif args[1:3] == ["disable", "--now"]:
        keep("enabled", enabled - {{args[3]}})
elif name == "launchctl":
    loaded = listed("loaded")
    if args[0] == "bootstrap":
        label = plistlib.load(open(args[2], "rb"))["Label"]
        if label in loaded:
            sys.stderr.write("Bootstrap failed: 5: Input/output error\n")
            sys.exit(5)
        keep("loaded", loaded | {{label}})
    elif args[0] == "bootout":
        label = args[1].rsplit("/", 1)[1]
        if label not in loaded:
            sys.stderr.write("Boot-out failed: 3: No such process\n")
            sys.exit(3)
        keep("loaded", loaded - {{label}})
'''

USER_CRONTAB = (b"# my own jobs\n"
                b"MAILTO=me@example.com\n"
                b"\n"
                b"*/5 * * * * /usr/local/bin/backup --quiet\n"
                b"# a comment with a percent: 100% mine, and latin-1 \xe9\n"
                b"0 12 * * * date +\\%F >> /tmp/noon.log")  # no newline at the end


class Fakes:
    """The fake tools' folder, their record of calls, the crontab they keep."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.bin = folder / "bin"

    def install(self, *names: str) -> None:
        self.bin.mkdir(parents=True, exist_ok=True)
        for name in names:
            path = self.bin / name
            path.write_text(FAKE.format(python=sys.executable, state=str(self.folder)))
            path.chmod(0o755)

    def calls(self, tool: str | None = None) -> list[dict]:
        log = self.folder / "calls.jsonl"
        found = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return [call for call in found if tool is None or call["tool"] == tool]

    def argvs(self, tool: str) -> list[list[str]]:
        return [call["argv"] for call in self.calls(tool)]

    @property
    def table_path(self) -> Path:
        return self.folder / "crontab.table"

    @property
    def table(self) -> bytes | None:
        return self.table_path.read_bytes() if self.table_path.exists() else None

    def fail(self, tool: str, word: str, once: bool = False) -> None:
        """`tool` fails when asked anything with `word` in it: every time, or only the next time."""
        (self.folder / f"{tool}.fails{'-once' if once else ''}").write_text(word)

    def listed(self, kind: str) -> set[str]:
        path = self.folder / kind
        return set(path.read_text().split()) if path.exists() else set()


@pytest.fixture
def fakes(tmp_path, monkeypatch) -> Fakes:
    """crontab, systemctl and launchctl fakes alone on PATH; systemd not running, not macOS."""
    made = Fakes(tmp_path / "fakes")
    made.install("crontab", "systemctl", "launchctl")
    monkeypatch.setenv("PATH", str(made.bin))
    monkeypatch.setattr(shell, "SYSTEMD_BOOTED", tmp_path / "no-systemd-here")
    monkeypatch.setattr(shell, "PLATFORM", "linux")
    return made


@pytest.fixture
def systemd_runs(tmp_path, monkeypatch) -> None:
    booted = tmp_path / "run" / "systemd" / "system"
    booted.mkdir(parents=True)
    monkeypatch.setattr(shell, "SYSTEMD_BOOTED", booted)


@pytest.fixture
def store(root) -> Path:
    return Path(os.path.realpath(root))


def config_home(home: Path) -> Path:
    return home / ".config"


def crontab_entries(table: bytes) -> list[str]:
    return [line for line in table.decode("utf-8", "surrogateescape").splitlines()
            if re.search("auto[-_]dream", line) and not line.startswith("#")]


# ---------------------------------------------------------------- cron


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_install_into_a_crontab_keeps_every_other_line_byte_for_byte(cli, fakes, store):
    fakes.table_path.write_bytes(USER_CRONTAB)
    done = cli("--root", store, "schedule", "install", "--cron")
    assert done.code == 0, done
    table = fakes.table
    # the user's bytes first, exactly, then the newline their last line lacked, then our two lines
    assert table.startswith(USER_CRONTAB + b"\n# auto-dream schedule " + schedule_id(store).encode())
    marker, entry = table[len(USER_CRONTAB) + 1:].decode().splitlines()
    assert str(store) in marker and "auto-dream schedule remove" in marker
    assert entry.split(None, 5)[:5] == ["0", "3", "*", "*", "0"]
    assert entry.split(None, 5)[5].startswith(f"{RUNS} --root {store} dream >> ")
    assert table.endswith(b"\n")
    assert "installed the weekly cron schedule of " + str(store) in done.out
    assert fakes.argvs("crontab") == [["-l"], ["-"]]


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_remove_gives_back_the_crontab_as_it_was(cli, fakes, store):
    fakes.table_path.write_bytes(USER_CRONTAB)
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    done = cli("--root", store, "schedule", "remove")
    assert done.code == 0, done
    assert fakes.table == USER_CRONTAB  # the missing final newline too
    assert "removed the weekly cron schedule of" in done.out
    again = cli("--root", store, "schedule", "remove")
    assert (again.code, again.out.strip()) == (0, f"no schedule installed for {store}")
    assert fakes.table == USER_CRONTAB


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_remove_after_install_into_no_crontab_leaves_no_crontab(cli, fakes, store):
    assert fakes.table is None
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    assert len(crontab_entries(fakes.table)) == 1
    assert cli("--root", store, "schedule", "remove", "--cron").code == 0
    assert fakes.table is None
    assert fakes.argvs("crontab")[-1] == ["-r"]


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_installing_twice_leaves_one_entry_and_writes_nothing_the_second_time(cli, fakes, store):
    fakes.table_path.write_bytes(b"MAILTO=\n")
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    first = fakes.table
    done = cli("--root", store, "schedule", "install", "--cron")
    assert done.code == 0, done
    assert "already installed, nothing changed" in done.out
    assert fakes.table == first and len(crontab_entries(first)) == 1
    assert fakes.argvs("crontab") == [["-l"], ["-"], ["-l"]]


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_weekly_then_hourly_replaces_the_line_in_its_place(cli, fakes, store):
    fakes.table_path.write_bytes(b"# before\n")
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    with open(fakes.table_path, "ab") as table:
        table.write(b"# after, written by hand later\n")
    done = cli("--root", store, "schedule", "install", "--hourly")  # not systemd, not macOS: cron
    assert done.code == 0, done
    lines = fakes.table.decode().splitlines()
    assert lines[0] == "# before" and lines[-1] == "# after, written by hand later"
    assert len(lines) == 4
    entry = lines[2].split(None, 5)
    assert entry[:5] == ["17", "*", "*", "*", "*"] and " dream --if-due >> " in entry[5]
    assert "installed the hourly cron schedule" in done.out


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_two_stores_each_have_one_and_remove_takes_only_its_own(cli, fakes, store, tmp_path):
    other = tmp_path / "other" / ".auto-dream"
    ensure_store(other)
    fakes.table_path.write_bytes(USER_CRONTAB + b"\n")
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    assert cli("--root", other, "schedule", "install", "--cron", "--hourly").code == 0
    entries = crontab_entries(fakes.table)
    assert len(entries) == 2 and f"--root {store} " in entries[0] and f"--root {other} " in entries[1]
    assert cli("--root", store, "schedule", "remove").code == 0
    rest = crontab_entries(fakes.table)
    assert rest == entries[1:]
    assert cli("--root", other, "schedule", "remove").code == 0
    assert fakes.table == USER_CRONTAB + b"\n"


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_status_says_what_is_installed_where_and_when(cli, fakes, store):
    none = cli("--root", store, "schedule", "status")
    assert (none.code, none.out.splitlines()[0]) == (
        0, f"no schedule installed for {store} (`auto-dream schedule install` adds one)")
    assert cli("--root", store, "schedule", "install", "--cron", "--hourly").code == 0
    text = cli("--root", store, "schedule", "status")
    assert text.code == 0
    assert text.out.splitlines()[:2] == [f"hourly cron schedule of {store}", "  when: 17 * * * *"]
    document = json.loads(cli("--root", store, "schedule", "status", "--json").out)
    assert document["store"] == str(store) and document["id"] == schedule_id(store)
    [schedule] = document["schedules"]
    assert schedule["scheduler"] == "cron" and schedule["frequency"] == "hourly"
    assert schedule["runs"].startswith(f"{RUNS} --root {store} dream --if-due")
    assert document["not_checked"] == []
    assert fakes.argvs("crontab")[-1] == ["-l"]  # status only reads


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_a_line_edited_by_hand_shows_as_changed_and_is_still_removed(cli, fakes, store):
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    fakes.table_path.write_bytes(fakes.table.replace(b"0 3 * * 0 ", b"30 4 * * 6 "))
    document = json.loads(cli("--root", store, "schedule", "status", "--json").out)
    assert document["schedules"][0]["frequency"] is None and document["schedules"][0]["when"] == "30 4 * * 6"
    assert cli("--root", store, "schedule", "remove").code == 0
    assert fakes.table is None


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_dry_run_prints_the_change_and_changes_nothing(cli, fakes, store):
    fakes.table_path.write_bytes(b"MAILTO=me\n")
    done = cli("--root", store, "schedule", "install", "--cron", "--dry-run")
    assert done.code == 0, done
    lines = done.out.splitlines()
    assert lines[0] == "[DRY RUN] would change your crontab:"
    assert lines[1].startswith("[DRY RUN]     +# auto-dream schedule ")
    assert lines[2].startswith(f"[DRY RUN]     +0 3 * * 0 {RUNS} --root {store} dream")
    assert fakes.table == b"MAILTO=me\n" and fakes.argvs("crontab") == [["-l"]]
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    removing = cli("--root", store, "schedule", "remove", "--dry-run")
    assert removing.out.splitlines()[0] == "[DRY RUN] would change your crontab:"
    assert all(line.startswith("[DRY RUN]     -") for line in removing.out.splitlines()[1:])
    assert len(crontab_entries(fakes.table)) == 1


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_a_hand_written_auto_dream_line_is_kept_and_named(cli, fakes, store):
    hand = b'0 3 * * 0 "$HOME/.local/bin/auto-dream" --root "$HOME/.auto-dream" dream\n'
    fakes.table_path.write_bytes(hand)
    done = cli("--root", store, "schedule", "install", "--cron")
    assert done.code == 0
    assert "line 1 of your crontab runs auto-dream too" in done.err
    assert fakes.table.startswith(hand)
    assert cli("--root", store, "schedule", "remove").code == 0
    assert fakes.table == hand


@pytest.mark.slow  # runs the fake crontab (child Pythons)
@pytest.mark.parametrize("after_marker", [
    b"*/5 * * * * /usr/local/bin/backup --quiet\n", b"\n", b"# my notes\n",
    # jobs that only name a store or a script with auto-dream in its name: they run something else
    b"0 4 * * * tar czf /backup/m.tgz /home/me/.claude/projects/x/memory/.auto-dream\n",
    b"0 4 * * * /opt/auto_dream_backup.sh --to /backup\n",
    b"@daily rsync -a ~/.auto-dream/ /backup/auto-dream/\n",
])
def test_a_line_of_the_users_right_after_our_marker_is_not_taken_for_ours(cli, fakes, store, after_marker):
    """Our line deleted by hand (`crontab -e`), the marker left: the line that now follows it is
    the user's, and neither install nor remove may replace or delete it."""
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    marker = fakes.table.splitlines(keepends=True)[0]
    fakes.table_path.write_bytes(b"MAILTO=me\n" + marker + after_marker + b"0 1 * * * /bin/true\n")
    done = cli("--root", store, "schedule", "install", "--cron")
    assert done.code == 0, done
    lines = fakes.table.splitlines(keepends=True)
    assert lines[0] == b"MAILTO=me\n" and lines[1] == marker and f" {RUNS} --root ".encode() in lines[2]
    assert lines[3:] == [after_marker, b"0 1 * * * /bin/true\n"]
    removed = cli("--root", store, "schedule", "remove")
    assert removed.code == 0, removed
    assert fakes.table == b"MAILTO=me\n" + after_marker + b"0 1 * * * /bin/true\n"
    fakes.table_path.write_bytes(marker + after_marker)  # and a marker alone is taken out alone
    assert cli("--root", store, "schedule", "remove").code == 0
    assert fakes.table == after_marker


@pytest.mark.slow  # runs the fake crontab (child Pythons)
@pytest.mark.parametrize("edit", [
    lambda entry: b"#" + entry,  # commented out to pause it
    lambda entry: b"# " + entry.replace(b"0 3 * * 0 ", b"30 4 * * 6 "),
    lambda entry: entry.replace(b"0 3 * * 0 ", b"@weekly "),
])
def test_our_line_paused_or_retimed_by_hand_is_still_ours(cli, fakes, store, edit):
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    marker, entry = fakes.table.splitlines(keepends=True)
    fakes.table_path.write_bytes(b"MAILTO=me\n" + marker + edit(entry))
    assert cli("--root", store, "schedule", "install", "--cron").code == 0
    assert fakes.table == b"MAILTO=me\n" + marker + entry  # put back as install writes it
    fakes.table_path.write_bytes(b"MAILTO=me\n" + marker + edit(entry))
    assert cli("--root", store, "schedule", "remove").code == 0
    assert fakes.table == b"MAILTO=me\n"


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_a_crontab_that_cannot_be_read_is_left_alone(cli, fakes, store):
    fakes.table_path.write_bytes(b"MAILTO=me\n")
    fakes.fail("crontab", "-l")
    done = cli("--root", store, "schedule", "install", "--cron")
    assert done.code == 1
    assert done.err.strip() == ("auto-dream: error: `crontab -l` failed (exit 1): crontab: it went wrong; "
                                "your crontab is left as it is")
    assert fakes.argvs("crontab") == [["-l"]] and fakes.table == b"MAILTO=me\n"
    status = cli("--root", store, "schedule", "status")  # status still answers, saying what it could not see
    assert status.code == 0 and "cron: not looked at: `crontab -l` failed" in status.out


# ---------------------------------------------------------------- systemd


@pytest.mark.slow  # runs the fake crontab and systemctl (child Pythons)
def test_systemd_install_writes_two_units_and_enables_the_timer(cli, fakes, store, systemd_runs, isolated_env):
    done = cli("--root", store, "schedule", "install")  # systemd runs here: the default
    assert done.code == 0, done
    unit = f"auto-dream-{schedule_id(store)}"
    folder = config_home(isolated_env) / "systemd" / "user"
    assert sorted(path.name for path in folder.iterdir()) == [f"{unit}.service", f"{unit}.timer"]
    service = (folder / f"{unit}.service").read_text()
    assert "ExecStart=" + " ".join(f'"{word}"' for word in auto_dream_command()) + f' --root "{store}" dream\n' \
        in service
    assert "OnCalendar=Sun *-*-* 03:00:00" in (folder / f"{unit}.timer").read_text()
    assert fakes.argvs("systemctl") == [["--user", "daemon-reload"], ["--user", "enable", "--now", f"{unit}.timer"]]
    assert fakes.listed("enabled") == {f"{unit}.timer"}
    assert fakes.table is None  # the crontab was only read, to see whether the store has a cron schedule too

    hourly = cli("--root", store, "schedule", "install", "--hourly")
    assert hourly.code == 0, hourly
    assert "OnCalendar=*-*-* *:17:00" in (folder / f"{unit}.timer").read_text()
    assert f'--root "{store}" dream --if-due\n' in (folder / f"{unit}.service").read_text()
    assert fakes.argvs("systemctl")[2:] == [["--user", "daemon-reload"],
                                             ["--user", "enable", "--now", f"{unit}.timer"],
                                             ["--user", "restart", f"{unit}.timer"]]

    status = json.loads(cli("--root", store, "schedule", "status", "--json").out)
    assert [(s["scheduler"], s["frequency"], s["when"]) for s in status["schedules"]] == [
        ("systemd", "hourly", "*-*-* *:17:00")]

    removed = cli("--root", store, "schedule", "remove")
    assert removed.code == 0, removed
    assert "removed the hourly systemd schedule" in removed.out
    assert list(folder.iterdir()) == []
    assert fakes.argvs("systemctl")[-2:] == [["--user", "disable", "--now", f"{unit}.timer"],
                                              ["--user", "daemon-reload"]]
    assert fakes.listed("enabled") == set()


@pytest.mark.slow  # runs the fake crontab and systemctl (child Pythons)
def test_systemd_units_go_under_xdg_config_home(cli, fakes, store, systemd_runs, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cli("--root", store, "schedule", "install", "--systemd").code == 0
    assert (tmp_path / "xdg" / "systemd" / "user" / f"auto-dream-{schedule_id(store)}.timer").is_file()


@pytest.mark.slow  # runs the fake crontab and systemctl (child Pythons)
def test_a_failing_systemctl_puts_the_unit_files_back(cli, fakes, store, systemd_runs, isolated_env):
    fakes.fail("systemctl", "enable")
    done = cli("--root", store, "schedule", "install", "--systemd")
    assert done.code == 1
    assert done.err.count("\n") == 1 and "systemctl --user enable --now" in done.err and "put back" in done.err
    assert list((config_home(isolated_env) / "systemd" / "user").iterdir()) == []


@pytest.mark.slow  # runs the fake crontab and systemctl (child Pythons)
def test_a_failed_systemd_reinstall_has_systemd_reload_the_units_it_put_back(cli, fakes, store, systemd_runs,
                                                                           isolated_env):
    """The new units were daemon-reloaded before the step that failed: once the files are put
    back, systemd must read them again, or it keeps running the units that were taken back."""
    assert cli("--root", store, "schedule", "install", "--systemd").code == 0
    folder = config_home(isolated_env) / "systemd" / "user"
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    fakes.fail("systemctl", "restart")
    done = cli("--root", store, "schedule", "install", "--systemd", "--hourly")
    assert done.code == 1 and done.err.count("\n") == 1 and "put back" in done.err
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    assert fakes.argvs("systemctl")[-2:] == [["--user", "restart", f"auto-dream-{schedule_id(store)}.timer"],
                                              ["--user", "daemon-reload"]]


# ---------------------------------------------------------------- launchd


@pytest.mark.slow  # runs the fake crontab and launchctl (child Pythons)
def test_launchd_install_and_remove(cli, fakes, store, isolated_env, monkeypatch):
    monkeypatch.setattr(shell, "PLATFORM", "darwin")
    done = cli("--root", store, "schedule", "install")  # macOS: launchd by default
    assert done.code == 0, done
    label = f"com.auto-dream.dream.{schedule_id(store)}"
    path = isolated_env / "Library" / "LaunchAgents" / f"{label}.plist"
    agent = plistlib.loads(path.read_bytes())
    assert agent["Label"] == label
    assert agent["StartCalendarInterval"] == {"Weekday": 0, "Hour": 3, "Minute": 0}
    assert agent["ProgramArguments"][:2] == ["/bin/sh", "-c"]
    assert agent["ProgramArguments"][2].startswith(f"{RUNS} --root {store} dream >> ")
    domain = f"gui/{os.getuid()}"
    assert fakes.argvs("launchctl") == [["bootstrap", domain, str(path)]]
    assert fakes.listed("loaded") == {label}

    again = cli("--root", store, "schedule", "install", "--hourly")  # loaded: booted out, then in again
    assert again.code == 0, again
    assert plistlib.loads(path.read_bytes())["StartCalendarInterval"] == {"Minute": 17}
    assert fakes.argvs("launchctl")[1:] == [["bootout", f"{domain}/{label}"], ["bootstrap", domain, str(path)]]

    removed = cli("--root", store, "schedule", "remove")
    assert removed.code == 0, removed
    assert not path.exists() and fakes.listed("loaded") == set()
    assert fakes.argvs("launchctl")[-1] == ["bootout", f"{domain}/{label}"]


@pytest.mark.slow  # runs the fake crontab and launchctl (child Pythons)
def test_a_failed_launchd_reinstall_loads_again_the_agent_it_booted_out(cli, fakes, store, isolated_env,
                                                                       monkeypatch):
    """Reinstalling boots the loaded agent out before it loads the new plist; when loading that
    fails, the old plist is put back and loaded again: the schedule runs as it did before."""
    monkeypatch.setattr(shell, "PLATFORM", "darwin")
    assert cli("--root", store, "schedule", "install").code == 0
    label = f"com.auto-dream.dream.{schedule_id(store)}"
    path = isolated_env / "Library" / "LaunchAgents" / f"{label}.plist"
    weekly = path.read_bytes()
    fakes.fail("launchctl", "bootstrap", once=True)  # as launchctl may right after a bootout
    done = cli("--root", store, "schedule", "install", "--hourly")
    assert done.code == 1 and done.err.count("\n") == 1 and "put back as it was" in done.err
    assert path.read_bytes() == weekly and fakes.listed("loaded") == {label}
    assert fakes.argvs("launchctl")[-1] == ["bootstrap", f"gui/{os.getuid()}", str(path)]


@pytest.mark.slow  # runs the fake crontab and launchctl (child Pythons)
def test_a_failed_install_that_cannot_undo_all_it_did_does_not_claim_it_did(cli, fakes, store, isolated_env,
                                                                           monkeypatch):
    monkeypatch.setattr(shell, "PLATFORM", "darwin")
    assert cli("--root", store, "schedule", "install").code == 0
    fakes.fail("launchctl", "bootstrap")  # the agent cannot be loaded again either
    done = cli("--root", store, "schedule", "install", "--hourly")
    assert done.code == 1 and done.err.count("\n") == 1
    assert "put back as it was" not in done.err
    assert "not all of it could be put back" in done.err and "launchctl bootstrap" in done.err
    assert fakes.listed("loaded") == set()


# ---------------------------------------------------------------- no tool, bad input


def only_on_path(fakes: Fakes, monkeypatch, *names: str) -> None:
    shutil.rmtree(fakes.bin)
    fakes.install(*names)
    monkeypatch.setenv("PATH", str(fakes.bin))


@pytest.mark.parametrize("argv, available, says", [
    (["--cron"], [], "there is no `crontab` command on PATH (is cron installed?): add this line to your crontab "
                     "by hand instead: 0 3 * * 0 "),
    ([], [], "add this line to your crontab by hand instead"),  # no systemd, not macOS: cron, which is missing
    (["--systemd"], ["crontab"], "there is no `systemctl` on PATH, so a systemd user timer cannot be enabled: "
                                 "use `auto-dream schedule install --cron` instead"),
    (["--systemd"], ["crontab", "systemctl"], "systemd is not running here"),
    (["--launchd"], ["crontab"], "there is no `launchctl` on PATH (launchd is macOS's): use `auto-dream schedule "
                                 "install --cron` instead"),
])
def test_a_missing_scheduler_says_what_to_do_instead_and_writes_nothing(cli, fakes, store, isolated_env, monkeypatch,
                                                                         argv, available, says):
    only_on_path(fakes, monkeypatch, *available)
    done = cli("--root", store, "schedule", "install", *argv)
    assert done.code == 1
    assert done.out == "" and done.err.count("\n") == 1 and says in done.err
    assert fakes.calls() == [] and fakes.table is None
    assert sorted(p.name for p in isolated_env.iterdir()) == []


@pytest.mark.slow  # runs the fake crontab and systemctl (child Pythons)
def test_remove_without_the_tool_says_what_to_run(cli, fakes, store, systemd_runs, isolated_env, monkeypatch):
    assert cli("--root", store, "schedule", "install", "--systemd").code == 0
    only_on_path(fakes, monkeypatch, "crontab")
    done = cli("--root", store, "schedule", "remove")
    assert done.code == 1
    assert f"run `systemctl --user disable --now auto-dream-{schedule_id(store)}.timer`, then delete" in done.err
    assert len(list((config_home(isolated_env) / "systemd" / "user").iterdir())) == 2


@pytest.mark.parametrize("argv, says", [
    (["install", "--weekly", "--hourly"], "choose --weekly or --hourly, not both"),
    (["install", "--cron", "--systemd"], "choose one scheduler, not --cron and --systemd"),
    (["remove", "--cron", "--launchd"], "choose one scheduler, not --cron and --launchd"),
])
def test_bad_flags_are_bad_usage(cli, fakes, store, argv, says):
    done = cli("--root", store, "schedule", *argv)
    assert (done.code, done.err.strip()) == (2, f"auto-dream: error: {says}")
    assert fakes.calls() == []


@pytest.mark.parametrize("scheduler", ["--systemd", "--launchd"])
def test_a_store_path_that_is_not_utf8_is_refused_where_a_unit_or_plist_cannot_hold_it(
        cli, fakes, systemd_runs, isolated_env, tmp_path, scheduler):
    """systemd ignores a unit line that is not UTF-8 ("String is not UTF-8 clean, ignoring
    assignment"), so the service would have no ExecStart and never run; a plist is UTF-8 XML.
    Such a path is refused in one line, nothing written (cron's line, bytes to sh, holds it)."""
    store = ensure_store(tmp_path / os.fsdecode(b"caf\xe9") / ".auto-dream").root
    done = cli("--root", store, "schedule", "install", scheduler)
    assert (done.code, done.out) == (2, "") and done.err.count("\n") == 1
    assert "not UTF-8" in done.err and "--cron" in done.err
    assert fakes.argvs("systemctl") == [] and fakes.argvs("launchctl") == []
    assert sorted(p.name for p in isolated_env.iterdir()) == []


@pytest.mark.slow  # runs the fake crontab (child Pythons)
@pytest.mark.parametrize("folder", ["o'brien", 'say "hi"', "back\\slash", "cost$5"])
def test_a_python_whose_path_systemd_cannot_start_is_refused_for_systemd(cli, fakes, store, systemd_runs,
                                                                        isolated_env, monkeypatch, folder):
    """systemd refuses to start a program whose path holds a quote or a backslash ("Executable name
    contains special characters", a fatal unit error), and does not undo `$$` in a program's path
    (systemd-analyze verify: "Command …/a$$x/python is not executable"): the timer would start a
    service that never loads. Refused in one line, nothing written; cron takes it."""
    monkeypatch.setattr(sys, "executable", f"/opt/{folder}/venv/bin/python")
    done = cli("--root", store, "schedule", "install", "--systemd")
    assert (done.code, done.out) == (2, "") and done.err.count("\n") == 1
    assert "--cron" in done.err and f"/opt/{folder}/venv/bin/python" in done.err
    assert fakes.argvs("systemctl") == [] and sorted(p.name for p in isolated_env.iterdir()) == []
    assert cli("--root", store, "schedule", "install", "--cron").code == 0


def test_a_store_that_does_not_exist_is_refused(cli, fakes, tmp_path):
    done = cli("--root", tmp_path / "nowhere", "schedule", "install", "--cron")
    assert done.code == 1 and "no store at" in done.err
    assert fakes.calls() == []


@pytest.mark.slow  # runs the fake crontab (child Pythons)
def test_the_default_store_is_the_one_other_commands_use(cli, fakes, tmp_path, monkeypatch):
    project = tmp_path / "project"
    ensure_store(project / ".auto-dream")
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")  # found upwards, as every command finds it
    assert cli("schedule", "install", "--cron").code == 0
    assert f"--root {project / '.auto-dream'} dream" in crontab_entries(fakes.table)[0]


# ---------------------------------------------------------------- what the installed schedules run


@pytest.fixture
def spaced_store(tmp_path) -> Path:
    """A store whose path has a space and a percent sign, holding five entries to dream."""
    path = tmp_path / "my notes 100%" / ".auto-dream"
    paths = ensure_store(path)
    for n in range(5):
        append_entry(paths, Entry(datetime(2026, 11, 1, 9, n), f"scheduled fact {n} about subsystem{n}", "project"))
    return path


def run_like_cron(entry: str, home: Path) -> subprocess.CompletedProcess:
    """What cron does with a crontab line: the command after five fields, `\\%` turned into `%`
    (an unescaped % would end it), through /bin/sh with cron's bare PATH."""
    command = entry.split(None, 5)[5]
    assert re.search(r"(?<!\\)%", command) is None
    return subprocess.run(["/bin/sh", "-c", command.replace("\\%", "%")], env={"HOME": str(home),
                          "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # runs the installed crontab line through /bin/sh
def test_the_installed_crontab_line_dreams_a_store_whose_path_has_a_space(cli, fakes, spaced_store, isolated_env):
    assert cli("--root", spaced_store, "schedule", "install", "--cron").code == 0
    [entry] = crontab_entries(fakes.table)
    assert "\\%" in entry
    done = run_like_cron(entry, isolated_env)
    assert done.returncode == 0, done.stderr
    assert (spaced_store / "MEMORY.md").read_text().count("scheduled fact") == 5
    assert "Dream Consolidation Report" in (spaced_store / ".state" / "cron.log").read_text()


@pytest.mark.slow  # runs the installed plist's program
def test_the_installed_plist_dreams_a_store_whose_path_has_a_space(cli, fakes, spaced_store, isolated_env,
                                                                    monkeypatch):
    monkeypatch.setattr(shell, "PLATFORM", "darwin")
    assert cli("--root", spaced_store, "schedule", "install").code == 0
    [plist] = (isolated_env / "Library" / "LaunchAgents").iterdir()
    arguments = plistlib.loads(plist.read_bytes())["ProgramArguments"]
    done = subprocess.run(arguments, env={"HOME": str(isolated_env), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (spaced_store / "MEMORY.md").read_text().count("scheduled fact") == 5


@pytest.mark.slow  # runs systemd-analyze
@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd's own parser is not on this machine")
def test_systemd_reads_the_quoted_command_as_the_program_it_names(tmp_path):
    """systemd-analyze verify finds the program of ExecStart as systemd reads it: a space and a
    % in its path survive the quoting."""
    program = tmp_path / "odd dir 100%" / "python"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    target = Target(tmp_path / "a store $HOME %h", "0123456789ab", tmp_path / "log", tmp_path,
                    (str(program), "-m", "auto_dream"))
    folder = tmp_path / "units"
    folder.mkdir()
    for name, content in systemd_units(target, "weekly").items():
        (folder / name).write_bytes(content)
    done = subprocess.run(["systemd-analyze", "verify", str(folder / "auto-dream-0123456789ab.service")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    program.unlink()  # and the check is real: without the program, verify fails
    missing = subprocess.run(["systemd-analyze", "verify", str(folder / "auto-dream-0123456789ab.service")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "odd dir 100%/python" in missing.stderr


# ---------------------------------------------------------------- the crontab, as bytes


TARGET = Target(Path("/home/u/.auto-dream"), "0123456789ab", Path("/home/u/.auto-dream/.state/cron.log"),
                Path("/home/u/.auto-dream/.state"), ("/venv/bin/python", "-m", "auto_dream"))
ENTRY = "0 3 * * 0 /venv/bin/python -m auto_dream --root /home/u/.auto-dream dream"


@pytest.mark.parametrize("table", [
    b"", b"\n", b"MAILTO=x", b"MAILTO=x\n", b"\n\n# only comments\n\n", USER_CRONTAB, USER_CRONTAB + b"\r\n",
    b"* * * * * echo \xff\xfe not utf-8\n",
])
def test_adding_then_taking_out_gives_back_every_byte(table):
    added = crontab_with(table, TARGET, ENTRY)
    assert added.startswith(table) and added.endswith(ENTRY.encode() + b"\n")
    assert crontab_with(added, TARGET, ENTRY) == added
    assert crontab_without(added, TARGET.id) == table
    assert crontab_without(table, TARGET.id) == table


def test_surroundings_come_from_the_environment(fakes, systemd_runs, tmp_path, monkeypatch, isolated_env):
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/is/ignored")
    found = shell.schedule_surroundings()
    assert found == Surroundings(isolated_env, isolated_env / ".config",
                                 {name: str(fakes.bin / name) for name in ("crontab", "systemctl", "launchctl")},
                                 True, False, os.getuid(), auto_dream_command())


def test_a_fifo_where_a_unit_file_goes_is_refused_never_waited_on(tmp_path):
    from auto_dream.commands.schedule import _read

    fifo = tmp_path / "auto-dream-x.timer"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="is not a regular file: move it away$"):
        _read(fifo)  # once read_bytes(): it waited for a writer that never came
    assert _read(tmp_path / "missing.timer") is None
    (tmp_path / "real.timer").write_bytes(b"[Timer]\n")
    (tmp_path / "linked.timer").symlink_to(tmp_path / "real.timer")
    assert _read(tmp_path / "linked.timer") == b"[Timer]\n"  # through a link, as systemd reads it
