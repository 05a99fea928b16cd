"""gather: the log entries not yet distilled, and the consult log's recent lookups."""

from dataclasses import replace

from auto_dream.dream import bookkeeping
from auto_dream.dream.snapshot import Snapshot
from auto_dream.store.undistilled import open_logs, read_undistilled


def gather(snapshot: Snapshot) -> Snapshot:
    """orient's snapshot with the logs' new entries added: a new snapshot, the old one as it was."""
    paths = snapshot.context.paths
    logs, logs_done = open_logs(paths)  # a log recorded as fully distilled and unchanged is not read
    found = read_undistilled(logs, snapshot.distilled_ids)
    new_entries, entry_logs, logs_read, log_problems = found.entries, found.entry_logs, found.logs_read, found.problems
    warnings = [*snapshot.warnings]
    for problem in log_problems:
        warnings.append(f"{paths.relative(problem.path)}:{problem.line}: {problem.message}")
    consulted_terms = bookkeeping.read_consulted_terms(paths, snapshot.now, snapshot.context.config.guard_days,
                                                       warnings)
    return replace(snapshot, new_entries=tuple(new_entries), entry_logs=entry_logs, logs_read=logs_read,
                   logs_done=logs_done, log_problems=tuple(log_problems), consulted_terms=frozenset(consulted_terms),
                   warnings=tuple(warnings))
