"""The progress of a dream: the core tells a Progress (auto_dream.progress) of each stage and
step, and the command line draws it as a bar on a terminal, none when piped or with --json."""

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from auto_dream import cli
from auto_dream.distill.base import DistillRequest, Thresholds
from auto_dream.distill.claude import AnthropicDistiller, LlmSettings
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.journal import read_journal
from auto_dream.dream.runner import dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.errors import StoreError
from auto_dream.progress import CHECKING, DISTILLING, PLANNING, READING, RECORDING, WRITING, Progress
from auto_dream.store.context import open_context
from auto_dream.store.daylog import Entry, append_entry
from auto_dream.store.paths import StorePaths, ensure_store
from builders import write_memory
from conftest import installed_command
from fake_anthropic import FakeAnthropic, answer, error, one_memory_per_entry

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
FAKE_KEY = "sk-ant-fake-progress"
ENTRIES = [
    ("user", "The user is a backend developer who mostly writes Go"),
    ("reference", "Fund data API runs at localhost:5000"),
    ("feedback", "Don't deploy on Fridays"),
]


class RecordingProgress:
    """A Progress that keeps every call."""

    def __init__(self):
        self.calls: list[tuple] = []

    def start(self, stage, total):
        self.calls.append(("start", stage, total))

    def advance(self, done=1):
        self.calls.append(("advance", done))

    def finish(self):
        self.calls.append(("finish",))

    def stages(self) -> list[tuple[str, int | None, int]]:
        """(stage, total, steps advanced) in the order the stages came."""
        stages: list[list] = []
        for call in self.calls:
            if call[0] == "start":
                stages.append([call[1], call[2], 0])
            elif call[0] == "advance":
                stages[-1][2] += call[1]
        return [tuple(stage) for stage in stages]


def add_entries(root: Path, entries=ENTRIES) -> None:
    for minute, (kind, text) in enumerate(entries):
        append_entry(StorePaths(root), Entry(datetime(2026, 11, 29, 10, minute), text, kind))


def two_duplicates(root: Path) -> None:
    """Two memories saying the same thing: one candidate pair for the judge."""
    for day, name in ((20, "older"), (25, "newer")):
        write_memory(root, f"memories/project/202611{day}_{name}.md", "Billing moves to Kafka",
                     "The billing service moves to Kafka in December", "project", NOW - timedelta(days=30 - day),
                     "billing on Kafka")


def run_dream(root: Path, progress, **options):
    return dream(open_context(root), NOW, DreamOptions(**options), DeterministicDistiller(), progress=progress)


# ---------------------------------------------------------------- what the core reports


def test_a_dream_reports_each_stage_with_its_total_and_every_step(root):
    add_entries(root)
    two_duplicates(root)
    progress = RecordingProgress()
    outcome = run_dream(root, progress)
    files = read_journal(StorePaths(root), outcome.report.run_id)["files"]
    assert progress.stages() == [
        (READING, None, 0),
        (DISTILLING, 3, 3),  # each entry
        (CHECKING, 1, 1),  # the one pair of duplicates
        (PLANNING, None, 0),
        (WRITING, len(files), len(files)),  # each file the run journaled and wrote
        (RECORDING, None, 0),
    ]
    assert outcome.report.stats.created == 3 and outcome.report.stats.merged == 1
    assert progress.calls[-1] == ("finish",) and progress.calls.count(("finish",)) == 1


def test_a_dry_run_reports_no_writing_and_a_dream_with_nothing_to_do_no_distilling(root):
    add_entries(root)
    progress = RecordingProgress()
    run_dream(root, progress, dry_run=True)
    assert [stage for stage, _, _ in progress.stages()] == [READING, DISTILLING, CHECKING, PLANNING]
    run_dream(root, RecordingProgress())
    again = RecordingProgress()
    run_dream(root, again)  # nothing new: nothing distilled, no pair, nothing written
    assert [stage for stage, _, _ in again.stages()] == [READING, PLANNING, RECORDING]
    assert again.calls[-1] == ("finish",)


def test_a_dream_that_fails_still_finishes_its_progress(root, monkeypatch):
    add_entries(root)

    def broken(self, request):
        raise StoreError("the distiller broke")

    monkeypatch.setattr(DeterministicDistiller, "distill", broken)
    progress = RecordingProgress()
    with pytest.raises(StoreError):
        run_dream(root, progress)
    assert progress.calls[-1] == ("finish",)


def test_claude_counts_each_batch_once_even_when_one_falls_back():
    entries = [Entry(datetime(2026, 11, 29, 10, minute), f"Fact number {minute} about topic{minute}", "project")
               for minute in range(5)]
    progress = RecordingProgress()
    with FakeAnthropic() as fake:
        fake.enqueue(answer(one_memory_per_entry), error(400), answer(one_memory_per_entry))
        distiller = AnthropicDistiller(LlmSettings(model="claude-sonnet-4-5", api_key=FAKE_KEY, base_url=fake.url,
                                                   batch_entries=2, max_retries=0))
        result = distiller.distill(DistillRequest(entries, {}, {}, Thresholds(), timezone.utc, progress=progress))
    assert result.usage.fallback_batches == 1  # the second batch: distilled deterministically, counted once
    assert progress.calls == [("advance", 2), ("advance", 2), ("advance", 1)]
    assert sorted(s for op in result.operations for s in op.sources) == sorted(e.id for e in entries)


def test_the_library_tells_a_progress_it_is_given(tmp_path):
    import auto_dream

    store = auto_dream.open_store(tmp_path / ".auto-dream", create=True)
    store.append("The user is a backend developer who mostly writes Go", type="user")
    progress = RecordingProgress()
    store.dream(progress=progress)
    assert (DISTILLING, 1, 1) in progress.stages() and progress.calls[-1] == ("finish",)
    assert auto_dream.Progress is Progress


# ---------------------------------------------------------------- the bar, in this process


class Terminal(io.StringIO):
    """Standard error as a terminal: isatty() is True, and it keeps everything drawn on it."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """stderr is a terminal that can draw (not TERM=dumb), and the bar shows at once (the delay,
    cli.PROGRESS_DELAY, is 0): what a dream longer than the delay draws."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "100")  # wide enough for a stage's line whole
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.0)
    return Terminal()


def run_on(screen: Terminal, *argv: str, stdout_too: bool = False) -> int:
    """The command line in this process, its stderr `screen` (set here: pytest's capture takes
    sys.stderr back between a fixture and the test); `stdout_too`: stdout as well, the two
    interleaved as a person at the terminal sees them."""
    saved = sys.stdout, sys.stderr
    sys.stderr = screen
    if stdout_too:
        sys.stdout = screen
    try:
        return cli.run(list(argv))
    finally:
        sys.stdout, sys.stderr = saved


SHOW_CURSOR, HIDE_CURSOR = "\x1b[?25h", "\x1b[?25l"  # Live hides the cursor while it draws


def test_on_a_terminal_the_bar_shows_each_stage_then_is_erased_before_the_report(root, terminal, capsys):
    add_entries(root)
    code = run_on(terminal, "--root", str(root), "dream")
    drawn, out = terminal.getvalue(), capsys.readouterr().out
    assert code == 0
    assert DISTILLING in drawn and "3/3" in drawn and WRITING in drawn
    # drawn once, then erased (Live with transient=True): the cursor hidden, then shown again
    assert drawn.count(HIDE_CURSOR) == 1 and drawn.count(SHOW_CURSOR) == 1
    assert drawn.index(HIDE_CURSOR) < drawn.index(SHOW_CURSOR)
    # the report on stdout is the report alone: no bar, no escape code
    assert out.startswith("## Dream Consolidation Report") and "\x1b" not in out and DISTILLING not in out


def test_the_bar_is_gone_before_an_error_line(root, terminal, monkeypatch):
    add_entries(root)

    def broken(self, request):
        raise StoreError("the distiller broke")

    monkeypatch.setattr(DeterministicDistiller, "distill", broken)
    code = run_on(terminal, "--root", str(root), "dream")
    drawn = terminal.getvalue()
    assert code == 1
    assert READING in drawn and drawn.endswith("auto-dream: error: the distiller broke\n")
    assert drawn.index(SHOW_CURSOR) < drawn.index("auto-dream: error:")


def test_with_json_a_terminal_shows_no_bar_and_stdout_is_one_json_document(root, terminal, capsys):
    add_entries(root)
    code = run_on(terminal, "--root", str(root), "dream", "--json")
    assert code == 0
    assert terminal.getvalue() == ""
    assert json.loads(capsys.readouterr().out)["stats"]["created"] == 3


def test_a_dream_quicker_than_the_delay_draws_nothing_and_leaves_no_timer(root, terminal, monkeypatch, capsys):
    add_entries(root)
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 60.0)
    assert run_on(terminal, "--root", str(root), "dream") == 0
    assert terminal.getvalue() == ""
    assert "## Dream Consolidation Report" in capsys.readouterr().out
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]


def test_a_terminal_that_cannot_draw_gets_no_bar(root, terminal, monkeypatch):
    add_entries(root)
    monkeypatch.setenv("TERM", "dumb")
    assert run_on(terminal, "--root", str(root), "dream") == 0
    assert terminal.getvalue() == ""


def test_dream_all_draws_one_bar_per_folder_each_erased_before_its_report(tmp_path, terminal):
    folders = []
    for name in ("app", "lib"):
        store = ensure_store(tmp_path / "work" / name / ".auto-dream").root
        add_entries(store)
        folders.append(store)
    code = run_on(terminal, "dream", "--all", str(tmp_path / "work"), stdout_too=True)
    seen = terminal.getvalue()
    assert code == 0
    assert seen.count(HIDE_CURSOR) == 2 and seen.count(SHOW_CURSOR) == 2
    # bar 1 | erased, report 1, bar 2 | erased, report 2 and the summary: no report while a bar is up
    before, after_first, after_second = seen.split(SHOW_CURSOR)
    first_report, second_bar = after_first.split(HIDE_CURSOR)
    assert "Dream Consolidation Report" not in before + second_bar
    for chunk, folder in ((first_report, folders[0]), (after_second, folders[1])):
        # the bar's erasing codes first, then the folder's report, plain
        assert chunk.rindex("\x1b") < chunk.index(f"# {folder} (auto-dream)")
    assert "Summary" in after_second


# ---------------------------------------------------------------- the installed command


def slow_claude(request):
    """Claude taking half a second a batch: with two entries a batch, six entries take 1.5 s."""
    reply = answer(one_memory_per_entry)(request)
    reply.delay = 0.5
    return reply


@pytest.fixture
def long_dream(tmp_path):
    """A store whose dream takes longer than the bar's delay (cli.PROGRESS_DELAY, 1 s), whatever the
    machine: its entries go to a Claude that is slow on purpose. Yields (root, environment)."""
    root = tmp_path / "project" / ".auto-dream"
    ensure_store(root)
    add_entries(root, ENTRIES * 2)  # six entries: three batches
    (root / "config.toml").write_text("llm_batch_entries = 2\n")
    with FakeAnthropic(default=slow_claude) as fake:
        env = {name: value for name, value in os.environ.items()
               if name not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR")}
        env.update(TERM="xterm-256color", COLUMNS="100", ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=fake.url)
        yield root, env


def _drain(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: every process holding the terminal has closed it
            return
        if not data:
            return
        chunks.append(data)


def on_terminal(argv: list[str], env: dict) -> tuple[int, str, str, float]:
    """Run the installed command with stderr on a pseudo-terminal (100 columns) and stdout on a pipe:
    (exit code, stdout, what the terminal received, seconds taken)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    began = time.monotonic()
    child = subprocess.Popen([installed_command(), *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=slave, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(master, chunks), daemon=True)
    reader.start()
    try:
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
        reader.join(timeout=10)
        os.close(master)
    return child.returncode, out.decode(), b"".join(chunks).decode("utf-8", "replace"), time.monotonic() - began


@pytest.mark.slow  # starts the installed command
def test_a_long_dream_on_a_terminal_shows_the_bar_and_the_report_stays_clean(long_dream):
    root, env = long_dream
    code, out, drawn, _ = on_terminal(["--root", str(root), "dream", "--llm"], env)
    assert code == 0, drawn
    assert DISTILLING in drawn and "6/6" in drawn and WRITING in drawn
    assert re.search(r"\b[024]/6\b", drawn)  # drawn while Claude was still distilling, not only at the end
    assert HIDE_CURSOR in drawn and drawn.index(HIDE_CURSOR) < drawn.rindex(SHOW_CURSOR)
    assert out.startswith("## Dream Consolidation Report") and "\x1b" not in out


@pytest.mark.slow  # starts the installed command
def test_a_long_dream_piped_shows_no_bar(long_dream):
    root, env = long_dream
    began = time.monotonic()
    done = subprocess.run([installed_command(), "--root", str(root), "dream", "--llm"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert time.monotonic() - began > 1.5  # long enough for the bar: its absence is not haste
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.startswith("## Dream Consolidation Report")


@pytest.mark.slow  # starts the installed command
def test_a_long_dream_with_json_on_a_terminal_shows_no_bar(long_dream):
    root, env = long_dream
    code, out, drawn, took = on_terminal(["--root", str(root), "dream", "--llm", "--json"], env)
    assert code == 0, drawn
    assert took > 1.5
    assert drawn == ""
    assert json.loads(out)["stats"]["llm_calls"] == 3


@pytest.mark.slow  # about 5 seconds: a dream of 1,200 entries
def test_a_dream_of_a_thousand_entries_moves_at_every_entry_and_every_pair(root):
    """A long distillation shows it is working: one step per entry (far more than one per
    thousand), then one per pair checked, the pairs bounded by the comparison budget."""
    import random

    from auto_dream.judge.recent import RECENT_LIMIT
    from auto_dream.store.daylog import format_entry

    rng = random.Random(7)
    common = ["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice", "queue", "cache"]
    start = datetime(2026, 11, 29, 10, 0)
    lines = [format_entry(Entry(start + timedelta(seconds=i), " ".join(
        [f"marker{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}{chr(97 + i // 676)}", *rng.sample(common, 4)]), "project"))
        for i in range(1_200)]
    log = StorePaths(root).log_file(start.date())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(lines), encoding="utf-8")
    progress = RecordingProgress()
    run_dream(root, progress, dry_run=True)
    stages = {stage: (total, done) for stage, total, done in progress.stages()}
    assert stages[DISTILLING] == (1_200, 1_200)
    checked, done = stages[CHECKING]
    assert 1_200 <= checked == done <= 1_200 * RECENT_LIMIT
