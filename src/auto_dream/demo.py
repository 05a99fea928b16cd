"""`make run`: a dream over the bundled example log, in a temporary project, printed as a session.

The example (auto_dream/example/) is a day's log in English and Chinese plus four memories
from earlier in the year. Among them: a duplicate (the Chinese user memory), contradictions
(rebase policy; Redis → SQLite), and a stale project memory whose files and functions are
gone from the project.

    python -m auto_dream.demo [--keep]
"""

import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib.resources import as_file, files
from pathlib import Path

from auto_dream.cli import run


def show(*argv: str) -> int:
    print(f"$ auto-dream {shlex.join(argv)}", flush=True)
    code = run(list(argv))
    sys.stdout.flush()
    print(flush=True)
    return code


def make_project(folder: Path) -> None:
    """A small git project whose history shows the legacy importer, deleted long ago: a memory citing
    it is provably stale. Without git there is no history, and nothing is."""
    importer = folder / "src" / "legacy" / "importer.py"
    importer.parent.mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def main():\n    return 'billing'\n")
    importer.write_text("def legacy_import(path):\n    return open(path).read()\n")
    git = ["git", "-C", str(folder), "-c", "user.name=auto-dream demo", "-c", "user.email=demo@example.invalid",
           "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]
    try:
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Billing app and its legacy importer"],
                     ["rm", "-q", str(importer)], ["commit", "-q", "-m", "Retire the legacy importer"]):
            subprocess.run([*git, *argv], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        importer.unlink(missing_ok=True)


def install_example(root: Path) -> None:
    with as_file(files("auto_dream") / "example") as example:
        shutil.copytree(example / "memories", root / "memories", dirs_exist_ok=True)
        log = root / "logs" / "2026" / "11" / "2026-11-20.md"
        log.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(example / "log.md", log)


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    project = Path(tempfile.mkdtemp(prefix="auto-dream-demo-"))
    root = project / ".auto-dream"
    try:
        make_project(project)
        show("init", str(project))
        install_example(root)
        show("--root", str(root), "append", "--type", "reference", "--at", "2026-11-20 18:02",
             "Release checklist lives in docs/release.md")
        show("--root", str(root), "list")
        show("--root", str(root), "check")
        code = show("--root", str(root), "dream")
        print(f"$ cat {root / 'MEMORY.md'}")
        print((root / "MEMORY.md").read_text(encoding="utf-8"))
        return code
    finally:
        here = Path(sys.executable).parent / "auto-dream"
        print(f"That was the demo. To run auto-dream yourself: `source {here.parent}/activate` and then "
              f"`auto-dream init`, or run {here} directly; `pipx install .` puts it on your PATH "
              "(README, \"Install the command\").", flush=True)
        if keep:
            print(f"(project kept at {project}; try `auto-dream --root {root} undo`)")
        else:
            shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
