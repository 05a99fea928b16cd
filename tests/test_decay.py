"""Decay: a memory neither looked up nor changed within `decay_days` sinks.
When MEMORY.md cannot list every memory, the decayed ones are left out first, so a memory an
agent keeps looking up stays in the index; the report and `check` count the decayed."""

import json
from datetime import timedelta

import pytest

from auto_dream.store.consult import append_consult, last_consulted
from auto_dream.store.paths import StorePaths
from test_dream import NOW, memory, run

# a header of 2 lines and a blank, 4 section headings and the "… and N older" line leave 4 of 6 memories
SMALL = "index_max_lines = 12\n"


def small_store(root, consulted: list[str], days_ago: int = 1):
    (root / "config.toml").write_text(SMALL)
    for n, fact in enumerate(("The staging database resets every Sunday night", "Deploys need two approvals",
                              "The API gateway listens on port 8443")):
        memory(root, f"memories/project/recent_{n}.md", fact, fact + ".", "project", days_ago=2 + n)
    for name, fact in (("old_looked_up", "Release notes live in docs/releases"),
                       ("old_forgotten", "The logo files are in the brand kit"),
                       ("old_unused", "The office wifi is called Meadow")):
        memory(root, f"memories/reference/{name}.md", name.replace("_", " "), fact + ".", "reference", days_ago=40)
    for name in consulted:
        append_consult(StorePaths(root), NOW - timedelta(days=days_ago), f"where is {name}",
                       [(name.replace("_", " "), f"memories/reference/{name}.md")])


def listed(root) -> str:
    return (root / "MEMORY.md").read_text(encoding="utf-8")


def test_a_looked_up_old_memory_stays_in_a_full_index_and_an_unused_one_of_its_age_is_left_out(root):
    small_store(root, ["old_looked_up"])
    report = run(root)
    index = listed(root)
    assert "old_looked_up" in index and "old_forgotten" not in index and "old_unused" not in index
    assert all(f"recent_{n}.md" in index for n in range(3))  # the newest still fit
    assert report["stats"]["decayed"] == 2  # neither changed nor looked up in 30 days
    assert any("decayed ones first" in w for w in report["warnings"])


def test_without_lookups_the_oldest_are_left_out_as_before(root):
    small_store(root, [])
    run(root)
    index = listed(root)
    assert all(f"recent_{n}.md" in index for n in range(3))
    assert "old_looked_up" not in index  # of three as old, the first by file name is listed


def test_a_lookup_older_than_decay_days_does_not_count(root):
    small_store(root, ["old_looked_up"], days_ago=45)
    report = run(root)
    assert "old_looked_up" not in listed(root)
    assert report["stats"]["decayed"] == 3


def test_decay_days_0_turns_decay_off(root):
    small_store(root, ["old_looked_up"])
    (root / "config.toml").write_text(SMALL + "decay_days = 0\n")
    report = run(root)
    assert report["stats"]["decayed"] == 0
    assert "old_looked_up" not in listed(root)  # newest first, as without decay


def test_check_counts_the_decayed(root, cli):
    small_store(root, ["old_looked_up"])
    result = json.loads(cli("--root", root, "check", "--json").out)
    assert result["decayed"] >= 1  # old_forgotten (against the real clock, the recent ones may have decayed too)
    text = cli("--root", root, "check").out
    assert "decayed (neither changed nor looked up in 30 days" in text


@pytest.mark.slow  # starts a pool of processes
def test_the_consult_log_keeps_every_line_whole_under_concurrent_writers(root):
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(8) as pool:
        pool.starmap(_write_consults, [(str(root), n) for n in range(16)])
    lines = (root / ".state" / "consult.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 16 * 50
    records = [json.loads(line) for line in lines]  # every line a whole JSON object
    assert {r["query"] for r in records} == {f"query {n} {i}" for n in range(16) for i in range(50)}
    assert set(last_consulted(StorePaths(root), NOW, 30)) == {f"memories/user/{n}.md" for n in range(16)}


def _write_consults(root: str, n: int) -> None:
    for i in range(50):
        append_consult(StorePaths(root), NOW - timedelta(hours=1), f"query {n} {i}",
                       [("a name " * 40, f"memories/user/{n}.md")])  # long lines: ~400 bytes each


def test_the_newest_memory_fits_however_many_old_ones_are_looked_up(root):
    (root / "config.toml").write_text("index_max_lines = 10\n")  # 2 memories fit
    for n in range(12):
        memory(root, f"memories/project/m{n:02d}.md", f"Zebra fact {n:02d} about crossing {n}",
               f"Zebra crossing number {n:02d} is on street {n}.", "project", days_ago=40 - n)
    for n in (0, 1, 2):  # an agent looks up the oldest ones, over and over
        append_consult(StorePaths(root), NOW - timedelta(hours=1), f"zebra {n}",
                       [("", f"memories/project/m{n:02d}.md")])
    run(root)
    assert "m11.md" in listed(root)  # the newest still fits


def test_a_pinned_memory_is_never_counted_as_decayed(root):
    memory(root, "memories/user/pinned.md", "Pinned rule", "Always answer in English.", "user", days_ago=90,
           extra="pinned: true\n")
    memory(root, "memories/user/fresh.md", "Fresh fact", "The user moved to Lisbon.", "user", days_ago=1)
    assert run(root)["stats"]["decayed"] == 0
