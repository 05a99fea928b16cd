"""An entry folded into a memory that says most of it: what it adds shows in the description and
in MEMORY.md, and the report counts every fold and quotes what it added."""

import json

import pytest

from auto_dream.distill.folds import added_text, extended_description


@pytest.mark.parametrize("said, entry, added", [
    ("Always run ruff and mypy before committing", "Always run ruff and mypy before committing; also run pytest -x",
     "also run pytest -x"),
    ("The staging database is reset every Sunday", "The staging database is reset every Sunday night at 02:00 UTC",
     "night at 02:00 UTC"),
    ("コミット前にmake lintを実行する", "コミット前にmake lintを実行する。あとpytestも走らせる",
     "あとpytestも走らせる"),
    ("Priya reviews ledger PRs", "Priya reviews ledger PRs", ""),
    ("The billing service runs on Kafka", "Deploys go out on Thursdays from the release branch",
     "Deploys go out on Thursdays from the release branch"),  # nothing lines up: the entry whole
])
def test_what_an_entry_adds_is_the_run_the_memory_does_not_hold(said, entry, added):
    assert added_text(said, entry) == added


@pytest.mark.parametrize("description, added, entry, expected", [
    ("Always run ruff and mypy before committing", "also run pytest -x", "",
     "Always run ruff and mypy before committing; also run pytest -x"),
    ("The staging database is reset every Sunday", "night at 02:00 UTC",
     "The staging database is reset every Sunday night at 02:00 UTC",
     "The staging database is reset every Sunday night at 02:00 UTC"),
    ("コミット前にmake lintを実行する", "あとpytestも走らせる", "",
     "コミット前にmake lintを実行する；あとpytestも走らせる"),
    ("Deploys on Thursday", "", "", "Deploys on Thursday"),
])
def test_the_description_keeps_every_character_and_gains_the_addition(description, added, entry, expected):
    extended = extended_description(description, added, entry)
    assert extended == expected and extended.startswith(description)


def _dream(cli, root) -> dict:
    result = cli("--root", root, "dream", "--no-llm", "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.mark.parametrize("one_run", [False, True], ids=["across-dreams", "in-one-dream"])
def test_an_entry_that_adds_a_fact_extends_the_memory_and_the_report_quotes_it(cli, root, one_run):
    rule = "Always run ruff and mypy before committing"
    assert cli("--root", root, "append", "--type", "feedback", "--at", "2026-11-30 09:00", rule).code == 0
    if not one_run:
        _dream(cli, root)
    assert cli("--root", root, "append", "--type", "feedback", "--at", "2026-11-30 10:00",
               f"{rule}; also run pytest -x").code == 0
    report = _dream(cli, root)
    [merge] = [a for a in report["actions"] if a["kind"] == "merge"]
    assert "extends" in merge["reason"] and "\u201calso run pytest -x\u201d" in merge["reason"]
    assert "says the same" not in merge["reason"]
    assert report["stats"]["merged"] == 1 and report["stats"]["extended"] == 1
    [memory] = json.loads(cli("--root", root, "list", "--json").out)
    assert "pytest -x" in memory["description"] and memory["description"].startswith(rule)
    assert "pytest -x" in (root / "MEMORY.md").read_text()


def test_an_entry_that_only_repeats_is_a_merge_that_adds_nothing(cli, root):
    rule = "Always run ruff and mypy before committing"
    for hour in ("09:00", "10:00"):
        assert cli("--root", root, "append", "--type", "feedback", "--at", f"2026-11-30 {hour}", rule).code == 0
    report = _dream(cli, root)
    [merge] = [a for a in report["actions"] if a["kind"] == "merge"]
    assert "repeats" in merge["reason"] and report["stats"]["extended"] == 0
    [memory] = json.loads(cli("--root", root, "list", "--json").out)
    assert memory["description"] == rule
