"""Edit the text of a JSON file one member or item at a time, every other byte left as it was.

An agent's settings files are theirs (Claude Code rewrites `~/.claude.json` itself; people keep
`settings.json` in their dotfiles): a load-and-dump would re-spell numbers (`1e3`), escapes
(`\\/`), spacing and the final newline of the whole file. So `install` splices: it finds the
span of the one object or array it changes and inserts or removes text there, with the file's
own indentation, line ends and separators. Inserting a member at the end of an object and
removing it again gives back the original bytes, which is how `uninstall` restores a file
byte for byte.

Values are located by a shallow scan: the members of each object on the way (their keys with
the C scanner's `scanstring`), and each value skipped with the C decoder's `raw_decode`, so a
`~/.claude.json` of megabytes of project history costs what one `json.loads` costs.

Some agents read their files as JSON with comments (JSONC: `//` and `/* */` comments, and for some
trailing commas). `load` is told which of those the file's agent accepts (DIALECTS); the edits
tolerate both. They scan a copy of the text with every comment (and trailing comma) blanked out,
character for character, so every position in it is a position in the file, and splice the file's
own text: a comment is never moved into or out of a string, and never removed. A member is added
after the last one (after its line's `//` comment, a comma put right after its value; after the
trailing comma when the file ends its lists with one, keeping it so), or after the last comment of
an empty object; removing it takes out exactly what was added.
"""

import functools
import json
import math
import re
import sys
import unicodedata
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner json.loads uses; typeshed omits it
from typing import Any

WHITESPACE = " \t\n\r"
DEFAULT_INDENT = "  "  # Claude Code writes its JSON with JSON.stringify(value, null, 2)
_decoder = json.JSONDecoder()

Step = str | int  # a key of an object or an index into an array

# What each kind of file may hold besides JSON: (comments, trailing commas, the rest of JSON5).
DIALECTS = {
    "json": (False, False, False),
    "comments": (True, False, False),  # JSON.parse after strip-json-comments (Gemini CLI's settings.json)
    "jsonc": (True, True, False),  # comments and trailing commas (VS Code's JSONC)
    # JSON5 (https://spec.json5.org): also unquoted keys, single-quoted strings, hexadecimal numbers,
    # Infinity and NaN, a leading + or a bare decimal point (OpenClaw's openclaw.json)
    "json5": (True, True, True),
}


class JsonTextError(ValueError):
    """The text is not JSON, or not the shape an edit needs; the message says where."""


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Container:
    """An object (`{`) or array (`[`) of the text: its span and its children's."""

    kind: str
    start: int
    end: int  # just past the closing bracket
    members: tuple[Member, ...] = ()  # an object's
    items: tuple[tuple[int, int], ...] = ()  # an array's (start, end)

    def child_starts(self) -> list[int]:
        return [m.key_start for m in self.members] if self.kind == "{" else [start for start, _ in self.items]


def load(text: str, dialect: str = "json") -> Any:
    """The value of a JSON document whose root is an object, its comments (and trailing commas)
    allowed as `dialect` allows them (DIALECTS); JsonTextError (with the line and column) for
    anything else."""
    comments, commas, json5 = DIALECTS[dialect]
    try:
        if comments or commas:
            blanked, blanked_all, other = _views(text)
            if json5 and other:
                value = _document5(blanked_all)
            else:
                value = json.loads(blanked_all if commas else blanked)
        else:
            value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise _unreadable(error) from None
    if not isinstance(value, dict):
        raise JsonTextError("not a JSON object at its top level")
    return value


def new_document(value: dict) -> str:
    """A new file's text, as Claude Code writes its own: two-space indents, a final newline."""
    return json.dumps(value, ensure_ascii=False, indent=DEFAULT_INDENT) + "\n"


def set_member(text: str, path: tuple[Step, ...], key: str, value: Any) -> str:
    """`text` with member `key` of the object at `path` set to `value`: its value replaced in
    place when the key is there (the last one, as a JSON reader takes it), else a member added
    at the end of the object."""
    found = _container(text, path, "{")
    style = _Style.of(text, found)
    for member in reversed(found.members):
        if member.key == key:
            indent = _line_indent(text, member.key_start)
            return text[:member.value_start] + style.dump(value, indent) + text[member.value_end:]
    encoded_key = json.dumps(key, ensure_ascii=False)
    if not found.members:
        return _fill_empty(text, found, style, lambda indent: f"{encoded_key}: {style.dump(value, indent)}")
    last = found.members[-1]
    colon = text[last.key_end:last.value_start]  # `: ` as the file spells it (without a comment in it)
    if _views(text)[0][last.key_end:last.value_start] != colon:
        colon = ": "
    return _add_last(text, found, style, lambda indent: encoded_key + colon + style.dump(value, indent))


def remove_member(text: str, path: tuple[Step, ...], key: str) -> str:
    """`text` without member `key` of the object at `path` (the last one of that key); the text
    unchanged when there is none."""
    found = _container(text, path, "{")
    spans = [(m.key_start, m.value_end) for m in found.members]
    for index in reversed(range(len(found.members))):
        if found.members[index].key == key:
            return _remove_child(text, found, spans, index)
    return text


def append_item(text: str, path: tuple[Step, ...], value: Any) -> str:
    """`text` with `value` added at the end of the array at `path`."""
    found = _container(text, path, "[")
    style = _Style.of(text, found)
    if not found.items:
        return _fill_empty(text, found, style, lambda indent: style.dump(value, indent))
    return _add_last(text, found, style, lambda indent: style.dump(value, indent))


def remove_item(text: str, path: tuple[Step, ...], index: int) -> str:
    """`text` without item `index` of the array at `path`."""
    found = _container(text, path, "[")
    return _remove_child(text, found, list(found.items), index)


def blank_inside(text: str, path: tuple[Step, ...]) -> str | None:
    """The whitespace between the brackets of the object or array at `path` when it is empty
    (`{\n  }`); None when it has children, holds a comment (which filling it keeps, and emptying it
    gives back) or is not there. Filling an empty container lays it out afresh, and emptying it
    again gives `{}`: this is what to put back."""
    try:
        found = _container(text, path, None)
    except JsonTextError:
        return None
    inside = text[found.start + 1:found.end - 1]
    return None if found.child_starts() or inside.strip(WHITESPACE) else inside


def set_blank_inside(text: str, path: tuple[Step, ...], blank: str) -> str:
    """`text` with `blank` (whitespace) between the brackets of the empty container at `path`."""
    found = _container(text, path, None)
    if found.child_starts() or blank.strip(WHITESPACE) or text[found.start + 1:found.end - 1].strip(WHITESPACE):
        raise JsonTextError("only whitespace goes inside an empty object or array")
    return text[:found.start + 1] + blank + text[found.end - 1:]


# ---------------------------------------------------------------- comments

# A string (its escapes included; JSON5's single-quoted ones too), a `//` comment (to the end of its
# line, the line break not in it), a `/* */` comment, or the start of one that never ends.
_STRING = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
_COMMENTS = re.compile(_STRING + r'|//[^\r\n]*|/\*.*?\*/|/\*', re.DOTALL)
# A string, or a comma with nothing but whitespace before the bracket that closes its list.
_TRAILING_COMMAS = re.compile(_STRING + r'|,(?=[ \t\r\n]*[}\]])', re.DOTALL)


@functools.lru_cache(maxsize=8)
def _views(text: str) -> tuple[str, str, bool]:
    """`text` with each comment blanked out (its characters spaces, its line breaks kept), and that
    with each trailing comma blanked out too: the same length, every position the file's; and
    whether what is left is JSON5 rather than JSON. Plain JSON (tried first, at C speed: a
    `~/.claude.json` of megabytes) is its own view."""
    try:
        json.loads(text)
        return text, text, False
    except (ValueError, RecursionError):
        pass

    def blank(match: re.Match) -> str:
        found = match.group()
        if found[0] in "\"'":
            return found
        if found == "/*":
            raise json.JSONDecodeError("a /* comment that never ends", text, match.start())
        return re.sub(r"[^\r\n]", " ", found)

    without_comments = _COMMENTS.sub(blank, text)
    without_commas = _TRAILING_COMMAS.sub(lambda match: " " if match.group() == "," else match.group(),
                                          without_comments)
    try:
        json.loads(without_commas)
        return without_comments, without_commas, False
    except (ValueError, RecursionError):
        return without_comments, without_commas, True


def _scan_text(text: str) -> str:
    """What the scan reads: `text` without its comments and trailing commas."""
    return _views(text)[1]


def _trailing_comma(text: str, after: int, before: int) -> int | None:
    """Where the trailing comma between `after` (the last child's end) and `before` (the closing
    bracket) is, or None."""
    without_comments, scanned, _ = _views(text)
    at = without_comments.find(",", after, before)
    return at if at >= 0 and scanned[at] != "," else None


def _past_line_comment(text: str, at: int) -> int:
    """Where the line of `at` breaks, when what follows `at` on it is only comments (and spaces)
    and ends with a `//` comment: a child added there goes after it, on a line of its own.
    Otherwise `at` itself."""
    without_comments = _views(text)[0]
    end = at
    while end < len(text) and without_comments[end] in " \t" and text[end] not in "\r\n":
        end += 1
    if (end == len(text) or text[end] in "\r\n") and "//" in text[at:end]:
        return end
    return at


def _lead_start(text: str, child: int, floor: int) -> int:
    """Where the whitespace before a child starts that goes with it: from its first line break
    when it has one (the spaces before that break belong to the line above), else all of it."""
    start = child
    while start > floor and text[start - 1] in WHITESPACE:
        start -= 1
    lead = text[start:child]
    if "\n" in lead:
        start += lead.index("\n")
        if start > floor and text[start - 1] == "\r":
            start -= 1
    return start


# ---------------------------------------------------------------- the scan


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in WHITESPACE:
        at += 1
    return at


def _value_end(text: str, at: int) -> int:
    try:
        return _decoder.raw_decode(text, at)[1]
    except (ValueError, RecursionError) as error:
        raise _unreadable(error) from None


def _unreadable(error: ValueError | RecursionError) -> JsonTextError:
    """Why Python's JSON reader gave up: the text is not JSON, or it is JSON that Python cannot
    hold (an integer past Python's digit limit, arrays and objects nested past its recursion limit)."""
    if isinstance(error, json.JSONDecodeError):
        return JsonTextError(f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})")
    if isinstance(error, RecursionError):
        return JsonTextError("JSON nested too deeply to be read (arrays or objects inside each other past "
                             "Python's recursion limit)")
    if "digits" in str(error):  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        return JsonTextError(f"JSON with an integer too long to be read (more than {sys.get_int_max_str_digits()} "
                             "digits)")
    return JsonTextError(f"JSON that cannot be read ({str(error).splitlines()[0]})")


def scan_container(text: str, start: int, *, json5: bool = False) -> Container:
    """The object or array whose opening bracket is at `start`, its children located (`json5`: in
    JSON5 without comments or trailing commas)."""
    if json5:
        return _scan5(text, start)
    kind = text[start]
    closing = "}" if kind == "{" else "]"
    members: list[Member] = []
    items: list[tuple[int, int]] = []
    at = _skip(text, start + 1)
    if text[at] == closing:
        return Container(kind, start, at + 1)
    while True:
        if kind == "{":
            key, key_end = scanstring(text, at + 1)
            value_start = _skip(text, _skip(text, key_end) + 1)  # past the colon
            value_end = _value_end(text, value_start)
            members.append(Member(key, at, key_end, value_start, value_end))
        else:
            value_end = _value_end(text, at)
            items.append((at, value_end))
        at = _skip(text, value_end)
        if text[at] == closing:
            return Container(kind, start, at + 1, tuple(members), tuple(items))
        at = _skip(text, at + 1)  # past the comma


def _container(text: str, path: tuple[Step, ...], kind: str | None) -> Container:
    """The container at `path` from the root object (already checked by `load`), of `kind` unless None;
    its positions are the file's, its comments and trailing commas passed over."""
    _, text, json5 = _views(text)
    found = scan_container(text, _skip5(text, 0), json5=json5)
    where = "the top level"
    for step in path:
        if isinstance(step, str):
            matching = [m for m in found.members if m.key == step]
            if found.kind != "{" or not matching:
                raise JsonTextError(f"no {step!r} in {where}")
            start = matching[-1].value_start
        else:
            if found.kind != "[" or not 0 <= step < len(found.items):
                raise JsonTextError(f"no item {step} in {where}")
            start = found.items[step][0]
        where = f"{where} → {step!r}" if where != "the top level" else repr(step)
        if text[start] not in "{[":
            raise JsonTextError(f"{where} is not an object or an array")
        found = scan_container(text, start, json5=json5)
    if kind is not None and found.kind != kind:
        raise JsonTextError(f"{where} is not an {'object' if kind == '{' else 'array'}")
    return found


# ---------------------------------------------------------------- JSON5

# An ECMAScript identifier as a key, and a JSON5 number. A key may be a JSON5Identifier, ECMAScript 5.1's
# IdentifierName (https://spec.json5.org, "Objects"), whose characters may be written as \uXXXX escapes, each
# standing for a character that may stand there itself (https://262.ecma-international.org/5.1/#sec-7.6).
_IDENTIFIER_START = r"[^\W\d]|\$"
_IDENTIFIER_PART = r"[\w$]|\u200c|\u200d"
_IDENTIFIER_ESCAPE = r"\\u[0-9a-fA-F]{4}"
_IDENTIFIER = re.compile(rf"(?:{_IDENTIFIER_START}|{_IDENTIFIER_ESCAPE})(?:{_IDENTIFIER_PART}|{_IDENTIFIER_ESCAPE})*")
_NUMBER5 = re.compile(r"[+-]?(?:Infinity|NaN|0[xX][0-9a-fA-F]+|(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)"
                      r"(?:[eE][+-]?[0-9]+)?)")
_ESCAPES5 = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}
_LINE_BREAKS5 = "\n\r\u2028\u2029"


def _skip5(text: str, at: int) -> int:
    """Past JSON5's whitespace (JSON's, and the other spaces ECMAScript knows)."""
    while at < len(text) and (text[at] in WHITESPACE or text[at] in "\v\f\ufeff\u2028\u2029"
                              or unicodedata.category(text[at]) == "Zs"):
        at += 1
    return at


def _fail5(message: str, text: str, at: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, text, at)


def _document5(text: str) -> Any:
    """The value of a JSON5 text without comments or trailing commas (blanked by `_views`)."""
    value, end = _value5(text, _skip5(text, 0))
    end = _skip5(text, end)
    if end != len(text):
        raise _fail5("Extra data", text, end)
    return value


def _value5(text: str, at: int) -> tuple[Any, int]:
    """The JSON5 value at `at` and where it ends."""
    if at >= len(text):
        raise _fail5("Expecting value", text, at)
    char = text[at]
    if char in "{[":
        found = _scan5(text, at)
        if char == "{":
            members = {}
            for member in found.members:
                members[member.key] = _value5(text, member.value_start)[0]
            return members, found.end
        return [_value5(text, start)[0] for start, _ in found.items], found.end
    if char in "\"'":
        return _string5(text, at)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, at):
            return value, at + len(word)
    number = _NUMBER5.match(text, at)
    if number is None:
        raise _fail5("Expecting value", text, at)
    spelled = number.group().lstrip("+")
    sign = -1 if spelled.startswith("-") else 1
    digits = spelled.lstrip("-")
    if digits in ("Infinity", "NaN"):
        return (sign * math.inf if digits == "Infinity" else math.nan), number.end()
    if digits[:2] in ("0x", "0X"):
        return sign * int(digits, 16), number.end()
    return (float(spelled) if any(mark in digits for mark in ".eE") else int(spelled)), number.end()


def _string5(text: str, at: int) -> tuple[str, int]:
    """A JSON5 string, in double or single quotes, and where it ends."""
    quote, index = text[at], at + 1
    out: list[str] = []
    while True:
        if index >= len(text) or text[index] in "\n\r":
            raise _fail5("Unterminated string starting at", text, at)
        char = text[index]
        if char == quote:
            return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16"), index + 1
        if char != "\\":
            out.append(char)
            index += 1
            continue
        escaped = text[index + 1] if index + 1 < len(text) else ""
        if escaped in _LINE_BREAKS5:  # a line continuation
            index += 3 if text.startswith("\r\n", index + 1) else 2
        elif escaped in _ESCAPES5 and not (escaped == "0" and text[index + 2:index + 3].isdigit()):
            out.append(_ESCAPES5[escaped])
            index += 2
        elif escaped in "xu":
            width = 2 if escaped == "x" else 4
            hexadecimal = text[index + 2:index + 2 + width]
            if len(hexadecimal) != width or not all(c in "0123456789abcdefABCDEF" for c in hexadecimal):
                raise _fail5("Invalid \\escape", text, index)
            out.append(chr(int(hexadecimal, 16)))
            index += 2 + width
        elif escaped and not escaped.isdigit():
            out.append(escaped)
            index += 2
        else:
            raise _fail5("Invalid \\escape", text, index)


def _identifier5(text: str, name: re.Match) -> str:
    """An unquoted key's name, its \\u escapes read: each must stand for a character that could be
    written there itself (a letter, `$` or `_` first; then a digit or a joiner too)."""
    spelled = name.group()
    if "\\" not in spelled:
        return spelled
    out: list[str] = []
    index = 0
    while index < len(spelled):
        if spelled[index] != "\\":
            out.append(spelled[index])
            index += 1
            continue
        char = chr(int(spelled[index + 2:index + 6], 16))
        if not re.fullmatch(_IDENTIFIER_START if not out else f"{_IDENTIFIER_START}|{_IDENTIFIER_PART}", char):
            raise _fail5("Invalid \\u escape in a property name", text, name.start() + index)
        out.append(char)
        index += 6
    return "".join(out)


def _scan5(text: str, start: int) -> Container:
    """`scan_container` for JSON5 (comments and trailing commas already blanked out)."""
    kind = text[start]
    closing = "}" if kind == "{" else "]"
    members: list[Member] = []
    items: list[tuple[int, int]] = []
    at = _skip5(text, start + 1)
    if at < len(text) and text[at] == closing:
        return Container(kind, start, at + 1)
    while True:
        if kind == "{":
            if at < len(text) and text[at] in "\"'":
                key, key_end = _string5(text, at)
            elif (name := _IDENTIFIER.match(text, at)) is not None:
                key, key_end = _identifier5(text, name), name.end()
            else:
                raise _fail5("Expecting property name", text, at)
            colon = _skip5(text, key_end)
            if colon >= len(text) or text[colon] != ":":
                raise _fail5("Expecting ':' delimiter", text, colon)
            value_start = _skip5(text, colon + 1)
            value_end = _value5(text, value_start)[1]
            members.append(Member(key, at, key_end, value_start, value_end))
        else:
            value_end = _value5(text, at)[1]
            items.append((at, value_end))
        at = _skip5(text, value_end)
        if at < len(text) and text[at] == closing:
            return Container(kind, start, at + 1, tuple(members), tuple(items))
        if at >= len(text) or text[at] != ",":
            raise _fail5("Expecting ',' delimiter", text, at)
        at = _skip5(text, at + 1)


# ---------------------------------------------------------------- the splice


@dataclass(frozen=True)
class _Style:
    """How the file lays out its JSON: the indent unit (None: all on one line) and line end."""

    unit: str | None
    newline: str

    @classmethod
    def of(cls, text: str, container: Container) -> "_Style":
        """The style to add a child to `container` in: the file's indent unit, unless the container
        keeps its children on one line (`"hooks": {"SessionStart": [...]}`): then on one line too."""
        newline = "\r\n" if "\r\n" in text else "\n"
        starts = container.child_starts()
        if starts and "\n" not in text[container.start + 1:starts[0]]:
            return cls(None, newline)
        _, scanned, json5 = _views(text)
        root = scan_container(scanned, _skip5(scanned, 0), json5=json5)
        starts = root.child_starts()
        if not starts:
            return cls(DEFAULT_INDENT if "\n" in text else None, newline)
        gap = text[root.start + 1:starts[0]]
        return cls(_line_indent(text, starts[0]) if "\n" in gap else None, newline)

    def dump(self, value: Any, indent: str) -> str:
        """`value` as JSON for a place whose line is indented by `indent`."""
        if self.unit is None:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False, indent=self.unit).replace("\n", self.newline + indent)


def _spans(found: Container) -> list[tuple[int, int]]:
    return [(m.key_start, m.value_end) for m in found.members] if found.kind == "{" else list(found.items)


def _separator(text: str, before: int, child: int, found: Container) -> str:
    """The whitespace the file puts before a child (after the comma): as before the last child;
    for the second child of a one-line container, a space when the file writes `": "`. Where
    comments stand between them, a line break and the child's indentation (or a space)."""
    between = text[before:child]
    if _views(text)[0][before:child] != between:  # a comment in it
        return (("\r\n" if "\r\n" in text else "\n") + _line_indent(text, child)) if "\n" in between else " "
    separator = between.split(",")[-1]
    if len(found.child_starts()) == 1 and "\n" not in separator and '": ' in text:
        return " "
    return separator


def _add_last(text: str, found: Container, style: _Style, child) -> str:
    """`found` (which has children) with `child(indent)` added after the last one, laid out as the
    file lays out the others. The comma goes right after the last value, the child after that
    value's line comment when it has one; in a file that ends its lists with a trailing comma, the
    child goes after that comma, with one of its own. `_remove_child` takes out just this."""
    spans = _spans(found)
    last_start, last_end = spans[-1]
    separator = _separator(text, spans[-2][1] if len(spans) > 1 else found.start + 1, last_start, found)
    trailing = _trailing_comma(text, last_end, found.end - 1)
    base = last_end if trailing is None else trailing + 1
    at = _past_line_comment(text, base)
    if at != base and "\n" not in separator:  # after a `//` comment: on a line of its own
        separator = style.newline + _line_indent(text, last_start)
    added = separator + child(_indent_after(separator))
    if trailing is not None:
        return text[:at] + added + "," + text[at:]
    return text[:last_end] + "," + text[last_end:at] + added + text[at:]


def _indent_after(whitespace: str) -> str:
    """The indentation a run of whitespace leaves on its last line."""
    return whitespace.rsplit("\n", 1)[-1].replace("\r", "")


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    end = line_start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[line_start:end]


def _fill_empty(text: str, found: Container, style: _Style, child) -> str:
    """An empty object or array given its one child, laid out as the file lays out the others.
    Comments inside it stay, the child after the last of them."""
    inside = text[found.start + 1:found.end - 1]
    outer = _line_indent(text, found.start)
    if inside.strip(WHITESPACE):  # comments: kept, and what follows the last one
        head = inside.rstrip(WHITESPACE)
        tail = inside[len(head):]
        if style.unit is None and "\n" not in tail:
            separator = " "
        else:
            separator = style.newline + outer + (style.unit or "")
        added = head + separator + child(_indent_after(separator)) + tail
        return text[:found.start + 1] + added + text[found.end - 1:]
    if style.unit is None:
        inner = child("")
    else:
        inner = style.newline + outer + style.unit + child(outer + style.unit) + style.newline + outer
    return text[:found.start + 1] + inner + text[found.end - 1:]


def _remove_child(text: str, found: Container, spans: list[tuple[int, int]], index: int) -> str:
    """Remove child `index` with its comma: the text before the first child and after the last
    stays, so removing the child that was added last gives back the text before it was added
    (`_add_last`, `_fill_empty`). No comment is removed."""
    start, end = spans[index]
    scanned = _scan_text(text)
    inside_start, inside_end = found.start + 1, found.end - 1
    trailing = _trailing_comma(text, end, inside_end) if index == len(spans) - 1 else None
    if len(spans) == 1:
        rest = text[inside_start:start] + text[end:trailing if trailing is not None else end] + \
            text[(trailing + 1) if trailing is not None else end:inside_end]
        if not rest.strip(WHITESPACE):
            return text[:inside_start] + text[inside_end:]
        lead = _lead_start(text, start, inside_start)
    elif index < len(spans) - 1:
        comma = scanned.index(",", end)
        after = _skip(text, comma + 1)
        return text[:start] + text[end:comma] + text[after:]
    else:
        lead = _lead_start(text, start, spans[index - 1][1])
        if trailing is None:
            comma = scanned.index(",", spans[index - 1][1])
            return text[:comma] + text[comma + 1:lead] + text[end:]
    if trailing is None:
        return text[:lead] + text[end:]
    return text[:lead] + text[end:trailing] + text[trailing + 1:]
