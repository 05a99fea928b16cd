"""gather: the log entries not yet distilled, and the consult log's recent lookups."""

from auto_dream.dream import bookkeeping
from auto_dream.dream.state import DreamState
from auto_dream.store.daylog import log_files, read_log
from auto_dream.store.scan import fingerprint


def gather(state: DreamState) -> DreamState:
    paths = state.context.paths
    seen: set[str] = set()
    done = bookkeeping.read_logs_done(paths)
    for log_path in log_files(paths):
        relative = paths.relative(log_path)
        seen_as = fingerprint(log_path)
        if seen_as is not None and done.get(relative) == list(seen_as):
            state.logs_done[relative] = list(seen_as)  # fully distilled and unchanged since
            continue
        entries, problems = read_log(log_path)
        state.log_problems.extend(problems)
        if seen_as is not None:
            state.logs_read[relative] = (list(seen_as), {e.id for e in entries})
        for entry in entries:
            if entry.id in seen or entry.id in state.distilled_ids:
                continue
            seen.add(entry.id)
            state.new_entries.append(entry)
            state.entry_logs[entry.id] = relative
    state.new_entries.sort(key=lambda e: e.at)
    for problem in state.log_problems:
        state.warnings.append(f"{paths.relative(problem.path)}:{problem.line}: {problem.message}")
    state.consulted_terms = bookkeeping.read_consulted_terms(paths, state.now, state.context.config.guard_days,
                                                             state.warnings)
    return state
