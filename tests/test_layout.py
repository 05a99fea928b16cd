"""The store is an interface (store.paths.StoreLayout): a second layout, which keeps its
memories and its archive in other folders, is dreamed and undone by the same code, and every
file lands where that layout says — none where the native layout would put it."""

from datetime import datetime, timedelta, timezone
from pathlib import Path

from auto_dream.distill.deterministic import DeterministicDistiller
from auto_dream.dream.journal import confined
from auto_dream.dream.runner import dream, undo
from auto_dream.dream.snapshot import DreamOptions
from auto_dream.store.config import Config
from auto_dream.store.context import StoreContext
from auto_dream.store.daylog import Entry, append_entry
from auto_dream.store.files import make_dirs
from auto_dream.store.paths import MEMORY_TYPES, StoreLayout, StorePaths
from builders import memory_text
from conftest import make_git_project, write_memory_file

NOW = datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)


class NotesLayout(StorePaths):
    """Memories under notes/<type>/, retired ones under retired/<type>/."""

    def run_may_write(self, parts: tuple[str, ...]) -> bool:
        return parts == ("MEMORY.md",) or (len(parts) > 1 and parts[0] in ("notes", "retired", ".state"))

    def is_memory_path(self, relative: str) -> bool:
        return relative.startswith("notes/")

    def memory_folder(self, archived: bool = False) -> str:
        return "retired" if archived else "notes"

    def memory_dir(self, memory_type: str) -> Path:
        return self.root / "notes" / memory_type

    def archive_dir(self, memory_type: str) -> Path:
        return self.root / "retired" / memory_type

    def memory_path(self, memory_type: str, file_name: str) -> str:
        return f"notes/{memory_type}/{file_name}"

    def archive_path(self, memory_type: str, file_name: str) -> str:
        return f"retired/{memory_type}/{file_name}"

    def skeleton(self) -> list[Path]:
        return [self.logs, self.state, self.root / "retired", *(self.memory_dir(t) for t in MEMORY_TYPES)]

    def folders(self) -> list[Path]:
        return [*self.skeleton(), *(self.archive_dir(t) for t in MEMORY_TYPES), self.state / "runs"]

    def memory_folders(self) -> list[Path]:
        return [*(self.memory_dir(t) for t in MEMORY_TYPES), *(self.archive_dir(t) for t in MEMORY_TYPES)]


def notes_store(project: Path) -> StoreContext:
    """A project whose store holds a stale memory, a memory a newer entry contradicts, and a new fact."""
    make_git_project(project, ("src/old/module.py",), ("old_handler",))  # the stale memory's file and function
    layout = NotesLayout(project / ".auto-dream")
    for folder in layout.skeleton():
        make_dirs(folder)
    write_memory_file(layout.root, "notes/project/20260822_old_module_port.md",
                      memory_text("Old module port", "project", NOW - timedelta(days=40),
                                  "Tracks the port of src/old/module.py; the entry point is `old_handler()`."))
    write_memory_file(layout.root, "notes/feedback/20261001_rebase.md",
                      memory_text("Rebase", "feedback", NOW - timedelta(days=30), "Always rebase feature branches"))
    for text, kind in (("Never rebase feature branches", "feedback"),
                       ("The release checklist lives in docs/release.md", "reference")):
        append_entry(layout, Entry((NOW - timedelta(days=1)).replace(tzinfo=None), text, kind))
    return StoreContext(paths=layout, config=Config(), tz=timezone.utc)


def test_a_second_layout_is_dreamed_where_it_keeps_its_files(tmp_path):
    context = notes_store(tmp_path / "project")
    root = context.paths.root
    before = files_of(root)
    outcome = dream(context, NOW, DreamOptions(), DeterministicDistiller())
    assert outcome.report is not None
    kinds = {(row.kind, row.path) for row in outcome.report.actions}
    assert ("archive", "notes/project/20260822_old_module_port.md") in kinds
    assert ("supersede", "notes/feedback/20261001_rebase.md") in kinds
    created = [row.path for row in outcome.report.actions if row.kind == "create"]
    assert created and all(path.startswith("notes/") for path in created)
    assert all((root / path).is_file() for path in created)
    assert (root / "retired/project/20260822_old_module_port.md").is_file()
    assert (root / "retired/feedback/20261001_rebase.md").is_file()
    assert not (root / "memories").exists() and not (root / "archive").exists()
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "notes/" in index and "retired/" not in index and "memories/" not in index

    undo(context, NOW, None, force=False)
    assert files_of(root) == before  # byte for byte, the memories back in notes/


def files_of(root: Path) -> dict[str, bytes]:
    """Every file the layout's memories, archive and logs hold (dream's records and the index left out)."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and path.relative_to(root).parts[0] not in (".state", "MEMORY.md")}


def test_a_run_journal_may_name_only_what_the_layout_lets_a_run_write(tmp_path):
    native: StoreLayout = StorePaths(tmp_path)
    notes: StoreLayout = NotesLayout(tmp_path)
    assert confined("memories/user/a.md", native) and not confined("memories/user/a.md", notes)
    assert confined("notes/user/a.md", notes) and not confined("notes/user/a.md", native)
    for layout in (native, notes):
        assert confined("MEMORY.md", layout) and confined(".state/cache.sqlite", layout)
        assert not confined("../outside.md", layout) and not confined("logs/2026/11/2026-11-21.md", layout)
