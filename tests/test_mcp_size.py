"""The MCP tools at any size: every result under 20,000 characters on a store of 2,000
memories, paging that reaches every memory once, schemas an agent can rely on, and a plan id that
applies exactly the plan it names. Through the SDK's own client, as tests/test_mcp.py does."""

import json
import random
from pathlib import Path
from typing import Any

import pytest

from auto_dream.mcp_server import RESULT_CHARS
from conftest import tree_hash, write_memory_file
from test_mcp import call, error_line, ok, session

TYPES = ("user", "feedback", "project", "reference")
WORDS = ("deploy", "invoice", "cache", "staging", "release", "dashboard", "database", "service", "backup", "queue",
         "token", "gateway", "cluster", "metrics", "budget", "review", "schema", "rollout", "ticket", "runner")


def big_store(root: Path, memories: int = 2_000) -> Path:
    """`memories` memory files written directly (as a person's or an older dream's would be), each
    with a long description and body that share common words, so recall matches many."""
    rng = random.Random(28)
    for number in range(memories):
        kind = TYPES[number % 4]
        words = " ".join(rng.choice(WORDS) for _ in range(40))
        name = f"Memory {number:04d} about {rng.choice(WORDS)} and {rng.choice(WORDS)}"
        write_memory_file(root, f"memories/{kind}/20260101_memory_{number:04d}.md",
                          f"---\nname: {name}\ndescription: The {words[:200]}\ntype: {kind}\n"
                          f"mtime: 2026-01-{1 + number % 28:02d}T10:00:00+00:00\n---\n"
                          f"Memory {number} says: {words}. {words}.\n")
    return root


def remember(root: Path, facts: list[str]) -> None:
    """Each fact remembered as a project fact, through one session (a server for each costs 40 ms)."""
    async def steps(client):
        for fact in facts:
            ok(await client.call_tool("remember", {"text": fact, "type": "project"}))

    session(root, steps)


def text_of(result) -> str:
    [content] = result.content
    return content.text


def within(result) -> dict[str, Any]:
    """The result's document, after checking that what the client reads is under RESULT_CHARS."""
    assert len(text_of(result)) < RESULT_CHARS == 20_000, len(text_of(result))
    return ok(result)


@pytest.mark.slow  # about 6 seconds: every tool over 2,000 memories
def test_every_tool_result_stays_under_20000_characters_on_2000_memories(root):
    big_store(root)
    remember(root, [f"Service {number} of the {WORDS[number % 20]} team listens on port {7000 + number}"
                    for number in range(40)])  # a dream with something to do
    huge = "A very long memory. " * 5_000  # 100,000 characters of body
    write_memory_file(root, "memories/project/20260101_huge.md",
                      f"---\nname: Huge memory\ndescription: A memory with a long body\ntype: project\n---\n{huge}\n")

    async def steps(client):
        results = {}
        for tool, arguments in [
            ("list_memories", {}), ("list_memories", {"limit": 200}),
            ("list_memories", {"archived": True, "limit": 200}),
            ("check", {}), ("check", {"limit": 200}),
            ("recall", {"query": "deploy invoice cache staging"}),
            ("recall", {"query": "deploy invoice cache staging", "limit": 50}),
            ("show", {"memory": "memories/project/20260101_huge.md"}),
            ("review", {}), ("review", {"limit": 100}),
        ]:
            results[(tool, json.dumps(arguments))] = await client.call_tool(tool, arguments)
        return results

    results = session(root, steps)
    documents = {key: within(result) for key, result in results.items()}
    listed = documents[("list_memories", json.dumps({"limit": 200}))]
    assert listed["total"] == 2_001 and listed["more"] is True and listed["next_offset"] == len(listed["memories"])
    checked = documents[("check", json.dumps({"limit": 200}))]
    assert checked["total"] == 2_001 and checked["more"] is True and checked["undistilled_entries"] == 40
    found = documents[("recall", json.dumps({"query": "deploy invoice cache staging", "limit": 50}))]
    assert found["memories"] and found["more"] is True
    shown = documents[("show", json.dumps({"memory": "memories/project/20260101_huge.md"}))]
    assert shown["body_chars"] >= len(huge) - 1 and shown["next_offset"] == len(shown["body"])


def test_a_dream_undo_and_forget_name_their_first_rows_and_count_the_rest(root, monkeypatch):
    """The lists of plan, dream and undo are cut the same way at any size: here 60 new memories, 20
    rows named and the results held to 6,000 characters (2,000 memories: the test above)."""
    import auto_dream.mcp_server as server

    monkeypatch.setattr(server, "RESULT_CHARS", 6_000)
    remember(root, [f"Service {number} of the {WORDS[number % 20]} team listens on port {7000 + number}"
                    for number in range(60)])
    for tool, arguments in (("plan", {}), ("dream", {"apply": True}), ("undo", {})):
        result = call(root, tool, **arguments)
        assert len(text_of(result)) <= 6_000, tool
        document = ok(result)
        rows = document["actions"] if tool != "undo" else document["restored"]
        assert document["more"] is True and 0 < len(rows) <= 20, tool
        assert document["actions_total" if tool != "undo" else "restored_total"] >= 60, tool


SYLLABLES = ("ka", "lo", "mi", "ter", "van", "sol", "rin", "dex", "pa", "tor", "qui", "ne", "bal", "cor", "zu", "fen")


def distinct_store(root: Path, memories: int = 2_000) -> Path:
    """`memories` memory files each about its own made-up words, as a real store's memories are
    about different things (big_store's share twenty words, and a dream would compare them all)."""
    rng = random.Random(28)
    vocabulary = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(3, 5))) for _ in range(30_000)})
    for number in range(memories):
        kind = TYPES[number % 4]
        words = rng.sample(vocabulary, 14)
        write_memory_file(root, f"memories/{kind}/20260101_memory_{number:04d}.md",
                          f"---\nname: The {words[0]} {words[1]} of {words[2]}\ndescription: {' '.join(words[:8])}\n"
                          f"type: {kind}\nmtime: 2026-01-{1 + number % 28:02d}T10:00:00+00:00\n---\n"
                          f"{' '.join(words).capitalize()}. The {words[3]} uses {words[4]} for {words[5]}.\n")
    return root


@pytest.mark.slow  # about 10 seconds: a plan and an apply over 2,000 memories
def test_dream_plan_and_apply_by_plan_id_stay_under_20000_characters_on_2000_memories(root):
    """`dream` without apply (the plan and its id), then with apply and that plan_id, on a store of
    2,000 memories and 120 new facts: each result is under 20,000 characters, names the first 20
    rows of each list and counts them all, though the run's full report is far longer."""
    distinct_store(root)
    facts = [f"Service {number} of the {WORDS[number % 20]} team listens on port {7000 + number}"
             for number in range(120)]

    async def steps(client):
        for fact in facts:
            ok(await client.call_tool("remember", {"text": fact, "type": "project"}))
        planned = await client.call_tool("dream", {})
        applied = await client.call_tool("dream", {"apply": True, "plan_id": ok(planned)["plan_id"]})
        return planned, applied

    planned, applied = session(root, steps)
    plan, done = within(planned), within(applied)
    assert plan["applied"] is False and done["applied"] is True and done["more"] is True
    assert done["actions"] == plan["actions"] and done["index_sha256"] == plan["index_sha256"]
    assert done["stats"]["memories_scanned"] == 2_000 and done["stats"]["created"] == 120
    for document in (plan, done):
        assert document["actions_total"] >= 120 and document["distilled_entries_total"] == 120  # 120 made, MEMORY.md
        for name in ("actions", "skipped", "deferred", "flagged", "review", "warnings", "distilled_entries"):
            rows = document.get(name, [])
            assert len(rows) <= 20 and (f"{name}_total" in document or len(rows) < 20), name
    report = root / ".state" / "runs" / done["run_id"] / "report.json"
    assert len(report.read_text()) > RESULT_CHARS  # what one answer would have been, uncut
    assert len(list((root / "memories").rglob("*.md"))) == 2_120


def test_the_old_server_gave_more_than_20000_characters(root):
    """What the issue measured, on a smaller store: one call listed every memory."""
    big_store(root, 200)
    assert len(text_of(call(root, "list_memories"))) < RESULT_CHARS
    assert ok(call(root, "list_memories"))["total"] == 200


@pytest.mark.parametrize("memories, check_limit", [(600, None), (300, 37)])
def test_paging_through_list_and_check_reaches_every_memory_exactly_once(root, memories, check_limit):
    """list_memories over 600 memories; check (seconds a call at 2,000) over 300."""
    big_store(root, memories)
    everything = {str(path.relative_to(root)) for path in (root / "memories").rglob("*.md")}

    async def pages(client, tool, limit):
        seen, offset = [], 0
        while offset is not None:
            page = within(await client.call_tool(tool, {"limit": limit, "offset": offset}))
            assert page["offset"] == offset and page["total"] == len(everything)
            seen += [row["path"] for row in page["memories"]]
            assert page["more"] is (page["next_offset"] is not None)
            offset = page["next_offset"]
        return seen

    async def steps(client):
        listed = await pages(client, "list_memories", 200)
        return listed, (await pages(client, "check", check_limit) if check_limit else listed)

    listed, checked = session(root, steps)
    assert len(listed) == len(set(listed)) == memories and set(listed) == everything
    assert len(checked) == len(set(checked)) == memories and set(checked) == everything


def test_recall_pages_on_from_where_it_stopped(root):
    big_store(root, 300)

    async def steps(client):
        whole = ok(await client.call_tool("recall", {"query": "deploy", "limit": 30}))["memories"]
        first = ok(await client.call_tool("recall", {"query": "deploy", "limit": 10}))
        second = ok(await client.call_tool("recall", {"query": "deploy", "limit": 20,
                                                       "offset": first["next_offset"]}))
        return whole, first, second

    whole, first, second = session(root, steps)
    assert first["more"] is True and first["next_offset"] == 10
    assert [hit["path"] for hit in first["memories"] + second["memories"]] == [hit["path"] for hit in whole]


def test_remember_then_dream_then_recall_finds_it(tmp_path):
    """recall searches memories, and a remembered fact is one after a dream (recall does not yet
    read undreamed log entries)."""
    root = tmp_path / ".auto-dream"
    ok(call(root, "remember", text="The staging database is backed up nightly at 02:00 UTC", type="project"))
    planned = ok(call(root, "plan"))
    ok(call(root, "dream", apply=True, plan_id=planned["plan_id"]))
    hits = ok(call(root, "recall", query="staging database backup"))["memories"]
    assert [hit["name"] for hit in hits][:1] == ["The staging database is backed up nightly at 02:00 UTC"]


def test_schemas_say_types_descriptions_bounds_titles_and_the_version(root):
    from importlib.metadata import version

    async def steps(client):
        return client.server_info, (await client.list_tools()).tools

    info, tools = session(root, steps)
    assert info.version == version("auto-dream") != ""
    by_name = {tool.name: tool for tool in tools}
    for tool in tools:
        assert tool.title, tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert len(schema.get("description", "")) > 10, (tool.name, name)
    remember_type = by_name["remember"].input_schema["properties"]["type"]
    assert {"enum": ["user", "feedback", "project", "reference"], "type": "string"} in remember_type["anyOf"]
    for tool, most in (("recall", 50), ("list_memories", 200), ("check", 200), ("review", 100)):
        limit = by_name[tool].input_schema["properties"]["limit"]
        assert limit["minimum"] == 1 and limit["maximum"] == most, tool
        assert by_name[tool].input_schema["properties"]["offset"]["minimum"] == 0


def test_a_plan_id_applies_exactly_that_plan(root):
    for number in range(8):
        ok(call(root, "remember", text=f"Queue {number} drains into the {WORDS[number]} worker", type="project"))
    before = tree_hash(root / "logs"), tree_hash(root / "memories")
    planned = ok(call(root, "plan"))
    assert planned["applied"] is False and planned["plan_id"].startswith("p")
    assert (tree_hash(root / "logs"), tree_hash(root / "memories")) == before  # a plan changes no memory or log
    assert not (root / "MEMORY.md").exists()
    assert ok(call(root, "plan"))["plan_id"] == planned["plan_id"]  # the same store: the same plan
    applied = ok(call(root, "dream", apply=True, plan_id=planned["plan_id"]))
    assert applied["applied"] is True
    assert [row for row in applied["actions"]] == [row for row in planned["actions"]]
    assert applied["index_sha256"] == planned["index_sha256"]
    assert applied["stats"]["created"] == planned["stats"]["created"] == 8


def test_a_plan_of_a_store_changed_since_is_refused_and_nothing_is_written(root):
    ok(call(root, "remember", text="The release train leaves on Tuesdays", type="project"))
    planned = ok(call(root, "plan"))
    ok(call(root, "remember", text="The release train was moved to Wednesdays", type="project"))
    before = tree_hash(root)
    line = error_line(call(root, "dream", apply=True, plan_id=planned["plan_id"]))
    assert f"the store changed since plan {planned['plan_id']} was made: nothing was applied" in line
    assert "call `dream` without `apply` for a new plan" in line and "--" not in line
    assert tree_hash(root) == before
    assert not list((root / "memories").rglob("*.md"))


def test_a_plan_that_would_come_out_differently_is_refused(root):
    """The fingerprint misses what is not a file of the store (the clock, the repository): the plan
    made again under the lock must decide what the kept one did, or nothing is applied."""
    ok(call(root, "remember", text="Backups go to the cold bucket", type="reference"))
    planned = ok(call(root, "plan"))
    kept = root / ".state" / "plans" / f"{planned['plan_id']}.json"
    document = json.loads(kept.read_text())
    kept.write_text(json.dumps({**document, "digest": "0" * 64}))
    line = error_line(call(root, "dream", apply=True, plan_id=planned["plan_id"]))
    assert "the dream plans differently now" in line and "nothing was applied" in line
    assert not list((root / "memories").rglob("*.md"))


@pytest.mark.parametrize("arguments, says", [
    ({"apply": True, "plan_id": "p0123456789abcdef"}, "no plan 'p0123456789abcdef' in this store"),
    ({"apply": True, "plan_id": "nonsense"}, "no plan 'nonsense'"),
    ({"plan_id": "p0123456789abcdef"}, "`plan_id` is for applying a plan"),
])
def test_a_plan_id_that_names_no_plan_is_refused(root, arguments, says):
    ok(call(root, "remember", text="The wiki lives at wiki.example.org", type="reference"))
    assert says in error_line(call(root, "dream", **arguments))


@pytest.mark.parametrize("tool, arguments, cli, says", [
    ("show", {"memory": "nowhere"}, "`auto-dream list`", "`list_memories` lists them"),
    ("recall", {"query": "   "}, "`auto-dream recall", 'e.g. query "deploy friday"'),
    ("forget", {"memory": "nowhere"}, "`auto-dream list`", "`list_memories` lists them"),
    ("resolve", {"id": "r0000000", "action": "keep"}, "`auto-dream review`", "the tool `review` lists them"),
    ("resolve", {"id": "r0000000", "action": "merge", "winner": "x.md"}, "--into", "merge takes `into`"),
])
def test_errors_name_the_tools_and_parameters_not_cli_flags(tmp_path, tool, arguments, cli, says):
    root = tmp_path / ".auto-dream"
    ok(call(root, "remember", text="The user lives in Lisbon", type="user"))
    ok(call(root, "dream", apply=True))
    line = error_line(call(root, tool, **arguments))
    assert says in line and cli not in line, line


def test_the_command_line_keeps_its_own_words(cli, root):
    assert "`auto-dream list` lists them" in cli("--root", root, "show", "nowhere").err

