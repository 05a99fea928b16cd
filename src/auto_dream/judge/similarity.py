"""Word overlap, duplicates and contradictions (docs/dream.md), CJK included, no LLM needed."""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from auto_dream.judge.values import anchored, pins
from auto_dream.judge.words import (  # re-exported: the judge's words are these
    _CJK_RUN,
    _TOKEN,
    STOP_WORDS,
    significant_words,
    stem,
    word_sequence,
)

# Negation signals; a statement and its negation differ in one of these. English and
# Chinese put the negation before what it negates; Japanese and Korean after it.
_NEGATION_BEFORE = re.compile(
    r"(?<![-\w])(?:do not|does not|did not|don't|doesn't|didn't|dont|never|avoid|avoids|avoiding|no longer|"
    r"stop using|stopped using|not(?!\s+(?:just|only|merely|simply)\b)|cannot|can't|won't|shouldn't|must not|"
    r"no need to|no|without|zero)\b(?!-)"
    r"|\bstop(?:ped)?(?=\s+[\w-]+ing\b)"  # "stop squash-merging", "stopped explaining"
    r"|n't\b", re.IGNORECASE)
# A negation word joined to the next by a hyphen names a thing, it negates nothing: "a no-op",
# the flag `--no-pdf-header-footer` (real case: a checklist item and the rule that sets the
# flag were a conflict). "not just" and "not only" add, they do not negate: "custom pre-release
# identifiers (not just alpha/beta/rc)" agrees with "fully supports pre-release versions
# (alpha, beta, RC)" (real case, orchestkit).
_NEGATION_BEFORE_CJK = re.compile(r"(?<!要)不要|不再|(?<!用)不用|(?<!需要)不需要|无需|别用|別用"
                                  r"|(?:^|(?<=[\s，,。；;:：时時就也都还還再可先万萬]))[别別](?![人的名处處称稱样樣家号號])"
                                  r"|禁止|停止使用|并非|不是", re.MULTILINE)
# 别 ("don't") opens a clause or follows a word that sets its time or stress ("跑集成测试时别mock掉
# Redis", "千万别", "就别"); after any other character it is part of a word (特别, 区别, 级别), and
# before 人, 的… it is "other" (别人, 别的). Real case: "…时别mock掉Redis" went unread, and the pair
# with "集成测试不要mock Redis" was a contradiction.
# A question asked both ways (要不要, 用不用, 需要不需要: "whether to") negates nothing; nor does
# Japanese 忘れずに / 欠かさず ("without forgetting", "without missing": always).
# Japanese negates with the verb's negative form, whatever the verb: its irrealis stem (an
# a-row kana, or the e/i-row of a one-step verb, or a kanji stem) before ない / なかった / ず,
# or the polite ません. 少ない and 危ない end in ない without being verbs, so a bare kanji
# before ない is not enough: the kana before it is what marks a verb.
_NEGATION_AFTER_CJK = re.compile(r"(?<!忘)(?<!欠か)(?:[かがさたなばまらわいきぎしじちにびみり"
                                 r"えけげせぜてでねべめれこの])(?:ない|なかった|なく|ず)"
                                 r"|ません|ではない|じゃない|やめ|禁止|(?<=[はがも])不要|廃止|延期|下线|下線|废弃|弃用|停用|않")
# Japanese adverbs that stress a negation (never, at all, ever again), not part of what it negates.
_EMPHASIS = re.compile(r"絶対に|絶対|決して|一切|全然|全く|まったく|二度と")
# English says that a thing is gone after naming it, in the passive: "Jenkins has been retired"
# ("had to shut down his account" names its object after the verb).
_NEGATION_AFTER = re.compile(r"\b(?:is|are|was|were|been|be|got|gets)\s+(?:now\s+)?(?:retired|deprecated|"
                             r"decommissioned|discontinued|postponed|cancell?ed|abandoned|shut down|turned off|"
                             r"disabled|removed)\b", re.IGNORECASE)


# Text that quotes or shows code rather than says: a code span or block, a quoted string, SQL's
# upper-case IS NOT / NOT IN. A negation inside it negates nothing the memory says.
_SHOWN = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`|\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|「[^」\n]{1,200}」"
                    r"|(?<![\w'’])'[^'\n]{1,120}'(?![\w'’])"
                    r"|(?P<sql>\b(?:IS NOT|NOT (?:NULL|IN|EXISTS|LIKE|BETWEEN|DISTINCT|TRUE|FALSE))\b)", re.S)
_QUOTED = re.compile(r"\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|「[^」\n]{1,200}」|(?<![\w'’])'[^'\n]{1,120}'(?![\w'’])")
_MAY_SHOW = re.compile(r"[`\"“「']|\bNOT\b")


def unnegatable(text: str) -> str:
    """`text` with every negation word inside a code span, a code block, a quoted string or an
    SQL condition blanked out (the same length, so offsets hold).

    Cases: a SQL filter `IS NOT TRUE` was read as a negation, and a memory that quotes what the
    user said ("I don't want to remember any commands") as one that says it does not."""
    if not _MAY_SHOW.search(text):
        return text
    return _SHOWN.sub(lambda m: "_" * len(m.group()) if m.group("sql")
                      else _NEGATION.sub(lambda n: "_" * len(n.group()), m.group()), text)


def _negation_matches(text: str, *, after: bool) -> list[re.Match]:
    """The negation signals of `text` that come before what they negate (or, `after`, after it).
    The CJK patterns are tried only on a text with CJK characters: most texts have none, and an
    alternation with no literal start is tried at every position."""
    latin, cjk = (_NEGATION_AFTER, _NEGATION_AFTER_CJK) if after else (_NEGATION_BEFORE, _NEGATION_BEFORE_CJK)
    found = list(latin.finditer(text))
    if _CJK_RUN.search(text):
        found = sorted(found + list(cjk.finditer(text)), key=lambda m: m.start())
    return found


# All of them in one pattern, to show what raised a signal (bench/locomo.py).
_NEGATION = re.compile("|".join(p.pattern for p in (_NEGATION_BEFORE, _NEGATION_BEFORE_CJK, _NEGATION_AFTER_CJK,
                                                     _NEGATION_AFTER)), re.IGNORECASE | re.MULTILINE)
# Change signals: a newer decision replacing an older one.
# By meaning: a verb of changing in any tense, followed by what it changed to ("was upgraded
# to Postgres 16", "we migrated the queue to SQS", "left Acme and now works at Initech",
# "构建日志改到GitHub Actions里看", "部署脚本换到infra仓库了").
# Past forms (and "switch to", "switching to", "moving to"): "changes and discussions to the
# community" is a noun followed by "to", not a change.
_CHANGE_VERB = (r"(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrated|upgraded|downgraded|changed|converted|replaced|"
                r"renamed|transitioned|ported)")
_CHANGE = re.compile(
    rf"\b(?:instead|{_CHANGE_VERB}\s+(?:\S+\s+){{0,3}}?(?:to|by|with|over to)|now uses?|now (?:runs?|lives?|is|are)"
    r"|from now on|no longer|left\s+\S+(?:\s+\S+)?\s+and\s+now)\b"
    r"|改用|换成|換成|改为|改成|改到|换到|換到|换用|迁移到|遷移到|升级到|升級到|切换到|切換到|搬到|代わりに|に変更|へ変更|を変更|"
    r"に移行|へ移行|移行し|に切り替え|へ切り替え|に乗り換え|にアップグレード",
    re.IGNORECASE)
# "X instead of Y" changes a decision about Y only: it signals a change against a text that
# mentions Y ("use npm instead of pnpm" / "use pnpm"), not against any text at all ("use
# the docker compose Postgres instead of fakes" / "don't mock the database").
# What `instead of` replaces ends at a preposition: "rather than punishment to train pets" replaces
# punishment, not training.
_REPLACED = r"(\S+(?:\s+(?!(?:to|for|in|on|at|with|and|or|by|from|as|when|because)\b)\S+){0,2})"
_INSTEAD_OF = re.compile(rf"\b(?:instead of|rather than)\s+{_REPLACED}"
                         rf"|\b{_CHANGE_VERB}\s+(?:\S+\s+){{0,3}}?from\s+((?:\S+\s*){{1,3}}?)\s*(?=\bto\b|→|->)"
                         r"|(?:从|從)(\S{1,12}?)(?:迁移到|遷移到|改用|换成|换到|切换到|升级到)",
                         re.IGNORECASE)
# Japanese "YからXに変更": tried only on a text that has から (the open start is slow to try everywhere).
# What changed is the word right before から, after the last particle ("課金DBをMySQLから…" changes MySQL).
_INSTEAD_OF_JA = re.compile(r"([^\s、。をはがのにへでとも]{1,12})から\S{1,12}?(?:に|へ)"
                            r"(?:変更|移行|切り替え|乗り換え|アップグレード)")


def _replacements(text: str) -> list[re.Match]:
    """Each "instead of Y" / "from Y to X" / 从Y迁移到X / YからXに変更 in `text`."""
    found = list(_INSTEAD_OF.finditer(text))
    return found + list(_INSTEAD_OF_JA.finditer(text)) if "から" in text else found


def without_replacements(text: str) -> str:
    """`text` with its "instead of Y" and "from Y to X" taken out: what is left can signal a change."""
    text = _INSTEAD_OF.sub(" ", text)
    return _INSTEAD_OF_JA.sub(" ", text) if "から" in text else text
# A signal is about the words right after it: "Never rebase feature branches" negates
# "rebase feature"; "Nate did not make it to the finals" says nothing against "Nate won his
# first game tournament" although both name Nate and the game. Its scope is the two
# significant words after it in its clause (a comma, "but" or the end of the sentence ends
# it: "not X but Y" says Y), with the auxiliary verbs among them ("never been to Boston"
# negates "been … Boston", not every mention of Boston). It counts against a text that
# says what it negates, itself, outside that text's own negations ("not give up" is not
# against another "not give up"): two of its words in the same order, close together in
# one sentence ("never tried ramen" is not against "a ramen bowl he tried"), or the one
# word of a one-word scope (right after the same verb, if the scope has one: "never been to
# Boston" is against "has been to Boston", not "is heading to Boston").
# Chinese and Japanese scopes are read as character bigrams, which straddle the signal, so
# they reach four bigrams and need two of them.
SCOPE_WORDS = 2
# "no X" and "without X" deny that a thing is there, not what is done with it: "when there are
# no tournaments" says nothing against "Nate practices for video game tournaments". They aim
# only with two words in their scope ("no weekly deploy day").
# "zero" too: "zero per-frame cost" and "No per-frame cost" say one thing, and read as a
# statement and its negation they were a conflict.
_EXISTENTIAL = frozenset(("no", "without", "zero"))
CJK_SCOPE_WORDS = 4
PAIR_DISTANCE = 2  # "two words close together": at most one word between them
_SENTENCE_END = re.compile(r"[\n.!?;…。！？；]")  # a scope never runs into the next sentence
_CLAUSE_END = re.compile(r"[\n.!?;…。！？；,，、]|\b(?:but|however|although|though|whereas)\b"
                         r"|但是|可是|而是|不过", re.IGNORECASE)  # nor into the next clause
# What "no" and "without" deny is a thing: its phrase ends before the next clause ("without her
# dogs as they mean the world to her" denies the dogs, not their meaning).
_PHRASE_END = re.compile(_CLAUSE_END.pattern + r"|\b(?:as|because|since|when|while|if|so|that|which|who|and|or)\b",
                         re.IGNORECASE)
# Stop words that are the verb a negation applies to ("never been", "can't have"): part of
# a scope, under one name per verb so that "has not been" meets "was".
_AUXILIARY = {**dict.fromkeys(("am", "is", "are", "was", "were", "be", "been", "being"), "be"),
              **dict.fromkeys(("have", "has", "had"), "have"), **dict.fromkeys(("do", "does", "did"), "do")}
_AUXILIARY_NAMES = frozenset(_AUXILIARY.values())
# Words a negation never negates: "James hasn't (played) in a while" says nothing against
# "Daisy lies down next to him while he plays games".
_NOT_IN_SCOPE = frozenset("""while when whenever since because until where there here just also yet still ever
really very much more most some any all every each other again anymore""".split())


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|A∩B| / min(|A|, |B|); 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _scope(text: str, pattern: re.Pattern, *, before: bool = False) -> frozenset[str]:
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


def _tokens(text: str) -> Iterator[tuple[int, int, str, bool]]:
    """(start, end, token, significant) over lower-cased `text`: the significant words of
    word_sequence, in order, and the auxiliary verbs under their verb's name."""
    for match in _TOKEN.finditer(text):
        token, start = match.group(), match.start()
        if _CJK_RUN.fullmatch(token):
            if len(token) == 1:
                yield start, start + 1, token, True
            else:
                for i in range(len(token) - 1):
                    yield start + i, start + i + 2, token[i:i + 2], True
        elif token in _NOT_IN_SCOPE:
            continue
        elif token in _AUXILIARY:  # "being" too, though it is long enough to be a word
            yield start, match.end(), _AUXILIARY[token], False
        elif token == "up":  # "not give up" negates giving up, not every "giving"
            yield start, match.end(), token, True
        elif len(token) > 2 and token not in STOP_WORDS:
            # as written, not stemmed: a negation counts against the words it names, in their
            # form ("not give up" is not against "Gina gives Jon tips", "has not tried painting"
            # not against "is considering trying painting")
            yield start, match.end(), token, True


def _negations(text: str) -> list[tuple[tuple[str, ...], int, int, bool]]:
    """Each negation of lower-cased `text`: (its scope, the start and end of the negated
    span, whether the scope is whole).

    A scope is the significant words the signal applies to, with the auxiliary verbs among
    them. One cut short by an ellipsis is not whole: it comes from a shortened copy (a
    memory's name, its description) whose whole statement is elsewhere, so it aims at
    nothing, but what it holds is still negated, not said."""
    found = []
    for match in _negation_matches(text, after=False):
        reach = CJK_SCOPE_WORDS if _CJK_RUN.search(match.group()) else SCOPE_WORDS
        window = text[match.end():match.end() + 200]
        cut = (_PHRASE_END if match.group().lower() in _EXISTENTIAL else _CLAUSE_END).search(window)
        scope, end, count = [], match.end(), 0
        for _, token_end, token, significant in _tokens(window[:cut.start()] if cut else window):
            if count == reach:
                break
            scope.append((token, significant))
            count += significant
            end = match.end() + token_end
        while scope and not scope[-1][1]:
            scope.pop()
        if count:
            whole = (count == reach or cut is None or cut.group() != "…") \
                and (count > 1 or match.group().lower() not in _EXISTENTIAL)
            found.append((tuple(token for token, _ in scope), match.start(), end, whole))
    for match in _negation_matches(text, after=True):
        window_start = max(0, match.start() - 200)
        # an adverb that only stresses the negation takes no room in its reach: 「migrate:freshを
        # 絶対に実行しない」 negates running migrate:fresh, as 「migrate:freshを実行しない」 does
        window = _EMPHASIS.sub(lambda found: " " * len(found.group()), text[window_start:match.start()])
        cuts = list(_CLAUSE_END.finditer(window))
        clause_start = cuts[-1].end() if cuts else 0
        tokens = list(_tokens(window[clause_start:]))
        scope, start, count = [], match.start(), 0
        reach = CJK_SCOPE_WORDS if _CJK_RUN.search(match.group()) else SCOPE_WORDS
        for token_start, _, token, significant in reversed(tokens):
            if count == reach:
                break
            scope.append((token, significant))
            count += significant
            start = window_start + clause_start + token_start
        while scope and not scope[-1][1]:
            scope.pop()
        if count:
            found.append((tuple(token for token, _ in reversed(scope)), start, match.end(), True))
    return found


@dataclass(frozen=True)
class _Statements:
    """What a text says, as opposed to what it negates: the significant words it says
    (outside its own negations), the ordered pairs of them it says close together in one
    sentence, and the pairs of an auxiliary verb and the significant word right after it."""

    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, text: str) -> "_Statements":
        text = unnegatable(text).lower()
        # what a quotation holds is mentioned, not said: "before listing anyone as "fresh"" does
        # not say that anyone is fresh (real case: "… if they have any interaction, they're not
        # fresh" was a conflict of that rule said again)
        spans = [(start, end) for _, start, end, _ in _negations(text)]
        if _MAY_SHOW.search(text):
            spans += [m.span() for m in _QUOTED.finditer(text)]
        words, pairs = set(), set()
        offset = 0
        for sentence in _SENTENCE_END.split(text):
            said = [(token, significant, any(a <= offset + start < b for a, b in spans))
                    for start, _, token, significant in _tokens(sentence)]
            offset += len(sentence) + 1
            for i, (token, significant, negated) in enumerate(said):
                if negated:
                    continue
                if not significant:  # an auxiliary verb: with the word right after it
                    after = said[i + 1] if i + 1 < len(said) else None
                    if after and after[1] and not after[2]:
                        pairs.add((token, after[0]))
                    continue
                words.add(token)
                for later, later_significant, later_negated in said[i + 1:i + 1 + PAIR_DISTANCE]:
                    if later_significant and not later_negated:
                        pairs.add((token, later))
        return cls(frozenset(words), frozenset(pairs))

    def say(self, scope: tuple[str, ...]) -> bool:
        """Whether this text says what `scope` negates: two of its significant words in that
        order close together, or its one significant word (right after the same auxiliary
        verb, when the scope has one before it: "never been to Boston" / "has been to Boston")."""
        significant = [token for token in scope if token not in _AUXILIARY_NAMES]
        if not significant:
            return False
        if len(significant) > 1:
            return any((a, b) in self.pairs for i, a in enumerate(significant) for b in significant[i + 1:])
        word = significant[0]
        at = scope.index(word)
        return word in self.words and (at == 0 or (scope[at - 1], word) in self.pairs)


_CONTRAST = re.compile(r"([^\n.!?;:()\[\]]{1,80})[,(—–]\s*['\"‘“]?$")


def _contrasted(text: str, start: int) -> frozenset[str]:
    """What "X, not Y" prefers to the Y it negates: the word before the comma, or nothing.

    Case: "Use pnpm, not npm, to install packages" was taken to contradict "Install packages
    with pnpm; running npm install rewrites the lockfile", which says npm only to warn of it.
    A contrast contradicts only a text that does not also say what it prefers."""
    match = _CONTRAST.search(text[max(0, start - 80):start])
    return frozenset(word_sequence(match.group(1))[-1:]) if match else _EMPTY


def _signals(negations: list[tuple[tuple[str, ...], int, int, bool]], rest: str) -> frozenset[str]:
    """Which kinds of signal a text carries: `negations` are its _negations, `rest` the text
    with its "instead of Y" and "from Y to" taken out (what is left can signal a change)."""
    found = set()
    if negations:
        found.add("negation")
    if _CHANGE.search(rest):
        found.add("change")
    return frozenset(found)


def _replaced_words(matches: list[re.Match[str]]) -> frozenset[str]:
    """The significant words of what `instead of …` / `rather than …` replaces (_replacements)."""
    return frozenset().union(*(significant_words(next(g for g in m.groups() if g is not None)) for m in matches))


_EMPTY: frozenset[str] = frozenset()

# What lets a pair be compared from the lower threshold up, as the bits of a text's `grounds`
# (the pair searches: judge.pairs, judge.recent, distill.neighbours, dream.candidates). Below the
# duplicate threshold a pair can still be a contradiction when one side aims a negation or a
# change at the other, or a value changed or the same specifics said in other words when both
# pin something down.
AIMS = 1  # a negation or change scope (Profile.aims)
PINS = 2  # a value, an identifier, code (values.specifics)
ANCHORS = 4  # Chinese or Japanese text with an anchor: a term of Latin letters, a value, code (values.anchors)
# Two Chinese or Japanese texts that both hold anchors are compared from this overlap up: a
# paraphrase keeps its terms of art but shares few of its character bigrams ("每次提交前都要先跑
# `make lint`" / "提交代码之前先执行make lint" share 0.30 of them). The judge then asks for the
# same anchors on both sides (statements.same_terms), not for more shared words.
ANCHORED_FLOOR = 0.2


def from_low(grounds: int, other: int) -> bool:
    """Whether a pair of texts with these grounds is wanted from the lower threshold up: one side
    aims, or both pin something down.

    Case: "本番DBはPostgreSQL 16を使っている" / "本番DBはPostgreSQL 17に上げた" share half their words
    and neither aims: the value that changed was never compared."""
    return bool((grounds | other) & AIMS or grounds & other & PINS)


def anchored_floor(low: float) -> float:
    """The overlap from which two texts that both hold anchors (ANCHORS) are compared: ANCHORED_FLOOR,
    or `low` when that is lower."""
    return min(low, ANCHORED_FLOOR)


def relatable(score: float, grounds: int, other: int, low: float, high: float) -> bool:
    """The overlap rule of every pair search: `high`; `low` when the grounds let it (from_low);
    anchored_floor(low) when both hold anchors."""
    return score >= high or (score >= low and from_low(grounds, other)) or (
        score >= anchored_floor(low) and bool(grounds & other & ANCHORS))


class HasText(Protocol):
    def text(self) -> str: ...


@dataclass(frozen=True)
class Profile:
    """What the checks need of a text, computed once (what needs more of the text, when asked)."""

    words: frozenset[str]
    signals: frozenset[str] = frozenset()
    replaced: frozenset[str] = frozenset()
    negated: frozenset[str] = frozenset()  # the significant words within reach of a negation signal
    changed: frozenset[str] = frozenset()  # words within reach of a change signal
    pins: bool = False  # it pins something down: a value, an identifier, code (values.specifics)
    anchored: bool = False  # Chinese or Japanese text that holds an anchor (values.anchored)
    # The text itself, or what has it (a memory loaded from the parse cache is not joined
    # into one text unless a negation needs it), and the texts merged into it.
    source: "str | HasText" = field(default="", compare=False, repr=False)
    merged: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of(cls, text: str, source: "HasText | None" = None) -> "Profile":
        """The profile of `text`; `source` (a memory whose text it is) keeps the text instead of it."""
        negations = _negations(unnegatable(text).lower())
        negated = frozenset(stem(token) for scope, _, _, whole in negations if whole
                            for token in scope if token not in _AUXILIARY_NAMES)
        matches = _replacements(text)
        rest = text
        for match in reversed(matches):  # what is left once "instead of Y" and "from Y to" are out
            rest = rest[:match.start()] + " " + rest[match.end():]
        changed = _scope(rest, _CHANGE)
        pinned = pins(text)
        # empty sets as the one shared empty set: 200 bytes each, four per profile, 100k profiles
        return cls(significant_words(text), _signals(negations, rest) or _EMPTY,
                   _replaced_words(matches) or _EMPTY, negated or _EMPTY, changed or _EMPTY,
                   pinned, anchored(text, pinned=pinned), text if source is None else source)

    @property
    def text(self) -> str:
        return self.source if isinstance(self.source, str) else self.source.text()

    @property
    def aims(self) -> bool:
        """Whether this text can aim a signal at another (signals_against): without a negation
        or change scope on either side, two texts can be duplicates, never a contradiction."""
        return bool(self.negated or self.changed or self.replaced)

    @property
    def grounds(self) -> int:
        """AIMS, PINS and ANCHORS, as this text can: what lets a pair with it be compared from the lower
        thresholds (relatable)."""
        return (AIMS if self.aims else 0) | (PINS if self.pins else 0) | (ANCHORS if self.anchored else 0)

    @cached_property
    def _scopes(self) -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
        """Each whole negation scope, with the alternative a contrast puts before it ("X, not Y")."""
        text = unnegatable(self.text).lower()
        return tuple((scope, _contrasted(text, start)) for scope, start, _, whole in _negations(text) if whole)

    @cached_property
    def _statements(self) -> list[_Statements]:
        return [_Statements.of(text) for text in (self.text, *self.merged)]

    def signals_against(self, other: "Profile") -> frozenset[str]:
        """The signals this text aims at what the other text says: those are what contradict."""
        found = set()
        if self.negated & other.words and any(statements.say(scope) and not alternative & other.words
                                              for scope, alternative in self._scopes
                                              for statements in other._statements):
            found.add("negation")
        if _aimed(self.changed, other.words) or self.replaced & other.words:
            found.add("change")
        return frozenset(found)

    def merged_with(self, other: "Profile") -> "Profile":
        """The profile of a memory that gained `other`'s words (and what it pins down); its signals stay its own."""
        return Profile(self.words | other.words, self.signals, self.replaced, self.negated, self.changed,
                       self.pins or other.pins, self.anchored or other.anchored, self.source,
                       (*self.merged, other.text, *other.merged))


def _aimed(scope: frozenset[str], other_words: frozenset[str]) -> bool:
    """Whether what a change signal is about is in the other text: all of its scope, or two words of it."""
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
    merge, so when fewer than four words are shared, one text must contain the other's, and
    a letter that stands alone ("Plan B", "option c") must be in both: "a body." and "b body."
    share every word long enough to count.
    """
    if signals_differ(a, b):
        return False
    shared = len(a.words & b.words)
    if overlap(a.words, b.words) < threshold:
        return False
    if shared >= 4:
        return True
    return (a.words <= b.words or b.words <= a.words) and _lone_letters(a.text) == _lone_letters(b.text)


# a letter standing alone as a word: not part of a contraction (don't), not the articles a / I
_LONE_LETTER = re.compile(r"(?<![\w'’])[^\W\d_](?![\w'’])")


def _lone_letters(text: str) -> set[str]:
    return set(_LONE_LETTER.findall(text.lower())) - {"a", "i"}


def relation(a: Profile, b: Profile, duplicate_threshold: float, contradiction_threshold: float) -> str | None:
    """'contradiction', 'duplicate' or None — contradiction is checked first."""
    if is_contradiction(a, b, contradiction_threshold):
        return "contradiction"
    if is_duplicate(a, b, duplicate_threshold):
        return "duplicate"
    return None
