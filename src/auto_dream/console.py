"""Standard output and error for the command line, which may be closed, broken or full.

`>&-` leaves sys.stdout None, a reader that went away breaks the pipe, /dev/full refuses
every byte. What a command did stands all the same: an append's entry is on disk, a
dream's run applied. So output is written and flushed at once, a lost standard output is
an `OutputLost` the command line decides on (never a traceback), and a line for stderr is
dropped when stderr cannot take it. Light on purpose: `append` uses it.
"""

import sys

from auto_dream.errors import failure_line


class OutputLost(Exception):
    """Standard output could not take what a command printed. `reader_gone`: it is a pipe whose
    reader closed it (`auto-dream check | head -2`): the reader has what it wanted."""

    def __init__(self, why: str, *, reader_gone: bool = False):
        super().__init__(why)
        self.reader_gone = reader_gone


def write_out(text: str) -> None:
    """`text` on standard output, flushed; OutputLost when it cannot be written."""
    stream = sys.stdout
    if stream is None:
        raise OutputLost("standard output is closed")
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError) as error:  # ValueError: the stream was closed in this process
        raise OutputLost(getattr(error, "strerror", None) or str(error),
                         reader_gone=isinstance(error, BrokenPipeError)) from None


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


def tell_failure(error: BaseException) -> int | None:
    """Say what stopped a command in one line on standard error and return its exit code: 130
    for Ctrl-C, the code of an error a user can act on (errors.failure_line); None for a bug,
    which the caller lets through as a traceback."""
    if isinstance(error, KeyboardInterrupt):
        tell("auto-dream: aborted")
        return 130
    failure = failure_line(error)
    if failure is None:
        return None
    message, code = failure
    tell(f"auto-dream: error: {message}")
    return code


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
        return int(stream.fileno())


stdout_file = _Stream("stdout")  # write raises OutputLost
stderr_file = _Stream("stderr")  # write never raises
