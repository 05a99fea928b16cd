"""How much of LoCoMo's observation stream survives in live memories (deterministic distiller).

LoCoMo (snap-research/LoCoMo, CC BY-NC 4.0, benchmarking only: the data is read where it
lies and never copied into this repository) holds 10 long conversations between two people.
For each conversation, in a fresh temporary store, every session's observations are
appended in session order, back-dated to the session's date (one second apart), and the
store dreams once after each session, as a user would each night. All in-process: the
library's append_entry and dream with DeterministicDistiller, no API key.

Printed per conversation and in total:
  entries      observations appended (one log entry each)
  live         memory files under memories/ after the last dream
  compression  live / entries
  retained     observations whose significant words (similarity.significant_words) all
               appear in the text (name + description + body) of one single live memory
  archived     memory files under archive/
  review       pairs the dreams listed for review (each a reader's time: few, and real)
  time         wall seconds for the appends and dreams (the retention check is not counted)
Then up to --examples observations that were not retained, each with what happened to it.

    .venv/bin/python bench/locomo.py [--data ../shared/data/locomo10.json] [--conversations N]
"""

import argparse
import json
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.runner import dream  # noqa: E402
from auto_dream.dream.snapshot import DreamOptions  # noqa: E402
from auto_dream.judge.similarity import _CHANGE, _NEGATION, Profile, overlap, significant_words, without_replacements  # noqa: E402  # noqa: E402 (to show what raised a signal)
from auto_dream.store.context import open_context  # noqa: E402
from auto_dream.store.daylog import append_entry, make_entry  # noqa: E402
from auto_dream.store.memory import Memory  # noqa: E402
from auto_dream.store.paths import ensure_store  # noqa: E402
from auto_dream.store.scan import scan_memories  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = "../shared/data/locomo10.json"  # relative to the repository root
SESSION_KEY = re.compile(r"session_(\d+)_observation")
SESSION_DATE = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass
class Observation:
    conversation: str
    session: int
    speaker: str
    dia_id: str
    text: str
    entry_id: str
    words: frozenset[str]


@dataclass
class Lost:
    observation: Observation
    cause: str  # a short class, for the tally
    detail: str  # what happened to it, for a person


@dataclass
class Result:
    name: str
    entries: int = 0
    live: int = 0
    retained: int = 0
    archived: int = 0
    review: int = 0
    seconds: float = 0.0
    dreams: int = 0
    lost: list[Lost] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def not_retained(self) -> int:
        return self.entries - self.retained


def session_date(conversation: dict, number: int) -> datetime:
    raw = conversation[f"session_{number}_date_time"]
    try:
        return datetime.strptime(" ".join(raw.split()), SESSION_DATE)
    except ValueError:
        raise SystemExit(f"session_{number}_date_time: cannot read the date {raw!r}") from None


def sessions(sample: dict) -> list[tuple[int, datetime, list[tuple[str, str, str]]]]:
    """(number, date, [(speaker, fact, dia_id)]) for every session with observations, by number."""
    found = []
    for key, by_speaker in sample["observation"].items():
        match = SESSION_KEY.fullmatch(key)
        if match is None:
            continue
        number = int(match.group(1))
        facts = []
        for speaker, items in by_speaker.items():
            for item in items:
                fact, dia_id = item[0], item[1]
                facts.append((speaker, fact, dia_id if isinstance(dia_id, str) else ",".join(map(str, dia_id))))
        found.append((number, session_date(sample["conversation"], number), facts))
    return sorted(found, key=lambda s: s[0])


def run_conversation(sample: dict, keep: Path | None) -> Result:
    name = str(sample.get("sample_id", "?"))
    result = Result(name)
    folder = Path(tempfile.mkdtemp(prefix=f"bench-locomo-{name}-"))
    root = folder / ".auto-dream"
    paths = ensure_store(root)
    paths.config.write_text('timezone = "UTC"\n', encoding="utf-8")  # no DST gaps, same figures everywhere
    context = open_context(root)
    distiller = DeterministicDistiller()
    observations: list[Observation] = []
    skipped: dict[str, str] = {}
    previous_end: datetime | None = None
    start = time.perf_counter()
    for number, date, facts in sessions(sample):
        if previous_end is not None and date <= previous_end:
            result.warnings.append(f"session {number} ({date}) is not after the previous one")
        at = date
        for speaker, fact, dia_id in facts:
            entry = make_entry(fact, None, at)
            append_entry(paths, entry)
            observations.append(Observation(name, number, speaker, dia_id, entry.text, entry.id,
                                            significant_words(entry.text)))
            at += timedelta(seconds=1)
        previous_end = at
        now = (at + timedelta(minutes=1)).replace(tzinfo=timezone.utc)
        outcome = dream(context, now, DreamOptions(), distiller)
        result.dreams += 1
        report = outcome.report
        result.review += len(report.review) if report else 0
        for skip in report.skipped if report else ():
            for entry_id in skip.entries:
                skipped[entry_id] = skip.reason
        for warning in report.warnings if report else ():
            result.warnings.append(f"session {number}: {warning}")
    result.seconds = time.perf_counter() - start
    result.entries = len(observations)
    live = scan_memories(paths, context.tz).memories
    archived = scan_memories(paths, context.tz, archived=True).memories
    result.live, result.archived = len(live), len(archived)
    result.retained, result.lost = check_retention(observations, live, archived, skipped)
    if keep is not None:
        target = keep / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(root, target)
    shutil.rmtree(folder, ignore_errors=True)
    return result


def check_retention(observations: list[Observation], live: list[Memory], archived: list[Memory],
                    skipped: dict[str, str]) -> tuple[int, list[Lost]]:
    live_words = [significant_words(m.text()) for m in live]
    by_word: dict[str, set[int]] = {}
    for number, words in enumerate(live_words):
        for word in words:
            by_word.setdefault(word, set()).add(number)
    by_text = {o.entry_id: o for o in observations}
    retained, lost = 0, []
    for observation in observations:
        words = observation.words
        if not words:
            retained += 1  # nothing significant to lose
            continue
        rarest = min(words, key=lambda w: len(by_word.get(w, ())))
        if any(words <= live_words[n] for n in by_word.get(rarest, ())):
            retained += 1
            continue
        lost.append(explain(observation, live, live_words, archived, skipped, by_text))
    return retained, lost


def explain(observation: Observation, live: list[Memory], live_words: list[frozenset[str]],
            archived: list[Memory], skipped: dict[str, str], by_id: dict[str, Observation]) -> Lost:
    """What became of an observation whose words are in no single live memory."""
    words = observation.words
    best = max(range(len(live)), key=lambda n: (len(words & live_words[n]), -n), default=None)
    closest = ""
    if best is not None:
        closest = f"\n    closest live memory {live[best].path} lacks {sorted(words - live_words[best])}"
    holders = [m for m in live if observation.entry_id in m.sources]
    if holders:
        memory = holders[0]
        missing = sorted(words - significant_words(memory.text()))
        return Lost(observation, "source of a live memory whose text lacks its words",
                    f"entry is a source of live {memory.path} but its text lacks {missing}")
    if observation.entry_id in skipped:
        reason = skipped[observation.entry_id]
        cause = ("entry skipped: superseded in the same dream by a later entry"
                 if reason.startswith("superseded in the same run") else "entry skipped: " + reason[:40])
        return Lost(observation, cause, reason + winner_note(observation.text, reason, by_id, live) + closest)
    holders = [m for m in archived if observation.entry_id in m.sources]
    if not holders:
        return Lost(observation, "in no memory file (never distilled?)", "its entry is in no memory file" + closest)
    # The words were lost where the last memory holding the entry was retired (a merge
    # carries sources, so a carried entry also sits in the survivor).
    last = max(holders, key=lambda m: (str(m.extra.get("archived", "")), str(m.extra.get("archived_by_run", ""))))
    reason = str(last.extra.get("archived_reason", "?"))
    if re.match(r"entry \w+ (?:contradicts|supersedes earlier)", reason):
        cause = "memory superseded by a contradicting entry"
    elif reason.startswith("contradicted by the newer"):
        cause = "memory superseded by a contradicting memory (pair check)"
    elif reason.startswith("duplicate of"):
        cause = "memory merged as a duplicate, words not carried"
    else:
        cause = "memory archived: " + reason[:40]
    shown_reason = reason if "superseded_by" not in last.extra or last.extra["superseded_by"] in reason \
        else f"{reason} (superseded_by {last.extra['superseded_by']})"
    return Lost(observation, cause, f"{last.path}: {shown_reason}"
                + chain_note(last.text(), reason, by_id, skipped)
                + winner_note(last.text(), reason, by_id, live, last.extra.get("superseded_by")) + closest)


def chain_note(loser: str, reason: str, by_id: dict[str, Observation], skipped: dict[str, str]) -> str:
    """For `entry E supersedes earlier entries of this run`: the earlier entries of that dream
    that E superseded in turn. One of them contradicted the memory; E need not have."""
    match = re.match(r"entry (\w+) supersedes earlier", reason)
    if not match:
        return ""
    notes = []
    for entry_id, why in skipped.items():
        if why == f"superseded in the same run by entry {match.group(1)}" and entry_id in by_id:
            middle = by_id[entry_id]
            notes.append(f"\n    via session {middle.session} {middle.dia_id} (itself skipped): {middle.text!r}"
                         + signal_note(loser, middle.text))
    return "".join(notes)


def winner_note(loser: str, reason: str, by_id: dict[str, Observation], live: list[Memory],
                target: object = None) -> str:
    """The text that won, and the overlap and signals that made the pair a contradiction."""
    match = re.match(r"(?:entry (\w+) (?:contradicts|supersedes earlier)|superseded in the same run by entry (\w+))",
                     reason)
    entry_id = match and (match.group(1) or match.group(2))
    if entry_id and entry_id in by_id:
        winner = by_id[entry_id]
        return (f"\n    won by session {winner.session} {winner.dia_id}: {winner.text!r}"
                + signal_note(loser, winner.text))
    survivor = next((m for m in live if m.path == target), None) if target else None
    if survivor is not None:
        return f"\n    won by live {survivor.path}: {survivor.text()[:300]!r}" + signal_note(loser, survivor.text())
    return ""


def signal_note(loser: str, winner: str) -> str:
    a, b = Profile.of(loser), Profile.of(winner)
    shared = sorted(a.words & b.words)
    return (f"\n    overlap {overlap(a.words, b.words):.2f} "
            f"(shared {shared} of {len(a.words)} and {len(b.words)} words); "
            f"signals: loser {triggers(loser, a.signals_against(b))} / winner {triggers(winner, b.signals_against(a))}")


def triggers(text: str, kinds: frozenset[str]) -> str:
    """The signal kinds with the words that raised them, e.g. negation('not', 'avoid')."""
    if not kinds:
        return "none"
    parts = []
    for kind in sorted(kinds):
        pattern = _NEGATION if kind == "negation" else _CHANGE
        found = sorted({m.group(0).lower() for m in pattern.finditer(without_replacements(text)
                                                                    if kind == "change" else text)})
        parts.append(f"{kind}{tuple(found) if found else '(instead of …)'}")
    return " ".join(parts)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "-"


def row(result: Result) -> str:
    compression = result.entries and result.live / result.entries
    return (f"{result.name:<10} {result.entries:>7} {result.live:>6} {compression:>11.3f} "
            f"{percent(result.retained, result.entries):>9} {result.not_retained:>12} {result.archived:>8} "
            f"{result.review:>6} {result.seconds:>8.2f}")


def command_line(args: argparse.Namespace) -> str:
    python = Path(sys.executable)
    try:
        python_text = str(python.relative_to(REPO)) if not python.is_symlink() else str(
            Path(sys.executable).absolute().relative_to(REPO))
    except ValueError:
        python_text = str(python)
    parts = [python_text, "bench/locomo.py"]
    if args.data != DEFAULT_DATA:
        parts += ["--data", args.data]
    if args.conversations is not None:
        parts += ["--conversations", str(args.conversations)]
    if args.examples != 10:
        parts += ["--examples", str(args.examples)]
    return "cd " + shlex.quote(str(REPO)) + " && " + shlex.join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help=f"locomo10.json (default: {DEFAULT_DATA}, relative to the repository root)")
    parser.add_argument("--conversations", type=int, metavar="N", help="run only the first N conversations")
    parser.add_argument("--examples", type=int, default=10, metavar="K",
                        help="observations not retained to show, with why (default 10)")
    parser.add_argument("--all-lost", action="store_true", help="show every observation not retained")
    parser.add_argument("--keep", metavar="DIR", help="copy each final store to DIR/<sample_id> to inspect it")
    args = parser.parse_args()
    data_path = Path(args.data)
    if not data_path.is_absolute():
        data_path = (REPO / data_path).resolve()
    try:
        samples = json.loads(data_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        sys.exit(f"no LoCoMo data at {data_path}: pass --data PATH to locomo10.json")
    if args.conversations is not None:
        samples = samples[:max(args.conversations, 0)]
    keep = Path(args.keep) if args.keep else None

    print(f"LoCoMo: {data_path} ({len(samples)} conversations), deterministic distiller, "
          "one dream per session")
    header = (f"{'sample':<10} {'entries':>7} {'live':>6} {'compression':>11} {'retained':>9} "
              f"{'not retained':>12} {'archived':>8} {'review':>6} {'time (s)':>8}")
    print(header)
    print("-" * len(header))
    total = Result("total")
    wall = time.perf_counter()
    for sample in samples:
        result = run_conversation(sample, keep)
        print(row(result), flush=True)
        for name in ("entries", "live", "retained", "archived", "review", "seconds", "dreams"):
            setattr(total, name, getattr(total, name) + getattr(result, name))
        total.lost.extend(result.lost)
        total.warnings.extend(f"{result.name} {w}" for w in result.warnings)
    wall = time.perf_counter() - wall
    print("-" * len(header))
    print(row(total))
    print()
    compression = total.entries and total.live / total.entries
    print(f"entries {total.entries}, live memories {total.live}, compression {compression:.3f}, "
          f"retention {percent(total.retained, total.entries)} ({total.retained}/{total.entries}), "
          f"not retained {total.not_retained}, archived {total.archived}, listed for review {total.review}, "
          f"dreams {total.dreams}, "
          f"time {total.seconds:.2f} s (whole run with the retention check: {wall:.2f} s)")
    if total.lost:
        tally: dict[str, int] = {}
        for lost in total.lost:
            tally[lost.cause] = tally.get(lost.cause, 0) + 1
        print("\nwhy observations were not retained:")
        for cause, count in sorted(tally.items(), key=lambda kv: -kv[1]):
            print(f"  {count:>5}  {cause}")
        shown = total.lost if args.all_lost else pick_examples(total.lost, args.examples)
        print(f"\n{len(shown)} of {len(total.lost)} observations not retained:")
        for lost in shown:
            o = lost.observation
            print(f"- {o.conversation} session {o.session} {o.dia_id}: {o.text!r}\n"
                  f"    {lost.cause}:\n    {lost.detail}")
    if total.warnings:
        print(f"\n{len(total.warnings)} warnings from the dreams (first 5):")
        for warning in total.warnings[:5]:
            print(f"  {warning}")
    print(f"\nreproduce: {command_line(args)}")


def pick_examples(lost: list[Lost], count: int) -> list[Lost]:
    """Up to `count` examples spread over the causes and, within a cause, over the conversations."""
    by_cause: dict[str, list[Lost]] = {}
    for item in lost:
        by_cause.setdefault(item.cause, []).append(item)
    queues = [interleave(items) for items in sorted(by_cause.values(), key=len, reverse=True)]
    picked: list[Lost] = []
    while len(picked) < count and any(queues):
        for queue in queues:
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    return picked


def interleave(items: list[Lost]) -> list[Lost]:
    """One from each conversation in turn, each conversation's in data order."""
    by_conversation: dict[str, list[Lost]] = {}
    for item in items:
        by_conversation.setdefault(item.observation.conversation, []).append(item)
    queues = list(by_conversation.values())
    ordered = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


if __name__ == "__main__":
    main()
