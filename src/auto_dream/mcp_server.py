"""`auto-dream mcp`: the store's commands as an MCP server over stdio, for any MCP client
(Claude Code, Claude Desktop, OpenClaw, Codex): remember, recall, show, list_memories, check,
dream, undo, and MEMORY.md as a resource.

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

Only this module imports `mcp` (pyproject's import contracts), and only `auto-dream mcp`
imports this module: `append` and `recall` never load the SDK.
"""

import os
import threading
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations

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
and `undo` reverses an applied dream."""

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
        leave it out to let dream decide. `time`: when it was learnt, if not now (ISO 8601 or
        "YYYY-MM-DD HH:MM"). Never remember secrets."""
        entry = _call(store.append, text, type, time)
        return {"id": entry.id, "time": entry.at.isoformat(timespec="seconds"), "type": entry.type,
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
    build_server(root).run("stdio")
