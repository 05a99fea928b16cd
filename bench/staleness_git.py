"""How fast git answers staleness's questions, and how much of what a history removed it proves gone.

store/repository.py asks git once per run about every path and name the memories cite. This
times those questions on a repository with a long history and checks the answers against what
the history itself shows:

- gone paths: files a commit of HEAD's history deleted, the work tree lacks and no .gitignore
  covers (every one must be proven gone);
- ignored: such files that a .gitignore covers now (pytest's `changelog/*`, `bin/`): never gone;
- gone names: functions and classes a first-parent commit removed and no file names now (the
  ladder of commits looked at proves a share of them; the rest stay unverifiable);
- never: paths and names no commit ever held (none may be proven gone);
- present: files and definitions of the work tree (all must be found there).

With no --repo, a synthetic history of 10,000 commits (400 Python files, a function added or
removed per commit, files deleted and added) is built with `git fast-import` in a temporary
folder. Any real clone with a work tree works too:

    .venv/bin/python bench/staleness_git.py [--repo PATH] [--commits 10000] [--sample 200]
"""

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.store.repository import open_repository  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "core.quotepath=off"]
_REMOVED_DEFINITION = re.compile(r"^-\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w{2,})", re.M)


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run([*GIT, "-C", str(repo), *args], input=stdin, capture_output=True)
    if done.returncode not in (0, 1):  # 1: check-ignore found nothing ignored
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
    return done.stdout.decode("utf-8", "replace")


def synthetic_history(folder: Path, commits: int, seed: int = 7) -> Path:
    """A repository of `commits` commits made with git fast-import: Python files whose functions are
    added and removed one commit at a time, some files deleted and new ones added."""
    rng = random.Random(seed)
    files: dict[str, list[str]] = {f"src/pkg{i // 20}/mod{i}.py": [f"f_{i}_{k}" for k in range(5)] for i in range(400)}
    stream = bytearray()

    def blob_of(functions: list[str]) -> bytes:
        return "".join(f"def {name}(value):\n    return value + 1\n\n" for name in functions).encode()

    def commit(number: int, changes: list[tuple[str, list[str] | None]]) -> None:
        stream.extend(b"commit refs/heads/main\n")
        stream.extend(f"committer bench <bench@example.invalid> {1_600_000_000 + number * 600} +0000\n".encode())
        message = f"commit {number}".encode()
        stream.extend(b"data %d\n%s\n" % (len(message), message))
        for path, functions in changes:
            if functions is None:
                stream.extend(f"D {path}\n".encode())
            else:
                data = blob_of(functions)
                stream.extend(f"M 100644 inline {path}\n".encode() + b"data %d\n" % len(data) + data + b"\n")
        stream.extend(b"\n")

    commit(0, [(path, functions) for path, functions in files.items()])
    added = 0
    for number in range(1, commits):
        if number % 40 == 0 and len(files) > 50:
            path = rng.choice(sorted(files))
            del files[path]
            commit(number, [(path, None)])
        elif number % 55 == 0:
            added += 1
            path = f"src/new/mod{added}.py"
            files[path] = [f"n_{added}_{k}" for k in range(3)]
            commit(number, [(path, files[path])])
        else:
            path = rng.choice(sorted(files))
            functions = files[path]
            if functions and rng.random() < 0.45:
                functions.remove(rng.choice(functions))
            else:
                functions.append(f"g_{number}")
            commit(number, [(path, functions)])
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "fast-import", "--quiet", stdin=bytes(stream))
    git(folder, "checkout", "-q", "-f", "main")
    return folder


def truth(repo: Path, sample: int, rng: random.Random) -> dict[str, tuple[list[str], list[str]]]:
    """(paths, names) for each kind of reference, read from the history itself."""
    tracked = set(git(repo, "ls-files", "-z").split("\0")) - {""}
    deleted = set(git(repo, "log", "--format=", "--name-only", "--diff-filter=D", "--no-renames", "HEAD").split())
    absent = sorted(p for p in deleted if not (repo / p).exists())
    ignored = set(git(repo, "check-ignore", "--stdin", "-z", stdin="\0".join(absent).encode() + b"\0").split("\0"))
    gone_paths = [p for p in absent if p not in ignored]
    named_now = set(re.findall(r"[A-Za-z_]\w*", git(repo, "grep", "-h", "-I", "-o", "-P", r"[A-Za-z_]\w{2,}")))
    first_parents = git(repo, "rev-list", "--first-parent", "HEAD").split()
    removed: set[str] = set()
    for commit in rng.sample(first_parents[:-1], min(len(first_parents) - 1, sample * 3)):
        diff = git(repo, "show", "--format=", "-U0", "--no-renames", commit, "--", "*.py")
        removed.update(name for name in _REMOVED_DEFINITION.findall(diff) if name not in named_now)
    defined_now = sorted(set(re.findall(r"(?:def|class)\s+([A-Za-z_]\w{2,})", git(repo, "grep", "-h", "-I", "-E",
                                                                                "(def|class) ", "--", "*.py"))))
    never = [f"zz_never_{n}" for n in range(sample // 2)]

    def pick(items, count):
        items = sorted(items)
        return rng.sample(items, min(count, len(items)))

    return {"gone": (pick(gone_paths, sample), pick(removed, sample)),
            "ignored": (pick(ignored - {""}, sample // 2), []),
            "never": ([f"src/never/file_{n}.py" for n in range(sample // 2)], never),
            "present": (pick(tracked, sample // 2), pick(defined_now, sample // 2))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a git work tree with history (default: a synthetic one)")
    parser.add_argument("--commits", type=int, default=10_000, help="commits of the synthetic history")
    parser.add_argument("--sample", type=int, default=200, help="references of each kind to ask about")
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="staleness-git-") as temporary:
        if args.repo is None:
            started = time.perf_counter()
            repo = synthetic_history(Path(temporary) / "repo", args.commits)
            print(f"synthetic history: {args.commits:,} commits built in {time.perf_counter() - started:.1f} s")
        else:
            repo = args.repo.resolve()
        count = int(git(repo, "rev-list", "--count", "HEAD"))
        first_parents = int(git(repo, "rev-list", "--first-parent", "--count", "HEAD"))
        print(f"{repo}: {count:,} commits ({first_parents:,} first-parent), {len(git(repo, 'ls-files').split()):,} "
              "files tracked")
        kinds = truth(repo, args.sample, rng)
        paths = [p for kind in kinds.values() for p in kind[0]]
        names = [n for kind in kinds.values() for n in kind[1]]
        repository = open_repository(repo)
        assert repository is not None
        started = time.perf_counter()
        files = repository.files(paths)
        files_seconds = time.perf_counter() - started
        started = time.perf_counter()
        symbols = repository.symbols(names)
        symbols_seconds = time.perf_counter() - started
        print(f"\nfiles():   {len(paths)} paths in {files_seconds:.2f} s")
        print(f"symbols(): {len(names)} names in {symbols_seconds:.2f} s\n")
        print(f"{'kind':<8} {'paths':>6} {'there':>6} {'gone':>6}   {'names':>6} {'there':>6} {'gone':>6}")
        for kind, (kind_paths, kind_names) in kinds.items():
            print(f"{kind:<8} {len(kind_paths):>6} {sum(p in files.present for p in kind_paths):>6} "
                  f"{sum(p in files.gone for p in kind_paths):>6}   {len(kind_names):>6} "
                  f"{sum(n in symbols.present for n in kind_names):>6} {sum(n in symbols.gone for n in kind_names):>6}")
        print("\n(gone paths must all be gone, ignored and never ones none, present ones all there; gone names\n"
              "are proven as far as the ladder of commits reaches, the rest stay unverifiable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
