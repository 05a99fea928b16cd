"""The marked block install puts into a person's file and uninstall takes out (commands/marked_block.py):
pure text, no file."""

import pytest

from auto_dream.commands import marked_block

BEGIN, END = "<!-- ours: begin -->", "<!-- ours: end -->"
BLOCK = f"{BEGIN}\nwhen to recall\n{END}\n"


@pytest.mark.parametrize("text, lead", [
    ("", ""),  # an empty file: the block is all of it
    ("# Mine\n", "\n"),  # a blank line between theirs and ours
    ("# Mine", "\n\n"),  # their last line ended first
    ("# Mine\n\n", ""),  # a blank line is there already
    ("# Mine\r\n", "\r\n"),  # in their line endings
])
def test_a_block_appended_and_removed_gives_the_file_back_byte_for_byte(text, lead):
    block = marked_block.in_newlines(BLOCK, marked_block.newline_of(text))
    added, put = marked_block.append(text, block)
    assert (added, put) == (text + lead + block, lead)
    span = marked_block.marked_span(added, BEGIN, END)
    assert span is not None and added[span[0]:span[1]] == block
    assert marked_block.remove(added, span, put) == text


def test_a_crlf_file_gets_a_crlf_block():
    added, _ = marked_block.append("# Mine\r\n", marked_block.in_newlines(BLOCK, "\r\n"))
    assert "\n" not in added.replace("\r\n", "")


def test_what_was_written_after_the_block_keeps_the_lead_before_it():
    added, lead = marked_block.append("# Mine\n", BLOCK)
    later = added + "## Written since\n"
    span = marked_block.marked_span(later, BEGIN, END)
    assert span is not None
    assert marked_block.remove(later, span, lead) == "# Mine\n\n## Written since\n"


def test_a_marker_inside_a_line_is_no_block_and_an_exact_block_is_found_only_once():
    assert marked_block.marked_span(f"see {BEGIN} in the docs\n", BEGIN, END) is None
    assert marked_block.marked_span(f"{BEGIN}\nnever closed\n", BEGIN, END) is None
    assert marked_block.exact_span(BLOCK + BLOCK, BLOCK) is None
    assert marked_block.exact_span("# Mine\n\n" + BLOCK, BLOCK) == (8, 8 + len(BLOCK))
