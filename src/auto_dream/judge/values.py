"""What kind of value a few words are: a number, a time, a weekday, a month, a version.

Two statements that say the same thing about one subject and differ only in a value say
that the value changed ("Standup is at 9:30" / "… at 10:00"; "Staging deploys happen every
Thursday" / "… every Wednesday"; "DBはPostgreSQL 16" / "… 17"). A value stands in for
another of its own kind only: a weekday for a weekday, a time for a time, a number for a
number. Pure text, no store.

What a statement pins down — its values, identifiers, code, URLs — tells which fact it is, as
opposed to the names that tell what it is about (specifics).
"""

import re
from functools import lru_cache
from typing import NamedTuple

# A number as one token: 9:30, 4.2, 40,000, 3.11, 15:00, 100%.
NUMBER = r"\d+(?:[.:,]\d+)*%?"
_NUMBER = re.compile(rf"{NUMBER}")

_WEEKDAYS = {**{day: day for day in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")},
             **{f"{day}s": day for day in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                           "sunday")}}
_MONTHS = frozenset("january february march april may june july august september october november december".split())
_NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
                          "hundred thousand".split())
# 周四 / 星期四 / 礼拜四 (zh), 木曜 / 木曜日 (ja); 上午 / 下午 / 午前 / 午後 times; 一…十 numerals.
_CJK_WEEKDAY = re.compile(r"(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]|[月火水木金土日]曜日?")
_CJK_NUMERAL = re.compile(r"[一二两兩三四五六七八九十百千万萬]+")
_CJK_COUNTER = re.compile(r"[个個点點时時分日月年周週回次人名件台本枚円元万億%％]*")


def value_kind(written: list[str] | tuple[str, ...]) -> str | None:
    """'number', 'weekday' or 'month' when the tokens (as written, no spaces in CJK) are one value
    of that kind, with at most a counter or unit after it (10点, 13時, 30万円); else None.

    A number that is part of a name ("m1", "q2x", "S3") is not a value: it names a thing."""
    return _value_kind(tuple(written))


@lru_cache(maxsize=65536)  # the judge asks of the same few tokens for every pair it lines up
def _value_kind(written: tuple[str, ...]) -> str | None:
    words = [w for w in written if w.strip()]
    if not words:
        return None
    lowered = [w.lower() for w in words]
    if len(words) == 1 and (lowered[0] in _WEEKDAYS or _CJK_WEEKDAY.fullmatch(words[0])):
        return "weekday"
    if len(words) == 1 and lowered[0] in _MONTHS:
        return "month"
    joined = "".join(words)
    if _NUMBER.fullmatch(words[0]) and (len(words) == 1 or _CJK_COUNTER.fullmatch("".join(words[1:]))):
        return "number"
    if all(w in _NUMBER_WORDS for w in lowered):
        return "number"
    if _CJK_NUMERAL.fullmatch(joined) or re.fullmatch(rf"(?:{NUMBER}|{_CJK_NUMERAL.pattern})"
                                                       rf"{_CJK_COUNTER.pattern}", joined):
        return "number" if not _CJK_WEEKDAY.fullmatch(joined) else "weekday"
    return None


def same_kind(a: list[str], b: list[str]) -> str | None:
    """The kind both sides are values of, or None: a weekday only stands in for a weekday."""
    kind = value_kind(a)
    return kind if kind is not None and kind == value_kind(b) else None



class Specifics(NamedTuple):
    """What a statement pins down (`pinned`) and the names it holds (`names`), lower-cased."""

    pinned: frozenset[str]
    names: frozenset[str]


CJK_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[a-z][a-z+.-]*://([A-Za-z0-9._~/?#@!$&*+=%:-]+?)[.,;:!?]*(?![A-Za-z0-9._~/?#@!$&*+=%:-])",
                  re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]+)`")
_CORNER_QUOTED = re.compile(r"“([^”\n]{1,80})”|「([^」\n]{1,80})」|『([^』\n]{1,80})』")
# A word of Latin letters or digits, with what joins an identifier's parts: analytics_raw,
# CHANGELOG.md, docs/adr, UTC+9, #incidents, 9:30, 4.2.
_LATIN = re.compile(r"(?<![A-Za-z0-9_#])#?[A-Za-z0-9][A-Za-z0-9_+#]*(?:[.:/-][A-Za-z0-9_+#]+)*")
# What makes a word an identifier or a value rather than a name: a digit, _ or #, parts joined by +
# (UTC+9; LGBTQ+ and C++ are names), or parts of two letters or more joined by . / : (not "e.g").
_PINS = re.compile(r".*(?:\d|[_#]|[A-Za-z0-9][+][A-Za-z0-9]|[A-Za-z0-9]{2}[./:][A-Za-z0-9]).*")
_OPENS = re.compile(r"(?:^|[.!?:;]\s+|\n\s*|[(\[]\s*)$")  # what comes before a sentence's first word
_CAPITALIZED_VALUE = _MONTHS  # "May", "March": a month only when capitalized ("may", "march" are verbs)


def specifics(text: str) -> Specifics:
    """What a statement pins down and the names it holds, each lower-cased.

    Pinned: its numbers and values (9:30, 5.0, 6月1日's 6 and 1, Q3, a weekday, a capitalized
    month), identifiers (a digit, _ # or +, parts joined by . / :), URLs, the words of its code
    spans, names in corner or curly quotes (“线上事故通报”, 「Runbooks」). Names: its other
    capitalized words but the one it opens a sentence with (Tokyo, Linear, PR), and in Chinese or
    Japanese text every word of Latin letters (Python, mock).

    A name tells what a statement is about; what it pins down tells which fact it is: "Joanna
    appreciates Nate's support" and "Joanna agreed to go to Nate's place" share a name and say
    two things (LoCoMo)."""
    pinned: set[str] = set()
    names: set[str] = set()
    for match in _URL.finditer(text):
        pinned.add(match.group(1).lower())
    plain = _URL.sub(lambda m: " " * len(m.group()), text)
    for match in _CORNER_QUOTED.finditer(plain):
        if quoted := " ".join(next(g for g in match.groups() if g is not None).lower().split()):
            pinned.add(quoted)
    plain = _CORNER_QUOTED.sub(lambda m: " " * len(m.group()), plain)
    for match in _CODE.finditer(plain):
        pinned.update(word.lower() for word in _LATIN.findall(match.group(1)))
    plain = _CODE.sub(lambda m: " " * len(m.group()), plain)
    cjk = bool(CJK_TEXT.search(plain))
    for match in _LATIN.finditer(plain):
        word = match.group()
        lowered = word.lower()
        if _PINS.fullmatch(word) or lowered in _WEEKDAYS or (word.istitle() and lowered in _CAPITALIZED_VALUE):
            pinned.add(_WEEKDAYS.get(lowered, lowered))
        elif len(word) > 1 and (cjk or word.isupper() or any(c.isupper() for c in word[1:]) or (
                word[0].isupper() and not _OPENS.search(plain[max(0, match.start() - 4):match.start()]))):
            names.add(lowered)
    if cjk:
        pinned.update(m.group() for m in _CJK_WEEKDAY.finditer(plain))
    return Specifics(frozenset(pinned), frozenset(names))


# Whatever specifics would pin, found without reading the rest: a digit, a URL, code with a word
# in it, a corner-quoted name, an identifier's joint, a weekday, a month (some texts more).
_MAY_PIN = re.compile(r"\d|://|`[^`\n]*[A-Za-z0-9][^`\n]*`|“[^”\n]{1,80}”|「[^」\n]{1,80}」|『[^』\n]{1,80}』"
                      r"|[A-Za-z0-9+.:/-][_#]|#[A-Za-z0-9]|[A-Za-z0-9][+][A-Za-z0-9]|[A-Za-z0-9]{2}[./:][A-Za-z0-9]"
                      r"|(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                      r"|January|February|March|April|May|June|July|August|September|October|November|December"
                      rf"|{_CJK_WEEKDAY.pattern}")


# A word of Latin letters (two or more) in Chinese or Japanese text: a term of art there ("PR",
# "Python", "mock", "diff"), an anchor the text is about (anchors).
LATIN_TERM = re.compile(r"[A-Za-z]{2}")


def pins(text: str) -> bool:
    """Whether `text` may pin something down or hold an anchor: true whenever specifics(text).pinned
    is not empty, or it is Chinese or Japanese text with a word of Latin letters (anchors) — and
    for a few texts more — found at the first sign. What the pair search asks of every memory."""
    return _MAY_PIN.search(text) is not None or (LATIN_TERM.search(text) is not None
                                                 and CJK_TEXT.search(text) is not None)


# Terms of art that Chinese and Japanese text writes in its own script as often as in Latin
# letters, each with its spellings there. A statement that writes 功能开关 holds the anchor of
# another that writes "feature flag" (statements.same_terms), never an anchor of its own: the
# table only lets one term spelt two ways be one. Chinese 部署 (deploy) is left out: in Japanese
# it is a department.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "feature flag": ("功能开关", "特性开关", "フィーチャーフラグ", "機能フラグ"),
    "diff": ("差分",),
    "bug": ("缺陷", "バグ", "不具合"),
    "mock": ("模拟对象", "モック"),
    "db": ("数据库", "データベース"),
    "database": ("数据库", "データベース"),
    "cache": ("缓存", "キャッシュ"),
    "dashboard": ("仪表盘", "ダッシュボード"),
    "branch": ("分支", "ブランチ"),
    "pr": ("合并请求", "プルリクエスト", "プルリク"),
    "pull request": ("合并请求", "プルリクエスト", "プルリク"),
    "timeout": ("超时", "タイムアウト"),
    "container": ("容器", "コンテナ"),
    "queue": ("队列", "キュー"),
    "log": ("日志", "ログ"),
    "schema": ("スキーマ",),
    "token": ("令牌", "トークン"),
    "staging": ("预发", "ステージング"),
    "rollback": ("回滚", "ロールバック"),
    "deploy": ("デプロイ",),
    "release": ("リリース",),
    "merge": ("マージ",),
    "commit": ("コミット",),
    "review": ("代码审查", "レビュー"),
    "refactor": ("重构", "リファクタ"),
    "migration": ("迁移", "マイグレーション"),
    "backup": ("备份", "バックアップ"),
    "incident": ("事故", "インシデント", "障害"),
}
_SPELLED = re.compile("|".join(sorted({s for spellings in SPELLINGS.values() for s in spellings}, key=len,
                                      reverse=True)))


def spelled(text: str, terms: frozenset[str]) -> frozenset[str]:
    """The words of each of `terms` (anchors, as another statement holds them) that `text` writes
    in a Chinese or Japanese spelling (SPELLINGS): "feature" and "flag" for 功能开关."""
    if not terms or _SPELLED.search(text) is None:
        return frozenset()
    found: set[str] = set()
    for term, spellings in SPELLINGS.items():
        words = term.split()
        if all(word in terms for word in words) and any(spelling in text for spelling in spellings):
            found.update(words)
    return frozenset(found)


def anchored(text: str, *, pinned: bool | None = None) -> bool:
    """Whether `text` is Chinese or Japanese with an anchor (anchors) or a term's spelling there
    (SPELLINGS), found at the first sign: a superset of the texts whose anchors are not empty,
    what the pair search asks of every memory. `pinned`: pins(text), when the caller has it."""
    return CJK_TEXT.search(text) is not None and (
        (pins(text) if pinned is None else pinned) or _LATIN_PAIR.search(text) is not None
        or _SPELLED.search(text) is not None)


# The start of a word of Latin letters or digits two long or more ("a+", "C#", "a.b"): anchors names such a word
_LATIN_PAIR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#.:/-]")


def anchors(text: str) -> frozenset[str]:
    """What a Chinese or Japanese statement is anchored by: all it pins down and every word of
    Latin letters in it (specifics' names there: "PR", "Python", "make lint", "#incidents") —
    spelt as it is, whatever the words around it. Empty for a text without CJK: in English the
    names are mostly people's ("Joanna appreciates Nate's support" / "Joanna agreed to go to
    Nate's place", LoCoMo), and they tell what a statement is about, not which fact it is."""
    if not CJK_TEXT.search(text):
        return frozenset()
    pinned, names = specifics(text)
    return pinned | names


def unanchored(text: str) -> str:
    """`text` without its anchors (URLs, code spans, quoted names, words of Latin letters or digits):
    the words around them, what it says of them."""
    for pattern in (_URL, _CORNER_QUOTED, _CODE, _LATIN):
        text = pattern.sub(" ", text)
    return text
