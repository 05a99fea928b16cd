"""The judge's rules for pairs a careful reader sees and word overlap missed, or listed for nothing
(docs/dream.md, "The judge"): a verdict from two texts, no store on disk."""

from datetime import datetime, timezone

import pytest

from auto_dream.judge.similarity import Profile
from auto_dream.judge.statements import Side, extended_identifier, judge

DUPLICATE, CONTRADICTION = 0.6, 0.4
OLDER = datetime(2026, 1, 1, tzinfo=timezone.utc)
NEWER = datetime(2026, 2, 1, tzinfo=timezone.utc)


def verdict(older: str, newer: str):
    return judge(Side(older, Profile.of(older), OLDER), Side(newer, Profile.of(newer), NEWER), DUPLICATE,
                 CONTRADICTION)


# (older, newer, outcome, kind, rule)
CASES = [
    # support dropped takes back what the other says is supported, whatever each sentence opens with
    ("The desktop client supports Windows 10 and later.",
     "We dropped Windows 10 support; the client now requires Windows 11.", "review", "conflict", "retracted"),
    ("The Android app supports API level 24 and up.",
     "We dropped support for API level 24 in the Android app; it now starts at 26.",
     "review", "conflict", "change_of_subject"),
    # "dropped" that stops nothing is no retraction
    ("Jon takes his daughter to the school near the studio.", "Jon dropped his daughter at school this morning.",
     "none", "", ""),
    # both deny the same thing, and differ in a short phrase of what they say of one subject
    ("The user prefers terse commit messages with no emoji.",
     "User likes short, plain commit messages without any emoji.", "review", "duplicate", "same_denial"),
    ("The team wants quiet alerts with no paging at night.",
     "Team asks for calm, grouped alerts without any paging at night.", "review", "duplicate", "same_denial"),
    # ... what they deny differs: nothing to say
    ("The user prefers terse commit messages with no emoji.",
     "User likes short, plain commit messages without any ticket numbers.", "none", "", ""),
    # one short phrase said otherwise in a clause too small to tell, the rest of the statement the same
    ("Never deploy straight to production; go through staging even for urgent hotfixes.",
     "Don't ship directly to production — even an urgent hotfix goes through staging.",
     "review", "duplicate", "reworded_in_one_clause"),
    # ... without the rest, one word for another in a rule is two rules
    ("Never commit directly to main.", "Never force-push to main.", "none", "", ""),
    # ... and a clause with words enough of its own that differ is another fact (LoCoMo)
    ("Evan appreciates Sam's support during his job loss and personal challenges.",
     "Evan appreciates Sam's support and finds it invaluable.", "none", "", ""),
    # other words that name a thing each side only: two things, not one in other words
    ("Lee owns the Grafana dashboards for the billing service.",
     "Lee owns the Sentry alerts for the billing service.", "none", "", ""),
    ("Priya maintains the Terraform modules for the search cluster.",
     "Priya maintains the Ansible playbooks for the search cluster.", "none", "", ""),
    # ... other words without a name are still the same statement in other words
    ("Generate migrations with `alembic revision --autogenerate` and review the generated file by hand before "
     "committing.", "When a schema change needs a migration, autogenerate it with alembic and hand-review the file "
     "before it's committed.", "review", "duplicate", "swapped_words"),
    # an identifier with a part added is another identifier: with one word swapped besides, two facts
    ("支付服务的缺陷登记在Jira的PAY项目。", "支付服务的需求登记在Jira的PAY-REQ项目。", "none", "", ""),
    ("決済サービスの不具合はJiraのPAYプロジェクトで管理する。",
     "決済サービスの要望はJiraのPAY-REQプロジェクトで管理する。", "none", "", ""),
    # ... the same identifier: one word for another is still listed
    ("支付服务的缺陷登记在Jira的PAY项目。", "支付服务的需求登记在Jira的PAY项目。",
     "review", "conflict", "name_swapped"),
    # a paraphrase in Chinese or Japanese shares few character bigrams but keeps its terms of art:
    # the same terms on both sides (one side may add one), whatever the words around them
    ("每次发版前都要先跑`npm test`。", "发布之前先执行npm test。", "review", "duplicate", "same_terms"),
    ("障害対応の手順はConfluenceの`SRE-Runbook`ページにある。", "インシデント時はConfluenceのSRE-Runbookを見ること。",
     "review", "duplicate", "same_terms"),
    # ... a term one writes in Latin letters and the other in its own script is one term (values.SPELLINGS)
    ("每次发版前都要确认功能开关的默认值。", "发布前先检查feature flag的默认值。", "review", "duplicate", "same_terms"),
    # ... but a spelling is no anchor by itself: 数据库 on both sides, and the values differ
    ("数据库每晚备份到S3。", "数据库连接池上限是50。", "none", "", ""),
    # ... one term is enough when both deny the same thing with it
    ("写脚本时别用sudo，权限不够就找运维。", "执行部署脚本不需要加sudo。", "review", "duplicate", "same_terms"),
    # ... one term alone, nothing denied: two things said of it
    ("李娜用Python写爬虫。", "王强用Python做数据分析报表。", "none", "", ""),
    # ... a term on each side only: two facts of one shape
    ("监控告警发到Slack的#alerts频道。", "发布通知都发到Slack的#releases频道里。", "none", "", ""),
    # ... and only one side says it changed: a possible conflict
    ("所有PR都用squash方式合并。", "PR不再用squash合并，改用rebase合并。", "review", "conflict", "same_terms"),
    # 别 after a word that sets its time negates as at the start: both deny mocking Redis, no contradiction
    ("集成测试不要mock Redis，连本地容器。", "跑集成测试时别mock掉Redis，用本地的容器实例。",
     "review", "duplicate", "swapped_words"),
    ("别人的代码不要直接改。", "可以直接改别人的代码。", "supersede", "conflict", "is_contradiction"),
    # a short form is its word ("dev" / "developer"): the same statement, "who writes" said as "mostly"
    ("The user is a backend developer who writes Python and Go", "User is a backend dev, mostly Python and Go",
     "review", "duplicate", "swapped_words"),
    # a Chinese statement that says since when it holds, the rest the older one with another name: it
    # shares one character pair of five with it, yet says the person moved
    ("王磊在增长组。", "王磊从十月起在平台组。", "review", "conflict", "since_changed"),
    # ... since when, and then something else about the person: nothing to say
    ("王磊在增长组。", "王磊从下周起负责报销审批。", "none", "", ""),
    # ... a phrase that only looks like one (自动化 … 开始) is no "since"
    ("自动化测试在增长组的机器上跑。", "自动化测试开始前在平台组的机器上拉代码。", "none", "", ""),
    # a plan put off takes back the date the other gives it
    ("公测定在6月1日上线。", "公测延期了，新日期还没定。", "review", "conflict", "put_off"),
    ("发布会定在周四下午。", "发布会推迟了，时间待定。", "review", "conflict", "put_off"),
    ("迁移窗口定在周六凌晨2点。", "迁移窗口取消了，等通知。", "review", "conflict", "put_off"),
    # ... not what the other says of it without a date
    ("公测的反馈都发到#beta频道。", "公测延期了，新日期还没定。", "none", "", ""),
    # ... nor when the other already says it was put off
    ("公测原定6月1日，已经延期。", "公测延期了，新日期还没定。", "none", "", ""),
]


@pytest.mark.parametrize("older, newer, outcome, kind, rule", CASES, ids=[case[1][:40] for case in CASES])
def test_a_pair_a_careful_reader_sees(older, newer, outcome, kind, rule):
    found = verdict(older, newer)
    assert (found.outcome, found.kind, found.rule) == (outcome, kind, rule), found.evidence
    if outcome != "none":
        assert found.quotes[0] and found.quotes[1]


def test_a_review_quotes_what_both_deny_and_what_was_dropped():
    assert '"emoji"' in verdict(*CASES[3][:2]).evidence
    assert '"We dropped Windows 10 support"' in verdict(*CASES[0][:2]).evidence


@pytest.mark.parametrize("a, b, found", [
    ("Jira project DATA", "Jira project DATA-REQ", '"DATA" / "DATA-REQ"'),
    ("calls api", "calls api.v2", '"api" / "api.v2"'),
    ("Jira project DATA", "Jira project DATASET", ""),  # another word, not one extended
    ("review it by hand", "hand-review it", ""),  # a word and its compound
    ("DATA and DATA-REQ", "DATA-REQ and DATA", ""),  # both on both sides
])
def test_an_identifier_with_a_part_added(a, b, found):
    assert extended_identifier(a, b) == found


def _document(*paragraphs: str) -> str:
    return "\n\n".join(paragraphs)


PLAN = _document("The search cluster runs Elasticsearch 7 on our own VMs (`es-1`, `es-2`, `es-3`). Agreed with "
                 "the user:", "## Approach",
                 "Rotate the nodes in place with `rolling_restart --upgrade` on the existing VMs. We are not moving "
                 "to a hosted service as part of this work.",
                 "## Schedule", "- Staging: 2026-05-04\n- Production: 2026-05-18")


def _status(closing: str) -> str:
    return _document("## Staging result",
                     "Staging was upgraded in 40 minutes. The analyze step took longer than the restart itself.",
                     "## Production path",
                     closing + " After the staging run the user decided to move production to a hosted cluster.",
                     "## Open", "- Cost sign-off for the hosted cluster.")


def test_a_short_sentence_that_says_the_plan_is_off_is_a_conflict_between_documents():
    # two words shared ("in place", the command): enough for a sentence that says something stopped,
    # and a command run with options (`rolling_restart --upgrade`) names the command
    found = verdict(PLAN, _status("The in-place `rolling_restart` on `es-1` is off."))
    assert (found.outcome, found.kind, found.rule) == ("review", "conflict", "conflict_evidence"), found.evidence
    assert found.quotes == ("Rotate the nodes in place with `rolling_restart --upgrade` on the existing VMs.",
                            "The in-place `rolling_restart` on `es-1` is off.")
    # the same two words in a sentence that stops nothing are no conflict
    assert verdict(PLAN, _status("The in-place `rolling_restart` on `es-1` went fine.")).outcome == "none"


HTTP_RULE = _document("In the mobile app's screen tests, stub the backend at the network level with **nock** "
                      "(interceptors in `test/interceptors.ts`). Don't `jest.mock('src/net/http')`, and don't mock "
                      "the data hooks like `useOrders`.",
                      "## Why", "The real request path runs: auth refresh, retries, response parsing.")


def _http_now(sentence: str) -> str:
    return _document("## Network",
                     "The fetch polyfill came with the Expo upgrade. " + sentence,
                     "## Timers", "Use fake timers for the retry backoff; never wait on real timeouts.")


def test_a_code_span_one_document_forbids_and_the_other_prescribes_is_a_conflict():
    # two long sentences that differ in many places (the swaps read them as two facts), but the one
    # exact call one forbids the other prescribes
    found = verdict(HTTP_RULE, _http_now("Mock the HTTP module instead, with `jest.mock('src/net/http')` and the "
                                         "typed helpers in `test/httpMock.ts`."))
    assert (found.outcome, found.kind, found.rule) == ("review", "conflict", "conflict_evidence"), found.evidence
    assert "jest.mock('src/net/http')" in found.quotes[0] and "jest.mock('src/net/http')" in found.quotes[1]
    assert "one says not to \"jest.mock('src/net/http')\", the other to" in found.evidence
    # the same span forbidden on both sides is no conflict
    assert verdict(HTTP_RULE, _http_now("Still, don't `jest.mock('src/net/http')` in screen tests; mock the "
                                        "typed helpers in `test/httpMock.ts`.")).kind != "conflict"


SESSIONS_RULE = _document("## 決定事項", "ログインセッションはRedisのセッションストアで管理する。有効期限は24時間。",
                          "## 理由", "アプリサーバーを増やしても、どのサーバーでも同じセッションを読める。")


def _sessions_now(sentence: str) -> str:
    return _document("## 何が起きたか", "3月の障害でRedisが落ち、全ユーザーがログアウトされた。",
                     "## 対応", sentence, "## 残課題", "- 古いセッションの掃除の手順書がまだない。")


def test_what_one_document_says_stopped_and_the_other_says_is_a_conflict():
    # a postmortem and the decision it reversed share few bigrams; what stopped is named whole
    reversed_it = ("ログインの管理はRedisのセッションストアをやめ、署名付きのJWT（有効期限15分、"
                   "リフレッシュトークン付き）とCookieに切り替えた。")
    found = verdict(SESSIONS_RULE, _sessions_now(reversed_it))
    assert (found.outcome, found.kind) == ("review", "conflict"), found.evidence
    assert "Redisのセッションストア" in found.evidence and "stopped" in found.evidence
    # ... nothing said to stop: no conflict
    assert verdict(SESSIONS_RULE, _sessions_now("Redisを冗長構成にした。")).kind != "conflict"


def test_a_stopped_thing_the_other_also_says_stopped_is_no_conflict():
    from auto_dream.judge.statements import retracted_object

    assert retracted_object("The nightly export job was moved to Airflow.", "The cron export is no longer used.") == ""
    assert retracted_object("Run the cron export by hand.", "The cron export is no longer used.") == "cron export"
    assert retracted_object("The cron export is no longer used.", "Nobody uses the cron export now; it was "
                            "retired.") == ""


@pytest.mark.parametrize("text, things", [
    ("msw is no longer used in the web app's tests.", ["msw"]),
    ("We dropped the legacy flag.", ["legacy flag"]),
    ("We dropped support for API level 24.", ["API level"]),
    ("We retired Jenkins last week.", ["Jenkins"]),
    ("Jenkins was retired in March.", []),  # what follows says when, not what stopped
    ("It is no longer needed.", []),  # names nothing
    ("引当の排他はPostgreSQLの行ロックをやめ、Redisロックに切り替えた。", ["PostgreSQLの行ロック"]),
    ("公测延期了，新日期还没定。", []),
])
def test_what_a_text_says_stopped_is_the_thing_it_names(text, things):
    from auto_dream.judge.statements import stopped_things

    assert stopped_things(text) == things


@pytest.mark.parametrize("text, subject", [
    ("王磊从十月起在平台组。", "王磊"),
    ("公测延期了，新日期还没定。", "公测"),
    ("公测的上线推迟了。", "公测"),
    ("鈴木さんは10月からプラットフォームチーム所属。", "鈴木"),
    ("パブリックベータの公開は延期。", "パブリックベータ"),
    ("用户从下周起改用Vim。", ""),  # "the user": too common to say which memory it changes
    ("公测定在6月1日上线。", ""),  # says nothing changed
    ("自动化测试开始前先拉代码。", ""),
])
def test_the_subject_a_statement_says_changed_is_the_one_it_opens_with(text, subject):
    from auto_dream.judge.subjects import changed_subject

    assert changed_subject(text) == subject
