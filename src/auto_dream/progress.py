"""How a long run says how far it has got, without printing: the core calls a `Progress`, and
the interface decides whether anyone sees it (cli.py draws a bar on a terminal, none when piped).

A dream is a few stages one after the other ("distilling entries", "checking pairs", "writing
files"…): `start` opens the next one with its total (None when it is not known in advance),
`advance` counts what it has done, `finish` says the run is over, however it ended.
"""

from typing import Protocol

# The stages of a dream, in the order they come (one that does not apply to a run is left out).
READING = "reading the store"
DISTILLING = "distilling entries"
CHECKING = "checking pairs"
REVIEWING = "Claude reviewing pairs"
PLANNING = "planning"
WRITING = "writing files"
RECORDING = "recording the run"  # the report, the caches and the recall index for the files written


class Progress(Protocol):
    def start(self, stage: str, total: int | None) -> None:
        """A new stage begins (the one before it is over): `total` steps, None when unknown."""
        ...

    def advance(self, done: int = 1) -> None:
        """`done` more steps of the current stage."""
        ...

    def finish(self) -> None:
        """The run is over (done, or stopped by an error): take down whatever shows it."""
        ...


class NoProgress:
    """Nobody is watching: the default, and what a library caller gets without asking."""

    def start(self, stage: str, total: int | None) -> None:
        pass

    def advance(self, done: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


NO_PROGRESS: Progress = NoProgress()
