"""cron/: every schedule parses, and every command it runs works on a temporary store."""

import configparser
import os
import plistlib
import re
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from croniter import croniter

from auto_dream.store.daylog import Entry, append_entry
from auto_dream.store.paths import ensure_store
from conftest import installed_command

CRON = Path(__file__).resolve().parent.parent / "cron"
INSTALLED_AT = "$HOME/.local/bin/auto-dream"


def crontab_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def systemd_unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"), strict=True)
    parser.optionxform = str
    parser.read_string(path.read_text())
    return parser


def valid_on_calendar(expression: str) -> bool:
    """The forms we ship (`[Weekday] *-*-* HH:MM:SS`, HH may be `*`), checked strictly on every
    machine, and systemd's own parser too where the machine has it."""
    match = re.fullmatch(r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?\*-\*-\* (\*|\d\d):(\d\d):(\d\d)", expression)
    if not (match and (match[1] == "*" or int(match[1]) < 24) and int(match[2]) < 60 and int(match[3]) < 60):
        return False
    if shutil.which("systemd-analyze"):
        return subprocess.run(["systemd-analyze", "calendar", expression], capture_output=True).returncode == 0
    return True


@pytest.fixture
def home_with_store(tmp_path):
    """A HOME with ~/.local/bin/auto-dream (the installed command) and ~/.auto-dream holding 5 entries."""
    home = tmp_path / "cron-home"
    (home / ".local" / "bin").mkdir(parents=True)
    os.symlink(installed_command(), home / ".local" / "bin" / "auto-dream")
    paths = ensure_store(home / ".auto-dream")
    for n in range(5):
        append_entry(paths, Entry(datetime(2026, 11, 1, 9, n), f"scheduled fact {n} about subsystem{n}", "project"))
    return home


def run_as_schedule(command: str, home: Path) -> subprocess.CompletedProcess:
    """Run a schedule's command line the way cron or launchd would: through /bin/sh, with HOME set."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}  # cron's bare PATH: the file must not rely on ours
    return subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=120)


def assert_dreamed(home: Path) -> None:
    memories = list((home / ".auto-dream" / "memories").rglob("*.md"))
    assert len(memories) == 5
    assert (home / ".auto-dream" / "MEMORY.md").read_text().count("scheduled fact") == 5


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("name", ["auto-dream-weekly.crontab", "auto-dream-hourly.crontab"])
def test_crontab_line_parses_and_its_command_dreams(name, home_with_store):
    path = CRON / name
    text = path.read_text()
    assert "crontab -l" in text and "| crontab -" in text  # the install line keeps the user's other lines
    lines = crontab_lines(path)
    assert len(lines) == 1
    fields = lines[0].split(None, 5)
    schedule, command = " ".join(fields[:5]), fields[5]
    assert croniter.is_valid(schedule)
    assert command.startswith(f'"{INSTALLED_AT}"') and " dream" in command
    done = run_as_schedule(command, home_with_store)
    assert done.returncode == 0, done.stderr
    assert_dreamed(home_with_store)
    assert "Dream Consolidation Report" in (home_with_store / ".auto-dream/.state/cron.log").read_text()


def test_weekly_and_hourly_schedules_say_what_they_promise():
    weekly = crontab_lines(CRON / "auto-dream-weekly.crontab")[0].split(None, 5)
    hourly = crontab_lines(CRON / "auto-dream-hourly.crontab")[0].split(None, 5)
    start = datetime(2026, 12, 1, 0, 0)
    runs = croniter(" ".join(weekly[:5]), start)
    first, second = runs.get_next(datetime), runs.get_next(datetime)
    assert (second - first).days == 7 and first.weekday() == 6
    hours = croniter(" ".join(hourly[:5]), start)
    assert (hours.get_next(datetime) - hours.get_next(datetime)).total_seconds() == -3600
    assert "--if-due" in hourly[5] and "--if-due" not in weekly[5]


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("name", ["auto-dream", "auto-dream-hourly"])
def test_systemd_timer_and_service(name, home_with_store):
    timer = systemd_unit(CRON / f"{name}.timer")
    service = systemd_unit(CRON / f"{name}.service")
    assert valid_on_calendar(timer["Timer"]["OnCalendar"])
    assert timer["Install"]["WantedBy"] == "timers.target"
    assert service["Service"]["Type"] == "oneshot"
    assert f"systemctl --user enable --now {name}.timer" in (CRON / f"{name}.service").read_text()
    command = service["Service"]["ExecStart"].replace("%h", str(home_with_store))
    done = subprocess.run(command.split(), env={"HOME": str(home_with_store), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert_dreamed(home_with_store)


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("name", ["com.auto-dream.dream.plist", "com.auto-dream.dream-hourly.plist"])
def test_launchd_plist(name, home_with_store):
    raw = (CRON / name).read_bytes()
    assert f"launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/{name}".encode() in raw
    plist = plistlib.loads(raw)
    assert plist["Label"] == name.removesuffix(".plist")
    interval = plist["StartCalendarInterval"]
    assert {"Minute"} <= set(interval) <= {"Weekday", "Hour", "Minute"}
    assert 0 <= interval.get("Weekday", 0) <= 7 and 0 <= interval.get("Hour", 0) <= 23 and 0 <= interval["Minute"] <= 59
    program = plist["ProgramArguments"]
    assert program[:2] == ["/bin/sh", "-c"]
    done = run_as_schedule(program[2], home_with_store)
    assert done.returncode == 0, done.stderr
    assert_dreamed(home_with_store)
    assert "Dream Consolidation Report" in (home_with_store / ".auto-dream/.state/cron.log").read_text()


# Each frequency in each scheduler: (crontab, systemd service and timer, launchd plist).
FREQUENCIES = {
    "weekly": ("auto-dream-weekly.crontab", "auto-dream.service", "auto-dream.timer", "com.auto-dream.dream.plist"),
    "hourly": ("auto-dream-hourly.crontab", "auto-dream-hourly.service", "auto-dream-hourly.timer",
               "com.auto-dream.dream-hourly.plist"),
}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def on_calendar_fires(expression: str, at: datetime) -> bool:
    """Whether a `[Weekday] *-*-* HH:MM:SS` OnCalendar (HH may be *) fires at `at`."""
    match = re.fullmatch(r"(?:(\w{3}) )?\*-\*-\* (\*|\d\d):(\d\d):(\d\d)", expression)
    assert match, expression
    weekday, hour, minute, second = match.groups()
    return ((weekday is None or WEEKDAYS.index(weekday) == at.weekday()) and (hour == "*" or int(hour) == at.hour)
            and int(minute) == at.minute and int(second) == at.second)


def launchd_fires(interval: dict, at: datetime) -> bool:
    """launchd.plist(5) StartCalendarInterval: a missing key is a wildcard; Weekday 0 and 7 are Sunday."""
    return (interval.get("Weekday", at.isoweekday() % 7) % 7 == at.isoweekday() % 7
            and interval.get("Hour", at.hour) == at.hour and interval["Minute"] == at.minute)


@pytest.mark.parametrize("frequency", FREQUENCIES)
def test_each_frequency_runs_the_same_dream_at_the_same_times_in_every_scheduler(frequency):
    """`schedule install` installs each of these for a frequency: they must not drift apart."""
    crontab, service, timer, plist = FREQUENCIES[frequency]
    fields = crontab_lines(CRON / crontab)[0].split(None, 5)
    on_calendar = systemd_unit(CRON / timer)["Timer"]["OnCalendar"]
    agent = plistlib.loads((CRON / plist).read_bytes())
    start = datetime(2026, 12, 1, 0, 0)
    cron_times = croniter(" ".join(fields[:5]), start - timedelta(minutes=1))
    expected = [cron_times.get_next(datetime) for _ in range(3)]
    minutes = [start + timedelta(minutes=n) for n in range(22 * 24 * 60)]  # three Sundays
    assert [at for at in minutes if on_calendar_fires(on_calendar, at)][:3] == expected
    assert [at for at in minutes if launchd_fires(agent["StartCalendarInterval"], at)][:3] == expected
    dream = fields[5].split(" dream", 1)[1].split(" >>")[0]  # "" or " --if-due"
    assert systemd_unit(CRON / service)["Service"]["ExecStart"].endswith(f" dream{dream}")
    assert f" dream{dream} >> " in agent["ProgramArguments"][2]
