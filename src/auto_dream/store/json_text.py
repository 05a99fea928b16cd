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
"""

import json
import sys
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner json.loads uses; typeshed omits it
from typing import Any

WHITESPACE = " \t\n\r"
DEFAULT_INDENT = "  "  # Claude Code writes its JSON with JSON.stringify(value, null, 2)
_decoder = json.JSONDecoder()

Step = str | int  # a key of an object or an index into an array


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


def load(text: str) -> Any:
    """The value of a JSON document whose root is an object; JsonTextError (with the line and
    column) for anything else."""
    try:
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
    before_last = found.members[-2].value_end if len(found.members) > 1 else found.start + 1
    separator = _separator(text, before_last, last.key_start, found)
    colon = text[last.key_end:last.value_start]  # `: ` as the file spells it
    addition = "," + separator + encoded_key + colon + style.dump(value, _indent_after(separator))
    return text[:last.value_end] + addition + text[last.value_end:]


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
    last_start, last_end = found.items[-1]
    before_last = found.items[-2][1] if len(found.items) > 1 else found.start + 1
    separator = _separator(text, before_last, last_start, found)
    return text[:last_end] + "," + separator + style.dump(value, _indent_after(separator)) + text[last_end:]


def remove_item(text: str, path: tuple[Step, ...], index: int) -> str:
    """`text` without item `index` of the array at `path`."""
    found = _container(text, path, "[")
    return _remove_child(text, found, list(found.items), index)


def blank_inside(text: str, path: tuple[Step, ...]) -> str | None:
    """The whitespace between the brackets of the object or array at `path` when it is empty
    (`{\n  }`); None when it has children or is not there. Filling an empty container lays it out
    afresh, and emptying it again gives `{}`: this is what to put back."""
    try:
        found = _container(text, path, None)
    except JsonTextError:
        return None
    return None if found.child_starts() else text[found.start + 1:found.end - 1]


def set_blank_inside(text: str, path: tuple[Step, ...], blank: str) -> str:
    """`text` with `blank` (whitespace) between the brackets of the empty container at `path`."""
    found = _container(text, path, None)
    if found.child_starts() or blank.strip(WHITESPACE):
        raise JsonTextError("only whitespace goes inside an empty object or array")
    return text[:found.start + 1] + blank + text[found.end - 1:]


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


def scan_container(text: str, start: int) -> Container:
    """The object or array whose opening bracket is at `start`, its children located."""
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
    """The container at `path` from the root object (already checked by `load`), of `kind` unless None."""
    found = scan_container(text, _skip(text, 0))
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
        found = scan_container(text, start)
    if kind is not None and found.kind != kind:
        raise JsonTextError(f"{where} is not an {'object' if kind == '{' else 'array'}")
    return found


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
        root = scan_container(text, _skip(text, 0))
        starts = root.child_starts()
        if not starts:
            return cls(DEFAULT_INDENT if "\n" in text else None, newline)
        gap = text[root.start + 1:starts[0]]
        return cls(_indent_after(gap) if "\n" in gap else None, newline)

    def dump(self, value: Any, indent: str) -> str:
        """`value` as JSON for a place whose line is indented by `indent`."""
        if self.unit is None:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False, indent=self.unit).replace("\n", self.newline + indent)


def _separator(text: str, before: int, child: int, found: Container) -> str:
    """The whitespace the file puts before a child (after the comma): as before the last child;
    for the second child of a one-line container, a space when the file writes `": "`."""
    separator = text[before:child].split(",")[-1]
    if len(found.child_starts()) == 1 and "\n" not in separator and '": ' in text:
        return " "
    return separator


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
    """An empty object or array given its one child, laid out as the file lays out the others."""
    if style.unit is None:
        inner = child("")
    else:
        outer = _line_indent(text, found.start)
        inner = style.newline + outer + style.unit + child(outer + style.unit) + style.newline + outer
    return text[:found.start + 1] + inner + text[found.end - 1:]


def _remove_child(text: str, found: Container, spans: list[tuple[int, int]], index: int) -> str:
    """Remove child `index` with its comma: the text before the first child and after the last
    stays, so removing the child that was added last gives back the text before it was added."""
    if len(spans) == 1:
        return text[:found.start + 1] + text[found.end - 1:]
    if index < len(spans) - 1:
        return text[:spans[index][0]] + text[spans[index + 1][0]:]
    return text[:spans[index - 1][1]] + text[spans[index][1]:]
