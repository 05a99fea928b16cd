"""Log entries no dream has distilled yet: recall, show and context find them at once, marked
pending, and stop once a dream has distilled them (issue: what an agent learns in the morning was
invisible in the afternoon)."""

import json
import re
from pathlib import Path

import pytest

import auto_dream
from auto_dream.commands.session_context import HOOK_OUTPUT_CHARS, _chars, session_context
from auto_dream.store import undistilled
from test_mcp import call, ok

DAY_LOG = "logs/2026/04/2026-04-01.md"


@pytest.fixture(autouse=True)
def xdg_in_tmp(tmp_path, monkeypatch):
    """HOME is tmp_path/home (conftest); the XDG folders are in tmp_path too."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / "xdg" / name.lower()
        folder.mkdir(parents=True)
        monkeypatch.setenv(name, str(folder))


@pytest.fixture
def store(root) -> Path:
    (root / "config.toml").write_text('timezone = "UTC"\n')
    return root


def append(cli, root: Path, text: str, *options: str, at: str = "2026-04-01 14:30") -> str:
    """Append `text`; the entry's id."""
    result = cli("--root", root, "append", text, "--at", at, *options)
    assert result.code == 0, result
    return re.search(r"appended ([0-9a-f]{12}) to ", result.out).group(1)


def recall(cli, root: Path, *argv: str) -> list[dict]:
    result = cli("--root", root, "recall", *argv, "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def dream(cli, root: Path) -> None:
    result = cli("--root", root, "dream", "--no-llm", "--json")
    assert result.code == 0, result


def test_append_then_recall_finds_the_entry_at_once_marked_pending(store, cli):
    entry_id = append(cli, store, "Deploys go out every Friday afternoon", "--type", "project")
    hits = recall(cli, store, "deploy", "friday")
    assert hits == [{"path": DAY_LOG, "name": entry_id, "type": "project", "description": "",
                     "score": hits[0]["score"], "snippet": "**Deploys** go out every **Friday** afternoon",
                     "pending": True, "id": entry_id, "at": "2026-04-01T14:30:00+00:00"}]
    assert hits[0]["score"] > 0
    text = cli("--root", store, "recall", "friday").out
    assert text.startswith(f"pending entry {entry_id} (logged, not yet dreamed)\n  type: project\n  log: {DAY_LOG}\n")


def test_japanese_and_chinese_entries_are_found_as_memories_are(store, cli):
    japanese = append(cli, store, "デプロイは毎週金曜日")
    chinese = append(cli, store, "我们每周五部署到生产环境", at="2026-04-01 15:00")
    assert [hit["id"] for hit in recall(cli, store, "デプロイ")] == [japanese]
    assert [hit["id"] for hit in recall(cli, store, "部署")] == [chinese]
    assert recall(cli, store, "本日") == []  # bigrams, as for memories: 本日 is not in either


def test_the_library_and_the_mcp_tool_find_what_was_just_remembered(tmp_path):
    root = tmp_path / "mcp" / ".auto-dream"
    ok(call(root, "remember", text="デプロイは毎週金曜日", type="project"))
    found = ok(call(root, "recall", query="デプロイ"))["memories"]
    assert len(found) == 1 and found[0]["pending"] is True and found[0]["path"].startswith("logs/")
    shown = ok(call(root, "show", memory=found[0]["id"]))
    assert shown["body"] == "デプロイは毎週金曜日" and shown["path"] == found[0]["path"]
    opened = auto_dream.open_store(root)
    entry = opened.append("Invoices are archived for ten years", type="reference")
    [hit] = opened.recall("invoices archived")
    assert hit.pending and hit.entry == entry.id and hit.type == "reference"


def test_once_dreamed_an_entry_is_no_longer_pending_and_its_memory_is_found_once(store, cli):
    entry_id = append(cli, store, "デプロイは毎週金曜日", "--type", "project")
    append(cli, store, "Deploys go out every Friday afternoon", "--type", "project", at="2026-04-01 15:00")
    assert {hit["pending"] for hit in recall(cli, store, "デプロイ", "deploy")} == {True}
    dream(cli, store)
    hits = recall(cli, store, "デプロイ", "deploy")
    assert len(hits) == 2 and not any(hit["pending"] for hit in hits)
    assert all(hit["path"].startswith("memories/project/") for hit in hits)
    shown = cli("--root", store, "show", entry_id)
    assert shown.code == 2 and "no memory" in shown.err  # the entry is a memory now
    later = append(cli, store, "Staging deploys happen on Monday", at="2026-04-02 09:00")
    pending = [hit for hit in recall(cli, store, "deploy") if hit["pending"]]
    assert [(hit["id"], hit["path"]) for hit in pending] == [(later, "logs/2026/04/2026-04-02.md")]


def test_type_narrows_pending_entries_too(store, cli):
    append(cli, store, "Deploys go out every Friday", "--type", "project")
    append(cli, store, "The user deploys on Fridays only", at="2026-04-01 15:00")
    assert [hit["type"] for hit in recall(cli, store, "deploy", "--type", "project")] == ["project"]
    assert len(recall(cli, store, "deploy")) == 2


def test_show_prints_a_pending_entry_as_its_log_holds_it(store, cli):
    entry_id = append(cli, store, "Deploys go out every Friday\nReason: the weekend is quiet", "--type", "project")
    result = cli("--root", store, "show", entry_id)
    assert result.code == 0, result
    assert result.out == "- [2026-04-01 14:30:00] (project) Deploys go out every Friday\n" \
                         "  Reason: the weekend is quiet\n"
    as_json = json.loads(cli("--root", store, "show", entry_id, "--json").out)
    assert as_json == {"path": DAY_LOG, "name": entry_id, "type": "project", "description": "",
                       "mtime": "2026-04-01T14:30:00+00:00", "body": "Deploys go out every Friday\n"
                       "Reason: the weekend is quiet", "sources": [], "pending": True, "id": entry_id}


def test_recall_reads_no_log_a_dream_recorded_as_distilled(store, cli, monkeypatch):
    for day in range(1, 29):
        append(cli, store, f"Fact number {day} about topic{day}", at=f"2026-03-{day:02d} 10:00")
    dream(cli, store)
    read: list[str] = []
    real = undistilled.read_log
    monkeypatch.setattr(undistilled, "read_log", lambda path: read.append(path.name) or real(path))
    assert not any(hit["pending"] for hit in recall(cli, store, "topic3"))
    assert read == []  # 28 days of distilled logs: listed and stat'ed, never read
    append(cli, store, "A new fact about topic3", at="2026-04-01 10:00")
    assert [hit["pending"] for hit in recall(cli, store, "topic3")].count(True) == 1
    assert read == ["2026-04-01.md"]
    recall(cli, store, "topic3")
    assert read == ["2026-04-01.md"]  # unchanged since: the index holds its entries


def memory_md(root: Path, lines: int) -> list[str]:
    text = "# MEMORY.md - Long-term Memory\n" + "".join(f"- [Memory {n}](memories/project/m{n}.md) — about thing {n}\n"
                                                      for n in range(lines))
    (root / "MEMORY.md").write_text(text)
    return text.splitlines()


def test_context_lists_the_newest_pending_entries_after_memory_md(store, cli):
    memory_md(store, 5)
    ids = [append(cli, store, f"Pending fact {n}", at=f"2026-04-01 1{n}:00") for n in range(3)]
    found = session_context(store)
    assert found.pending_shown == 3 and found.pending_total == 3
    before, section = found.text.split("\n[auto-dream: 3 log entries not yet dreamed", 1)
    assert "- [Memory 4](memories/project/m4.md)" in before
    assert [line.split()[1] for line in section.splitlines()[1:]] == ids[::-1]  # newest first
    assert "- " + ids[2] + " [2026-04-01 12:00] Pending fact 2" in section
    assert _chars(found.text) <= HOOK_OUTPUT_CHARS
    assert cli("--root", store, "context").out == found.text


def test_context_never_pushes_memory_md_out_and_says_how_many_more(store, cli):
    memory_md(store, 60)
    for n in range(30):
        append(cli, store, f"Pending fact number {n} " + "word " * 30, at=f"2026-04-01 10:{n:02d}")
    without = session_context(store, max_chars=100_000).text.split("\n[auto-dream: 30", 1)[0]
    memory_only = without.count("- [Memory ")
    for cap in (HOOK_OUTPUT_CHARS, 4_500, 4_000, 3_000):
        found = session_context(store, max_chars=cap)
        assert _chars(found.text) <= cap
        # the same MEMORY.md lines as with no pending entries at all
        assert found.lines_shown == session_context(store, max_chars=cap).lines_shown
        assert found.text.count("- [Memory ") == min(memory_only, found.lines_shown - 1)
        if found.pending_shown:
            assert f"- … and {30 - found.pending_shown} more not yet dreamed\n" in found.text
    assert session_context(store).pending_shown == 10  # at most 10 listed


def test_context_of_a_store_with_entries_and_no_memory_md_yet(store, cli):
    assert session_context(store) is None  # nothing at all: nothing to say
    entry_id = append(cli, store, "The user prefers short answers", "--type", "user")
    text = cli("--root", store, "context").out
    assert text.startswith(f"auto-dream memory: the store at {store} has no MEMORY.md yet")
    assert f"- {entry_id} [2026-04-01 14:30] (user) The user prefers short answers\n" in text
    dream(cli, store)
    assert "not yet dreamed" not in cli("--root", store, "context").out
