"""Putting back a write of several steps that failed half way (commands/rollback.py)."""

from auto_dream.commands.rollback import Rollback
from auto_dream.errors import StoreError


def test_steps_are_undone_last_first_and_one_that_fails_stops_none_after_it():
    undone: list[str] = []
    rollback = Rollback()
    rollback.push(lambda: undone.append("folder"), "the folder")
    rollback.push(lambda: (_ for _ in ()).throw(OSError(13, "Permission denied", "settings.json")), "settings.json")
    rollback.push(lambda: undone.append("record"), "the record")
    assert rollback.run() == "settings.json"  # named by what was pushed with it
    assert undone == ["record", "folder"]  # the one after the failure still ran
    assert not rollback and rollback.run() is None  # run once: nothing is undone twice


def test_a_step_pushed_without_a_name_is_named_by_its_error():
    rollback = Rollback()

    def tool() -> None:
        raise StoreError("systemctl daemon-reload failed")

    rollback.push(tool)
    assert rollback.run() == "systemctl daemon-reload failed"
