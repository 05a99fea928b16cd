"""store/repository.py: what git proves of the files and names memories cite. Real repositories
built in tmp_path: a file committed and then deleted is gone; one never committed, gitignored, only
on another branch is not; a function defined and then removed is gone; a name only called (another
library's API), only in prose or only in the store is not."""

from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from auto_dream.judge.staleness import Evidence
from auto_dream.store import repository
from auto_dream.store.repository import GitRepository, current_at, defined_names, ladder, open_repository
from conftest import HISTORY_START, git, git_history

APP = "def handle_request(request):\n    return request\n"


def evidence(present=(), gone=()) -> Evidence:
    return Evidence(frozenset(present), frozenset(gone))


@pytest.fixture
def project(tmp_path) -> Path:
    """src/app.py now; src/old/module.py (old_handler) and src/watcher.py (which called another
    library's `resource_changed`) committed, then deleted."""
    return git_history(
        tmp_path / "project",
        {"src/app.py": APP, "src/old/module.py": "def old_handler():\n    pass\n",
         "src/watcher.py": "import watchfiles\n\nwatchfiles.resource_changed(callback)\n"},
        {"src/old/module.py": None, "src/watcher.py": None})


def test_a_file_committed_then_deleted_is_gone_one_never_committed_is_not(project):
    (project / "src" / "draft.py").write_text("x = 1\n")  # written, never committed: present all the same
    found = open_repository(project).files(["src/app.py", "src/draft.py", "src/old/module.py", "src/never.py"])
    assert found == evidence({"src/app.py", "src/draft.py"}, {"src/old/module.py"})


def test_a_folder_is_gone_when_every_file_the_history_had_in_it_is(project):
    assert open_repository(project).files(["src/", "src/old/", "src/old", "src/other/"]) == \
        evidence({"src/"}, {"src/old/", "src/old"})


def test_a_gitignored_path_is_never_gone_even_one_the_history_had(tmp_path):
    project = git_history(tmp_path / "project",
                          {"src/app.py": APP, ".claude/specs/old.md": "# spec\n"},
                          {".claude/specs/old.md": None, ".gitignore": ".claude/specs/\n"})
    found = open_repository(project).files([".claude/specs/old.md", ".claude/specs/auth-flow.md"])
    assert found == evidence()


def test_a_file_deleted_in_the_work_tree_but_not_yet_committed_is_gone(project):
    (project / "src" / "app.py").unlink()
    assert open_repository(project).files(["src/app.py"]) == evidence(gone={"src/app.py"})


def test_a_renamed_file_is_gone_under_its_old_name(project):
    git(project, "mv", "src/app.py", "src/server.py")
    git(project, "commit", "-q", "-m", "rename")
    assert open_repository(project).files(["src/app.py", "src/server.py"]) == \
        evidence({"src/server.py"}, {"src/app.py"})


def test_a_file_only_on_another_branch_is_not_gone_one_deleted_on_a_merged_branch_is(project):
    git(project, "checkout", "-q", "-b", "feature")
    (project / "src" / "planned.py").write_text("def planned():\n    pass\n")
    (project / "src" / "spike.py").write_text("def spike():\n    pass\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "feature work")
    git(project, "checkout", "-q", "main")
    git(project, "checkout", "-q", "-b", "side")
    (project / "src" / "spike.py").write_text("def spike():\n    pass\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "spike")
    git(project, "rm", "-q", "src/spike.py")
    git(project, "commit", "-q", "-m", "spike dropped")
    git(project, "checkout", "-q", "main")
    (project / "README.md").write_text("readme\n")  # main moves on, so the merge is a real merge
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "readme")
    git(project, "merge", "-q", "--no-edit", "side")
    assert open_repository(project).files(["src/planned.py", "src/spike.py"]) == evidence(gone={"src/spike.py"})


def test_paths_with_letters_beyond_ascii_are_read_back_whole(tmp_path):
    project = git_history(tmp_path / "project", {"src/données/vieux.py": "x = 1\n", "src/app.py": APP},
                          {"src/données/vieux.py": None})
    assert open_repository(project).files(["src/données/vieux.py"]) == evidence(gone={"src/données/vieux.py"})


def test_a_path_git_cannot_be_asked_about_is_unverifiable(project):
    assert open_repository(project).files(["src/a\0b.py", "/", "src/old/module.py"]) == \
        evidence(gone={"src/old/module.py"})


# ---------------------------------------------------------------- symbols


def test_a_function_defined_then_removed_is_gone_a_name_only_ever_called_is_not(project):
    found = open_repository(project).symbols(["handle_request", "old_handler", "resource_changed", "maintain_it"])
    assert found == evidence({"handle_request"}, {"old_handler"})


@pytest.mark.parametrize("line, defined", [
    ("def old_handler(request):", {"old_handler"}),
    ("    async def old_handler(self):", {"old_handler"}),
    ("class RequestRouter(Base):", {"RequestRouter"}),
    ("export default async function fetchThing(a) {", {"fetchThing"}),
    ("export const retryBudget = 3;", {"retryBudget"}),
    ("let retryBudget = 3", {"retryBudget"}),
    ("MAX_RETRIES = 3", {"MAX_RETRIES"}),
    ("MAX_RETRIES: int = 3", {"MAX_RETRIES"}),
    ("pub fn flush_queue(&mut self) {", {"flush_queue"}),
    ("func (r *Router) RouteAll(x int) error {", {"RouteAll"}),
    ("export interface SessionStore {", {"SessionStore"}),
    ("struct SessionStore {", {"SessionStore"}),
    ("watchfiles.resource_changed(callback)", set()),
    ("if MAX_RETRIES == 3:", set()),
    ("handler = old_handler", set()),
    ("self.old_handler = None", set()),
    ("# see def old_handler_v2 below", set()),
])
def test_what_counts_as_a_definition(line, defined):
    names = {"old_handler", "RequestRouter", "fetchThing", "retryBudget", "MAX_RETRIES", "flush_queue", "RouteAll",
             "SessionStore", "resource_changed"}
    assert defined_names([line], names) == defined


def test_a_definition_only_in_prose_or_a_hidden_folder_proves_nothing(tmp_path):
    project = git_history(tmp_path / "project",
                          {"src/app.py": APP, "docs/guide.md": "```python\ndef example_hook():\n    pass\n```\n",
                           ".github/scripts/release.py": "def bump_version():\n    pass\n"},
                          {"docs/guide.md": None, ".github/scripts/release.py": None})
    assert open_repository(project).symbols(["example_hook", "bump_version"]) == evidence()


def test_the_store_neither_confirms_nor_proves_the_names_it_cites(tmp_path):
    project = git_history(tmp_path / "project",
                          {"src/app.py": APP, "notes/memories/port.md": "def gone_worker():\n",
                           "src/worker.py": "def gone_worker():\n    pass\n"},
                          {"src/worker.py": None})
    store = project / "notes"
    (store / "memories" / "fresh.md").write_text("`gone_worker()` and `handle_request()`\n")
    assert open_repository(project, exclude=store).symbols(["gone_worker", "handle_request"]) == \
        evidence({"handle_request"}, {"gone_worker"})
    assert open_repository(project).symbols(["gone_worker"]) == evidence({"gone_worker"})  # not excluded: named


def test_a_definition_removed_long_ago_is_found_on_the_ladder(tmp_path):
    commits: list[dict[str, str | None]] = [{"src/app.py": APP, "src/old.py": "def ancient_helper():\n    pass\n"}]
    commits += [{"src/app.py": APP + f"# {n}\n"} for n in range(40)]
    commits.append({"src/old.py": None})
    commits += [{"src/app.py": APP + f"# later {n}\n"} for n in range(60)]
    project = git_history(tmp_path / "project", *commits)
    assert open_repository(project).symbols(["ancient_helper"]) == evidence(gone={"ancient_helper"})


def test_a_short_lived_definition_the_ladder_misses_is_found_at_the_time_a_memory_was_written(tmp_path):
    # 60 commits, one an hour; old_worker lived in commits 16 to 23 (36 to 43 commits before HEAD),
    # between the ladder's rungs at 33 and 48. A memory written at commit 20 cited it.
    commits: list[dict[str, str | None]] = [{"src/app.py": APP + f"# {n}\n"} for n in range(60)]
    commits[16]["src/worker.py"] = "def old_worker():\n    pass\n"
    commits[24]["src/worker.py"] = None
    project = git_history(tmp_path / "project", *commits)
    assert open_repository(project).symbols(["old_worker"]) == evidence()
    written = HISTORY_START + timedelta(hours=20, minutes=30)
    assert open_repository(project).symbols(["old_worker"], [written]) == evidence(gone={"old_worker"})


def test_the_commit_current_when_a_memory_was_written():
    commits = [(300, "c"), (200, "b"), (100, "a")]  # newest first, as git log gives them
    at = [datetime.fromtimestamp(seconds, timezone.utc) for seconds in (50, 100, 150, 250, 999)]
    assert current_at(commits, at) == {"a", "b", "c"}
    assert current_at(commits, at[:1]) == set()  # before the first commit
    many = [datetime.fromtimestamp(seconds, timezone.utc) for seconds in range(100, 400)]
    assert current_at(commits, many) == {"a", "b", "c"}


def test_the_ladder_is_dense_near_head_and_sparse_in_the_past():
    assert ladder(0) == [0]
    assert ladder(1) == [0]
    assert ladder(12) == [0, 1, 2, 3, 4, 6, 8, 11]
    assert len(ladder(10_000)) == 28
    assert ladder(10_000)[-1] == 9_999


# ---------------------------------------------------------------- the folder and the git behind it


def test_the_paths_of_a_project_in_a_subfolder_are_relative_to_it(tmp_path):
    top = git_history(tmp_path / "mono", {"app/src/main.py": APP, "app/src/old.py": "def old_job():\n    pass\n",
                                          "other/src/old.py": "x = 1\n"},
                      {"app/src/old.py": None, "other/src/old.py": None})
    found = open_repository(top / "app")
    assert isinstance(found, GitRepository) and found.top == top.resolve()
    assert found.files(["src/main.py", "src/old.py", "app/src/old.py"]) == evidence({"src/main.py"}, {"src/old.py"})
    assert found.symbols(["old_job", "handle_request"]) == evidence({"handle_request"}, {"old_job"})


def test_a_folder_in_no_git_work_tree_has_no_repository(tmp_path):
    assert open_repository(tmp_path / "plain") is None
    assert open_repository(None) is None


def test_a_git_folder_that_is_no_repository_proves_nothing(tmp_path):
    (tmp_path / "fake" / ".git").mkdir(parents=True)
    (tmp_path / "fake" / "src").mkdir()
    (tmp_path / "fake" / "src" / "app.py").write_text(APP)
    found = open_repository(tmp_path / "fake")
    assert found.files(["src/app.py", "src/old.py"]) == evidence({"src/app.py"})
    assert found.symbols(["handle_request", "old_handler"]) == evidence()


def test_without_git_on_the_path_nothing_is_proven(project, monkeypatch):
    found = open_repository(project)
    monkeypatch.setenv("PATH", str(project / "no-such-folder"))
    assert found.files(["src/app.py", "src/old/module.py"]) == evidence({"src/app.py"})
    assert found.symbols(["old_handler"]) == evidence()


def test_a_git_that_runs_out_of_time_proves_nothing(project, monkeypatch):
    monkeypatch.setattr(repository, "GIT_TIMEOUT", 1e-9)
    assert open_repository(project).files(["src/old/module.py"]) == evidence()
    assert open_repository(project).symbols(["old_handler"]) == evidence()


def test_a_git_dir_left_in_the_environment_does_not_point_git_elsewhere(project, tmp_path, monkeypatch):
    other = git_history(tmp_path / "other", {"src/app.py": "x = 1\n", "src/other.py": "def other_job():\n    pass\n"},
                        {"src/other.py": None})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    found = open_repository(project)
    assert found.files(["src/old/module.py", "src/other.py"]) == evidence(gone={"src/old/module.py"})
    assert found.symbols(["old_handler", "other_job"]) == evidence(gone={"old_handler"})


def test_a_partial_clone_is_not_asked_about_its_history(project):
    git(project, "config", "extensions.partialClone", "origin")
    found = open_repository(project)
    assert found.files(["src/app.py", "src/old/module.py"]) == evidence({"src/app.py"})
    assert found.symbols(["handle_request", "old_handler"]) == evidence({"handle_request"})


def test_a_git_without_perl_regexes_gives_the_same_answers(project, monkeypatch):
    real_run = GitRepository._run

    def without_perl(self, args, stdin=b""):
        if "-P" in args:
            return SimpleNamespace(returncode=128, stdout=b"")  # "fatal: cannot use Perl-compatible regexes"
        return real_run(self, args, stdin)

    monkeypatch.setattr(GitRepository, "_run", without_perl)
    assert open_repository(project).symbols(["handle_request", "old_handler", "resource_changed"]) == \
        evidence({"handle_request"}, {"old_handler"})


def test_one_run_asks_git_a_few_times_however_many_references(project, monkeypatch):
    calls = []
    real_run = GitRepository._run

    def counted(self, args, stdin=b""):
        calls.append(args[0] if args[0] != "--literal-pathspecs" else args[1])
        return real_run(self, args, stdin)

    monkeypatch.setattr(GitRepository, "_run", counted)
    found = open_repository(project)
    paths = [f"src/gone_{n}.py" for n in range(300)] + ["src/old/module.py"]
    names = [f"gone_{n}" for n in range(300)] + ["old_handler"]
    assert found.files(paths) == evidence(gone={"src/old/module.py"})
    assert found.symbols(names) == evidence(gone={"old_handler"})
    assert sorted(calls) == ["check-ignore", "config", "grep", "grep", "log", "log"]
