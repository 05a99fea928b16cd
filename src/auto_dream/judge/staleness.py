"""Staleness (docs/dream.md, "Staleness"): the files and symbols a memory names, and which of them the
repository proves gone.

A reference counts against a memory only with proof that it is the repository's own and gone:
a path its git history tracked that the work tree no longer has, a symbol its history defined
that no file names now. Every other reference is unverifiable and never counts: a path rooted
elsewhere or standing for files (a glob, a template, a placeholder), a path gitignored or never
tracked, a name the repository never defined (another library's `resource_changed()`), a file
the memory says is missing or only planned. A memory with no verifiable reference is EVERGREEN
however many it names.

Guessing instead (a path is missing when the work tree lacks it, a name when no file holds it)
made most FULLY_STALE verdicts on real Claude Code folders false: a Claude Code tool named in
backticks, a library's calls, templates, gitignored specs, files a memory only planned. The
rules below that keep a reference from being asked about at all name their real case; the
proof is asked of a Repository (this module's protocol; store/repository.py answers it with
git, a test with a dict), so every decision here is a pure function of texts and its answers.
"""

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

EVERGREEN, FRESH, PARTIALLY_STALE, FULLY_STALE = "EVERGREEN", "FRESH", "PARTIALLY_STALE", "FULLY_STALE"

_EXTENSIONS = ("py|pyi|ts|tsx|js|jsx|mjs|cjs|json|md|yaml|yml|sh|toml|go|rs|java|kt|rb|c|h|cc|cpp|hpp|"
               "cs|css|scss|html|sql|txt|cfg|ini|vue|svelte|swift|lock|xml|proto|tf")
# A URL begins at the first letter of a run of scheme characters (`x1http://…` is one URL from
# its x): so only the run's start is tried, and a long run of letters is read once, not from each
# of its letters (100,000 of them took a minute). Group 1 is what comes before the first letter.
_URL = re.compile(r"(?<![a-z0-9+.-])([0-9+.-]*)[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# `{}<>*?…` before a path mean it is the tail of a template: `{date}-notes/plan.md` is not `-notes/plan.md`
_PATH = re.compile(
    rf"(?<![\w/.~$@{{}}<>*?…-])([~$/]?[\w.@~$-]*(?:/[\w.@-]+)+\.(?:{_EXTENSIONS}))(?::\d+(?:[:,-]\d+)*)?(?![\w/])")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
# a call: `handle_request()`, and on an object `vi.resetModules()`, `z.string().url()`, `Vec::with_capacity()`
_CALL = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]{2,})\(\)")
_DEFINITION = re.compile(r"\b(def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]{2,})([(<])?")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|^[A-Z][a-z0-9]+[A-Z]")
# `:120`, `:12-30`, `:3:7`, and the list `:129,169` (orchestkit: `src/stop/handoff-writer.ts:129,169`),
# matched on the reversed token from its start: searched for at the end, a long run of `1:1:1…`
# would be read again from each of its colons
_LINE_SUFFIX_REVERSED = re.compile(r"(?:\d+[:,-])*\d+:")
# Glob and template syntax: application-pipeline's `.claude/plans/{date}-session-handoff-{id}.md`,
# orchestkit's `src/hooks/src/<category>/<name>.ts` and `docs/site/__tests__/*.test.ts`,
# recommendarr's `src/shared/schemas/<name>.ts`; `[id]` too, though Next.js names real folders so
# (hands off unless certain).
_TEMPLATE_SYNTAX = re.compile(r"[*?{}<>\[\]…]|\.\.\.")
# An upper-case placeholder word standing for a name: application-pipeline's `scripts/FILENAME.py`,
# `tests/test_FILE.py`, `materials/resumes/batch-NN/`. Case-sensitive, and only whole words between
# separators, so README.md, SKILL.md or CLAUDE.md are untouched.
_PLACEHOLDER_WORD = re.compile(
    r"(?<![A-Za-z0-9])(?:FILE(?:NAME)?|NAME|N{1,2}|X{2,}|YYYY(?:-?MM(?:-?DD)?)?)(?![A-Za-z0-9])")
# The memory says the reference is absent, before it: "No `X` invariant", "there is no `X`", "missing `X`"
_ABSENT_BEFORE = re.compile(r"\b(?:no|missing)\b[\s*_:`'\"(]*$", re.IGNORECASE)
# ... or after it: "`X` was removed", "`X` has been deleted", "`X` is gone", "`X` was renamed"
_GONE_PASSIVE = (r"(?:is|are|was|were|has\s+been|have\s+been|had\s+been)\s+[*_]*(?:still\s+|now\s+|already\s+|also\s+)?"
                 r"(?:gone|removed|deleted|renamed)\b")
# "`X` does not exist", "`X` doesn't exist", "`X` no longer exists"
_NOT_EXIST = r"(?:(?:does|do|did)\s*(?:not|n't)|no\s+longer)\s+exists?\b"
# "`X` is STILL MISSING", "`X` removed in #960", "`X` missing from hooks.json"; not "`X` is missing a
# null check" (X is there, the check is not): the clause ends or a place follows
_MISSING = (r"(?:(?:is|are|was|were)\s+)?[*_]*(?:still\s+)?(?:missing|absent|removed|deleted)[*_]*"
            r"(?=\s*(?:$|[^\w\s`]|(?:from|in|on|here|there|now|yet|upstream|entirely)\b))")
# "`targets/` → `materials/targets/`", "X moved to Y", "`old_fn()` was renamed to `new_fn()`": the record of a
# move (application-pipeline's repo reorganization) names the old place as gone on purpose
_MOVED = (r"(?:→|->|⟶|=>|(?:(?:is|are|was|were|has\s+been|have\s+been)\s+)?(?:moved|renamed|migrated|relocated)"
          r"\s+(?:to|into|under|as)\b)")
_ABSENT_AFTER = re.compile(rf"^[`'\"*_)\]]*\s*(?:{_GONE_PASSIVE}|{_NOT_EXIST}|{_MISSING}|{_MOVED})", re.IGNORECASE)
# The memory says the reference is yet to come, before it: "will add `X`", "TODO: create the module `X`",
# "we need to write X"; a file a memory only planned was counted missing
_PLANNED_BEFORE = re.compile(r"(?:\bwill|\bshall|'ll|\bto|\btodo:?)\s+(?:add|create|write|introduce|scaffold)\b"
                             r"(?:\s+(?:a|an|the|new|file|module|function|class|script|test|called|named)\b)*"
                             r"[\s*_:`'\"(]*$", re.IGNORECASE)
# ... or after it: "`X` (planned)", "`X` (to be created)", "`X` is not yet written", "`X` will be added"
_PLANNED_AFTER = re.compile(
    r"^[`'\"*_)\]]*\s*(?:\(\s*(?:planned|todo|to\s+(?:be\s+)?(?:add|creat|writ)\w*|not\s+yet\s+\w+)"
    r"|(?:is|are)\s+(?:planned|not\s+yet\s+(?:created|added|written|there))"
    r"|(?:will|shall)\s+be\s+(?:added|created|written)"
    r"|(?:is\s+|are\s+)?(?:still\s+|yet\s+)?to\s+be\s+(?:added|created|written))\b", re.IGNORECASE)
# Words that stand for a name in an example: `maintain_foo`, `src/foo/bar.py`, `test_xxx`, `example.ts`
_PLACEHOLDER_PARTS = frozenset({"foo", "foobar", "baz", "qux", "quux", "example"})
_WORD_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_XS = re.compile(r"x{3,}")
# A day a memory names: "(PR #835, 2026-03-02)", "Design (2026-06-18)"; what it cites was likely there then
_DAY = re.compile(r"(?<![\d-])(20\d\d)-([01]\d)-([0-3]\d)(?![\d-])")


@dataclass(frozen=True)
class References:
    """The file paths and the code names a memory cites, each once, in the order it cites them."""

    files: tuple[str, ...]
    symbols: tuple[str, ...]


def is_template(ref: str) -> bool:
    """A glob, a template or a placeholder (`tests/__pycache__/*`, `src/shared/schemas/<name>.ts`,
    `scripts/FILENAME.py`): it stands for files, it names none."""
    return bool(_TEMPLATE_SYNTAX.search(ref) or _PLACEHOLDER_WORD.search(ref))


def is_placeholder(ref: str) -> bool:
    """A stand-in an example uses for a real name: `maintain_foo`, `test_xxx.py`, `src/example/app.py`,
    `path/to/file.py`. The repository's history could even hold one (a test's `def foo`); it is not
    what the memory means."""
    if ref.lower().startswith("path/to/") or "/path/to/" in ref.lower():
        return True
    return any(part.lower() in _PLACEHOLDER_PARTS or _XS.fullmatch(part.lower()) for part in _WORD_PARTS.findall(ref))


def is_relative_to_a_working_folder(ref: str) -> bool:
    """`./bin/bump-version.sh` (orchestkit), `./fixtures.ts` (recommendarr), `../shared/x.ts`: relative to
    a folder the memory does not name, not to the repository's root."""
    return any(part in (".", "..") for part in ref.split("/"))


def names_a_symbol(token: str) -> bool:
    """A code-shaped word alone in backticks (`retry_budget`, `SessionStore`), not a plain word (`make`).
    It may be this repository's or not (orchestkit's `AskUserQuestion` is a Claude Code tool): only
    the repository's history tells."""
    return bool(_IDENTIFIER.fullmatch(token) and ("_" in token.strip("_") or _CAMEL.search(token)))


def is_said_absent(text: str, start: int, end: int) -> bool:
    """Whether the memory says the reference at text[start:end] is absent ("there is no `X`", "`X` was
    removed", "`X` → `Y`"): a memory recording that something is missing or moved cannot be made stale
    by its absence."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[max(line_start, start - 40):start]
    after = text[end:line_end if line_end >= 0 else len(text)][:60]
    return bool(_ABSENT_BEFORE.search(before) or _ABSENT_AFTER.match(after))


def is_said_planned(text: str, start: int, end: int) -> bool:
    """Whether the memory says the reference at text[start:end] is yet to come ("will add `X`", "`X`
    (to be created)"): a plan is not a claim that the file is there."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[max(line_start, start - 60):start]
    after = text[end:line_end if line_end >= 0 else len(text)][:60]
    return bool(_PLANNED_BEFORE.search(before) or _PLANNED_AFTER.match(after))


def is_code_definition(keyword: str, name: str, opens: str | None) -> bool:
    """`def parse_config`, `class RequestRouter`, `function handler(`, not prose: "a first-class
    citizen" (application-pipeline), "a Linaria `css` class instead" (recommendarr), "fn over".
    The name has a code shape (snake_case, camelCase, a capital after `class`) or opens its arguments."""
    return bool(opens or "_" in name or _CAMEL.search(name) or (keyword == "class" and name[0].isupper()))


def extract_references(text: str) -> References:
    """File paths (a trailing `:line` is not part of the path) and code symbols named in `text`:
    paths with a folder and a known extension, backticked paths, names defined (`def parse_config`),
    called (`handle_request()`, `vi.resetModules()`) or code-shaped in backticks (`SessionStore`).
    A reference the memory says is absent or only planned is left out."""
    text = _URL.sub(r"\1 ", text)
    files: dict[str, None] = {}
    symbols: dict[str, None] = {}
    left_out: set[str] = set()

    def add(found: dict[str, None], ref: str, match: re.Match, group: int = 0) -> None:
        start, end = match.start(group), match.end(group)
        if is_said_absent(text, start, end) or is_said_planned(text, start, end):
            left_out.add(ref)
        found[ref] = None

    for match in _PATH.finditer(text):
        add(files, match.group(1), match)
    for match in _BACKTICKED.finditer(text):
        token = without_line_suffix(match.group(1).strip())
        if "/" in token and " " not in token:
            add(files, token, match)
        elif names_a_symbol(token):
            add(symbols, token, match)
    for match in _DEFINITION.finditer(text):
        if is_code_definition(*match.group(1, 2, 3)):
            add(symbols, match.group(2), match, 2)
    for match in _CALL.finditer(text):
        add(symbols, match.group(1), match)
    return References(tuple(f for f in files if f not in left_out), tuple(s for s in symbols if s not in left_out))


def without_line_suffix(ref: str) -> str:
    """`src/app.py` for `src/app.py:12-30`: a trailing line number, range or list is not part of the path."""
    suffix = _LINE_SUFFIX_REVERSED.match(ref[::-1])
    return ref[:len(ref) - suffix.end()] if suffix else ref


def is_verifiable(ref: str) -> bool:
    """Whether a path could name one of the repository's files, so that its history is asked about it:
    not rooted elsewhere (`~`, `/`, `$`, `./`, `../`), not a glob, template or placeholder."""
    return not (ref.startswith(("~", "/", "$")) or is_relative_to_a_working_folder(ref) or is_template(ref)
                or is_placeholder(ref))


def is_verifiable_symbol(name: str) -> bool:
    """Whether a name could be one the repository defined: not a placeholder (`maintain_foo`)."""
    return not is_placeholder(name)


@dataclass(frozen=True)
class Evidence:
    """What the repository shows of some references: those it has now, and those provably gone (its
    own once, by its history, and not there now). Any other reference is unverifiable."""

    present: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()


NO_EVIDENCE = Evidence()


class Repository(Protocol):
    """The repository a store's memories cite, asked once per run about every memory's references."""

    def files(self, paths: Collection[str]) -> Evidence:
        """Of these paths (relative to the repository's folder): those there now, and those its history
        tracked that are gone (a gitignored path is never gone)."""
        ...

    def symbols(self, names: Collection[str], written: Collection[datetime] = ()) -> Evidence:
        """Of these names: those a file names now, and those its history defined that no file names now.
        `written`: when the memories citing them were written (the commits current then are the likeliest
        to define what they cite)."""
        ...


@dataclass(frozen=True)
class Staleness:
    classification: str
    missing_refs: list[str] = field(default_factory=list)
    unverifiable_refs: list[str] = field(default_factory=list)


def classify(refs: References, files: Evidence, symbols: Evidence) -> Staleness:
    """EVERGREEN (nothing verifiable), FRESH (nothing gone), PARTIALLY_STALE, or FULLY_STALE (every
    verifiable reference gone). A reference is verifiable when the repository has it or proves it gone."""
    checked = [f for f in refs.files if is_verifiable(f) and (f in files.present or f in files.gone)]
    checked_symbols = [s for s in refs.symbols if is_verifiable_symbol(s)
                       and (s in symbols.present or s in symbols.gone)]
    unverifiable = [f for f in refs.files if f not in checked] + [s for s in refs.symbols if s not in checked_symbols]
    if not checked and not checked_symbols:
        return Staleness(EVERGREEN, [], unverifiable)
    missing = [f for f in checked if f not in files.present]
    missing += [s for s in checked_symbols if s not in symbols.present]
    if not missing:
        return Staleness(FRESH, [], unverifiable)
    if len(missing) == len(checked) + len(checked_symbols):
        return Staleness(FULLY_STALE, missing, unverifiable)
    return Staleness(PARTIALLY_STALE, missing, unverifiable)


class Cited(Protocol):
    """What staleness reads of a memory (store.memory.Memory is one)."""

    @property
    def path(self) -> str: ...
    @property
    def mtime(self) -> datetime: ...
    def text(self) -> str: ...


def moments_of(memory: Cited, text: str) -> set[datetime]:
    """When what a memory cites was likely there: when it was written, and the days it names
    (orchestkit's review of PR #835 was rewritten in July; it says "2026-03-02")."""
    moments = {memory.mtime}
    for match in _DAY.finditer(text):
        year, month, day_of_month = map(int, match.groups())
        try:
            day = datetime(year, month, day_of_month, 12, tzinfo=memory.mtime.tzinfo)
        except ValueError:  # 2026-02-30
            continue
        if day <= memory.mtime:
            moments.add(day)
    return moments


def assess_staleness(memories: Iterable[Cited], repository: Repository | None,
                     known_refs: dict[str, References] | None = None) -> dict[str, Staleness]:
    """The staleness class of every memory, asking the repository once about all their references
    (`known_refs`: references already extracted, by path). No repository: every reference is unverifiable."""
    known_refs = known_refs or {}
    memories = list(memories)
    references = {m.path: known_refs.get(m.path) or extract_references(m.text()) for m in memories}
    files, symbols = NO_EVIDENCE, NO_EVIDENCE
    if repository is not None:
        paths = {f for refs in references.values() for f in refs.files if is_verifiable(f)}
        names = {s for refs in references.values() for s in refs.symbols if is_verifiable_symbol(s)}
        written = sorted({moment for m in memories if any(map(is_verifiable_symbol, references[m.path].symbols))
                          for moment in moments_of(m, m.text())})
        files = repository.files(sorted(paths)) if paths else NO_EVIDENCE
        symbols = repository.symbols(sorted(names), written) if names else NO_EVIDENCE
    evergreen = Staleness(EVERGREEN)
    return {path: classify(refs, files, symbols) if refs.files or refs.symbols else evergreen
            for path, refs in references.items()}
