"""Hardening, text: what the words and lines of a memory or MEMORY.md did to the commands,
each case as a user meets it.

- A merge or an archive rewrote frontmatter lines dream does not own (`owner:` became `owner:
  null`, a flow list a block list, a quoted key unquoted, `!!set` a mapping) and made the file
  and MEMORY.md owner-only; and Claude Code's own `modified:` made a file "read, never
  rewritten", so it could be neither merged into nor retired.
- A long run of letters in a memory made `list`, `check` and `dream` read it again from each
  letter (a 900,000-letter memory, under the 1 MB limit, took an hour, holding the locks).
- A code fence never closed in MEMORY.md made every dream and build-index add the new links again.

Commands run through the installed `auto-dream` with a timeout, so a hang fails, it does not
stall the suite; HOME and XDG folders are in tmp_path (conftest.isolated_env).
"""

import difflib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import installed_command, write_memory_file


def run(root: Path, *argv: str, seconds: float = 60) -> subprocess.CompletedProcess:
    """The installed command; a run that does not finish in time fails, it does not hang."""
    try:
        return subprocess.run([installed_command(), "--root", str(root), *argv], capture_output=True, text=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired as stopped:
        return subprocess.CompletedProcess(stopped.cmd, None, "", f"did not finish in {seconds:g} s")


# ---------------------------------------------------------------- frontmatter edited as text

TABS = """---
name: Tabs
description: Indent with tabs
type: feedback
owner:
tags: [style, editor]
"quoted key": kept
labels: !!set {a, b}
# reviewed by Ana
ticket: 0755   # the Jira one
modified: 2026-11-20T10:00:00.000Z
---

Indent with tabs in every file of the repository.
"""
DEPLOY = """---
name: Deploy day
description: Deploys happen on Fridays
metadata:
  type: project
  modified: 2026-11-20T10:00:00.000Z
---

The team deploys to production on Friday.
"""
INDEX = "# Memory Index\n\n- [Tabs](feedback_tabs.md) — tabs\n- [Deploy day](project_deploy.md) — Fridays\n"


def added_lines(before: str, after: str) -> list[str]:
    """The lines `after` has that `before` does not, where `before`'s lines all stay, in order (else fails)."""
    lines = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    assert not [line for line in lines if line.startswith("- ")], "\n".join(lines)
    return [line[2:] for line in lines if line.startswith("+ ")]


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


@pytest.mark.slow  # starts the installed command
def test_a_merge_and_an_archive_change_only_the_keys_dream_owns_and_keep_the_modes(tmp_path):
    folder = claude_folder(tmp_path, {"feedback_tabs.md": TABS, "project_deploy.md": DEPLOY, "MEMORY.md": INDEX})
    for name in ("feedback_tabs.md", "project_deploy.md", "MEMORY.md"):
        os.chmod(folder / name, 0o644)
    for entry_type, text in (("feedback", "Indent with tabs in every file of the repository."),
                             ("project", "The team no longer deploys on Friday; deploys happen on Tuesday.")):
        assert run(folder, "append", "--type", entry_type, text).returncode == 0
    done = run(folder, "dream", "--no-llm", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert not [w for w in report["warnings"] if "never rewritten" in w]
    rows = {(row["kind"], row["path"], row["target"]) for row in report["actions"]}
    assert {row[0] for row in rows if "feedback_tabs.md" in row} == {"merge"}, rows
    assert {row[0] for row in rows if "project_deploy.md" in row} == {"supersede"}, rows

    merged = (folder / "feedback_tabs.md").read_text(encoding="utf-8")
    assert [line.split(":")[0] for line in added_lines(TABS, merged)] == ["mtime", "sources"]
    (copy,) = (folder / ".auto-dream" / "archive" / "project").iterdir()
    archived = copy.read_text(encoding="utf-8")
    assert [line.split(":")[0] for line in added_lines(DEPLOY, archived)] == [
        "mtime", "archived", "archived_reason", "archived_by_run", "superseded_by", "memory_md_lines"]
    assert (mode(folder / "feedback_tabs.md"), mode(folder / "MEMORY.md")) == ("0o644", "0o644")

    assert run(folder, "undo").returncode == 0
    assert (folder / "feedback_tabs.md").read_text(encoding="utf-8") == TABS
    assert (folder / "project_deploy.md").read_text(encoding="utf-8") == DEPLOY


@pytest.mark.slow  # starts the installed command
def test_build_index_keeps_memory_md_s_mode(tmp_path):
    folder = claude_folder(tmp_path, {"feedback_tabs.md": TABS, "MEMORY.md": "# Memory Index\n"})
    os.chmod(folder / "MEMORY.md", 0o644)
    assert run(folder, "build-index").returncode == 0
    assert "(feedback_tabs.md)" in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert mode(folder / "MEMORY.md") == "0o644"


# ---------------------------------------------------------------- a long run of letters


@pytest.mark.slow  # starts the installed command
def test_a_memory_of_900000_letters_is_listed_and_checked_in_moments_not_an_hour(root):
    letters = "a" * 900_000  # under the 1 MB a memory may hold
    write_memory_file(root, "memories/project/20261101_letters.md",
                      f"---\nname: Letters\ndescription: A long run\ntype: project\n---\n{letters}\n")
    listed = run(root, "list", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [m["name"] for m in json.loads(listed.stdout)] == ["Letters"]
    checked = run(root, "check", "--json")
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert [m["staleness"] for m in json.loads(checked.stdout)["memories"]] == ["EVERGREEN"]
    dreamed = run(root, "dream", "--no-llm")
    assert dreamed.returncode == 0, dreamed.stderr[-2000:]


# ---------------------------------------------------------------- a description YAML would type


def test_a_description_that_begins_with_a_date_and_a_hash_is_listed_whole(tmp_path, cli):
    folder = claude_folder(tmp_path, {"project_suite.md": "---\nname: Suite speed\n"
                                      "description: 2026-08-14 #1131 closed — the suite runs in 4 minutes\n"
                                      "type: project\n---\nThe suite got faster.\n"})
    listed = cli("--root", folder, "list", "--json")
    assert listed.code == 0, listed.err
    whole = "2026-08-14 #1131 closed — the suite runs in 4 minutes"  # not the date 2026-08-14
    assert [m["description"] for m in json.loads(listed.out)] == [whole]


# ---------------------------------------------------------------- a code fence never closed


def claude_folder(base: Path, files: dict[str, str]) -> Path:
    """A Claude Code memory folder (a MEMORY.md and topic files) at base/.claude/memory."""
    folder = base / ".claude" / "memory"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.slow  # starts the installed command
def test_a_fence_never_closed_in_memory_md_does_not_make_every_run_add_the_links_again(tmp_path):
    folder = claude_folder(tmp_path, {
        "MEMORY.md": "# Memory Index\n\n## Feedback\n- [Tabs](feedback_tabs.md) — tabs, not spaces\n\n"
                     "Run the suite so:\n```bash\nnpm test -- --watch\n",
        "feedback_tabs.md": "---\nname: Tabs\ndescription: Tabs, not spaces\ntype: feedback\n---\nIndent with tabs.\n",
        "feedback_rebase.md": "---\nname: Rebase\ndescription: Rebase before merging\ntype: feedback\n---\n"
                              "Rebase feature branches before merging.\n",
        "project_deploy.md": "---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\n"
                             "The team deploys on Friday.\n",
    })
    indexes = []
    for command in ("dream", "build-index", "dream", "build-index", "dream", "build-index"):
        done = run(folder, *(["dream", "--no-llm"] if command == "dream" else [command]))
        assert done.returncode == 0, done.stderr[-2000:]
        indexes.append((folder / "MEMORY.md").read_text(encoding="utf-8"))
    assert indexes[1:] == [indexes[0]] * 5, indexes[-1]
    assert indexes[0].count("(project_deploy.md)") == 1 and indexes[0].count("(feedback_rebase.md)") == 1
    assert indexes[0].endswith("```bash\nnpm test -- --watch\n")
