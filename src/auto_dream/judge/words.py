"""The judge's words: English Snowball stems and CJK bigrams, stop words left out.

Its own module, light to import: a `recall` tokenizes its query with it and should not pay
for the judge's rules (similarity.py compiles dozens of patterns when it is imported).
"""

import re
import sys
from collections.abc import Iterator

import Stemmer  # PyStemmer: the Snowball project's stemmers, compiled

# The stop words, which include the negations: a negated statement
# shares its significant words with the statement it negates.
STOP_WORDS = frozenset("""
the a an is are was were be been have has had do does did will would could should may might can
shall to of in for on with at by from as into through during before after this that it not no but
or and if then than so
don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn hadn mustn
she her hers him his they them their theirs its our ours you your yours
he me my we us am ve ll re
""".split())
# The last three lines are ours: what is left of "don't" and friends once the apostrophe
# splits them, and pronouns — two notes about the same person share "her" and "his"
# whatever they say, which made unrelated facts look like the same subject. The two-letter
# ones matter only to a search (SEARCH_SHORTEST): "we", and "I've", "we'll", "you're" split.

# Han, Hiragana, Katakana and Hangul: whitespace finds no words in them, bigrams do.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")

_STEMMER = Stemmer.Stemmer("english")
_STEMS: dict[str, str] = {}

# Short forms engineers write for a word, read as that word: "a backend dev" is "a backend
# developer", "the prod DB config" the production database's configuration. Only those that
# stand for one word in a developer's notes (not "auth": authentication or authorization).
ABBREVIATIONS = {
    "dev": "developer", "devs": "developers", "repo": "repository", "repos": "repositories",
    "config": "configuration", "configs": "configurations", "env": "environment", "envs": "environments",
    "prod": "production", "dbs": "databases", "docs": "documentation", "infra": "infrastructure",
    "dep": "dependency", "deps": "dependencies", "perf": "performance", "impl": "implementation",
    "admin": "administrator", "admins": "administrators", "msg": "message", "msgs": "messages",
    "k8s": "kubernetes", "eng": "engineer", "engs": "engineers", "mgr": "manager",
}


def stem(token: str) -> str:
    """The English Snowball stem of a lower-cased word ("managed" and "manages" meet at "manag"),
    a short form read as its word first (ABBREVIATIONS: "dev" meets "developer"), remembered: a
    store repeats the same few thousand words."""
    found = _STEMS.get(token)
    if found is None:
        found = _STEMS[token] = sys.intern(_STEMMER.stemWord(ABBREVIATIONS.get(token, token))) \
            if token.isascii() else token
    return found


# The judge leaves out words of one or two letters: "go", "we" and "up" made unrelated
# statements look alike. A search keeps the two-letter ones (SEARCH_SHORTEST): a query for
# "CI", "UI", "S3" or "Go" names what it wants, and BM25 weighs a word found everywhere at
# next to nothing.
SHORTEST, SEARCH_SHORTEST = 3, 2


# _TOKEN with a group for each kind: findall tells a CJK run from a word without a second match
_TOKEN_KINDS = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)", re.UNICODE)


def word_sequence(text: str, shortest: int = SHORTEST) -> list[str]:
    """The significant words of `text` in order (with repeats), stemmed: CJK runs give their
    bigrams; a word of other letters or digits counts from `shortest` characters."""
    words = []
    for run, token in _TOKEN_KINDS.findall(text.lower()):
        if run:
            if len(run) == 1:
                words.append(run)
            else:
                words.extend(run[i:i + 2] for i in range(len(run) - 1))
        elif len(token) >= shortest and token not in STOP_WORDS:
            words.append(stem(token))
    return words


def word_spans(text: str, shortest: int = SHORTEST) -> Iterator[tuple[int, int, str]]:
    """The words of word_sequence with where each lies in `text` (start, end): what a recall
    snippet marks. Tokens are found in `text` as written and lower-cased one by one, so the
    offsets hold; one that lower-casing lengthens ("İstanbul": an i and a combining dot) gives
    word_sequence's words, each placed on the whole token."""
    for match in _TOKEN.finditer(text):
        token, start, end = match.group(), match.start(), match.end()
        lowered = token.lower()
        if len(lowered) != len(token):
            for word in word_sequence(lowered, shortest):
                yield start, end, word
        elif _CJK_RUN.fullmatch(lowered):
            if len(lowered) == 1:
                yield start, end, lowered
            else:
                for i in range(len(lowered) - 1):
                    yield start + i, start + i + 2, lowered[i:i + 2]
        elif len(lowered) >= shortest and lowered not in STOP_WORDS:
            yield start, end, stem(lowered)


def significant_words(text: str) -> frozenset[str]:
    """Lower-cased words of letters and digits longer than 2, minus stop words; CJK runs as bigrams."""
    # interned: a store repeats the same few thousand words across every memory
    return frozenset(map(sys.intern, word_sequence(text)))
