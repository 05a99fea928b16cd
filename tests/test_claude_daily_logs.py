"""Claude Code's own day logs beside ours: each of its lines reported, never passed over in silence.

Claude Code's assistant mode keeps its daily log at the very path `append` writes to in a memory
folder, `<memory folder>/logs/YYYY/MM/YYYY-MM-DD.md` (docs/claude-code-daily-logs.md). What public
material says those lines look like, and all it says:
- Claude Code v2.1.88, src/memdir/memdir.ts, buildAssistantDailyLogPrompt (a public mirror:
  PengJiyuan/free-code@79765a5): the model is told "Write each entry as a short timestamped
  bullet" and nothing more: no timestamp form, no example line.
- Piebald-AI/claude-code-system-prompts, system-prompts/agent-prompt-dream-memory-consolidation.md
  at v2.1.116 (commit 967c3cf): "each line is prefix-coded (`>` user, `<` assistant, `.` tool call)".
Neither is a line format to parse, so auto-dream reads none of these lines as entries: it names
each one, with its line number, and leaves the file as it is. The bullets below are shapes a
model may write for that one instruction, not copies of a real log (none is public).
"""

import json
from datetime import date, datetime

from auto_dream.store.daylog import Entry, append_entry, parse_log, read_log

DAY = date(2026, 4, 1)
# A log as a model following "a short timestamped bullet" might write it: a title, then bullets.
CLAUDE_LOG = (
    "# 2026-04-01\n"
    "\n"
    "- 14:32 — User prefers bun over npm for all package management\n"
    "- **15:10** Deploy freeze starts Thursday for the mobile release\n"
    "* 2026-04-01 16:05: the staging database is read-only until Monday\n"
    "- (17:40) asked me to remember the Grafana board for on-call\n"
    "- [18:02] stop summarizing diffs at the end of a reply\n"
)
CLAUDE_LINES = [3, 4, 5, 6, 7]


def test_each_timestamped_bullet_is_reported_with_its_line_and_none_is_read():
    entries, problems = parse_log(CLAUDE_LOG)
    assert entries == []
    assert [p.line for p in problems] == CLAUDE_LINES  # the title and the blank line are no facts


def test_activity_lines_prefix_coded_for_user_assistant_and_tool_are_reported():
    log = "> use bun, not npm\n< Switched the scripts to bun.\n. Bash(bun install)\n"
    entries, problems = parse_log(log)
    assert entries == []
    assert [p.line for p in problems] == [1, 2, 3]
    assert all("another log format" in p.message for p in problems)


def test_a_claude_log_then_our_appends_reads_ours_and_reports_theirs(paths):
    log = paths.log_file(DAY)
    log.parent.mkdir(parents=True)
    log.write_text(CLAUDE_LOG)
    ours = [Entry(datetime(2026, 4, 1, 19, 0, 5), "Use bun for scripts.", "feedback"),
            Entry(datetime(2026, 4, 1, 19, 1), "Freeze ends Monday.\nThen ship 2.4.", None)]
    for entry in ours:
        append_entry(paths, entry)
    entries, problems = read_log(log)
    assert entries == ours  # their times, types and continuation lines as appended
    assert [p.line for p in problems] == CLAUDE_LINES
    assert log.read_text().startswith(CLAUDE_LOG)  # their lines are left exactly as they were


def test_check_names_every_claude_line_it_does_not_read(root, cli):
    log = root / "logs/2026/04/2026-04-01.md"
    log.parent.mkdir(parents=True)
    log.write_text(CLAUDE_LOG + "- [2026-04-01 19:00:05] (feedback) Use bun for scripts.\n")
    result = cli("--root", root, "check", "--json")
    assert result.code == 0
    assert json.loads(result.out)["undistilled_entries"] == 1
    named = [line for line in result.err.splitlines() if "2026-04-01.md:" in line]
    assert [int(line.split("2026-04-01.md:")[1].split(":")[0]) for line in named] == CLAUDE_LINES


def test_dream_warns_of_them_and_never_rewrites_the_log(root, cli):
    log = root / "logs/2026/04/2026-04-01.md"
    log.parent.mkdir(parents=True)
    log.write_text(CLAUDE_LOG)
    result = cli("--root", root, "dream", "--no-llm", "--json")
    assert result.code == 0, result
    warnings = json.loads(result.out)["warnings"]
    assert [w for w in warnings if w.startswith("logs/2026/04/2026-04-01.md:")] == [
        f"logs/2026/04/2026-04-01.md:{line}: not read: a note in another log format "
        "(an entry is `- [YYYY-MM-DD HH:MM] text`); left as it is" for line in CLAUDE_LINES[:4]] + [
        "logs/2026/04/2026-04-01.md:7: not an entry: expected `- [YYYY-MM-DD HH:MM] text`"]
    assert log.read_text() == CLAUDE_LOG
