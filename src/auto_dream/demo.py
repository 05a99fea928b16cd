"""`make run`: a dream over the bundled example log, in a temporary project, printed as a session.

The example (auto_dream/example/) is a day's log in English and Chinese plus four memories
from earlier in the year. Among them: a duplicate (the Chinese user memory), contradictions
(rebase policy; Redis → SQLite), and a stale project memory whose files and functions are
gone from the project.

    python -m auto_dream.demo [--keep]
"""

import shlex
import shutil
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
    """A small git project: src/ exists, but the legacy importer was deleted long ago."""
    (folder / ".git").mkdir()
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("def main():\n    return 'billing'\n")


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
        if keep:
            print(f"(project kept at {project}; try `auto-dream --root {root} undo`)")
        else:
            shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
