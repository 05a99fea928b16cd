"""Whole-process time of `auto-dream append` against a bare `python -c pass`.

Both run from the same virtual environment, alternately, so a busy machine slows both
alike; the figure that matters is the ratio of the medians (target: at most 7).

    .venv/bin/python bench/append.py [--runs 40]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    executable = Path(sys.executable)
    script = shutil.which("auto-dream", path=str(executable.parent))
    if script is None:
        sys.exit("auto-dream is not installed next to this Python: run `make install` first")
    store = Path(tempfile.mkdtemp(prefix="bench-append-"))
    env = {**os.environ, "AUTO_DREAM_ROOT": str(store / ".auto-dream")}
    try:
        append = [script, "append", "--type", "project", "The benchmark appends this fact"]
        bare = [str(executable), "-c", "pass"]
        timed(append, env), timed(bare, env)  # warm the file cache
        append_times, bare_times = [], []
        for _ in range(args.runs):
            append_times.append(timed(append, env))
            bare_times.append(timed(bare, env))
    finally:
        shutil.rmtree(store, ignore_errors=True)
    append_ms = statistics.median(append_times) * 1000
    bare_ms = statistics.median(bare_times) * 1000
    print(f"runs:                 {args.runs} of each, alternating")
    print(f"auto-dream append:    {append_ms:.1f} ms (median)")
    print(f"python -c pass:       {bare_ms:.1f} ms (median)")
    print(f"ratio:                {append_ms / bare_ms:.2f} (target <= 7)")


if __name__ == "__main__":
    main()
