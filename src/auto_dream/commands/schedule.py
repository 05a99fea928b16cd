"""`schedule install|remove|status`: cron/'s schedules, installed for one store.

What is installed is cron/'s own files (shipped in the package as auto_dream/cron, a link to
the repo's cron/ as templates/ is), with the store and the command that runs auto-dream put
where they say "$HOME/.auto-dream" and "$HOME/.local/bin/auto-dream": an installed schedule
cannot drift from the files cron/README.md shows and tests/test_cron.py runs.

Ours, and per store. A store's schedule id is the first 12 hex digits of the SHA-256 of its
real path. In the crontab a marker comment naming the id and the store comes right before the
line; a systemd user timer is auto-dream-<id>.timer (with auto-dream-<id>.service); a launchd
agent is labelled com.auto-dream.dream.<id>. So each store has at most one schedule per
scheduler, installing again replaces it (--weekly then --hourly too), and remove takes out
only this store's.

Planning is pure but for reading: the surroundings (home, XDG config folder, the tools on
PATH, whether systemd runs, the platform, the user id, the command that runs auto-dream) come
in as a Surroundings, and the tools run through an injected Runner. plan_install and
plan_remove return the Plan, the whole decision; apply_plan carries it out, and a dry run
describes the same plan (describe_step).

With install (an agent's files), this is the one command that writes outside the store, and
only what is named above: this store's crontab lines, its two unit files, its plist, and the
scheduler's reload of them.
"""

import difflib
import hashlib
import json
import os
import plistlib
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from importlib.resources import files
from pathlib import Path

from auto_dream.commands.rollback import Rollback, failure
from auto_dream.errors import AutoDreamError, InputError, StoreError
from auto_dream.store.files import make_dirs, read_regular, write_atomic
from auto_dream.store.paths import open_store

SCHEDULERS = ("cron", "systemd", "launchd")
FREQUENCIES = ("weekly", "hourly")
TEMPLATES = {  # the files of cron/ each schedule is made from
    ("cron", "weekly"): ("auto-dream-weekly.crontab",),
    ("cron", "hourly"): ("auto-dream-hourly.crontab",),
    ("systemd", "weekly"): ("auto-dream.service", "auto-dream.timer"),
    ("systemd", "hourly"): ("auto-dream-hourly.service", "auto-dream-hourly.timer"),
    ("launchd", "weekly"): ("com.auto-dream.dream.plist",),
    ("launchd", "hourly"): ("com.auto-dream.dream-hourly.plist",),
}
# What cron/'s files say in the places installing fills in.
SH_COMMAND = '"$HOME/.local/bin/auto-dream"'
SH_STORE = '"$HOME/.auto-dream"'
SH_LOG = '"$HOME/.auto-dream/.state/cron.log"'
UNIT_COMMAND = "%h/.local/bin/auto-dream"
UNIT_STORE = "%h/.auto-dream"
LOG_NAME = "cron.log"  # the scheduled dreams' output (cron, launchd), in the store's state folder

CRON_MARKER = re.compile(rb"# auto-dream schedule ([0-9a-f]{12}) for ")
# A crontab whose last line had no newline gets one before our lines (cron ignores, and cronie's
# crontab refuses, a last line without one); the marker says so, and remove takes it back out.
JOINED = ", and the newline it added at the end of the line above"
NO_CRONTAB = b"no crontab for"  # `crontab -l` with no table yet: Vixie cron, cronie, macOS (exit 1)


# ---------------------------------------------------------------- the surroundings


@dataclass(frozen=True)
class Surroundings:
    """What the command line finds around it (shell.schedule_surroundings)."""

    home: Path
    config_home: Path  # $XDG_CONFIG_HOME, else ~/.config
    tools: Mapping[str, str | None]  # crontab, systemctl, launchctl: where each is on PATH, or None
    systemd_running: bool  # sd_booted(3): /run/systemd/system exists
    macos: bool
    uid: int
    command: tuple[str, ...]  # what runs this auto-dream (shell.auto_dream_command): its script, or python -m


@dataclass(frozen=True)
class ToolResult:
    code: int
    out: bytes
    err: bytes


Runner = Callable[[Sequence[str], bytes | None], ToolResult]  # (argv, standard input) -> result


@dataclass(frozen=True)
class Target:
    """The store a schedule is for, and what it runs."""

    root: Path  # the store's real path
    id: str
    log: Path
    state: Path
    command: tuple[str, ...]


def schedule_id(root: Path) -> str:
    """The store's schedule id: the first 12 hex digits of the SHA-256 of its real path."""
    return hashlib.sha256(os.fsencode(str(root))).hexdigest()[:12]


def target_for(root: Path, surroundings: Surroundings) -> Target:
    """The store at `root` (it must exist) as a schedule sees it; InputError for a path that a
    schedule line cannot hold."""
    real = Path(os.path.realpath(root))
    state = open_store(real).state
    for what, text in (("the store's path", str(real)), ("the command that runs auto-dream",
                                                         " ".join(surroundings.command))):
        if any(ord(character) < 0x20 or ord(character) == 0x7F for character in text):
            raise InputError(f"{what} {text!r} has a control character (a newline, a tab…), "
                             "which no schedule line can hold")
    if not surroundings.command or not surroundings.command[0]:
        raise StoreError("cannot tell which program runs auto-dream (Python gives no sys.executable)")
    return Target(real, schedule_id(real), state / LOG_NAME, state, tuple(surroundings.command))


# ---------------------------------------------------------------- rendering cron/'s files


def template(name: str) -> str:
    """cron/`name`, as the package ships it."""
    return files("auto_dream").joinpath("cron", name).read_text(encoding="utf-8")


def _put_in(text: str, name: str, replacements: Sequence[tuple[str, str]]) -> str:
    for literal, value in replacements:
        if literal not in text:
            raise StoreError(f"the packaged schedule cron/{name} no longer says {literal}: "
                             "this auto-dream is installed wrongly")
        text = text.replace(literal, value)
    return text


def _shell_command(command: str, name: str, target: Target) -> str:
    """cron/'s shell command line with the store, its log and this auto-dream put in, quoted for sh."""
    return _put_in(command, name, [(SH_LOG, shlex.quote(str(target.log))),
                                   (SH_COMMAND, shlex.join(target.command)),
                                   (SH_STORE, shlex.quote(str(target.root)))])


def template_cron_line(frequency: str) -> str:
    """The crontab line of cron/ for `frequency` (its one line that is not a comment)."""
    name = TEMPLATES["cron", frequency][0]
    return next(line for line in template(name).splitlines() if line.strip() and not line.startswith("#"))


def cron_entry(target: Target, frequency: str) -> str:
    """The crontab line that runs `frequency`'s dream of the target store.

    crontab(5): a `%` in the command ends it (what follows is its standard input) unless written
    `\\%`, and cron takes the backslash away (Vixie cron's do_command.c) before sh sees the line."""
    line = template_cron_line(frequency)
    command = line.split(None, 5)[5]
    schedule = line[:len(line) - len(command)]
    filled = _shell_command(command, TEMPLATES["cron", frequency][0], target)
    if "\\%" in filled:  # cron would read it as an escaped %, and no spelling keeps both characters
        raise InputError(f"a path in {filled!r} has a backslash before a %, which a crontab line cannot hold")
    return schedule + filled.replace("%", "\\%")


def systemd_quote(word: str) -> str:
    """One word of a systemd command line: systemd.service(5), "Command lines": a double-quoted
    word takes C escapes, and in every word `%` starts a specifier (systemd.unit(5): `%%` is a
    percent sign) and `$` a variable (`$$` is a dollar sign). As nixpkgs' escapeSystemdExecArg
    does: a JSON string, then `%` and `$` doubled."""
    return json.dumps(word, ensure_ascii=False).replace("%", "%%").replace("$", "$$")


def unit_name(target: Target) -> str:
    return f"auto-dream-{target.id}"


def unit_dir(surroundings: Surroundings) -> Path:
    return surroundings.config_home / "systemd" / "user"  # systemd.unit(5): the user's own units


def _schedule_comment(target: Target) -> str:
    return (f"# auto-dream schedule {target.id} for {target.root}: written by `auto-dream schedule install`, "
            "deleted by `auto-dream schedule remove`\n")


def _unit_text(text: str, target: Target) -> str:
    """A unit of cron/ as installed: our comment for its own, the store named in its Description."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    lines = [line.rstrip("\n") + f" ({str(target.root).replace('%', '%%')})\n"
             if line.startswith("Description=") else line for line in lines]
    return _schedule_comment(target) + "".join(lines)


def _utf8_only(target: Target, holder: str) -> None:
    """InputError for a path that is not UTF-8 (a name's bytes as Linux allows them), which cron's
    byte-clean line holds but `holder` cannot."""
    for text in (str(target.root), *target.command):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"the path {text!r} is not UTF-8, which {holder}: use `auto-dream schedule "
                             "install --cron` instead") from None


def systemd_units(target: Target, frequency: str) -> dict[str, bytes]:
    """{file name: content} of the service and the timer that run `frequency`'s dream."""
    # systemd skips a unit line that is not UTF-8 ("String is not UTF-8 clean, ignoring
    # assignment", as systemd-analyze verify says): the service would have no ExecStart
    _utf8_only(target, "a systemd unit cannot hold (systemd would skip the line)")
    # systemd's load-fragment.c refuses a program whose path is not string_is_safe() (a quote or a
    # backslash: "Executable name contains special characters"), and undoes no `$$` there
    program = target.command[0]
    if any(character in program for character in "\"'\\$"):
        raise InputError(f"the program that runs auto-dream, {program}, has a quote, a backslash or a $ in its "
                         "path, which a systemd unit cannot start: use `auto-dream schedule install --cron` instead")
    service_name, timer_name = TEMPLATES["systemd", frequency]
    service = _put_in(template(service_name), service_name,
                      [(UNIT_COMMAND, " ".join(systemd_quote(word) for word in target.command)),
                       (UNIT_STORE, systemd_quote(str(target.root)))])
    # the timer starts the service of its own name (systemd.timer(5), Unit=)
    return {f"{unit_name(target)}.service": os.fsencode(_unit_text(service, target)),
            f"{unit_name(target)}.timer": os.fsencode(_unit_text(template(timer_name), target))}


def launchd_label(target: Target) -> str:
    return f"com.auto-dream.dream.{target.id}"


def plist_path(target: Target, surroundings: Surroundings) -> Path:
    return surroundings.home / "Library" / "LaunchAgents" / f"{launchd_label(target)}.plist"


def launchd_plist(target: Target, frequency: str) -> bytes:
    """The launch agent that runs `frequency`'s dream: cron/'s plist, labelled for the store."""
    _utf8_only(target, "a launchd plist (UTF-8 XML) cannot hold")
    name = TEMPLATES["launchd", frequency][0]
    agent = plistlib.loads(template(name).encode("utf-8"))
    agent["Label"] = launchd_label(target)
    arguments = agent["ProgramArguments"]  # /bin/sh -c COMMAND
    agent["ProgramArguments"] = [*arguments[:-1], _shell_command(arguments[-1], name, target)]
    return plistlib.dumps(agent)


# ---------------------------------------------------------------- what is installed


@dataclass(frozen=True)
class Installed:
    """One schedule of the store: its scheduler, cron/'s frequency it has (None: changed by hand),
    when it runs as the scheduler writes it, what it runs, and where it is."""

    scheduler: str
    frequency: str | None
    when: str
    runs: str
    where: tuple[str, ...]

    def as_json(self) -> dict:
        return {"scheduler": self.scheduler, "frequency": self.frequency, "when": self.when, "runs": self.runs,
                "where": list(self.where)}


def _frequency(found: object, of_template: Callable[[str], object]) -> str | None:
    return next((frequency for frequency in FREQUENCIES if of_template(frequency) == found), None)


def installed_cron(entry: bytes | None) -> Installed:
    fields = os.fsdecode(entry.rstrip(b"\n")).split(None, 5) if entry else []
    when, runs = (" ".join(fields[:5]), fields[5]) if len(fields) == 6 else ("", "")
    return Installed("cron", _frequency(fields[:5], lambda f: template_cron_line(f).split()[:5]), when, runs,
                     ("your crontab",))


def _unit_value(text: str, key: str) -> str:
    return next((line.split("=", 1)[1] for line in text.splitlines() if line.startswith(f"{key}=")), "")


def installed_systemd(service: str, timer: str, where: tuple[str, ...]) -> Installed:
    when = _unit_value(timer, "OnCalendar")
    return Installed("systemd", _frequency(when, lambda f: _unit_value(template(TEMPLATES["systemd", f][1]),
                                                                      "OnCalendar")),
                     when, _unit_value(service, "ExecStart"), where)


def installed_launchd(content: bytes, where: tuple[str, ...]) -> Installed:
    try:
        agent = plistlib.loads(content)
        interval = agent.get("StartCalendarInterval")
        arguments = [str(argument) for argument in agent.get("ProgramArguments", [])]
    except (plistlib.InvalidFileException, ValueError, AttributeError, TypeError):
        return Installed("launchd", None, "", "(the plist cannot be read)", where)
    when = " ".join(f"{key}={value}" for key, value in interval.items()) if isinstance(interval, dict) else ""
    runs = arguments[-1] if arguments[:2] == ["/bin/sh", "-c"] else shlex.join(arguments)
    return Installed("launchd", _frequency(interval, lambda f: plistlib.loads(
        template(TEMPLATES["launchd", f][0]).encode("utf-8"))["StartCalendarInterval"]), when, runs, where)


# ---------------------------------------------------------------- the crontab, line by line


def _lines(table: bytes) -> list[bytes]:
    """The table's lines, each with its newline (the last may have none): joined, the table exactly."""
    parts = table.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class CronBlock:
    start: int  # the marker line
    end: int  # after the entry line
    joined: bool  # we put the newline at the end of the line before it

    def entry(self, lines: list[bytes]) -> bytes | None:
        return lines[self.start + 1] if self.end - self.start == 2 else None


def _ours_after_marker(line: bytes) -> bool:
    """Whether the line after a marker is the schedule's own: a crontab entry (as written, its time
    edited, or commented out) whose command starts auto-dream. Any other line there is the user's
    (ours deleted by hand, the marker left), which install and remove must leave as it is: a job
    that only names a store (`tar czf /backup/m.tgz ~/.auto-dream`) is theirs."""
    if CRON_MARKER.match(line):
        return False
    entry = line.lstrip(b" \t#").rstrip(b"\r\n")
    fields = entry.split(None, 1 if entry.startswith(b"@") else 5)  # `@weekly cmd`, or five time fields
    if len(fields) < (2 if entry.startswith(b"@") else 6):
        return False
    try:
        words = shlex.split(os.fsdecode(fields[-1]))
    except ValueError:  # an unclosed quote: no command auto-dream wrote
        return False
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):  # `VAR=value command`
        words.pop(0)
    return bool(words) and _runs_auto_dream(words)


def _runs_auto_dream(words: Sequence[str]) -> bool:
    """Whether a command line starts auto-dream: a program named auto-dream (shell.auto_dream_command's
    script, by any path), or a Python with `-m auto_dream`."""
    return (os.path.basename(words[0]) in ("auto-dream", "auto-dream.exe")
            or list(words[1:3]) == ["-m", "auto_dream"])


def cron_blocks(lines: list[bytes], schedule: str | None = None) -> list[CronBlock]:
    """The marked blocks of a crontab: a marker and the line after it when that runs auto-dream,
    else the marker alone; only `schedule`'s if given."""
    found = []
    index = 0
    while index < len(lines):
        marker = CRON_MARKER.match(lines[index])
        if marker and (schedule is None or marker[1].decode() == schedule):
            end = index + 2 if index + 1 < len(lines) and _ours_after_marker(lines[index + 1]) else index + 1
            found.append(CronBlock(index, end, lines[index].rstrip(b"\n").endswith(JOINED.encode())))
            index = end
        else:
            index += 1
    return found


def _cron_marker(target: Target, *, joined: bool) -> bytes:
    return (f"# auto-dream schedule {target.id} for ".encode() + os.fsencode(str(target.root))
            + f": `auto-dream schedule remove` takes out this line and the next{JOINED if joined else ''}\n".encode())


def crontab_with(table: bytes, target: Target, entry: str) -> bytes:
    """`table` with the store's schedule `entry` in it: in place of the store's block when there is
    one (any other of its blocks taken out), else at the end; every other byte as it was."""
    lines = _lines(table)
    blocks = cron_blocks(lines, target.id)
    if not blocks:
        joined = bool(table) and not table.endswith(b"\n")
        return table + (b"\n" if joined else b"") + _cron_marker(target, joined=joined) + os.fsencode(entry) + b"\n"
    kept: list[bytes] = []
    position = 0
    for block in blocks:
        kept.extend(lines[position:block.start])
        if block is blocks[0]:
            kept.extend([_cron_marker(target, joined=block.joined), os.fsencode(entry) + b"\n"])
        position = block.end
    return b"".join(kept + lines[position:])


def crontab_without(table: bytes, schedule: str) -> bytes:
    """`table` without the store's blocks: the table as it was before they were added."""
    lines = _lines(table)
    blocks = cron_blocks(lines, schedule)
    kept: list[bytes] = []
    position = 0
    for block in blocks:
        kept.extend(lines[position:block.start])
        position = block.end
    result = b"".join(kept + lines[position:])
    if blocks and blocks[-1].joined and blocks[-1].end == len(lines) and result.endswith(b"\n"):
        result = result[:-1]  # the newline the install put there; nothing of the user's follows
    return result


def _unmarked_dreams(table: bytes) -> list[int]:
    """Line numbers (from 1) of crontab lines that run auto-dream but are no schedule's block."""
    lines = _lines(table)
    ours = {index for block in cron_blocks(lines) for index in range(block.start, block.end)}
    return [index + 1 for index, line in enumerate(lines) if index not in ours
            and not line.lstrip().startswith(b"#") and re.search(rb"auto[-_]dream\b.*\bdream\b", line)]


# ---------------------------------------------------------------- plans


@dataclass(frozen=True)
class EnsureFolder:
    path: Path


@dataclass(frozen=True)
class WriteFile:
    path: Path
    content: bytes
    before: bytes | None  # None: a new file


@dataclass(frozen=True)
class DeleteFile:
    path: Path
    before: bytes


@dataclass(frozen=True)
class WriteCrontab:
    before: bytes
    after: bytes  # empty: `crontab -r`, as there was no table before


@dataclass(frozen=True)
class RunTool:
    argv: tuple[str, ...]  # the tool by name; apply runs the one found on PATH
    may_fail: bool = False  # launchctl bootout of an agent that is not loaded
    # What tells the scheduler again of what was there when a later step fails: run, when this
    # one succeeded, once the files and the crontab are put back (a bootout's bootstrap, say).
    undo: tuple[str, ...] = ()


Step = EnsureFolder | WriteFile | DeleteFile | WriteCrontab | RunTool


@dataclass(frozen=True)
class Plan:
    """What install or remove does: the steps, in order; the schedules it puts in place (install)
    or takes out (remove); warnings. `changes` is False when everything is already so."""

    root: Path
    steps: tuple[Step, ...]
    schedules: tuple[Installed, ...]
    warnings: tuple[str, ...] = ()

    @property
    def changes(self) -> bool:
        return any(not isinstance(step, RunTool) for step in self.steps)


def choose_scheduler(asked: str | None, surroundings: Surroundings) -> str:
    """The scheduler asked for; else launchd on macOS, a systemd user timer where systemd runs, cron."""
    if asked is not None:
        return asked
    if surroundings.macos:
        return "launchd"
    if surroundings.systemd_running and surroundings.tools.get("systemctl"):
        return "systemd"
    return "cron"


def _read(path: Path) -> bytes | None:
    """A unit file or plist as it is (through a symlink, as the scheduler reads it), None when
    there is none; a FIFO in its place is refused, never waited on."""
    return read_regular(path, follow=True)


def read_crontab(surroundings: Surroundings, runner: Runner) -> bytes:
    """The user's crontab as `crontab -l` prints it: empty when there is none yet."""
    result = _run(("crontab", "-l"), None, surroundings, runner)
    if result.code == 0:
        return result.out
    if result.code == 1 and NO_CRONTAB in result.err:
        return b""
    raise StoreError(f"`crontab -l` failed (exit {result.code}): {_first_line(result.err)}; "
                     "your crontab is left as it is")


def plan_install(root: Path, frequency: str, asked: str | None, surroundings: Surroundings,
                 runner: Runner) -> Plan:
    """Install `frequency`'s dream of the store at `root`, replacing the store's schedule in that scheduler."""
    target = target_for(root, surroundings)
    scheduler = choose_scheduler(asked, surroundings)
    _require_tool_to_install(scheduler, target, frequency, surroundings)
    state = () if target.state.is_dir() else (EnsureFolder(target.state),)
    warnings: list[str] = []
    steps: list[Step]
    if scheduler == "cron":
        entry = cron_entry(target, frequency)
        table = read_crontab(surroundings, runner)
        after = crontab_with(table, target, entry)
        steps = [*state, WriteCrontab(table, after)] if after != table else []
        warnings += [f"line {number} of your crontab runs auto-dream too and is not a line `schedule install` "
                     "wrote: left as it is" for number in _unmarked_dreams(table)]
        schedule = installed_cron(os.fsencode(entry))
    elif scheduler == "systemd":
        folder = unit_dir(surroundings)
        units = systemd_units(target, frequency)
        writes = [WriteFile(folder / name, content, _read(folder / name)) for name, content in units.items()]
        changed = [write for write in writes if write.content != write.before]
        timer = f"{unit_name(target)}.timer"
        steps = [*changed]
        if changed:
            reload = ("systemctl", "--user", "daemon-reload")
            steps.append(RunTool(reload, undo=reload))  # a failure after it: the units put back, read again
        steps.append(RunTool(("systemctl", "--user", "enable", "--now", timer)))
        if any(write.path.name == timer and write.before is not None for write in changed):
            steps.append(RunTool(("systemctl", "--user", "restart", timer)))  # a running timer takes its new time
        schedule = installed_systemd(os.fsdecode(units[f"{unit_name(target)}.service"]), os.fsdecode(units[timer]),
                                     tuple(str(write.path) for write in writes))
    else:
        path = plist_path(target, surroundings)
        content = launchd_plist(target, frequency)
        before = _read(path)
        domain = f"gui/{surroundings.uid}"
        # launchctl(1): `bootstrap` loads an agent into the user's GUI domain and `bootout` takes it
        # out (`load`/`unload` are its legacy spellings); an agent already loaded is booted out first.
        steps = [*state]
        if before is not None:
            steps.append(RunTool(("launchctl", "bootout", f"{domain}/{launchd_label(target)}"), may_fail=True,
                                 undo=("launchctl", "bootstrap", domain, str(path))))
        if content != before:
            steps.append(WriteFile(path, content, before))
        steps.append(RunTool(("launchctl", "bootstrap", domain, str(path))))
        schedule = installed_launchd(content, (str(path),))
    warnings += _installed_elsewhere(scheduler, target, surroundings, runner)
    return Plan(target.root, tuple(steps), (schedule,), tuple(warnings))


def _require_tool_to_install(scheduler: str, target: Target, frequency: str, surroundings: Surroundings) -> None:
    """StoreError naming what to do instead when the scheduler cannot be used here."""
    tools = surroundings.tools
    if scheduler == "cron" and not tools.get("crontab"):
        raise StoreError("there is no `crontab` command on PATH (is cron installed?): add this line to your "
                         f"crontab by hand instead: {cron_entry(target, frequency)}")
    if scheduler == "systemd" and not tools.get("systemctl"):
        raise StoreError("there is no `systemctl` on PATH, so a systemd user timer cannot be enabled: "
                         "use `auto-dream schedule install --cron` instead")
    if scheduler == "systemd" and not surroundings.systemd_running:
        raise StoreError("systemd is not running here (there is no /run/systemd/system), so a user timer would "
                         "never fire: use `auto-dream schedule install --cron` instead")
    if scheduler == "launchd" and not tools.get("launchctl"):
        raise StoreError("there is no `launchctl` on PATH (launchd is macOS's): use `auto-dream schedule install "
                         "--cron` instead")


def _installed_elsewhere(scheduler: str, target: Target, surroundings: Surroundings, runner: Runner) -> list[str]:
    """A warning for each other scheduler that runs this store's dream too."""
    others = [other for other in SCHEDULERS if other != scheduler]
    found = [schedule.scheduler for schedule in find_installed(target, surroundings, runner, others)[0]]
    return [f"this store has a {other} schedule too, so it may dream twice: "
            f"`auto-dream schedule remove --{other}` takes it out" for other in found]


def find_installed(target: Target, surroundings: Surroundings, runner: Runner,
                   schedulers: Sequence[str] = SCHEDULERS) -> tuple[list[Installed], list[tuple[str, str]]]:
    """The store's schedules in `schedulers`, and those that could not be looked at, with why."""
    found: list[Installed] = []
    not_checked: list[tuple[str, str]] = []
    if "cron" in schedulers and surroundings.tools.get("crontab"):
        try:
            lines = _lines(read_crontab(surroundings, runner))
            found += [installed_cron(block.entry(lines)) for block in cron_blocks(lines, target.id)]
        except AutoDreamError as error:
            not_checked.append(("cron", str(error)))
    elif "cron" in schedulers:
        not_checked.append(("cron", "there is no `crontab` command on PATH"))
    folder = unit_dir(surroundings)
    service, timer = (folder / f"{unit_name(target)}.{kind}" for kind in ("service", "timer"))
    service_text, timer_text = _read(service), _read(timer)
    if "systemd" in schedulers and (service_text is not None or timer_text is not None):
        found.append(installed_systemd(os.fsdecode(service_text or b""), os.fsdecode(timer_text or b""),
                                       tuple(str(path) for path in (service, timer) if path.exists())))
    agent = plist_path(target, surroundings)
    agent_content = _read(agent)
    if "launchd" in schedulers and agent_content is not None:
        found.append(installed_launchd(agent_content, (str(agent),)))
    return found, not_checked


def plan_remove(root: Path, asked: str | None, surroundings: Surroundings, runner: Runner) -> Plan:
    """Take out the store's schedules: the one of the scheduler asked for, else every one found."""
    target = target_for(root, surroundings)
    tools = surroundings.tools
    steps: list[Step] = []
    removed: list[Installed] = []
    if asked == "cron" and not tools.get("crontab"):
        raise StoreError("there is no `crontab` command on PATH, so the crontab cannot be read: "
                         f"look for the lines after `# auto-dream schedule {target.id}` with `crontab -e`")
    if asked in (None, "cron") and tools.get("crontab"):
        table = read_crontab(surroundings, runner)
        lines = _lines(table)
        blocks = cron_blocks(lines, target.id)
        if blocks:
            steps.append(WriteCrontab(table, crontab_without(table, target.id)))
            removed += [installed_cron(block.entry(lines)) for block in blocks]
    if asked in (None, "systemd"):
        folder = unit_dir(surroundings)
        timer, service = (folder / f"{unit_name(target)}.{kind}" for kind in ("timer", "service"))
        contents = {path: _read(path) for path in (timer, service)}
        if any(content is not None for content in contents.values()):
            if not tools.get("systemctl"):
                raise StoreError(f"the systemd timer {timer.name} is installed but there is no `systemctl` on "
                                 f"PATH: run `systemctl --user disable --now {timer.name}`, then delete {timer} "
                                 f"and {service}")
            if contents[timer] is not None:
                steps.append(RunTool(("systemctl", "--user", "disable", "--now", timer.name),
                                     undo=("systemctl", "--user", "enable", "--now", timer.name)))
            steps += [DeleteFile(path, content) for path, content in contents.items() if content is not None]
            steps.append(RunTool(("systemctl", "--user", "daemon-reload"), may_fail=True))
            removed.append(installed_systemd(os.fsdecode(contents[service] or b""),
                                             os.fsdecode(contents[timer] or b""),
                                             tuple(str(path) for path, content in contents.items() if content)))
    if asked in (None, "launchd"):
        path = plist_path(target, surroundings)
        content = _read(path)
        if content is not None:
            agent = f"gui/{surroundings.uid}/{launchd_label(target)}"
            if not tools.get("launchctl"):
                raise StoreError(f"the launchd agent {path} is installed but there is no `launchctl` on PATH: "
                                 f"run `launchctl bootout {agent}`, then delete it")
            steps += [RunTool(("launchctl", "bootout", agent), may_fail=True,
                              undo=("launchctl", "bootstrap", f"gui/{surroundings.uid}", str(path))),
                      DeleteFile(path, content)]
            removed.append(installed_launchd(content, (str(path),)))
    return Plan(target.root, tuple(steps), tuple(removed))


@dataclass(frozen=True)
class ScheduleStatus:
    root: Path
    id: str
    schedules: tuple[Installed, ...]
    not_checked: tuple[tuple[str, str], ...]  # (scheduler, why)

    def as_json(self) -> dict:
        return {"store": str(self.root), "id": self.id, "schedules": [s.as_json() for s in self.schedules],
                "not_checked": [{"scheduler": scheduler, "reason": reason} for scheduler, reason in self.not_checked]}


def schedule_status(root: Path, surroundings: Surroundings, runner: Runner) -> ScheduleStatus:
    """The store's schedules in every scheduler that can be looked at; reads only."""
    target = target_for(root, surroundings)
    found, not_checked = find_installed(target, surroundings, runner)
    return ScheduleStatus(target.root, target.id, tuple(found), tuple(not_checked))


# ---------------------------------------------------------------- carrying a plan out


def _first_line(text: bytes) -> str:
    lines = os.fsdecode(text).strip().splitlines()
    return lines[0] if lines else "no message"


def _run(argv: Sequence[str], stdin: bytes | None, surroundings: Surroundings, runner: Runner) -> ToolResult:
    found = surroundings.tools.get(argv[0])
    if not found:
        raise StoreError(f"there is no `{argv[0]}` command on PATH")
    try:
        return runner([found, *argv[1:]], stdin)
    except OSError as error:
        raise StoreError(f"cannot run `{shlex.join(argv)}`: {error.strerror or error}") from None


def _tool_failed(argv: Sequence[str], result: ToolResult) -> StoreError:
    return StoreError(f"`{shlex.join(argv)}` failed (exit {result.code}): {_first_line(result.err)}")


def _set_crontab(table: bytes, surroundings: Surroundings, runner: Runner) -> None:
    argv = ("crontab", "-") if table else ("crontab", "-r")  # nothing left: no table, as before the install
    result = _run(argv, table if table else None, surroundings, runner)
    if result.code != 0:
        raise _tool_failed(argv, result)


def apply_plan(plan: Plan, surroundings: Surroundings, runner: Runner) -> None:
    """Carry the plan out, step by step. When a step fails, the files and the crontab written
    before it are put back as they were, then the scheduler is told of them again (the undo of
    each tool that ran), and the failure is raised."""
    written, retell = Rollback(), Rollback()  # the files and the crontab; the tools that ran
    try:
        for step in plan.steps:
            match step:
                case EnsureFolder(path):
                    make_dirs(path)
                case WriteFile(path, content, before):
                    write_atomic(path, content)
                    written.push(partial(_put_back, path, before))
                case DeleteFile(path, deleted):
                    path.unlink(missing_ok=True)
                    written.push(partial(_put_back, path, deleted))
                case WriteCrontab(table, after):
                    _set_crontab(after, surroundings, runner)
                    written.push(partial(_set_crontab, table, surroundings, runner))
                case RunTool(argv, may_fail, undo_argv):
                    result = _run(argv, None, surroundings, runner)
                    if result.code != 0 and not may_fail:
                        raise _tool_failed(argv, result)
                    if result.code == 0 and undo_argv:
                        retell.push(partial(_run_back, undo_argv, surroundings, runner))
    except (AutoDreamError, OSError) as error:
        if not (written or retell):
            raise
        left_written = written.run()  # the files first, then the tools, each whatever the other did
        left_retold = retell.run()
        left = left_written or left_retold
        if left is not None:
            raise StoreError(f"{failure(error)}; not all of it could be put back: {left}") from None
        if isinstance(error, AutoDreamError):
            raise StoreError(f"{error}; what it had changed before was put back as it was") from None
        raise


def _put_back(path: Path, before: bytes | None) -> None:
    if before is None:
        path.unlink(missing_ok=True)
    else:
        write_atomic(path, before)


def _run_back(argv: Sequence[str], surroundings: Surroundings, runner: Runner) -> None:
    result = _run(argv, None, surroundings, runner)
    if result.code != 0:
        raise _tool_failed(argv, result)


def describe_step(step: Step) -> list[str]:
    """What a step does, in lines for a dry run."""
    match step:
        case EnsureFolder(path):
            return [f"would create the folder {path} (the scheduled dreams' log goes there)"]
        case WriteFile(path, content, before):
            verb = "create" if before is None else "replace"
            return [f"would {verb} {path}:", *("    " + line for line in os.fsdecode(content).splitlines())]
        case DeleteFile(path, _):
            return [f"would delete {path}"]
        case WriteCrontab(before, after):
            changed = [line for line in difflib.unified_diff(os.fsdecode(before).splitlines(),
                                                             os.fsdecode(after).splitlines(), lineterm="", n=0)
                       if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            what = "remove your crontab (nothing else is in it)" if not after else "change your crontab"
            return [f"would {what}:", *("    " + line for line in changed)]
        case RunTool(argv, _):
            return [f"would run: {shlex.join(argv)}"]
    raise AssertionError(step)
