"""Entry point of `auto-dream` and `python -m auto_dream`.

`append` and `recall` are what agents call all day, and `context` starts every session (its
hooks run it), so a plain `append`, `recall` or `context` command line is run here without
importing Typer (which alone costs several times Python's own start-up). Anything this short
parser does not recognise — help, version, an unknown option — goes to the Typer app, which
stays the one definition of the CLI; the options both read come from one table (shell.py).

The exit trick. A command is a short batch job with few reference cycles, yet a dream over
100,000 memories leaves a million objects: the garbage collector would walk them all (turning
it back on after the dream cost a third of a second) and Python would free them one by one on
the way out. So the command line runs with the collector off (_run, and cli.dream_command for
a caller of cli.run in this process), keeps the dream's working set (handed to it by the
runner's `keep`, held in cli.kept_until_exit), and ends with os._exit (main): the operating
system takes the memory back at once. Only this module and cli.py keep anything; the library
frees what it made as usual, and its result holds none of it.
"""

import os
import sys

# Nothing else at the top: a Ctrl-C while the rest is imported is caught in main().


def _by_name(table: dict[str, tuple[str, ...]], key: dict[str, str]) -> dict[str, str]:
    """Each name on the command line of shell's option `table`, to the key the fast path files it under."""
    return {name: key[parameter] for parameter, names in table.items() for name in names}


def _command_args(argv: list[str], command: str) -> tuple[str | None, list[str] | None]:
    """(--root's value or None, the arguments after `command`) of a `[--root R] COMMAND …`
    line; the arguments are None when the line runs another command."""
    args = list(argv)
    root = None
    if args[:1] == ["--root"] and len(args) > 1:
        root, args = args[1], args[2:]
    elif args and args[0].startswith("--root="):
        root, args = args[0].split("=", 1)[1], args[1:]
    return (root, args[1:]) if args[:1] == [command] else (root, None)


def quick_append_arguments(argv: list[str]) -> dict | None:
    """The arguments of a plain `[--root R] append …` line, or None to let Typer parse it."""
    root, args = _command_args(argv, "append")
    if args is None:
        return None
    from auto_dream.shell import APPEND_OPTIONS

    values = _by_name(APPEND_OPTIONS, {"entry_type": "type", "at": "at"})
    found: dict = {"root": root, "type": None, "at": None, "words": []}
    while args:
        arg = args.pop(0)
        if arg == "--":
            found["words"].extend(args)
            break
        name, has_value, value = arg.partition("=")
        if name in values and name.startswith("--") and has_value:
            found[values[name]] = value
        elif arg in values and args and not has_value:
            found[values[arg]] = args.pop(0)
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            found["words"].append(arg)
    if not found["words"]:
        return None
    return found


def run_quick_append(found: dict) -> int:
    from auto_dream.commands.append import append_text
    from auto_dream.console import OutputLost, tell, tell_failure, write_out
    from auto_dream.shell import entry_text, store_root

    try:
        entry, log_path = append_text(store_root(found["root"]), entry_text(found["words"]), found["type"],
                                      found["at"])
    except (KeyboardInterrupt, Exception) as error:
        code = tell_failure(error)
        if code is None:
            raise
        return code
    try:
        write_out(f"appended {entry.id} to {log_path}\n")
    except OutputLost as lost:  # the entry is written: a caller that retried would append it twice
        if not lost.reader_gone:
            tell(f"auto-dream: warning: appended {entry.id}, but the output could not be written ({lost})")
    return 0




def quick_recall_arguments(argv: list[str]) -> dict | None:
    """The arguments of a plain `[--root R] recall WORDS… [--limit N] [--type T] [--archived]
    [--json]` line (agents look things up mid-conversation), or None to let Typer parse it."""
    root, args = _command_args(argv, "recall")
    if args is None:
        return None
    from auto_dream.shell import RECALL_FLAGS, RECALL_OPTIONS

    values = _by_name(RECALL_OPTIONS, {"limit": "limit", "memory_type": "type"})
    flags = _by_name(RECALL_FLAGS, {"archived": "archived", "as_json": "json"})
    found: dict = {"root": root, "limit": "10", "type": None, "archived": False, "json": False, "words": []}
    while args:
        arg = args.pop(0)
        name, has_value, value = arg.partition("=")
        if arg == "--":
            found["words"].extend(args)
            break
        if name in values and name.startswith("--") and has_value:
            found[values[name]] = value
        elif arg in values and args:
            found[values[arg]] = args.pop(0)
        elif arg in flags:
            found[flags[arg]] = True
        elif arg.startswith("-"):
            return None  # --help, a negative number, an option this parser does not know
        else:
            found["words"].append(arg)
    limit = found["limit"]
    if not found["words"] or not (limit.isascii() and limit.isdigit()) or not 1 <= int(limit) <= 1_000_000:
        return None  # Typer says what is wrong with it
    return found


def run_quick_recall(found: dict) -> int:
    import json

    from auto_dream.commands.recall import check_query, recall_owing, render_hits
    from auto_dream.console import write_out
    from auto_dream.shell import claude_config_dir, home_folder, local_time, run_owed_checks, store_root
    from auto_dream.store.context import open_context
    from auto_dream.store.paths import check_memory_type

    def recall() -> None:
        text = " ".join(found["words"])
        check_query(text)  # before the store is opened, as the Typer command does
        check_memory_type(found["type"])
        context = open_context(store_root(found["root"]), home=home_folder(), claude_config_dir=claude_config_dir())
        hits, owed = recall_owing(context, text, int(found["limit"]), found["type"], archived=found["archived"],
                                  now=local_time())
        if found["json"]:
            write_out(json.dumps([hit.as_json() for hit in hits], ensure_ascii=False, indent=2) + "\n")
        else:
            write_out(render_hits(hits, text))
        run_owed_checks([owed])

    return _reading(recall)


def _reading(command) -> int:  # a function of no arguments (no typing import at this module's top)
    """Run `command`, which only reads, and give its exit code: 0, or its failure told in one line
    as cli.run tells it (an output whose reader has gone is no failure: nothing was changed)."""
    from auto_dream.console import OutputLost, tell, tell_failure

    try:
        command()
    except OutputLost as lost:
        if lost.reader_gone:
            return 0
        tell(f"auto-dream: error: the output could not be written ({lost})")
        return 1
    except (KeyboardInterrupt, Exception) as error:
        code = tell_failure(error)
        if code is None:
            raise
        return code
    return 0


def quick_context_arguments(argv: list[str]) -> dict | None:
    """The arguments of a plain `[--root R] context [--json | --cursor-json]` line (what the
    session-start hooks run), or None to let Typer parse it."""
    root, args = _command_args(argv, "context")
    if args is None:
        return None
    from auto_dream.shell import CONTEXT_FLAGS

    flags = _by_name(CONTEXT_FLAGS, {"as_json": "as_json", "cursor_json": "cursor_json"})
    found: dict = {"root": root, "as_json": False, "cursor_json": False}
    for arg in args:
        if arg not in flags:
            return None  # --help, an argument or an option this parser does not know: Typer says
        found[flags[arg]] = True
    return found


def run_quick_context(found: dict) -> int:
    from auto_dream.commands.session_context import check_hook_format, hook_output, session_context
    from auto_dream.console import write_out
    from auto_dream.shell import store_root

    def context() -> None:
        check_hook_format(as_json=found["as_json"], cursor_json=found["cursor_json"])  # as the Typer command does
        text = hook_output(session_context(store_root(found["root"])), as_json=found["as_json"],
                           cursor_json=found["cursor_json"])
        if text:
            write_out(text)

    return _reading(context)


def main() -> None:
    try:
        code = _run(sys.argv[1:])
    except KeyboardInterrupt:  # Ctrl-C before the command's own handler was there: still one line
        code = 130
        try:
            sys.stderr.write("auto-dream: aborted\n")
        except (AttributeError, OSError, ValueError):
            pass
    # The exit trick (see the top). Everything auto-dream writes is closed by now, and its output
    # was flushed as it was written (console.py), a failure decided on then: flush what is left
    # and go, without Python trying a failed output again at exit.
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)


def _run(argv: list[str]) -> int:
    from auto_dream.console import tell
    from auto_dream.shell import settle_local_zone

    unusable_zone = settle_local_zone()  # before anything reads the clock
    if unusable_zone is not None:
        tell(f"auto-dream: warning: {unusable_zone}")
    found = quick_append_arguments(argv)
    if found is not None:
        return run_quick_append(found)
    found = quick_recall_arguments(argv)
    if found is not None:
        return run_quick_recall(found)
    found = quick_context_arguments(argv)
    if found is not None:
        return run_quick_context(found)
    import gc

    from auto_dream.cli import run

    gc.disable()  # the exit trick (see the top)
    return run(argv)


if __name__ == "__main__":
    main()
