"""`auto-dream mcp`: the store's commands as an MCP server over stdio, for any MCP client
(Claude Code, Claude Desktop, OpenClaw, Codex): remember, recall, show, list_memories, check,
dream, undo, review, resolve, forget, and MEMORY.md as a resource.

Built on the official `mcp` Python SDK, 2.x, whose high-level server is `MCPServer` (1.x
called it FastMCP: https://py.sdk.modelcontextprotocol.io/v2/migration/#fastmcp-renamed-to-mcpserver);
a tool's parameters are its schema, its docstring its description, and `ToolAnnotations`
its hints (the installed SDK's own `mcp.server.mcpserver.server.MCPServer.tool` and
`mcp_types.ToolAnnotations`). Each tool is one call of the library (api.Store), which opens
the store as it is at that moment, as a command line run does.

A failure a user can act on (bad input, a store in the way, the dream lock held) comes back
as a tool error carrying the one line the command line would print (errors.failure_line);
the SDK answers anything else with a bare "Error executing tool" and logs the traceback on
stderr. Either way the server goes on serving. Standard output is the protocol's: nothing
here prints, and the library never does.

The wire is ours (`serve`, `stdio_streams`), not the SDK's stdio transport: that one drops
every line its parser refuses without a word — a lone surrogate escape (an emoji cut in half,
as JavaScript clients send it), malformed JSON, an envelope of the wrong shape, an id too
long for an int — and the client waits for ever. Here every line is screened first
(`screen`): malformed JSON is answered -32700 with id null, a request MCP cannot take
-32600 (or -32602) with its id, and text that is not Unicode goes on to the tool, which
refuses it in one line as the command line does.

Only this module imports `mcp` (pyproject's import contracts), and only `auto-dream mcp`
imports this module: `append` and `recall` never load the SDK.
"""

import json
import math
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCResponse,
    ToolAnnotations,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from auto_dream.api import Store
from auto_dream.errors import failure_line
from auto_dream.store.paths import layout_at, read_regular
from auto_dream.store.recall import run_owed_checks_here

INSTRUCTIONS = """\
auto-dream is your long-term memory, kept as Markdown files in a store. Read the resource \
MEMORY.md (the index) at the start of a session. While you work, `remember` each fact worth \
keeping (who the user is, a correction, a decision, where something lives) as one short, \
self-contained sentence with absolute dates. Before asking the user something they may have \
told you before, `recall` it, then `show` the memory you want. `dream` distils what was \
remembered into memory files and rebuilds MEMORY.md: it only plans unless asked to apply, \
and `undo` reverses an applied dream. Dream acts only when certain and leaves the rest to you: \
when the user asks to tidy memory, or at a natural pause, call `review` and decide what you \
can with `resolve` (`forget` archives a memory that is wrong); each decision can be undone."""

COMPACT = (",", ":")  # JSON as the SDK writes it: no spaces
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def build_server(root: Path, environ: dict[str, str] | None = None) -> MCPServer:
    """The server for the store at `root` (made by the first `remember` if it is not there yet).
    `environ` is where a dream finds ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (default: this
    process's environment)."""
    store = Store(root)
    env = os.environ if environ is None else environ
    server = MCPServer("auto-dream", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def remember(text: str, type: str | None = None, time: str | None = None) -> dict[str, Any]:
        """Add one fact to today's log (the next dream distils it into a memory). `text`: one
        short, self-contained statement, with absolute dates ("2026-12-15", not "next Monday").
        `type`: user (who the user is, their preferences), feedback (a correction or instruction
        about how to work; add "Reason:" and "How to apply:" lines when known), project (a decision
        or context of the work) or reference (where something lives: URLs, hosts, dashboards);
        leave it out to let dream decide. `time`: when it was learnt, if not now (ISO 8601,
        "YYYY-MM-DD HH:MM", or "yesterday 15:00", "2h ago"). Never remember secrets. Returns the
        time with its UTC offset."""
        entry = _call(store.append, text, type, time)
        return {"id": entry.id, "time": store.entry_time(entry).isoformat(timespec="seconds"), "type": entry.type,
                "text": entry.text}

    @server.tool(annotations=READ_ONLY)
    def recall(query: str, limit: int = 10, type: str | None = None, archived: bool = False) -> dict[str, Any]:
        """Search every memory, past what MEMORY.md lists: the memories that best answer `query`,
        best first, each with its path, name, type, description, score and a snippet with the
        matched words in **bold**. Any word may match; English words match by their stem, Chinese
        and Japanese by two-character words. `type` keeps one type (user, feedback, project,
        reference); `archived` searches the memories dream retired too. Open one whole with
        `show`. The lookup is recorded: a memory looked up is kept from being retired as stale."""
        hits = _call(store.recall, query, limit, type, archived, defer=True)
        _check_after()
        return {"memories": [hit.as_json() for hit in hits]}

    @server.tool(annotations=READ_ONLY)
    def show(memory: str) -> dict[str, Any]:
        """One memory, whole: `memory` is its path as recall, list_memories and MEMORY.md give
        it, or its name. Returns its path, name, type, description, mtime, body and sources."""
        found = _call(store.show, memory, defer=True)
        _check_after()
        return {"path": found.path, "name": found.name, "type": found.type, "description": found.description,
                "mtime": found.mtime.isoformat(timespec="seconds"), "body": found.body,
                "sources": list(found.sources)}

    @server.tool(annotations=READ_ONLY)
    def list_memories(type: str | None = None, archived: bool = False) -> dict[str, Any]:
        """Every memory (path, name, type, description, mtime, age in days), newest first within
        each type; `type` keeps one type, `archived` lists the retired memories instead."""
        result = _call(store.list, type, archived)
        return {"memories": [memory.as_json() for memory in result.memories]}

    @server.tool(annotations=READ_ONLY)
    def check() -> dict[str, Any]:
        """The store's health: entries waiting for a dream, the last dream, whether one is due,
        whether MEMORY.md is in sync, how many memories decayed (unused for decay_days), and each
        memory's freshness and staleness (with the references it names that are gone)."""
        return _call(store.check).as_json()

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def dream(apply: bool = False, propose: bool = False, if_due: bool = False) -> dict[str, Any]:
        """Distil the remembered facts into memories, merge duplicates, resolve contradictions
        (newer wins), retire stale memories and rebuild MEMORY.md. Without `apply` nothing is
        written: the report is the plan. `apply`: carry it out (every run can be undone with
        `undo`; retired memories go to the archive). `propose`: apply only what adds (new
        memories, merges) and list retirements as proposals. `if_due`: only when a dream is due
        (a day since the last one and five facts waiting). Fails while another dream runs."""
        outcome = _call(store.dream, dry_run=not apply, propose=propose, if_due=if_due,
                        api_key=env.get("ANTHROPIC_API_KEY"), base_url=env.get("ANTHROPIC_BASE_URL"))
        if outcome.report is None:
            return {"dream_due": False, "reason": outcome.not_due}
        return {"applied": apply, **outcome.report.as_json()}

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def undo(run_id: str | None = None) -> dict[str, Any]:
        """Reverse an applied dream (default: the last one): every file it touched is put back
        byte for byte. Stops, changing nothing, if a file was changed by someone since the run
        (`auto-dream undo --force` on the command line overrides that; this tool never does).
        A file changed while it runs is left as it is: `left` names it, `warnings` say why."""
        restored = _call(store.undo, run_id)
        return {"run_id": restored.run_id, "restored": restored.restored, "interrupted": restored.interrupted,
                "left": restored.left, "warnings": restored.warnings}

    @server.tool(annotations=READ_ONLY)
    def review() -> dict[str, Any]:
        """The decisions dream left for you: pairs of memories that may say the same thing
        (`duplicate`) or contradict each other (`conflict`), each with the deciding sentence of
        both quoted (`evidence`, in the order of `memories`). Read both; when meaning is clear,
        decide with `resolve`; when it is not, leave the item (or ask the user). `changed`: items a
        memory of which changed since; the next dream judges them again."""
        return _call(store.review).as_json()

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def resolve(id: str, action: str, into: str | None = None, winner: str | None = None,
                reason: str = "") -> dict[str, Any]:
        """Decide one review item (`id` from `review`). `action`: "keep" when both are true and
        different (not asked again while both stay as they are); "merge" with `into` = the path of
        the memory that stays, when they say the same thing (the other's whole text is carried in,
        then it is archived); "supersede" with `winner` = the path of the memory that is right now,
        when one replaces the other (the other is archived). `reason`: one line on why. Journaled:
        `undo` reverses it."""
        outcome = _call(store.resolve, id, action, into=into, winner=winner, reason=reason, by="the agent")
        return outcome.report.as_json()

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    def forget(memory: str, reason: str = "") -> dict[str, Any]:
        """Archive a memory that is wrong (the user says so, or it is plainly false now): `memory`
        is its path or name, `reason` why. It leaves MEMORY.md and recall; its file is kept in the
        archive. Journaled: `undo` reverses it."""
        outcome = _call(store.forget, memory, reason, by="the agent")
        return outcome.report.as_json()

    @server.resource("auto-dream://MEMORY.md", name="MEMORY.md", mime_type="text/markdown",
                     description="The store's index: one line per memory, what to read at the start of a session.")
    def memory_index() -> str:
        try:
            text = read_regular(layout_at(root).index)  # never through a link, never waiting on a FIFO
        except Exception as error:
            failure = failure_line(error)
            if failure is None:
                raise
            raise ResourceError(failure[0]) from None
        if text is None:
            raise ResourceError(f"no MEMORY.md in {root} yet: remember something, then dream")
        return text.decode("utf-8", errors="replace")

    return server


def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)`, an error a user can act on turned into a tool error with its line."""
    try:
        return method(*args, **kwargs)
    except Exception as error:
        failure = failure_line(error)
        if failure is None:
            raise
        raise ToolError(failure[0]) from None


def _check_after() -> None:
    """A large store's check of every file (store.recall.with_recall_index's `defer`), run in a
    thread once this call has its answer: the agent is not kept waiting, and the next recall
    sees a file written in place."""
    threading.Thread(target=run_owed_checks_here, name="auto-dream full check", daemon=True).start()


def serve(root: Path) -> None:
    """Serve the store at `root` over stdio until the client closes the connection."""
    # MCPServer.run("stdio") would use the SDK's transport; 2.x has no public handle on the
    # low-level server it runs, and the SDK's own in-memory client takes it the same way
    # (mcp.client._memory: "TODO: Make `lowlevel_server` public").
    server = build_server(root)._lowlevel_server

    async def run() -> None:
        with claimed_stdio() as (reading, writing):
            async with stdio_streams(reading, writing) as (incoming, outgoing):
                await server.run(incoming, outgoing, server.create_initialization_options())

    anyio.run(run)


# ---------------------------------------------------------------- the wire


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The process's standard input and output, for the protocol alone, as the SDK's stdio
    transport keeps them (mcp.server.stdio): while serving, descriptor 0 reads the null device
    and 1 writes to standard error, so nothing else in the process (a stray print, a child)
    reads or writes the wire; both are put back after."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    diverted: list[tuple[int, int]] = []  # (the wire's copy, the descriptor it was)
    with suppress(OSError):  # no null device, no stderr: served in place all the same
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            for descriptor, diversion, wire in ((0, null, wire_in), (1, 2, wire_out)):
                os.dup2(diversion, descriptor)
                diverted.append((wire, descriptor))
        finally:
            os.close(null)
    try:
        # never closed here: a worker thread may still be blocked reading it (as the SDK notes)
        yield open(wire_in, "rb", closefd=False), open(wire_out, "wb", closefd=False)
    finally:
        for wire, descriptor in diverted:
            os.dup2(wire, descriptor)


@asynccontextmanager
async def stdio_streams(reading: BinaryIO, writing: BinaryIO) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage | str]]]:
    """The streams a low-level MCP server runs on, over newline-delimited JSON-RPC: each line
    read is screened (`screen`) and what the server may not see is answered here; the server's
    messages and those answers are written one line each, in one place, so they never mix."""
    to_server, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, to_client = anyio.create_memory_object_stream[SessionMessage | str](0)
    answers = outgoing.clone()  # the server closing its stream must not close the reader's
    lines = anyio.wrap_file(reading)
    out = anyio.wrap_file(writing)

    async def read() -> None:
        async with to_server, answers:
            try:
                async for line in lines:
                    verdict = screen(line)
                    if isinstance(verdict, str):
                        await answers.send(verdict)
                    elif verdict is not None:
                        await to_server.send(SessionMessage(verdict))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):  # the server stopped first
                pass

    async def write() -> None:
        async with to_client:
            async for item in to_client:
                await out.write((wire_text(item) + "\n").encode("utf-8"))
                await out.flush()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        yield incoming, outgoing


@dataclass(frozen=True)
class LongInteger:
    """A JSON integer of more digits than Python turns into an int (sys.get_int_max_str_digits):
    kept as written, so that an id of 4,301 digits is answered with that id."""

    digits: str


def _integer(digits: str) -> int | LongInteger:
    try:
        return int(digits)
    except ValueError:
        return LongInteger(digits)


def screen(line: bytes) -> JSONRPCMessage | str | None:
    """What to do with one line from the client: the message to serve; or the line to answer
    it with at once (a JSON-RPC error, or a batch's array of them); or None when nothing is owed
    (a blank line, a malformed reply to a request of the server's).

    A byte that is not UTF-8 stands as a lone surrogate, as a `\\ud83d` escape does: the tool
    given it refuses it in one line (bad input), as `auto-dream recall` refuses such bytes."""
    text = line.decode("utf-8", "surrogateescape")
    if not text.strip():
        return None
    try:
        message = json.loads(text.strip(), parse_int=_integer)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        return error_line(None, PARSE_ERROR, f"Parse error: {error}")
    if isinstance(message, list):
        return _batch(message)
    problem = _problem(message)
    if problem is not None:
        return error_line(*problem)
    try:
        return jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as error:
        if "method" not in message or "id" not in message:
            return None  # a notification or a reply: JSON-RPC answers neither
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:])
        return error_line(message["id"], INVALID_REQUEST, f"Invalid Request: {where}: {first['msg']}")


def _problem(message: object) -> tuple[object, int, str] | None:
    """(the id to answer with, the code, the message) when `message` is no JSON-RPC 2.0 message MCP
    takes; None when it is one."""
    if not isinstance(message, dict):
        return None, INVALID_REQUEST, "Invalid Request: a message is a JSON object"
    given = message.get("id")
    answer_to = _answerable(given)
    if message.get("jsonrpc") != "2.0":
        return answer_to, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "id" in message and not (isinstance(given, str) or type(given) is int):
        return answer_to, INVALID_REQUEST, f"Invalid Request: the id must be a string or an integer, not {_kind(given)}"
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return None  # a reply to a request of the server's
        return answer_to, INVALID_REQUEST, 'Invalid Request: no "method"'
    if not isinstance(message["method"], str):
        return answer_to, INVALID_REQUEST, f'Invalid Request: "method" must be a string, not {_kind(message["method"])}'
    params = message.get("params")
    if isinstance(params, list):
        return answer_to, INVALID_PARAMS, "Invalid params: MCP takes params by name, as an object, not an array"
    if params is not None and not isinstance(params, dict):
        return answer_to, INVALID_REQUEST, f'Invalid Request: "params" must be an object, not {_kind(params)}'
    return None


def _batch(messages: list[object]) -> str | None:
    """A batch (JSON-RPC 2.0; MCP has none since 2025-06-18): an error for each element owed an
    answer, in one array; nothing when they are all notifications."""
    if not messages:
        return error_line(None, INVALID_REQUEST, "Invalid Request: an empty batch")
    answers = []
    for message in messages:
        if isinstance(message, dict) and "id" not in message and _problem(message) is None:
            continue  # a notification is never answered
        problem = _problem(message) or (_answerable(message.get("id") if isinstance(message, dict) else None),
                                        INVALID_REQUEST, "Invalid Request: MCP takes one message per line, not a batch")
        answers.append(error_line(*problem))
    return f"[{','.join(answers)}]" if answers else None


def _answerable(given: object) -> object:
    """The id an error answers with: the request's own, when JSON-RPC allows it as an id (a
    string or a number); else null, as JSON-RPC says when the id cannot be told."""
    if isinstance(given, (str, LongInteger)) or (isinstance(given, (int, float)) and not isinstance(given, bool)):
        return None if isinstance(given, float) and not math.isfinite(given) else given
    return None


def _kind(value: object) -> str:
    if isinstance(value, LongInteger):
        return f"an integer of {len(value.digits.lstrip('-')):,} digits"
    names = {dict: "an object", list: "an array", bool: "a boolean", float: "a fraction", int: "a number",
             str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def error_line(answer_to: object, code: int, message: str) -> str:
    """A JSON-RPC error response, as the line it is written as (the id as the client wrote it)."""
    error = json.dumps({"code": code, "message": message}, separators=COMPACT)  # ASCII: a surrogate stays an escape
    ident = answer_to.digits if isinstance(answer_to, LongInteger) else json.dumps(answer_to)
    return f'{{"jsonrpc":"2.0","id":{ident},"error":{error}}}'


def wire_text(item: SessionMessage | str) -> str:
    """The line a message is written as. One that holds a lone surrogate (a tool echoing what the
    client sent) is not UTF-8: it goes as JSON's `\\ud83d` escape, as the client sent it."""
    if isinstance(item, str):
        return item
    message = item.message
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:
        try:
            return json.dumps(message.model_dump(mode="json", by_alias=True, exclude_unset=True), separators=COMPACT)
        except (ValueError, TypeError):
            if not isinstance(message, (JSONRPCResponse, JSONRPCError)):
                raise
            return error_line(message.id, INTERNAL_ERROR, "Internal error: the answer could not be written as JSON")
