"""How many of auto-dream's modules a reader follows to see one dream's decisions: the modules
whose code runs while the bundled example's dream is planned (runner.plan_dream over the
Snapshot orient and gather read; cProfile records every function that runs), and the modules
planning imports (grimp: upstream of consolidate, prune and plan). Both are printed with
their names, so two checkouts can be compared:

    .venv/bin/python bench/planning_modules.py
    PYTHONPATH=<other checkout>/src .venv/bin/python bench/planning_modules.py

The example is copied into a temporary store; nothing else is written.
"""

import cProfile
import pstats
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

try:
    import auto_dream
except ImportError:  # run from a checkout without `make install`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import auto_dream

from auto_dream.distill.deterministic import DeterministicDistiller  # noqa: E402
from auto_dream.dream.gather import gather  # noqa: E402
from auto_dream.dream.orient import orient  # noqa: E402
from auto_dream.dream.runner import plan_dream  # noqa: E402

try:
    from auto_dream.dream.snapshot import Decisions, DreamOptions  # noqa: E402
except ImportError:  # a checkout from before dream/state.py was named dream/snapshot.py
    from auto_dream.dream.state import Decisions, DreamOptions  # noqa: E402
from auto_dream.store.context import open_context  # noqa: E402
from auto_dream.store.paths import ensure_store  # noqa: E402

SOURCE = Path(auto_dream.__file__).parent
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def modules_run(root: Path) -> list[str]:
    """The modules whose functions run while the dream over `root` is planned."""
    snapshot = gather(orient(open_context(root), NOW, "0001-20261201T090000", DreamOptions()))
    profile = cProfile.Profile()
    profile.enable()
    plan_dream(snapshot, DeterministicDistiller(), Decisions.start(snapshot))
    profile.disable()
    files = {Path(file) for file, _, _ in pstats.Stats(profile).stats if file.startswith(str(SOURCE))}  # type: ignore[attr-defined]
    return sorted(path.relative_to(SOURCE).as_posix() for path in files)


def modules_imported() -> list[str]:
    """The modules consolidate, prune and plan import, directly or through others."""
    import grimp

    graph = grimp.build_graph("auto_dream")
    found: set[str] = set()
    for module in ("auto_dream.dream.consolidate", "auto_dream.dream.prune", "auto_dream.dream.plan"):
        found |= graph.find_upstream_modules(module) | {module}
    return sorted(found)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / ".auto-dream"
        ensure_store(root)
        example = SOURCE / "example"
        log = root / "logs" / "2026" / "11" / "2026-11-30.md"
        log.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(example / "log.md", log)
        shutil.copytree(example / "memories", root / "memories", dirs_exist_ok=True)
        run = modules_run(root)
    imported = modules_imported()
    print(f"modules whose code runs while the example's dream is planned: {len(run)}")
    print("  " + " ".join(run))
    print(f"modules planning imports (consolidate, prune, plan and all they import): {len(imported)}")
    print("  " + " ".join(name.removeprefix("auto_dream.") for name in imported))


if __name__ == "__main__":
    main()
