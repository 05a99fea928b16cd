"""Hardening round 2: writes that race a dream, build-index or undo.

An agent appends to MEMORY.md while a dream runs (ordinary in Claude Code), a shell holds it
open, an editor saves over it: each lands at one exact step, made deterministic by wrapping
the `os` the replacing code calls, never by sleeping. Nothing anyone wrote is lost, no path is
ever empty, and no warning advises a command that would lose it."""

import importlib
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.runner import dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.store.context import open_context
from auto_dream.store.daylog import Entry, append_entry

NOW = datetime(2026, 11, 30, 10, tzinfo=timezone.utc)
OLD = datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp()
DEPLOYS = ("---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\n"
           "The team deploys to production on Friday.\n")
INDEX = ("# Project memory\n\n## Project\n- [Deploy day](project_deploy_day.md) — my own hook\n\n"
         "## Inline facts\n- The staging database is reset every Sunday night\n1. First numbered fact\n")
LINE = "- a fact the agent appended while the dream ran\n"
# the calls that name a file or look at one: the moments between them are the steps of a replace
STEPS = {"link", "rename", "unlink", "open", "lstat", "fstat", "chmod", "utime", "replace"}


def claude_folder(base: Path, index: str = INDEX) -> Path:
    folder = base / ".claude" / "memory"
    folder.mkdir(parents=True)
    (folder / "project_deploy_day.md").write_text(DEPLOYS, encoding="utf-8")
    os.utime(folder / "project_deploy_day.md", (OLD, OLD))
    (folder / "MEMORY.md").write_text(index, encoding="utf-8")
    return folder


def with_an_entry(folder: Path):
    context = open_context(folder, create=True)
    append_entry(context.paths, Entry(at=datetime(2026, 11, 30, 9, tzinfo=timezone.utc),
                                      text="Reviews of the parser crate need a second reviewer", type="project"))
    return context


class Steps:
    """`os` as the modules that replace a file see it, while `active`: `write` runs right after
    the `at`-th call that names or looks at a file (or exchanges two names)."""

    def __init__(self, at: int, write: Callable[[], None]):
        self.at, self.write = at, write
        self.calls, self.fired, self.active = 0, False, False

    def step(self) -> None:
        if self.active:
            self.calls += 1
            if self.calls == self.at:
                self.fired = True
                self.write()

    def __getattr__(self, name: str):
        real = getattr(os, name)
        if name not in STEPS:
            return real

        def call(*args, **kwargs):
            result = real(*args, **kwargs)
            self.step()
            return result
        return call


def step_into(monkeypatch, steps: Steps, path: str) -> None:
    """Count the steps of apply's change to `path` only (today's apply and replace, or the
    move-aside apply of before: whichever modules there are)."""
    import auto_dream.dream.apply as apply_module
    import auto_dream.dream.journal as runs_module

    modules = [runs_module]
    try:
        modules.append(importlib.import_module("auto_dream.store.replace"))
    except ImportError:
        pass
    for module in modules:
        monkeypatch.setattr(module, "os", steps)
        if hasattr(module, "exchange"):
            real_exchange = module.exchange

            def exchange(first, second, real_exchange=real_exchange):
                done = real_exchange(first, second)
                steps.step()
                return done
            monkeypatch.setattr(module, "exchange", exchange)
    real_apply_change = apply_module.apply_change

    def apply_change(paths, change, *rest):
        steps.active = change.path == path
        try:
            return real_apply_change(paths, change, *rest)
        finally:
            steps.active = False
    monkeypatch.setattr(apply_module, "apply_change", apply_change)


def hidden_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.startswith(".") and p.is_file()} - {".consolidate-lock"}


def dream_with_a_write_at_each_step(tmp_path: Path, monkeypatch, writer: str) -> int:
    """Dream a Claude Code folder whose MEMORY.md is written to at step 1, 2, … of its replace,
    until a run ends before the step; returns how many steps there were."""
    at = 0
    while True:
        at += 1
        folder = claude_folder(tmp_path / f"{writer}-{at}")
        index = folder / "MEMORY.md"
        context = with_an_entry(folder)
        fd = os.open(index, os.O_WRONLY | os.O_APPEND)  # a shell that opened it before the dream

        def write() -> None:
            if writer == "descriptor":
                os.write(fd, LINE.encode())
            elif writer == "append":
                with open(index, "a", encoding="utf-8") as handle:  # echo "- fact" >> MEMORY.md
                    handle.write(LINE)
            else:  # an editor saving a new file over it
                (folder / "editor.swp").write_text(index.read_text(encoding="utf-8") + LINE, encoding="utf-8")
                os.rename(folder / "editor.swp", index)
        steps = Steps(at, write)
        with monkeypatch.context() as patch:
            step_into(patch, steps, "MEMORY.md")
            try:
                report = dream(context, NOW, DreamOptions(), DeterministicDistiller()).report.as_json()
            finally:
                os.close(fd)
        if not steps.fired:
            return at - 1
        where = f"{writer} after step {at}: {report['warnings']}"
        text = index.read_text(encoding="utf-8")
        for line in INDEX.splitlines():  # the title, the sections, every hand-written line: at the path
            assert line in text.splitlines(), f"{line!r} is gone from MEMORY.md: {where}"
        kept = hidden_files(folder)
        for name in kept:  # nothing is beside it that no warning names
            assert any(name in warning for warning in report["warnings"]), f"{name} unnamed: {where}"
        assert LINE in text or any(LINE in (folder / name).read_text(encoding="utf-8") for name in kept), \
            f"the line is lost: {where}"
        assert not any("build-index" in warning for warning in report["warnings"]), where
        if LINE not in text:
            assert "changed since the dream started" in " ".join(report["warnings"]), where


@pytest.mark.parametrize("writer", ["append", "descriptor", "editor"])
def test_a_write_to_memory_md_at_any_step_of_its_replace_loses_nothing(tmp_path, monkeypatch, writer):
    """Item 1: the move-aside window. A write that found the path empty made a MEMORY.md of one
    line and dream deleted the original; one through a descriptor went into a deleted copy."""
    assert dream_with_a_write_at_each_step(tmp_path, monkeypatch, writer) >= 8


class Killed(BaseException):
    """What a SIGKILL leaves: no handler runs, nothing is cleaned up (but the locks, which a
    dead process does not hold)."""


@pytest.mark.parametrize("written", [False, True])
def test_a_dream_killed_at_any_step_of_memory_md_replace_is_rolled_back_by_the_next_leaving_nothing_beside(
        tmp_path, monkeypatch, written):
    at = 0
    while True:
        at += 1
        folder = claude_folder(tmp_path / f"{written}-{at}")
        index = folder / "MEMORY.md"
        context = with_an_entry(folder)

        def kill() -> None:
            if written:
                with open(index, "a", encoding="utf-8") as handle:
                    handle.write(LINE)
            raise Killed
        steps = Steps(at, kill)
        with monkeypatch.context() as patch:
            step_into(patch, steps, "MEMORY.md")
            try:
                dream(context, NOW, DreamOptions(), DeterministicDistiller())
            except Killed:
                pass
        if not steps.fired:
            break
        report = dream(open_context(folder), NOW, DreamOptions(), DeterministicDistiller()).report.as_json()
        where = f"killed after step {at}: {report['warnings']}"
        assert any("interrupted while applying: rolled back" in w for w in report["warnings"]), where
        text = index.read_text(encoding="utf-8")
        assert all(line in text.splitlines() for line in INDEX.splitlines()), where
        assert (LINE in text) == written, where
        assert hidden_files(folder) == set(), where
    assert at > 8


# ---------------------------------------------------------------- item 2: build-index in a Claude Code folder

UNLISTED = ("---\nname: Parser reviews\ndescription: Parser crate reviews need a second reviewer\ntype: project\n"
            "---\nReviews of the parser crate need a second reviewer.\n")


def folder_with_an_unlisted_memory(base: Path) -> Path:
    folder = claude_folder(base)
    (folder / "project_parser_reviews.md").write_text(UNLISTED, encoding="utf-8")  # build-index adds its line
    return folder


def test_build_index_keeps_a_line_appended_between_its_read_and_its_write(tmp_path, cli, monkeypatch):
    import auto_dream.store.memory_md as memory_md

    folder = folder_with_an_unlisted_memory(tmp_path)
    index = folder / "MEMORY.md"
    real_render, renders = memory_md.render_index, []

    def render_then_the_agent_writes(*args, **kwargs):
        result = real_render(*args, **kwargs)
        renders.append(result)
        if len(renders) == 1:
            with open(index, "a", encoding="utf-8") as handle:
                handle.write(LINE)
        return result
    monkeypatch.setattr(memory_md, "render_index", render_then_the_agent_writes)
    result = cli("--root", folder, "build-index")
    assert result.code == 0, result
    text = index.read_text(encoding="utf-8")
    assert LINE in text and "](project_parser_reviews.md)" in text  # made again from the file as it then was
    assert all(line in text.splitlines() for line in INDEX.splitlines())
    assert hidden_files(folder) == set()


def test_build_index_in_a_folder_whose_memory_md_keeps_changing_writes_nothing_and_says_so(tmp_path, cli,
                                                                                            monkeypatch):
    import auto_dream.store.memory_md as memory_md

    folder = folder_with_an_unlisted_memory(tmp_path)
    index = folder / "MEMORY.md"
    real_render = memory_md.render_index
    lines = iter(f"- the agent's fact number {n}\n" for n in range(10))

    def render_then_the_agent_writes(*args, **kwargs):
        result = real_render(*args, **kwargs)
        with open(index, "a", encoding="utf-8") as handle:
            handle.write(next(lines))
        return result
    monkeypatch.setattr(memory_md, "render_index", render_then_the_agent_writes)
    result = cli("--root", folder, "build-index")
    assert result.code == 1 and result.err.count("\n") == 1 and "kept changing" in result.err, result
    assert "](project_parser_reviews.md)" not in index.read_text(encoding="utf-8")
    assert index.read_text(encoding="utf-8").endswith("- the agent's fact number 2\n")


@pytest.mark.parametrize("writer", ["append", "descriptor"])
def test_build_index_loses_no_line_written_at_any_step_of_its_replace(tmp_path, cli, monkeypatch, writer):
    import auto_dream.store.memory_md as memory_md
    import auto_dream.store.replace as replace

    at = 0
    while True:
        at += 1
        folder = folder_with_an_unlisted_memory(tmp_path / str(at))
        index = folder / "MEMORY.md"
        fd = os.open(index, os.O_WRONLY | os.O_APPEND)

        def write() -> None:
            if writer == "descriptor":
                os.write(fd, LINE.encode())
            else:
                with open(index, "a", encoding="utf-8") as handle:
                    handle.write(LINE)
        steps = Steps(at, write)
        real_replace = memory_md.replace_if_unchanged

        def replace_counting(*args, **kwargs):
            steps.active = True
            try:
                return real_replace(*args, **kwargs)
            finally:
                steps.active = False
        with monkeypatch.context() as patch:
            patch.setattr(replace, "os", steps)
            patch.setattr(memory_md, "replace_if_unchanged", replace_counting)
            try:
                result = cli("--root", folder, "build-index")
            finally:
                os.close(fd)
        if not steps.fired:
            break
        text = index.read_text(encoding="utf-8")
        assert result.code == 0 and LINE in text and "](project_parser_reviews.md)" in text, (at, result)
        assert all(line in text.splitlines() for line in INDEX.splitlines()) and hidden_files(folder) == set()
    assert at > 8


# ---------------------------------------------------------------- item 3 and 19: undo


def dreamed_folder(base: Path, cli) -> tuple[Path, dict[str, bytes], str]:
    """A Claude Code folder after one dream that created a topic file and added its line to
    MEMORY.md: the folder, its files as they were before, the new file's name."""
    folder = claude_folder(base)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert cli("--root", folder, "append", "--type", "project",
               "Reviews of the parser crate need a second reviewer").code == 0
    assert cli("--root", folder, "dream", "--no-llm").code == 0
    (created,) = {p.name for p in folder.glob("*.md")} - set(before)
    return folder, before, created


def test_undo_leaves_a_file_edited_while_it_runs_and_says_so(tmp_path, cli, monkeypatch):
    """Item 3: undo checked for changes once, at the start, then wrote each file over: an edit
    made while it ran was overwritten, and a file the run created was removed with it."""
    import auto_dream.dream.journal as runs

    folder, before, created = dreamed_folder(tmp_path, cli)
    index, topic = folder / "MEMORY.md", folder / created
    real_read_pre, edits = runs._read_pre, []

    def edit_while_undo_runs(path):  # undo reads each pre-image right before it puts it back
        if not edits:
            edits.append(path)
            with open(index, "a", encoding="utf-8") as handle:
                handle.write(LINE)
            with open(topic, "a", encoding="utf-8") as handle:
                handle.write("\nEdited while undo ran.\n")
        return real_read_pre(path)
    monkeypatch.setattr(runs, "_read_pre", edit_while_undo_runs)
    result = cli("--root", folder, "undo")
    monkeypatch.undo()
    assert result.code == 0 and edits, result
    assert LINE in index.read_text(encoding="utf-8") and "Edited while undo ran." in topic.read_text(encoding="utf-8")
    assert "MEMORY.md changed while undo ran: left as it is" in result.err, result
    assert f"{created} changed while undo ran: left as it is" in result.err, result
    assert "2 changed while undo ran, left as they are" in result.out, result
    assert hidden_files(folder) == set()
    # the run is not undone yet: a second undo says what changed, and --force finishes it, keeping copies
    again = cli("--root", folder, "undo")
    assert again.code == 1 and "changed since that run" in again.err, again
    forced = cli("--root", folder, "undo", "--force")
    assert forced.code == 0, forced
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".consolidate-lock"} \
        == before


def test_undo_force_says_it_discards_later_changes_and_keeps_a_copy_of_each(tmp_path, cli):
    """Item 19: undo --force put the files back without a word about the changes it discarded,
    and kept no copy of them."""
    folder, before, _ = dreamed_folder(tmp_path, cli)
    index = folder / "MEMORY.md"
    with open(index, "a", encoding="utf-8") as handle:
        handle.write(LINE)
    edited = index.read_bytes()
    refused = cli("--root", folder, "undo")
    assert refused.code == 1 and "versions it replaces are kept in" in refused.err, refused
    forced = cli("--root", folder, "undo", "--force")
    assert forced.code == 0 and index.read_bytes() == before["MEMORY.md"], forced
    (warning,) = [line for line in forced.err.splitlines() if "MEMORY.md" in line]
    assert "restored anyway (--force): the version with those changes is kept as" in warning
    copy = folder / warning.rsplit(" kept as ", 1)[1]
    assert copy.read_bytes() == edited
    assert copy.is_relative_to(folder / ".auto-dream") and not copy.name.endswith(".md")  # Claude Code never reads it


def test_native_undo_puts_memory_md_back_byte_for_byte_when_nothing_changed_it(tmp_path, cli):
    """Item 19: in our own layout undo rebuilt MEMORY.md from the memories even when the run's
    version was still there, so the one before the run (a note added by hand) did not come back."""
    from auto_dream.store.paths import ensure_store

    root = tmp_path / "store" / ".auto-dream"
    ensure_store(root)
    assert cli("--root", root, "append", "--type", "project", "The staging cluster lives in eu-west-1.").code == 0
    assert cli("--root", root, "build-index").code == 0
    index = root / "MEMORY.md"
    with open(index, "a", encoding="utf-8") as handle:
        handle.write("<!-- a note kept by hand -->\n")
    before = index.read_bytes()
    assert cli("--root", root, "dream", "--no-llm").code == 0
    assert index.read_bytes() != before
    assert cli("--root", root, "undo").code == 0
    assert index.read_bytes() == before


def test_native_undo_rebuilds_memory_md_when_it_changed_since_the_run(tmp_path, cli):
    from auto_dream.store.paths import ensure_store

    root = tmp_path / "store" / ".auto-dream"
    ensure_store(root)
    assert cli("--root", root, "append", "--type", "project", "The staging cluster lives in eu-west-1.").code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    index = root / "MEMORY.md"
    index.write_text("scribbled over\n", encoding="utf-8")
    assert cli("--root", root, "undo").code == 0
    assert "scribbled" not in index.read_text(encoding="utf-8") and "eu-west-1" not in index.read_text(encoding="utf-8")


# ---------------------------------------------------------------- item 18: Claude Code's lock after a kill


@pytest.mark.slow  # kills a child Python at each step
@pytest.mark.parametrize("after", [("undo",), ("dream", "--if-due", "--no-llm")])
def test_a_killed_dream_rolled_back_puts_claude_codes_lock_back_too(tmp_path, cli, after):
    """A dream SIGKILLed while applying left .consolidate-lock naming its dead PID with a fresh
    mtime: Claude Code then skipped its own consolidation for 24 hours. The next dream or undo,
    rolling the run back, puts the lock back as Claude Code left it."""
    from conftest import run_killed_at

    folder = claude_folder(tmp_path)
    lock = folder / ".consolidate-lock"
    lock.write_text("2147483646")  # Claude Code's consolidation three days ago; no process has that pid now
    os.utime(lock, (OLD, OLD))
    before = lock.read_bytes(), lock.stat().st_mtime_ns
    assert cli("--root", folder, "append", "--type", "project", "Reviews of the parser crate need a second reviewer",
               ).code == 0
    killed = run_killed_at(3, "--root", folder, "dream", "--no-llm")
    assert killed.returncode == -9, killed
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) != before  # what the kill left: its pid, stamped now
    result = cli("--root", folder, *after)
    assert result.code == 0, result
    (run_folder,) = (folder / ".auto-dream" / "runs").iterdir()
    assert (run_folder / "status").read_text() == "rolled_back", result
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) == before
    assert not (folder / ".auto-dream" / "claude_lock.json").exists()


def test_a_retired_files_hand_written_memory_md_line_is_kept_with_its_archive_copy(tmp_path, cli):
    """Item 19: MEMORY.md drops the list item linking a file dream retires; the hook a person
    wrote on it survived only in the run's journal. The archive copy keeps it."""
    import yaml

    folder = claude_folder(tmp_path)
    assert cli("--root", folder, "append", "--type", "project",
               "The team deploys to production on Monday now, not Friday").code == 0
    assert cli("--root", folder, "dream", "--no-llm").code == 0
    hook = "- [Deploy day](project_deploy_day.md) — my own hook"
    assert hook not in (folder / "MEMORY.md").read_text(encoding="utf-8")
    copy = folder / ".auto-dream" / "archive" / "project" / "project_deploy_day.markdown"
    frontmatter = yaml.safe_load(copy.read_text(encoding="utf-8").split("---\n")[1])
    assert frontmatter["memory_md_lines"] == [hook]
    assert cli("--root", folder, "undo").code == 0
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == INDEX and not copy.exists()


def test_native_memory_md_written_while_undo_runs_is_made_again_and_the_undo_finishes(tmp_path, cli, monkeypatch):
    """Our own MEMORY.md is derived: written to while undo runs, it is not a file left half
    undone but made again from the memories the undo leaves."""
    import auto_dream.dream.journal as runs
    from auto_dream.store.paths import ensure_store

    root = tmp_path / "store" / ".auto-dream"
    ensure_store(root)
    assert cli("--root", root, "build-index").code == 0
    assert cli("--root", root, "append", "--type", "project", "The staging cluster lives in eu-west-1.").code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    index = root / "MEMORY.md"
    real_read_pre = runs._read_pre

    def scribble_then_read(path):
        with open(index, "a", encoding="utf-8") as handle:
            handle.write("scribbled while undo ran\n")
        return real_read_pre(path)
    monkeypatch.setattr(runs, "_read_pre", scribble_then_read)
    result = cli("--root", root, "undo")
    assert result.code == 0 and "left" not in result.out + result.err, result
    text = index.read_text(encoding="utf-8")
    assert "scribbled" not in text and "eu-west-1" not in text
    (run_folder,) = (root / ".state" / "runs").iterdir()
    assert (run_folder / "status").read_text() == "undone"
