"""Staleness (docs/dream.md, "Staleness"): the references a memory cites, which of them the repository
proves gone, the classes, and what prune does with them. The decisions are tested against a
FakeRepository (what the repository has now and what its history had); dream against real git
histories built in tmp_path (store/repository.py's own tests are in test_repository.py)."""

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import builders
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream import bookkeeping
from auto_dream.dream.report import build_report
from auto_dream.dream.runner import decide_dream, dream
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.judge.staleness import (
    EVERGREEN,
    FRESH,
    FULLY_STALE,
    PARTIALLY_STALE,
    Evidence,
    References,
    Staleness,
    assess_staleness,
    classify,
    extract_references,
    is_verifiable,
    moments_of,
    without_line_suffix,
)
from auto_dream.store.config import Config
from auto_dream.store.context import open_context
from auto_dream.store.memory import split_frontmatter
from auto_dream.store.memory_md import rebuild_index
from auto_dream.store.paths import StorePaths, ensure_store
from auto_dream.store.repository import find_repo
from conftest import examples, git_history, make_git_project, write_memory_file
from fakes import snapshot_of

NOW = datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc)

# What this file's memories cite as gone: the history of make_repo's repository held each of them.
GONE_FILES = ("src/old/module.py", "src/old/orders.py", "src/legacy.py", "src/lint/rules.ts", "src/cmux/scroll.ts",
              "src/cmux/render.ts", "src/x.ts")
GONE_SYMBOLS = ("old_handler", "gone_function", "checkImports")


def make_repo(folder: Path) -> Path:
    """A git work tree with src/app.py defining handle_request; its history held GONE_FILES and
    definitions of GONE_SYMBOLS, deleted since."""
    return make_git_project(folder, GONE_FILES, GONE_SYMBOLS, app="def handle_request(request):\n    return request\n")


@pytest.fixture
def repo(root) -> Path:
    """The store `root` (tmp/store/.auto-dream) lives inside this repository (tmp/store)."""
    return make_repo(root.parent)


def memory_text(name: str, memory_type: str, age_days: float, body: str, extra: str = "") -> str:
    """No description: the name is all a reader is told."""
    return builders.memory_text(name, memory_type, NOW - timedelta(days=age_days), body, "", extra)


def add_memory(root: Path, file_name: str, name: str, memory_type: str, age_days: float, body: str,
               extra: str = "") -> str:
    relative = f"memories/{memory_type}/{file_name}"
    write_memory_file(root, relative, memory_text(name, memory_type, age_days, body, extra))
    return relative


def run_dream(root: Path, options: DreamOptions = DreamOptions()) -> dict:
    return dream(open_context(root), NOW, options, DeterministicDistiller()).report.as_json()


def archive_actions(report: dict) -> list[dict]:
    return [a for a in report["actions"] if a["kind"] == "archive"]


def flagged(report: dict) -> dict[str, list[str]]:
    return {item["path"]: item["missing_refs"] for item in report["flagged"]}


STALE_BODY = "Tracks the port of src/old/module.py; the entry point is `old_handler()`."


def add_stale_project(root: Path, age_days: float = 40, body: str = STALE_BODY, extra: str = "",
                      name: str = "Old module port", file_name: str = "20260822_old_module_port.md") -> str:
    return add_memory(root, file_name, name, "project", age_days, body, extra)


def assert_kept_and_flagged(root: Path, report: dict, relative: str) -> None:
    assert (root / relative).is_file()
    assert archive_actions(report) == []
    assert relative in flagged(report)
    assert not list((root / "archive").rglob("*.md"))


# ---------------------------------------------------------------- a repository as two sets


@dataclass
class FakeRepository:
    """judge.staleness.Repository from sets: what the repository has now (files and names), and what
    its history had that is gone. It records every question it is asked."""

    now: frozenset[str] = frozenset({"src/app.py", "handle_request", "main"})
    gone: frozenset[str] = frozenset({*GONE_FILES, *GONE_SYMBOLS})
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def files(self, paths) -> Evidence:
        self.asked.append(("files", tuple(paths)))
        return self.evidence(paths)

    def symbols(self, names, written=()) -> Evidence:
        self.asked.append(("symbols", tuple(names)))
        self.written = list(written)
        return self.evidence(names)

    def evidence(self, refs) -> Evidence:
        return Evidence(frozenset(r for r in refs if r in self.now), frozenset(r for r in refs if r in self.gone))


@dataclass(frozen=True)
class Note:
    """A memory as staleness reads it."""

    body: str
    path: str = "memories/project/note.md"
    mtime: datetime = NOW

    def text(self) -> str:
        return self.body


def verdict(text: str, repository: FakeRepository | None = None) -> Staleness:
    return assess_staleness([Note(text)], FakeRepository() if repository is None else repository)[Note(text).path]


def once(*refs: str) -> FakeRepository:
    """A repository whose history also had `refs`, all gone: only the judge's own rules can keep them
    from counting."""
    return FakeRepository(gone=frozenset({*GONE_FILES, *GONE_SYMBOLS, *refs}))


def assert_evergreen(result: Staleness) -> None:
    assert result.classification == EVERGREEN
    assert result.missing_refs == []


# ---------------------------------------------------------------- extract_references


def test_paths_with_a_folder_and_a_known_extension_are_file_refs():
    refs = extract_references("The parser is in src/app/parser.py and the styles in web/theme.css.")
    assert refs.files == ("src/app/parser.py", "web/theme.css")


def test_backticked_paths_are_file_refs():
    assert extract_references("see `config/settings` for the flags").files == ("config/settings",)


def test_a_trailing_line_number_is_not_part_of_the_path():
    refs = extract_references("Crash at src/x.ts:120, range src/y.py:12-30, and `lib/z.go:7`.")
    assert refs.files == ("src/x.ts", "src/y.py", "lib/z.go")


def test_urls_are_not_file_refs():
    refs = extract_references("Docs at https://example.com/docs/guide.md and http://host/src/app.py")
    assert refs.files == ()


def test_calls_definitions_and_backticked_identifiers_are_symbols():
    text = ("handle_request() calls def parse_config, which builds a class RequestRouter; "
            "see `SessionStore` and `retry_budget`; tests call `vi.resetModules()`.")
    assert set(extract_references(text).symbols) == {"handle_request", "parse_config", "RequestRouter",
                                                     "SessionStore", "retry_budget", "resetModules"}


def test_camel_case_product_names_in_prose_are_not_symbols():
    text = "We moved to PostgreSQL, host the code on GitHub and write JavaScript and TypeScript on macOS."
    assert extract_references(text).symbols == ()


def test_plain_words_in_backticks_are_not_symbols():
    assert extract_references("run `make` then `deploy`").symbols == ()


# ---------------------------------------------------------------- what counts: there now, proven gone, or unverifiable


@pytest.mark.parametrize("ref", ["~/.config/ghostty/config", "/etc/app/settings.yaml", "$HOME/bin/tool.sh",
                                 "../src/app.py", "./src/app.py", "src/app/{date}.md", "path/to/module.py"])
def test_refs_rooted_outside_the_repo_or_standing_for_files_are_unverifiable(ref):
    assert not is_verifiable(ref)


@pytest.mark.parametrize("ref", ["src/app.py", "src/gone/away.py", "lib/util.py", ".claude/specs/plan.md"])
def test_a_path_that_could_be_the_repos_own_is_asked_of_its_history(ref):
    assert is_verifiable(ref)


def test_only_unverifiable_refs_is_evergreen():
    result = verdict("Config in `~/.config/ghostty/config` and /etc/hosts.txt and lib/x/y.py")
    assert_evergreen(result)
    assert set(result.unverifiable_refs) == {"~/.config/ghostty/config", "/etc/hosts.txt", "lib/x/y.py"}


def test_no_refs_at_all_is_evergreen():
    assert verdict("The user likes short answers.").classification == EVERGREEN


def test_every_ref_present_is_fresh():
    result = verdict("Requests go through src/app.py into `handle_request()`.")
    assert result.classification == FRESH
    assert result.missing_refs == []


def test_unverifiable_refs_do_not_count_against_a_fresh_memory():
    assert verdict("src/app.py reads ~/.config/tool/config.toml").classification == FRESH


def test_some_refs_gone_is_partially_stale():
    result = verdict("Moved from src/legacy.py to src/app.py.")
    assert result.classification == PARTIALLY_STALE
    assert result.missing_refs == ["src/legacy.py"]


def test_a_gone_symbol_next_to_a_present_file_is_partially_stale():
    result = verdict("src/app.py no longer has `old_handler()`.")
    assert result.classification == PARTIALLY_STALE
    assert result.missing_refs == ["old_handler"]


def test_every_file_and_symbol_gone_is_fully_stale():
    result = verdict("Port src/old/module.py and `old_handler()`; notes in ~/notes/port.md")
    assert result.classification == FULLY_STALE
    assert set(result.missing_refs) == {"src/old/module.py", "old_handler"}


def test_without_a_repo_everything_is_evergreen():
    result = assess_staleness([Note("Port src/old/module.py and `old_handler()`.")], None)[Note("").path]
    assert_evergreen(result)
    assert result.unverifiable_refs == ["src/old/module.py", "old_handler"]


# Stale needs proof: a reference the repository has not got, and whose history never had, is not
# missing. Each of these was counted missing when a missing file or name was enough.
@pytest.mark.parametrize("body", [
    "Specs are drafted in `.claude/specs/auth-flow.md` first.",  # gitignored: no commit ever held it
    "The watcher fires `resource_changed()` on every save.",  # another library's API, never defined here
    "The wizard asks with the `AskUserQuestion` tool.",  # orchestkit: a Claude Code tool
    "The registry's `ValidateOCI` rejects images without the annotation.",  # orchestkit: the MCP registry's Go
    "Hooks answer through `additionalContext` and `UserPromptSubmit`.",  # orchestkit: Claude Code's hooks
    "Funders score on `mission_alignment` first.",  # application-pipeline: someone else's rubric
    "Reset the module registry with `vi.resetModules()` between tests.",  # vitest
    "Check the flag with `fs.existsSync()` before reading.",
    "Use `Date.now()` for arithmetic, `z.string().url()` becomes `z.url()`.",  # orchestkit, recommendarr
    "The triage now `.trim()`s the ref.",  # orchestkit review-2041
    "Build it with `Vec::with_capacity()`.",
    "The page lives in src/pages/never_written.tsx.",  # a file no commit ever held
])
def test_a_reference_the_repositorys_history_never_had_is_unverifiable(body):
    result = verdict(body)
    assert_evergreen(result)
    assert result.unverifiable_refs


@pytest.mark.parametrize("body, missing", [
    ("The wizard state lives in `SessionStore`.", ["SessionStore"]),  # only named, and the repository defined it
    ("Tests reset it with `registry.resetModules()`.", ["resetModules"]),
    ("Validation lives in `src.checks.validate_identifier()`.", ["validate_identifier"]),
])
def test_a_name_the_repository_once_defined_and_names_nowhere_now_counts_however_it_is_cited(body, missing):
    result = verdict(body, once("SessionStore", "resetModules", "validate_identifier"))
    assert result.classification == FULLY_STALE
    assert result.missing_refs == missing


def test_a_name_only_named_still_confirms_a_memory_when_the_repo_has_it():
    result = verdict("Moved out of src/legacy.py; requests go through `handle_request`.")
    assert result.classification == PARTIALLY_STALE
    assert result.missing_refs == ["src/legacy.py"]


# The judge's own rules: even where the repository's history had such a reference and lost it
# (FakeRepository would answer `gone`), it does not count, and the repository is never asked.
@pytest.mark.parametrize("ref", [
    ".claude/plans/{date}-….md",  # application-pipeline: the session handoff file name
    ".claude/plans/{date}-session-handoff-{id}.md",
    "tests/__pycache__/*",
    "src/shared/schemas/<name>.ts",  # recommendarr
    "src/hooks/src/<category>/<name>.ts",  # orchestkit
    "tests/**/*.test.ts",
    "src/app?.py",
    "src/app/[id]/page.tsx",
    "src/…/handler.py",
    "src/.../handler.py",
    "scripts/FILENAME.py",  # application-pipeline: "py_compile.compile(\"scripts/FILENAME.py\")"
    "tests/test_FILE.py",
    "materials/resumes/batch-NN/",  # application-pipeline
    "src/foo/bar.py",  # placeholders
    "tests/test_xxx.py",
    "path/to/module.py",
    "src/example.ts",
])
def test_globs_templates_and_placeholders_are_unverifiable_even_where_history_had_them(ref):
    repository = once(ref)
    result = verdict(f"Written to `{ref}`.", repository)
    assert_evergreen(result)
    assert ref in result.unverifiable_refs
    assert repository.asked == []


@pytest.mark.parametrize("name", ["maintain_foo", "FooService", "do_xxx", "load_example"])
def test_a_placeholder_name_is_unverifiable_even_where_history_defined_it(name):
    repository = once(name)
    result = verdict(f"Each job calls `{name}()` at the end.", repository)
    assert_evergreen(result)
    assert result.unverifiable_refs == [name]
    assert repository.asked == []


@pytest.mark.parametrize("body", [
    "Bump with ./scripts/bump-version.sh first.",  # orchestkit ork-ci-cd-engineer
    "The page fixture is imported from `./fixtures.ts`.",  # recommendarr feedback_e2e_patterns
    "Run `./src/app/main.py` from the checkout.",
])
def test_paths_relative_to_an_unknown_working_folder_are_unverifiable(body):
    assert_evergreen(verdict(body, once("scripts/bump-version.sh", "fixtures.ts", "src/app/main.py")))


@pytest.mark.parametrize("body", [
    "We will add `src/app/cache.py` for the session cache.",
    "TODO: create src/app/cache.py with the LRU.",
    "Next we need to write the module `src/app/cache.py`.",
    "We'll add a `flush_queue()` to the worker.",
    "`src/app/cache.py` (to be created) will hold the cache.",
    "`src/app/cache.py` (planned) will hold the cache.",
    "src/app/cache.py will be added by the migration.",
    "The cache module `src/app/cache.py` is not yet written.",
])
def test_a_reference_the_memory_only_plans_does_not_count(body):
    refs = extract_references(body)
    assert refs.files == () and refs.symbols == ()
    assert_evergreen(verdict(body, once("src/app/cache.py", "flush_queue")))


@pytest.mark.parametrize("body", [
    "The cache was created in `src/app/cache.py`.",
    "`src/app/cache.py` was added in #12.",
    "Remember the cache lives in `src/app/cache.py`.",
])
def test_a_reference_said_to_exist_is_still_counted(body):
    assert extract_references(body).files == ("src/app/cache.py",)
    assert verdict(body, once("src/app/cache.py")).missing_refs == ["src/app/cache.py"]


def test_planning_one_reference_leaves_the_others_counted():
    result = verdict("We will add `src/app/cache.py`; the port of src/old/module.py is done.", once("src/app/cache.py"))
    assert result.classification == FULLY_STALE
    assert result.missing_refs == ["src/old/module.py"]


def test_the_repository_is_asked_once_about_every_memorys_references():
    repository = FakeRepository()
    notes = [Note("Port src/old/module.py and `old_handler()`.", "a.md", NOW - timedelta(days=90)),
             Note("Requests go through src/app.py into `handle_request()`; see `~/notes.md`.", "b.md"),
             Note("Plans go to `.claude/plans/{date}.md`; helpers call `maintain_foo()`.", "c.md"),
             Note("The user likes short answers.", "d.md")]
    verdicts = assess_staleness(notes, repository)
    assert [verdicts[n.path].classification for n in notes] == [FULLY_STALE, FRESH, EVERGREEN, EVERGREEN]
    assert repository.asked == [("files", ("src/app.py", "src/old/module.py")),
                                ("symbols", ("handle_request", "old_handler"))]
    assert repository.written == [NOW - timedelta(days=90), NOW]  # when the memories citing a name were written


@pytest.mark.parametrize("body, days", [
    ("Findings of the v7.0.0 hook review (PR #835, 2026-03-02): `_splitCompound()` is dead code.", [(2026, 3, 2)]),
    ("Design (2026-06-18), revised 2026-07-01; ships 2026-12-24.", [(2026, 6, 18), (2026, 7, 1)]),  # not ahead
    ("Not a day: 2026-02-30, 12026-03-02, 2026-03-021, v2026-03-02-rc.", []),
])
def test_the_repository_also_looks_where_the_days_a_memory_names_were(body, days):
    written = NOW - timedelta(days=30)
    moments = moments_of(Note(body, mtime=written), body)
    assert moments == {written, *(datetime(*day, 12, tzinfo=timezone.utc) for day in days)}


def test_references_read_from_the_cache_are_judged_as_extracted_ones():
    refs = References(("src/legacy.py",), ("AskUserQuestion", "handle_request"))
    result = classify(refs, FakeRepository().evidence(refs.files), FakeRepository().evidence(refs.symbols))
    assert result.classification == PARTIALLY_STALE
    assert result.missing_refs == ["src/legacy.py"]
    assert result.unverifiable_refs == ["AskUserQuestion"]


# ---------------------------------------------------------------- dream, against a real git history


def test_dream_reports_a_symbol_missing_even_though_the_memory_itself_names_it(root, repo):
    relative = add_stale_project(root, body="Retries go through `gone_function()`.")
    report = run_dream(root)
    actions = archive_actions(report)
    assert [a["path"] for a in actions] == [relative]
    assert "gone_function" in actions[0]["reason"]


def test_dream_does_not_scan_a_store_kept_in_a_visible_folder_of_the_repo(tmp_path):
    repo = make_repo(tmp_path / "repo")
    store = repo / "memory-notes"
    ensure_store(store)
    relative = add_stale_project(store, body="Retries go through `gone_function()`.")
    report = run_dream(store)
    assert [a["path"] for a in archive_actions(report)] == [relative]


# ---------------------------------------------------------------- find_repo


def test_config_repo_beats_the_git_work_tree_holding_the_store(tmp_path):
    holder = make_repo(tmp_path / "holder")
    store = holder / ".auto-dream"
    ensure_store(store)
    other = make_repo(tmp_path / "other")
    assert find_repo(store, None) == holder.resolve()
    assert find_repo(store, "../other") == other.resolve()  # relative to the store's parent folder


def test_config_repo_is_used_by_dream(tmp_path, cli):
    holder = make_repo(tmp_path / "holder")  # its history proves the memory's file and function gone
    store = holder / ".auto-dream"
    ensure_store(store)
    git_history(tmp_path / "other", {"src/old/module.py": "def old_handler():\n    pass\n"})
    (store / "config.toml").write_text('repo = "../other"\n')
    relative = add_stale_project(store)
    report = run_dream(store)
    assert archive_actions(report) == []
    assert (store / relative).is_file()
    assert relative not in flagged(report)
    assert json.loads(cli("--root", store, "check", "--json").out)["memories"][0]["staleness"] == FRESH


def test_a_configured_repo_that_is_no_git_work_tree_proves_nothing_gone(tmp_path):
    holder = make_repo(tmp_path / "holder")
    store = holder / ".auto-dream"
    ensure_store(store)
    (tmp_path / "plain" / "src").mkdir(parents=True)
    (store / "config.toml").write_text('repo = "../plain"\n')
    relative = add_stale_project(store)
    report = run_dream(store)
    assert archive_actions(report) == [] and report["flagged"] == []
    assert report["stats"]["evergreen"] == 1
    assert (store / relative).is_file()


def test_no_repo_and_no_config_finds_none(tmp_path):
    store = tmp_path / "plain" / ".auto-dream"
    ensure_store(store)
    assert find_repo(store, None) is None


def test_a_configured_repo_that_does_not_exist_is_none(tmp_path):
    store = tmp_path / "plain" / ".auto-dream"
    ensure_store(store)
    assert find_repo(store, "../missing") is None


def test_without_a_repo_dream_archives_nothing_for_staleness(tmp_path):
    store = tmp_path / "plain" / ".auto-dream"
    ensure_store(store)
    relative = add_stale_project(store)
    report = run_dream(store)
    assert archive_actions(report) == []
    assert (store / relative).is_file()
    assert report["stats"]["evergreen"] == 1


# ---------------------------------------------------------------- OrchestKit's five false-staleness cases


def test_case1_feedback_written_today_with_every_ref_missing_is_kept(root, repo):
    relative = add_memory(root, "20261001_lint_rule.md", "Keep the lint rule", "feedback", 0,
                          "The rule lives in src/lint/rules.ts and `checkImports()`.")
    report = run_dream(root)
    assert_kept_and_flagged(root, report, relative)
    assert set(flagged(report)[relative]) == {"src/lint/rules.ts", "checkImports"}


def test_case2_resolved_do_not_resuggest_reference_is_kept_after_its_paths_moved(root, repo):
    relative = add_memory(root, "20260801_cmux_scroll.md", "cmux scroll blank research", "reference", 60,
                          "RESOLVED, do NOT re-suggest tui:fullscreen on cmux.\n"
                          "Research: src/cmux/scroll.ts and `src/cmux/render.ts`.")
    report = run_dream(root)
    assert_kept_and_flagged(root, report, relative)
    assert set(flagged(report)[relative]) == {"src/cmux/scroll.ts", "src/cmux/render.ts"}


def test_case3_user_memory_citing_a_home_config_is_evergreen(root, repo):
    relative = add_memory(root, "20260801_ghostty.md", "Ghostty setup", "user", 60,
                          "The user keeps the terminal config in `~/.config/ghostty/config`.")
    report = run_dream(root)
    assert (root / relative).is_file()
    assert archive_actions(report) == []
    assert report["flagged"] == []
    assert report["stats"]["evergreen"] == 1


def test_case4_feedback_citing_a_line_of_a_missing_file_is_kept(root, repo):
    relative = add_memory(root, "20260801_x_crash.md", "Guard the render loop", "feedback", 60,
                          "Always guard the render loop, see src/x.ts:120.")
    report = run_dream(root)
    assert_kept_and_flagged(root, report, relative)
    assert flagged(report)[relative] == ["src/x.ts"]


def test_case5_old_project_memory_with_everything_gone_is_archived(root, repo):
    relative = add_stale_project(root)
    context = open_context(root)
    rebuild_index(context)
    assert "Old module port" in (root / "MEMORY.md").read_text(encoding="utf-8")
    report = run_dream(root)
    assert archive_actions(report) == [{"kind": "archive", "path": relative, "target": None,
                                        "reason": archive_actions(report)[0]["reason"], "proposed": False,
                                        "archive": "archive/project/20260822_old_module_port.md"}]
    assert "src/old/module.py" in archive_actions(report)[0]["reason"]
    assert not (root / relative).exists()
    archived = root / "archive" / "project" / "20260822_old_module_port.md"
    metadata, body = split_frontmatter(archived.read_text(encoding="utf-8"))
    assert metadata["archived_reason"].startswith("fully stale")
    assert metadata["archived_by_run"] == report["run_id"]
    assert body == STALE_BODY  # archived, not deleted: nothing lost
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Old module port" not in index and "old_module_port" not in index
    assert report["stats"]["archived_stale"] == 1


def test_of_the_five_cases_in_one_store_only_the_project_memory_is_archived(root, repo):
    kept = [
        add_memory(root, "20261001_lint_rule.md", "Keep the lint rule", "feedback", 0,
                   "The rule lives in src/lint/rules.ts and `checkImports()`."),
        add_memory(root, "20260801_cmux_scroll.md", "cmux scroll blank research", "reference", 60,
                   "RESOLVED, do NOT re-suggest tui:fullscreen on cmux. Research: src/cmux/scroll.ts."),
        add_memory(root, "20260801_ghostty.md", "Ghostty setup", "user", 60,
                   "The user keeps the terminal config in `~/.config/ghostty/config`."),
        add_memory(root, "20260801_x_crash.md", "Guard the render loop", "feedback", 60,
                   "Always guard the render loop, see src/x.ts:120."),
    ]
    stale = add_stale_project(root)
    report = run_dream(root)
    assert [a["path"] for a in archive_actions(report)] == [stale]
    assert all((root / k).is_file() for k in kept)
    assert not (root / stale).exists()


# ---------------------------------------------------------------- prune guards


# The guards plan over a Snapshot built in memory, with FakeRepository for git (what make_repo's
# history holds): no store on disk. Those that read the consult log have gather's reading of a log
# file as their Snapshot's consulted terms: the log's days are what they test.


def planned(memories: dict[str, str], options: DreamOptions = DreamOptions(), **fields) -> dict:
    """The report of a dream over `memories` (by path: a memory file's text), decided in memory;
    `fields` replaces others of the Snapshot's (consulted_terms=…)."""
    snapshot = snapshot_of(memories, now=NOW, options=options, repository=FakeRepository(), **fields)
    return build_report(decide_dream(snapshot, DeterministicDistiller())).as_json()


STALE_PATH = "memories/project/20260822_old_module_port.md"


def stale_project(age_days: float = 40, body: str = STALE_BODY, extra: str = "") -> dict[str, str]:
    return {STALE_PATH: memory_text("Old module port", "project", age_days, body, extra)}


def assert_planned_kept_and_flagged(report: dict) -> None:
    assert archive_actions(report) == [] and STALE_PATH in flagged(report)


def test_the_stale_project_memory_is_archived_when_planned_in_memory_as_on_disk():
    # the guards below keep it; without one, the same memory is archived, as test_case5 shows on disk
    assert [a["path"] for a in archive_actions(planned(stale_project()))] == [STALE_PATH]


def test_a_pinned_stale_project_memory_is_kept():
    assert_planned_kept_and_flagged(planned(stale_project(extra="pinned: true\n")))


def test_a_recently_modified_stale_project_memory_is_kept():
    assert_planned_kept_and_flagged(planned(stale_project(age_days=10)))


@pytest.mark.parametrize("directive", ["Do not bring back the old module.", "Never call it from the API.",
                                       "Avoid reviving it.", "不要再恢复旧模块。"])
def test_a_stale_project_memory_with_a_directive_is_kept(directive):
    assert_planned_kept_and_flagged(planned(stale_project(body=f"{STALE_BODY}\n{directive}")))


def write_consult(root: Path, *records: dict) -> None:
    (root / ".state").mkdir(exist_ok=True)
    (root / ".state" / "consult.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def consulted_terms(folder: Path, days_ago: float, query: str) -> frozenset[str]:
    """What gather reads from a consult log whose one lookup was of `query`, `days_ago` days ago:
    the log's words within guard_days (only the log is on disk, in `folder`)."""
    write_consult(folder, {"ts": (NOW - timedelta(days=days_ago)).isoformat(), "query": query})
    return frozenset(bookkeeping.read_consulted_terms(StorePaths(folder), NOW, Config().guard_days))


ORDERS = {"memories/project/20260822_order_migration.md": memory_text(
    "订单模块迁移计划", "project", 40, "订单模块在 src/old/orders.py，入口是 `old_handler()`。")}


@pytest.mark.parametrize("memories, days_ago, query, kept", [
    pytest.param(stale_project(), 3, "old module port status", True, id="consulted_recently_is_kept"),
    pytest.param(ORDERS, 2, "订单迁移", True, id="chinese_memory_consulted_by_a_chinese_query_is_kept"),
    pytest.param(ORDERS, 2, "用户头像上传", False, id="chinese_memory_consulted_for_something_else_is_archived"),
    pytest.param(stale_project(), 20, "old module port status", False,
                 id="consult_older_than_guard_days_does_not_keep_it"),
])
def test_a_stale_project_memory_looked_up_within_guard_days_is_kept(tmp_path, memories, days_ago, query, kept):
    [path] = memories
    report = planned(memories, consulted_terms=consulted_terms(tmp_path, days_ago, query))
    if kept:
        assert archive_actions(report) == [] and path in flagged(report)
    else:
        assert [a["path"] for a in archive_actions(report)] == [path]


# ---------------------------------------------------------------- --propose


def test_propose_writes_no_archive_on_disk(root, repo):
    relative = add_stale_project(root)
    report = run_dream(root, DreamOptions(propose=True))
    assert [a["path"] for a in archive_actions(report)] == [relative]
    assert (root / relative).is_file()
    assert not list((root / "archive").rglob("*.md"))


def test_propose_lists_the_archive_and_archives_nothing():
    report = planned(stale_project(), DreamOptions(propose=True))
    actions = archive_actions(report)
    assert [(a["path"], a["proposed"], a["archive"]) for a in actions] == [(STALE_PATH, True, None)]
    assert report["stats"]["archived_stale"] == 0
    assert report["stats"]["proposed"] == 1


# ---------------------------------------------------------------- what a memory says of its references


@pytest.mark.parametrize("body", [
    "No `sync_guard()` invariant protects the writes.",
    "`src/app/cache.py` is STILL MISSING.",
    "`flush_queue()` is **still missing** from the worker.",
    "There is no `flush_queue()` in the worker yet.",
    "`src/app/cache.py` does not exist.",
    "The hooks.json matcher is missing `flush_queue()`.",
    "The matcher string has no Task (missing `flush_queue()`).",
    "`old_handler()` was removed in #960.",
    "src/old/module.py was deleted with the port.",
    "`src/old/module.py` has been deleted.",
    "src/old/module.py moved to the package.",
])
def test_a_reference_the_memory_says_is_absent_does_not_count_as_missing(body):
    assert_evergreen(verdict(body, once("sync_guard", "flush_queue", "src/app/cache.py")))


@pytest.mark.parametrize("body", [
    "`src/old/module.py` → `src/app.py`",  # application-pipeline: the record of a reorganization
    "src/old/module.py -> src/app.py",
    "src/old/module.py was moved to src/app.py.",
    "`old_handler()` was renamed to `handle_request()`.",
])
def test_the_old_place_of_a_move_the_memory_records_does_not_count_as_missing(body):
    result = verdict(body)
    assert result.classification == FRESH
    assert result.missing_refs == []


def test_of_a_move_only_the_old_place_is_left_out():
    refs = extract_references("- `targets/` → `materials/targets/`, `launchd/` → `.config/launchd/`")
    assert refs.files == ("materials/targets/", ".config/launchd/")


def test_saying_one_reference_is_absent_leaves_the_others_counted():
    result = verdict("`src/app/cache.py` does not exist; the port of src/old/module.py is done.",
                     once("src/app/cache.py"))
    assert result.classification == FULLY_STALE
    assert result.missing_refs == ["src/old/module.py"]


def test_a_function_that_is_missing_something_is_not_said_to_be_absent():
    result = verdict("`old_handler()` is missing a null check.")
    assert result.classification == FULLY_STALE
    assert result.missing_refs == ["old_handler"]


@pytest.mark.parametrize("body", [
    "Consulting is a first-class citizen with its own lifecycle.",  # application-pipeline
    "Extract the style to a Linaria `css` class instead.",  # recommendarr feedback_lint_patterns
    "Pure client fn over card.impact and tags.",  # orchestkit ork-genui-architect
])
def test_prose_after_a_definition_keyword_is_not_a_definition(body):
    assert extract_references(body).symbols == ()
    assert_evergreen(verdict(body, once("citizen", "css", "over")))


def test_a_line_list_after_a_path_is_not_part_of_the_path():
    # orchestkit ork-code-quality-reviewer: `src/stop/handoff-writer.ts:129,169`
    assert extract_references("see `src/stop/handoff-writer.ts:129,169`").files == ("src/stop/handoff-writer.ts",)


@pytest.mark.parametrize("body", ["Retries go through def old_retry_loop in the worker.",
                                  "Retries go through old_retry_loop() in the worker.",
                                  "Retries go through `old_retry_loop()`.",
                                  "The worker's `export default async function handler(...)` retries."])
def test_a_deleted_function_shown_defined_or_called_still_counts(body):
    result = verdict(body, once("old_retry_loop", "handler"))
    assert result.classification == FULLY_STALE
    assert result.missing_refs in (["old_retry_loop"], ["handler"])


# ---------------------------------------------------------------- false stales a reader found, in a real repository


@pytest.fixture
def project_with_history(tmp_path) -> Path:
    """A repository whose history could fool a guess: it deleted a file and a function; a deleted file
    called another library's `resource_changed()`; a test once defined the placeholder `maintain_foo`;
    `.claude/specs/` is gitignored and its spec never committed; `src/app/cache.py` was never written."""
    return git_history(
        tmp_path / "project",
        {".gitignore": ".claude/specs/\n", "src/app.py": "def handle_request(request):\n    return request\n",
         "src/old/module.py": "def old_handler():\n    pass\n",
         "src/watcher.py": "import watchfiles\n\nwatchfiles.resource_changed(callback)\n",
         "tests/test_jobs.py": "def maintain_foo():\n    pass\n"},
        {"src/old/module.py": None, "src/watcher.py": None, "tests/test_jobs.py": None})


ISSUE_26_FALSE_STALES = {
    "20260801_specs.md": "Specs are drafted in `.claude/specs/auth-flow.md` before any code.",
    "20260801_watcher.md": "The watcher fires `resource_changed()` on every save.",
    "20260801_jobs.md": "Each job ends with `maintain_foo()`, a stand-in for its own cleanup.",
    "20260801_handoff.md": "Session handoffs go to `.claude/plans/{date}-handoff.md`.",
    "20260801_cache.md": "We will add `src/app/cache.py` for the session cache.",
}


def test_dream_archives_none_of_the_issues_false_stales_and_still_archives_what_git_proves_gone(
        project_with_history):
    root = ensure_store(project_with_history / ".auto-dream").root
    kept = [add_memory(root, name, name, "project", 40, body) for name, body in ISSUE_26_FALSE_STALES.items()]
    stale = add_stale_project(root)
    report = run_dream(root)
    assert [a["path"] for a in archive_actions(report)] == [stale]
    assert "src/old/module.py" in archive_actions(report)[0]["reason"]
    assert "old_handler" in archive_actions(report)[0]["reason"]
    assert all((root / relative).is_file() for relative in kept)
    assert report["flagged"] == []
    assert report["stats"]["evergreen"] == len(kept)


def test_check_shows_only_what_git_proves_gone(project_with_history, cli):
    root = ensure_store(project_with_history / ".auto-dream").root
    for name, body in ISSUE_26_FALSE_STALES.items():
        add_memory(root, name, name, "project", 40, body)
    add_memory(root, "20260801_port.md", "Port", "project", 5,
               "The port moved src/old/module.py into src/app.py; `old_handler()` became `handle_request()`.")
    checked = json.loads(cli("--root", root, "check", "--json").out)
    verdicts = {m["path"].rsplit("/", 1)[-1]: (m["staleness"], m["missing_refs"]) for m in checked["memories"]}
    assert verdicts == {**{name: ("EVERGREEN", []) for name in ISSUE_26_FALSE_STALES},
                        "20260801_port.md": ("PARTIALLY_STALE", ["src/old/module.py", "old_handler"])}


def test_dream_archives_none_of_the_false_stale_shapes(root, repo):
    relative = add_stale_project(root, body=(
        "The wizard asks with `AskUserQuestion`; plans go to `.claude/plans/{date}-handoff.md`.\n"
        "Tests call `vi.resetModules()`; fixtures come from `./fixtures.ts`.\n"
        "There is no `sync_guard()` invariant yet."))
    report = run_dream(root)
    assert archive_actions(report) == []
    assert (root / relative).is_file()
    assert report["stats"]["evergreen"] == 1


def test_a_deleted_function_still_counts_when_the_memory_is_read_from_the_parse_cache(root, repo):
    # First dream: the memory is 10 days old, the 14-day guard keeps it; the cache stores its
    # references. A month later the cached references alone decide.
    relative = add_stale_project(root, age_days=10, body="The entry point is `gone_function()`.")
    assert archive_actions(run_dream(root)) == []
    later = dream(open_context(root), NOW + timedelta(days=30), DreamOptions(),
                  DeterministicDistiller()).report.as_json()
    assert [a["path"] for a in archive_actions(later)] == [relative]


def test_a_name_the_repository_never_defined_stays_unverifiable_when_read_from_the_parse_cache(root, repo):
    relative = add_stale_project(root, age_days=10, body="The wizard asks with `AskUserQuestion` (a tool's name).")
    run_dream(root)
    later = dream(open_context(root), NOW + timedelta(days=30), DreamOptions(),
                  DeterministicDistiller()).report.as_json()
    assert archive_actions(later) == [] and (root / relative).is_file()


# ---------------------------------------------------------------- long runs are read once

# The URL and line-suffix patterns as they were: right, but read a long run of letters (or of
# `1:`) again from each of its characters, so a 900,000-letter memory took an hour to check.
QUADRATIC_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
QUADRATIC_LINE_SUFFIX = re.compile(r":\d+(?:[:,-]\d+)*$")


@settings(max_examples=examples(3000))
@given(st.text(alphabet="aZ1\u0663+.-:/ \n\u017f\u212a,x`", max_size=40))
def test_urls_are_found_where_they_always_were(text):
    assert extract_references(text) == extract_references(QUADRATIC_URL.sub(" ", text))


@settings(max_examples=examples(3000))
@given(st.text(alphabet="a1\u0663:,-./ ", max_size=30))
def test_a_line_suffix_is_cut_where_it_always_was(token):
    assert without_line_suffix(token) == QUADRATIC_LINE_SUFFIX.sub("", token)


def test_a_url_after_a_run_of_letters_and_a_line_list_after_a_long_path_are_still_found():
    text = ("see " + "x" * 5000 + "https://example.com/src/gone.py and `src/app.py:"
            + ",".join(["1"] * 3000) + "`")
    assert extract_references(text).files == ("src/app.py",)
