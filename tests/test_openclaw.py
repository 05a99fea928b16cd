"""`import openclaw`: OpenClaw's daily notes (memory/YYYY-MM-DD.md) into the log, once."""

import json
import os
from datetime import date, datetime, time
from pathlib import Path

import pytest

import auto_dream
from auto_dream.store.daylog import MAX_TEXT_CHARS, append_entry, make_entry, read_all_entries
from auto_dream.store.openclaw import NotePlan, note_day, note_sections, plan_note, section_entries
from auto_dream.store.openclaw_legacy import earlier_entry_texts
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


# ---------------------------------------------------------------- a note read section by section


def entries(note: str, day: date | None = None, limit: int = MAX_TEXT_CHARS) -> list[str]:
    return [text for section in note_sections(note, day) for text in section_entries(section, limit=limit)]


def test_a_section_is_one_entry_under_its_whole_heading_path_without_the_title_or_the_time():
    note = ("# 2026-03-02 - Daily Memory Log\n\n## Robots\n\n### Unitree G1\n"
            "A humanoid robot for the lab.\n\n#### [10:30] - 購入\n- 見積もりを取った\n- 来月注文する\n\n"
            "## kakeibo\n- 決済はPAY.JPに切り替えた\n")
    assert entries(note, date(2026, 3, 2)) == [
        "Robots › Unitree G1:\nA humanoid robot for the lab.",
        "Robots › Unitree G1 › 購入:\n- 見積もりを取った\n- 来月注文する",
        "kakeibo:\n- 決済はPAY.JPに切り替えた",
    ]


def test_a_table_is_kept_as_its_rows_under_its_header_with_the_label_over_it():
    note = ("## Unitree G1\n### 購入\n**購入リスト（税込）:**\n\n| 品目 | 金額 |\n|---|---:|\n"
            "| G1 本体 | ¥1,680,000 |\n|  合計  | ¥1,680,000 |\n\n支払いは経費で。\n")
    assert entries(note) == ["Unitree G1 › 購入:\n**購入リスト（税込）:**\n| 品目 | 金額 |\n|---|---:|\n"
                             "| G1 本体 | ¥1,680,000 |\n|  合計  | ¥1,680,000 |\n\n支払いは経費で。"]


def test_checkboxes_keep_their_state_and_nested_items_stay_with_their_item():
    note = "## TODO\n- [x] Order the e-stop\n- [X] Print the mount\n- [ ] Calibrate\n  - [ ] hand-eye\n  - [x] camera\n"
    assert entries(note) == ["TODO:\n- [x] Order the e-stop\n- [x] Print the mount\n- [ ] Calibrate\n"
                             "  - [ ] hand-eye\n  - [x] camera"]


@pytest.mark.parametrize("label", ["**Decision:**", "**Decision**:", "**決定事項：**", "決定事項：", "__Decision:__"])
@pytest.mark.parametrize("block", ["- Buy the xArm\n- Reason: ROS2 driver", "1. Buy the xArm\n2. Reason: ROS2 driver",
                                   "| what | why |\n|---|---|\n| xArm | ROS2 |", "```sh\ncurl /api/version\n```"])
def test_a_label_line_is_kept_with_the_block_it_introduces(label, block):
    assert entries(f"## 決定\n{label}\n{block}\n") == [f"決定:\n{label}\n{block}"]


def test_a_label_over_nothing_or_a_bold_lead_in_is_an_item_of_its_own():
    note = "## kakeibo\n- **Status:** デモアカウントを作成済み\n\n**Open items**:\n\n## Next\n- x\n"
    assert entries(note) == ["kakeibo:\n- **Status:** デモアカウントを作成済み\n\n**Open items**:", "Next:\n- x"]


@pytest.mark.parametrize("heading", ["メモ", "Misc", "Misc.", "その他", "杂项", "Notes"])
def test_a_miscellany_section_is_one_entry_per_item_each_under_the_heading_path(heading):
    note = (f"## kakeibo\n### {heading}\n- xArm の納期は3週間\n- 山口さんの誕生日は4月18日\n\n"
            "A paragraph of its own.\n\n| plan | price |\n|---|---|\n| Free | ¥0 |\n| Family | ¥780 |\n")
    path = f"kakeibo › {heading.rstrip('.')}:"
    assert entries(note) == [f"{path}\n- xArm の納期は3週間", f"{path}\n- 山口さんの誕生日は4月18日",
                             f"{path}\nA paragraph of its own.",
                             f"{path}\n| plan | price |\n|---|---|\n| Free | ¥0 |\n| Family | ¥780 |"]


@pytest.mark.parametrize("heading", ["Lessons", "メモ帳アプリ", "Meeting notes", "TODO"])
def test_a_section_not_named_as_a_miscellany_stays_whole(heading):
    assert entries(f"## {heading}\n- one fact\n- another fact\n") == [f"{heading}:\n- one fact\n- another fact"]


def test_a_section_that_says_who_the_person_is_and_how_to_reply_is_split_where_that_changes():
    note = ("## ユーザーについて\n- ユーザーは山口さん。平日は会社員\n- 返答は結論から先に、短めにしてほしい\n"
            "- 技術用語は英語のままでいい\n")
    assert entries(note) == ["ユーザーについて:\n- ユーザーは山口さん。平日は会社員",
                             "ユーザーについて:\n- 返答は結論から先に、短めにしてほしい\n- 技術用語は英語のままでいい"]


@pytest.mark.parametrize("note", [
    # two rules, one of which the rules type as a fact, stay one section
    "## Safety\n- Always keep the emergency stop within reach\n- Speed limit 250 mm/s while testing\n",
    # a numbered procedure is never split, whatever a step says
    "## Setup\n1. The user is the admin of the box\n2. Open the web UI at http://10.0.0.2:8080\n",
])
def test_a_section_whose_items_are_not_about_the_person_stays_whole(note):
    assert len(entries(note)) == 1


def test_a_long_section_is_split_between_items_each_part_under_its_path_label_and_header():
    rows = "".join(f"| item {n} | ¥{n},000 |\n" for n in range(6))
    note = f"## 購入\n**購入リスト:**\n| 品目 | 金額 |\n|---|---|\n{rows}- a bullet that is long enough\n"
    parts = entries(note, limit=90)
    assert len(parts) > 2 and all(len(part) <= 90 for part in parts)
    assert all(part.startswith("購入:\n") for part in parts)
    assert all(part.startswith("購入:\n**購入リスト:**\n| 品目 | 金額 |\n|---|---|\n| item ")
               for part in parts if "| item" in part)
    lines = [line for part in parts for line in part.split("\n")]
    assert [line for line in lines if line.startswith(("| item", "- "))] == [*rows.splitlines(),
                                                                            "- a bullet that is long enough"]


def test_comments_rules_and_empty_sections_are_left_out_and_code_is_kept():
    note = ("## Empty\n\n## Setup\n<!-- written by the pre-compaction flush\n- not a fact -->\n---\n"
            "- uv\n- -\n\n```bash\nrm -rf build/\n```\n")
    assert entries(note) == ["Setup:\n- uv\n\n```bash\nrm -rf build/\n```"]


def test_a_note_without_headings_is_one_entry_with_no_path_and_frontmatter_is_not_read():
    assert entries("---\ntitle: x\n---\nA fact.\n\n- another\n") == ["A fact.\n\n- another"]


def test_a_later_numbered_item_on_its_own_is_kept_apart_from_the_line_above_it():
    """CommonMark starts a list right under a line of text only at 1: `メモ:` over `2. …` would be one paragraph."""
    assert entries("## メモ\n1. one\n2. two\n") == ["メモ:\n1. one", "メモ:\n\n2. two"]
    note = "## 決定事項\n**決定事項:**\n1. サブスクのみ\n"
    first = plan_note(note, None, []).texts
    second = plan_note(note + "2. 学割は後で\n", None, first).texts
    assert second == ("決定事項:\n**決定事項:**\n\n2. 学割は後で",)
    assert plan_note(note + "2. 学割は後で\n", None, first + second).texts == ()  # read back as the item it is


def test_a_heading_met_twice_in_a_note_gets_only_its_new_items_the_second_time():
    """An append-only note repeats `## TODO` each session: a TODO already listed is not listed again."""
    note = "# Daily Memory Log\n## TODO\n- [ ] a\n- [ ] b\n## Lunch\n- ramen\n## TODO\n- [ ] b\n- [ ] c\n"
    assert plan_note(note, None, []).texts == ("TODO:\n- [ ] a\n- [ ] b", "Lunch:\n- ramen", "TODO:\n- [ ] c")


def test_only_a_real_date_names_a_daily_note():
    assert note_day("2026-04-01.md") == date(2026, 4, 1)
    assert [note_day(name) for name in ("2026-02-30.md", "20260401.md", "notes.md", "2026-04-01-deploy.md")] \
        == [None, None, None, None]


# ---------------------------------------------------------------- what a re-import adds


NOTE = """\
# 2026-03-16

## ロボット
### 追加購入
| 品目 | 金額 |
|---|---|
| RealSense D435 | ¥48,500 |

## TODO
- [ ] カメラマウントを印刷
- [ ] ハンドアイキャリブレーション

## メモ
- xArm の納期は3週間
"""
DAY = date(2026, 3, 16)


def test_a_note_imported_once_adds_nothing_when_imported_again():
    first = plan_note(NOTE, DAY, [])
    assert first == NotePlan(("ロボット › 追加購入:\n| 品目 | 金額 |\n|---|---|\n| RealSense D435 | ¥48,500 |",
                              "TODO:\n- [ ] カメラマウントを印刷\n- [ ] ハンドアイキャリブレーション",
                              "メモ:\n- xArm の納期は3週間"), 0)
    assert plan_note(NOTE, DAY, first.texts) == NotePlan((), 3)


@pytest.mark.parametrize("edit, added", [
    ("| RealSense D435 | ¥48,500 |\n", "ロボット › 追加購入:\n| 品目 | 金額 |\n|---|---|\n| PETG 1kg | ¥2,980 |"),
    ("- [ ] ハンドアイキャリブレーション\n", "TODO:\n- [ ] xArm のファームウェア更新履歴を wiki に書く"),
    ("- xArm の納期は3週間\n", "メモ:\n- 山口さんの誕生日は4月18日"),
])
def test_an_item_written_since_is_the_only_thing_a_re_import_adds(edit, added):
    """A row, a TODO, a note's item added under a section already imported: only it, with its path."""
    new_line = added.rsplit("\n", 1)[1]
    grown = NOTE.replace(edit, f"{edit}{new_line}\n")
    assert plan_note(grown, DAY, plan_note(NOTE, DAY, []).texts).texts == (added,)


def test_a_ticked_checkbox_is_added_as_done_and_a_new_section_whole():
    ticked = NOTE.replace("- [ ] カメラマウントを印刷", "- [x] カメラマウントを印刷") + "\n## kakeibo\n- 審査提出\n"
    assert plan_note(ticked, DAY, plan_note(NOTE, DAY, []).texts).texts == (
        "TODO:\n- [x] カメラマウントを印刷", "kakeibo:\n- 審査提出")


def test_a_note_the_earlier_import_read_one_entry_per_item_is_not_imported_again():
    """A workspace imported before sections: its entries (`TODO: カメラマウントを印刷`) are found,
    so the note is not added again whole; what was written since comes as that version read it."""
    earlier = earlier_entry_texts(NOTE, DAY)
    assert "TODO: カメラマウントを印刷" in earlier
    assert plan_note(NOTE, DAY, earlier) == NotePlan((), len(earlier), earlier_import=True)
    grown = NOTE + "- 山口さんの誕生日は4月18日\n"
    assert plan_note(grown, DAY, earlier) == NotePlan(("メモ: 山口さんの誕生日は4月18日",), len(earlier), True)


def test_an_entry_both_versions_write_alike_does_not_mark_a_note_as_read_by_the_earlier_one():
    note = "A fact with no heading.\n\n## TODO\n- [ ] a\n"
    first = plan_note(note, None, [])
    assert first.texts[0] == "A fact with no heading." == earlier_entry_texts(note)[0]
    assert plan_note(note, None, first.texts) == NotePlan((), 2)

# ---------------------------------------------------------------- the command


def test_import_writes_entries_dated_by_their_note_at_noon_untyped(cli, workspace, tmp_path):
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert (result.code, result.err) == (0, "")
    assert result.out == f"read 2 notes from {workspace / 'memory'}: 4 entries added, 0 already in the log\n"
    entries = logged(root)
    assert len(entries) == 4
    assert entries[0] == ("2026-03-10 12:00:00", None, "Decisions:\n- Chose Tailwind over plain CSS for the dashboard\n"
                                                       "- [x] Deploy to staging before production")
    assert ("2026-03-11 12:00:00", None,
            "Python環境セットアップ:\n- Python 3.12 と uv を使う\n- テストは pytest で\n  書く") in entries
    assert {at[:10] for at, _, _ in entries} == {"2026-03-10", "2026-03-11"}
    assert (root / "logs" / "2026" / "03" / "2026-03-11.md").is_file()


def test_importing_twice_adds_nothing_and_leaves_the_log_as_it_was(cli, workspace, tmp_path):
    root = tmp_path / "store"
    assert cli("--root", root, "import", "openclaw", workspace).code == 0
    before = tree_hash(root)
    again = cli("--root", root, "import", "openclaw", workspace, "--json")
    assert again.code == 0
    report = json.loads(again.out)
    assert (report["notes_read"], report["entries_added"], report["already_there"], report["earlier_notes"]) \
        == (2, 0, 4, 0)
    assert tree_hash(root) == before


def test_a_line_added_to_a_note_since_is_the_only_entry_a_second_import_adds(workspace, tmp_path):
    store = auto_dream.open_store(tmp_path / "store", create=True)
    assert store.import_openclaw(workspace).entries_added == 4
    with (workspace / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as note:
        note.write("- CI は GitHub Actions\n")
    second = store.import_openclaw(workspace)
    assert (second.entries_added, second.already_there) == (1, 3)
    assert logged(store.root)[-1] == ("2026-03-11 12:00:00", None, "会議:\n- CI は GitHub Actions")
    assert store.import_openclaw(workspace).entries_added == 0


def test_a_workspace_the_earlier_import_read_one_entry_per_item_is_not_imported_again(cli, workspace, tmp_path):
    """The log of a workspace imported before imports read sections: the earlier entries are
    recognised and the notes are not added again in the new form; a line written since is added."""
    store = auto_dream.open_store(tmp_path / "store", create=True)
    for day, name in ((date(2026, 3, 10), "2026-03-10.md"), (date(2026, 3, 11), "2026-03-11.md")):
        for text in earlier_entry_texts((workspace / "memory" / name).read_text(encoding="utf-8"), day):
            append_entry(StorePaths(store.root), make_entry(text, None, datetime.combine(day, time(12, 0))))
    before = logged(store.root)
    with (workspace / "memory" / "2026-03-11.md").open("a", encoding="utf-8") as note:
        note.write("- CI は GitHub Actions\n")
    result = cli("--root", store.root, "import", "openclaw")
    assert result.out.endswith(": 1 entry added, 9 already in the log; 2 notes were imported one entry per item "
                               "by an earlier version and stay so\n")
    assert logged(store.root) == [*before, ("2026-03-11 12:00:00", None, "会議: CI は GitHub Actions")]


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


def test_an_item_longer_than_an_entry_is_reported_and_the_rest_of_its_section_imported(cli, workspace, tmp_path):
    (workspace / "memory" / "2026-03-09.md").write_text(f"## Logs\n- {'x' * 20_001}\n- a short fact\n",
                                                        encoding="utf-8")
    root = tmp_path / "store"
    result = cli("--root", root, "import", "openclaw")
    assert result.code == 0
    assert "2026-03-09.md: an item was not imported (the text has 20009 characters; an entry holds at most 20000)" \
        in result.err
    assert ("2026-03-09 12:00:00", None, "Logs:\n- a short fact") in logged(root)


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
    assert json.loads(dreamt.out)["stats"]["created"] == 4
    listed = json.loads(cli("--root", root, "list", "--json").out)
    # the section's first item names the memory, the next (its continued line joined) describes it
    assert {"name": "Python環境セットアップ: Python 3.12 と uv を使う", "description": "テストは pytest で書く"} in [
        {"name": m["name"], "description": m["description"]} for m in listed], listed
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
    assert (result.notes_read, result.entries_added, result.already_there, result.skipped) == (2, 4, 0, ())
    assert result.logs_written == ("logs/2026/03/2026-03-10.md", "logs/2026/03/2026-03-11.md")
    assert store.dream(now=datetime(2026, 3, 12, 9, 0).astimezone()).report.stats.created == 4


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
