"""MEMORY.md: sections, order, links that resolve, the caps Claude Code applies, nothing lost."""

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.store.context import open_context
from auto_dream.store.index import IndexLimits, build_index
from auto_dream.store.memory import Memory, render_memory
from auto_dream.store.memory_md import index_differs, rebuild_index
from auto_dream.store.paths import MEMORY_TYPES
from auto_dream.store.templates import load_template
from conftest import examples, write_memory_file

SHANGHAI = ZoneInfo("Asia/Shanghai")
PLUS_8 = timezone(timedelta(hours=8))
NEWEST = datetime(2026, 3, 12, 10, 30, tzinfo=PLUS_8)
HEADER = load_template("MEMORY_header.md")
HEADINGS = ["## USER", "## FEEDBACK", "## PROJECT", "## REFERENCE"]
ENTRY = re.compile(r"^- \[((?:\\.|[^\\\]])*)\]\(([^()\s]*)\)(?: — (.*))?$")
MORE = re.compile(r"^- … and (?:(\d+) older memor(?:y|ies))?(?: and )?(?:(\d+)(?: memor(?:y|ies))? marked deprecated, "
                  r"superseded or moved)? not listed here: run `auto-dream list` to see them all\.$")


def memory(number: int, memory_type: str = "project", name: str | None = None, description: str | None = None,
           path: str | None = None, pinned: bool = False, mtime: datetime | None = None) -> Memory:
    """Memory `number`: the higher the number, the older (one hour apart)."""
    name = name if name is not None else f"Memory {number}"
    return Memory(
        path=path or f"memories/{memory_type}/20260101_memory_{number:04d}.md",
        name=name,
        description=description if description is not None else f"What memory {number} says",
        type=memory_type,
        mtime=mtime or NEWEST - timedelta(hours=number),
        body="body",
        extra={"pinned": True} if pinned else {},
    )


def index(memories: list[Memory], limits: IndexLimits = IndexLimits(), tz=SHANGHAI):
    return build_index(memories, HEADER, limits, tz)


def entry_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- [")]


def entries(text: str) -> list[tuple[str, str, str | None]]:
    """(label, link, description) of every entry line; fails on a line that is not a clean link."""
    found = []
    for line in entry_lines(text):
        match = ENTRY.match(line)
        assert match, f"not a well-formed entry line: {line!r}"
        found.append((match.group(1), match.group(2), match.group(3)))
    return found


def sections(text: str) -> dict[str, list[str]]:
    """Heading -> the links listed under it."""
    result, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line
            result[current] = []
        elif line.startswith("- [") and current:
            match = ENTRY.match(line)
            assert match, line
            result[current].append(match.group(2))
    return result


def more_count(text: str) -> int:
    """The memories the final 'more' line counts (the oldest and those marked), 0 when there is none."""
    last = text.rstrip("\n").splitlines()[-1]
    match = MORE.match(last)
    return sum(int(count) for count in match.groups() if count) if match else 0


def link_target(root: Path, link: str) -> Path:
    """Where a Markdown viewer opening MEMORY.md at `root` goes for `link`."""
    return root / unquote(urlsplit(link).path)


def memory_text(number: int, memory_type: str, name: str | None = None, description: str | None = None) -> str:
    return render_memory(memory(number, memory_type, name=name, description=description))


def store_with(root: Path, memories: list[Memory]) -> None:
    for m in memories:
        write_memory_file(root, m.path, render_memory(m))


def lowest_priority(memories: list[Memory], count: int) -> set[str]:
    """The paths of the `count` memories MEMORY.md leaves out first: older days first, in a day
    the last sections first, then the oldest (the newest of all never)."""
    newest = max(m.mtime for m in memories)
    order = sorted(memories, key=lambda m: (m.mtime == newest, m.mtime.date(), -MEMORY_TYPES.index(m.type), m.mtime))
    return {m.path for m in order[:count]}


def write_config(root: Path, text: str) -> None:
    (root / "config.toml").write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- sections and order


def test_sections_are_in_design_order_and_present_even_when_empty():
    result = index([memory(1, "reference"), memory(2, "feedback")])
    headings = [line for line in result.text.splitlines() if line.startswith("## ")]
    assert headings == HEADINGS
    listed = sections(result.text)
    assert listed["## USER"] == [] and listed["## PROJECT"] == []
    assert listed["## FEEDBACK"] == ["memories/feedback/20260101_memory_0002.md"]
    assert listed["## REFERENCE"] == ["memories/reference/20260101_memory_0001.md"]


def test_empty_store_has_every_heading_and_no_entries():
    result = index([])
    assert [line for line in result.text.splitlines() if line.startswith("## ")] == HEADINGS
    assert entry_lines(result.text) == [] and result.listed == [] and result.omitted == 0
    assert result.text.startswith("# MEMORY.md - Long-term Memory\n")


def test_each_memory_is_listed_under_its_own_type():
    memories = [memory(i, t) for i, t in enumerate(MEMORY_TYPES * 3)]
    listed = sections(index(memories).text)
    for memory_type in MEMORY_TYPES:
        assert listed[f"## {memory_type.upper()}"] == sorted(
            m.path for m in memories if m.type == memory_type)  # a higher number is older
        assert all(f"/{memory_type}/" in link for link in listed[f"## {memory_type.upper()}"])


def test_newest_first_inside_a_section():
    memories = [memory(5), memory(1), memory(9), memory(3)]
    assert sections(index(memories).text)["## PROJECT"] == [
        f"memories/project/20260101_memory_{n:04d}.md" for n in (1, 3, 5, 9)]


def test_pinned_memories_come_first_in_their_section():
    memories = [memory(1), memory(2), memory(50, pinned=True), memory(40, pinned=True)]
    assert sections(index(memories).text)["## PROJECT"] == [
        f"memories/project/20260101_memory_{n:04d}.md" for n in (40, 50, 1, 2)]


def test_header_last_updated_is_the_newest_memory_in_the_store_timezone():
    result = index([memory(3), memory(0, "user"), memory(7)])
    assert "Last updated: 2026-03-12 10:30\n" in result.text
    in_utc = index([memory(3), memory(0, "user")], tz=timezone.utc)
    assert "Last updated: 2026-03-12 02:30\n" in in_utc.text


def test_build_index_is_pure_and_ignores_input_order():
    memories = [memory(i, MEMORY_TYPES[i % 4]) for i in range(30)]
    first = index(memories)
    assert index(list(reversed(memories))).text == first.text
    assert index(memories).text == first.text


# ---------------------------------------------------------------- links


@pytest.mark.parametrize("file_name", [
    "20260101_plain.md",
    "20260101_with spaces in it.md",
    "20260101_notes (draft) v2.md",
    "20260101_用户想通过内容平台分享知识.md",
    "20260101_[draft]_plan].md",
    "20260101_100%_sure.md",
    "20260101_<angle>.md",
    "20260101_C#_tips.md",
    "20260101_用户\u3000笔记.md",
    "20260101_non\u00a0breaking.md",
], ids=["plain", "spaces", "parentheses", "cjk", "brackets", "percent", "angle", "hash",
        "ideographic-space", "nbsp"])
def test_links_are_relative_to_memory_md_and_resolve(root, file_name):
    relative = f"memories/project/{file_name}"
    write_memory_file(root, relative, "---\nname: A memory\ndescription: It says something\n"
                                      "mtime: 2026-03-12T10:30:00+08:00\n---\nbody\n")
    build = rebuild_index(open_context(root))
    assert build.unreadable == []
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    [(label, link, description)] = entries(text)
    assert label == "A memory" and description == "It says something"
    assert not link.startswith("/") and "://" not in link
    target = link_target(root, link)
    assert target.is_file(), f"{link!r} goes to {target}, not to {relative}"
    assert target.resolve() == (root / relative).resolve()


def test_brackets_in_a_name_do_not_break_the_link():
    result = index([memory(1, name="[draft] plan ]for[ v2 \\ end")])
    [(label, link, _)] = entries(result.text)
    assert re.sub(r"\\(.)", r"\1", label) == "[draft] plan ]for[ v2 \\ end"
    assert link == "memories/project/20260101_memory_0001.md"


def test_every_link_of_a_mixed_store_resolves(root):
    names = ["20260101_a b.md", "20260102_(x).md", "20260103_知识.md", "20260104_[y].md", "20260105_plain.md"]
    for i, file_name in enumerate(names):
        memory_type = MEMORY_TYPES[i % 4]
        write_memory_file(root, f"memories/{memory_type}/{file_name}", f"---\nname: n{i}\n---\nbody {i}\n")
    rebuild_index(open_context(root))
    links = [link for _, link, _ in entries((root / "MEMORY.md").read_text(encoding="utf-8"))]
    assert len(links) == len(names)
    assert all(link_target(root, link).is_file() for link in links), links


# ---------------------------------------------------------------- line length


LONG_WORDS = " ".join(["reasonably", "long", "words", "repeated"] * 80)


@pytest.mark.parametrize("name, description", [
    ("Short", LONG_WORDS),
    (LONG_WORDS, LONG_WORDS),
    ("x" * 400, "y" * 400),
    ("用户想通过内容平台分享知识" * 20, "内容平台分享知识" * 60),
    ("[x] " * 40, "brackets in the name are escaped " * 10),
], ids=["long-description", "long-name", "unbroken", "cjk", "bracket-heavy-name"])
@pytest.mark.parametrize("line_chars", [150, 80])
def test_every_entry_line_fits_the_line_limit(name, description, line_chars):
    memories = [memory(1, name=name, description=description),
                memory(2, "user", name=name, description=description,
                       path="memories/user/20260101_notes (draft).md")]
    result = index(memories, IndexLimits(line_chars=line_chars))
    lines = entry_lines(result.text)
    assert len(lines) == 2
    for line in lines:
        assert len(line) <= line_chars, (len(line), line)
    for label, link, shortened in entries(result.text):
        assert label  # something of the name is always shown
        if shortened:
            assert shortened.endswith("…")


def test_short_entries_are_not_shortened():
    result = index([memory(1, name="Weekly reading goal", description="The user wants to finish one book every week")])
    assert entry_lines(result.text) == [
        "- [Weekly reading goal](memories/project/20260101_memory_0001.md) — "
        "The user wants to finish one book every week"]


@pytest.mark.parametrize("description", [
    "Do the DNS cutover only after the TTL has dropped to 60s",  # the name whole: nothing beyond it
    "Then watch the error rate for an hour and roll back if it doubles",
])
def test_a_name_that_fits_the_line_is_never_cut_for_its_description(description):
    """A whole sentence named by itself, with a long file name: the line once showed
    `[Do the DNS cutover only after the TTL has…]`, room kept for a description it did not have."""
    name = "Do the DNS cutover only after the TTL has dropped to 60s"
    path = "memories/feedback/20261129_Do_the_DNS_cutover_only_after_the_TTL_has_dropped.md"
    result = index([memory(1, "feedback", name=name, description=description, path=path)])
    [(label, _, shown)] = entries(result.text)
    assert label == name
    assert len(entry_lines(result.text)[0]) <= IndexLimits().line_chars
    assert not shown or description.startswith(shown.removesuffix("…"))


def test_long_descriptions_are_cut_at_a_word_boundary():
    result = index([memory(1, name="Goal", description=LONG_WORDS)])
    [(_, _, shortened)] = entries(result.text)
    assert shortened.endswith("…")
    kept = shortened[:-1]
    assert LONG_WORDS.startswith(kept)
    assert LONG_WORDS[len(kept)] == " "  # the cut falls between two words


# ---------------------------------------------------------------- caps


def test_300_memories_fit_in_200_lines_and_the_oldest_are_counted():
    memories = [memory(i, MEMORY_TYPES[i % 4]) for i in range(300)]
    result = index(memories)
    assert result.line_count <= 200
    assert len(result.text.splitlines()) <= 200
    listed = entry_lines(result.text)
    assert len(listed) == len(result.listed)
    assert more_count(result.text) == result.omitted == 300 - len(listed) > 0
    assert {m.path for m in memories} - set(result.listed) == lowest_priority(memories, result.omitted)
    assert memories[0].path in result.listed  # the newest
    assert result.warnings and "auto-dream list" in result.warnings[0]


def test_cjk_descriptions_are_shortened_to_fit_the_byte_cap_before_anything_is_left_out():
    description = "用户想通过内容平台分享知识，每周写一篇文章并且记录读书笔记。" * 5
    memories = [memory(i, MEMORY_TYPES[i % 4], description=description) for i in range(190)]
    full = index(memories, IndexLimits(max_bytes=10**9))
    assert full.byte_count > 25_000  # without shortening it would not fit
    result = index(memories)
    assert result.byte_count == len(result.text.encode("utf-8")) <= 25_000
    assert result.omitted == 0 and result.warnings == []
    assert more_count(result.text) == 0
    assert len(result.listed) == 190
    described = entries(result.text)
    assert all(d is not None and d.endswith("…") and description.startswith(d[:-1]) for _, _, d in described)


def test_english_descriptions_are_shortened_before_anything_is_left_out():
    memories = [memory(i, MEMORY_TYPES[i % 4], description=LONG_WORDS) for i in range(150)]
    result = index(memories)
    assert result.byte_count <= 25_000
    assert result.omitted == 0 and result.warnings == []
    assert len(entry_lines(result.text)) == 150
    assert all(d.endswith("…") for _, _, d in entries(result.text))


def test_when_shortening_is_not_enough_the_oldest_are_left_out_and_counted():
    cjk_name = "用户想通过内容平台分享知识并且每周写一篇文章记录读书笔记和心得体会"
    memories = [memory(i, MEMORY_TYPES[(i + 3) % 4], name=cjk_name, description=cjk_name * 4,
                       path=f"memories/{MEMORY_TYPES[(i + 3) % 4]}/20260101_{cjk_name}_{i:03d}.md")
                for i in range(150)]
    result = index(memories)
    assert result.byte_count <= 25_000
    assert len(result.text.splitlines()) <= 200
    assert all(len(line) <= 150 for line in entry_lines(result.text))
    assert result.omitted, "this case needs omission"
    assert {m.path for m in memories} - set(result.listed) == lowest_priority(memories, result.omitted)
    assert memories[0].type == "reference" and memories[0].path in result.listed  # newest, in the last section
    assert len(result.listed) + more_count(result.text) == 150
    assert more_count(result.text) == result.omitted
    assert result.warnings and str(result.omitted) in result.warnings[0]


def test_over_the_caps_a_days_lessons_outrank_that_days_project_fragments_and_a_newer_day_outranks_both():
    """An OpenClaw import of day one: the user's lessons written at 09:00, the day's project notes
    after them. MEMORY.md left the lessons out as the oldest and kept the fragments."""
    day_one = NEWEST - timedelta(days=3)
    lessons = [memory(100 + n, kind, mtime=day_one.replace(hour=9, minute=n))
               for n, kind in enumerate(["user", "feedback", "feedback"])]
    fragments = [memory(200 + n, "project", mtime=day_one.replace(hour=20, minute=n)) for n in range(6)]
    newer = [memory(n, "project", mtime=NEWEST - timedelta(minutes=n)) for n in range(2)]
    everything = [*lessons, *fragments, *newer]
    room = index([]).line_count + 1 + 6  # the headings, the "more" line, and six memories
    result = index(everything, IndexLimits(max_lines=room))
    assert set(result.listed) == {m.path for m in [*newer, *lessons, fragments[-1]]}
    assert result.omitted == 5  # the day's five earliest fragments, not its lessons


def test_the_newest_memory_is_listed_even_with_tight_limits():
    memories = [memory(i, MEMORY_TYPES[i % 4], description=LONG_WORDS) for i in range(1, 60)]
    newest = memory(0, "reference", description=LONG_WORDS)
    result = index([*memories, newest], IndexLimits(max_lines=10, max_bytes=1000))
    assert newest.path in result.listed
    assert len(result.text.splitlines()) <= 10
    assert result.byte_count <= 1000
    assert len(result.listed) + more_count(result.text) == 60


@pytest.mark.parametrize(("count", "marked"), [(0, 0), (1, 0), (199, 0), (250, 0), (1000, 0), (1, 1), (12, 3),
                                               (199, 2), (250, 7)])
def test_listed_plus_counted_equals_memory_files_on_disk(root, count, marked):
    for i in range(count):
        memory_type = MEMORY_TYPES[i % 4]
        status = "SUPERSEDED by m0. " if i >= count - marked else ""
        write_memory_file(root, f"memories/{memory_type}/20260101_m{i:04d}.md",
                          f"---\nname: m{i}\ndescription: {status}memory number {i}\n"
                          f"mtime: 2026-03-12T10:{i % 60:02d}:00+08:00\n"
                          f"---\nbody\n")
    rebuild_index(open_context(root))
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    on_disk = len(list((root / "memories").rglob("*.md")))
    assert on_disk == count
    assert len(entry_lines(text)) + more_count(text) == on_disk
    assert "SUPERSEDED" not in text
    assert len(text.splitlines()) <= 200 and len(text.encode()) <= 25_000


# ---------------------------------------------------------------- what a person marked


def test_a_memory_a_person_marked_superseded_or_deprecated_is_not_listed_and_the_last_line_counts_it():
    memories = [memory(0), memory(1, description="SUPERSEDED by Memory 0. Kept for historical reference only."),
                memory(2, "user"), memory(3, "feedback", name="[DEPRECATED] Old review rule"),
                memory(4, "feedback", description="The `foo` flag is deprecated in v3; use `bar`")]
    result = index(memories)
    assert set(result.listed) == {memories[0].path, memories[2].path, memories[4].path}
    assert result.text.splitlines()[-1] == ("- … and 2 memories marked deprecated, superseded or moved not listed "
                                            "here: run `auto-dream list` to see them all.")
    assert (result.omitted, result.marked, result.warnings) == (2, 2, [])
    assert len(result.listed) + more_count(result.text) == len(memories)


def test_over_the_caps_the_last_line_counts_the_oldest_and_the_marked_apart():
    memories = [memory(i, MEMORY_TYPES[i % 4], description=f"SUPERSEDED by memory {i - 1}" if i % 60 == 1 else None)
                for i in range(300)]
    result = index(memories)
    marked = {m.path for m in memories if m.status is not None}
    assert len(marked) == 5 and not marked & set(result.listed)
    match = MORE.match(result.text.splitlines()[-1])
    assert match and int(match.group(2)) == result.marked == 5
    assert len(result.listed) + int(match.group(1)) + 5 == 300 == len(result.listed) + result.omitted
    assert result.warnings and f"the {result.omitted - 5} oldest" in result.warnings[0]


def test_a_dream_leaves_a_marked_memory_out_run_after_run_and_build_index_agrees(cli, root):
    store_with(root, [replace(memory(1), body="Deploys go through GitHub Actions since March."),
                      replace(memory(2, name="Deploy flow (superseded)"), body="Build, push, restart Jenkins."),
                      replace(memory(3, "user"), body="The user reads one book a week.")])
    assert cli("--root", root, "dream", "--no-llm").code == 0
    first = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Deploy flow" not in first and "1 memory marked deprecated, superseded or moved" in first
    assert cli("--root", root, "dream", "--no-llm").code == 0  # read from the parse cache this time
    assert cli("--root", root, "build-index").out.startswith("MEMORY.md already up to date")
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == first


# ---------------------------------------------------------------- rebuild_index


def test_rebuild_twice_is_idempotent(root):
    for i in range(12):
        write_memory_file(root, memory(i, MEMORY_TYPES[i % 4]).path, memory_text(i, MEMORY_TYPES[i % 4]))
    context = open_context(root)
    first = rebuild_index(context)
    assert first.changed is True
    written = (root / "MEMORY.md").read_bytes()
    stamp = (root / "MEMORY.md").stat().st_mtime_ns
    second = rebuild_index(context)
    assert second.changed is False
    assert (root / "MEMORY.md").read_bytes() == written
    assert (root / "MEMORY.md").stat().st_mtime_ns == stamp  # not rewritten either


def test_rebuild_rewrites_a_stale_index(root):
    write_memory_file(root, "memories/user/20260101_a.md", memory_text(1, "user", name="First"))
    context = open_context(root)
    rebuild_index(context)
    write_memory_file(root, "memories/user/20260102_b.md", memory_text(0, "user", name="Second"))
    build = rebuild_index(context)
    assert build.changed is True
    assert "[Second](memories/user/20260102_b.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_memory_md_differs_unless_it_is_exactly_the_index(root):
    context = open_context(root)
    (root / "MEMORY.md").unlink(missing_ok=True)
    assert index_differs(context, b"# Memory\n")  # missing
    (root / "MEMORY.md").write_bytes(b"# Memory\n")
    assert not index_differs(context, b"# Memory\n")
    (root / "MEMORY.md").write_bytes(b"# Memory\n- a line added by hand\n")  # the index, and more
    assert index_differs(context, b"# Memory\n")
    (root / "MEMORY.md").write_bytes(b"# Mem")  # cut short
    assert index_differs(context, b"# Memory\n")


def test_last_updated_is_the_newest_memory_not_the_clock(root):
    write_config(root, 'timezone = "Asia/Shanghai"\n')
    write_memory_file(root, "memories/project/20240101_old.md",
                      "---\nname: old\nmtime: 2024-01-01T08:00:00+08:00\n---\nbody\n")
    write_memory_file(root, "memories/user/20250601_new.md",
                      "---\nname: new\nmtime: 2025-06-01T23:45:00+00:00\n---\nbody\n")
    rebuild_index(open_context(root))
    lines = (root / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# MEMORY.md - Long-term Memory"
    assert lines[1] == "Last updated: 2025-06-02 07:45"  # 23:45 UTC in Shanghai


# ---------------------------------------------------------------- the build-index command


def test_build_index_command_writes_memory_md(cli, root):
    write_memory_file(root, "memories/feedback/20260312_no_mocks.md",
                      "---\nname: No mocks\ndescription: Do not mock the database\nmtime: 2026-03-12T10:30:00+08:00\n"
                      "---\nbody\n")
    (root / "MEMORY.md").unlink(missing_ok=True)
    result = cli("--root", root, "build-index")
    assert result.code == 0, result
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert sections(text)["## FEEDBACK"] == ["memories/feedback/20260312_no_mocks.md"]
    assert "- [No mocks](memories/feedback/20260312_no_mocks.md) — Do not mock the database" in text
    assert "warning" not in result.err
    again = cli("--root", root, "build-index")
    assert again.code == 0 and (root / "MEMORY.md").read_text(encoding="utf-8") == text
    assert "up to date" in again.out


def test_build_index_command_warns_when_memories_are_left_out(cli, root):
    write_config(root, "index_max_lines = 10\n")
    for i in range(5):
        write_memory_file(root, memory(i).path, memory_text(i, "project"))
    result = cli("--root", root, "build-index")
    assert result.code == 0, result
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 10
    assert len(entry_lines(text)) + more_count(text) == 5
    assert more_count(text) == 3
    assert "warning" in result.err and "auto-dream list" in result.err
    assert "warning" not in result.out


def test_build_index_command_names_an_unreadable_file_and_indexes_the_rest(cli, root):
    write_memory_file(root, "memories/project/20260312_good.md", memory_text(1, "project", name="Good"))
    broken = write_memory_file(root, "memories/project/20260312_broken.md", "---\nname: [oops\n---\nbody\n")
    broken_bytes = broken.read_bytes()
    result = cli("--root", root, "build-index")
    assert result.code == 0, result
    assert "memories/project/20260312_broken.md" in result.err
    assert "broken YAML" in result.err
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[Good](memories/project/20260312_good.md)" in text
    # named by its file name and counted, never linked, never dropped from every view (docs/store.md, "MEMORY.md")
    assert "- Not read (1, `auto-dream check` says why): 20260312_broken.md\n" in text
    assert "](memories/project/20260312_broken.md)" not in text
    assert broken.read_bytes() == broken_bytes


@settings(max_examples=examples(200), deadline=None)
@given(shape=st.lists(st.tuples(st.integers(0, 5), st.booleans(), st.sampled_from(MEMORY_TYPES)), max_size=60),
       cap=st.integers(0, 40))
def test_the_listed_memories_are_the_first_by_priority_even_among_ties_and_pins(shape, cap):
    """Pinned first, then the newest, then newest day, in a day the sections in order, then newest,
    ties broken by path, however many share an mtime."""
    base = datetime(2026, 11, 1, tzinfo=timezone.utc)
    memories = [Memory(path=f"memories/{kind}/{n:03d}.md", name=f"note {n}", description="", type=kind,
                       mtime=base + timedelta(hours=hours), extra={"pinned": True} if pinned else {})
                for n, (hours, pinned, kind) in enumerate(shape)]
    limits = IndexLimits(max_lines=cap + len(MEMORY_TYPES) + 3, max_bytes=1_000_000, line_chars=150)
    result = build_index(memories, "# Memory\n", limits, timezone.utc)
    newest = max((m.mtime for m in memories), default=None)
    expected = sorted(memories, key=lambda m: (not m.pinned, m.mtime != newest, -m.mtime.date().toordinal(),
                                               MEMORY_TYPES.index(m.type), -m.mtime.timestamp(), m.path))
    listed = set(result.listed)
    # the header and four section titles take 6 lines, the "more" line one: the cap is reached exactly
    assert len(listed) == (len(memories) if len(memories) <= cap + 1 else cap)
    assert listed == {m.path for m in expected[:len(listed)]}
    assert result.omitted == len(expected) - len(listed)


def test_a_dream_names_unreadable_files_and_check_then_finds_the_index_in_sync(cli, root):
    write_memory_file(root, "memories/project/20260312_good.md", memory_text(1, "project", name="Good"))
    write_memory_file(root, "memories/project/[x](https:||evil.example).md", "---\nname: [oops\n---\nbody\n")
    write_memory_file(root, "memories/user/20260101_binary.md", b"\x00\x01")
    assert cli("--root", root, "dream", "--no-llm").code == 0
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("- Not read"))
    assert line == "- Not read (2, `auto-dream check` says why): \\[x\\](https:||evil.example).md, 20260101_binary.md"
    assert "](https" not in text.replace("\\](https", "")  # the planted name is no link
    check = cli("--root", root, "check", "--json")
    assert check.code == 0 and '"index_in_sync": true' in check.out
    assert cli("--root", root, "build-index").out.startswith("MEMORY.md already up to date")


def test_caps_with_no_room_for_the_unreadable_line_leave_it_out_rather_than_fail():
    header = load_template("MEMORY_header.md")
    header_lines = header.rstrip("\n").count("\n") + 2  # as build_index ends it: a blank line after
    tight = IndexLimits(max_lines=header_lines + len(MEMORY_TYPES) + 1, max_bytes=25_000, line_chars=150)
    result = build_index([memory(1, "user")], header, tight, timezone.utc, ["memories/user/broken.md"])
    assert "Not read" not in result.text and len(result.text.splitlines()) <= tight.max_lines
    roomy = build_index([memory(1, "user")], header, IndexLimits(), timezone.utc, ["memories/user/broken.md"])
    assert "- Not read (1, `auto-dream check` says why): broken.md\n" in roomy.text


@pytest.mark.parametrize("name, description, shown", [
    # what follows the name's label, said again at the description's start: the line shows what it adds
    ("Plan for Q3: split the monolith's auth module",
     "Split the monolith's auth module into its own service, then move sessions to Redis",
     "into its own service, then move sessions to Redis"),
    # ... and with the person the description opens with and the name leaves out
    ("Likes having a checklist at the start", "User likes having a checklist at the start of any long task",
     "of any long task"),
    ("ステータス：ベータ版を社内で配布した", "ベータ版を社内で配布した。来週から外部テスター10人に広げる",
     "来週から外部テスター10人に広げる"),
    # a description that says something else is shown whole
    ("Plan for Q3: split the monolith's auth module", "Sessions move to Redis once the split lands",
     "Sessions move to Redis once the split lands"),
    # ... and "Username" is no person followed by "name"
    ("Name is admin", "Username is admin on the box", "Username is admin on the box"),
])
def test_a_line_never_repeats_what_follows_its_name_label_or_person(name, description, shown):
    result = index([memory(1, name=name, description=description, path="memories/project/20260101_q3.md")])
    [(label, _, hook)] = entries(result.text)
    assert (label, hook) == (name, shown)


def test_what_goes_on_from_the_name_cut_to_a_few_words_is_left_out_and_a_description_of_its_own_is_not():
    path = "memories/feedback/20260305_Safety_Always_keep_the_emergency_stop_within_reach.md"
    name = "Safety: Always keep the emergency stop within reach"
    going_on = index([memory(1, "feedback", name=name, path=path,
                             description="Always keep the emergency stop within reach while the arm is powered")])
    assert entry_lines(going_on.text) == [f"- [{name}]({path})"]  # not "— while the…"
    own = index([memory(1, "feedback", name=name, path=path, description="Reads Rust on weekends and is learning Zig")])
    [(_, _, hook)] = entries(own.text)
    assert hook.startswith("Reads") and hook.endswith("…")


def test_a_description_cut_inside_its_first_word_gives_way_to_the_name_alone():
    """The example's MEMORY.md showed "[Never rebase feature branches; merge main into them
    instead](…) — R…": the room the long name and path left cut the description's first word."""
    path = "memories/feedback/20261120_Never_rebase_feature_branches_merge_main_into_them.md"
    name = "Never rebase feature branches; merge main into them instead"

    def hook(description: str, room: int) -> str | None:
        """The description shown when the line leaves `room` characters for it."""
        prefix = len(f"- [{name}]({path})") + len(" — ")
        limits = IndexLimits(line_chars=prefix + room)
        [(_, _, shown)] = entries(index([memory(1, "feedback", name=name, path=path, description=description)],
                                        limits).text)
        return shown

    assert hook("Reason: rebases rewrote history others had pulled", 3) is None  # not "R…"
    assert hook("Reason: rebases rewrote history others had pulled", 6) is None  # not "Reas…"
    assert hook("Reason rebases rewrote history others had pulled", 9) == "Reason…"  # a whole word
    assert hook("理由：别人已经拉取的历史被改写了", 4) == "理由：…"  # a CJK character says something on its own
