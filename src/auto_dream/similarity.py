"""Word overlap, duplicates and contradictions (DESIGN 3.2), CJK included, no LLM needed."""

import re
from dataclasses import dataclass

# The seed's stop words (seed 000), which include the negations: a negated statement
# shares its significant words with the statement it negates.
STOP_WORDS = frozenset("""
the a an is are was were be been have has had do does did will would could should may might can
shall to of in for on with at by from as into through during before after this that it not no but
or and if then than so
don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn hadn mustn
""".split())  # the last line: what is left of "don't" and friends once the apostrophe splits them

# Han, Hiragana, Katakana and Hangul: whitespace finds no words in them, bigrams do.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")

# Negation signals; a statement and its negation differ in one of these.
_NEGATION = re.compile(
    r"\b(?:do not|does not|did not|don't|doesn't|didn't|dont|never|avoid|avoids|avoiding|no longer|"
    r"stop using|stopped using|not|n't|cannot|can't|won't|shouldn't|must not)\b"
    r"|n't\b|不要|不再|不用|别用|別用|禁止|停止使用|并非|不是|しない|しないで|使わない|やめ|ではない|않",
    re.IGNORECASE)
# Change signals: a newer decision replacing an older one.
_CHANGE = re.compile(
    r"\b(?:instead|switched to|switch to|switching to|moved to|migrated to|replaced by|replaced with|"
    r"now uses|from now on)\b|改用|换成|換成|改为|改成|代わりに|に変更",
    re.IGNORECASE)
# "X instead of Y" changes a decision about Y only: it signals a change against a text that
# mentions Y ("use npm instead of pnpm" / "use pnpm"), not against any text at all ("use
# the docker compose Postgres instead of fakes" / "don't mock the database").
_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than)\s+((?:\S+\s*){1,3})", re.IGNORECASE)


def significant_words(text: str) -> frozenset[str]:
    """Lower-cased words of letters and digits longer than 2, minus stop words; CJK runs as bigrams."""
    words = set()
    for token in _TOKEN.findall(text.lower()):
        if _CJK_RUN.fullmatch(token):
            if len(token) == 1:
                words.add(token)
            else:
                words.update(token[i:i + 2] for i in range(len(token) - 1))
        elif len(token) > 2 and token not in STOP_WORDS:
            words.add(token)
    return frozenset(words)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|A∩B| / min(|A|, |B|); 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def signals(text: str) -> frozenset[str]:
    """Which kinds of negation or change signal `text` carries (`instead of Y` aside)."""
    found = set()
    if _NEGATION.search(text):
        found.add("negation")
    if _CHANGE.search(_INSTEAD_OF.sub(" ", text)):
        found.add("change")
    return frozenset(found)


def replaced_words(text: str) -> frozenset[str]:
    """The significant words of what `instead of …` / `rather than …` replaces."""
    return frozenset().union(*(significant_words(m.group(1)) for m in _INSTEAD_OF.finditer(text)))


@dataclass(frozen=True)
class Profile:
    """What the checks need of a text, computed once."""

    words: frozenset[str]
    signals: frozenset[str]
    replaced: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str) -> "Profile":
        return cls(significant_words(text), signals(text), replaced_words(text))

    def signals_against(self, other: "Profile") -> frozenset[str]:
        """This text's signals, counting `instead of Y` as a change when the other text mentions Y."""
        if self.replaced & other.words:
            return self.signals | {"change"}
        return self.signals

    def merged_with(self, other: "Profile") -> "Profile":
        """The profile of a memory that gained `other`'s words (its signals stay its own)."""
        return Profile(self.words | other.words, self.signals, self.replaced)


def signals_differ(a: Profile, b: Profile) -> bool:
    return a.signals_against(b) != b.signals_against(a)


def is_contradiction(a: Profile, b: Profile, threshold: float) -> bool:
    """Same subject (overlap ≥ threshold) and a negation or change signal only one side has."""
    return overlap(a.words, b.words) >= threshold and signals_differ(a, b)


def is_duplicate(a: Profile, b: Profile, threshold: float) -> bool:
    """Overlap ≥ threshold, no contradiction, and not two short facts differing in the word that matters.

    Word overlap's weak spot is short texts that share most words but differ in one
    ("learning Japanese" / "learning the piano"). Two memories are better than one wrong
    merge, so when fewer than four words are shared, one text must contain the other's.
    """
    if signals_differ(a, b):
        return False
    shared = len(a.words & b.words)
    if overlap(a.words, b.words) < threshold:
        return False
    return shared >= 4 or a.words <= b.words or b.words <= a.words


def relation(a: Profile, b: Profile, duplicate_threshold: float, contradiction_threshold: float) -> str | None:
    """'contradiction', 'duplicate' or None — contradiction is checked first."""
    if is_contradiction(a, b, contradiction_threshold):
        return "contradiction"
    if is_duplicate(a, b, duplicate_threshold):
        return "duplicate"
    return None
