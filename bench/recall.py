"""Recall: does dreaming keep facts findable, and is `auto-dream recall` fast?

Quality (default). LoCoMo (snap-research/LoCoMo, CC BY-NC 4.0, benchmarking only: read where
it lies, never copied) holds 10 long conversations with question/answer pairs; each question's
`evidence` names the dialogue turns (dia_ids) that answer it. Every conversation's
observations are appended and dreamed session by session exactly as bench/locomo.py does.
Then each question of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)
is a query:
- over memories: `recall(query, limit=10)` on the dreamed store; an evidence observation is
  found at k when one of the first k memories carries its log entry among its `sources`;
- baseline, in the same run: a plain BM25 (rank-bm25's BM25Okapi, a bench-only dependency)
  over the raw observations, one document each, lower-cased words; an evidence observation is
  found at k when it is among the first k documents.
Evidence recall@k: of a question's evidence observations, the share found at k, averaged over
the questions that have any (a dia_id no observation carries is not counted; how many
questions that leaves is printed).

Speed (`--scale`). Synthetic stores of 10,000 and 100,000 memories (bench/synth.py); each timed
as whole processes, median of 20, side by side with `python -c pass` in the same run:
`auto-dream recall` warm (the index current), and the first recall after one memory file
changed, replaced (a new file renamed over it, as auto-dream and most editors save) and
written in place. Targets: warm <= 10x the bare interpreter at 10k, <= 15x at 100k; after one
change <= 2x a warm recall. Past store.recall.FULL_CHECK_FILES memory files a recall checks the
folders before it answers and every file after (in a process of its own): before each timed
run the bench waits for the previous run's check to end (an agent's recalls are seconds
apart), prints how long that check takes, and says which recall found a file written in place.

    .venv/bin/python -m pip install rank-bm25      # once (pyproject's `bench` extra)
    .venv/bin/python bench/recall.py [--data ../shared/data/locomo10.json] [--conversations N]
    .venv/bin/python bench/recall.py --scale [--sizes 10000,100000] [--runs 20]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from auto_dream.commands.recall import recall  # noqa: E402
from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.runner import dream  # noqa: E402
from auto_dream.dream.snapshot import DreamOptions  # noqa: E402
from auto_dream.store.context import open_context  # noqa: E402
from auto_dream.store.daylog import append_entry, make_entry  # noqa: E402
from auto_dream.store.paths import ensure_store  # noqa: E402
from auto_dream.store.scan import scan_memories  # noqa: E402
from locomo import sessions  # noqa: E402  (the same appends as bench/locomo.py)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = "../shared/data/locomo10.json"
KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
WORD = re.compile(r"\w+")


@dataclass
class Scores:
    """Sums of per-question recall@k, by category, for one system."""

    sums: dict[int, dict[int, float]] = field(default_factory=lambda: {c: dict.fromkeys(KS, 0.0) for c in CATEGORIES})
    questions: dict[int, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))

    def add(self, category: int, found_at: list[int | None], evidence: int) -> None:
        """`found_at`: for each evidence observation, the rank (1-based) it was found at, or None."""
        self.questions[category] += 1
        for k in KS:
            self.sums[category][k] += sum(1 for rank in found_at if rank is not None and rank <= k) / evidence

    def recall(self, k: int, category: int | None = None) -> float:
        categories = [category] if category is not None else list(CATEGORIES)
        questions = sum(self.questions[c] for c in categories)
        return sum(self.sums[c][k] for c in categories) / questions if questions else 0.0


def tokens(text: str) -> list[str]:
    return WORD.findall(text.lower())


def run_conversation(sample: dict, memories: Scores, baseline: Scores, bm25_class) -> tuple[int, int]:
    """Dream the conversation as bench/locomo.py does, then ask its questions of both systems.
    Returns (questions asked, questions left out for evidence no observation carries)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-recall-"))
    root = folder / ".auto-dream"
    paths = ensure_store(root)
    paths.config.write_text('timezone = "UTC"\n', encoding="utf-8")
    context = open_context(root)
    distiller = DeterministicDistiller()
    observations: list[tuple[str, str, str]] = []  # (dia_id, text, entry id)
    try:
        for _, date, facts in sessions(sample):
            at = date
            for _speaker, fact, dia_id in facts:
                entry = make_entry(fact, None, at)
                append_entry(paths, entry)
                observations.append((dia_id, entry.text, entry.id))
                at += timedelta(seconds=1)
            dream(context, (at + timedelta(minutes=1)).replace(tzinfo=timezone.utc), DreamOptions(), distiller)
        sources = {m.path: set(m.sources) for m in scan_memories(paths, context.tz).memories}
        bm25 = bm25_class([tokens(text) for _, text, _ in observations])
        by_dia: dict[str, list[int]] = {}
        for index, (dia_id, _, _) in enumerate(observations):
            for one in dia_id.split(","):
                by_dia.setdefault(one.strip(), []).append(index)
        asked = left_out = 0
        for qa in sample["qa"]:
            category = qa.get("category")
            if category not in CATEGORIES:
                continue
            wanted = sorted({i for dia in qa.get("evidence", []) for i in by_dia.get(str(dia).strip(), [])})
            if not wanted:
                left_out += 1
                continue
            asked += 1
            query = str(qa["question"])
            hits = recall(context, query, max(KS), None, archived=False)
            ranked_sources = [sources.get(hit.path, set()) for hit in hits]
            memories.add(category, [next((rank for rank, found in enumerate(ranked_sources, 1)
                                          if observations[i][2] in found), None) for i in wanted], len(wanted))
            scores = bm25.get_scores(tokens(query))
            order = sorted(range(len(observations)), key=lambda i: -scores[i])[:max(KS)]
            position = {doc: rank for rank, doc in enumerate(order, 1)}
            baseline.add(category, [position.get(i) for i in wanted], len(wanted))
        return asked, left_out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def quality(args: argparse.Namespace) -> None:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        sys.exit("bench/recall.py needs rank-bm25 for its baseline: .venv/bin/python -m pip install rank-bm25")
    import json

    data = json.loads((REPO / args.data).read_text(encoding="utf-8"))[: args.conversations]
    memories, baseline = Scores(), Scores()
    asked = left_out = 0
    start = time.perf_counter()
    for sample in data:
        a, skipped = run_conversation(sample, memories, baseline, BM25Okapi)
        asked += a
        left_out += skipped
        print(f"  {sample.get('sample_id')}: {a} questions", file=sys.stderr)
    print(f"LoCoMo, {len(data)} conversations, {asked} questions of categories 1-4 "
          f"({left_out} left out: their evidence is in no observation); {time.perf_counter() - start:.1f} s\n")
    print(f"{'category':<13} {'questions':>9}   " + "  ".join(f"{'memories@' + str(k):>11} {'bm25@' + str(k):>8}"
                                                          for k in KS))
    for category, label in [*CATEGORIES.items(), (None, "all")]:
        count = sum(memories.questions.values()) if category is None else memories.questions[category]
        cells = "  ".join(f"{memories.recall(k, category):>11.3f} {baseline.recall(k, category):>8.3f}" for k in KS)
        print(f"{label:<13} {count:>9}   {cells}")
    difference = memories.recall(5) - baseline.recall(5)
    print(f"\nrecall@5 over memories {memories.recall(5):.3f} vs raw BM25 {baseline.recall(5):.3f}: "
          f"{'beats' if difference >= 0 else 'trails'} it by {abs(difference):.3f} (target: >= the baseline)")
    print(f"reproduce: cd {REPO} && .venv/bin/python bench/recall.py")


def median_seconds(command: list[str], runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def wait_for_check(root: Path) -> float:
    """Seconds until the full check a recall left running is done: it holds the lock file
    (store.recall.SWEEP_LOCK_NAME) from before the recall answered. 0 where there is no flock."""
    try:
        import fcntl
    except ImportError:
        return 0.0
    from auto_dream.store.recall_index import SWEEP_LOCK_NAME

    start = time.perf_counter()
    lock = os.open(root / ".state" / SWEEP_LOCK_NAME, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
    finally:
        os.close(lock)
    return time.perf_counter() - start


def scale(args: argparse.Namespace) -> None:
    from auto_dream.store.recall_index import FULL_CHECK_FILES
    from synth import make_store  # bench/synth.py

    for size in (int(s) for s in args.sizes.split(",")):
        folder = Path(tempfile.mkdtemp(prefix=f"bench-recall-scale-{size}-"))
        try:
            root = folder / ".auto-dream"
            make_store(root, size)
            target = next((root / "memories").rglob("*.md"))
            original = target.read_text(encoding="utf-8")
            name = next(line for line in original.splitlines() if line.startswith("name: "))
            query = " ".join(name.removeprefix("name: ").split()[:2])  # words the store holds
            command = [sys.executable, "-m", "auto_dream", "--root", str(root), "recall", query, "--json"]

            def found_paths(*words: str) -> list[str]:
                done = subprocess.run([*command[:-2], *words, "--json"], check=True, capture_output=True, text=True)
                return [hit["path"] for hit in json.loads(done.stdout)]

            found_paths(query)  # builds the index once
            time.sleep(2.5)  # past store.recall.RACY_NS: the folders' stamps are recorded as they are
            found_paths(query)
            wait_for_check(root)
            edits = iter(range(10**9))

            def replace_one() -> None:
                wait_for_check(root)
                spare = target.with_name("spare.tmp")
                spare.write_text(original + f"\nReplaced {next(edits)}.\n", encoding="utf-8")
                os.replace(spare, target)

            def write_one_in_place() -> None:
                wait_for_check(root)
                target.write_text(original + f"\nEdited {next(edits)}.\n", encoding="utf-8")

            bare = median_seconds([sys.executable, "-c", "pass"], args.runs)
            warm = median_seconds(command, args.runs, before=lambda: wait_for_check(root))
            replaced = median_seconds(command, args.runs, before=replace_one)
            in_place = median_seconds(command, args.runs, before=write_one_in_place)
            bare_after = median_seconds([sys.executable, "-c", "pass"], args.runs)
            bare = statistics.median([bare, bare_after])

            # which recall finds a new word, and what the check after the answer costs
            target_path = target.relative_to(root).as_posix()
            wait_for_check(root)
            target.write_text(original + "\nZyxwvutsrq.\n", encoding="utf-8")
            first = target_path in found_paths("zyxwvutsrq")
            check = wait_for_check(root)
            second = target_path in found_paths("zyxwvutsrq")
            spare = target.with_name("spare.tmp")
            spare.write_text(original + "\nQponmlkjih.\n", encoding="utf-8")
            os.replace(spare, target)
            seen = target_path in found_paths("qponmlkjih")
            limit = 10 if size <= 10_000 else 15
            print(f"{size:>7,} memories: python -c pass {bare * 1000:6.1f} ms; recall warm {warm * 1000:7.1f} ms "
                  f"= {warm / bare:5.1f}x (target <= {limit}x)")
            print(f"         after one file replaced {replaced * 1000:7.1f} ms = {replaced / warm:4.2f}x warm, "
                  f"after one written in place {in_place * 1000:7.1f} ms = {in_place / warm:4.2f}x warm (target <= 2x)")
            if size > FULL_CHECK_FILES:
                print(f"         (above {FULL_CHECK_FILES:,} files: folders checked before the answer, every file "
                      f"after it, in {check * 1000:.0f} ms more, in a process of its own)")
            print(f"         a replaced file's new words found by the next recall: {'yes' if seen else 'NO'}; "
                  "a file written in place found by "
                  + ("the next recall" if first else "the recall after the check" if second else "NO recall"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"reproduce: cd {REPO} && .venv/bin/python bench/recall.py --scale --sizes {args.sizes} --runs {args.runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="LoCoMo's locomo10.json, relative to the repository")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--scale", action="store_true", help="time recall on synthetic stores instead")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    if args.scale:
        scale(args)
    else:
        quality(args)


if __name__ == "__main__":
    main()
