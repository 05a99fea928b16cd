"""The judge: for a pair of memories (or an entry and a memory), act, review, or nothing.

Hands off unless certain: a false merge destroys information, a false keep is harmless.
The word-overlap rules were made for one-line statements, so they decide only between
statements; between documents — real memories of several paragraphs, full of "don't" and
"never" — only near-identical ones are merged, nothing is superseded, and what might be a
duplicate or a conflict is left for a person (or the LLM) as a review item that quotes its
evidence.

A conflict is two statements about one subject that cannot both hold: a value that changed,
a rule reversed. Two statements are lined up clause to clause and what differs between them
is read as another subject, a value of one kind for another (values.py), one name for
another, or the same thing in other words (swaps); between documents, a conflict is two of
their sentences that conflict so (sentences_conflict). A memory that names another and says
how they relate is listed with that relation (partners.py).

Each rule is a small function; its docstring names the real case it exists for, and a
verdict names the rule that decided it.
"""

import difflib
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, lru_cache
from itertools import takewhile
from typing import Literal, NamedTuple, Protocol, cast

from auto_dream.judge.fences import fenced
from auto_dream.judge.partners import mentions, name_keys, names_partner
from auto_dream.judge.similarity import (
    _AUXILIARY_NAMES,
    _CHANGE,
    _CJK_RUN,
    _EXISTENTIAL,
    _TOKEN,
    Profile,
    _aimed,
    _negation_matches,
    _negations,
    _Statements,
    anchored_floor,
    is_contradiction,
    is_duplicate,
    overlap,
    significant_words,
    stem,
    unnegatable,
    without_replacements,
)
from auto_dream.judge.subjects import put_off, set_aside_since
from auto_dream.judge.values import (
    CJK_TEXT,
    LATIN_TERM,
    NUMBER,
    anchors,
    same_kind,
    specifics,
    spelled,
    unanchored,
    value_kind,
)
from auto_dream.judge.words import STOP_WORDS

# A statement is one or two sentences (the overlap rules were made for those); its Why and
# How to apply lines support it and do not count.
STATEMENT_CHARS = 300
STATEMENT_SENTENCES = 2
# The line past which (~750 characters) a memory takes no new facts (no junk drawers).
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

Outcome = Literal["merge", "supersede", "review", "none"]  # what the judge says to do with a pair
PairKind = Literal["duplicate", "conflict", "marked", ""]  # what a pair is (marked: a person said; "": nothing)


@dataclass(frozen=True)
class Verdict:
    """What to do with a pair: 'merge', 'supersede', 'review' or 'none'. `kind` is 'duplicate' or
    'conflict' (a review item's possible_duplicate / possible_conflict); `evidence` says what
    decided it, quoting it; `quotes` are the deciding sentence of each side, whole, in the
    order the sides were given; `rule` names the rule that decided. A supersede retires the older side."""

    outcome: Outcome
    kind: PairKind = ""
    evidence: str = ""
    quotes: tuple[str, str] = ("", "")
    rule: str = ""  # the name of the rule that decided it (the function whose docstring gives its case)


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
    @property
    def name(self) -> str: ...
    @property
    def file_name(self) -> str: ...


@dataclass(frozen=True)
class Side:
    """One side of a pair: its text as a person reads it (the body, or the description when the
    body is empty), its word profile, its own time (None: unknown), and the keys it is named by."""

    text: str
    profile: Profile
    time: object = None
    names: frozenset[str] = frozenset()  # what other memories may call it (partners.name_keys)

    @classmethod
    def of(cls, memory: "Written", profile: Profile, now: datetime | None = None) -> "Side":
        """A memory's side; a time after `now` (a skewed clock, a typo) is no time: unknown."""
        known = memory.mtime if now is None or memory.mtime <= now else None
        return cls(memory.body or memory.description, profile, known, name_keys(memory.file_name, memory.name))

    @cached_property
    def core(self) -> str:
        return core_text(self.text)

    @cached_property
    def statement(self) -> bool:
        return is_statement(self.text)

    @cached_property
    def mentioned(self) -> frozenset[str]:
        """The keys of what it names (partners.mentions): a pair's text is read for them once."""
        return frozenset(mentions(self.text))


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
                       (_flat(a.core), _flat(b.core)), "said_verbatim")
    if verdict.outcome in ("merge", "supersede"):
        return verdict
    return partner_named(a, b) or verdict


def partner_named(a: Side, b: Side) -> Verdict | None:
    """A review item when one side names the other and says how they relate (partners.names_partner):
    it extends or comes from it (a possible duplicate), or replaces it (a possible conflict)."""
    for naming, named, first in ((a, b, True), (b, a, False)):
        if naming.mentioned & named.names and (found := names_partner(naming.text, named.names)):
            kind, sentence = found
            other = _flat(sentences(named.core)[0]) if named.core else ""
            quotes = (sentence, other) if first else (other, sentence)
            return Verdict("review", kind, f"one names the other: {_quote(sentence)}", quotes, "names_partner")
    return None


def judge_statements(a: Side, b: Side, duplicate: float, contradiction: float) -> Verdict:
    """The seed's rules between two statements, each guarded by a rule for a way it went wrong.

    The two are lined up clause to clause (aligned_clauses); what differs between them is read
    as another subject, a value of one kind for another, one name for another, or other words
    for the same thing (swaps). A context both open with ("Decisions: …", a heading an imported
    note sat under) is set aside first (sibling_items)."""
    both = (_flat(a.core), _flat(b.core))
    if (opened := goes_on_from(a, b)) is not None:
        return opened
    a_core, b_core = sibling_items(a.core, b.core)
    a_words, b_words = (a.profile.words, b.profile.words) if a_core == a.core else (
        significant_words(a_core), significant_words(b_core))
    if a_core == a.core and is_contradiction(a.profile, b.profile, contradiction):
        return _ordered(a, b, *contradiction_evidence(a, b), rule="is_contradiction")
    if overlap(a_words, b_words) < contradiction:
        if (about := about_one_subject(a, b, duplicate, contradiction)) is not None:
            return about
        return _terms_verdict(a, b, a_core, b_core, both) if overlap(a_words, b_words) >= anchored_floor(
            contradiction) else NOTHING
    lined_up = iter_swaps(a_core, b_core, a_words, b_words)
    first = next(lined_up, None)
    if first is not None and another_subject([first]) and not (anchors(a_core) and anchors(b_core)) and (
            retracts(a.core) == retracts(b.core)):
        return NOTHING  # what follows can change nothing: same_anchors needs anchors, `retracted` a retraction
    found = [first, *lined_up] if first is not None else []
    if another_subject(found) or two_facts(found) or (found and extended_identifier(a_core, b_core)):
        # unless what made it another subject is a value lined up with one the other holds elsewhere
        if (held := same_anchors(a_core, b_core, found)) and not _subject_or_facts(found, a_core, b_core):
            return _anchored(a, b, a_core, b_core, held, both)
        if (changed := change_of_subject(a, b)) and retracts(changed[0]):
            # a retraction names what stopped in words of its own: "We dropped iOS 15 support" is
            # about what "The mobile app supports iOS 15 and later" says, whatever each opens with
            return Verdict("review", "conflict", f"{_quote(changed[0])} takes back what {_quote(changed[1])} "
                           "says", changed[2], "retracted")
        return _terms_verdict(a, b, a_core, b_core, both)
    close = overlap(a_words, b_words) >= duplicate
    named = _swap_evidence(found)
    pair = _quote_pair(a.core, b.core)
    if value_changed(found):
        if _numbered_names(a_core, found[0].left) and _numbered_names(b_core, found[0].right):
            return NOTHING  # the value numbers the things each names: two of a series, not one changed
        if close and not _other_words(a_core, b_core, a_words, b_words):
            return _ordered(a, b, f"the same statement with another value ({named}): {pair}", both, "value_changed")
        return Verdict("review", "conflict", f"another value ({named}), and other words: {pair}", both,
                       "value_and_words")
    if changed := change_of_subject(a, b):
        return Verdict("review", "conflict", f"{_quote(changed[0])} changes what {_quote(changed[1])} says",
                       changed[2], "change_of_subject")
    if name_swapped(found) and rest_is_same(found[0]):
        if close and attribute_changed(a_core, b_core):
            return _ordered(a, b, f"the same subject with another value: {pair}", both, "attribute_changed")
        return Verdict("review", "conflict", f"the same statement but for {named}: {pair}", both, "name_swapped")
    if len(found) == 1 and rest_is_same(found[0]) and announces_change(a.core) != announces_change(b.core):
        return Verdict("review", "conflict", f"alike but for {named}, and only one announces a change: {pair}",
                       both, "announces_change")
    if close and swapped_words(found) and rest_is_same(found[0]):
        return Verdict("review", "duplicate", f"the same statement in other words ({named}): {pair}", both,
                       "swapped_words")
    if close and reworded_in_one_clause(found, a_words, b_words):
        return Verdict("review", "duplicate", f"the same statement in other words ({named}), the rest of it "
                       f"the same: {pair}", both, "reworded_in_one_clause")
    if close and (denied := same_denial(a.core, b.core, found)):
        return Verdict("review", "duplicate", f"the same statement in other words ({named}), both denying "
                       f"{_quote(denied)}: {pair}", both, "same_denial")
    if not close or found or not is_duplicate(a.profile, b.profile, duplicate):
        # other words in more places, or too many of them: not certainly one statement
        if pinned := same_specifics(a_core, b_core, a.profile, b.profile, found):
            return Verdict("review", "duplicate", f"the same specifics ({pinned}) and no other, in other words: "
                           f"{pair}", both, "same_specifics")
        if held := same_anchors(a_core, b_core, found):
            return _anchored(a, b, a_core, b_core, held, both)
        return _terms_verdict(a, b, a_core, b_core, both)
    if one_sided_signal(a.profile, b.profile):
        if not alike_both_ways(a.profile.words, b.profile.words):
            return NOTHING
        if announces_change(a.core) != announces_change(b.core):
            return Verdict("review", "conflict", f"alike, but only one announces a change: {pair}", both,
                           "announces_change")
        return Verdict("review", "duplicate", "alike, but only one says " + " or ".join(
            sorted((a.profile.signals | b.profile.signals) - (a.profile.signals & b.profile.signals)))
            + f", aimed at nothing the other says: {pair}", both, "one_sided_signal")
    return Verdict("merge", "duplicate", f"says the same: {pair}", both, "is_duplicate")


def about_one_subject(a: Side, b: Side, duplicate: float, contradiction: float) -> Verdict | None:
    """A possible conflict between two Chinese or Japanese statements that share too few character
    pairs for the rules above, though one says what changed about the subject both open with
    (judge.subjects): it was put off while the other gives its date ("公测延期了" / "公测定在6月1日
    上线"), or it holds since a time the other does not say, and without that phrase the two are
    the same statement but for a value or a name ("王磊从十月起在平台组" / "王磊在增长组")."""
    both = (_flat(a.core), _flat(b.core))
    for putting, other in ((a, b), (b, a)):
        if clause := put_off(putting.core, other.core):
            return Verdict("review", "conflict", f"{_quote(clause)} puts off what {_quote(other.core)} dates", both,
                           "put_off")
    a_text, b_text, since = set_aside_since(a.core, b.core)
    if not since:
        return None
    a_set, b_set = Side(a_text, Profile.of(a_text), a.time), Side(b_text, Profile.of(b_text), b.time)
    if overlap(a_set.profile.words, b_set.profile.words) < contradiction:
        return None
    found = judge_statements(a_set, b_set, duplicate, contradiction)
    if found.outcome == "none" or found.kind != "conflict":
        return None
    named = _swap_evidence(swaps(a_text, b_text, a_set.profile.words, b_set.profile.words)) or "other words"
    return Verdict("review", "conflict", f"only one says since when ({_quote(since)}); without it, the same statement "
                   f"but for {named}: {_quote_pair(a.core, b.core)}", both, "since_changed")


def same_specifics(a: str, b: str, a_profile: Profile, b_profile: Profile, found: list["Swap"]) -> str:
    """What two statements pin down (values.specifics), quoted, when both pin down the same things
    and name the same names — none on one side only, one spelt two ways aside — with the same
    signals, and differ in nothing the swaps read as a value or a name; else "".

    Cases: "Mobile releases are frozen from March 3 until the App Store review of 5.0 completes"
    / "Release freeze for mobile starts March 3 and lasts until the App Store review of 5.0 is
    done"; "修改对外接口时要同步更新CHANGELOG.md" / "对外接口有改动时，记得同步更新CHANGLOG.md":
    one fact in other words, too many of them for the overlap rules. Two facts of one shape
    differ in what they pin or name ("m1" / "m2", "#incidents" / "#deploys", "DATA" /
    "DATA-REQ"). A name pins nothing down: "李娜在学Python" / "李娜用Python写爬虫", "Joanna
    appreciates Nate's support" / "Joanna agreed to go to Nate's place" share a name and say two
    things; nor does one plain value alone: "The API rate limit is 100 requests per minute" /
    "The API returns at most 100 items per page", "Dave had a card night with friends last
    Friday" / "Dave went to a car show last Friday" (LoCoMo)."""
    if a_profile.signals != b_profile.signals or any(s.kind in ("value", "name") for s in found):
        return ""
    (pinned_a, names_a), (pinned_b, names_b) = specifics(a), specifics(b)
    if not pinned_a or not pinned_b or (len(pinned_a) == 1 and value_kind(list(pinned_a))):
        return ""
    if not (_held(pinned_a | names_a, pinned_b | names_b) and _held(pinned_b | names_b, pinned_a | names_a)):
        return ""
    return ", ".join(_quote(s) for s in sorted(pinned_a))


# Two Chinese or Japanese statements with the same anchors say one thing when the words around
# them are alike both ways — this share of the longer side's words (bigrams) in the other's — and
# at least this many of them.
ANCHORED_REST = 0.35
ANCHORED_REST_SHARED = 3
ANCHORS_ADDED = 1  # anchors one of them may hold that the other does not: a detail added


def same_anchors(a: str, b: str, found: list["Swap"]) -> str:
    """The anchors (values.anchors) of two Chinese or Japanese statements, quoted, when one holds
    all the other's (one spelt two ways aside) and at most one more, the words around them are
    alike (ANCHORED_REST of them, at least ANCHORED_REST_SHARED), and no place where they differ
    reads as one value or name for another; else "".

    Cases: "张伟负责支付团队，涉及账本服务的PR都由他审核" / "支付团队的负责人是张伟，所有改动账本服务的PR
    都要他来审", "コミット前に必ず`make lint`を実行すること" / "コミットする前には毎回make lintを走らせる",
    "佐藤さんはデータサイエンティストで、Reactは初心者" / "佐藤さん（データサイエンティスト）はReactの経験が
    ほとんどない": one fact in other words — a paraphrase shares few of its CJK bigrams, but keeps
    its terms of art. Not "李娜在学Python" / "李娜用Python写爬虫" (one name around the term: two
    facts), nor "张伟审核所有涉及账本服务的PR" / "赵敏审核所有涉及账本页面的PR" (two names swapped),
    nor "王芳审核所有涉及规则引擎的PR" / "王芳维护规则引擎的文档，PR模板也归她管" (one more thing said:
    the words around are not alike both ways), nor two anchors that differ ("DATA" / "DATA-REQ")."""
    mine, theirs = anchors(a), anchors(b)
    if not mine or not theirs:
        return ""
    if any(s.kind in ("value", "name") and not _misaligned(s, mine, theirs) for s in found):
        return ""
    fewer, more = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
    # every anchor of one held by the other, which may add one detail ("618大促期间（6月1日至6月20日）…"
    # / "6月1日到6月20日大促期间…"); more than one is another fact ("iOS 5.0 … App Store" / "安卓5.0 …")
    if not _held(fewer, more) or sum(not _held(frozenset((s,)), fewer) for s in more) > ANCHORS_ADDED:
        return ""
    rest_a, rest_b = significant_words(unanchored(a)), significant_words(unanchored(b))
    shared = len(rest_a & rest_b)
    if shared < ANCHORED_REST_SHARED or shared < ANCHORED_REST * max(len(rest_a), len(rest_b)):
        return ""
    return ", ".join(_quote(s) for s in sorted(fewer))


_TERM = re.compile(r"[^\W\d_]")  # an anchor with a letter in it is a term, not a value alone


def same_terms(a: Side, b: Side, a_core: str, b_core: str) -> str:
    """The anchors (values.anchors) two Chinese or Japanese statements of one type share, quoted,
    when one holds all the other's (one spelt two ways aside) and at most one more, whatever the
    words around them, and they are two terms or more (not values alone), or one term both deny
    something with; else "". A possible duplicate for a reader, never a merge: the words around
    may say two things of the same terms.

    Cases: "每次提交前都要先跑`make lint`" / "提交代码之前先执行make lint", "每晚的ETL任务把数据写入
    `ods`库" / "夜间ETL作业会写到ods这个库", "障害報告はSlackの#incidentsチャンネルに投稿する" /
    "インシデントの報告先はSlackの#incidents", "数据库相关的测试要连真实数据库，不要mock" / "测试里
    涉及数据库的部分用真实库跑，别mock数据库": a paraphrase shares few of its character bigrams (0.2
    to 0.4), too few for same_anchors, but keeps its terms of art, in Latin letters or spelt in its own
    script ("…挂在功能开关后面上线" / "…要通过feature flag控制上线", values.SPELLINGS). Not "障害報告は…#incidents…" /
    "デプロイ通知は…#deploys…", "…Jira的DATA项目" / "…Jira的DATA-REQ项目" (an anchor on each side
    only), nor "小林在学Python" / "李娜在学Python" alone (one term, nothing denied)."""
    mine, theirs = anchors(a_core), anchors(b_core)
    # a term one writes in Latin letters, the other in its own script, is one term (values.SPELLINGS)
    mine, theirs = mine | spelled(a_core, theirs - mine), theirs | spelled(b_core, mine - theirs)
    if not mine or not theirs:
        return ""
    fewer, more = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
    if not _held(fewer, more) or sum(not _held(frozenset((s,)), fewer) for s in more) > ANCHORS_ADDED:
        return ""
    terms = [s for s in fewer if _TERM.search(s)]
    if len(fewer) < 2 or not terms:
        if not (terms and "negation" in a.profile.signals and "negation" in b.profile.signals
                and _denied_in_clause(a_core) & _denied_in_clause(b_core)):
            return ""
    return ", ".join(_quote(s) for s in sorted(fewer))


def _denied_in_clause(text: str) -> frozenset[str]:
    """The words of each clause of `text` that holds a negation, from the negation to the end of
    the clause (to its start, for one that comes after what it negates): what `text` denies, read
    whole. Case: "回复末尾不要附总结" / "不需要在回答最后加总结" both deny a summary, four words apart."""
    lowered = unnegatable(text).lower()
    denied: set[str] = set()
    for after in (False, True):
        for match in _negation_matches(lowered, after=after):
            if after:
                cuts = list(_CLAUSE_END_MARK.finditer(lowered, 0, match.start()))
                clause = lowered[cuts[-1].end() if cuts else 0:match.start()]
            else:
                cut = _CLAUSE_END_MARK.search(lowered, match.end())
                clause = lowered[match.end():cut.start() if cut else len(lowered)]
            denied |= significant_words(clause)
    return frozenset(denied)


def _terms_verdict(a: Side, b: Side, a_core: str, b_core: str, both: tuple[str, str]) -> Verdict:
    """The review item of same_terms, or NOTHING: a possible conflict when only one announces a
    change or negates what the other says, else a possible duplicate."""
    if not (held := same_terms(a, b, a_core, b_core)):
        return NOTHING
    kind: PairKind = "conflict" if announces_change(a_core) != announces_change(b_core) or negates_the_other(
        a.profile, b.profile) else "duplicate"
    return Verdict("review", kind, f"the same terms ({held}) in other words: {_quote_pair(a_core, b_core)}", both,
                   "same_terms")


def _anchored(a: Side, b: Side, a_core: str, b_core: str, held: str, both: tuple[str, str]) -> Verdict:
    """The review item of same_anchors: a possible conflict when only one announces a change or
    negates what the other says, else a possible duplicate."""
    kind: PairKind = "conflict" if announces_change(a_core) != announces_change(b_core) or negates_the_other(
        a.profile, b.profile) else "duplicate"
    return Verdict("review", kind, f"the same anchors ({held}), the words around them alike: "
                   f"{_quote_pair(a_core, b_core)}", both, "same_anchors")


def _subject_or_facts(found: list["Swap"], a: str, b: str) -> bool:
    """another_subject or two_facts over the swaps that are not misaligned anchors (_misaligned)."""
    mine, theirs = anchors(a), anchors(b)
    real = [s for s in found if not (s.kind in ("value", "name") and _misaligned(s, mine, theirs))]
    return another_subject(real) or two_facts(real)


def _misaligned(swap: "Swap", mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether a value or name swapped is no swap: what one side has there the other holds elsewhere
    ("618大促期间（6月1日…" / "6月1日到…大促期间": 618 lined up with the 6 both hold)."""
    left, right = specifics(swap.left), specifics(swap.right)
    return bool((left.pinned | left.names) & theirs or (right.pinned | right.names) & mine)


def negates_the_other(a: Profile, b: Profile) -> bool:
    """Whether only one of two statements negates, and what it negates is among the other's words
    — aimed or not, a reader should weigh it as a possible conflict, not a duplicate.

    Case: "公開APIを変更したらCHANGELOG.mdを更新する" / "公開APIを変更してもCHANGELOG.mdは更新しない"
    hold the same anchors; "Terraformはまだ初心者" / "Terraformの経験がほとんどない" negates nothing
    the other says."""
    return ("negation" in a.signals) != ("negation" in b.signals) and bool(a.negated & b.words or b.negated & a.words)


def _held(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether each of `mine` is one of `theirs`, or the same spelt otherwise (_typo)."""
    return all(s in theirs or any(_typo(s, t) for t in theirs) for s in mine)


_SIBLING_CONTEXT = re.compile(r"\A(.{2,80}?[:：])\s*")


def sibling_items(a: str, b: str) -> tuple[str, str]:
    """Two statements that open with the same context — the heading an imported note's list
    items sat under ("Decisions: Use REST for the public API" / "Decisions: Use gRPC between
    services") — without it: what they share there says nothing of their being one fact or two.

    Case: an imported OpenClaw workspace listed sibling bullets under one heading as each
    other's possible conflicts."""
    found_a, found_b = _SIBLING_CONTEXT.match(a), _SIBLING_CONTEXT.match(b)
    if found_a and found_b and found_a.group(1) == found_b.group(1) and not found_a.group(1)[-2:-1].isdigit():
        rest_a, rest_b = a[found_a.end():], b[found_b.end():]
        if _TOKEN.search(rest_a) and _TOKEN.search(rest_b):
            return rest_a, rest_b
    return a, b


def one_sided_signal(a: Profile, b: Profile) -> bool:
    """One statement negates or announces a change and the other does not: not certainly the same.

    Case: "Write frontend unit tests with Jest" / "Frontend unit tests were switched to Vitest;
    don't add new Jest tests" share every word of the first, and would have been merged."""
    return a.signals != b.signals


# Two statements are alike both ways when this share of all their words is shared (Jaccard).
ALIKE = 0.5


def alike_both_ways(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether most words of either statement are the other's too, not only those of the shorter.

    Real case (LoCoMo, one dream of 1,000 observations): "Joanna can't have dairy." holds two
    words, both in every observation about her dairy-free desserts; it was listed as a possible
    duplicate of fifteen of them."""
    return len(a & b) >= ALIKE * len(a | b)


# Words that say something stopped being so: a retraction, not a plain "not". "stop" only before
# what stops ("stop squash-merging"): "not let anything stop him" retracts nothing (LoCoMo).
_RETRACTION = re.compile(r"\b(?:no longer|any ?more|stop(?:ped)?(?=\s+[\w-]+ing\b)|(?<!-)stopped\b|retired|"
                         r"dropped(?=(?:\s+[\w.-]+){0,3}\s+support\b)|dropped support|"
                         r"deprecated|decommissioned|discontinued|removed|reversed|postponed|cancell?ed|abandoned|"
                         r"(?:turned|switched) off|is off)\b"
                         r"|不再|(?:不用|不需要|无需|無需)再|下线|下線|废弃|弃用|停用|取消|廃止|延期|中止|もう",
                         re.IGNORECASE)


def announces_change(text: str) -> bool:
    """Whether a statement says that something changed or stopped ("were switched to Vitest",
    "Jenkinsは廃止済み", "no longer"), as opposed to a plain negation.

    Case: of two statements alike but for one's signal, "Frontend unit tests were switched to
    Vitest; don't add new Jest tests" against "Write frontend unit tests with Jest" is a possible
    conflict; "Use pnpm, not npm, to install packages" against "Install packages with pnpm;
    running npm install rewrites the lockfile", or "Marco is new to React" against "Marco has
    almost no React experience yet", a possible duplicate."""
    return retracts(text) or any(not _WHEN.search(text[max(0, m.start() - 12):m.start()])
                                 for m in _CHANGE.finditer(without_replacements(text)))


@lru_cache(maxsize=4096)  # asked of a statement for each of its candidates
def retracts(text: str) -> bool:
    """Whether a statement says that something stopped: no longer, retired, turned off, 不再, 廃止…"""
    return bool(_RETRACTION.search(text))


# A change verb after one of these tells when something is done, it announces nothing: "Fix any
# errors before moving to the next file".
_WHEN = re.compile(r"\b(?:before|after|when|while|without|by|for|on)\s+$", re.IGNORECASE)


def change_of_subject(a: Side, b: Side) -> tuple[str, str, tuple[str, str]] | None:
    """(the clause that announces a change, the statement whose subject it changes, the two
    quotes in a, b order) when only one side announces a change, in a clause that shares at least
    two words that name something with the other — before what it changed to, unless it says
    something stopped — and names something the other never mentions; else None.

    Cases: "Staging deploys moved to Wednesday" against "Staging deploys go out on Thursdays";
    "Switched the package manager to bun" against "We use pnpm as the package manager": the
    change names the new value, not the old one, so no negation or change is aimed at the
    other's words, and a new user's MEMORY.md kept both. "msw is no longer used in fieldnotes
    tests" against "In fieldnotes component and hook tests, mock the backend with msw"."""
    if announces_change(a.core) == announces_change(b.core):
        return None
    changing, other = (a, b) if announces_change(a.core) else (b, a)
    if not other.core:
        return None
    other_units = _units(other.core)
    for clause in clauses(changing.core):
        if not announces_change(clause):
            continue
        if retracts(clause):
            subject = clause
        else:  # what changed is named before what it changed to
            ends = [m.end() for m in _CHANGE.finditer(clause)]
            subject = clause[:ends[-1]] if ends else clause
            if not _naming_words(tuple(clause.lower().split())) - other.profile.words:
                continue
        if len(_units(subject) & other_units) >= 2:
            quotes = (_flat(other.core), _flat(changing.core))
            return clause, other.core, (quotes if changing is b else (quotes[1], quotes[0]))
    return None


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _units(text: str) -> frozenset[str]:
    """The significant words of `text`, a code span counting as one (`--print-to-pdf-no-header`
    and `--no-pdf-header-footer` share no word: they are two flags)."""
    spans = frozenset(" ".join(m.group(1).lower().split()) for m in _CODE_SPAN.finditer(text))
    # a command run with options names the command too: `pg_upgrade --link` is pg_upgrade
    spans |= frozenset(span.split()[0] for span in spans if " " in span and not span.startswith("-"))
    return frozenset(w for w in significant_words(_CODE_SPAN.sub(" ", text)) if w not in GENERIC) | spans


def _ordered(a: Side, b: Side, evidence: str, quotes: tuple[str, str], rule: str) -> Verdict:
    """A contradiction: the newer wins when the order is known, else it is left for review.

    Real case: two orchestkit memories checked out by git had one mtime; the tie was broken
    by file name, and a decision memo lost to the analysis it answered."""
    if a.time is None or b.time is None or a.time == b.time:
        return Verdict("review", "conflict", evidence + " (which is newer is unknown)", quotes, rule)
    return Verdict("supersede", "conflict", evidence, quotes, rule)


class Slot(NamedTuple):
    """A place where two statements differ once lined up word by word: each side's tokens (stems;
    CJK by character), and the same as written; the tokens of a's clause before and after it,
    and of b's."""

    a: list[str]
    b: list[str]
    a_written: list[str]
    b_written: list[str]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    b_before: tuple[str, ...] = ()
    b_after: tuple[str, ...] = ()


# A number is one token (9:30, 4.2, 40,000), so that it is lined up, and typed, whole; so is a
# run of katakana (a loanword, a name: "グロース" / "プラットフォーム"), which character by
# character would line up on its shared ー.
_KATAKANA_OR_CHARACTER = re.compile(r"[\u30a0-\u30ff\u31f0-\u31ff]+|.", re.S)
_ALIGN_TOKEN = re.compile(rf"{NUMBER}(?![A-Za-z0-9])|{_TOKEN.pattern}")


@lru_cache(maxsize=4096)  # a text is lined up against each of its candidates: tokenized once
def _align_tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the tokens two statements are lined up by: every word, stop words too, stemmed; a number
    whole; CJK by character, a katakana run whole — and the same tokens as written)."""
    keys, written = [], []
    for token in _ALIGN_TOKEN.findall(text):
        if _CJK_RUN.fullmatch(token):
            for piece in _KATAKANA_OR_CHARACTER.findall(token):
                keys.append(piece)
                written.append(piece)
        else:
            keys.append(stem(token.lower()))
            written.append(token)
    return tuple(keys), tuple(written)


@lru_cache(maxsize=256)  # a pair is lined up once, for its slots and for attribute_changed
def _differences(a: str, b: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """The places where two statements differ once lined up (difflib opcodes other than 'equal')."""
    ta, tb = _align_tokens(a)[0], _align_tokens(b)[0]
    return tuple(op for op in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes() if op[0] != "equal")


def changed_slots(a: str, b: str) -> list[Slot]:
    """Where two statements (or two clauses) differ once lined up."""
    (ta, wa), (tb, wb) = _align_tokens(a), _align_tokens(b)
    return [Slot(list(ta[i1:i2]), list(tb[j1:j2]), list(wa[i1:i2]), list(wb[j1:j2]), ta[:i1], ta[i2:], tb[:j1],
                 tb[j2:]) for _, i1, i2, j1, j2 in _differences(a, b)]


# A clause ends at a sentence end, a semicolon, a comma (not one in 40,000), a colon or dash
# before a space, a bracket.
_CLAUSE_END_MARK = re.compile(r"[;；。！？!?，、：()（）\[\]「」\n]|,(?!\d)|(?<=\w)[.:](?=\s|$)|\s[—–-]+\s|—")


@lru_cache(maxsize=4096)  # a statement is lined up against each of its candidates: split once
def clauses(text: str) -> tuple[str, ...]:
    """A statement's clauses, in order (a clause without a word is no clause)."""
    return tuple(c.strip() for c in _CLAUSE_END_MARK.split(text) if _TOKEN.search(c))


@lru_cache(maxsize=256)
def aligned_clauses(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """The clauses of `a` lined up with those of `b`: each clause goes with the clause of the other
    side that shares most of its significant words; clauses that go together (through either
    side) are joined, in order. A clause that shares nothing is an aside, lined up with nothing.

    Case: "The line length limit is 88 characters (black's default)" / "The line length limit
    is 120 characters; ruff is configured to match": lined up as wholes, the value and the two
    asides are three places that differ; clause to clause, one value changed and each side has
    an aside of its own. "Target Python 3.9 so the package runs on the customer's servers" /
    "Target Python 3.11; the customer's servers run 3.11 since the March upgrade": one clause
    goes with both of the other's, and is lined up with the two together."""
    ca, cb = clauses(a), clauses(b)
    if (len(ca) <= 1 and len(cb) <= 1) or not ca or not cb:
        return ((a, b),)
    wa, wb = [significant_words(c) for c in ca], [significant_words(c) for c in cb]
    group = list(range(len(ca) + len(cb)))  # union-find over the clauses of both sides, b's after a's

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for mine, theirs, offset, other_offset in ((wa, wb, 0, len(ca)), (wb, wa, len(ca), 0)):
        for i, words in enumerate(mine):
            best = max(range(len(theirs)), key=lambda j: (len(words & theirs[j]), -j))
            if words & theirs[best]:
                group[root(offset + i)] = root(other_offset + best)
    joined: dict[int, tuple[list[str], list[str]]] = {}
    for i, clause in enumerate(ca):
        joined.setdefault(root(i), ([], []))[0].append(clause)
    for j, clause in enumerate(cb):
        joined.setdefault(root(len(ca) + j), ([], []))[1].append(clause)
    return tuple((" ".join(x), " ".join(y)) for x, y in joined.values() if x and y)


def aligned_slots(a: str, b: str) -> list[Slot]:
    """Where two statements differ once lined up clause to clause (aligned_clauses)."""
    return [slot for x, y in aligned_clauses(a, b) for slot in changed_slots(x, y)]


def _has_digit(tokens: list[str]) -> bool:
    return any(map(str.isdigit, "".join(tokens)))


class Swap(NamedTuple):
    """A place where each statement has what the other does not: `left` and `right` as written;
    `kind` 'value' (a value for another of its kind: values.same_kind), 'name' (one name for
    another), 'word' (one plain word for another) or 'wording' (other words, maybe for the same
    thing); `subject` when it opens its clause, before what the clause says of it."""

    left: str
    right: str
    kind: str
    subject: bool
    crowded: bool = False  # its clauses differ in more than CROWDED places besides
    # the words of each side's clause outside it, and in it: what the clauses say besides, and what differs
    rest: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    held: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    # other words, among which each side has a name of its own ("Terraform modules" / "Helm charts")
    named: bool = False


CROWDED = 3


def swaps(a: str, b: str, a_words: frozenset[str], b_words: frozenset[str]) -> list[Swap]:
    """The places where two statements, lined up clause to clause, each have what the other does
    not: a value of one kind for another, an identifier for another ("m1" / "m2"), or words that
    name something the other never mentions, sorted by what they are (name_kind)."""
    return list(iter_swaps(a, b, a_words, b_words))


def iter_swaps(a: str, b: str, a_words: frozenset[str], b_words: frozenset[str]) -> Iterator[Swap]:
    """swaps, one at a time, in order: a judge that has seen enough from the first stops there
    (most pairs a dream lines up are about two subjects, told by the first place they differ)."""
    for x, y in aligned_clauses(a, b):
        slots = changed_slots(x, y)
        crowded = len(slots) > CROWDED + 1
        for slot in slots:
            left_value, right_value = _leading_value(slot.a, slot.a_written), _leading_value(slot.b, slot.b_written)
            if left_value and right_value and same_kind(left_value, right_value) and left_value != right_value:
                yield Swap(_joined(left_value), _joined(right_value), "value",
                            opens_clause(slot, "value", b_words), crowded, *_around(slot))
                continue
            left, right = _content(slot.a, slot.a_written, b_words), _content(slot.b, slot.b_written, a_words)
            if _has_digit(slot.a_written) and _has_digit(slot.b_written) and not (left and right):
                yield Swap(_joined(slot.a_written), _joined(slot.b_written), "name",
                            opens_clause(slot, "value", b_words), crowded, *_around(slot))
            elif left and right and not _typo(left, right):
                kinds = {name_kind(left, a), name_kind(right, b)}
                kind = "name" if kinds == {"name"} else "word" if kinds <= {"name", "word"} else "wording"
                yield Swap(left, right, kind, opens_clause(slot, kind, b_words), crowded, *_around(slot),
                           named=kind == "wording" and _names_one(left, a) and _names_one(right, b))


def _leading_value(keys: list[str], written: list[str]) -> list[str]:
    """The value a slot opens with, as written, the words around it left out ("is now $25,000":
    25,000; "16にアップグレードされた": 16), or nothing."""
    return list(_leading_value_of(tuple(keys), tuple(written)))


@lru_cache(maxsize=65536)
def _leading_value_of(keys: tuple[str, ...], written: tuple[str, ...]) -> tuple[str, ...]:
    tokens = [w for k, w in zip(keys, written) if k not in STOP_WORDS and k not in GENERIC and w.strip()
              and not _PARTICLE.fullmatch(w)]
    while tokens and _SAYS_VALUE_CHANGED.search(tokens[0]):  # "was cut to $25,000"
        tokens = tokens[1:]
    for end in range(min(len(tokens), 4), 0, -1):
        if value_kind(tokens[:end]):
            return tuple(tokens[:end])
    return ()


# A Japanese particle: grammar around a value, never the value ("は15:00" / "が13:00").
_PARTICLE = re.compile("[はがをにへでとものや]")


def _joined(written: list[str]) -> str:
    return "".join(written) if all(_CJK_RUN.fullmatch(t) or t.isdigit() for t in written) else " ".join(written)


def _other_words(a: str, b: str, a_words: frozenset[str], b_words: frozenset[str]) -> bool:
    """Whether a place where the two differ (other than a value) names something on one side
    only: "… 88 characters (black's default)" against "… 120 characters; ruff is configured
    to match" is another value and other words."""
    for slot in changed_slots(a, b):
        left, right = _leading_value(slot.a, slot.a_written), _leading_value(slot.b, slot.b_written)
        a_keys, a_written, b_keys, b_written = slot.a, slot.a_written, slot.b, slot.b_written
        if left and right and same_kind(left, right):  # the value: what else is in its place counts
            a_keys, a_written = _without(a_keys, a_written, left)
            b_keys, b_written = _without(b_keys, b_written, right)
        if (_content(a_keys, a_written, b_words) and not _SAYS_VALUE_CHANGED.search(_joined(a_written))) or (
                _content(b_keys, b_written, a_words) and not _SAYS_VALUE_CHANGED.search(_joined(b_written))):
            return True
    return False


# Words that say the value changed, next to the new value: no other words than the change itself
# ("DBはPostgreSQL 17にアップグレードした", "提出期限が13:00に早まった", "budget was cut to $25,000").
_SAYS_VALUE_CHANGED = re.compile(
    r"^(?:(?:has been|have been|was|were|is|are|got|now)\s+)*(?:now|changed|moved|cut|raised|reduced|increased|"
    r"lowered|bumped|upgraded|downgraded|pushed back|brought forward)(?:\s+(?:to|from))?$"
    r"|^[はがをにへ]*(?:変わった|変更(?:した|された|になった)?|早まった|遅くなった|前倒し(?:になった|された)?|"
    r"延びた|減額|増額|減った|増えた|上げた|下げた|アップグレード(?:した|された)|移行した)$"
    r"|^(?:改为|改成|调整为|下调为|上调为|降为|提高到|降到|升级到|升级为)$", re.IGNORECASE)


def _without(keys: list[str], written: list[str], value: list[str]) -> tuple[list[str], list[str]]:
    """A slot's tokens less the value in it (as written)."""
    for i in range(len(written) - len(value) + 1):
        if written[i:i + len(value)] == value:
            return keys[:i] + keys[i + len(value):], written[:i] + written[i + len(value):]
    return keys, written


# What begins what a clause says of its subject: a copula, a negation, or a verb that names
# nothing (GENERIC).
_PREDICATE = frozenset(("is", "are", "was", "were", "be", "been", "has", "have", "had", "是", "为", "は", "在",
                        "not", "never", "don", "doesn", "no", "avoid", "不", "别", "別"))


def opens_clause(slot: Slot, kind: str, other_words: frozenset[str]) -> bool:
    """Whether a slot holds what its clause is about rather than what it says of it: nothing but
    words that name nothing before what it names; a value (a number in a name: "Release 4.2",
    "Sprint 41") may follow one word, if more follow it.

    Case: "Staging API dashboard: …/staging-api" / "Production API dashboard: …/prod-api", "Priya
    reviews every PR that touches the ledger service" / "Omar reviews every PR …": two subjects,
    two facts. "Sprints are two weeks long" / "… three weeks long", "Tom works on the Growth
    team" / "… the Platform team" and "The user prefers terse answers" / "User likes short,
    direct answers" differ in what is said of one subject."""
    lead = 0 if kind == "value" else next(
        (i for i, written in enumerate(slot.a_written) if _naming_words((written.lower(),)) - other_words),
        len(slot.a))
    before = slot.before + tuple(slot.a[:lead])
    if any(token in _PREDICATE or token in GENERIC for token in before):
        return False
    weight = _weight(before)
    if kind == "value":
        return weight == 0 or (weight == 1 and _weight(slot.after) > 1)
    return weight == 0


def _weight(tokens: tuple[str, ...]) -> int:
    """How many significant words and numbers `tokens` hold (a CJK character counts half)."""
    cjk = sum(1 for t in tokens if _CJK_RUN.fullmatch(t))
    return cjk // 2 + sum(1 for t in tokens if not _CJK_RUN.fullmatch(t)
                          and ((len(t) > 2 and t not in STOP_WORDS) or any(c.isdigit() for c in t)))


_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_NAME_UNIT = re.compile(r"[A-Za-z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*|[\u30a0-\u30ff\u31f0-\u31ff]+")
_PROPER = re.compile(r"[A-Z0-9][\w.+#-]*|\w*[A-Z0-9][\w.+#-]*")  # VS, iOS, GitHub, S3, m1


# Characters that do the work of grammar, not of naming: "目标是" / "计划在第" are other words.
_FUNCTION_HAN = re.compile("[的了是在和与及都也就要会能把被给对从向于为着过所之其这那个们第有没不]")


def name_kind(content: str, text: str) -> str:
    """What one side of a swap (`content`, of `text`) is: 'name' (a proper name or identifier:
    capitalized words, "iOS", a code span, a run of Latin letters or of katakana in CJK text, a
    short word of kanji that does no grammar), 'word' (one plain word: "pnpm", "piano", "unit")
    or 'wording' (several plain words: "prefers terse" / "likes short direct").

    A name stands for one thing; two names in one place are one thing or another, a possible
    conflict ("Growth" / "Platform", "グロース" / "プラットフォーム"). Several plain words are
    more often the same thing said otherwise."""
    words = content.split()
    if not _CJK_RUN.search(content):
        if any(f"`{w}" in text or f"{w}`" in text for w in words) or (
                len(words) <= 3 and all(_PROPER.fullmatch(w) and not _first_word(w, text) for w in words)):
            return "name"
        return "word" if len(words) == 1 else "wording"
    units = _NAME_UNIT.findall(content)
    if units:
        return "name" if len(units) == 1 else "wording"
    joined = "".join(words)
    return "name" if _KANJI.fullmatch(joined) and len(joined) <= 4 and not _FUNCTION_HAN.search(joined) else "wording"


def _names_one(content: str, text: str) -> bool:
    """Whether other words (`content`, of `text`, in English) hold a name: a capitalized word or
    an identifier that does not only open its sentence ("Terraform modules")."""
    return not _CJK_RUN.search(content) and any(
        _PROPER.fullmatch(w) and not _first_word(w, text) for w in content.split())


def _first_word(word: str, text: str) -> bool:
    """Whether `word` is capitalized only because it opens its sentence."""
    if not word[:1].isupper() or word[1:].lower() != word[1:]:
        return False
    return bool(re.search(rf"(?:^|[.!?:;]\s+|\n\s*){re.escape(word)}\b", text))


def another_subject(found: list[Swap]) -> bool:
    """The first place the two differ is what they are about: two facts about two things, not
    one fact changed or reworded (opens_clause). Other words there are another subject only
    when the rest of the clause is the same: "Bugs in the ingestion pipeline are tracked in
    Linear" / "Feature requests for the ingestion pipeline are tracked in Linear" are two
    things, "Generate migrations with alembic and review the file by hand" / "When a schema
    change needs a migration, autogenerate it with alembic and hand-review the file" one rule."""
    return bool(found) and found[0].subject and (found[0].kind != "wording" or not found[0].crowded)


def _numbered_names(text: str, value: str) -> bool:
    """Whether `value` is also part of a name in `text`, glued to its letters: "fact 35: service35
    owns queue35" numbers a service and a queue, one of a series ("fact 95: service95 owns
    queue95" is another), where "Standup is at 9:30" / "… 10:00" changes a value."""
    # Latin letters (「17を」 is a value and a particle), and not a version's lone v ("v18")
    number = re.escape(value)
    glued = rf"(?:[A-Za-z_]{{2}}|(?<![A-Za-z])[A-UW-Za-uw-z_]){number}(?!\d)|(?<!\d){number}[A-Za-z_]"
    return bool(value) and re.search(glued, text) is not None


def value_changed(found: list[Swap]) -> bool:
    """The one place two statements differ holds a value, and another of its kind in the other:
    the value changed.

    Cases: "Standup is at 9:30" / "Standup is at 10:00", "Staging deploys happen every Thursday"
    / "… every Wednesday", "本番環境のデータベースはPostgreSQL 16" / "… 17" — no negation word, a
    contradiction all the same; word overlap alone read each as one fact."""
    return len(found) == 1 and found[0].kind == "value"


def name_swapped(found: list[Swap]) -> bool:
    """The one place two statements differ holds a name, or a word, for another: one thing or
    another, maybe a conflict ("Tom works on the Growth team" / "… the Platform team"; "The team
    uses pnpm to install packages" / "… bun …"), maybe two facts ("Alice is learning Japanese" /
    "… the piano"). Not certain: listed for review."""
    return len(found) == 1 and found[0].kind in ("name", "word")


# Other words are a rewording only when they are a small part of what each statement says.
REWORDED_SHARE = 1 / 3


# Outside the one place two statements differ, this share of each one's words is in the other.
SAME_REST = 2 / 3


def rest_is_same(swap: Swap) -> bool:
    """Whether, but for the one place they differ, two statements say the same: SAME_REST of the
    words of each one's clause outside it are in the other — all of them, when a plain word
    stands for another ("The team uses pnpm / bun to install packages"; "Nate is participating
    in a video game tournament that he finds intense" / "Nate practices for video game
    tournaments" are two facts, LoCoMo), and more than one word ("Joanna can't have dairy." /
    "Joanna now uses an external drive for backups" share a name, no more). "Tom works on the
    Growth team" / "Tom works on the Platform team as of October", "The user's main editor is VS
    Code" / "… is Neovim (LazyVim config)" are the same but for the team, the editor.

    Real case (LoCoMo, one dream of 1,000 observations): "Joanna can't have dairy." / "Nate
    bakes desserts that Joanna loves." differ in one place, around which they share one name:
    45 such pairs were listed as one name for another."""
    (rest_a, rest_b), (held_a, held_b) = swap.rest, swap.held
    share = 1.0 if swap.kind == "word" else SAME_REST
    return (len(rest_a) >= 2 and len(rest_b) >= 2 and len(rest_a & (rest_b | held_b)) >= share * len(rest_a)
            and len(rest_b & (rest_a | held_a)) >= share * len(rest_b))


def _around(slot: Slot) -> tuple[tuple[frozenset[str], frozenset[str]], tuple[frozenset[str], frozenset[str]]]:
    """(the words of each side's clause outside the slot, the words in it)."""
    return ((_words_of(slot.before) | _words_of(slot.after), _words_of(slot.b_before) | _words_of(slot.b_after)),
            (_words_of(tuple(slot.a)), _words_of(tuple(slot.b))))


@lru_cache(maxsize=65536)
def _words_of(tokens: tuple[str, ...]) -> frozenset[str]:
    """What lined-up tokens name, compared across a pair: a Latin word's stem (not a stop word,
    nor one that names nothing), a CJK character other than kana grammar."""
    return frozenset(t for t in tokens if (len(t) > 2 and t not in STOP_WORDS and t not in GENERIC
                                           and t not in _NEGATING) or _NAMING_CHARACTER.fullmatch(t))


# A CJK character that names (kanji, katakana, hangul): hiragana is grammar and inflection.
_NAMING_CHARACTER = re.compile(r"[\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def swapped_words(found: list[Swap]) -> bool:
    """The one place two statements differ holds other words, no value or name, and they are at
    most REWORDED_SHARE of what each one's clause says: the same statement said otherwise, a possible
    duplicate ("Generate migrations with alembic and review the file by hand" / "When a schema
    change needs a migration, autogenerate it with alembic and hand-review the file").

    Real case (LoCoMo, one dream of 1,000 observations): 220 pairs of one person's observations
    that share a topic were listed as the same statement in other words, "Nate tried to stay
    positive despite the setback in the video game tournament" / "Nate practices for video
    game tournaments" among them; another fact about the same thing is no duplicate. Nor are other
    words that name a thing on each side: "Dana maintains the Terraform modules for the data
    platform" / "… the Helm charts …" are two of her charges."""
    if len(found) != 1 or found[0].kind != "wording" or found[0].named:
        return False
    (rest_a, rest_b), (held_a, held_b) = found[0].rest, found[0].held
    return (len(held_a) <= REWORDED_SHARE * len(held_a | rest_a)
            and len(held_b) <= REWORDED_SHARE * len(held_b | rest_b))


# What two statements say outside the one place they differ, when it is the same, holds this many words.
SAME_STATEMENT_REST = 4


def reworded_in_one_clause(found: list[Swap], a_words: frozenset[str], b_words: frozenset[str]) -> bool:
    """The one place two statements differ holds other words (no value or name), at most
    REWORDED_SHARE of what each statement says, and the rest of the two statements is the same
    (SAME_REST of each one's words, SAME_STATEMENT_REST at least), though the clause it sits in
    has too few words of its own to tell (rest_is_same): the same rule said otherwise, a
    possible duplicate.

    Case: "Never commit directly to main; open a PR even for one-line fixes." / "Don't push
    straight to main — even a one-line fix goes through a PR.": the clause that differs says
    only "main" besides; the clause that follows is the same."""
    if len(found) != 1 or found[0].kind != "wording" or found[0].named or min(map(len, found[0].rest)) >= 2:
        return False  # (a clause with words enough of its own is for rest_is_same to tell)
    held_a, held_b = found[0].held
    rest_a = frozenset(w for w in a_words - held_a if w not in GENERIC and w not in _NEGATING)
    rest_b = frozenset(w for w in b_words - held_b if w not in GENERIC and w not in _NEGATING)
    shared = rest_a & rest_b
    return (len(shared) >= SAME_STATEMENT_REST and len(shared) >= SAME_REST * len(rest_a)
            and len(shared) >= SAME_REST * len(rest_b)
            and len(held_a) <= REWORDED_SHARE * len(held_a | rest_a)
            and len(held_b) <= REWORDED_SHARE * len(held_b | rest_b))


# Other words may be half of what each clause says when both statements deny the same thing.
REWORDED_DENIED_SHARE = 1 / 2


def same_denial(a: str, b: str, found: list[Swap]) -> str:
    """The word both statements deny, when both deny it outside the one place they differ, which
    holds other words (no value or name), at most REWORDED_DENIED_SHARE of what each clause says,
    the rest of it the same (rest_is_same); else "". Two sentences that deny one thing and
    differ in a short phrase of what they say of one subject are one statement in other words,
    a possible duplicate.

    Case: "The user prefers terse answers with no preamble." / "User likes short, direct answers
    without any preamble.": "prefers terse" / "likes short direct" is two words of five, too
    many for swapped_words; both deny a preamble."""
    if len(found) != 1 or found[0].kind != "wording" or found[0].named or not rest_is_same(found[0]):
        return ""
    (rest_a, rest_b), (held_a, held_b) = found[0].rest, found[0].held
    if len(held_a) > REWORDED_DENIED_SHARE * len(held_a | rest_a) or len(held_b) > REWORDED_DENIED_SHARE * len(
            held_b | rest_b):
        return ""
    shared = (_denied(a) & _denied(b) & rest_a & rest_b) - held_a - held_b
    return ", ".join(sorted(shared))


def _denied(text: str) -> frozenset[str]:
    """The stems of the words within reach of a negation in `text`, whole scope or not ("no preamble")."""
    return frozenset(stem(token) for scope, _, _, _ in _negations(unnegatable(text).lower()) for token in scope
                     if token not in _AUXILIARY_NAMES)


_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)*")


def extended_identifier(a: str, b: str) -> str:
    """An identifier of one statement that is one of the other's with a part added ("DATA" /
    "DATA-REQ", "api" / "api-v2"), quoted as the two, when each is on its side only; else "".
    Lining up word by word sees only the part added, which names nothing the other lacks.

    Case: "数据管道的缺陷登记在Jira的DATA项目。" / "数据管道的需求登记在Jira的DATA-REQ项目。" differ
    in what is logged and in the project: two facts, not one name for another."""
    mine, theirs = set(_IDENTIFIER.findall(a)), set(_IDENTIFIER.findall(b))
    for x in mine - theirs:
        for y in theirs - mine:
            short, long = (x, y) if len(x) < len(y) else (y, x)
            joint = long[len(short):len(short) + 1]
            # a word and its hyphenated compound ("hand" / "hand-review") are words, not identifiers
            if long.startswith(short) and joint and joint in "-_./" and (
                    joint != "-" or not (short.islower() and long.islower())):
                return f"{_quote(x)} / {_quote(y)}"
    return ""


def two_facts(found: list[Swap]) -> bool:
    """Two or more places differ, one of them a value or a name: two facts of one shape, not one
    fact changed.

    Cases: ten entries "Fact N: module mN owns the billing flow qNx" became one memory; "The
    user wants two-space indentation in JavaScript files" / "… four-space indentation in Python
    files" are two rules; "Never run `terraform apply` without reviewing the plan output" /
    "Never run `kubectl delete` without checking the current context" two more."""
    return len(found) > 1 and any(s.kind in ("value", "name") for s in found)


def _swap_evidence(found: list[Swap]) -> str:
    return ", ".join(f"{_quote(s.left)} / {_quote(s.right)}" for s in found)


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
new yet still now then thing things way part done do does both same other others
""".split())


@lru_cache(maxsize=8192)  # the same few words differ between a statement and each of its candidates
def _naming_words(keys: tuple[str, ...]) -> frozenset[str]:
    """The significant words of a slot's tokens (lower-cased as written: "iOS" stems to a word
    too short to count) that name something (not GENERIC, not one letter)."""
    text = "".join(t if _CJK_RUN.fullmatch(t) else f" {t} " for t in keys)
    return frozenset(w for w in significant_words(text)
                     if w not in GENERIC and w not in _NEGATING and len(w) > 1 and not _PARTICLE.fullmatch(w))


# Negation words name nothing: "Never commit directly" / "Don't push straight" differ in
# "commit directly" / "push straight".
_NEGATING = frozenset(("never", "avoid", "without", "cannot"))


def _content(keys: list[str], written: list[str], other_words: frozenset[str]) -> str:
    """The words of one side of a slot (as written) that name something the other statement never mentions."""
    words = _naming_words(tuple(w.lower() for w in written)) - other_words
    return _written(tuple(keys), tuple(written), words) if words else ""


@lru_cache(maxsize=8192)
def _written(keys: tuple[str, ...], written: tuple[str, ...], words: frozenset[str]) -> str:
    """The tokens of a slot (as written) that hold one of `words`."""
    joiner = "" if all(_CJK_RUN.fullmatch(t) for t in written) else " "
    return joiner.join(t for key, t in zip(keys, written)
                       if any(w in stem(key) or ((len(key) > 1 or _CJK_RUN.match(key)) and key in w) for w in words))


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
                           quotes if a.statement else (quotes[1], quotes[0]), "document_says")
    similarity = weighted_jaccard(a.profile.words, b.profile.words, rarity)
    ratio = size_ratio(a.core, b.core)
    near = similarity >= NEAR_IDENTICAL and ratio >= NEAR_SIZE_RATIO and not a.statement and not b.statement
    # a date or a count moved in a file saved again ("Last reviewed: 2026-05-02" / "… 2026-05-09")
    # does not stop a merge, which keeps both texts; a rule reversed does
    conflict = conflict_evidence(a, b, values=not near)
    if conflict:
        return Verdict("review", "conflict", *conflict, "conflict_evidence")
    if near:
        passage, quotes = _shared_passage(a.text, b.text)
        return Verdict("merge", "duplicate", f"near-identical documents (weighted similarity {similarity:.2f}, "
                       f"sizes {ratio:.2f} apart): {passage}", quotes, "near_identical")
    if similarity >= DOCUMENT_REVIEW:
        passage, quotes = _shared_passage(a.text, b.text)
        return Verdict("review", "duplicate", f"weighted similarity {similarity:.2f}, sizes {ratio:.2f} apart: "
                       + passage, quotes, "weighted_jaccard")
    for restating, restated, first in ((a, b, True), (b, a, False)):
        if restated_by := restates(restated.text, restating.text):
            lead, where = restated_by
            quotes = (lead, where) if not first else (where, lead)
            return Verdict("review", "duplicate", f"what one opens with, the other says: {_quote(lead)}", quotes,
                           "restates")
    return NOTHING


# A memory's lead is restated only when it says this much (a heading or a one-line label is no
# statement), and one paragraph of the other holds this share of its words.
RESTATED_WORDS = 8
RESTATED_SHARE = 0.8


def restates(document: str, other: str) -> tuple[str, str] | None:
    """(the lead of `document`, the paragraph of `other` that says it) when one paragraph of
    `other` holds RESTATED_SHARE of the words of `document`'s lead — the first paragraph of what
    it says, its main statement — and says one of its sentences whole (document_says), without
    a conflict between them; else None.

    Real case (application-pipeline): `feedback_rules_are_additive.md` opens "New rules AMEND
    existing rules. They never replace them. Every rule ever established remains in force
    unless explicitly revoked by the user.", which the unified rules file says as its
    PRINCIPLE ("New rules AMEND, never overwrite. Every rule ever established …"): one
    memory's statement held inside a longer one, a possible duplicate that was listed as a
    conflict."""
    lead = _lead(document)
    wanted = significant_words(lead)
    if len(wanted) < RESTATED_WORDS:
        return None
    for paragraph in other.split("\n\n"):
        words = significant_words(paragraph)
        if len(wanted & words) >= RESTATED_SHARE * len(wanted) and any(
                document_says(paragraph, sentence) for sentence in sentences(lead)) and not is_contradiction(
                Profile.of(lead), Profile.of(paragraph), 0.0):
            return _flat(lead), _flat(paragraph)
    return None


def _lead(document: str) -> str:
    """A document's first paragraph that says something: not a heading, a list, a table or code."""
    for paragraph in core_text(document).split("\n\n"):
        lines = [line for line in paragraph.strip().split("\n") if line.strip()]
        if lines and not _STRUCTURE.match(lines[0]):
            return " ".join(lines)
    return ""


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


# Where a sentence ends, its closing mark left out when two sentences are compared whole
_CLOSING = " .。!！?？"


def goes_on_from(a: Side, b: Side) -> Verdict | None:
    """A merge when the newer statement opens with the older one whole, as a sentence of its own,
    and goes on ("勝手にライブラリのバージョンを上げないで" / "勝手にライブラリのバージョンを上げないで。
    上げるときはPRの説明に変更履歴のリンクを貼って"): it repeats it and adds, so it extends it,
    and a merge keeps every line of both. Not when the older is a few words only, nor when what
    follows takes it back or negates (the other rules decide those)."""
    if a.time is None or b.time is None or a.time == b.time:
        return None
    older, newer = (a, b) if cast(datetime, a.time) < cast(datetime, b.time) else (b, a)
    said = _flat(older.core).rstrip(_CLOSING)
    parts = sentences(newer.core)
    if len(parts) < 2 or len(older.profile.words) < 3 or len(sentences(older.core)) != 1:
        return None
    if _flat(parts[0]).rstrip(_CLOSING) != said or is_contradiction(a.profile, b.profile, 0.0):
        return None
    added = _flat(" ".join(parts[1:]))
    if retracts(added) or Profile.of(added).signals_against(older.profile):
        return None  # "Not anymore: they moved to Mondays" takes back what it repeated
    return Verdict("merge", "duplicate", f"repeats {_quote(said)} whole and goes on: {_quote(added)}",
                   (_flat(a.core), _flat(b.core)), "goes_on")


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


def conflict_evidence(a: Side, b: Side, *, values: bool = True) -> tuple[str, tuple[str, str]] | None:
    """Between documents: a sentence of one that conflicts with a sentence of the other about the
    same thing (the two alike: CONFLICT_SENTENCE_OVERLAP and at least three words shared, and
    sentences_conflict), the two quoted; None when there is none.

    Case: "Skipped tests are an anti-pattern" was archived as contradicted by "Run Python
    inside nix-shell": two documents that share vocabulary and differ in negation words. A
    conflict between documents is a claim about two sentences, so it names them. Without
    `values`, a value changed between two sentences is not one. Two shared words are enough
    when one of the sentences says something stopped: "The in-place `pg_upgrade` on
    `db-prod-1` is off." against "Upgrade in place with `pg_upgrade --link` on the existing
    VMs." (a status memo and the plan it reverses)."""
    held_a, held_b = " ".join(a.text.split()), " ".join(b.text.split())
    mine = [(s, Profile.of(s)) for s in claims(a.text) if " ".join(s.split()) not in held_b]
    theirs = [(s, Profile.of(s)) for s in claims(b.text) if " ".join(s.split()) not in held_a]
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
            if (count >= 3 or (count == 2 and (retracts(sentence) or retracts(other)))) and (
                    found := sentences_conflict(Side(sentence, profile), Side(other, other_profile),
                                                           values=values)):
                return f"possible conflict: {found.evidence}", (_flat(sentence), _flat(other))
    return None


# The rules that may find a conflict between two sentences of two documents: a signal aimed at
# what the other says, a value changed, a change announced to what the other says.
_SENTENCE_RULES = frozenset(("is_contradiction", "value_changed", "attribute_changed", "change_of_subject"))


def sentences_conflict(a: Side, b: Side, *, values: bool = True) -> Verdict | None:
    """The statement rules' verdict on two sentences of two documents when it is a conflict by a
    rule that names what changed (_SENTENCE_RULES) and the two are about one subject (neither
    another_subject nor two_facts); else None. One name for another, or one signal alike
    sentences do not share, is not enough where two long documents offer many pairs.

    Real cases (application-pipeline): "Fix the base templates, not the historical outputs."
    against "… output files were patched directly instead of fixing base templates." — two
    sentences that agree; "Moves job-track entries in `active/` older than 72h to
    `research_pool/` …" against "Job entries >72h moved to research_pool." — the same rule
    said twice.

    Then, however else the two differ: what one says stopped and the other says (retracted_object)."""
    if (verdict := _rule_conflict(a, b, values=values)) is not None:
        return verdict
    if stopped := retracted_object(a.core, b.core):
        return Verdict("review", "conflict", f"one says {_quote(stopped)} stopped, the other says it: "
                       f"{_quote_pair(a.core, b.core)}", (_flat(a.core), _flat(b.core)), "retracted_object")
    return None


def _rule_conflict(a: Side, b: Side, *, values: bool) -> Verdict | None:
    """sentences_conflict by the statement rules (_SENTENCE_RULES), or None."""
    verdict = judge_statements(a, b, 1.0, CONFLICT_SENTENCE_OVERLAP)
    if verdict.kind != "conflict" or verdict.rule not in _SENTENCE_RULES or (
            verdict.rule == "value_changed" and not values):
        return None
    if verdict.rule == "is_contradiction" and (only_existential(a.text) or only_existential(b.text)
                                               or changed_to_only(a.profile, b.profile)):
        return None
    if verdict.rule == "is_contradiction" and (code := negated_code(a.core, b.core)):
        # the very code one forbids the other prescribes: whatever else differs, one reverses the other
        return Verdict(verdict.outcome, verdict.kind, f"one says not to {_quote(code)}, the other to: "
                       f"{_quote_pair(a.core, b.core)}", verdict.quotes, "negated_code")
    found = swaps(a.core, b.core, a.profile.words, b.profile.words)
    if another_subject(found) or two_facts(found):
        return None
    return verdict


# What a sentence says stopped, named before or after the words that say so: 「XをやめY」「Xは廃止」,
# 不再用X, X已下线, "X is no longer …", "stopped using X".
_STOPPED = re.compile(
    r"([^\s、。，,；;：:（）()「」*`をはがもにでと]{2,30})を(?:やめ|廃止し|中止し|停止し)"
    r"|([^\s、。，,；;：:（）()「」*`をはがもにでと]{2,30})(?:は|が)(?:廃止|中止|停止|使われなくな)"
    r"|(?:不再(?:使用|用)|停用了?|弃用了?|废弃了?|下线了?)([^\s，。、；;：:（）()*`]{2,20})"
    r"|([^\s，。、；;：:（）()*`]{2,20}?)(?:已经|已)(?:停用|弃用|废弃|下线)"
    r"|\b([\w.-]+(?:\s+[\w.-]+)?)\s+(?:is|are|was|were|has been|have been)\s+no longer\b"
    r"|\b(?:stopped using|no longer uses?|dropped(?: support for)?|retired)\s+([\w.-]+(?:\s+[\w.-]+){0,2})",
    re.IGNORECASE)


def retracted_object(a: str, b: str) -> str:
    """What one sentence says stopped (_STOPPED) when the other says it, as written and outside its
    own negations, and it names something: a term of Latin letters or an identifier, or four
    Chinese or Japanese characters; else "". Between documents, where two long sentences differ
    in too many places for the statement rules.

    Case: "受注確定時の在庫引当は、PostgreSQLの行ロックで排他する" against "引当の排他はPostgreSQLの行ロックを
    やめ、SKUごとのRedisロック…に切り替えた": a decision memo and the postmortem that reversed it share
    0.35 of their bigrams."""
    for stopping, other in ((a, b), (b, a)):
        for named in stopped_things(stopping):
            lowered, wanted = other.lower(), named.lower()
            # a Latin name as a whole word, where it stands; a Chinese or Japanese one within the words
            found = re.search(rf"(?<![\w-]){re.escape(wanted)}(?![\w-])" if named.isascii() else re.escape(wanted),
                              lowered)
            if found is None:
                continue
            at = found.start()
            denied = [(start, end) for _, start, end, _ in _negations(unnegatable(lowered))]
            if not any(start <= at < end for start, end in denied) and not retracts(other):
                return named
    return ""


# What a text that says something stopped holds, lower-cased: a mark of each of _STOPPED's alternatives
_STOP_MARKS = ("no longer", "stopped using", "dropped", "retired", "やめ", "廃止", "中止", "停止", "使われなくな",
               "不再", "停用", "弃用", "废弃", "下线")
# ... as a case-sensitive search (SQL's instr) must ask for them
STOP_MARKS = tuple(sorted({form for mark in _STOP_MARKS for form in (mark, mark.capitalize(), mark.upper())}))


def stopped_things(text: str) -> list[str]:
    """What `text` says stopped (_STOPPED), each as written, when it names something: a term of
    Latin letters or an identifier, or four Chinese or Japanese characters ("msw", "PostgreSQLの行ロック";
    not "it", not "公测")."""
    lowered = text.lower()
    if not any(mark in lowered for mark in _STOP_MARKS):
        return []
    found = []
    for match in _STOPPED.finditer(text):
        named = next(g for g in match.groups() if g is not None).strip()
        if named.isascii():  # English: the thing, without an article, up to a word that says when or how
            words = [word.rstrip(".,;:") for word in named.split()]
            words = words[1:] if words and words[0].lower() in _ARTICLES else words
            kept = list(takewhile(lambda word: word.lower() not in _NOT_THE_THING, words))[:2]
            named = " ".join(kept)
        if named and significant_words(named) and (LATIN_TERM.search(named) or len(CJK_TEXT.findall(named)) >= 4):
            found.append(named)
    return found


_ARTICLES = frozenset("the a an our its their this that".split())
# "Jenkins was retired in March", "We retired Jenkins last week": what follows says when, not what
_NOT_THE_THING = frozenset("""in on at for from to by with after before since until during as when because last next
yesterday today tomorrow now already again entirely completely""".split())


# A code span right after a negation, one verb between at most ("Don't `jest.mock(…)`", "never run `make deploy`")
_NEGATED_CODE = re.compile(r"\s*(?:[\w-]+\s+)?`([^`\n]+)`")


def negated_code(a: str, b: str) -> str:
    """The code span one sentence negates (a negation right before it) and the other says outside
    its own negations, whole and as written; else "".

    Case: "Don't `jest.mock('src/api/client')`, and don't mock React Query hooks" against "msw is
    no longer used …; Mock the API client module instead, with `jest.mock('src/api/client')` and
    the typed helpers": two long sentences that differ in many places, so the swaps read them as
    two facts, but the one exact call one forbids the other prescribes."""
    for negating, other in ((a, b), (b, a)):
        blanked = unnegatable(negating.lower())
        for match in _negation_matches(blanked, after=False):
            code = _NEGATED_CODE.match(negating, match.end())
            if code is None or (at := other.find(f"`{code.group(1)}`")) < 0:
                continue
            denied = [(start, end) for _, start, end, _ in _negations(unnegatable(other.lower()))]
            if not any(start <= at < end for start, end in denied):
                return code.group(1)
    return ""


def changed_to_only(a: Profile, b: Profile) -> bool:
    """Whether the one signal aimed between two sentences is a change aimed at what it changed
    *to*: the other names the new value, it does not hold the old one. Real case
    (application-pipeline): "Job entries >72h moved to research_pool." was a conflict of every
    memory that lists research_pool entries."""
    aimed = a.signals_against(b) | b.signals_against(a)
    return aimed == {"change"} and not (a.replaced & b.words or b.replaced & a.words)


def only_existential(text: str) -> bool:
    """Whether every negation of a sentence denies that a thing is there ("No YAML, no draft, no
    research pool entry.", "without tests"), none what is done: between two documents that is no
    rule reversed. Real case (application-pipeline): a pipeline entry's "no research pool entry"
    was a conflict of the rule that moves stale entries to research_pool."""
    found = [m.group().lower() for m in _negation_matches(unnegatable(text).lower(), after=False)]
    return bool(found) and all(word in _EXISTENTIAL for word in found) and not _negation_matches(text.lower(),
                                                                                                after=True)


_NOT_A_CLAIM = re.compile(r"^\s*(?:#|\||```|>|<|(?:[-*+]\s+)?\*\*why[:：]?\*\*|why\s*[:：])|\?\s*$|\|.*\|",
                          re.IGNORECASE)


def claims(text: str) -> list[str]:
    """The sentences of a document that say something it holds: not a heading, a table row or a
    line of figures between pipes, code, a quote, a question ("should `notes` be merged …, instead
    of LWW?" asks, it decides nothing), nor its **Why:** — the story of how it came to be, in
    which "5 memory files … were not synced" is no rule against "Synced to chezmoi: …"."""
    found: list[str] = []
    lines = text.split("\n")
    for line, code in zip(lines, fenced(lines)):
        if code or _NOT_A_CLAIM.search(line):
            continue
        found.extend(s for s in sentences(line) if not s.rstrip().endswith("?") and _TOKEN.search(s))
    return found


def _negating_sentences(negating: str, other: str) -> tuple[str, str] | None:
    """(the sentence of `negating` with a negation or change aimed at `other`, the sentence of `other` it aims at)."""
    other_sentences = sentences(other)
    other_statements = [(_Statements.of(s), significant_words(s)) for s in other_sentences]
    for sentence in sentences(negating):
        for scope, _, _, whole in _negations(unnegatable(sentence).lower()):
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
