"""What a Chinese or Japanese statement says changed about the subject it opens with.

Two such statements are compared by their character pairs (similarity.Profile); a short one
that says since when something holds, or that something was put off, shares too few of them
with the statement it changes for any overlap to find the pair: "王磊在增长组" and
"王磊从十月起在平台组" share one pair of five ("王磊"), "公测定在6月1日上线" and "公测延期了，新日期还没定"
one of six ("公测"). Both open with the subject they are about, and the newer says what changed
in words these rules read. They list a pair for review, never act: statements.judge_statements
decides, and dream.candidates puts such a statement beside the memories that open with its
subject.
"""

import re
from typing import Literal

# Characters of a Chinese or Japanese subject: Han, katakana (with its long vowel mark)
_SUBJECT_CHARS = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30a0-\u30ff]"

# A phrase that says from when a statement holds: 「从十月起」「自下周开始」「十月起」「10月から」「来月から」.
_SINCE = (r"(?:从|自)[0-9０-９一二三四五六七八九十百今明下上本去这這个個月周週年日号號季度版vV. ]{1,8}?(?:起|开始)"
          r"|(?:[0-9０-９]{2,4}年)?[0-9０-９一二三四五六七八九十]{1,3}月(?:份)?(?:[0-9０-９一二三四五六七八九十]{1,3}[日号])?"
          r"(?:起|から)"
          r"|(?:下周|下个月|下月|明年|今年|来月|来週|来年|今月|今週)(?:起|开始|から)")
_SINCE_PHRASE = re.compile(rf"(?:{_SINCE})[，,、]?")

# Words that put something off or call it off: postponed, rescheduled, cancelled
_PUT_OFF = r"延期|推迟|推遲|延后|延後|改期|取消|中止|見送り|延び"

# A statement that opens with its subject and then says since when, or that it was put off:
# "王磊从十月起…", "公测延期了", "公测的上线推迟了", "パブリックベータの公開は延期", "鈴木さんは10月から…".
# The subject is the shortest opening that is followed so.
SUBJECT_LENGTHS = (2, 8)  # the shortest and longest subject, in characters
_CHANGED_SUBJECT = re.compile(
    rf"\A\s*({_SUBJECT_CHARS}{{{SUBJECT_LENGTHS[0]},{SUBJECT_LENGTHS[1]}}}?)(?:さん)?"
    rf"(?:(?:[はが]|，|,)?(?:{_SINCE})"
    rf"|(?:[的の]{_SUBJECT_CHARS}{{1,4}})?[はが]?(?:已经|已|被)?(?:{_PUT_OFF}))")
_PUTS_OFF = re.compile(rf"(?:已经|已|被)?(?:{_PUT_OFF})")

# Subjects too common to say which memory a statement is about: the user, we, the team, the project
_GENERIC_SUBJECTS = frozenset("""用户 用戶 我们 我們 他们 他們 大家 团队 團隊 项目 項目 公司 这个 這個 现在 現在 今天
ユーザー ユーザ 私たち 私 チーム プロジェクト 会社 今日 今後""".split())

# A date or a time of day, as a plan states it: 6月1日, 6/1, 15:00, 下午三点, 周四, Q3, 三季度
_DATED = re.compile(r"[0-9０-９一二三四五六七八九十]{1,4}\s*[月日号時点]|\d{1,2}[/:]\d{1,2}"
                    r"|(?:周|週|星期|礼拜)[一二三四五六日天]|[月火水木金土日]曜|[Qq][1-4]|[一二三四]季度|年[内底末]|月[初中底末]")


def set_aside_since(a: str, b: str) -> tuple[str, str, str]:
    """The two statements without the phrase that says since when one of them holds, and that
    phrase, when only one has it ("从十月起"); else a, b and ""."""
    found_a, found_b = _SINCE_PHRASE.search(a), _SINCE_PHRASE.search(b)
    if bool(found_a) == bool(found_b):
        return a, b, ""
    if found_a:
        return _cut(a, found_a), b, found_a.group().rstrip("，,、")
    assert found_b is not None
    return a, _cut(b, found_b), found_b.group().rstrip("，,、")


def _cut(text: str, found: re.Match[str]) -> str:
    return text[:found.start()] + text[found.end():]


def changed_subject(text: str) -> str:
    """The subject a Chinese or Japanese statement opens with when it goes on to say since when
    it holds or that it was put off (_CHANGED_SUBJECT), two to eight characters and not one that
    opens statements about anything (the user, the team: _GENERIC_SUBJECTS); else ""."""
    found = _CHANGED_SUBJECT.match(text)
    if found is None or found.group(1) in _GENERIC_SUBJECTS:
        return ""
    return found.group(1)


# How a statement changes what another that opens with its subject says: it puts it off, or says since when
Change = Literal["put_off", "since"]


def change_of(changing: str) -> Change:
    """How `changing`, a statement with a changed_subject, changes the statements that open with its
    subject: it puts it off ("公测延期了") or says since when it holds ("王磊从十月起在平台组")."""
    return "put_off" if _PUTS_OFF.search(changing) and not _SINCE_PHRASE.search(changing) else "since"


def changes_taken(other: str) -> frozenset[Change]:
    """The changes (change_of) that can take back what `other` says: "since" when it does not say
    since when itself (set_aside_since needs it on one side only); "put_off" when it gives a date
    and puts nothing off (put_off). A cheap test of a name or description, before a pair is judged."""
    taken: set[Change] = set()
    if _SINCE_PHRASE.search(other) is None:
        taken.add("since")
    if _DATED.search(other) is not None and _PUTS_OFF.search(other) is None:
        taken.add("put_off")
    return frozenset(taken)


def put_off(putting: str, other: str) -> str:
    """The clause in which `putting` says that what `other` opens with was put off (postponed,
    rescheduled, cancelled), when `other` gives it a date or a time and puts nothing off itself;
    else "". Only a plan's date is what a postponement takes back: "公测延期了" against
    "公测定在6月1日上线", not against "公测的反馈发到#beta频道"."""
    subject = changed_subject(putting)
    if not subject or not other.lstrip().startswith(subject) or not _DATED.search(other) or _PUTS_OFF.search(other):
        return ""
    clause = re.split(r"[，,。；;！？!?\n]", putting.strip(), maxsplit=1)[0]
    return clause if _PUTS_OFF.search(clause) else ""
