"""The one root exception; each subclass carries the exit code the CLI uses."""


class AutoDreamError(Exception):
    """Base of every error auto-dream reports to a user."""

    exit_code = 1


class StoreError(AutoDreamError):
    """The store or one of its files is in a state that stops the command."""

    exit_code = 1


class InputError(AutoDreamError):
    """Bad usage or bad input: empty text, unknown type, bad date."""

    exit_code = 2


class LockHeldError(AutoDreamError):
    """Another dream holds the store's lock."""

    exit_code = 3


def failure_line(error: BaseException) -> tuple[str, int] | None:
    """The one line and exit code for an error a user can act on, or None for a bug."""
    if isinstance(error, AutoDreamError):
        return str(error), error.exit_code
    if isinstance(error, OSError):  # a file system failure the library did not foresee
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror or error}{where}", StoreError.exit_code
    return None
