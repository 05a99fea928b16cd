"""Staleness on the real Claude Code memory folders, each in its real repository: what `check` says.

The data (../shared/data/claude-memory, see its README.md) holds memory folders copied without
their repositories, so bench/real_folders.py dreams them with every reference unverifiable.
This bench needs the repositories: clone each at the commit the data's README names
(yonatangross/orchestkit @ 7c4f5aa, 4444J99/application-pipeline @ c85fbc2, vidarc/recommendarr
@ 324c650, NodeJSmith/otf-api) into one folder, named as the data's folders are. Each file of a
memory folder gets its last commit time from times.tsv (as bench/real_folders.py does), then
`check --json` runs on each memory folder in place (it writes nothing), with HOME in a temporary
folder. Printed: every memory that is PARTIALLY or FULLY stale with the references git proves
gone, and the count of each class.

    .venv/bin/python bench/real_repos_staleness.py --repos /tmp/real [--data ../shared/data/claude-memory]

Nothing in the clones is changed but the files' mtimes.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "claude-memory"  # ../shared


def set_times(repo: Path, times: Path) -> None:
    for line in times.read_text(encoding="utf-8").splitlines():
        path, _, seconds = line.rpartition("\t")
        target = repo / path
        if seconds.isdigit() and target.is_file():
            os.utime(target, (int(seconds), int(seconds)))


def memory_folders(repo: Path) -> list[Path]:
    return sorted(p.parent for p in repo.glob("**/.claude/**/MEMORY.md") if "node_modules" not in p.parts)


def check(folder: Path, home: Path) -> dict:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TZ": "UTC"}
    done = subprocess.run([sys.executable, "-m", "auto_dream", "--root", str(folder), "check", "--json"],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{folder}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="the folder holding the cloned repositories")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="root of the real memory folders")
    args = parser.parse_args()
    classes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="real-repos-home-") as home:
        for data in sorted(p for p in args.data.iterdir() if p.is_dir()):
            repo = args.repos / data.name
            if not (repo / ".git").exists():
                print(f"{data.name}: no clone at {repo}, left out")
                continue
            set_times(repo, data / "times.tsv")
            for folder in memory_folders(repo):
                memories = check(folder, Path(home))["memories"]
                classes.update(m["staleness"] for m in memories)
                stale = [m for m in memories if m["staleness"] in ("PARTIALLY_STALE", "FULLY_STALE")]
                print(f"{folder.relative_to(args.repos)}: {len(memories)} memories, {len(stale)} stale")
                for memory in stale:
                    print(f"  {memory['staleness']:<16} {memory['path']}: {', '.join(memory['missing_refs'])}")
    print("\n" + ", ".join(f"{kind} {classes[kind]}" for kind in ("EVERGREEN", "FRESH", "PARTIALLY_STALE",
                                                                   "FULLY_STALE")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
