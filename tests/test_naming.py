"""judge.titles: the name and description of a new memory, as a careful person writes them.

Each table holds entries of the shapes agents write (English, Chinese, Japanese), and what a
reader of MEMORY.md wants beside the link: a complete, short name, and a description that
adds to it.
"""

from datetime import date

import pytest

from auto_dream.judge.titles import (
    NAME_CHARS,
    NAME_WIDTH,
    boundaries,
    description_problem,
    name_problem,
    read_entry,
    title_of,
    width,
    without_person,
)
from auto_dream.store.memory import memory_file_name, slugify

# ---------------------------------------------------------------- the name and the description

TITLES = [
    # a label keeps its place in the name; the clause after the first is the description
    ("project", "Decision: we move the nightly report to 06:00; the old 02:00 slot clashes with backups",
     "Decision: we move the nightly report to 06:00", "The old 02:00 slot clashes with backups"),
    ("project", "**Owner:** Kenji (platform), backup is Marta", "Owner: Kenji (platform)", "Backup is Marta"),
    # a label alone names what its list says
    ("project", "Milestones:\n- beta on 2026-06-01\n- GA on 2026-07-15", "Milestones: beta on 2026-06-01",
     "GA on 2026-07-15"),
    ("project", "部署步骤：\n1. 打 tag\n2. 等 CI 构建镜像\n3. 在 Argo 里点同步", "部署步骤：打 tag；等 CI 构建镜像",
     "在 Argo 里点同步"),
    # a checkbox or a TODO label: the name is the task, the description its state
    ("project", "- [ ] Renew the TLS certificate for the status page", "Renew the TLS certificate for the status page",
     "Still to do."),
    ("project", "- [x] Switched the CI runners to ARM instances", "Switched the CI runners to ARM instances", "Done."),
    ("project", "TODO: add pagination to the audit log endpoint (it returns 10k rows today)",
     "Add pagination to the audit log endpoint", "Still to do. It returns 10k rows today"),
    ("project", "- [ ] 請求書PDFのフォントを埋め込む", "請求書PDFのフォントを埋め込む", "未完了のタスク。"),
    # a numbered item is named by what it says, not by its number
    ("feedback", "4. Do the DNS cutover only after the TTL has dropped to 60s; then watch the error rate for an hour",
     "Do the DNS cutover only after the TTL has dropped to 60s", "Watch the error rate for an hour"),
    # a lesson and what to do about it
    ("feedback", "Lesson: the migration locked the orders table for 40 minutes, so run big backfills in batches",
     "Lesson: the migration locked the orders table for 40 minutes", "Run big backfills in batches"),
    # a rule with its Reason and How to apply lines: the rule is the name, the lines the description
    ("feedback", "Never push to the release branch.\nReason: the deploy bot builds from it.\nHow to apply: open a PR.",
     "Never push to the release branch", "Reason: the deploy bot builds from it. How to apply: open a PR."),
    # an address is what a reference points to: the description, never the name
    ("reference", "Incident runbook: https://wiki.example.org/ops/incidents", "Incident runbook",
     "https://wiki.example.org/ops/incidents"),
    ("reference", "Payments dashboard: [Grafana payments](https://grafana.example.org/d/pay)",
     "Payments dashboard: Grafana payments", "[Grafana payments](https://grafana.example.org/d/pay)"),
    # abbreviations and numbers are never where a name stops
    ("project", "Use approx. 2 GB of heap per worker, e.g. for the import job", "Use approx. 2 GB of heap per worker",
     "e.g. for the import job"),
    ("project", "The U.S. region runs v3.1 of the gateway; the EU one still runs v2.9",
     "The U.S. region runs v3.1 of the gateway", "The EU one still runs v2.9"),
    # a user memory's name leaves out the person (the type says who)
    ("user", "The user is a data engineer who works mostly in Scala and SQL, and reads Python",
     "Data engineer who works mostly in Scala and SQL", "Reads Python"),
    ("user", "私はバックエンド出身で、フロントはまだ勉強中", "バックエンド出身", "フロントはまだ勉強中"),
    # "we agreed that X": X is what the name says
    ("project", "After the incident on 2026-02-03 we agreed that every queue must have a dead-letter topic "
                "and an alert on its depth",
     "Every queue must have a dead-letter topic and an alert",
     "After the incident on 2026-02-03 we agreed that every queue must have a dead-letter topic and an alert on its "
     "depth"),
    # a sentence too long for a name: the description says what the name does not, never the
    # rest of a cut phrase. A subject before "is" / "live at" names it, what it is the description
    ("project", "Median page load is about 1.8 s on 3G phones vs. 0.6 s on office Wi-Fi, per the March audit",
     "Median page load", "About 1.8 s on 3G phones vs. 0.6 s on office Wi-Fi, per the March audit"),
    ("reference", "The staging status page is https://status.example.org/staging and the prod one is "
                  "https://status.example.org/", "The staging status page",
     "https://status.example.org/staging and the prod one is https://status.example.org/"),
    ("reference", "Architecture decision records for the billing service live at https://wiki.example.org/adr/billing",
     "Architecture decision records for the billing service", "https://wiki.example.org/adr/billing"),
    # ... what follows "and" is the description when it is a clause of its own
    ("feedback", "When a deploy hangs, cancel it from the Argo UI and restart the rollout; never kill the pods by hand",
     "When a deploy hangs, cancel it from the Argo UI", "Restart the rollout; never kill the pods by hand"),
    # ... a title leaves out its article and its asides when its first clause then fits; an aside
    # left out is in the description, which is then the whole statement
    ("project", "The billing service moves from RabbitMQ to Kafka on 2026-05-12; both run side by side for two weeks",
     "Billing service moves from RabbitMQ to Kafka on 2026-05-12", "Both run side by side for two weeks"),
    ("project", "Ms. Ruiz (the vendor's account manager) approves every price change, i.e. nothing ships without her "
                "sign-off", "Ms. Ruiz approves every price change",
     "Ms. Ruiz (the vendor's account manager) approves every price change, i.e. nothing ships without her sign-off"),
    # ... a feedback memory's name leaves out "the user wants" (the type says who asks)
    ("feedback", "The user wants the weekly digest to go out as one email on Friday, with links first and charts "
                 "after, because nobody scrolls", "The weekly digest to go out as one email on Friday",
     "With links first and charts after, because nobody scrolls"),
    # Chinese: a clause, a topic and its comment, a clause that begins with a prohibition
    ("feedback", "教训：上线前没有检查配置开关，导致新功能提前暴露给了所有用户", "教训：上线前没有检查配置开关",
     "导致新功能提前暴露给了所有用户"),
    ("project", "订单表和退款表的全部索引每周日凌晨三点由运维平台上的定时脚本自动重建一次", "订单表和退款表的全部索引",
     "每周日凌晨三点由运维平台上的定时脚本自动重建一次"),
    ("reference", "线上告警和值班通知都统一发到飞书群「订单告警」和「支付告警」这两个群里", "线上告警和值班通知",
     "都统一发到飞书群「订单告警」和「支付告警」这两个群里"),
    ("project", "决定：日志统一用 JSON 格式，字段名用小写", "决定：日志统一用 JSON 格式", "字段名用小写"),
    ("feedback", "写接口文档的时候按请求参数返回字段错误码三部分来写不要只贴示例",
     "写接口文档的时候按请求参数返回字段错误码三部分来写", "不要只贴示例"),
    # Japanese: the topic before は, a clause before 、
    ("feedback", "ログとトレースの保存期間は本番もステージングも含めてすべて90日にすること", "ログとトレースの保存期間",
     "本番もステージングも含めてすべて90日にすること"),
    # ... a cause that ends a clause without 、 (ので, が原因で) is where a clause ends
    ("feedback", "古いNodeのキャッシュが原因でビルドサーバーのテストがずっと前のコードで走っていた。"
                 "CIではキャッシュを毎回消すこと", "古いNodeのキャッシュが原因",
     "ビルドサーバーのテストがずっと前のコードで走っていた。CIではキャッシュを毎回消すこと"),
    # ... a long sentence no clause of whose start fits is named by what it comes to, last
    ("project", "月末になると請求書の集計が遅いという報告が続いていて調べたところ毎回全件を集計していたので"
                "集計結果を日次でキャッシュする方式に変えることにした",
     "集計結果を日次でキャッシュする方式に変えることにした",
     "月末になると請求書の集計が遅いという報告が続いていて調べたところ毎回全件を集計していたので"
     "集計結果を日次でキャッシュする方式に変えることにした"),
    # ... a topic of one bare word names nothing: what is said of it does
    ("project", "方針は画面層・ドメイン層・データ層を分けたレイヤードアーキテクチャ",
     "画面層・ドメイン層・データ層を分けたレイヤードアーキテクチャ",
     "方針は画面層・ドメイン層・データ層を分けたレイヤードアーキテクチャ"),
]


@pytest.mark.parametrize("memory_type, text, name, description", TITLES, ids=[t[1][:32] for t in TITLES])
def test_the_name_is_a_complete_phrase_and_the_description_adds_to_it(memory_type, text, name, description):
    title = title_of(text, memory_type)
    assert (title.name, title.description) == (name, description)
    assert name_problem(title.name, text) is None


SHORT = [
    # a sentence of about six words is a title as it is: its subject and verb alone would say nothing
    ("project", "The invoice service runs on port 7070"),
    ("user", "The user lives in Lisbon"),
    ("project", "Staging runs on k3s"),
    ("feedback", "本番のDBを直接触らない"),
]


@pytest.mark.parametrize("memory_type, text", SHORT)
def test_a_short_sentence_is_its_own_name(memory_type, text):
    assert title_of(text, memory_type).name == text


WHOLE = [
    # one sentence that fits a name and nothing after it: named whole, never by a head phrase
    # whose description is the rest of the sentence ("Don't paste stack traces" — "into the PR
    # description"), nor by a topic alone (「今年的目标」 — 「是把 Rust 学到…」). The description is
    # the sentence: there is nothing else to say, and MEMORY.md shows the name alone
    ("feedback", "Don't paste stack traces into the PR description"),
    ("feedback", "Do the DNS cutover only after the TTL has dropped to 60s"),
    ("project", "The nightly build is the only one with coverage reporting on"),  # "on" ends it: nothing was cut
    ("project", "Phase two moves the image pipeline to the GPU nodes"),
    ("project", "四月中旬之前把所有报表从 Metabase 迁到 Superset"),
    ("project", "订单表的索引每周日凌晨重建一次"),
    ("feedback", "APIのレスポンスには必ずrequest_idを含めること"),
    ("feedback", "コミットの前にlintとテストを通してほしい"),
]


@pytest.mark.parametrize("memory_type, text", WHOLE)
def test_one_sentence_that_fits_is_named_whole(memory_type, text):
    title = title_of(text, memory_type)
    assert (title.name, title.description) == (text, text)


NEGATIONS = [
    # the name never keeps a negation without what it negates, nor leaves one behind
    ("Samuel and his older brother Tiago from Porto did not get into the final round of the chess open.",
     "Samuel and his older brother Tiago"),
    ("勝手にライブラリのバージョンを上げないで", "勝手にライブラリのバージョンを上げないで"),
    ("Don't add emoji to commit messages, PR titles or release notes", "Don't add emoji to commit messages"),
    # a topic is never cut from the negation or the change said of it
    ("チケットに紐づかないTODOコメントは書かない。", "チケットに紐づかないTODOコメントは書かない"),
    ("订单服务的超时时间要改成 30 秒", "订单服务的超时时间要改成 30 秒"),
    # nor a replacement from what it replaces ("…rather than fixating" of "rather than fixating on quick results")
    ("Evan focused more on well-being rather than fixating on quick results, which led to a positive change.",
     "Evan focused more on well-being"),
]


@pytest.mark.parametrize("text, name", NEGATIONS)
def test_a_name_keeps_a_negation_with_what_it_negates(text, name):
    assert title_of(text, "feedback").name == name


LONG = [
    "ユーザーから月末に家計簿の集計が重いという問い合わせが増えていて調べたところ月次集計を毎回全件スキャンで計算していた",
    "The nightly export of the billing warehouse runs at two and must finish before six, or the dashboards are stale",
    "x" * 200,
    "用" * 90,
]


@pytest.mark.parametrize("text", LONG)
def test_a_long_text_is_named_within_the_width_without_an_ellipsis(text):
    title = title_of(text, "project")
    assert len(title.name) <= NAME_CHARS and width(title.name) <= NAME_WIDTH
    assert not title.name.endswith("…") and len(title.description) <= 150
    assert text.startswith(title.name)


# ---------------------------------------------------------------- reading an entry


@pytest.mark.parametrize("text, statement, label, state", [
    ("- [ ] Renew the certificate", "Renew the certificate", "", "open"),
    ("* [x] Renewed the certificate", "Renewed the certificate", "", "done"),
    ("12. Tag the release", "Tag the release", "", None),
    ("2) 第二段階では画像処理を移す", "第二段階では画像処理を移す", "", None),
    ("[20:15] - xArm 到着: 予定より早く届いた", "予定より早く届いた", "xArm 到着", None),
    ("**Status:** blocked on the vendor", "blocked on the vendor", "Status", None),
    ("决定：先用 Meilisearch", "先用 Meilisearch", "决定", None),
    ("TODO: 退会時のデータ削除をバッチ化する", "退会時のデータ削除をバッチ化する", "", "open"),
    ("Standup moved to 09:45", "Standup moved to 09:45", "", None),  # a time is no label
    ("Never run migrate:fresh in production", "Never run migrate:fresh in production", "", None),
    ("See https://example.org/docs for it", "See https://example.org/docs for it", "", None),
])
def test_markers_and_labels_are_set_apart_from_the_statement(text, statement, label, state):
    entry = read_entry(text)
    assert (entry.statement, entry.label, entry.state) == (statement, label, state)


@pytest.mark.parametrize("text, statement", [
    ("Setup:\n- テストは pytest で\n  書く\n- CI は毎晩", "テストは pytest で書く；CI は毎晩"),
    ("Decisions:\n- REST for the public API, which we\n  keep stable\n- ship weekly",
     "REST for the public API, which we keep stable; ship weekly"),
    ("Notes:\n- first item\n  - a nested item stays an item", "first item; a nested item stays an item"),
    # a bold label line under a heading, or an item saying the heading's label again, is part of the label
    ("決定:\n  **Decision:**\n  - xArm Lite 6 を買う\n  - 理由: ROS2の公式ドライバがある",
     "xArm Lite 6 を買う；理由: ROS2の公式ドライバがある"),
    ("Lessons:\n  - Lesson: home the arm first\n  - Check the IP", "home the arm first; Check the IP"),
])
def test_a_headings_items_are_read_as_one_statement_continued_lines_and_repeated_labels_joined(text, statement):
    assert read_entry(text).statement == statement


@pytest.mark.parametrize("text, never_after", [
    ("Use v2.3 of the SDK, e.g. for refunds in the U.S. region. Older versions round wrongly.",
     ["v2.", "e.g", "U.", "U.S"]),
    ("See Fig. 4 of the design doc", ["Fig", "Fig."]),
    ("問い合わせNo. 1042の件は返金で対応済み", ["No", "No."]),
    ("Dr. Okafor signs off on every schema change", ["Dr", "Dr."]),
    ("Cold start is approx. 2.4 s vs. 0.9 s", ["approx", "2.", "vs"]),
    ("Run `go test ./... -tags=integration` before merging", ["`go test ./.", "`go test"]),
    ("Runbook: [export runbook](https://wiki.example.net/ops/export) for failures", ["[export", "https://wiki."]),
    ("決済はStripeからPAY.JPに切り替えた", ["PAY."]),
])
def test_no_boundary_falls_inside_an_abbreviation_a_number_code_or_a_link(text, never_after):
    heads = {text[:cut.end].rstrip() for cut in boundaries(text, "ja" if "の" in text else "en")}
    assert not any(head.endswith(tuple(never_after)) for head in heads), heads


# ---------------------------------------------------------------- the checks, for names someone else writes

NAME_CHECKS = [
    ("The user is a backend developer who mostly writes…", "ends with an ellipsis"),
    ("1", "is a bare number"),
    ("4.", "is a bare number"),
    ("未解決タスク: **Fig", "holds Markdown"),
    ("- [ ] Rotate the DSN", "begins with a list marker or a checkbox"),
    ("Grafana board https://grafana.example.net/d/x", "holds a URL"),
    ("Decisions:", "is only a label"),
    ("The user is a backend develo", "stops inside a word"),
    ("See Fig", "stops at an abbreviation"),
    ("Cold start is approx", "stops at an abbreviation"),
    ("Use v2", "stops inside a number, an abbreviation, a code span or a link"),
    ("Backend developer: Python and Go", None),
    ("The user is a backend developer", None),
]
NAMED_TEXT = ("The user is a backend developer who mostly writes Python and Go. See Fig. 2. Use v2.3. "
              "Cold start is approx. 2.4 s. 未解決タスク: **Fig. 3** のキャプション")


@pytest.mark.parametrize("name, problem", NAME_CHECKS)
def test_a_cut_or_marked_up_name_is_found(name, problem):
    assert name_problem(name, NAMED_TEXT) == problem


@pytest.mark.parametrize("description, name, problem", [
    ("Don't add emoji", "Don't add emoji", "is the name"),
    ("Don't add emoji.", "Don't add emoji", "is the name"),
    ("Don't add emoji to commit messages", "Don't add emoji", "begins with the name"),
    ("", "Don't add emoji", "is empty"),
    ("Commit messages and PR titles carry no emoji.", "No emoji in commits", None),
])
def test_a_description_that_repeats_its_name_is_found(description, name, problem):
    assert description_problem(description, name) == problem


# ---------------------------------------------------------------- file names


@pytest.mark.parametrize("name, slug", [
    # cut at the last `_` within 50: never inside a word
    ("Always pin GitHub Actions to a commit SHA not a tag please", "Always_pin_GitHub_Actions_to_a_commit_SHA_not_a"),
    # a CJK run longer than 50 stops where the script changes, not in the middle of a word
    ("ステージング環境は毎週日曜の深夜にデータがリセットされるので長期間残したいテストデータはseedスクリプトに追加",
     "ステージング環境は毎週日曜の深夜にデータがリセットされるので長期間残したいテストデータはseed"),
    # a number is never split
    ("x" * 45 + " 1234567890", "x" * 45),
])
def test_a_slug_ends_between_words(name, slug):
    assert slugify(name) == slug
    assert memory_file_name(name, date(2026, 3, 1), set()) == f"20260301_{slug}.md"


@pytest.mark.parametrize("text, name, description", [
    # an imported section: its heading path is the label; the last heading alone when the path leaves no room
    ("Robot arm workspace setup › Safety:\n  - Always keep the emergency stop within reach while the arm is powered\n"
     "  - Speed limit 250 mm/s while testing a new trajectory",
     "Safety: Always keep the emergency stop within reach",
     "Always keep the emergency stop within reach while the arm is powered; "
     "Speed limit 250 mm/s while testing a new trajectory"),
    ("週次ふりかえり › 良かったこと:\n  - xArm のセットアップが1日で終わった\n"
     "  - kakeibo の審査準備が予定どおり進んでいる",
     "良かったこと: xArm のセットアップが1日で終わった", "kakeibo の審査準備が予定どおり進んでいる"),
    ("kakeibo › DB:\n  - RDS for PostgreSQL 15\n  - リードレプリカ 2台", "kakeibo › DB: RDS for PostgreSQL 15",
     "リードレプリカ 2台"),
    # a path that leaves no room for the item at all: the last heading still names what it is
    ("kakeibo インフラ › DNS:\n  - api.kakeibo.example.jp CNAME kakeibo-api.fly.dev\n"
     "  - www.kakeibo.example.jp CNAME kakeibo-web.pages.dev",
     "DNS: api.kakeibo.example.jp CNAME kakeibo-api.fly.dev", "www.kakeibo.example.jp CNAME kakeibo-web.pages.dev"),
    # a miscellany's heading says nothing of its item: not in the name, whatever path is over it
    ("Misc:\n  - Meeting with the accountant on 3/25 about the invoice system",
     "Meeting with the accountant on 3/25 about the invoice system",
     "Meeting with the accountant on 3/25 about the invoice system"),
    ("kakeibo › メモ:\n  - xArm の納期は3週間と言われた", "kakeibo: xArm の納期は3週間と言われた",
     "xArm の納期は3週間と言われた"),
    # a heading that leaves room for only part of the first item's clause gives way to the clause whole
    ("ユーザーについて:\n  - 返答は結論から先に、短めにしてほしいとのこと\n"
     "  - 技術用語は英語のままでいい（無理に訳さない）",
     "返答は結論から先に、短めにしてほしいとのこと", "技術用語は英語のままでいい（無理に訳さない）"),
    # ... not to an aside it leaves out
    ("山口さんからのフィードバック:\n  - PRは小さく分けてほしい（300行以内が目安）\n"
     "  - テストを書かずに報告しないでほしい",
     "山口さんからのフィードバック: PRは小さく分けてほしい",
     "PRは小さく分けてほしい（300行以内が目安）；テストを書かずに報告しないでほしい"),
    # a table: its rows, not its header, each row's first cell with the rest in parentheses
    ("kakeibo リリース準備 › 料金プラン:\n  | プラン | 月額 | 内容 |\n  |---|---|---|\n  | Free | ¥0 | 月30件まで |\n"
     "  | Family | ¥780 | 5人まで共有 |",
     "kakeibo リリース準備 › 料金プラン: Free (¥0, 月30件まで)", "Family (¥780, 5人まで共有)"),
])
def test_an_imported_section_is_named_by_its_heading_and_first_item(text, name, description):
    assert (title_of(text).name, title_of(text).description) == (name, description)


@pytest.mark.parametrize("text, name, description", [
    # open and done checkboxes under one heading: an open item names it, the done ones are said to be done
    ("家計簿アプリ › TODO:\n  - [x] レシートOCRのベータを社内で配布\n  - [ ] 手書きの数字の認識精度を上げる\n"
     "  - [ ] 退会時のデータ削除をバッチ化",
     "家計簿アプリ › TODO: 手書きの数字の認識精度を上げる",
     "退会時のデータ削除をバッチ化；完了: レシートOCRのベータを社内で配布"),
    ("TODO:\n  - [x] カメラマウントを印刷\n  - [ ] ハンドアイキャリブレーション\n"
     "  - [ ] xArm のファームウェア更新履歴を wiki に書く",
     "ハンドアイキャリブレーション",
     "未完了のタスク。xArm のファームウェア更新履歴を wiki に書く；完了: カメラマウントを印刷"),
    ("Done:\n  - [x] Renewed the TLS certificate\n  - [x] Rotated the Sentry DSN",
     "Renewed the TLS certificate", "Done. Rotated the Sentry DSN"),
])
def test_a_list_of_checkboxes_says_which_are_done(text, name, description):
    assert (title_of(text).name, title_of(text).description) == (name, description)


@pytest.mark.parametrize("text, name", [
    ("The release checklist for the mobile apps and the web client moved to the ops wiki last week after the audit",
     "The release checklist for the mobile apps"),
])
def test_a_name_never_ends_on_a_verb_whose_complement_was_cut(text, name):
    title = title_of(text)
    assert (title.name, title.description) == (name, text)


@pytest.mark.parametrize("statement, language, left", [
    ("User likes having a checklist at the start of any long task", "en",
     "likes having a checklist at the start of any long task"),
    ("The user is a backend developer who writes Go", "en", "backend developer who writes Go"),
    ("ユーザーは山口さん。平日は会社員", "ja", "山口さん。平日は会社員"),
    # the person is a whole word: "Username" and "Iterm2" name no one
    ("Username for the staging box is deploy", "en", "Username for the staging box is deploy"),
    ("Iterm2 is the terminal on the work laptop", "en", "Iterm2 is the terminal on the work laptop"),
])
def test_the_person_a_statement_opens_with_is_left_out_as_a_whole_word(statement, language, left):
    assert without_person(statement, language) == left
