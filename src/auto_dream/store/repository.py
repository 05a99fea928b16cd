"""The repository a store's memories cite, asked through git: which of the files and symbols they
name it has now, and which its history proves gone (judge.staleness.Repository; docs/dream.md, "Staleness").

Proof is what git can show, and nothing else:
- a path is gone when the history of HEAD tracked it (a commit added, changed or deleted it), the
  work tree lacks it, and it is not gitignored. One `git check-ignore` for the paths the work tree
  lacks, and one `git log --name-only` listing every path the history held (0.13 s for 10,000
  commits, 0.55 s for pytest's 17,666).
- a symbol is gone when no file of the work tree names it and a source file of a commit looked at
  defined it (`def NAME`, `class NAME`, `function NAME`, `NAME = …`, …). The commits looked at:
  the one that was current when each memory citing a name was written and on each day it names
  (what it cites was most likely there then; judge.staleness.moments_of), up to MAX_WRITTEN; and
  HEAD and its first-parent ancestors 1, 2, 3, 4, 6, 8, 12, 16, 24 … commits back, each about √2
  times farther (28 for 10,000 commits). One `git grep` over their trees.
  Asking every commit (`git log -S`, one regex for all names) took 17 s for 20 names on pytest;
  the ladder alone takes 0.2 s for 400 names on 10,000 commits and 1.5 s on pytest, and proves
  160 and 153 of 200 sampled removed definitions gone (bench/staleness_git.py). A definition
  none of these commits holds leaves the name unverifiable, never gone.
Git runs with argv only, never a shell, with `--git-dir` and `--work-tree` given (a GIT_DIR left in
the environment cannot point it elsewhere), without writing the index, and with a timeout. A git
that is missing, fails, times out, or would fetch what a partial clone lacks proves nothing.
"""

import math
import os
import re
import subprocess
from bisect import bisect_right
from collections.abc import Collection, Iterable
from datetime import datetime
from pathlib import Path

from auto_dream.judge.staleness import Evidence

GIT_TIMEOUT = 30  # seconds for one git command: past it, what it was asked stays unverifiable
LADDER_FACTOR = math.sqrt(2)  # each earlier commit looked at is about this much farther back than the last
MAX_WRITTEN = 32  # commits looked at for the times memories were written
_CHUNK = 500  # paths or names per git command, well under any argv limit
# Where a definition counts: source files, not a README's example or a memory's own words
SOURCE_FILES = ("*.py", "*.pyi", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.ts", "*.tsx", "*.mts", "*.cts", "*.go",
                "*.rs", "*.java", "*.kt", "*.kts", "*.scala", "*.rb", "*.php", "*.c", "*.h", "*.cc", "*.cpp",
                "*.hpp", "*.cs", "*.swift", "*.m", "*.sh", "*.bash", "*.zsh", "*.lua", "*.ex", "*.exs", "*.vue",
                "*.svelte", "*.dart")
# Hidden folders (.github, .claude…) are searched for neither names nor definitions: other agents'
# memories live there, and a name one of them repeats is not the code's
_HIDDEN_FOLDERS = ":(exclude,glob)**/.*/**"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_CHARS = r"[A-Za-z0-9_$]"


def find_repo(store_root: Path, configured: str | None) -> Path | None:
    """config `repo` (relative to the store's folder), else the git work tree holding the store."""
    if configured:
        repo = (store_root.parent / Path(configured).expanduser()).resolve()
        return repo if repo.is_dir() else None
    for folder in (store_root.resolve(), *store_root.resolve().parents):
        if (folder / ".git").exists():
            return folder
    return None


def open_repository(work_tree: Path | None, exclude: Path | None = None) -> "GitRepository | None":
    """The git repository whose files `work_tree` holds (it or a folder above it has `.git`), or None
    when there is none: every reference is then unverifiable. `exclude`: the store, whose own words
    must not confirm or prove the names it cites."""
    if work_tree is None:
        return None
    work_tree = work_tree.resolve()
    for top in (work_tree, *work_tree.parents):
        if os.path.lexists(top / ".git"):
            return GitRepository(work_tree, top, top / ".git", exclude)
    return None


def ladder(commits: int) -> list[int]:
    """How far back (in first-parent commits) the symbol search looks: 0, 1, 2, 3, 4, 6, 8, 12, 16, 24 …,
    dense near HEAD and sparse in the past, and the first commit."""
    rungs, distance = {0}, 1.0
    while distance < commits:
        rungs.add(int(distance))
        distance = max(distance * LADDER_FACTOR, distance + 1)
    if commits > 0:
        rungs.add(commits - 1)
    return sorted(rungs)


def current_at(commits: list[tuple[int, str]], moments: Collection[datetime]) -> set[str]:
    """The commit of `commits` (first parents, newest first, with their commit times) that was HEAD at
    each moment, for at most MAX_WRITTEN of them spread over their range."""
    if not commits or not moments:
        return set()
    ordered = sorted(moments)
    if len(ordered) > MAX_WRITTEN:
        ordered = [ordered[round(i * (len(ordered) - 1) / (MAX_WRITTEN - 1))] for i in range(MAX_WRITTEN)]
    oldest_first = commits[::-1]
    times = [seconds for seconds, _ in oldest_first]
    found = set()
    for moment in ordered:
        # the last commit made by then; commit times out of order (a skewed clock) only pick
        # another commit, and any commit that defined a name proves it
        index = bisect_right(times, moment.timestamp()) - 1
        if index >= 0:
            found.add(oldest_first[index][1])
    return found


def defined_names(lines: Iterable[str], names: Collection[str]) -> set[str]:
    """Which of `names` the source lines define: `def NAME`, `class NAME`, `function NAME`, `fn NAME`,
    `struct`, `enum`, `trait`, `interface`, `type`, `const`, `let`, `var`, `NAME = …`, Go's
    `func (r *T) NAME(`. A line that only calls or mentions a name defines nothing."""
    alternatives = "|".join(sorted(names, key=len, reverse=True))
    definition = re.compile(
        rf"(?<![\w$.])(?:def|class|function\*?|func|fn|struct|enum|trait|interface|type|const|let|var)\s+\*?"
        rf"({alternatives})(?!{_NAME_CHARS})"
        rf"|^\s*(?:export\s+)?({alternatives})\s*(?::[^=\n]*)?=(?!=)"
        rf"|\bfunc\s*\([^)]*\)\s*({alternatives})\s*\(")
    found = set()
    for line in lines:
        for match in definition.finditer(line):
            found.add(match.group(1) or match.group(2) or match.group(3))
    return found


class GitRepository:
    """judge.staleness.Repository through git, for the work tree at `work_tree` (the folder the
    memories' paths are relative to; `top` holds `.git`, and may be a folder above it)."""

    def __init__(self, work_tree: Path, top: Path, git_dir: Path, exclude: Path | None = None):
        self.work_tree, self.top, self.git_dir = work_tree, top, git_dir
        self._excluded = _relative_inside(exclude, work_tree) if exclude is not None else None
        self._partial: bool | None = None

    def files(self, paths: Collection[str]) -> Evidence:
        asked = [p for p in paths if "\0" not in p and p.strip("/")]
        present = frozenset(p for p in asked if self._exists(p))
        absent = [p for p in asked if p not in present]
        if not absent or self._partial_clone():
            return Evidence(present)
        ignored = self._ignored(absent)
        candidates = [p for p in absent if ignored is not None and p not in ignored]
        tracked = self._ever_tracked() if candidates else None
        if tracked is None:
            return Evidence(present)
        return Evidence(present, frozenset(p for p in candidates if p.rstrip("/") in tracked))

    def symbols(self, names: Collection[str], written: Collection[datetime] = ()) -> Evidence:
        asked = sorted({n for n in names if _NAME.fullmatch(n)})
        if not asked:
            return Evidence()
        lines = self._grep(asked)
        if lines is None:
            return Evidence()
        present = _named(lines, asked)
        absent = [n for n in asked if n not in present]
        if not absent or self._partial_clone():
            return Evidence(frozenset(present))
        defined = self._defined_before(absent, written)
        return Evidence(frozenset(present), frozenset(defined or ()))

    def _exists(self, path: str) -> bool:
        try:
            return os.path.lexists(self.work_tree / path)
        except (OSError, ValueError):
            return False

    def _ignored(self, paths: list[str]) -> set[str] | None:
        """The paths a .gitignore (or info/exclude) covers: local files the repository does not own."""
        ignored: set[str] = set()
        for chunk in _chunks(paths):
            out = self._git(["check-ignore", "-z", "--stdin"], stdin="\0".join(chunk).encode() + b"\0", ok=(0, 1))
            if out is None:
                return None
            ignored.update(_split(out))
        return ignored

    def _ever_tracked(self) -> set[str] | None:
        """Every path (and each folder of one) that a commit of HEAD's history added, changed or deleted.
        One pass over the history whatever the number of paths asked about: naming them as pathspecs
        costs a match of each against each commit's changes (1.2 s for 300 paths on 10,000 commits,
        against 0.13 s for the whole list)."""
        out = self._git(["log", "--no-color", "--format=", "--name-only", "-z", "--no-renames", "--full-history",
                         "--relative", "HEAD"])
        if out is None:
            return None
        tracked: set[str] = set()
        for name in _split(out):
            parts = name.split("/")
            tracked.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return tracked

    def _defined_before(self, names: list[str], written: Collection[datetime]) -> set[str] | None:
        """The names a source file defined in the commits looked at: HEAD and the earlier ones ladder()
        picks, and the commit that was current when each memory was written (at most MAX_WRITTEN)."""
        out = self._git(["log", "--no-color", "--first-parent", "--format=%H %ct", "HEAD"])
        if out is None:
            return None
        commits = [(int(seconds), sha) for sha, seconds in (line.split() for line in out.decode().splitlines())]
        picked = {commits[distance][1] for distance in ladder(len(commits))}
        picked |= current_at(commits, written)
        lines = self._grep(names, sorted(picked))
        return None if lines is None else defined_names(lines, names)

    def _grep(self, names: list[str], revisions: list[str] | None = None) -> list[str] | None:
        """The lines that name one of `names` as a word: in the work tree (tracked files and untracked
        ones not ignored), or in the source files of `revisions`. Perl regexes when git has them."""
        where = [*SOURCE_FILES] if revisions else ["."]
        where.append(_HIDDEN_FOLDERS)
        if self._excluded:
            where.append(f":(exclude,literal){self._excluded}")
        scope = revisions if revisions else ["--untracked"]
        lines: list[str] = []
        for chunk in _chunks(names):
            alternatives = "|".join(chunk)
            grep = ["grep", "--no-color", "-I", "-h"]
            done = self._run([*grep, "-P", "-e", f"(?<!{_NAME_CHARS})(?:{alternatives})(?!{_NAME_CHARS})",
                              *scope, "--", *where])
            if done is not None and done.returncode not in (0, 1):  # a git built without Perl regexes
                done = self._run([*grep, "-E", "-e", f"(^|[^A-Za-z0-9_$])({alternatives})([^A-Za-z0-9_$]|$)",
                                  *scope, "--", *where])
            if done is None or done.returncode not in (0, 1):
                return None
            lines += done.stdout.decode("utf-8", "replace").splitlines()
        return lines

    def _partial_clone(self) -> bool:
        """A partial clone fetches the objects it lacks from its remote when a command reads them: the
        history is then not looked at at all (a dream never reaches the network)."""
        if self._partial is None:
            out = self._git(["config", "--get", "extensions.partialClone"], ok=(0, 1))
            self._partial = out is None or bool(out.strip())
        return self._partial

    def _git(self, args: list[str], stdin: bytes = b"", ok: tuple[int, ...] = (0,)) -> bytes | None:
        """git's standard output, or None when git is missing, fails or runs past GIT_TIMEOUT."""
        done = self._run(args, stdin)
        return done.stdout if done is not None and done.returncode in ok else None

    def _run(self, args: list[str], stdin: bytes = b"") -> "subprocess.CompletedProcess[bytes] | None":
        argv = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.top}", "--no-optional-locks",
                "-c", "core.quotepath=off", *args]
        try:
            return subprocess.run(argv, cwd=self.work_tree, input=stdin, capture_output=True, timeout=GIT_TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            return None


def _named(lines: list[str], names: list[str]) -> set[str]:
    wanted = set(names)
    return {word for line in lines for word in _NAME.findall(line) if word in wanted}


def _relative_inside(path: Path, folder: Path) -> str | None:
    """`path` relative to `folder` with forward slashes, when it lies inside it."""
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[i:i + _CHUNK] for i in range(0, len(items), _CHUNK)]


def _split(out: bytes) -> list[str]:
    return [name for name in out.decode("utf-8", "replace").split("\0") if name]
