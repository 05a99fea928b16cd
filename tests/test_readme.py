"""The README's "Use it from Python" example runs as written and prints what the README says."""

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_section() -> tuple[str, str]:
    """The section's first ```python block and the ```text block that shows its output."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    printed = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and printed, "the section lost its example or its output"
    return code.group(1), printed.group(1)


def test_the_python_example_prints_what_the_readme_shows(tmp_path):
    code, printed = python_section()
    home, temporary = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(exist_ok=True)
    temporary.mkdir()
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AUTO_DREAM_", "ANTHROPIC_", "XDG_"))}
    env.update(HOME=str(home), TMPDIR=str(temporary))
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == printed
    assert list(temporary.iterdir()) == []  # its store was in the temporary folder, now removed
    assert not (home / ".auto-dream").exists()


def test_the_python_section_comes_after_the_command_line_and_the_first_commands_stay_first():
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in first_block[:2]] == [["make", "run"], ["make", "test"]]
    assert text.index("\n## Commands\n") < text.index("\n## Use it from Python\n")
