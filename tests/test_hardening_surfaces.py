"""Hardening round 2: the process's surroundings and the library's edges.

A time zone POSIX allows and Python's datetime cannot hold, and a store path the file system
refuses: one warning or one error line (an AutoDreamError in the library), never a traceback.
"""

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

import auto_dream
from conftest import run_installed

ZONE_WARNING = " is 24 hours or more from UTC, more than Python's clock can hold: times are taken in UTC\n"


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("zone", ["UTC+24", "UTC-24"])
def test_a_posix_zone_24_hours_from_utc_is_taken_as_utc_with_a_warning(tmp_path, zone):
    """`TZ=UTC+24` is valid POSIX, but an offset of a whole day is more than datetime takes:
    every command failed with a traceback. Each now runs, in UTC, and says so once."""
    root = tmp_path / "store"
    before = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    env = {"TZ": zone}
    warning = f"auto-dream: warning: TZ={zone!r}{ZONE_WARNING}"
    for argv in (["append", "--type", "project", "The build server is ci-7"],  # the fast path
                 ["append", "--at", "2026-01-05 10:00", "Deploys happen on Fridays"],  # Typer's
                 ["dream", "--json"], ["recall", "build server"], ["list", "--json"], ["check", "--json"]):
        done = run_installed("--root", root, *argv, env=env)
        assert (done.returncode, done.stderr) == (0, warning), (argv, done.stderr)
    after = datetime.now(timezone.utc).replace(tzinfo=None)
    [entry] = [line for line in (root / "logs").rglob("*.md") for line in line.read_text().splitlines()
               if "ci-7" in line]
    assert before <= datetime.fromisoformat(entry[3:22]) <= after  # written at UTC's wall clock
    names = {memory["name"] for memory in json.loads(run_installed("--root", root, "list", "--json",
                                                                   env=env).stdout)}
    assert names == {"The build server is ci-7", "Deploys happen on Fridays"}


@pytest.mark.slow  # starts the installed command
def test_a_zone_python_can_hold_gives_no_warning_and_keeps_its_wall_clock(tmp_path):
    def day() -> str:
        return f"{datetime.now(timezone.utc) - timedelta(hours=23, minutes=59):%Y-%m-%d}.md"

    days = {day()}
    done = run_installed("--root", tmp_path / "store", "append", "A fact", env={"TZ": "UTC+23:59"})
    days.add(day())
    assert (done.returncode, done.stderr) == (0, "")
    [log] = (tmp_path / "store" / "logs").rglob("*.md")
    assert log.name in days  # the day at -23:59, not UTC's


@pytest.fixture
def zone_a_day_west(monkeypatch):
    """This process in `TZ=UTC+24`; the zone it had is put back after."""
    monkeypatch.setenv("TZ", "UTC+24")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("method, arguments", [("append", ("A fact",)), ("recall", ("fact",)), ("list", ()),
                                               ("check", ()), ("dream", ())])
def test_the_library_in_a_zone_a_day_from_utc_raises_a_store_error(root, zone_a_day_west, method, arguments):
    """The library leaves the process's environment alone, so it cannot take the zone as UTC as
    the command line does: it says why it cannot run, instead of datetime's ValueError."""
    store = auto_dream.Store(root)
    with pytest.raises(auto_dream.StoreError, match="24 hours or more from UTC"):
        getattr(store, method)(*arguments)


# ---------------------------------------------------------------- the library's errors


@pytest.mark.parametrize("create, verb", [(True, "create"), (False, "open")])
def test_a_store_name_longer_than_the_file_system_takes_is_a_store_error(tmp_path, create, verb):
    """`open_store("a" * 300, create=True)` raised the bare OSError of the file system (the
    command line gave it one line, the library nothing of its own)."""
    too_long = tmp_path / ("a" * 300)
    with pytest.raises(auto_dream.StoreError) as raised:
        auto_dream.open_store(too_long, create=create)
    assert str(raised.value) == f"cannot {verb} the store at {too_long}: File name too long"
    assert isinstance(raised.value.__cause__, OSError)  # the errno is there for a caller who wants it
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]  # nothing made


def test_a_store_path_holding_nul_is_bad_input(tmp_path):
    with pytest.raises(auto_dream.InputError, match="NUL"):
        auto_dream.open_store(tmp_path / "a\0b", create=True)
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]


@pytest.mark.parametrize("method, arguments", [
    ("append", ("A fact",)), ("recall", ("fact",)), ("show", ("A fact",)), ("list", ()), ("check", ()),
    ("build_index", ()), ("dream", ()), ("undo", ()),
])
def test_every_store_method_raises_a_file_system_failure_as_a_store_error(tmp_path, method, arguments):
    """The library's errors are AutoDreamError subclasses (docs/python-api.md), a
    failure of the file system its own checks did not foresee included."""
    store = auto_dream.Store(tmp_path / ("a" * 300))
    with pytest.raises(auto_dream.StoreError, match="File name too long") as raised:
        getattr(store, method)(*arguments)
    assert isinstance(raised.value.__cause__, OSError)
