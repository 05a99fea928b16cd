"""How often dream's deterministic judge decides a labelled pair as a careful person would.

The labelled set is bench/judgement/ (written for the purpose; its README says how). Every
pair runs through the real dream, in-process, in a fresh temporary store, with no API key:

  short pairs     the older text is a memory file (dated 2026-01-01), the newer one a log
                  entry appended a month later; one dream.
  document pairs  both are memory files (older dated 2026-01-01, newer 2026-02-01); one dream.

What dream did with the pair is read from its report: the older memory merged (or the
entry merged into it) is "duplicate"; the older memory superseded is "contradiction"; a
review item is "review-duplicate" or "review-conflict" by its kind; nothing at all is "keep".

Printed per set and language, against what is asked of the judge:
  merge / supersede precision  of the pairs dream acted on, how many carry that label (100%:
                               a wrong merge or supersede destroys information)
  coverage                     of the pairs labelled duplicate (contradiction), how many were
                               acted on rightly or listed for review as a possible duplicate
                               (conflict): ≥ 90%, a missed one costs the store's truth
  distinct listed              of the distinct pairs, how many were listed for review: ≤ 20%,
                               each costs a reader's time; and how many were acted on: 0
With --errors every pair not decided so, with dream's reason or evidence. Document pairs
are told apart by language from their text (kana: ja; Han: zh).

    .venv/bin/python bench/judgement.py [--errors] [--json]
"""

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.runner import dream  # noqa: E402
from auto_dream.dream.snapshot import DreamOptions  # noqa: E402
from auto_dream.store.context import open_context  # noqa: E402
from auto_dream.store.daylog import Entry, append_entry  # noqa: E402
from auto_dream.store.paths import StorePaths, ensure_store  # noqa: E402

DATA = Path(__file__).resolve().parent / "judgement"
OLDER = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
NEWER = datetime(2026, 2, 1, 9, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
KINDS = ("duplicate", "contradiction")


def _memory_file(root: Path, kind: str, name: str, text: str, when: datetime) -> str:
    relative = f"memories/{kind}/{name}.md"
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if not text.startswith("---"):
        quoted = json.dumps(" ".join(text.split())[:150], ensure_ascii=False)
        text = f"---\nname: {quoted}\ndescription: {quoted}\ntype: {kind}\n---\n{text}\n"
    head, body = text[3:].split("\n---", 1)
    path.write_text(f"---{head}\nmtime: {when.isoformat()}\n---{body}", encoding="utf-8")
    return relative


def _decision(report: dict, older: str) -> tuple[str, str]:
    """('duplicate' | 'contradiction' | 'review-duplicate' | 'review-conflict' | 'keep', the reason or
    evidence that decided it): merged, superseded, listed for review as a possible duplicate or
    conflict, or nothing said."""
    for action in report["actions"]:
        if action["kind"] == "supersede" and older in (action["path"], action["target"]):
            return "contradiction", action["reason"]
        if action["kind"] == "merge" and older in (action["path"], action["target"]):
            return "duplicate", action["reason"]
    for item in report.get("review", []):  # (a report of an older version has none)
        if older in (item["path"], item["target"]):
            kind = "review-duplicate" if item["kind"] == "possible_duplicate" else "review-conflict"
            return kind, item["evidence"]
    return "keep", ""


def run_short(pair: dict, folder: Path) -> tuple[str, str]:
    root = folder / ".auto-dream"
    ensure_store(root)
    older = _memory_file(root, pair["type"], "20260101_older", pair["older"], OLDER)
    append_entry(StorePaths(root), Entry(NEWER.replace(tzinfo=None), pair["newer"], pair["type"]))
    report = dream(open_context(root), NOW, DreamOptions(), DeterministicDistiller()).report.as_json()
    return _decision(report, older)


def run_document(pair: dict, folder: Path) -> tuple[str, str]:
    root = folder / ".auto-dream"
    ensure_store(root)
    files = DATA / "documents" / pair["id"]
    older = _memory_file(root, pair["type"], "20260101_older", (files / "older.md").read_text("utf-8"), OLDER)
    _memory_file(root, pair["type"], "20260201_newer", (files / "newer.md").read_text("utf-8"), NEWER)
    report = dream(open_context(root), NOW, DreamOptions(), DeterministicDistiller()).report.as_json()
    return _decision(report, older)


def _label(label: str) -> str:
    return "contradiction" if label == "conflict" else label


LISTED = {"duplicate": "review-duplicate", "contradiction": "review-conflict"}
# What the issue asks of the judge (README: "What the benchmark asks")
TARGET_PRECISION, TARGET_COVERAGE, TARGET_DISTINCT_LISTED = 1.0, 0.9, 0.2


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def score(rows: list[dict]) -> dict:
    """Per kind: acted precision (of the pairs merged, or superseded, how many carry that label)
    and coverage (of the pairs labelled so, how many were acted on rightly or listed for review
    with the right kind); distinct pairs acted on, and listed; the strict accuracy of before
    (a review counts as keeping both)."""
    result: dict = {"pairs": len(rows)}
    for kind in KINDS:
        acted = [r for r in rows if r["decision"] == kind]
        labelled = [r for r in rows if r["label"] == kind]
        covered = [r for r in labelled if r["decision"] in (kind, LISTED[kind])]
        result[kind] = {"acted": len(acted), "acted_right": sum(r["label"] == kind for r in acted),
                        "precision": _share(sum(r["label"] == kind for r in acted), len(acted)),
                        "labelled": len(labelled), "covered": len(covered),
                        "coverage": _share(len(covered), len(labelled)),
                        "listed_wrong_kind": sum(r["decision"].startswith("review") and r["decision"] != LISTED[kind]
                                                 for r in labelled)}
    distinct = [r for r in rows if r["label"] == "distinct"]
    result["distinct"] = {"pairs": len(distinct),
                          "acted": sum(r["decision"] in KINDS for r in distinct),
                          "listed": sum(r["decision"].startswith("review") for r in distinct)}
    result["distinct"]["listed_share"] = _share(result["distinct"]["listed"], len(distinct))
    strict = [r["decision"] if r["decision"] in KINDS else "distinct" for r in rows]
    result["accuracy"] = _share(sum(p == r["label"] for p, r in zip(strict, rows)), len(rows))
    return result


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}" if value != 1 else "100%"


def _mark(value: float | None, ok: bool) -> str:
    return _figure(value) + ("" if value is None or ok else " ✗")


COLUMNS = (("merge precision", 16), ("duplicate coverage", 30), ("supersede precision", 20),
           ("contradiction coverage", 30), ("distinct listed", 16), ("acted", 5))


def score_line(title: str, result: dict) -> str:
    cells = []
    for kind in KINDS:
        k = result[kind]
        precision = k["precision"]
        cells.append(f"{_mark(precision, precision is None or precision >= TARGET_PRECISION)} "
                     f"({k['acted_right']}/{k['acted']})")
        cells.append(f"{_mark(k['coverage'], (k['coverage'] or 0) >= TARGET_COVERAGE)} "
                     f"({k['covered']}/{k['labelled']}; {k['listed_wrong_kind']} other kind)")
    d = result["distinct"]
    cells.append(f"{_mark(d['listed_share'], (d['listed_share'] or 0) <= TARGET_DISTINCT_LISTED)} "
                 f"({d['listed']}/{d['pairs']})")
    cells.append(str(d["acted"]))
    return f"{title:<6}{result['pairs']:>5}  " + "  ".join(c.ljust(w) for c, (_, w) in zip(cells, COLUMNS))


HEADER = f"{'':<6}{'pairs':>5}  " + "  ".join(name.ljust(w) for name, w in COLUMNS)


def print_table(title: str, results: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(HEADER)
    for name, result in results.items():
        print(score_line(name, result))


def language(text: str) -> str:
    """'ja' when the text has kana, 'zh' when it has Han characters and no kana, else 'en'."""
    if re.search("[\u3040-\u30ff]", text):
        return "ja"
    return "zh" if re.search("[\u4e00-\u9fff]", text) else "en"


def by_language(rows: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["lang"]].append(row)
    return {**{lang: score(groups[lang]) for lang in sorted(groups)}, "all": score(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errors", action="store_true",
                        help="print every pair not covered, acted on wrongly, or distinct and listed")
    parser.add_argument("--json", action="store_true", help="print the figures and every decision as JSON")
    args = parser.parse_args()
    short = [json.loads(line) for line in (DATA / "short.jsonl").read_text("utf-8").splitlines() if line.strip()]
    documents = [json.loads(line) for line in (DATA / "documents.jsonl").read_text("utf-8").splitlines()
                 if line.strip()]
    work = Path(tempfile.mkdtemp(prefix="auto-dream-judgement-"))
    rows = []
    try:
        for number, pair in enumerate(short):
            decision, why = run_short(pair, work / f"s{number}")
            rows.append({"set": "short", "id": pair["id"], "lang": pair["lang"], "label": pair["label"],
                         "decision": decision, "why": why})
        for number, pair in enumerate(documents):
            decision, why = run_document(pair, work / f"d{number}")
            text = (DATA / "documents" / pair["id"] / "newer.md").read_text("utf-8")
            rows.append({"set": "documents", "id": pair["id"], "lang": language(text), "label": _label(pair["label"]),
                         "decision": decision, "why": why})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {"short": by_language([r for r in rows if r["set"] == "short"]),
               "documents": by_language([r for r in rows if r["set"] == "documents"])}
    if args.json:
        print(json.dumps({"figures": figures, "decisions": rows}, ensure_ascii=False, indent=1))
        return
    print(f"Targets: acted precision {TARGET_PRECISION:.0%}; coverage (acted on rightly, or listed for review with "
          f"the right kind) ≥ {TARGET_COVERAGE:.0%}; distinct pairs listed ≤ {TARGET_DISTINCT_LISTED:.0%}, "
          "acted on 0. ✗ marks a figure that misses its target.")
    print_table("Short pairs (an entry against a memory)", figures["short"])
    print_table("Document pairs (two memory files)", figures["documents"])
    for name, result in (("short", figures["short"]["all"]), ("documents", figures["documents"]["all"])):
        print(f"{name}: strict accuracy {_figure(result['accuracy'])} (a review counts as keeping both)")
    if args.errors:
        print("\nNot as a careful person would have it:")
        for row in rows:
            label, decision = row["label"], row["decision"]
            right = decision in (label, LISTED.get(label)) if label in KINDS else decision == "keep"
            if not right:
                print(f"- {row['set']} {row['id']}: labelled {label}, dream: {decision}"
                      + (f" — {row['why']}" if row["why"] else ""))


if __name__ == "__main__":
    main()
