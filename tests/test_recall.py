"""`recall` and `show`: the memories that best answer a query, through a derived
FTS5 index kept current file by file, in both layouts, under many processes at once."""

import json
import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import auto_dream
import auto_dream.store.recall_index as recall_index
import builders
from auto_dream.commands.recall import recall
from auto_dream.judge.words import SEARCH_SHORTEST, word_sequence, word_spans
from auto_dream.store.context import open_context
from auto_dream.store.recall_index import FILE_NAME, words_of
from builders import write_memory
from conftest import tree_hash, write_memory_file

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def memory_text(name: str, body: str, description: str | None = None, kind: str = "project",
                mtime: datetime = NOW) -> str:
    return builders.memory_text(name, kind, mtime, body, description or name)


def put(root: Path, relative: str, name: str, body: str, description: str | None = None, kind: str = "project",
        mtime: datetime = NOW) -> Path:
    return write_memory(root, relative, name, body, kind, mtime, description or name)


def recall_json(cli, root: Path, *argv: str) -> list[dict]:
    result = cli("--root", root, "recall", *argv, "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def first_path(cli, root: Path, *query: str) -> str:
    hits = recall_json(cli, root, *query)
    assert hits, f"nothing found for {query}"
    return hits[0]["path"]


class ReadCounter:
    """Counts the memory files the recall index reads."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        real = recall_index.read_memory

        def counting(path, *args, **kwargs):
            self.paths.append(Path(path).name)
            return real(path, *args, **kwargs)

        monkeypatch.setattr(recall_index, "read_memory", counting)


@pytest.fixture
def store(root) -> Path:
    """A store in three languages, with near misses for each query."""
    put(root, "memories/project/20261101_deploy.md", "Deploys go out on Friday",
        "The team deploys to production every Friday afternoon.", description="When production deploys happen")
    put(root, "memories/reference/20261101_guide.md", "Operations guide",
        "The operations guide has a chapter on rollbacks; a deploy is mentioned once.", kind="reference")
    put(root, "memories/project/20261102_bushu.md", "每周五部署到生产环境", "团队每周五下午把代码部署到生产环境。")
    put(root, "memories/project/20261102_bumen.md", "部门会议在周一", "每个部门的会议都在周一上午。")
    put(root, "memories/user/20261103_nihon.md", "ユーザーは日本に住んでいる",
        "東京で働いていて、日本語を勉強している。", kind="user")
    put(root, "memories/user/20261103_honjitsu.md", "本日の予定", "本日は会議が三つある。", kind="user")
    return root


# ---------------------------------------------------------------- what a query finds first


def test_an_english_query_finds_the_memory_it_names_first(store, cli):
    assert first_path(cli, store, "when", "do", "we", "deploy?") == "memories/project/20261101_deploy.md"


def test_a_two_character_chinese_word_finds_its_memory_and_not_one_sharing_a_character(store, cli):
    hits = recall_json(cli, store, "部署")
    assert [hit["path"] for hit in hits] == ["memories/project/20261102_bushu.md"]  # 部门 shares 部, not the word
    assert "**部署**" in hits[0]["snippet"]


def test_a_two_character_japanese_word_finds_its_memory_and_not_its_characters_reversed(store, cli):
    hits = recall_json(cli, store, "日本")
    assert [hit["path"] for hit in hits] == ["memories/user/20261103_nihon.md"]  # 本日 is not 日本
    assert first_path(cli, store, "本日") == "memories/user/20261103_honjitsu.md"


def test_a_two_letter_word_finds_its_memory_and_a_two_letter_pronoun_finds_nothing(root, cli):
    put(root, "memories/project/ci.md", "CI runs on every push", "The pipeline builds and tests each commit.")
    put(root, "memories/reference/s3.md", "Backups", "Nightly backups go to S3 in eu-west-1.", kind="reference")
    put(root, "memories/user/prefs.md", "Preferences", "We like short answers; we're in Berlin.", kind="user")
    assert [hit["path"] for hit in recall_json(cli, root, "CI")] == ["memories/project/ci.md"]
    assert [hit["path"] for hit in recall_json(cli, root, "s3")] == ["memories/reference/s3.md"]
    assert recall_json(cli, root, "we") == [] and recall_json(cli, root, "re") == []
    assert "**S3**" in recall_json(cli, root, "S3")[0]["snippet"]
    assert word_sequence("CI on S3 we're") == []  # the judge's own words are as they were


def test_a_short_form_finds_the_word_it_stands_for_and_the_word_finds_the_short_form(root, cli):
    put(root, "memories/user/role.md", "Role", "The user is a backend developer who writes Python.", kind="user")
    put(root, "memories/project/db.md", "Databases", "The prod config lives in the infra repo.")
    assert [hit["path"] for hit in recall_json(cli, root, "dev")] == ["memories/user/role.md"]
    assert [hit["path"] for hit in recall_json(cli, root, "production configuration")] == ["memories/project/db.md"]
    assert [hit["path"] for hit in recall_json(cli, root, "infrastructure repository")] == ["memories/project/db.md"]


def test_a_word_in_a_name_or_description_outranks_the_same_word_in_a_body(root, cli):
    put(root, "memories/reference/a.md", "Kubernetes cluster layout", "Three nodes in two zones.",
        mtime=NOW - timedelta(days=300))
    put(root, "memories/reference/b.md", "Release checklist",
        "Before a release check the kubernetes dashboards and the kubernetes events.")
    put(root, "memories/reference/c.md", "Node pools", "Pools of nodes.",
        description="Which kubernetes node pools exist", mtime=NOW - timedelta(days=200))
    order = [hit["path"] for hit in recall_json(cli, root, "kubernetes")]
    assert order == ["memories/reference/a.md", "memories/reference/c.md", "memories/reference/b.md"]


def test_equal_scores_go_to_the_newer_memory(root, cli):
    put(root, "memories/project/a.md", "Staging port", "Staging listens on 8080", mtime=NOW - timedelta(days=9))
    put(root, "memories/project/b.md", "Staging port", "Staging listens on 8080", mtime=NOW)
    hits = recall_json(cli, root, "staging")
    assert [hit["path"] for hit in hits] == ["memories/project/b.md", "memories/project/a.md"]
    assert hits[0]["score"] == hits[1]["score"] > 0


def test_a_query_matching_nothing_is_an_empty_list_and_exit_0(store, cli):
    assert recall_json(cli, store, "zeppelin") == []
    result = cli("--root", store, "recall", "zeppelin")
    assert (result.code, result.out) == (0, "no memory matches 'zeppelin'\n")


def test_limit_type_and_archived(store, cli):
    put(store, "archive/project/20261001_deploy_old.md", "Deploys went out on Monday", "We used to deploy on Monday.")
    assert len(recall_json(cli, store, "deploy", "--limit", "1")) == 1
    found = {hit["path"] for hit in recall_json(cli, store, "deploy")}
    assert found == {"memories/project/20261101_deploy.md", "memories/reference/20261101_guide.md"}  # no archive
    typed = recall_json(cli, store, "deploy", "--type", "reference")
    assert [hit["path"] for hit in typed] == ["memories/reference/20261101_guide.md"]
    with_archive = {hit["path"] for hit in recall_json(cli, store, "deploy", "--archived")}
    assert with_archive == found | {"archive/project/20261001_deploy_old.md"}
    text = cli("--root", store, "recall", "monday", "--archived")
    assert "type: project (archived)" in text.out


# ---------------------------------------------------------------- the output


def test_text_output_shows_each_hit_as_a_block(store, cli):
    result = cli("--root", store, "recall", "deploy", "friday")
    assert result.code == 0
    first = result.out.split("\n\n")[0].splitlines()
    assert first[0] == "Deploys go out on Friday"
    assert first[1:3] == ["  type: project", "  path: memories/project/20261101_deploy.md"]
    assert first[3].startswith("  score: ")
    assert first[4:] == ["  description: When production deploys happen",
                         "  snippet: The team **deploys** to production every **Friday** afternoon."]


def test_json_output_has_the_documented_keys(store, cli):
    hit = recall_json(cli, store, "rollbacks")[0]
    assert set(hit) == {"path", "name", "type", "description", "score", "snippet", "pending"}
    assert hit["pending"] is False
    assert hit["snippet"] == "The operations guide has a chapter on **rollbacks**; a deploy is mentioned once."


def test_a_snippet_is_cut_around_the_first_matched_word(root, cli):
    body = " ".join(f"filler{i}" for i in range(60)) + " the zebra crossing " + " ".join(f"tail{i}" for i in range(60))
    put(root, "memories/project/long.md", "Long note", body)
    snippet = recall_json(cli, root, "zebra")[0]["snippet"]
    assert snippet.startswith("…filler") and snippet.endswith("…")
    assert "**zebra**" in snippet
    assert len(snippet.replace("**", "").strip("…")) <= 160


def test_word_spans_give_the_judges_words_with_their_place():
    text = "İstanbul: Deploys 部署到生产 on Friday, née Müller."
    spans = list(word_spans(text))
    assert [word for _, _, word in spans] == word_sequence(text)
    assert [text[start:end] for start, end, _ in spans][:4] == ["İstanbul", "Deploys", "部署", "署到"]
    assert spans[0][2] == "stanbul"  # lower-cased whole, İ is an i and a combining dot, as the judge reads it


def test_every_word_comes_out_of_fts5_as_the_judge_made_it():
    """The tokenizer only splits on the spaces: stems, accents, digits, CJK bigrams, Hangul and
    letters newer than Unicode 6.1 are each one term, unchanged."""
    text = "Deploying café naïve ΑΘΗΝΑ 2026 x² 部署到生产环境 日本に住む 한국어 공부 𠀋𠀌 ꟊꟊꟊ"
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'ascii')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    db.execute("INSERT INTO t (body) VALUES (?)", (words_of(text),))
    assert sorted(term for (term,) in db.execute("SELECT term FROM v")) == \
        sorted(set(word_sequence(text, SEARCH_SHORTEST)))


def test_empty_query_and_unknown_type_exit_2_with_one_line(store, cli):
    for argv in (["recall", ""], ["recall", "  ", "\t"], ["recall", "deploy", "--type", "notes"]):
        result = cli("--root", store, *argv)
        assert result.code == 2, result
        assert result.out == "" and len(result.err.strip().splitlines()) == 1
    assert cli("--root", store, "recall", "deploy", "--limit", "0").code == 2


@pytest.mark.parametrize("argv, says", [
    (["recall", "caf\udce9"], "the query 'caf\\xe9'"),
    (["recall", "caf\udce9", "--json"], "the query 'caf\\xe9'"),
    (["show", "caf\udce9"], "the memory's path or name 'caf\\xe9'"),
    (["show", "memories/project/caf\udce9.md", "--json"], "the memory's path or name 'memories/project/caf\\xe9.md'"),
])
def test_a_query_or_name_that_is_not_utf8_exits_2_with_one_line_and_writes_nothing(store, cli, argv, says):
    """`recall $'caf\\xe9'` in a terminal that is not UTF-8: Python hands the byte over as a lone
    surrogate, which no memory holds and the consult log cannot record (it was a traceback)."""
    before = tree_hash(store)
    result = cli("--root", store, *argv)
    assert result.code == 2 and result.out == "", result
    assert result.err == f"auto-dream: error: {says} is not valid Unicode: it holds a byte that is not UTF-8, " \
                         "or half a character\n"
    assert tree_hash(store) == before


def test_a_query_that_is_not_utf8_through_the_fast_path_exits_2_with_one_line(store, capsys):
    from auto_dream.__main__ import quick_recall_arguments, run_quick_recall

    found = quick_recall_arguments(["--root", str(store), "recall", "caf\udce9", "--limit", "3"])
    assert found is not None  # the plain line the fast path runs
    assert run_quick_recall(found) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "'caf\\xe9' is not valid Unicode" in captured.err


# ---------------------------------------------------------------- kept current


def test_a_hand_edited_memory_is_found_by_its_new_words_reading_only_that_file(root, cli, monkeypatch):
    for number in range(30):
        put(root, f"memories/project/note{number:02}.md", f"Note {number}", f"Ordinary text number {number}.")
    assert recall_json(cli, root, "ordinary")  # the index is built
    index_file = root / ".state" / FILE_NAME
    inode = index_file.stat().st_ino
    counter = ReadCounter(monkeypatch)
    assert len(recall_json(cli, root, "ordinary")) == 10
    assert counter.paths == []  # nothing changed: nothing read
    put(root, "memories/project/note07.md", "Note 7", "Now about a platypus.")
    assert [hit["path"] for hit in recall_json(cli, root, "platypus")] == ["memories/project/note07.md"]
    assert counter.paths == ["note07.md"]
    assert "memories/project/note07.md" not in {hit["path"] for hit in recall_json(cli, root, "ordinary", "-n", "50")}
    assert index_file.stat().st_ino == inode  # updated in place, not built again


def test_a_deleted_memory_disappears(store, cli, monkeypatch):
    assert first_path(cli, store, "rollbacks") == "memories/reference/20261101_guide.md"
    counter = ReadCounter(monkeypatch)
    (store / "memories/reference/20261101_guide.md").unlink()
    assert recall_json(cli, store, "rollbacks") == []
    assert counter.paths == []


def test_a_memory_moved_to_the_archive_is_found_only_with_archived(store, cli):
    assert recall_json(cli, store, "rollbacks")
    target = store / "archive/reference/20261101_guide.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    (store / "memories/reference/20261101_guide.md").rename(target)
    assert recall_json(cli, store, "rollbacks") == []
    assert first_path(cli, store, "rollbacks", "--archived") == "archive/reference/20261101_guide.md"


def test_a_dream_updates_the_index_so_the_next_recall_reads_nothing(root, cli, monkeypatch):
    put(root, "memories/project/old.md", "Old fact", "Something unrelated.")
    assert recall_json(cli, root, "unrelated")
    assert cli("--root", root, "append", "-t", "project", "The invoice service runs on port 7070").code == 0
    assert cli("--root", root, "dream", "--no-llm").code == 0
    counter = ReadCounter(monkeypatch)
    hits = recall_json(cli, root, "invoice")
    assert [hit["name"] for hit in hits] == ["The invoice service runs on port 7070"]
    assert counter.paths == []


@pytest.mark.parametrize("damage", ["garbage", "old version", "truncated", "dropped table"])
def test_a_damaged_or_foreign_index_is_built_again_silently(store, cli, damage):
    assert recall_json(cli, store, "部署")
    index_file = store / ".state" / FILE_NAME
    if damage == "garbage":
        index_file.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        index_file.write_bytes(index_file.read_bytes()[:3000])
    else:
        db = sqlite3.connect(index_file)
        db.execute("PRAGMA user_version = 0" if damage == "old version" else "DROP TABLE memory_words")
        db.commit()
        db.close()
    result = cli("--root", store, "recall", "部署", "--json")
    assert (result.code, result.err) == (0, "")
    assert [hit["path"] for hit in json.loads(result.out)] == ["memories/project/20261102_bushu.md"]
    db = sqlite3.connect(index_file)
    assert db.execute("PRAGMA user_version").fetchone()[0] == recall_index.VERSION
    db.close()


def test_a_store_whose_index_cannot_be_written_is_still_searched(store, cli, monkeypatch):
    monkeypatch.setattr(recall_index, "FILE_NAME", "no/such/folder/recall.sqlite3")
    monkeypatch.setattr(recall_index, "make_dirs", lambda folder: (_ for _ in ()).throw(PermissionError(13, "no")))
    assert first_path(cli, store, "日本") == "memories/user/20261103_nihon.md"


# ---------------------------------------------------------------- show


def test_show_by_path_prints_the_file_as_it_is(store, cli):
    path = store / "memories/project/20261102_bushu.md"
    result = cli("--root", store, "show", "memories/project/20261102_bushu.md")
    assert (result.code, result.out) == (0, path.read_text(encoding="utf-8"))
    assert cli("--root", store, "show", str(path)).out == result.out  # an absolute path inside the store


def test_show_by_name_exact_then_in_any_case(store, cli):
    exact = json.loads(cli("--root", store, "show", "Operations guide", "--json").out)
    assert exact["path"] == "memories/reference/20261101_guide.md"
    assert set(exact) == {"path", "name", "type", "description", "mtime", "body", "sources"}
    assert exact["body"].startswith("The operations guide has a chapter")
    blind = cli("--root", store, "show", "OPERATIONS GUIDE")
    assert blind.code == 0 and "name: Operations guide" in blind.out


def test_show_prefers_a_live_memory_and_refuses_an_ambiguous_name(store, cli):
    put(store, "archive/reference/20261001_guide.md", "Operations guide", "An older guide.")
    assert json.loads(cli("--root", store, "show", "Operations guide", "--json").out)["path"] == \
        "memories/reference/20261101_guide.md"
    put(store, "memories/project/guide2.md", "Operations guide", "Another one.")
    result = cli("--root", store, "show", "Operations guide")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "memories/project/guide2.md" in result.err and "memories/reference/20261101_guide.md" in result.err


def test_show_of_something_unknown_exits_2_with_one_line(store, cli):
    for wanted in ("No such memory", "memories/project/missing.md", "../../etc/passwd", "config.toml", " "):
        result = cli("--root", store, "show", wanted)
        assert result.code == 2, (wanted, result)
        assert result.out == "" and len(result.err.strip().splitlines()) == 1


# ---------------------------------------------------------------- a Claude Code folder


def claude_folder(base: Path) -> Path:
    folder = base / ".claude" / "memory"
    write_memory_file(folder, "project_deploy_day.md",
                      "---\nname: Deploy day\ndescription: Deploys happen on Fridays\ntype: project\n---\n"
                      "The team deploys to production on Friday.\n")
    write_memory_file(folder, "feedback_tmp.md",
                      "---\nname: Temporary folders in tests\ndescription: Use tmp_path\nmetadata:\n"
                      "  type: feedback\n---\nAlways use pytest fixtures for temporary folders.\n")
    write_memory_file(folder, "notes.md", "部署の前にテストを実行する。\n")  # no frontmatter: read as reference
    (folder / "MEMORY.md").write_text("# Memory\n- [Deploy day](project_deploy_day.md) — Fridays\n")
    write_memory_file(folder, ".auto-dream/archive/project/old_deploy.markdown",
                      "---\nname: Old deploy day\ndescription: Deploys happened on Mondays\ntype: project\n---\n"
                      "The team deployed on Monday.\n")
    return folder


def test_a_claude_code_folder_is_searched_in_place_with_its_archive_apart(tmp_path, cli):
    folder = claude_folder(tmp_path)
    hits = recall_json(cli, folder, "deploy")
    assert [hit["path"] for hit in hits] == ["project_deploy_day.md"]  # notes.md says 部署, not deploy
    assert first_path(cli, folder, "部署") == "notes.md"
    assert [hit["type"] for hit in recall_json(cli, folder, "temporary", "--type", "feedback")] == ["feedback"]
    archived = recall_json(cli, folder, "monday", "--archived")
    assert [hit["path"] for hit in archived] == [".auto-dream/archive/project/old_deploy.markdown"]
    assert recall_json(cli, folder, "monday") == []
    assert (folder / ".auto-dream" / FILE_NAME).is_file()
    assert not list(folder.glob("*.sqlite3"))  # nothing of ours beside the topic files
    shown = cli("--root", folder, "show", "Deploy day")
    assert shown.code == 0 and shown.out == (folder / "project_deploy_day.md").read_text()
    assert cli("--root", folder, "show", "MEMORY.md").code == 2  # the index is not a memory


# ---------------------------------------------------------------- the library


def test_the_library_recalls_and_shows(store):
    opened = auto_dream.open_store(store)
    hits = opened.recall("部署")
    assert isinstance(hits[0], auto_dream.Hit) and hits[0].name == "每周五部署到生产环境"
    assert hits[0].score > 0 and hits[0].mtime == NOW
    memory = opened.show(hits[0].path)
    assert isinstance(memory, auto_dream.Memory) and memory.body.strip() == "团队每周五下午把代码部署到生产环境。"
    with pytest.raises(auto_dream.InputError):
        opened.recall("deploy", type="notes")


@pytest.mark.parametrize("ask", [lambda store: store.recall("deploy \ud83d"),
                                 lambda store: store.show("Deploys \ud83d"),
                                 lambda store: store.recall("caf\udce9", archived=True)])
def test_the_library_refuses_text_with_a_lone_surrogate_as_bad_input(store, ask):
    """Half an emoji (what a JavaScript client sends when it cuts one): an InputError naming it,
    not a UnicodeEncodeError from the consult log or SQLite."""
    before = tree_hash(store)
    with pytest.raises(auto_dream.InputError, match="is not valid Unicode"):
        ask(auto_dream.open_store(store))
    assert tree_hash(store) == before


# ---------------------------------------------------------------- many processes at once


@pytest.mark.slow  # starts a child Python
def test_eight_processes_recalling_at_once_on_a_fresh_store_agree(store):
    for number in range(200):
        put(store, f"memories/reference/bulk{number:03}.md", f"Bulk note {number}",
            f"Deploy checklist item {number} mentions 部署 and 日本.")
    env = {**os.environ, "AUTO_DREAM_ROOT": str(store)}

    def one(_: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "auto_dream", "recall", "deploy", "部署", "--json", "-n", "20"],
                              capture_output=True, text=True, env=env, timeout=120)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(8)))
    assert [(r.returncode, r.stderr) for r in results] == [(0, "")] * 8
    answers = {r.stdout for r in results}
    assert len(answers) == 1
    assert len(json.loads(answers.pop())) == 20
    counted = sqlite3.connect(store / ".state" / FILE_NAME).execute("SELECT count(*) FROM memory").fetchone()[0]
    assert counted == 206


QUICK_RECALL_CHILD = """
import sys
from auto_dream.__main__ import _run
code = _run(["--root", sys.argv[1], "recall", "deploy"])
heavy = ("typer", "rich", "yaml", "frontmatter", "markdown_it", "auto_dream.store.cache", "auto_dream.store.scan",
         "auto_dream.store.memory", "auto_dream.judge.similarity", "auto_dream.dream", "auto_dream.cli")
print(code, sorted(m for m in sys.modules if m.startswith(heavy)))
"""


@pytest.mark.slow  # starts a child Python
def test_a_recall_the_index_answers_loads_neither_the_parse_cache_nor_the_yaml_reader(store):
    """`recall` is what agents run all day: opening the store must not import what reads memory
    files (the parse cache, the YAML reader, the judge), which cost it two thirds of its time."""
    put(store, "memories/reference/deploy.md", "Deploy checklist", "The deploy checklist lives in the wiki.")
    first = subprocess.run([sys.executable, "-c", QUICK_RECALL_CHILD, str(store)], capture_output=True, text=True,
                           timeout=60)  # builds the recall index: reads the memory files
    assert first.returncode == 0, first.stderr
    again = subprocess.run([sys.executable, "-c", QUICK_RECALL_CHILD, str(store)], capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0, again.stderr
    assert "Deploy checklist" in again.stdout
    assert again.stdout.splitlines()[-1] == "0 []"


def test_recall_in_process_gives_the_same_as_the_command_line(store, cli):
    context = open_context(store)
    assert [hit.path for hit in recall(context, "deploy friday")] == \
        [hit["path"] for hit in recall_json(cli, store, "deploy", "friday")]
