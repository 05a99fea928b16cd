"""The report (DESIGN 3.5): one dict, rendered as JSON or as Markdown."""

from auto_dream.dream.plan import CreateMemory, Plan, RebuildIndex, RetireMemory, SkipEntries, UpdateMemory
from auto_dream.store.memory import shown

DEFERRED_SHOWN = 20
DRY_RUN_BANNER = "[DRY RUN] No files were modified. Run without --dry-run to apply changes."


def action_rows(actions: list, plan: Plan) -> list[dict]:
    rows = []
    for action in actions:
        match action:
            case CreateMemory(memory=memory, reason=reason):
                rows.append(_row("create", memory.path, None, reason))
            case UpdateMemory(after=memory, entry_ids=entry_ids, reason=reason):
                for entry_id in entry_ids:
                    source = f"{plan.entry_logs.get(entry_id, 'logs')}#{entry_id}"
                    rows.append(_row("merge", source, memory.path, reason))
            case RetireMemory(memory=memory, kind=kind, target=target, reason=reason, proposed=proposed):
                rows.append(_row(kind, memory.path, target, reason, proposed))
            case RebuildIndex(listed=listed, omitted=omitted):
                rows.append(_row("index", "MEMORY.md", None, f"{listed} memories listed"
                                 + (f", {omitted} counted in the last line" if omitted else "")))
    return rows


def _row(kind: str, path: str, target: str | None, reason: str, proposed: bool = False) -> dict:
    return {"kind": kind, "path": path, "target": target, "reason": reason, "proposed": proposed}


def build_report(plan: Plan, actions: list, surviving: int, index_lines: int, index_bytes: int,
                 warnings: list[str], entries_gathered: int, memories_scanned: int) -> dict:
    rows = action_rows(actions, plan)
    applied = [r for r in rows if not r["proposed"]]
    stats = {
        "entries_gathered": entries_gathered,
        "memories_scanned": memories_scanned,
        "created": sum(1 for r in applied if r["kind"] == "create"),
        "merged": sum(1 for r in applied if r["kind"] == "merge"),
        "superseded": sum(1 for r in applied if r["kind"] == "supersede"),
        "archived_stale": sum(1 for r in applied if r["kind"] == "archive"),
        "proposed": sum(1 for r in rows if r["proposed"]),
        "review": len(plan.review),
        "partially_stale": plan.counts.get("partially_stale", 0),
        "evergreen": plan.counts.get("evergreen", 0),
        "surviving": surviving,
        "index_lines": index_lines,
        "index_bytes": index_bytes,
        "llm_calls": plan.usage.calls,
        "llm_input_tokens": plan.usage.input_tokens,
        "llm_output_tokens": plan.usage.output_tokens,
        "llm_cached_tokens": plan.usage.cache_read_tokens,
        "llm_cache_write_tokens": plan.usage.cache_write_tokens,
        "llm_estimated_cost_usd": plan.usage.estimated_cost_usd,
        "llm_fallback_batches": plan.usage.fallback_batches,
    }
    skipped = [{"entries": list(a.entry_ids), "reason": a.reason} for a in actions if isinstance(a, SkipEntries)]
    if plan.deferred:
        warnings = [*warnings, f"retirement budget reached: {len(plan.deferred)} more retirements wait for "
                    "the next dream (resume: run `auto-dream dream` again; see `deferred` in the report)"]
    return {
        "run_id": plan.run_id,
        "dry_run": plan.dry_run,
        "mode": plan.mode,
        "stats": stats,
        "actions": rows,
        "skipped": skipped,
        "deferred": [_row(d.kind, d.memory.path, d.target, d.reason) for d in plan.deferred],
        "flagged": [{"path": path, "missing_refs": refs} for path, refs in plan.flagged],
        "review": [{"kind": r.kind, "path": r.path, "target": r.target, "evidence": r.evidence} for r in plan.review],
        "warnings": list(dict.fromkeys(warnings)),
    }


_VERBS = {"create": "CREATED", "merge": "MERGED into", "supersede": "SUPERSEDED by", "archive": "ARCHIVED",
          "index": "REBUILT"}
_WOULD = {"create": "Would create", "merge": "Would merge", "supersede": "Would supersede",
          "archive": "Would archive", "index": "Would rebuild"}
_METRICS = [("entries_gathered", "New log entries gathered"), ("memories_scanned", "Memory files scanned"),
            ("created", "Memories created"), ("merged", "Merged (entries and duplicates)"),
            ("superseded", "Contradictions resolved (superseded)"), ("archived_stale", "Stale memories archived"),
            ("proposed", "Retirements proposed, not applied"), ("review", "Pairs left for review (both kept)"),
            ("partially_stale", "Partially stale (kept, flagged)"),
            ("evergreen", "Evergreen (no verifiable refs)"), ("surviving", "Surviving memories"),
            ("index_lines", "MEMORY.md lines"), ("index_bytes", "MEMORY.md bytes"), ("llm_calls", "LLM calls"),
            ("llm_input_tokens", "LLM input tokens"), ("llm_output_tokens", "LLM output tokens"),
            ("llm_cached_tokens", "LLM input tokens read from the prompt cache"),
            ("llm_fallback_batches", "LLM batches that fell back to the deterministic distiller")]


def render_markdown(report: dict) -> str:
    dry = report["dry_run"]
    lines = [DRY_RUN_BANNER, ""] if dry else []
    lines += [f"## Dream Consolidation Report{' [DRY RUN]' if dry else ''}", "",
              f"Run `{report['run_id']}` · mode: {report['mode']}", "", "| Metric | Count |", "|--------|-------|"]
    lines += [f"| {label} | {report['stats'][key]:,} |" for key, label in _METRICS]
    if report["stats"]["llm_calls"]:
        lines.append(f"| LLM estimated cost | ${report['stats']['llm_estimated_cost_usd']:.4f} |")
    rows = report["actions"]
    if dry:
        lines += ["", "### Changes Planned", ""]
        for row in rows:
            target = f" → {row['target']}" if row["target"] else ""
            tag = " (proposal)" if row["proposed"] else ""
            lines.append(f"[DRY RUN] {_WOULD[row['kind']]}: {row['path']}{target}{tag} — {row['reason']}")
        if not rows:
            lines.append("[DRY RUN] Nothing to do.")
    else:
        lines += ["", "### Changes Made", ""]
        made = [r for r in rows if not r["proposed"]]
        if made:
            lines += ["| File | Action | Reason |", "|------|--------|--------|"]
            for row in made:
                action = _VERBS[row["kind"]] + (f" `{row['target']}`" if row["target"] else "")
                lines.append(f"| `{row['path']}` | {action} | {_cell(row['reason'])} |")
        else:
            lines.append("Nothing to change: the store is in order.")
        proposed = [r for r in rows if r["proposed"]]
        if proposed:
            lines += ["", "### Proposed (not applied: run without --propose to apply)", "",
                      "| File | Proposal | Reason |", "|------|----------|--------|"]
            for row in proposed:
                action = _VERBS[row["kind"]] + (f" `{row['target']}`" if row["target"] else "")
                lines.append(f"| `{row['path']}` | {action} | {_cell(row['reason'])} |")
    if report["deferred"]:
        listed = report["deferred"][:DEFERRED_SHOWN]
        lines += ["", "### Deferred by the retirement budget (the next dream resumes here)", ""]
        lines += [f"- {_VERBS[d['kind']].split()[0].lower()}: `{d['path']}`"
                  + (f" → `{d['target']}`" if d["target"] else "") + f" — {_cell(d['reason'])}" for d in listed]
        if len(report["deferred"]) > len(listed):
            lines.append(f"- … and {len(report['deferred']) - len(listed)} more (`dream --json` lists them all)")
    if report["review"]:
        lines += ["", "### For Review (both kept: dream was not certain)", "",
                  "| File | Possible | Other file | Evidence |", "|------|----------|------------|----------|"]
        for item in report["review"]:
            possible = item["kind"].removeprefix("possible_")
            lines.append(f"| `{item['path']}` | {possible} | `{item['target']}` | {_cell(item['evidence'])} |")
    if report["skipped"]:
        lines += ["", "### Entries kept in the log only", ""]
        lines += [f"- {', '.join(s['entries'])}: {s['reason']}" for s in report["skipped"]]
    if report["flagged"]:
        lines += ["", "### Flagged for Review (PARTIALLY_STALE)", "", "| File | Missing References |",
                  "|------|-------------------|"]
        for item in report["flagged"]:
            missing = ", ".join(f"`{ref}`" for ref in item["missing_refs"]) or "—"
            lines.append(f"| `{item['path']}` | {missing} |")
    if report["warnings"]:
        lines += ["", "### Warnings", ""]
        lines += [f"- {_cell(w)}" for w in report["warnings"]]
    # memory names, reasons and evidence quote what people wrote: no escape sequence reaches a terminal
    return "\n".join(shown(line) for line in lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
