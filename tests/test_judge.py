"""The judge: act only when certain, list for review when not (docs/dream.md), on the cases that went wrong."""

import json
import os
from datetime import datetime, timedelta, timezone

import pytest

from auto_dream.dream.report import render_markdown
from auto_dream.judge.partners import name_keys
from auto_dream.judge.similarity import Profile
from auto_dream.judge.statements import (
    Side,
    document_says,
    is_statement,
    judge,
    judge_documents,
    name_swapped,
    sentences_conflict,
    swaps,
    value_changed,
)
from conftest import write_memory_file
from test_dream import (
    NOW,
    add,
    decided,
    live,
    logged,
    memory,
    memory_file,
    outcome_of,
    planned_archive,
    planned_live,
    run,
)

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


@pytest.mark.parametrize("older, newer, outcome", [
    # both say not to: an adverb that stresses the negation (絶対に, 決して) changes nothing
    ("本番でmigrate:freshを実行しない", "本番ではmigrate:freshを絶対に実行しない", "merge"),
    ("金曜日にデプロイしない", "金曜日には決してデプロイしない", "merge"),
    # one says to, the other says never: still a contradiction
    ("本番でmigrate:freshを実行する", "本番ではmigrate:freshを絶対に実行しない", "supersede"),
    ("金曜日にデプロイする", "金曜日には決してデプロイしない", "supersede"),
])
def test_a_stressed_negation_negates_what_the_plain_one_does(older, newer, outcome):
    assert verdict(older, newer).outcome == outcome


@pytest.mark.parametrize("older, newer, outcome", [
    # the number names the things: one of a series, not a value changed (100 such entries made 439 review items)
    ("fact 35: service35 owns queue35", "fact 95: service95 owns queue95", "none"),
    ("Shard s12 holds the orders of region eu12", "Shard s14 holds the orders of region eu14", "none"),
    # a value, even beside a version's v or a CJK particle, still changed
    ("The build runs on Node v18 in CI", "The build runs on Node v20 in CI", "review"),
    ("提出の締め切りは金曜日の12:00。", "提出の締め切りは金曜日の13:00。", "supersede"),
])
def test_a_number_that_names_things_is_no_value_changed(older, newer, outcome):
    assert verdict(older, newer).outcome == outcome


@pytest.mark.parametrize("older, newer, outcome, rule", [
    # the newer opens with the older whole, as a sentence of its own, and goes on: it extends it
    ("勝手にライブラリのバージョンを上げないで",
     "勝手にライブラリのバージョンを上げないで。上げるときはPRの説明に変更履歴のリンクを貼って", "merge", "goes_on"),
    ("Always run ruff and mypy before committing.", "Always run ruff and mypy before committing. Also run pytest -x.",
     "merge", "goes_on"),
    # what follows takes it back, or negates it: not an extension
    ("Deploys happen on Fridays.", "Deploys happen on Fridays. Not anymore: they moved to Mondays.", "review", None),
    ("The API runs on port 8080.", "The API runs on port 8080. It no longer runs on port 8080.", "supersede", None),
])
def test_a_statement_that_opens_with_another_whole_and_goes_on_extends_it(older, newer, outcome, rule):
    found = verdict(older, newer)
    assert found.outcome == outcome and (rule is None or found.rule == rule)


def test_a_value_that_changed_is_a_contradiction_without_any_negation_word():
    found = swaps("Standup is at 9:30", "Standup is at 10:00", frozenset(), frozenset())
    assert value_changed(found) and (found[0].left, found[0].right) == ("9:30", "10:00")
    assert verdict("Daily standup is at 9:30.", "Daily standup is at 10:00.").outcome == "supersede"


def test_facts_of_one_shape_with_other_numbers_are_distinct():
    assert verdict("Fact 1: module m1 owns the billing flow q1x",
                   "Fact 2: module m2 owns the billing flow q2x").outcome == "none"


def test_one_word_swapped_for_another_is_left_for_review_not_merged():
    found = verdict("Alice is learning Japanese and practises every evening.",
                    "Alice is learning the piano and practises every evening.")
    assert found.outcome == "review"
    assert name_swapped(swaps("learning Japanese", "learning the piano", Profile.of("learning Japanese").words,
                              Profile.of("learning the piano").words))


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


# The dream-level cases below that check only what a dream decides plan over a Snapshot built in
# memory (test_dream.decided): no store on disk.


def test_black_hole_one_long_inventory_absorbs_none_of_ten_short_memories():
    memories = {"memories/project/20260101_inventory.md": memory_file("Service inventory", _inventory(), "project",
                                                                      days_ago=5)}
    topics = ["invoices", "refunds", "payouts", "ledgers", "disputes", "webhooks", "receipts", "coupons",
              "vouchers", "chargebacks"]
    for number, topic in enumerate(topics):
        memories[f"memories/project/20260102_{topic}.md"] = memory_file(
            f"{topic} note", f"The payments team owns {topic}; billing for {topic} is deployed nightly to staging.",
            "project", days_ago=30 + number)
    report, plan = decided(memories)
    assert [a for a in report["actions"] if a["kind"] in ("merge", "supersede")] == []
    assert len(planned_live(plan)) == 11
    assert "service-59" in planned_live(plan)["memories/project/20260101_inventory.md"].body


def test_ten_distinct_fact_entries_stay_ten_memories():
    report, plan = decided({}, [logged(f"Fact {number}: module m{number} owns the billing flow q{number}x", "project",
                                       hour=number) for number in range(1, 11)])
    assert report["stats"]["created"] == 10 and report["stats"]["merged"] == 0
    assert len(planned_live(plan)) == 10


def test_equal_times_give_no_supersede_in_a_dream():
    report, plan = decided({
        "memories/feedback/20260101_a.md": memory_file("Rebase", "Rebase feature branches before merging.",
                                                       "feedback", days_ago=20),
        "memories/feedback/20260101_b.md": memory_file("No rebase", "Never rebase feature branches.", "feedback",
                                                       days_ago=20)})
    assert report["stats"]["superseded"] == 0 and len(planned_live(plan)) == 2
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


def test_a_supersede_reason_quotes_both_sentences():
    report, _ = decided({"memories/feedback/20260101_rebase.md": memory_file(
        "Rebase", "Rebase feature branches before merging.", "feedback", days_ago=20)},
        [logged("Never rebase feature branches.", "feedback")])
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


def test_a_merge_carries_every_line_of_the_retired_body():
    report, plan = decided({
        "memories/feedback/20260101_money.md": memory_file("Money rules", DOC_OLD, "feedback", days_ago=40),
        "memories/feedback/20260201_money.md": memory_file("Money rules", DOC_NEW, "feedback", days_ago=10)})
    [merge] = [a for a in report["actions"] if a["kind"] == "merge"]
    assert merge["path"] == "memories/feedback/20260101_money.md"
    survivor = planned_live(plan)["memories/feedback/20260201_money.md"].body
    for line in DOC_OLD.splitlines():
        assert line in survivor, line
    assert 'Merged from "Money rules" (20260101_money.md, ' in survivor
    assert "memories/feedback/20260101_money.md" not in planned_live(plan)
    assert "archive/feedback/20260101_money.md" in planned_archive(plan)


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


# ---------------------------------------------------------------- statements lined up: one table of real shapes

# (older, newer, outcome, kind, rule): what the judge says of two statements a month apart. The
# shapes are those of the issue and the labelled set (bench/judgement/): a value changed, a
# tool swapped, another subject, two facts of one shape, the same thing in other words.
STATEMENT_CASES = [
    # a value of one kind for another: the newer wins
    ("Staging deploys happen every Thursday at 14:00.", "Staging deploys happen every Wednesday at 14:00.",
     "supersede", "conflict", "value_changed"),
    ("本番環境のデータベースはPostgreSQL 16を使っている。", "本番環境のデータベースはPostgreSQL 17を使っている。",
     "supersede", "conflict", "value_changed"),
    ("提出の締め切りは金曜日の15:00。", "提出の締め切りは金曜日の13:00。", "supersede", "conflict", "value_changed"),
    ("The Q3 marketing budget is $40,000.", "The Q3 marketing budget is now $25,000.",
     "supersede", "conflict", "value_changed"),
    # the words that say the value changed are no other words
    ("The Q3 marketing budget is $40,000.", "The Q3 marketing budget was cut to $25,000.",
     "supersede", "conflict", "value_changed"),
    ("会議資料の提出期限は15:00。", "会議資料の提出期限が13:00に早まった。", "supersede", "conflict", "value_changed"),
    ("DBはPostgreSQL 16。", "DBはPostgreSQL 17にアップグレードした。", "supersede", "conflict", "value_changed"),
    ("広告予算は月30万円。", "広告予算は月20万円に減額。", "supersede", "conflict", "value_changed"),
    # a value changed, and each side says more: listed, not acted on
    ("The line length limit is 88 characters (black's default).",
     "The line length limit is 120 characters; ruff is configured to match.", "review", "conflict", "value_and_words"),
    ("The Q3 marketing budget is $40,000.", "Finance cut the Q3 marketing budget to $25,000.",
     "review", "conflict", "value_and_words"),
    # one name for another in what is said of one subject
    ("The team uses pnpm to install packages in the web repo.",
     "The team uses bun to install packages in the web repo.", "review", "conflict", "name_swapped"),
    ("Tom works on the Growth team.", "Tom works on the Platform team as of October.",
     "review", "conflict", "name_swapped"),
    ("鈴木さんはグロースチーム所属。", "鈴木さんは10月からプラットフォームチーム所属。",
     "review", "conflict", "name_swapped"),
    # a change announced to what the other says, naming only the new value
    ("Staging deploys go out on Thursdays.", "Staging deploys moved to Wednesday.",
     "review", "conflict", "change_of_subject"),
    ("We use pnpm as the package manager.", "Switched the package manager to bun.",
     "review", "conflict", "change_of_subject"),
    ("功能开关在LaunchDarkly里管理。", "功能开关已迁移到Unleash，LaunchDarkly那边只读了。",
     "review", "conflict", "change_of_subject"),
    ("构建日志在Jenkins上看。", "Jenkins已经下线，构建日志改到GitHub Actions里看。", "review", "conflict",
     "change_of_subject"),
    ("部署脚本放在ops仓库。", "部署脚本换到infra仓库了。", "review", "conflict", "change_of_subject"),
    # another subject, or two facts of one shape: nothing to say
    ("Staging API dashboard: https://grafana.acme.internal/d/staging-api",
     "Production API dashboard: https://grafana.acme.internal/d/prod-api", "none", "", ""),
    ("Priya reviews every PR that touches the ledger service.", "Omar reviews every PR that touches the ledger UI.",
     "none", "", ""),
    ("Release 4.2 is scheduled for May 14.", "Release 4.3 is scheduled for May 14.", "none", "", ""),
    ("Bugs in the ingestion pipeline are tracked in Linear project INGEST.",
     "Feature requests for the ingestion pipeline are tracked in Linear project INGEST-IDEAS.", "none", "", ""),
    ("The user wants two-space indentation in JavaScript files.",
     "The user wants four-space indentation in Python files.", "none", "", ""),
    ("Never run `terraform apply` without reviewing the plan output first.",
     "Never run `kubectl delete` without checking the current context first.", "none", "", ""),
    ("预发环境的API看板：https://grafana.example.cn/d/staging-api",
     "生产环境的API看板：https://grafana.example.cn/d/prod-api", "none", "", ""),
    # sibling items of one imported heading: the heading is no shared subject
    ("Decisions: Use REST for the public API.", "Decisions: Use gRPC between internal services.", "none", "", ""),
    # the same thing in other words: a possible duplicate, not a conflict
    ("Maria agrees with John on the importance of education and infrastructure for community growth.",
     "Maria agrees with John on the crucial role of education and infrastructure in shaping communities.",
     "review", "duplicate", "swapped_words"),
    ("Generate migrations with `alembic revision --autogenerate` and review the generated file by hand before "
     "committing.", "When a schema change needs a migration, autogenerate it with alembic and hand-review the file "
     "before it's committed.", "review", "duplicate", "swapped_words"),
    # another fact about the same thing, or one word in common: nothing (LoCoMo's shapes)
    ("Nate tried to stay positive despite the setback in the video game tournament.",
     "Nate practices for video game tournaments.", "none", "", ""),
    ("Nate is participating in a video game tournament that he finds intense.",
     "Nate practices for video game tournaments.", "none", "", ""),
    ("Joanna can't have dairy.", "Joanna is keen to try Nate's dairy-free dessert recipe.", "none", "", ""),
    ("Joanna can't have dairy.", "Joanna now uses an external drive for backups to prevent losing work again.",
     "none", "", ""),
    ("Gina encourages Jon to keep pushing for his dreams and not give up.",
     "Gina believes Jon has potential and encourages him not to let anything stop him.", "none", "", ""),
    ("Marco is a data scientist and is new to React.", "Marco (data scientist) has almost no React experience yet.",
     "review", "duplicate", "one_sided_signal"),
    ("Use pnpm, not npm, to install packages in this repo.",
     "Install packages with pnpm in this repo; running npm install rewrites the lockfile.",
     "review", "duplicate", "one_sided_signal"),
    ("Rendering the overlay has zero per-frame cost.", "The overlay has no per-frame cost.",
     "merge", "duplicate", "is_duplicate"),
    ("Archived rows are hidden with `WHERE archived IS NOT TRUE` in the list query.",
     "The list query hides archived rows: `WHERE archived IS NOT TRUE`.", "merge", "duplicate", "is_duplicate"),
    # SQL's IS NOT negates nothing the memory says: no supersede on "IS NOT TRUE" against "is true"
    ("List queries skip archived orders with `WHERE archived IS NOT TRUE`.",
     "List queries show archived orders while archived is true.", "none", "", ""),
    # what both pin down the same, nothing pinned or named on one side only: one fact in other words
    ("Mobile releases are frozen from March 3 until the App Store review of 5.0 completes.",
     "Release freeze for mobile starts March 3 and lasts until the App Store review of 5.0 is done.",
     "review", "duplicate", "same_specifics"),
    ("Kenji is based in Tokyo (UTC+9) and prefers async communication over calls.",
     "Kenji works from Tokyo, UTC+9, and would rather communicate async than hop on calls.",
     "review", "duplicate", "same_specifics"),
    ("修改对外接口时要同步更新CHANGELOG.md。", "对外接口有改动时，记得同步更新CHANGLOG.md。",
     "review", "duplicate", "same_specifics"),
    # ... but a name pins nothing down, nor does one plain value alone, and one specific more is another fact
    ("李娜在学Python。", "李娜用Python写爬虫。", "none", "", ""),
    ("The API rate limit is 100 requests per minute.", "The API returns at most 100 items per page.",
     "none", "", ""),
    ("Dave had a card night with friends last Friday.", "Dave went to a car show last Friday and loved it.",
     "none", "", ""),
    ("iOS 5.0版本的发布卡在App Store审核。", "安卓5.0版本的发布卡在华为应用市场审核。", "none", "", ""),
]


@pytest.mark.parametrize("older, newer, outcome, kind, rule", STATEMENT_CASES,
                         ids=[case[1][:40] for case in STATEMENT_CASES])
def test_two_statements_lined_up(older, newer, outcome, kind, rule):
    found = verdict(older, newer)
    assert (found.outcome, found.kind, found.rule) == (outcome, kind, rule), found.evidence
    if outcome != "none":
        assert found.quotes == (" ".join(older.split()), " ".join(newer.split()))


def test_a_changed_value_quotes_both_values_as_written():
    found = verdict("Staging deploys happen every Thursday at 14:00.",
                    "Staging deploys happen every Wednesday at 14:00.")
    assert '"Thursday" / "Wednesday"' in found.evidence
    assert '"40,000" / "25,000"' in verdict("The Q3 marketing budget is $40,000.",
                                            "The Q3 marketing budget is now $25,000.").evidence


# ---------------------------------------------------------------- documents: sentences that agree are no conflict


def _document(*lines: str) -> str:
    return "## Notes\n\n" + "\n".join(lines) + "\n\n**How to apply:** keep it in mind."


# (older document's sentence, newer document's sentence): each pair agrees, or is about two things
AGREEING_SENTENCES = [
    ("The pipeline had zero post-generation validation before April.",
     "The pipeline shipped defective materials because it had no post-generation validation."),
    ("- [ ] PDF has no browser headers/footers (--no-pdf-header-footer)",
     "**Chrome PDFs:** Always absolute `file://` URLs + `--no-pdf-header-footer` + `--headless=new`."),
    ("Release-Please **fully supports pre-release versions** (alpha, beta, RC).",
     "To use custom pre-release identifiers (not just alpha/beta/rc), set the prerelease type."),
    ("Moves job-track entries in `active/` older than 72h to `research_pool/` with status reset to `research`.",
     "No YAML, no draft, no research pool entry."),
    ("- Scores, research_pool entries, PDFs, TF-IDF cache, telemetry are dynamic data.",
     "Job entries >72h moved to research_pool."),
    ("Check `contacts.yaml` interactions BEFORE listing anyone as \"fresh\" — if they have ANY interaction, "
     "they're not fresh.", "**Outreach contacts:** Check contacts.yaml interactions before listing as \"fresh\"."),
]


@pytest.mark.parametrize("older, newer", AGREEING_SENTENCES, ids=[pair[1][:40] for pair in AGREEING_SENTENCES])
def test_documents_whose_sentences_agree_are_no_conflict(older, newer):
    found = judge_documents(side(_document(older, "Everything else is unrelated to the other file.")),
                            side(_document("A paragraph about something else entirely.", newer), NEWER))
    assert found.kind != "conflict", found.evidence


def test_a_why_line_tells_a_story_it_is_no_rule_against_the_other():
    older = _document("Memory files are synced to chezmoi at every session close.",
                      "**Why:** Session S44 discovered 5 memory files that were not synced to chezmoi source.")
    newer = _document("- Synced to chezmoi: feedback_memory_parity.md, feedback_memory_reconciliation.md")
    assert judge_documents(side(older), side(newer, NEWER)).kind != "conflict"


# (older document's sentence, newer document's sentence, rule): a rule reversed or a value changed
CONFLICTING_SENTENCES = [
    ("Every PR into `main` is **squash-merged**.",
     "Squash merging has been turned off for `main` in the repo settings; PRs now land with rebase and merge.",
     "change_of_subject"),
    ("In fieldnotes component and hook tests, mock the backend with **msw**.",
     "msw is no longer used in fieldnotes tests: mock the API client module instead.", "change_of_subject"),
    ("harbor runs on Heroku.", "Production no longer runs on Heroku: the `harbor-pipeline` was retired, so "
     "don't promote slugs any more.", "is_contradiction"),
]


@pytest.mark.parametrize("older, newer, rule", CONFLICTING_SENTENCES,
                         ids=[pair[1][:40] for pair in CONFLICTING_SENTENCES])
def test_documents_with_a_rule_reversed_are_listed_as_a_conflict_quoting_both_sentences(older, newer, rule):
    found = judge_documents(side(_document(older)), side(_document(newer), NEWER))
    assert (found.outcome, found.kind) == ("review", "conflict"), found.evidence
    assert found.quotes == (older, newer)
    assert sentences_conflict(side(older), side(newer, NEWER)).rule == rule


def test_a_date_moved_in_a_file_saved_again_does_not_stop_its_merge():
    body = "\n".join(f"- step {n}: run `make check-{n}` and read its report" for n in range(12))
    older = f"## Release checklist\n\n{body}\n\nLast reviewed: 2026-05-02."
    newer = f"## Release checklist\n\n{body}\n\nLast reviewed: 2026-05-09."
    assert judge_documents(side(older), side(newer, NEWER)).outcome == "merge"


# ---------------------------------------------------------------- a memory that names its partner

HUMAN = ("The human at the center is a conductor. They are not here to tune instruments or run terminals.\n\n"
         "**How to apply:** if a CLI command can be run programmatically, run it; set secrets non-interactively.")
COMMANDS = ("Never present commands for the user to run manually. Run them, in order, automatically.\n\n"
            '**Why:** This extends the existing "never defer to human" feedback — the human is the conductor, '
            "not the operator.")


def test_one_that_says_it_extends_the_other_is_a_possible_duplicate_quoting_that_sentence():
    older = Side(HUMAN, Profile.of(HUMAN), OLDER, name_keys("feedback_never_defer_to_human.md", "Never defer"))
    newer = Side(COMMANDS, Profile.of(COMMANDS), NEWER, name_keys("feedback_never_defer_commands.md", "Never list"))
    found = judge(older, newer, DUPLICATE, CONTRADICTION)
    assert (found.outcome, found.kind, found.rule) == ("review", "duplicate", "names_partner")
    assert found.quotes == ("The human at the center is a conductor.",
                            '**Why:** This extends the existing "never defer to human" feedback — the human is the '
                            "conductor, not the operator.")


def test_a_dream_pairs_a_memory_with_the_one_it_names_whatever_words_they_share():
    report, plan = decided({
        "memories/feedback/feedback_never_defer_to_human.md": memory_file("Never defer grunt work to the human",
                                                                          HUMAN, "feedback", days_ago=40),
        "memories/feedback/feedback_never_defer_commands.md": memory_file("Never list commands for the user",
                                                                          COMMANDS, "feedback", days_ago=10)})
    assert [(r["kind"], {r["path"], r["target"]}) for r in report["review"]] == [
        ("possible_duplicate", {"memories/feedback/feedback_never_defer_to_human.md",
                                "memories/feedback/feedback_never_defer_commands.md"})]
    assert len(planned_live(plan)) == 2


ADDITIVE = ("New rules AMEND existing rules. They never replace them. Every rule ever established remains in force "
            "unless explicitly revoked by the user.\n\n**Why:** on 2026-03-26 the original rules were forgotten.\n\n"
            "**How to apply:**\n1. Before writing any new feedback rule, read all existing feedback files.\n"
            "2. When two rules conflict, ask the user.")
UNIFIED = ("**PRINCIPLE: Rules are ADDITIVE. New rules AMEND, never overwrite. Every rule ever established remains in "
           "force unless explicitly revoked by the user.**\n\n## ORIGINAL RULES\n\n"
           "1. **Location:** New York City.\n2. **Length:** 550-700 words, 4-5 substantial paragraphs.\n"
           "3. **Never apologize for gaps.** Lead with what you bring.\n\n## AMENDMENTS\n\n"
           "### A1. The employer is ORGANVM\nThe old title must never appear on a resume or a cover letter.")


def test_a_memory_whose_statement_the_other_holds_is_a_possible_duplicate():
    found = judge_documents(side(UNIFIED), side(ADDITIVE, NEWER))
    assert (found.outcome, found.kind, found.rule) == ("review", "duplicate", "restates")
    assert found.quotes[1].startswith("New rules AMEND existing rules.")
    assert found.quotes[0].startswith("**PRINCIPLE: Rules are ADDITIVE.")


def test_a_lead_the_other_only_shares_words_with_is_no_restatement():
    other = UNIFIED.replace("Every rule ever established remains in force unless explicitly revoked by the user.",
                            "Older rules stay unless the user revokes them.")
    assert judge_documents(side(other), side(ADDITIVE, NEWER)).outcome == "none"


def test_a_value_changed_between_statements_that_share_half_their_words_is_listed():
    """Neither side negates or announces a change, and they share too few words to be duplicates:
    only what both pin down (16, 17) brings the two together (similarity.from_low)."""
    report, _ = decided({"memories/project/20260101_db.md": memory_file("本番DB", "本番DBはPostgreSQL 16を使っている。",
                                                                         "project")},
                        [logged("本番DBはPostgreSQL 17に上げた。", "project")])
    [item] = report["review"]
    assert item["kind"] == "possible_conflict" and "memories/project/20260101_db.md" in (item["path"], item["target"])
    assert '"16" / "17"' in item["evidence"]



# ---------------------------------------------------------------- same anchors (Chinese, Japanese)

ANCHOR_CASES = [
    # one fact in other words: the same terms of art, the words around them alike both ways
    ("王芳负责风控团队，涉及规则引擎的PR都由她审核。", "风控团队的负责人是王芳，所有改动规则引擎的PR都要她来审。",
     "duplicate"),
    ("山田さんはインフラ担当で、Terraformはまだ初心者。", "山田さん（インフラ担当）はTerraformの経験がほとんどない。",
     "duplicate"),
    ("鈴木さんはデザイナーで、Figmaは上級者。", "鈴木さん（デザイナー）はFigmaの経験が豊富。", "duplicate"),
    # one adds a detail (1111), lined up with a value the other holds elsewhere (11月)
    ("1111大促期间（11月1日至11月12日）线上发布冻结。", "11月1日到11月12日大促期间，生产环境冻结发布。", "duplicate"),
    # the same anchors, and one negates what the other says: a possible conflict, not a duplicate
    ("公開APIを変更したらCHANGELOG.mdを更新する。", "公開APIを変更してもCHANGELOG.mdは更新しない。", "conflict"),
    # near misses: one name around the term, another thing said of it, two names swapped, anchors that differ
    ("小林用Python写爬虫。", "小林用Python做数据分析。", ""),
    ("王芳审核所有涉及规则引擎的PR。", "王芳维护规则引擎的文档，PR模板也归她管。", ""),
    ("张伟审核所有涉及账本服务的PR。", "赵敏审核所有涉及账本页面的PR。", ""),
    ("订单服务用Go写，部署在k8s上。", "订单服务用Go写，日志接入了ELK。", ""),
    ("山田さんはTerraformのモジュールを管理している。", "山田さんはTerraformのCI設定をレビューする。", ""),
    ("1111大促期间（11月1日至11月12日）线上发布冻结。", "11月1日到11月12日大促期间，iOS版生产环境冻结发布。", ""),
    # English names are people's more often than terms: they anchor nothing
    ("Kenji reviews every PR that touches billing.", "Kenji writes the release notes for every billing PR.", ""),
]


@pytest.mark.parametrize("older, newer, kind", ANCHOR_CASES, ids=[case[1][:30] for case in ANCHOR_CASES])
def test_the_same_anchors_and_alike_words_around_them_are_listed_never_acted_on(older, newer, kind):
    found = verdict(older, newer)
    if kind:
        assert (found.outcome, found.kind, found.rule) == ("review", kind, "same_anchors"), found.evidence
        assert found.quotes == (older, newer)
    else:
        assert found.rule != "same_anchors" and found.outcome not in ("merge", "supersede"), found.evidence


def test_a_latin_term_in_cjk_text_is_an_anchor_and_lets_the_pair_search_reach_the_lower_threshold():
    from auto_dream.distill.neighbours import entry_pairs
    from auto_dream.judge.values import anchors, pins
    older, newer = ANCHOR_CASES[0][:2]
    assert pins(older) and anchors(older) == {"pr"}
    assert not pins("The user is new to Kubernetes.") and not anchors("The user is new to Kubernetes.")
    # overlap 0.53: below the duplicate threshold, found because both hold an anchor
    assert entry_pairs({"e": Profile.of(newer)}, {"m.md": Profile.of(older)}, 0.4, 0.6) == {"e": {"m.md"}}


def test_a_cjk_paraphrase_with_the_same_anchors_is_listed_in_a_dream():
    memories = {"memories/user/20260101_a.md": memory_file("王芳", ANCHOR_CASES[0][0], "user", days_ago=20)}
    report, plan = decided(memories, [logged(ANCHOR_CASES[0][1], "user")])
    assert [item["kind"] for item in report["review"]] == ["possible_duplicate"]
    assert len(planned_live(plan)) == 2


def test_a_question_asked_both_ways_or_a_double_negative_idiom_negates_nothing():
    # 要不要 ("whether to") is no 不要: nothing here retracts the rule, no supersede
    found = verdict("构建失败时先看GitHub Actions的日志，再决定是否重跑。",
                    "如果构建失败了，先去GitHub Actions里看日志，然后再决定要不要重跑。")
    assert found.outcome == "review" and found.kind == "duplicate", found.evidence
    # 忘れずに ("without forgetting"): the same rule, said with more care
    found = verdict("公開APIを変更したらCHANGELOG.mdを更新する。",
                    "公開APIに変更を入れたときはCHANGELOG.mdも忘れずに更新すること。")
    assert (found.outcome, found.kind) == ("review", "duplicate"), found.evidence
    # a real 不要 still negates
    assert verdict("构建失败时直接重跑。", "构建失败时不要直接重跑，先看日志。").outcome == "supersede"


@pytest.mark.parametrize("older, newer", [
    ("王磊在增长组。", "王磊从十月起在平台组。"),
    ("公测定在6月1日上线。", "公测延期了，新日期还没定。"),
])
def test_a_chinese_statement_of_what_changed_about_its_subject_is_listed_beside_the_memory_it_changes(
        root, older, newer):
    # the two share one character pair ("王磊", "公测"): only the subject both open with puts them side by side
    add(root, older, "project", days_ago=20)
    run(root, now=NOW - timedelta(days=19))
    add(root, newer, "project")
    report = run(root)
    assert [item["kind"] for item in report["review"]] == ["possible_conflict"]
    assert ("since" if "起" in newer else "puts off") in report["review"][0]["evidence"]
    assert len(live(root)) == 2
