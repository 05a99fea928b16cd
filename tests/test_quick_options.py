"""The fast path (__main__) and Typer (cli.py) read an `append`, `recall` or `context` line by one
table of options (shell.APPEND_OPTIONS, RECALL_OPTIONS, RECALL_FLAGS, CONTEXT_FLAGS): a name Typer
knows, the fast path knows as the same parameter."""

import typer

from auto_dream import __main__ as fast
from auto_dream.cli import app
from auto_dream.shell import APPEND_OPTIONS, CONTEXT_FLAGS, RECALL_FLAGS, RECALL_OPTIONS


def _options(command: str) -> dict[str, tuple[str, ...]]:
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {param.name: tuple(param.opts) for param in click_command.params if param.opts[0].startswith("-")}


def test_typer_declares_the_options_the_fast_path_parses():
    assert _options("append") == APPEND_OPTIONS
    assert _options("recall") == {**RECALL_OPTIONS, **RECALL_FLAGS}
    assert _options("context") == CONTEXT_FLAGS


def test_the_fast_path_files_each_name_as_typer_does():
    found = fast.quick_append_arguments(["append", "-t", "user", "--at=2026-01-02 10:00", "a", "fact"])
    assert (found["type"], found["at"], found["words"]) == ("user", "2026-01-02 10:00", ["a", "fact"])
    found = fast.quick_recall_arguments(["recall", "deploys", "-n", "3", "--type=project", "--archived", "--json"])
    assert (found["limit"], found["type"], found["archived"], found["json"]) == ("3", "project", True, True)
    found = fast.quick_context_arguments(["context", "--json"])
    assert (found["as_json"], found["cursor_json"]) == (True, False)
