"""The library API (`import auto_dream`): a store opened by its root, one method per command."""

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

import auto_dream
from auto_dream.commands.dream import DreamRequest, choose_distiller, resolve_options
from auto_dream.distill.claude import AnthropicDistiller
from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.store.config import Config
from auto_dream.store.context import open_context
from auto_dream.store.daylog import read_all_entries
from fake_anthropic import FakeAnthropic

NOW = datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)
FACTS = [("user", "The user writes mostly Python and Go"),
         ("feedback", "Don't mock the database in integration tests"),
         (None, "The fund data API runs at localhost:5000")]


@pytest.fixture
def store(tmp_path) -> auto_dream.Store:
    opened = auto_dream.open_store(tmp_path / "project" / ".auto-dream", create=True)
    (opened.root / "config.toml").write_text('timezone = "UTC"\n')
    for number, (kind, text) in enumerate(FACTS):
        opened.append(text, type=kind, now=NOW - timedelta(hours=3, minutes=number))
    return opened


# ---------------------------------------------------------------- the package


@pytest.mark.slow  # starts a child Python
def test_import_loads_nothing_heavy_and_every_exported_name_resolves():
    code = """
import sys
import auto_dream
heavy = ("typer", "rich", "anthropic", "pendulum", "auto_dream.dream")
loaded = sorted(m for m in sys.modules if m.startswith(heavy) or m.startswith("auto_dream."))
assert loaded == [], loaded
missing = [name for name in auto_dream.__all__ if getattr(auto_dream, name, None) is None]
assert missing == [], missing
assert set(auto_dream.__all__) <= set(dir(auto_dream))
print(len(auto_dream.__all__))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 10


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        auto_dream.no_such_thing  # noqa: B018
    assert not hasattr(auto_dream, "no_such_thing")


def test_the_exported_errors_are_the_ones_the_library_raises(tmp_path):
    with pytest.raises(auto_dream.StoreError, match="auto-dream init"):
        auto_dream.open_store(tmp_path / "nowhere")
    assert issubclass(auto_dream.InputError, auto_dream.AutoDreamError)


# ---------------------------------------------------------------- open_store and append


def test_create_makes_a_store_as_init_does_and_keeps_one_that_is_there(tmp_path):
    root = tmp_path / ".auto-dream"
    store = auto_dream.open_store(root, create=True)
    assert store.root == root and store.paths.index == root / "MEMORY.md"
    assert (root / "config.toml").read_text().startswith("#") and (root / "MEMORY.md").is_file()
    (root / "config.toml").write_text('budget = 3\n')
    assert auto_dream.open_store(root, create=True) == store
    assert (root / "config.toml").read_text() == 'budget = 3\n'
    assert auto_dream.open_store(str(root)) == store


def test_append_returns_the_entry_written_at_the_clock_given(store):
    entry = store.append("Standup is at 9:30", type="project", now=NOW)
    assert isinstance(entry, auto_dream.Entry)
    assert (entry.at, entry.type, entry.text) == (datetime(2026, 11, 21, 9, 30), "project", "Standup is at 9:30")
    logged = read_all_entries(store.paths)[0]
    assert logged[-1] == entry and len(logged) == len(FACTS) + 1


def test_append_at_takes_a_datetime_or_the_text_the_command_line_takes(store):
    at = datetime(2026, 4, 1, 15, 20, tzinfo=timezone(timedelta(hours=2)))
    assert store.append("Back-dated by a datetime", at=at, now=NOW).at == datetime(2026, 4, 1, 13, 20)
    assert store.append("Back-dated by text", at="2026-04-01 15:20", now=NOW).at == datetime(2026, 4, 1, 15, 20)


def test_bad_input_is_an_input_error_and_writes_nothing(store):
    before = read_all_entries(store.paths)[0]
    with pytest.raises(auto_dream.InputError, match="idea"):
        store.append("A fact", type="idea", now=NOW)
    with pytest.raises(auto_dream.InputError, match="empty"):
        store.append("   ", now=NOW)
    with pytest.raises(auto_dream.InputError, match="idea"):
        store.list(type="idea")
    assert read_all_entries(store.paths)[0] == before


# ---------------------------------------------------------------- dream, list, check, undo, build_index


def test_dream_list_check_undo_through_the_library(store):
    outcome = store.dream(now=NOW)
    assert isinstance(outcome, auto_dream.DreamOutcome)
    assert outcome.report.run_id.endswith("-20261121T093000")  # the clock given, not the machine's
    assert outcome.report.stats.created == 3 and outcome.markdown.startswith("## Dream")
    listed = store.list(now=NOW)
    assert isinstance(listed, auto_dream.ListResult)
    assert [(m.type, m.name, m.age_days) for m in listed.memories] == [
        ("user", FACTS[0][1], 0), ("feedback", FACTS[1][1], 0), ("reference", FACTS[2][1], 0)]
    checked = store.check(now=NOW + timedelta(days=10))
    assert isinstance(checked, auto_dream.CheckResult)
    assert (checked.undistilled_entries, checked.index_in_sync) == (0, True)
    assert {m.freshness for m in checked.memories} == {"yellow"}
    assert store.build_index().changed is False

    undone = store.undo(now=NOW + timedelta(minutes=1))
    assert isinstance(undone, auto_dream.Restored)
    assert undone.run_id == outcome.report.run_id and store.list(now=NOW).memories == []


def test_dry_run_and_if_due_plan_without_writing(store):
    before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))
    planned = store.dream(dry_run=True, now=NOW)
    assert planned.report.dry_run is True and planned.report.stats.created == 3
    not_due = store.dream(if_due=True, now=NOW)  # three entries wait; five are needed
    assert not_due.report is None and "3 entries waiting" in not_due.not_due
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == before


def test_a_naive_clock_is_taken_as_local_time(store):
    outcome = store.dream(dry_run=True, now=datetime(2026, 11, 21, 9, 30))
    assert outcome.report.run_id.endswith("-20261121T093000")


def test_the_library_reads_no_environment_variable(store, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        outcome = store.dream(dry_run=True, now=NOW)
        assert outcome.report.stats.llm_calls == 0 and fake.requests == []


def test_claude_is_asked_with_the_key_and_url_given(store):
    with FakeAnthropic() as fake:
        outcome = store.dream(dry_run=True, api_key="sk-ant-given", base_url=fake.url, now=NOW)
    assert outcome.report.stats.llm_calls == 1
    headers = {name.lower(): value for name, value in fake.headers[0].items()}
    assert "sk-ant-given" in headers.get("x-api-key", "") + headers.get("authorization", "")


# ---------------------------------------------------------------- flags beat config, once


@pytest.mark.parametrize("config, propose, budget, expected", [
    (Config(), False, None, (False, 25)),
    (Config(mode="propose", budget=7), False, None, (True, 7)),
    (Config(budget=7), True, 0, (True, 0)),
    (Config(budget=7), False, 30, (False, 30)),
])
def test_flags_beat_config_into_resolved_options(config, propose, budget, expected):
    options = resolve_options(config, DreamRequest(propose=propose, budget=budget))
    assert (options.propose, options.budget) == expected


def test_a_negative_budget_is_bad_input():
    with pytest.raises(auto_dream.InputError, match="budget"):
        resolve_options(Config(), DreamRequest(budget=-1))


@pytest.mark.parametrize("llm_config, llm_flag, key, claude", [
    ("auto", None, None, False), ("auto", None, "  ", False), ("auto", None, "sk-ant-k", True),
    ("off", None, "sk-ant-k", False), ("off", True, "sk-ant-k", True), ("on", False, "sk-ant-k", False),
])
def test_the_distiller_is_chosen_by_flag_then_config_then_key(store, llm_config, llm_flag, key, claude):
    (store.root / "config.toml").write_text(f'llm = "{llm_config}"\n')
    chosen = choose_distiller(open_context(store.root), llm=llm_flag, api_key=key, base_url="http://127.0.0.1:9")
    assert isinstance(chosen, AnthropicDistiller if claude else DeterministicDistiller)
    if claude:
        assert (chosen.settings.api_key, chosen.settings.base_url) == ("sk-ant-k", "http://127.0.0.1:9")


@pytest.mark.parametrize("llm_config, llm_flag", [("on", None), ("off", True)])
def test_claude_wanted_without_a_key_is_bad_input(store, llm_config, llm_flag):
    (store.root / "config.toml").write_text(f'llm = "{llm_config}"\n')
    with pytest.raises(auto_dream.InputError, match="ANTHROPIC_API_KEY"):
        choose_distiller(open_context(store.root), llm=llm_flag, api_key="", base_url=None)


def test_a_store_reads_again_only_the_memory_files_that_changed_since_it_last_read_them(tmp_path, monkeypatch):
    """A long-lived Store (the MCP server's) lists and checks without reading every file again:
    an agent paging through 2,000 memories read all 2,000 at every page."""
    import auto_dream.store.scan as scan

    opened = auto_dream.open_store(tmp_path / ".auto-dream", create=True)
    folder = opened.root / "memories" / "project"
    for number in range(5):
        (folder / f"2026110{number}_fact_{number}.md").write_text(
            f"---\nname: Fact {number}\ndescription: Fact number {number}\ntype: project\n---\nBody {number}.\n")
    reads: list[str] = []
    real_read = scan.read_memory
    monkeypatch.setattr(scan, "read_memory", lambda path, *rest: reads.append(path.name) or real_read(path, *rest))
    assert len(opened.list(now=NOW).memories) == 5 and len(reads) == 5
    opened.check(now=NOW)
    opened.list(now=NOW)
    assert len(reads) == 5  # nothing changed: nothing read again

    (folder / "20261100_fact_0.md").write_text(
        "---\nname: Fact zero, renamed\ndescription: Fact number 0\ntype: project\n---\nBody 0, longer now.\n")
    replacement = folder / "new.tmp"  # saved as editors save: a new file renamed over the old
    replacement.write_text("---\nname: Fact one\ndescription: Fact number 1\ntype: project\n---\nBody 1.\n")
    replacement.replace(folder / "20261101_fact_1.md")
    (folder / "20261102_fact_2.md").unlink()
    listed = {m.name for m in opened.list(now=NOW).memories}
    assert listed == {"Fact zero, renamed", "Fact one", "Fact 3", "Fact 4"}
    assert sorted(reads[5:]) == ["20261100_fact_0.md", "20261101_fact_1.md"]
