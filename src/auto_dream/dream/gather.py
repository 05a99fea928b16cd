"""gather: the log entries not yet distilled, and the consult log's recent lookups."""

from auto_dream.dream import bookkeeping
from auto_dream.dream.state import DreamState
from auto_dream.journal import log_files, read_log


def gather(state: DreamState) -> DreamState:
    paths = state.context.paths
    seen: set[str] = set()
    for log_path in log_files(paths):
        entries, problems = read_log(log_path)
        state.log_problems.extend(problems)
        relative = paths.relative(log_path)
        for entry in entries:
            if entry.id in seen or entry.id in state.distilled_ids:
                continue
            seen.add(entry.id)
            state.new_entries.append(entry)
            state.entry_logs[entry.id] = relative
    state.new_entries.sort(key=lambda e: e.at)
    for problem in state.log_problems:
        state.warnings.append(f"{paths.relative(problem.path)}:{problem.line}: {problem.message}")
    state.consulted_terms = bookkeeping.read_consulted_terms(paths, state.now, state.context.config.guard_days)
    return state
