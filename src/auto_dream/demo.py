"""`make run`: a day of auto-dream on a temporary store, printed as a terminal session.

    python -m auto_dream.demo [--keep]
"""

import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from auto_dream.cli import run

DAY = [
    ("user", "2026-04-01 09:12", "The user is a backend developer who mostly writes Python and Go"),
    ("feedback", "2026-04-01 10:05", "Don't mock the database in integration tests.\n"
     "Reason: the mocked tests passed while the prod migration failed."),
    ("project", "2026-04-01 11:40", "用户想通过内容平台分享知识"),
    ("reference", "2026-04-01 15:20", "Fund data API runs at localhost:5000 (see `docs/api.md`)"),
]


def show(*argv: str) -> int:
    print(f"$ auto-dream {shlex.join(argv)}", flush=True)
    code = run(list(argv))
    sys.stdout.flush()
    print(flush=True)
    return code


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    folder = Path(tempfile.mkdtemp(prefix="auto-dream-demo-"))
    root = folder / ".auto-dream"
    try:
        show("init", str(folder))
        for entry_type, at, text in DAY:
            show("--root", str(root), "append", "--type", entry_type, "--at", at, text)
        show("--root", str(root), "list")
        show("--root", str(root), "check")
        show("--root", str(root), "build-index")
        print(f"$ cat {root / 'MEMORY.md'}")
        print((root / "MEMORY.md").read_text(encoding="utf-8"))
    finally:
        if keep:
            print(f"(store kept at {root})")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
