"""`auto-dream mcp`: every tool through the MCP SDK's own client, in-process, and
the command itself spoken to over stdio."""

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from auto_dream.mcp_server import build_server
from conftest import tree_hash, write_memory_file

NO_LLM: dict[str, str] = {}  # the environment a dream sees: no API key, so no Claude


def session(root: Path, steps) -> Any:
    """Run `steps(client)` against a fresh in-process server for `root`."""

    async def run() -> Any:
        async with Client(build_server(root, NO_LLM)) as client:
            return await steps(client)

    return anyio.run(run)


def call(root: Path, tool: str, **arguments: Any):
    async def steps(client):
        return await client.call_tool(tool, arguments)

    return session(root, steps)


def ok(result) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content  # what a text-only client reads
    return result.structured_content


def error_line(result) -> str:
    assert result.is_error
    [content] = result.content
    assert "\n" not in content.text and "Traceback" not in content.text
    return content.text


def test_every_tool_is_listed_with_a_description_and_its_hints(root):
    async def steps(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in session(root, steps)}
    assert set(tools) == {"remember", "recall", "show", "list_memories", "check", "plan", "dream", "undo", "review",
                          "resolve", "forget"}
    for tool in tools.values():
        assert len(tool.description) > 80, tool.name  # enough for an agent to act on
    for name in ("list_memories", "check", "review"):
        assert tools[name].annotations.read_only_hint is True
    for name in ("recall", "show", "plan", "remember"):  # they write: the consult log, the kept plan, the log
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is False, name
    assert "consult log" in tools["recall"].description and "consult log" in tools["show"].description
    for name in ("dream", "undo", "resolve", "forget"):
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is True
    assert set(tools["recall"].input_schema["properties"]) == {"query", "limit", "type", "archived", "offset"}
    assert tools["recall"].input_schema["required"] == ["query"]


def test_remember_dream_recall_show_list_check_and_undo(tmp_path):
    root = tmp_path / ".auto-dream"  # no store yet: the first remember makes it, as append does
    remembered = ok(call(root, "remember", text="The invoice service runs on port 7070", type="project"))
    assert remembered["type"] == "project" and remembered["text"] == "The invoice service runs on port 7070"
    assert datetime.fromisoformat(remembered["time"]).utcoffset() is not None  # a time says its offset
    ok(call(root, "remember", text="The user prefers short answers", type="user", time="2026-11-30 09:15"))
    assert ok(call(root, "check"))["undistilled_entries"] == 2

    planned = ok(call(root, "dream"))
    assert planned["applied"] is False and planned["dry_run"] is True
    assert not list((root / "memories").rglob("*.md"))  # a plan writes nothing
    applied = ok(call(root, "dream", apply=True))
    assert applied["applied"] is True and applied["stats"]["created"] == 2

    hits = ok(call(root, "recall", query="invoice port"))["memories"]
    assert [hit["name"] for hit in hits] == ["The invoice service runs on port 7070"]
    assert set(hits[0]) == {"path", "name", "type", "description", "score", "snippet", "pending"}
    assert ok(call(root, "recall", query="answers", type="project"))["memories"] == []
    shown = ok(call(root, "show", memory=hits[0]["path"]))
    assert shown["body"].strip().startswith("The invoice service runs on port 7070")
    assert ok(call(root, "show", memory="The user prefers short answers"))["type"] == "user"
    listed = ok(call(root, "list_memories"))["memories"]
    assert sorted(m["type"] for m in listed) == ["project", "user"]
    assert [m["type"] for m in ok(call(root, "list_memories", type="user"))["memories"]] == ["user"]
    consulted = (root / ".state" / "consult.jsonl").read_text().splitlines()
    assert len(consulted) == 4  # two recalls, two shows: the consult gate sees the agent's lookups

    undone = ok(call(root, "undo"))
    assert undone["run_id"] == applied["run_id"] and undone["restored"]
    assert not list((root / "memories").rglob("*.md"))


def test_memory_md_is_a_resource(root):
    ok(call(root, "remember", text="Deploys happen on Fridays", type="project"))

    async def before(client):
        listed = [str(resource.uri) for resource in (await client.list_resources()).resources]
        try:
            await client.read_resource("auto-dream://MEMORY.md")
        except Exception as error:  # no MEMORY.md until the first dream: an error, not an empty index
            return listed, str(error)
        return listed, None

    listed, missing = session(root, before)
    assert listed == ["auto-dream://MEMORY.md"]
    if (root / "MEMORY.md").exists():
        (root / "MEMORY.md").unlink()
        listed, missing = session(root, before)
    assert missing and "no MEMORY.md" in missing
    ok(call(root, "dream", apply=True))

    async def read(client):
        return (await client.read_resource("auto-dream://MEMORY.md")).contents[0].text

    assert session(root, read) == (root / "MEMORY.md").read_text()
    assert "Deploys happen on Fridays" in session(root, read)


@pytest.mark.parametrize("tool, arguments, says", [
    ("remember", {"text": "x is y", "type": "opinion"}, "`type`: Input should be 'user', 'feedback', 'project' or"),
    ("remember", {"text": "   "}, "empty"),
    ("remember", {"text": "A fact", "time": "next tuesday-ish"}, "next tuesday-ish"),
    ("recall", {"query": "   "}, "empty query"),
    ("recall", {"query": "deploy", "type": "notes"}, "`type`: Input should be 'user'"),
    ("recall", {"query": "deploy", "limit": 0}, "`limit`: Input should be greater than or equal to 1"),
    ("recall", {"query": "deploy", "limit": 51}, "`limit`: Input should be less than or equal to 50"),
    ("list_memories", {"offset": -1}, "`offset`: Input should be greater than or equal to 0"),
    ("show", {"memory": "no such memory"}, "no memory at 'no such memory'"),
    ("list_memories", {"type": "opinion"}, "`type`: Input should be"),
    ("undo", {}, "no"),
])
def test_bad_calls_are_tool_errors_of_one_line_and_the_server_goes_on(root, tool, arguments, says):
    before = tree_hash(root)

    async def steps(client):
        failed = await client.call_tool(tool, arguments)
        after = await client.call_tool("remember", {"text": "Still serving", "type": "project"})
        return failed, after

    failed, after = session(root, steps)
    assert says in error_line(failed)
    assert ok(after)["text"] == "Still serving"
    assert before != tree_hash(root)  # only the second call wrote anything


def test_a_bad_call_changes_no_file(root):
    ok(call(root, "remember", text="A fact", type="project"))
    before = tree_hash(root)
    error_line(call(root, "remember", text="x", type="opinion"))
    error_line(call(root, "recall", query=""))
    assert tree_hash(root) == before


@pytest.mark.slow  # a child process holds the lock
def test_a_dream_that_finds_the_lock_held_is_a_tool_error_and_changes_nothing(root, sleeper):
    ok(call(root, "remember", text="Release notes live in docs/releases.md", type="reference"))
    lock = root / ".state" / "dream.lock"
    lock.write_text(json.dumps({"pid": sleeper.pid, "started": datetime.now().astimezone().isoformat()}))
    before = tree_hash(root)
    line = error_line(call(root, "dream", apply=True))
    assert f"another dream is running (pid {sleeper.pid}, started " in line and line.endswith(f"its lock is {lock}")
    assert "another dream is running" in error_line(call(root, "undo"))
    assert tree_hash(root) == before
    assert not ok(call(root, "dream"))["applied"]  # a plan reads only: it needs no lock
    lock.unlink()
    assert ok(call(root, "dream", apply=True))["stats"]["created"] == 1


def test_two_dreams_asked_of_one_server_at_once_run_one_at_a_time(root):
    """The server answers calls in threads of one process: the dream lock keeps them apart too."""
    for number in range(30):
        ok(call(root, "remember", text=f"Service number {number} listens on port {7000 + number}", type="project"))

    async def steps(client):
        results = []

        async def one():
            results.append(await client.call_tool("dream", {"apply": True}))

        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(one)
        return results

    results = session(root, steps)
    done = [result for result in results if not result.is_error]
    assert done, [result.content for result in results]
    for result in results:
        if result.is_error:
            assert "another dream is running" in error_line(result)
    created = sum(ok(result)["stats"]["created"] for result in done)
    assert created == len(list((root / "memories").rglob("*.md"))) == 30


def test_a_claude_code_folder_is_served_in_place(tmp_path):
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "project_deploy_day.md",
                      "---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\n"
                      "The team deploys to production on Friday.\n")
    (folder / "MEMORY.md").write_text("# Memory\n- [Deploy day](project_deploy_day.md) — Fridays\n")
    hits = ok(call(folder, "recall", query="deploy"))["memories"]
    assert [hit["path"] for hit in hits] == ["project_deploy_day.md"]

    async def read(client):
        return (await client.read_resource("auto-dream://MEMORY.md")).contents[0].text

    assert session(folder, read) == (folder / "MEMORY.md").read_text()


@pytest.mark.slow
def test_the_command_speaks_mcp_over_stdio(tmp_path):
    """`auto-dream mcp --root R` as a subprocess: initialize, list the tools, remember, and recall
    what was remembered (after a dream)."""
    root = tmp_path / "store" / ".auto-dream"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("AUTO_DREAM_ROOT", None)
    server = StdioServerParameters(command=sys.executable, args=["-m", "auto_dream", "mcp", "--root", str(root)],
                                   env=env, cwd=str(tmp_path))

    async def run():
        async with Client(server, mode="legacy") as client:  # the initialize handshake every client speaks
            names = {tool.name for tool in (await client.list_tools()).tools}
            remembered = await client.call_tool("remember", {"text": "The cache lives on redis-7 in eu-west-1",
                                                             "type": "reference"})
            dreamed = await client.call_tool("dream", {"apply": True})
            found = await client.call_tool("recall", {"query": "where is the cache"})
            return names, remembered, dreamed, found

    names, remembered, dreamed, found = anyio.run(run)
    assert "recall" in names and "remember" in names
    ok(remembered)
    ok(dreamed)
    assert [hit["name"] for hit in ok(found)["memories"]] == ["The cache lives on redis-7 in eu-west-1"]


def test_the_mcp_command_refuses_bad_usage_with_one_line(cli, tmp_path):
    result = cli("mcp", "--root", tmp_path / "x", "--port", "80")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1


def test_a_large_store_is_answered_first_and_checked_in_a_thread_after(root, monkeypatch):
    """Past store.recall.FULL_CHECK_FILES (lowered here) the server checks the folders before it
    answers and every file in a thread after: a file written in place is found by a later recall."""
    import time

    import auto_dream.store.recall_index as recall_index

    monkeypatch.setattr(recall_index, "FULL_CHECK_FILES", 3)
    for number in range(6):
        write_memory_file(root, f"memories/project/note{number}.md",
                          f"---\nname: Note {number}\ntype: project\n---\nOrdinary text {number}.\n")
    back = time.time() - 60  # settled folders: recorded as they are (store.recall.RACY_NS)
    for folder in (root / "memories", root / "memories" / "project"):
        os.utime(folder, (back, back))

    async def steps(client):
        assert len((await client.call_tool("recall", {"query": "ordinary"})).structured_content["memories"]) == 6
        with (root / "memories/project/note3.md").open("a") as file:  # in place: the folder is as it was
            file.write("Now about a platypus.\n")
        found = []
        deadline = time.monotonic() + 30
        while not found and time.monotonic() < deadline:
            found = (await client.call_tool("recall", {"query": "platypus"})).structured_content["memories"]
            await anyio.sleep(0.05)
        return found

    assert [hit["path"] for hit in session(root, steps)] == ["memories/project/note3.md"]


class Wire:
    """`auto-dream mcp --root R` as a real subprocess, spoken to a raw line at a time. Its standard
    output is read in a thread, and an answer is waited for until a deadline: a request the
    server drops fails the test instead of hanging it."""

    DEADLINE = 20  # seconds for one answer; a dropped request is never answered at all

    def __init__(self, process: "subprocess.Popen[bytes]"):
        import queue
        import threading

        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()
        answer = self.ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}))
        assert answer["id"] == 0 and "result" in answer
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str | bytes) -> None:
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def ask(self, line: str | bytes) -> Any:
        """Send one line and read the next line the server writes, as JSON (an integer too long for
        Python's int is kept as its digits)."""
        import queue

        self.send(line)
        try:
            answer = self.lines.get(timeout=self.DEADLINE)
        except queue.Empty:
            raise AssertionError(f"no answer to {line[:120]!r}") from None
        return json.loads(answer, parse_int=lambda digits: int(digits) if len(digits) < 100 else digits)

    def call(self, ident: int, tool: str, arguments: str) -> dict[str, Any]:
        """A tools/call whose arguments are given as raw JSON text (escapes as the client wrote them)."""
        answer = self.ask(f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
                          f'"params":{{"name":"{tool}","arguments":{arguments}}}}}')
        assert answer["id"] == ident, answer
        return answer["result"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def serve_over_stdio(root: Path, home: Path) -> "subprocess.Popen[bytes]":
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg")}
    return subprocess.Popen([sys.executable, "-m", "auto_dream", "mcp", "--root", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)


@pytest.fixture
def wire(root, isolated_env):
    served = Wire(serve_over_stdio(root, isolated_env))
    yield served
    served.close()


LONG_ID = "9" * 4_301  # one digit more than Python turns into an int (sys.get_int_max_str_digits)


@pytest.mark.slow  # starts a child Python
@pytest.mark.parametrize("line, ident, code", [
    pytest.param('{"jsonrpc":"2.0","id":3,"method":', None, -32700, id="json cut short"),  # the id cannot be told
    pytest.param('{"jsonrpc":"2.0","id":3,"method":"ping"} trailing', None, -32700, id="json and more"),
    pytest.param('{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}', 4, -32602, id="params an array"),
    pytest.param('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"all"}', 5, -32600, id="params a string"),
    pytest.param('{"jsonrpc":"1.0","id":6,"method":"tools/list"}', 6, -32600, id="jsonrpc 1.0"),
    pytest.param('{"jsonrpc":"2.0","id":{"n":7},"method":"tools/list"}', None, -32600, id="id an object"),
    pytest.param('{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600, id="id a boolean"),
    pytest.param('{"jsonrpc":"2.0","id":8.5,"method":"ping"}', 8.5, -32600, id="id a fraction"),
    pytest.param('{"jsonrpc":"2.0","id":' + LONG_ID + ',"method":"ping"}', LONG_ID, -32600, id="id of 4301 digits"),
    pytest.param('{"jsonrpc":"2.0","id":9,"method":42}', 9, -32600, id="method a number"),
    pytest.param('{"jsonrpc":"2.0","id":10}', 10, -32600, id="no method"),
    pytest.param('"ping"', None, -32600, id="not an object"),
])
def test_a_request_the_sdk_transport_drops_gets_a_json_rpc_error(wire, line, ident, code):
    """The SDK's stdio transport drops every line its parser refuses, and the client waits for
    ever; here each is answered, with the request's id when JSON-RPC allows it as one, and the
    server goes on serving."""
    answer = wire.ask(line)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == ident and answer["error"]["code"] == code, answer
    assert "\n" not in answer["error"]["message"]
    assert wire.ask('{"jsonrpc":"2.0","id":"after","method":"ping"}') == {"jsonrpc": "2.0", "id": "after",
                                                                          "result": {}}


@pytest.mark.slow  # starts a child Python
def test_a_batch_is_answered_for_each_request_in_it(wire):
    """MCP has no batches (since 2025-06-18): each request in one gets an error with its id, a
    notification none, and an empty batch one error with id null."""
    answers = wire.ask('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},'
                       '{"jsonrpc":"2.0","id":"two","method":"tools/list"}]')
    assert [(answer["id"], answer["error"]["code"]) for answer in answers] == [(1, -32600), ("two", -32600)]
    assert wire.ask("[]")["error"]["code"] == -32600


@pytest.mark.slow  # starts a child Python
@pytest.mark.parametrize("tool, arguments, says", [
    pytest.param("remember", r'{"text":"Deploys ship on Fridays \ud83d"}', "not valid Unicode", id="emoji cut in half"),
    pytest.param("remember", '{"text":"The caf\xe9 opens at nine"}', "not valid Unicode", id="latin-1 byte"),
    pytest.param("recall", r'{"query":"deploy \ud83d"}', "not valid Unicode", id="recall emoji cut in half"),
    pytest.param("recall", '{"query":"caf\xe9"}', "not valid Unicode", id="recall latin-1 byte"),
    pytest.param("show", r'{"memory":"memories/project/\udce9.md"}', "not valid Unicode", id="show lone surrogate"),
    pytest.param("remember", r'{"text":"x","type":"\ud83d"}', "`type`: Input should be", id="type lone surrogate"),
])
def test_text_that_is_not_unicode_is_a_tool_error_and_changes_nothing(wire, root, tool, arguments, says):
    """A lone surrogate escape (an emoji cut in half, as JavaScript clients send it) and a byte
    that is not UTF-8 reach the tool, which refuses them in one line as the command line does."""
    before = tree_hash(root)
    raw = arguments.encode("utf-8", "surrogateescape") if "\xe9" not in arguments else arguments.encode("latin-1")
    answer = wire.ask(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' + tool.encode()
                      + b'","arguments":' + raw + b"}}")
    assert answer["id"] == 1 and answer["result"]["isError"] is True, answer
    [content] = answer["result"]["content"]
    assert says in content["text"] and "\n" not in content["text"] and "Traceback" not in content["text"]
    assert tree_hash(root) == before
    remembered = wire.call(2, "remember", '{"text":"Still serving","type":"project"}')
    assert remembered["isError"] is False


def test_the_agent_decides_the_review_queue_through_the_tools(tmp_path):
    """A dream lists a conflict; review shows both quotes; resolve supersede archives the loser;
    undo restores it; keep is remembered across dream --full; editing one side raises the pair again."""
    root = tmp_path / ".auto-dream"
    for text in ("Staging deploys happen on Thursday afternoons", "Staging deploys happen on Wednesday afternoons"):
        ok(call(root, "remember", text=text, type="project", time="2026-11-30 10:00"))

    async def dream_and_review(client):
        applied = ok(await client.call_tool("dream", {"apply": True}))
        return applied, ok(await client.call_tool("review", {}))

    applied, listed = session(root, dream_and_review)
    assert applied["stats"]["review_pending"] == 1
    (item,) = listed["items"]
    assert item["kind"] == "conflict" and item["evidence"] == [
        "Staging deploys happen on Thursday afternoons", "Staging deploys happen on Wednesday afternoons"]
    loser, winner = item["memories"]
    assert ok(call(root, "check"))["review_pending"] == 1

    decided = ok(call(root, "resolve", id=item["id"], action="supersede", winner=winner,
                      reason="the team moved staging deploys to Wednesday"))
    assert [(a["kind"], a["path"], a["target"]) for a in decided["actions"] if a["kind"] != "index"] == [
        ("supersede", loser, winner)]
    assert not (root / loser).exists() and ok(call(root, "review"))["items"] == []
    ok(call(root, "undo"))
    assert (root / loser).is_file() and [i["id"] for i in ok(call(root, "review"))["items"]] == [item["id"]]

    ok(call(root, "resolve", id=item["id"], action="keep", reason="two environments"))
    assert ok(call(root, "review"))["items"] == []
    store_dream = __import__("auto_dream").open_store(root).dream(full=True, llm=False)
    assert store_dream.report.stats.review_pending == 0 and store_dream.report.review == ()
    (root / winner).write_text((root / winner).read_text().replace("Wednesday afternoons", "Wednesday mornings"))
    ok(call(root, "dream", apply=True))
    assert [i["id"] for i in ok(call(root, "review"))["items"]] == [item["id"]]


def test_resolve_and_forget_refuse_in_one_line_and_change_nothing(tmp_path):
    root = tmp_path / ".auto-dream"
    ok(call(root, "remember", text="The user lives in Lisbon", type="user"))
    ok(call(root, "dream", apply=True))
    before = tree_hash(root)
    assert "no review item" in error_line(call(root, "resolve", id="r0000000", action="keep"))
    assert "`action`: Input should be 'keep', 'merge' or 'supersede'" in error_line(
        call(root, "resolve", id="r0000000", action="drop"))
    assert "no memory" in error_line(call(root, "forget", memory="nowhere"))
    assert tree_hash(root) == before
    forgotten = ok(call(root, "forget", memory="The user lives in Lisbon", reason="moved to Porto"))
    assert [a["kind"] for a in forgotten["actions"] if a["kind"] != "index"] == ["archive"]
