"""Torture: one store holding good memories and a good log next to every kind of bad file found
in the wild. `dream`, `list`, `check` and `build-index` all complete; every file that cannot be
read is named in a warning; files that are read but must never be rewritten (a byte-order mark,
CRLF, no frontmatter) are not rewritten even when new entries repeat or contradict them; and no
bad file changes by a byte or in its modification time (docs/store.md, "Memory files").

The store is built and the four commands run once for the module, through the installed command.
"""

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from auto_dream.store.daylog import Entry, format_entry, read_all_entries
from auto_dream.store.paths import StorePaths, ensure_store
from auto_dream.store.scan import scan_memories
from conftest import installed_command, run_installed, write_memory_file

pytestmark = pytest.mark.slow  # a torture test: `make test` runs it, `make test-fast` leaves it out

NOW = datetime.now().astimezone()


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def stamp(days: float) -> str:
    return ago(days).isoformat(timespec="seconds")


def head(name: str, memory_type: str, days: float, description: str | None = None, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: {description or name}\ntype: {memory_type}\n"
            f"mtime: {stamp(days)}\n{extra}---\n")


def log_day(days: float) -> str:
    return f"logs/{ago(days):%Y/%m/%Y-%m-%d}.md"


def log_line(days: float, text: str, entry_type: str | None = "project") -> str:
    return format_entry(Entry(ago(days).replace(tzinfo=None, microsecond=0), text, entry_type))


# ---------------------------------------------------------------- the corpus

# Memories a user relies on, which must come through untouched and indexed.
GOOD_MEMORIES = {
    "memories/user/20261001_Data_engineer.md":
        head("Data engineer", "user", 20) + "The user is a data engineer who maintains the nightly batch jobs.\n",
    "memories/feedback/20261002_Small_pull_requests.md":
        head("Small pull requests", "feedback", 18) + "Keep pull requests under four hundred lines.\n\n"
        "**Why:** reviewers skim long diffs.\n",
    "memories/project/20261003_Billing_in_Go.md":
        head("Billing in Go", "project", 16) + "The billing service is written in Go and owned by team Falcon.\n",
}

# Log entries that provoke a rewrite of the read-only files (a duplicate, a contradiction),
# a name that tries to climb out of the store, and facts that simply become memories.
BOM_FACT = "The nightly export job writes parquet files to the lake bucket called heron."
CRLF_RULE = "Always squash commits before merging pull requests into main."
PLAIN_FACT = "The design system lives in Figma project Nimbus under the Components page."
FOLDER_TYPE_FACT = "Opinions about the sprint retro format are collected in the Tuesday sync meeting."
GARBAGE_MTIME_FACT = "The warehouse cluster kestrel runs eight nodes in the Frankfurt region."
MAPPING_SOURCES_FACT = "Customer support tickets are triaged by the rota called lighthouse every morning."
GOOD_LOG_ENTRIES = [
    (3, "project", BOM_FACT + " Files are partitioned by day."),
    (3, "feedback", "Never squash commits before merging pull requests into main."),
    (3, "reference", PLAIN_FACT + " Tokens are on the Foundations page."),
    (3, "project", FOLDER_TYPE_FACT + " Notes go to the shared drive."),
    (2, "project", GARBAGE_MTIME_FACT + " Backups run at midnight."),
    (2, "project", MAPPING_SOURCES_FACT + " Urgent ones page the oncall."),
    (2, "project", "../../../escaped/outside the store: a name that tries to climb out of memories."),
    (2, "user", "The user prefers answers with a short code sample first."),
    (1, "reference", "The latency dashboard is at https://grafana.example.com/d/latency"),
]


@dataclass(frozen=True)
class Kind:
    name: str
    path: str  # relative to the root
    expect: str  # "reported" | "read_only" | "tolerated" | "ignored"


def build_corpus(root: Path, outside: Path, write: bool = True) -> list[Kind]:
    """Every kind of bad input, written into the store at `root` (unless `write` is false)."""
    kinds: list[Kind] = []

    def put(name: str, relative: str, content: str | bytes, expect: str) -> None:
        if write:
            write_memory_file(root, relative, content)
        kinds.append(Kind(name, relative, expect))

    def make(name: str, relative: str, expect: str, maker) -> None:
        if write:
            maker(root / relative)
        kinds.append(Kind(name, relative, expect))

    project = "memories/project"
    put("broken_yaml", f"{project}/broken_yaml.md",
        "---\nname: [unclosed\ntype: project\n---\nThe YAML above never closes its bracket.\n", "reported")
    put("tab_indented_frontmatter", f"{project}/tab_indented.md",
        "---\nname: Tabbed\n\tdescription: indented with a tab\ntype: project\n---\nTabs are not YAML indent.\n",
        "reported")
    put("byte_order_mark", f"{project}/bom.md",
        b"\xef\xbb\xbf" + (head("Nightly export", "project", 30) + BOM_FACT + "\n").encode(), "read_only")
    put("crlf_line_ends", "memories/feedback/crlf.md",
        (head("Squash before merging", "feedback", 30) + CRLF_RULE + "\n").replace("\n", "\r\n"), "read_only")
    put("no_frontmatter", "memories/reference/no_frontmatter.md", PLAIN_FACT + "\n", "read_only")
    put("not_utf8", f"{project}/not_utf8.md",
        b"---\nname: Caf\xe9 hours\ntype: project\n---\nThe caf\xe9 opens at nine.\n", "reported")
    put("nul_bytes", f"{project}/nul_bytes.md",
        b"---\nname: Binary\ntype: project\n---\nsome\x00binary\x00data\n", "reported")
    big = (head("Huge", "project", 30) + ("x" * 99 + "\n") * 200_000).encode()  # 20 MB
    put("file_of_20_mb", f"{project}/huge.md", big, "reported")
    put("empty_file", f"{project}/empty.md", b"", "reported")
    put("only_whitespace", f"{project}/whitespace.md", b"  \n\t\n   \n", "reported")
    put("frontmatter_only", f"{project}/frontmatter_only.md",
        head("Frontmatter only", "project", 25, "A memory that has no body at all"), "tolerated")
    put("unknown_type_outside_a_type_folder", "memories/opinion.md",
        "---\nname: An opinion\ntype: opinion\n---\nTabs are better than spaces.\n", "reported")
    put("unknown_type_in_a_type_folder", f"{project}/unknown_type.md",
        f"---\nname: Retro format\ntype: opinion\nmtime: {stamp(30)}\n---\n{FOLDER_TYPE_FACT}\n", "read_only")
    put("dotdot_in_name", f"{project}/dotdot.md",
        head("../../../outside/escaped", "project", 25, "../../etc/passwd") + "A name full of dots.\n",
        "tolerated")
    put("yaml_list_frontmatter", f"{project}/yaml_list.md", "---\n- one\n- two\n---\nA list, not a mapping.\n",
        "reported")
    put("unclosed_frontmatter", f"{project}/unclosed.md",
        "---\nname: Unclosed\ntype: project\nThe block is never closed.\n", "reported")
    put("garbage_mtime", f"{project}/garbage_mtime.md",
        "---\nname: Warehouse cluster\ndescription: The warehouse cluster\ntype: project\n"
        f"mtime: the day before yesterday-ish\n---\n{GARBAGE_MTIME_FACT}\n", "tolerated")
    put("sources_is_a_mapping", f"{project}/sources_mapping.md",
        head("Ticket triage", "project", 30, extra="sources: {first: abc, second: def}\n")
        + MAPPING_SOURCES_FACT + "\n", "tolerated")
    put("very_long_single_line", f"{project}/long_line.md",
        head("Long line", "project", 25) + "word " * 120_000 + "\n", "tolerated")  # 600 kB, one line
    put("python_object_tag", f"{project}/python_tag.md",
        f"---\nname: !!python/object/apply:os.system ['touch {outside}/pwned']\ntype: project\n---\nNo.\n",
        "reported")
    put("hidden_file", f"{project}/.hidden.md", head("Hidden", "project", 25) + "Dot files are not memories.\n",
        "ignored")

    # A symlink out of the root, a dangling one, a folder and a FIFO named like memories.
    secret = outside / "secret.md"
    if write:
        secret.write_text(head("Secret", "project", 25) + "Outside the store.\n", encoding="utf-8")
    make("symlink_out_of_the_root", f"{project}/symlink_out.md", "reported", lambda p: p.symlink_to(secret))
    make("dangling_symlink", f"{project}/dangling.md", "reported",
         lambda p: p.symlink_to(root / "no" / "such" / "file.md"))
    make("folder_named_like_a_memory", f"{project}/folder.md", "reported",
         lambda p: write_memory_file(p, "notes.txt", "not a memory\n"))
    make("fifo_named_like_a_memory", f"{project}/fifo.md", "reported", os.mkfifo)  # reading it would block

    # Logs: the good one, then the bad ones.
    good_log = "# a good day\n\n" + "".join(log_line(days + 0.01 * n, text, entry_type)
                                            for n, (days, entry_type, text) in enumerate(GOOD_LOG_ENTRIES))
    if write:
        write_memory_file(root, log_day(0.5), good_log)
    put("log_line_with_a_bad_date", log_day(4),
        "- [2026-13-45 10:00] (project) a month that does not exist\n"
        + log_line(4, "The ingest queue is drained every hour by the worker pool orca."), "reported")
    put("log_with_mixed_line_ends", log_day(5),
        (log_line(5, "Mixed line ends: the staging database is restored from snapshot every Sunday.")
         + log_line(5.01, "Mixed line ends: the release train leaves every other Thursday.")).replace(
            "\n", "\r\n", 1), "tolerated")
    put("log_not_utf8", log_day(6), log_line(6, "Caf\udce9 opening hours are nine to five.").encode(
        "utf-8", "surrogateescape"), "reported")
    put("log_with_nul_bytes", log_day(7),
        log_line(7, "Rack B7 power feed is redundant.").replace("power", "power\x00").encode(),
        "tolerated")  # a NUL is text a log may carry; what matters is the memory made from it (below)
    make("log_named_like_a_day_that_is_a_folder", log_day(8), "ignored",
         lambda p: write_memory_file(p, "entries.md", log_line(8, "Inside a folder named like a day.")))
    return kinds


def run_bounded(root: Path, *argv: str, seconds: float = 30) -> subprocess.CompletedProcess:
    """The installed command; a run that does not finish in time is killed and fails, not hangs."""
    try:
        return subprocess.run([installed_command(), "--root", str(root), *argv], capture_output=True, text=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired as stopped:
        return subprocess.CompletedProcess(stopped.cmd, None, "", f"did not finish in {seconds:g} s")


# ---------------------------------------------------------------- snapshots


def snapshot(path: Path) -> tuple:
    """What a user would call a change: bytes, mtime and mode, through folders, not through links."""
    stat = path.lstat()
    if path.is_symlink():
        return ("link", os.readlink(path), stat.st_mtime_ns)
    if path.is_dir():
        return ("dir", stat.st_mtime_ns, tuple((c.name, snapshot(c)) for c in sorted(path.iterdir())))
    if not path.is_file():
        return ("special", stat.st_mode, stat.st_mtime_ns)
    return ("file", hashlib.sha256(path.read_bytes()).hexdigest(), stat.st_mtime_ns, stat.st_mode)


@dataclass(frozen=True)
class Outcome:
    root: Path
    outside: Path
    kinds: list[Kind]
    before: dict[str, tuple]
    secret_before: tuple
    outside_before: list[str]
    dream: object
    report: dict
    later: dict[str, object]  # command -> CompletedProcess, after the dream
    after: dict[str, tuple]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> Outcome:
    base = tmp_path_factory.mktemp("bad_input")
    outside = base / "outside"
    outside.mkdir()
    root = base / "store" / ".auto-dream"
    ensure_store(root)
    for relative, text in GOOD_MEMORIES.items():
        write_memory_file(root, relative, text)
    kinds = build_corpus(root, outside)
    assert kinds == CORPUS
    before = {k.path: snapshot(root / k.path) for k in kinds}
    secret_before = snapshot(outside / "secret.md")
    outside_before = sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if root not in p.parents
                            and p != root)

    dream = run_bounded(root, "dream", "--json")
    report = json.loads(dream.stdout) if dream.returncode == 0 else {}
    later = {command: run_bounded(root, *command.split())
             for command in ("list --json", "check --json", "build-index", "list", "check")}
    after = {k.path: snapshot(root / k.path) for k in kinds}
    return Outcome(root, outside, kinds, before, secret_before, outside_before, dream, report, later, after)


CORPUS = build_corpus(Path("root"), Path("outside"), write=False)  # what the tests are parametrized by


def kinds_where(expect: str) -> list[Kind]:
    return [k for k in CORPUS if k.expect == expect]


def test_the_corpus_has_at_least_twenty_kinds_of_bad_input():
    assert len(CORPUS) >= 20
    assert len({k.name for k in CORPUS}) == len(CORPUS)


# ---------------------------------------------------------------- the commands complete


def test_dream_completes_with_exit_0(outcome):
    assert outcome.dream.returncode == 0, outcome.dream.stderr
    assert "Traceback" not in outcome.dream.stderr
    assert outcome.report["stats"]["created"] >= 5  # the good entries became memories


@pytest.mark.parametrize("command", ["list --json", "check --json", "build-index", "list", "check"])
def test_list_check_and_build_index_complete_with_exit_0(outcome, command):
    done = outcome.later[command]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if command.endswith("--json"):
        json.loads(done.stdout)  # one JSON document on stdout, warnings on stderr


# ---------------------------------------------------------------- every bad file is reported


@pytest.mark.parametrize("kind", kinds_where("reported"), ids=lambda k: k.name)
def test_each_bad_file_is_named_in_the_dream_report_or_on_stderr(outcome, kind):
    said = "\n".join(outcome.report.get("warnings", [])) + "\n" + outcome.dream.stderr
    assert kind.path in said, f"{kind.path} is not reported:\n{said}"


@pytest.mark.parametrize("kind", [k for k in kinds_where("reported") if k.path.startswith("memories/")],
                         ids=lambda k: k.name)
def test_list_and_build_index_warn_about_each_unreadable_memory_file(outcome, kind):
    for command in ("list", "build-index"):
        assert kind.path in outcome.later[command].stderr, (command, outcome.later[command].stderr)


# ---------------------------------------------------------------- nothing bad is modified


@pytest.mark.parametrize("kind", CORPUS, ids=lambda k: k.name)
def test_no_bad_file_changes_by_a_byte_or_in_its_modification_time(outcome, kind):
    assert outcome.after[kind.path] == outcome.before[kind.path]


def test_the_target_of_the_symlink_out_of_the_root_is_unchanged(outcome):
    assert snapshot(outcome.outside / "secret.md") == outcome.secret_before


def test_nothing_is_written_outside_the_store(outcome):
    base = outcome.root.parent.parent
    now = sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if outcome.root not in p.parents
                 and p != outcome.root)
    assert now == outcome.outside_before  # no ../ escape, and the !!python tag ran nothing
    created = [a["path"] for a in outcome.report["actions"] if a["kind"] == "create"]
    climber = [p for p in created if "escaped" in p]
    assert len(climber) == 1 and climber[0].startswith("memories/project/") and ".." not in climber[0]


# ---------------------------------------------------------------- read, but never rewritten


@pytest.mark.parametrize("kind", [k for k in kinds_where("read_only") + kinds_where("tolerated")
                                  if k.path.startswith("memories/")], ids=lambda k: k.name)
def test_readable_odd_memories_are_listed(outcome, kind):
    listed = {m["path"] for m in json.loads(outcome.later["list --json"].stdout)}
    assert kind.path in listed


def test_a_dot_file_is_not_taken_for_a_memory(outcome):
    listed = {m["path"] for m in json.loads(outcome.later["list --json"].stdout)}
    assert "memories/project/.hidden.md" not in listed


@pytest.mark.parametrize("kind", kinds_where("read_only"), ids=lambda k: k.name)
def test_a_read_only_memory_that_new_entries_repeat_or_contradict_is_not_rewritten_or_retired(outcome, kind):
    # The new entry went into a memory of its own instead; the read-only file stays live.
    assert (outcome.root / kind.path).exists()
    touched = {a["path"] for a in outcome.report["actions"]} | {a["target"] for a in outcome.report["actions"]}
    assert kind.path not in touched, [a for a in outcome.report["actions"] if kind.path in (a["path"], a["target"])]


def test_every_good_entry_lands_in_a_memory(outcome):
    texts = "\n".join(m.body for m in scan_memories(StorePaths(outcome.root), None).memories)
    for _days, _type, text in GOOD_LOG_ENTRIES:
        assert text in texts, text
    assert json.loads(outcome.later["check --json"].stdout)["undistilled_entries"] == 0


def test_entries_that_repeat_read_only_memories_get_memories_of_their_own(outcome):
    read_only = {k.path for k in kinds_where("read_only")}
    elsewhere = "\n".join(p.read_text(encoding="utf-8") for p in (outcome.root / "memories").rglob("2*.md")
                          if p.relative_to(outcome.root).as_posix() not in read_only)
    provoking = [text for _days, _type, text in GOOD_LOG_ENTRIES
                 if text.startswith((BOM_FACT, PLAIN_FACT, FOLDER_TYPE_FACT, "Never squash"))]
    assert len(provoking) == 4
    for text in provoking:
        assert text in elsewhere, text


def test_entries_of_a_log_with_mixed_line_ends_are_read_without_carriage_returns(outcome):
    entries, _ = read_all_entries(StorePaths(outcome.root))
    mixed = [e.text for e in entries if e.text.startswith("Mixed line ends")]
    assert sorted(mixed) == ["Mixed line ends: the release train leaves every other Thursday.",
                             "Mixed line ends: the staging database is restored from snapshot every Sunday."]


def test_dream_writes_no_memory_file_it_cannot_read_back(outcome):
    """Whatever a log line holds (a NUL byte, say), the memory made from it must be readable."""
    planted = {k.path for k in CORPUS}
    scan = scan_memories(StorePaths(outcome.root), None)
    made_unreadable = sorted(f"{u.path}: {u.reason}" for u in scan.unreadable if u.path not in planted)
    assert made_unreadable == []


def test_the_index_lists_the_good_memories_and_keeps_its_limits(outcome):
    index = (outcome.root / "MEMORY.md").read_text(encoding="utf-8")
    for relative in GOOD_MEMORIES:
        assert f"]({relative})" in index
    assert max(len(line) for line in index.splitlines()) <= 150  # the 600 kB line too
    for line in index.splitlines():
        if "](" in line:
            target = line.split("](", 1)[1].split(")", 1)[0]
            assert (outcome.root / target).is_file() and not target.startswith(".."), line


# ---------------------------------------------------------------- inputs that stop a dream outright


def test_a_log_line_whose_escaped_text_holds_a_lone_surrogate_is_reported_not_a_crash(tmp_path):
    """A hand-edited `\\"…\\ud800…"` line decodes to text that cannot be written as UTF-8."""
    root = tmp_path / ".auto-dream"
    ensure_store(root)
    good = "The ingest queue is drained every hour by the worker pool orca."
    relative = log_day(1)
    write_memory_file(root, relative, log_line(1, good) + f"- [{ago(1):%Y-%m-%d %H:%M:%S}] "
                      + '\\"a lone \\ud800 surrogate"\n')
    before = snapshot(root / relative)

    dream = run_installed("--root", root, "dream", "--json")
    assert dream.returncode == 0, dream.stderr[-2000:]
    assert "Traceback" not in dream.stderr
    assert relative in "\n".join(json.loads(dream.stdout)["warnings"])
    assert good in "\n".join(p.read_text(encoding="utf-8") for p in (root / "memories").rglob("*.md"))
    assert snapshot(root / relative) == before


@pytest.mark.parametrize("repeated", [False, True], ids=["left_alone", "repeated_by_a_new_entry"])
def test_a_memory_with_a_deeply_nested_value_is_not_a_crash(tmp_path, repeated):
    """YAML allows the nesting, so the file is read; neither reading it nor rewriting it (when a new
    entry repeats it) may die of recursion: leave it as it is (reported) or rewrite it whole."""
    root = tmp_path / ".auto-dream"
    ensure_store(root)
    fact = "The warehouse cluster kestrel runs eight nodes in the Frankfurt region."
    nested = "[" * 600 + "]" * 600
    deep = write_memory_file(root, "memories/project/deep.md",
                             head("Warehouse cluster", "project", 30, extra=f"related: {nested}\n") + fact + "\n")
    before = snapshot(deep)
    entry = fact + " Backups run at midnight." if repeated else "Team heron owns the billing exports."
    write_memory_file(root, log_day(1), log_line(1, entry))

    for _ in range(2):  # the second run reads what the first one recorded
        dream = run_bounded(root, "dream")
        assert dream.returncode == 0, dream.stderr[-2000:]
        assert "Traceback" not in dream.stderr
    check = json.loads(run_bounded(root, "check", "--json").stdout)
    assert check["undistilled_entries"] == 0
    if snapshot(deep) != before:  # rewritten: then the nested value is whole
        (kept,) = [m for m in scan_memories(StorePaths(root), None).memories if m.path == "memories/project/deep.md"]
        expected: list = []
        for _ in range(599):
            expected = [expected]
        assert kept.extra["related"] == expected


def test_an_entry_pasted_with_windows_line_ends_becomes_a_memory_dream_can_still_update(tmp_path):
    """The entry keeps its CR (the log escapes it); the memory made from it must not turn read-only,
    or every later repeat of the fact becomes a second memory that dream refuses to merge."""
    root = tmp_path / ".auto-dream"
    ensure_store(root)
    fact = "The release train leaves every other Thursday from platform nine."
    write_memory_file(root, log_day(2), log_line(2, fact + "\r\nThe freeze starts on Monday."))
    assert run_installed("--root", root, "dream").returncode == 0
    (made,) = scan_memories(StorePaths(root), None).memories
    assert made.read_only is None, made.read_only

    write_memory_file(root, log_day(1), log_line(1, fact))  # the fact again: merged, its source added
    second = run_installed("--root", root, "dream", "--json")
    assert second.returncode == 0, second.stderr
    assert [(a["kind"], a["target"]) for a in json.loads(second.stdout)["actions"] if a["kind"] != "index"] == \
        [("merge", made.path)]
    assert len(scan_memories(StorePaths(root), None).memories) == 1


def test_a_memory_whose_frontmatter_is_a_yaml_alias_bomb_does_not_hang_dream(tmp_path):
    """Nine levels of nine aliases: a few hundred bytes that expand to 9**9 leaves if walked."""
    root = tmp_path / ".auto-dream"
    ensure_store(root)
    bomb = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
    memory = write_memory_file(root, "memories/project/alias_bomb.md",
                               f"---\nname: Alias bomb\ntype: project\nmtime: {stamp(25)}\nl0: &l0 [lol]\n{bomb}"
                               "---\nLaughs.\n")
    write_memory_file(root, log_day(1), log_line(1, "The ingest queue is drained every hour by the worker pool orca."))
    before = snapshot(memory)

    for command in ("dream", "list", "check", "build-index", "dream"):
        done = run_bounded(root, command, seconds=10)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    assert snapshot(memory) == before
