"""Claude as the distiller (docs/dream.md, --llm): batched, validated, cached, with a fallback that loses nothing.

The only module that imports `anthropic`, and only when a dream asks Claude: `append` and
every other command never load the SDK. Claude answers by calling one tool whose input is
a list of operations; the answer is validated against the batch (every entry exactly once,
only offered ids, valid types, length limits), retried once with the errors listed, and a
batch whose answer is still invalid, or whose call fails after the SDK's own retries, is
distilled by the deterministic distiller instead. Nothing in an answer becomes a path:
names go through the same slug rule as every memory. A name or description that the rules'
checks find cut or copied gives way to the rules' own (judge.titles).
"""

import heapq
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from auto_dream.distill.base import (
    DESCRIPTION_CHARS,
    NAME_CHARS,
    Create,
    DistillRequest,
    DistillResult,
    LlmUsage,
    MergeInto,
    NewMemory,
    Operation,
    ReviewCase,
    ReviewDecision,
    ReviewResult,
    Skip,
    Supersede,
)
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.judge.similarity import Profile, overlap
from auto_dream.judge.titles import description_problem, name_problem, title_of
from auto_dream.progress import NO_PROGRESS
from auto_dream.store.daylog import Entry
from auto_dream.store.memory import Memory
from auto_dream.store.paths import MEMORY_TYPES
from auto_dream.store.templates import load_template

if TYPE_CHECKING:  # the SDK itself is imported only when a dream asks Claude
    import anthropic
    from anthropic.types import MessageParam, TextBlockParam, ToolChoiceToolParam, ToolParam

Answer = TypeVar("Answer")  # what a checked tool answer is a list of: operations, decisions

TOOL_NAME = "record_operations"
CANDIDATES_PER_ENTRY = 5
CANDIDATE_OVERLAP = 0.25  # lower than the merge threshold: Claude judges, overlap only finds
CANDIDATE_BODY_CHARS = 600
OVERVIEW_MEMORIES = 100
BATCH_TEXT_CHARS = 24_000
MAX_OUTPUT_TOKENS = 8192

# A call reports at most this many tokens of each kind (a million-token context ten times
# over): more, or a count that is not a whole number from 0, is not what the API meant.
MAX_REPORTED_TOKENS = 10_000_000
_USAGE_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                 "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens"}

# Estimated USD per million tokens: (input, output, cache write, cache read).
PRICES = {"opus": (5.0, 25.0, 6.25, 0.50), "sonnet": (3.0, 15.0, 3.75, 0.30), "haiku": (1.0, 5.0, 1.25, 0.10)}

TOOL: "ToolParam" = {
    "name": TOOL_NAME,
    "description": "Record the memory operations for this batch of log entries. Every entry id in exactly "
                   "one operation.",
    "input_schema": {
        "type": "object",
        "properties": {"operations": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "op": {"type": "string", "enum": ["create", "merge", "supersede", "skip"]},
                "entries": {"type": "array", "items": {"type": "string"}, "description": "entry ids, e.g. e1"},
                "type": {"type": "string", "enum": list(MEMORY_TYPES)},
                "name": {"type": "string", "description": f"short, complete title, at most {NAME_CHARS} characters: "
                                                          "never cut, no Markdown, no URL"},
                "description": {"type": "string",
                                "description": f"one sentence that adds to the name (never repeats it), "
                                               f"at most {DESCRIPTION_CHARS} characters"},
                "body": {"type": "string", "description": "Markdown body of the new memory"},
                "memory": {"type": "string", "description": "candidate memory id, e.g. m1 (merge, supersede)"},
                "addition": {"type": "string", "description": "details to add to the memory (merge)"},
                "reason": {"type": "string"},
            },
            "required": ["op", "entries", "reason"],
        }}},
        "required": ["operations"],
    },
}


REVIEW_TOOL_NAME = "record_decisions"
REVIEW_PAIRS = 10  # pairs per review call
REVIEW_BODY_CHARS = 4000  # of each memory of a pair: documents are what reviews are about
REVIEW_TOOL: "ToolParam" = {
    "name": REVIEW_TOOL_NAME,
    "description": "Record one decision for every pair of this batch.",
    "input_schema": {
        "type": "object",
        "properties": {"decisions": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "pair": {"type": "string", "description": "pair id, e.g. p1"},
                "decision": {"type": "string", "enum": ["merge", "supersede", "keep"]},
                "retire": {"type": "string", "enum": ["a", "b"],
                           "description": "merge: the memory whose text is carried into the other; "
                                          "supersede: the memory that is no longer true"},
                "reason": {"type": "string"},
            },
            "required": ["pair", "decision", "reason"],
        }}},
        "required": ["decisions"],
    },
}


@dataclass(frozen=True)
class LlmSettings:
    model: str
    api_key: str
    base_url: str | None = None
    max_calls: int = 20
    timeout: float = 60.0
    batch_entries: int = 40
    max_retries: int = 2  # the SDK's own retries for 429, 5xx, timeouts and connection errors


def estimated_cost(model: str, usage: LlmUsage) -> float:
    family = next((name for name in PRICES if name in model), "sonnet")
    price_in, price_out, price_write, price_read = PRICES[family]
    return round((usage.input_tokens * price_in + usage.output_tokens * price_out
                  + usage.cache_write_tokens * price_write + usage.cache_read_tokens * price_read) / 1e6, 6)


# ---------------------------------------------------------------- batches


@dataclass
class Batch:
    number: int
    entries: dict[str, Entry]  # short id -> entry
    candidates: dict[str, str] = field(default_factory=dict)  # short id -> memory path
    frozen: set[str] = field(default_factory=set)  # candidate ids that cannot be superseded
    overview: list[Memory] = field(default_factory=list)  # the newest other memories, newest first


def make_batches(entries: list[Entry], size: int) -> list[list[Entry]]:
    """At most `size` entries and about BATCH_TEXT_CHARS of text per batch, in log order."""
    batches: list[list[Entry]] = []
    current: list[Entry] = []
    chars = 0
    for entry in entries:
        if current and (len(current) >= size or chars + len(entry.text) > BATCH_TEXT_CHARS):
            batches.append(current)
            current, chars = [], 0
        current.append(entry)
        chars += len(entry.text)
    if current:
        batches.append(current)
    return batches


class CandidateFinder:
    """The memories closest to each entry, found by the same pair index the deterministic path uses."""

    def __init__(self, request: DistillRequest):
        self.request = request
        self.nearby = request.neighbours(CANDIDATE_OVERLAP)
        self._newest: list[tuple[str, Memory]] | None = None

    def newest(self, count: int, leaving_out: set[str]) -> list[Memory]:
        """The `count` newest memories whose paths are not in `leaving_out`, newest first.

        The store is gone through once a run, not once a batch: the newest `count` plus as
        many as any batch leaves out are kept (heapq.nlargest orders as a stable sort with
        reverse=True does, so ties keep the store's order)."""
        wanted = count + len(leaving_out)
        if self._newest is None or len(self._newest) < min(wanted, len(self.request.memories)):
            self._newest = heapq.nlargest(wanted, self.request.memories.items(), key=_mtime_of_item)
        return [memory for path, memory in self._newest if path not in leaving_out][:count]

    def for_entry(self, entry: Entry) -> list[str]:
        words = Profile.of(entry.text).words
        scored = []
        for path in self.nearby.get(entry.id, ()):
            memory = self.request.memories[path]
            if (entry.type and memory.type != entry.type) or memory.read_only:
                continue
            scored.append((overlap(words, self.request.profiles[path].words), path))
        return [path for _, path in sorted(scored, reverse=True)[:CANDIDATES_PER_ENTRY]]


def _mtime_of_item(item: tuple[str, Memory]):
    return item[1].mtime


def batch_document(batch: Batch, request: DistillRequest) -> dict:
    memories = request.memories
    return {
        "entries": [{"id": short, "at": f"{e.at:%Y-%m-%d %H:%M:%S}", "type": e.type, "text": e.text}
                    for short, e in batch.entries.items()],
        "candidates": [{"id": short, "type": memories[path].type, "name": memories[path].name,
                        "description": memories[path].description,
                        "body": memories[path].body[:CANDIDATE_BODY_CHARS], "pinned": memories[path].pinned}
                       for short, path in batch.candidates.items()],
        "memories": [{"name": m.name, "type": m.type} for m in batch.overview],
    }


# ---------------------------------------------------------------- validation


def validate(tool_input: object, batch: Batch) -> tuple[list[Operation], list[str]]:
    """Operations with real ids, or the list of what is wrong with the answer."""
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("operations"), list):
        return [], ["the answer must be an object with an `operations` list"]
    errors: list[str] = []
    seen: dict[str, int] = {}
    operations: list[Operation] = []
    for number, raw in enumerate(tool_input["operations"], 1):
        where = f"operation {number}"
        if not isinstance(raw, dict):
            errors.append(f"{where} is not an object")
            continue
        kind = raw.get("op")
        ids = raw.get("entries")
        if kind not in ("create", "merge", "supersede", "skip"):
            errors.append(f"{where}: op must be create, merge, supersede or skip, not {kind!r}")
            continue
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            errors.append(f"{where}: entries must be a non-empty list of entry ids")
            continue
        unknown = [i for i in ids if i not in batch.entries]
        if unknown:
            errors.append(f"{where}: entry ids {', '.join(map(str, unknown))} were not offered")
            continue
        for i in ids:
            seen[i] = seen.get(i, 0) + 1
        sources = tuple(batch.entries[i].id for i in ids)
        reason = " ".join(str(raw.get("reason") or "").split())[:300] or kind
        new: NewMemory | None = None
        memory_path: str | None = None  # set for a merge or a supersede, else it `continue`s
        if kind in ("create", "supersede"):
            new, problems = _new_memory(raw, where, [batch.entries[i].text for i in ids])
            errors.extend(problems)
        if kind in ("merge", "supersede"):
            memory_id = raw.get("memory")
            if memory_id not in batch.candidates:
                errors.append(f"{where}: memory {memory_id!r} was not offered as a candidate")
                continue
            if kind == "supersede" and memory_id in batch.frozen:
                errors.append(f"{where}: memory {memory_id} is pinned and cannot be superseded")
                continue
            memory_path = batch.candidates[memory_id]
        if kind == "create" and new:
            operations.append(Create(new, sources, f"Claude: {reason}"))
        elif kind == "supersede" and new and memory_path is not None:
            operations.append(Supersede(memory_path, new, sources, f"Claude: {reason}"))
        elif kind == "merge" and memory_path is not None:
            addition = raw.get("addition") or ""
            if not isinstance(addition, str):
                errors.append(f"{where}: addition must be text")
                continue
            operations.append(MergeInto(memory_path, addition.strip(), sources, f"Claude: {reason}"))
        elif kind == "skip":
            operations.append(Skip(sources, f"Claude: {reason}"))
    missing = [i for i in batch.entries if i not in seen]
    if missing:
        errors.append(f"entries {', '.join(missing)} are in no operation")
    doubled = [i for i, count in seen.items() if count > 1]
    if doubled:
        errors.append(f"entries {', '.join(doubled)} are in more than one operation")
    return operations, errors


def _new_memory(raw: dict, where: str, texts: list[str]) -> tuple[NewMemory | None, list[str]]:
    """The new memory an operation describes (its name and description checked as the rules'
    are: `checked_title`), or what is wrong with it."""
    problems = []
    kind = raw.get("type")
    if kind not in MEMORY_TYPES:
        problems.append(f"{where}: type must be one of {', '.join(MEMORY_TYPES)}, not {kind!r}")
    name = " ".join(str(raw.get("name") or "").split())
    description = " ".join(str(raw.get("description") or "").split())
    body = str(raw.get("body") or "").strip()
    if not name or len(name) > NAME_CHARS:
        problems.append(f"{where}: name must be 1 to {NAME_CHARS} characters")
    if not description or len(description) > DESCRIPTION_CHARS:
        problems.append(f"{where}: description must be 1 to {DESCRIPTION_CHARS} characters")
    if not body:
        problems.append(f"{where}: body must not be empty")
    if problems or not isinstance(kind, str):  # a type in MEMORY_TYPES is one
        return None, problems
    name, description = checked_title(name, description, texts, kind)
    return NewMemory(kind, name, description, body), []


def checked_title(name: str, description: str, texts: list[str], memory_type: str) -> tuple[str, str]:
    """Claude's name and description, each checked by the rules' own checks (judge.titles): a
    name that is cut (…, inside a word, a number, an abbreviation), holds Markdown, a list
    marker or a URL, or is only a label gives way to the rules' name for the first entry; a
    description that is the name again, or begins with it, to the rules' description."""
    rules = title_of(texts[0], memory_type) if texts else None
    if rules is not None and name_problem(name, "\n".join(texts)):
        name = rules.name
    if rules is not None and description_problem(description, name) and not description_problem(
            rules.description, name):
        description = rules.description
    return name, description


def review_document(cases: dict[int, ReviewCase]) -> dict:
    """The pairs as the review prompt shows them: each memory whole up to REVIEW_BODY_CHARS, with its time."""
    def side(memory: Memory) -> dict:
        return {"type": memory.type, "name": memory.name, "description": memory.description,
                "time": memory.mtime.isoformat(timespec="seconds"), "pinned": memory.pinned,
                "body": memory.body[:REVIEW_BODY_CHARS]}

    return {"pairs": [{"id": f"p{number + 1}", "kind": case.kind, "evidence": case.evidence,
                       "a": side(case.a), "b": side(case.b)} for number, case in cases.items()]}


def validate_review(tool_input: object, cases: dict[int, ReviewCase]) -> tuple[list[ReviewDecision], list[str]]:
    """Decisions for exactly the pairs offered, each once; never retiring a pinned or read-only memory."""
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("decisions"), list):
        return [], ["the answer must be an object with a `decisions` list"]
    offered = {f"p{number + 1}": number for number in cases}
    errors: list[str] = []
    decisions: dict[int, ReviewDecision] = {}
    for count, raw in enumerate(tool_input["decisions"], 1):
        where = f"decision {count}"
        if not isinstance(raw, dict) or raw.get("pair") not in offered:
            errors.append(f"{where}: pair must be one of {', '.join(offered)}")
            continue
        number = offered[raw["pair"]]
        if number in decisions:
            errors.append(f"{where}: pair {raw['pair']} is decided twice")
            continue
        action, retire = raw.get("decision"), raw.get("retire")
        if action not in ("merge", "supersede", "keep"):
            errors.append(f"{where}: decision must be merge, supersede or keep, not {action!r}")
            continue
        case = cases[number]
        retired = None
        if action != "keep":
            if retire not in ("a", "b"):
                errors.append(f"{where}: {action} needs retire: a or b")
                continue
            retired = case.a if retire == "a" else case.b
            if retired.pinned or retired.read_only:
                errors.append(f"{where}: memory {retire} is {'pinned' if retired.pinned else 'read-only'} "
                              "and cannot be retired")
                continue
        reason = " ".join(str(raw.get("reason") or "").split())[:300] or action
        decisions[number] = ReviewDecision(number, action, retired.path if retired else None, reason)
    missing = [pair for pair, number in offered.items() if number not in decisions]
    if missing:
        errors.append(f"pairs {', '.join(missing)} have no decision")
    return list(decisions.values()), errors


# ---------------------------------------------------------------- the distiller


class AnthropicDistiller:
    """Asks Claude for each batch; falls back to the deterministic distiller batch by batch."""

    def __init__(self, settings: LlmSettings, store_templates: Path | None = None):
        self.settings = settings
        self.system_prompt = load_template("prompts/system.md", store_templates)
        self.batch_prompt = load_template("prompts/batch.md", store_templates)
        self.retry_prompt = load_template("prompts/retry.md", store_templates)
        self.review_system_prompt = load_template("prompts/review_system.md", store_templates)
        self.review_prompt = load_template("prompts/review.md", store_templates)
        self.review_retry_prompt = load_template("prompts/review_retry.md", store_templates)
        self.fallback = DeterministicDistiller()
        self._client: anthropic.Anthropic | None = None
        self._unreadable_usage: list[str] = []  # what the calls since the last report said their usage was

    def client(self) -> "anthropic.Anthropic":
        if self._client is None:
            import anthropic  # lazily: only a dream that uses Claude pays for the SDK

            self._client = anthropic.Anthropic(api_key=self.settings.api_key, base_url=self.settings.base_url,
                                               max_retries=self.settings.max_retries, timeout=self.settings.timeout)
        return self._client

    def distill(self, request: DistillRequest) -> DistillResult:
        result = DistillResult(operations=[])
        finder = CandidateFinder(request)
        for number, entries in enumerate(make_batches(request.entries, self.settings.batch_entries), 1):
            batch = self._batch(number, entries, finder, request)
            operations, problem = self._ask(batch, request, result.usage)
            if operations is None:
                result.usage.fallback_batches += 1
                result.notes.append(f"LLM batch {number} ({len(entries)} entries) fell back to the deterministic "
                                    f"distiller: {problem}")
                # the same neighbours and the same now: a batch falls back to what a deterministic dream does
                operations = self.fallback.distill(replace(request, entries=entries, progress=NO_PROGRESS)).operations
            result.operations.extend(operations)
            request.progress.advance(len(entries))
        result.usage.estimated_cost_usd = estimated_cost(self.settings.model, result.usage)
        result.notes.extend(self._usage_notes())
        return result

    @staticmethod
    def _batch(number: int, entries: list[Entry], finder: CandidateFinder, request: DistillRequest) -> Batch:
        batch = Batch(number, {f"e{i}": e for i, e in enumerate(entries, 1)})
        paths: dict[str, None] = {}
        for entry in entries:
            paths.update(dict.fromkeys(finder.for_entry(entry)))
        batch.candidates = {f"m{i}": p for i, p in enumerate(paths, 1)}
        batch.frozen = {short for short, p in batch.candidates.items() if request.memories[p].pinned}
        batch.overview = finder.newest(OVERVIEW_MEMORIES, set(paths))
        return batch

    def _ask(self, batch: Batch, request: DistillRequest, usage: LlmUsage) -> tuple[list | None, str]:
        """Validated operations, or None and why this batch must fall back."""
        document = json.dumps(batch_document(batch, request), ensure_ascii=False, indent=1)
        prompt = self.batch_prompt.replace("{entry_count}", str(len(batch.entries))) \
            .replace("{batch_json}", document)
        return self._ask_tool(prompt, self.system_prompt, self.retry_prompt, TOOL,
                              lambda answer: validate(answer, batch), usage)

    def _ask_tool(self, prompt: str, system: str, retry_prompt: str, tool: "ToolParam",
                  check: Callable[[object], tuple[list[Answer], list[str]]],
                  usage: LlmUsage) -> tuple[list[Answer] | None, str]:
        """The checked answer of one tool call (retried once with what was wrong), or None and why not.
        `usage.calls` counts every call of the run so far: the budget is the run's."""
        content = prompt
        errors: list[str] = []
        for _ in range(2):  # the answer, and one retry listing what was wrong
            if usage.calls >= self.settings.max_calls:
                return None, f"the run's LLM call budget ({self.settings.max_calls}) is spent"
            if errors:
                retry = retry_prompt.replace("{errors}", "\n".join(f"- {e}" for e in errors))
                content = prompt + "\n\n" + retry
            tool_input, failure = self._call(content, usage, tool, system)
            if failure:
                return None, failure
            checked, errors = check(tool_input)
            if not errors:
                return checked, ""
        return None, "the answer was invalid twice (" + "; ".join(errors[:3]) + ")"

    # ------------------------------------------------------------ review

    def review(self, cases: list[ReviewCase], calls_used: int) -> ReviewResult:
        """Claude decides the pairs the judge left for review; a batch that fails keeps both."""
        result = ReviewResult([], LlmUsage(calls=calls_used))  # the budget counts the distill's calls too
        for start in range(0, len(cases), REVIEW_PAIRS):
            chunk = dict(enumerate(cases[start:start + REVIEW_PAIRS], start))
            document = json.dumps(review_document(chunk), ensure_ascii=False, indent=1)
            prompt = self.review_prompt.replace("{pair_count}", str(len(chunk))).replace("{batch_json}", document)
            decisions, problem = self._ask_tool(prompt, self.review_system_prompt, self.review_retry_prompt,
                                                REVIEW_TOOL, lambda answer: validate_review(answer, chunk),
                                                result.usage)
            if decisions is None:
                result.usage.fallback_batches += 1
                result.notes.append(f"LLM review of {len(chunk)} pairs failed, both of each pair kept: {problem}")
                continue
            result.decisions.extend(decisions)
        result.usage.calls -= calls_used
        result.usage.estimated_cost_usd = estimated_cost(self.settings.model, result.usage)
        result.notes.extend(self._usage_notes())
        return result

    def _usage_notes(self) -> list[str]:
        """One warning for the calls whose reported usage could not be right (then forgotten)."""
        if not self._unreadable_usage:
            return []
        count, first = len(self._unreadable_usage), self._unreadable_usage[0]
        self._unreadable_usage = []
        calls = "1 LLM call" if count == 1 else f"{count} LLM calls"
        return [f"{calls} reported usage that cannot be right ({first}): their tokens are unknown, not counted "
                "in the token totals or the cost estimate"]

    def _call(self, content: str, usage: LlmUsage, tool: "ToolParam", system: str) -> tuple[object, str]:
        """One user message in, the tool's input out (or why not)."""
        import anthropic

        system_blocks: list[TextBlockParam] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        messages: list[MessageParam] = [{"role": "user", "content": content}]
        tool_choice: ToolChoiceToolParam = {"type": "tool", "name": tool["name"]}
        usage.calls += 1
        try:
            response = self.client().messages.create(model=self.settings.model, max_tokens=MAX_OUTPUT_TOKENS,
                                                      system=system_blocks, tools=[tool], tool_choice=tool_choice,
                                                      messages=messages)
        except anthropic.APIStatusError as error:
            return None, f"the API answered {error.status_code} ({type(error).__name__})"
        except anthropic.APITimeoutError:
            return None, "the API timed out"
        except anthropic.APIConnectionError:
            return None, "the API could not be reached"
        except (anthropic.APIError, ValueError, TypeError, KeyError) as error:
            return None, f"the API's answer could not be read ({type(error).__name__})"
        problem = _count(response, usage)
        if problem:
            self._unreadable_usage.append(problem)
        for block in response.content or []:
            # the SDK keeps a block it cannot read as it was sent: its fields are asked for, not assumed
            if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool["name"]:
                return getattr(block, "input", None), ""
        return {}, ""  # no tool call: validation reports it, and the retry asks again


def _count(response, usage: LlmUsage) -> str | None:
    """Add the tokens a response reports to `usage`; what is wrong with them, when they cannot be
    right (then none of the call's counts is added: the API's word is not taken for a bill)."""
    reported = getattr(response, "usage", None)
    if reported is None:
        return None
    if isinstance(reported, (str, bytes, int, float, list, dict)):  # the SDK keeps what it cannot read as sent
        return f"usage = {str(reported)[:40]!r}"
    counts = {}
    for field_name, total in _USAGE_FIELDS.items():
        value = getattr(reported, field_name, None)
        if value is None:  # a cache count the API leaves out or sends as null: none
            value = 0
        if type(value) is not int or not 0 <= value <= MAX_REPORTED_TOKENS:  # bool and float are not counts
            return f"{field_name} = {str(value)[:40]}"
        counts[total] = value
    for total, value in counts.items():
        setattr(usage, total, getattr(usage, total) + value)
    return None
