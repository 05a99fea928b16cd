"""A real HTTP server on 127.0.0.1 that speaks the Anthropic Messages API, for tests and benches.

Point the SDK at it with ANTHROPIC_BASE_URL (or base_url=). Each POST /v1/messages takes the
next scripted behaviour — a good answer computed from the request, a status error with the
API's JSON error body, a timeout, a malformed body — or the default one when the script is
empty. Answers carry `usage` the way the real API reports it, prompt caching included.
"""

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BATCH = re.compile(r"<batch>\s*(\{.*\})\s*</batch>", re.DOTALL)
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
               500: "api_error", 529: "overloaded_error"}


def batch_of(request: dict) -> dict:
    """The JSON batch auto-dream put in the user message."""
    text = "".join(block["text"] for message in request["messages"] if message["role"] == "user"
                   for block in (message["content"] if isinstance(message["content"], list)
                                 else [{"type": "text", "text": message["content"]}])
                   if block.get("type") == "text")
    found = BATCH.search(text)
    assert found, "no <batch> in the request"
    return json.loads(found.group(1))


def one_memory_per_entry(batch: dict) -> dict:
    """A good answer: each entry becomes its own memory."""
    return {"operations": [
        {"op": "create", "entries": [e["id"]], "type": e.get("type") or "project",
         "name": e["text"][:40], "description": e["text"][:140], "body": e["text"], "reason": "a new fact"}
        for e in batch["entries"]]}


def grouped(batch: dict) -> dict:
    """A good answer that groups all entries of a type into one memory."""
    operations = []
    by_type: dict[str, list] = {}
    for entry in batch["entries"]:
        by_type.setdefault(entry.get("type") or "project", []).append(entry)
    for kind, entries in by_type.items():
        operations.append({"op": "create", "entries": [e["id"] for e in entries], "type": kind,
                           "name": f"{kind} notes", "description": f"{len(entries)} related {kind} facts",
                           "body": "\n".join(f"- {e['text']}" for e in entries), "reason": "related facts"})
    return {"operations": operations}


@dataclass
class Reply:
    status: int = 200
    body: object = None  # dict → JSON; str/bytes → sent as is
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


def answer(operations: dict | Callable[[dict], dict], tool: str = "record_operations") -> Callable[[dict], Reply]:
    """A 200 with a call of `tool` (record_operations); its input may be computed from the batch."""

    def reply(request: dict) -> Reply:
        tool_input = operations(batch_of(request)) if callable(operations) else operations
        return Reply(200, message(request, [{"type": "tool_use", "id": "toolu_01", "name": tool, "input": tool_input}]))

    return reply


def decide(decisions: dict | Callable[[dict], dict]) -> Callable[[dict], Reply]:
    """A 200 with a record_decisions tool call: the review of the pairs a dream was not certain of."""
    return answer(decisions, tool="record_decisions")


def error(status: int, message: str = "simulated failure", headers: dict | None = None) -> Callable[[dict], Reply]:
    body = {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
    return lambda request: Reply(status, body, {"retry-after-ms": "10", **(headers or {})})


def timeout(seconds: float) -> Callable[[dict], Reply]:
    return lambda request: Reply(200, message(request, []), delay=seconds)


def malformed(body: str = '{"id": "msg_01", "type": "message", "content": [') -> Callable[[dict], Reply]:
    return lambda request: Reply(200, body)


def text_only(text: str = "Sure! Here are the operations: create everything.") -> Callable[[dict], Reply]:
    return lambda request: Reply(200, message(request, [{"type": "text", "text": text}]))


def with_usage(behaviour: Callable[[dict], Reply], usage: object) -> Callable[[dict], Reply]:
    """`behaviour`, its answer's `usage` changed: a dict's fields replace those the answer has,
    anything else (null, a string) replaces the whole of it — an API that reports what it should not."""

    def reply(request: dict) -> Reply:
        sent = behaviour(request)
        reported = {**sent.body["usage"], **usage} if isinstance(usage, dict) else usage
        return Reply(sent.status, {**sent.body, "usage": reported}, sent.headers, sent.delay)

    return reply


def message(request: dict, content: list) -> dict:
    system = json.dumps(request.get("system", ""))
    rest = json.dumps(request.get("messages", "")) + json.dumps(request.get("tools", ""))
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": request.get("model", "unknown"),
            "content": content, "stop_reason": "tool_use" if content else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": len(rest) // 4, "output_tokens": len(json.dumps(content)) // 4,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": len(system) // 4}}


class FakeAnthropic:
    """The server; `script` holds the next behaviours, `requests` everything received."""

    def __init__(self, default: Callable[[dict], Reply] | None = None):
        self.script: deque = deque()
        self.default = default or answer(one_memory_per_entry)
        self.requests: list[dict] = []
        self.request_bytes: list[int] = []  # the size of each request body as sent
        self.headers: list[dict] = []
        self.cached = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                request = json.loads(raw or b"{}")
                fake.requests.append(request)
                fake.request_bytes.append(len(raw))
                fake.headers.append(dict(self.headers))
                if self.path.rstrip("/") != "/v1/messages":
                    reply = error(404, f"no route {self.path}")(request)
                else:
                    behaviour = fake.script.popleft() if fake.script else fake.default
                    reply = behaviour(request)
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body
                data = body if isinstance(body, bytes) else (
                    body.encode() if isinstance(body, str) else json.dumps(body).encode())
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", "req_fake")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout): as a real server would, carry on

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def enqueue(self, *behaviours: Callable[[dict], Reply]) -> "FakeAnthropic":
        self.script.extend(behaviours)
        return self

    def __enter__(self) -> "FakeAnthropic":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
