"""How often dream's deterministic judge decides a labelled pair as a careful person would.

The labelled set is bench/judgement/ (written for the purpose; its README says how). Every
pair runs through the real dream, in-process, in a fresh temporary store, with no API key:

  short pairs     the older text is a memory file (dated 2026-01-01), the newer one a log
                  entry appended a month later; one dream.
  document pairs  both are memory files (older dated 2026-01-01, newer 2026-02-01); one dream.

What dream did with the pair is read from its report: the older memory merged (or the
entry merged into it) is "duplicate"; the older memory superseded is "contradiction"; a
review item or nothing at all is "keep" (both kept). Strict scoring: a duplicate or a
contradiction left for review counts as wrong (the review list is printed beside it).

Printed: accuracy, and precision / recall per kind, per language and overall; distinct
pairs merged or superseded; documents wrongly merged or superseded; with --errors every
pair decided wrongly, with dream's reason or evidence.

    .venv/bin/python bench/judgement.py [--errors] [--json]
"""

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.runner import dream  # noqa: E402
from auto_dream.dream.state import DreamOptions  # noqa: E402
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
    """('duplicate' | 'contradiction' | 'review' | 'keep', the reason or evidence that decided it)."""
    for action in report["actions"]:
        if action["kind"] == "supersede" and older in (action["path"], action["target"]):
            return "contradiction", action["reason"]
        if action["kind"] == "merge" and older in (action["path"], action["target"]):
            return "duplicate", action["reason"]
    for item in report.get("review", []):  # (a report of an older version has none)
        if older in (item["path"], item["target"]):
            return "review", f"{item['kind']}: {item['evidence']}"
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


def score(rows: list[dict]) -> dict:
    """Accuracy (review and keep count as 'distinct'), precision and recall of each kind."""
    predicted = [("distinct" if r["decision"] in ("review", "keep") else r["decision"]) for r in rows]
    result = {"pairs": len(rows), "accuracy": sum(p == r["label"] for p, r in zip(predicted, rows)) / max(len(rows), 1),
              "reviewed": dict(Counter(r["label"] for r in rows if r["decision"] == "review"))}
    for kind in KINDS:
        said = [r for p, r in zip(predicted, rows) if p == kind]
        truth = [r for r in rows if r["label"] == kind]
        hits = sum(1 for r in said if r["label"] == kind)
        result[kind] = {"said": len(said), "true": len(truth),
                        "precision": hits / len(said) if said else None,
                        "recall": hits / len(truth) if truth else None}
    distinct = [r for r in rows if r["label"] == "distinct"]
    result["distinct_acted_on"] = sum(1 for p, r in zip(predicted, rows)
                                      if r["label"] == "distinct" and p != "distinct")
    result["distinct"] = len(distinct)
    return result


def _figure(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_score(title: str, result: dict) -> None:
    print(f"{title}: {result['pairs']} pairs, accuracy {result['accuracy']:.3f}; "
          f"distinct pairs merged or superseded {result['distinct_acted_on']}/{result['distinct']}"
          + (f" ({result['distinct_acted_on'] / result['distinct']:.1%})" if result["distinct"] else ""))
    for kind in KINDS:
        k = result[kind]
        print(f"  {kind:<13} precision {_figure(k['precision'])} ({k['said']} said), "
              f"recall {_figure(k['recall'])} ({k['true']} labelled)")
    if result["reviewed"]:
        print("  left for review, by label: " + ", ".join(f"{k} {v}" for k, v in sorted(result["reviewed"].items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errors", action="store_true", help="print every pair decided wrongly")
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
            rows.append({"set": "documents", "id": pair["id"], "lang": "doc", "label": _label(pair["label"]),
                         "decision": decision, "why": why})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    short_rows = [r for r in rows if r["set"] == "short"]
    doc_rows = [r for r in rows if r["set"] == "documents"]
    by_lang = defaultdict(list)
    for row in short_rows:
        by_lang[row["lang"]].append(row)
    wrong_docs = [r for r in doc_rows
                  if r["decision"] in ("duplicate", "contradiction") and r["decision"] != r["label"]]
    superseded_docs = [r for r in doc_rows if r["decision"] == "contradiction"]
    figures = {"short": score(short_rows), "short_by_language": {k: score(v) for k, v in sorted(by_lang.items())},
               "documents": score(doc_rows), "documents_wrongly_acted_on": len(wrong_docs),
               "documents_superseded": len(superseded_docs)}
    if args.json:
        print(json.dumps({"figures": figures, "decisions": rows}, ensure_ascii=False, indent=1))
        return
    print_score("Short pairs", figures["short"])
    for lang, result in figures["short_by_language"].items():
        print_score(f"  [{lang}]", result)
    print_score("Document pairs", figures["documents"])
    print(f"  documents wrongly merged or superseded: {len(wrong_docs)}; superseded at all: {len(superseded_docs)}")
    if args.errors:
        print("\nDecided wrongly (review counts as keeping both):")
        for row in rows:
            said = "distinct" if row["decision"] in ("review", "keep") else row["decision"]
            if said != row["label"]:
                print(f"- {row['set']} {row['id']}: labelled {row['label']}, dream: {row['decision']}"
                      + (f" — {row['why']}" if row["why"] else ""))


if __name__ == "__main__":
    main()
