"""A flag is passed by name: no function of auto-dream takes a boolean positionally, except those
a framework calls by parameter name (Typer's commands, the MCP server's tools: decorated)."""

import ast
from pathlib import Path

import auto_dream

SOURCE = Path(auto_dream.__file__).parent


def _positional_flags(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.decorator_list:
            continue
        positional = [*node.args.posonlyargs, *node.args.args]
        defaults = [None] * (len(positional) - len(node.args.defaults)) + list(node.args.defaults)
        for argument, default in zip(positional, defaults):
            annotation = ast.unparse(argument.annotation) if argument.annotation else ""
            if annotation in ("bool", "bool | None") or (
                    isinstance(default, ast.Constant) and isinstance(default.value, bool)):
                found.append(f"{node.name}({argument.arg})")
    return found


def test_no_function_takes_a_flag_positionally():
    found = {str(path.relative_to(SOURCE)): flags for path in sorted(SOURCE.rglob("*.py"))
             if (flags := _positional_flags(ast.parse(path.read_text(encoding="utf-8"))))}
    assert found == {}


def test_the_check_sees_a_positional_flag():
    assert _positional_flags(ast.parse("def f(path, archived: bool = False): ...")) == ["f(archived)"]
    assert _positional_flags(ast.parse("def f(path, *, archived: bool = False): ...")) == []
