"""Where the store is (root resolution) and what `init` lays down on disk."""

import stat
from pathlib import Path

import pytest

from auto_dream.store.paths import StorePaths, resolve_root
from conftest import run_installed, tree_hash

TYPE_FOLDERS = ("user", "feedback", "project", "reference")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def log_lines(root: Path) -> list[str]:
    """Every line of every daily log under `root`."""
    return [line for log in sorted(root.glob("logs/*/*/*.md"))
            for line in log.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- resolve_root


@pytest.fixture
def project(tmp_path) -> Path:
    """tmp/project/.auto-dream is a store; tmp/project/src/pkg is where the user works."""
    (tmp_path / "project" / ".auto-dream").mkdir(parents=True)
    (tmp_path / "project" / "src" / "pkg").mkdir(parents=True)
    return tmp_path / "project"


def test_root_flag_beats_the_environment_variable_and_stores_on_disk(project, tmp_path):
    cwd, home = project / "src" / "pkg", tmp_path / "home"
    found = resolve_root(str(tmp_path / "flag"), str(tmp_path / "env"), cwd, home)
    assert found == tmp_path / "flag"


def test_environment_variable_beats_the_nearest_store(project, tmp_path):
    cwd, home = project / "src" / "pkg", tmp_path / "home"
    assert resolve_root(None, str(tmp_path / "env"), cwd, home) == tmp_path / "env"


def test_nearest_store_in_a_parent_folder_is_found_like_git(project, tmp_path):
    cwd, home = project / "src" / "pkg", tmp_path / "home"
    assert resolve_root(None, None, cwd, home) == project / ".auto-dream"


def test_store_in_the_current_folder_itself_is_found(project, tmp_path):
    assert resolve_root(None, None, project, tmp_path / "home") == project / ".auto-dream"


def test_the_nearest_of_two_stores_wins(project, tmp_path):
    (project / "src" / ".auto-dream").mkdir()
    found = resolve_root(None, None, project / "src" / "pkg", tmp_path / "home")
    assert found == project / "src" / ".auto-dream"


def test_a_file_named_dot_auto_dream_is_not_taken_for_a_store(project, tmp_path):
    (project / "src" / ".auto-dream").write_text("not a store\n")
    found = resolve_root(None, None, project / "src" / "pkg", tmp_path / "home")
    assert found == project / ".auto-dream"


def test_home_store_is_the_last_resort(tmp_path):
    nowhere = tmp_path / "elsewhere" / "deep"
    nowhere.mkdir(parents=True)
    assert resolve_root(None, None, nowhere, tmp_path / "home") == tmp_path / "home" / ".auto-dream"


def test_the_openclaw_skill_store_is_found_after_the_nearest_store_and_before_the_home_store(project, tmp_path):
    home = tmp_path / "home"
    skill_store = home / ".openclaw" / "workspace" / ".auto-dream"
    nowhere = tmp_path / "elsewhere"
    nowhere.mkdir()
    assert resolve_root(None, None, nowhere, home) == home / ".auto-dream"  # only when it exists
    skill_store.mkdir(parents=True)
    (home / ".auto-dream").mkdir()
    assert resolve_root(None, None, nowhere, home) == skill_store
    assert resolve_root(None, None, project / "src", home) == project / ".auto-dream"


def test_relative_and_tilde_roots_become_absolute(tmp_path, isolated_env):
    # conftest chdirs into tmp_path and points HOME at tmp_path/home
    assert resolve_root("stores/mine", None, tmp_path, isolated_env) == tmp_path / "stores" / "mine"
    assert resolve_root(None, "~/memory", tmp_path, isolated_env) == isolated_env / "memory"


def test_empty_flag_and_variable_are_ignored(project, tmp_path):
    cwd = project / "src" / "pkg"
    assert resolve_root("", "", cwd, tmp_path / "home") == project / ".auto-dream"


# ---------------------------------------------------------------- root resolution through the CLI


def test_cli_honours_auto_dream_root(cli, tmp_path, monkeypatch):
    store = tmp_path / "from-env"
    monkeypatch.setenv("AUTO_DREAM_ROOT", str(store))
    result = cli("append", "--at", "2026-04-01 09:00", "kept in the env store")
    assert result.code == 0, result
    assert log_lines(store) == ["- [2026-04-01 09:00:00] kept in the env store"]


def test_cli_root_flag_beats_auto_dream_root(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTO_DREAM_ROOT", str(tmp_path / "from-env"))
    result = cli("--root", tmp_path / "from-flag", "append", "--at", "2026-04-01 09:00", "flagged")
    assert result.code == 0, result
    assert log_lines(tmp_path / "from-flag") == ["- [2026-04-01 09:00:00] flagged"]
    assert not (tmp_path / "from-env").exists()


def test_cli_finds_the_project_store_from_a_subfolder(cli, project, monkeypatch):
    monkeypatch.chdir(project / "src" / "pkg")
    assert cli("append", "--at", "2026-04-01 09:00", "found upwards").code == 0
    assert log_lines(project / ".auto-dream") == ["- [2026-04-01 09:00:00] found upwards"]
    assert not (project / "src" / "pkg" / ".auto-dream").exists()
    listed = cli("list", "--json")
    assert listed.code == 0, listed


def test_cli_falls_back_to_the_home_store(cli, tmp_path, isolated_env, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .auto-dream here or above (the test's own folders)
    assert cli("append", "--at", "2026-04-01 09:00", "at home").code == 0
    assert log_lines(isolated_env / ".auto-dream") == ["- [2026-04-01 09:00:00] at home"]


@pytest.mark.slow  # starts the installed command
def test_installed_command_resolves_the_root_like_the_cli(project, tmp_path):
    """The fast `append` path in __main__ reads the environment itself: same rules."""
    subfolder = project / "src" / "pkg"
    nearest = run_installed("append", "--at", "2026-04-01 09:00", "nearest", cwd=subfolder)
    assert nearest.returncode == 0, nearest.stderr
    from_env = run_installed("append", "--at", "2026-04-01 09:01", "env wins", cwd=subfolder,
                             env={"AUTO_DREAM_ROOT": str(tmp_path / "env-store")})
    assert from_env.returncode == 0, from_env.stderr
    assert log_lines(project / ".auto-dream") == ["- [2026-04-01 09:00:00] nearest"]
    assert log_lines(tmp_path / "env-store") == ["- [2026-04-01 09:01:00] env wins"]


# ---------------------------------------------------------------- init


def assert_is_a_store(root: Path) -> None:
    assert root.is_dir()
    for folder in ("logs", "archive", ".state", "memories",
                   *(f"memories/{t}" for t in TYPE_FOLDERS)):
        assert (root / folder).is_dir(), folder
    assert (root / "MEMORY.md").is_file()
    assert (root / "config.toml").is_file()


def test_init_dir_creates_the_whole_store(cli, tmp_path):
    result = cli("init", tmp_path / "proj")
    assert result.code == 0, result
    root = tmp_path / "proj" / ".auto-dream"
    assert_is_a_store(root)
    assert str(root) in result.out
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert index.startswith("# MEMORY.md - Long-term Memory\n")
    assert [line for line in index.splitlines() if line.startswith("## ")] == [
        "## USER", "## FEEDBACK", "## PROJECT", "## REFERENCE"]


def test_init_without_dir_uses_the_current_folder(cli, tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert cli("init").code == 0
    assert_is_a_store(tmp_path / "here" / ".auto-dream")


def test_init_with_only_root_creates_that_folder(cli, tmp_path):
    assert cli("--root", tmp_path / "custom", "init").code == 0
    assert_is_a_store(tmp_path / "custom")
    assert not (tmp_path / "custom" / ".auto-dream").exists()


def test_init_config_is_valid_and_means_the_defaults(cli, tmp_path):
    from auto_dream.store.config import Config, load_config

    cli("init", tmp_path)
    assert load_config(tmp_path / ".auto-dream" / "config.toml") == Config()


def test_init_twice_keeps_every_existing_file_byte_for_byte(cli, tmp_path):
    assert cli("init", tmp_path).code == 0
    root = tmp_path / ".auto-dream"
    (root / "config.toml").write_text('timezone = "UTC"\n# my own notes\n')
    (root / "MEMORY.md").write_text("# hand-edited index\n")
    assert cli("--root", root, "append", "--at", "2026-04-01 09:00", "a fact").code == 0
    (root / "memories" / "user" / "20260401_Me.md").write_text("---\nname: Me\n---\nhi\n")
    before = tree_hash(root)

    again = cli("init", tmp_path)

    assert again.code == 0, again
    assert "already a store" in again.out
    assert tree_hash(root) == before


def test_init_makes_owner_only_folders_and_files(cli, tmp_path):
    cli("init", tmp_path / "proj")
    root = tmp_path / "proj" / ".auto-dream"
    cli("--root", root, "append", "--at", "2026-04-01 09:00", "private")
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert {p.relative_to(root).as_posix() for p in files} == {
        "MEMORY.md", "config.toml", "logs/2026/04/2026-04-01.md"}
    assert {p.relative_to(root).as_posix(): oct(mode(p)) for p in folders} == {
        p.relative_to(root).as_posix(): oct(0o700) for p in folders}
    assert {p.name: oct(mode(p)) for p in files} == {p.name: oct(0o600) for p in files}


def test_init_into_a_file_is_refused_without_a_traceback(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    result = cli("init", tmp_path / "notes.txt")
    assert result.code == 2, result
    assert result.err.startswith("auto-dream: error:") and result.err.count("\n") == 1
    assert "notes.txt" in result.err
    assert (tmp_path / "notes.txt").read_text() == "hello\n"


def test_init_prints_the_store_path_exactly(cli, tmp_path):
    # A folder name is the user's: nothing in it may be rendered as markup or emoji.
    base = tmp_path / "notes:fire:[b]"
    result = cli("init", base)
    assert result.code == 0, result
    assert result.out.strip() == f"created a store at {base / '.auto-dream'}"


def test_store_paths_layout():
    from datetime import date

    paths = StorePaths(Path("/s"))
    assert paths.log_file(date(2026, 4, 1)) == Path("/s/logs/2026/04/2026-04-01.md")
    assert paths.memory_dir("feedback") == Path("/s/memories/feedback")
    assert paths.relative(Path("/s/memories/user/x.md")) == "memories/user/x.md"
