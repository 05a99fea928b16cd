"""Putting back what a write of several steps changed, when a later step fails: each step that
was done says how to undo it; on a failure they run last first, each one even when one before
it failed, and the first that could not be undone says what was left.

One mechanism for every plan auto-dream carries out outside the store: `install` and
`uninstall` (commands/install.py), Codex's (install_codex.py) and a schedule's
(schedule.py). A dream's own writes have their journal (dream/journal.py) instead, which a
killed run's next run reads.
"""

from collections.abc import Callable

from auto_dream.errors import AutoDreamError


class Rollback:
    """The undo of each step done so far, in the order the steps were done."""

    def __init__(self) -> None:
        self._undo: list[tuple[Callable[[], None], str]] = []

    def push(self, undo: Callable[[], None], what: str = "") -> None:
        """Note that a step was done: `undo` puts back what it changed; `what` names it when that
        fails (else the error says)."""
        self._undo.append((undo, what))

    def __bool__(self) -> bool:
        return bool(self._undo)

    def run(self) -> str | None:
        """Undo every step, last first, each one even when one after it (undone before it) failed:
        what the first that failed names, or None when everything was put back."""
        failed: str | None = None
        for undo, what in reversed(self._undo):
            try:
                undo()
            except (AutoDreamError, OSError) as error:
                failed = failed or what or failure(error)
        self._undo.clear()
        return failed


def failure(error: AutoDreamError | OSError) -> str:
    """An error as one phrase: an AutoDreamError's message, an OSError's reason and file."""
    if isinstance(error, AutoDreamError):
        return str(error)
    return f"{error.strerror or error}" + (f" ({error.filename})" if error.filename else "")
