"""`context`: MEMORY.md as a session starts with it, on both layouts, within Claude Code's caps."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from auto_dream.commands.session_context import HOOK_OUTPUT_CHARS, session_context
from conftest import write_memory_file


def js_length(text: str) -> int:
    """Length as JavaScript (Claude Code) counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def memory_lines(output: str) -> list[str]:
    """The MEMORY.md lines of `context`'s output: between the first line and a cut note."""
    return [line for line in output.splitlines()[1:] if not line.startswith("[auto-dream: MEMORY.md is cut")]


def test_a_native_store_gives_its_memory_md_after_a_line_naming_the_store(cli, tmp_path):
    root = tmp_path / "p" / ".auto-dream"
    assert cli("init", tmp_path / "p").code == 0
    assert cli("--root", root, "append", "-t", "user", "The user writes Go").code == 0
    assert cli("--root", root, "dream").code == 0
    done = cli("--root", root, "context")
    assert done.code == 0 and done.err == ""
    assert done.out.splitlines()[0] == (f"auto-dream memory: MEMORY.md of the store at {root} "
                                        "(its links are relative to that folder)")
    assert done.out.split("\n", 1)[1] == (root / "MEMORY.md").read_text()
    assert "[The user writes Go](memories/user/" in done.out


def test_a_claude_code_memory_folder_gives_its_memory_md(cli, tmp_path):
    folder = tmp_path / "repo" / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md",
                      "# Memory\n\n- [Testing](feedback_testing.md) — no mocks\n- Deploys on Friday\n")
    write_memory_file(folder, "feedback_testing.md", "---\nname: Testing\ntype: feedback\n---\nNo mocks.\n")
    done = cli("--root", folder, "context")
    assert done.code == 0
    assert memory_lines(done.out) == ["# Memory", "", "- [Testing](feedback_testing.md) — no mocks",
                                      "- Deploys on Friday"]
    assert f"the store at {folder}" in done.out


@pytest.mark.parametrize("make", ["nothing", "empty folder", "store without MEMORY.md", "blank MEMORY.md"])
def test_no_store_or_no_memory_md_prints_nothing_and_succeeds(cli, tmp_path, make):
    root = tmp_path / "store"
    if make != "nothing":
        root.mkdir()
    if make == "store without MEMORY.md":
        (root / "memories").mkdir()
        (root / "logs").mkdir()
    if make == "blank MEMORY.md":
        (root / "MEMORY.md").write_text("\n\n")
    done = cli("--root", root, "context")
    assert (done.code, done.out, done.err) == (0, "", "")


def test_a_memory_md_over_200_lines_is_cut_and_says_where(cli, tmp_path):
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md", "".join(f"- fact {n}\n" for n in range(1, 301)))
    done = cli("--root", folder, "context")
    assert done.code == 0
    lines = memory_lines(done.out)
    assert len(lines) == 200 and lines[-1] == "- fact 200"
    assert done.out.endswith(f"[auto-dream: MEMORY.md is cut here, after line 200 of 300, to fit what a session "
                             f"start takes in; the rest is in {folder / 'MEMORY.md'}]\n")


@pytest.mark.parametrize("line", ["- a fact in plain words, long enough to matter " * 2,
                                  "- 用户想通过内容平台分享知识，每周读完一本书，" * 3,
                                  "- 🚀 deploys on Friday 🚀 " * 4])
def test_output_stays_within_claude_codes_10000_characters(cli, tmp_path, line):
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md", (line.rstrip() + "\n") * 180)
    done = cli("--root", folder, "context")
    assert js_length(done.out) <= HOOK_OUTPUT_CHARS  # emoji count twice, as JavaScript counts them
    assert len(memory_lines(done.out)) < 180
    assert all(shown == line.rstrip() for shown in memory_lines(done.out))  # whole lines only
    assert "is cut here, after line" in done.out.splitlines()[-1]
    assert len("".join(memory_lines(done.out)).encode()) <= 25_000


def test_a_single_line_longer_than_the_cap_is_cut_inside_it(tmp_path):
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md", "- " + "x" * 30_000 + "\n- next\n")
    found = session_context(folder)
    assert found is not None and js_length(found.text) <= HOOK_OUTPUT_CHARS
    assert "…\n[auto-dream: MEMORY.md is cut here, in line 1 of 2" in found.text


def test_output_never_starts_like_json(tmp_path):
    """Claude Code reads hook output that starts with `{` as JSON."""
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md", '{"not": "json to Claude Code"}\n')
    found = session_context(folder)
    assert found is not None and not found.text.lstrip().startswith("{")


def test_a_memory_md_that_is_a_symlink_is_one_error_line(cli, tmp_path):
    folder = tmp_path / ".claude" / "memory"
    write_memory_file(folder, "notes.md", "secret\n")
    (folder / "MEMORY.md").symlink_to(Path("/etc/hostname"))
    done = cli("--root", folder, "context")
    assert done.code == 1 and done.out == "" and done.err.count("\n") == 1


def test_a_store_path_that_is_not_utf8_is_no_traceback(cli, tmp_path):
    """A folder named with bytes that are not UTF-8 (os.fsdecode's lone surrogates) is counted, not a crash."""
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9")) / ".claude" / "memory"
    write_memory_file(folder, "MEMORY.md", "- Deploys on Friday\n")
    found = session_context(folder)
    assert found is not None and found.text.startswith(f"auto-dream memory: MEMORY.md of the store at {folder} ")
    assert memory_lines(found.text) == ["- Deploys on Friday"]


def test_only_newlines_end_lines_so_memory_md_is_printed_as_it_is(tmp_path):
    """A form feed, a lone CR or U+2028 inside a line (pasted text) is part of the line, as it is
    for Claude Code's 200-line count: the output adds no line break and counts no extra line."""
    folder = tmp_path / ".claude" / "memory"
    index = "# Memory\n- a\x0cb\n- c\u2028d\n- e\rf\x1cg\x85h\n"
    write_memory_file(folder, "MEMORY.md", index)
    found = session_context(folder)
    assert found is not None and found.text.split("\n", 1)[1] == index
    assert (found.lines_shown, found.lines_total) == (4, 4)


# ---------------------------------------------------------------- the fast path (__main__), what the hooks run


def quick(capsys, *argv: str) -> tuple[int, str, str]:
    """A `context` line run by __main__'s fast path, as a hook runs it: (exit code, stdout, stderr)."""
    from auto_dream.__main__ import quick_context_arguments, run_quick_context

    found = quick_context_arguments(list(argv))
    assert found is not None, argv
    capsys.readouterr()
    code = run_quick_context(found)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("flags", [(), ("--json",), ("--cursor-json",), ("--json", "--cursor-json")])
@pytest.mark.parametrize("store", ["a dreamed store", "no store", "a MEMORY.md that is a link"])
def test_the_fast_path_prints_what_the_typer_command_prints(cli, capsys, tmp_path, flags, store):
    root = tmp_path / "p" / ".auto-dream"
    if store == "a MEMORY.md that is a link":  # one error line, the same exit code
        assert cli("init", tmp_path / "p").code == 0
        (tmp_path / "elsewhere.md").write_text("- a line\n", encoding="utf-8")
        (root / "MEMORY.md").unlink()
        (root / "MEMORY.md").symlink_to(tmp_path / "elsewhere.md")
    if store == "a dreamed store":
        assert cli("init", tmp_path / "p").code == 0
        assert cli("--root", root, "append", "-t", "user", "The user writes Go").code == 0
        assert cli("--root", root, "append", "The deploy is on Friday").code == 0
        assert cli("--root", root, "dream").code == 0
        assert cli("--root", root, "append", "Staging resets on Sunday").code == 0  # pending: listed after MEMORY.md
    typer_run = cli("--root", root, "context", *flags)
    assert quick(capsys, "--root", str(root), "context", *flags) == (typer_run.code, typer_run.out, typer_run.err)
    if store == "a dreamed store" and len(flags) == 1:
        assert "The user writes Go" in typer_run.out and "Staging resets on Sunday" in typer_run.out


def test_a_context_line_the_fast_path_does_not_know_goes_to_typer():
    from auto_dream.__main__ import quick_context_arguments

    assert quick_context_arguments(["context", "--help"]) is None
    assert quick_context_arguments(["context", "extra"]) is None
    assert quick_context_arguments(["recall", "x"]) is None
    assert quick_context_arguments(["--root", "r", "context", "--cursor-json"]) == \
        {"root": "r", "as_json": False, "cursor_json": True}


QUICK_CONTEXT_CHILD = """
import sys
from auto_dream.__main__ import _run
code = _run(["--root", sys.argv[1], "context"])
heavy = ("typer", "rich", "click", "pydantic", "anthropic", "mcp", "auto_dream.cli", "auto_dream.dream", "yaml",
         "frontmatter", "auto_dream.store.memory")
print(code, sorted(m for m in sys.modules if m.startswith(heavy)))
"""


@pytest.mark.slow  # starts a child Python
def test_a_session_starts_without_loading_typer(cli, tmp_path):
    """The session-start hooks run `context` before every session: it is answered without the
    command-line framework (Typer, Rich, Click and the pydantic Typer brings), half its time, and,
    with no review item waiting, without the memory reader and YAML."""
    root = tmp_path / "p" / ".auto-dream"
    assert cli("init", tmp_path / "p").code == 0
    assert cli("--root", root, "append", "-t", "user", "The user writes Go").code == 0
    assert cli("--root", root, "dream").code == 0
    done = subprocess.run([sys.executable, "-c", QUICK_CONTEXT_CHILD, str(root)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "The user writes Go" in done.stdout
    assert done.stdout.splitlines()[-1] == "0 []"
