"""The report (docs/dream.md, "The report"): what a run did, or a dry run would do, as a frozen DreamReport,
rendered as JSON (as_json) or as Markdown (render_markdown)."""

import hashlib
from dataclasses import asdict, dataclass
from typing import Literal

from auto_dream.distill.folds import EXTENDS
from auto_dream.dream.actions import (
    Action,
    CreateMemory,
    RebuildIndex,
    RetireKind,
    RetireMemory,
    ReviewPair,
    SkipEntries,
    UpdateMemory,
)
from auto_dream.dream.apply import Applied
from auto_dream.dream.plan import Plan
from auto_dream.store.config import Mode
from auto_dream.store.memory import shown
from auto_dream.store.review_queue import item_id

DEFERRED_SHOWN = 20
DRY_RUN_BANNER = "[DRY RUN] No files were modified. Run without --dry-run to apply changes."


# What a report row says was done: a memory created, an entry or memory merged, one superseded or
# archived, MEMORY.md rebuilt (the retirements are actions.RetireKind)
RowKind = Literal["create", "index"] | RetireKind


@dataclass(frozen=True)
class ReportRow:
    """One action, or one retirement the budget deferred."""

    kind: RowKind
    path: str
    target: str | None
    reason: str
    proposed: bool = False
    archive: str | None = None  # where a retirement carried out keeps the memory

    def as_json(self) -> dict:
        return {"kind": self.kind, "path": self.path, "target": self.target, "reason": self.reason,
                "proposed": self.proposed, "archive": self.archive}


@dataclass(frozen=True)
class DreamStats:
    entries_gathered: int
    memories_scanned: int
    created: int
    merged: int
    extended: int  # merges of an entry that added a fact (its reason quotes what it added)
    superseded: int
    archived_stale: int
    proposed: int
    review: int
    review_pending: int  # the review queue's items after the run: decisions waiting for a reader
    partially_stale: int
    evergreen: int
    surviving: int
    decayed: int  # surviving memories neither changed nor looked up within decay_days
    index_lines: int
    index_bytes: int
    llm_calls: int
    llm_input_tokens: int
    llm_output_tokens: int
    llm_cached_tokens: int
    llm_cache_write_tokens: int
    llm_estimated_cost_usd: float
    llm_fallback_batches: int


@dataclass(frozen=True)
class SkippedEntries:
    entries: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class FlaggedMemory:
    """A memory kept although some of what it cites is gone (PARTIALLY_STALE, or guarded)."""

    path: str
    missing_refs: tuple[str, ...]


@dataclass(frozen=True)
class DreamReport:
    run_id: str
    dry_run: bool
    mode: Mode
    stats: DreamStats
    actions: tuple[ReportRow, ...]
    skipped: tuple[SkippedEntries, ...]
    deferred: tuple[ReportRow, ...]
    flagged: tuple[FlaggedMemory, ...]
    review: tuple[ReviewPair, ...]
    warnings: tuple[str, ...]
    distilled_entries: tuple[str, ...]  # the entries the run records as distilled
    index_sha256: str  # of MEMORY.md as the run leaves it

    def as_json(self) -> dict:
        return {
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "mode": self.mode,
            "stats": asdict(self.stats),
            "actions": [row.as_json() for row in self.actions],
            "skipped": [{"entries": list(s.entries), "reason": s.reason} for s in self.skipped],
            "deferred": [row.as_json() for row in self.deferred],
            "flagged": [{"path": f.path, "missing_refs": list(f.missing_refs)} for f in self.flagged],
            "review": [{"id": item_id(r.path, r.target), "kind": r.kind, "path": r.path, "target": r.target,
                        "evidence": r.evidence, "quotes": list(r.quotes)} for r in self.review],
            "warnings": list(self.warnings),
            "distilled_entries": list(self.distilled_entries),
            "index_sha256": self.index_sha256,
        }


def action_rows(actions: tuple[Action, ...] | list[Action], plan: Plan) -> list[ReportRow]:
    rows = []
    for action in actions:
        match action:
            case CreateMemory(memory=memory, reason=reason, folds=folds):
                rows.append(ReportRow("create", memory.path, None, reason))
                rows.extend(ReportRow("merge", f"{plan.entry_logs.get(fold.entry_id, 'logs')}#{fold.entry_id}",
                                      memory.path, fold.reason) for fold in folds)
            case UpdateMemory(after=memory, entry_ids=entry_ids, reason=reason):
                for entry_id in entry_ids:
                    source = f"{plan.entry_logs.get(entry_id, 'logs')}#{entry_id}"
                    rows.append(ReportRow("merge", source, memory.path, reason))
            case RetireMemory(memory=memory, kind=kind, target=target, reason=reason, proposed=proposed,
                              archived=archived):
                rows.append(ReportRow(kind, memory.path, target, reason, proposed,
                                      archived.path if archived is not None else None))
            case RebuildIndex(listed=listed, omitted=omitted):
                rows.append(ReportRow("index", "MEMORY.md", None, f"{listed} memories listed"
                                      + (f", {omitted} counted in the last line" if omitted else "")))
    return rows


def build_report(plan: Plan, applied: Applied | None = None) -> DreamReport:
    """The report of a run that applied the plan (`applied`: what it carried out), or of a
    dry run (None: the plan as it stands)."""
    if applied is None:
        actions, surviving, index = list(plan.actions), len(plan.live), plan.index
        decayed = plan.live.decayed(plan.activity)
        distilled, warnings = plan.distilled_entry_ids, list(plan.warnings)
    else:
        actions, surviving, index = applied.actions, len(applied.live), applied.index
        decayed = applied.live.decayed(plan.activity)
        distilled, warnings = applied.distilled_entry_ids, [*plan.warnings, *applied.skipped]
    rows = action_rows(actions, plan)
    carried_out = [r for r in rows if not r.proposed]
    usage = plan.usage
    stats = DreamStats(
        entries_gathered=plan.entries_gathered,
        memories_scanned=plan.memories_scanned,
        created=sum(1 for r in carried_out if r.kind == "create"),
        merged=sum(1 for r in carried_out if r.kind == "merge"),
        extended=sum(1 for r in carried_out if r.kind == "merge" and f" {EXTENDS} " in r.reason),
        superseded=sum(1 for r in carried_out if r.kind == "supersede"),
        archived_stale=sum(1 for r in carried_out if r.kind == "archive"),
        proposed=sum(1 for r in rows if r.proposed),
        review=len(plan.review),
        review_pending=len((plan.review_queue if applied is None else applied.queue).items),
        partially_stale=plan.counts.get("partially_stale", 0),
        evergreen=plan.counts.get("evergreen", 0),
        surviving=surviving,
        decayed=decayed,
        index_lines=index.line_count,
        index_bytes=index.byte_count,
        llm_calls=usage.calls,
        llm_input_tokens=usage.input_tokens,
        llm_output_tokens=usage.output_tokens,
        llm_cached_tokens=usage.cache_read_tokens,
        llm_cache_write_tokens=usage.cache_write_tokens,
        llm_estimated_cost_usd=usage.estimated_cost_usd,
        llm_fallback_batches=usage.fallback_batches,
    )
    if plan.deferred:
        warnings.append(f"retirement budget reached: {len(plan.deferred)} more retirements wait for "
                        "the next dream (resume: run `auto-dream dream` again; see `deferred` in the report)")
    return DreamReport(
        run_id=plan.run_id,
        dry_run=plan.dry_run,
        mode=plan.mode,
        stats=stats,
        actions=tuple(rows),
        skipped=tuple(SkippedEntries(a.entry_ids, a.reason) for a in actions if isinstance(a, SkipEntries)),
        deferred=tuple(ReportRow(d.kind, d.memory.path, d.target, d.reason) for d in plan.deferred),
        flagged=tuple(FlaggedMemory(path, tuple(refs)) for path, refs in plan.flagged),
        review=plan.review,
        warnings=tuple(dict.fromkeys(warnings)),
        distilled_entries=distilled,
        index_sha256=hashlib.sha256(index.text.encode("utf-8")).hexdigest(),
    )


_VERBS = {"create": "CREATED", "merge": "MERGED into", "supersede": "SUPERSEDED by", "archive": "ARCHIVED",
          "index": "REBUILT"}
_WOULD = {"create": "Would create", "merge": "Would merge", "supersede": "Would supersede",
          "archive": "Would archive", "index": "Would rebuild"}
_METRICS = [("entries_gathered", "New log entries gathered"), ("memories_scanned", "Memory files scanned"),
            ("created", "Memories created"), ("merged", "Merged (entries and duplicates)"),
            ("extended", "Extended (merged entries that added a fact)"),
            ("superseded", "Contradictions resolved (superseded)"), ("archived_stale", "Stale memories archived"),
            ("proposed", "Retirements proposed, not applied"), ("review", "Pairs left for review (both kept)"),
            ("review_pending", "Decisions waiting for a reader (auto-dream review)"),
            ("partially_stale", "Partially stale (kept, flagged)"),
            ("evergreen", "Evergreen (no verifiable refs)"), ("surviving", "Surviving memories"),
            ("decayed", "Decayed (not used within decay_days)"),
            ("index_lines", "MEMORY.md lines"), ("index_bytes", "MEMORY.md bytes"), ("llm_calls", "LLM calls"),
            ("llm_input_tokens", "LLM input tokens"), ("llm_output_tokens", "LLM output tokens"),
            ("llm_cached_tokens", "LLM input tokens read from the prompt cache"),
            ("llm_fallback_batches", "LLM batches that fell back to the deterministic distiller")]


def render_markdown(report: DreamReport, *, warnings: bool = True) -> str:
    """The report as Markdown; without its warnings (`warnings=False`) where they were told already
    (the command line prints each on stderr). The LLM's rows are shown only when it was used."""
    dry = report.dry_run
    stats = asdict(report.stats)
    used_llm = report.stats.llm_calls or report.stats.llm_fallback_batches
    lines = [DRY_RUN_BANNER, ""] if dry else []
    lines += [f"## Dream Consolidation Report{' [DRY RUN]' if dry else ''}", "",
              f"Run `{report.run_id}` · mode: {report.mode}", "", "| Metric | Count |", "|--------|-------|"]
    lines += [f"| {label} | {stats[key]:,} |" for key, label in _METRICS if used_llm or not key.startswith("llm_")]
    if report.stats.llm_calls:
        lines.append(f"| LLM estimated cost | ${report.stats.llm_estimated_cost_usd:.4f} |")
    rows = report.actions
    if dry:
        lines += ["", "### Changes Planned", ""]
        for row in rows:
            target = f" → {row.target}" if row.target else ""
            tag = " (proposal)" if row.proposed else ""
            kept = f" (kept as {row.archive})" if row.archive else ""
            lines.append(f"[DRY RUN] {_WOULD[row.kind]}: {row.path}{target}{tag}{kept} — {row.reason}")
        if not rows:
            lines.append("[DRY RUN] Nothing to do.")
    else:
        lines += ["", "### Changes Made", ""]
        made = [r for r in rows if not r.proposed]
        if made:
            lines += ["| File | Action | Reason |", "|------|--------|--------|"]
            for row in made:
                action = _VERBS[row.kind] + (f" `{row.target}`" if row.target else "")
                lines.append(f"| `{row.path}` | {action} | {_cell(row.reason)} |")
        else:
            lines.append("Nothing to change: the store is in order.")
        proposed = [r for r in rows if r.proposed]
        if proposed:
            lines += ["", "### Proposed (not applied: run without --propose to apply)", "",
                      "| File | Proposal | Reason |", "|------|----------|--------|"]
            for row in proposed:
                action = _VERBS[row.kind] + (f" `{row.target}`" if row.target else "")
                lines.append(f"| `{row.path}` | {action} | {_cell(row.reason)} |")
    if report.deferred:
        listed = report.deferred[:DEFERRED_SHOWN]
        lines += ["", "### Deferred by the retirement budget (the next dream resumes here)", ""]
        lines += [f"- {_VERBS[d.kind].split()[0].lower()}: `{d.path}`"
                  + (f" → `{d.target}`" if d.target else "") + f" — {_cell(d.reason)}" for d in listed]
        if len(report.deferred) > len(listed):
            lines.append(f"- … and {len(report.deferred) - len(listed)} more (`dream --json` lists them all)")
    if report.review:
        lines += ["", "### For Review (both kept: dream was not certain)", "",
                  "| File | Possible | Other file | Evidence |", "|------|----------|------------|----------|"]
        for item in report.review:
            possible = item.kind.removeprefix("possible_")
            lines.append(f"| `{item.path}` | {possible} | `{item.target}` | {_cell(item.evidence)} |")
    if report.stats.review_pending:
        lines += ["", f"{report.stats.review_pending} decision(s) wait for a reader: `auto-dream review` lists them "
                  "with their evidence, `auto-dream resolve ID keep|merge|supersede` decides one."]
    if report.skipped:
        lines += ["", "### Entries kept in the log only", ""]
        lines += [f"- {', '.join(s.entries)}: {s.reason}" for s in report.skipped]
    if report.flagged:
        lines += ["", "### Flagged for Review (PARTIALLY_STALE)", "", "| File | Missing References |",
                  "|------|-------------------|"]
        for flagged in report.flagged:
            missing = ", ".join(f"`{ref}`" for ref in flagged.missing_refs) or "—"
            lines.append(f"| `{flagged.path}` | {missing} |")
    if report.warnings and warnings:
        lines += ["", "### Warnings", ""]
        lines += [f"- {_cell(w)}" for w in report.warnings]
    # memory names, reasons and evidence quote what people wrote: no escape sequence reaches a terminal
    return "\n".join(shown(line) for line in lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
