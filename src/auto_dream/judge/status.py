"""What a person wrote about a memory's own status: deprecated, superseded, a duplicate, split, moved.

A memory a person marked DEPRECATED, "superseded by …", "duplicate of …", "已合并到 …" or
"…に統合済み" is a tombstone, not live knowledge: it is never linked into MEMORY.md, and when
its line names where its content went, that pair is for the judge to act on or list for review.
Real case: application-pipeline's MEMORY.md says of `feedback_cover_letter_quality.md`
"SUPERSEDED by unified rules below. Kept for historical reference only."

The status must be about the memory itself: in its name, at the start of its description or of
its first line, or on a line such as "This note has been merged into …". A memory that talks
about deprecation ("The `foo` flag is deprecated in v3; use `bar`", "Deprecated APIs we still
call") is live knowledge and is never marked. Words that are also ordinary verbs (moved, split,
merged, replaced, duplicate) count only when what follows names a memory (a link, a file name,
a code span, "… memory") or when they are shouted or bracketed (`MOVED:`, `[merged]`).

Pure text: `written_status` reads the strings it is given, `resolve_pointer` a mapping of names.
"""

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import unquote

Kind = Literal["deprecated", "superseded", "duplicate", "split", "moved"]
STATUS_KINDS: tuple[Kind, ...] = get_args(Kind)

FIRST_LINES = 2  # the body's first line, and the one after it when the first is a heading
FIRST_CHARS = 2_000  # where those are looked for


@dataclass(frozen=True)
class Status:
    """A memory's status as a person wrote it: its `kind`, the whole line that says it (`quote`,
    as written: a name, a description, a body line, a MEMORY.md line or a file name) and the
    names, file names or paths that line says the content went to (`points_to`, as written)."""

    kind: Kind
    quote: str
    points_to: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "quote": self.quote, "points_to": list(self.points_to)}


# ---------------------------------------------------------------- the words

# Each marker word and the kind it says. A strong one marks a memory on its own (followed by a
# delimiter, a pointer or nothing); a weak one, also an everyday word ("Moved to Berlin", "Outdated
# docs", 重复 "recurring"), only bracketed, shouted, or with a pointer to a memory.
_STRONG_EN = {
    "deprecated": "deprecated", "obsolete": "deprecated", "superseded": "superseded",
    "no longer used": "deprecated", "no longer relevant": "deprecated", "no longer valid": "deprecated",
    "no longer accurate": "deprecated", "no longer current": "deprecated", "no longer maintained": "deprecated",
    "no longer needed": "deprecated", "no longer applies": "deprecated", "no longer true": "deprecated",
    "no longer in use": "deprecated",
}
_WEAK_EN = {
    "outdated": "deprecated", "retired": "deprecated", "archived": "deprecated",
    "replaced": "superseded", "merged": "superseded", "absorbed": "superseded", "consolidated": "superseded",
    "folded": "superseded", "moved": "moved", "migrated": "moved", "relocated": "moved", "split": "split",
    "duplicate": "duplicate", "duplicated": "duplicate", "dup": "duplicate",
}
_STRONG_CJK = {
    "已废弃": "deprecated", "已弃用": "deprecated", "已过时": "deprecated", "已作废": "deprecated",
    "已淘汰": "deprecated", "已停用": "deprecated", "废弃": "deprecated", "弃用": "deprecated",
    "作废": "deprecated", "过时": "deprecated", "已被取代": "superseded", "已被替代": "superseded",
    "已合并": "superseded", "已归档": "deprecated", "非推奨": "deprecated", "廃止": "deprecated",
    "廃止済み": "deprecated", "使用終了": "deprecated", "アーカイブ済み": "deprecated",
}
_WEAK_CJK = {
    "已迁移": "moved", "已移动": "moved", "已拆分": "split", "重复": "duplicate", "統合済み": "superseded",
    "統合済": "superseded", "移動済み": "moved", "移動しました": "moved", "移行済み": "moved", "移行しました": "moved",
    "分割済み": "split", "重複": "duplicate",
}
_CJK = {**_STRONG_CJK, **_WEAK_CJK}
# A person's label before the status: `Status: superseded`, `状态：已废弃`, `ステータス: 廃止`
_LABEL = r"(?:status|state|状态|状態|ステータス)\s*[:：]\s*"
_DATE = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2})?"
# What may come before the words at the start of a line: markup, emoji, a callout, a date.
_LEAD = re.compile(rf"[\s>*_#+\-•·|\u2000-\u2bff\U0001f000-\U0001faff\ufe0f]*"
                   rf"(?:\[![A-Za-z]+\][\s*_]*)?(?:{_DATE}\s*[:：\-–—]?\s*)?(?:\*\*|__)?(?:{_LABEL})?(?:\*\*|__)?\s*",
                   re.IGNORECASE)
_OPEN, _CLOSE = "[(（【〔「", "])）】〕」"
_DELIMITER = re.compile(r"\s*(?:\*\*|__)?\s*(?:\((?:[^()]{0,40})\)|（[^（）]{0,40}）)?\s*(?:\*\*|__)?\s*"
                        r"(?:$|[:：\-–—|.!;。，；!！]|=>|->|→|⇒)")
_EN_WORDS = "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in (*_STRONG_EN, *_WEAK_EN)),
                            key=len, reverse=True))
_ZH_WORDS = "|".join(sorted(map(re.escape, _CJK), key=len, reverse=True))
_MARKER_AT = re.compile(rf"(?P<en>\b(?:{_EN_WORDS})\b)|(?P<zh>{_ZH_WORDS})", re.IGNORECASE)
_BRACKETED = re.compile(rf"[{re.escape(_OPEN)}]\s*(?:\*\*)?\s*(?P<word>{_EN_WORDS}|{_ZH_WORDS})(?![A-Za-z])"
                        rf"(?P<rest>[^{re.escape(_CLOSE)}]{{0,120}})[{re.escape(_CLOSE)}]", re.IGNORECASE)
# Anything that could be a marker at all: a text without one is not read further.
_ANY = re.compile(r"deprecat|supersed|obsolete|outdated|no\s+longer|retired|replaced|merged|absorbed|consolidated"
                  r"|folded|moved|migrated|relocated|split|dup|archived|~~|废弃|弃用|过时|作废|淘汰|停用|取代|替代|替换"
                  r"|代替|合并|并入|迁移|移动|移至|移到|拆分|重复|归档|非推奨|廃止|統合|移動|移行|置き換|分割|重複|使用終了"
                  r"|アーカイブ")  # searched in lower-cased text: IGNORECASE makes it four times slower

# How a line says where the content went, English: the target follows.
_POINTER_EN = re.compile(
    r"(?:(?:superseded|replaced|absorbed|covered|obsoleted|subsumed)\s+by|in\s+favou?r\s+of"
    r"|(?:merged|moved|migrated|folded|consolidated|absorbed|relocated|split(?:\s+up)?|combined)\s+(?:in|on)?to"
    r"|duplicate[sd]?(?:\s+(?:of|in|by))?|same\s+as|see(?:\s+also)?|refer\s+to|now\s+(?:in|at)|lives\s+(?:in|at)"
    r"|use)\s+|(?:→|->|=>|⇒)\s*", re.IGNORECASE)
# Chinese: 参见 X, 见 X, 移至 X, 合并到 X, 拆分为 X; 已被 X 取代 (the target inside)
_POINTER_ZH = re.compile(r"(?:请?参(?:见|看|阅|考)|详见|见|改用|请使用|使用"
                         r"|(?:已经?)?(?:合并|并入|迁移|移动|搬|移)(?:到|至|进|入)"
                         r"|(?:已经?)?拆分(?:为|成|到)|(?:已经?)?与|→|->|=>)\s*")
# What continues a marker word into a pointer: "superseded| by X", "moved| to X", "已合并|到 X"
# ("no longer used by the team" names no memory: only the words that take "by" take it)
_BY = r"by"
_TO = r"to|into|onto|up\s+into|in\s+two\s+(?:parts\s*)?[:：]?"
_CONTINUES = {"superseded": _BY, "replaced": _BY, "absorbed": f"{_BY}|{_TO}", "consolidated": _TO, "folded": _TO,
              "merged": f"{_TO}|with", "moved": _TO, "migrated": _TO, "relocated": _TO, "split": _TO,
              "duplicate": "of", "duplicated": "in|by|from", "dup": "of"}
_FAVOUR = r"in\s+favou?r\s+of"
_CONTINUATION_ZH = re.compile(r"\s*(?:到|至|进|入|为|成|于)\s*")
_REPLACED_ZH = re.compile(r"(?:已经?)?被\s*(?P<target>[^，,。；;]{1,80}?)\s*(?:所)?(?:取代|替代|替换|代替|覆盖|合并)")
_DUPLICATE_ZH = re.compile(r"(?:已经?)?与\s*(?P<target>[^，,。；;]{1,80}?)\s*重复")
# Japanese: the target comes first. X に統合済み, X へ移動しました, X を参照, X と重複, A と B に分割
_POINTER_JA = re.compile(
    r"(?P<target>[^。、，,；;\n]{1,80}?)\s*(?:(?P<verb>に|へ)\s*(?P<ja>移動|移行|移設|移転|統合|置き換え|置換|分割)"
    r"|(?P<see>を参照|を見て|参照)|(?P<dup>と重複))")
_JA_KIND: dict[str, Kind] = {"移動": "moved", "移行": "moved", "移設": "moved", "移転": "moved",
                             "統合": "superseded", "置き換え": "superseded", "置換": "superseded", "分割": "split"}
_ZH_POINTER_KIND: dict[str, Kind] = {"合并": "superseded", "并入": "superseded", "迁移": "moved", "移动": "moved",
                                     "搬": "moved", "移": "moved", "拆分": "split"}

# A line about the memory itself: "This note has been merged into …", "本记忆已被…取代", "このメモは…に統合"
_SELF_EN = re.compile(r"(?:this|the\s+present)\s+(?:memory|note|file|entry|page|document|doc|topic(?:\s+file)?)"
                      r"\s+(?:is|was|has\s+been|had\s+been|is\s+now|has\s+now\s+been|now)\s+"
                      r"(?:now\s+|officially\s+|fully\s+|been\s+)?(?P<rest>.*)", re.IGNORECASE)
_SELF_ZH = re.compile(r"(?:本|此|这|该)(?:条|个|份|篇)?(?:记忆|笔记|文件|文档|条目|备忘|页面|记录)"
                      r"\s*(?:已经?|现已|目前已)?(?P<rest>.*)")
_SELF = re.compile(r"(?:this|the\s+present)\s+(?:memory|note|file|entry|page|doc|topic)"
                   r"|(?:本|此|这|该)(?:条|个|份|篇)?(?:记忆|笔记|文件|文档|条目|备忘|页面|记录)"
                   r"|この(?:メモ|ノート|ファイル|記憶|ドキュメント|ページ|エントリ|記録)")
_SELF_JA = re.compile(r"この(?:メモ|メモリー?|ノート|ファイル|記憶|ドキュメント|ページ|エントリ|記録)"
                      r"\s*(?:は|を|が)\s*(?P<rest>.*)")

# What names a memory: a Markdown link, a wiki link, a code span, quotes, a file name or a path.
_LINK = re.compile(r"\[(?P<label>[^\]]*)\]\((?P<dest><[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_WIKI = re.compile(r"\[\[(?P<name>[^\]|#]+)(?:[#|][^\]]*)?\]\]")
_CODE = re.compile(r"`(?P<code>[^`\n]+)`")
_QUOTED = re.compile(r"\"(?P<a>[^\"]{1,80})\"|“(?P<b>[^”]{1,80})”|「(?P<c>[^」]{1,80})」|《(?P<d>[^》]{1,80})》"
                     r"|『(?P<e>[^』]{1,80})』")
_FILE = re.compile(r"(?<![\w/.-])(?P<file>[\w.~/-]*\w\.(?:md|markdown))\b", re.UNICODE)
_MEMORY_WORDS = re.compile(r"\b(?:memory|memories|note|notes|file|entry|rules?|page|doc|section|topic)\b"
                           r"|below|above|记忆|笔记|文件|文档|条目|メモ|メモリ|ノート|ファイル|記憶|ドキュメント",
                           re.IGNORECASE)
# Where the phrase naming a target ends: a sentence, a clause, an aside
_TARGET_END = re.compile(r"[.。!?！？](?=\s|$)|[;；。]|\s[—–]\s|\s-\s|\s\(|（|\binstead\b|\bfor\s+"
                         r"|\bwhich\b|\bbecause\b|\bas\s+of\b|\bsince\b|\bon\s+\d|\bin\s+\d|\n", re.IGNORECASE)
_TRAILING = re.compile(r"(?:\s+|^)(?:below|above|here|now|instead)\s*$|[\s,，、:：*_]+$", re.IGNORECASE)
_LIST_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s*\+\s*|、|和|及|与|と)\s*", re.IGNORECASE)
# What says a clause is about code rather than the memory: a code span, a file that is no memory
# (`deploy.sh`), a call, a version
_ABOUT_CODE = re.compile(r"`|\b\w+\.(?!md\b|markdown\b)[a-z]{1,5}\b|\w\(\)|\bv?\d+\.\d+")
_CLAUSE = re.compile(r"[;；,，。]|\.\s|\s[—–-]\s")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:\s|$)")
_STRUCK = re.compile(r"~~(?P<inner>[^~]+)~~")


# ---------------------------------------------------------------- reading one text


def written_status(name: str, description: str, body: str, file_name: str = "") -> Status | None:
    """The status a person wrote of this memory, or None: in its file name (an upper-case or
    bracketed marker), its name (at its start or its end, or struck through), the start of its
    description, the start of its body's first line (and of the line after a first heading), or
    any line of the body that says "this memory/note/file … is superseded …" (outside code). Of
    several, the first that says where the content went, else the first."""
    found = [status for status in _statuses(name, description, body, file_name) if status is not None]
    return next((status for status in found if status.points_to), found[0] if found else None)


def _statuses(name: str, description: str, body: str, file_name: str) -> Iterable[Status | None]:
    yield _in_file_name(file_name)
    yield _in_name(name)
    yield _at_start(description, description)
    head = body[:FIRST_CHARS]
    if _ANY.search(head.lower()):
        for line in _first_lines(_prose_lines(head if len(body) <= FIRST_CHARS else head.rsplit("\n", 1)[0])):
            yield _first_line(line)
    if _SELF.search(body.lower()):  # only then is it worth reading every line
        for line in _prose_lines(body):
            if _SELF.search(line.lower()):
                yield _said_of_itself(line)


def _in_file_name(file_name: str) -> Status | None:
    """`DEPRECATED_deploy.md`, `deploy.SUPERSEDED.md`, `deploy (deprecated).md`: an upper-case marker
    word at either end of the stem, or a bracketed one (`deprecated_apis.md` is about deprecated APIs)."""
    stem = file_name.rsplit("/", 1)[-1]
    stem = re.sub(r"\.(?:md|markdown)$", "", stem, flags=re.IGNORECASE)
    if not stem or not _ANY.search(stem.lower()):
        return None
    bracketed = _BRACKETED.search(stem)
    if bracketed:
        return _bracketed(bracketed, file_name)
    words = [w for w in re.split(r"[\s_.\-]+", stem) if w]
    for word in (words[0], words[-1]) if words else ():
        kind = _kind_of(word)
        if kind and word.isupper():
            return Status(kind, file_name)
    return None


def _in_name(name: str) -> Status | None:
    """A name that starts with the status (`DEPRECATED: deploy flow`, `[已废弃] 部署流程`), ends with
    it (`Cover letter quality (superseded)`, `Deploy flow — superseded by deploy v2`), or is struck
    through (`~~Deploy flow~~`)."""
    if not name.strip():
        return None
    stripped = name.strip()
    if _STRUCK.fullmatch(_LEAD.sub("", stripped, count=1).rstrip(" *_")):
        return Status("deprecated", name)
    status = _at_start(stripped, name)
    if status is not None:
        return status
    return _at_end(stripped, name)


def _at_end(text: str, quote: str) -> Status | None:
    """`… (superseded)`, `… [DEPRECATED]`, `…（已废弃）`, `… — superseded by X`, `… - OBSOLETE`."""
    last = None
    for last in _BRACKETED.finditer(text):
        pass
    if last is not None and not text[last.end():].strip(" *_.。"):
        return _bracketed(last, quote)
    dash = re.search(r"\s(?:—|–|-|:|\|)\s+(?P<tail>[^—–|]+)$", text)
    if dash:
        return _at_start(dash.group("tail"), quote, tail=True)
    return None


def _at_start(text: str, quote: str, *, tail: bool = False) -> Status | None:
    """The status when `text` begins with it (after markup, a date or `Status:`): a bracketed
    marker; a strong word followed by a delimiter, a pointer or nothing (or shouted); a weak word
    followed by a pointer to a memory (or shouted, or bracketed); the Chinese and Japanese forms."""
    if not text or not _ANY.search(text.lower()):
        return None
    lead = _LEAD.match(text)
    rest = text[lead.end():] if lead else text
    bracketed = _BRACKETED.match(rest)
    if bracketed:
        return _bracketed(bracketed, quote, rest[bracketed.end():])
    marker = _MARKER_AT.match(rest)
    if marker:
        return _after_marker(marker, rest, quote, tail=tail)
    return _cjk_sentence(rest, quote)


def _bracketed(match: re.Match[str], quote: str, after: str = "") -> Status | None:
    """`[DEPRECATED]`, `(superseded by X)`, `【已废弃】`, `[moved]`: a weak word in brackets says a
    status alone or with a pointer to a memory (`(Split into Adoption + Hygiene)` is a plan)."""
    word, inside = match.group("word"), match.group("rest")
    kind = _kind_of(word)
    if kind is None:
        return None
    pointer = _pointer_at(inside, word)
    if pointer is not None:
        if _is_strong(word) or _names_a_memory(inside[pointer:]):
            return Status(_kind_with_pointer(kind, inside), quote, _targets(inside[pointer:]))
        return None
    if inside.strip(" *_") and not _DELIMITER.match(inside) and not _is_strong(word):
        return None
    return Status(kind, quote, _pointers_after(inside) or _pointers_after(after))


def _after_marker(marker: re.Match[str], text: str, quote: str, *, tail: bool) -> Status | None:
    word = marker.group()
    kind = _kind_of(word)
    if kind is None:
        return None
    after = text[marker.end():]
    pointer = _pointer_at(after, word)
    strong = _is_strong(word)
    shouted = word.isupper() and len(word) > 3
    if pointer is not None:
        targets = _targets(after[pointer:])
        if strong or (targets and _names_a_memory(after[pointer:])):
            return Status(_kind_with_pointer(kind, after), quote, targets)
        return None
    delimited = _DELIMITER.match(after) is not None
    if delimited and _ABOUT_CODE.search(_CLAUSE.split(after.lstrip(" *_:：-–—|"), 1)[0]):
        return None  # "Deprecated: `React.FormEvent` …", "Obsolete: Python 3.8 support": a note about code
    if delimited and (strong or shouted):
        return Status(kind, quote, _pointers_after(after))
    if delimited and _explicit_names(after.split("\n", 1)[0]):
        targets = _pointers_after(after)  # `統合済み。新しいルールは `rules.md` を参照`: a weak word, then a memory
        if targets:
            return Status(kind, quote, targets)
    if shouted and not tail and after[:1] == " " and (strong or kind != "split"):
        return Status(kind, quote, _pointers_after(after))
    return None


def _cjk_sentence(text: str, quote: str) -> Status | None:
    """已被 X 取代 / 与 X 重复 / 合并到 X / 拆分为 A 和 B; X に統合済み / X へ移動しました / X と重複."""
    replaced = _REPLACED_ZH.match(text)
    if replaced:
        return Status("superseded", quote, _targets(replaced.group("target")))
    duplicate = _DUPLICATE_ZH.match(text)
    if duplicate and _names_a_memory(duplicate.group("target")):
        return Status("duplicate", quote, _targets(duplicate.group("target")))
    zh = re.match(r"(?:已经?)?(?P<verb>合并|并入|迁移|移动|搬|移|拆分)(?:到|至|进|入|为|成)\s*(?P<target>.+)", text)
    if zh and _names_a_memory(zh.group("target")):
        return Status(_ZH_POINTER_KIND[zh.group("verb")], quote, _targets(zh.group("target")))
    ja = _POINTER_JA.match(text)
    if ja and not ja.group("see") and _names_a_memory(ja.group("target")):
        kind: Kind = "duplicate" if ja.group("dup") else _JA_KIND[ja.group("ja")]
        return Status(kind, quote, _targets(ja.group("target")))
    return None


def _said_of_itself(line: str) -> Status | None:
    """"This memory is superseded by X", "This note has been merged into `b.md`", "本记忆已合并到 X",
    "このメモは X に統合されました": the line says it of the memory it is in."""
    lead = _LEAD.match(line)
    text = line[lead.end():] if lead else line
    english = _SELF_EN.match(text)
    if english:
        rest = english.group("rest")
        marker = _MARKER_AT.match(rest)
        if marker and marker.group("en"):
            kind = _kind_of(marker.group())
            if kind:
                after = rest[marker.end():]
                pointer = _pointer_at(after, marker.group())
                return Status(_kind_with_pointer(kind, after), line,
                              _targets(after[pointer:]) if pointer is not None else _pointers_after(after))
        return None
    chinese = _SELF_ZH.match(text)
    if chinese:
        rest = chinese.group("rest")
        status = _at_start(rest, line) or _cjk_sentence(rest, line)
        if status is None and (marker := _MARKER_AT.match(rest)) and marker.group("zh"):
            kind = _kind_of(marker.group())
            status = Status(kind, line, _pointers_after(rest[marker.end():])) if kind else None
        return status
    japanese = _SELF_JA.match(text)
    if japanese:
        rest = japanese.group("rest")
        ja = _POINTER_JA.search(rest)
        if ja and not ja.group("see"):
            kind = "duplicate" if ja.group("dup") else _JA_KIND[ja.group("ja")]
            return Status(kind, line, _targets(ja.group("target")))
        marker = re.search(r"非推奨|廃止|使用終了|統合済み|移動済み|アーカイブ", rest)
        if marker:
            kind = _kind_of(marker.group()) or "deprecated"
            return Status(kind, line, _pointers_after(rest))
    return None


# ---------------------------------------------------------------- where it went


def _pointer_at(text: str, word: str = "") -> int | None:
    """Where the target starts when `text` (what follows the marker `word`) says where the content
    went ("by X" after "superseded", "到 X" after "已合并", "— see X", "；参见 X"), else None."""
    normal = _normal(word)
    continued = (_CONTINUATION_ZH.match(text) if normal in _CJK else re.match(
        rf"(?:\s*(?:\*\*|__))?\s+(?:{_CONTINUES[normal] + '|' if normal in _CONTINUES else ''}{_FAVOUR})\s+",
        text, re.IGNORECASE))
    if continued and text[continued.end():].strip():
        return continued.end()
    match = re.match(r"\s*(?:\*\*|__)?\s*(?:\((?:[^()]{0,40})\)\s*)?[:：,，;；.\-–—]*\s*(?:\*\*|__)?\s*", text)
    start = match.end() if match else 0
    english = _POINTER_EN.match(text, start)
    if english:
        return english.end()
    chinese = _POINTER_ZH.match(text, start)
    if chinese and text[chinese.end():].strip():
        return chinese.end()
    return None


def _pointers_after(text: str) -> tuple[str, ...]:
    """The targets named anywhere after a marker: "— see X", "; superseded by X", "参见 X", "X を参照"."""
    for match in _POINTER_EN.finditer(text):
        if match.start() == 0 or not text[match.start() - 1].isalnum():
            targets = _targets(text[match.end():])
            if targets:
                return targets
    for match in _POINTER_ZH.finditer(text):
        targets = _targets(text[match.end():])
        if targets:
            return targets
    ja = _POINTER_JA.search(text.lstrip(" :：-–—,，。"))
    if ja:
        return _targets(ja.group("target"))
    return ()


def _targets(text: str) -> tuple[str, ...]:
    """The names in the phrase that names where the content went: links, wiki links, code spans,
    quoted names and file names when it has any; else the phrase itself ("split into A and B": both)."""
    end = _TARGET_END.search(text)
    phrase = text[: end.start()] if end else text
    explicit = _explicit_names(phrase) or (_explicit_names(text.split("\n", 1)[0]) if end else [])
    if explicit:
        return tuple(dict.fromkeys(explicit))
    phrase = _TRAILING.sub("", phrase.strip(" \t*_\"'")).strip()
    phrase = re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.IGNORECASE)
    if not phrase or len(phrase) > 80:
        return ()
    parts = [part.strip(" *_") for part in _LIST_SEPARATOR.split(phrase)]
    return tuple(part for part in parts if part)


def _explicit_names(text: str) -> list[str]:
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern, group in ((_LINK, "dest"), (_WIKI, "name"), (_CODE, "code"), (_QUOTED, None), (_FILE, "file")):
        for match in pattern.finditer(text):
            if any(start <= match.start() < stop for start, stop in taken):
                continue
            value = match.group(group) if group else next(g for g in match.groups() if g)
            value = value.strip().strip("<>").strip()
            if value:
                found.append((match.start(), value))
                taken.append(match.span())
    return [value for _, value in sorted(found)]


def _names_a_memory(text: str) -> bool:
    """Whether a phrase names a memory rather than a place or a thing: `Moved to Berlin in 2024`
    is a fact; `Moved to [[deploy-v2]]` and "merged into the unified rules below" name memories."""
    end = _TARGET_END.search(text)
    phrase = text[: end.start()] if end else text
    return bool(_explicit_names(phrase) or _MEMORY_WORDS.search(phrase) or re.search(r"\w_\w", phrase))


def _kind_with_pointer(kind: Kind, after: str) -> Kind:
    """`Deprecated — duplicate of X` is a duplicate; `Deprecated, moved to X` moved."""
    if kind != "deprecated":
        return kind
    words = after.split("\n", 1)[0].lower()
    for needle, said in (("duplicate", "duplicate"), ("superseded", "superseded"), ("replaced by", "superseded"),
                         ("merged into", "superseded"), ("moved to", "moved"), ("split into", "split")):
        if needle in words:
            return said  # type: ignore[return-value]
    return kind


# ---------------------------------------------------------------- the words, one at a time


def _normal(word: str) -> str:
    return " ".join(word.lower().split())


def _kind_of(word: str) -> Kind | None:
    word = _normal(word)
    said = _STRONG_EN.get(word) or _WEAK_EN.get(word) or _CJK.get(word)
    return said  # type: ignore[return-value]


def _is_strong(word: str) -> bool:
    word = _normal(word)
    return word in _STRONG_EN or word in _STRONG_CJK


# ---------------------------------------------------------------- the body's lines


def _prose_lines(body: str) -> list[str]:
    """The body's lines outside fenced code, without their line ends."""
    lines, fence = [], None
    for line in body.split("\n"):
        line = line.removesuffix("\r")
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        lines.append(line)
    return lines


def _first_lines(lines: list[str]) -> list[str]:
    """The first non-blank line, and the next one when the first is a heading (`# Deploy flow`)."""
    found = []
    for line in lines:
        if not line.strip():
            continue
        found.append(line)
        if len(found) >= FIRST_LINES or not _HEADING.match(line):
            break
    return found


def _first_line(line: str) -> Status | None:
    """A first line that starts with the status; a heading whose title is struck through (`# ~~Deploy~~`)."""
    if _HEADING.match(line) and _STRUCK.fullmatch(line.lstrip(" #").strip()):
        return Status("deprecated", line)
    return _at_start(line, line)


# ---------------------------------------------------------------- resolving a pointer


def resolve_pointer(points_to: Iterable[str], candidates: Mapping[str, str]) -> str | None:
    """The one memory among `candidates` (memory path: its name; leave out the memory that points)
    that what a status line names is: by path (relative or with `./`), by file name with or without
    `.md`, or by name (case, spaces, `-` and `_` aside: `[[deploy-v2]]` is `deploy_v2.md`). None
    when the names find no memory, or more than one."""
    by_path: dict[str, set[str]] = {}
    by_key: dict[str, set[str]] = {}
    for path, name in candidates.items():
        file_name = path.rsplit("/", 1)[-1]
        stem = re.sub(r"\.(?:md|markdown)$", "", file_name, flags=re.IGNORECASE)
        by_path.setdefault(path, set()).add(path)
        for key in {_key(file_name), _key(stem), _key(name)} - {""}:
            by_key.setdefault(key, set()).add(path)
    found: set[str] = set()
    for pointer in points_to:
        destination = unquote(pointer.strip().strip("<>").split("#", 1)[0].split("?", 1)[0]).strip()
        if not destination:
            continue
        normal = posixpath.normpath(destination).lstrip("/") if "/" in destination else destination
        matched = by_path.get(normal) or {path for path in candidates if "/" in normal and path.endswith("/" + normal)}
        if not matched:
            last = normal.rsplit("/", 1)[-1]
            matched = by_key.get(_key(last), set()) | by_key.get(_key(destination), set())
        if len(matched) > 1:
            return None
        found |= matched
    return next(iter(found)) if len(found) == 1 else None


def _key(text: str) -> str:
    """A name as compared: lower case, `-`, `_` and spaces alike."""
    return re.sub(r"[\s_\-]+", "-", text.strip().lower()).strip("-")
