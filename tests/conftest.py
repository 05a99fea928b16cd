"""Shared fixtures: every test runs with HOME and the store root pointed at tmp_path."""

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import typer
from hypothesis import settings

from auto_dream.cli import run
from auto_dream.store.paths import StorePaths, ensure_store

# `make test-fast` sets AUTO_DREAM_TESTS=fast: each property test tries a tenth of the examples it
# asks for (at least 10), so the suite a developer runs every few minutes stays short; `make test`
# tries them all.
FAST = os.environ.get("AUTO_DREAM_TESTS") == "fast"


def examples(wanted: int) -> int:
    """How many examples a property test tries: `wanted`, or a tenth of it in the fast suite."""
    return max(10, wanted // 10) if FAST else wanted


def memory_folder(need: int = 2 << 30) -> str | None:
    """/dev/shm, when it is a folder of the system's memory with `need` bytes free, else None."""
    try:
        free = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if free.f_bavail * free.f_frsize >= need and os.access("/dev/shm", os.W_OK | os.X_OK) else None


# The fast suite keeps its temporary folders (tmp_path) in memory where it can and TMPDIR names
# no other place: every write a test makes is flushed to the disk (fsync, as the store's writes
# are), which on a disk is a third of the suite's time. `make test` writes them to the disk.
if FAST and "TMPDIR" not in os.environ and (_memory := memory_folder()) is not None:
    tempfile.tempdir = _memory


# Hypothesis's settings for the run: "fast" (`make test-fast`) tries 10 examples where a test asks
# for none, "full" (`make test`) Hypothesis's own default; a test that asks for a number asks
# examples() for it. Both print the blob that replays a failure (`@reproduce_failure`).
settings.register_profile("full", print_blob=True)
settings.register_profile("fast", parent=settings.get_profile("full"), max_examples=10)
settings.load_profile("fast" if FAST else "full")

BIN = Path(sys.executable).parent

# `slow` (left out by `make test-fast`) is written on each test that starts a process (the installed
# command, a child Python, a fake tool, a pool) or is heavy, and on the torture files by their
# pytestmark. git is the exception: the staleness tests run it to build a history, and it takes a
# few milliseconds a command. A test of the fast suite that starts any other process fails, naming
# it (starts_no_process_unless_slow below), so a missing mark is found the first time the test runs.
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
                            "os.system"})
_started: list[str] | None = None  # what the running test started, while it is not marked slow


def _program(event: str, args: tuple) -> str:
    """The program an audit event starts ("python", "auto-dream", "crontab"…), or the event."""
    argv = {"subprocess.Popen": 1, "os.posix_spawn": 1, "os.exec": 1, "os.spawn": 2}.get(event)
    if argv is None or len(args) <= argv:
        return event
    first = args[argv][0] if isinstance(args[argv], (list, tuple)) and args[argv] else args[argv]
    return os.path.basename(os.fsdecode(first).split()[0]) if first else event


def _hear_process(event: str, args: tuple) -> None:
    if _started is not None and event in PROCESS_EVENTS:
        program = _program(event, args)
        if program != "git":
            _started.append(program)


sys.addaudithook(_hear_process)  # a hook stays for the process: it records only while _started is a list


@pytest.fixture(autouse=True)
def starts_no_process_unless_slow(request):
    """A test not marked slow starts no process but git: else it fails, naming what it started."""
    global _started
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    _started = []
    try:
        yield
    finally:
        started, _started = _started, None
    if started:
        pytest.fail(f"{request.node.nodeid} starts {', '.join(sorted(set(started)))} but is not marked slow: "
                    "write @pytest.mark.slow on it (CONTRIBUTING.md, Tests)", pytrace=False)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No test sees the real home, a real store or XDG folders; none needs an API key."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith("XDG_") or name in ("AUTO_DREAM_ROOT", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def places(isolated_env, tmp_path, monkeypatch):
    """For agent installs: HOME, XDG_CONFIG_HOME, a project (the current folder, with src/) and a
    store, all in tmp_path."""
    config = tmp_path / "xdg-config"
    config.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    monkeypatch.chdir(project)
    return {"home": isolated_env, "config": config, "project": project, "store": tmp_path / "store" / ".auto-dream"}


@pytest.fixture
def sleeper():
    """A live process that is not a dream: its pid in a lock means the lock is held."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    child.kill()
    child.wait()


@pytest.fixture
def root(tmp_path) -> Path:
    """An empty store at tmp_path/store/.auto-dream."""
    path = tmp_path / "store" / ".auto-dream"
    ensure_store(path)
    return path


@pytest.fixture
def paths(root) -> StorePaths:
    return StorePaths(root)


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, out={self.out!r}, err={self.err!r})"


# The Click command Typer makes of the app, made once: cli.run makes it on each call (8 ms, as much
# as a small command takes), which a process running one command pays once too.
_command_of = functools.cache(typer.main.get_command)


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run the real CLI entry point in-process: cli('--root', r, 'list', '--json')."""
    monkeypatch.setattr(typer.main, "get_command", _command_of)

    def invoke(*argv: str, stdin: str | None = None) -> CliResult:
        capsys.readouterr()
        if stdin is not None:
            import io

            old = sys.stdin
            sys.stdin = io.StringIO(stdin)
        try:
            code = run([str(a) for a in argv])
        finally:
            if stdin is not None:
                sys.stdin = old
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke


def installed_command() -> str:
    """The `auto-dream` script installed in this test run's environment."""
    found = shutil.which("auto-dream", path=str(BIN))
    assert found, "auto-dream is not installed in the test environment (run make test)"
    return found


@pytest.fixture
def auto_dream_exe() -> str:
    return installed_command()


def run_installed(*argv: str, env: dict | None = None, stdin: str | None = None,
                  **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([installed_command(), *map(str, argv)], input=stdin, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=60, **kwargs)


# The installed command's entry point, with cli.STEP_HOOK set to kill the process (SIGKILL) when
# apply reaches step N: `python -c KILL_AT_STEP N ARGS...`. The product reads nothing to do this.
KILL_AT_STEP = """
import os, signal, sys
from auto_dream import __main__, cli
step = int(sys.argv.pop(1))
cli.STEP_HOOK = lambda reached: reached == step and os.kill(os.getpid(), signal.SIGKILL)
__main__.main()
"""


def run_killed_at(step: int, *argv: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    """The installed command's run of `argv` (a dream, an undo), killed at apply's step `step`."""
    return subprocess.run([sys.executable, "-c", KILL_AT_STEP, str(step), *map(str, argv)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=60, **kwargs)


def tree_hash(folder: Path) -> str:
    """A hash of every path, mode and byte under `folder`: equal hashes mean nothing changed."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        stat = path.lstat()
        digest.update(str(path.relative_to(folder)).encode("utf-8", "surrogateescape"))
        digest.update(oct(stat.st_mode).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
        elif path.is_symlink():
            digest.update(os.readlink(path).encode())
    return digest.hexdigest()


def write_memory_file(root: Path, relative: str, content: str | bytes) -> Path:
    """Put a memory file (any bytes) at `root/relative`, folders created."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


# git for the repositories tests build, with no user configuration (HOME is tmp_path). git takes a
# few milliseconds a command, like a file write: a test that builds a history is not marked slow.
GIT = ("git", "-c", "user.name=auto-dream tests", "-c", "user.email=tests@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null")
REMOVED_DEFINITIONS = "src/removed_definitions.py"


def git(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `folder` (argv only); its output. A failure fails the test."""
    done = subprocess.run([*GIT, "-C", str(folder), *args], capture_output=True, text=True, timeout=60,
                          env=None if env is None else {**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout


HISTORY_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def git_history(folder: Path, *commits: dict[str, str | None]) -> Path:
    """A git work tree at `folder` whose history is `commits`, committed in order, one an hour from
    HISTORY_START: each maps a path to its new text, or to None to delete it. One `git fast-import`
    writes them all (a hundred commits take one process, not two hundred), then the work tree is
    checked out as the last commit left it: what `git add -A` and `git commit` of each would make,
    since the folder starts empty and no commit writes a .gitignore (else they are run, commit by
    commit, so that what a .gitignore leaves out is left out)."""
    fresh = not folder.exists() or not any(folder.iterdir())
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q")
    if fresh and not any(Path(path).name == ".gitignore" for files in commits for path in files):
        if commits:
            _fast_import(folder, commits)
        return folder
    for number, files in enumerate(commits):
        for relative, text in files.items():
            path = folder / relative
            if text is None:
                path.unlink()
                while path.parent != folder and not any(path.parent.iterdir()):  # as `git rm` leaves it
                    path = path.parent
                    path.rmdir()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        git(folder, "add", "-A")
        when = (HISTORY_START + timedelta(hours=number)).isoformat()
        git(folder, "commit", "-q", "--allow-empty", "-m", f"commit {number + 1}",
            env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    return folder


def _fast_import(folder: Path, commits: tuple[dict[str, str | None], ...]) -> None:
    """git_history's commits on main by `git fast-import`, then the work tree checked out."""
    def data(raw: bytes) -> bytes:
        return b"data %d\n%s\n" % (len(raw), raw)

    stream = bytearray()
    for number, files in enumerate(commits):
        when = int((HISTORY_START + timedelta(hours=number)).timestamp())
        who = f"auto-dream tests <tests@example.invalid> {when} +0000\n".encode()
        stream += b"commit refs/heads/main\nauthor " + who + b"committer " + who
        stream += data(f"commit {number + 1}\n".encode())
        for relative, text in files.items():
            if text is None:
                stream += f"D {relative}\n".encode()
            else:
                stream += f"M 100644 inline {relative}\n".encode() + data(text.encode("utf-8"))
    done = subprocess.run([*GIT, "-C", str(folder), "fast-import", "--quiet"], input=bytes(stream),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    git(folder, "reset", "-q", "--hard")


def make_git_project(folder: Path, gone_files: tuple[str, ...] = (), gone_symbols: tuple[str, ...] = (),
                     app: str = "def main():\n    return 0\n") -> Path:
    """A git work tree (references are checked against it) with src/app.py (defining main()), whose
    history also held `gone_files` and a definition of each of `gone_symbols`, deleted since: a
    memory citing one of those cites something provably gone."""
    then = {"src/app.py": app, **{path: "# retired\n" for path in gone_files}}
    if gone_symbols:
        then[REMOVED_DEFINITIONS] = "".join(f"def {name}():\n    pass\n\n" for name in gone_symbols)
    now: dict[str, str | None] = {path: None for path in then if path != "src/app.py"}
    return git_history(folder, then, now)
