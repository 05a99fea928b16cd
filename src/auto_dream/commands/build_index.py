"""`build-index`: MEMORY.md rebuilt from memories/ alone."""

from auto_dream.store.context import StoreContext
from auto_dream.store.memory_md import IndexBuild, rebuild_index


def build_index(context: StoreContext) -> IndexBuild:
    """Write MEMORY.md from the memory files; one already up to date is left as it is."""
    return rebuild_index(context)
