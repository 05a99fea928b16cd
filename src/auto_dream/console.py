"""Standard output and error for the command line, which may be closed, broken or full.

`>&-` leaves sys.stdout None, a reader that went away breaks the pipe, /dev/full refuses
every byte. What a command did stands all the same: an append's entry is on disk, a
dream's run applied. So output is written and flushed at once, a lost standard output is
an `OutputLost` the command line decides on (never a traceback), and a line for stderr is
dropped when stderr cannot take it. Light on purpose: `append` uses it.
"""

import sys


class OutputLost(Exception):
    """Standard output could not take what a command printed."""


def write_out(text: str) -> None:
    """`text` on standard output, flushed; OutputLost when it cannot be written."""
    stream = sys.stdout
    if stream is None:
        raise OutputLost("standard output is closed")
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError) as error:  # ValueError: the stream was closed in this process
        raise OutputLost(getattr(error, "strerror", None) or str(error)) from None


def tell(line: str) -> None:
    """One line on standard error, if it can take it."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


class _Stream:
    """A file for Rich: the process's stdout or stderr as it is at each write (tests swap them)."""

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str) -> int:
        if self.name == "stdout":
            write_out(text)
        else:
            stream = sys.stderr
            try:
                if stream is not None:
                    stream.write(text)
                    stream.flush()
            except (OSError, ValueError):
                pass
        return len(text)

    def flush(self) -> None:
        pass  # every write is flushed

    def isatty(self) -> bool:
        stream = getattr(sys, self.name)
        try:
            return stream is not None and stream.isatty()
        except (OSError, ValueError):
            return False

    @property
    def encoding(self) -> str:
        return getattr(getattr(sys, self.name), "encoding", None) or "utf-8"

    def fileno(self) -> int:
        stream = getattr(sys, self.name)
        if stream is None:
            raise OSError("closed")
        return stream.fileno()


stdout_file = _Stream("stdout")  # write raises OutputLost
stderr_file = _Stream("stderr")  # write never raises
