"""Hardening (issue 25), text: what the words and lines of a memory or MEMORY.md did to the commands,
each case as a user meets it.

- A long run of letters in a memory made `list`, `check` and `dream` read it again from each
  letter (a 900,000-letter memory, under the 1 MB limit, took an hour, holding the locks).

Commands run through the installed `auto-dream` with a timeout, so a hang fails, it does not
stall the suite; HOME and XDG folders are in tmp_path (conftest.isolated_env).
"""

import json
import subprocess
from pathlib import Path

from conftest import installed_command, write_memory_file


def run(root: Path, *argv: str, seconds: float = 60) -> subprocess.CompletedProcess:
    """The installed command; a run that does not finish in time fails, it does not hang."""
    try:
        return subprocess.run([installed_command(), "--root", str(root), *argv], capture_output=True, text=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired as stopped:
        return subprocess.CompletedProcess(stopped.cmd, None, "", f"did not finish in {seconds:g} s")


# ---------------------------------------------------------------- a long run of letters


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


# ---------------------------------------------------------------- a code fence never closed


def claude_folder(base: Path, files: dict[str, str]) -> Path:
    """A Claude Code memory folder (a MEMORY.md and topic files) at base/.claude/memory."""
    folder = base / ".claude" / "memory"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


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
