"""What a person wrote about a memory's own status, read from its texts alone (judge/status.py)."""

import pytest

from auto_dream.judge.status import Status, resolve_pointer, written_status

COVER_LETTER_HOOK = "SUPERSEDED by unified rules below. Kept for historical reference only."

# (name, description, body, file name) -> (kind, where the quote is, points_to); None: live knowledge
MARKED = [
    # English: in the name
    ("DEPRECATED: deploy with Jenkins", "Deploys go through Jenkins", "", "", "deprecated", "name", ()),
    ("[DEPRECATED] Deploy flow", "How we deploy", "", "", "deprecated", "name", ()),
    ("Cover letter quality (superseded)", "Cover letter standards", "", "", "superseded", "name", ()),
    ("~~Cover letter quality~~", "Cover letter standards", "", "", "deprecated", "name", ()),
    ("Deploy flow — superseded by deploy v2", "How we deploy", "", "", "superseded", "name", ("deploy v2",)),
    ("Old release checklist [obsolete]", "Steps before a release", "", "", "deprecated", "name", ()),
    ("[merged] Gemini notes", "Gemini CLI tried", "", "", "superseded", "name", ()),
    # English: at the start of the description
    ("Cover letter quality", COVER_LETTER_HOOK, "", "", "superseded", "description", ("unified rules",)),
    ("Cover letter", "Superseded by feedback_resume_cover_letter_quality_2026-03-26.md — all rules consolidated there",
     "", "", "superseded", "description", ("feedback_resume_cover_letter_quality_2026-03-26.md",)),
    ("Never list commands", "Duplicate of [[feedback-never-defer-to-human]]", "", "",
     "duplicate", "description", ("feedback-never-defer-to-human",)),
    ("OpenClaw", "Moved to `reference_openclaw_setup.md`", "", "", "moved", "description",
     ("reference_openclaw_setup.md",)),
    ("Deploy", "Split into [deploy staging](deploy_staging.md) and [deploy prod](deploy_prod.md)", "", "",
     "split", "description", ("deploy_staging.md", "deploy_prod.md")),
    ("Deploy", "Deprecated — see `deploy_v2.md`", "", "", "deprecated", "description", ("deploy_v2.md",)),
    ("Deploy", "No longer used.", "", "", "deprecated", "description", ()),
    ("Setup", "MOVED: now lives in reference_setup.md", "", "", "moved", "description", ("reference_setup.md",)),
    ("Deploy", "Deprecated in favour of the deploy v2 memory", "", "", "deprecated", "description",
     ("deploy v2 memory",)),
    ("Deploy", "2026-03-26: OBSOLETE", "", "", "deprecated", "description", ()),
    ("Deploy", "OUTDATED — see deploy_v2.md", "", "", "deprecated", "description", ("deploy_v2.md",)),
    # English: the body's first line, or a line about the memory itself
    ("Release", "Release steps", "**OBSOLETE** — replaced by project_release_v2.md", "", "superseded", "line",
     ("project_release_v2.md",)),
    ("Cover letter", "Rules", "> ⚠️ Deprecated (2026-03-26): use the unified rules in "
     "feedback_resume_cover_letter_quality_2026-03-26.md\n\nRules follow.", "", "deprecated", "line",
     ("feedback_resume_cover_letter_quality_2026-03-26.md",)),
    ("Deploy", "How we deploy", "# Deploy flow\n\n**Status:** superseded by [[deploy-v2]]\n\nOld steps.", "",
     "superseded", "line", ("deploy-v2",)),
    ("Deploy", "How we deploy", "# ~~Deploy flow~~\n\nOld steps.", "", "deprecated", "line", ()),
    ("Gemini", "Gemini CLI tried", "Gemini was net negative.\n\nThis note has been merged into `feedback_b.md`.",
     "", "superseded", "line", ("feedback_b.md",)),
    ("Deploy", "How we deploy", "Steps:\n- build\n\nThis memory is no longer maintained; see deploy_v2.md.", "",
     "deprecated", "line", ("deploy_v2.md",)),
    ("Deploy", "How we deploy", "Old steps.\n\nThis memory is outdated; see deploy_v2.md", "", "deprecated", "line",
     ("deploy_v2.md",)),
    ("Deploy", "How we deploy", "", "DEPRECATED_deploy_flow.md", "deprecated", "file", ()),
    ("Deploy", "How we deploy", "", "deploy_flow.SUPERSEDED.md", "superseded", "file", ()),
    # Chinese
    ("【已废弃】部署流程", "部署步骤", "", "", "deprecated", "name", ()),
    ("旧的部署流程（已过时）", "部署步骤", "", "", "deprecated", "name", ()),
    ("部署流程", "已废弃，参见 deploy_v2.md", "", "", "deprecated", "description", ("deploy_v2.md",)),
    ("部署流程", "已被 `feedback_b.md` 取代", "", "", "superseded", "description", ("feedback_b.md",)),
    ("部署流程", "已合并到 [[部署流程v2]]", "", "", "superseded", "description", ("部署流程v2",)),
    ("部署流程", "已拆分为 deploy_staging.md 和 deploy_prod.md", "", "", "split", "description",
     ("deploy_staging.md", "deploy_prod.md")),
    ("部署流程", "与 feedback_never_defer_to_human.md 重复", "", "", "duplicate", "description",
     ("feedback_never_defer_to_human.md",)),
    ("部署流程", "部署步骤", "本笔记已迁移至 reference_setup.md。", "", "moved", "line", ("reference_setup.md",)),
    ("部署流程", "部署步骤", "状态：已弃用\n\n旧的步骤。", "", "deprecated", "line", ()),
    ("部署流程", "重复，见 [[feedback-a]]", "", "", "duplicate", "description", ("feedback-a",)),
    # Japanese
    ("【非推奨】デプロイ手順", "手順", "", "", "deprecated", "name", ()),
    ("デプロイ手順（廃止）", "手順", "", "", "deprecated", "name", ()),
    ("デプロイ手順", "廃止：deploy_v2.md を参照", "", "", "deprecated", "description", ("deploy_v2.md",)),
    ("デプロイ手順", "feedback_b.md に統合済み", "", "", "superseded", "description", ("feedback_b.md",)),
    ("デプロイ手順", "統合済み。新しいルールは `rules.md` を参照", "", "", "superseded", "description", ("rules.md",)),
    ("デプロイ手順", "reference_setup.md と重複", "", "", "duplicate", "description", ("reference_setup.md",)),
    ("デプロイ手順", "手順", "このメモは [[deploy-v2]] に移動しました。", "", "moved", "line", ("deploy-v2",)),
    ("デプロイ手順", "手順", "# デプロイ手順\n\n移動しました：deploy_v2.md を参照", "", "moved", "line",
     ("deploy_v2.md",)),
]

# Live knowledge: memories that talk about deprecation, moves and merges, or mark something else
LIVE = [
    ("API policy", "Deprecation policy: we deprecate APIs after two releases", "", ""),
    ("Flags", "Flags we use", "The `foo` flag is deprecated in v3; use `bar`", ""),
    ("Deprecated APIs we still call", "A list to migrate", "", ""),
    ("Flags", "Flags", "Deprecated: `React.FormEvent` — use `React.FormEvent<HTMLFormElement>`", ""),
    # real: orchestkit's review-v7-hooks-pr835.md, an archive of findings that is itself live
    ("review-v7-hooks-pr835", "Archived detailed findings from v7.0.0 hook review (PR #835, 2026-03-02)", "", ""),
    # real: orchestkit's m117-pr-shape-recommendation.md recommends a split, it is not one
    ("M117 PR Shape Recommendation",
     "Two-PR split strategy for CC 2.1.117 adoption milestone (adoption + hygiene)",
     "## Recommendation: Option B (Split into Adoption + Hygiene)\n\nShip two PRs.", ""),
    ("Recommendation: Option B (Split into Adoption + Hygiene)", "Ship two PRs", "", ""),
    # real: application-pipeline, recommendarr
    ("Outreach data persistence gap — RESOLVED 2026-03-25", "LinkedIn DM activity was not persisting", "", ""),
    ("React 19 event types", "React 19 deprecated `React.FormEvent` but still uses its own synthetic event wrappers",
     "", ""),
    ("Resume rules", "Rules", "- **Always use `--no-pdf-header-footer`** flag (NOT `--print-to-pdf-no-header` "
     "which is deprecated).", ""),
    ("Session 2026-03-15", "Job entries >72h moved to research_pool.", "", ""),
    ("Freshness gate", "Moves job-track entries in `active/` older than 72h to `research_pool/`", "", ""),
    ("Home", "Moved to Berlin in 2024; works remotely for a US startup", "", ""),
    ("CI", "CI notes", "Merged into main after review; CI green.", ""),
    ("Release", "Split the release into two PRs", "", ""),
    ("cc-watch", "Duplicate issues filed by cc-watch: #2030 + #2038", "", ""),
    ("Decisions", "Superseded decisions are kept in decisions/archive/", "", ""),
    ("Deploys", "Deploys", "This file is the source of truth for deploys", ""),
    ("Jenkins", "No longer using Jenkins: deploys go through GitHub Actions", "", ""),
    ("Jenkins", "No longer used by the team: Jenkins", "", ""),
    ("Releases", "Merged PR #1453 into release branch", "", ""),
    ("Retiring memories", "Superseded, merged and stale memories are archived, never deleted", "", ""),
    ("APIs", "APIs", "", "deprecated_apis.md"),
    ("Docs", "Docs", "We replaced npm with pnpm. Packages moved to the workspace root.", ""),
    ("Lint", "Lint", "```\n# DEPRECATED: old config\n```\nThe config above is kept for reference.", ""),
    ("Node", "Outdated: the README says Node 18; we use Node 20", "", ""),
    ("Deploy", "Deprecated: the old deploy.sh script; use make deploy", "", ""),
    ("Python", "Obsolete: Python 3.8 support was dropped in March", "", ""),
    ("API", "Retired: the v1 API was retired in 2025", "", ""),
    # Chinese
    ("API 列表", "废弃的API列表：v1 接口将在六月下线", "", ""),
    ("CI", "本项目已迁移到 GitHub Actions", "", ""),
    ("接口", "接口", "本文件记录已废弃接口的迁移步骤", ""),
    ("搬家", "我们搬到了上海", "", ""),
    ("接口", "v2 接口已被 v3 接口取代，客户端需要升级", "", ""),
    ("发布", "重复：每周二发布", "", ""),  # 重复 is also "recurring"
    ("服务器", "已迁移：服务器在新机房", "", ""),
    # Japanese
    ("オフィス", "新しいオフィスに移動しました", "", ""),
    ("API", "v3 で非推奨になった API の一覧", "", ""),
    ("手順", "手順", "このメモはデプロイ手順についてです", ""),
    ("認証", "認証モジュールに統合しました", "", ""),
    ("設定", "設定", "旧設定は廃止されたので、新しい設定ファイルを使う", ""),
    ("DB", "移行済み：DB は PostgreSQL へ", "", ""),
]


@pytest.mark.parametrize(("name", "description", "body", "file_name", "kind", "where", "points_to"), MARKED)
def test_a_status_a_person_wrote_of_the_memory_is_read(name, description, body, file_name, kind, where, points_to):
    status = written_status(name, description, body, file_name)
    assert status is not None
    assert (status.kind, status.points_to) == (kind, points_to)
    if where == "name":
        assert status.quote == name
    elif where == "description":
        assert status.quote == description
    elif where == "file":
        assert status.quote == file_name
    else:
        assert status.quote in body.split("\n")  # the whole line, as written


@pytest.mark.parametrize(("name", "description", "body", "file_name"), LIVE)
def test_a_memory_that_only_talks_about_deprecation_is_live_knowledge(name, description, body, file_name):
    assert written_status(name, description, body, file_name) is None


def test_the_status_that_says_where_the_content_went_wins_over_one_that_does_not():
    status = written_status("Deploy (obsolete)", "Superseded by `deploy_v2.md`", "")
    assert status == Status("superseded", "Superseded by `deploy_v2.md`", ("deploy_v2.md",))


def test_a_status_as_json_has_its_kind_quote_and_pointers():
    status = written_status("Deploy", "Duplicate of `deploy_v2.md`", "")
    assert status is not None
    assert status.as_json() == {"kind": "duplicate", "quote": "Duplicate of `deploy_v2.md`",
                                "points_to": ["deploy_v2.md"]}


CANDIDATES = {
    "feedback_resume_cover_letter_quality_2026-03-26.md":
        "Resume and cover letter quality — COMPLETE rules (original + amendments)",
    "project_execute_strategy_selector_2516.md": "Execute strategy selector",
    "memories/project/20260301_deploy_v2.md": "Deploy v2",
    "memories/project/20260301_deploy_staging.md": "Deploy staging",
    "a/notes.md": "Notes A",
    "b/notes.md": "Notes B",
}


@pytest.mark.parametrize(("points_to", "expected"), [
    (("feedback_resume_cover_letter_quality_2026-03-26.md",), "feedback_resume_cover_letter_quality_2026-03-26.md"),
    (("feedback_resume_cover_letter_quality_2026-03-26",), "feedback_resume_cover_letter_quality_2026-03-26.md"),
    (("./feedback_resume_cover_letter_quality_2026-03-26.md",), "feedback_resume_cover_letter_quality_2026-03-26.md"),
    # orchestkit's wiki links name a file with dashes for its underscores
    (("project-execute-strategy-selector-2516",), "project_execute_strategy_selector_2516.md"),
    (("Deploy v2",), "memories/project/20260301_deploy_v2.md"),
    (("deploy V2",), "memories/project/20260301_deploy_v2.md"),
    (("memories/project/20260301_deploy_v2.md",), "memories/project/20260301_deploy_v2.md"),
    (("project/20260301_deploy_v2.md",), "memories/project/20260301_deploy_v2.md"),
    (("20260301_deploy_v2.md#steps",), "memories/project/20260301_deploy_v2.md"),
    (("a/notes.md",), "a/notes.md"),
    (("notes.md",), None),  # two files have that name
    (("Deploy v2", "Deploy staging"), None),  # split in two: not one memory
    (("unified rules",), None),  # names no memory
    ((), None),
    (("unified rules", "Deploy v2"), "memories/project/20260301_deploy_v2.md"),
])
def test_a_pointer_resolves_to_exactly_one_memory_or_none(points_to, expected):
    assert resolve_pointer(points_to, CANDIDATES) == expected
