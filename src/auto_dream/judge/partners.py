"""A memory that names another: "This extends the existing "never defer to human" feedback",
"ORIGINAL RULES (from feedback_cover_letter_quality.md)". The writer said how the two are
related; the judge lists the pair with that relation, whatever words they share.

A memory is named by its file name (with or without `.md`), its name, or the words of its
file name without the type prefix and the date ("never defer to human" for
`feedback_never_defer_to_human.md`), written as a file name or quoted. Pure text, no store.
"""

import re
from collections.abc import Iterable
from typing import Literal

_TYPE_PREFIX = re.compile(r"^(?:user|feedback|project|reference)[_-]", re.IGNORECASE)
_DATE_SUFFIX = re.compile(r"[_-]\d{4}(?:[_-]\d\d){0,2}(?:[_-]\w{1,4})?$")
_SEPARATORS = re.compile(r"[\s_\-]+")
# Where a text names another memory: a file name, or a phrase in quotes or backticks.
# A file name starts where a word does and is at most LONGEST_KEY + 3 long: a bounded run, so
# that a long run of letters is read in one pass (an unbounded `[\w.-]+\.md` backtracks from
# every letter of it: 900,000 letters took hours).
_MENTION = re.compile(r"(?<![\w.-])[\w.-]{1,103}\.md\b|\"([^\"\n]*)\"|“([^”\n]*)”|`([^`\n]*)`|\[\[([^\]\n]*)\]\]")
_SENTENCE = re.compile(r"(?<=[.!?])[\"”']?\s+|\n+")
# Minimal length of a name key, so that "notes" or "rules" alone names nothing.
SHORTEST_KEY, LONGEST_KEY = 12, 100

# What the writer says of the other: it adds to it (a duplicate to merge), or takes its place
# (a conflict: the other is retired).
_EXTENDS = re.compile(r"\b(?:extend(?:s|ed|ing)?|build(?:s|ing)? on|built on|amend(?:s|ed|ing)?|absorb(?:s|ed)?|"
                      r"consolidat\w*|merg(?:e|es|ed|ing) (?:in|into|with)|folded into|"
                      r"from|supplement(?:s|ed)?|follow(?:s|-up to| up to| up on)|update(?:s|d)? (?:of|to))\b",
                      re.IGNORECASE)
_REPLACES = re.compile(r"\b(?:supersed(?:e|es|ed|ing)|replac(?:e|es|ed|ing)|obsolet\w*|deprecat\w*|"
                       r"instead of)\b", re.IGNORECASE)


def key(text: str) -> str:
    """A name as compared: lower case, underscores, hyphens and spaces alike, `.md` left out."""
    text = text.strip().lower()
    if text.endswith(".md"):
        text = text[:-3]
    return _SEPARATORS.sub(" ", text).strip()


def name_keys(file_name: str, name: str = "") -> frozenset[str]:
    """The keys a memory is named by: its file name, the words of it without the type prefix
    and date ("never defer to human"), and its name; each at least SHORTEST_KEY long."""
    stem = file_name[:-3] if file_name.lower().endswith(".md") else file_name
    bare = _DATE_SUFFIX.sub("", _TYPE_PREFIX.sub("", stem))
    return frozenset(k for k in (key(stem), key(bare), key(name)) if len(k) >= SHORTEST_KEY)


# What a text must hold to name another memory at all (each alternative of _MENTION needs one)
MENTION_MARKS = (".md", '"', "“", "`", "[[")


def may_mention(text: str) -> bool:
    """Whether `text` holds any of MENTION_MARKS: a text without one names nothing (mentions)."""
    return any(mark in text for mark in MENTION_MARKS)


def mentions(text: str) -> set[str]:
    """The keys of what `text` names: every file name it writes, every phrase it quotes."""
    found: set[str] = set()
    if not may_mention(text):
        return found
    for match in _MENTION.finditer(text):
        phrase = next((g for g in match.groups() if g is not None), match.group())
        if SHORTEST_KEY <= len(k := key(phrase)) <= LONGEST_KEY:
            found.add(k)
    return found


def names_partner(text: str, keys: Iterable[str]) -> tuple[Literal["duplicate", "conflict"], str] | None:
    """('duplicate' | 'conflict', the sentence that says it) when `text` names a memory of
    `keys` and says how it relates: it extends, amends, builds on, absorbs or comes from it (a
    duplicate), or supersedes or replaces it (a conflict); else None.

    Real cases (application-pipeline): `feedback_never_defer_commands.md` says "This extends
    the existing "never defer to human" feedback"; `feedback_resume_cover_letter_quality_
    2026-03-26.md` opens "ORIGINAL RULES (from feedback_cover_letter_quality.md, 2026-03-20)".
    They share too few words for any overlap to pair them."""
    wanted = frozenset(keys)
    if not wanted:
        return None
    for sentence in _SENTENCE.split(text):
        if not (mentions(sentence) & wanted):
            continue
        if _REPLACES.search(sentence):
            return "conflict", " ".join(sentence.split())
        if _EXTENDS.search(sentence):
            return "duplicate", " ".join(sentence.split())
    return None
