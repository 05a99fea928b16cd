"""guess_type: entries appended without --type, typed by rules in English, Japanese and Chinese."""

import pytest

from auto_dream.judge.memory_type import guess_type

ENGLISH = [
    ("Don't use tabs in YAML files", "feedback"),
    ("The dashboard is at https://grafana.example.com/d/abc", "reference"),
    ("The user is a data scientist", "user"),
    ("The billing service moves to Kafka next sprint", "project"),
]

JAPANESE = [
    # feedback: requests, commands, prohibitions, obligations, advice, lessons
    ("コミットメッセージは英語で書いてください", "feedback"),
    ("本番環境に直接デプロイしないでください", "feedback"),
    ("テストではデータベースをモックしないで", "feedback"),
    ("PRには必ずスクリーンショットを添付してほしい", "feedback"),
    ("レビューの前にlintを通してもらいたい", "feedback"),
    ("金曜日にはデプロイするな", "feedback"),
    ("mainブランチに直接pushするな。", "feedback"),
    ("秘密鍵をリポジトリに置かないこと", "feedback"),
    ("変更したら必ずCHANGELOGを更新すること。", "feedback"),
    ("エラーは握りつぶさずにログに残すべき", "feedback"),
    ("マイグレーションは別のPRに分けるべきだった", "feedback"),
    ("関数は短く保つように", "feedback"),
    ("型ヒントを必ず付けるようにする", "feedback"),
    ("設定値はハードコードしてはいけない", "feedback"),
    ("リリース前にステージングで確認しなければならない", "feedback"),
    ("依存を追加する前に相談したほうがいい", "feedback"),
    ("今後はコードレビューを二人でやる", "feedback"),
    ("unittestではなくpytestを使う", "feedback"),
    ("一時ファイルは作業後に消せ", "feedback"),
    ("ログ出力にはprintを使わず、loggingを使いましょう", "feedback"),
    ("コメントは日本語で頼む。お願いします", "feedback"),
    ("簡潔な回答を好む", "feedback"),
    ("タブよりスペースのほうが好き", "feedback"),
    ("本番DBへの直接接続は禁止", "feedback"),
    # user: the person, their role, likes, habits, goals
    ("ユーザーはバックエンドエンジニアで、主にGoを書いている", "user"),
    ("ユーザーは簡潔な回答を好む", "user"),
    ("私はデータサイエンティストです", "user"),
    ("私の母語は日本語", "user"),
    ("田中さんはPythonが好き", "user"),
    ("佐藤さんはフロントエンドの担当", "user"),
    ("Rustが大好き", "user"),
    ("普段はVimで開発している", "user"),
    ("僕は来年までに機械学習を学びたい", "user"),
    # reference: pointers to outside systems
    ("障害対応の手順書はConfluenceにある", "reference"),
    ("メトリクスはGrafanaのダッシュボードで見られる", "reference"),
    ("デプロイの通知は #deploys チャンネルに流れる", "reference"),
    ("APIの仕様は https://api.example.jp/docs を参照", "reference"),
    ("バグはJiraで管理している", "reference"),
    # project: facts about the work, including negatives that command nothing
    ("このAPIはまだ認証がない", "project"),
    ("決済サービスは来月Kafkaに移行する", "project"),
    ("ステージング環境では外部APIを呼ばない設定になっている", "project"),
    ("このバッチは毎晩3時に走る", "project"),
    ("認証しないでアクセスできるエンドポイントが二つある", "project"),
    ("ユーザーが迷わないようにオンボーディング画面を作り直した", "project"),
    ("キャッシュが効くようにした", "project"),
    ("古いクライアントはまだ新しいプロトコルに対応していない", "project"),
    ("リリースは4月1日の予定", "project"),
]

CHINESE = [
    # feedback: don't / should / must / remember / prefer / from now on
    ("不要在周五部署", "feedback"),
    ("别在测试里 mock 数据库", "feedback"),
    ("周五别发版", "feedback"),
    ("应该先写测试再写实现", "feedback"),
    ("提交前应该跑一遍 lint", "feedback"),
    ("必须用参数化查询，避免 SQL 注入", "feedback"),
    ("上线前必须经过代码评审", "feedback"),
    ("我希望回答尽量简短", "feedback"),
    ("希望你用中文写提交信息", "feedback"),
    ("记住：生产库只读", "feedback"),
    ("记得每次改完配置都要重启服务", "feedback"),
    ("偏好函数式写法", "feedback"),
    ("更喜欢 pytest 而不是 unittest", "feedback"),
    ("提交信息请用英文写", "feedback"),
    ("尽量不要引入新的依赖", "feedback"),
    ("用 uv 管理依赖，而不是 pip", "feedback"),
    ("以后改数据库结构都要写迁移脚本", "feedback"),
    ("禁止在代码里写死密钥", "feedback"),
    ("优先使用标准库", "feedback"),
    ("教训：迁移前要先备份", "feedback"),
    ("用户要求所有 PR 都附上测试", "feedback"),
    # user: the person
    ("我是一名后端工程师", "user"),
    ("喜欢用 Vim 写代码", "user"),
    ("讨厌冗长的会议", "user"),
    ("用户习惯在早上看日志", "user"),
    ("用户更喜欢简短的回答", "user"),
    ("用户是产品经理，不写代码", "user"),
    ("我平时用 Go 写后端", "user"),
    ("我在杭州一家金融公司工作", "user"),
    ("我希望今年学会 Rust", "user"),
    ("熟悉 Kubernetes，但不熟悉 Terraform", "user"),
    # reference: pointers to outside systems
    ("部署文档在 Confluence 的运维空间", "reference"),
    ("告警会发到 #ops-alerts 频道", "reference"),
    ("监控看 Grafana 的仪表盘", "reference"),
    ("接口地址是 http://10.0.0.5:8080/api", "reference"),
    ("需求都记录在 Jira 上", "reference"),
    # project: facts about the work, including 不 that is no instruction
    ("这个接口暂不支持分页", "project"),
    ("测试环境最近不稳定", "project"),
    ("这个接口不要求认证", "project"),
    ("订单服务下个迭代迁移到 Kafka", "project"),
    ("这个 bug 应该是缓存导致的", "project"),
    ("为了不影响线上，迁移放在凌晨做", "project"),
    ("用户表有三个索引", "project"),
    ("请求超时是 30 秒", "project"),
    ("特别慢的查询都来自报表模块", "project"),
    ("我们下周把数据库升级到 Postgres 16", "project"),
    ("注意到缓存命中率下降了", "project"),
]

CASES = ENGLISH + JAPANESE + CHINESE
IDS = ([f"en{i}" for i in range(len(ENGLISH))] + [f"ja{i}" for i in range(len(JAPANESE))]
       + [f"zh{i}" for i in range(len(CHINESE))])


@pytest.mark.parametrize("text, expected", CASES, ids=IDS)
def test_guess_type(text, expected):
    assert guess_type(text) == expected


# What the entry's own words say, not a label or a heading it was given: each rule of
# guess_type with the case it exists for.
OWN_WORDS = [
    # a checkbox, a TODO, a plan, a decision, a status: the work (a roadmap under 「今後の予定」 was
    # typed feedback because the heading starts with 今後, "from now on")
    ("今後の予定：5月にWeb版を公開", "project"),
    ("今後の予定: 6月 正式リリース", "project"),
    ("Plan for Q4: move auth into its own service, then drop the old sessions table", "project"),
    ("- [ ] 請求書のPDFを作り直す", "project"),
    ("- [x] Rotated the staging credentials", "project"),
    ("TODO：把日志切到 JSON 格式", "project"),
    ("下个迭代计划：先做数据看板，再做导出", "project"),
    ("**Status:** waiting for the vendor's sandbox keys", "project"),
    ("After the outage we agreed that every service must expose /healthz instead of a TCP check", "project"),
    # 「レイヤー分け」 is a noun, no plain command
    ("アーキテクチャはクリーンアーキテクチャのレイヤー分け", "project"),
    # a question, answered or not, is about the work
    ("Q: do we archive old invoices? → yes, after two years", "project"),
    ("確認したこと (Q&A): ステージングのバックアップは取っている？", "project"),
    # the address of a pull request cites a fix; it does not make the fix a pointer
    ("Fixed the login loop in PR https://github.com/acme/web/pull/77; users can sign in again", "project"),
    ("修好了登录循环的问题，见 PR https://git.example.cn/web/pull/12", "project"),
    # lessons and rules, by their label or their words
    ("Lesson: the cache hid a stale config for a whole day", "feedback"),
    ("Learned the hard way: the staging DB is shared with QA", "feedback"),
    ("教训：没有回滚脚本就上线了", "feedback"),
    ("When a deploy fails, roll back first; do not hotfix in place", "feedback"),
    ("1. Keep every migration backwards compatible", "feedback"),
    ("Run the linters before pushing", "feedback"),
    ("**絶対に**金曜にリリースしない", "feedback"),
    ("ステージングは毎晩リセットされるので、残したいデータはseedに入れておく必要がある", "feedback"),
    ("DBの移行はメンテナンス画面を出してから行う", "feedback"),
    ("ロガーはstructlogを使う", "feedback"),
    ("发版前检查回滚脚本", "feedback"),
    ("先停掉定时任务，再迁移数据库", "feedback"),
    ("日志里不能出现密码，要用星号代替", "feedback"),
    ("升级 Node 之后 esbuild 装不上，得先清缓存", "feedback"),
    # the user's own preference about replies is a request; about their own day, it is them
    ("I prefer short replies without a recap at the end", "feedback"),
    ("I prefer to write the spec before any code", "user"),
    ("The user wants the invoices exported as one CSV per month", "feedback"),
    ("The user wants to learn Go this year", "user"),
    ("My role: staff engineer on the payments team", "user"),
    ("英語の会議は苦手", "user"),
    # pointers: a figure of a document, a DNS record
    ("See the on-call guide for the paging rules", "reference"),
    ("設計書のFig. 2にシャードの配置図がある", "reference"),
    ("DNS: api.example.org CNAME edge.example.net", "reference"),
    # a birthday is said of a person; a feature or a field is not one
    ("メモ:\n- 山口さんの誕生日は4月18日", "user"),
    ("王磊的生日是5月2日", "user"),
    ("The user's birthday is March 3", "user"),
    ("Ship the birthday reminder feature by Friday", "project"),
    ("用户表的出生日期字段改成DATE类型", "project"),
]


@pytest.mark.parametrize("text, expected", OWN_WORDS, ids=[text[:30] for text, _ in OWN_WORDS])
def test_the_type_comes_from_what_the_entry_itself_says(text, expected):
    assert guess_type(text) == expected


def test_only_the_first_line_is_typed():
    assert guess_type("支付服务迁移到 Kafka\n不要在周五部署") == "project"
    assert guess_type("  金曜日にはデプロイするな  \n理由：週末に障害対応できない") == "feedback"


@pytest.mark.parametrize("text, expected", [
    ("Lessons:\n  - Lesson: home the arm first\n  - The IP defaults to 192.168.1.185", "feedback"),
    ("ユーザーについて:\n  - ユーザーは山口さん。平日は会社員\n  - 返答は短めに", "user"),
    ("kakeibo › DNS:\n  - api.kakeibo.example.jp CNAME kakeibo-api.fly.dev", "reference"),
    ("Setup:\n  - 不要在周五部署\n  - The IP defaults to 192.168.1.185", "feedback"),
])
def test_a_first_line_that_is_only_a_heading_is_typed_by_its_first_item(text, expected):
    """An imported section starts with its heading path: what the section says is in its items."""
    assert guess_type(text) == expected


def test_the_cases_cover_every_type_in_each_language():
    for cases in (JAPANESE, CHINESE):
        assert len(cases) >= 30
        assert {kind for _, kind in cases} == {"reference", "feedback", "user", "project"}
