"""Memory files: every layout read, one layout written; broken files left alone."""

from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.store.memory import (
    Memory,
    TakenNames,
    Unreadable,
    memory_file_name,
    parse_memory,
    read_memory,
    render_memory,
    rewrite_memory,
    slugify,
    written_text,
)
from auto_dream.store.scan import scan_memories
from conftest import examples, tree_hash, write_memory_file

SHANGHAI = ZoneInfo("Asia/Shanghai")
PLUS_8 = timezone(timedelta(hours=8))
FILE_MTIME = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def parse(text: str | bytes, relative: str = "memories/project/20260101_x.md", tz=SHANGHAI):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_memory(raw, relative, FILE_MTIME, tz)


def parse_ok(text: str | bytes, relative: str = "memories/project/20260101_x.md", tz=SHANGHAI) -> Memory:
    parsed = parse(text, relative, tz)
    assert isinstance(parsed, Memory), parsed
    return parsed


def frontmatter_of(rendered: str) -> dict:
    """The YAML mapping between the first two `---` lines of a rendered file."""
    assert rendered.startswith("---\n")
    block = rendered[4:].split("\n---\n", 1)[0]
    return yaml.safe_load(block)


def rewritten(text: str, before: Memory, after: Memory) -> str:
    """The text a rewrite gives a file that held `text` (read as `before`) when it becomes `after`."""
    return rewrite_memory(written_text(text.encode("utf-8"), before.body), before, after)


def round_trip(memory: Memory) -> Memory:
    return parse_ok(render_memory(memory), memory.path)


# ---------------------------------------------------------------- layouts


def test_top_level_type_is_read():
    memory = parse_ok("---\nname: Reading goal\ndescription: One book a week\ntype: user\n---\nBody text.\n",
                      "memories/project/20260101_x.md")
    assert memory.type == "user"  # the frontmatter beats the folder
    assert memory.type_source == "top"
    assert (memory.name, memory.description, memory.body) == ("Reading goal", "One book a week", "Body text.")
    assert memory.read_only is None


def test_claude_code_nested_metadata_type_is_read():
    text = ("---\nname: No mocks\ndescription: Do not mock the database\n"
            "metadata:\n  type: feedback\n---\nWhy: the prod migration failed.\n")
    memory = parse_ok(text, "memories/20260101_no_mocks.md")
    assert memory.type == "feedback"
    assert memory.type_source == "metadata"
    assert memory.read_only is None


def test_nested_metadata_layout_is_kept_on_render():
    text = ("---\nname: No mocks\ndescription: Do not mock the database\n"
            "metadata:\n  type: feedback\n  originSessionId: 7c1e\n---\nWhy: the prod migration failed.\n")
    memory = parse_ok(text, "memories/20260101_no_mocks.md")
    rendered = render_memory(memory)
    head = frontmatter_of(rendered)
    assert "type" not in head  # no top-level type added to a Claude Code file
    assert head["metadata"] == {"type": "feedback", "originSessionId": "7c1e"}
    again = parse_ok(rendered, memory.path)
    assert (again.type, again.type_source) == ("feedback", "metadata")
    assert again.body == "Why: the prod migration failed."


@pytest.mark.parametrize("folder", ["user", "feedback", "project", "reference"])
def test_type_is_taken_from_the_folder_when_missing(folder):
    memory = parse_ok("---\nname: x\ndescription: y\n---\nbody\n", f"memories/{folder}/20260101_x.md")
    assert memory.type == folder
    assert memory.type_source == "folder"


def test_type_from_folder_is_written_at_top_level_on_render():
    memory = parse_ok("---\nname: x\ndescription: y\n---\nbody\n", "memories/reference/20260101_x.md")
    assert frontmatter_of(render_memory(memory))["type"] == "reference"


def test_file_without_frontmatter_is_readable_but_never_rewritten():
    memory = parse_ok("# Prefer pnpm over npm\n\nThe lockfile is pnpm-lock.yaml.\n",
                      "memories/project/20260312_Prefer_pnpm_over_npm.md")
    assert memory.type == "project"
    assert memory.name == "Prefer pnpm over npm"  # from the file name, date prefix dropped
    assert memory.description == "Prefer pnpm over npm"  # the first body line, heading marks dropped
    assert memory.read_only  # a reason is given, so dream never rewrites it
    assert "frontmatter" in memory.read_only
    assert memory.mtime == FILE_MTIME  # no mtime key: the file's own time


def test_file_without_frontmatter_description_is_first_body_line():
    memory = parse_ok("The user lives in Lisbon.\nMore detail here.\n", "memories/user/20260101_home_town.md")
    assert memory.name == "home town"
    assert memory.description == "The user lives in Lisbon."
    assert memory.read_only


def test_read_memory_reads_a_file_on_disk(root):
    path = write_memory_file(root, "memories/user/20260312_goal.md",
                             "---\nname: Goal\ndescription: One book a week\n"
                             "mtime: 2026-03-12T10:30:00+08:00\n---\nBody\n")
    memory = read_memory(path, root, SHANGHAI)
    assert isinstance(memory, Memory)
    assert memory.path == "memories/user/20260312_goal.md"
    assert (memory.type, memory.name, memory.mtime) == ("user", "Goal", datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8))


# ---------------------------------------------------------------- unknown keys


UNKNOWN_KEYS_FILE = """---
name: Deploy checklist
description: Steps before a release
type: project
mtime: 2026-03-12T10:30:00+08:00
originSessionId: 5f0c2d8e-91aa-4c1e-b7d2-0a6c1f3e9b44
related: [20260101_release_notes, 20260102_ci_setup]
pinned: true
review:
  owner: ana
  every_days: 30
  tags: [ops, release]
---
1. Run the tests.
"""


def test_unknown_keys_survive_a_round_trip():
    memory = parse_ok(UNKNOWN_KEYS_FILE)
    assert memory.extra["originSessionId"] == "5f0c2d8e-91aa-4c1e-b7d2-0a6c1f3e9b44"
    assert memory.extra["related"] == ["20260101_release_notes", "20260102_ci_setup"]
    assert memory.extra["review"] == {"owner": "ana", "every_days": 30, "tags": ["ops", "release"]}
    again = round_trip(memory)
    assert again.extra == memory.extra
    assert again == memory
    head = frontmatter_of(render_memory(memory))
    assert head["pinned"] is True
    assert head["related"] == ["20260101_release_notes", "20260102_ci_setup"]


def test_pinned_property():
    assert parse_ok(UNKNOWN_KEYS_FILE).pinned is True
    assert parse_ok("---\nname: x\npinned: false\n---\nb").pinned is False
    assert parse_ok("---\nname: x\n---\nb").pinned is False
    assert parse_ok("---\nname: x\npinned: 'no'\n---\nb").pinned is False  # only a real true pins


def test_single_source_written_as_a_scalar_is_not_lost_on_rewrite():
    # A hand-written `sources: 3f9a1c0e22b4` (one id, no brackets) must not vanish when rewritten.
    memory = parse_ok("---\nname: x\nsources: 3f9a1c0e22b4\n---\nbody\n")
    rendered = render_memory(memory)
    assert "3f9a1c0e22b4" in rendered


# ---------------------------------------------------------------- dates


@pytest.mark.parametrize("value, expected", [
    ("2026-03-12", datetime(2026, 3, 12, 0, 0, tzinfo=SHANGHAI)),
    ("2026-03-12T10:30:00+08:00", datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8)),
    ("2026-03-12T02:30:00Z", datetime(2026, 3, 12, 2, 30, tzinfo=timezone.utc)),
    ("2026-03-12 10:30:00", datetime(2026, 3, 12, 10, 30, tzinfo=SHANGHAI)),
    ("'2026-03-12T10:30:00+08:00'", datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8)),
    ('"2026-03-12 10:30"', datetime(2026, 3, 12, 10, 30, tzinfo=SHANGHAI)),
    ('"2026-03-12"', datetime(2026, 3, 12, 0, 0, tzinfo=SHANGHAI)),
], ids=["date", "aware", "zulu", "naive", "quoted-aware", "quoted-naive", "quoted-date"])
def test_yaml_dates_become_aware_datetimes_in_the_store_timezone(value, expected):
    memory = parse_ok(f"---\nname: x\nmtime: {value}\n---\nbody\n")
    assert isinstance(memory.mtime, datetime)
    assert memory.mtime.tzinfo is not None and memory.mtime.utcoffset() is not None
    assert memory.mtime == expected
    assert memory.mtime.utcoffset() == expected.utcoffset()


def test_naive_dates_without_a_store_timezone_are_still_aware():
    memory = parse_ok("---\nname: x\nmtime: 2026-03-12\n---\nbody\n", tz=None)
    assert memory.mtime.utcoffset() is not None
    assert memory.mtime.replace(tzinfo=None) == datetime(2026, 3, 12)


def test_unparseable_mtime_falls_back_to_the_file_time():
    memory = parse_ok("---\nname: x\nmtime: last tuesday\n---\nbody\n")
    assert memory.mtime == FILE_MTIME


def test_mtime_round_trips_exactly():
    memory = parse_ok("---\nname: x\nmtime: 2026-03-12 10:30:00\n---\nbody\n")
    again = round_trip(memory)
    assert again.mtime == memory.mtime == datetime(2026, 3, 12, 10, 30, tzinfo=SHANGHAI)
    assert "mtime: 2026-03-12T10:30:00+08:00" in render_memory(memory)


def test_extra_date_valued_keys_keep_their_value_on_round_trip():
    memory = parse_ok("---\nname: x\ncreated: 2026-01-05\nreviewed: 2026-02-01T09:00:00+08:00\n"
                      "seen: 2026-02-03 08:15:00\n---\nbody\n")
    assert memory.extra["created"] == date(2026, 1, 5)
    again = round_trip(memory)
    assert again.extra["created"] == date(2026, 1, 5)
    assert again.extra["reviewed"] == datetime(2026, 2, 1, 9, 0, tzinfo=PLUS_8)
    assert again.extra["seen"] == datetime(2026, 2, 3, 8, 15)
    assert again.extra == memory.extra


# ---------------------------------------------------------------- rendering


def test_render_plain_memory_matches_the_design_example():
    memory = Memory(
        path="memories/project/20260312_Weekly_reading_goal.md",
        name="Weekly reading goal",
        description="The user wants to finish one book every week",
        type="project",
        mtime=datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8),
        body="Body in Markdown.\n\n**Why:** habit.",
        sources=("3f9a1c0e22b4", "8d01aa4f7c19"),
    )
    assert render_memory(memory) == (
        "---\n"
        "name: Weekly reading goal\n"
        "description: The user wants to finish one book every week\n"
        "type: project\n"
        "mtime: 2026-03-12T10:30:00+08:00\n"
        "sources: [3f9a1c0e22b4, 8d01aa4f7c19]\n"
        "---\n"
        "Body in Markdown.\n\n**Why:** habit.\n"
    )
    assert round_trip(memory) == memory


def test_digit_only_source_ids_round_trip_as_strings():
    memory = Memory(path="memories/project/20260312_x.md", name="x", description="y", type="project",
                    mtime=datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8),
                    sources=("123456789012", "000000000017", "1e10"))
    again = round_trip(memory)
    assert again.sources == ("123456789012", "000000000017", "1e10")
    assert all(isinstance(s, str) for s in frontmatter_of(render_memory(memory))["sources"])


@pytest.mark.parametrize("name", ["yes", "null", "- a list?", "key: value", "#hash", "用户想通过内容平台分享知识",
                                  "'quoted'", "2026-03-12"])
def test_names_that_look_like_yaml_round_trip(name):
    memory = Memory(path="memories/user/20260312_x.md", name=name, description=f"about {name}", type="user",
                    mtime=datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8), body="b")
    again = round_trip(memory)
    assert (again.name, again.description) == (name, f"about {name}")


def test_cjk_is_written_as_is_not_escaped():
    memory = Memory(path="memories/project/20260312_x.md", name="用户想通过内容平台分享知识",
                    description="内容平台", type="project", mtime=datetime(2026, 3, 12, tzinfo=PLUS_8))
    assert "name: 用户想通过内容平台分享知识\n" in render_memory(memory)


# ---------------------------------------------------------------- naming


def test_slugify_keeps_cjk():
    assert slugify("用户想通过内容平台分享知识") == "用户想通过内容平台分享知识"


@pytest.mark.parametrize("text, expected", [
    ("Weekly reading goal", "Weekly_reading_goal"),
    ("Don't mock   the DB!!", "Don_t_mock_the_DB"),
    ("  -- leading and trailing --  ", "leading_and_trailing"),
    ("用户，想 分享。知识", "用户_想_分享_知识"),
    ("tabs\tand\nnewlines", "tabs_and_newlines"),
    ("café déjà vu", "café_déjà_vu"),
])
def test_slugify_turns_punctuation_and_spaces_into_single_underscores(text, expected):
    assert slugify(text) == expected


def test_slugify_is_at_most_50_characters_without_a_trailing_underscore():
    assert len(slugify("a" * 80)) == 50
    assert slugify("a" * 49 + " second word") == "a" * 49
    long_cjk = "长" * 70
    assert slugify(long_cjk) == "长" * 50


@pytest.mark.parametrize("text", ["", "   ", "!!! ... ???", "../", "——", "\u200b"])
def test_slugify_of_nothing_usable_is_memory(text):
    assert slugify(text) == "memory"


@pytest.mark.parametrize("name", ["../../etc/passwd", "..\\..\\windows", "/absolute/path", "a/../../b", ".hidden"])
def test_memory_file_name_cannot_escape_its_folder(name):
    file_name = memory_file_name(name, date(2026, 3, 12), set())
    assert "/" not in file_name and "\\" not in file_name
    assert ".." not in file_name
    assert not file_name.startswith(".")
    assert Path(file_name).name == file_name
    assert file_name.startswith("20260312_") and file_name.endswith(".md")


def test_memory_file_name_starts_with_the_date():
    assert memory_file_name("Weekly reading goal", date(2026, 3, 12), set()) == "20260312_Weekly_reading_goal.md"
    assert memory_file_name("用户想通过内容平台分享知识", date(2026, 4, 1), set()) \
        == "20260401_用户想通过内容平台分享知识.md"


def test_memory_file_name_adds_a_suffix_on_collision():
    day = date(2026, 3, 12)
    taken = {"20260312_goal.md"}
    assert memory_file_name("goal", day, taken) == "20260312_goal_2.md"
    taken.add("20260312_goal_2.md")
    assert memory_file_name("goal", day, taken) == "20260312_goal_3.md"
    assert memory_file_name("goal", date(2026, 3, 13), taken) == "20260313_goal.md"


def test_memory_file_name_collisions_ignore_case():
    # macOS and Windows file systems are case-blind: Goal.md and goal.md are one file.
    assert memory_file_name("Goal", date(2026, 3, 12), {"20260312_GOAL.md"}) == "20260312_Goal_2.md"


@settings(max_examples=examples(300), deadline=None)
@given(existing=st.lists(st.text(alphabet="20261_ßSsKkİi\u212a.md", max_size=14), max_size=30),
       asked=st.lists(st.text(alphabet="20261_ßSsKkİi\u212a.md", max_size=14), max_size=10))
def test_taken_names_agree_with_folding_every_name(existing, asked):
    # TakenNames folds lazily, only the names that share the asked name's date; it must answer
    # as a set of every name folded would, whatever is added between the questions
    taken, plain = TakenNames(existing), {name.casefold() for name in existing}
    for name in asked:
        assert (name in taken) == (name.casefold() in plain)
        taken.add(name)
        plain.add(name.casefold())
        assert name.upper() in taken and name.casefold() in taken


def test_memory_file_name_collisions_ignore_case_across_a_busy_folder():
    existing = [f"202603{day:02}_goal.md" for day in range(1, 29)] + ["20260312_\u212aEY.md", "20260312_STRASSE.md"]
    taken = TakenNames(existing)
    assert memory_file_name("Goal", date(2026, 3, 12), taken) == "20260312_Goal_2.md"
    assert memory_file_name("key", date(2026, 3, 12), taken) == "20260312_key_2.md"  # KELVIN SIGN folds to k
    assert memory_file_name("straße", date(2026, 3, 12), taken) == "20260312_straße_2.md"
    taken.add("20260329_Goal.md")
    assert memory_file_name("GOAL", date(2026, 3, 29), taken) == "20260329_GOAL_2.md"


# ---------------------------------------------------------------- broken files


BROKEN = {
    "broken-yaml": ("---\nname: [unclosed\ndescription: x\n---\nbody\n", "broken YAML"),
    "tab-indented": ("---\nname: x\nmetadata:\n\ttype: feedback\n---\nbody\n", "broken YAML"),
    "not-utf8": ("---\nname: caf\xe9\n---\nbody\n".encode("latin-1"), "not UTF-8"),
    "nul-bytes": (b"---\nname: x\n---\nbo\x00dy\n", "binary"),
    "empty": (b"", "empty"),
    "whitespace-only": (b"  \n\n\t\n", "empty"),
    "never-closed": ("---\nname: x\ndescription: y\n\nbody without a closing line\n", "never closed"),
    "yaml-list": ("---\n- name\n- description\n---\nbody\n", "not a mapping"),
    "yaml-scalar": ("---\njust a sentence\n---\nbody\n", "not a mapping"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_content_is_reported_with_a_reason(case):
    content, reason = BROKEN[case]
    parsed = parse(content)
    assert isinstance(parsed, Unreadable)
    assert parsed.path == "memories/project/20260101_x.md"
    assert reason in parsed.reason


def test_broken_yaml_reason_says_where():
    parsed = parse("---\nname: x\nmetadata:\n\ttype: feedback\n---\nbody\n")
    assert isinstance(parsed, Unreadable)
    assert "line 4" in parsed.reason


def test_unknown_type_outside_any_type_folder_is_reported():
    parsed = parse("---\nname: x\ntype: banana\n---\nbody\n", "memories/20260101_x.md")
    assert isinstance(parsed, Unreadable)
    assert "banana" in parsed.reason


def test_no_type_outside_any_type_folder_is_reported():
    parsed = parse("---\nname: x\n---\nbody\n", "memories/20260101_x.md")
    assert isinstance(parsed, Unreadable)
    assert "type" in parsed.reason


def test_unknown_type_inside_a_type_folder_is_read_from_the_folder_and_kept():
    memory = parse_ok("---\nname: x\ntype: banana\n---\nbody\n", "memories/project/20260101_x.md")
    assert memory.type == "project"
    assert memory.read_only and "banana" in memory.read_only
    assert frontmatter_of(render_memory(memory))["type"] == "banana"  # not silently retyped


def test_bom_file_is_readable_but_read_only():
    memory = parse_ok(b"\xef\xbb\xbf---\nname: Goal\ndescription: d\n---\nbody\n")
    assert (memory.name, memory.description, memory.body) == ("Goal", "d", "body")
    assert memory.read_only and "byte-order mark" in memory.read_only


def test_crlf_file_is_readable_but_read_only():
    memory = parse_ok(b"---\r\nname: Goal\r\ndescription: One book\r\ntype: user\r\n---\r\nbody line\r\n")
    assert (memory.name, memory.description, memory.type) == ("Goal", "One book", "user")
    assert memory.body.strip() == "body line"
    assert memory.read_only and "CR" in memory.read_only


GOOD = "---\nname: Good one\ndescription: readable\ntype: project\nmtime: 2026-03-12T10:30:00+08:00\n---\nbody\n"


def test_scan_reports_broken_files_leaves_them_untouched_and_reads_the_good_ones(root, paths, tmp_path):
    write_memory_file(root, "memories/project/20260312_good.md", GOOD)
    write_memory_file(root, "memories/user/20260312_crlf.md", b"---\r\nname: CRLF\r\n---\r\nbody\r\n")
    write_memory_file(root, "memories/user/20260312_bom.md", b"\xef\xbb\xbf---\nname: BOM\n---\nbody\n")
    write_memory_file(root, "memories/user/20260312_plain.md", "Just a note, no frontmatter.\n")
    expected_bad = {}
    for number, (case, (content, reason)) in enumerate(BROKEN.items()):
        relative = f"memories/project/20260101_{number:02d}_{case}.md"
        write_memory_file(root, relative, content)
        expected_bad[relative] = reason
    big = "---\nname: big\n---\n" + "x" * 1_000_001
    write_memory_file(root, "memories/reference/20260101_big.md", big)
    expected_bad["memories/reference/20260101_big.md"] = "too large"
    write_memory_file(root, "memories/20260101_unknown.md", "---\nname: u\ntype: banana\n---\nbody\n")
    expected_bad["memories/20260101_unknown.md"] = "banana"
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: secret\ntype: user\n---\nnot in the store\n")
    (root / "memories/user/20260101_link.md").symlink_to(outside)
    expected_bad["memories/user/20260101_link.md"] = "symlink"
    (root / "memories/feedback/20260101_folder.md").mkdir()
    expected_bad["memories/feedback/20260101_folder.md"] = "folder"

    before, outside_before = tree_hash(root), outside.read_bytes()
    scan = scan_memories(paths, SHANGHAI)
    assert tree_hash(root) == before
    assert outside.read_bytes() == outside_before

    reasons = {bad.path: bad.reason for bad in scan.unreadable}
    assert set(reasons) == set(expected_bad)
    for path, reason in expected_bad.items():
        assert reason in reasons[path], (path, reasons[path])
    good = {m.path: m for m in scan.memories}
    assert set(good) == {"memories/project/20260312_good.md", "memories/user/20260312_crlf.md",
                         "memories/user/20260312_bom.md", "memories/user/20260312_plain.md"}
    assert good["memories/project/20260312_good.md"].read_only is None
    for path in ("memories/user/20260312_crlf.md", "memories/user/20260312_bom.md",
                 "memories/user/20260312_plain.md"):
        assert good[path].read_only, path


def test_a_symlink_inside_the_store_is_read_but_read_only(root, paths):
    target = write_memory_file(root, "memories/project/20260312_good.md", GOOD)
    (root / "memories/project/20260312_alias.md").symlink_to(target)
    scan = scan_memories(paths, SHANGHAI)
    by_path = {m.path: m for m in scan.memories}
    assert by_path["memories/project/20260312_alias.md"].name == "Good one"
    assert "symlink" in by_path["memories/project/20260312_alias.md"].read_only
    assert by_path["memories/project/20260312_good.md"].read_only is None


def test_read_memory_of_a_symlink_outside_the_root_does_not_read_the_target(root, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: secret\ntype: user\n---\nprivate\n")
    link = root / "memories/user/20260101_link.md"
    link.symlink_to(outside)
    parsed = read_memory(link, root, SHANGHAI)
    assert isinstance(parsed, Unreadable)
    assert parsed.path == "memories/user/20260101_link.md"
    assert "outside" in parsed.reason


def test_scan_of_an_empty_store_finds_nothing(paths):
    scan = scan_memories(paths, SHANGHAI)
    assert scan.memories == [] and scan.unreadable == []


# ---------------------------------------------------------------- frontmatter as Claude Code reads it
# The cases are real: application-pipeline (an unquoted `: `), orchestkit and recommendarr (` #`).

COLON = ("---\nname: Cover letter quality — location, format, length\n"
         "description: Cover letter standards: NYC location, 550-700 words, no apologizing.\ntype: feedback\n"
         "---\nWhy: two letters went out with the wrong city.\n")
BACKTICK = ("---\nname: Stray test attributes\ndescription: `#[test]` on a helper makes it a test\n"
            "metadata:\n  type: feedback\n  originSessionId: 5f0c\n---\nRemove it.\n")
HASH = ("---\nname: Stray #[test] attribute on helper function\n"
        "description: Archived findings from the v7.0.0 hook review (PR #835, 2026-03-02)\ntype: project\n"
        "---\nThe helper was run as a test.\n")


def test_a_value_with_an_unquoted_colon_is_read_whole_line_by_line_and_written_back_whole():
    memory = parse_ok(COLON, "memories/feedback/feedback_cover_letter_quality.md")
    assert memory.name == "Cover letter quality — location, format, length"
    assert memory.description == "Cover letter standards: NYC location, 550-700 words, no apologizing."
    assert memory.type == "feedback" and memory.body == "Why: two letters went out with the wrong city."
    assert not memory.read_only  # read whole, so a rewrite writes it whole, quoted as YAML needs
    again = parse_ok(render_memory(memory), memory.path)
    assert (again.name, again.description, again.body) == (memory.name, memory.description, memory.body)
    assert "description: 'Cover letter standards: NYC location" in render_memory(memory)


def test_a_line_read_date_stays_a_date_and_a_line_read_number_a_number():
    memory = parse_ok("---\nname: a: b\ntype: user\nmodified: 2026-03-01\nrank: 3\nflag: true\n---\nx\n", "a.md")
    assert memory.name == "a: b"
    assert memory.extra == {"modified": date(2026, 3, 1), "rank": 3, "flag": True}
    assert "modified: 2026-03-01\n" in render_memory(memory)


def test_a_value_starting_with_a_backtick_and_a_metadata_block_are_read_line_by_line():
    memory = parse_ok(BACKTICK, "stray_test_attributes.md")
    assert memory.description == "`#[test]` on a helper makes it a test"
    assert (memory.type, memory.type_source) == ("feedback", "metadata")
    assert memory.extra["metadata"] == {"type": "feedback", "originSessionId": "5f0c"}


def test_an_unquoted_hash_is_part_of_the_value_and_survives_a_rewrite():
    memory = parse_ok(HASH)
    assert memory.name == "Stray #[test] attribute on helper function"
    assert memory.description == "Archived findings from the v7.0.0 hook review (PR #835, 2026-03-02)"
    assert not memory.read_only  # read whole, so it may be rewritten: written quoted, it comes back whole
    again = parse_ok(render_memory(memory))
    assert (again.name, again.description) == (memory.name, memory.description)


@pytest.mark.parametrize(("line", "whole"), [
    ("description: 2026-08-14 #1131 closed — the suite runs in 4 minutes",
     "2026-08-14 #1131 closed — the suite runs in 4 minutes"),  # not the date 2026-08-14
    ("description: 42 #answer to the on-call quiz", "42 #answer to the on-call quiz"),  # not 42
    ("description: yes #we ship on Fridays", "yes #we ship on Fridays"),  # not True
    ("description: #1131 closed", "#1131 closed"),  # not null
])
def test_a_description_yaml_would_type_before_a_hash_is_the_whole_line(line, whole):
    memory = parse_ok(f"---\nname: Suite speed\n{line}\ntype: project\n---\nThe suite got faster.\n")
    assert memory.description == whole
    assert "description" not in memory.extra  # one line of text: written back as the memory shows it
    named = parse_ok(f"---\n{line.replace('description', 'name')}\ntype: project\n---\nThe suite got faster.\n")
    assert named.name == whole


def test_a_quoted_value_with_a_real_comment_after_it_keeps_yaml_reading():
    memory = parse_ok('---\nname: "Deploy day" # set by the release team\n'
                      'description: Fridays\ntype: project\n---\nx\n')
    assert memory.name == "Deploy day"


@pytest.mark.parametrize("block", [
    "name: [unclosed\ndescription: x\n",  # a YAML structure gone wrong: not guessed at
    "name: x\nmetadata:\n\ttype: feedback\n",  # tab indentation
    "name: x\n- a list item\n",
    "name: x\ndescription: a: b\nnot a key line\n",  # one line the reader cannot place
])
def test_a_block_the_line_reader_cannot_read_either_stays_broken(block):
    broken = parse(f"---\n{block}---\nbody\n")
    assert isinstance(broken, Unreadable) and "broken YAML" in broken.reason


def test_a_dream_leaves_a_line_read_file_as_it_is_and_indexes_it_whole(root):
    from auto_dream.distill.deterministic import DeterministicDistiller
    from auto_dream.dream.runner import dream
    from auto_dream.dream.snapshot import DreamOptions
    from auto_dream.store.context import open_context

    colon = write_memory_file(root, "memories/feedback/20261101_cover_letters.md", COLON)
    hashed = write_memory_file(root, "memories/project/20261101_stray.md", HASH)
    before = colon.read_bytes(), hashed.read_bytes()
    dream(open_context(root), datetime(2026, 11, 30, tzinfo=timezone.utc), DreamOptions(), DeterministicDistiller())
    assert (colon.read_bytes(), hashed.read_bytes()) == before
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Cover letter quality — location, format, length" in index
    assert "Stray #[test] attribute on helper function" in index or "Stray #\\[test\\] attribute" in index


def test_a_comment_after_a_key_auto_dream_reads_is_still_a_comment():
    written = "---\nname: Deploy rule\ndescription: Blue-green\ntype: feedback # from the March review\n" \
              "sources: 3f9a1c0e22b4 # the log entry\nstatus: active # or done\n---\nAlways deploy blue-green.\n"
    memory = parse_ok(written, "deploy.md")  # outside any type folder: the type is the frontmatter's
    assert memory.type == "feedback"
    assert memory.sources == ("3f9a1c0e22b4",) and memory.extra["status"] == "active"
    assert memory.read_only is None  # a rewrite edits the lines it changes, and keeps the comments
    merged = replace(memory, sources=("3f9a1c0e22b4", "7d2e0b9c11aa"))
    assert rewritten(written, memory, merged) == written.replace(
        "sources: 3f9a1c0e22b4 # the log entry", "sources: [3f9a1c0e22b4, 7d2e0b9c11aa]")


def test_a_repeated_key_is_read_from_its_last_line_as_yaml_reads_it():
    memory = parse_ok("---\nname: Deploy #1 draft\nname: Deploy\ntype: user\n---\nbody\n")
    assert memory.name == "Deploy"


def test_a_native_store_names_new_memories_as_design_says_and_a_claude_folder_as_claude_code_does(tmp_path):
    from auto_dream.store.paths import ClaudeFolder, StorePaths

    day = date(2026, 3, 12)
    name = "Weekly reading goal for the whole team and every new member who joins it"
    for layout, expected in ((StorePaths(tmp_path), "20260312_Weekly_reading_goal_for_the_whole_team_and_every.md"),
                             (ClaudeFolder(tmp_path), "project_weekly_reading_goal_for_the_whole_team_and_every.md")):
        assert memory_file_name(name, day, set(), layout.new_file_prefix("project", day)) == expected


@pytest.mark.parametrize("line", ["# reviewed by Ana on 2026-03-01", "owner: ops # the on-call team",
                                  "standup: 9:30", "ticket: 0755", "version: 1.10", "approved: no",
                                  "metadata:\n  type: feedback\n  sprint: 07"])
def test_frontmatter_a_yaml_writer_would_change_is_kept_byte_for_byte_by_a_rewrite(line):
    for broken in ("", "description: Cover letter standards: NYC location\n"):  # valid YAML, and line-read
        text = f"---\nname: Deploy rule\n{broken}type: feedback\n{line}\n---\nAlways deploy blue-green.\n"
        memory = parse_ok(text, "memories/feedback/20260301_deploy.md")
        assert memory.read_only is None, line
        merged = replace(memory, body=memory.body + "\n\nRoll back by switching colours.",
                         sources=("3f9a1c0e22b4",), mtime=datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc))
        assert rewritten(text, memory, merged) == text.replace(
            f"{line}\n---\nAlways deploy blue-green.\n",
            f"{line}\nmtime: 2026-03-02T09:30:00+00:00\nsources: [3f9a1c0e22b4]\n---\n"
            "Always deploy blue-green.\n\nRoll back by switching colours.\n")


@pytest.mark.parametrize("line", ["owner: ops", "rank: 3", "modified: 2026-03-01", "flag: true",
                                  'title: "PR #835 review"',
                                  "metadata:\n  type: feedback\n  originSessionId: 5f0c-11aa"])
def test_frontmatter_a_rewrite_writes_back_as_it_was_may_be_rewritten(line):
    memory = parse_ok(f"---\nname: Deploy rule\ntype: feedback\n{line}\n---\nAlways deploy blue-green.\n",
                      "memories/feedback/20260301_deploy.md")
    assert memory.read_only is None


# ---------------------------------------------------------------- a rewrite edits the frontmatter as text

# Lines a YAML writer changes (`owner:` became `owner: null`, a flow list a block list,
# a quoted key unquoted, `!!set` a mapping) or that made a file "read, never rewritten" (Claude
# Code's own `modified:`): a merge or an archive now keeps each byte for byte.
KEPT_AS_WRITTEN = [
    "owner:",
    "tags: [style, editor]",
    '"quoted key": kept',
    "labels: !!set {a, b}",
    "modified: 2026-11-20T10:00:00.000Z",
    "metadata:\n  type: feedback\n  modified: 2026-11-20T10:00:00.000Z\n  originSessionId: 5f0c-11aa",
    "notes: |\n  line one\n\n  # not a comment\n",
    "steps:\n- build\n- ship",
    "# a comment line\nticket: 0755   # the Jira one",
    "title: 'single quoted'\nempty: ''",
    "wrapped: a plain value\n  continued on the next line",
    'escaped: "tab\\there, a line separator \\u2028 here"',
    "anchor: &shared 1",
]
MERGE_TIME = datetime(2026, 11, 21, 8, 0, tzinfo=timezone.utc)


def claude_topic(lines: str, name: str = "feedback_tabs.md") -> tuple[str, Memory]:
    text = f"---\nname: Tabs\ndescription: Indent with tabs\ntype: feedback\n{lines}\n---\n\nIndent with tabs.\n"
    memory = parse_ok(text, name)
    return text, memory


@pytest.mark.parametrize("lines", KEPT_AS_WRITTEN)
def test_a_merge_adds_its_mtime_and_sources_and_keeps_every_other_line_byte_for_byte(lines):
    text, memory = claude_topic(lines)
    assert memory.read_only is None
    merged = replace(memory, body=memory.body + "\n\nAlso in YAML files.", sources=("3f9a1c0e22b4", "7d2e0b9c11aa"),
                     mtime=MERGE_TIME)
    assert rewritten(text, memory, merged) == text.replace(
        f"{lines}\n---\n\nIndent with tabs.\n",
        f"{lines}\nmtime: 2026-11-21T08:00:00+00:00\nsources: [3f9a1c0e22b4, 7d2e0b9c11aa]\n---\n\n"
        "Indent with tabs.\n\nAlso in YAML files.\n")


@pytest.mark.parametrize("lines", KEPT_AS_WRITTEN)
def test_an_archive_copy_adds_the_archive_keys_and_keeps_every_other_line_byte_for_byte(lines):
    text, memory = claude_topic(lines)
    copy = replace(memory, path=".auto-dream/archive/feedback/feedback_tabs.markdown",
                   extra={**memory.extra, "archived": "2026-11-21T08:00:00+00:00", "archived_reason": "stale: gone",
                          "archived_by_run": "0042-20261121T080000"})
    assert rewritten(text, memory, copy) == text.replace(
        f"{lines}\n---\n",
        f"{lines}\nmtime: {memory.mtime.isoformat(timespec='seconds')}\narchived: '2026-11-21T08:00:00+00:00'\n"
        "archived_reason: 'stale: gone'\narchived_by_run: 0042-20261121T080000\n---\n")


def test_a_rewrite_replaces_the_lines_of_a_key_it_changes_where_they_are_and_only_those():
    text = ("---\nname: Tabs\ntype: feedback\nmtime: 2026-03-01  # set by hand\nsources:\n- 3f9a1c0e22b4\n"
            "# the ids above came from the March log\nrank: 3\n---\nIndent with tabs.\n")
    memory = parse_ok(text, "feedback_tabs.md")
    merged = replace(memory, sources=("3f9a1c0e22b4", "7d2e0b9c11aa"), mtime=MERGE_TIME)
    assert rewritten(text, memory, merged) == (
        "---\nname: Tabs\ntype: feedback\nmtime: 2026-11-21T08:00:00+00:00\nsources: [3f9a1c0e22b4, 7d2e0b9c11aa]\n"
        "# the ids above came from the March log\nrank: 3\n---\nIndent with tabs.\n")


def test_a_line_read_frontmatter_stays_as_written_and_reads_back_after_a_merge():
    text = ("---\nname: Cover letters\ndescription: Cover letter standards: NYC location, one page\n"
            "type: feedback\n---\nEvery cover letter names the NYC office.\n")
    memory = parse_ok(text, "feedback_cover_letters.md")
    merged = replace(memory, sources=("3f9a1c0e22b4", "7d2e0b9c11aa"), mtime=MERGE_TIME)
    again = parse_ok(rewritten(text, memory, merged), "feedback_cover_letters.md")
    assert (again.description, again.sources, again.mtime) == (memory.description, merged.sources, MERGE_TIME)
    assert rewritten(text, memory, merged).startswith(text.split("---\nEvery")[0])


def test_an_archive_copy_of_a_file_with_no_name_line_says_the_name_its_new_file_name_no_longer_does():
    text = "---\ntype: feedback\n---\nIndent with tabs.\n"
    memory = parse_ok(text, "feedback_tabs.md")
    copy = replace(memory, path=".auto-dream/archive/feedback/feedback_tabs.markdown",
                   extra={"archived": "2026-11-21T08:00:00+00:00"})
    again = parse_ok(rewritten(text, memory, copy), copy.path)
    assert again.name == memory.name == "feedback tabs"


@pytest.mark.parametrize("text", [
    "---\n{name: Tabs, type: feedback}\n---\nIndent with tabs.\n",  # a flow mapping
    "---\nname: &n Tabs\ntitle: *n\ntype: feedback\n---\nIndent with tabs.\n",  # an alias
    "---\n? name\n: Tabs\ntype: feedback\n---\nIndent with tabs.\n",  # an explicit key
    # YAML refuses it for its sources line alone: rewritten, `ticket: 0755` would be read as 493
    "---\nname: Tabs\ntype: feedback\nsources: a: b\nticket: 0755\n---\nIndent with tabs.\n",
])
def test_frontmatter_a_rewrite_cannot_edit_line_by_line_is_read_but_never_rewritten(text):
    memory = parse_ok(text, "feedback_tabs.md")
    assert memory.name == "Tabs"
    assert memory.read_only and any(why in memory.read_only for why in ("line by line", "alias", "would change"))


# Whole entries in any order; each parse_memory calls writable must take any rewrite.
ENTRIES = [*KEPT_AS_WRITTEN, "name: Tabs", "description: Indent with tabs", "type: feedback",
           "mtime: 2026-03-01", "mtime: 2026-03-01T10:00:00+01:00 # by hand", "sources: [3f9a1c0e22b4]",
           "sources:\n- 3f9a1c0e22b4\n\n# a comment after the list", "sources: 3f9a1c0e22b4", "", "# a comment",
           "description: it says: two colons", "name: Stray #[test] attribute", "rank: 3", "pinned: false",
           "sources: a: b", "superseded_by: `other.md`", "standup: 9:30", "archived_reason: 'it said: \"no\"'"]


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(ENTRIES), max_size=8), st.sampled_from(["", "\n", "\n\n"]),
       st.sampled_from(["", "Indent with tabs.", "  indented first line\nsecond"]), st.booleans())
def test_any_writable_frontmatter_takes_a_merge_and_an_archive_and_keeps_its_other_lines(entries, gap, body,
                                                                                          archive):
    text = "---\n" + "".join(entry + "\n" for entry in entries) + "---\n" + gap + body + ("\n" if body else "")
    memory = parse(text, "memories/feedback/20260301_tabs.md")
    if not isinstance(memory, Memory) or memory.read_only:
        return
    if archive:
        after = replace(memory, path="archive/feedback/20260301_tabs_2.md",
                        extra={**memory.extra, "archived": "2026-11-21T08:00:00+00:00", "archived_by_run": "0042",
                               "archived_reason": 'contradicts tabs.md: "Spaces,\nnot tabs"',
                               "memory_md_lines": ["- [Tabs](20260301_tabs.md) — tabs, not spaces"]})
    else:
        after = replace(memory, body=(memory.body + "\n\nAlso in YAML files.").strip(), mtime=MERGE_TIME,
                        sources=(*memory.sources, "7d2e0b9c11aa"))
    new = rewritten(text, memory, after)  # StoreError if it would not read back as `after`
    again = parse_ok(new, after.path)
    assert (again.name, again.description, again.type, again.body, again.sources, again.mtime) == \
        (after.name, after.description, after.type, after.body, after.sources, after.mtime.replace(microsecond=0))
    owned = ("mtime:", "sources:", "archived:", "archived_by_run:", "archived_reason:", "memory_md_lines:", "name:")
    kept = [line for line in text.split("---\n")[1].splitlines() if not line.startswith(owned)]
    new_lines = iter(new.split("---\n")[1].splitlines())
    assert all(any(line == other for other in new_lines) for line in kept if not line.startswith("- "))


@settings(max_examples=examples(500), deadline=None)
@given(value=st.one_of(st.from_regex(r"[A-Za-z][A-Za-z0-9 _.,;()/+=-]{0,40}", fullmatch=True),
                       st.sampled_from(["Yes", "no", "ON", "Off", "null", "y", "N", "True", "a", "b - c",
                                        "x.y.z.", "Plan (B), then C", "a=b", "u+1/2"]),
                       st.text(max_size=30)))
def test_a_name_or_description_line_is_written_as_yaml_writes_it(value):
    """The fast path for plain values writes exactly what yaml.safe_dump writes."""
    from auto_dream.store.memory import _yaml_line

    assert _yaml_line("name", value) == yaml.safe_dump({"name": value}, allow_unicode=True, width=10**9).rstrip("\n")


@settings(max_examples=examples(300), deadline=None)
@given(sources=st.lists(st.one_of(st.from_regex(r"[0-9a-f]{12}", fullmatch=True),
                                  st.from_regex(r"0b[01]{1,11}", fullmatch=True),
                                  st.from_regex(r"[0-9]{1,12}", fullmatch=True), st.text(max_size=8)),
                        min_size=1, max_size=5))
def test_a_sources_line_is_written_as_yaml_writes_it(sources):
    from auto_dream.store.memory import _sources_line

    expected = "sources: " + yaml.safe_dump(sources, default_flow_style=True, width=10**9).strip()
    assert _sources_line(tuple(sources)) == expected
