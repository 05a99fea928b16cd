"""store/json_text.py: one member or item changed, every other byte of the file as it was."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.store.json_text import (
    JsonTextError,
    append_item,
    load,
    remove_item,
    remove_member,
    set_member,
)
from conftest import examples

SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
DOCUMENTS = st.dictionaries(st.text(max_size=6), VALUES, max_size=5)
LAYOUTS = st.sampled_from([None, 2, 4, "\t"])


def layout(document: dict, indent, final_newline: bool, crlf: bool = False) -> str:
    text = json.dumps(document, indent=indent, ensure_ascii=False) + ("\n" if final_newline else "")
    return text.replace("\n", "\r\n") if crlf else text


@settings(max_examples=examples(150), deadline=None)
@given(DOCUMENTS, LAYOUTS, st.booleans(), st.booleans(), VALUES)
def test_a_member_added_last_and_removed_again_gives_back_the_same_bytes(document, indent, final_newline, crlf,
                                                                         value):
    text = layout(document, indent, final_newline, crlf)
    key = "auto-dream" if "auto-dream" not in document else "auto-dream-2"
    added = set_member(text, (), key, value)
    assert json.loads(added) == {**document, key: value}
    assert remove_member(added, (), key) == text


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(VALUES, max_size=4), LAYOUTS, VALUES)
def test_an_item_appended_and_removed_again_gives_back_the_same_bytes(items, indent, value):
    text = layout({"hooks": {"SessionStart": items}}, indent, True)
    added = append_item(text, ("hooks", "SessionStart"), value)
    assert json.loads(added) == {"hooks": {"SessionStart": [*items, value]}}
    assert remove_item(added, ("hooks", "SessionStart"), len(items)) == text


def test_numbers_escapes_and_spacing_elsewhere_are_left_as_written():
    text = '{\n    "a": 1e3,\n    "b": {"x": "\\/", "y" : 1.50},\n    "c": [1,2]\n}'
    added = set_member(text, (), "mcpServers", {"auto-dream": {"command": "/bin/auto-dream"}})
    assert added == ('{\n    "a": 1e3,\n    "b": {"x": "\\/", "y" : 1.50},\n    "c": [1,2],\n'
                     '    "mcpServers": {\n        "auto-dream": {\n'
                     '            "command": "/bin/auto-dream"\n        }\n    }\n}')
    assert not added.endswith("\n")  # no final newline before, none after


def test_a_one_line_object_gets_its_new_member_on_the_same_line():
    text = '{\n  "hooks": {"SessionStart": [{"hooks": []}]}\n}\n'
    added = append_item(text, ("hooks", "SessionStart"), {"matcher": "startup"})
    assert added == '{\n  "hooks": {"SessionStart": [{"hooks": []}, {"matcher": "startup"}]}\n}\n'


def test_an_empty_object_is_filled_with_the_files_indentation():
    text = '{\n    "hooks": {}\n}'
    assert set_member(text, ("hooks",), "SessionEnd", []) == '{\n    "hooks": {\n        "SessionEnd": []\n    }\n}'


def test_an_existing_member_is_replaced_in_place():
    text = '{\n  "a": 1,\n  "mcpServers": {"auto-dream": {"command": "old"}, "z": 2},\n  "b": 3\n}\n'
    changed = set_member(text, ("mcpServers",), "auto-dream", {"command": "new"})
    assert changed == '{\n  "a": 1,\n  "mcpServers": {"auto-dream": {"command": "new"}, "z": 2},\n  "b": 3\n}\n'


def test_a_member_in_the_middle_is_removed_with_its_comma():
    text = '{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}'
    assert remove_member(text, (), "b") == '{\n  "a": 1,\n  "c": 3\n}'
    assert remove_member(text, (), "missing") == text


@pytest.mark.parametrize("text, message", [
    ('{"hooks": [', "not valid JSON (line 1"),
    ("[1, 2]", "not a JSON object"),
    ("", "not valid JSON"),
    # JSON, but not what Python can hold: an integer past its digit limit, a nesting past its recursion limit
    ('{"n": ' + "7" * 5000 + "}", "JSON with an integer too long to be read (more than 4300 digits)"),
    ('{"deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON nested too deeply to be read"),
    ('{"deep": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}", "JSON nested too deeply to be read"),
])
def test_what_is_not_a_json_object_is_named(text, message):
    with pytest.raises(JsonTextError, match=re.escape(message)):
        load(text)


def test_a_path_through_something_else_than_an_object_is_an_error():
    with pytest.raises(JsonTextError, match="'hooks' is not an object"):
        set_member('{"hooks": []}', ("hooks",), "SessionStart", [])


# ---------------------------------------------------------------- comments (JSONC)

COMMENTS = st.sampled_from(["/* c */", "/* a, b: {} */", "// c\n", "// \"x\", [ ] }\n", "/*\n  two lines\n*/",
                            "// http://example.com/a//b\n"])


def with_comments(text: str, data, trailing_commas: bool) -> str:
    """`text` (JSON) with comments drawn into the places between its tokens, and (when asked) a
    trailing comma after the last child of some non-empty objects and arrays."""
    places, in_string, escaped = [], False, False
    for at, char in enumerate(text):
        if in_string:
            in_string, escaped = (in_string if escaped or char != '"' else False), (char == "\\" and not escaped)
            continue
        if char == '"':
            in_string = True
        elif char in "{[,:":
            places.append(("after", at + 1))
        elif char in "}]":
            places.append(("close", at))
    out, last = [], 0
    for kind, at in places:
        out.append(text[last:at])
        last = at
        if kind == "close" and trailing_commas and text[:at].rstrip()[-1:] not in "{[," and data.draw(st.booleans()):
            out.append(",")
        if data.draw(st.integers(0, 3)) == 0:
            out.append(" " + data.draw(COMMENTS) + " ")
    out.append(text[last:])
    return "".join(out)


@settings(max_examples=examples(200), deadline=None)
@given(DOCUMENTS, LAYOUTS, st.booleans(), st.booleans(), VALUES, st.data())
def test_with_comments_and_trailing_commas_a_member_added_and_removed_gives_back_the_same_bytes(
        document, indent, crlf, trailing_commas, value, data):
    text = with_comments(layout({**document, "mcpServers": document}, indent, True), data, trailing_commas)
    if crlf:
        text = text.replace("\n", "\r\n")
    assert load(text, "jsonc") == {**document, "mcpServers": document}
    for path in ((), ("mcpServers",)):
        key = "auto-dream" if "auto-dream" not in document else "auto-dream-2"
        added = set_member(text, path, key, value)
        expected = {**document, "mcpServers": document}
        if path:
            expected["mcpServers"] = {**document, key: value}
        else:
            expected[key] = value
        assert load(added, "jsonc") == expected
        if not trailing_commas:
            assert load(added, "comments") == expected  # no trailing comma of ours where the file had none
        assert remove_member(added, path, key) == text
        assert _comments(added) == _comments(text)  # every comment kept, in its order


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(VALUES, max_size=4), LAYOUTS, st.booleans(), VALUES, st.data())
def test_with_comments_an_item_appended_and_removed_gives_back_the_same_bytes(items, indent, trailing_commas, value,
                                                                               data):
    text = with_comments(layout({"hooks": {"SessionStart": items}}, indent, True), data, trailing_commas)
    added = append_item(text, ("hooks", "SessionStart"), value)
    assert load(added, "jsonc") == {"hooks": {"SessionStart": [*items, value]}}
    assert remove_item(added, ("hooks", "SessionStart"), len(items)) == text
    assert _comments(added) == _comments(text)


def _comments(text: str) -> list[str]:
    """The comments of a JSONC text, in order (a string's `//` is not one)."""
    return [found for found in re.findall(r'"(?:[^"\\\n]|\\.)*"|//[^\r\n]*|/\*.*?\*/', text, re.DOTALL)
            if not found.startswith('"')]


def test_a_member_goes_after_the_line_comment_of_the_last_one_and_a_file_with_trailing_commas_keeps_them():
    text = '{\n  "mcpServers": {\n    "git": {"command": "uvx"} // the git one\n  }\n}\n'
    assert set_member(text, ("mcpServers",), "auto-dream", {"command": "ad"}) == (
        '{\n  "mcpServers": {\n    "git": {"command": "uvx"}, // the git one\n'
        '    "auto-dream": {\n      "command": "ad"\n    }\n  }\n}\n')
    text = '{\n  "mcp": {\n    "git": {"enabled": true}, // mine\n  },\n}\n'
    assert set_member(text, ("mcp",), "auto-dream", {"enabled": True}) == (
        '{\n  "mcp": {\n    "git": {"enabled": true}, // mine\n'
        '    "auto-dream": {\n      "enabled": true\n    },\n  },\n}\n')


def test_an_empty_object_holding_a_comment_keeps_it_and_gets_the_member_after_it():
    text = '{\n  "mcpServers": {\n    // "old": {"command": "x"}\n  }\n}'
    added = set_member(text, ("mcpServers",), "auto-dream", {"command": "ad"})
    assert added == ('{\n  "mcpServers": {\n    // "old": {"command": "x"}\n'
                     '    "auto-dream": {\n      "command": "ad"\n    }\n  }\n}')
    assert remove_member(added, ("mcpServers",), "auto-dream") == text


def test_a_member_removed_from_between_comments_leaves_every_comment():
    text = '{\n  "a": 1, // one\n  /* mine */ "auto-dream": 2, // two\n  // three\n  "b": 3\n}'
    assert remove_member(text, (), "auto-dream") == '{\n  "a": 1, // one\n  /* mine */ // two\n  // three\n  "b": 3\n}'


@pytest.mark.parametrize("text, dialect, message", [
    ('{"a": 1 // c\n}', "json", "not valid JSON (line 1, column 9"),
    ('{"a": [1, 2,]}', "comments", "not valid JSON (line 1, column 13"),  # Gemini CLI: comments, no trailing commas
    ('{"a": 1 /* never closed\n}', "jsonc", "not valid JSON (line 1, column 9: a /* comment that never ends)"),
    ('{a: 1}', "jsonc", "not valid JSON (line 1, column 2"),  # JSON5's bare keys are not JSONC
])
def test_what_a_dialect_does_not_allow_is_named_where_it_is(text, dialect, message):
    with pytest.raises(JsonTextError, match=re.escape(message)):
        load(text, dialect)
