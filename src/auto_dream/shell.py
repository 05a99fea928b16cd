"""What the command line takes from its surroundings: the store it names, the text on
standard input, the clock. Only the CLI (cli.py and the fast path in __main__) uses this;
the library below it is given all three.

Nothing heavy is imported here: `append` uses it.
"""

import os
import sys
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auto_dream.errors import InputError
from auto_dream.store.paths import resolve_root

if TYPE_CHECKING:
    from auto_dream.commands.schedule import Surroundings, ToolResult
    from auto_dream.store.recall_index import FullCheck

# The options of `append` and `recall`, the commands agents call all day: each parameter's names
# on the command line. cli.py declares them to Typer from here and __main__'s fast path parses a
# plain line by them, so the two read one line alike (tests/test_quick_options.py).
APPEND_OPTIONS: dict[str, tuple[str, ...]] = {"entry_type": ("--type", "-t"), "at": ("--at",)}
RECALL_OPTIONS: dict[str, tuple[str, ...]] = {"limit": ("--limit", "-n"), "memory_type": ("--type", "-t")}
RECALL_FLAGS: dict[str, tuple[str, ...]] = {"archived": ("--archived",), "as_json": ("--json",)}
CONTEXT_FLAGS: dict[str, tuple[str, ...]] = {"as_json": ("--json",), "cursor_json": ("--cursor-json",)}

# sd_booted(3): "checks whether the directory /run/systemd/system/ exists" — systemd runs here.
# Module-level, so that a test can point it at a folder of its own.
SYSTEMD_BOOTED = Path("/run/systemd/system")
PLATFORM = sys.platform
SCHEDULE_TOOLS = ("crontab", "systemctl", "launchctl")
TOOL_TIMEOUT = 120  # seconds a scheduler's tool gets


def local_time() -> datetime:
    """Now, with the local zone: the clock a command runs at unless it is given one."""
    return datetime.now().astimezone()


def local_zone_usable() -> bool:
    """Whether Python's datetime can hold the local time zone (settle_local_zone says why not)."""
    try:
        datetime.now().astimezone()
    except (ValueError, OverflowError):
        return False
    return True


def settle_local_zone() -> str | None:
    """Make the local time zone one that Python's datetime can hold, and say so (the warning to
    print) when it was not. POSIX lets TZ be 24 hours from UTC (`TZ=UTC+24`), datetime only less:
    every conversion to local time, and so every command, failed. Such a zone is taken as UTC,
    in this process (and the programs it starts) alone."""
    if local_zone_usable():
        return None
    given = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    if hasattr(time, "tzset"):  # POSIX: where such a TZ comes from
        time.tzset()
    zone = f"TZ={given!r}" if given is not None else "the local time zone"
    return f"{zone} is 24 hours or more from UTC, more than Python's clock can hold: times are taken in UTC"


def home_folder() -> Path | None:
    """The user's home folder, or None when there is none (no HOME, no passwd entry for this uid)."""
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return None


def claude_config_dir() -> Path | None:
    """Claude Code's config folder when CLAUDE_CONFIG_DIR moves it from ~/.claude
    (https://code.claude.com/docs/en/claude-directory), else None."""
    given = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser().absolute() if given else None


def openclaw_state_dir() -> Path | None:
    """OpenClaw's state folder when OPENCLAW_STATE_DIR moves it from ~/.openclaw, else None
    (OpenClaw's uninstall guide removes "${OPENCLAW_STATE_DIR:-$HOME/.openclaw}")."""
    given = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
    return Path(given).expanduser().absolute() if given else None


def openclaw_config_path() -> Path | None:
    """OpenClaw's config file when OPENCLAW_CONFIG_PATH moves it from <state-dir>/openclaw.json, else None
    (https://docs.openclaw.ai/help/environment: it overrides the config file path)."""
    given = os.environ.get("OPENCLAW_CONFIG_PATH", "").strip()
    return Path(given).expanduser().absolute() if given else None


def xdg_config_home() -> Path | None:
    """$XDG_CONFIG_HOME when set (OpenCode's config is $XDG_CONFIG_HOME/opencode, else ~/.config/opencode)."""
    given = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return Path(given).expanduser().absolute() if given else None


def codex_home_dir() -> Path | None:
    """Codex's home folder when CODEX_HOME moves it from ~/.codex
    (https://developers.openai.com/codex/guides/agents-md, "How Codex discovers guidance"), else None."""
    given = os.environ.get("CODEX_HOME", "").strip()
    return Path(given).expanduser().absolute() if given else None


def auto_dream_command() -> tuple[str, ...]:
    """How another program (an agent's hook, its MCP client, its shell) starts this auto-dream: by
    absolute path, since its PATH need not be the user's (Claude Code started from an IDE, a
    gateway run by launchd). The `auto-dream` script that is running, else the one installed beside
    this Python, else this Python with `-m auto_dream`. No link is resolved: a venv's `python` is a
    link whose target does not know the venv."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name in ("auto-dream", "auto-dream.exe") and script.is_file():
        return (os.path.abspath(script),)
    beside = Path(os.path.abspath(sys.executable)).parent / "auto-dream"
    if beside.is_file():
        return (str(beside),)
    return (os.path.abspath(sys.executable), "-m", "auto_dream")


def given_folder(given: str | None, what: str) -> Path | None:
    """A folder named on the command line, absolute (`~` expanded), or None when not given."""
    if not given:
        return None
    try:
        return Path(given).expanduser().absolute()
    except RuntimeError:  # `~` and no home folder to expand it to
        raise InputError(f"cannot expand '~' in {what} {given!r}: there is no home folder (HOME is not set)") from None


def store_root(flag: str | None) -> Path:
    """The store a command line names: --root, $AUTO_DREAM_ROOT, the nearest .auto-dream/ upwards,
    ~/.openclaw/workspace/.auto-dream when it exists, ~/.auto-dream (paths.resolve_root). The home
    folder is asked for only when nothing nearer names the store: with --root or AUTO_DREAM_ROOT, or
    inside a store's folder, no HOME is needed."""
    env = os.environ.get("AUTO_DREAM_ROOT")
    cwd = Path.cwd()
    home = home_folder()
    if home is None and not (flag or env):
        # with cwd in the home folder's place, a store found nowhere comes back as cwd/.auto-dream
        found = resolve_root(None, None, cwd, cwd)
        if not found.is_dir():
            raise InputError("no store here and no home folder for ~/.auto-dream (HOME is not set): "
                             "give the store with --root PATH or AUTO_DREAM_ROOT")
        return found
    try:
        return resolve_root(flag, env, cwd, home or cwd)  # with flag or env, home is not used
    except RuntimeError:  # `~` in --root or AUTO_DREAM_ROOT, and no home folder to expand it to
        raise InputError(f"cannot expand '~' in the store's path {flag or env!r}: there is no home "
                         "folder (HOME is not set)") from None


def openclaw_workspace(given: str | None) -> Path:
    """`import openclaw`'s WORKSPACE, by default OpenClaw's own: ~/.openclaw/workspace."""
    try:
        return Path(given).expanduser().absolute() if given else Path.home() / ".openclaw" / "workspace"
    except (RuntimeError, KeyError):  # no HOME, and no passwd entry for this uid
        raise InputError("no home folder for ~/.openclaw/workspace (HOME is not set): "
                         "give the OpenClaw workspace as WORKSPACE") from None


def entry_text(words: list[str]) -> str:
    """`append`'s TEXT… joined by spaces; a lone `-` reads the text from standard input."""
    if words == ["-"]:
        return read_stdin()
    return " ".join(words)


def read_stdin() -> str:
    """The text of standard input; a closed one (`<&-`) gives none to read."""
    if sys.stdin is None:
        raise InputError("nothing to append: standard input is closed")
    return sys.stdin.read()


def run_owed_checks(owed: "Iterable[FullCheck | None]") -> None:
    """The full checks of every memory file that a recall left owing (a large store's,
    store.recall.with_recall_index; None: none), run once the answer is out: where the system can
    fork, in a process of its own that outlives this one, so that the caller is not kept
    waiting; else here and now. One check at a time per store: a store whose check another
    process holds is left to that one. The check's lock is taken here, before the fork, and
    the child keeps it until its check is done: whoever waits for the lock waits for the check."""
    from auto_dream.store.recall_index import check_every_file, check_lock

    checks = list(dict.fromkeys(check for check in owed if check is not None))
    if not hasattr(os, "fork"):
        for check in checks:
            check.run()
        return
    held = [(check.paths, check.tz, lock) for check in checks if (lock := check_lock(check.paths)) is not None]
    if not held:
        return
    for stream in (sys.stdout, sys.stderr):  # nothing of this process's output twice
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    try:
        pid = os.fork()
    except OSError:  # no process to spare: the next recall owes it again
        pid = -1
    if pid != 0:
        for _, _, lock in held:
            os.close(lock)  # the child's copy keeps the lock
        return
    try:  # the child: off the caller's terminal and pipes (a caller reading to the end is not kept)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        for paths, tz, _ in held:
            check_every_file(paths, tz)
    finally:
        os._exit(0)


def schedule_surroundings() -> "Surroundings":
    """What `schedule` needs from around it: the home and XDG config folders, the schedulers'
    tools on PATH, whether systemd runs, the platform, the user id, and the command that runs
    this auto-dream.

    That command is auto_dream_command(), as the agents' hooks and MCP entries have it: by
    absolute path, so it needs nothing from PATH (cron's is /usr/bin:/bin)."""
    import shutil

    from auto_dream.commands.schedule import Surroundings

    home = home_folder()
    if home is None:
        raise InputError("no home folder (HOME is not set): the schedulers keep a user's schedules under it")
    given = os.environ.get("XDG_CONFIG_HOME")
    # the XDG Base Directory spec: a relative $XDG_CONFIG_HOME is invalid and ignored
    config_home = Path(given) if given and os.path.isabs(given) else home / ".config"
    search = os.environ.get("PATH", os.defpath)
    tools = {name: shutil.which(name, path=search) for name in SCHEDULE_TOOLS}
    command = auto_dream_command() if sys.executable else ()
    return Surroundings(home, config_home, tools, SYSTEMD_BOOTED.is_dir(), PLATFORM == "darwin", os.getuid(),
                        command)


def run_tool(argv: Sequence[str], stdin: bytes | None) -> "ToolResult":
    """Run a scheduler's tool (crontab, systemctl, launchctl) and take its output; standard input
    is `stdin`, or nothing (never the terminal: `crontab` would wait for it)."""
    import subprocess

    from auto_dream.commands.schedule import ToolResult

    try:
        if stdin is None:
            done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, timeout=TOOL_TIMEOUT)
        else:
            done = subprocess.run(list(argv), input=stdin, capture_output=True, timeout=TOOL_TIMEOUT)
    except subprocess.TimeoutExpired:
        return ToolResult(-1, b"", f"no answer in {TOOL_TIMEOUT} seconds".encode())
    return ToolResult(done.returncode, done.stdout, done.stderr)
