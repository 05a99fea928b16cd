"""The judge: act only when certain, list for review when not (DESIGN 3.2), on the cases that went wrong."""

import json
import os
from datetime import datetime, timedelta, timezone

from auto_dream.dream.report import render_markdown
from auto_dream.judge.similarity import Profile
from auto_dream.judge.statements import (
    Side,
    changed_slots,
    document_says,
    is_statement,
    judge,
    judge_documents,
    swapped_words,
    value_changed,
)
from conftest import write_memory_file
from test_dream import NOW, add, archived, live, memory, outcome_of, run

DUPLICATE, CONTRADICTION = 0.6, 0.4
OLDER = datetime(2026, 1, 1, tzinfo=timezone.utc)
NEWER = datetime(2026, 2, 1, tzinfo=timezone.utc)


def side(text: str, time=OLDER) -> Side:
    return Side(text, Profile.of(text), time)


def verdict(older: str, newer: str, older_time=OLDER, newer_time=NEWER):
    return judge(side(older, older_time), side(newer, newer_time), DUPLICATE, CONTRADICTION)


# ---------------------------------------------------------------- statements and documents


def test_a_sentence_or_two_is_a_statement_and_a_memory_of_paragraphs_is_not():
    assert is_statement("Don't mock the database in integration tests.\n"
                        "**Why:** the mocked tests passed while the prod migration failed.")
    assert not is_statement("## Release shape\n\nShip 1.17 as one PR.\n\n- Decision Needed: split or not")
    assert not is_statement("One. Two. Three sentences are a document.")


# ---------------------------------------------------------------- statement rules


def test_a_negated_statement_is_superseded_by_the_newer_with_both_sentences_quoted():
    found = verdict("Rebase feature branches before merging.", "Never rebase feature branches.")
    assert found.outcome == "supersede"
    assert '"Never rebase feature branches."' in found.evidence
    assert '"Rebase feature branches before merging."' in found.evidence


def test_equal_times_leave_a_contradiction_for_review_not_a_supersede():
    found = verdict("Rebase feature branches before merging.", "Never rebase feature branches.",
                    OLDER, OLDER)
    assert (found.outcome, found.kind) == ("review", "conflict")


def test_a_value_that_changed_is_a_contradiction_without_any_negation_word():
    assert value_changed([n for n in changed_slots("Standup is at 9:30", "Standup is at 10:00")])
    assert verdict("Daily standup is at 9:30.", "Daily standup is at 10:00.").outcome == "supersede"


def test_facts_of_one_shape_with_other_numbers_are_distinct():
    assert verdict("Fact 1: module m1 owns the billing flow q1x",
                   "Fact 2: module m2 owns the billing flow q2x").outcome == "none"


def test_one_word_swapped_for_another_is_left_for_review_not_merged():
    found = verdict("Alice is learning Japanese and practises every evening.",
                    "Alice is learning the piano and practises every evening.")
    assert found.outcome == "review"
    assert swapped_words(changed_slots("learning Japanese", "learning the piano"),
                         Profile.of("learning Japanese").words, Profile.of("learning the piano").words)


def test_a_rewording_that_adds_a_detail_is_merged():
    found = verdict("Bugs in the ingestion pipeline are tracked in Linear project INGEST.",
                    "Ingestion pipeline bugs go to the INGEST project in Linear.")
    assert found.outcome == "merge"


def test_only_one_side_announcing_a_change_is_not_a_duplicate():
    found = verdict("Write frontend unit tests with Jest.",
                    "Frontend unit tests were switched to Vitest; don't add new Jest tests.")
    assert found.outcome != "merge"


def test_a_contrast_does_not_contradict_a_text_that_says_what_it_prefers():
    found = verdict("Use pnpm, not npm, to install packages in this repo.",
                    "Install packages with pnpm in this repo; running npm install rewrites the lockfile.")
    assert found.outcome != "supersede"
    assert verdict("Use npm to install packages in this repo.",
                   "Use pnpm, not npm, to install packages in this repo.").outcome == "supersede"


def test_stemmed_words_meet():
    assert verdict("Priya manages the payments team.", "Priya managed the payments team.").outcome == "merge"


# ---------------------------------------------------------------- documents

RULES = """## Testing rules

Skipped tests are an anti-pattern: don't leave `@skip` in the suite. Never mark a flaky test as
skipped; fix it or delete it with a note.

**Why:** skipped tests rot and hide regressions.

**How to apply:** when a test fails intermittently, open an issue and fix the race."""

NIX = """## Running Python

Run Python inside nix-shell, never with the system interpreter. Don't install packages with pip
into the user site.

**Why:** the system Python has no test dependencies and skipped tests go unnoticed.

**How to apply:** `nix-shell --run 'pytest -x'`."""


def test_documents_that_share_words_and_differ_in_negations_are_not_a_conflict():
    found = judge(side(RULES), side(NIX, NEWER), DUPLICATE, CONTRADICTION)
    assert found.outcome == "none"


def test_a_document_is_never_superseded_a_conflict_between_documents_is_reviewed_with_its_sentences():
    older = "## Merging\n\nEvery PR into `main` is squash-merged.\n\n**Why:** one commit per change."
    newer = ("## Merging\n\nPRs into `main` are not squash-merged any more; they land with rebase and merge.\n\n"
             "**Why:** bisecting needs the individual commits.")
    found = judge_documents(side(older), side(newer, NEWER))
    assert (found.outcome, found.kind) == ("review", "conflict")
    assert '"Every PR into `main` is squash-merged."' in found.evidence


def test_a_statement_joins_a_document_only_when_the_document_already_says_it():
    document = RULES + "\n\nRun the whole suite with `make test` before every push."
    assert document_says(document, "Run the whole suite with make test before every push")
    assert document_says(document, "Run tests before lunch") is None


# ---------------------------------------------------------------- dream end to end


def _inventory() -> str:
    items = "\n".join(f"- `service-{n}`: billing worker {n}, owned by the payments team, deployed nightly "
                      f"to the staging cluster and the production cluster" for n in range(60))
    return f"## Service inventory\n\n{items}\n"


def test_black_hole_one_long_inventory_absorbs_none_of_ten_short_memories(root):
    memory(root, "memories/project/20260101_inventory.md", "Service inventory", _inventory(), "project", days_ago=5)
    topics = ["invoices", "refunds", "payouts", "ledgers", "disputes", "webhooks", "receipts", "coupons",
              "vouchers", "chargebacks"]
    for number, topic in enumerate(topics):
        memory(root, f"memories/project/20260102_{topic}.md", f"{topic} note",
               f"The payments team owns {topic}; billing for {topic} is deployed nightly to staging.", "project",
               days_ago=30 + number)
    report = run(root)
    assert [a for a in report["actions"] if a["kind"] in ("merge", "supersede")] == []
    assert len(live(root)) == 11
    assert "service-59" in live(root)["memories/project/20260101_inventory.md"].body


def test_ten_distinct_fact_entries_stay_ten_memories(root):
    for number in range(1, 11):
        add(root, f"Fact {number}: module m{number} owns the billing flow q{number}x", "project", hour=number)
    report = run(root)
    assert report["stats"]["created"] == 10 and report["stats"]["merged"] == 0
    assert len(live(root)) == 10


def test_equal_times_give_no_supersede_in_a_dream(root):
    memory(root, "memories/feedback/20260101_a.md", "Rebase", "Rebase feature branches before merging.",
           "feedback", days_ago=20)
    memory(root, "memories/feedback/20260101_b.md", "No rebase", "Never rebase feature branches.",
           "feedback", days_ago=20)
    report = run(root)
    assert report["stats"]["superseded"] == 0 and len(live(root)) == 2
    assert [r["kind"] for r in report["review"]] == ["possible_conflict"]


def _claude_memory(root, name, body, modified, file_time):
    path = write_memory_file(root, f"memories/feedback/{name}.md",
                             f"---\nname: {name}\ndescription: {name}\nmetadata:\n  type: feedback\n"
                             f"  modified: {modified}\n---\n{body}\n")
    os.utime(path, (file_time.timestamp(), file_time.timestamp()))


def test_metadata_modified_decides_which_is_newer_against_the_file_times(root):
    # the file times say "a" is newer; Claude Code's own metadata.modified says "b" is
    _claude_memory(root, "a", "Rebase feature branches before merging.", "2026-03-01", NOW - timedelta(days=1))
    _claude_memory(root, "b", "Never rebase feature branches.", "2026-06-01", NOW - timedelta(days=40))
    report = run(root)
    supersedes = [a for a in report["actions"] if a["kind"] == "supersede"]
    assert [(a["path"], a["target"]) for a in supersedes] == [("memories/feedback/a.md", "memories/feedback/b.md")]


def test_a_supersede_reason_quotes_both_sentences(root):
    memory(root, "memories/feedback/20260101_rebase.md", "Rebase", "Rebase feature branches before merging.",
           "feedback", days_ago=20)
    add(root, "Never rebase feature branches.", "feedback")
    report = run(root)
    [supersede] = [a for a in report["actions"] if a["kind"] == "supersede"]
    assert '"Never rebase feature branches."' in supersede["reason"]
    assert '"Rebase feature branches before merging."' in supersede["reason"]


DOC_OLD = """## Money

Every amount is a `decimal.Decimal`. Never use `float` for money.

**Why:** a float rounding bug double-charged 14 customers in March.

**How to apply:**
- parse amounts with `Decimal(str(value))`
- round only at display time (see `fmt_money`)"""

DOC_NEW = """## Money

Every amount is a `decimal.Decimal`. Never use `float` for money, not even in tests.

**Why:** a float rounding bug double-charged 14 customers in March.

**How to apply:**
- parse amounts with `Decimal(str(value))`
- round only at display time"""


def test_a_merge_carries_every_line_of_the_retired_body(root):
    memory(root, "memories/feedback/20260101_money.md", "Money rules", DOC_OLD, "feedback", days_ago=40)
    memory(root, "memories/feedback/20260201_money.md", "Money rules", DOC_NEW, "feedback", days_ago=10)
    report = run(root)
    [merge] = [a for a in report["actions"] if a["kind"] == "merge"]
    assert merge["path"] == "memories/feedback/20260101_money.md"
    survivor = live(root)["memories/feedback/20260201_money.md"].body
    for line in DOC_OLD.splitlines():
        assert line in survivor, line
    assert 'Merged from "Money rules" (20260101_money.md, ' in survivor
    assert "memories/feedback/20260101_money.md" not in live(root)
    assert "archive/feedback/20260101_money.md" in archived(root)


def test_the_review_list_is_in_the_json_and_the_markdown_report(root):
    memory(root, "memories/user/20260101_a.md", "Alice", "Alice is learning Japanese and practises every evening.",
           "user", days_ago=20)
    memory(root, "memories/user/20260102_b.md", "Alice", "Alice is learning the piano and practises every evening.",
           "user", days_ago=10)
    outcome = outcome_of(root)
    report = outcome.report.as_json()
    assert report["stats"]["review"] == 1 and len(live(root)) == 2
    [item] = report["review"]
    assert item["kind"] == "possible_conflict"
    assert {item["path"], item["target"]} == {"memories/user/20260101_a.md", "memories/user/20260102_b.md"}
    assert "japanes" in item["evidence"].lower() or "Japanese" in item["evidence"]
    json.dumps(report)
    markdown = render_markdown(outcome.report)
    assert "### For Review" in markdown and "`memories/user/20260101_a.md`" in markdown
    assert run(root)["review"] == []  # nothing changed since: the pair is not asked again


def test_a_definite_subject_with_another_value_after_is_is_a_contradiction():
    assert verdict("The user's main editor is VS Code.", "The user's main editor is Neovim.").outcome == "supersede"
    assert verdict("用户的主力编辑器是VS Code。", "用户的主力编辑器是Neovim。").outcome == "supersede"
    # two roles, and a difference after "to": not one value replacing another
    assert verdict("The user is a data engineer at Acme.",
                   "The user is a Python developer at Acme.").outcome != "supersede"
    assert verdict("The user is a backend engineer who is new to Kubernetes.",
                   "The user is a backend engineer who is new to Terraform.").outcome == "review"


def test_a_word_spelt_two_ways_is_one_word_not_a_swap():
    assert verdict("Prefer integration tests against a real Postgres.",
                   "Prefer integraton tests against a real Postgres.").outcome == "merge"
    assert verdict("Run the import job before noon.", "Run the export job before noon.").outcome == "review"


def test_review_evidence_quotes_the_words_as_written():
    found = verdict("Tom works on the Growth team.", "Tom works on the Platform team as of October.")
    assert found.outcome == "review" and '"Growth" / "Platform"' in found.evidence


def test_a_memory_never_supersedes_the_one_that_holds_its_every_word():
    # real shape (orchestkit): a memory's own first paragraph, remembered again, against the memory,
    # whose How to apply says "never drift again"
    paragraph = ("The capture hook and the report hook each hardcode the scanned file-extension list, so they "
                 "drift. The report hook omitted kts and sql.")
    whole = paragraph + ("\n\n**How to apply:** one exported SCAN_EXTENSIONS constant; both hooks consume it, so "
                         "they can never drift again.")
    result = verdict(whole, paragraph)
    assert result.outcome == "review" and "word for word" in result.evidence
