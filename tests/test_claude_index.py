"""A Claude Code folder's MEMORY.md rebuilt in place: what a person wrote stays, byte for byte;
retired files' lines go; new memories get a line where a person would put it; what does not
fit Claude Code's caps moves to an overflow file instead of being cut."""

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.judge.status import Status
from auto_dream.store.claude_index import ClaudeIndex, rebuild_claude_index, statuses_in_index
from auto_dream.store.index import IndexLimits
from auto_dream.store.memory import Memory
from conftest import examples

TODAY = date(2026, 5, 1)
NEWEST = datetime(2026, 4, 30, 12, 0, tzinfo=timezone.utc)
OVERFLOW_HEADER = ("---\nname: Moved from MEMORY.md\ndescription: Lines moved out of MEMORY.md to keep it within "
                   "what Claude Code loads; nothing was cut\ntype: reference\npinned: true\n---\n")

# An excerpt of recommendarr's .claude/memory/MEMORY.md (vidarc/recommendarr @ 324c650, MIT):
# labels that are the file name, empty sections, project memories filed under TODOs and
# References, and hand-written lines that link no file.
RECOMMENDARR = """\
# Memory Index

## Project

- [project_status.md](project_status.md) — Current focus pointer; where to find context before suggesting work
- [project_future_features.md](project_future_features.md) — Redesign backlog pointer + older brainstormed feature ideas

## User

## Feedback

- [feedback_testing.md](feedback_testing.md) — Testing preferences: use onTestFinished for cleanup, msw for HTTP mocks, avoid mocking hooks
- [feedback_db_transactions.md](feedback_db_transactions.md) — Multi-step DB mutations must be wrapped in transactions
- [feedback_zod_mini.md](feedback_zod_mini.md) — Always `import * as z from "zod/mini"` and use its functional API for best tree-shaking

## Decisions

## TODOs

- [project_shared_types_todo.md](project_shared_types_todo.md) — Audit and share types between server and client

## References

- [project_conversation_url_loading.md](project_conversation_url_loading.md) — useChat URL hydration + race-condition invariants
- `docs/superpowers/HISTORY.md` — chronological log of shipped phases (MVP → Redesign B1)
- `docs/superpowers/specs/` — design specs for each phase (source of truth for _why_ decisions were made; `plans/` folder deleted 2026-04-22)
"""  # noqa: E501 (the lines as written)
RECOMMENDARR_FILES = ["project_status.md", "project_future_features.md", "feedback_testing.md",
                      "feedback_db_transactions.md", "feedback_zod_mini.md", "project_shared_types_todo.md",
                      "project_conversation_url_loading.md"]

# An excerpt of application-pipeline's .claude/memory/MEMORY.md (4444J99/application-pipeline
# @ c85fbc2, MIT): hand-written sections of facts, a list item continued on the next lines, a
# memory linked inside prose, hooks after the links, and `## Project Memories`.
APPLICATION_PIPELINE = """\
# Application Pipeline Memory

## User
- [Engineering timeline](user_engineering_timeline.md) — 15 years (2011–present), not 6. First website with unnamedplay-r/etceter4.

## User Preferences
- Resume batches go to `materials/resumes/batch-NN/`; current batch is `batch-03`
- PDF build via `python scripts/build_resumes.py` (headless Chrome); all resumes must be exactly 1 page

## Key 2026 Market Data Points (Precision-Over-Volume Era)
- Referral multiplier: 8x; tailored cover letter: +53% callback; follow-up: +68% offers
- Scoring threshold crisis RESOLVED 2026-03-15: 9.0→7.0. See [freshness gate memory](project_freshness_gate_2026-03-15.md).

## Job Entry Patterns (updated 2026-03-01)
- Auto-sourced job entries often get `resumes/independent-engineer-resume.html` as a dangling reference
  when `tailor_resume.py --wire` appends batch-03 resume without removing old reference

## Feedback
- [Additive design](feedback_additive_design.md) — Each prompt adds complexity; never simplify or replace prior layers
- [Never defer to human](feedback_never_defer_to_human.md) — The human is the conductor. Never ask them to run CLI commands, set passwords, or do mechanical work the system can do programmatically.
- [Never list commands](feedback_never_defer_commands.md) — Never present commands for the user to run. Run them all automatically.

## Project Memories
- [System Purpose](project_system_purpose.md) — Core mission: Scan → Match → Build → Apply → Follow up. Everything else is armor plating.
- [Freshness Gate & Scoring Recalibration 2026-03-15](project_freshness_gate_2026-03-15.md) — Auto 72h flush, threshold 9.0→7.0

## References
- [OpenClaw Gateway Setup](reference_openclaw_setup_2026-03-31.md) — OpenClaw v2026.3.28 at ~/.openclaw/, Ollama gateway port 18789, llama3.2:3b primary, no cloud auth
"""  # noqa: E501 (the lines as written)
APPLICATION_PIPELINE_FILES = ["user_engineering_timeline.md", "feedback_additive_design.md",
                              "feedback_never_defer_to_human.md", "feedback_never_defer_commands.md",
                              "project_system_purpose.md", "project_freshness_gate_2026-03-15.md",
                              "reference_openclaw_setup_2026-03-31.md"]


def memory(path: str, memory_type: str | None = None, name: str | None = None, description: str | None = None,
           age_hours: int = 0) -> Memory:
    """A live memory; its type is the file name's prefix unless given; the higher age_hours, the older."""
    return Memory(path=path, name=name or path.removesuffix(".md"), description=description or f"About {path}",
                  type=memory_type or path.split("_", 1)[0], mtime=NEWEST - timedelta(hours=age_hours))


def rebuild(existing: str | None, live: list[Memory], retired: tuple[str, ...] = (),
            limits: IndexLimits = IndexLimits(), **options) -> ClaudeIndex:
    return rebuild_claude_index(existing, live, retired, limits, TODAY, **options)


def fits(text: str, limits: IndexLimits) -> bool:
    return text.count("\n") <= limits.max_lines and len(text.encode()) <= limits.max_bytes


def lines_of(text: str) -> list[str]:
    """The lines of a text that ends with a line end (split at "\\n" alone, as Claude Code reads them)."""
    return text.split("\n")[:-1]


def moved_body(overflow_text: str) -> str:
    """What the last move wrote into the overflow file, after its `## Moved on` heading."""
    return overflow_text.split(f"## Moved on {TODAY.isoformat()}\n")[-1]


# ---------------------------------------------------------------- what a person wrote stays


def test_real_indexes_whose_memories_are_all_linked_are_kept_byte_for_byte():
    for text, files in ((RECOMMENDARR, RECOMMENDARR_FILES), (APPLICATION_PIPELINE, APPLICATION_PIPELINE_FILES)):
        result = rebuild(text, [memory(path) for path in files])
        assert result.text == text
        assert (result.added, result.dropped, result.moved, result.overflow_text) == ([], [], 0, None)


def test_a_hook_that_says_something_else_than_the_description_is_kept():
    text = "# Memory Index\n\n- [Testing](feedback_testing.md) — ask me before adding a mock\n"
    result = rebuild(text, [memory("feedback_testing.md", description="Use msw for HTTP mocks, never mock hooks")])
    assert result.text == text
    assert result.added == []


def test_a_retired_files_line_is_dropped_and_a_mention_of_it_in_prose_stays():
    text = ("# Memory Index\n\n## Feedback\n"
            "- [Cover letter quality](feedback_cover_letter_quality.md) — SUPERSEDED by unified rules below.\n"
            "- [Unified rules](feedback_unified.md) — 550-700 words\n\n"
            "History: see [the old rules](feedback_cover_letter_quality.md) before 2026-03-26.\n"
            "- Details archived in [old rules](feedback_cover_letter_quality.md) — kept for reference\n")
    result = rebuild(text, [memory("feedback_unified.md")], retired=("feedback_cover_letter_quality.md",))
    assert result.dropped == [
        "- [Cover letter quality](feedback_cover_letter_quality.md) — SUPERSEDED by unified rules below."]
    assert result.text == text.replace(result.dropped[0] + "\n", "")


def test_link_lines_are_recognised_however_the_link_is_written():
    forms = ["- [A](<feedback a.md>) — angle brackets", "* [B](./feedback_b.md) — dot slash",
             "+ [C](feedback_c%20x.md) — percent-encoded", "  1. [D](feedback_d.md#why) — a fragment",
             '- [E](feedback_e.md "a title") — a title', "- [F](.claude/memory/feedback_f.md) — from the repo root"]
    live = [memory(path, "feedback") for path in ("feedback a.md", "feedback_b.md", "feedback_c x.md",
                                                  "feedback_d.md", "feedback_e.md", "feedback_f.md")]
    text = "# Memory Index\n\n## Feedback\n" + "\n".join(forms) + "\n"
    assert rebuild(text, live).text == text  # every memory is linked: nothing added
    retired = rebuild(text, [], retired=tuple(m.path for m in live))
    # a retired file's line goes only when its link names that file from here: the repository-root
    # form may name another file of the same name, and is kept (hands off unless certain)
    assert retired.text == "# Memory Index\n\n## Feedback\n" + forms[-1] + "\n"
    assert retired.dropped == forms[:-1]


def test_a_memory_linked_anywhere_even_in_prose_is_not_listed_again():
    text = "# Memory Index\n\nWe keep the release notes in [notes](reference_notes.md).\n"
    assert rebuild(text, [memory("reference_notes.md")]).text == text


# ---------------------------------------------------------------- new lines


def test_a_new_feedback_memory_lands_at_the_end_of_the_feedback_section():
    live = [memory(path) for path in RECOMMENDARR_FILES]
    live.append(memory("feedback_no_barrels.md", name="No barrel files", description="Import from the module"))
    result = rebuild(RECOMMENDARR, live)
    last_feedback = RECOMMENDARR.splitlines()[13]
    assert last_feedback.startswith("- [feedback_zod_mini.md]")
    new_line = "- [No barrel files](feedback_no_barrels.md) — Import from the module\n"
    assert result.text == RECOMMENDARR.replace(last_feedback + "\n", last_feedback + "\n" + new_line)
    assert result.added == ["feedback_no_barrels.md"]


def test_a_new_project_memory_lands_in_project_memories_in_the_real_layout():
    live = [memory(path) for path in APPLICATION_PIPELINE_FILES] + [memory("project_grafana.md", name="Grafana")]
    result = rebuild(APPLICATION_PIPELINE, live)
    lines = result.text.splitlines()
    assert lines[lines.index("## References") - 2] == "- [Grafana](project_grafana.md) — About project_grafana.md"


def test_a_memory_whose_type_has_no_section_goes_into_a_new_section_at_the_end_newest_first():
    text = ("# Memory Index\n\n## Feedback\n"
            "- [OtfRequestError optional fields](exceptions_optional_fields.md) — typed non-Optional but passed None\n")
    live = [memory("exceptions_optional_fields.md", "feedback"),
            memory("project_old.md", name="Old plan", age_hours=5), memory("project_new.md", name="New plan")]
    result = rebuild(text, live)
    assert result.text == text + ("\n## Project\n- [New plan](project_new.md) — About project_new.md\n"
                                  "- [Old plan](project_old.md) — About project_old.md\n")
    assert result.added == ["project_new.md", "project_old.md"]


def test_in_a_flat_list_of_links_new_lines_follow_the_last_link_newest_first():
    text = ("# Memory Index\n"  # otf-api's code-reviewer: one list of links, no sections
            "- [OtfRequestError optional fields](exceptions_optional_fields.md) — typed non-Optional but passed None\n"
            "\nA closing note.\n")
    live = [memory("exceptions_optional_fields.md", "feedback"),
            memory("project_old.md", name="Old plan", age_hours=5), memory("project_new.md", name="New plan")]
    result = rebuild(text, live)
    assert result.text == text.replace("passed None\n", "passed None\n- [New plan](project_new.md) — About "
                                       "project_new.md\n- [Old plan](project_old.md) — About project_old.md\n")


def test_a_new_line_is_claude_codes_form_within_the_line_limit():
    result = rebuild(None, [memory("user_role.md", name="Role [lead]", description="Role [lead] of the platform team "
                                   + "who reviews every migration " * 10)])
    line = result.text.splitlines()[-1]
    assert result.text.startswith("# Memory Index\n\n## User\n")
    assert line.startswith("- [Role \\[lead\\]](user_role.md) — of the platform team who reviews")
    assert len(line) <= 150


def test_the_text_always_ends_with_one_line_end():
    result = rebuild("# Memory Index\n- a fact with no line end", [memory("project_x.md")])
    assert result.text == ("# Memory Index\n- a fact with no line end\n\n"
                           "## Project\n- [project_x](project_x.md) — About project_x.md\n")


# ---------------------------------------------------------------- the caps


def test_an_index_of_250_inline_lines_moves_the_bottom_ones_whole_into_the_overflow_file():
    # like the orchestkit agents that keep all they know inside MEMORY.md, with no topic file
    lines = ["# CI/CD Engineer Memory"]
    for number in range(1, 250):
        lines.append(f"## Pattern {number // 10}" if number % 10 == 1 else
                     "" if number % 10 == 0 else f"- **Rule {number}**: pin actions to a full SHA (`uses: a@<sha>`)")
    text = "\n".join(lines) + "\n"
    result = rebuild(text, [])
    kept = result.text.splitlines()
    assert len(kept) == 200
    assert result.moved == 51  # 250 lines, less 51 moved, plus the line that links them: 200
    assert kept[:199] == lines[:199]
    assert kept[199] == ("- [Moved from MEMORY.md](MEMORY_overflow.md) — 51 lines moved here on 2026-05-01 to "
                         "keep MEMORY.md within Claude Code's 200 lines / 25,000 bytes")
    assert result.overflow_text == OVERFLOW_HEADER + "\n## Moved on 2026-05-01\n" + "\n".join(lines[199:]) + "\n"


def test_an_index_over_the_byte_cap_moves_lines_until_it_fits():
    lines = ["# Memory Index"] + [f"- Fact {number}: " + "é" * 140 for number in range(100)]  # 28 KB in 101 lines
    result = rebuild("\n".join(lines) + "\n", [])
    assert len(result.text.encode()) <= 25_000
    assert len(result.text.encode()) > 25_000 - 300  # no more moved than needed
    kept = result.text.splitlines()[:-1]
    assert kept == lines[:len(kept)]
    assert moved_body(result.overflow_text).splitlines() == lines[len(kept):]
    assert result.moved == len(lines) - len(kept)


def test_link_lines_move_oldest_memory_first_once_hand_written_lines_are_gone():
    live = [memory(f"project_{number:03d}.md", age_hours=number) for number in range(30)]
    in_file = sorted(range(30), key=lambda number: (number % 7, number))  # neither newest nor oldest first
    link_lines = [f"- [p{number}](project_{number:03d}.md) — hook" for number in in_file]
    text = "# Memory Index\n## Notes\n- a fact\n## Project\n" + "".join(line + "\n" for line in link_lines)
    limits = IndexLimits(max_lines=20)
    result = rebuild(text, live, limits=limits)
    assert fits(result.text, limits)
    moved = moved_body(result.overflow_text).splitlines()
    assert moved[:3] == ["## Notes", "- a fact", "## Project"]  # hand-written lines first, headings too
    # 31 lines and the overflow line: the 12 oldest of the 30 memories move, in their order in the file
    assert moved[3:] == [line for number, line in zip(in_file, link_lines) if number >= 18]
    assert result.text.splitlines()[1:-1] == [line for number, line in zip(in_file, link_lines) if number < 18]


def test_a_new_move_is_a_new_section_appended_to_the_overflow_file():
    earlier = OVERFLOW_HEADER + "\n## Moved on 2026-04-01\n- an older fact\n"
    text = "# Memory Index\n" + "".join(f"- fact {n}\n" for n in range(8))
    result = rebuild(text, [], limits=IndexLimits(max_lines=5), existing_overflow=earlier)
    moved = "".join(f"- fact {n}\n" for n in range(3, 8))
    assert result.overflow_text == earlier + "\n## Moved on 2026-05-01\n" + moved


def test_a_second_run_on_its_own_output_changes_nothing():
    live = [memory(path, age_hours=n) for n, path in enumerate(APPLICATION_PIPELINE_FILES)
            if path != "feedback_never_defer_commands.md"]
    live += [memory("feedback_new.md"), memory("project_new.md", age_hours=50)]
    limits = IndexLimits(max_lines=20, max_bytes=4000)
    retired = ("feedback_never_defer_commands.md",)
    first = rebuild(APPLICATION_PIPELINE, live, retired, limits, unreadable=["broken.md"])
    assert first.moved and first.added and first.dropped and fits(first.text, limits)
    # the next run finds the overflow file among the memories too
    live.append(memory("MEMORY_overflow.md", "reference", name="Moved from MEMORY.md"))
    second = rebuild(first.text, live, retired, limits, unreadable=["broken.md"],
                     existing_overflow=first.overflow_text)
    assert second.text == first.text
    assert (second.overflow_text, second.moved, second.added, second.dropped) == (None, 0, [], [])


def test_the_unreadable_line_is_replaced_not_duplicated_and_removed_when_all_read():
    text = "# Memory Index\n- [A](feedback_a.md) — a\n- Not read (1, `auto-dream check` says why): old.md\n- after\n"
    live = [memory("feedback_a.md")]
    result = rebuild(text, live, unreadable=["z.md", "b.md"])
    assert result.text == ("# Memory Index\n- [A](feedback_a.md) — a\n- after\n"
                           "- Not read (2, `auto-dream check` says why): b.md, z.md\n")
    assert rebuild(result.text, live, unreadable=["z.md", "b.md"]).text == result.text
    assert rebuild(result.text, live).text == "# Memory Index\n- [A](feedback_a.md) — a\n- after\n"


def test_a_crlf_index_stays_crlf():
    text = "# Memory Index\r\n\r\n## Feedback\r\n- [A](feedback_a.md) — a\r\n- [Old](feedback_old.md) — gone"
    result = rebuild(text, [memory("feedback_a.md"), memory("feedback_b.md")], retired=("feedback_old.md",))
    assert result.text == ("# Memory Index\r\n\r\n## Feedback\r\n- [A](feedback_a.md) — a\r\n"
                           "- [feedback_b](feedback_b.md) — About feedback_b.md\r\n")
    assert result.dropped == ["- [Old](feedback_old.md) — gone"]


# ---------------------------------------------------------------- for any index


MARKS = ["SUPERSEDED by feedback_0.md", "[DEPRECATED] the old rule", "已废弃，参见 user_1.md", "No longer used."]


@st.composite
def indexes(draw):
    """(lines of MEMORY.md, the lines that link a retired file, live memories, retired paths, limits):
    every non-blank line unique."""
    count = draw(st.integers(0, 12))
    live = [memory(f"{draw(st.sampled_from(['user', 'feedback', 'project', 'reference']))}_{n}.md",
                   age_hours=draw(st.integers(0, 100)),
                   description=draw(st.one_of(st.text(max_size=200), st.sampled_from(MARKS))))
            for n in range(count)]
    retired = [f"project_retired_{n}.md" for n in range(draw(st.integers(0, 3)))]
    kinds = st.sampled_from(["fact", "blank", "heading", "typed", "live", "retired", "prose"])
    lines = ["# Memory Index"] if draw(st.booleans()) else []
    retired_lines = []
    for number, kind in enumerate(draw(st.lists(kinds, max_size=80))):
        word = draw(st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=60))
        if kind == "live" and live:
            target = draw(st.sampled_from(live)).path
            lines.append(f"- [{number}]({target}) — {word}")
        elif kind == "retired" and retired:
            lines.append(f"- [{number}]({draw(st.sampled_from(retired))}) — {word}")
            retired_lines.append(lines[-1])
        elif kind == "prose" and live:
            lines.append(f"Line {number} mentions [it]({draw(st.sampled_from(live)).path}).")
        elif kind == "heading":
            lines.append(f"## Topic {number}")
        elif kind == "typed":  # a section new lines of that type go to, once; then a heading like any other
            heading = f"### {draw(st.sampled_from(['User', 'Feedbacks', 'project', 'References']))}"
            lines.append(heading if heading not in lines else f"{heading} {number}")
        elif kind == "blank":
            lines.append("")
        else:
            lines.append(f"- fact {number}: {word}")
    limits = IndexLimits(max_lines=draw(st.integers(1, 60)), max_bytes=draw(st.integers(50, 6000)),
                         line_chars=draw(st.integers(60, 150)))
    return lines, retired_lines, live, retired, limits


@settings(max_examples=examples(300), deadline=None)
@given(indexes(), st.booleans(), st.booleans(), st.booleans())
def test_every_line_kept_stays_or_moves_in_order_and_the_text_fits(index, final_newline, unreadable, crlf):
    lines, retired_lines, live, retired, limits = index
    end = "\r\n" if crlf and len(lines) > 1 else "\n"
    text = end.join(lines) + (end if final_newline and lines else "")
    result = rebuild(text, live, tuple(retired), limits, unreadable=["bad.md"] if unreadable else ())
    assert result.dropped == retired_lines
    kept = [line for line in lines if line and line not in retired_lines]
    out = lines_of(result.text)
    moved = lines_of(moved_body(result.overflow_text.replace("\r\n", "\n"))) if result.overflow_text else []
    if end == "\r\n":  # every line of a CRLF file ends with CRLF, the ones added too
        assert all(line.endswith("\r") for line in out)
        out = [line.removesuffix("\r") for line in out]
    assert len(moved) == result.moved
    # the lines of the input (new lines may move too, and added ones are not in the input)
    assert sorted([line for line in out if line in kept] + [line for line in moved if line in kept]) == sorted(kept)
    assert [line for line in kept if line in out] == [line for line in out if line in kept]
    assert [line for line in kept if line in moved] == [line for line in moved if line in kept]
    assert result.text.endswith("\n") or not result.text
    for memory_ in live:  # every live memory is linked, in MEMORY.md or in the overflow file, unless a
        # person marked it deprecated, superseded…: then only a line a person wrote links it
        linked = f"({memory_.path})" in result.text + (result.overflow_text or "")
        assert linked if memory_.status is None else linked == (f"({memory_.path})" in text)
    # the overflow line is at most line_chars characters, two of them (— and …) three bytes each
    title = lines[0] + end if lines and lines[0].startswith("# ") else ""
    if fits(title + "x" * (limits.line_chars + 4) + end, limits):
        assert fits(result.text, limits)
    again = rebuild(result.text, live, tuple(retired), limits, unreadable=["bad.md"] if unreadable else (),
                    existing_overflow=result.overflow_text)
    assert (again.text, again.overflow_text, again.moved, again.added) == (result.text, None, 0, [])


def test_a_topic_file_named_in_a_code_span_is_listed_and_not_added_again():
    # orchestkit's ork-release-engineer: "See `prerelease-support.md` for research summary."
    existing = "# Release engineer\n\n## Pre-releases\nSee `prerelease-support.md` for research summary.\n"
    memory = Memory(path="prerelease-support.md", name="Pre-release support", description="alpha/beta/rc",
                    type="reference", mtime=datetime(2026, 3, 1, tzinfo=timezone.utc))
    built = rebuild_claude_index(existing, [memory], set(), IndexLimits(), date(2026, 12, 2))
    assert built.text == existing and built.added == []


def test_in_an_index_without_type_sections_a_new_line_goes_after_the_last_topic_link():
    # orchestkit's ork-code-quality-reviewer: links under `## Topic Files (read on demand)`, no type sections
    existing = ("# Reviewer\n\n## Topic Files (read on demand)\n- [a](a.md) — first\n- [b](b.md) — second\n\n"
                "## Findings\n- a hand-written finding\n")
    when = datetime(2026, 3, 1, tzinfo=timezone.utc)
    memories = [Memory(path=f"{n}.md", name=n, description=f"the {n} topic", type="project", mtime=when)
                for n in ("a", "b", "c")]
    built = rebuild_claude_index(existing, memories, set(), IndexLimits(), date(2026, 12, 2))
    assert built.text == existing.replace("- [b](b.md) — second\n", "- [b](b.md) — second\n- [c](c.md) — the c topic\n")


def test_a_link_that_only_shares_a_retired_files_name_is_kept():
    existing = ("# Memory\n- [Release checklist](../../docs/release.md) — read it before tagging\n"
                "- [Release](release.md) — the retired one\n")
    built = rebuild_claude_index(existing, [], {"release.md"}, IndexLimits(), date(2026, 12, 2))
    assert built.text == "# Memory\n- [Release checklist](../../docs/release.md) — read it before tagging\n"


def test_a_fenced_block_moves_whole_and_a_second_run_changes_nothing():
    # the reviewer's case: a 190-line fenced block, then a section of links, over the caps
    fence = "```\n" + "".join(f"line {n} of a log excerpt\n" for n in range(188)) + "```\n"
    links = "".join(f"- [{n}](feedback_{n}.md) — hook {n}\n" for n in range(15))
    existing = "# Memory\n" + fence + "## Feedback\n" + links
    live = [memory(f"feedback_{n}.md", "feedback") for n in range(15)]
    first = rebuild(existing, live)
    assert first.text.count("\n") <= 200
    body = first.overflow_text.split("## Moved on", 1)[1]
    assert body.count("```") in (0, 2)  # the block moved whole, or not at all
    assert first.text.count("```") in (0, 2)
    assert all(f"](feedback_{n}.md)" in first.text + first.overflow_text for n in range(15))
    second = rebuild_claude_index(first.text, live, (), IndexLimits(), date(2026, 12, 2), first.overflow_text)
    assert second.text == first.text and second.overflow_text is None and second.added == []


# ---------------------------------------------------------------- code read as CommonMark reads it


def links_read_by_commonmark(text: str) -> list[str]:
    """The destinations a CommonMark reader (markdown-it-py) finds as links in `text`."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark").parse(text):
        found += [child.attrs["href"] for child in token.children or () if child.type == "link_open"]
    return found


def run_six_times(existing: str, live: list[Memory], **options) -> list[str]:
    texts = [existing]
    for _ in range(6):
        texts.append(rebuild(texts[-1], live, **options).text)
    return texts


UNCLOSED = "# Memory Index\n\n## Feedback\n- [Tabs](feedback_tabs.md) — tabs, not spaces\n\nRun it so:\n```bash\n" \
           "npm test -- --watch\n"


def test_a_fence_never_closed_gets_the_new_links_before_it_once_not_at_every_run():
    live = [memory("feedback_tabs.md"), memory("feedback_rebase.md"), memory("user_reader.md"),
            memory("project_deploy.md")]
    texts = run_six_times(UNCLOSED, live, unreadable=["broken.md"])
    assert texts[2:] == [texts[1]] * 5  # the second run and every one after change nothing
    first = texts[1]
    assert first.endswith("```bash\nnpm test -- --watch\n")  # the person's lines, as written, still last
    assert sorted(links_read_by_commonmark(first)) == sorted(m.path for m in live)  # each linked, once
    assert first.count("- Not read (1") == 1
    assert all(line in first.splitlines() for line in UNCLOSED.splitlines())


def test_a_link_after_a_fence_left_open_in_a_list_item_counts_as_linked():
    # CommonMark closes the fence with its list item: the link after it is a link, not code
    existing = "# Memory Index\n- Build:\n  ```\n  make all\n- [Tabs](feedback_tabs.md) — tabs, not spaces\n"
    built = rebuild(existing, [memory("feedback_tabs.md")])
    assert built.text == existing and built.added == []


def test_an_indented_code_block_is_code_and_a_fence_line_with_a_backtick_in_its_info_is_not_a_fence():
    existing = ("# Memory Index\n\nAn example of the form:\n\n    - [Example](feedback_example.md) — code\n\n"
                "```not`a fence\n- [Tabs](feedback_tabs.md) — tabs, not spaces\n")
    built = rebuild(existing, [memory("feedback_example.md"), memory("feedback_tabs.md")])
    assert built.added == ["feedback_example.md"]  # the indented line is code; the line after ```not`a is a link
    assert rebuild(built.text, [memory("feedback_example.md"), memory("feedback_tabs.md")]).text == built.text


# ---------------------------------------------------------------- what a person marked

# application-pipeline's Feedback section (above), as a person tidies it once the unified rules
# absorbed the old ones: an `### Archived` subsection holding the old file, linked and named bare.
ARCHIVED_FEEDBACK = """\
# Application Pipeline Memory

## Feedback
- [Additive design](feedback_additive_design.md) — Each prompt adds complexity; never simplify or replace prior layers
- [Unified resume/CL rules](feedback_resume_cover_letter_quality_2026-03-26.md) — 550-700 words, ORGANVM employer, all rules consolidated

### Archived (superseded 2026-03-26)
- [Cover letter quality](feedback_cover_letter_quality.md) — kept for historical reference only
- feedback_gemini_collaboration.md — absorbed by the unified rules above

## Project Memories
- [System Purpose](project_system_purpose.md) — Core mission: Scan → Match → Build → Apply → Follow up.
"""  # noqa: E501 (the lines as written)
ARCHIVED_FEEDBACK_FILES = ["feedback_additive_design.md", "feedback_resume_cover_letter_quality_2026-03-26.md",
                           "feedback_cover_letter_quality.md", "feedback_gemini_collaboration.md",
                           "project_system_purpose.md"]


def test_a_memory_a_person_marked_gets_no_new_line_and_a_line_a_person_wrote_for_one_stays():
    text = ("# Memory Index\n\n## Feedback\n"
            "- [Old rules](feedback_old_rules.md) — the rules before 2026-03-26\n")
    live = [memory("feedback_old_rules.md", name="Old rules (superseded)"),
            memory("feedback_deploy.md", description="DEPRECATED: see feedback_deploy_v2.md"),
            memory("feedback_deploy_v2.md")]
    result = rebuild(text, live)
    assert result.added == ["feedback_deploy_v2.md"]
    assert result.text == text + "- [feedback_deploy_v2](feedback_deploy_v2.md) — About feedback_deploy_v2.md\n"
    assert rebuild(result.text, live).text == result.text


def test_under_an_archived_heading_links_stay_files_named_bare_are_listed_and_new_lines_go_above_it():
    live = [memory(path) for path in ARCHIVED_FEEDBACK_FILES] + [memory("feedback_validate.md")]
    result = rebuild(ARCHIVED_FEEDBACK, live)
    assert result.added == ["feedback_validate.md"]  # neither archived file is linked again
    new = "- [feedback_validate](feedback_validate.md) — About feedback_validate.md\n"
    unified = next(line for line in ARCHIVED_FEEDBACK.splitlines(keepends=True) if line.startswith("- [Unified"))
    assert result.text == ARCHIVED_FEEDBACK.replace(unified, unified + new)  # in Feedback, not under Archived
    assert rebuild(result.text, live).text == result.text


@pytest.mark.parametrize(("heading", "retires"), [
    ("## Archived (superseded 2026-03-26)", True),
    ("## Archive", True),
    ("### Deprecated", True),
    ("## Superseded / archived", True),
    ("## Archived feedback", True),
    ("## 已归档", True),
    ("## 已废弃的记忆", True),
    ("## アーカイブ", True),
    ("## 廃止", True),
    ("## Deprecated APIs", False),
    ("## Archive policy", False),
    ("## Superseding rules: newer wins", False),
    ("## 废弃接口清单", False),
])
def test_which_headings_retire_what_is_under_them(heading, retires):
    text = f"# Memory Index\n\n## Feedback\n- [A](feedback_a.md) — a\n\n{heading}\n- feedback_b.md — the old one\n"
    result = rebuild(text, [memory("feedback_a.md"), memory("feedback_b.md")])
    assert (result.added == []) is retires  # named bare under a retiring heading: listed


def test_a_file_named_bare_under_an_archived_heading_stays_listed_once_it_moved_to_the_overflow_file():
    archived = "".join(f"- feedback_old_{n:03d}.md — superseded\n" for n in range(60))
    text = f"# Memory Index\n\n## Feedback\n- [A](feedback_a.md) — a\n\n## Archived\n{archived}"
    live = [memory("feedback_a.md"), *(memory(f"feedback_old_{n:03d}.md") for n in range(60))]
    limits = IndexLimits(max_lines=30, max_bytes=25_000)
    first = rebuild(text, live, limits=limits)
    assert first.moved and first.added == []
    assert rebuild(first.text, live, limits=limits, existing_overflow=first.overflow_text).added == []


def test_the_status_memory_md_gives_a_file_quotes_its_line_and_finds_the_file_it_points_to():
    statuses = statuses_in_index(
        APPLICATION_PIPELINE.replace(
            "## Feedback\n",
            "## Feedback\n- [Cover letter quality](feedback_cover_letter_quality.md) — SUPERSEDED by unified rules "
            "below. Kept for historical reference only.\n"
            "- [Unified resume/CL rules](feedback_resume_cover_letter_quality_2026-03-26.md) — all rules\n"),
        [*APPLICATION_PIPELINE_FILES, "feedback_cover_letter_quality.md",
         "feedback_resume_cover_letter_quality_2026-03-26.md"])
    assert statuses == {"feedback_cover_letter_quality.md": Status(
        "superseded", "- [Cover letter quality](feedback_cover_letter_quality.md) — SUPERSEDED by unified rules "
        "below. Kept for historical reference only.", ("feedback_resume_cover_letter_quality_2026-03-26.md",))}


def test_under_an_archived_heading_a_file_has_the_status_its_line_says_or_else_the_headings():
    statuses = statuses_in_index(ARCHIVED_FEEDBACK, ARCHIVED_FEEDBACK_FILES)
    assert statuses == {
        "feedback_cover_letter_quality.md": Status("superseded", "### Archived (superseded 2026-03-26)"),
        "feedback_gemini_collaboration.md": Status(
            "superseded", "- feedback_gemini_collaboration.md — absorbed by the unified rules above",
            ("feedback_resume_cover_letter_quality_2026-03-26.md",)),
    }
