"""An entry folded into a memory that already says most of it: what it adds, and how the
memory's description comes to cover it.

Real case: "Always run ruff and mypy before committing; also run pytest -x" was folded into
"Always run ruff and mypy before committing": the text went into the body, but the description
still omitted pytest, so MEMORY.md never showed it, and the report said the entry "says the
same". A fold that adds a fact *extends* the memory: the added words are found, the
description gains them (every character of it kept), and the report quotes them.
"""

import difflib
import re

_TOKEN = re.compile(r"\s+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W\u3040-\u30ff\u3400-\u4dbf"
                    r"\u4e00-\u9fff\uac00-\ud7af]+|\S")
_CJK_END = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af。、！？]$")
_LEADING = " \t\n;；,，、.。:：-—–"
EXTENDS = "extends"  # the word a merge's reason says when the entry added a fact (the report counts them)
MAX_SPANS = 2  # more pieces than this, scattered through the text, are no one addition: the entry is quoted whole


def _tokens(text: str) -> list[str]:
    """Words with the spaces between them kept (CJK by character), so spans join back as written."""
    return _TOKEN.findall(text)


def added_text(said: str, entry: str) -> str:
    """What `entry` says beyond `said`, as written: the one or two runs of the entry that the text
    already said does not hold, when the rest of the entry lines up with it; else the entry whole
    ("" when the entry adds nothing)."""
    flat_entry = " ".join(entry.split())
    if not flat_entry or flat_entry in " ".join(said.split()):
        return ""
    base, new = _tokens(" ".join(said.split())), _tokens(flat_entry)
    matcher = difflib.SequenceMatcher(None, [t.lower() for t in base], [t.lower() for t in new], autojunk=False)
    spans = ["".join(new[j1:j2]) for tag, _, _, j1, j2 in matcher.get_opcodes()
             if tag in ("insert", "replace") and "".join(new[j1:j2]).strip()]
    kept = sum(j2 - j1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag == "equal" and "".join(new[j1:j2]).strip())
    content = sum(1 for t in new if t.strip())
    if not spans:
        return ""
    if len(spans) > MAX_SPANS or kept < content / 2:
        return flat_entry
    return " … ".join(span.strip().lstrip(_LEADING).strip() for span in spans if span.strip(_LEADING))


def extended_description(description: str, added: str, entry: str = "") -> str:
    """The description, then what an entry added, joined as the text's language joins clauses;
    or the entry itself when it begins with the whole description (it goes on where the
    description stops). Every character of the description stays."""
    added = " ".join(added.split())
    if not added or added in description:
        return description
    flat_entry = " ".join(entry.split())
    if flat_entry and description.strip() and flat_entry.startswith(" ".join(description.split())):
        return flat_entry
    base = description.rstrip()
    if not base:
        return added
    return base + ("；" if _CJK_END.search(base) else "; ") + added
