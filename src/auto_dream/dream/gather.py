"""gather: the log entries not yet distilled, and the consult log's recent lookups."""

from dataclasses import replace

from auto_dream.dream import bookkeeping
from auto_dream.dream.state import Snapshot
from auto_dream.store.daylog import Entry, LogProblem, log_files, read_log
from auto_dream.store.scan import fingerprint


def gather(snapshot: Snapshot) -> Snapshot:
    """orient's snapshot with the logs' new entries added: a new snapshot, the old one as it was."""
    paths = snapshot.context.paths
    seen: set[str] = set()
    done = bookkeeping.read_logs_done(paths)
    new_entries: list[Entry] = []
    entry_logs: dict[str, str] = {}
    logs_read: dict[str, tuple[list[int], set[str]]] = {}
    logs_done: dict[str, list[int]] = {}
    log_problems: list[LogProblem] = []
    for log_path in log_files(paths):
        relative = paths.relative(log_path)
        seen_as = fingerprint(log_path)
        if seen_as is not None and done.get(relative) == list(seen_as):
            logs_done[relative] = list(seen_as)  # fully distilled and unchanged since
            continue
        entries, problems = read_log(log_path)
        log_problems.extend(problems)
        if seen_as is not None:
            logs_read[relative] = (list(seen_as), {e.id for e in entries})
        for entry in entries:
            if entry.id in seen or entry.id in snapshot.distilled_ids:
                continue
            seen.add(entry.id)
            new_entries.append(entry)
            entry_logs[entry.id] = relative
    new_entries.sort(key=lambda e: e.at)
    warnings = [*snapshot.warnings]
    for problem in log_problems:
        warnings.append(f"{paths.relative(problem.path)}:{problem.line}: {problem.message}")
    consulted_terms = bookkeeping.read_consulted_terms(paths, snapshot.now, snapshot.context.config.guard_days,
                                                       warnings)
    return replace(snapshot, new_entries=tuple(new_entries), entry_logs=entry_logs, logs_read=logs_read,
                   logs_done=logs_done, log_problems=tuple(log_problems), consulted_terms=frozenset(consulted_terms),
                   warnings=tuple(warnings))
