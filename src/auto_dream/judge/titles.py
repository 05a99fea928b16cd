"""A memory's name and description from what an entry says, as a careful person writes them.

A name is a short, complete phrase: never cut inside a word, a number, an abbreviation
(e.g., Fig. 4, U.S., v2.3), a code span, a link or a URL; no "…", no Markdown, no list
marker, no address. A description is a sentence that adds to the name (MEMORY.md shows it
beside the name): what follows the name when the name is a sentence, a clause or a label's
value, else the statement the name heads; then the Reason and How to apply lines.

The text is read in four steps, each a small rule below:

1. `read_entry`: markers and labels are set apart from the statement: a checkbox and its
   state, a list number, bold, a time, a label before a colon ("Decision:", 「教训：」), the
   list of a line that is only a label, and the Reason / How to apply lines.
2. `boundaries`: where the statement may be cut, and how strongly: the end of a sentence;
   a clause (; — → a colon, a Japanese topic 「…は」); a comma (，, Japanese 、); a phrase
   (an English preposition or conjunction, a parenthesis, a Japanese particle after a
   content word, a Chinese coverb). Never inside a protected span.
3. `head_of`: where the name stops.
4. `title_of`: the name (the label kept when it fits, the person a user memory is about
   left out) and the description.

`name_problem` and `description_problem` are the checks, for a name and a description
someone else wrote (Claude's, in distill.claude): the same rules' view of a cut or a copy.
"""

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, replace

NAME_CHARS = 60  # the longest name dream makes (a name a person wrote is never cut)
NAME_WIDTH = 60  # ... and its width in columns, a CJK character taking two: a file name's slug keeps 50
DESCRIPTION_CHARS = 150
SHORT_TITLE = 40  # columns: about six English words, twenty CJK characters
# How much of a statement (or of a part of the description) is read for a name and a
# description: both come from its start, and a 50 KB entry must not cost seconds.
WINDOW = 400
ELLIPSIS = "…"

# ---------------------------------------------------------------- what the text is written in

_KANA = re.compile(r"[\u3040-\u30ff]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def language_of(text: str) -> str:
    """'ja' when the text has kana, 'zh' when it has other CJK characters, else 'en'."""
    if _KANA.search(text):
        return "ja"
    return "zh" if _CJK.search(text) else "en"


def width(text: str) -> int:
    """Columns the text takes: wide (CJK) characters two, others one."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# ---------------------------------------------------------------- 1. markers, labels, why and how

# Why / How to apply lines (a rule's reason and how it applies), as agents write them.
WHY_LINE = re.compile(r"^\s*(?:reason|why|because|原因|理由|因为|背景)\s*[:：]\s*", re.IGNORECASE)
HOW_LINE = re.compile(r"^\s*(?:how to apply|how|apply|做法|如何应用|适用|適用|対応|対策)\s*[:：]\s*", re.IGNORECASE)

_LIST_MARKER = re.compile(r"^\s*(?:[-*+•・]\s+|\d{1,3}[.)．）](?=\s|$)\s*|\d{1,3}[、．](?!\d)\s*)")
_CHECKBOX = re.compile(r"^\s*\[([ xX✓✔])\]\s*")
_TIME_MARKER = re.compile(r"^\s*\[\d{1,2}:\d{2}(?::\d{2})?\]\s*(?:[-–—]\s*)?")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
# A label: a few words before a colon that ends them (`Decision:`, `Plan for Q3:`, 「教训：」,
# 「確認したこと (Q&A):」); not a URL's scheme, a time (09:45) or `migrate:fresh`.
_LABEL = re.compile(r"^([^\s:：。.!?！？;；\[\]`][^:：。!?！？;；\[\]`\n]{0,29}?)\s*(?::(?=\s|$)|：)\s*")
_LABEL_WORDS = 6
_NOT_LABEL = re.compile(r"^(?:https?|ftp|mailto|file|e\.g|i\.e|[\d\s]+)$", re.IGNORECASE)

# Labels of work to do (a TODO) and of work done, in the languages agents write in.
_OPEN_LABEL = re.compile(r"^(?:to ?do|todo|open|pending|未完了|未着手|未対応|未解決タスク|待办|待辦|未完成)$",
                         re.IGNORECASE)
_DONE_LABEL = re.compile(r"^(?:done|完了|済み?|已完成|完成)$", re.IGNORECASE)


# Headings under which a note keeps what has no section of its own: their items share nothing.
MISCELLANY = frozenset({
    "misc", "miscellaneous", "misc notes", "other", "others", "other notes", "notes", "random", "random notes",
    "odds and ends", "inbox", "scratch", "scratchpad",
    "メモ", "その他", "その他メモ", "雑記", "雑多", "雑メモ", "備考", "覚え書き", "小ネタ",
    "杂项", "其他", "其它", "备注", "杂记", "随记", "随手记", "零碎", "笔记",
})


def miscellany(heading: str) -> bool:
    """Whether a heading names a miscellany (MISCELLANY: `メモ`, `Misc.`): its items share nothing,
    and it says nothing of them."""
    return heading.casefold().strip(" .:：。…") in MISCELLANY


@dataclass(frozen=True)
class EntryText:
    """An entry's text, its parts set apart (`read_entry`)."""

    statement: str  # what it says, on one line, without markers, labels or bold
    label: str = ""  # the label before it ("Decision", "教训"), as written
    label_mark: str = ": "  # what followed the label: ": " or "："
    state: str | None = None  # "open" or "done": a checkbox, or a TODO label
    details: tuple[str, ...] = ()  # the lines after the first, each on one line, without markers
    why_how: tuple[str, ...] = ()  # the Reason / How to apply lines, as written
    language: str = "en"


def strip_markers(line: str) -> tuple[str, str | None]:
    """A line without its list marker, number, time, checkbox and bold, and the checkbox's state.

    For `- [ ] Rotate the Sentry DSN` (a name that held "[ ]"), `4. Do the DNS cutover…` (a
    name that was "4"), `[20:15] - xArm 到着` (OpenClaw's timed headings), `**Status:**`."""
    line = _BOLD.sub(lambda m: m.group(1) or m.group(2), line)
    state = None
    while True:
        before = line
        line = _TIME_MARKER.sub("", _LIST_MARKER.sub("", line, count=1), count=1)
        box = _CHECKBOX.match(line)
        if box:
            state = "open" if box.group(1) == " " else "done"
            line = line[box.end():]
        if line == before:
            return " ".join(line.split()), state


def split_labels(line: str) -> tuple[list[str], str, str]:
    """The labels before the statement (`Decision:`, 「決定: 理由:」), the mark after the last
    one, and the statement. A label is a few words, never a sentence."""
    labels: list[str] = []
    mark = ": "
    while True:
        found = _LABEL.match(line)
        if not found:
            return labels, mark, line
        label = found.group(1).strip()
        if len(label.split()) > _LABEL_WORDS or _NOT_LABEL.match(label):
            return labels, mark, line
        if not (labels and _same_word(labels[-1], label)):  # 「Lessons: Lesson: …」: a heading and its label
            labels.append(label)
        else:
            labels[-1] = label
        mark = "：" if "：" in found.group(0) else ": "
        line = line[found.end():]


# A heading written as a label line: an imported section's heading path (`Robot arm setup › Safety:`)
_HEADING_LINE = re.compile(r"^[^\n.!?。！？]{1,120}?\s›\s[^\n.!?。！？]{1,120}[:：]$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|[\s:|-]*-[\s:|-]*\|\s*$")


def _table_rows(lines: list[str]) -> list[str]:
    """A Markdown table's data rows as items (`RealSense D435 (¥48,500, 届いた)`): its header row and
    rule left out, as a name or a description says a row, not the columns' titles."""
    out: list[str] = []
    for number, line in enumerate(lines):
        if not _TABLE_ROW.match(line):
            out.append(line)
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if _TABLE_RULE.match(line) or _TABLE_RULE.match(following):  # the rule, or the header above it
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|") if cell.strip()]
        out.append(f"{cells[0]} ({', '.join(cells[1:])})" if len(cells) > 1 else "".join(cells))
    return out


def _with_labels(labels: list[str], more: list[str]) -> list[str]:
    """`labels` and then `more`, one label said twice (a heading and its label) kept once."""
    out = list(labels)
    for label in more:
        if out and _same_word(out[-1], label):
            out[-1] = label
        else:
            out.append(label)
    return out


def _same_word(one: str, other: str) -> bool:
    """'Lessons' and 'Lesson', 'TODO' and 'todo': one label said twice."""
    one, other = one.casefold(), other.casefold()
    return one == other or one.rstrip("s") == other.rstrip("s")


def read_entry(text: str) -> EntryText:
    """An entry's statement, label, checkbox state, details and Reason / How to apply lines.
    A line that is only a label says what its list says (`Decisions:` and its items)."""
    lines = _continued([line for line in text.strip().split("\n") if line.strip()])
    if not lines:
        return EntryText("")
    language = language_of(text)
    why_how = [" ".join(line.split()) for line in lines if WHY_LINE.match(line) or HOW_LINE.match(line)]
    rest = [line for line in lines if not (WHY_LINE.match(line) or HOW_LINE.match(line))]
    if not rest:  # only a reason: it is the statement
        rest, why_how = lines[:1], why_how[1:]
    first, state = strip_markers(rest[0])
    if len(rest) > 1 and _HEADING_LINE.match(first):  # a heading (path) over its items: all of it a label
        labels, mark, statement = [first.rstrip(" :：")], ("：" if first.endswith("：") else ": "), ""
    else:
        labels, mark, statement = split_labels(first)
    items = [strip_markers(line) for line in _table_rows(rest[1:])]
    details = [detail for detail, _ in items if detail]
    if labels and state is None and (_OPEN_LABEL.match(labels[-1]) or _DONE_LABEL.match(labels[-1])):
        state, labels = ("open" if _OPEN_LABEL.match(labels[-1]) else "done"), labels[:-1]
    states = {item_state for detail, item_state in items if detail and item_state}
    if not statement and len(states) > 1:  # open and done checkboxes: the open ones first, the done said so
        details = [detail for detail, item_state in items if detail and item_state != "done"] + [
            _DONE_WORD[language] + detail for detail, item_state in items if detail and item_state == "done"]
    elif not statement and states and all(item_state for detail, item_state in items if detail):
        state = states.pop()
    if not statement and details:  # a heading's items: a bold label line (`**Decision:**`) or an
        # item that says the heading's label again (`Lessons:` `- Lesson: …`) is part of the label
        while details:
            more, more_mark, item = split_labels(details[0])
            if more and not item:
                labels, mark, details = _with_labels(labels, more), more_mark, details[1:]
            elif more and labels and _same_word(labels[-1], more[0]) and len(more) == 1:
                labels, mark, details = _with_labels(labels, more), more_mark, [item, *details[1:]]
                break
            else:
                break
        statement, details = joined(details, language), []
    if not statement and labels:  # only a label, and nothing it labels
        statement, labels = labels[-1], labels[:-1]
    return EntryText(statement, ": ".join(labels), mark, state, tuple(details), tuple(why_how), language)


def _continued(lines: list[str]) -> list[str]:
    """Lines with an indented line that is no list item of its own joined to the item above it:
    `- テストは pytest で` and `  書く` are one item, 「テストは pytest で書く」 (a space between
    two words, none where a CJK character meets the join)."""
    out: list[str] = []
    for line in lines:
        if out and line[:1].isspace() and not _LIST_MARKER.match(line) and _LIST_MARKER.match(out[-1]):
            above, more = out[-1].rstrip(), line.strip()
            glue = "" if _CJK.match(more) or _CJK.match(above[-1:]) else " "
            out[-1] = above + glue + more
        else:
            out.append(line)
    return out


def joined(items: list[str], language: str) -> str:
    """A list's items on one line."""
    return ("；" if language != "en" else "; ").join(item.rstrip("。.;；") for item in items)


# ---------------------------------------------------------------- 2. where a statement may be cut

# Spans no cut falls inside: code, a quotation, a link, a URL, an abbreviation with what it abbreviates
# (Fig. 4, No. 1042, Dr. Okafor), initials (U.S., e.g.), a number (2.4, 09:45, 3/18,
# 192.168.1.185), a dotted name (PAY.JP, versions.yaml, api.kakeibo.example.jp, v2.3).
_LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\s]*)\)")
_URL = re.compile(r"<?(?:https?|ftp)://[^\s<>()（）「」、，。；]*[^\s<>()（）「」、，。；.,;:!?'\"]>?")
_PROTECTED = re.compile("|".join([
    r"`[^`\n]*`",
    r'"[^"\n]*"',
    _LINK.pattern,
    _URL.pattern,
    r"(?<![A-Za-z])(?:fig|figs|no|nos|dr|mr|mrs|ms|st|vol|ch|pp|sec|eq|art|p)\.\s?[A-Za-z0-9(][A-Za-z0-9.-]*",
    r"(?<![A-Za-z])(?:[A-Za-z]\.){2,}",
    r"(?<![A-Za-z])(?:etc|vs|cf|approx|ca|al|inc|ltd|co|jr|sr|resp|incl|esp|est)\.",
    r"\d+(?:[.,:/]\d+)+",
    r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+",
]), re.IGNORECASE)

SENTENCE, CLAUSE, COMMA, TOPIC, PHRASE = 5, 4, 3, 2, 1

_SENTENCE_END = re.compile(r"(?<!\.)[.!?](?=\s|$)|[。！？]+|(?<=[^\x00-\x7f])[!?]")
_CLAUSE_MARK = re.compile(r"\s*[;；]\s*|\s+[—–-]\s+|\s*→\s*|:\s+|\s*：\s*|\s+\|\s+")
_COMMA_MARK = re.compile(r",\s+|\s*，\s*")
_JA_COMMA = re.compile(r"\s*、\s*")
# Japanese: the topic 「Xは」 (には, では, とは) after a content word, like a label before a colon.
_JA_WORD_END = (rf"(?:(?<=[{_HAN}\u30a1-\u30fa\u30fcA-Za-z0-9)）」])"
                rf"|(?<=[{_HAN}][\u3041-\u3096])(?<![のにでとがをもへや])(?!(?<=ま)で))")  # 「件まで」 is one particle
_JA_TOPIC = re.compile(rf"{_JA_WORD_END}(?:に|で|と)?は(?![ずじ])")
# English words a phrase begins with: a preposition, a conjunction, a relative pronoun.
# ("than", "as" and "like" are not among them: they belong to the word before.)
_EN_PHRASE = re.compile(
    r"\s+(?=(?:at|in|on|for|from|to|with|of|before|after|until|by|who|which|that|when|where|because|instead"
    r"|via|into|during|per|and|or|but|so|if|unless|since|while|without|between|except|about|rather|instead)\s)",
    re.IGNORECASE)
# English: a subject before the verb that says what or where it is ("Cold start | is approx. 2.4 s on…",
# "API docs for the shipping partner | live at https://…"): the topic a statement too long for a
# name is named by, like a Japanese 「…は」; what it is, or where, is the description.
_EN_TOPIC = re.compile(r"\s+(?:is|are|was|were|lives?|sits?)\s+(?:(?:at|in|on|under)\s+(?=(?:https?|ftp)://))?",
                       re.IGNORECASE)
_SUBJECT_WORDS = 8
_CLAUSE_WORDS = frozenset("while when whenever if unless that which who whom whose because since after before until "
                          "where whether although though once".split())
# A parenthesis or a quotation that opens after a space or a CJK character (not `track()`).
_OPEN_PAREN = re.compile(r"(?:(?<=\s)|(?<=[\u3000-\u30ff\u4e00-\u9fff]))\s*(?=[(（“「『][^)）”」』])|\s+(?=[(（])")
_BEFORE_URL = re.compile(r"\s*(?=(?:https?|ftp)://)")
# Japanese: a particle after a content word (「英語の長文|を」「DNSの切り替え|は」): the head ends
# on the word. Only the particles: okurigana (書|いて, 好|き) is no boundary.
# X の Y is one noun phrase: no boundary before の.
_JA_PHRASE = re.compile(rf"{_JA_WORD_END}(?=(?:から|まで|より|[をにでとへがもや]))")
# Japanese: a cause that ends a clause with no 、 after it (「…計算していたので|集計テーブルを…」,
# 「Dockerのビルドキャッシュが原因で|テストが…」): a clause boundary, as a comma is.
_JA_CAUSE = re.compile(r"(?:ので|が原因で|のせいで)(?=[^\s、。，,；;])")
# Chinese: before a coverb (在, 把, 从, 按…), a modal or an adverb that begins a predicate, or at
# a space between Chinese and Latin words. After a noun phrase with no coverb in it, the first
# of them ends a topic (数据迁移脚本|要支持断点续跑, 测试环境的数据库|每周日凌晨三点自动重置).
_ZH_COVERB = "在|把|从|按|给|对|向|跟|由|被|将|往|用(?!户)|让"
_ZH_PREDICATE = "是|要|需要|必须|应该|会|能|可以|不能|不要|已经|已|都|也|每"
_ZH_TOPIC = re.compile(rf"^(?:(?!{_ZH_COVERB}|{_ZH_PREDICATE})[^，。；：,;:])+?(?<=[{_HAN}\w)）])\s*"
                       rf"(?={_ZH_COVERB}|{_ZH_PREDICATE})")
_ZH_PHRASE = re.compile(rf"(?<=[{_HAN}\w)）])\s*(?=(?:{_ZH_COVERB}|{_ZH_PREDICATE}|以便|并且|然后))"
                        rf"|(?<=[{_HAN}]) (?=[A-Za-z0-9])|(?<=[A-Za-z0-9]) (?=[{_HAN}])")


@dataclass(frozen=True)
class Boundary:
    end: int  # the head is text[:end]
    start: int  # the rest is text[start:]
    strength: int


def protected_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _PROTECTED.finditer(text)]


def boundaries(text: str, language: str) -> list[Boundary]:
    """Every place `text` may be cut, in order, each with its strength: none inside a protected
    span, none after a protected span's own full stop (U.S., approx.), none that leaves less
    than a phrase after it (「…，iOS 14」)."""
    spans = protected_spans(text)  # in order, none overlapping
    starts = [start for start, _ in spans]

    def inside(position: int) -> bool:
        at = bisect_left(starts, position) - 1
        return at >= 0 and spans[at][0] < position < spans[at][1]

    found: dict[int, Boundary] = {}

    def add(end: int, start: int, strength: int) -> None:
        if 0 < end < len(text) and start < len(text) and not inside(end) and not inside(start) \
                and complete(text[start:], rest=True):
            if end not in found or found[end].strength < strength:
                found[end] = Boundary(end, start, strength)

    for match in _SENTENCE_END.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            add(match.end(), _skip_space(text, match.end()), SENTENCE)
    marks = [(_CLAUSE_MARK, CLAUSE), (_COMMA_MARK, COMMA), (_JA_COMMA, COMMA if language == "ja" else PHRASE),
             (_OPEN_PAREN, PHRASE), (_BEFORE_URL, PHRASE), (_EN_PHRASE, PHRASE)]
    if language == "ja":
        marks += [(_JA_TOPIC, TOPIC), (_JA_PHRASE, PHRASE)]
        for cause in _JA_CAUSE.finditer(text):
            add(cause.end(), cause.end(), COMMA)
    elif language == "zh":
        marks.append((_ZH_PHRASE, PHRASE))
    for pattern, strength in marks:
        for match in pattern.finditer(text):
            add(match.start(), _skip_space(text, match.end()), strength)
    topic = _ZH_TOPIC.match(text) if language == "zh" else None
    if topic:
        add(topic.end(), _skip_space(text, topic.end()), TOPIC)
    for verb in _EN_TOPIC.finditer(text) if language == "en" else ():
        # a subject of two words that say something ("Cold start", not "The plan"), not a clause's
        # ("…within reach while the arm | is powered")
        words = [word.lower() for word in re.findall(r"[\w'’.-]+", text[:verb.start()])]
        if sum(word not in _DANGLING for word in words) >= 2 and len(words) <= _SUBJECT_WORDS \
                and not _CLAUSE_WORDS.intersection(words):
            add(verb.start(), verb.end(), TOPIC)
    return [found[end] for end in sorted(found)]


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


# ---------------------------------------------------------------- 3. the head phrase

# A head never ends on a word that needs what follows: an article, a preposition, a linking
# verb ("The U.S. status page is", "Don't add emoji to").
_DANGLING = frozenset("""a an the to of in on at for from with by and or but so if as than that which who whom
whose when where while is are was were be been being am has have had do does did not no nor my your his her its
our their this these those into onto per via vs e.g i.e very also just only still then""".split())
# ... a Chinese coverb or particle, a Japanese possessive or connective particle.
_ZH_DANGLING = re.compile(r"[从把在按给对向跟由被将往到的和与及或地得是了要会能想不]$")
_JA_DANGLING = re.compile(rf"(?<=[{_HAN}\u30a1-\u30fa\u30fcA-Za-z0-9])(?:[のなをがにでとへもや]|から|まで|より)$")
# A dependent clause alone is no name: "When a test is flaky", 「データがリセットされるので」.
_EN_DEPENDENT = re.compile(r"^(?:when|whenever|if|unless|once|while|because|since|although|though|after|before"
                           r"|as soon as|in case)\b(?![^,;]*[,;])", re.IGNORECASE)
_JA_DEPENDENT = re.compile(r"(?:ので|けど|けれど|たら|ため|のに|ても|でも)$")
_ZH_DEPENDENT = re.compile(r"^(?:如果|假如|要是|当|因为|虽然|尽管)|(?:之前|以前|之后|以后|的时候|时候)$")
_MIN_WORDS = 2
_MIN_CJK = 4
# What the judge reads as aimed at the words after it (judge.similarity): a negation, a change
# or a replacement, in the languages agents write in. A name that cut one off from its words
# would say something else ("…did not get"; "…rather than fixating").
_SIGNAL = re.compile(r"\b(?:not|no|never|without|nothing|none|cannot|instead|rather than|no longer|now uses?"
                     r"|(?:switch|mov|migrat|upgrad|downgrad|chang|convert|replac|renam|port)(?:ed|ing))\b|n't\b"
                     r"|不|没|别|勿|无须|未|改用|换成|改为|改成|迁移到|切换到|ない|なかった|ません|ではなく|じゃなく|代わりに"
                     r"|(?<=[\u3041-\u3096])ず|[うくすつぬふむゆるぐずづぶ]な(?:[。！!]|$)|禁止|に変更|に移行|に切り替え",
                     re.IGNORECASE)


def complete(head: str, *, dependent: bool = False, rest: bool = False, whole: bool = False) -> bool:
    """Whether `head` reads as a complete phrase: long enough, no more than an address, not
    a dependent clause alone (unless `dependent`), ending on no dangling word (unless it is the
    `whole` statement: nothing was cut from its last word, "…with debug logging on"), leaving no
    bracket, quote or code span open. As a `rest` (what follows a cut): only long enough."""
    if rest:
        head = head[:40]
        return _units(head) >= (_MIN_CJK if _CJK.search(head) else _MIN_WORDS) or bool(_URL.search(head))
    if any(re.search(r"\w", head[found.end():]) for found in _URL.finditer(head)):
        return False  # words after an address: the name would have a hole where it was
    whole = whole and not _URL.search(head)  # a name never shows an address: what it ends on is cut
    head = visible(head).strip().rstrip(".。!！?？,，、;；:：")
    if not head or re.fullmatch(r"[\W\d_]+", head) or _units(head) < (_MIN_CJK if _CJK.search(head) else _MIN_WORDS):
        return False
    words = re.findall(r"[\w'’.-]+", head)
    cjk = len(_CJK.findall(head))
    language = language_of(head)
    if language == "ja":
        head = _JA_CONNECTIVE.sub("", head)
    if cjk and not whole and (_ZH_DANGLING if language == "zh" else _JA_DANGLING).search(head):
        return False
    if not dependent and (_JA_DEPENDENT.search(head) or _ZH_DEPENDENT.search(head) or _EN_DEPENDENT.match(head)):
        return False
    if not whole and not _CJK.match(head[-1]) and words and words[-1].lower().rstrip(".") in _DANGLING:
        return False
    if head[-1] in "(（[「『“\"'-—–/\\":
        return False
    return balanced(head)


def _units(text: str) -> int:
    """How much a text says: its CJK characters and its other words."""
    return len(_CJK.findall(text)) + len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’._/:-]*", visible(text) or text))


def visible(text: str) -> str:
    """What a name shows of `text`: a link's text for the link, no URL."""
    return " ".join(_URL.sub("", _LINK.sub(lambda m: m.group(1), text)).split())


_PAIRS = (("(", ")"), ("（", "）"), ("[", "]"), ("「", "」"), ("『", "』"), ("“", "”"), ("【", "】"))


def balanced(text: str) -> bool:
    """No bracket, quote, bold or code span left open."""
    if text.count("`") % 2 or text.count("**") % 2 or text.count('"') % 2:
        return False
    return all(text.count(opening) == text.count(closing) for opening, closing in _PAIRS)


def head_of(text: str, language: str, max_width: int = NAME_WIDTH, *, whole: bool = False) -> Boundary | None:
    """Where the name stops in `text` (None: the whole text is the name, or no boundary fits).
    Widths are of what the name shows (`visible`).

    - At the first sentence, when another follows and it fits.
    - Nowhere, when the text fits and the name may be `whole` (other lines say more).
    - At the first clause, else the first comma, that leaves a complete phrase that fits.
    - Nowhere else when the text fits: a topic or a phrase cut of one sentence would leave the
      name without what it says ("The staging cluster is the only one" of "… with debug
      logging on"; 「今年的目标」 of 「…是把 Rust 学到…」) and the description only the rest of
      the sentence. One sentence named whole has nothing left to describe: its description is
      the sentence, and MEMORY.md shows the name alone.
    - A text too wide: at the first topic that leaves a complete phrase that fits, else at
      its last phrase boundary that fits; failing that, at the last
      dependent clause that fits (「…移行したら」 before a cut inside the main clause).

    A phrase boundary never leaves the clause's negation behind: 「勝手にライブラリのバージョン」
    would say the opposite of 「…を上げないで」 (to a reader, and to the judge, which reads names)."""
    cuts = boundaries(text, language)
    # a text that is no complete phrase (an address inside it, a dangling end) is never the name whole
    total = width(visible(text)) if complete(text, dependent=True, whole=True) else max_width + 1

    def fits(cut: Boundary, *, dependent: bool = False) -> bool:
        head = text[:cut.end]
        return width(visible(head)) <= max_width and complete(head, dependent=dependent)

    first_sentence = next((cut for cut in cuts if cut.strength == SENTENCE), None)
    if first_sentence and fits(first_sentence):
        return first_sentence
    if total <= max_width and whole:
        return None
    # a text that fits is cut only where what follows is a sentence of its own (a clause, a
    # comma's): a topic or a phrase cut would leave the rest of its one sentence to the description
    for strength in (CLAUSE, COMMA) if total <= max_width else (CLAUSE, COMMA, TOPIC):
        chosen = next((cut for cut in cuts if cut.strength >= strength and fits(cut)
                       and (cut.strength > TOPIC or keeps_negation(text, cut))), None)
        if chosen:
            return chosen
    if total <= max_width:
        return None
    phrases = ([cut for cut in cuts if fits(cut) and keeps_negation(text, cut)]
               or [cut for cut in cuts if fits(cut) and keeps_negation(text, cut, after=False)])
    dependents = [cut for cut in cuts if cut.strength >= TOPIC and fits(cut, dependent=True)]
    if language == "ja" and dependents:  # the verb comes last: a cut inside the main clause loses it
        return dependents[-1]
    return phrases[-1] if phrases else dependents[-1] if dependents else None


def keeps_negation(text: str, cut: Boundary, *, after: bool = True) -> bool:
    """Whether a phrase or topic cut keeps the clause's negation (or change, or replacement:
    _SIGNAL) with what it negates: none left after the cut (「勝手にライブラリのバージョン」 of
    「…を上げないで」; 「チケットに紐づかないTODOコメント」 of 「…は書かない」; unless not `after`),
    and none at the head's end with fewer than two words after it ("…did not get" of "did not
    get into the final round" negates "get", and contradicts "will get new chess books")."""
    if after and cut.start < len(text) and _SIGNAL.search(text[cut.start:]):
        return False
    head = text[:cut.end]
    last = None
    for last in _SIGNAL.finditer(head):
        pass
    return last is None or _units(head[last.end():]) >= (_MIN_CJK if _CJK.search(head[last.end():]) else 2)


def cut_to_width(text: str, max_width: int) -> str:
    """The longest start of `text` within `max_width` columns that ends between two words (a
    space, or a change of script: Latin to CJK, kana to kanji) and reads as a complete phrase,
    never inside a protected span, a word or a number. No "…": it is a name."""
    spans = protected_spans(text)
    ends = []
    for position in range(1, len(text)):
        if width(text[:position]) > max_width:
            break
        before, after = text[position - 1], text[position]
        if any(start < position < end for start, end in spans):
            continue
        # between scripts, but not before okurigana (上|げないで): a kanji's kana ending is part of its word
        if after.isspace() or before.isspace() or (_script(before) != _script(after) and (
                _script(after) != "hiragana" or _JA_PHRASE.match(text, position))):
            ends.append(position)
    whole = [end for end in ends if complete(text[:end])]
    kept = [end for end in whole if keeps_negation(text, Boundary(end, end, PHRASE))] or [
        end for end in whole if keeps_negation(text, Boundary(end, end, PHRASE), after=False)]
    if kept or whole or ends:
        return text[:(kept or whole or ends)[-1]].strip()
    count = 0
    while count < len(text) and width(text[:count + 1]) <= max_width:
        count += 1
    return text[:count]


def _script(char: str) -> str:
    if "\u3041" <= char <= "\u309f":
        return "hiragana"
    if "\u30a0" <= char <= "\u30ff":
        return "katakana"
    if _CJK.match(char):
        return "han"
    return "word" if char.isalnum() else "other"


# ---------------------------------------------------------------- 4. the name and the description

# The person a user memory is about, at its start: a title leaves them out (the type says who).
_EN_PERSON = re.compile(r"^(?:the user's|user's|the user is (?:an? )?|user is (?:an? )?|i am (?:an? )?|i'm (?:an? )?"
                        r"|the user\b|user\b|i\b)\s*(?=\S)", re.IGNORECASE)  # not the "user" of "Username"
_EN_VERB_AFTER_I = re.compile(r"^(?:(usually|always|often|mostly|also|really|still|sometimes|never|rarely) )?"
                              r"([a-z]+)\b", re.IGNORECASE)
_ZH_PERSON = re.compile(r"^(?:用户|我)(?:是|的)?(?=喜欢|不喜欢|更喜欢|偏好|讨厌|习惯|平时|经常|每天|一般|擅长"
                        r"|熟悉|不熟悉|负责"
                        r"|住在|来自|正在|在学|以前|曾经|目前|觉得|认为|爱|主要|比较|今年|明年|目标|名字|角色|职位|背景"
                        r"|母语|时区|爱好|做|\S{1,12}的(?:技术|负责|工程|开发|设计|产品))")
_JA_PERSON = re.compile(r"^(?:ユーザー|ユーザ|利用者|私|わたし|僕|ぼく|自分)(?:さん)?(?:は|の)(?=\S)")
_THIRD_PERSON = {"have": "has", "do": "does", "go": "goes", "am": "is", "be": "is"}
# Japanese: a title does not end on the connective で of 「〜出身で、」「〜が好きで、」.
_JA_CONNECTIVE = re.compile(rf"(?<=[{_HAN}\u30a1-\u30fa\u30fcA-Za-z0-9き])で$")
_PARENTHETICAL = re.compile(r"[(（]([^()（）]+)[)）]")
_LEADING_JOINER = re.compile(r"^(?:→\s*|[-—–]\s+|(?:so|and|but|then|which|who)\s+(?=\S))", re.IGNORECASE)
_DONE_WORD = {"en": "Done: ", "zh": "已完成：", "ja": "完了: "}
_STATE_WORDS = {"open": {"en": "Still to do.", "zh": "待办，尚未完成。", "ja": "未完了のタスク。"},
                "done": {"en": "Done.", "zh": "已完成。", "ja": "完了済み。"}}


@dataclass(frozen=True)
class Title:
    name: str
    description: str


def title_of(text: str, memory_type: str = "project") -> Title:
    """The name and description of a new memory made of `text` (an entry) of `memory_type`.
    A miscellany's heading (`メモ`, `Misc`) is left out of the name. Under a heading path
    (`週次ふりかえり › 良かったこと`) that leaves too little room for what its
    first item says, or none (`kakeibo インフラ › DNS`: "DNS: api.kakeibo.example.jp CNAME …", not the
    record alone), the last heading alone is kept in the name, when the item then fits whole."""
    entry = read_entry(text)
    if entry.label and any(miscellany(part) for part in entry.label.split(" › ")):
        # "Misc: Meeting with the accountant on 3/25": a miscellany's heading says nothing of its item
        entry = replace(entry, label=" › ".join(part for part in entry.label.split(" › ") if not miscellany(part)))
    title, whole = _title(entry, memory_type)
    # the path left too little room, or none at all (the name is the statement without it, and the last
    # heading is one label: not "決定: Decision", a heading and the bold label under it that say one thing)
    last = entry.label.rsplit(" › ", 1)[-1]
    if " › " in entry.label and (not whole or (not title.name.startswith(entry.label.split(" › ", 1)[0])
                                              and ": " not in last)):
        shorter = replace(entry, label=last)
        short_title, short_whole = _title(shorter, memory_type)
        if short_whole or width(short_title.name) > width(title.name):
            return short_title
    return title


def _title(entry: EntryText, memory_type: str) -> tuple[Title, bool]:
    """The title of `entry`, and whether its name holds the whole of the statement's first part."""
    statement, language = entry.statement[:WINDOW], entry.language
    topic = topic_of(statement, language, memory_type)
    dropped = topic != statement  # the name leaves out how the statement begins: it no longer begins it
    after = [*entry.details, *entry.why_how]
    room = _name_room(entry)
    whole = bool(after)  # other lines say more: the statement may be the name
    cut = head_of(topic, language, room, whole=whole)
    if entry.label and " › " not in entry.label and cut is not None and cut.strength < COMMA and (alone := head_of(
            topic, language, NAME_WIDTH, whole=whole)) is not None and alone.strength >= CLAUSE and (
            dropped_words := topic[cut.end:alone.end].strip()) and not _PARENTHETICAL.fullmatch(dropped_words):
        # the label leaves room for only part of the first clause, its end lost ("ユーザーについて: 返答は結論
        # から先に、短め" of 「…短めにしてほしいとのこと」): the clause whole names it, the body keeps the label
        # (a heading path is first shortened to its last heading: title_of)
        entry, room, cut = replace(entry, label=""), NAME_WIDTH, alone
    if cut is None and width(visible(topic)) > room and room < NAME_WIDTH:  # the label leaves too little
        entry, room = EntryText(statement, "", entry.label_mark, entry.state, entry.details, entry.why_how,
                                language), NAME_WIDTH
        cut = head_of(topic, language, room, whole=whole)
    aside = False  # the name leaves out an aside the description keeps
    if language == "en" and cut is not None and cut.strength < COMMA \
            and not _PARENTHETICAL.fullmatch(topic[cut.start:].strip()):  # (an aside after the name describes it)
        # a title drops its article and its asides: the first clause may then fit whole
        article = _ARTICLE.match(topic)
        plain = _ASIDE.sub("", topic[article.end():] if article else topic)
        plain_cut = head_of(plain, language, room, whole=whole)
        if plain != topic and (plain_cut is None or plain_cut.strength >= COMMA) and width(visible(
                plain[:plain_cut.end] if plain_cut else plain)) <= room:
            aside = _ASIDE.search(topic) is not None
            topic, cut, dropped = capitalised(plain), plain_cut, True
    conclusion = _conclusion(topic, room) if language == "ja" and cut is not None and cut.strength < TOPIC else None
    if language != "en" and cut is not None and cut.strength <= TOPIC:
        conclusion = _said_of_bare_topic(topic, language, room) or conclusion
    if conclusion is not None:  # the name is the clause it ends on, the description the whole statement
        topic, cut, aside = conclusion, None, True
    head = topic[:cut.end] if cut else topic
    rest = topic[cut.start:] if cut else ""
    if width(visible(head)) > room or (cut is None and not complete(head, dependent=True, whole=True)):
        # no boundary fits: the longest start that ends between words and reads whole
        head = cut_to_width(head, room)
        rest = topic[len(head):].strip()
    if language == "en" and cut is not None and (bare := _BARE_VERB_END.search(head)) \
            and len(head[:bare.start()].split()) >= 2:
        # a name never ends on the verb its complement was cut from ("Release checklist lives"):
        # the subject names it, and the description is the whole statement
        head, rest = head[:bare.start()], topic[bare.start():].strip()
    name = _named(entry, _tidy_head(head, language), capital=dropped or (entry.state is not None and not entry.label))
    # a name that left out an aside, or names a conclusion, is described by the whole statement
    lead = [*_state_words(entry), _as_sentence(statement, language)] if aside else _lead(entry, statement, rest, cut)
    description = fit_description([*lead, *after], language)
    if not description or description_problem(description, name):
        description = fit_description([_as_sentence(statement, language), *after], language)
    first_part = re.split(r"[;；]", topic, maxsplit=1)[0].strip()
    shown_head, shown_part = (visible(_tidy_head(part, language)).strip() for part in (head, first_part))
    whole = not dropped and shown_head == shown_part
    return Title(name or "memory", description or name or "memory"), whole


_ARTICLE = re.compile(r"(?:the|a|an)\s+(?=[a-z])", re.IGNORECASE)
_ASIDE = re.compile(r"\s*\([^()]*\)(?=[\s,;:.]|$)")
# English: what follows "and" is a sentence of its own when its first word is a verb with its
# object ("…with @flaky | and open an issue"), not a noun joined to the name's ("or PR titles").
_EN_NEW_CLAUSE = re.compile(r"(?:and|but|then|so)\s+(?:then\s+)?[a-z]+\s+(?:a|an|the|it|its|them|their|this|that"
                            r"|these|those|every|all|each|any|to|up|out|off)\b")
# Chinese: a clause that begins with a modal or a prohibition is a sentence of its own (the subject
# left out, as Chinese does): 「…三部分来写|不要写成流水账」.
_ZH_CLAUSE_START = re.compile(r"(?:不要|不能|不用|别|千万|必须|一定要|需要|应该|要)")


# A verb that says where or what a thing is, at the end of a cut head: what follows it is what it says.
_BARE_VERB_END = re.compile(r"\s+(?:is|are|was|were|lives?|sits?|stays?|resides?|lies|belongs?|runs?|goes|moved|"
                            r"moves?|lands?|comes?|happens?|takes? place)\s*$", re.IGNORECASE)


# A topic that is one bare word (no の, 的 or list of its own): 「アーキテクチャ」, 「方針」, 「目标」.
_BARE_TOPIC = re.compile(r"[^\s の的・、，,()（）]{1,8}")


def _said_of_bare_topic(text: str, language: str, room: int) -> str | None:
    """What a statement says of a topic that is one bare word, when it fits a name whole:
    「アーキテクチャ|は…のレイヤー分け」, 「方針|は…」: a category names nothing; what is said of it does."""
    topic = next((cut for cut in boundaries(text, language) if cut.strength == TOPIC), None)
    if topic is None or not _BARE_TOPIC.fullmatch(text[:topic.end]):
        return None
    said = text[topic.start:].strip()
    return said if width(visible(said)) <= room and complete(said, whole=True) else None


def _conclusion(text: str, room: int) -> str | None:
    """Japanese puts what a long sentence comes to last: 「…問い合わせが増えていて調べたところ…計算して
    いたので|集計テーブルを日次で更新する方式に変えることにした」. When no clause at its start fits a
    name, its last clause does, whole and no dependent clause, it names the statement. Not of
    several sentences or a list's items joined (「…（平均40分）；手書きレシートの…」): the first names those."""
    clauses = [cut for cut in boundaries(text, "ja") if cut.strength >= COMMA]
    if not clauses or any(cut.strength > COMMA for cut in clauses):
        return None
    last = text[clauses[-1].start:].strip()
    return last if width(visible(last)) <= room and complete(last, whole=True) else None


def _name_room(entry: EntryText) -> int:
    """The width left for the statement's head once the label is in the name."""
    return NAME_WIDTH - width(entry.label + entry.label_mark) if entry.label else NAME_WIDTH


def _named(entry: EntryText, head: str, *, capital: bool) -> str:
    """The name: the label kept in front of the head ('Decision: we keep Postgres 15'); the
    label alone when the head is only an address."""
    head = capitalised(head, entry.language) if capital else head
    if not entry.label:
        return head
    if not head:
        return entry.label
    return f"{entry.label}{'：' if entry.label_mark == '：' else ': '}{head}"


def _tidy_head(head: str, language: str) -> str:
    """The head as a name: a link's text for the link, no URL (a title names, a description
    points), no closing punctuation, no Japanese connective で."""
    head = _URL.sub("", _LINK.sub(lambda m: m.group(1), head))
    head = " ".join(head.split()).rstrip(" .。!！,，、;；:：-—–→")
    if language == "ja":
        head = _JA_CONNECTIVE.sub("", head)
    return head.strip()


def _lead(entry: EntryText, statement: str, rest: str, cut: Boundary | None) -> list[str]:
    """What the description says first: the checkbox's state, then the rest of the statement
    when the name stopped at a sentence, a clause or a comma, or before a closing
    parenthesis; else the statement the name heads; only the state when the name is the
    whole statement and lines after it say more."""
    language = entry.language
    state = _state_words(entry)
    aside = _PARENTHETICAL.fullmatch(rest.strip())
    if aside:
        return [*state, _as_sentence(aside.group(1), language)]
    if rest and cut is not None and (cut.strength >= TOPIC or (language == "zh" and _ZH_CLAUSE_START.match(rest))
                                     or (language == "en" and _EN_NEW_CLAUSE.match(rest))):
        return [*state, _as_sentence(rest, language)]
    if not rest and not entry.label and (entry.state or entry.details or entry.why_how):
        return state
    return [*state, _as_sentence(statement, language)]


def _state_words(entry: EntryText) -> list[str]:
    """The checkbox's state as the description says it first ("Still to do.", 已完成。), or nothing."""
    return [_STATE_WORDS[entry.state][entry.language]] if entry.state else []


def topic_of(statement: str, language: str, memory_type: str) -> str:
    """What the name is about: the statement without the person a user memory is about, and
    without a report's frame ("After the outage we agreed that every service must…"). A
    statement of SHORT_TITLE columns or fewer is a title as it is ("The user lives in Lisbon":
    an agent finds it by what it wrote)."""
    if width(visible(statement)) <= SHORT_TITLE:
        return statement
    if memory_type == "user":
        statement = without_person(statement, language)
    reported = _REPORTED.match(statement) if language == "en" else None
    if reported and len(statement[reported.end():].split()) >= 3:
        return capitalised(statement[reported.end():])
    asked = _ASKED.match(statement) if language == "en" and memory_type == "feedback" else None
    if asked and len(statement[asked.end():].split()) >= 3:  # the type says who asks
        return capitalised(statement[asked.end():])
    return statement


# "The user wants X", "I prefer X": in a feedback memory, what is asked for is the statement.
_ASKED = re.compile(r"^(?:the user|user|i)\s+(?:wants|want|would like|'d like|prefers|prefer|asks for|asked for"
                    r"|expects)\s+(?:that\s+)?", re.IGNORECASE)
# "we agreed that X", "I learned that X": what was agreed or learned is the statement.
_REPORTED = re.compile(r"^[^.;:]*?\b(?:we|i|they|the team)\s+(?:agreed|decided|learned|learnt|found|noticed|realised"
                       r"|realized|confirmed|concluded)\s+(?:that\s+)?", re.IGNORECASE)


def without_person(statement: str, language: str) -> str:
    """A user memory's statement without the person it is about at its start ("The user is a
    backend developer…" → "backend developer…"; 「私はフロントエンド出身で」 → 「フロントエンド出身で」;
    「我是灯塔的技术负责人」 → 「灯塔的技术负责人」). A verb after "I" takes the third person."""
    if language == "ja":
        found = _JA_PERSON.match(statement)
        return statement[found.end():] if found else statement
    if language == "zh":
        found = _ZH_PERSON.match(statement)
        return statement[found.end():] if found and len(statement) - found.end() >= _MIN_CJK else statement
    found = _EN_PERSON.match(statement)
    if not found or found.end() >= len(statement):
        return statement
    rest = statement[found.end():]
    if found.group(0).strip().lower() == "i":
        verb = _EN_VERB_AFTER_I.match(rest)
        if not verb:
            return statement
        adverb, word = verb.group(1), verb.group(2)
        rest = (f"{adverb} " if adverb else "") + third_person(word) + rest[verb.end():]
    return rest if len(rest.split()) >= _MIN_WORDS else statement


def third_person(verb: str) -> str:
    """prefer → prefers, watch → watches, study → studies, have → has."""
    lower = verb.lower()
    if lower in _THIRD_PERSON:
        return _THIRD_PERSON[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def capitalised(text: str, language: str = "en") -> str:
    """The first letter upper case when the text starts with a plain lower-case word (not a
    code span, a path, a URL or a dotted name), in English: a Latin word that starts a Chinese or
    Japanese sentence is a name as written (「kakeibo の審査」)."""
    if language == "en" and re.match(r"[a-z]+(?:['’-][a-z]+)*\b(?![._/:]\w|:/)", text):
        return text[:1].upper() + text[1:]
    return text


def _as_sentence(text: str, language: str) -> str:
    """A part of the text as a sentence of its own: no leading arrow or joining word, a capital."""
    text = " ".join(text.split()).strip(" ,，、;；")
    return capitalised(_LEADING_JOINER.sub("", text), language)


def fit_description(parts: list[str], language: str, limit: int = DESCRIPTION_CHARS) -> str:
    """The parts on one line within `limit` characters: as many whole parts as fit; when the
    first alone is longer, its first sentences, else its first clauses, that fit; a cut at a
    word boundary marked "…" only when its first clause alone is longer."""
    parts = [" ".join(part.split()) for part in parts if part.strip()]
    line = ""
    for part in parts:
        joined_line = _glued(line, part, language)
        if len(joined_line) > limit:
            break
        line = joined_line
    if line or not parts:
        return line
    first = parts[0][:WINDOW]
    for strength in (SENTENCE, CLAUSE, COMMA):
        fitting = [cut for cut in boundaries(first, language)
                   if cut.strength >= strength and len(first[:cut.end]) < limit and complete(first[:cut.end])]
        if fitting:
            head = first[:fitting[-1].end].rstrip(" ,，、;；:：")
            return head if strength == SENTENCE else head + ELLIPSIS
    return cut_at_word(first, limit)


def _glued(line: str, part: str, language: str) -> str:
    if not line:
        return part
    end = "" if line[-1] in ".。!！?？:：;；)）" else ("。" if language != "en" else ".")
    joined = line + end
    space = language == "en" or (part[:1].isascii() and joined[-1] not in "。！？；：）")  # 「。xArm」, no space
    return joined + (" " if space else "") + part


def cut_at_word(text: str, limit: int) -> str:
    """`text` within `limit` characters, "…" included, cut at the last place between words."""
    if len(text) <= limit:
        return text
    head = cut_to_width(text, limit - 1) if not _CJK.search(text) else text[:limit - 1]
    if _CJK.search(text):
        head = cut_to_width(text[:limit - 1], 2 * (limit - 1))
    return head.rstrip(" ,，、;；:：.-—") + ELLIPSIS


# ---------------------------------------------------------------- the checks


_ABBREVIATION_END = re.compile(r"(?<![A-Za-z])(?:[A-Za-z]|e\.g|i\.e|etc|vs|cf|approx|fig|figs|no|nos|dr|mr|mrs|ms"
                               r"|st|jr|sr|inc|ltd|co|u\.s|u\.k|vol|ch|pp|al|ca)$", re.IGNORECASE)


def name_problem(name: str, text: str) -> str | None:
    """What is wrong with `name` as the name of a memory made of `text`, or None: it ends in
    an ellipsis, holds Markdown, a list marker or a URL, is a bare number or only a label,
    leaves a bracket or quote open, or stops inside a word, a number, an abbreviation, a code
    span or a link of the text."""
    stem = " ".join(name.split())
    if not stem:
        return "is empty"
    if stem.endswith((ELLIPSIS, "...")):
        return "ends with an ellipsis"
    if "**" in stem or "__" in stem or _LINK.search(stem):
        return "holds Markdown"
    if re.fullmatch(r"[\d\s.)）、。:：]+", stem):
        return "is a bare number"
    if _LIST_MARKER.match(stem) or _CHECKBOX.match(stem):
        return "begins with a list marker or a checkbox"
    if _URL.search(stem):
        return "holds a URL"
    if stem.endswith((":", "：")):
        return "is only a label"
    flat = " ".join(_BOLD.sub(lambda m: m.group(1) or m.group(2), text).split())
    if not balanced(stem) and balanced(flat):
        return "leaves a bracket, a quote or a code span open"
    at = flat.find(stem)
    if at < 0 or at + len(stem) >= len(flat):
        return None
    end, after = at + len(stem), flat[at + len(stem):]
    if after.startswith(".") and _ABBREVIATION_END.search(stem):
        return "stops at an abbreviation"
    if any(start < end < stop for start, stop in protected_spans(flat)):
        return "stops inside a number, an abbreviation, a code span or a link"
    if re.match(r"\w", stem[-1]) and re.match(r"\w", after) and not (_CJK.match(stem[-1]) or _CJK.match(after)):
        return "stops inside a word"
    return None


def description_problem(description: str, name: str) -> str | None:
    """What is wrong with `description` beside `name`, or None: empty, the name again, or the
    name and more (MEMORY.md shows the two side by side: the description adds to the name)."""
    said = " ".join(description.split())
    stem = " ".join(name.removesuffix(ELLIPSIS).removesuffix("...").split()).rstrip(" .。")
    if not said:
        return "is empty"
    if said.rstrip(" .。") == stem:
        return "is the name"
    if stem and said.startswith(stem):
        return "begins with the name"
    return None
