"""The README's commands run top to bottom, and the Python example (docs/python-api.md, moved there from the
README) runs as written and prints what the doc says."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
PYTHON_API = README.parent / "docs" / "python-api.md"


def python_section() -> tuple[str, str]:
    """The section's first ```python block and the ```text block that shows its output."""
    section = PYTHON_API.read_text(encoding="utf-8").split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    printed = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and printed, "the section lost its example or its output"
    return code.group(1), printed.group(1)


@pytest.mark.slow  # starts a child Python
def test_the_python_example_prints_what_the_doc_shows(tmp_path):
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


def test_the_commands_and_the_python_doc_are_linked_and_the_first_commands_stay_first():
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in first_block[:2]] == [["make", "run"], ["make", "test"]]
    assert "\n## Commands\n" in text and "](docs/python-api.md)" in text


def sh_blocks(section: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", body, re.S)


@pytest.mark.slow
def test_a_day_of_use_runs_after_the_install_step_the_readme_gives(tmp_path):
    """`auto-dream: command not found` right after `make run`. The README's install section gives
    the virtualenv way (`source .venv/bin/activate`); with it, every command of "A day of use" runs, in a
    clean environment whose PATH has no auto-dream and whose HOME is in tmp_path."""
    install = [line.split("#", 1)[0].strip()
               for block in sh_blocks("Install the command") for line in block.splitlines()]
    assert "pipx install ." in install and "source .venv/bin/activate" in install
    day = sh_blocks("A day of use")[0]
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir()
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AUTO_DREAM_", "ANTHROPIC_", "XDG_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), PATH="/usr/bin:/bin", LC_ALL="C.UTF-8")
    missing = subprocess.run(["bash", "-c", "auto-dream --help"], cwd=project, env=env, capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode == 127  # the bug's "command not found", before the install step
    venv = Path(sys.prefix)  # the .venv `make run` / `make test` made
    assert (venv / "bin" / "activate").is_file() and (venv / "bin" / "auto-dream").is_file()
    script = f"set -e\nsource {venv}/bin/activate\n{day}"
    done = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (project / ".auto-dream" / "MEMORY.md").is_file()
    assert not (home / ".auto-dream").exists()


def test_the_install_section_comes_right_after_the_first_two_commands():
    text = README.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:2] == ["Install the command", "A day of use"]


@pytest.mark.slow
def test_the_readme_from_the_top_in_a_fresh_clone(tmp_path):
    """The README followed top to bottom on a fresh clone: its first command, `make run`, makes a
    new .venv and dreams over the example; the install section's venv way puts `auto-dream` on the
    PATH; every command of "A day of use" then runs — HOME in tmp_path, no auto-dream anywhere before."""
    repo = README.parent
    if not (repo / ".git").exists():
        pytest.fail("the README test needs the repository's git checkout to copy its files")
    clone = tmp_path / "clone"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source, target = repo / name, clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            target.write_bytes(source.read_bytes())
            target.chmod(source.stat().st_mode)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AUTO_DREAM_", "ANTHROPIC_", "XDG_", "VIRTUAL_ENV", "PYTHON"))}
    # a machine with only Python and make: the interpreter's own folder on the PATH, pip's settings
    # (where this machine's package index is) kept though HOME moved
    env.update(HOME=str(home), PATH=f"{Path(sys.base_prefix) / 'bin'}:/usr/bin:/bin", LC_ALL="C.UTF-8")
    own_pip = Path.home() / ".config" / "pip" / "pip.conf"
    if own_pip.is_file() and "PIP_CONFIG_FILE" not in env:
        env["PIP_CONFIG_FILE"] = str(own_pip)
    first = README.read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#", 1)[0].strip() for line in first.splitlines()] == ["make run", "make test"]
    ran = subprocess.run(["bash", "-c", "make run"], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "## Dream" in ran.stdout and "To run auto-dream yourself" in ran.stdout
    project = tmp_path / "project"
    project.mkdir()
    day = sh_blocks("A day of use")[0]
    script = f"set -e\nsource {clone}/.venv/bin/activate\n{day}"
    done = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (project / ".auto-dream" / "MEMORY.md").is_file() and not (home / ".auto-dream").exists()
