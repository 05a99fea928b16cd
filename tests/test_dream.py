"""dream end to end: entries become memories, duplicates merge, contradictions supersede."""

import json
import os
from dataclasses import fields
from datetime import datetime, timedelta, timezone

import pytest

from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.actions import RetireMemory
from auto_dream.dream.plan import Plan
from auto_dream.dream.report import build_report
from auto_dream.dream.runner import decide_dream, dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.judge.memory_type import guess_type
from auto_dream.store.context import open_context
from auto_dream.store.memory import Memory, parse_memory
from auto_dream.store.paths import StorePaths
from auto_dream.store.scan import scan_memories
from builders import add_entry, memory_text, write_memory
from builders import live_memories as live
from conftest import tree_hash, write_memory_file
from fakes import snapshot_of

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def outcome_of(root, now=NOW, **options):
    return dream(open_context(root), now, DreamOptions(**options), DeterministicDistiller())


def run(root, now=NOW, **options) -> dict:
    return outcome_of(root, now, **options).report.as_json()


def add(root, text, kind=None, days_ago=1, hour=10):
    add_entry(root, text, kind, (NOW - timedelta(days=days_ago)).replace(hour=hour))


def memory(root, relative, name, body, kind, days_ago=30, extra=""):
    return write_memory(root, relative, name, body, kind, NOW - timedelta(days=days_ago), extra=extra)


def archived(root):
    return {m.path: m for m in scan_memories(StorePaths(root), None, archived=True).memories}


def live_text(root) -> str:
    return "\n".join(m.text() for m in live(root).values())


def kinds(report) -> list[str]:
    return [a["kind"] for a in report["actions"]]


# The cases that check only what a dream decides plan over a Snapshot built in memory (fakes.snapshot_of):
# no store on disk, the same decisions (test_plan.py checks that they are).


def memory_file(name, body, kind, days_ago=30, extra="") -> str:
    """memory()'s file, as text."""
    return memory_text(name, kind, NOW - timedelta(days=days_ago), body, extra=extra)


def logged(text, kind=None, days_ago=1, hour=10) -> tuple:
    """add()'s entry: its text, type and time."""
    return text, kind, (NOW - timedelta(days=days_ago)).replace(hour=hour)


def decided(memories: dict[str, str | Memory], entries=(), **options) -> tuple[dict, Plan]:
    """The report and the plan of a dream over `memories` and the log's `entries`, decided in memory."""
    plan = decide_dream(snapshot_of(memories, entries, now=NOW, options=DreamOptions(**options)),
                        DeterministicDistiller())
    return build_report(plan).as_json(), plan


def planned_live(plan: Plan) -> dict[str, Memory]:
    """The live memories the plan leaves, by path (live() of the store it is applied to)."""
    return dict(plan.live.items())


def planned_archive(plan: Plan) -> dict[str, Memory]:
    """The memories the plan archives, by archive path (archived() of the store it is applied to)."""
    return {a.archived.path: a.archived for a in plan.actions
            if isinstance(a, RetireMemory) and not a.proposed and a.archived is not None}


def planned_text(plan: Plan) -> str:
    return "\n".join(m.text() for m in planned_live(plan).values())


def plain_file(relative, text, days_ago) -> Memory:
    """write_memory_file's file with no frontmatter, last modified `days_ago` (os.utime), as orient reads it."""
    memory = parse_memory(text.encode("utf-8"), relative, (NOW - timedelta(days=days_ago)).astimezone(), None)
    assert isinstance(memory, Memory) and memory.read_only
    return memory


# ---------------------------------------------------------------- distilling entries


def test_new_entries_become_typed_memories_and_the_index_lists_them():
    report, plan = decided({}, [
        logged("The user is a backend developer who mostly writes Go", "user"),
        logged("Fund data API runs at localhost:5000", "reference"),
        logged("Don't mock the database in integration tests.\n"
               "Reason: the mocked tests passed while the prod migration failed.", "feedback")])
    assert report["stats"]["created"] == 3 and report["stats"]["entries_gathered"] == 3
    memories = planned_live(plan)
    assert sorted(m.type for m in memories.values()) == ["feedback", "reference", "user"]
    feedback = next(m for m in memories.values() if m.type == "feedback")
    assert feedback.body.startswith("Don't mock the database in integration tests.")
    assert "**Why:** the mocked tests passed while the prod migration failed." in feedback.body
    assert len(feedback.description) <= 150 and len(feedback.sources) == 1
    index = plan.index.text  # the MEMORY.md the plan writes
    for path in memories:
        assert f"]({path})" in index


def test_memory_md_shows_a_complete_name_and_a_description_that_adds_to_it():
    """The name was the first sentence cut with "…" and MEMORY.md showed the leftover words:
    `[The user is a backend developer who mostly writes…](…) — Python and Go`; a numbered
    item was named "4"; a checkbox kept its "[ ]"."""
    _, plan = decided({}, [
        logged("The user is a backend developer who mostly writes Python and Go, reads Rust, and has never "
               "shipped a frontend", "user"),
        logged("4. Do the DNS cutover only after the TTL has dropped to 60s"),
        logged("- [ ] Rotate the Sentry DSN after the contractor offboarding")])
    names = {m.name: m for m in planned_live(plan).values()}
    assert set(names) == {"Backend developer who mostly writes Python and Go",
                          "Do the DNS cutover only after the TTL has dropped to 60s",
                          "Rotate the Sentry DSN after the contractor offboarding"}
    assert names["Rotate the Sentry DSN after the contractor offboarding"].type == "project"
    assert names["Do the DNS cutover only after the TTL has dropped to 60s"].type == "feedback"
    lines = [line for line in plan.index.text.splitlines() if line.startswith("- [")]
    user = next(line for line in lines if "memories/user/" in line)
    # the description says what the name does not (the line's 150 characters may shorten it)
    assert user.startswith("- [Backend developer who mostly writes Python and Go](memories/user/"
                           "20261129_Backend_developer_who_mostly_writes_Python_and_Go.md) — Reads Rust")
    assert not any("…](" in line for line in lines)


def test_untyped_entries_are_typed_by_documented_rules():
    assert guess_type("Don't use tabs in YAML files") == "feedback"
    assert guess_type("不要在周五部署") == "feedback"
    assert guess_type("The dashboard is at https://grafana.example.com/d/abc") == "reference"
    assert guess_type("The user is a data scientist") == "user"
    assert guess_type("我是一名后端工程师") == "user"
    assert guess_type("The billing service moves to Kafka next sprint") == "project"


def test_english_duplicate_entry_merges_into_the_memory_keeping_its_details():
    report, plan = decided(
        {"memories/feedback/20261001_no_mocks.md": memory_file(
            "No database mocks", "Don't mock the database in integration tests.", "feedback")},
        [logged("Do not mock the database in integration tests: use the docker compose Postgres", "feedback")])
    assert kinds(report) == ["merge", "index"]
    merged = planned_live(plan)["memories/feedback/20261001_no_mocks.md"]
    assert "docker compose Postgres" in merged.body and "Don't mock the database" in merged.body
    assert len(merged.sources) == 1 and len(planned_live(plan)) == 1


def test_chinese_duplicates_merge():
    report, plan = decided({"memories/user/20261001_分享.md": memory_file("内容平台", "用户想通过内容平台分享知识",
                                                                        "user")},
                           [logged("用户想通过内容平台分享知识和经验", "user")])
    assert kinds(report) == ["merge", "index"]
    assert "分享知识和经验" in planned_live(plan)["memories/user/20261001_分享.md"].body


def test_chinese_contradiction_supersedes_and_the_retracted_rule_is_not_live():
    memories = {"memories/project/20261001_db.md": memory_file("数据库", "用 Postgres 做数据库", "project")}
    report, plan = decided(memories, [logged("不要用 Postgres 做数据库", "project")])
    assert sorted(kinds(report)) == ["create", "index", "supersede"]
    supersede = next(a for a in report["actions"] if a["kind"] == "supersede")
    assert supersede["path"] == "memories/project/20261001_db.md"
    old = planned_archive(plan)["archive/project/20261001_db.md"]
    assert old.extra["superseded_by"] == supersede["target"] and old.extra["archived_by_run"] == report["run_id"]
    assert "用 Postgres 做数据库" in old.body  # nothing lost: the archive keeps it
    assert all("用 Postgres 做数据库" != m.body for m in planned_live(plan).values())


def test_contradiction_with_high_overlap_is_superseded_not_merged():
    report, plan = decided({"memories/feedback/20261001_rebase.md": memory_file(
        "Rebase policy", "Always rebase feature branches", "feedback")},
        [logged("Never rebase feature branches", "feedback")])
    assert "merge" not in kinds(report) and "supersede" in kinds(report)
    assert "Always rebase" not in planned_text(plan)
    assert "Never rebase feature branches" in planned_text(plan)


def test_a_negation_that_does_not_negate_what_a_memory_says_supersedes_nothing():
    older = ("Maria is swamped with exams and packing but is eager to explore Lisbon, taste the pastries, "
             "and see the old tram lines with Ana.")
    report, plan = decided(
        {"memories/project/20261001_lisbon.md": memory_file("Maria and Lisbon", older, "project")},
        [logged("Maria has never been to Lisbon but is eager to see the famous tiles next spring.", "project",
                days_ago=3),
         # in one dream: the later entry does not supersede the earlier one
         logged("Omar has never tried sushi but plans to try it while in Osaka.", "project", days_ago=2),
         logged("Lena shares a photo of a sushi platter she tried in Kyoto and tells Omar to try it in Osaka.",
              "project", days_ago=1)])
    assert "supersede" not in kinds(report) and report["stats"]["superseded"] == 0
    assert report.get("skipped", []) == [] and planned_archive(plan) == {}
    text = planned_text(plan)
    for fact in (older, "Maria has never been to Lisbon", "Omar has never tried sushi", "sushi platter she tried"):
        assert fact in text


def test_contradiction_between_existing_memories_the_newer_wins():
    report, _ = decided({
        "memories/feedback/20260901_a.md": memory_file("Package manager", "Use pnpm for installs", "feedback", 60),
        "memories/feedback/20261101_b.md": memory_file("Package manager now",
                                                       "Switched to npm instead of pnpm for installs", "feedback", 20)})
    assert [(a["kind"], a["path"], a["target"]) for a in report["actions"] if a["kind"] != "index"] == [
        ("supersede", "memories/feedback/20260901_a.md", "memories/feedback/20261101_b.md")]


def test_duplicate_memories_merge_into_the_newer_carrying_sources():
    report, plan = decided({
        "memories/project/20260901_a.md": memory_file(
            "Deploy day",
            "Deploys happen every Tuesday afternoon from the release branch\n\nRollbacks need two approvals",
            "project", days_ago=60, extra="sources: [aaaaaaaaaaaa]\n"),
        "memories/project/20261101_b.md": memory_file(
            "Deploy schedule", "Deploys happen every Tuesday afternoon from the release branch", "project", days_ago=20,
            extra="sources: [bbbbbbbbbbbb]\n")})
    survivor = planned_live(plan)["memories/project/20261101_b.md"]
    assert "Rollbacks need two approvals" in survivor.body
    assert set(survivor.sources) == {"aaaaaaaaaaaa", "bbbbbbbbbbbb"}
    assert "archive/project/20260901_a.md" in planned_archive(plan)
    assert ("merge", "memories/project/20260901_a.md") in [(a["kind"], a["path"]) for a in report["actions"]]


def test_a_memory_that_absorbs_several_duplicates_in_one_run_keeps_every_detail_and_words_that_match_its_text():
    from auto_dream.dream.consolidate import consolidate
    from auto_dream.dream.snapshot import Decisions
    from auto_dream.judge.similarity import significant_words

    base = "Deploys happen every Tuesday afternoon from the release branch"
    details = ["Rollbacks need two approvals", "Hotfixes skip the staging soak", "Release notes go to the wiki"]
    memories = {f"memories/project/2026090{n}_old{n}.md": memory_file(f"Deploy day {n}", f"{base}\n\n{detail}",
                                                                      "project", days_ago=60 - n)
                for n, detail in enumerate(details)}
    memories["memories/project/20261101_new.md"] = memory_file("Deploy schedule", base, "project", days_ago=20)
    snapshot = snapshot_of(memories, now=NOW, run_id="0001-test")
    decisions = Decisions.start(snapshot)
    consolidate(snapshot, decisions, DeterministicDistiller())
    survivor = decisions.live["memories/project/20261101_new.md"]
    assert all(detail in survivor.body for detail in details)
    # the words it was compared with after each merge are the words of its text
    assert decisions.profiles.words(survivor.path) == significant_words(survivor.text())
    assert decisions.profiles[survivor.path].words == significant_words(survivor.text())


def test_unrelated_memories_sharing_a_few_words_are_left_alone():
    report, plan = decided({
        "memories/user/20261001_ja.md": memory_file("Japanese", "The user is learning Japanese", "user"),
        "memories/user/20261002_piano.md": memory_file("Piano", "The user is learning the piano", "user"),
        "memories/project/20261003_api.md": memory_file("API", "The billing API runs on Kubernetes in eu-west",
                                                        "project")},
        [logged("The billing team meets on Kubernetes migration every Friday", "project")])
    assert kinds(report) == ["create", "index"]
    assert len(planned_live(plan)) == 4 and planned_archive(plan) == {}


def test_a_newer_memory_beats_an_older_back_dated_entry():
    report, plan = decided({"memories/feedback/20261120_x.md": memory_file(
        "Rebase", "Never rebase feature branches", "feedback", days_ago=5)},
        [logged("Always rebase feature branches", "feedback", days_ago=40)])
    assert report["stats"]["created"] == 0 and report["stats"]["superseded"] == 0
    assert report["skipped"] and "newer memory" in report["skipped"][0]["reason"]
    assert "Always rebase" not in planned_text(plan)


# ---------------------------------------------------------------- safety and modes


def test_no_entry_is_distilled_twice_or_skipped_after_hand_edits(root, cli):
    add(root, "Kafka topics are named after the owning team", "project")
    run(root)
    log = next((root / "logs").rglob("*.md"))
    log.write_text("- [2026-11-28 09:00] (project) a line a person added above by hand\n" + log.read_text())
    add(root, "The staging cluster is rebuilt every Sunday", "project", days_ago=0)
    report = run(root)
    assert report["stats"]["entries_gathered"] == 2  # the hand-added line and the new one, nothing else
    third = run(root)
    assert third["stats"]["entries_gathered"] == 0 and third["actions"] == []
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == 0


def test_second_dream_plans_nothing_and_dry_run_writes_nothing(root):
    add(root, "The user prefers short answers", "user")
    add(root, "用 Postgres 做数据库", "project")
    before = tree_hash(root)
    dry = run(root, dry_run=True)
    assert dry["dry_run"] is True and dry["stats"]["created"] == 2
    assert tree_hash(root) == before
    first = run(root)
    assert first["stats"]["created"] == 2
    assert run(root)["actions"] == []


def test_propose_adds_but_retires_nothing():
    report, plan = decided({"memories/feedback/20261001_rebase.md": memory_file(
        "Rebase", "Always rebase feature branches", "feedback")}, [logged("Never rebase feature branches", "feedback")],
        propose=True)
    assert report["mode"] == "propose"
    assert "memories/feedback/20261001_rebase.md" in planned_live(plan) and planned_archive(plan) == {}
    supersede = next(a for a in report["actions"] if a["kind"] == "supersede")
    assert supersede["proposed"] is True and report["stats"]["proposed"] == 1 and report["stats"]["superseded"] == 0
    assert report["stats"]["created"] == 1  # the new fact is added all the same


def test_retirement_budget_defers_the_rest_to_the_next_run(root):
    rules = ["deploy the billing service on Fridays", "squash commits in the payments repository",
             "cache search results in Redis"]
    for n, rule in enumerate(rules):
        memory(root, f"memories/feedback/2026100{n}_old{n}.md", f"Rule {n}", f"Always {rule}", "feedback",
               days_ago=50 - n)
        add(root, f"Never {rule}", "feedback")
    first = run(root, budget=1)
    assert first["stats"]["superseded"] == 1
    assert any("budget" in w for w in first["warnings"])
    second = run(root, budget=1)
    third = run(root, budget=1)
    assert second["stats"]["superseded"] == 1 and third["stats"]["superseded"] == 1
    assert len(archived(root)) == 3 and "Always" not in live_text(root)
    assert run(root, budget=1)["actions"] == []


def test_if_due_needs_five_waiting_entries(root, cli):
    for n in range(4):
        add(root, f"fact number {n} about the billing service and its queue", "project")
    result = cli("--root", root, "dream", "--if-due")
    assert result.code == 0 and "not due" in result.err and not list((root / "memories").rglob("*.md"))
    add(root, "a fifth fact about the release train schedule", "project")
    result = cli("--root", root, "dream", "--if-due", "--json")
    assert result.code == 0 and json.loads(result.out)["stats"]["entries_gathered"] == 5


def test_report_json_shape_and_saved_report(root, cli):
    add(root, "The user is learning Rust in the evenings", "user")
    result = cli("--root", root, "dream", "--json")
    report = json.loads(result.out)
    assert set(report) >= {"run_id", "dry_run", "mode", "stats", "actions", "flagged", "warnings"}
    assert set(report["stats"]) >= {"entries_gathered", "memories_scanned", "created", "merged", "superseded",
                                    "archived_stale", "proposed", "partially_stale", "evergreen", "surviving",
                                    "index_lines", "index_bytes", "llm_calls", "llm_input_tokens",
                                    "llm_output_tokens"}
    assert all(set(a) == {"kind", "path", "target", "reason", "proposed", "archive"} for a in report["actions"])
    saved = root / ".state" / "runs" / report["run_id"]
    assert json.loads((saved / "report.json").read_text()) == report
    assert "## Dream Consolidation Report" in (saved / "report.md").read_text()


def test_dry_run_output_is_prefixed(root, cli):
    add(root, "The user is learning Rust in the evenings", "user")
    result = cli("--root", root, "dream", "--dry-run")
    assert result.code == 0
    assert result.out.startswith("[DRY RUN] No files were modified.")
    assert "[DRY RUN] Would create: memories/user/" in result.out


def test_check_reports_staleness_and_due_after_dream(root, cli):
    for n in range(5):
        add(root, f"distinct fact {n} about topic{n} and subject{n}", "project")
    check = json.loads(cli("--root", root, "check", "--json").out)
    assert check["dream_due"] is True and check["undistilled_entries"] == 5
    cli("--root", root, "dream")
    check = json.loads(cli("--root", root, "check", "--json").out)
    assert check["dream_due"] is False and check["undistilled_entries"] == 0 and check["index_in_sync"] is True
    assert {m["staleness"] for m in check["memories"]} == {"EVERGREEN"}
    assert check["last_dream"] is not None


PLAIN = "memories/feedback/20261001_plain.md"  # no frontmatter: read, never rewritten
PINNED = "memories/feedback/20261002_pinned.md"


def test_read_only_and_pinned_memories_are_never_retired():
    memories = {PLAIN: plain_file(PLAIN, "Always rebase feature branches\n", days_ago=30),
                PINNED: memory_file("Pinned", "Always squash feature branches", "feedback", extra="pinned: true\n")}
    report, plan = decided(memories, [logged("Never rebase feature branches", "feedback"),
                                      logged("Never squash feature branches", "feedback")])
    assert report["stats"]["superseded"] == 0
    # both stay live, and the plan neither writes nor removes either file
    assert set(memories) <= set(planned_live(plan))
    assert not set(memories) & {step.change.path for step in plan.changes}
    assert report["stats"]["created"] == 2


def test_a_dream_leaves_read_only_and_pinned_memory_files_as_they_are(root):
    """The case above on disk: what the dream writes leaves both files as they were."""
    plain = write_memory_file(root, PLAIN, "Always rebase feature branches\n")
    old = (NOW - timedelta(days=30)).timestamp()
    os.utime(plain, (old, old))
    memory(root, PINNED, "Pinned", "Always squash feature branches", "feedback", extra="pinned: true\n")
    add(root, "Never rebase feature branches", "feedback")
    add(root, "Never squash feature branches", "feedback")
    run(root)
    assert (root / PLAIN).read_text() == "Always rebase feature branches\n"
    assert (root / PINNED).exists()


@pytest.mark.parametrize("bad", ["---\nname: [broken\n---\nx", b"\xff\xfe not utf-8"])
def test_broken_memory_files_are_reported_and_untouched(root, bad):
    path = write_memory_file(root, "memories/project/20261001_bad.md", bad)
    before = path.read_bytes()
    add(root, "The billing service moves to Kafka next sprint", "project")
    report = run(root)
    assert any("20261001_bad.md" in w for w in report["warnings"])
    assert path.read_bytes() == before and report["stats"]["created"] == 1


def test_incremental_by_default_full_rechecks_every_pair(root):
    memory(root, "memories/project/20260901_a.md", "Billing export",
           "Billing invoices export nightly to the Acme bucket (legacy, audited, encrypted)", "project", days_ago=60)
    memory(root, "memories/project/20261001_b.md", "Billing export",
           "Billing invoices export nightly to the Globex bucket (weekly reports, finance team)", "project",
           days_ago=40)
    first = run(root)  # 5 of 9 words shared: 0.56, under the 0.6 threshold
    assert first["stats"]["merged"] == 0 and first["review"] == []
    (root / "config.toml").write_text("duplicate_overlap = 0.5\n")
    second = run(root)
    assert second["actions"] == [] and second["review"] == []  # nothing changed: nothing rechecked
    report = run(root, full=True)
    # rechecked at 0.5: the pair is found, and since the two name different things where they
    # differ (the Acme bucket / the Globex bucket), both are kept and the pair is left for review
    assert report["stats"]["merged"] == 0
    assert [(r["path"], r["target"]) for r in report["review"]] == [
        ("memories/project/20260901_a.md", "memories/project/20261001_b.md")]


def test_a_store_template_overrides_the_packaged_index_header(root, cli):
    (root / "templates").mkdir()
    (root / "templates" / "MEMORY_header.md").write_text("# Team memory\nUpdated {last_updated}\n")
    add(root, "The user is learning Rust in the evenings", "user")
    run(root)
    assert (root / "MEMORY.md").read_text().startswith("# Team memory\nUpdated 2026-11-29 10:00\n")


def test_fully_distilled_logs_are_not_read_again_until_they_change(root, monkeypatch):
    add(root, "The staging cluster is rebuilt every Sunday", "project", days_ago=3)
    add(root, "Kafka topics are named after the owning team", "project", days_ago=2)
    run(root)
    from auto_dream.store import undistilled  # gather's reading of the logs, shared with recall

    read = []
    real = undistilled.read_log
    monkeypatch.setattr(undistilled, "read_log", lambda path: read.append(path.name) or real(path))
    assert run(root)["stats"]["entries_gathered"] == 0 and read == []
    add(root, "Invoices are archived for ten years", "project", days_ago=2)
    report = run(root)
    assert report["stats"]["entries_gathered"] == 1 and len(read) == 1  # only the day that changed


def test_after_undo_the_next_dream_distils_the_entries_again(root, cli):
    add(root, "The staging cluster is rebuilt every Sunday", "project")
    assert run(root)["stats"]["created"] == 1
    assert cli("--root", root, "undo").code == 0
    assert live(root) == {}
    assert run(root)["stats"]["created"] == 1


def test_many_read_only_memories_are_summed_up_not_listed_one_by_one(root):
    for n in range(30):  # Claude Code writes memory files without frontmatter
        write_memory_file(root, f"memories/project/note_{n:02d}.md", f"Plain note number {n} about topic{n}\n")
    report = run(root)
    named = [w for w in report["warnings"] if "read, but never rewritten" in w]
    assert len(named) == 20
    assert any(w.startswith("… and 10 more memory files read but never rewritten") for w in report["warnings"])


def test_a_caller_that_keeps_the_working_set_is_handed_it_and_the_outcome_holds_none(root):
    """The command line keeps a run's snapshot and decisions to its exit rather than free them
    object by object (__main__); the library's result does not carry them."""
    from auto_dream.dream.runner import DreamOutcome
    from auto_dream.dream.snapshot import Decisions, Snapshot

    add(root, "Deploys go out on Thursdays", "project")
    kept: list[object] = []
    outcome = dream(open_context(root), NOW, DreamOptions(), DeterministicDistiller(), keep=kept.append)
    assert [type(item) for item in kept] == [Snapshot, Decisions]
    assert outcome.report is not None and "working_set" not in {f.name for f in fields(DreamOutcome)}
