"""auto-dream: a long-term memory for AI agents, in plain Markdown.

    import auto_dream

    store = auto_dream.open_store("project/.auto-dream", create=True)
    store.append("Don't mock the database in integration tests", type="feedback")
    outcome = store.dream()
    for memory in store.list().memories:
        print(memory.type, memory.name)

docs/python-api.md says more. Every name below is imported on first use
(PEP 562): `python -m auto_dream append` imports this package too, and must stay fast.
"""

__version__ = "0.1.0"

__all__ = [
    "open_store",
    "Store",
    # what its methods return
    "Entry",
    "DreamOutcome",
    "DreamReport",
    "Restored",
    "ListResult",
    "ListedMemory",
    "Hit",
    "Memory",
    "CheckResult",
    "MemoryHealth",
    "IndexBuild",
    "OpenClawImport",
    # what Store.dream(progress=...) is told
    "Progress",
    # what they raise
    "AutoDreamError",
    "StoreError",
    "InputError",
    "LockHeldError",
]

# `typing` itself is not imported for this (append never needs it); type checkers read the
# block as true, and so see where each name comes from.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from auto_dream.api import Store, open_store
    from auto_dream.commands.check import CheckResult, MemoryHealth
    from auto_dream.commands.import_openclaw import OpenClawImport
    from auto_dream.commands.listing import ListedMemory, ListResult
    from auto_dream.commands.recall import Hit
    from auto_dream.dream.journal import Restored
    from auto_dream.dream.report import DreamReport
    from auto_dream.dream.runner import DreamOutcome
    from auto_dream.errors import AutoDreamError, InputError, LockHeldError, StoreError
    from auto_dream.progress import Progress
    from auto_dream.store.daylog import Entry
    from auto_dream.store.memory import Memory
    from auto_dream.store.memory_md import IndexBuild

_MODULE_OF = {
    "open_store": "auto_dream.api",
    "Store": "auto_dream.api",
    "Entry": "auto_dream.store.daylog",
    "DreamOutcome": "auto_dream.dream.runner",
    "DreamReport": "auto_dream.dream.report",
    "Restored": "auto_dream.dream.journal",
    "ListResult": "auto_dream.commands.listing",
    "ListedMemory": "auto_dream.commands.listing",
    "Hit": "auto_dream.commands.recall",
    "Memory": "auto_dream.store.memory",
    "CheckResult": "auto_dream.commands.check",
    "MemoryHealth": "auto_dream.commands.check",
    "IndexBuild": "auto_dream.store.memory_md",
    "OpenClawImport": "auto_dream.commands.import_openclaw",
    "Progress": "auto_dream.progress",
    "AutoDreamError": "auto_dream.errors",
    "StoreError": "auto_dream.errors",
    "InputError": "auto_dream.errors",
    "LockHeldError": "auto_dream.errors",
}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'auto_dream' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # found once; later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
