"""What kind of value a few words are: a number, a time, a weekday, a month, a version.

Two statements that say the same thing about one subject and differ only in a value say
that the value changed ("Standup is at 9:30" / "… at 10:00"; "Staging deploys happen every
Thursday" / "… every Wednesday"; "DBはPostgreSQL 16" / "… 17"). A value stands in for
another of its own kind only: a weekday for a weekday, a time for a time, a number for a
number. Pure text, no store.
"""

import re

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


def value_kind(written: list[str]) -> str | None:
    """'number', 'weekday' or 'month' when the tokens (as written, no spaces in CJK) are one value
    of that kind, with at most a counter or unit after it (10点, 13時, 30万円); else None.

    A number that is part of a name ("m1", "q2x", "S3") is not a value: it names a thing."""
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
