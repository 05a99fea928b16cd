"""Whether what dream writes reads as a careful person would have written it: types, names,
descriptions, folds, and an OpenClaw import.

The labelled data is bench/distil/ (written for the purpose; its README says how). Everything
runs through the real code, in-process, in fresh temporary stores, with no API key (the
deterministic distiller):

  entries   each entry of entries.jsonl is appended (with its given_type, the --type an agent
            would pass) to a store of its own and dreamed; the memory it became is read: its
            type, its name, its description, its file name.
  folds     each pair of folds.jsonl (a memory's text, a later entry) is run twice: across runs
            (the memory's text appended and dreamed, the entry appended a month later and
            dreamed) and in one run (both appended, one dream). Read: whether the entry was
            folded into the memory, whether the report counts the fold and names the entry,
            whether the description shows the fact the entry added.
  openclaw  bench/distil/openclaw/ is imported (`import openclaw`) and dreamed; every memory is
            printed with its type and name, and scored against openclaw/expected.jsonl.

Printed: each figure with its target beside it; with --errors every miss, with --json the
figures and every row.

    .venv/bin/python bench/distil.py [--errors] [--json]
"""

import argparse
import json
import re
import shutil
import sys
import tempfile
import unicodedata
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.commands.import_openclaw import import_openclaw  # noqa: E402
from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.runner import dream  # noqa: E402
from auto_dream.dream.snapshot import DreamOptions  # noqa: E402
from auto_dream.store.context import open_context  # noqa: E402
from auto_dream.store.daylog import append_entry, make_entry  # noqa: E402
from auto_dream.store.memory import Memory, read_memory  # noqa: E402
from auto_dream.store.paths import StorePaths, ensure_store  # noqa: E402

DATA = Path(__file__).resolve().parent / "distil"
WORKSPACE = DATA / "openclaw"
LANGUAGES = ("en", "zh", "ja")
TYPES = ("user", "feedback", "project", "reference")
FOLD_OUTCOMES = ("extend", "same", "new")
STATES = ("done", "open")

MEMORY_AT = datetime(2026, 1, 1, 9, 0)  # the memory's text (a fold), written in the store's wall-clock time
FIRST_DREAM = datetime(2026, 1, 2, 9, 0, tzinfo=timezone.utc)
ENTRY_AT = datetime(2026, 2, 1, 9, 0)  # an entry of entries.jsonl; a fold's later entry
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
IMPORT_NOW = datetime(2026, 3, 20, 9, 0, tzinfo=timezone.utc)  # after the workspace's last note

TYPE_TARGET = 0.90
ACCEPT_TARGET = 0.90


# ---------------------------------------------------------------- the data


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def load_entries() -> list[dict]:
    """entries.jsonl: {id, lang, text, type, given_type, name_must, name_must_not, note}."""
    return load_jsonl(DATA / "entries.jsonl")


def load_folds() -> list[dict]:
    """folds.jsonl: {id, lang, type, memory, entry, expected (extend|same|new), added, note}."""
    return load_jsonl(DATA / "folds.jsonl")


def load_expected() -> list[dict]:
    """openclaw/expected.jsonl: {id, day, section, subject, facts, type, state?, note}."""
    return load_jsonl(WORKSPACE / "expected.jsonl")


def load_notes() -> dict[str, str]:
    """The workspace's daily notes by file name."""
    return {path.name: path.read_text("utf-8") for path in sorted((WORKSPACE / "memory").glob("*.md"))}


# ---------------------------------------------------------------- reading a text as a person would


def normal(text: str) -> str:
    """Compared as a reader compares: full and half width alike, case and runs of spaces ignored."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def holds(text: str, phrase: str | list[str]) -> bool:
    """Whether `text` says `phrase` (a list: any one of its alternatives)."""
    alternatives = phrase if isinstance(phrase, list) else [phrase]
    return any(normal(alternative) in normal(text) for alternative in alternatives)


def matches(name: str, pattern: str) -> bool:
    """A name_must_not item: `/regex/` is searched (case-blind), anything else is a substring."""
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        return re.search(pattern[1:-1], name, re.IGNORECASE) is not None
    return normal(pattern) in normal(name)


# Abbreviations that end in a full stop without ending a sentence (compared lower case, no final dot).
ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "fig", "figs", "no", "nos", "dr", "mr", "mrs",
                           "ms", "st", "jr", "sr", "inc", "ltd", "co", "u.s", "u.k", "a.m", "p.m", "eq", "sec", "vol",
                           "ch", "pp", "al", "ca"})
_PAIRS = (("(", ")"), ("（", "）"), ("[", "]"), ("「", "」"), ("“", "”"), ("『", "』"))
_ASCII_WORD = re.compile(r"[0-9A-Za-z]")
_LAST_TOKEN = re.compile(r"[0-9A-Za-z.]+$")


def name_cut(name: str, text: str) -> str | None:
    """How `name` cuts what the entry says, or None: it ends in an ellipsis, leaves markup or a
    bracket open that the text closes, is a bare number, or stops at an abbreviation's full
    stop or inside a word or a number of the text."""
    stem = name.strip()
    if stem.endswith(("…", "...")):
        return "ends with …"
    for mark in ("**", "`", '"'):
        if stem.count(mark) % 2 and not text.count(mark) % 2:
            return f"leaves {mark} open"
    for opening, closing in _PAIRS:
        if stem.count(opening) != stem.count(closing) and text.count(opening) == text.count(closing):
            return f"leaves {opening}{closing} open"
    if re.fullmatch(r"[\d\s.)）、。:：]+", stem):
        return "is a bare number"
    flat = " ".join(text.split())
    if not stem or not flat.startswith(stem) or len(flat) == len(stem):
        return None
    after = flat[len(stem):]
    token = _LAST_TOKEN.search(stem)
    if after.startswith(".") and token and token.group().lower().rstrip(".") in ABBREVIATIONS:
        return f"stops at the abbreviation {token.group()}."
    if after.startswith(".") and stem[-1].isdigit() and after[1:2].isdigit():
        return "stops inside a number"
    if _ASCII_WORD.match(stem[-1]) and _ASCII_WORD.match(after[0]):
        return "stops inside a word"
    return None


_LIST_MARKER = re.compile(r"\s*(?:[-*+]\s|\d{1,3}[.)](?:\s|$)|\[[ xX]\])")


def name_markup(name: str) -> str | None:
    """Markdown a title has no use for: bold, a link, a list marker or a checkbox in front."""
    if "**" in name or "__" in name:
        return "bold markup"
    if "](" in name:
        return "link markup"
    if _LIST_MARKER.match(name):
        return "a list marker"
    return None


def copied(name: str, description: str) -> str | None:
    """'equal' when the description is the name; 'begins with it' when it is the name and more;
    None when the description says something of its own (MEMORY.md shows it beside the name)."""
    stem = " ".join(name.removesuffix("…").removesuffix("...").split()).rstrip(" .。")
    said = " ".join(description.split())
    if said.rstrip(" .。") == stem:
        return "equal"
    if stem and said.startswith(stem):
        return "begins with it"
    return None


_PERSON = re.compile(r"^(?:the user's|user's|the user|user|i|用户|我|ユーザーは|ユーザーの|私は)\s*", re.IGNORECASE)


def copied_beneath(name: str, description: str) -> str | None:
    """`copied` once the name's label (`Plan for Q3:`, `ステータス:`) and the description's person
    ("The user", 用户) are set aside: a copy those hide ("Plan for Q3: split the monolith's auth
    module" — "Split the monolith's auth module into its own service…")."""
    core = re.split(r": |：", name)[-1]
    return copied(normal(core), normal(_PERSON.sub("", description, count=1))) if core else None


def hook_repeats(name: str, index_line: str) -> bool:
    """Whether the MEMORY.md line's hook (what follows " — ") opens with what its name says
    beneath the name's label, with or without the person it names: an agent reading the index
    then reads one thing twice and nothing of what the memory adds."""
    hook = index_line.split(" — ", 1)[1] if " — " in index_line else ""
    hook = normal(_PERSON.sub("", hook.removesuffix("…"), count=1)).lower()
    core = normal(re.split(r": |：", name)[-1]).lower()
    opening = min(len(hook), len(core), 12)
    return opening >= 4 and hook[:opening] == core[:opening]


def said_whole(name: str, text: str) -> bool:
    """Whether `name` is all the entry says: its one line without a list marker, a checkbox or
    bold. Such an entry has nothing a description could add from it; a description the rules
    padded with words the entry never said would change what the judge reads (bench/judgement.py
    decided two pairs worse with a sentence naming the type), so a description that is the
    sentence is no copy there: MEMORY.md shows the name alone."""
    if "\n" in text.strip():
        return False
    flat = re.sub(r"\*\*|__", "", text)
    marker = _LIST_MARKER.match(flat)
    flat = flat[marker.end():] if marker else flat
    return re.sub(r"\s+", "", normal(flat)).rstrip(".。") == re.sub(r"\s+", "", normal(name)).rstrip(".。")


def _single_item(body: str) -> str:
    """An imported memory's one item without the heading path over it; else the body."""
    lines = [line for line in body.strip().split("\n") if line.strip()]
    return lines[1] if len(lines) == 2 and lines[0].rstrip().endswith((":", "：")) else body


def _whole_slug(text: str) -> str:
    """As the store names a file: letters and digits kept, every other run of characters one `_`."""
    chars = [c if unicodedata.category(c)[0] in "LN" else "_" for c in unicodedata.normalize("NFC", text)]
    return re.sub(r"_+", "_", "".join(chars)).strip("_")


def slug_cut(path: str, name: str) -> bool:
    """Whether the file name's slug stops inside a word of the name (a CJK run counts as one word)."""
    slug = re.sub(r"_\d+$", "", Path(path).stem.split("_", 1)[-1])
    whole = _whole_slug(name)
    return len(whole) > len(slug) and whole.startswith(slug) and whole[len(slug)] != "_"


_DONE = ("[x]", "完了", "済", "done", "✅", "✓", "已完成")
_OPEN = ("[ ]", "未完了", "未着手", "未対応", "todo", "open", "pending", "未完成", "待办")


def shows_state(text: str, phrase: str | list[str], state: str) -> bool:
    """Whether a line of `text` that says `phrase` shows the checkbox's state, and not the other."""
    want, other = (_DONE, _OPEN) if state == "done" else (_OPEN, _DONE)
    for line in text.split("\n"):
        if holds(line, phrase):
            folded = normal(line)
            if any(normal(m) in folded for m in want) and not any(normal(m) in folded for m in other):
                return True
    return False


def label_only(memory: Memory) -> bool:
    """A memory that holds only a label (`**購入リスト:**`): what it introduced is not in it."""
    body = (memory.body or memory.description).strip().replace("**", "").rstrip()
    return body.endswith((":", "："))


# ---------------------------------------------------------------- running the product


def _dream(root: Path, now: datetime) -> dict:
    return dream(open_context(root), now, DreamOptions(), DeterministicDistiller()).report.as_json()


def _new_store(folder: Path) -> Path:
    root = folder / ".auto-dream"
    ensure_store(root)
    return root


def _append(root: Path, text: str, given_type: str | None, at: datetime) -> str:
    entry = make_entry(text, given_type, at)  # validated as `auto-dream append` validates it
    append_entry(StorePaths(root), entry)
    return entry.id


def live_memories(root: Path) -> list[Memory]:
    memories = []
    for path in sorted((root / "memories").rglob("*.md")):
        memory = read_memory(path, root, None)
        if isinstance(memory, Memory):
            memories.append(memory)
    return memories


def _index_line(root: Path, memory: Memory) -> str:
    index = root / "MEMORY.md"
    lines = index.read_text("utf-8").splitlines() if index.exists() else []
    return next((line for line in lines if f"]({memory.path})" in line), "")


def run_entry(entry: dict, folder: Path) -> dict:
    """Append the entry, dream, and read the memory it became."""
    root = _new_store(folder)
    entry_id = _append(root, entry["text"], entry["given_type"], ENTRY_AT)
    report = _dream(root, NOW)
    memory = next((m for m in live_memories(root) if entry_id in m.sources), None)
    row = {"id": entry["id"], "lang": entry["lang"], "expected_type": entry["type"], "typed_by": (
        "agent" if entry["given_type"] else "rules"), "made": memory is not None,
        "skipped": [s["reason"] for s in report["skipped"]]}
    if memory is None:
        return row
    must_missing = [must for must in entry["name_must"] if not holds(memory.name, must)]
    must_not_found = [pattern for pattern in entry["name_must_not"] if matches(memory.name, pattern)]
    row.update({"type": memory.type, "name": memory.name, "description": memory.description, "path": memory.path,
                "index_line": _index_line(root, memory), "type_right": memory.type == entry["type"],
                "cut": name_cut(memory.name, entry["text"]), "markup": name_markup(memory.name),
                "copied": copied(memory.name, memory.description), "must_missing": must_missing,
                "named_whole": said_whole(memory.name, entry["text"]) or said_whole(memory.description, entry["text"]),
                "copied_beneath": copied_beneath(memory.name, memory.description),
                "hook_repeats": hook_repeats(memory.name, _index_line(root, memory)),
                "must_not_found": must_not_found, "slug_cut": slug_cut(memory.path, memory.name)})
    return row


def run_fold(pair: dict, folder: Path, one_run: bool) -> dict:
    """The memory's text, then the entry: across two dreams, or (`one_run`) in one."""
    root = _new_store(folder)
    first = _append(root, pair["memory"], pair["type"], MEMORY_AT)
    if not one_run:
        _dream(root, FIRST_DREAM)
    later = _append(root, pair["entry"], pair["type"], MEMORY_AT + timedelta(hours=1) if one_run else ENTRY_AT)
    report = _dream(root, NOW)
    memories = live_memories(root)
    holder = next((m for m in memories if first in m.sources), None)
    entry_holder = next((m for m in memories if later in m.sources), None)
    folded = holder is not None and entry_holder is not None and holder.path == entry_holder.path
    merge_rows = [a for a in report["actions"] if a["kind"] == "merge" and a["path"].endswith(f"#{later}")]
    reason = merge_rows[0]["reason"] if merge_rows else next(
        (a["reason"] for a in report["actions"] if a["kind"] in ("create", "supersede")), "")
    # not folded, but listed for a reader to decide: the entry's memory and the first beside each other
    pair_paths = {holder.path, entry_holder.path} if holder is not None and entry_holder is not None else set()
    listed = next((item["kind"] for item in report.get("review", [])
                   if len(pair_paths) == 2 and {item["path"], item["target"]} == pair_paths), "")
    row = {"id": pair["id"], "lang": pair["lang"], "expected": pair["expected"], "run": "one" if one_run else "two",
           "listed": listed,
           # no live memory holds the first text: a memory superseded, or (in one run) the entry skipped
           "folded": folded, "replaced": holder is None,
           "merged_count": report["stats"]["merged"], "named": bool(merge_rows), "reason": reason,
           "memories": len(memories)}
    if folded and holder is not None:
        row.update({"name": holder.name, "description": holder.description,
                    "shows_added": all(holds(f"{holder.name}\n{holder.description}", a) for a in pair["added"]),
                    "body_keeps_entry": normal(pair["entry"]) in normal(holder.body) or all(
                        holds(holder.body, a) for a in pair["added"]),
                    "reason_says_same": bool(re.search(r"says the same|already says", reason))})
    return row


def _table_rows(notes: dict[str, str]) -> list[tuple[str, list[str]]]:
    """Every data row of the workspace's tables (not the header, not the rule under it): its cells."""
    rows = []
    for name, text in notes.items():
        lines = text.split("\n")
        for number, line in enumerate(lines):
            if not line.lstrip().startswith("|") or re.fullmatch(r"[\s|:-]+", line):
                continue
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if re.fullmatch(r"\s*\|[\s|:-]+", following):
                continue  # the header row
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows.append((f"{name}: {line.strip()}", [cell for cell in cells if cell]))
    return rows


def run_openclaw(folder: Path) -> dict:
    """Import the workspace, dream, and score every memory against expected.jsonl."""
    root = folder / ".auto-dream"
    imported = import_openclaw(root, WORKSPACE)
    report = _dream(root, IMPORT_NOW)
    memories = live_memories(root)
    texts = {m.path: m.text() for m in memories}
    groups = []
    for item in load_expected():
        holders = [m for m in memories if all(holds(texts[m.path], fact) for fact in item["facts"])]
        best = max(memories, key=lambda m: sum(holds(texts[m.path], f) for f in item["facts"]), default=None)
        row = {"id": item["id"], "subject": item["subject"], "together": bool(holders),
               "type_right": any(m.type == item["type"] for m in holders), "expected_type": item["type"],
               "holders": [m.path for m in holders],
               "missing_in_best": [f for f in item["facts"] if best is None or not holds(texts[best.path], f)],
               "best": best.path if best else None}
        if "state" in item:  # read where the item is, whatever else its memory holds
            row["state"] = item["state"]
            row["state_shown"] = any(shows_state(text, item["facts"][-1], item["state"]) for text in texts.values())
        groups.append(row)
    table_rows = [{"row": where, "kept": any(all(holds(texts[m.path], cell) for cell in cells) for m in memories)}
                  for where, cells in _table_rows(load_notes())]
    listed = [{"path": m.path, "type": m.type, "name": m.name, "description": m.description,
               "cut": name_cut(m.name, m.body or m.description), "markup": name_markup(m.name),
               # one item under its heading, named whole, has nothing to add (said_whole), as one sentence has
               "copied": None if said_whole(m.name, _single_item(m.body)) else copied(m.name, m.description),
               "label_only": label_only(m),
               "entries": len(m.sources)} for m in memories]
    return {"notes_read": imported.notes_read, "entries_imported": imported.entries_added,
            "skipped": [s.warning for s in imported.skipped], "memories": listed, "groups": groups,
            "table_rows": table_rows, "merged": report["stats"]["merged"], "created": report["stats"]["created"]}


# ---------------------------------------------------------------- figures


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({part / whole:.0%})" if whole else "")


def entry_figures(rows: list[dict]) -> dict:
    made = [r for r in rows if r["made"]]
    by_rules = [r for r in made if r["typed_by"] == "rules"]
    return {"entries": len(rows), "no_memory": len(rows) - len(made),
            "type_right": sum(r["type_right"] for r in made),
            "typed_by_rules": len(by_rules), "type_right_by_rules": sum(r["type_right"] for r in by_rules),
            "cut": sum(bool(r["cut"]) for r in made), "markup": sum(bool(r["markup"]) for r in made),
            "copied": sum(bool(r["copied"]) and not r["named_whole"] for r in made),
            "copied_equal": sum(r["copied"] == "equal" and not r["named_whole"] for r in made),
            "named_whole": sum(r["copied"] == "equal" and r["named_whole"] for r in made),
            "copied_beneath": sum(r["copied_beneath"] == "equal" and not r["copied"] and not r["named_whole"]
                                  for r in made),
            "goes_on_beneath": sum(r["copied_beneath"] == "begins with it" and not r["copied"] for r in made),
            "hook_repeats": sum(r["hook_repeats"] for r in made),
            "must_missing": sum(bool(r["must_missing"]) for r in made),
            "must_not_found": sum(bool(r["must_not_found"]) for r in made),
            "slug_cut": sum(r["slug_cut"] for r in made)}


def fold_figures(rows: list[dict]) -> dict:
    should = [r for r in rows if r["expected"] in ("extend", "same")]
    folded = [r for r in rows if r["folded"]]
    extended = [r for r in folded if r["expected"] == "extend"]
    return {"pairs": len(rows), "should_fold": len(should), "folded_right": sum(r["folded"] for r in should),
            "unfolded": sum(not r["folded"] for r in should),
            "unfolded_listed": sum(not r["folded"] and r["listed"] == "possible_duplicate" for r in should),
            "folded": len(folded), "reported": sum(r["named"] and r["merged_count"] > 0 for r in folded),
            "extend_folded": len(extended), "shows_added": sum(r["shows_added"] for r in extended),
            "body_keeps_entry": sum(r["body_keeps_entry"] for r in extended),
            "reason_says_same": sum(r["reason_says_same"] for r in extended),
            "new_pairs": sum(r["expected"] == "new" for r in rows),
            "wrong_folds": sum(r["folded"] for r in rows if r["expected"] == "new"),
            "replaced": sum(r["replaced"] for r in rows)}


def print_entries(rows: list[dict]) -> dict:
    groups = {lang: [r for r in rows if r["lang"] == lang] for lang in LANGUAGES}
    figures = {lang: entry_figures(group) for lang, group in groups.items()}
    figures["all"] = entry_figures(rows)
    print(f"Entries (bench/distil/entries.jsonl): {len(rows)}, each appended to a store of its own and dreamed")
    columns = [*LANGUAGES, "all"]
    print(f"  {'':42}" + "".join(f"{c:>16}" for c in columns) + "   target")

    def line(label: str, part: str, whole: str, target: str) -> None:
        cells = "".join(f"{_share(figures[c][part], figures[c][whole]):>16}" for c in columns)
        print(f"  {label:42}{cells}   {target}")
    line("type right", "type_right", "entries", f"≥ {TYPE_TARGET:.0%}")
    line("  of those typed by the rules", "type_right_by_rules", "typed_by_rules", f"≥ {TYPE_TARGET:.0%}")
    line("names cut (…, a word, a number, markup)", "cut", "entries", "0")
    line("names copied into the description", "copied", "entries", "0")
    line("  description equal to the name", "copied_equal", "entries", "0")
    line("  one sentence, named whole (nothing to add)", "named_whole", "entries", "—")
    line("  the name beneath its label or the person", "copied_beneath", "entries", "0")
    line("  going on from the name beneath its label", "goes_on_beneath", "entries", "—")
    line("MEMORY.md hooks repeating the name", "hook_repeats", "entries", "0")
    line("names holding markup or a list marker", "markup", "entries", "0")
    line("names missing a must", "must_missing", "entries", "0")
    line("names holding a must-not", "must_not_found", "entries", "0")
    line("file names cut inside a word", "slug_cut", "entries", "0")
    line("entries that made no memory", "no_memory", "entries", "0")
    return figures


def print_folds(rows: list[dict]) -> dict:
    figures = {run: fold_figures([r for r in rows if r["run"] == run]) for run in ("two", "one")}
    counts = Counter(r["expected"] for r in rows if r["run"] == "two")
    print(f"\nFolds (bench/distil/folds.jsonl): {figures['two']['pairs']} pairs — "
          + ", ".join(f"{k} {counts[k]}" for k in FOLD_OUTCOMES))
    print(f"  {'':44}{'across runs':>16}{'in one run':>16}   target")

    def line(label: str, part: str, whole: str, target: str) -> None:
        cells = "".join(f"{_share(figures[r][part], figures[r][whole]):>16}" for r in ("two", "one"))
        print(f"  {label:44}{cells}   {target}")
    line("folded, of the pairs that repeat the memory", "folded_right", "should_fold", "all")
    line("  the rest listed for review as duplicates", "unfolded_listed", "unfolded", "all")
    line("folds reported (merged count, entry named)", "reported", "folded", "all")
    line("added fact shown (name or description)", "shows_added", "extend_folded", "all")
    line("added fact kept in the body", "body_keeps_entry", "extend_folded", "all")
    line("reason says 'the same' of an addition", "reason_says_same", "extend_folded", "0")
    line("wrong folds (a new fact folded)", "wrong_folds", "new_pairs", "0")
    line("first text replaced (superseded or skipped)", "replaced", "pairs", "0")
    return figures


def openclaw_figures(result: dict) -> dict:
    memories, groups, rows = result["memories"], result["groups"], result["table_rows"]
    together = [g for g in groups if g["together"]]
    states = {state: [g for g in groups if g.get("state") == state] for state in STATES}
    return {"notes": result["notes_read"], "entries_imported": result["entries_imported"],
            "memories": len(memories), "types": {t: sum(m["type"] == t for m in memories) for t in TYPES},
            "groups": len(groups), "together": len(together),
            "together_type_right": sum(g["type_right"] for g in together),
            "table_rows": len(rows), "table_rows_kept": sum(r["kept"] for r in rows),
            **{f"{state}_items": len(items) for state, items in states.items()},
            **{f"{state}_shown": sum(g["state_shown"] for g in items) for state, items in states.items()},
            "folded": sum(max(m["entries"] - 1, 0) for m in memories), "merged": result["merged"],
            **{key: sum(bool(m[key]) for m in memories) for key in ("label_only", "cut", "copied", "markup")}}


def print_openclaw(result: dict) -> dict:
    figures = openclaw_figures(result)
    print(f"\nOpenClaw workspace (bench/distil/openclaw): {figures['notes']} notes, "
          f"{figures['entries_imported']} entries imported, {figures['memories']} memories made")
    print("  types: " + ", ".join(f"{t} {n}" for t, n in figures["types"].items()))

    def line(label: str, part: int, whole: int, target: str) -> None:
        print(f"  {label:56}{_share(part, whole):>14}   {target}")
    line("expected groups whose facts are together in one memory", figures["together"], figures["groups"],
         f"≥ {ACCEPT_TARGET:.0%}")
    line("  of those, held by a memory of the expected type", figures["together_type_right"], figures["together"],
         "all")
    line("table rows kept whole in one memory", figures["table_rows_kept"], figures["table_rows"], "all")
    line("done checkboxes shown as done", figures["done_shown"], figures["done_items"], "all")
    line("open checkboxes shown as open", figures["open_shown"], figures["open_items"], "all")
    line("entries folded into another's memory, reported merged", figures["merged"], figures["folded"], "all")
    for label, key in (("memories holding only a label", "label_only"), ("names cut", "cut"),
                       ("names copied into the description", "copied"), ("names holding markup", "markup")):
        line(label, figures[key], figures["memories"], "0")
    print(f"  memories a careful person would accept: read them below   target ≥ {ACCEPT_TARGET:.0%}")
    print("\n  Memories (marks: c name cut, d copied into the description, m markup, l only a label; type; name):")
    for memory in result["memories"]:
        marks = "".join(mark for mark, key in (("c", "cut"), ("d", "copied"), ("m", "markup"), ("l", "label_only"))
                        if memory[key])
        print(f"  {marks:4} {memory['type']:<9} {memory['name']}")
    return figures


def print_errors(entries: list[dict], folds: list[dict], openclaw: dict) -> None:
    print("\nEntries missed:")
    for row in entries:
        if not row["made"]:
            print(f"- {row['id']}: no memory ({'; '.join(row['skipped']) or 'no reason given'})")
            continue
        problems = []
        if not row["type_right"]:
            problems.append(f"type {row['type']}, expected {row['expected_type']} (typed by the {row['typed_by']})")
        if row["cut"]:
            problems.append(f"name {row['cut']}")
        if row["markup"]:
            problems.append(f"name holds {row['markup']}")
        if row["copied"] and not row["named_whole"]:
            problems.append("description " + ("is the name" if row["copied"] == "equal" else "begins with the name"))
        elif row["copied_beneath"] == "equal" and not row["named_whole"]:
            problems.append("description is the name beneath its label or person")
        if row["hook_repeats"]:
            problems.append("the MEMORY.md line's hook repeats the name")
        if row["must_missing"]:
            problems.append("name lacks " + ", ".join(json.dumps(m, ensure_ascii=False) for m in row["must_missing"]))
        if row["must_not_found"]:
            problems.append("name holds " + ", ".join(row["must_not_found"]))
        if row["slug_cut"]:
            problems.append("file name cut inside a word")
        if problems:
            print(f"- {row['id']}: {'; '.join(problems)}")
            print(f"    name: {row['name']}\n    description: {row['description']}\n    MEMORY.md: {row['index_line']}"
                  f"\n    file: {row['path']}")
    print("\nFolds missed:")
    for row in folds:
        where = "across runs" if row["run"] == "two" else "in one run"
        problems = []
        if row["expected"] != "new" and not row["folded"]:
            problems.append("not folded" + (f", listed for review as {row['listed']}" if row["listed"] else ""))
        if row["expected"] == "new" and row["folded"]:
            problems.append("folded, but the entry is a new fact")
        if row["replaced"]:
            problems.append("the memory's text was replaced: no live memory holds it")
        if row["folded"] and not (row["named"] and row["merged_count"]):
            problems.append(f"fold not reported (merged {row['merged_count']})")
        if row["folded"] and row["expected"] == "extend":
            if not row["shows_added"]:
                problems.append("description omits the added fact")
            if not row["body_keeps_entry"]:
                problems.append("body lost the added fact")
            if row["reason_says_same"]:
                problems.append("reason says the same")
        if problems:
            print(f"- {row['id']} ({row['expected']}, {where}): {'; '.join(problems)}")
            if row["folded"]:
                print(f"    name: {row['name']}\n    description: {row['description']}")
            if row["reason"]:
                print(f"    reason: {row['reason']}")
    print("\nOpenClaw groups not together:")
    for group in openclaw["groups"]:
        if not group["together"]:
            missing = ", ".join(json.dumps(f, ensure_ascii=False) for f in group["missing_in_best"])
            print(f"- {group['id']} ({group['subject']}): the closest memory lacks {missing} — {group['best']}")
        elif not group["type_right"]:
            print(f"- {group['id']} ({group['subject']}): together, but not as {group['expected_type']}")
        if group.get("state_shown") is False:
            print(f"- {group['id']} ({group['subject']}): the {group['state']} state is not shown")
    for memory in openclaw["memories"]:
        if memory["entries"] > 1:
            print(f"- {memory['entries']} entries folded into one memory: {memory['name']} — {memory['path']}")
    for row in openclaw["table_rows"]:
        if not row["kept"]:
            print(f"- table row dropped: {row['row']}")
    for warning in openclaw["skipped"]:
        print(f"- import skipped: {warning}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errors", action="store_true", help="list every miss")
    parser.add_argument("--json", action="store_true", help="print the figures and every row as JSON")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="auto-dream-distil-"))
    try:
        entries = [run_entry(entry, work / f"e{number}") for number, entry in enumerate(load_entries())]
        folds = [run_fold(pair, work / f"f{number}{run}", one_run=run == "1")
                 for number, pair in enumerate(load_folds()) for run in ("2", "1")]
        openclaw = run_openclaw(work / "openclaw")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        figures = {"entries": {lang: entry_figures([r for r in entries if r["lang"] == lang]) for lang in LANGUAGES},
                   "folds": {run: fold_figures([r for r in folds if r["run"] == run]) for run in ("two", "one")}}
        figures["entries"]["all"] = entry_figures(entries)
        figures["openclaw"] = openclaw_figures(openclaw)
        print(json.dumps({"figures": figures, "entries": entries, "folds": folds, "openclaw": openclaw},
                         ensure_ascii=False, indent=1))
        return
    print_entries(entries)
    print_folds(folds)
    print_openclaw(openclaw)
    if args.errors:
        print_errors(entries, folds, openclaw)


if __name__ == "__main__":
    main()
