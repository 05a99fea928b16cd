"""The repository behind a memory folder, for staleness: config `repo`; for Claude
Code's auto memory (`~/.claude/projects/<key>/memory`), the project path Claude Code records in
`~/.claude.json`; no repository for the user's other folders under `~/.claude`; else the git work
tree holding the folder. With no repository every reference is unverifiable (docs/claude-code-folders.md).

What Claude Code does, from public material:
- Auto memory lives in `<config home>/projects/<key>/memory/`, one per git repository (every
  worktree and subfolder shares it) (https://code.claude.com/docs/en/memory, "Storage location").
  <key> is sanitizePath(canonical git root, else the project folder): every UTF-16 code unit
  outside [A-Za-z0-9] becomes `-`; past 200 characters, the first 200, `-` and a base-36 hash of
  the path (anthropics/claude-code#35162 and #19972; Untrivial-ai/agent-orchestrator#1612 and
  Michaelliv/claude-quest#15 quote the function; Digital-Process-Tools/claude-remember#187 the
  UTF-16 units). The hash is djb2 under Node but Bun.hash in the native build, so Claude Code's
  own lookup (findProjectDir) falls back to the 200-character prefix; so does _matches.
- `~/.claude.json` holds "per-project state" (https://code.claude.com/docs/en/settings, "Settings
  files") in its top-level "projects" object, keyed by that same git root or folder, absolute,
  with forward slashes (getProjectPathForConfig in Claude Code's src/utils/config.ts).
- CLAUDE_CONFIG_DIR moves every `~/.claude` path (https://code.claude.com/docs/en/claude-directory),
  and the file with them: `$CLAUDE_CONFIG_DIR/.claude.json`; a legacy `<config home>/.config.json`
  is read instead when it exists (getGlobalClaudeFile in src/utils/env.ts).
The key is lossy (`/tmp/x/a.b` and `/tmp/x/a-b` share one): it is never decoded, only compared
with the encoding of each recorded path.
"""

import json
import os
import re
from pathlib import Path

from auto_dream.store.repository import find_repo

PROJECTS_FILE = ".claude.json"
LEGACY_PROJECTS_FILE = ".config.json"  # in the config home; Claude Code reads it first when it exists
MAX_KEY_LENGTH = 200  # Claude Code's MAX_SANITIZED_LENGTH
_HASH_SUFFIX = re.compile(r"-[0-9a-z]+")


def claude_homes(home: Path, config_dir: Path | None = None) -> list[tuple[Path, Path]]:
    """Each Claude Code config home with the file that records its projects, absolute by name (no
    link followed): `config_dir` (CLAUDE_CONFIG_DIR, read by the caller) first, then `~/.claude`."""
    homes = []
    if config_dir is not None:
        config = Path(os.path.abspath(config_dir))
        homes.append((config, config / PROJECTS_FILE))
    home = Path(os.path.abspath(home))
    if not homes or homes[0][0] != home / ".claude":
        homes.append((home / ".claude", home / PROJECTS_FILE))
    return [(folder, folder / LEGACY_PROJECTS_FILE if os.path.lexists(folder / LEGACY_PROJECTS_FILE) else file)
            for folder, file in homes]


def is_under_claude_home(folder: Path, home: Path, config_dir: Path | None = None) -> bool:
    """`folder` is inside `~/.claude` (or `config_dir`): a user's folder such as
    `~/.claude/agent-memory/<agent>/`, which belongs to no one repository. A caller must not walk
    up from it looking for `.git`: a home directory kept in git would be taken for the repository."""
    folder = Path(os.path.abspath(folder))
    return any(folder.is_relative_to(claude) for claude, _ in claude_homes(home, config_dir))


def claude_project_key(folder: Path, home: Path, config_dir: Path | None = None) -> tuple[str, Path] | None:
    """For `<config home>/projects/<key>/memory`: the key and the file that records the projects of
    that config home; None for any other folder."""
    folder = Path(os.path.abspath(folder))
    for claude, projects_file in claude_homes(home, config_dir):
        if folder.name == "memory" and folder.parent.parent == claude / "projects":
            return folder.parent.name, projects_file
    return None


def claude_project_repo(folder: Path, home: Path,
                        config_dir: Path | None = None) -> tuple[Path | None, str | None]:
    """The project Claude Code recorded for an auto memory folder, and None; or None and why not,
    in one line. Exactly one recorded path must encode to the folder's key and be a folder."""
    found = claude_project_key(folder, home, config_dir)
    if found is None:
        return None, f"{folder} is not a Claude Code project memory folder (<config home>/projects/<key>/memory)"
    key, projects_file = found
    recorded, reason = read_recorded_projects(projects_file)
    if reason is not None:
        return None, reason
    matching = _matches(key, recorded)
    if not matching:
        return None, f"{projects_file} records no project for {key}"
    if len(matching) > 1:
        return None, f"several projects in {projects_file} are stored as {key}: {', '.join(matching)}"
    project = Path(matching[0])
    if not project.is_dir():
        return None, f"the project recorded for {key}, {project}, is no longer a folder"
    return project, None


def read_recorded_projects(projects_file: Path) -> tuple[list[str], str | None]:
    """The absolute project paths in the file's top-level "projects" object; or [] and why not."""
    try:
        data = json.loads(projects_file.read_bytes())
    except FileNotFoundError:
        return [], f"there is no {projects_file}, where Claude Code records its projects"
    except OSError as error:
        return [], f"cannot read {projects_file}: {error.strerror or error}"
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return [], f"{projects_file} is not valid JSON: {str(error).splitlines()[0]}"
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return [], f"{projects_file} has no \"projects\" object"
    # A relative key would be read against our own working folder; Claude Code writes none.
    return [path for path in projects if os.path.isabs(path)], None


def repo_for_folder(folder: Path, configured: str | None, home: Path | None,
                    config_dir: Path | None = None) -> tuple[Path | None, str | None]:
    """The repository whose files a memory folder's references name, and None; or None and why
    there is none (every reference is then unverifiable). First match wins: config `repo`
    (relative to the folder's parent, as find_repo reads it); for a Claude Code auto memory
    folder, the project recorded for it (never the git walk); no repository for the user's other
    folders under `~/.claude`; the git work tree holding the folder. `home` None: no Claude home."""
    if configured:
        repo = find_repo(folder, configured)
        return (repo, None) if repo is not None else (None, f"the configured repo {configured!r} is not a folder")
    if home is not None:
        if claude_project_key(folder, home, config_dir) is not None:
            return claude_project_repo(folder, home, config_dir)
        if is_under_claude_home(folder, home, config_dir):
            return None, f"{folder} is a user's folder under the Claude Code config home: it belongs to no repository"
    repo = find_repo(folder, None)
    return (repo, None) if repo is not None else (None, f"no git work tree holds {folder}")


def encode_project_path(path: str) -> str:
    """The folder name Claude Code gives `path` under projects/: each UTF-16 code unit outside
    [A-Za-z0-9] becomes `-` (an astral character, two units, gives two); past MAX_KEY_LENGTH, the
    first MAX_KEY_LENGTH, `-` and the Node build's base-36 hash of the path."""
    sanitized = "".join(char if char.isascii() and char.isalnum() else "-" * len(_utf16_units(char))
                        for char in path)
    if len(sanitized) <= MAX_KEY_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_KEY_LENGTH]}-{_base36(abs(_djb2(path)))}"


def _matches(key: str, recorded: list[str]) -> list[str]:
    """The recorded paths stored as `key`. A long path matches by its hash when a Node build wrote
    the folder, else by its first MAX_KEY_LENGTH characters and any hash, as Claude Code looks it
    up (findProjectDir); when the hash tells one of several apart, that one alone."""
    exact, by_prefix = [], []
    for path in recorded:
        encoded = encode_project_path(path)
        if encoded == key:
            exact.append(path)
        elif (len(encoded) > MAX_KEY_LENGTH and key.startswith(encoded[:MAX_KEY_LENGTH])
              and _HASH_SUFFIX.fullmatch(key, MAX_KEY_LENGTH)):
            by_prefix.append(path)
    return exact if len(exact) == 1 else exact + by_prefix


def _utf16_units(char: str) -> tuple[int, ...]:
    """The UTF-16 code units of one character, as JavaScript's charCodeAt sees them."""
    code = ord(char)
    if code <= 0xFFFF:
        return (code,)
    code -= 0x10000
    return (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _djb2(text: str) -> int:
    """Claude Code's djb2Hash: h = h*31 + unit over UTF-16 code units, kept a signed 32-bit int."""
    value = 0
    for char in text:
        for unit in _utf16_units(char):
            value = (value * 31 + unit) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    """Number.prototype.toString(36) for a non-negative integer."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
        if number == 0:
            return text
