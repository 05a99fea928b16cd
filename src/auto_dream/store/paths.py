"""Where everything in a store lives; every path the code uses comes from here."""

import os
from datetime import date
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Literal, Protocol, TypeGuard, get_args

from auto_dream.errors import InputError, StoreError
from auto_dream.store.files import FILE_MODE as FILE_MODE  # re-exported: store/cache.py takes it from here
from auto_dream.store.files import make_dirs, refuse_link

# The four types of memory: the folders under memories/ and archive/, MEMORY.md's sections, in that order.
MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[MemoryType, ...] = get_args(MemoryType)
# A store's layout, as discover, check and `layout_at` name it: auto-dream's own, or a Claude Code memory folder.
Layout = Literal["auto-dream", "claude-code"]


def is_memory_type(value: object) -> TypeGuard[MemoryType]:
    return value in MEMORY_TYPES


def check_memory_type(value: str | None) -> MemoryType | None:
    """A type given on the command line, in an entry or to a tool: one of MEMORY_TYPES, or None
    (none given); anything else is an InputError, in the same words everywhere."""
    if value is None or is_memory_type(value):
        return value
    raise InputError(f"unknown type {value!r}: use one of {', '.join(MEMORY_TYPES)}")

STORE_DIR_NAME = ".auto-dream"
# Where the OpenClaw skill keeps its store, under the home folder (docs/store.md).
OPENCLAW_STORE = Path(".openclaw", "workspace", STORE_DIR_NAME)


class StoreLayout(Protocol):
    """Where a store keeps each thing: every path the core uses comes from these questions.

    StorePaths answers them for auto-dream's own layout (docs/store.md); another layout (a
    Claude Code memory folder dreamed in place) answers the same questions and the phases,
    apply, undo and the commands work on it unchanged. Paths given as `str` are relative to
    `root`, with forward slashes, as the run journal and reports write them."""

    @property
    def root(self) -> Path: ...
    @property
    def logs(self) -> Path: ...
    @property
    def state(self) -> Path: ...  # dream's own records: runs, caches, the lock
    @property
    def index(self) -> Path: ...  # MEMORY.md
    @property
    def config(self) -> Path: ...
    @property
    def templates(self) -> Path: ...
    @property
    def layout(self) -> Layout: ...
    # MEMORY.md is a person's file (Claude Code's): dream rebuilds it keeping every line they wrote,
    # moving lines past the caps to `overflow_name`; not one it makes from the memories alone
    @property
    def person_index(self) -> bool: ...
    @property
    def overflow_name(self) -> str | None: ...  # where a person_index's lines past the caps go, or None
    @property
    def shares_claude_lock(self) -> bool: ...  # each run also holds Claude Code's own consolidate lock
    @property
    def expects_repository(self) -> bool: ...  # it lies in a repository whose files its memories cite
    def relative(self, path: Path) -> str: ...
    def run_may_write(self, parts: tuple[str, ...]) -> bool: ...  # a path (its parts) a dream run may write
    def is_memory_path(self, relative: str) -> bool: ...  # a live memory file's path
    @property
    def untyped(self) -> str | None: ...  # the type a file that names none is read as (read-only), or None
    @property
    def archive_ext(self) -> str: ...  # how a retired memory's file name ends in the archive (".md")
    @property
    def report_name(self) -> str: ...  # a run's report, in its run folder
    def log_file(self, day: date) -> Path: ...
    # How a new memory's file name begins, its slug then in Claude Code's style (lower case, cut at
    # a word); None: the store's YYYYMMDD_<slug>.md (docs/store.md, "Memory files")
    def new_file_prefix(self, memory_type: str, day: date) -> str | None: ...
    def memory_folder(self, *, archived: bool = False) -> str: ...  # scanned for memory files
    def memory_dir(self, memory_type: str) -> Path: ...  # where a new memory of the type goes
    def archive_dir(self, memory_type: str) -> Path: ...  # where a retired memory of the type goes
    def memory_path(self, memory_type: str, file_name: str) -> str: ...
    def archive_path(self, memory_type: str, file_name: str) -> str: ...
    def skeleton(self) -> list[Path]: ...  # the folders a store is created with, kept when empty
    def folders(self) -> list[Path]: ...  # every folder of the layout: each one real, never a link
    def memory_folders(self) -> list[Path]: ...  # the folders memory files are written into


class StorePaths:
    """auto-dream's own layout (docs/store.md), rooted at `root`: memories/<type>/,
    archive/<type>/, logs/, .state/ and MEMORY.md. A StoreLayout."""

    __slots__ = ("root",)

    def __init__(self, root: Path):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"StorePaths({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorePaths) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def memories(self) -> Path:
        return self.root / "memories"

    @property
    def archive(self) -> Path:
        return self.root / "archive"

    @property
    def state(self) -> Path:
        return self.root / ".state"

    @property
    def index(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    @property
    def templates(self) -> Path:
        """A store's own templates, overriding the packaged ones file by file."""
        return self.root / "templates"

    def log_file(self, day: date) -> Path:
        return day_log_file(self, day)

    def new_file_prefix(self, memory_type: str, day: date) -> str | None:
        return None  # YYYYMMDD_<slug>.md (docs/store.md, "Memory files") in the type's folder

    layout: Layout = "auto-dream"
    person_index = False  # MEMORY.md is ours, made from the memories
    overflow_name = None
    shares_claude_lock = False
    expects_repository = False  # a store may live anywhere; config `repo` names one
    untyped = None  # a file outside a type folder that names no type is not a memory here
    archive_ext = ".md"
    report_name = "report.md"

    def run_may_write(self, parts: tuple[str, ...]) -> bool:
        return parts == ("MEMORY.md",) or (len(parts) > 1 and parts[0] in ("memories", "archive", ".state"))

    def is_memory_path(self, relative: str) -> bool:
        return relative.startswith("memories/")

    def memory_folder(self, *, archived: bool = False) -> str:
        return "archive" if archived else "memories"

    def memory_dir(self, memory_type: str) -> Path:
        return self.memories / memory_type

    def archive_dir(self, memory_type: str) -> Path:
        return self.archive / memory_type

    def memory_path(self, memory_type: str, file_name: str) -> str:
        return f"memories/{memory_type}/{file_name}"

    def archive_path(self, memory_type: str, file_name: str) -> str:
        return f"archive/{memory_type}/{file_name}"

    def skeleton(self) -> list[Path]:
        return [self.logs, self.state, self.archive, self.memories, *(self.memory_dir(t) for t in MEMORY_TYPES)]

    def memory_folders(self) -> list[Path]:
        return [*(self.memory_dir(t) for t in MEMORY_TYPES), *(self.archive_dir(t) for t in MEMORY_TYPES)]

    def folders(self) -> list[Path]:
        """The store's own folders: each one real, never a link (check_layout)."""
        return [self.logs, self.memories, *(self.memory_dir(t) for t in MEMORY_TYPES), self.archive,
                *(self.archive / t for t in MEMORY_TYPES), self.state, self.state / "runs"]

    def relative(self, path: Path) -> str:
        """`path` relative to the root, with forward slashes, as JSON and reports show it."""
        return Path(os.path.relpath(path, self.root)).as_posix()


# The topic file MEMORY.md's hand-written lines move to when it is over Claude Code's caps.
OVERFLOW_NAME = "MEMORY_overflow.md"


class ClaudeFolder:
    """A Claude Code memory folder dreamed in place: topic files `*.md` flat beside MEMORY.md,
    as Claude Code keeps them; Claude Code's own daily logs in logs/YYYY/MM/ (its assistant
    mode's path, where `append` writes too); everything of auto-dream's in `.auto-dream/` inside
    it — dream's records, config.toml, templates, and archive/<type>/, where retired files go,
    out of the files the agent reads. A StoreLayout."""

    __slots__ = ("root",)
    layout: Layout = "claude-code"
    person_index = True  # Claude Code's MEMORY.md: every line a person or the agent wrote is kept
    overflow_name = OVERFLOW_NAME
    shares_claude_lock = True  # as Claude Code's Auto Dream does (dream/claude_lock.py)
    expects_repository = True  # ~/.claude/projects/<the project>/memory: the project is the repository
    untyped = "reference"  # a topic file that names no type is still one Claude Code reads
    # Claude Code reads every `*.md` under the folder, dot-folders too, as a memory to recall
    # (src/memdir/memoryScan.ts: readdir(memoryDir, {recursive: true}), filtered on ".md"): what
    # auto-dream keeps in .auto-dream/ must not end in .md. A retired memory is still Markdown.
    archive_ext = ".markdown"
    report_name = "report.markdown"

    def __init__(self, root: Path):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ClaudeFolder({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClaudeFolder) and other.root == self.root

    def __hash__(self) -> int:
        return hash((ClaudeFolder, self.root))

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state(self) -> Path:
        return self.root / STORE_DIR_NAME

    @property
    def archive(self) -> Path:
        return self.state / "archive"

    @property
    def index(self) -> Path:
        return self.root / CLAUDE_INDEX

    @property
    def config(self) -> Path:
        return self.state / "config.toml"

    @property
    def templates(self) -> Path:
        return self.state / "templates"

    def log_file(self, day: date) -> Path:
        return day_log_file(self, day)

    def new_file_prefix(self, memory_type: str, day: date) -> str | None:
        return f"{memory_type}_"  # Claude Code's own naming: feedback_testing.md, project_status.md

    def run_may_write(self, parts: tuple[str, ...]) -> bool:
        """MEMORY.md, a topic file beside it, and what is under .auto-dream/."""
        if len(parts) == 1:
            return parts[0] == CLAUDE_INDEX or self.is_memory_path(parts[0])
        return parts[0] == STORE_DIR_NAME

    def is_memory_path(self, relative: str) -> bool:
        return "/" not in relative and relative.endswith(".md") and relative != CLAUDE_INDEX \
            and not relative.startswith(".")

    def memory_folder(self, *, archived: bool = False) -> str:
        return f"{STORE_DIR_NAME}/archive" if archived else ""

    def memory_dir(self, memory_type: str) -> Path:
        return self.root

    def archive_dir(self, memory_type: str) -> Path:
        return self.archive / memory_type

    def memory_path(self, memory_type: str, file_name: str) -> str:
        return file_name

    def archive_path(self, memory_type: str, file_name: str) -> str:
        return f"{STORE_DIR_NAME}/archive/{memory_type}/{file_name.removesuffix('.md')}{self.archive_ext}"

    def skeleton(self) -> list[Path]:
        return [self.state]  # nothing else is made in a folder that is Claude Code's

    def memory_folders(self) -> list[Path]:
        return [self.root, *(self.archive_dir(t) for t in MEMORY_TYPES)]

    def folders(self) -> list[Path]:
        return [self.logs, self.state, self.archive, *(self.archive_dir(t) for t in MEMORY_TYPES),
                self.state / "runs"]

    def relative(self, path: Path) -> str:
        return Path(os.path.relpath(path, self.root)).as_posix()


def day_log_file(paths: StoreLayout, day: date) -> Path:
    """The day's log, logs/YYYY/MM/YYYY-MM-DD.md, for appending: refused (StoreError) when it, or
    a folder of logs/ above it, is a symlink, so that an append never writes through a link out
    of the store."""
    path = paths.logs / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"
    for part in (paths.logs, path.parent.parent, path.parent):
        _refuse_link(paths, part, folder=True)
    _refuse_link(paths, path, folder=False)
    return path


def resolve_root(flag: str | None, env: str | None, cwd: Path, home: Path) -> Path:
    """First match wins: --root, AUTO_DREAM_ROOT, the nearest .auto-dream/ upwards (the folder
    holding it when that is a Claude Code folder), the OpenClaw skill's
    ~/.openclaw/workspace/.auto-dream when it exists, ~/.auto-dream."""
    for given in (flag, env):
        if given:
            return cwd / Path(given).expanduser()  # an absolute path stays as it is
    for folder in (cwd, *cwd.parents):
        candidate = folder / STORE_DIR_NAME
        if candidate.is_dir():
            # inside a Claude Code folder auto-dream has dreamed, .auto-dream/ is its records: the folder is the store
            return folder if is_claude_records(candidate) and is_claude_layout(folder) else candidate
    if (home / OPENCLAW_STORE).is_dir():
        return home / OPENCLAW_STORE
    return home / STORE_DIR_NAME


def _refuse_link(paths: StoreLayout, path: Path, *, folder: bool | None = None) -> None:
    """files.refuse_link, naming `path` by its place in the store."""
    refuse_link(path, f"{paths.relative(path)} in the store at {paths.root}", folder=folder)


def check_layout(paths: StoreLayout) -> None:
    """Refuse a store whose own folders or MEMORY.md are symlinks, or not what they should be
    (a store root that is itself a link is fine: everything is written inside it)."""
    for folder in paths.folders():
        _refuse_link(paths, folder, folder=True)
    _refuse_link(paths, paths.index, folder=False)


# The entries only auto-dream's own layout has (docs/store.md): a folder holding one of them
# is a store, perhaps half made, that ensure_store completes.
NATIVE_ENTRIES = ("logs", "memories", "archive", ".state", "config.toml", "templates")
CLAUDE_INDEX = "MEMORY.md"
# Where Claude Code keeps memory folders: auto memory in ~/.claude/projects/<project>/memory/
# (https://code.claude.com/docs/en/memory, "Storage location"); a subagent's `memory:` scope in
# ~/.claude/agent-memory/<agent>/ (user), .claude/agent-memory/<agent>/ (project) and
# .claude/agent-memory-local/<agent>/ (local) (https://code.claude.com/docs/en/sub-agents,
# "Enable persistent memory"); and .claude/memory/, a project's memory kept in the repository
# (the folder real projects commit).
CLAUDE_AGENT_FOLDERS = ("agent-memory", "agent-memory-local")


def _is_folder(path: Path) -> bool:
    """A real folder: a symlink to one is not followed."""
    try:
        return S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_regular(path: Path) -> bool:
    try:
        return S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_native_store(folder: Path) -> bool:
    """auto-dream's own layout: `memories/` and `logs/` are real folders in it."""
    return _is_folder(folder / "memories") and _is_folder(folder / "logs")


def is_claude_code_folder(folder: Path) -> bool:
    """A Claude Code memory folder: where Claude Code keeps one (CLAUDE_AGENT_FOLDERS above) —
    `.claude/memory`, `.claude/projects/<project>/memory`, `.claude/agent-memory[-local]/<agent>` —
    holding a MEMORY.md or a markdown topic file."""
    folder = Path(os.path.abspath(folder))  # `..` and `.` resolved by name, no link followed
    parent = folder.parent
    at_claude_place = (
        (folder.name == "memory" and parent.name == ".claude")
        or (folder.name == "memory" and parent.parent.name == "projects" and parent.parent.parent.name == ".claude")
        or (parent.name in CLAUDE_AGENT_FOLDERS and parent.parent.name == ".claude"))
    return at_claude_place and _is_folder(folder) and (
        _is_regular(folder / CLAUDE_INDEX) or bool(claude_topic_files(folder)))


def claude_topic_files(folder: Path) -> list[str]:
    """The names of the markdown topic files beside MEMORY.md in a Claude Code memory folder
    (regular files, no dot-files), sorted."""
    try:
        with os.scandir(folder) as listing:
            return sorted(entry.name for entry in listing
                          if entry.name.endswith(".md") and entry.name != CLAUDE_INDEX
                          and not entry.name.startswith(".") and entry.is_file(follow_symlinks=False))
    except OSError:
        return []


# What only auto-dream's own layout holds at its root: a folder with one of them is a store of
# ours, perhaps half made, never a Claude Code folder. (.state/ is not among them: an earlier
# auto-dream could leave one in a Claude Code folder; logs/ neither: Claude Code's assistant
# mode keeps its daily logs there.)
OURS = ("memories", "archive", "config.toml", "templates")


def is_claude_layout(root: Path) -> bool:
    """A Claude Code memory folder, dreamed in place: none of our own layout's folders in it,
    and either it sits where Claude Code keeps memory folders (is_claude_code_folder), or it
    holds a MEMORY.md with nothing beside it but markdown topic files, logs/ and dot-entries
    (a copy of one, anywhere), or auto-dream has dreamed it before (its .auto-dream/ folder)."""
    if is_native_store(root) or any(os.path.lexists(root / name) for name in OURS):
        return False
    records = root / STORE_DIR_NAME
    if _is_folder(records) and not is_claude_records(records):
        return False  # a folder holding a store of ours (an OpenClaw workspace, a project): not a memory folder
    if is_claude_code_folder(root):
        return True
    if not _is_regular(root / CLAUDE_INDEX):
        return False
    if _is_folder(records):
        return True
    try:
        with os.scandir(root) as listing:
            return all(entry.name.startswith(".")
                       or (entry.name.endswith(".md") and entry.is_file(follow_symlinks=False))
                       or (entry.name == "logs" and entry.is_dir(follow_symlinks=False))
                       for entry in listing)
    except OSError:
        return False


def is_claude_records(folder: Path) -> bool:
    """The `.auto-dream/` auto-dream keeps inside a Claude Code folder (runs, caches, the archive),
    not a store of ours: it has none of a store's memories/, logs/ or .state/."""
    return _is_folder(folder) and not any(os.path.lexists(folder / name) for name in ("memories", "logs", ".state"))


def layout_at(root: Path) -> "StorePaths | ClaudeFolder":
    """The layout of the store at `root`: a Claude Code folder (is_claude_layout), else ours.
    StoreError for the `.auto-dream/` inside a Claude Code folder: auto-dream's records of it,
    which would otherwise pass for a half-made store of ours and gain one."""
    parent = Path(os.path.abspath(root)).parent
    if Path(root).name == STORE_DIR_NAME and is_claude_records(Path(root)) and is_claude_layout(parent):
        raise StoreError(f"{root} holds auto-dream's records of the Claude Code memory folder {parent}: "
                         f"give --root {parent}")
    return ClaudeFolder(root) if is_claude_layout(root) else StorePaths(root)


def refuse_other_layout(root: Path, *, creating: bool = False) -> None:
    """StoreError for a folder that is no store: unless `creating` one (append, init: any folder
    may become a store, as it always could), a folder that holds other things and neither
    layout's. A missing or empty folder, a store of ours (even half made) and a Claude Code
    memory folder pass."""
    if creating or is_native_store(root) or any(os.path.lexists(root / name) for name in NATIVE_ENTRIES) \
            or is_claude_layout(root):
        return
    try:
        with os.scandir(root) as listing:
            others = sum(1 for entry in listing if not entry.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise StoreError(f"cannot look at {root}: {error.strerror}") from None
    if others:
        raise StoreError(f"{root} is neither an auto-dream store (memories/ and logs/) nor a Claude Code memory "
                         f"folder (a MEMORY.md beside markdown topic files; it holds {others} other entries): "
                         "give a store, a memory folder, an empty folder or a new one "
                         "(`auto-dream discover` lists the memory folders it finds)")


def ensure_store(root: Path) -> "StorePaths | ClaudeFolder":
    """The store at `root`, its skeleton created when missing (for commands that write). A
    Claude Code folder gains only auto-dream's own `.auto-dream/` folder."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")
    paths = layout_at(root)
    check_layout(paths)
    try:
        for folder in paths.skeleton():
            make_dirs(folder)
    except PermissionError:
        raise StoreError(f"cannot write to the store at {root}: permission denied") from None
    except OSError as error:
        raise StoreError(f"cannot create the store at {root}: {error.strerror}") from None
    return paths


def open_store(root: Path) -> "StorePaths | ClaudeFolder":
    """The existing store at `root` (for commands that only read), in its layout."""
    if not root.exists():
        raise StoreError(f"no store at {root}: run `auto-dream init` first")
    if not root.is_dir():
        raise StoreError(f"store root {root} is a file, not a folder")
    paths = layout_at(root)
    refuse_other_layout(root)
    check_layout(paths)
    return paths


def store_dir_for_init(directory: str | None, root_flag: str | None, cwd: Path) -> Path:
    """`init DIR` creates DIR/.auto-dream; with only --root, the root itself; else ./.auto-dream."""
    if directory is not None:
        base = Path(directory).expanduser().absolute()
        if base.exists() and not base.is_dir():
            raise InputError(f"{base} is a file, not a folder")
        return base / STORE_DIR_NAME
    if root_flag:
        return Path(root_flag).expanduser().absolute()
    return cwd / STORE_DIR_NAME
