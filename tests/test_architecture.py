"""The layers and the style rules of CONTRIBUTING.md, checked on the source.

import-linter checks the contracts in pyproject.toml's [tool.importlinter] (the contract types:
https://import-linter.readthedocs.io/en/stable/contract_types.html); an AST scan checks rule 1,
"the core never prints, reads the environment or exits", which is about calls, not imports.
"""

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "src" / "auto_dream"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
CONTRACTS = {contract["id"]: contract["name"] for contract in
             tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
CORE = ("commands", "dream", "distill", "store", "judge")
CORE_MODULES = ("errors.py", "progress.py")  # the core's modules beside its folders


def lint_imports(project: Path) -> tuple[int, dict[str, str], str]:
    """Run `lint-imports` with `project`'s pyproject.toml on the auto_dream in `project`/src.

    Returns the exit code, each contract's verdict by id (KEPT or BROKEN) and the output.
    """
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", str(project / "pyproject.toml")],
                          cwd=project, env={**os.environ, "PYTHONPATH": str(project / "src")},
                          capture_output=True, text=True, timeout=120)
    output = " ".join(done.stdout.split())  # a contract's name wraps at the terminal's width
    verdicts = {}
    for contract_id, name in CONTRACTS.items():
        for verdict in ("KEPT", "BROKEN"):
            if f"{name} {verdict}" in output:
                verdicts[contract_id] = verdict
    return done.returncode, verdicts, done.stdout + done.stderr


@pytest.mark.slow  # runs lint-imports
def test_the_package_keeps_every_import_contract():
    code, verdicts, output = lint_imports(REPO)
    assert verdicts == dict.fromkeys(CONTRACTS, "KEPT"), output
    assert code == 0, output


BREACHES = {
    "the store imports Typer": (
        "store/paths.py", "import typer", {"ui-only-in-interface", "core-without-ui"},
        "auto_dream.store.paths -> typer"),
    "a command prints with Rich": (
        "commands/check.py", "from rich.console import Console", {"ui-only-in-interface", "core-without-ui"},
        "auto_dream.commands.check -> rich"),
    "the judge imports the CLI": (
        "judge/similarity.py", "from auto_dream.cli import run", {"layers", "core-without-ui"},
        "auto_dream.judge.similarity -> auto_dream.cli"),
    "the store imports a dream phase": (
        "store/memory.py", "from auto_dream.dream.plan import Plan", {"layers"},
        "auto_dream.store.memory -> auto_dream.dream.plan"),
    "a dream phase imports anthropic": (
        "dream/runner.py", "import anthropic", {"anthropic-only-in-claude"}, "auto_dream.dream.runner -> anthropic"),
    "a command imports the MCP SDK": (
        "commands/recall.py", "import mcp", {"mcp-only-in-server"}, "auto_dream.commands.recall -> mcp"),
    "the store imports the library API": (
        "store/config.py", "from auto_dream import __version__", {"core-below-api"},
        "auto_dream.store.config -> auto_dream"),
    "two judge modules import each other": (
        "judge/similarity.py", "import auto_dream.judge.pairs", {"acyclic"}, ".similarity -> .pairs"),
}


@pytest.mark.slow  # runs lint-imports
@pytest.mark.parametrize("module, line, broken, named", BREACHES.values(), ids=BREACHES.keys())
def test_a_forbidden_import_breaks_the_contract_it_names(tmp_path, module, line, broken, named):
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(PACKAGE, tmp_path / "src" / "auto_dream", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "src" / "auto_dream" / module, "a") as source:
        source.write(f"\n{line}\n")
    code, verdicts, output = lint_imports(tmp_path)
    assert {cid for cid, verdict in verdicts.items() if verdict == "BROKEN"} >= broken, output
    assert named in output
    assert code == 1, output


# Style rule 1 (CONTRIBUTING.md): what the core may not touch. Names are resolved through the module's imports,
# so `from os import environ` and `import sys as system; system.exit()` are found too.
PROCESS_BUILTINS = {"print", "input", "exit", "quit"}
PROCESS_ATTRIBUTES = {
    "os.environ", "os.environb", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv", "os._exit",
    "sys.exit", "sys.stdin", "sys.stdout", "sys.stderr", "sys.__stdin__", "sys.__stdout__", "sys.__stderr__",
}


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def process_touches(source: str) -> list[tuple[int, str]]:
    """Where `source` prints, reads input or the environment, or exits: (line, what)."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({alias.asname: alias.name for alias in node.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in PROCESS_ATTRIBUTES:
                    found.add((node.lineno, f"{node.module}.{alias.name}"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in PROCESS_BUILTINS and node.func.id not in aliases):
            found.add((node.lineno, f"{node.func.id}()"))
        elif isinstance(node, (ast.Attribute, ast.Name)) and (name := _dotted(node, aliases)) in PROCESS_ATTRIBUTES:
            found.add((node.lineno, name))
    return sorted(found)


def test_the_core_never_prints_reads_the_environment_or_exits():
    modules = [*(path for layer in CORE for path in sorted((PACKAGE / layer).rglob("*.py"))),
               *(PACKAGE / name for name in CORE_MODULES)]
    touches = [f"{path.relative_to(PACKAGE)}:{line}: {what}"
               for path in modules for line, what in process_touches(path.read_text())]
    assert touches == [], "\n".join(touches)


def test_the_rule_one_scan_finds_each_way_of_touching_the_process():
    source = """
import os
import sys as system
from os import environ, getenv as env
from sys import stdout

def f(console, log):
    print("hi")
    name = input()
    key = os.environ["KEY"]
    home = os.environ.get("HOME")
    token = env("TOKEN")
    other = environ["OTHER"]
    system.stderr.write("oops")
    stdout.flush()
    text = system.stdin.read()
    os._exit(3)
    system.exit(1)
    exit(2)
    console.print("fine")  # a method named print is not the builtin
    log.exit()
    return os.path.join("a", "b"), system.intern("x")
"""
    assert process_touches(source) == [
        (4, "os.environ"), (4, "os.getenv"), (5, "sys.stdout"), (8, "print()"), (9, "input()"),
        (10, "os.environ"), (11, "os.environ"), (12, "os.getenv"), (13, "os.environ"), (14, "sys.stderr"),
        (15, "sys.stdout"), (16, "sys.stdin"), (17, "os._exit"), (18, "sys.exit"), (19, "exit()"),
    ]
