"""What the LLM distiller costs per entry: a 400-entry dream against the fake Messages API.

Starts tests/fake_anthropic.py on 127.0.0.1 (it answers like the API, usage included),
appends N entries to a fresh store, runs `dream --llm` through the real CLI and the real
SDK, and prints calls per entry and request bytes per entry (target: <= 1 call per 40).

    .venv/bin/python bench/llm_cost.py [--entries 400] [--seed 7]
"""

import argparse
import io
import json
import os
import random
import shutil
import sys
import tempfile
from contextlib import redirect_stdout
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from auto_dream.cli import run  # noqa: E402
from auto_dream.store.daylog import Entry, append_entry  # noqa: E402
from auto_dream.store.paths import ensure_store  # noqa: E402
from fake_anthropic import FakeAnthropic, answer, one_memory_per_entry  # noqa: E402

SUBJECTS = ["billing service", "search index", "deploy pipeline", "auth gateway", "data warehouse",
            "mobile app", "用户画像服务", "支付网关", "推荐系统"]
FACTS = ["{s} moves to Kafka next sprint", "{s} owns the nightly export", "Don't restart the {s} during business hours",
         "The user maintains the {s}", "Dashboards for the {s}: https://grafana.example.com/d/{n}",
         "{s} 的负责人是 Alice", "{s} 每周二发布", "不要在周五上线 {s}"]
TYPES = ["project", "project", "feedback", "user", "reference", "project", "project", "feedback"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    root = folder / ".auto-dream"
    paths = ensure_store(root)
    start = datetime(2026, 11, 20, 8, 0)
    for n in range(args.entries):
        choice = rng.randrange(len(FACTS))
        text = FACTS[choice].format(s=rng.choice(SUBJECTS), n=n) + f" (note {n})"
        append_entry(paths, Entry(start + timedelta(seconds=30 * n), text, TYPES[choice]))
    try:
        with FakeAnthropic(answer(one_memory_per_entry)) as fake:
            os.environ.update(ANTHROPIC_API_KEY="sk-bench-fake", ANTHROPIC_BASE_URL=fake.url)
            out = io.StringIO()
            with redirect_stdout(out):
                code = run(["--root", str(root), "dream", "--llm", "--json"])
            report = json.loads(out.getvalue())
            sent = sum(fake.request_bytes)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    stats = report["stats"]
    entries = stats["entries_gathered"]
    print(f"exit code:               {code}")
    print(f"entries:                 {entries}")
    print(f"LLM calls:               {stats['llm_calls']} ({stats['llm_fallback_batches']} batches fell back)")
    print(f"calls per entry:         {stats['llm_calls'] / entries:.4f} (target <= {1 / 40:.4f}, one per 40)")
    print(f"request bytes:           {sent:,}")
    print(f"input bytes per entry:   {sent / entries:,.0f}")
    print(f"input tokens (reported): {stats['llm_input_tokens']:,} + {stats['llm_cached_tokens']:,} from cache")
    print(f"output tokens:           {stats['llm_output_tokens']:,}")
    print(f"estimated cost:          ${stats['llm_estimated_cost_usd']:.4f} (Sonnet prices, fake usage)")


if __name__ == "__main__":
    main()
