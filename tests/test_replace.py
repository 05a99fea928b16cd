"""store/replace.py: a file replaced while someone else writes it. A write lands
after each file-system call replace makes in turn — an append through the path, a write
through a descriptor opened before, a truncating rewrite, an editor's rename onto the path —
and after every one of them the path names a whole file, and the line written is at the path
or in a file the outcome names."""

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from auto_dream.store import replace
from auto_dream.store.replace import Expected, remove_if_unchanged, replace_if_unchanged, sha256, side_names

ORIGINAL = b"# Memory\n\n## Notes\n- a line written by hand\n"
NEW = "# Memory\n\n## Notes\n- a line written by hand\n- [Deploys](project_deploys.md) — Tuesdays\n".encode()
LINE = b"- a fact the agent appended\n"
# the calls that name a file or look at one: the moments between them are the steps of the window
STEPS = {"link", "rename", "unlink", "open", "lstat", "fstat", "chmod", "utime"}


class Injecting:
    """`os` as store/replace.py sees it, with writes by someone else right after its n-th calls
    (and after an exchange of two names); and whether the path was ever found empty."""

    def __init__(self, writes: dict[int, Callable[[], None]], target: Path):
        self.writes, self.target = writes, target
        self.calls, self.fired, self.empty = 0, False, False
        self.hard_links = True  # False: a file system without them (FAT, some network shares)

    def step(self) -> None:
        self.calls += 1
        self.empty = self.empty or not os.path.lexists(self.target)
        if self.calls in self.writes:
            self.fired = self.calls == max(self.writes)
            self.writes[self.calls]()

    def __getattr__(self, name: str):
        real = getattr(os, name)
        if name not in STEPS:
            return real

        def call(*args, **kwargs):
            if name == "link" and not self.hard_links:
                raise PermissionError(errno.EPERM, "Operation not permitted")
            result = real(*args, **kwargs)
            self.step()
            return result
        return call


@pytest.fixture
def inject(monkeypatch):
    """inject({at: write}, target): each write happens right after the `at`-th step of replace."""
    real_exchange = replace.exchange

    def install(writes: dict[int, Callable[[], None]], target: Path) -> Injecting:
        injecting = Injecting(writes, target)

        def exchange(first, second):
            done = real_exchange(first, second)
            injecting.step()
            return done
        monkeypatch.setattr(replace, "os", injecting)
        monkeypatch.setattr(replace, "exchange", exchange)
        return injecting
    return install


def appends(target: Path) -> Callable[[], None]:
    def write():
        with open(target, "ab") as handle:  # what `echo "- fact" >> MEMORY.md` does
            handle.write(LINE)
    return write


def rewrites(target: Path) -> Callable[[], None]:
    def write():
        data = target.read_bytes()
        with open(target, "wb") as handle:  # an editor that saves in place
            handle.write(data + LINE)
    return write


def saves_by_rename(target: Path) -> Callable[[], None]:
    def write():
        data = target.read_bytes()
        (target.parent / "editor.swp").write_bytes(data + LINE)
        os.rename(target.parent / "editor.swp", target)  # an editor that saves a new file over it
    return write


def through_descriptor(fd: int) -> Callable[[], None]:
    return lambda: os.write(fd, LINE)  # a shell that opened it before: `exec 3>>MEMORY.md`


def where_the_line_is(target: Path, kept: list[Path]) -> list[Path]:
    return [path for path in [target, *kept] if path.is_file() and LINE in path.read_bytes()]


def leftovers(folder: Path, target: Path, kept: list[Path]) -> set[str]:
    return {p.name for p in folder.iterdir()} - {target.name, *(k.name for k in kept)}


WRITERS = {"append": appends, "rewrite": rewrites, "editor": saves_by_rename}


def replace_with_a_write_at_each_step(tmp_path: Path, inject, writer: str, hard_links: bool = True) -> int:
    """Replace ORIGINAL by NEW with the write after step 1, 2, … until a run ends before it;
    returns the number of steps. Each run checks what a user would notice."""
    at = 0
    while True:
        at += 1
        folder = tmp_path / f"{writer}-{at}"
        folder.mkdir()
        target = folder / "MEMORY.md"
        target.write_bytes(ORIGINAL)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
        try:
            write = through_descriptor(fd) if writer == "descriptor" else WRITERS[writer](target)
            held, staged = side_names(target, "0001-20261130T120000")
            injecting = inject({at: write}, target)
            injecting.hard_links = hard_links
            outcome = replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged)
        finally:
            os.close(fd)
        if not injecting.fired:
            return at - 1
        where = f"a write by {writer} after step {at}: {outcome}"
        assert not injecting.empty, f"the path was empty: {where}"
        assert where_the_line_is(target, outcome.kept), f"the line is lost: {where}"
        text = target.read_bytes()
        if outcome.status == "done":  # the new version stands; the line went into it
            assert text == NEW + LINE, where
        else:  # their version stands, as they made it; ours is kept only if it holds their line
            assert outcome.status == "changed" and text.startswith(ORIGINAL) and LINE in text, where
            assert all(LINE in k.read_bytes() for k in outcome.kept), where
        assert leftovers(folder, target, outcome.kept) == set(), where


@pytest.mark.parametrize("writer", ["append", "rewrite", "editor", "descriptor"])
def test_a_write_at_any_step_of_a_replace_is_kept_and_the_path_is_never_empty(tmp_path, inject, writer):
    assert replace_with_a_write_at_each_step(tmp_path, inject, writer) >= 8


@pytest.mark.parametrize("hard_links", [True, False])
@pytest.mark.parametrize("writer", ["append", "rewrite", "descriptor"])
def test_where_names_cannot_be_exchanged_a_write_through_the_path_or_a_descriptor_is_still_kept(
        tmp_path, inject, monkeypatch, writer, hard_links):
    monkeypatch.setattr(replace, "_exchange_call", lambda: None)  # no renameat2: one rename puts it in place
    assert replace_with_a_write_at_each_step(tmp_path, inject, writer, hard_links) >= 5


def test_the_file_system_exchanges_names_here_so_the_tests_above_saw_it():
    assert replace._exchange_call() is not None  # Linux with renameat2, or macOS with renamex_np


@pytest.mark.parametrize("writer", ["append", "descriptor"])
def test_a_write_at_any_step_of_a_removal_is_kept(tmp_path, inject, writer):
    at = 0
    while True:
        at += 1
        folder = tmp_path / f"{writer}-{at}"
        folder.mkdir()
        target = folder / "project_deploys.md"
        target.write_bytes(ORIGINAL)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
        try:
            write = through_descriptor(fd) if writer == "descriptor" else appends(target)
            held, _ = side_names(target, "0001-20261130T120000")
            injecting = inject({at: write}, target)
            outcome = remove_if_unchanged(target, Expected(sha256(ORIGINAL)), held)
        finally:
            os.close(fd)
        if not injecting.fired:
            break
        where = f"a write by {writer} after step {at}: {outcome}"
        assert where_the_line_is(target, outcome.kept), f"the line is lost: {where}"
        if outcome.status == "changed" and target.exists() and LINE not in target.read_bytes():
            assert outcome.kept, where
        assert leftovers(folder, target, outcome.kept) == set(), where
    assert at > 4


def test_a_shell_writing_the_old_file_and_an_agent_appending_to_the_new_one_both_keep_their_lines(tmp_path, inject):
    """A shell's descriptor opened before writes the file being replaced at one step; at a later
    one an agent appends through the path (to dream's new file, once it stands there)."""
    shell, agent = b"- written through a descriptor\n", b"- appended through the path\n"
    runs = 0
    for first in range(1, 13):
        for second in range(first + 1, 14):
            folder = tmp_path / f"{first}-{second}"
            folder.mkdir()
            target = folder / "MEMORY.md"
            target.write_bytes(ORIGINAL)
            fd = os.open(target, os.O_WRONLY | os.O_APPEND)

            def append():
                with open(target, "ab") as handle:
                    handle.write(agent)
            try:
                held, staged = side_names(target, "run")
                injecting = inject({first: lambda: os.write(fd, shell), second: append}, target)
                outcome = replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged)
            finally:
                os.close(fd)
            if not injecting.fired:
                continue
            runs += 1
            where = f"writes after steps {first} and {second}: {outcome}"
            found = b"".join(path.read_bytes() for path in [target, *outcome.kept])
            assert shell in found and agent in found and not injecting.empty, where
            assert outcome.status == "changed" and target.read_bytes().startswith(ORIGINAL), where
            assert leftovers(folder, target, outcome.kept) == set(), where
    assert runs >= 40


def test_a_file_written_then_saved_over_by_an_editor_as_replace_holds_it_is_kept_beside(tmp_path, inject):
    """The moment replace has a second name on the file, a shell writes to it and an editor
    saves its own buffer over the path: the shell's line is in the old file alone, which stays."""
    def memory_md(name: str) -> tuple[Path, Path, Path, Path]:
        (tmp_path / name).mkdir()
        target = tmp_path / name / "MEMORY.md"
        target.write_bytes(ORIGINAL)
        return (tmp_path / name, target, *side_names(target, "run"))

    _, target, held, staged = memory_md("probe")
    steps: list[bool] = []
    inject({n: (lambda: steps.append(os.path.lexists(held))) for n in range(1, 20)}, target)
    replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged)
    holding = steps.index(True) + 1  # the step after which the old file has its second name

    folder, target, held, staged = memory_md("memory")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)

    def save_over():
        (folder / "editor.swp").write_bytes(ORIGINAL + b"- edited\n")
        os.rename(folder / "editor.swp", target)
    try:
        inject({holding: lambda: os.write(fd, LINE), holding + 1: save_over}, target)
        outcome = replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged)
    finally:
        os.close(fd)
    assert outcome.status == "changed" and target.read_bytes() == ORIGINAL + b"- edited\n"
    assert outcome.kept == [held] and held.read_bytes() == ORIGINAL + LINE


def test_a_file_changed_before_the_check_is_left_and_nothing_is_written(tmp_path):
    (tmp_path / "memory").mkdir()
    target = tmp_path / "memory" / "MEMORY.md"
    target.write_bytes(ORIGINAL + LINE)
    held, staged = side_names(target, "run")
    outcome = replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged)
    assert outcome.status == "changed" and outcome.kept == []
    assert target.read_bytes() == ORIGINAL + LINE and os.listdir(target.parent) == ["MEMORY.md"]


def test_a_file_gone_is_absent_and_not_made_again(tmp_path):
    (tmp_path / "memory").mkdir()
    target = tmp_path / "memory" / "MEMORY.md"
    held, staged = side_names(target, "run")
    assert replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL)), held, staged).status == "absent"
    assert os.listdir(target.parent) == []


def test_the_stamp_is_checked_too_and_mode_and_time_are_given_to_the_new_file(tmp_path):
    target = tmp_path / "MEMORY.md"
    target.write_bytes(ORIGINAL)
    status = target.stat()
    stamp = (status.st_size, status.st_mtime_ns, status.st_ino)
    held, staged = side_names(target, "run")
    moved = (status.st_size, status.st_mtime_ns + 1, status.st_ino)
    assert replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL), moved), held, staged).status == "changed"
    outcome = replace_if_unchanged(target, NEW, Expected(sha256(ORIGINAL), stamp), held, staged, 0o640, 10**18)
    assert outcome.status == "done" and target.read_bytes() == NEW
    assert (target.stat().st_mode & 0o777, target.stat().st_mtime_ns) == (0o640, 10**18)


def test_side_names_are_numbered_past_a_kept_file(tmp_path):
    target = tmp_path / "MEMORY.md"
    first = side_names(target, "0001-20261130T120000")
    first[1].write_bytes(b"kept from an earlier run\n")
    assert side_names(target, "0001-20261130T120000") == (
        tmp_path / ".MEMORY.md.0001-20261130T120000-2.old", tmp_path / ".MEMORY.md.0001-20261130T120000-2.new")
