"""Synthetic stores and logs for benchmarks: N memories, M entries, set rates, a fixed seed.

    from synth import make_store, add_entries
    make_store(root, memories=10_000, seed=1)          # memory files, plus a git repository around them
    add_entries(root, entries=100, seed=2)             # new log entries for the next dream

Text is drawn from a large made-up vocabulary with a Zipf-like skew, as real notes are:
a few words are everywhere, most are rare. Rates (fractions of the memories or entries):
duplicates (near copies of an existing memory), contradictions ("Never …" against an
"Always …" rule), stale references (project memories citing a file and a function that the
repository's history shows were there and are gone) and CJK text (Chinese sentences).
"""

import itertools
import os
import random
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from auto_dream.store.daylog import Entry, format_entry
from auto_dream.store.memory import TakenNames, memory_file_name
from auto_dream.store.paths import MEMORY_TYPES, ensure_store

SYLLABLES = ["ka", "lo", "mi", "ter", "van", "sol", "rin", "dex", "pa", "tor", "qui", "ne", "bal", "cor", "zu",
             "fen", "gra", "hol", "ix", "jor", "lum", "mor", "nix", "ost", "pel", "ras", "sev", "tam", "ul", "wen"]
CJK = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你对说经产发工方同行面"


@dataclass(frozen=True)
class Rates:
    duplicates: float = 0.05
    contradictions: float = 0.03
    stale: float = 0.05
    cjk: float = 0.10


def vocabulary(rng: random.Random, size: int = 60_000) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Writer:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.words = vocabulary(random.Random(0))
        weights = [1 / (rank + 30) for rank in range(len(self.words))]
        self.cumulative = list(itertools.accumulate(weights))  # once: choices() would sum them per call

    def sentence(self, length: int | None = None) -> str:
        length = length or self.rng.randint(8, 22)
        if self.rng.random() < self.rate_cjk:
            return "".join(self.rng.choice(CJK) for _ in range(length * 2))
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=length)).capitalize()

    rate_cjk = 0.1


def make_store(root: Path, memories: int, seed: int = 1, rates: Rates = Rates()) -> Path:
    """A store of `memories` memory files inside a small git repo; returns the root."""
    writer = Writer(seed)
    writer.rate_cjk = rates.cjk
    rng = writer.rng
    project = root.parent
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "app.py").write_text("def serve():\n    return 1\n")
    paths = ensure_store(root)
    gone: list[int] = []
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    taken = {t: TakenNames() for t in MEMORY_TYPES}
    texts: list[tuple[str, str]] = []
    for number in range(memories):
        kind = rng.choices(MEMORY_TYPES, weights=[2, 3, 4, 1])[0]
        roll = rng.random()
        if texts and roll < rates.duplicates:
            kind, base = rng.choice(texts)
            words = base.split(" ")
            words[rng.randrange(len(words))] = rng.choice(writer.words)
            body = " ".join(words)
        elif roll < rates.duplicates + rates.contradictions:
            body = "Always " + writer.sentence(8).lower()
        elif kind == "project" and roll < rates.duplicates + rates.contradictions + rates.stale:
            body = f"{writer.sentence()} in `src/gone/module{number}.py` via `gone_handler{number}()`"
            gone.append(number)
        else:
            body = writer.sentence()
        texts.append((kind, body))
        mtime = now - timedelta(days=rng.randint(0, 700), minutes=number)
        name = body.split("\n")[0][:50]
        file_name = memory_file_name(name, mtime.date(), taken[kind])
        taken[kind].add(file_name)
        target = paths.memory_dir(kind) / file_name
        # written directly (not through render_memory) to generate 100k files quickly; the
        # generated text needs no YAML quoting: words, CJK, backticks, no leading symbols
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(f"---\nname: {name}\ndescription: {body[:150]}\ntype: {kind}\n"
                         f"mtime: {mtime.isoformat(timespec='seconds')}\nsources: [s{number:011x}]\n---\n{body}\n")
        os.chmod(target, 0o600)
    commit_history(project, gone)
    return root


def commit_history(project: Path, gone: list[int]) -> None:
    """A git history for the project: src/app.py, and the modules and functions the stale memories
    cite, committed and then deleted (so staleness can prove them gone)."""
    git = ["git", "-C", str(project), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
           "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]
    modules = project / "src" / "gone"
    modules.mkdir(parents=True, exist_ok=True)
    for number in gone:
        (modules / f"module{number}.py").write_text(f"def gone_handler{number}():\n    return {number}\n")
    for argv in (["init", "-q"], ["add", "src"], ["commit", "-q", "-m", "app and the modules"],
                 ["rm", "-rq", "--ignore-unmatch", "src/gone"], ["commit", "-q", "--allow-empty", "-m", "retire"]):
        subprocess.run([*git, *argv], check=True, capture_output=True)


def add_entries(root: Path, entries: int, seed: int = 2, rates: Rates = Rates(),
                day: datetime = datetime(2026, 12, 1, 9, 0)) -> int:
    """`entries` new log entries for one day: some repeat or contradict existing memories."""
    writer = Writer(seed)
    writer.rate_cjk = rates.cjk
    rng = writer.rng
    existing = [p for p in (root / "memories").rglob("*.md")]
    lines = []
    for number in range(entries):
        kind = rng.choice(MEMORY_TYPES)
        roll = rng.random()
        if existing and roll < rates.duplicates:
            source = rng.choice(existing)
            body = source.read_text(encoding="utf-8").split("---\n", 2)[-1].strip()
            kind = source.parent.name
            text = body + " " + rng.choice(writer.words)
        elif existing and roll < rates.duplicates + rates.contradictions:
            text = "Never " + writer.sentence(8).lower()
            kind = "feedback"
        else:
            text = writer.sentence()
        lines.append(format_entry(Entry(day + timedelta(seconds=number), text, kind)))
    log = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return entries


# The small shared vocabulary of a busy team's log: every entry names a thing of its own and
# four of these twelve words, so a large share of all pairs of entries pass the overlap rule.
COMMON_WORDS = ["deploy", "billing", "kafka", "postgres", "rebase", "branch", "tuesday", "invoice", "queue",
                "review", "cache", "redis"]


def marker(number: int) -> str:
    """A word of letters only that no other entry has (a digit would read as a value)."""
    letters = ""
    number += 26 ** 3
    while number:
        number, rest = divmod(number, 26)
        letters += chr(ord("a") + rest)
    return "zx" + letters


# Chinese words and terms of art that Chinese notes share: with them, most pairs of entries reach
# the anchored floor (similarity.ANCHORED_FLOOR), the lowest threshold a pair is searched from.
COMMON_CJK_WORDS = ["支付", "账本", "部署", "发布", "审核", "迁移", "缓存", "告警", "日志", "队列", "接口", "测试"]
COMMON_TERMS = ["Kafka", "Redis", "PR", "CI"]


def cjk_marker(number: int) -> str:
    """Two Chinese characters no other entry has together (a Latin marker would be an anchor, and
    two markers a letter apart read as one spelt two ways)."""
    return chr(0x4E00 + number // 200) + chr(0x6000 + number % 200)


def add_chinese_entries(root: Path, entries: int, seed: int = 1, day: datetime = datetime(2026, 12, 1, 9, 0)) -> int:
    """`entries` project entries in Chinese in one day's log: a marker of its own, four of twelve
    common words and one of four common terms (an anchor) each."""
    rng = random.Random(seed)
    return _write_day(root, day, [f"{cjk_marker(number)}：{'的'.join(rng.sample(COMMON_CJK_WORDS, 4))}"
                                  f"用{rng.choice(COMMON_TERMS)}。" for number in range(entries)])


def add_small_vocabulary_entries(root: Path, entries: int, seed: int = 1,
                                 day: datetime = datetime(2026, 12, 1, 9, 0)) -> int:
    """`entries` project entries in one day's log: a marker of its own and four common words each."""
    rng = random.Random(seed)
    return _write_day(root, day, [" ".join([marker(number), *rng.sample(COMMON_WORDS, 4)])
                                  for number in range(entries)])


def _write_day(root: Path, day: datetime, texts: list[str]) -> int:
    """`texts` as project entries in one day's log, a second apart from `day` on; how many."""
    lines = [format_entry(Entry(day + timedelta(seconds=number), text, "project")) for number, text in enumerate(texts)]
    log = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return len(texts)
