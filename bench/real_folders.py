"""What `dream --no-llm` decides on real Claude Code memory folders, for a person to judge.

The data (../shared/data/claude-memory, see its README.md; read where it lies, never
copied into this repository) holds memory folders that Claude Code wrote in public
repositories. Every folder under it that holds a topic file (a .md other than MEMORY.md)
is dreamed on its own, in a fresh native store in a temporary folder: each topic file is
copied byte for byte to memories/<type>/<same name> (type from the frontmatter's `type:`
or `metadata: {type: …}`, read with a regex since some real files are not valid YAML;
"project" when missing or unknown), its mtime set from the repository's times.tsv. Then
the real CLI runs in a subprocess, `python -m auto_dream --root STORE dream --no-llm
--json`, with HOME in the temporary folder and no API key, twice.

Printed per folder: the memory files and how many the report names as unreadable; every
merge, supersede and archive with its full reason; every item of the report's `review`
list with its evidence; how many actions the second dream plans (must be 0); and the loss
check: every non-empty body line of every original file must still be a line of some .md
under memories/ or archive/, and its frontmatter name:/description: lines must still be
in its own file, live or archived. Lost lines are printed (must be none). Then a summary.

    .venv/bin/python bench/real_folders.py [--data ../shared/data/claude-memory] [--keep] [--json]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import auto_dream  # noqa: F401
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from auto_dream.store.paths import ensure_store  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "claude-memory"  # ../shared
TYPES = ("user", "feedback", "project", "reference")
RETIRE = ("merge", "supersede", "archive")
PLANNING = ("merge", "supersede", "archive", "create")
TYPE_LINE = re.compile(r"""^(\s*)type:\s*["']?([A-Za-z]+)["']?\s*(#.*)?$""")


def split(text: str) -> tuple[list[str], list[str]]:
    """(frontmatter lines, body lines); no frontmatter when the file does not open with ---."""
    lines = text.lstrip("\ufeff").splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return lines[1:i], lines[i + 1:]
    return [], lines


def memory_type(front: list[str]) -> str:
    in_metadata = False
    for line in front:
        if line and not line[0].isspace():
            in_metadata = line.startswith("metadata:")
        match = TYPE_LINE.match(line)
        if match and (not match.group(1) or in_metadata):
            kind = match.group(2).lower()
            return kind if kind in TYPES else "project"
    return "project"


def find_folders(data: Path) -> list[Path]:
    found = []
    for here, dirs, files in os.walk(data):
        dirs.sort()
        if Path(here) != data and any(f.endswith(".md") and f != "MEMORY.md" for f in files):
            found.append(Path(here))
    return found


def read_times(data: Path, folder: Path) -> dict[str, int]:
    top = data / folder.relative_to(data).parts[0]
    times = {}
    tsv = top / "times.tsv"
    if tsv.is_file():
        for line in tsv.read_text(encoding="utf-8").splitlines():
            path, _, seconds = line.partition("\t")
            if seconds.strip():
                times[str(top / path)] = int(seconds)
    return times


def run_dream(store: Path, env: dict) -> tuple[dict | None, str]:
    command = [sys.executable, "-m", "auto_dream", "--root", str(store), "dream", "--no-llm", "--json"]
    done = subprocess.run(command, env=env, cwd=store.parent, capture_output=True, text=True)
    if done.returncode != 0:
        return None, f"exit {done.returncode}: {done.stderr.strip()}"
    try:
        return json.loads(done.stdout), ""
    except json.JSONDecodeError as error:
        return None, f"stdout is not JSON ({error}): {done.stdout[:200]!r}"


def md_texts(store: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8", errors="replace")
            for sub in ("memories", "archive") for p in (store / sub).rglob("*.md")}


def own_files(texts: dict[Path, str], store: Path, name: str) -> list[str]:
    """The texts of the file's live copy and its archived copies (numbered _2, _3… on a clash)."""
    stem = re.escape(name.removesuffix(".md"))
    pattern = re.compile(rf"{stem}(_\d+)?\.md")
    return [text for p, text in texts.items()
            if p.name == name or (p.parent.parent == store / "archive" and pattern.fullmatch(p.name))]


def lost_lines(originals: list[Path], store: Path) -> list[dict]:
    texts = md_texts(store)
    everywhere = {line.rstrip() for text in texts.values() for line in text.splitlines()}
    lost = []
    for source in originals:
        front, body = split(source.read_text(encoding="utf-8", errors="replace"))
        for line in body:
            if line.strip() and line.rstrip() not in everywhere:
                lost.append({"file": source.name, "line": line})
        own = {line.rstrip() for text in own_files(texts, store, source.name) for line in text.splitlines()}
        for line in front:
            if line.startswith(("name:", "description:")) and line.rstrip() not in own:
                lost.append({"file": source.name, "line": line, "frontmatter": True})
    return lost


def bench_folder(data: Path, folder: Path, work: Path, number: int, env: dict) -> dict:
    name = str(folder.relative_to(data))
    store = work / f"{number:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', name).strip('_')}" / ".auto-dream"
    ensure_store(store)
    times = read_times(data, folder)
    originals = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".md" and p.name != "MEMORY.md")
    for source in originals:
        front, _ = split(source.read_text(encoding="utf-8", errors="replace"))
        target = store / "memories" / memory_type(front) / source.name
        shutil.copyfile(source, target)
        if str(source) in times:
            os.utime(target, (times[str(source)], times[str(source)]))
    result = {"folder": name, "store": str(store), "files": len(originals), "untimed": sum(
        str(p) not in times for p in originals), "error": None}
    report, error = run_dream(store, env)
    if report is None:
        return {**result, "error": f"first dream: {error}"}
    warnings = report.get("warnings", [])
    named = lambda w: {p.name for p in originals if f"/{p.name}:" in w}  # noqa: E731
    result["warnings"] = warnings
    result["warned"] = len(set().union(*(named(w) for w in warnings)))
    result["unreadable"] = len(set().union(*(named(w) for w in warnings if "left untouched" in w)))
    result["readable"] = result["files"] - result["unreadable"]
    actions = report.get("actions", [])
    result["actions"] = [a for a in actions if a["kind"] in RETIRE]
    result["review"] = report.get("review", [])
    result["counts"] = {k: sum(a["kind"] == k for a in actions) for k in (*RETIRE, "create", "index")}
    result["lost"] = lost_lines(originals, store)
    second, error = run_dream(store, env)
    if second is None:
        return {**result, "error": f"second dream: {error}"}
    result["second"] = [a for a in second.get("actions", []) if a["kind"] in PLANNING]
    return result


def show(result: dict) -> None:
    print(f"\n=== {result['folder']}")
    if result["error"] and "warnings" not in result:
        print(f"  CRASH {result['error']}")
        return
    print(f"  {result['files']} memory files, {result['readable']} readable "
          f"({result['warned']} named in warnings, {result['untimed']} without a commit time)")
    for warning in result["warnings"]:
        print(f"  warning: {warning}")
    counts = result["counts"]
    print(f"  actions: {counts['create']} create, {counts['index']} index (not listed)")
    for action in result["actions"]:
        print(f"  {action['kind'].upper()}{' (proposed)' if action.get('proposed') else ''}: "
              f"{action['path']} -> {action['target']}\n      {action['reason']}")
    for item in result["review"]:
        print(f"  REVIEW {item.get('kind')}: {item.get('path')} <-> {item.get('target')}\n"
              f"      {item.get('evidence')}")
    for lost in result["lost"]:
        print(f"  LOST {'frontmatter ' if lost.get('frontmatter') else ''}line of {lost['file']}: {lost['line']!r}")
    if result["error"]:
        print(f"  CRASH {result['error']}")
    else:
        second = result["second"]
        print(f"  second dream plans {len(second)} actions" + "".join(
            f"\n    {a['kind']}: {a['path']} -> {a['target']}: {a['reason']}" for a in second))


def row(result: dict) -> dict:
    counts = result.get("counts", {})
    return {"folder": result["folder"], "files": result["files"], "merges": counts.get("merge", 0),
            "supersedes": counts.get("supersede", 0), "archives": counts.get("archive", 0),
            "review": len(result.get("review", [])),
            "second": len(result["second"]) if "second" in result else "crash",
            "lost": len(result.get("lost", []))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="root of the real memory folders")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    parser.add_argument("--json", action="store_true", help="print everything as one JSON document")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    if not data.is_dir():
        sys.exit(f"no data at {data}")
    work = Path(tempfile.mkdtemp(prefix="bench-real-folders-"))
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")
           and k not in ("AUTO_DREAM_ROOT", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    env["HOME"] = str(home)
    source = Path(__file__).resolve().parent.parent / "src"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    try:
        results = [bench_folder(data, folder, work, n, env) for n, folder in enumerate(find_folders(data), 1)]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    rows = [row(r) for r in results]
    numeric = ("files", "merges", "supersedes", "archives", "review", "lost")
    totals = {k: sum(r[k] for r in rows) for k in numeric}
    totals["second"] = sum(r["second"] for r in rows if r["second"] != "crash")
    totals["crashes"] = sum(r["error"] is not None for r in results)
    if args.json:
        print(json.dumps({"data": str(data), "kept": str(work) if args.keep else None,
                          "folders": results, "summary": rows, "totals": totals}, ensure_ascii=False, indent=2))
        return
    for result in results:
        show(result)
    width = max(len(r["folder"]) for r in rows + [{"folder": "total"}])
    heads = ("files", "merges", "supersedes", "archives", "review", "second", "lost")
    print(f"\n{'folder':<{width}}  " + "  ".join(f"{h:>10}" for h in heads))
    for r in rows + [{"folder": "total", **totals}]:
        print(f"{r['folder']:<{width}}  " + "  ".join(f"{r[h]!s:>10}" for h in heads))
    print("(second = merge/supersede/archive/create actions the second dream plans; must be 0. "
          f"lost = lines lost; must be 0. crashes: {totals['crashes']})")
    if args.keep:
        print(f"stores kept in {work}")


if __name__ == "__main__":
    main()
