"""What is shown of a file: one line a terminal or MEMORY.md prints as is, and the record of
a file that cannot be read as a memory. Light to import (no YAML): `recall` shows names."""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unreadable:
    """A file under memories/ that cannot be read as a memory; reported, never touched.

    Its path is only ever shown: control characters and the bytes of a name that is not
    UTF-8 are written out (`shown`), so that a warning is one line a terminal prints as is."""

    path: str
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", shown(self.path))


# C0 and C1 controls and DEL (a terminal obeys them: ESC starts a sequence, BEL rings), and the
# lone surrogates that stand for a file name's bytes that are not UTF-8
_UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def shown(text: str) -> str:
    """`text` as a terminal or MEMORY.md may show it: every control character written out as
    `\\x1b`, a byte of a file name that is not UTF-8 as `\\xff`. Printable text is unchanged."""
    return _UNSHOWABLE.sub(_written_out, text) if not text.isprintable() else text


def _written_out(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
