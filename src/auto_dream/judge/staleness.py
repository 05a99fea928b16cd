"""Staleness (DESIGN 3.2): file and symbol references checked against the project's repository.

Only references that can be checked count: a path rooted outside the repository (`~`, `/`,
`$`, a URL) or whose first folder is not a top-level folder of the repository is
UNVERIFIABLE, and a memory with no verifiable reference is EVERGREEN however many paths it
names (OrchestKit's dream flagged 11 of 11 live memories as stale for want of this rule).

Of 12 FULLY_STALE verdicts on real Claude Code folders, 9 were false: a Claude Code tool
named in backticks, globs and templates, `./` paths, library calls, and references the
memory itself says are missing. Each rule below that keeps such a reference from counting
names its real case.
"""

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
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
# a call of a bare name: `handle_request()`; not `vi.resetModules()` or `Vec::new()` (see _METHOD_CALL)
_CALL = re.compile(r"(?<![\w.:$])([A-Za-z_][A-Za-z0-9_]{2,})\(\)")
# a call on an object: `vi.resetModules()`, `z.string().url()`, `.trim()`, `Vec::with_capacity()`
_METHOD_CALL = re.compile(r"(?:\.|::)([A-Za-z_][A-Za-z0-9_]{2,})\(\)")
# the first name of the object chain a method is called on: `vi` in `vi.`, `otf_api` in `otf_api.api.utils.`
_RECEIVER = re.compile(r"([A-Za-z_$][\w$]*)(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
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
_ABSENT_AFTER = re.compile(rf"^[`'\"*_)\]]*\s*(?:{_GONE_PASSIVE}|{_NOT_EXIST}|{_MISSING})", re.IGNORECASE)
_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox", ".mypy_cache",
              ".pytest_cache", "target", ".hypothesis"}
MAX_SCANNED_FILE = 2_000_000


@dataclass(frozen=True)
class References:
    files: tuple[str, ...]
    symbols: tuple[str, ...]
    # The symbols that are only named: a bare word in backticks (`AskUserQuestion`, a Claude Code tool)
    # or a method called on an object the memory does not show as this repository's (`vi.resetModules()`).
    # Found in the repository they confirm the memory; missing they prove nothing. A subset of `symbols`;
    # None when not known (references kept by a cache that does not store it): every symbol is then taken
    # as only named, since a tool name counted as missing gets a memory archived, a missed symbol does not.
    named_only: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.named_only is None and not self.symbols:  # no symbol, nothing unknown
            object.__setattr__(self, "named_only", ())


def is_template(ref: str) -> bool:
    """A glob, a template or a placeholder (`tests/__pycache__/*`, `src/shared/schemas/<name>.ts`,
    `scripts/FILENAME.py`): it stands for files, it names none."""
    return bool(_TEMPLATE_SYNTAX.search(ref) or _PLACEHOLDER_WORD.search(ref))


def is_relative_to_a_working_folder(ref: str) -> bool:
    """`./bin/bump-version.sh` (orchestkit), `./fixtures.ts` (recommendarr), `../shared/x.ts`: relative to
    a folder the memory does not name, not to the repository's root."""
    return any(part in (".", "..") for part in ref.split("/"))


def names_a_symbol(token: str) -> bool:
    """A code-shaped word alone in backticks (`retry_budget`, `SessionStore`): a name, only named. It may be
    this repository's or not: orchestkit's `AskUserQuestion` is a Claude Code tool, its `ValidateOCI` the
    MCP registry's Go code. References.named_only: it confirms a memory, its absence proves nothing."""
    return bool(_IDENTIFIER.fullmatch(token) and ("_" in token.strip("_") or _CAMEL.search(token)))


def is_said_absent(text: str, start: int, end: int) -> bool:
    """Whether the memory says the reference at text[start:end] is absent ("there is no `X`", "`X` was
    removed"): a memory recording that something is missing cannot be made stale by its absence."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[max(line_start, start - 40):start]
    after = text[end:line_end if line_end >= 0 else len(text)][:60]
    return bool(_ABSENT_BEFORE.search(before) or _ABSENT_AFTER.match(after))


def is_code_definition(keyword: str, name: str, opens: str | None) -> bool:
    """`def parse_config`, `class RequestRouter`, `function handler(`, not prose: "a first-class
    citizen" (application-pipeline), "a Linaria `css` class instead" (recommendarr), "fn over".
    The name has a code shape (snake_case, camelCase, a capital after `class`) or opens its arguments."""
    return bool(opens or "_" in name or _CAMEL.search(name) or (keyword == "class" and name[0].isupper()))


def receiver_is_this_repos(text: str, call_start: int, repo_names: set[str]) -> bool:
    """Whether a method call's object is one the memory shows as this repository's: a class or function
    it defines (`RequestRouter.route_all()` beside `class RequestRouter`) or a folder of a path it
    cites (otf-api: `otf_api.api.utils.validate_identifier()` beside `src/otf_api`). `vi` in
    `vi.resetModules()` is vitest's, `z` in `z.string().url()` is zod's: neither is."""
    receiver = _RECEIVER.search(text[max(0, call_start - 200):call_start])
    return receiver is not None and receiver.group(1) in repo_names


def folder_names(paths: Iterable[str]) -> set[str]:
    """The folders of the repository paths a memory cites (`src/otf_api/api/client.py`: src, otf_api, api).
    Not file names: recommendarr's `schema.optional()` calls zod on a variable, beside `src/server/schema.ts`."""
    names = set()
    for path in paths:
        if not path.startswith(("~", "/", "$")) and not is_template(path):
            parts = path.rstrip("/").split("/")
            names.update(parts[:-1] if "." in parts[-1] and not path.endswith("/") else parts)
    return names


def extract_references(text: str) -> References:
    """File paths (a trailing `:line` is not part of the path) and code symbols named in `text`.

    A reference the memory says is absent is left out. Symbols shown defined or called are
    `symbols`; those only named are `named_only` too (see References)."""
    text = _URL.sub(r"\1 ", text)
    files: dict[str, None] = {}
    shown: dict[str, None] = {}
    named: dict[str, None] = {}
    absent: set[str] = set()

    def add(found: dict[str, None], ref: str, match: re.Match, group: int = 0) -> None:
        if is_said_absent(text, match.start(group), match.end(group)):
            absent.add(ref)
        found[ref] = None

    for match in _PATH.finditer(text):
        add(files, match.group(1), match)
    for match in _BACKTICKED.finditer(text):
        token = without_line_suffix(match.group(1).strip())
        if "/" in token and " " not in token:
            add(files, token, match)
        elif names_a_symbol(token):
            add(named, token, match)
    definitions = set()
    for match in _DEFINITION.finditer(text):
        if is_code_definition(*match.group(1, 2, 3)):
            definitions.add(match.group(2))
            add(shown, match.group(2), match, 2)
    for match in _CALL.finditer(text):
        add(shown, match.group(1), match)
    repo_names = definitions | folder_names(files)
    for match in _METHOD_CALL.finditer(text):
        add(shown if receiver_is_this_repos(text, match.start(), repo_names) else named, match.group(1), match)
    symbols = [s for s in {**named, **shown} if s not in absent]
    return References(tuple(f for f in files if f not in absent), tuple(symbols),
                      tuple(s for s in symbols if s not in shown))


def without_line_suffix(ref: str) -> str:
    """`src/app.py` for `src/app.py:12-30`: a trailing line number, range or list is not part of the path."""
    suffix = _LINE_SUFFIX_REVERSED.match(ref[::-1])
    return ref[:len(ref) - suffix.end()] if suffix else ref


def is_verifiable(ref: str, repo: Path | None) -> bool:
    """REPO_RELATIVE (checkable here) or UNVERIFIABLE (rooted elsewhere, or standing for files: never counts)."""
    if repo is None or ref.startswith(("~", "/", "$")) or is_relative_to_a_working_folder(ref) or is_template(ref):
        return False
    first = ref.split("/", 1)[0]
    return "/" in ref and (repo / first).is_dir()


@dataclass(frozen=True)
class Staleness:
    classification: str
    missing_refs: list[str] = field(default_factory=list)
    unverifiable_refs: list[str] = field(default_factory=list)


class RepoIndex:
    """The repository a store's references are checked against: file existence and identifiers."""

    def __init__(self, repo: Path | None, exclude: Path | None = None):
        self.repo = repo
        self.exclude = exclude.resolve() if exclude is not None else None
        self._found_symbols: set[str] = set()
        self._searched: set[str] = set()

    def file_exists(self, ref: str) -> bool:
        return self.repo is not None and (self.repo / ref).exists()

    def find_symbols(self, wanted: set[str]) -> set[str]:
        """Which of `wanted` appear as identifiers in the repository's text files (one pass)."""
        todo = wanted - self._searched
        if todo and self.repo is not None:
            self._found_symbols |= self._scan(self.repo, todo)
            self._searched |= todo
        return wanted & self._found_symbols

    def _scan(self, repo: Path, wanted: set[str]) -> set[str]:
        found: set[str] = set()
        for current, dirs, names in os.walk(repo):
            here = Path(current)
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")
                       and (self.exclude is None or (here / d).resolve() != self.exclude)]
            for name in names:
                data = _read_source_file(here / name)
                if data is None or b"\x00" in data[:8192]:
                    continue
                found |= wanted & set(_IDENTIFIER.findall(data.decode("utf-8", "replace")))
                if found == wanted:
                    return found
        return found


def _read_source_file(path: Path) -> bytes | None:
    """A regular file's bytes when it is no larger than MAX_SCANNED_FILE, else None: never a
    symlink (to /dev/zero, out of the repository), never a FIFO or a device, whose read blocks
    or never ends. O_NONBLOCK lets a FIFO open without a writer; fstat then turns it away."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode) or stat.st_size > MAX_SCANNED_FILE:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SCANNED_FILE + 1)  # a file that grew since fstat is read no further
        return data if len(data) <= MAX_SCANNED_FILE else None
    except OSError:
        return None
    finally:
        os.close(fd)


def classify(refs: References, repo_index: RepoIndex, found_symbols: set[str]) -> Staleness:
    """EVERGREEN (nothing verifiable), FRESH, PARTIALLY_STALE or FULLY_STALE (every ref and symbol gone).

    A symbol only named (References.named_only) counts when the repository has it, and is
    unverifiable when it does not."""
    repo = repo_index.repo
    verifiable = [f for f in refs.files if is_verifiable(f, repo)]
    unverifiable = [f for f in refs.files if not is_verifiable(f, repo)]
    named_only = set(refs.symbols if refs.named_only is None else refs.named_only)
    symbols = [s for s in refs.symbols if s in found_symbols or s not in named_only] if repo is not None else []
    unverifiable += [s for s in refs.symbols if s not in symbols]
    if not verifiable and not symbols:
        return Staleness(EVERGREEN, [], unverifiable)
    missing = [f for f in verifiable if not repo_index.file_exists(f)]
    missing += [s for s in symbols if s not in found_symbols]
    if not missing:
        return Staleness(FRESH, [], unverifiable)
    if len(missing) == len(verifiable) + len(symbols):
        return Staleness(FULLY_STALE, missing, unverifiable)
    return Staleness(PARTIALLY_STALE, missing, unverifiable)


def find_repo(store_root: Path, configured: str | None) -> Path | None:
    """config `repo` (relative to the store's folder), else the git work tree holding the store."""
    if configured:
        repo = (store_root.parent / Path(configured).expanduser()).resolve()
        return repo if repo.is_dir() else None
    for folder in (store_root.resolve(), *store_root.resolve().parents):
        if (folder / ".git").exists():
            return folder
    return None


class Cited(Protocol):
    """What staleness reads of a memory (store.memory.Memory is one)."""

    @property
    def path(self) -> str: ...
    def text(self) -> str: ...


def assess_staleness(memories: Iterable[Cited], repo: Path | None, store_root: Path,
                     known_refs: dict[str, References] | None = None) -> dict[str, Staleness]:
    """The staleness class of every memory, checking the repository once for all symbols."""
    repo_index = RepoIndex(repo, exclude=store_root)
    known_refs = known_refs or {}
    references = {m.path: known_refs.get(m.path) or extract_references(m.text()) for m in memories}
    wanted = {s for refs in references.values() for s in refs.symbols} if repo is not None else set()
    found = repo_index.find_symbols(wanted) if wanted else set()
    evergreen = Staleness(EVERGREEN)
    return {path: classify(refs, repo_index, found) if refs.files or refs.symbols else evergreen
            for path, refs in references.items()}
