"""Torture: Hypothesis against the two readers of user files — the log parser and the memory
frontmatter reader. They never raise on any input (a bad file is reported, not a crash), what
they read can be written back and read again unchanged, and format/parse and render/parse round
trips keep every field for arbitrary text, YAML-special strings included.
"""

import json
import math
import tempfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from auto_dream.errors import AutoDreamError
from auto_dream.store.daylog import Entry, LogProblem, format_entry, parse_log, read_log
from auto_dream.store.memory import Memory, Unreadable, parse_memory, render_memory
from auto_dream.store.paths import MEMORY_TYPES
from conftest import examples

pytestmark = pytest.mark.slow  # a torture test: `make test` runs it, `make test-fast` leaves it out

FILE_MTIME = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
# Derandomized: the same examples every run, so a failure here is a finding, not a fluke.
FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# ---------------------------------------------------------------- strategies

# Pieces of log lines: real and almost-real entry heads, markers, escapes (a JSON-escaped text
# may name any code point, lone surrogates too), continuations and line ends of every kind.
log_pieces = st.sampled_from([
    "- [2026-04-01 14:30:05] ", "- [2026-04-01 14:30] ", "- [2026-02-30 10:00] ", "- [9999-12-31 23:59:59] ",
    "- [2026-04-01 24:00] ", "- [ ] ", "- [2", "(project) ", "(user) ", "(feedback)", "\\", '\\"', '"',
    "\\u0000", "\\ud800", "\\udfff", "\\n", "\\t", "  ", "\t", "\r", "\r\n", "\n", "\x00", "\x85", "\u2028",
    "用户想通过内容平台分享知识", "🙂", "---", "#", "[", "]",
])
log_texts = st.lists(st.one_of(st.text(max_size=10), log_pieces), max_size=25).map("".join)
# A line a hand or another tool could write: the documented `\"…"` form with any code point in it.
any_code_point = st.characters(codec=None, categories=None, exclude_categories=())
escaped_lines = st.builds(lambda text: "- [2026-04-01 14:30:05] \\" + json.dumps(text) + "\n",
                          st.text(alphabet=any_code_point, min_size=1, max_size=8))
log_contents = st.lists(st.one_of(log_texts, escaped_lines), min_size=1, max_size=4).map("".join)

entry_times = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)) \
    .map(lambda d: d.replace(microsecond=0))
entry_texts = st.one_of(st.text(min_size=1), log_texts).filter(lambda t: t.strip())
entries = st.builds(Entry, at=entry_times, text=entry_texts, type=st.one_of(st.none(), st.sampled_from(MEMORY_TYPES)))

YAML_SPECIAL = ["yes", "no", "on", "off", "true", "null", "~", "- x", ": ", "#", "# not a comment", "&a", "*a",
                "!!binary", "!!python/object/apply:os.system", "[", "]", "{", "}", "|", ">", "'", '"', "%",
                "@", "`", "?", "---", "...", "2026-01-01", "2026-02-30", "12:30", "1e400", ".nan", "0x1F",
                "0o17", "1_000", "\t", "  leading", "trailing  ", " ", "用户", "しない", "🙂", "\\", "=", "<<"]
texts_yaml_special = st.one_of(st.sampled_from(YAML_SPECIAL),
                               st.lists(st.one_of(st.sampled_from(YAML_SPECIAL), st.text(max_size=6)),
                                        min_size=1, max_size=5).map("".join),
                               st.text())
no_nul = texts_yaml_special.filter(lambda t: "\x00" not in t)


def one_line(text: str) -> str:
    """What the reader makes of a name or a description: one line, whitespace collapsed."""
    return " ".join(text.split())


offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
mtimes = st.builds(lambda d, tz: d.replace(microsecond=0, tzinfo=tz),
                   st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 1, 1)), offsets)
extra_keys = st.one_of(st.sampled_from(["originSessionId", "related", "pinned", "yes", "null", "- x", "#",
                                        "用户", "🙂", " padded ", "1", "a: b"]), st.text(min_size=1, max_size=10)) \
    .filter(lambda k: k not in ("name", "description", "type", "mtime", "sources", "metadata"))
# Values a person or a tool leaves in frontmatter: text of every kind, and the YAML scalars and
# collections a reader turns into Python values.
yaml_values = st.recursive(
    st.one_of(no_nul, st.integers(), st.booleans(), st.none(),
              st.floats(allow_nan=False, allow_infinity=True), st.dates(),
              st.datetimes(min_value=datetime(1900, 1, 1)).map(lambda d: d.replace(microsecond=0))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


@st.composite
def memories(draw, values=no_nul) -> Memory:
    name = draw(no_nul.filter(lambda t: one_line(t)))
    description = draw(no_nul.filter(lambda t: one_line(t)))
    return Memory(
        path="memories/project/20260301_x.md", name=name, description=description,
        type=draw(st.sampled_from(MEMORY_TYPES)), mtime=draw(mtimes),
        body=draw(no_nul), sources=tuple(draw(st.lists(no_nul, max_size=4))),
        extra=draw(st.dictionaries(extra_keys, values, max_size=4)),
    )


# Frontmatter a person might type: keys and values from the YAML-special pool, any indent.
frontmatter_lines = st.lists(
    st.builds(lambda indent, key, sep, value: f"{indent}{key}{sep}{value}",
              st.one_of(st.just(""), st.sampled_from([" ", "  ", "\t", "- "])),
              st.one_of(st.sampled_from(["name", "description", "type", "mtime", "sources", "metadata",
                                         "pinned", "related", "originSessionId"]), extra_keys),
              st.one_of(st.just(": "), st.sampled_from([":", " : ", ":\n  - ", ":\n  type: ", ": [", ": {", ": |\n  ",
                                                        ": >-\n  "])),
              st.one_of(st.sampled_from(MEMORY_TYPES), texts_yaml_special)),
    max_size=8)
memory_sources = st.builds(
    lambda opening, lines, closing, body: (opening + "\n".join(lines) + closing + body).encode("utf-8"),
    st.one_of(st.just("---\n"), st.sampled_from(["---\r\n", "\ufeff---\n", "--- \n", "", "----\n"])),
    frontmatter_lines,
    st.one_of(st.just("\n---\n"), st.sampled_from(["\n---", "\n", "\n...\n", "\n--- \n"])),
    texts_yaml_special)


def comparable(value):
    """YAML meaning: a tuple reads back as a list and NaN is NaN."""
    if isinstance(value, (list, tuple)):
        return [comparable(v) for v in value]
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def fields_of(memory: Memory) -> tuple:
    return (memory.name, memory.description, memory.type, memory.sources, memory.body, comparable(memory.extra))


def parse(raw: bytes) -> Memory | Unreadable:
    try:
        return parse_memory(raw, "memories/project/20260301_x.md", FILE_MTIME, None)
    except AutoDreamError:
        raise AssertionError("the reader raised; it should report the file instead") from None


# ---------------------------------------------------------------- the log parser


@FUZZ
@given(content=st.one_of(st.text(), log_contents))
def test_the_log_parser_never_raises_on_any_text(content):
    found, problems = parse_log(content)
    assert all(isinstance(e, Entry) and e.text.strip() for e in found)
    assert all(isinstance(p, LogProblem) for p in problems)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=400), log_contents.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_reading_a_log_file_of_any_bytes_never_raises(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "2026-04-01.md"
        path.write_bytes(raw)
        found, problems = read_log(path)
    assert all(isinstance(e, Entry) for e in found) and all(isinstance(p, LogProblem) for p in problems)


@FUZZ
@given(content=log_contents)
@example(content='- [2026-04-01 14:30:05] \\"a lone \\ud800 surrogate"\n')
def test_every_entry_the_parser_accepts_can_be_written_back_and_reads_back_the_same(content):
    """Dream writes each entry it reads into a memory file, in UTF-8: what is read must be writable."""
    found, _ = parse_log(content)
    for entry in found:
        line = format_entry(entry)
        line.encode("utf-8")  # a lone surrogate here crashes `dream` with a traceback
        assert parse_log(line) == ([entry], [])


@FUZZ
@given(day=st.lists(entries, min_size=1, max_size=5))
def test_any_entries_round_trip_through_format_and_parse(day):
    content = "".join(format_entry(e) for e in day)
    assert parse_log(content) == (day, [])


def test_an_entry_back_dated_before_the_year_1000_is_refused_or_read_back(cli, root):
    """`--at` takes any ISO date; the log writes years with as many digits as they have."""
    appended = cli("--root", root, "append", "--at", "0999-12-31 10:00", "A fact from long ago.")
    if appended.code == 0:
        check = cli("--root", root, "check", "--json")
        assert json.loads(check.out)["undistilled_entries"] == 1, (appended.out, check.err)
    else:
        assert appended.code == 2 and "0999-12-31 10:00" in appended.err


# ---------------------------------------------------------------- the memory reader


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), memory_sources))
def test_the_memory_reader_never_raises_on_any_bytes(raw):
    assert isinstance(parse(raw), (Memory, Unreadable))


@settings(FUZZ, max_examples=examples(60))
@given(raw=memory_sources)
def test_a_memory_the_reader_accepts_and_may_rewrite_keeps_its_fields_through_a_rewrite(raw):
    """Dream rewrites what it reads (a merge, an archive): render must take it and read back the same."""
    first = parse(raw)
    assume(isinstance(first, Memory) and first.read_only is None)
    again = parse(render_memory(first).encode("utf-8"))
    assert isinstance(again, Memory), again
    assert fields_of(again) == fields_of(first)


def memory_with(**fields) -> Memory:
    base = dict(path="memories/project/20260301_x.md", name="Deploy window", description="When we deploy",
                type="project", mtime=FILE_MTIME, body="Deploys happen on Tuesdays.")
    return Memory(**{**base, **fields})


@FUZZ
@given(memory=memories())
def test_render_then_parse_keeps_every_field_for_arbitrary_text(memory):
    parsed = parse(render_memory(memory).encode("utf-8"))
    assert isinstance(parsed, Memory), parsed
    assert parsed.name == one_line(memory.name)
    assert parsed.description == one_line(memory.description)
    assert parsed.type == memory.type
    assert parsed.mtime == memory.mtime
    assert parsed.sources == memory.sources
    assert parsed.body == memory.body.strip()
    assert parsed.extra == memory.extra


@settings(FUZZ, max_examples=examples(80))
@given(memory=memories(values=yaml_values))
def test_render_then_parse_keeps_extra_keys_of_any_yaml_value(memory):
    parsed = parse(render_memory(memory).encode("utf-8"))
    assert isinstance(parsed, Memory), parsed
    assert comparable(parsed.extra) == comparable(memory.extra)


def test_yaml_special_strings_survive_a_rewrite_as_the_strings_they_were():
    """The examples the issue names, spelled out, so a failure reads plainly."""
    special = ["yes", "null", "- x", ": ", "#", "  padded both sides  ", "用户想通过内容平台分享知识", "🙂 emoji",
               "2026-01-01", "1e400", "~", "&anchor", "*alias", "!!binary"]
    memory = Memory(path="memories/user/20260301_x.md", name="yes", description="null", type="user",
                    mtime=FILE_MTIME, body="- x\n\n: \n\n# heading", sources=("no", "1", "- x"),
                    extra={f"key{n}": value for n, value in enumerate(special)} | {"yes": "no", "null": "~"})
    parsed = parse(render_memory(memory).encode("utf-8"))
    assert isinstance(parsed, Memory), parsed
    assert (parsed.name, parsed.description, parsed.body, parsed.sources) == \
        ("yes", "null", "- x\n\n: \n\n# heading", ("no", "1", "- x"))
    assert parsed.extra == memory.extra
    assert all(isinstance(v, str) for v in parsed.extra.values())


def test_a_date_in_an_extra_key_stays_a_date_and_a_name_that_looks_like_one_stays_text():
    memory = Memory(path="memories/user/20260301_x.md", name="2026-01-01", description="12:30", type="user",
                    mtime=FILE_MTIME, body="b", extra={"reviewed": date(2026, 1, 2)})
    parsed = parse(render_memory(memory).encode("utf-8"))
    assert (parsed.name, parsed.description, parsed.extra) == ("2026-01-01", "12:30", {"reviewed": date(2026, 1, 2)})


def test_an_extra_value_holding_a_next_line_character_survives_a_rewrite():
    """U+0085 is what a cp1252 ellipsis becomes when read as Latin-1; a rewrite must keep it."""
    memory = memory_with(extra={"note": "wait\x85 then go", "se\x85ssion": "x"})
    parsed = parse(render_memory(memory).encode("utf-8"))
    assert isinstance(parsed, Memory), parsed
    assert parsed.extra == {"note": "wait\x85 then go", "se\x85ssion": "x"}
