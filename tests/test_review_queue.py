"""The review queue: what dream is unsure of waits, with its evidence, until someone decides it;
decisions are runs that undo reverses, and a decision to keep both is remembered."""

import json
from datetime import datetime, timezone

import pytest

from auto_dream.store.memory import Memory
from auto_dream.store.review_queue import (
    EMPTY_QUEUE,
    KeptPair,
    Raised,
    ReviewQueue,
    item_id,
    memory_fingerprint,
    next_queue,
    parse_queue,
    pending,
)
from conftest import tree_hash

WHEN = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
NOW, LATER = "2026-12-01T09:00:00+00:00", "2026-12-02T09:00:00+00:00"


def memory(path: str, body: str) -> Memory:
    return Memory(path=path, name=body[:20], description=body, type="project", mtime=WHEN, body=body)


A = memory("memories/project/a.md", "Staging deploys happen on Thursday afternoons")
B = memory("memories/project/b.md", "Staging deploys happen on Wednesday afternoons")
C = memory("memories/project/c.md", "The billing service runs on Kafka")
PAIR = Raised("conflict", (A.path, B.path), (A.body, B.body), "the same statement but for Thursday / Wednesday")


def live(*memories: Memory) -> dict[str, Memory]:
    return {m.path: m for m in memories}


# ---------------------------------------------------------------- the queue, pure


def test_a_raised_pair_becomes_an_item_with_both_quotes_and_fingerprints():
    queue = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW)
    (item,) = queue.items
    assert item.id == item_id(B.path, A.path) and item.kind == "conflict"
    assert item.memories == (A.path, B.path) and item.evidence == (A.body, B.body)
    assert item.fingerprints == (memory_fingerprint(A), memory_fingerprint(B)) and item.first_seen == NOW


def test_an_item_raised_again_keeps_when_it_was_first_seen_and_the_file_does_not_change():
    once = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW)
    again = next_queue(once, live(A, B), [PAIR], LATER)
    assert again == once and again.render() == once.render()


@pytest.mark.parametrize("after, why", [
    (live(A), "a memory went"),
    (live(A, memory(B.path, "Staging deploys happen on Friday mornings")), "a memory changed"),
])
def test_an_item_whose_memory_changed_or_went_leaves_the_queue(after, why):
    queue = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW)
    assert next_queue(queue, after, [], LATER).items == (), why


def test_a_resolved_item_leaves_and_is_not_raised_again_by_the_same_run():
    queue = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW)
    assert next_queue(queue, live(A, B), [PAIR], LATER, resolved=[queue.items[0].id]).items == ()


def test_a_pair_kept_as_it_is_is_not_raised_again_until_a_side_changes():
    kept = KeptPair((B.path, A.path), (memory_fingerprint(B), memory_fingerprint(A)), NOW, "two environments")
    queue = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW, kept=[kept])
    assert queue.items == () and queue.kept == (kept,)
    assert next_queue(queue, live(A, B), [PAIR], LATER).items == ()
    edited = memory(A.path, "Staging deploys happen on Thursday mornings")
    again = next_queue(queue, live(edited, B), [Raised("conflict", (A.path, B.path), ("x", "y"), "r")], LATER)
    assert [item.memories for item in again.items] == [(A.path, B.path)] and again.kept == ()


def test_pending_tells_the_items_to_decide_from_those_a_side_of_which_changed():
    queue = next_queue(EMPTY_QUEUE, live(A, B, C), [PAIR, Raised("duplicate", (A.path, C.path), ("a", "c"), "r")],
                       NOW)
    waiting, changed = pending(queue, live(A, B, memory(C.path, "The billing service runs on SQS")))
    assert [i.memories for i in waiting] == [(A.path, B.path)] and [i.memories for i in changed] == [(A.path, C.path)]


@pytest.mark.parametrize("data", [b"", b"not json", b"[]", b'{"items": 3}', b'{"items": [{"id": "x"}]}',
                                  b'{"items": [{"id": "r0000000", "kind": "duplicate", "memories": ["a", "b"], '
                                  b'"fingerprints": ["1", "2"], "evidence": ["a", "b"], "first_seen": "t"}]}',
                                  "\ufffe".encode("utf-16")])
def test_a_queue_file_that_cannot_be_read_reads_as_empty_not_a_crash(data):
    assert parse_queue(data).items == ()


def test_the_queue_reads_back_what_it_wrote():
    queue = next_queue(EMPTY_QUEUE, live(A, B), [PAIR], NOW,
                       kept=[KeptPair((A.path, C.path), (memory_fingerprint(A), memory_fingerprint(C)), NOW)])
    assert parse_queue(queue.render()) == queue != ReviewQueue()


# ---------------------------------------------------------------- dream, review, resolve, forget


def conflicting_store(cli, root):
    """A store whose dream leaves one conflict for review; returns the item's id."""
    for text in ("Staging deploys happen on Thursday afternoons", "Staging deploys happen on Wednesday afternoons"):
        assert cli("--root", root, "append", "--type", "project", "--at", "2026-11-30 10:00", text).code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    (item,) = json.loads(cli("--root", root, "review", "--json").out)["items"]
    return item


def test_a_dream_leaves_what_it_is_unsure_of_in_the_queue_and_review_shows_both_quotes(cli, root):
    item = conflicting_store(cli, root)
    assert item["kind"] == "conflict" and item["evidence"] == ["Staging deploys happen on Thursday afternoons",
                                                               "Staging deploys happen on Wednesday afternoons"]
    assert all(root.joinpath(path).is_file() for path in item["memories"])
    text = cli("--root", root, "review").out
    assert item["id"] in text and "“Staging deploys happen on Thursday afternoons”" in text
    assert json.loads(cli("--root", root, "check", "--json").out)["review_pending"] == 1
    assert "decisions waiting for a reader: 1" in cli("--root", root, "check").out
    # a dream with nothing new neither drops the item nor writes the queue again
    queue = (root / ".state" / "review.json").read_bytes()
    assert cli("--root", root, "dream", "--no-llm").code == 0
    assert (root / ".state" / "review.json").read_bytes() == queue


def test_supersede_archives_the_loser_and_undo_brings_it_and_the_item_back(cli, root):
    item = conflicting_store(cli, root)
    loser, winner = item["memories"]
    before = tree_hash(root / "memories")
    result = cli("--root", root, "resolve", item["id"], "supersede", "--winner", winner)
    assert result.code == 0, result.err
    assert not (root / loser).exists() and (root / winner).is_file()
    archived = list((root / "archive").rglob("*.md"))
    assert len(archived) == 1 and f"superseded_by: {winner}" in archived[0].read_text()
    assert json.loads(cli("--root", root, "review", "--json").out)["items"] == []
    assert cli("--root", root, "undo").code == 0
    assert tree_hash(root / "memories") == before
    assert [i["id"] for i in json.loads(cli("--root", root, "review", "--json").out)["items"]] == [item["id"]]


def test_merge_carries_the_others_text_into_the_one_that_stays(cli, root):
    item = conflicting_store(cli, root)
    gone, stays = item["memories"]
    assert cli("--root", root, "resolve", item["id"], "merge", "--into", stays).code == 0
    assert not (root / gone).exists()
    assert "Thursday afternoons" in (root / stays).read_text() and "Wednesday afternoons" in (root / stays).read_text()


def test_keep_is_remembered_across_a_full_dream_and_an_edit_raises_the_pair_again(cli, root):
    item = conflicting_store(cli, root)
    assert cli("--root", root, "resolve", item["id"], "keep", "--reason", "two environments").code == 0
    report = json.loads(cli("--root", root, "dream", "--no-llm", "--full", "--json").out)
    assert report["review"] == [] and report["stats"]["review_pending"] == 0
    edited = root / item["memories"][0]
    edited.write_text(edited.read_text().replace("Thursday afternoons", "Thursday mornings"))
    report = json.loads(cli("--root", root, "dream", "--no-llm", "--json").out)
    assert report["stats"]["review_pending"] == 1
    assert json.loads(cli("--root", root, "review", "--json").out)["items"][0]["id"] == item["id"]


@pytest.mark.parametrize("argv, code, says", [
    (["resolve", "rnope000", "keep"], 2, "no review item"),
    (["resolve", "ID", "merge"], 2, "--into"),
    (["resolve", "ID", "supersede", "--winner", "memories/project/other.md"], 2, "neither memory"),
    (["resolve", "ID", "delete"], 2, "unknown decision"),
    (["resolve", "ID", "keep", "--into", "x"], 2, "keep leaves both"),
    (["forget", "no such memory"], 2, "no memory"),
])
def test_a_decision_that_cannot_be_made_is_one_line_and_changes_nothing(cli, root, argv, code, says):
    item = conflicting_store(cli, root)
    before = tree_hash(root)
    result = cli("--root", root, *[item["id"] if a == "ID" else a for a in argv])
    assert result.code == code and says in result.err and len(result.err.strip().splitlines()) == 1
    assert tree_hash(root) == before


def test_an_item_whose_memory_changed_is_not_decided_but_judged_again(cli, root):
    item = conflicting_store(cli, root)
    edited = root / item["memories"][1]
    edited.write_text(edited.read_text().replace("Wednesday", "Friday"))
    before = tree_hash(root)
    result = cli("--root", root, "resolve", item["id"], "keep")
    assert result.code == 1 and "changed since it was listed" in result.err
    assert tree_hash(root) == before
    assert json.loads(cli("--root", root, "review", "--json").out) == {"items": [], "changed": [item["id"]]}


def test_forget_archives_a_memory_with_the_reason_and_undo_restores_it(cli, root):
    assert cli("--root", root, "append", "--type", "user", "The user lives in Lisbon").code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    (path,) = [p for p in (root / "memories").rglob("*.md")]
    before = path.read_bytes()
    result = cli("--root", root, "forget", path.name, "--reason", "the user moved to Porto")
    assert result.code == 0, result.err
    assert not path.exists() and "Lisbon" not in (root / "MEMORY.md").read_text()
    (archived,) = (root / "archive").rglob("*.md")
    assert "the user moved to Porto" in archived.read_text()
    assert cli("--root", root, "undo").code == 0
    assert path.read_bytes() == before and "Lisbon" in (root / "MEMORY.md").read_text()


def test_a_decision_is_not_a_dream_for_if_due(cli, root):
    item = conflicting_store(cli, root)
    last = (root / ".state" / "last_dream.json").read_bytes()
    assert cli("--root", root, "resolve", item["id"], "keep").code == 0
    assert (root / ".state" / "last_dream.json").read_bytes() == last


def test_a_dry_run_writes_no_queue(cli, root):
    for text in ("Staging deploys happen on Thursday afternoons", "Staging deploys happen on Wednesday afternoons"):
        cli("--root", root, "append", "--type", "project", text)
    before = tree_hash(root)
    report = json.loads(cli("--root", root, "dream", "--no-llm", "--dry-run", "--json").out)
    assert report["stats"]["review_pending"] == 1 and report["review"][0]["quotes"][0]
    assert tree_hash(root) == before and not (root / ".state" / "review.json").exists()


# ---------------------------------------------------------------- what people wrote about status

OLD_RULES = "---\nname: Cover letter quality\ndescription: Cover letters fit one page\ntype: feedback\n---\n" \
            "Every cover letter fits on one page and names the NYC office.\n"
NEW_RULES = "---\nname: Unified resume and cover letter rules\ndescription: One set of rules\ntype: feedback\n---\n" \
            "Resumes and cover letters follow one template; the template is the single source of truth.\n"


def test_a_memory_a_person_marked_superseded_waits_beside_the_one_it_names(tmp_path, cli):
    """application-pipeline's MEMORY.md: "SUPERSEDED by unified rules below" names the newer file."""
    from test_claude_folder import claude_folder

    index = ("# Memory\n\n## Feedback\n- [Cover letter quality](feedback_cover_letter_quality.md) — SUPERSEDED by "
             "unified rules below. Kept for historical reference only.\n"
             "- [Unified resume/CL rules](feedback_unified_rules.md) — one template\n")
    folder = claude_folder(tmp_path, {"feedback_cover_letter_quality.md": OLD_RULES,
                                      "feedback_unified_rules.md": NEW_RULES}, index)
    assert cli("--root", folder, "dream", "--no-llm").code == 0
    (item,) = json.loads(cli("--root", folder, "review", "--json").out)["items"]
    assert item["kind"] == "superseded"
    assert item["memories"] == ["feedback_cover_letter_quality.md", "feedback_unified_rules.md"]
    assert "SUPERSEDED by unified rules below" in item["evidence"][0]
    assert item["evidence"][1].startswith("Resumes and cover letters follow one template")
    assert cli("--root", folder, "resolve", item["id"], "supersede", "--winner", "feedback_unified_rules.md").code == 0
    assert not (folder / "feedback_cover_letter_quality.md").exists()
    # the person's line leaves MEMORY.md with the file, kept word for word in its archive copy
    (archived,) = (folder / ".auto-dream" / "archive").rglob("*.markdown")  # not a .md: Claude Code never reads it
    assert "SUPERSEDED by unified rules below" in archived.read_text()
    assert cli("--root", folder, "undo").code == 0
    assert "SUPERSEDED by unified rules below" in (folder / "MEMORY.md").read_text()


def test_a_memory_marked_deprecated_is_never_merged_into_by_the_judge(cli, root):
    from conftest import write_memory_file

    body = "The billing service moves to Kafka in December, replacing the RabbitMQ queue."
    write_memory_file(root, "memories/project/20261101_billing.md",
                      f"---\nname: \"[DEPRECATED] Billing moves to Kafka\"\ndescription: {body}\ntype: project\n"
                      f"mtime: 2026-11-01T09:00:00+00:00\n---\n{body}\n")
    write_memory_file(root, "memories/project/20261102_billing.md",
                      f"---\nname: Billing moves to Kafka\ndescription: {body}\ntype: project\n"
                      f"mtime: 2026-11-02T09:00:00+00:00\n---\n{body}\n")
    report = json.loads(cli("--root", root, "dream", "--no-llm", "--json").out)
    assert [a for a in report["actions"] if a["kind"] in ("merge", "supersede")] == []
    assert report["review"] and "marked deprecated by a person" in report["review"][0]["evidence"]


def test_an_entry_that_repeats_a_deprecated_memory_becomes_a_memory_of_its_own(cli, root):
    from conftest import write_memory_file

    body = "The billing service moves to Kafka in December, replacing the RabbitMQ queue."
    write_memory_file(root, "memories/project/20261101_billing.md",
                      f"---\nname: \"[DEPRECATED] Billing moves to Kafka\"\ndescription: {body}\ntype: project\n"
                      f"mtime: 2026-11-01T09:00:00+00:00\n---\n{body}\n")
    assert cli("--root", root, "append", "--type", "project", body).code == 0
    report = json.loads(cli("--root", root, "dream", "--no-llm", "--json").out)
    assert [a["kind"] for a in report["actions"] if a["kind"] != "index"] == ["create"]
    assert "[The billing service moves to Kafka in December" in (root / "MEMORY.md").read_text()


@pytest.mark.parametrize("dreamed_apart", [False, True], ids=["one dream", "the older one dreamed before"])
def test_a_paraphrase_in_chinese_that_keeps_its_terms_is_listed_as_a_possible_duplicate(cli, root, dreamed_apart):
    """The two share 0.30 of their character bigrams, under the lower threshold (0.4), and the same
    terms (`make lint`): they are compared from the anchored floor, whether the older memory is
    searched in memory (one dream) or through the parse cache (dreamed the day before)."""
    older, newer = "每次提交前都要先跑`make lint`。", "提交代码之前先执行make lint。"
    assert cli("--root", root, "append", "--type", "feedback", "--at", "2026-11-29 10:00", older).code == 0
    if dreamed_apart:
        assert cli("--root", root, "dream", "--no-llm").code == 0
    assert cli("--root", root, "append", "--type", "feedback", "--at", "2026-11-30 10:00", newer).code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    (item,) = json.loads(cli("--root", root, "review", "--json").out)["items"]
    assert item["kind"] == "duplicate" and item["evidence"] == [older, newer]


PROXY_RULE = ("In the web app's page tests, stub the backend at the network level with **nock** "
              "(interceptors in `test/interceptors.ts`). Don't mock the data hooks.\n\n"
              "**Why:** the real request path runs: auth refresh, retries, response parsing.")
PROXY_NOW = ("## Network\n\n- nock is no longer used in the web app's tests: it broke with the fetch polyfill. Mock "
             "the HTTP module with `jest.mock('src/net/http')` instead.\n\n## Timers\n\n- Use fake timers for the "
             "retry backoff; never wait on real timeouts.\n- Restore real timers after each test.")


@pytest.mark.parametrize("dreamed_apart", [False, True], ids=["one dream", "the rule dreamed before"])
def test_a_memory_that_says_what_another_is_about_stopped_is_read_beside_it(cli, root, dreamed_apart):
    """The two share few words (a rule and the notes that retired it): they are paired because one
    says "nock is no longer used" and the other's name is about nock, and listed as a conflict."""
    from builders import write_memory

    write_memory(root, "memories/feedback/nock_rule.md", "Stub HTTP with nock in web app tests", PROXY_RULE,
                 "feedback", datetime(2026, 10, 1, tzinfo=timezone.utc))
    if dreamed_apart:
        assert cli("--root", root, "dream", "--no-llm").code == 0
    write_memory(root, "memories/feedback/testing_now.md", "Testing the web app today", PROXY_NOW, "feedback",
                 datetime(2026, 11, 1, tzinfo=timezone.utc))
    assert cli("--root", root, "dream", "--no-llm").code == 0
    (item,) = json.loads(cli("--root", root, "review", "--json").out)["items"]
    assert item["kind"] == "conflict" and sorted(item["memories"]) == ["memories/feedback/nock_rule.md",
                                                                      "memories/feedback/testing_now.md"]
    assert any("nock is no longer used" in quote for quote in item["evidence"])
