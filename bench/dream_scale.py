"""How dream scales: whole-process wall time and peak RSS, full and incremental, the indexed
pair search against the all-pairs reference, and one dream over thousands of new entries.

    .venv/bin/python bench/dream_scale.py [--sizes 1000 10000 100000] [--pairs-at 10000]
                                          [--entries 1000 4000 16000] [--locomo PATH]

For each size N: a synthetic store of N memories (bench/synth.py, fixed seed) in a git
repo; `auto-dream dream --full` as a separate process (the full run, every pair checked);
then, on a copy of that store, 100 new log entries and a plain `auto-dream dream` (the
nightly, incremental run), repeated --repeat times with the sizes taking turns; the median
is reported.
Every dream is a separate process run from compiled bytecode, as an installed tool is (see
start_launcher). Peak RSS is the child's own maximum resident set (wait4). Targets:
incremental 100 entries into 100k memories <= 2 s and <= 3x the same into 1k; peak RSS
<= 500 MB at 100k; the indexed search >= 20x faster than all-pairs at 10k with identical
pairs; the full dream of the --pairs-at store (a whole process: reading every file, every
pair checked, MEMORY.md written) >= 5x faster than the reference all-pairs scan alone over the
same memories, measured in the same run.

New entries in one dream (--entries; 0 to skip): a fresh store, one log of N entries, one
`auto-dream dream --no-llm` as a whole process, for two kinds of entries:
  small vocabulary  each entry a word of its own and four of twelve common words
                    (synth.add_small_vocabulary_entries): most pairs pass the overlap rule
  Chinese with terms  each entry in Chinese: an anchor of its own, four of twelve common words and one
                    of four common terms (synth.add_chinese_entries): most pairs reach the anchored floor
  LoCoMo            LoCoMo's 2,541 real observations in session order, back-dated to their
                    sessions; past 2,541 the same again with each conversation's two speakers
                    renamed (--locomo: the data file; the series is left out without it)
Printed: seconds, the ratio to the first size, peak RSS; with --baseline SRC (another checkout's
src folder, e.g. a git worktree of an earlier commit) each of these dreams is run by that code too,
right after on a store made the same way, and the ratio of the two times printed: a change's cost
measured side by side on one machine at one time. Targets: 4,000 <= 6x the 1,000
time, 16,000 <= 20x; 16,000 small-vocabulary entries <= 60 s.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from auto_dream.judge.pairs import indexed_pairs, reference_pairs  # noqa: E402
from auto_dream.judge.similarity import Profile  # noqa: E402
from auto_dream.store.daylog import Entry, format_entry  # noqa: E402
from auto_dream.store.paths import (
    StorePaths,  # noqa: E402
    ensure_store,  # noqa: E402
)
from auto_dream.store.scan import scan_memories  # noqa: E402
from synth import add_chinese_entries, add_entries, add_small_vocabulary_entries, make_store  # noqa: E402

COMMAND = Path(sys.executable).parent / "auto-dream"
REPO = Path(__file__).resolve().parent.parent


# Linux counts a child's peak RSS from the moment it is forked, so a child of this process
# (which builds the stores and grows with them) would report this process's size. Children
# are started instead by a small launcher started first, and timed there.
_LAUNCHER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv, extra = json.loads(line)
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **extra})
    _, status, usage = os.wait4(child.pid, 0)
    print(json.dumps([time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)]),
          flush=True)
"""
_launcher: subprocess.Popen | None = None


def start_launcher(pycache: Path) -> None:
    """Start the launcher, and through it compile auto-dream's modules once into `pycache`.

    An installed tool runs from compiled bytecode; an editable install writes it on first
    import, unless PYTHONDONTWRITEBYTECODE is set, as it is on some shared machines, where
    every process would compile the package again (0.1-0.15 s of each dream here). The
    children write and read their bytecode under `pycache`, never beside the sources.
    """
    global _launcher
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    _launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env)
    package = Path(__import__("auto_dream").__file__).parent
    _, _, code = _timed([sys.executable, "-m", "compileall", "-q", str(package)])
    if code != 0:
        sys.exit(f"dream_scale: compiling {package} failed (exit code {code})")


def timed_process(*argv: str) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB, exit code of one whole `auto-dream` process."""
    return _timed([str(COMMAND), *argv])


def _timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB, exit code of `argv` run by the launcher (`env`: variables set for it)."""
    _launcher.stdin.write(json.dumps([argv, env or {}]) + "\n")
    _launcher.stdin.flush()
    elapsed, peak_mb, code = json.loads(_launcher.stdout.readline())
    return elapsed, peak_mb, code


def full_run(size: int, folder: Path) -> dict:
    """A fresh synthetic store of `size` memories and its first, full dream."""
    root = folder / f"store-{size}" / ".auto-dream"
    started = time.perf_counter()
    make_store(root, size, seed=size)
    generated = time.perf_counter() - started
    # the full run clears every finding (no retirement budget), so the nightly runs that
    # follow measure a store in its steady state, not a backlog of deferred retirements
    full = timed_process("--root", str(root), "dream", "--full", "--budget", "100000000", "--json")
    return {"size": size, "root": root, "generated": generated, "full": full, "incremental": []}


def clone(store: Path, target: Path) -> None:
    """A copy of a store and the repository around it to dream in: memory files hard-linked
    (dream replaces a file, it never edits one in place), everything else copied (log
    appends and SQLite write in place)."""
    linked = ("memories", "archive")
    shutil.copytree(store.parent, target.parent, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n in linked] if Path(folder) == store else [])
    for name in linked:
        if (store / name).is_dir():
            shutil.copytree(store / name, target / name, symlinks=True, copy_function=os.link)


def incremental_run(result: dict, folder: Path) -> None:
    """100 new entries into a copy of the store as its full run left it, and a plain dream."""
    size = result["size"]
    root = folder / f"nightly-{size}" / ".auto-dream"
    shutil.rmtree(root.parent, ignore_errors=True)
    clone(result["root"], root)
    add_entries(root, 100, seed=size + 1)
    os.sync()  # the copy's writes go to disk now, not during the timed dream
    result["incremental"].append(timed_process("--root", str(root), "dream", "--json"))
    shutil.rmtree(root.parent, ignore_errors=True)


def pair_search(size: int, folder: Path, threshold: float, repeat: int) -> None:
    """The indexed pair search against the all-pairs reference, in process; then the whole full
    dream of the same store against that reference, taking turns `repeat` times."""
    pristine = folder / f"pairs-{size}" / ".auto-dream"
    make_store(pristine, size, seed=size)
    memories = scan_memories(StorePaths(pristine), None).memories
    by_type: dict[str, dict[str, frozenset[str]]] = {}
    for memory in memories:
        by_type.setdefault(memory.type, {})[memory.path] = Profile.of(memory.text()).words
    reference_times, full_times, again_times = [], [], []
    for turn in range(repeat):
        start = time.perf_counter()
        reference = set().union(*(reference_pairs(pool, threshold) for pool in by_type.values()))
        reference_times.append(time.perf_counter() - start)
        root = folder / f"full-{size}" / ".auto-dream"
        shutil.rmtree(root.parent, ignore_errors=True)
        clone(pristine, root)
        os.sync()
        full_s, _, full_rc = timed_process("--root", str(root), "dream", "--full", "--budget", "100000000", "--json")
        # and again on the store that run left, its parse cache made: what a later `dream --full` costs
        again_s, _, again_rc = timed_process("--root", str(root), "dream", "--full", "--json")
        if full_rc != 0 or again_rc != 0:
            sys.exit(f"dream_scale: a full dream of {size:,} memories exited with {full_rc or again_rc}")
        full_times.append(full_s)
        again_times.append(again_s)
        shutil.rmtree(root.parent, ignore_errors=True)
    reference_time = statistics.median(reference_times)
    # the indexed search takes a fraction of a second, where a busy spell of this shared machine
    # weighs most: the median of five runs, taken right after the reference
    times = []
    for _ in range(5):
        start = time.perf_counter()
        indexed = set().union(*(indexed_pairs(list(pool), pool, threshold) for pool in by_type.values()))
        times.append(time.perf_counter() - start)
    indexed_time = statistics.median(times)
    comparisons = sum(len(pool) * (len(pool) - 1) // 2 for pool in by_type.values())
    print(f"\npair search at {size:,} memories (threshold {threshold}, same-type pairs: {comparisons:,}):")
    print(f"  all-pairs reference: {reference_time:8.2f} s (median of {repeat}), {len(reference):,} pairs")
    print(f"  indexed (prefix):    {indexed_time:8.2f} s (median of 5: {min(times):.2f}-{max(times):.2f} s), "
          f"{len(indexed):,} pairs")
    print(f"  speed-up:            {reference_time / indexed_time:8.1f}x (target >= 20x)")
    print(f"  identical pairs:     {reference == indexed}")
    full_time, again_time = statistics.median(full_times), statistics.median(again_times)
    print(f"\nfull dream of the same {size:,} memories, whole process, taking turns with the all-pairs scan, "
          f"median of {repeat}:")
    print(f"  first dream --full (a fresh copy: every file read and parsed, every pair checked, caches written): "
          f"{full_time:.2f} s ({min(full_times):.2f}-{max(full_times):.2f}), "
          f"{reference_time / full_time:.1f}x faster than the all-pairs scan alone (target >= 5x)")
    print(f"  dream --full again (the store it left, parse cache warm, every pair checked): "
          f"{again_time:.2f} s ({min(again_times):.2f}-{max(again_times):.2f}), "
          f"{reference_time / again_time:.1f}x faster than the all-pairs scan alone")


# ---------------------------------------------------------------- new entries in one dream

SPEAKERS = ["Aiko", "Bruno", "Chidi", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kavya", "Lars",
            "Mira", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tomas"]


def locomo_entries(data: Path, count: int) -> list[tuple[datetime, str]]:
    """`count` (time, text): LoCoMo's observations in session order, each session's back-dated to
    its date one second apart; past the end the same again, each conversation's two speakers
    renamed (a round of new names each time)."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    once: list[tuple[int, datetime, str, str]] = []  # (conversation, time, speaker, text)
    for number, sample in enumerate(samples):
        conversation = sample["conversation"]
        observations = sample["observation"]
        for key in sorted(observations, key=lambda k: int(re.search(r"\d+", k).group())):
            session = int(re.search(r"\d+", key).group())
            at = datetime.strptime(conversation[f"session_{session}_date_time"], "%I:%M %p on %d %B, %Y")
            for speaker, facts in observations[key].items():
                for fact, _ in facts:
                    once.append((number, at, speaker, fact))
                    at += timedelta(seconds=1)
    entries = []
    for round_ in range(count // len(once) + 1):
        for number, at, speaker, fact in once:
            if len(entries) == count:
                return entries
            if round_:
                names = [name for name in samples[number]["conversation"] if name.startswith("speaker_")]
                for place, name_key in enumerate(sorted(names)):
                    real = samples[number]["conversation"][name_key]
                    fact = fact.replace(real, SPEAKERS[(round_ * 2 + place + number) % len(SPEAKERS)] + "ine" * round_)
            entries.append((at + timedelta(days=round_), fact))
    return entries


def write_log(root: Path, entries: list[tuple[datetime, str | None, str]]) -> None:
    """The entries (time, type, text) into their days' logs, oldest first, as `append` writes them."""
    paths = ensure_store(root)
    by_day: dict[Path, list[str]] = {}
    for at, kind, text in sorted(entries, key=lambda e: e[0]):
        by_day.setdefault(paths.log_file(at.date()), []).append(format_entry(Entry(at, text, kind)))
    for log, lines in by_day.items():
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write("".join(lines))


def one_dream_series(folder: Path, sizes: list[int], locomo: Path | None, baseline: Path | None = None) -> None:
    """One dream over N new entries on a fresh store, for each kind and size; with `baseline` (another
    checkout's src folder), the same dream by that code right after, on a store made the same way,
    and the ratio of the two times."""
    def small_vocabulary(root: Path, count: int) -> None:
        ensure_store(root)
        add_small_vocabulary_entries(root, count)

    def real(root: Path, count: int) -> None:
        write_log(root, [(at, None, text) for at, text in locomo_entries(locomo, count)])

    def chinese(root: Path, count: int) -> None:
        ensure_store(root)
        add_chinese_entries(root, count)

    kinds = {"small vocabulary": small_vocabulary, "Chinese with terms": chinese}
    if locomo is not None:
        kinds["LoCoMo"] = real
    else:
        print("\n(LoCoMo left out: no --locomo data file)")
    for kind, make in kinds.items():
        print(f"\nnew entries in one dream, {kind} (dream --no-llm on a fresh store, whole process):")
        print(f"{'entries':>9} {'seconds':>8} {'ratio':>7} {'peak RSS':>9}  created merged review"
              + ("  baseline  this/baseline" if baseline else ""))
        first = None
        for size in sizes:
            root = folder / f"entries-{size}" / ".auto-dream"
            runs = []
            # both sides as `python -m auto_dream` from their sources, when they are compared
            for source in (REPO / "src", baseline) if baseline else (None,):
                shutil.rmtree(root.parent, ignore_errors=True)
                make(root, size)
                (root / "config.toml").write_text('timezone = "UTC"\n', encoding="utf-8")
                os.sync()
                runs.append(timed_report("--root", str(root), "dream", "--no-llm", "--json", source=source))
            seconds, peak_mb, code, report = runs[0]
            first = first or seconds
            stats = report.get("stats", {})
            flag = "" if code == 0 else f"  (exit code {code})"
            compared = f"  {runs[1][0]:>7.2f}s  {seconds / runs[1][0]:>12.2f}x" if baseline else ""
            print(f"{size:>9,} {seconds:>7.2f}s {seconds / first:>6.1f}x {peak_mb:>7.0f}MB  "
                  f"{stats.get('created', '?'):>7} {stats.get('merged', '?'):>6} {stats.get('review', '?'):>6}"
                  f"{compared}{flag}", flush=True)
            shutil.rmtree(root.parent, ignore_errors=True)
        print("  targets: 4,000 <= 6x the 1,000 time, 16,000 <= 20x; 16,000 small-vocabulary entries <= 60 s")


def timed_report(*argv: str, source: Path | None = None) -> tuple[float, float, int, dict]:
    """timed_process, and the --json report the dream printed (read from a file: the launcher
    sends the child's output nowhere). With `source` (a checkout's src folder), the auto-dream
    of that source runs instead, as `python -m auto_dream`."""
    out = Path(tempfile.mkstemp(prefix="bench-report-", suffix=".json")[1])
    command = [str(COMMAND)] if source is None else [sys.executable, "-m", "auto_dream"]
    try:
        seconds, peak_mb, code = _timed(["sh", "-c", f'exec "$0" "$@" > {shlex.quote(str(out))}', *command, *argv],
                                        None if source is None else {"PYTHONPATH": str(source)})
        try:
            report = json.loads(out.read_text(encoding="utf-8"))
        except ValueError:
            report = {}
    finally:
        out.unlink()
    return seconds, peak_mb, code, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000],
                        help="store sizes for the full and incremental dreams (none: skip them)")
    parser.add_argument("--pairs-at", type=int, default=10_000, help="0 to skip the pair-search comparison")
    parser.add_argument("--threshold", type=float, default=0.4, help="the lower of the two overlap thresholds")
    parser.add_argument("--repeat", type=int, default=5, help="incremental dreams per size (median reported)")
    parser.add_argument("--full-repeat", type=int, default=3,
                        help="full dreams and all-pairs scans of the --pairs-at store, taking turns")
    parser.add_argument("--entries", type=int, nargs="*", default=[1_000, 4_000, 16_000],
                        help="new entries in one dream (none: skip the series)")
    parser.add_argument("--locomo", type=Path, default=REPO / ".." / "shared" / "data" / "locomo10.json",
                        help="LoCoMo's locomo10.json, for the real-text series")
    parser.add_argument("--baseline", type=Path, default=None, metavar="SRC",
                        help="another checkout's src folder (e.g. a git worktree of an earlier commit): each dream "
                             "of the new-entries series is run by it too, side by side, and the ratio printed")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    start_launcher(folder / "pycache")  # while this process is still small
    if args.baseline:  # compiled too, so that neither side pays for compiling in its first run
        _timed([sys.executable, "-m", "compileall", "-q", str(args.baseline.resolve() / "auto_dream")])
    try:
        results = []
        print(f"{'memories':>9} {'generate':>9} {'full dream':>11} {'full RSS':>9}")
        for size in args.sizes:
            result = full_run(size, folder)
            results.append(result)
            full_s, full_mb, full_rc = result["full"]
            flag = "" if full_rc == 0 else f"  (exit code {full_rc})"
            print(f"{size:>9,} {result['generated']:>8.1f}s {full_s:>10.2f}s {full_mb:>7.0f}MB{flag}", flush=True)
        # The nightly runs of all sizes take turns, so a busy spell of this shared machine
        # falls on every size alike; the median of the repeats is reported.
        for _ in range(args.repeat):
            for result in results:
                incremental_run(result, folder)
        print(f"\nincremental dream of 100 new entries, median of {args.repeat} (sizes interleaved):")
        print(f"{'memories':>9} {'median':>8} {'min':>7} {'max':>7} {'peak RSS':>9}")
        for result in results:
            times = sorted(t for t, _, _ in result["incremental"])
            codes = {code for _, _, code in result["incremental"]}
            flag = "" if codes == {0} else f"  (exit codes {sorted(codes)})"
            result["median"] = statistics.median(times)
            print(f"{result['size']:>9,} {result['median']:>7.2f}s {times[0]:>6.2f}s {times[-1]:>6.2f}s "
                  f"{max(mb for _, mb, _ in result['incremental']):>7.0f}MB{flag}")
        by_size = {r["size"]: r for r in results}
        if 1_000 in by_size and 100_000 in by_size:
            small, large = by_size[1_000]["median"], by_size[100_000]["median"]
            print(f"\nincremental 100 entries: {large:.2f} s at 100k vs {small:.2f} s at 1k = {large / small:.2f}x "
                  "(targets: <= 2 s, <= 3x)")
            print(f"peak RSS at 100k: full {by_size[100_000]['full'][1]:.0f} MB, incremental "
                  f"{max(mb for _, mb, _ in by_size[100_000]['incremental']):.0f} MB (target <= 500 MB)")
        for size in args.sizes:
            shutil.rmtree(folder / f"store-{size}", ignore_errors=True)
        if args.pairs_at:
            pair_search(args.pairs_at, folder, args.threshold, args.full_repeat)
        if args.entries:
            one_dream_series(folder, args.entries, args.locomo if args.locomo.is_file() else None,
                             args.baseline.resolve() if args.baseline else None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    python = Path(sys.executable)
    python = python.relative_to(Path.cwd()) if python.is_relative_to(Path.cwd()) else python
    print(f"\nreproduce: {python} "
          f"bench/dream_scale.py --sizes {' '.join(map(str, args.sizes))} --pairs-at {args.pairs_at} "
          f"--repeat {args.repeat} --full-repeat {args.full_repeat} --entries {' '.join(map(str, args.entries))}"
          + (f" --baseline {args.baseline}" if args.baseline else ""))


if __name__ == "__main__":
    main()
