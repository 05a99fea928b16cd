"""`auto-dream mcp`: the store's commands as an MCP server over stdio, for any MCP client
(Claude Code, Claude Desktop, OpenClaw, Codex): remember, recall, show, list_memories, check, plan,
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
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import anyio
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
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
from pydantic import Field, ValidationError

from auto_dream.api import Store
from auto_dream.dream.decide import Resolution
from auto_dream.errors import failure_line
from auto_dream.store.files import read_regular
from auto_dream.store.paths import MemoryType, layout_at

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
# recall and show read only the store's memories, but record each lookup in .state/consult.jsonl
LOOKS_UP = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# plan writes only its kept plan, under .state/plans/: the same store planned twice keeps one file
PLANS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

# Every result stays under this many characters, as the client is given it (the SDK's text is JSON
# indented by two): Claude Code cuts a tool's output near 25,000 tokens.
RESULT_CHARS = 20_000
BODY_CHARS = 12_000  # of a memory's body, per `show`
LISTED = 20  # the rows of each list a dream, an undo or a decision names; the rest are counted

Type = Annotated[MemoryType | None, Field(description="Keep one type of memory: user, feedback, project or "
                                                      "reference. Leave it out for all types.")]
Archived = Annotated[bool, Field(description="Look at the memories dream retired (the archive) instead of the live "
                                             "ones (recall: as well as the live ones).")]
Offset = Annotated[int, Field(ge=0, description="How many items to skip: 0 for the first page, then the "
                                                "`next_offset` the last page returned.")]


def _limit_field(default: int, most: int, what: str) -> Any:
    return Field(ge=1, le=most, description=f"At most this many {what} in one result ({default} unless given, "
                 f"{most} at most); fewer when they would not fit in {RESULT_CHARS:,} characters. Page on "
                 f"with `offset`.")


# The `limit` of each tool that pages (written out as types, so that mypy reads them as types)
RecallLimit = Annotated[int, _limit_field(10, 50, "memories")]
ListLimit = Annotated[int, _limit_field(50, 200, "memories")]
CheckLimit = Annotated[int, _limit_field(50, 200, "memories' health")]
ReviewLimit = Annotated[int, _limit_field(20, 100, "items")]


class AutoDreamServer(MCPServer):
    """The SDK's server, with a call whose arguments fail the schema answered in one line that
    names the tool's parameter and what it takes (the SDK's own text is pydantic's, several lines)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if not isinstance(cause, ValidationError) or isinstance(error, UnexpectedToolError):
                raise
            problems = "; ".join(f"`{'.'.join(str(part) for part in problem['loc']) or 'arguments'}`: "
                                 f"{problem['msg']}" for problem in cause.errors())
            raise ToolError(f"Error executing tool {name}: {problems}") from cause


def build_server(root: Path, environ: dict[str, str] | None = None) -> MCPServer:
    """The server for the store at `root` (made by the first `remember` if it is not there yet).
    `environ` is where a dream finds ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (default: this
    process's environment)."""
    store = Store(root)
    env = os.environ if environ is None else environ
    server = AutoDreamServer("auto-dream", title="auto-dream: long-term memory", instructions=INSTRUCTIONS,
                             version=package_version(), log_level="WARNING")

    @server.tool(title="Remember a fact", annotations=ADDS)
    def remember(
        text: Annotated[str, Field(description="One short, self-contained statement, with absolute dates "
                                               "(\"2026-12-15\", not \"next Monday\"). Never a secret.")],
        type: Annotated[MemoryType | None, Field(description=(
            "user (who the user is, their preferences), feedback (a correction or instruction about how to work; "
            "add \"Reason:\" and \"How to apply:\" lines when known), project (a decision or context of the work) "
            "or reference (where something lives: URLs, hosts, dashboards). Leave it out to let dream decide."))]
        = None,
        time: Annotated[str | None, Field(description="When it was learnt, if not now: ISO 8601, \"YYYY-MM-DD "
                                                      "HH:MM\", \"yesterday 15:00\" or \"2h ago\".")] = None,
    ) -> dict[str, Any]:
        """Add one fact to today's log (the next dream distils it into a memory). Returns its id
        and the time with its UTC offset. Writes one line to the store's log; the first call makes
        the store."""
        entry = _call(store.append, text, type, time)
        return {"id": entry.id, "time": store.entry_time(entry).isoformat(timespec="seconds"), "type": entry.type,
                "text": entry.text}

    @server.tool(title="Search memories", annotations=LOOKS_UP)
    def recall(
        query: Annotated[str, Field(description="The words to look for; any may match.")],
        limit: RecallLimit = 10,
        type: Type = None,
        archived: Archived = False,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """Search every memory, past what MEMORY.md lists: the memories that best answer `query`,
        best first, each with its path, name, type, description, score and a snippet with the
        matched words in **bold**. English words match by their stem, Chinese and Japanese by
        two-character words. `more` and `next_offset` say when more match: call again with that
        `offset`. Open one whole with `show`. Writes: the lookup is appended to the store's
        consult log (.state/consult.jsonl), so a memory looked up is kept from being retired as stale."""
        hits = _call(store.recall, query, offset + limit + 1, type, archived=archived, defer=True)
        _check_after(store)
        rows = [hit.as_json() for hit in hits]
        return _paged({}, "memories", rows, offset, limit, total=None)

    @server.tool(title="Read one memory", annotations=LOOKS_UP)
    def show(
        memory: Annotated[str, Field(description="The memory's path, as recall, list_memories and MEMORY.md give "
                                                 "it, or its name.")],
        offset: Annotated[int, Field(ge=0, description=f"Where in the body to start, in characters (a body longer "
                                                       f"than {BODY_CHARS:,} comes in parts: pass the "
                                                       f"`next_offset` the last part returned).")] = 0,
    ) -> dict[str, Any]:
        """One memory, whole: its path, name, type, description, mtime, body and sources. A body
        longer than the result allows comes in parts (`body_chars` is its length; `next_offset`,
        when not null, where the next part starts). Writes: the lookup is appended to the store's
        consult log (.state/consult.jsonl), so the memory is kept from being retired as stale."""
        found = _call(store.show, memory, defer=True)
        _check_after(store)
        body = found.body
        part = body[offset:offset + BODY_CHARS]
        end = offset + len(part)
        document = {"path": found.path, "name": found.name, "type": found.type,
                    "description": _clip(found.description, 1_000), "mtime": found.mtime.isoformat(timespec="seconds"),
                    "body": part, "body_chars": len(body), "offset": offset,
                    "next_offset": end if end < len(body) else None, "sources": list(found.sources)}
        return _fit_lists(document, ("sources",))

    @server.tool(title="List memories", annotations=READ_ONLY)
    def list_memories(
        type: Type = None,
        archived: Archived = False,
        limit: ListLimit = 50,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """The memories (path, name, type, description, mtime, age in days), newest first within
        each type, a page at a time: `total` is how many there are, `more` and `next_offset` say
        where the next page starts. `type` keeps one type, `archived` lists the retired memories
        instead."""
        result = _call(store.list, type, archived=archived)
        return _paged({}, "memories", [memory.as_json() for memory in result.memories], offset, limit)

    @server.tool(title="Check the store's health", annotations=READ_ONLY)
    def check(
        limit: CheckLimit = 50,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """The store's health: entries waiting for a dream, the last dream, whether one is due,
        whether MEMORY.md is in sync, how many memories decayed (unused for decay_days), and,
        a page at a time, each memory's freshness and staleness (with the references it names
        that are gone): `total`, `more` and `next_offset` page through them."""
        document = _call(store.check).as_json()
        rows = document.pop("memories")
        return _paged(document, "memories", rows, offset, limit)

    Propose = Annotated[bool, Field(description="Apply only what adds (new memories, merges); list retirements as "
                                                "proposals.")]
    IfDue = Annotated[bool, Field(description="Only when a dream is due (a day since the last one and five facts "
                                              "waiting); else the result says why not.")]

    def dreamed(*, apply: bool, plan_id: str | None, propose: bool, if_due: bool) -> dict[str, Any]:
        outcome = _call(store.dream, dry_run=not apply, propose=propose, if_due=if_due,
                        api_key=env.get("ANTHROPIC_API_KEY"), base_url=env.get("ANTHROPIC_BASE_URL"),
                        keep_plan=not apply, plan_id=plan_id)
        if outcome.report is None:
            return {"dream_due": False, "reason": outcome.not_due}
        head: dict[str, Any] = {"applied": apply}
        if outcome.plan_id is not None:
            head["plan_id"] = outcome.plan_id
        return _fit_lists({**head, **outcome.report.as_json()}, REPORT_LISTS)

    @server.tool(title="Plan a dream (changes no memory)", annotations=PLANS)
    def plan(propose: Propose = False, if_due: IfDue = False) -> dict[str, Any]:
        """What a dream would do now, changing no memory, log or MEMORY.md: the memories it would
        create, merge, supersede and retire, and MEMORY.md's new sha256, with a `plan_id`. Apply
        exactly that plan with `dream` (`apply` true, that `plan_id`); if the store changes in
        between, that call applies nothing and says so. Writes: the plan is kept in the store's
        .state/plans/ (the newest 20). Lists name their first rows; `<list>_total` counts them all."""
        return dreamed(apply=False, plan_id=None, propose=propose, if_due=if_due)

    @server.tool(title="Dream: distil and tidy the memories", annotations=CHANGES)
    def dream(
        apply: Annotated[bool, Field(description="true: carry out a plan (the one `plan_id` names, else one made "
                                                 "now). false (the default): only plan, as the tool `plan` does.")]
        = False,
        plan_id: Annotated[str | None, Field(description="With apply: the `plan_id` that `plan` (or dream without "
                                                         "apply) returned; exactly that plan is applied. If the "
                                                         "store changed since, nothing is, and the error says so.")]
        = None,
        propose: Propose = False,
        if_due: IfDue = False,
    ) -> dict[str, Any]:
        """Distil the remembered facts into memories, merge duplicates, resolve contradictions
        (newer wins), retire stale memories and rebuild MEMORY.md. Without `apply` it only plans
        (as `plan` does: the result is the plan and its `plan_id`). With `apply` and a `plan_id`
        exactly that plan is carried out, or, if the store changed since, nothing is and the error
        says to plan again; `apply` without a `plan_id` plans and applies at once. Every applied
        run can be undone with `undo`; retired memories go to the archive. Lists name their first
        rows; `<list>_total` counts them all (the full report is in the run's folder under
        .state/runs/). Fails while another dream runs."""
        if plan_id is not None and not apply:
            raise ToolError("`plan_id` is for applying a plan: call dream with apply true and that plan_id (or "
                            "leave plan_id out to make a new plan)")
        return dreamed(apply=apply, plan_id=plan_id, propose=propose, if_due=if_due)

    @server.tool(title="Undo a dream or a decision", annotations=CHANGES)
    def undo(
        run_id: Annotated[str | None, Field(description="The run to reverse, as a dream, resolve or forget returned "
                                                        "it; leave it out for the last one.")] = None,
    ) -> dict[str, Any]:
        """Reverse an applied dream (default: the last one): every file it touched is put back
        byte for byte. Stops, changing nothing, if a file was changed by someone since the run
        (`auto-dream undo --force` on the command line overrides that; this tool never does).
        A file changed while it runs is left as it is: `left` names it, `warnings` say why."""
        restored = _call(store.undo, run_id)
        return _fit_lists({"run_id": restored.run_id, "restored": restored.restored,
                           "interrupted": restored.interrupted, "left": restored.left,
                           "warnings": restored.warnings}, ("restored", "left", "warnings"))

    @server.tool(title="List decisions left for review", annotations=READ_ONLY)
    def review(
        limit: ReviewLimit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """The decisions dream left for you, oldest first, a page at a time (`total`, `more`,
        `next_offset`): pairs of memories that may say the same thing (`duplicate`) or contradict
        each other (`conflict`), each with the deciding sentence of both quoted (`evidence`, in
        the order of `memories`). Read both; when meaning is clear, decide with `resolve`; when it
        is not, leave the item (or ask the user). `changed`: items a memory of which changed
        since; the next dream judges them again."""
        document = _call(store.review).as_json()
        rows = document.pop("items")
        changed = document.pop("changed")
        head = {"changed": changed[:LISTED], "changed_total": len(changed)}
        return _paged(head, "items", rows, offset, limit)

    @server.tool(title="Decide a review item", annotations=CHANGES)
    def resolve(
        id: Annotated[str, Field(description="The item's id, from `review`.")],
        action: Annotated[Resolution, Field(description=(
            "keep: both are true and different (not asked again while both stay as they are); merge: they say "
            "the same thing (name `into`); supersede: one replaces the other (name `winner`)."))],
        into: Annotated[str | None, Field(description="With merge: the path of the memory that stays; the other's "
                                                      "whole text is carried in, then it is archived.")] = None,
        winner: Annotated[str | None, Field(description="With supersede: the path of the memory that is right now; "
                                                        "the other is archived.")] = None,
        reason: Annotated[str, Field(description="One line on why.")] = "",
    ) -> dict[str, Any]:
        """Decide one review item (`id` from `review`) with `action` keep, merge or supersede.
        Journaled: `undo` reverses it."""
        outcome = _call(store.resolve, id, action, into=into, winner=winner, reason=reason, by="the agent")
        return _fit_lists(outcome.report.as_json(), REPORT_LISTS)

    @server.tool(title="Forget a wrong memory", annotations=CHANGES)
    def forget(
        memory: Annotated[str, Field(description="The memory's path or name.")],
        reason: Annotated[str, Field(description="Why it is wrong, in one line.")] = "",
    ) -> dict[str, Any]:
        """Archive a memory that is wrong (the user says so, or it is plainly false now). It
        leaves MEMORY.md and recall; its file is kept in the archive. Journaled: `undo` reverses it."""
        outcome = _call(store.forget, memory, reason, by="the agent")
        return _fit_lists(outcome.report.as_json(), REPORT_LISTS)

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


REPORT_LISTS = ("actions", "skipped", "deferred", "flagged", "review", "warnings", "distilled_entries")


def package_version() -> str:
    """auto-dream's version, as installed (the package's own when it is not installed)."""
    try:
        return metadata.version("auto-dream")
    except metadata.PackageNotFoundError:
        from auto_dream import __version__

        return __version__


def result_chars(document: dict[str, Any]) -> int:
    """How many characters the client is given for `document`: the SDK's text of it."""
    return len(pydantic_core.to_json(document, fallback=str, indent=2).decode())


def _paged(head: dict[str, Any], key: str, rows: list[Any], offset: int, limit: int,
           *, total: int | None | bool = True) -> dict[str, Any]:
    """`head` with a page of `rows` under `key`: rows[offset:offset + limit], fewer when the result
    would pass RESULT_CHARS (always one, cut down if it alone would), and where the next page starts.
    `total=None`: rows holds one more than the page when more match (recall), so no total is told."""
    page = rows[offset:offset + limit]
    while True:
        end = offset + len(page)
        more = end < len(rows)
        document = {**head, key: page}
        if total is not None:
            document["total"] = len(rows)
        document.update({"offset": offset, "next_offset": end if more else None, "more": more})
        size = result_chars(document)
        if size <= RESULT_CHARS or not page:
            return document
        if len(page) == 1:
            page = [_shrink(page[0], size - RESULT_CHARS)]
            continue
        page = page[:max(1, min(len(page) - 1, len(page) * RESULT_CHARS // size))]


def _shrink(row: Any, excess: int) -> Any:
    """One row cut down by at least `excess` characters: its longest texts shortened."""
    if not isinstance(row, dict):
        return row
    row = dict(row)
    for name in sorted((k for k, v in row.items() if isinstance(v, str)), key=lambda k: -len(row[k])):
        if excess <= 0:
            break
        cut = min(len(row[name]), excess + 200)
        row[name] = _clip(row[name], max(0, len(row[name]) - cut))
        excess -= cut
    return row


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:max(0, chars - 1)] + "…"


def _fit_lists(document: dict[str, Any], lists: tuple[str, ...]) -> dict[str, Any]:
    """`document` with each of its `lists` cut to its first LISTED rows, fewer while the result
    would pass RESULT_CHARS; a list cut is counted whole in `<list>_total`, and `more` is true."""
    document = dict(document)
    cut = False
    for name in lists:
        rows = document.get(name)
        if isinstance(rows, list) and len(rows) > LISTED:
            document[name], document[f"{name}_total"], cut = rows[:LISTED], len(rows), True
    while result_chars(document) > RESULT_CHARS:
        longest = max((name for name in lists if isinstance(document.get(name), list) and document[name]),
                      key=lambda name: result_chars({name: document[name]}), default=None)
        if longest is None:
            break
        rows = document[longest]
        document.setdefault(f"{longest}_total", len(rows))
        document[longest] = rows[:len(rows) // 2]
        cut = True
    if cut:
        document["more"] = True
    return document


# The command line's words in an error, and the MCP tools' and parameters' for them: the library
# says what its command line takes; an agent is told what it can call.
MCP_WORDING = (
    ("--limit must be", "`limit` must be"),
    ("`auto-dream recall WORDS` finds one by its words; `auto-dream list` lists them",
     "the tool `recall` finds one by its words; `list_memories` lists them"),
    ("e.g. `auto-dream recall deploy friday`", "e.g. query \"deploy friday\""),
    ("(as `auto-dream list --json` gives it)", "(as `list_memories` gives it)"),
    ("(`auto-dream list --json`)", "(as `list_memories` gives it)"),
    ("(`auto-dream list` shows them)", "(`list_memories` lists them)"),
    ("(`auto-dream review` lists them)", "(the tool `review` lists them)"),
    ("merge takes --into PATH, supersede takes --winner PATH", "merge takes `into`, supersede takes `winner`"),
    ("it takes no --into or --winner", "it takes no `into` or `winner`"),
    ("needs --into PATH", "needs `into`"),
    ("needs --winner PATH", "needs `winner`"),
    ("--at only back-dates an entry", "`time` only back-dates a fact"),
    ("(or use --no-llm)", "(or set llm = \"off\" in the store's config.toml)"),
    ("; use --force to restore anyway", "; `auto-dream undo --force` on the command line restores anyway"),
    ("run `auto-dream init` first", "`remember` a fact first (it makes the store)"),
    ("plan again with a dry dream", "call `dream` without `apply` for a new plan"),
    ("plan again", "call `dream` without `apply` for a new plan"),
)


def mcp_wording(line: str) -> str:
    """An error's line as an agent calling the tools is told it (MCP_WORDING)."""
    for cli, tools in MCP_WORDING:
        line = line.replace(cli, tools)
    return line


def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)`, an error a user can act on turned into a tool error with its
    line, in the tools' words (mcp_wording)."""
    try:
        return method(*args, **kwargs)
    except Exception as error:
        failure = failure_line(error)
        if failure is None:
            raise
        raise ToolError(mcp_wording(failure[0])) from None


def _check_after(store: Store) -> None:
    """A large store's check of every file (store.recall.with_recall_index's `defer`), run in a
    thread once this call has its answer: the agent is not kept waiting, and the next recall
    sees a file written in place."""
    threading.Thread(target=store.run_owed_checks, name="auto-dream full check", daemon=True).start()


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
