"""The judge: for a pair of memories (or an entry and a memory), act, review, or nothing (DESIGN 3.2).

Hands off unless certain (seed 003): a false merge destroys information, a false keep is
harmless. The seed's word-overlap rules were made for one-line statements, so they decide
only between statements; between documents — real memories of several paragraphs, full of
"don't" and "never" — only near-identical ones are merged, nothing is superseded, and what
might be a duplicate or a conflict is left for a person (or the LLM) as a review item that
quotes its evidence.

Each rule is a small function; its docstring names the real case it exists for.
"""

import difflib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, lru_cache
from typing import NamedTuple, Protocol

from auto_dream.judge.similarity import (
    _CJK_RUN,
    _TOKEN,
    Profile,
    _aimed,
    _negations,
    _Statements,
    is_contradiction,
    is_duplicate,
    overlap,
    significant_words,
    stem,
)

# A statement is one or two sentences (seed 000's rules were made for those); its Why and
# How to apply lines support it and do not count.
STATEMENT_CHARS = 300
STATEMENT_SENTENCES = 2
# Seed 003's line: past ~750 characters a memory takes no new facts (no junk drawers).
SIZE_LINE = 750
# One memory absorbs at most this many others in one run; the rest wait for review.
ABSORB_LIMIT = 3
# Two documents are merged only when near-identical: their rarity-weighted word sets nearly
# the same, and neither much longer than the other.
NEAR_IDENTICAL = 0.8
NEAR_SIZE_RATIO = 0.7
# From here two documents are a possible duplicate, listed for review.
DOCUMENT_REVIEW = 0.5
CONFLICT_SENTENCE_OVERLAP = 0.5  # two sentences of two documents about the same thing
QUOTE_CHARS = 160

@dataclass(frozen=True)
class Verdict:
    """What to do with a pair: 'merge', 'supersede', 'review' or 'none'. `kind` is 'duplicate' or
    'conflict' (a review item's possible_duplicate / possible_conflict); `evidence` says what
    decided it, quoting it; `quotes` are the deciding sentence of each side, whole, in the
    order the sides were given. A supersede retires the older side."""

    outcome: str
    kind: str = ""
    evidence: str = ""
    quotes: tuple[str, str] = ("", "")


NOTHING = Verdict("none")
# Each word's weight by its rarity in the store (idf_weights over the parse cache's counts)
Rarity = Callable[[Iterable[str]], dict[str, float]]


class Written(Protocol):
    """What the judge reads of a memory (store.memory.Memory is one): the judge sits below the
    store and knows no files."""

    @property
    def body(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def mtime(self) -> datetime: ...


@dataclass(frozen=True)
class Side:
    """One side of a pair: its text as a person reads it (the body, or the description when the
    body is empty), its word profile, and its own time (None: unknown)."""

    text: str
    profile: Profile
    time: object = None

    @classmethod
    def of(cls, memory: "Written", profile: Profile, now: datetime | None = None) -> "Side":
        """A memory's side; a time after `now` (a skewed clock, a typo) is no time: unknown."""
        known = memory.mtime if now is None or memory.mtime <= now else None
        return cls(memory.body or memory.description, profile, known)

    @cached_property
    def core(self) -> str:
        return core_text(self.text)

    @cached_property
    def statement(self) -> bool:
        return is_statement(self.text)


# ---------------------------------------------------------------- statements and documents

_SUPPORT = re.compile(r"^\s*(?:\*\*(?:why|how to apply)[:：]?\*\*|(?:reason|why|because|how to apply)\s*[:：]"
                      r"|(?:原因|理由|因为|做法|如何应用)\s*[:：])", re.IGNORECASE)
_STRUCTURE = re.compile(r"^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||```)", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])|\n+")


def core_text(text: str) -> str:
    """The text without its supporting Why / How to apply lines."""
    return "\n".join(line for line in text.strip().split("\n") if not _SUPPORT.match(line)).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def is_statement(text: str) -> bool:
    """One or two sentences, no headings or lists: what the seed's rules were made for.

    Real case: a 40-line release analysis was judged by the one-line rules and "superseded"
    the decision memo that answered it (orchestkit, m117)."""
    core = core_text(text)
    return (bool(core) and len(core) <= STATEMENT_CHARS and not _STRUCTURE.search(core)
            and len(sentences(core)) <= STATEMENT_SENTENCES)


# ---------------------------------------------------------------- the pair


def judge(a: Side, b: Side, duplicate: float, contradiction: float,
          rarity: Rarity | None = None) -> Verdict:
    """The verdict on a pair. A supersede retires the older side; it needs both times known and different.

    One that holds the other's every word as written is never its contradiction: such a pair is
    left for review (a merge, which keeps every line of both, still happens). Real case: the
    first paragraph of an orchestkit memory, appended again as an entry, became a memory that
    "superseded" the one it came from, whose How to apply says "they can never drift again"."""
    if a.statement and b.statement:
        verdict = judge_statements(a, b, duplicate, contradiction)
    else:
        verdict = judge_documents(a, b, rarity)
    if verdict.outcome == "supersede" and (within := said_verbatim(b.text, a.core) or said_verbatim(a.text, b.core)):
        return Verdict("review", "duplicate", f"one says all the other says, word for word: {_quote(within)}",
                       (_flat(a.core), _flat(b.core)))
    return verdict


def judge_statements(a: Side, b: Side, duplicate: float, contradiction: float) -> Verdict:
    """The seed's rules between two statements, each guarded by a rule for a way it went wrong."""
    both = (_flat(a.core), _flat(b.core))
    if is_contradiction(a.profile, b.profile, contradiction):
        return _ordered(a, b, *contradiction_evidence(a, b))
    close = overlap(a.profile.words, b.profile.words) >= duplicate
    if not close:  # every rule below needs the two this close (is_duplicate too)
        return NOTHING
    slots = changed_slots(a.core, b.core)
    numbers = [slot for slot in slots if _has_digit(slot.a) or _has_digit(slot.b)]
    if distinct_specifics(numbers):
        return NOTHING
    swaps = swapped_words(slots, a.profile.words, b.profile.words)
    if close and value_changed(numbers):
        if swaps or any(_content(slot.a, slot.a_written, b.profile.words)
                        or _content(slot.b, slot.b_written, a.profile.words) for slot in slots if slot not in numbers):
            return Verdict("review", "conflict", "another value, and other words: " + _quote_pair(a.core, b.core),
                           both)
        return _ordered(a, b, "the same statement with another value: " + _quote_pair(a.core, b.core), both)
    if swaps and close and attribute_changed(a.core, b.core):
        return _ordered(a, b, "the same subject with another value: " + _quote_pair(a.core, b.core), both)
    if swaps and close:
        return Verdict("review", "conflict" if len(swaps) == 1 else "duplicate",
                       "the same statement but for " + ", ".join(f"{_quote(x)} / {_quote(y)}" for x, y in swaps)
                       + ": " + _quote_pair(a.core, b.core), both)
    if not is_duplicate(a.profile, b.profile, duplicate):
        return NOTHING
    if one_sided_signal(a.profile, b.profile):
        return Verdict("review", "conflict", "alike, but only one says " + " or ".join(
            sorted((a.profile.signals | b.profile.signals) - (a.profile.signals & b.profile.signals)))
            + ": " + _quote_pair(a.core, b.core), both)
    return Verdict("merge", "duplicate", "says the same: " + _quote_pair(a.core, b.core), both)


def one_sided_signal(a: Profile, b: Profile) -> bool:
    """One statement negates or announces a change and the other does not: not certainly the same.

    Case: "Write frontend unit tests with Jest" / "Frontend unit tests were switched to Vitest;
    don't add new Jest tests" share every word of the first, and would have been merged."""
    return a.signals != b.signals


def _ordered(a: Side, b: Side, evidence: str, quotes: tuple[str, str]) -> Verdict:
    """A contradiction: the newer wins when the order is known, else it is left for review.

    Real case: two orchestkit memories checked out by git had one mtime; the tie was broken
    by file name, and a decision memo lost to the analysis it answered."""
    if a.time is None or b.time is None or a.time == b.time:
        return Verdict("review", "conflict", evidence + " (which is newer is unknown)", quotes)
    return Verdict("supersede", "conflict", evidence, quotes)


class Slot(NamedTuple):
    """A place where two statements differ once lined up word by word: each side's tokens (stems;
    CJK by character), and the same as written."""

    a: list[str]
    b: list[str]
    a_written: list[str]
    b_written: list[str]


@lru_cache(maxsize=4096)  # a text is lined up against each of its candidates: tokenized once
def _align_tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the tokens two statements are lined up by: every word, stop words too, stemmed; CJK by
    character — and the same tokens as written)."""
    keys, written = [], []
    for token in _TOKEN.findall(text):
        if _CJK_RUN.fullmatch(token):
            keys.extend(token)
            written.extend(token)
        else:
            keys.append(stem(token.lower()))
            written.append(token)
    return tuple(keys), tuple(written)


@lru_cache(maxsize=64)  # a pair is lined up once, for its slots and for attribute_changed
def _differences(a: str, b: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """The places where two statements differ once lined up (difflib opcodes other than 'equal')."""
    ta, tb = _align_tokens(a)[0], _align_tokens(b)[0]
    return tuple(op for op in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes() if op[0] != "equal")


def changed_slots(a: str, b: str) -> list[Slot]:
    """Where two statements differ once lined up."""
    (ta, wa), (tb, wb) = _align_tokens(a), _align_tokens(b)
    return [Slot(list(ta[i1:i2]), list(tb[j1:j2]), list(wa[i1:i2]), list(wb[j1:j2]))
            for _, i1, i2, j1, j2 in _differences(a, b)]


def _has_digit(tokens: list[str]) -> bool:
    return any(map(str.isdigit, "".join(tokens)))


def value_changed(numbers: list[Slot]) -> bool:
    """A number stands where the other statement has another: a value that changed.

    Case: "Standup is at 9:30" / "Standup is at 10:00" — no negation word, a contradiction
    all the same; word overlap alone read the two as one fact (the numbers are short words)."""
    return len(numbers) == 1 and _has_digit(numbers[0].a) and _has_digit(numbers[0].b)


def distinct_specifics(numbers: list[Slot]) -> bool:
    """Numbers or identifiers differ in more than one place: two facts of one shape, not one fact.

    Case: ten entries "Fact N: module mN owns the billing flow qNx" became one memory."""
    return len(numbers) > 1


_COPULA = frozenset(("is", "are", "was", "were", "是", "为", "は"))


def attribute_changed(a: str, b: str) -> bool:
    """A definite subject, the same in both, and after its "is" a wholly different value: the
    one thing the subject is has changed.

    Case: "The user's main editor is VS Code" / "The user's main editor is Neovim" (用户的主力
    编辑器是…, ユーザーのメインエディタは…): no negation word, a contradiction all the same.
    "The user is a data engineer" / "… a Python developer" are two roles (the indefinite "a"),
    and "… is new to Kubernetes" / "… to Terraform" differ after "to", not after "is": neither
    counts."""
    ta, tb = _align_tokens(a)[0], _align_tokens(b)[0]
    opcodes = _differences(a, b)
    if len(opcodes) != 1:
        return False
    _, i1, i2, j1, j2 = opcodes[0]
    subject = ta[:i1 - 1]
    return (i2 == len(ta) and j2 == len(tb) and i1 > 0 and ta[i1 - 1] in _COPULA and i1 < len(ta)
            and j1 < len(tb) and ta[i1] not in ("a", "an") and tb[j1] not in ("a", "an")
            and len(significant_words("".join(t if _CJK_RUN.fullmatch(t) else f" {t} " for t in subject))) >= 2)


# Words that name nothing: one statement's "every" where the other has "all", "goes to" for
# "is in", is a rewording, not another fact.
GENERIC = frozenset(stem(w) for w in """
every all any each also just only always whenever when where there here via per over under against
use uses used using get gets got go goes went live lives put keep kept make made need needs want wants
new yet still now then thing things way part done do does
""".split())


@lru_cache(maxsize=8192)  # the same few words differ between a statement and each of its candidates
def _naming_words(keys: tuple[str, ...]) -> frozenset[str]:
    """The significant words of a slot's tokens that name something (not GENERIC, not one letter)."""
    text = "".join(t if _CJK_RUN.fullmatch(t) else f" {t} " for t in keys)
    return frozenset(w for w in significant_words(text) if w not in GENERIC and len(w) > 1)


def _content(keys: list[str], written: list[str], other_words: frozenset[str]) -> str:
    """The words of one side of a slot (as written) that name something the other statement never mentions."""
    words = _naming_words(tuple(keys)) - other_words
    return _written(tuple(keys), tuple(written), words) if words else ""


@lru_cache(maxsize=8192)
def _written(keys: tuple[str, ...], written: tuple[str, ...], words: frozenset[str]) -> str:
    """The tokens of a slot (as written) that hold one of `words`."""
    joiner = "" if all(_CJK_RUN.fullmatch(t) for t in written) else " "
    return joiner.join(t for key, t in zip(keys, written) if any(w in stem(key) or key in w for w in words))


def swapped_words(slots: list[Slot], a_words: frozenset[str], b_words: frozenset[str]) -> list[tuple[str, str]]:
    """Places where each statement names something the other never mentions: maybe the same fact
    reworded, maybe another fact ("Alice is learning Japanese" / "Alice is learning the piano";
    "Tom works on the Growth team" / "Tom works on the Platform team as of October"): not
    certain, so both are kept and the pair is listed for review."""
    swaps = []
    for slot in slots:
        left, right = _content(slot.a, slot.a_written, b_words), _content(slot.b, slot.b_written, a_words)
        if left and right and not _typo(left, right):
            swaps.append((left, right))
    return swaps


def _typo(left: str, right: str) -> bool:
    """One word spelt two ways ("integration" / "integraton", "CHANGELOG" / "CHANGLOG") is one word."""
    if " " in left or " " in right or min(len(left), len(right)) < 5:
        return False
    matcher = difflib.SequenceMatcher(None, left.lower(), right.lower())
    # the quick ratios are upper bounds of the ratio: most pairs of words fail them already
    return matcher.real_quick_ratio() >= 0.85 and matcher.quick_ratio() >= 0.85 and matcher.ratio() >= 0.85


# ---------------------------------------------------------------- documents


def judge_documents(a: Side, b: Side, rarity: Rarity | None = None) -> Verdict:
    """Documents are merged only when near-identical, never superseded; a statement joins a
    document only when the document already says it.

    Real case: with overlap = |A∩B| / min(|A|, |B|) one 11 KB inventory in orchestkit
    "contained" 38 unrelated short memories and grew to 62 KB."""
    if a.statement != b.statement:
        statement, document = (a, b) if a.statement else (b, a)
        said = document_says(document.text, statement.text)
        if said:
            quotes = (_flat(statement.core), _flat(said))
            return Verdict("merge", "duplicate", f"the document already says it: {_quote(said)}",
                           quotes if a.statement else (quotes[1], quotes[0]))
    similarity = weighted_jaccard(a.profile.words, b.profile.words, rarity)
    ratio = size_ratio(a.core, b.core)
    conflict = conflict_evidence(a, b)
    if conflict:
        return Verdict("review", "conflict", *conflict)
    if similarity >= NEAR_IDENTICAL and ratio >= NEAR_SIZE_RATIO and not a.statement and not b.statement:
        passage, quotes = _shared_passage(a.text, b.text)
        return Verdict("merge", "duplicate", f"near-identical documents (weighted similarity {similarity:.2f}, "
                       f"sizes {ratio:.2f} apart): {passage}", quotes)
    if similarity >= DOCUMENT_REVIEW:
        passage, quotes = _shared_passage(a.text, b.text)
        return Verdict("review", "duplicate", f"weighted similarity {similarity:.2f}, sizes {ratio:.2f} apart: "
                       + passage, quotes)
    return NOTHING


def document_says(document: str, statement: str) -> str | None:
    """The sentence of `document` that says all of `statement`, or None.

    Case: an entry that repeats a rule a long feedback memory already holds adds only its
    source; one that shares a few common words with an inventory adds nothing to it."""
    wanted = significant_words(core_text(statement))
    if verbatim := said_verbatim(document, core_text(statement)):
        return verbatim  # every word of it, as written: a multi-sentence entry too
    if len(wanted) < 3:
        flat = " ".join(core_text(statement).split())
        return flat if flat and flat in " ".join(document.split()) else None
    wanted_profile = Profile.of(core_text(statement))
    for sentence in sentences(document):
        if wanted <= significant_words(sentence):
            if not is_contradiction(wanted_profile, Profile.of(sentence), 0.0):
                return sentence
    return None


def said_verbatim(document: str, text: str) -> str | None:
    """`text` (its words as written, spaces aside) when `document` holds it whole and it is more
    than a few words, else None."""
    flat = " ".join(text.split())
    return flat if len(flat) >= 40 and flat in " ".join(document.split()) else None


def weighted_jaccard(a: frozenset[str], b: frozenset[str], rarity: Rarity | None = None) -> float:
    """Σ weight over shared words / Σ weight over all words, a word weighing by its rarity in the store."""
    union = a | b
    if not union:
        return 0.0
    weights = rarity(union) if rarity else {}
    total = sum(weights.get(w, 1.0) for w in union)
    return sum(weights.get(w, 1.0) for w in a & b) / total


def idf_weights(document_frequency: dict[str, int], documents: int) -> dict[str, float]:
    """Smoothed inverse document frequency: a word in every memory weighs 1, a rare one more."""
    return {w: math.log((1 + documents) / (1 + df)) + 1.0 for w, df in document_frequency.items()}


def size_ratio(a: str, b: str) -> float:
    return min(len(a), len(b)) / max(len(a), len(b), 1)


# ---------------------------------------------------------------- evidence


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat if len(flat) <= QUOTE_CHARS else flat[:QUOTE_CHARS - 1].rstrip() + "…"}"'


def _quote_pair(a: str, b: str) -> str:
    return f"{_quote(a)} / {_quote(b)}"


def _flat(text: str) -> str:
    """A sentence as quoted whole: its whitespace made single spaces."""
    return " ".join(text.split())


def contradiction_evidence(a: Side, b: Side) -> tuple[str, tuple[str, str]]:
    """Which sentence negates (or changes) which, the two quoted; and the two sentences, a's first."""
    if found := _negating_sentences(a.text, b.text):
        return f"{_quote(found[0])} contradicts {_quote(found[1])}", (_flat(found[0]), _flat(found[1]))
    if found := _negating_sentences(b.text, a.text):
        return f"{_quote(found[0])} contradicts {_quote(found[1])}", (_flat(found[1]), _flat(found[0]))
    return "contradicts: " + _quote_pair(a.core, b.core), (_flat(a.core), _flat(b.core))


def conflict_evidence(a: Side, b: Side) -> tuple[str, tuple[str, str]] | None:
    """Between documents: a sentence of one that negates or changes what a sentence of the other
    says about the same thing (the two sentences alike: CONFLICT_SENTENCE_OVERLAP and at least
    three words shared), the two quoted; None when there is none.

    Case: "Skipped tests are an anti-pattern" was archived as contradicted by "Run Python
    inside nix-shell": two documents that share vocabulary and differ in negation words. A
    conflict between documents is a claim about two sentences, so it names them."""
    if not (a.profile.aims or b.profile.aims):
        return None
    held_a, held_b = " ".join(a.text.split()), " ".join(b.text.split())
    mine = [(s, Profile.of(s)) for s in sentences(a.text) if " ".join(s.split()) not in held_b]
    theirs = [(s, Profile.of(s)) for s in sentences(b.text) if " ".join(s.split()) not in held_a]
    by_word: dict[str, list[int]] = {}
    for index, (_, profile) in enumerate(theirs):
        for word in profile.words:
            by_word.setdefault(word, []).append(index)
    for sentence, profile in mine:
        shared: dict[int, int] = {}
        for word in profile.words:
            for index in by_word.get(word, ()):
                shared[index] = shared.get(index, 0) + 1
        for index, count in sorted(shared.items()):
            other, other_profile = theirs[index]
            if count >= 3 and is_contradiction(profile, other_profile, CONFLICT_SENTENCE_OVERLAP):
                return (f"possible conflict: {_quote(sentence)} against {_quote(other)}",
                        (_flat(sentence), _flat(other)))
    return None


def _negating_sentences(negating: str, other: str) -> tuple[str, str] | None:
    """(the sentence of `negating` with a negation or change aimed at `other`, the sentence of `other` it aims at)."""
    other_sentences = sentences(other)
    other_statements = [(_Statements.of(s), significant_words(s)) for s in other_sentences]
    for sentence in sentences(negating):
        for scope, _, _, whole in _negations(sentence.lower()):
            if not whole:
                continue
            for said, (statements, _) in zip(other_sentences, other_statements):
                if statements.say(scope):
                    return sentence, said
        changed = _changed_words(sentence)
        if changed:
            for said, (_, words) in zip(other_sentences, other_statements):
                if _aimed(changed, words):
                    return sentence, said
    return None


def _changed_words(sentence: str) -> frozenset[str]:
    """What a sentence's change signal is about: what `instead of` / `from … to` replaces, else the
    words the signal reaches."""
    profile = Profile.of(sentence)
    return profile.replaced or profile.changed


def _shared_passage(a: str, b: str) -> tuple[str, tuple[str, str]]:
    """The longest run of text both hold, quoted; and the sentence of each that holds it."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    match = matcher.find_longest_match(0, len(a), 0, len(b))
    if not match.size:
        return "no shared passage", ("", "")
    passage = a[match.a:match.a + match.size]
    return "shared passage " + _quote(passage), (_sentence_at(a, match.a), _sentence_at(b, match.b))


def _sentence_at(text: str, offset: int) -> str:
    """The sentence of `text` that holds the character at `offset`, whole."""
    start = 0
    for piece in _SENTENCE.split(text):
        found = text.find(piece, start) if piece else -1
        if found >= 0:
            if found <= offset < found + len(piece):
                return _flat(piece)
            start = found + len(piece)
    return _flat(text)[:QUOTE_CHARS]
