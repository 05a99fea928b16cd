"""The docs state the code's numbers, and their links lead somewhere.

docs/dream.md (and docs/store.md, the README's "Limits to know") give the judge's thresholds and
limits in prose; each sentence below is found in the doc, exactly once, and the number written
there must be the constant the code uses. A change to a constant that leaves the doc behind, or
an edit of the doc that changes a number, fails here. Then every relative link in README.md,
CONTRIBUTING.md and docs/*.md must name a file that exists, and a #anchor a heading there.
"""

import re
from dataclasses import fields
from pathlib import Path

import pytest

import auto_dream
from auto_dream.commands import recall as recall_command
from auto_dream.commands.listing import GREEN_DAYS, YELLOW_DAYS
from auto_dream.commands.session_context import HOOK_OUTPUT_CHARS, PENDING_LINE_CHARS, PENDING_SHOWN
from auto_dream.distill.claude import MAX_REPORTED_TOKENS, REVIEW_BODY_CHARS, REVIEW_PAIRS
from auto_dream.dream.lock import STALE_AFTER
from auto_dream.judge import statements
from auto_dream.judge.recent import RECENT_LIMIT
from auto_dream.judge.similarity import ANCHORED_FLOOR
from auto_dream.judge.titles import DESCRIPTION_CHARS, NAME_CHARS, NAME_WIDTH, SHORT_TITLE
from auto_dream.mcp_server import LISTED, RESULT_CHARS
from auto_dream.store import config as config_module
from auto_dream.store import repository
from auto_dream.store.config import Config
from auto_dream.store.daylog import MAX_LOG_BYTES, MAX_TEXT_CHARS
from auto_dream.store.index import SHORTEST_HOOK
from auto_dream.store.memory import MAX_MEMORY_BYTES, SLUG_MAX_CHARS
from auto_dream.store.recall_index import FULL_CHECK_FILES

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = Config()
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "a third": 1 / 3, "two thirds": 2 / 3,
         "half": 0.5}


def prose(name: str) -> str:
    """The doc with its lines joined: a sentence the doc wraps is one line here."""
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8"))


def number(written: str) -> float:
    """'25,000' -> 25000, '0.6' -> 0.6, '80%' -> 0.8, 'three' -> 3, '64 MB' -> 64 * 2**20, '1 MB' -> 10**6."""
    written = written.strip()
    if written in WORDS:
        return WORDS[written]
    if written.endswith("%"):
        return float(written[:-1]) / 100
    return float(written.replace(",", ""))


# (doc, the sentence with each number a group, the values the code has, in order)
STATED = [
    # the judge (docs/dream.md, "The judge: hands off unless certain")
    ("docs/dream.md", r"A \*statement\* is one or (\w+) sentences, at most ([\d,]+) characters",
     [statements.STATEMENT_SENTENCES, statements.STATEMENT_CHARS]),
    ("docs/dream.md", r"a \*contradiction\* — word overlap ≥ ([\d.]+) and a negation",
     [DEFAULTS.contradiction_overlap]),
    ("docs/dream.md", r"(two thirds) of its words around a name", [statements.SAME_REST]),
    ("docs/dream.md", r"a \*duplicate\* — overlap ≥ ([\d.]+) \(", [DEFAULTS.duplicate_overlap]),
    ("docs/dream.md", r"at most (a third) of what its clause says", [statements.REWORDED_SHARE]),
    ("docs/dream.md", r"alike both ways \((half) of all their words shared\)", [statements.ALIKE]),
    ("docs/dream.md", r"\*the same specifics\*, from overlap ([\d.]+) up", [DEFAULTS.contradiction_overlap]),
    ("docs/dream.md", r"\*the same anchors\*, from overlap ([\d.]+) up", [DEFAULTS.contradiction_overlap]),
    ("docs/dream.md", r"one side adding (one) at most", [statements.ANCHORS_ADDED]),
    ("docs/dream.md", r"\*the same terms\*, from overlap ([\d.]+) up", [ANCHORED_FLOOR]),
    ("docs/dream.md", r"both hold anchors from overlap ([\d.]+) up", [ANCHORED_FLOOR]),
    ("docs/dream.md", r"\((\d+%) of the longer side's bigrams, (\w+) at least\)",
     [statements.ANCHORED_REST, statements.ANCHORED_REST_SHARED]),
    ("docs/dream.md", r"rarity-weighted Jaccard of their words ≥ ([\d.]+),", [statements.NEAR_IDENTICAL]),
    ("docs/dream.md", r"sizes within ([\d.]+) of each other", [statements.NEAR_SIZE_RATIO]),
    ("docs/dream.md", r"Two documents alike enough \(≥ ([\d.]+)\)", [statements.DOCUMENT_REVIEW]),
    ("docs/dream.md", r"one paragraph of the other has (\d+%) of its words", [statements.RESTATED_SHARE]),
    ("docs/dream.md", r"\(≥ ([\d.]+) overlap, three shared words\)", [statements.CONFLICT_SENTENCE_OVERLAP]),
    ("docs/dream.md", r"A memory past ([\d,]+) characters takes no new facts; one memory absorbs at most (\w+) others",
     [statements.SIZE_LINE, statements.ABSORB_LIMIT]),
    # names (docs/dream.md, "Distilling entries")
    ("docs/dream.md", r"a short, complete phrase \(≤ (\d+) characters, (\d+) columns", [NAME_CHARS, NAME_WIDTH]),
    ("docs/dream.md", r"unless the statement is short \(≤ (\d+) columns", [SHORT_TITLE]),
    # the budget for crowded dreams (docs/dream.md, "Among memories")
    ("docs/dream.md", r"a new entry is compared with at most (\d+) of the entries before it", [RECENT_LIMIT]),
    ("docs/dream.md", r"a memory this run makes from its entries with\s+at most (\d+) of the others", [RECENT_LIMIT]),
    # staleness and its guards
    ("docs/dream.md", r"on each day the memory names \(`2026-03-02`\), up to (\d+);", [repository.MAX_WRITTEN]),
    ("docs/dream.md", r"with a (\d+)-second timeout", [repository.GIT_TIMEOUT]),
    ("docs/dream.md", r"six commands for up to ([\d,]+) paths and ([\d,]+) names",
     [repository._CHUNK, repository._CHUNK]),
    ("docs/dream.md", r"pinned; modified within (\d+) days;", [DEFAULTS.guard_days]),
    ("docs/dream.md", r"looked up within (\d+) days according to the consult log", [DEFAULTS.guard_days]),
    # safety
    ("docs/dream.md", r"At most `--budget` retirements \(default (\d+)\) per run", [DEFAULTS.budget]),
    ("docs/dream.md", r"a lock whose process is dead, or older than (\d+) minutes, is broken",
     [STALE_AFTER.total_seconds() / 60]),
    ("docs/dream.md", r"`--if-due` runs only when (\d+) hours passed since the last dream and (\d+) entries wait",
     [DEFAULTS.due_hours, DEFAULTS.due_entries]),
    # Claude
    ("docs/dream.md", r"batches of new entries \(up to (\d+), `llm_batch_entries`\)", [DEFAULTS.llm_batch_entries]),
    ("docs/dream.md", r"name ≤ (\d+) and description ≤ (\d+) characters", [NAME_CHARS, DESCRIPTION_CHARS]),
    ("docs/dream.md", r"more than (\d+) million tokens", [MAX_REPORTED_TOKENS / 1_000_000]),
    ("docs/dream.md", r"(\w+) to a call, each memory whole up to ([\d,]+) characters",
     [REVIEW_PAIRS, REVIEW_BODY_CHARS]),
    # the store (docs/store.md)
    ("docs/store.md", r"Only regular files are read as day logs, up to (\d+) MB", [MAX_LOG_BYTES / 2**20]),
    ("docs/store.md", r"larger than (\d+) MB", [MAX_MEMORY_BYTES / 1_000_000]),
    ("docs/store.md", r"at most (\d+) characters, cut where a word ends", [SLUG_MAX_CHARS]),
    ("docs/store.md", r"within `decay_days`, default (\d+)\)", [DEFAULTS.decay_days]),
    ("docs/store.md", r"Each line is at most (\d+) characters, the file at most (\d+) lines and ([\d,]+) bytes",
     [DEFAULTS.index_line_chars, DEFAULTS.index_max_lines, DEFAULTS.index_max_bytes]),
    ("docs/store.md", r"would go on from the name cut to fewer than (\d+) characters", [SHORTEST_HOOK]),
    ("docs/commands.md", r"A section longer than an entry may be \(([\d,]+) characters\)", [MAX_TEXT_CHARS]),
    ("docs/commands.md", r"green ≤ (\d+) days, yellow 8–(\d+)", [GREEN_DAYS, YELLOW_DAYS]),
    # recall, context, the MCP server
    ("docs/recall.md", r"The snippet is up to (\d+) characters", [recall_command.SNIPPET_CHARS]),
    ("docs/recall.md", r"`--limit N` \(default (\d+)\)", [recall_command.DEFAULT_LIMIT]),
    ("docs/recall.md", r"In a store of up to ([\d,]+) memory files", [FULL_CHECK_FILES]),
    ("docs/agents.md", r"caps what a hook adds at ([\d,]+) characters", [HOOK_OUTPUT_CHARS]),
    ("docs/agents.md", r"dreamed, up to (\d+), one line each .{0,80}? text cut at (\d+) characters",
     [PENDING_SHOWN, PENDING_LINE_CHARS]),
    ("docs/mcp.md", r"Every result stays under ([\d,]+) characters", [RESULT_CHARS]),
    ("docs/mcp.md", r"name the first (\d+) rows of each list", [LISTED]),
    # the README's own summary
    ("README.md", r"MEMORY.md keeps to (\d+) lines, ([\d,]+) bytes and (\d+) characters a line",
     [DEFAULTS.index_max_lines, DEFAULTS.index_max_bytes, DEFAULTS.index_line_chars]),
    ("README.md", r"A memory past ([\d,]+) characters takes no new facts, and one memory absorbs at most (\w+)",
     [statements.SIZE_LINE, statements.ABSORB_LIMIT]),
]


@pytest.mark.parametrize(("doc", "sentence", "values"), STATED, ids=[s[1][:50] for s in STATED])
def test_the_doc_states_the_code_s_number(doc, sentence, values):
    found = re.findall(sentence, prose(doc))
    assert len(found) == 1, f"{doc}: the sentence /{sentence}/ is there {len(found)} times, not once"
    written = found[0] if isinstance(found[0], tuple) else (found[0],)
    assert [number(w) for w in written] == pytest.approx([float(v) for v in values]), f"{doc}: {sentence}"


def test_every_config_default_store_md_gives_is_the_code_s():
    """docs/store.md's "config.toml" lists the keys, each numeric default in brackets, and the maxima."""
    section = prose("docs/store.md").split("## config.toml", 1)[1]
    listed = dict(re.findall(r"`(\w+)` \(([\d.,]+)(?: s)?\)", section))
    assert listed, "the config section lost its defaults"
    for key, written in listed.items():
        assert number(written) == pytest.approx(getattr(DEFAULTS, key)), key
    numeric = {f.name for f in fields(Config) if isinstance(getattr(DEFAULTS, f.name), (int, float))}
    assert numeric == set(listed), "every numeric setting is listed with its default"
    assert {f.name for f in fields(Config)} <= set(re.findall(r"`(\w+)`", section))
    maxima = dict(re.findall(r"`(\w+)` ≤ ([\d,]+)", section))
    assert {key: number(value) for key, value in maxima.items()} == config_module._MAXIMUMS


DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file (outside code blocks)."""
    found, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (heading := re.match(r"#{1,6} (.+)", line)):
            text = heading.group(1).strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def links(path: Path) -> list[str]:
    """The link targets of a Markdown file, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(doc):
    broken = []
    for target in links(doc):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or not path.is_relative_to(ROOT):
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(target)
    assert broken == []


def test_the_docs_name_nothing_outside_the_repository():
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        assert "../shared" not in text and "DESIGN" not in text and "seed" not in text.lower(), doc


def test_the_code_and_tests_cite_no_tracker_or_seed_outside_the_repository():
    """A reader who clones the repository cannot open an issue of our tracker by its number, nor a seed
    document: the code, the tests and the benchmarks say the case itself (a public tracker's issue,
    cited by its address, is fine)."""
    root = Path(__file__).resolve().parent.parent
    cited = re.compile(r"\b(?:issues? \d+|seed 00\d|DESIGN section)", re.IGNORECASE)
    found = [f"{path.relative_to(root)}:{number}" for folder in ("src", "tests", "bench")
             for path in sorted((root / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if cited.search(line) and "re.compile" not in line]
    assert found == []


def test_every_module_has_a_test_module_of_its_name_or_a_row_in_the_tests_readme():
    """A newcomer finds a module's tests: tests/test_<name>.py, else tests/README.md says where."""
    tests = Path(__file__).parent
    readme = (tests / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([\w/]+\.py)` \| (.+) \|$", readme, re.MULTILINE))
    source = Path(auto_dream.__file__).parent
    missing = []
    for path in sorted(source.rglob("*.py")):
        if path.name == "__init__.py" or list(tests.glob(f"test_{path.stem}*.py")):
            continue
        if str(path.relative_to(source)) not in rows:
            missing.append(str(path.relative_to(source)))
    assert missing == []
    named = {name for files in rows.values() for name in re.findall(r"`(test_\w+\.py)`", files)}
    assert {name for name in named if not (tests / name).exists()} == set()
    assert {row for row in rows if not (source / row).exists()} == set()  # no row for a module gone
