"""Where fenced code begins and ends, by CommonMark's rule (judge/fences.py): every line scan of
Markdown in the package asks it."""

import pytest

from auto_dream.judge.fences import fenced

CASES = [
    # (lines, which are code)
    (["text", "```", "code", "```", "text"], [False, True, True, True, False]),
    # a tilde fence, and a backtick line inside it that closes nothing
    (["~~~", "```", "~~~", "after"], [True, True, True, False]),
    # a closing fence needs as many of the character, and nothing after it
    (["````", "```", "```` ", "after"], [True, True, True, False]),
    (["```", "``` not a close", "```"], [True, True, True]),
    # a backtick fence's info string holds no backtick
    (["``` a`b", "x"], [False, False]),
    # a fence in a list item is indented, and closes at its own indent; four spaces more close nothing
    (["- item", "    ```", "    code", "    ```", "- next"], [False, True, True, True, False]),
    (["```", "    ```", "```", "after"], [True, True, True, False]),
    # a fence never closed runs to the end
    (["```python", "x", "", "y"], [True, True, True, True]),
]


@pytest.mark.parametrize("lines, code", CASES)
def test_fenced_lines_follow_commonmark(lines, code):
    assert fenced(lines) == code


def test_a_merge_keeps_a_tilde_fence_whole_though_it_holds_a_backtick_line_and_a_blank():
    from auto_dream.dream.consolidate import _blocks

    body = "Intro.\n\n~~~\n```\n\nstill code\n~~~\n\nAfter."
    assert _blocks(body) == ["Intro.", "~~~\n```\n\nstill code\n~~~", "After."]
