"""What `dream --no-llm` does to real Claude Code memory folders, dreamed in place, for a person to judge.

The data (../shared/data/claude-memory, see its README.md; read where it lies, never copied
into this repository) holds memory folders that Claude Code wrote in public repositories.
Each repository's folder is copied to a temporary folder, made writable, and every file
given its last commit time from times.tsv (`touch -d @SECONDS`, as the README says). Then the
real CLI runs in a subprocess, with HOME in the temporary folder and no API key:

    python -m auto_dream dream --all COPY --no-llm --json     # every memory folder in place, each on its own

and once more (a second dream must plan nothing), then `undo` in each folder. Before the
first dream, each folder's log gets the first sentence of up to 3 of its topic files
(`--relearn N`), as an agent appends what it already knows: dream should merge each into
its file, rewriting real frontmatter (the `metadata:` blocks, the lines YAML refuses). Printed per
folder: its files; every action with its full reason, every pair left for review with its
evidence and the sentence of each side it rests on (each for a person to read and judge); and
the checks the issue asks for, each a count that must be 0:
- refused: files the report names as unreadable (left untouched);
- lost index lines: lines of the original MEMORY.md that are in neither the new MEMORY.md
  nor MEMORY_overflow.md, other than a link line to a file the run retired;
- lost keys: a rewritten topic file that lost a frontmatter key, moved its type out of or
  into a `metadata:` block, or lost a key inside that block;
- lost lines: body lines of an original topic file found in no .md of the folder (live or
  archived);
- second: actions the second dream plans;
- undo diff: files (other than auto-dream's .auto-dream/ and Claude Code's .consolidate-lock)
  whose bytes differ from the original after `undo`;
- marked +: lines the dream added to MEMORY.md that link a memory a person marked deprecated,
  superseded, a duplicate, split or moved (`list --json` before the dream: its `status`). Every
  marked memory is printed with the line that marks it (`marked` counts them), for a person to judge.
Then what a reader has to judge, counted (review items by kind, actions by kind, from an
entry or between memories), and what became of each pair a careful reader sees in the data
(READER_PAIRS, from its README): acted on, listed, or missed.

    .venv/bin/python bench/real_folders.py [--data ../shared/data/claude-memory] [--keep] [--json]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "claude-memory"  # ../shared
OURS = (".auto-dream/", ".consolidate-lock")
RETIRE = ("merge", "supersede", "archive")
# Pairs a careful reader sees in the data (its README): (folder, one file, the other, kind). Each
# should be acted on or listed for review.
READER_PAIRS = (
    ("application-pipeline/.claude/memory", "feedback_never_defer_commands.md", "feedback_never_defer_to_human.md",
     "duplicate"),  # it says it extends the other
    ("application-pipeline/.claude/memory", "feedback_cover_letter_quality.md",
     "feedback_resume_cover_letter_quality_2026-03-26.md", "duplicate"),  # absorbed by the other, it says so
)


def split(text: str) -> tuple[list[str], list[str]]:
    """(frontmatter lines, body lines); no frontmatter when the file does not open with ---."""
    lines = text.lstrip("\ufeff").splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return lines[1:i], lines[i + 1:]
    return [], lines


def keys(front: list[str]) -> tuple[set[str], set[str]]:
    """(top-level keys, keys inside a `metadata:` block), read line by line as written."""
    top, nested, inside = set(), set(), False
    for line in front:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = line.strip().split(":", 1)[0]
        if line[0].isspace():
            if inside:
                nested.add(key)
        else:
            top.add(key)
            inside = key == "metadata"
    return top, nested


def snapshot(folder: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not relative.startswith(OURS) and not relative.startswith("logs/"):
            found[relative] = path.read_bytes()
    return found


def cli(env: dict, *argv: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "auto_dream", *argv], env=env, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def set_times(copy: Path) -> int:
    """Every file's mtime from times.tsv; returns how many files have none."""
    times = {}
    tsv = copy / "times.tsv"
    if tsv.is_file():
        for line in tsv.read_text(encoding="utf-8").splitlines():
            path, _, seconds = line.partition("\t")
            if seconds.strip():
                times[path] = int(seconds)
    untimed = 0
    for path in copy.rglob("*.md"):
        seconds = times.get(path.relative_to(copy).as_posix())
        if seconds is None:
            untimed += 1
        else:
            os.utime(path, (seconds, seconds))
    return untimed


def check_folder(folder: Path, before: dict[str, bytes], row: dict) -> dict:
    report = row.get("report") or {}
    actions = report.get("actions", [])
    retired = {a["path"] for a in actions if a["kind"] in RETIRE and not a.get("proposed")}
    result = {"folder": str(folder), "result": row["result"], "error": row.get("error"),
              "files": sum(1 for name in before if name.endswith(".md") and "/" not in name and name != "MEMORY.md"),
              "actions": [a for a in actions if a["kind"] != "index"], "review": report.get("review", []),
              "warnings": report.get("warnings", []),
              "refused": sum(1 for w in report.get("warnings", []) if "left untouched" in w)}
    index_now = (folder / "MEMORY.md").read_text(encoding="utf-8") if (folder / "MEMORY.md").exists() else ""
    overflow = folder / "MEMORY_overflow.md"
    kept = set(index_now.splitlines()) | (set(overflow.read_text(encoding="utf-8").splitlines())
                                          if overflow.exists() else set())
    lost_index = [line for line in before.get("MEMORY.md", b"").decode("utf-8").splitlines()
                  if line not in kept and not any(f"]({name}" in line for name in retired)]
    result["lost_index"] = lost_index
    original_index = set(before.get("MEMORY.md", b"").decode("utf-8").splitlines())
    result["index_added"] = [line for line in index_now.splitlines() if line not in original_index]
    every = set()
    for path in folder.rglob("*.md"):
        every.update(line.rstrip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    lost_keys, lost_lines, rewritten = [], [], []
    for name, data in before.items():
        if not name.endswith(".md") or name == "MEMORY.md" or "/" in name:
            continue
        front, body = split(data.decode("utf-8", errors="replace"))
        lost_lines += [f"{name}: {line!r}" for line in body if line.strip() and line.rstrip() not in every]
        now = folder / name
        if now.exists() and now.read_bytes() != data:
            rewritten.append(name)
            (top, nested), (top_now, nested_now) = keys(front), keys(split(now.read_text(encoding="utf-8"))[0])
            if not top <= top_now or not nested <= nested_now or (("type" in top) != ("type" in top_now)):
                lost_keys.append(f"{name}: {sorted(top)}/{sorted(nested)} -> {sorted(top_now)}/{sorted(nested_now)}")
    result.update(lost_keys=lost_keys, lost_lines=lost_lines, rewritten=rewritten)
    return result


def relearn(folder: Path, env: dict, count: int) -> list[str]:
    """An agent appending what it already knows: the first sentence of the body of `count` topic
    files (the first ones by name that have one), each as a log entry of the file's type. A
    dream should merge each into its file, which rewrites it: its frontmatter must keep its
    layout and every key."""
    code, out, _ = cli(env, "--root", str(folder), "list", "--json")
    appended = []
    for memory in (json.loads(out) if code == 0 else []):
        if len(appended) >= count:
            break
        _, body = split((folder / memory["path"]).read_text(encoding="utf-8"))
        sentence = next((line.strip() for line in body if len(line.strip()) > 40
                         and not line.lstrip().startswith(("#", "-", "*", "|", ">", "`"))
                         and not line.lstrip()[:1].isdigit()), None)  # a paragraph, not a list item
        if sentence and cli(env, "--root", str(folder), "append", "--type", memory["type"], sentence)[0] == 0:
            appended.append(f"{memory['path']}: {sentence}")
    return appended


def marked_memories(folder: Path, env: dict) -> dict[str, dict]:
    """The memories `list --json` says a person marked (deprecated, superseded…), with what marks them."""
    code, out, _ = cli(env, "--root", str(folder), "list", "--json")
    return {memory["path"]: memory["status"] for memory in (json.loads(out) if code == 0 else [])
            if memory.get("status")}


def bench_repository(data_repo: Path, work: Path, env: dict, relearn_count: int) -> list[dict]:
    copy = work / data_repo.name
    shutil.copytree(data_repo, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    untimed = set_times(copy)
    code, out, err = cli(env, "discover", str(copy), "--json")
    folders = [Path(found["path"]) for found in json.loads(out)] if code == 0 else []
    before = {folder: snapshot(folder) for folder in folders}
    marked = {folder: marked_memories(folder, env) for folder in folders}
    relearned = {folder: relearn(folder, env, relearn_count) for folder in folders}
    code, out, err = cli(env, "dream", "--all", str(copy), "--no-llm", "--json")
    rows = {row["path"]: row for row in json.loads(out)["folders"]} if out.strip() else {}
    results = []
    for folder in folders:
        row = rows.get(str(folder), {"result": "missing", "error": err.strip()})
        result = check_folder(folder, before[folder], row)
        result["untimed"] = untimed
        result["relearned"] = relearned[folder]
        result["marked"] = marked[folder]
        result["marked_added"] = [line for line in result["index_added"]
                                  if any(f"]({path})" in line for path in marked[folder])]
        results.append(result)
    code2, out2, _ = cli(env, "dream", "--all", str(copy), "--no-llm", "--json")  # nothing left to do
    second = {row["path"]: row for row in json.loads(out2)["folders"]} if out2.strip() else {}
    for result in results:
        again = (second.get(result["folder"]) or {}).get("report") or {}
        result["second"] = [a for a in again.get("actions", [])]
        if result["result"] == "dreamed":  # two runs to undo when the second one did something
            for _ in range(2 if result["second"] else 1):
                cli(env, "--root", result["folder"], "undo")
        after = snapshot(Path(result["folder"]))
        original = before[Path(result["folder"])]
        result["undo_diff"] = sorted(name for name in original.keys() | after.keys()
                                     if original.get(name) != after.get(name))
        result["folder"] = str(Path(result["folder"]).relative_to(work))
    return results


def show(result: dict) -> None:
    print(f"\n=== {result['folder']}  ({result['files']} topic files, {result['result']})")
    if result["error"]:
        print(f"  ERROR {result['error']}")
    for warning in result["warnings"]:
        print(f"  warning: {warning}")
    for entry in result["relearned"]:
        print(f"  appended (already known): {entry}")
    for path, status in result["marked"].items():
        pointer = f" -> {', '.join(status['points_to'])}" if status["points_to"] else ""
        print(f"  MARKED {status['kind']}: {path}{pointer}\n      {status['quote']}")
    for action in result["actions"]:
        target = f" -> {action['target']}" if action.get("target") else ""
        print(f"  {action['kind'].upper()}{' (proposed)' if action.get('proposed') else ''}: {action['path']}{target}\n"
              f"      {action['reason']}")
    for item in result["review"]:
        print(f"  REVIEW {item.get('kind')}: {item.get('path')} <-> {item.get('target')}\n      {item.get('evidence')}")
        for quote in item.get("quotes") or ():
            if quote:
                print(f"      > {quote}")
    for name in result["rewritten"]:
        print(f"  rewritten: {name}")
    for line in result["index_added"]:
        print(f"  MEMORY.md gains: {line}")
    for label in ("marked_added", "lost_index", "lost_keys", "lost_lines", "undo_diff"):
        for item in result[label]:
            print(f"  {label.upper()}: {item}")
    if result["second"]:
        print("  second dream: " + "; ".join(f"{a['kind']} {a['path']}" for a in result["second"]))


def reader_pairs(results: list[dict]) -> list[str]:
    """What became of each pair a reader sees (READER_PAIRS): acted on, listed (with its kind), or missed."""
    found = []
    for folder, one, other, kind in READER_PAIRS:
        result = next((r for r in results if r["folder"] == folder), None)
        if result is None:
            continue
        names = {one, other}
        acted = [a for a in result["actions"] if a["kind"] in RETIRE and {a["path"], a.get("target")} == names]
        listed = [i for i in result["review"] if {i["path"], i["target"]} == names]
        said = (f"{acted[0]['kind']}" if acted else f"listed as {listed[0]['kind']}" if listed else "MISSED")
        found.append(f"{folder}: {one} / {other} ({kind}): {said}")
    return found


def counts(results: list[dict]) -> dict[str, int]:
    """How many of each thing a reader has to judge: review items by kind, memory-to-memory and
    entry-to-memory actions by kind."""
    found: dict[str, int] = {}
    for result in results:
        for item in result["review"]:
            found[f"review {item['kind']}"] = found.get(f"review {item['kind']}", 0) + 1
        for action in result["actions"]:
            source = "entry" if action["path"].startswith("logs/") else "memory"
            key = f"{action['kind']} ({source})"
            found[key] = found.get(key, 0) + 1
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="root of the real memory folders")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    parser.add_argument("--json", action="store_true", help="print everything as one JSON document")
    parser.add_argument("--relearn", type=int, default=3, metavar="N",
                        help="append the first sentence of N topic files per folder before dreaming (default 3)")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    if not data.is_dir():
        sys.exit(f"no data at {data}")
    work = Path(tempfile.mkdtemp(prefix="bench-real-folders-"))
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")
           and k not in ("AUTO_DREAM_ROOT", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR")}
    env["HOME"] = str(home)
    source = Path(__file__).resolve().parent.parent / "src"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    try:
        results = [r for repo in sorted(p for p in data.iterdir() if p.is_dir())
                   for r in bench_repository(repo, work, env, args.relearn)]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    counted = ("files", "index +", "marked", "created", "merges", "supersedes", "archives", "review", "refused",
               "marked +", "lost_index", "lost_keys", "lost_lines", "second", "undo_diff")
    rows = []
    for r in results:
        kinds = [a["kind"] for a in r["actions"]]
        rows.append({"folder": r["folder"], "files": r["files"], "index +": len(r["index_added"]),
                     "marked": len(r["marked"]), "marked +": len(r["marked_added"]),
                     "created": kinds.count("create"), "merges": kinds.count("merge"),
                     "supersedes": kinds.count("supersede"),
                     "archives": kinds.count("archive"), "review": len(r["review"]), "refused": r["refused"],
                     **{k: len(r[k]) for k in ("lost_index", "lost_keys", "lost_lines", "second", "undo_diff")}})
    totals = {k: sum(row[k] for row in rows) for k in counted}
    totals["folders"] = len(rows)
    totals["errors"] = sum(1 for r in results if r["error"] or r["result"] != "dreamed")
    if args.json:
        print(json.dumps({"data": str(data), "folders": results, "summary": rows, "totals": totals,
                          "counts": counts(results), "reader_pairs": reader_pairs(results)},
                         ensure_ascii=False, indent=2))
        return
    for result in results:
        show(result)
    width = max(len(r["folder"]) for r in rows + [{"folder": "total"}])
    short = {"lost_index": "lost idx", "lost_keys": "lost keys", "lost_lines": "lost lines", "undo_diff": "undo diff"}
    print(f"\n{'folder':<{width}}  " + " ".join(f"{short.get(h, h):>10}" for h in counted))
    for row in rows + [{"folder": "total", **totals}]:
        print(f"{row['folder']:<{width}}  " + " ".join(f"{row[h]!s:>10}" for h in counted))
    print(f"({totals['folders']} folders, {totals['errors']} not dreamed. Every column from `refused` on must be 0.)")
    print("\nFor a reader to judge: " + ", ".join(f"{n} {kind}" for kind, n in counts(results).items()))
    print("Pairs a reader sees (the data's README):")
    for line in reader_pairs(results):
        print(f"  {line}")
    if args.keep:
        print(f"copies kept in {work}")


if __name__ == "__main__":
    main()
