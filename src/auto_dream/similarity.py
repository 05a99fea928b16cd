"""Word overlap, duplicates and contradictions (DESIGN 3.2), CJK included, no LLM needed."""

import re
import sys
from dataclasses import dataclass

# The seed's stop words (seed 000), which include the negations: a negated statement
# shares its significant words with the statement it negates.
STOP_WORDS = frozenset("""
the a an is are was were be been have has had do does did will would could should may might can
shall to of in for on with at by from as into through during before after this that it not no but
or and if then than so
don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn hadn mustn
she her hers him his they them their theirs its our ours you your yours
""".split())
# The last two lines are ours: what is left of "don't" and friends once the apostrophe
# splits them, and pronouns — two notes about the same person share "her" and "his"
# whatever they say, which made unrelated facts look like the same subject.

# Han, Hiragana, Katakana and Hangul: whitespace finds no words in them, bigrams do.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")

# Negation signals; a statement and its negation differ in one of these. English and
# Chinese put the negation before what it negates; Japanese and Korean after it.
_NEGATION_BEFORE = re.compile(
    r"\b(?:do not|does not|did not|don't|doesn't|didn't|dont|never|avoid|avoids|avoiding|no longer|"
    r"stop using|stopped using|not|cannot|can't|won't|shouldn't|must not)\b"
    r"|n't\b|不要|不再|不用|别用|別用|禁止|停止使用|并非|不是", re.IGNORECASE)
_NEGATION_AFTER = re.compile(r"しない|使わない|やめ|ではない|않")
_NEGATION = re.compile(f"{_NEGATION_BEFORE.pattern}|{_NEGATION_AFTER.pattern}", re.IGNORECASE)
# Change signals: a newer decision replacing an older one.
_CHANGE = re.compile(
    r"\b(?:instead|switched to|switch to|switching to|moved to|migrated to|replaced by|replaced with|"
    r"now uses|from now on)\b|改用|换成|換成|改为|改成|代わりに|に変更",
    re.IGNORECASE)
# "X instead of Y" changes a decision about Y only: it signals a change against a text that
# mentions Y ("use npm instead of pnpm" / "use pnpm"), not against any text at all ("use
# the docker compose Postgres instead of fakes" / "don't mock the database").
_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than)\s+((?:\S+\s*){1,3})", re.IGNORECASE)
# A signal is about the words right after it: "Never rebase feature branches" negates
# "rebase feature"; "Nate did not make it to the finals" says nothing against "Nate won his
# first game tournament" although both name Nate and the game. It counts against a text
# only when what it negates is in that text: all of its scope, or two words of it.
# Chinese and Japanese scopes are read as character bigrams, which straddle the signal, so
# they reach four bigrams and need two of them.
SCOPE_WORDS = 2
CJK_SCOPE_WORDS = 4
_SENTENCE_END = re.compile(r"[\n.!?;…。！？；]")  # a scope never runs into the next sentence


def word_sequence(text: str) -> list[str]:
    """The significant words of `text` in order (with repeats): CJK runs give their bigrams."""
    words = []
    for token in _TOKEN.findall(text.lower()):
        if _CJK_RUN.fullmatch(token):
            if len(token) == 1:
                words.append(token)
            else:
                words.extend(token[i:i + 2] for i in range(len(token) - 1))
        elif len(token) > 2 and token not in STOP_WORDS:
            words.append(token)
    return words


def significant_words(text: str) -> frozenset[str]:
    """Lower-cased words of letters and digits longer than 2, minus stop words; CJK runs as bigrams."""
    # interned: a store repeats the same few thousand words across every memory
    return frozenset(map(sys.intern, word_sequence(text)))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|A∩B| / min(|A|, |B|); 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _scope(text: str, pattern: re.Pattern, before: bool = False) -> frozenset[str]:
    """The words the occurrences of `pattern` apply to: the few after each (or before, for `before`)."""
    scoped = set()
    for match in pattern.finditer(text):
        reach = CJK_SCOPE_WORDS if _CJK_RUN.search(match.group()) else SCOPE_WORDS
        if before:  # back to the start of the sentence
            sentence = _SENTENCE_END.split(text[max(0, match.start() - 200):match.start()])[-1]
            scoped.update(word_sequence(sentence)[-reach:])
        else:  # on to the end of the sentence
            sentence = _SENTENCE_END.split(text[match.end():match.end() + 200], maxsplit=1)[0]
            scoped.update(word_sequence(sentence)[:reach])
    return frozenset(scoped)


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
    signals: frozenset[str] = frozenset()
    replaced: frozenset[str] = frozenset()
    negated: frozenset[str] = frozenset()  # words within reach of a negation signal
    changed: frozenset[str] = frozenset()  # words within reach of a change signal

    @classmethod
    def of(cls, text: str) -> "Profile":
        negated = _scope(text, _NEGATION_BEFORE) | _scope(text, _NEGATION_AFTER, before=True)
        changed = _scope(_INSTEAD_OF.sub(" ", text), _CHANGE)
        return cls(significant_words(text), signals(text), replaced_words(text), negated, changed)

    def signals_against(self, other: "Profile") -> frozenset[str]:
        """The signals this text aims at words the other text shares: those are what contradict."""
        found = set()
        if _aimed(self.negated, other.words):
            found.add("negation")
        if _aimed(self.changed, other.words) or self.replaced & other.words:
            found.add("change")
        return frozenset(found)

    def merged_with(self, other: "Profile") -> "Profile":
        """The profile of a memory that gained `other`'s words; its signals stay its own."""
        return Profile(self.words | other.words, self.signals, self.replaced, self.negated, self.changed)


def _aimed(scope: frozenset[str], other_words: frozenset[str]) -> bool:
    """Whether what a signal negates is in the other text: all of its scope, or two words of it."""
    hit = len(scope & other_words)
    return hit > 0 and hit >= min(2, len(scope))


def signals_differ(a: Profile, b: Profile) -> bool:
    return a.signals_against(b) != b.signals_against(a)


def is_contradiction(a: Profile, b: Profile, threshold: float) -> bool:
    """Same subject (overlap ≥ threshold), and a negation or change aimed at the shared words
    that only one side makes."""
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
