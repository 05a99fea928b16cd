"""Staleness (DESIGN 3.2): file and symbol references checked against the project's repository.

Only references that can be checked count: a path rooted outside the repository (`~`, `/`,
`$`, a URL) or whose first folder is not a top-level folder of the repository is
UNVERIFIABLE, and a memory with no verifiable reference is EVERGREEN however many paths it
names (OrchestKit's dream flagged 11 of 11 live memories as stale for want of this rule).
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

EVERGREEN, FRESH, PARTIALLY_STALE, FULLY_STALE = "EVERGREEN", "FRESH", "PARTIALLY_STALE", "FULLY_STALE"

_EXTENSIONS = ("py|pyi|ts|tsx|js|jsx|mjs|cjs|json|md|yaml|yml|sh|toml|go|rs|java|kt|rb|c|h|cc|cpp|hpp|"
               "cs|css|scss|html|sql|txt|cfg|ini|vue|svelte|swift|lock|xml|proto|tf")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATH = re.compile(
    rf"(?<![\w/.~$@-])([~$/]?[\w.@~$-]*(?:/[\w.@-]+)+\.(?:{_EXTENSIONS}))(?::\d+(?:[:-]\d+)?)?(?![\w/])")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\(\)")
_DEFINITION = re.compile(r"\b(?:def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]{2,})")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|^[A-Z][a-z0-9]+[A-Z]")
_LINE_SUFFIX = re.compile(r":\d+(?:[:-]\d+)?$")
_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox", ".mypy_cache",
              ".pytest_cache", "target", ".hypothesis"}
MAX_SCANNED_FILE = 2_000_000


@dataclass(frozen=True)
class References:
    files: tuple[str, ...]
    symbols: tuple[str, ...]


def extract_references(text: str) -> References:
    """File paths (a trailing `:line` is not part of the path) and code symbols named in `text`."""
    text = _URL.sub(" ", text)
    files: dict[str, None] = {}
    symbols: dict[str, None] = {}
    for match in _PATH.finditer(text):
        files[match.group(1)] = None
    for match in _BACKTICKED.finditer(text):
        token = _LINE_SUFFIX.sub("", match.group(1).strip())
        if "/" in token and " " not in token:
            files[token] = None
        elif token.endswith("()") and _IDENTIFIER.fullmatch(token[:-2].rsplit(".", 1)[-1]):
            symbols[token[:-2].rsplit(".", 1)[-1]] = None
        elif _IDENTIFIER.fullmatch(token) and ("_" in token.strip("_") or _CAMEL.search(token)):
            symbols[token] = None
    for pattern in (_CALL, _DEFINITION):
        for match in pattern.finditer(text):
            symbols[match.group(1)] = None
    return References(tuple(files), tuple(symbols))


def is_verifiable(ref: str, repo: Path | None) -> bool:
    """REPO_RELATIVE (checkable here) or UNVERIFIABLE (rooted elsewhere: never counts)."""
    if repo is None or ref.startswith(("~", "/", "$")) or ".." in ref.split("/"):
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
            self._found_symbols |= self._scan(todo)
            self._searched |= todo
        return wanted & self._found_symbols

    def _scan(self, wanted: set[str]) -> set[str]:
        found: set[str] = set()
        for current, dirs, names in os.walk(self.repo):
            here = Path(current)
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")
                       and (self.exclude is None or (here / d).resolve() != self.exclude)]
            for name in names:
                path = here / name
                try:
                    if path.is_symlink() or path.stat().st_size > MAX_SCANNED_FILE:
                        continue
                    data = path.read_bytes()
                except OSError:
                    continue
                if b"\x00" in data[:8192]:
                    continue
                found |= wanted & set(_IDENTIFIER.findall(data.decode("utf-8", "replace")))
                if found == wanted:
                    return found
        return found


def classify(refs: References, repo_index: RepoIndex, found_symbols: set[str]) -> Staleness:
    """EVERGREEN (nothing verifiable), FRESH, PARTIALLY_STALE or FULLY_STALE (every ref and symbol gone)."""
    repo = repo_index.repo
    verifiable = [f for f in refs.files if is_verifiable(f, repo)]
    unverifiable = [f for f in refs.files if not is_verifiable(f, repo)]
    symbols = list(refs.symbols) if repo is not None else []
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
