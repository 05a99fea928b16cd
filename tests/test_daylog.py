"""The daily log: exact round trips, the plain form older logs use, stable ids, locked appends."""

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.errors import InputError
from auto_dream.store.daylog import (
    Entry,
    append_entry,
    format_entry,
    make_entry,
    parse_log,
    parse_when,
    read_all_entries,
    read_log,
)
from auto_dream.store.paths import MEMORY_TYPES
from conftest import examples

AT = datetime(2026, 4, 1, 14, 30, 5)

# Text that stresses the format: CJK, brackets, parentheses, tabs, backslashes, control
# characters, and whole lines that look like entries or continuations.
tricky_pieces = st.sampled_from([
    "(project) ", "(user)", "(", ")", "[", "]", "[2026-04-01 14:30]", "- [2026-04-01 14:30:05] x",
    "\n- [2026-04-01 14:30] (feedback) looks like an entry", "\n  indented", "\n\n", "\t", "\\", '\\"',
    '"', "\r", "\r\n", "\x00", "\x1b[31m", "\u2028", "\x85", "用户想通过内容平台分享知识", "しない",
    "한국어", "🙂", " ", "  ", "\n", "---", "#", "`code`", "不要用 X",
])
texts = st.lists(st.one_of(st.text(min_size=1, max_size=12), tricky_pieces), min_size=1, max_size=8) \
    .map("".join).filter(lambda t: t.strip())
entry_times = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 12, 31)) \
    .map(lambda d: d.replace(microsecond=0))
entries = st.builds(Entry, at=entry_times, text=texts, type=st.one_of(st.none(), st.sampled_from(MEMORY_TYPES)))


@settings(max_examples=examples(400), deadline=None)
@given(entry=entries)
def test_every_text_round_trips(entry):
    parsed, problems = parse_log(format_entry(entry))
    assert problems == []
    assert parsed == [entry]


@settings(max_examples=examples(150), deadline=None)
@given(day=st.lists(entries, min_size=1, max_size=6))
def test_a_day_of_entries_round_trips_in_order(day):
    content = "".join(format_entry(e) for e in day)
    parsed, problems = parse_log(content)
    assert problems == []
    assert parsed == day


def test_format_matches_design_example():
    entry = Entry(AT, "Don't mock the database in integration tests.\n"
                      "Reason: the mocked tests passed while the prod migration failed.", "feedback")
    assert format_entry(entry) == (
        "- [2026-04-01 14:30:05] (feedback) Don't mock the database in integration tests.\n"
        "  Reason: the mocked tests passed while the prod migration failed.\n")
    assert format_entry(Entry(AT, "用户想通过内容平台分享知识", "project")) == \
        "- [2026-04-01 14:30:05] (project) 用户想通过内容平台分享知识\n"


def test_seed_plain_form_is_read():
    content = "# 2026-04-01\n\n- [2026-04-01 14:30] 用户想通过内容平台分享知识\n- [2026-04-01 09:05] plain text\n"
    parsed, problems = parse_log(content)
    assert problems == []
    assert parsed == [Entry(datetime(2026, 4, 1, 14, 30), "用户想通过内容平台分享知识", None),
                      Entry(datetime(2026, 4, 1, 9, 5), "plain text", None)]


def test_text_that_starts_like_a_type_stays_text():
    entry = Entry(AT, "(project) is a word in parentheses", None)
    assert parse_log(format_entry(entry))[0] == [entry]
    # an unknown word in parentheses is plain text, no escaping needed
    assert format_entry(Entry(AT, "(aside) note", None)) == "- [2026-04-01 14:30:05] (aside) note\n"


def test_non_entry_lines_are_ignored_and_bad_dates_reported():
    content = ("Some prose a person wrote.\n- [ ] a task box\n- [2026-13-45 10:00] impossible date\n"
               "- [2026-04-01 10:00] good\n")
    parsed, problems = parse_log(content, Path("log.md"))
    assert [e.text for e in parsed] == ["good"]
    assert [(p.line, "bad date" in p.message) for p in problems] == [(3, True)]


def test_crlf_log_and_blank_line_inside_an_entry_written_by_an_editor():
    content = "- [2026-04-01 10:00] first\r\n  second\r\n\r\n  fourth\r\n- [2026-04-01 10:01] next\r\n"
    parsed, _ = parse_log(content)
    assert [e.text for e in parsed] == ["first\nsecond\n\nfourth", "next"]


def test_id_is_stable_under_hand_edits_elsewhere_and_trailing_spaces():
    one = "- [2026-04-01 10:00] keep the API stable\n"
    two = "- [2026-04-01 09:00] something added above by hand\n" + "- [2026-04-01 10:00] keep the API stable   \n"
    first, _ = parse_log(one)
    second, _ = parse_log(two)
    assert first[0].id == second[1].id
    assert first[0].id != second[0].id
    assert len(first[0].id) == 12


def test_id_changes_when_the_fact_changes():
    assert Entry(AT, "use Postgres").id != Entry(AT, "use MySQL").id
    assert Entry(AT, "use Postgres").id != Entry(AT + timedelta(seconds=1), "use Postgres").id


def test_make_entry_rejects_bad_input():
    with pytest.raises(InputError, match="empty"):
        make_entry("   \n\t ", None, AT)
    with pytest.raises(InputError, match="unknown type"):
        make_entry("text", "idea", AT)
    assert make_entry("  padded  ", "user", AT) == Entry(AT, "padded", "user")


def test_parse_when_forms():
    now = datetime(2026, 5, 1, 12, 0).astimezone()
    assert parse_when("2026-04-01 14:30", None, now) == datetime(2026, 4, 1, 14, 30)
    assert parse_when("2026-04-01T14:30:05", None, now) == datetime(2026, 4, 1, 14, 30, 5)
    from zoneinfo import ZoneInfo

    shanghai = ZoneInfo("Asia/Shanghai")
    assert parse_when("2026-04-01T23:30:00Z", shanghai, now) == datetime(2026, 4, 2, 7, 30)
    for bad in ("the day before", "2026-04-31 10:00", "", "14:30", "yesterday 25:00", "tomorrow"):
        with pytest.raises(InputError):
            parse_when(bad, None, now)
    # relative times, as agents and people say them
    for said, meant in (("yesterday 15:00", datetime(2026, 4, 30, 15, 0)), ("2h ago", datetime(2026, 5, 1, 10, 0)),
                        ("30 minutes ago", datetime(2026, 5, 1, 11, 30)), ("now", datetime(2026, 5, 1, 12, 0)),
                        ("昨天 09:30", datetime(2026, 4, 30, 9, 30)), ("3時間前", datetime(2026, 5, 1, 9, 0)),
                        ("today 8:05", datetime(2026, 5, 1, 8, 5))):
        assert parse_when(said, None, now) == meant, said
    with pytest.raises(InputError, match="outside the years"):
        parse_when("999999 weeks ago", None, now)
    with pytest.raises(InputError, match="future"):
        parse_when("2026-06-01 10:00", None, now)


def test_append_writes_the_entry_day_file_and_reads_back(paths):
    append_entry(paths, Entry(AT, "first", "user"))
    append_entry(paths, Entry(AT.replace(day=2), "second\nline", None))
    log = paths.log_file(AT.date())
    assert log == paths.root / "logs/2026/04/2026-04-01.md"
    assert log.read_text() == "- [2026-04-01 14:30:05] (user) first\n"
    entries, problems = read_all_entries(paths)
    assert problems == []
    assert [e.text for e in entries] == ["first", "second\nline"]
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_append_after_a_hand_edit_without_final_newline(paths):
    log = paths.log_file(AT.date())
    log.parent.mkdir(parents=True)
    log.write_text("- [2026-04-01 08:00] written by hand, no newline")
    append_entry(paths, Entry(AT, "appended"))
    entries, _ = read_log(log)
    assert [e.text for e in entries] == ["written by hand, no newline", "appended"]


def test_duplicate_lines_in_logs_count_once(paths):
    entry = Entry(AT, "copied by hand into two days")
    append_entry(paths, entry)
    other = paths.log_file(AT.date() + timedelta(days=1))
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text(format_entry(entry))
    entries, _ = read_all_entries(paths)
    assert entries == [entry]


def test_log_with_bom_and_undecodable_line(paths):
    log = paths.log_file(AT.date())
    log.parent.mkdir(parents=True)
    log.write_bytes(b"\xef\xbb\xbf- [2026-04-01 08:00] fine\n- [2026-04-01 08:01] bad \xff byte\n"
                    b"- [2026-04-01 08:02] also fine\n")
    entries, problems = read_log(log)
    assert [e.text for e in entries] == ["fine", "also fine"]
    assert len(problems) == 1 and problems[0].line == 2 and "UTF-8" in problems[0].message
