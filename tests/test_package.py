"""The package as users get it: a wheel built from the repo carries the templates, the schedules and the example."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# What a build leaves behind, and what it does not need: the wheel is built from a copy.
NOT_BUILT = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench")


@pytest.mark.slow  # starts a child Python
def test_wheel_contains_templates_schedules_and_example(tmp_path):
    checkout = sorted(p.relative_to(REPO) for p in (*REPO.iterdir(), *(REPO / "src").iterdir()))
    source = tmp_path / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=NOT_BUILT)  # pip builds in the tree it is given
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=300)
    assert sorted(p.relative_to(REPO) for p in (*REPO.iterdir(), *(REPO / "src").iterdir())) == checkout
    wheel = next(tmp_path.glob("auto_dream-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (REPO / "templates").rglob("*"):
        if template.is_file():
            assert f"auto_dream/templates/{template.relative_to(REPO / 'templates').as_posix()}" in names
    for schedule in (REPO / "cron").iterdir():  # what `auto-dream schedule install` installs
        if schedule.suffix != ".md":
            assert f"auto_dream/cron/{schedule.name}" in names
    assert "auto_dream/example/log.md" in names
    assert any(n.startswith("auto_dream/example/memories/") for n in names)
    assert any(n.endswith("entry_points.txt") for n in names)
    assert "auto_dream/py.typed" in names  # the library's types reach its users' type checkers


def test_packaged_templates_are_what_the_code_loads():
    from auto_dream.store.templates import load_template

    assert load_template("MEMORY_header.md") == (REPO / "templates" / "MEMORY_header.md").read_text()


def test_packaged_schedules_are_what_schedule_install_loads():
    from auto_dream.commands.schedule import TEMPLATES, template

    for names in TEMPLATES.values():
        for name in names:
            assert template(name) == (REPO / "cron" / name).read_text()
