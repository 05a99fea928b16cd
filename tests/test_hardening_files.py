"""Hardening, files and paths: what a hostile store, repository or file name did to
the commands, each case as a user meets it.

- A rewrite (a merge into a memory, archiving it) keeps a frontmatter `name` or `description`
  it cannot hold as one line of text exactly as written: a list, several lines, `!!binary`…
- A MEMORY.md header that leaves no room within the index caps is refused, not looped on.
- The symbol scan of the repository reads regular files only: a FIFO does not block it.
- Store folders, MEMORY.md and day logs that are symlinks (or not what they should be) are
  refused before anything is written; a store template that links out of the store is refused.
- Control characters in memory text or file names reach neither the terminal (`list`,
  `check`) nor MEMORY.md raw.
- A file name that is not UTF-8, a symlink loop, a date at the end of the calendar: a warning
  or one line, never a traceback, and the other memories still work.

Commands run through the installed `auto-dream` with a timeout, so a hang fails, it does not
stall the suite; HOME and XDG folders are in tmp_path (conftest.isolated_env).
"""

import json
import os
import signal
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from auto_dream.errors import StoreError
from auto_dream.judge.staleness import Evidence
from auto_dream.store.daylog import Entry, format_entry
from auto_dream.store.paths import StorePaths, ensure_store
from auto_dream.store.repository import open_repository
from auto_dream.store.scan import scan_memories
from auto_dream.store.templates import load_template
from conftest import installed_command, make_git_project, tree_hash, write_memory_file

NOW = datetime.now().astimezone()
CONTROL_BYTES = ("\x1b", "\x07", "\x9b", "\x00", "\x7f")


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def stamp(days: float) -> str:
    return ago(days).isoformat(timespec="seconds")


def log_day(days: float) -> str:
    return f"logs/{ago(days):%Y/%m/%Y-%m-%d}.md"


def log_line(days: float, text: str, entry_type: str | None = "project") -> str:
    return format_entry(Entry(ago(days).replace(tzinfo=None, microsecond=0), text, entry_type))


def run(root: Path, *argv: str, seconds: float = 30, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The installed command; a run that does not finish in time fails, it does not hang."""
    try:
        return subprocess.run([installed_command(), "--root", str(root), *argv], capture_output=True, text=True,
                              timeout=seconds, input=stdin, errors="surrogateescape")
    except subprocess.TimeoutExpired as stopped:
        return subprocess.CompletedProcess(stopped.cmd, None, "", f"did not finish in {seconds:g} s")


def assert_one_line_error(done: subprocess.CompletedProcess, code: int, *said: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("auto-dream: error: "), done.stderr[-2000:]
    for words in said:
        assert words in lines[0], (words, lines[0])


def assert_no_traceback(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def frontmatter_of(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])


def body_of(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---\n", 2)[2]


# ---------------------------------------------------------------- 1. a rewrite keeps what it cannot hold

# (case, frontmatter lines of name and description as a person wrote them)
ODD_VALUES = [
    ("name_is_a_list", "name: [Worker, pool orca]\n"),
    ("description_on_several_lines", "name: Release train\ndescription: |\n  Leaves every other Thursday\n"
                                     "  from platform nine.\n"),
    ("folded_description", "name: Design system\ndescription: >\n  Lives in Figma\n  under Components.\n"),
    ("binary_name", "name: !!binary SGVsbG8gd29ybGQ=\n"),
    ("name_yes_read_as_a_boolean", "name: yes\ndescription: The kestrel cluster\n"),
    ("name_with_two_spaces_and_a_trailing_one", "name: \"Two  spaces \"\n"),
    ("description_a_hex_number", "name: Rack power\ndescription: 0x1F\n"),
]
# A fact per case for the merge (an entry repeats it) and another for archiving (it cites a file gone)
MERGED_FACTS = [
    "The ingest queue is drained every hour by the worker pool orca.",
    "The release train leaves every other Thursday from platform nine.",
    "The design system lives in Figma project Nimbus under the Components page.",
    "Customer support tickets are triaged by the rota called lighthouse every morning.",
    "The warehouse cluster kestrel runs eight nodes in the Frankfurt region.",
    "Invoices are rendered to PDF by the service called quill before midnight.",
    "Rack B7 has two power feeds from separate substations in the basement.",
]
ARCHIVED_FACTS = [
    "Payroll exports are assembled in `src/payroll_export.py` each Friday.",
    "Badge readers sync their whitelist through `src/badge_sync.py` hourly.",
    "Weather alerts for the depot come from `src/storm_watch.py` polling.",
    "Locker assignments are computed by `src/locker_plan.py` at intake.",
    "Coffee machine telemetry lands via `src/espresso_feed.py` nightly.",
    "Parking permits renew through `src/permit_cycle.py` every quarter.",
    "Greenhouse humidity is balanced by `src/mist_control.py` continuously.",
]


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    """One store: each odd frontmatter twice, once repeated by a new entry (merged into), once
    citing a file that is gone (archived as stale); one dream."""
    project = make_git_project(tmp_path_factory.mktemp("odd_values") / "project",
                               tuple(fact.split("`")[1] for fact in ARCHIVED_FACTS))
    root = project / ".auto-dream"
    ensure_store(root)
    written = {}
    for number, (case, head) in enumerate(ODD_VALUES):
        merged = f"memories/project/2026010{number}_merged_{case}.md"
        write_memory_file(root, merged, f"---\n{head}type: project\nmtime: {stamp(20)}\n---\n{MERGED_FACTS[number]}\n")
        stale = f"memories/project/2025010{number}_stale_{case}.md"
        write_memory_file(root, stale, f"---\n{head}type: project\nmtime: {stamp(60)}\n---\n{ARCHIVED_FACTS[number]}\n")
        written[case] = {"merged": (merged, frontmatter_of(root / merged), body_of(root / merged)),
                         "archived": (stale, frontmatter_of(root / stale), body_of(root / stale))}
    write_memory_file(root, log_day(1), "".join(log_line(1 + 0.01 * n, fact + " It was confirmed this week.")
                                                for n, fact in enumerate(MERGED_FACTS)))
    dream = run(root, "dream", "--json")
    assert_no_traceback(dream)
    return root, written, json.loads(dream.stdout)


def _where_it_went(root: Path, report: dict, path: str) -> Path:
    """The memory's file after the dream: where it was, or the archive copy a retirement made."""
    if (root / path).exists():
        return root / path
    moved = [p for p in (root / "archive" / "project").glob("*.md") if p.name == path.rsplit("/", 1)[-1]]
    assert moved, (path, report["actions"])
    return moved[0]


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("how", ["merged", "archived"])
@pytest.mark.parametrize("case", [c for c, _ in ODD_VALUES])
def test_a_rewrite_keeps_a_name_or_description_it_cannot_hold_as_one_line_exactly_as_written(rewritten, case, how):
    root, written, report = rewritten
    path, before, body = written[case][how]
    touched = [a for a in report["actions"] if path in (a["path"], a["target"])]
    after_file = _where_it_went(root, report, path)
    after = frontmatter_of(after_file)
    if touched:  # rewritten: every value as written, of the same kind, and the whole body
        for key in ("name", "description"):
            if key in before and isinstance(before[key], str) and "\n" not in before[key] and key == "description":
                # a one-line description a merge may extend with what the entry added: every character stays
                assert isinstance(after.get(key), str) and after[key].startswith(before[key]), (key, after)
            elif key in before:
                assert after.get(key) == before[key] and type(after.get(key)) is type(before[key]), (key, after)
        assert body.strip() in body_of(after_file)
    else:  # or left as it is, named in a warning
        assert after_file == root / path and after == before
        assert any(path in warning for warning in report["warnings"]), report["warnings"]


@pytest.mark.slow  # starts the installed command
def test_the_merged_and_the_archived_memories_were_indeed_rewritten(rewritten):
    """Keeping the values must not mean never touching the file: a merge and an archive still happen."""
    _root, written, report = rewritten
    kinds = {(a["kind"], a["target"] or a["path"]) for a in report["actions"]}
    for case in written:
        merged_path, archived_path = written[case]["merged"][0], written[case]["archived"][0]
        assert ("merge", merged_path) in kinds, (case, kinds)
        assert ("archive", archived_path) in kinds, (case, kinds)


@pytest.mark.slow  # starts the installed command
def test_a_second_dream_after_the_rewrite_plans_nothing(rewritten):
    root, _written, _report = rewritten
    again = run(root, "dream", "--json")
    assert_no_traceback(again)
    assert [a for a in json.loads(again.stdout)["actions"] if a["kind"] != "index"] == []


# ---------------------------------------------------------------- 2. a header that leaves no room


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("header", ["lines", "bytes"])
@pytest.mark.parametrize("command", ["build-index", "check", "dream", "list"])
def test_a_header_larger_than_the_index_caps_is_refused_in_one_line_with_nothing_written(root, header, command):
    write_memory_file(root, "memories/project/20260101_Billing.md",
                      f"---\nname: Billing\ntype: project\nmtime: {stamp(3)}\n---\nBilling runs in Go.\n")
    run(root, "build-index")
    text = "# MEMORY.md\n" + ("a line\n" * 300 if header == "lines" else "x" * 26_000 + "\n")
    write_memory_file(root, "templates/MEMORY_header.md", text)
    before = tree_hash(root)

    done = run(root, command, seconds=20)
    if command == "list":  # list does not build the index: it works
        assert_no_traceback(done)
        assert "Billing" in done.stdout
        return
    assert_one_line_error(done, 1, "MEMORY_header.md")
    assert tree_hash(root) == before


def test_build_index_stops_instead_of_looping_on_a_header_over_the_line_cap(root):
    from auto_dream.store.index import IndexLimits, build_index
    from auto_dream.store.memory import Memory

    memory = Memory("memories/project/a.md", "A", "A memory", "project", NOW)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("build_index did not return in 10 s"))
    signal.alarm(10)
    try:
        with pytest.raises(StoreError, match="header"):
            build_index([memory], "# H\n" + "line\n" * 300, IndexLimits(), None)
    finally:
        signal.alarm(0)


# ---------------------------------------------------------------- 3. a FIFO in the repository


@pytest.fixture
def project_with_a_fifo(tmp_path) -> Path:
    project = make_git_project(tmp_path / "project", gone_symbols=("handle_request",))
    os.mkfifo(project / "src" / "pipe.py")  # reading it blocks until someone writes: nobody will
    (project / "src" / "zero.py").symlink_to("/dev/zero")
    return project


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("command", ["check", "dream"])
def test_a_fifo_in_the_repository_does_not_block_the_symbol_scan(project_with_a_fifo, command):
    root = project_with_a_fifo / ".auto-dream"
    ensure_store(root)
    write_memory_file(root, "memories/project/20260101_Entry_point.md",
                      f"---\nname: Entry point\ntype: project\nmtime: {stamp(60)}\n---\n"
                      "The entry point is `main()`; requests go through `handle_request()`.\n")
    done = run(root, command, "--json", seconds=20)
    assert_no_traceback(done)
    if command == "check":
        (health,) = json.loads(done.stdout)["memories"]
        assert health["missing_refs"] == ["handle_request"]  # main() was found in src/app.py


def test_the_symbol_scan_skips_special_files_and_still_finds_symbols(project_with_a_fifo):
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the symbol scan did not return in 10 s"))
    signal.alarm(10)
    try:
        found = open_repository(project_with_a_fifo).symbols({"main", "handle_request"})
    finally:
        signal.alarm(0)
    assert found == Evidence(present=frozenset({"main"}), gone=frozenset({"handle_request"}))


# ---------------------------------------------------------------- 4. symlinked store folders and logs


@pytest.fixture
def store_with_work(tmp_path) -> Path:
    """A store with an entry to distil and a stale memory to archive: a dream writes memories/,
    archive/, .state/ and MEMORY.md."""
    project = make_git_project(tmp_path / "project", ("src/payroll_export.py",))
    root = project / ".auto-dream"
    ensure_store(root)
    write_memory_file(root, "memories/project/20250101_Payroll.md",
                      f"---\nname: Payroll\ntype: project\nmtime: {stamp(60)}\n---\n"
                      "Payroll exports are assembled in `src/payroll_export.py` each Friday.\n")
    write_memory_file(root, log_day(1), log_line(1, "The ingest queue is drained every hour by the worker pool orca."))
    return root


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("folder", ["memories", "archive", ".state", "memories/project", "archive/project",
                                    ".state/runs"])
@pytest.mark.parametrize("command", ["dream", "append", "build-index"])
def test_a_store_folder_that_is_a_symlink_is_refused_and_nothing_is_written(store_with_work, tmp_path, folder,
                                                                           command):
    root = store_with_work
    elsewhere = tmp_path / "elsewhere" / folder.replace("/", "_")
    elsewhere.mkdir(parents=True)
    if (root / folder).exists():
        (root / folder).rename(elsewhere)
        elsewhere.mkdir(exist_ok=True)
    (root / folder).symlink_to(elsewhere, target_is_directory=True)
    store_before, outside_before = tree_hash(root), tree_hash(elsewhere)

    argv = ["append", "--type", "project", "Team heron owns the billing exports."] if command == "append" else [command]
    done = run(root, *argv)
    assert_one_line_error(done, 1, folder, "symlink")
    assert tree_hash(elsewhere) == outside_before
    assert tree_hash(root) == store_before


@pytest.mark.slow  # starts the installed command
def test_a_day_log_that_is_a_symlink_is_not_appended_through(root, tmp_path):
    outside = tmp_path / "notes.md"
    outside.write_text("my own notes\n", encoding="utf-8")
    log = root / log_day(0)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.symlink_to(outside)

    done = run(root, "append", "--type", "project", "Team heron owns the billing exports.")
    assert_one_line_error(done, 1, log_day(0).rsplit("/", 1)[-1], "symlink")
    assert outside.read_text(encoding="utf-8") == "my own notes\n"
    assert log.is_symlink()


@pytest.mark.slow  # starts the installed command
def test_a_log_folder_that_is_a_symlink_is_not_appended_through(root, tmp_path):
    outside = tmp_path / "year"
    outside.mkdir()
    (root / "logs" / f"{NOW:%Y}").symlink_to(outside, target_is_directory=True)

    done = run(root, "append", "--type", "project", "Team heron owns the billing exports.")
    assert_one_line_error(done, 1, "symlink")
    assert list(outside.iterdir()) == []


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
@pytest.mark.parametrize("command", ["build-index", "check", "dream"])
def test_a_memory_index_that_is_not_a_regular_file_is_refused_not_read(root, tmp_path, kind, command):
    index = root / "MEMORY.md"
    index.unlink(missing_ok=True)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("a file of someone else's\n", encoding="utf-8")
    {"fifo": os.mkfifo, "symlink": lambda p: p.symlink_to(outside), "folder": os.mkdir}[kind](index)
    before = tree_hash(root)

    done = run(root, command, seconds=20)
    assert_one_line_error(done, 1, "MEMORY.md")
    assert tree_hash(root) == before
    assert outside.read_text(encoding="utf-8") == "a file of someone else's\n"


@pytest.mark.slow  # starts the installed command
def test_a_store_root_that_is_a_symlink_still_works(tmp_path):
    """Refusing links inside the store must not refuse a store kept elsewhere and linked to."""
    real = tmp_path / "synced" / "auto-dream"
    ensure_store(real)
    (tmp_path / ".auto-dream").symlink_to(real, target_is_directory=True)
    done = run(tmp_path / ".auto-dream", "append", "--type", "project", "Team heron owns the billing exports.")
    assert_no_traceback(done)
    assert_no_traceback(run(tmp_path / ".auto-dream", "dream"))
    assert len(list((real / "memories" / "project").glob("*.md"))) == 1


# ---------------------------------------------------------------- 5. templates that link out of the store


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n", encoding="utf-8")
    return path


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("command", ["build-index", "dream", "check"])
def test_a_header_template_that_links_out_of_the_store_is_refused(root, secret, command):
    assert_no_traceback(run(root, "build-index"))
    (root / "templates").mkdir()
    (root / "templates" / "MEMORY_header.md").symlink_to(secret)
    write_memory_file(root, log_day(1), log_line(1, "The ingest queue is drained every hour by the worker pool orca."))

    done = run(root, command)
    assert_one_line_error(done, 1, "MEMORY_header.md", "outside the store")
    assert "wJalrXUtnFEMI" not in done.stdout + done.stderr
    index = root / "MEMORY.md"
    assert not index.exists() or "wJalrXUtnFEMI" not in index.read_text(encoding="utf-8")


def test_a_templates_folder_that_links_out_of_the_store_is_refused(root, tmp_path, secret):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "prompts").mkdir(parents=True)
    (elsewhere / "MEMORY_header.md").write_text("# Someone else's header\n", encoding="utf-8")
    (elsewhere / "prompts" / "system.md").symlink_to(secret)
    (root / "templates").symlink_to(elsewhere, target_is_directory=True)
    for name in ("MEMORY_header.md", "prompts/system.md"):
        with pytest.raises(StoreError, match="outside the store"):
            load_template(name, StorePaths(root).templates)


def test_a_prompt_template_that_links_out_of_the_store_is_refused(root, secret):
    (root / "templates" / "prompts").mkdir(parents=True)
    (root / "templates" / "prompts" / "system.md").symlink_to(secret)
    with pytest.raises(StoreError, match="outside the store"):
        load_template("prompts/system.md", StorePaths(root).templates)


@pytest.mark.slow  # starts the installed command
def test_a_template_linked_to_another_file_inside_the_store_is_used(root):
    write_memory_file(root, "my_header.md", "# Team memory\nLast updated: {last_updated}\n")
    (root / "templates").mkdir()
    (root / "templates" / "MEMORY_header.md").symlink_to(Path("..") / "my_header.md")
    assert_no_traceback(run(root, "build-index"))
    assert (root / "MEMORY.md").read_text(encoding="utf-8").startswith("# Team memory\n")


@pytest.mark.slow  # starts the installed command
def test_a_template_that_is_a_fifo_does_not_block(root):
    (root / "templates").mkdir()
    os.mkfifo(root / "templates" / "MEMORY_header.md")
    done = run(root, "build-index", seconds=20)
    assert done.returncode is not None, done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- 6. control characters


HOSTILE_NAME = "Deploy \x1b[31mred\x1b[0m and a bell\x07 and \x9b2J"
HOSTILE_DESCRIPTION = "Sets the title \x1b]0;pwned\x07 then erases \x1b[2J the screen\x7f."


@pytest.fixture
def hostile_store(root) -> Path:
    write_memory_file(root, "memories/project/20260101_Deploy.md",
                      "---\n" + yaml.safe_dump({"name": HOSTILE_NAME, "description": HOSTILE_DESCRIPTION,
                                                "type": "project", "mtime": stamp(2)}, allow_unicode=False)
                      + "---\nThe deploy script colours its output.\n")
    write_memory_file(root, "memories/project/20260102_Esc\x1b[2Jname.md",
                      f"---\nname: Plain\ntype: project\nmtime: {stamp(1)}\n---\nA file name with an escape.\n")
    return root


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("command", ["list", "check", "build-index"])
def test_control_characters_in_memories_never_reach_the_terminal(hostile_store, command):
    done = run(hostile_store, command)
    assert_no_traceback(done)
    for char in CONTROL_BYTES:
        assert char not in done.stdout + done.stderr, (char, done.stdout)
    if command == "list":
        assert "Deploy \\x1b[31mred" in done.stdout  # shown, not obeyed
        assert "Esc\\x1b[2Jname.md" in done.stdout


@pytest.mark.slow  # starts the installed command
def test_control_characters_are_not_written_raw_into_the_index(hostile_store):
    assert_no_traceback(run(hostile_store, "build-index"))
    index = (hostile_store / "MEMORY.md").read_text(encoding="utf-8")
    for char in CONTROL_BYTES:
        assert char not in index, (char, index)
    assert "Sets the title \\x1b]0;pwned\\x07 then" in index  # written out (in the label, Markdown-escaped too)
    link = next(line for line in index.splitlines() if "Plain" in line).split("](", 1)[1].split(")", 1)[0]
    from urllib.parse import unquote

    assert (hostile_store / unquote(link)).is_file()  # the link still resolves


@pytest.mark.slow  # starts the installed command
def test_list_json_keeps_the_exact_text(hostile_store):
    done = run(hostile_store, "list", "--json")
    assert_no_traceback(done)
    listed = {m["path"]: m for m in json.loads(done.stdout)}
    assert listed["memories/project/20260101_Deploy.md"]["name"] == HOSTILE_NAME
    assert listed["memories/project/20260101_Deploy.md"]["description"] == HOSTILE_DESCRIPTION
    assert "memories/project/20260102_Esc\x1b[2Jname.md" in listed


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("command", ["list", "dream", "build-index"])
def test_an_unreadable_file_whose_name_holds_an_escape_is_named_in_a_warning_written_out(root, command):
    write_memory_file(root, "memories/project/broken\x1b]0;pwned\x07.md", "---\nname: [unclosed\n---\nBroken.\n")
    done = run(root, command)
    assert_no_traceback(done)
    assert "memories/project/broken\\x1b]0;pwned\\x07.md" in done.stderr
    for char in CONTROL_BYTES:
        assert char not in done.stdout + done.stderr


@pytest.mark.slow  # starts the installed command
def test_an_entry_with_escape_sequences_becomes_an_index_line_without_them(root):
    write_memory_file(root, log_day(1), log_line(1, "The build prints \x1b[32mOK\x1b[0m in green\x07 when done."))
    assert_no_traceback(run(root, "dream"))
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "\x1b" not in index and "\x07" not in index
    assert "\\x1b" in index  # written out


# ---------------------------------------------------------------- 7. odd file names and symlink loops


@pytest.fixture
def store_with_a_good_memory(root) -> Path:
    write_memory_file(root, "memories/project/20260101_Billing.md",
                      f"---\nname: Billing\ntype: project\nmtime: {stamp(3)}\n---\nBilling runs in Go.\n")
    return root


def _assert_still_works(root: Path, bad: str) -> None:
    for command in ("list", "list --json", "check", "check --json", "build-index", "dream", "dream --json"):
        done = run(root, *command.split())
        assert_no_traceback(done)
        if command.endswith("--json"):
            json.loads(done.stdout)
        if command in ("list", "build-index", "dream"):
            assert bad in done.stderr + done.stdout, (command, done.stderr)
    listed = [m["path"] for m in json.loads(run(root, "list", "--json").stdout)]
    assert listed == ["memories/project/20260101_Billing.md"]
    assert "](memories/project/20260101_Billing.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.slow  # starts the installed command
def test_a_memory_file_name_that_is_not_utf8_is_reported_not_a_crash(store_with_a_good_memory):
    root = store_with_a_good_memory
    bad = os.fsencode(root / "memories" / "project") + b"/caf\xe9\xff.md"
    with open(bad, "wb") as handle:
        handle.write(b"---\nname: Cafe\ntype: project\n---\nThe cafe opens at nine.\n")
    _assert_still_works(root, "memories/project/caf\\xe9\\xff.md")
    assert os.path.exists(bad)


@pytest.mark.slow  # starts the installed command
def test_a_folder_name_that_is_not_utf8_is_reported_not_a_crash(store_with_a_good_memory):
    root = store_with_a_good_memory
    folder = os.fsencode(root / "memories" / "project") + b"/notes\xff"
    os.mkdir(folder)
    with open(folder + b"/inside.md", "wb") as handle:
        handle.write(b"---\nname: Inside\ntype: project\n---\nInside an odd folder.\n")
    _assert_still_works(root, "memories/project/notes\\xff")


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("loop", ["self", "pair"])
def test_a_symlink_loop_under_memories_is_reported_not_a_crash(store_with_a_good_memory, loop):
    root = store_with_a_good_memory
    folder = root / "memories" / "project"
    if loop == "self":
        (folder / "loop.md").symlink_to("loop.md")
    else:
        (folder / "loop.md").symlink_to("other.md")
        (folder / "other.md").symlink_to("loop.md")
    _assert_still_works(root, "memories/project/loop.md")
    assert (folder / "loop.md").is_symlink()


# ---------------------------------------------------------------- 8. dates at the end of the calendar


EXTREME_DATES = ["0001-01-01", "0001-01-01T00:00:00+14:00", "9999-12-31", "9999-12-31T23:59:59-12:00"]
TIME_KEYS = ["mtime", "created", "modified", "updated", "date", "metadata.modified"]


@pytest.mark.parametrize("value", EXTREME_DATES)
@pytest.mark.parametrize("key", TIME_KEYS)
def test_an_extreme_date_in_the_frontmatter_is_no_crash(root, cli, key, value):
    line = f"metadata:\n  modified: {value}\n" if key == "metadata.modified" else f"{key}: {value}\n"
    write_memory_file(root, "memories/project/20260101_Extreme.md",
                      f"---\nname: Extreme\ntype: project\n{line}---\nA memory from the end of time.\n")
    write_memory_file(root, "memories/project/20260102_Billing.md",
                      f"---\nname: Billing\ntype: project\nmtime: {stamp(3)}\n---\nBilling runs in Go.\n")
    write_memory_file(root, log_day(1), log_line(1, "A memory from the end of time. It says nothing new."))
    for command in ("list", "list --json", "check", "check --json", "build-index", "dream --json", "dream"):
        done = cli("--root", root, *command.split())
        assert done.code == 0, (command, done.err)
    listed = {m["path"]: m for m in json.loads(cli("--root", root, "list", "--json").out)}
    extreme = listed["memories/project/20260101_Extreme.md"]
    assert 1900 < int(extreme["mtime"][:4]) < 9999  # an unusable time is taken as unknown: the file's own
    assert extreme["age_days"] < 2


@pytest.mark.slow  # starts the installed command
def test_a_memory_file_whose_own_time_is_far_in_the_future_is_no_crash(store_with_a_good_memory):
    root = store_with_a_good_memory
    odd = write_memory_file(root, "memories/project/20260103_Future.md",
                            "---\nname: Future\ntype: project\n---\nA file touched in the far future.\n")
    os.utime(odd, (2**40, 2**40))  # about the year 36812: beyond what a datetime holds
    for command in ("list", "list --json", "check", "build-index", "dream"):
        assert_no_traceback(run(root, *command.split()))
    listed = {m["path"] for m in json.loads(run(root, "list", "--json").stdout)}
    assert "memories/project/20260103_Future.md" in listed


def test_scan_memories_never_gives_a_time_that_cannot_be_converted(root):
    for number, value in enumerate(EXTREME_DATES):
        write_memory_file(root, f"memories/project/2026010{number}_x.md",
                          f"---\nname: X{number}\ntype: project\nupdated: {value}\n---\nBody {number}.\n")
    from datetime import timezone
    from zoneinfo import ZoneInfo

    for tz in (None, timezone.utc, ZoneInfo("Pacific/Kiritimati"), ZoneInfo("Etc/GMT+12")):
        for memory in scan_memories(StorePaths(root), tz).memories:
            for zone in (timezone.utc, ZoneInfo("Pacific/Kiritimati"), ZoneInfo("Etc/GMT+12")):
                memory.mtime.astimezone(zone)
            memory.mtime + timedelta(days=366)
            memory.mtime - timedelta(days=366)


# ---------------------------------------------------------------- found while merging the hardening work


@pytest.mark.slow  # starts the installed command
def test_dream_does_not_read_a_day_log_that_is_a_symlink_so_a_secret_never_becomes_a_memory(tmp_path):
    root = tmp_path / "store"
    ensure_store(root)
    secret = tmp_path / "secret.md"
    secret.write_text(log_line(1, "The deploy token is hunter2-SECRET."), encoding="utf-8")
    link = root / log_day(1)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(secret)
    result = run(root, "dream")
    assert result.returncode == 0, result.stderr
    assert "symbolic link" in result.stderr
    stored = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any(b"hunter2" in p.read_bytes() for p in stored)


@pytest.mark.slow  # starts the installed command
@pytest.mark.parametrize("name", ["Brackets [/] close nothing", "[red]not red[/red]", "[bold"])
def test_a_name_that_looks_like_rich_markup_is_listed_as_written(tmp_path, name):
    root = tmp_path / "store"
    ensure_store(root)
    write_memory_file(root, "memories/project/20261001_markup.md",
                      f"---\nname: '{name}'\ndescription: '{name} too'\ntype: project\nmtime: {stamp(3)}\n---\nBody.\n")
    for command in ("list", "check"):
        result = run(root, command)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert name in run(root, "list").stdout


@pytest.mark.slow  # starts the installed command
def test_the_dream_report_writes_control_characters_out(tmp_path):
    root = tmp_path / "store"
    ensure_store(root)
    body = "Deploys happen every Tuesday \x1b[31mafternoon\x1b[0m from the release branch \x07"
    for name, days in (("20260901_a.md", 60), ("20261101_b.md", 20)):
        write_memory_file(root, f"memories/project/{name}",
                          f"---\nname: Deploy day\ndescription: Deploys\ntype: project\nmtime: {stamp(days)}\n"
                          f"---\n{body}\n")
    result = run(root, "dream")
    assert result.returncode == 0, result.stderr
    assert "afternoon" in result.stdout  # the report quotes the shared passage…
    assert not any(c in result.stdout + result.stderr for c in ("\x1b", "\x07"))  # …written out
    report = next((root / ".state" / "runs").glob("*/report.md")).read_text(encoding="utf-8")
    assert "\x1b" not in report and "\\x1b" in report
