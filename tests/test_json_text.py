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


# ---------------------------------------------------------------- JSON5 (OpenClaw's openclaw.json)


def json5_text(value, data, indent: str = "  ", depth: int = 0) -> str:
    """`value` written as people write JSON5: unquoted keys where they can be, strings in single or
    double quotes, hexadecimal integers, comments and trailing commas here and there."""
    def comment() -> str:
        return data.draw(st.sampled_from(["", "", " /* c */", " // c, 'x' {\n" + indent * (depth + 1)]))

    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return hex(value) if value >= 0 and data.draw(st.booleans()) else json.dumps(value)
    if isinstance(value, str):
        if data.draw(st.booleans()):
            return json.dumps(value, ensure_ascii=False)
        return "'" + json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'") + "'"
    inner = indent * (depth + 1)
    if isinstance(value, list):
        parts = [json5_text(item, data, indent, depth + 1) for item in value]
        opening, closing = "[", "]"
    else:
        parts = [(key if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key) and data.draw(st.booleans())
                  else json.dumps(key, ensure_ascii=False)) + ":" + comment() + " "
                 + json5_text(item, data, indent, depth + 1) for key, item in value.items()]
        opening, closing = "{", "}"
    if not parts:
        return opening + comment() + closing
    trailing = "," if data.draw(st.booleans()) else ""
    body = ("," + comment() + "\n").join(inner + part for part in parts)
    return opening + "\n" + body + trailing + comment() + "\n" + indent * depth + closing


@settings(max_examples=examples(150), deadline=None)
@given(DOCUMENTS, VALUES, st.data())
def test_json5_with_unquoted_keys_single_quotes_comments_and_trailing_commas_is_edited_byte_for_byte(
        document, value, data):
    document = {**document, "mcp": {"servers": document}}
    text = "// OpenClaw\n" + json5_text(document, data) + "\n"
    assert load(text, "json5") == document
    with pytest.raises(JsonTextError):
        load(text.replace("// OpenClaw\n", "{unquoted: 1}\n"), "json5")
    for path in ((), ("mcp",), ("mcp", "servers")):
        added = set_member(text, path, "auto-dream", value)
        expected = load(text, "json5")
        holder = expected
        for key in path:
            holder = holder[key]
        holder["auto-dream"] = value
        assert load(added, "json5") == expected
        assert remove_member(added, path, "auto-dream") == text
        assert _comments(added) == _comments(text)


@pytest.mark.parametrize("text, value", [
    ("{a: 0x1F, b: .5, c: +1, d: 5., e: -Infinity, f: 'it\\'s', g: \"a\\\nb\", h: '\\x41\\u0042'}",
     {"a": 31, "b": 0.5, "c": 1, "d": 5.0, "e": float("-inf"), "f": "it's", "g": "ab", "h": "AB"}),
    ("{$key_1: [1, 2,], 'quoted key': null, /* c */ nested: {deep: true,},}",
     {"$key_1": [1, 2], "quoted key": None, "nested": {"deep": True}}),
])
def test_json5_values_are_read_as_json5_reads_them(text, value):
    assert load(text, "json5") == value
    with pytest.raises(JsonTextError):
        load(text, "jsonc")  # not JSONC


def test_json5_unquoted_keys_may_spell_their_letters_as_unicode_escapes():
    """An unquoted key is ECMAScript 5.1's IdentifierName (https://spec.json5.org, "Objects"), whose
    characters may be written `\\uXXXX` (https://262.ecma-international.org/5.1/#sec-7.6): the key is
    what the escapes spell, and the server goes into the object such a key names, byte for byte."""
    text = "{\\u006dcp: {serv\\u0065rs: {}}, \\u0024x: 1, _\\u0031: 2, caf\\u00e9: 3}\n"
    assert load(text, "json5") == {"mcp": {"servers": {}}, "$x": 1, "_1": 2, "café": 3}
    added = set_member(text, ("mcp", "servers"), "auto-dream", {"command": "ad"})
    assert load(added, "json5")["mcp"]["servers"] == {"auto-dream": {"command": "ad"}}
    assert remove_member(added, ("mcp", "servers"), "auto-dream") == text


@pytest.mark.parametrize("text, column", [
    ("{\\u0031a: 1}", 2),  # a digit cannot start a name, escaped or not
    ("{a\\u002d: 1}", 3),  # nor can `-` stand in one
    ("{\\ud835\\udc00: 1}", 2),  # a UTF-16 half is no letter
])
def test_json5_a_unicode_escape_that_could_not_stand_in_a_name_itself_is_refused(text, column):
    with pytest.raises(JsonTextError, match=re.escape(f"column {column}: Invalid \\u escape in a property name")):
        load(text, "json5")
