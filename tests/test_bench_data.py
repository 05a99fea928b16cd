"""The benchmarks' labelled data reads and is well formed, and bench/distil.py reads a name as it says."""

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
TYPES = {"user", "feedback", "project", "reference"}
LANGUAGES = {"en", "zh", "ja"}


def _load_distil():
    spec = importlib.util.spec_from_file_location("distil", BENCH / "distil.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


distil = _load_distil()


def _phrase(item) -> bool:
    """A phrase, or a non-empty list of phrases of which one is enough."""
    if isinstance(item, list):
        return bool(item) and all(isinstance(p, str) and p.strip() for p in item)
    return isinstance(item, str) and bool(item.strip())


# ---------------------------------------------------------------- bench/distil


def test_the_entries_are_at_least_120_in_three_languages_with_valid_types_and_name_checks():
    entries = distil.load_entries()
    assert len(entries) >= 120
    assert len({e["id"] for e in entries}) == len(entries)
    languages = Counter(e["lang"] for e in entries)
    assert set(languages) == LANGUAGES and min(languages.values()) >= 35
    assert sum(e["given_type"] is None for e in entries) * 2 >= len(entries)  # the rules' typing is measured
    for entry in entries:
        assert entry["id"].startswith(entry["lang"] + "-"), entry["id"]
        assert entry["text"].strip() and entry["note"].strip(), entry["id"]
        assert entry["type"] in TYPES and entry["given_type"] in TYPES | {None}, entry["id"]
        assert entry["name_must"] and all(_phrase(m) for m in entry["name_must"]), entry["id"]
        for pattern in entry["name_must_not"]:
            assert _phrase(pattern), entry["id"]
            if pattern.startswith("/") and pattern.endswith("/") and len(pattern) > 1:
                re.compile(pattern[1:-1])


def test_each_type_is_labelled_in_each_language():
    entries = distil.load_entries()
    assert {(e["lang"], e["type"]) for e in entries} == {(lang, t) for lang in LANGUAGES for t in TYPES}


def test_each_fold_adds_what_it_says_it_adds_and_the_memory_does_not_hold_it():
    folds = distil.load_folds()
    assert len({f["id"] for f in folds}) == len(folds)
    assert set(Counter(f["expected"] for f in folds)) == set(distil.FOLD_OUTCOMES)
    for fold in folds:
        assert fold["type"] in TYPES and fold["lang"] in LANGUAGES, fold["id"]
        assert fold["memory"].strip() and fold["entry"].strip() and fold["memory"] != fold["entry"], fold["id"]
        assert bool(fold["added"]) == (fold["expected"] == "extend"), fold["id"]
        for added in fold["added"]:
            assert distil.holds(fold["entry"], added) and not distil.holds(fold["memory"], added), fold["id"]


def test_the_workspace_has_five_days_or_more_of_notes_with_what_the_bench_measures():
    notes = distil.load_notes()
    assert len(notes) >= 5 and all(re.fullmatch(r"\d{4}-\d\d-\d\d\.md", name) for name in notes)
    text = "\n".join(notes.values())
    for shape in (r"^### ", r"^- \[x\] ", r"^- \[ \] ", r"^\|---", r"^\*\*[^*\n]+:\*\*$", r"→ はい", r"→ いいえ",
                  r" CNAME ", r"^1\. "):
        assert re.search(shape, text, re.MULTILINE), shape
    rows = distil._table_rows(notes)
    assert rows and all(len(cells) >= 2 for _, cells in rows)
    assert not any("品目" in where or "プラン |" in where for where, _ in rows)  # header rows are not data


def test_every_expected_fact_is_in_the_notes():
    expected = distil.load_expected()
    notes = "\n".join(distil.load_notes().values())
    assert len({g["id"] for g in expected}) == len(expected)
    for group in expected:
        assert group["type"] in TYPES and group.get("state", "done") in distil.STATES, group["id"]
        assert group["facts"] and all(_phrase(f) for f in group["facts"]), group["id"]
        for fact in group["facts"]:
            assert distil.holds(notes, fact), (group["id"], fact)


# ---------------------------------------------------------------- what bench/distil calls a cut name


@pytest.mark.parametrize("name, text, cut", [
    ("The user is a backend developer who mostly writes Python…",
     "The user is a backend developer who mostly writes Python and Go", "ends with …"),
    ("未解決タスク: **Fig", "未解決タスク: **Fig. 3** のキャプションを直す", "leaves ** open"),
    ("線上依赖(e.g", "線上依赖(e.g. Redis、Kafka)的版本号", "leaves () open"),
    ("4", "4. Do the DNS cutover only after the TTL has dropped", "is a bare number"),
    ("Dr", "Dr. Okafor signs off on every schema change", "stops at the abbreviation Dr."),
    ("Use v2.3 of the SDK, e.g", "Use v2.3 of the SDK, e.g. for refunds", "stops at the abbreviation e.g."),
    ("Upgrade to v2", "Upgrade to v2.3 before May", "stops inside a number"),
    ("Rotate the Sentry DS", "Rotate the Sentry DSN", "stops inside a word"),
    ("Never force-push to main", "Never force-push to main.\nReason: CI deploys from main.", None),
    ("Always pin actions", "Always pin actions to a SHA; tags move", None),
    ("返答は結論から", "返答は結論から先に書いてほしい", None),  # a CJK title may be a prefix: no word boundary to cut
])
def test_a_name_is_cut_when_it_stops_where_the_text_goes_on(name, text, cut):
    assert distil.name_cut(name, text) == cut


@pytest.mark.parametrize("name, description, copied", [
    ("Don't add emoji to commit messages", "Don't add emoji to commit messages", "equal"),
    ("Never force-push to main", "Never force-push to main. Reason: CI deploys from main.", "begins with it"),
    ("The user is a backend developer…", "The user is a backend developer who writes Go", "begins with it"),
    ("Never force-push to main", "CI deploys from main; a force-push redeployed an old build", None),
])
def test_a_description_that_repeats_its_name_is_a_copy(name, description, copied):
    assert distil.copied(name, description) == copied


@pytest.mark.parametrize("name, markup", [
    ("**Status:** blocked on the vendor", "bold markup"),
    ("- [ ] Rotate the Sentry DSN", "a list marker"),
    ("1. Run the migrations", "a list marker"),
    ("Runbook: [export](https://wiki.example.net)", "link markup"),
    ("Sentry DSN rotation after offboarding", None),
    ("Python 3.12 and uv", None),
])
def test_markdown_in_a_name_is_found(name, markup):
    assert distil.name_markup(name) == markup


@pytest.mark.parametrize("path, name, cut", [
    ("memories/project/20260201_tidepool_ingests_about_40k_events_per_second_at_pe.md",
     "tidepool ingests about 40k events per second at peak…", True),
    ("memories/project/20260201_Never_force_push_to_main.md", "Never force-push to main", False),
    ("memories/project/20260201_Never_force_push_to_main_2.md", "Never force-push to main", False),
])
def test_a_file_name_cut_inside_a_word_is_found(path, name, cut):
    assert distil.slug_cut(path, name) == cut


@pytest.mark.parametrize("text, state, shown", [
    ("- [x] Order the emergency stop switch", "done", True),
    ("TODO: Order the emergency stop switch", "done", False),
    ("TODO: Order the emergency stop switch", "open", True),
    ("非常停止スイッチを注文（完了）\nTODO: 配線", "done", True),
])
def test_a_checkbox_state_is_read_on_the_line_of_its_item(text, state, shown):
    item = "emergency stop switch" if "emergency" in text else "非常停止スイッチ"
    assert distil.shows_state(text, item, state) == shown


# ---------------------------------------------------------------- bench/judgement


def test_the_judgement_pairs_are_well_formed_and_each_document_pair_has_its_files():
    short = [json.loads(line) for line in (BENCH / "judgement" / "short.jsonl").read_text("utf-8").splitlines() if line]
    documents = [json.loads(line) for line in (BENCH / "judgement" / "documents.jsonl").read_text("utf-8").splitlines()
                 if line]
    assert len({p["id"] for p in short}) == len(short) and len({p["id"] for p in documents}) == len(documents)
    for pair in short:
        assert pair["lang"] in LANGUAGES and pair["type"] in TYPES, pair["id"]
        assert pair["label"] in {"duplicate", "contradiction", "distinct"}, pair["id"]
        assert pair["older"].strip() and pair["newer"].strip(), pair["id"]
    for pair in documents:
        assert pair["type"] in TYPES and pair["label"] in {"duplicate", "conflict", "distinct"}, pair["id"]
        folder = BENCH / "judgement" / "documents" / pair["id"]
        assert (folder / "older.md").is_file() and (folder / "newer.md").is_file(), pair["id"]
