"""A Claude Code memory folder dreamed in place: topic files stay where they are and
keep their frontmatter layout and every key; retired files leave for .auto-dream/archive/; the
run is undone byte for byte; Claude Code's `.consolidate-lock` is honoured and taken; the
repository behind a projects folder comes from ~/.claude.json."""

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.runner import dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.store.context import open_context
from auto_dream.store.memory import parse_memory
from conftest import make_git_project

OLD = datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp()

METADATA = ("---\nname: Temporary folders in tests\ndescription: Use pytest's tmp_path fixture for temporary folders\n"
            "metadata:\n  type: feedback\n  node_type: memory\n  originSessionId: 5f0c-11aa\n"
            "  modified: 2026-03-01\ncustom_key: keep me\n---\n"
            "Always use pytest fixtures for temporary folders in tests.\n\n**Why:** leftovers broke CI twice.\n")
TOP_LEVEL = ("---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\nowner: ops\n"
             "tags: [release, cadence]\n---\nThe team deploys to production on Friday.\n")
COLON = ("---\nname: Cover letter quality\ndescription: Cover letter standards: NYC location, one page\n"
         "type: feedback\n---\nEvery cover letter names the NYC office.\n")
BACKTICK = ("---\nname: Stray test attributes\ndescription: `#[test]` on a helper makes it a test\n"
            "metadata:\n  type: feedback\n---\nRemove a stray test attribute from helper functions.\n")
HASH = ("---\nname: Stray #[test] attribute on helper function\ndescription: Found in PR #835 review\n"
        "type: project\n---\nThe helper in the parser crate was run as a test.\n")
INDEX = ("# Project memory\n\n## Feedback\n- [Temporary folders](feedback_tmp.md) — my own hook, not the description\n"
         "- [Cover letters](feedback_cover_letters.md) — NYC!\n\n## Project\n"
         "- [Deploy day](project_deploy_day.md) — Fridays\n\n## Inline facts\n"
         "- The staging database is reset every Sunday night\n1. First numbered fact\n")


def claude_folder(base: Path, files: dict[str, str], index: str | None = INDEX) -> Path:
    folder = base / ".claude" / "memory"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        os.utime(folder / name, (OLD, OLD))
    if index is not None:
        (folder / "MEMORY.md").write_text(index, encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file the agent reads: all but auto-dream's own .auto-dream/, the logs, and Claude
    Code's .consolidate-lock (a run taken back still happened: its mtime says so)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not relative.startswith((".auto-dream/", "logs/", ".consolidate-lock")):
            found[relative] = path.read_bytes()
    return found


def run(cli, folder: Path, *argv: str):
    result = cli("--root", folder, *argv)
    assert result.code == 0, result
    return result


def frontmatter_keys(text: str) -> list[str]:
    block = text.split("---\n")[1]
    return [line.split(":")[0] for line in block.splitlines() if line and not line.startswith(" ")]


# ---------------------------------------------------------------- rewritten files keep their layout


def test_a_metadata_block_and_a_top_level_type_are_rewritten_without_losing_a_key(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA, "project_deploy_day.md": TOP_LEVEL})
    run(cli, folder, "append", "--type", "feedback", "Always use pytest fixtures for temporary folders in tests.")
    run(cli, folder, "append", "--type", "project", "The team deploys to production on Friday.")
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    merged = {row["path"] for row in report["actions"] if row["kind"] == "merge"}
    assert {"feedback_tmp.md", "project_deploy_day.md"} <= {row.get("target") for row in report["actions"]} | merged
    tmp = (folder / "feedback_tmp.md").read_text()
    deploy = (folder / "project_deploy_day.md").read_text()
    assert "\nmetadata:\n  type: feedback\n  node_type: memory\n  originSessionId: 5f0c-11aa\n" in tmp
    assert "\ntype:" not in tmp  # the type stays inside the metadata block
    assert "custom_key: keep me" in tmp
    assert set(frontmatter_keys(METADATA)) <= set(frontmatter_keys(tmp))
    assert "\ntype: project\n" in deploy and "owner: ops" in deploy and "tags:" in deploy
    assert set(frontmatter_keys(TOP_LEVEL)) <= set(frontmatter_keys(deploy))
    assert sorted(os.listdir(folder)) == [".auto-dream", ".consolidate-lock", "MEMORY.md", "feedback_tmp.md",
                                          "logs", "project_deploy_day.md"]  # no memories/, nothing renamed


@pytest.mark.parametrize(("name", "text", "field", "value"), [
    ("feedback_cover_letters.md", COLON, "description", "Cover letter standards: NYC location, one page"),
    ("feedback_stray.md", BACKTICK, "description", "`#[test]` on a helper makes it a test"),
    ("project_stray.md", HASH, "name", "Stray #[test] attribute on helper function"),
], ids=["unquoted colon", "backtick", "unquoted hash"])
def test_values_yaml_misreads_are_read_whole_and_written_back_whole(tmp_path, cli, name, text, field, value):
    folder = claude_folder(tmp_path, {name: text})
    listed = json.loads(run(cli, folder, "list", "--json").out)
    assert listed[0][field] == value
    body = text.split("---\n", 2)[2].strip()
    run(cli, folder, "append", "--type", listed[0]["type"], body)  # repeats it: merged into the file
    run(cli, folder, "dream", "--no-llm")
    rewritten = (folder / name).read_text()
    assert rewritten != text  # it was rewritten (its sources, its mtime)
    again = parse_memory(rewritten.encode(), name, datetime.now(timezone.utc), None, untyped="reference")
    assert getattr(again, field) == value and not again.read_only


# ---------------------------------------------------------------- retired files leave; undo restores all


def test_a_superseded_memory_goes_to_the_archive_with_why_and_undo_restores_the_folder_byte_for_byte(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA, "project_deploy_day.md": TOP_LEVEL,
                                      "feedback_cover_letters.md": COLON})
    before = snapshot(folder)
    run(cli, folder, "append", "--type", "project", "The team deploys to production on Monday now, not Friday")
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    superseded = [row for row in report["actions"] if row["kind"] == "supersede"]
    assert [row["path"] for row in superseded] == ["project_deploy_day.md"]
    archived = folder / ".auto-dream" / "archive" / "project" / "project_deploy_day.markdown"
    assert not (folder / "project_deploy_day.md").exists() and archived.is_file()
    # Claude Code recalls every *.md under the folder, dot-folders too (memdir/memoryScan.ts):
    # nothing auto-dream keeps is named so, or a retired memory would come back
    assert not list((folder / ".auto-dream").rglob("*.md"))
    listed = json.loads(run(cli, folder, "list", "--archived", "--json").out)
    assert [m["path"] for m in listed] == [".auto-dream/archive/project/project_deploy_day.markdown"]
    copy = archived.read_text()
    new_file = superseded[0]["target"]
    assert f"superseded_by: {new_file}" in copy and "archived_reason:" in copy
    assert f"archived_by_run: {report['run_id']}" in copy and "owner: ops" in copy
    index = (folder / "MEMORY.md").read_text()
    assert "project_deploy_day.md" not in index  # the link to the retired file is dropped
    for line in INDEX.splitlines():  # every other line a person wrote is kept
        if "project_deploy_day.md" not in line:
            assert line in index.splitlines()
    assert f"]({new_file})" in index  # the new memory is linked, Claude Code's line form
    assert new_file.startswith("project_") and "/" not in new_file
    run(cli, folder, "undo")
    assert snapshot(folder) == before


def test_an_index_only_folder_keeps_every_line(tmp_path, cli):
    index = "# Reviewer memory\n\n## Patterns\n- Prefer early returns\n- Never log secrets\n\nA paragraph.\n"
    folder = claude_folder(tmp_path, {}, index)
    run(cli, folder, "append", "Reviews of the parser crate need a second reviewer")
    run(cli, folder, "dream", "--no-llm")
    after = (folder / "MEMORY.md").read_text()
    assert after.startswith(index)  # every hand-written line, in its place
    created = [name for name in os.listdir(folder) if name.endswith(".md") and name != "MEMORY.md"]
    assert len(created) == 1 and f"]({created[0]})" in after


def test_append_writes_the_day_log_inside_the_folder(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    result = run(cli, folder, "append", "--at", "2026-11-30T09:15", "a fact")
    assert "logs/2026/11/2026-11-30.md" in result.out
    assert (folder / "logs" / "2026" / "11" / "2026-11-30.md").is_file()


# ---------------------------------------------------------------- Claude Code's .consolidate-lock


@pytest.mark.slow  # a child process holds the lock
def test_a_live_claude_code_consolidation_makes_dream_exit_3_and_touch_nothing(tmp_path, cli, sleeper):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    lock = folder / ".consolidate-lock"
    lock.write_text(str(sleeper.pid))
    before = snapshot(folder), lock.stat().st_mtime_ns
    for argv in (("dream", "--no-llm"), ("dream", "--dry-run", "--no-llm"), ("undo",)):
        result = cli("--root", folder, *argv)
        assert result.code == 3, result
        assert "Claude Code is consolidating this memory folder" in result.err and result.err.count("\n") == 1
    assert (snapshot(folder), lock.stat().st_mtime_ns) == before


def test_a_dead_holders_lock_is_taken_and_left_with_the_time_of_the_run(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    lock = folder / ".consolidate-lock"
    lock.write_text("2147483646")  # no process has it
    os.utime(lock, (OLD, OLD))
    run(cli, folder, "append", "--type", "project", "Reviews of the parser crate need a second reviewer")
    started = time.time()
    run(cli, folder, "dream", "--no-llm")
    assert lock.read_text() == str(os.getpid())
    assert lock.stat().st_mtime >= started - 1  # Claude Code's 24-hour gate counts this run


def test_a_run_that_changes_nothing_leaves_the_lock_as_it_was(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    run(cli, folder, "append", "--type", "project", "Reviews of the parser crate need a second reviewer")
    run(cli, folder, "dream", "--no-llm")
    lock = folder / ".consolidate-lock"
    lock.write_text("2147483646")  # Claude Code's own consolidation, since: no process has its pid now
    os.utime(lock, (OLD, OLD))
    before = lock.read_bytes(), lock.stat().st_mtime_ns
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    assert report["actions"] == []
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) == before  # no consolidation for its 24-hour gate


def test_a_failed_run_puts_the_lock_back_as_it_was(tmp_path):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    lock = folder / ".consolidate-lock"
    lock.write_text("2147483646")
    os.utime(lock, (OLD, OLD))
    before = lock.read_bytes(), lock.stat().st_mtime_ns

    class Broken(DeterministicDistiller):
        def distill(self, *args, **kwargs):
            raise RuntimeError("the distiller broke")

    from auto_dream.store.daylog import Entry, append_entry
    context = open_context(folder, create=True)
    append_entry(context.paths, Entry(at=datetime(2026, 11, 30, 9, tzinfo=timezone.utc), text="a fact to distill",
                                      type="user"))
    with pytest.raises(RuntimeError):
        dream(context, datetime(2026, 11, 30, 10, tzinfo=timezone.utc), DreamOptions(), Broken())
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) == before


def test_a_run_that_is_not_due_leaves_the_lock_as_it_was(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    run(cli, folder, "append", "--type", "project", "Reviews of the parser crate need a second reviewer")
    run(cli, folder, "dream", "--no-llm")
    lock = folder / ".consolidate-lock"
    os.utime(lock, (OLD, OLD))
    before = lock.read_bytes(), lock.stat().st_mtime_ns
    result = run(cli, folder, "dream", "--no-llm", "--if-due")
    assert "not due" in result.err
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) == before


# ---------------------------------------------------------------- the repository behind the folder


STALE = ("---\nname: Parser entry point\ndescription: parse_config in src/config_loader.py reads the file\n"
         "type: project\n---\nThe entry point is `parse_config` in `src/config_loader.py`.\n")


def projects_folder(home: Path, project: Path) -> Path:
    key = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))
    folder = home / ".claude" / "projects" / key / "memory"
    folder.mkdir(parents=True)
    (folder / "project_parser.md").write_text(STALE)
    os.utime(folder / "project_parser.md", (OLD, OLD))
    (folder / "MEMORY.md").write_text("# Memory\n- [Parser](project_parser.md) — entry point\n")
    return folder


def test_claude_json_names_the_repository_of_a_projects_folder(tmp_path, isolated_env, cli):
    home = isolated_env
    project = make_git_project(tmp_path / "work" / "my.app", ("src/config_loader.py",), ("parse_config",))
    folder = projects_folder(home, project)
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"allowedTools": []}}}))
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    assert [row["path"] for row in report["actions"] if row["kind"] == "archive"] == ["project_parser.md"]


def test_without_claude_json_every_reference_is_unverifiable(tmp_path, isolated_env, cli):
    project = make_git_project(tmp_path / "work" / "my.app")
    folder = projects_folder(isolated_env, project)
    result = run(cli, folder, "dream", "--no-llm", "--json")
    report = json.loads(result.out)
    assert not [row for row in report["actions"] if row["kind"] == "archive"]
    assert "no repository to check references against" in result.err
    assert (folder / "project_parser.md").is_file()


# ---------------------------------------------------------------- dream --all: one folder at a time


def test_dream_all_dreams_each_folder_on_its_own_and_never_merges_across_agents(tmp_path, isolated_env, cli):
    project = tmp_path / "project" / ".claude" / "agent-memory"
    same = "---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\nWe deploy on Friday.\n"
    twin = same.replace("name: Deploy day", "name: Deploy day (copy)")
    folders = []
    for agent in ("reviewer", "writer"):
        folder = project / agent
        folder.mkdir(parents=True)
        (folder / "project_deploy.md").write_text(same)
        (folder / "project_deploy_copy.md").write_text(twin)  # a duplicate within the folder: merged
        (folder / "MEMORY.md").write_text("# Memory\n")
        folders.append(folder)
    result = cli("dream", "--all", str(tmp_path / "project"), "--no-llm", "--json")
    assert result.code == 0, result
    rows = json.loads(result.out)["folders"]
    assert [row["path"] for row in rows] == [str(f) for f in folders]
    assert all(row["result"] == "dreamed" and row["counts"]["merged"] == 1 for row in rows)
    for folder in folders:  # each keeps its own one memory: nothing moved between agents
        kept = [name for name in os.listdir(folder) if name.endswith(".md") and name != "MEMORY.md"]
        assert len(kept) == 1
        merged = [r for r in json.loads((next((folder / ".auto-dream" / "runs").iterdir()) / "report.json")
                                        .read_text())["actions"] if r["kind"] == "merge"]
        assert all("/" not in r["path"] and "/" not in (r["target"] or "") for r in merged)


@pytest.mark.slow  # a child process holds the lock
def test_dream_all_reports_a_busy_folder_and_dreams_the_others(tmp_path, isolated_env, cli, sleeper):
    base = tmp_path / "project" / ".claude" / "agent-memory"
    for agent in ("busy", "free"):
        (base / agent).mkdir(parents=True)
        (base / agent / "MEMORY.md").write_text("# Memory\n- a hand-written fact\n")
    (base / "busy" / ".consolidate-lock").write_text(str(sleeper.pid))
    result = cli("dream", "--all", str(tmp_path / "project"), "--no-llm")
    assert result.code == 3, result
    assert "Summary" in result.out and "failed" in result.out and "dreamed" in result.out
    assert "1 of 2 memory folders were not dreamed" in result.err
    assert (base / "free" / ".auto-dream").is_dir() and not (base / "busy" / ".auto-dream").exists()


def test_a_path_without_all_is_refused(tmp_path, cli):
    result = cli("dream", str(tmp_path))
    assert result.code == 2 and "is for `dream --all`" in result.err, result


# ---------------------------------------------------------------- an index over Claude Code's caps


def test_an_over_cap_index_moves_its_inline_lines_to_a_linked_topic_file_and_undo_brings_them_back(tmp_path, cli):
    inline = "".join(f"- Fact {n}: the build cache for service {n} lives in /var/cache/svc{n}\n" for n in range(260))
    index = "# Ops agent memory\n\n## Facts\n" + inline
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA}, index)
    before = snapshot(folder)
    result = cli("--root", folder, "build-index")  # a move is a dream's, journaled: refused here
    assert result.code == 1 and "nothing was written" in result.err, result
    assert snapshot(folder) == before
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    text = (folder / "MEMORY.md").read_text()
    overflow = (folder / "MEMORY_overflow.md").read_text()
    assert text.count("\n") <= 200 and len(text.encode()) <= 25_000
    assert "](MEMORY_overflow.md)" in text and "](feedback_tmp.md)" in text
    kept_and_moved = [line for line in (text + overflow).splitlines() if line.startswith("- Fact ")]
    assert sorted(kept_and_moved) == sorted(inline.splitlines())  # every line, once, none cut
    moved = [line for line in overflow.splitlines() if line.startswith("- Fact ")]
    assert moved == [line for line in inline.splitlines() if line in moved]  # in their order
    assert any("MEMORY_overflow.md" in w for w in report["warnings"])
    journal = json.loads((folder / ".auto-dream" / "runs" / report["run_id"] / "journal.json").read_text())
    assert "MEMORY_overflow.md" in json.dumps(journal)  # recorded in the run journal
    again = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    assert not any("lines moved to" in w for w in again["warnings"]) and not again["actions"]  # nothing moves twice
    assert (folder / "MEMORY.md").read_text() == text
    run(cli, folder, "undo")
    assert snapshot(folder) == before


# ---------------------------------------------------------------- an agent appending what a memory already says


DRIFT = ("---\nname: scan-extension-drift\ndescription: two extension lists drift; the fix is one shared constant\n"
         "metadata:\n  type: project\n---\n\n"
         "The capture hook and the report hook each hardcode the scanned file-extension list in different formats, "
         "so they drift. The report hook omitted kts and sql, so markers in those files were captured but never "
         "shown.\n\n**Why:** two literal lists with no shared source drift over time.\n\n"
         "**How to apply:** one exported SCAN_EXTENSIONS constant; both hooks build their filters from it. Both "
         "consume the constant, so they can never drift again.\n")


def test_a_memorys_own_paragraph_appended_again_joins_it_and_never_supersedes_it(tmp_path, cli):
    folder = claude_folder(tmp_path, {"project_scan_extension_drift.md": DRIFT}, index=None)
    paragraph = DRIFT.split("---\n", 2)[2].strip().split("\n\n")[0]
    run(cli, folder, "append", "--type", "project", paragraph)
    report = json.loads(run(cli, folder, "dream", "--no-llm", "--json").out)
    kinds = [(row["kind"], row["target"]) for row in report["actions"] if row["kind"] != "index"]
    assert kinds == [("merge", "project_scan_extension_drift.md")], report["actions"]
    rewritten = (folder / "project_scan_extension_drift.md").read_text()
    assert "sources: [" in rewritten  # rewritten: the entry joined it
    assert "\n---\n\nThe capture hook" in rewritten  # the blank line Claude Code leaves after the frontmatter stays
    assert "\nmetadata:\n  type: project\n" in rewritten and "\ntype:" not in rewritten
    archive = folder / ".auto-dream" / "archive"
    assert not archive.exists() or not any(archive.rglob("*.md"))


def test_inside_a_claude_folder_auto_dream_has_dreamed_the_folder_is_the_root(tmp_path, cli, monkeypatch):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    run(cli, folder, "dream", "--no-llm")  # makes .auto-dream/ inside it
    monkeypatch.chdir(folder)
    listed = json.loads(cli("list", "--json").out)
    assert [m["path"] for m in listed] == ["feedback_tmp.md"]
    assert not (folder / ".auto-dream" / "memories").exists()  # .auto-dream/ was not taken for a store


def test_the_records_folder_inside_a_claude_folder_is_not_taken_for_a_store(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA})
    run(cli, folder, "dream", "--no-llm")
    before = snapshot(folder), sorted(p.name for p in (folder / ".auto-dream").iterdir())
    for argv in (("append", "a fact"), ("list",), ("dream", "--no-llm")):
        result = cli("--root", folder / ".auto-dream", *argv)
        assert result.code == 1 and f"give --root {folder}" in result.err, result
    assert (snapshot(folder), sorted(p.name for p in (folder / ".auto-dream").iterdir())) == before


@pytest.mark.parametrize("beside", [["AGENTS.md", "SOUL.md", "memory/2026-11-30.md"], ["notes.md"]],
                         ids=["an OpenClaw workspace", "a notes folder"])
def test_a_folder_with_a_memory_md_and_a_store_of_ours_inside_is_not_a_claude_folder(tmp_path, cli, monkeypatch,
                                                                                      beside):
    workspace = tmp_path / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Long-term memory\n- the user likes short answers\n")
    for name in beside:
        (workspace / name).write_text("# notes\n")
    store = workspace / ".auto-dream"
    assert cli("--root", store, "init").code == 0
    monkeypatch.chdir(workspace)
    assert cli("append", "a fact for the store").code == 0  # found upwards: the store, not the workspace
    assert not (workspace / "logs").exists() and list((store / "logs").rglob("*.md"))
    result = cli("--root", store, "check")
    assert result.code == 0, result
    assert cli("dream", "--no-llm").code == 0
    assert (workspace / "MEMORY.md").read_text() == "# Long-term memory\n- the user likes short answers\n"


def test_undo_refuses_when_memory_md_changed_since_the_run_so_moved_lines_are_never_lost(tmp_path, cli):
    inline = "".join(f"- Fact {n}: service {n} caches builds in /var/cache/svc{n}\n" for n in range(230))
    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA}, "# Ops\n\n" + inline)
    run(cli, folder, "dream", "--no-llm")
    assert (folder / "MEMORY_overflow.md").exists()
    with (folder / "MEMORY.md").open("a") as index:
        index.write("- a line the agent added since\n")  # Claude Code's agent writes MEMORY.md all day
    kept = snapshot(folder)
    result = cli("--root", folder, "undo")
    assert result.code == 1 and "MEMORY.md changed since that run" in result.err, result
    assert snapshot(folder) == kept  # nothing restored, nothing removed: the moved lines are still there
    run(cli, folder, "undo", "--force")  # the person chooses: the folder as it was before the run
    assert (folder / "MEMORY.md").read_text() == "# Ops\n\n" + inline and not (folder / "MEMORY_overflow.md").exists()


@pytest.mark.parametrize("when", ["planning", "applying"])
def test_a_line_the_agent_adds_to_memory_md_during_a_dream_is_never_overwritten(tmp_path, when, monkeypatch):
    import auto_dream.dream.runner as runner

    folder = claude_folder(tmp_path, {"feedback_tmp.md": METADATA}, "# Memory\n- a hand-written fact\n")
    context = open_context(folder, create=True)
    from auto_dream.store.daylog import Entry, append_entry
    append_entry(context.paths, Entry(at=datetime(2026, 11, 30, 9, tzinfo=timezone.utc),
                                      text="Deploys go out on Tuesdays after the review", type="project"))
    added = "- a line the agent wrote while the dream ran\n"

    def agent_writes() -> None:
        with (folder / "MEMORY.md").open("a") as index:
            index.write(added)

    if when == "planning":
        real_plan = runner.plan_dream

        def plan_then_write(*args, **kwargs):
            plan = real_plan(*args, **kwargs)
            agent_writes()
            return plan
        monkeypatch.setattr(runner, "plan_dream", plan_then_write)
        hook = None
    else:
        def hook(step: int) -> None:
            if step == 1:
                agent_writes()
    outcome = dream(context, datetime(2026, 11, 30, 10, tzinfo=timezone.utc), DreamOptions(), DeterministicDistiller(),
                    step_hook=hook)
    assert added in (folder / "MEMORY.md").read_text()
    assert any("MEMORY.md" in line and "changed since the dream started" in line
               for line in outcome.report.as_json()["warnings"]), outcome.report.as_json()["warnings"]


def test_a_second_retirement_of_the_same_name_is_numbered_and_never_overwrites_the_first(tmp_path, cli):
    folder = claude_folder(tmp_path, {"project_deploy_day.md": TOP_LEVEL})
    earlier = folder / ".auto-dream" / "archive" / "project" / "project_deploy_day.markdown"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("an earlier retirement\n")
    run(cli, folder, "append", "--type", "project", "The team deploys to production on Monday now, not Friday")
    run(cli, folder, "dream", "--no-llm")
    assert earlier.read_text() == "an earlier retirement\n"
    assert (earlier.parent / "project_deploy_day_2.markdown").is_file()


# ---------------------------------------------------------------- what a person marked

SUPERSEDED_LINE = ("- [Cover letter quality](feedback_cover_letters.md) — SUPERSEDED by unified rules below. "
                   "Kept for historical reference only.")
MARKED_INDEX = (f"# Project memory\n\n## Feedback\n{SUPERSEDED_LINE}\n"
                "- [Unified resume/CL rules](feedback_unified.md) — all rules consolidated\n")
UNIFIED = ("---\nname: Resume and cover letter quality\ndescription: ALL rules for resume and cover letters\n"
           "type: feedback\n---\nResumes are one page; cover letters run 550 to 700 words in four paragraphs.\n")
DEPRECATED = ("---\nname: Deploy day\ndescription: DEPRECATED, see project_deploy_v2.md\ntype: project\n---\n"
              "The team deployed on Fridays.\n")


def test_a_dream_links_no_memory_a_person_marked_and_keeps_the_line_a_person_wrote_for_one(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_cover_letters.md": COLON, "feedback_unified.md": UNIFIED,
                                      "project_deploy_day.md": DEPRECATED}, MARKED_INDEX)
    run(cli, folder, "dream", "--no-llm")
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == MARKED_INDEX  # nothing added, nothing dropped
    assert run(cli, folder, "build-index").out.startswith("MEMORY.md already up to date")


def test_list_shows_the_status_memory_md_gives_a_file_and_the_file_it_points_to(tmp_path, cli):
    folder = claude_folder(tmp_path, {"feedback_cover_letters.md": COLON, "feedback_unified.md": UNIFIED,
                                      "project_deploy_day.md": DEPRECATED}, MARKED_INDEX)
    listed = {m["path"]: m["status"] for m in json.loads(run(cli, folder, "list", "--json").out)}
    assert listed == {
        "feedback_cover_letters.md": {"kind": "superseded", "quote": SUPERSEDED_LINE,
                                      "points_to": ["feedback_unified.md"]},
        "feedback_unified.md": None,
        "project_deploy_day.md": {"kind": "deprecated", "quote": "DEPRECATED, see project_deploy_v2.md",
                                  "points_to": ["project_deploy_v2.md"]},
    }
