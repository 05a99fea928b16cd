"""`import openclaw`: OpenClaw's daily notes (memory/YYYY-MM-DD.md) into the log, once."""

import json
import os
from datetime import date, datetime
from pathlib import Path

import pytest

import auto_dream
from auto_dream.store.daylog import read_all_entries
from auto_dream.store.openclaw import Fragment, note_day, note_fragments
from auto_dream.store.paths import StorePaths
from conftest import tree_hash

ENGLISH_NOTE = """\
# 2026-03-10 - Daily Memory Log

## Decisions
- Chose Tailwind over plain CSS for the dashboard
- [x] Deploy to staging before production

## Lessons
1. Gmail API rate limits at 100 requests per second
2) The fund data API runs at localhost:5000

The deploy script lives in scripts/deploy.sh and
needs the VPN to be up.

```bash
rm -rf build/  # a command, not a fact
```

<!-- written by the pre-compaction flush
- not a fact either -->
**Open items**:
- Waiting on Alex for API access
"""

JAPANESE_NOTE = """\
# 2026年3月11日

## Python環境セットアップ：
- Python 3.12 と uv を使う
- テストは pytest で
  書く

## 会議
明日は東京で
打ち合わせがある。
"""


@pytest.fixture
def workspace(isolated_env) -> Path:
    """OpenClaw's default workspace, in the test's home folder, with two days of notes."""
    folder = isolated_env / ".openclaw" / "workspace"
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "2026-03-10.md").write_text(ENGLISH_NOTE, encoding="utf-8")
    (folder / "memory" / "2026-03-11.md").write_text(JAPANESE_NOTE, encoding="utf-8")
    return folder


def logged(root: Path) -> list[tuple[str, str | None, str]]:
    entries, problems = read_all_entries(StorePaths(root))
    assert problems == []
    return [(f"{e.at:%Y-%m-%d %H:%M:%S}", e.type, e.text) for e in entries]


# ---------------------------------------------------------------- the notes read as fragments


def test_bullets_numbered_items_and_paragraphs_carry_their_heading():
    texts = [f.entry_text for f in note_fragments(ENGLISH_NOTE, date(2026, 3, 10))]
    assert texts == [
        "Decisions: Chose Tailwind over plain CSS for the dashboard",
        "Decisions: Deploy to staging before production",
        "Lessons: Gmail API rate limits at 100 requests per second",
        "Lessons: The fund data API runs at localhost:5000",
        "Lessons: The deploy script lives in scripts/deploy.sh and needs the VPN to be up.",
        "Lessons: Open items: Waiting on Alex for API access",
    ]


def test_a_japanese_heading_is_the_context_and_japanese_lines_join_without_a_space():
    fragments = note_fragments(JAPANESE_NOTE, date(2026, 3, 11))
    assert fragments == [
        Fragment("Python 3.12 と uv を使う", ("Python環境セットアップ：",)),
        Fragment("テストは pytest で書く", ("Python環境セットアップ：",)),
        Fragment("明日は東京で打ち合わせがある。", ("会議",)),
    ]
    assert fragments[0].entry_text == "Python環境セットアップ： Python 3.12 と uv を使う"


def test_a_heading_alone_a_code_block_a_comment_and_a_table_are_not_facts():
    note = ("## Python環境セットアップ：\n\n## Empty section\n\n~~~\nnot a fact\n~~~\n"
            "<!-- nor this -->\n| a | b |\n|---|---|\n---\n- -\n")
    assert note_fragments(note) == []


def test_a_label_item_is_the_context_of_its_nested_items_and_a_quote_is_its_own_fragment():
    note = "## Setup\n- Tools:\n  - uv\n  - ruff\n- Python 3.12\nA paragraph.\n> quoted fact\n"
    assert [f.entry_text for f in note_fragments(note)] == [
        "Setup: Tools: uv", "Setup: Tools: ruff", "Setup: Python 3.12 A paragraph.", "Setup: quoted fact"]


def test_only_a_real_date_names_a_daily_note():
    assert note_day("2026-04-01.md") == date(2026, 4, 1)
    assert [note_day(name) for name in ("2026-02-30.md", "20260401.md", "notes.md", "2026-04-01-deploy.md")] \
        == [None, None, None, None]


# ---------------------------------------------------------------- the command


def test_import_writes_entries_dated_by_their_note_at_noon_untyped(cli, workspace, tmp_path):
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert (result.code, result.err) == (0, "")
    assert result.out == f"read 2 notes from {workspace / 'memory'}: 9 entries added, 0 already in the log\n"
    entries = logged(root)
    assert len(entries) == 9
    assert entries[0] == ("2026-03-10 12:00:00", None, "Decisions: Chose Tailwind over plain CSS for the dashboard")
    assert ("2026-03-11 12:00:00", None, "Python環境セットアップ： Python 3.12 と uv を使う") in entries
    assert {at[:10] for at, _, _ in entries} == {"2026-03-10", "2026-03-11"}
    assert (root / "logs" / "2026" / "03" / "2026-03-11.md").is_file()


def test_importing_twice_adds_nothing_and_leaves_the_log_as_it_was(cli, workspace, tmp_path):
    root = tmp_path / "store"
    assert cli("--root", root, "import", "openclaw", workspace).code == 0
    before = tree_hash(root)
    again = cli("--root", root, "import", "openclaw", workspace, "--json")
    assert again.code == 0
    report = json.loads(again.out)
    assert (report["notes_read"], report["entries_added"], report["already_there"]) == (2, 0, 9)
    assert tree_hash(root) == before


def test_a_line_added_to_a_note_since_is_the_only_entry_a_second_import_adds(workspace, tmp_path):
    store = auto_dream.open_store(tmp_path / "store", create=True)
    assert store.import_openclaw(workspace).entries_added == 9
    with (workspace / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as note:
        note.write("- CI は GitHub Actions\n")
    second = store.import_openclaw(workspace)
    assert (second.entries_added, second.already_there) == (1, 9)
    assert logged(store.root)[-1] == ("2026-03-11 12:00:00", None, "会議: CI は GitHub Actions")


def test_entries_appended_by_hand_stay_as_they_were(cli, workspace, tmp_path):
    root = tmp_path / "store"
    assert cli("--root", root, "append", "--at", "2026-03-10 09:15", "written by hand").code == 0
    log = root / "logs" / "2026" / "03" / "2026-03-10.md"
    by_hand = log.read_text(encoding="utf-8")
    assert cli("--root", root, "import", "openclaw", workspace).code == 0
    assert log.read_text(encoding="utf-8").startswith(by_hand)


@pytest.mark.parametrize("make", ["nothing", "workspace without memory", "a file"])
def test_a_missing_workspace_or_memory_folder_is_one_error_line_and_nothing_changes(cli, isolated_env, tmp_path,
                                                                                     make):
    workspace = isolated_env / ".openclaw" / "workspace"
    if make == "workspace without memory":
        workspace.mkdir(parents=True)
    elif make == "a file":
        workspace.parent.mkdir(parents=True)
        workspace.write_text("not a folder\n")
    before = tree_hash(tmp_path)
    result = cli("import", "openclaw")
    assert result.code == 2
    assert result.out == ""
    assert result.err.count("\n") == 1 and result.err.startswith("auto-dream: error: ")
    assert str(workspace) in result.err
    assert tree_hash(tmp_path) == before  # not even a store was created


def test_a_note_not_named_like_a_date_is_skipped_with_a_warning(cli, workspace, tmp_path):
    memory = workspace / "memory"
    (memory / "ideas.md").write_text("- not from a day\n", encoding="utf-8")
    (memory / "2026-03-12-vendor-pitch.md").write_text("# Session: 2026-03-12 14:30:00 UTC\n\n"
                                                       "- **Session Key**: agent:main:main\n", encoding="utf-8")
    (memory / "projects").mkdir()
    (memory / "projects" / "2026-03-12.md").write_text("- in a subfolder\n", encoding="utf-8")
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert result.code == 0
    warnings = result.err.splitlines()
    assert len(warnings) == 2
    assert f"{memory / 'ideas.md'}: not named like a daily note (YYYY-MM-DD.md)" in result.err
    assert f"{memory / '2026-03-12-vendor-pitch.md'}: a session summary" in result.err
    texts = " ".join(text for _, _, text in logged(root))
    assert "not from a day" not in texts and "Session Key" not in texts and "subfolder" not in texts


def test_a_note_that_is_not_utf8_is_skipped_and_the_others_imported(cli, workspace, tmp_path):
    (workspace / "memory" / "2026-03-09.md").write_bytes(b"- caf\xe9\n")
    result = cli("--root", tmp_path / "store", "import", "openclaw")
    assert result.code == 0
    assert "2026-03-09.md: not UTF-8 text: not read" in result.err
    assert "read 2 notes" in result.out


def test_a_dream_over_the_imported_log_creates_memories(cli, workspace, tmp_path):
    root = tmp_path / "store"
    assert cli("--root", root, "import", "openclaw").code == 0
    dreamt = cli("--root", root, "dream", "--no-llm", "--json")
    assert dreamt.code == 0, dreamt.err
    assert json.loads(dreamt.out)["stats"]["created"] >= 5
    listed = json.loads(cli("--root", root, "list", "--json").out)
    assert any("Python 3.12" in m["name"] + m["description"] for m in listed)
    assert cli("--root", root, "check", "--json").code == 0
    assert json.loads(cli("--root", root, "check", "--json").out)["undistilled_entries"] == 0


def test_the_default_store_of_the_openclaw_skill_gets_the_import(cli, workspace, isolated_env):
    (workspace / ".auto-dream").mkdir()
    result = cli("import", "openclaw")  # no --root: root resolution finds the skill's store
    assert result.code == 0
    assert logged(workspace / ".auto-dream")[0][0] == "2026-03-10 12:00:00"
    assert not (isolated_env / ".auto-dream").exists()


def test_the_library_import_returns_its_counts(workspace, tmp_path):
    store = auto_dream.open_store(tmp_path / "store", create=True)
    result = store.import_openclaw(workspace)
    assert (result.notes_read, result.entries_added, result.already_there, result.skipped) == (2, 9, 0, ())
    assert result.logs_written == ("logs/2026/03/2026-03-10.md", "logs/2026/03/2026-03-11.md")
    assert store.dream(now=datetime(2026, 3, 12, 9, 0).astimezone()).report.stats.created >= 5


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_symlinked_note_is_skipped_with_a_warning_and_what_it_leads_to_is_not_imported(cli, workspace, tmp_path,
                                                                                       target):
    """A note that is a link to a file holding a password became a memory (and would go to
    Claude with --llm): it is skipped, as a day's log that is a link is."""
    secret = tmp_path / "secret.txt" if target == "outside" else workspace / "secret.txt"
    secret.write_text("- the vault password is hunter2\n", encoding="utf-8")
    (workspace / "memory" / "2026-03-09.md").symlink_to(secret)
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert result.code == 0
    assert result.err == (f"auto-dream: warning: {workspace / 'memory' / '2026-03-09.md'}: a symbolic link: not read "
                          "(it may lead out of the workspace, to a secret)\n")
    assert "read 2 notes" in result.out
    assert "hunter2" not in " ".join(text for _, _, text in logged(root))
    assert not (root / "logs" / "2026" / "03" / "2026-03-09.md").exists()
    report = json.loads(cli("--root", root, "import", "openclaw", "--json").out)
    assert [skipped["reason"] for skipped in report["skipped"]] == [
        "a symbolic link: not read (it may lead out of the workspace, to a secret)"]


def test_a_note_that_becomes_a_link_after_it_was_looked_at_is_not_followed(workspace, tmp_path, monkeypatch):
    """The link swapped in between the look and the open (O_NOFOLLOW)."""
    import auto_dream.commands.import_openclaw as importer

    secret = tmp_path / "secret.txt"
    secret.write_text("- the vault password is hunter2\n", encoding="utf-8")
    note = workspace / "memory" / "2026-03-09.md"
    note.write_text("- an ordinary note\n", encoding="utf-8")
    real_lstat = os.lstat

    def swapped(path, *args, **kwargs):
        status = real_lstat(path, *args, **kwargs)
        if Path(path) == note:  # a regular file when looked at, a link when opened
            note.unlink()
            note.symlink_to(secret)
        return status

    monkeypatch.setattr(importer.os, "lstat", swapped)
    store = auto_dream.open_store(tmp_path / "store", create=True)
    result = store.import_openclaw(workspace)
    assert [(skipped.path, skipped.reason) for skipped in result.skipped] == [(note, importer.LINKED)]
    assert "hunter2" not in " ".join(text for _, _, text in logged(store.root))


@pytest.mark.parametrize("name, written", [
    ("bad\nname.md", "bad\\x0aname.md"),  # a newline would split the warning in two
    ("esc\x1b[31mred.md", "esc\\x1b[31mred.md"),  # ESC would reach the terminal
    ("caf\udce9.md", "caf\\xe9.md"),  # a byte that is not UTF-8
])
def test_a_skipped_file_name_is_written_out_in_the_warning_and_the_json(cli, workspace, tmp_path, name, written):
    (workspace / "memory" / name).write_text("- a note\n", encoding="utf-8")
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert result.code == 0
    assert result.err == (f"auto-dream: warning: {workspace / 'memory'}/{written}: not named like a daily note "
                          "(YYYY-MM-DD.md): not imported\n")
    again = cli("--root", root, "import", "openclaw", "--json")
    assert json.loads(again.out)["skipped"][0]["path"] == f"{workspace / 'memory'}/{written}"
    again.out.encode("utf-8")  # the JSON document is UTF-8 text: no byte of the name went out raw
