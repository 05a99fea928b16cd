"""Typing an entry appended without --type: reference, feedback, user or project, by rules.

The first line decides, checked in this order (the LLM distiller does better):

- reference: a pointer to an outside system (a URL, localhost:port, a dashboard, a channel,
  where the docs live);
- feedback: an instruction on how to work (do / don't, should, must, from now on, a lesson),
  and a preference stated with no one as its subject ("prefer X", 「…を好む」, 更喜欢…);
- user: a statement about the person (role, likes, habits, goals), and a preference of
  theirs ("the user prefers…", 「ユーザーは…を好む」, 用户更喜欢…);
- project: everything else (facts about the work).

English, Chinese and Japanese. In Japanese the instruction is at the end of the sentence
(〜してください, 〜するな, 〜べき, 〜しないこと), so those rules look at the end of a clause; a
negative that ends a statement (「このAPIはまだ認証がない」) is no instruction. In Chinese 不
alone is no instruction either (暂不支持, 不稳定): only the forms that command are (不要, 别, 不能…
at the start).
"""

import re

from auto_dream.judge.titles import read_entry

# End of a clause: 。！!, ". ", or the end of the line (the first line is what is typed).
_END = r"(?=\s*(?:[。．！!]|\.(?:\s|$)|$))"
# The common kanji, for what comes before a Japanese verb ending (使え, 書け).
_KANJI = r"\u4e00-\u9fff"

# ---------------------------------------------------------------- reference

_REFERENCE = re.compile("|".join([
    # URLs and host:port addresses point outside by definition.
    r"https?://|\blocalhost:\d+|\b\d{1,3}(?:\.\d{1,3}){3}:\d+",
    # English names for places where things live or are tracked.
    r"\b(?:dashboard|runbook|wiki|channel|ticket|docs? (?:at|in|are)|lives in|is at|are at|tracked in)\b",
    # A Slack-style channel name (#deploys), not C#, an issue number (#12) or #include.
    r"(?<![\w#&])#(?!include|define|pragma|if|endif|else)[a-z][\w-]*",
    # Chinese: where the docs are, an address, a dashboard / board / channel / runbook / ticket.
    r"文档(?:在|位于|见)|地址是|位于|在 ?localhost|仪表盘|看板|频道|运行手册|工单|详见|参见",
    # Chinese: kept or tracked in a named outside tool (记录在 Jira, 在飞书文档里).
    r"在 ?(?:Jira|Confluence|Notion|Linear|GitHub|Figma|Google ?Docs?|飞书|钉钉|语雀|企业微信)",
    # Japanese: dashboard, runbook, wiki, channel, ticket, procedure document, "see …".
    r"ダッシュボード|ランブック|ウィキ|チャンネル|チケット|手順書|を参照",
    # Japanese: where the docs are (ドキュメントは…にある), not how to write them.
    r"(?:ドキュメント|資料|仕様書)は[^。]*(?:にある|に置いて|にまとま)",
    # Japanese: managed, written or kept in a named outside tool.
    r"(?:Jira|Confluence|Notion|Backlog|Redmine|GitHub|Slack|Figma|Googleドキュメント)の?\s*"
    r"(?:で管理|で追跡|にまとま|にある|に(?:書いて|載って|置いて)ある)",
    # Japanese: what a document holds (設計書のFig. 4に状態遷移図がある), not what it needs (必要がある).
    r"(?:設計書|設計資料|仕様書|マニュアル|README)の[^。]*(?:にある|(?<!必要)がある|に載って|に書いて|に記載)",
    # English: "See Fig. 4 of the design doc", "see the runbook".
    r"^see\b",
    # A DNS record: a host name, its record type, its value.
    r"\b[a-z0-9_-]+(?:\.[a-z0-9_-]+)+\.?\s+(?:IN\s+)?(?-i:CNAME|TXT|MX|NS|AAAA|A|SRV|CAA)\s+\S",
]), re.IGNORECASE)

# The address of a pull request, a commit or an issue cites the change a fact is about: it
# does not make the fact a pointer ("Fixed the double-charge bug in PR https://…/pull/812").
_CITED_CHANGE = re.compile(r"https?://\S+?/(?:pull|pulls|merge_requests|commit|commits|issues|compare)/\S*",
                           re.IGNORECASE)

# ---------------------------------------------------------------- feedback: instructions

_INSTRUCTION = re.compile("|".join([
    # English imperatives at the start of the line.
    r"^(?:please\s+)?(?:don't|do not|never|always|avoid|stop|prefer|use|make sure|remember to)\b",
    # English "should / must / instead of" anywhere.
    r"\b(?:instead of|should not|shouldn't|must not|must always)\b",
    # English "don't / never / make sure" beginning a later clause ("…; do not just rerun CI").
    r"[;:—]\s*(?:please\s+)?(?:don't|do not|never|make sure|remember to|always)\b",
    # English verbs that begin a rule ("Run `make migrate` before deploying", "Do the cutover
    # only after…"); not the verbs of a task to do (rotate, move, fix), which a TODO names.
    r"^(?:please\s+)?(?:run|do|keep|check|add|write|put|pin|ask|wait|convert|rebase|restart|delete|remove|rename"
    r"|install|quarantine|include|send|verify|confirm|ensure|follow|treat|validate|escape|sanitize|reply|answer"
    r"|explain|summari[sz]e|cite|mention|ping|notify|warn|double-check)\b(?![^?？]*[?？]\s*$)",

    # Chinese commands at the start (请 is below): don't, no need, can't, always, remember, only use…
    r"^(?:不要|别|不用|不必|无需|无须|不能|不可以|不许|勿|切勿|禁止|避免|总是|始终|永远|一定要|务必|必须"
    r"|记得|记住|尽量|只用|只能用|只使用|统一用)",
    # Chinese "note: / give priority to" at the start, not 注意到 (noticed) or 优先级 (priority).
    r"^(?:注意(?!到)|优先(?!级))",
    # Chinese "use X" at the start (用 pytest 跑测试), but not 用户 / 用途 / 用量 / 用于 / 用例 / 用法.
    r"^(?:用|使用|改用|选用)(?![户途量于例法])",
    # Chinese "from now on / next time …" at the start, not 以后的 (the later …).
    r"^(?:以后|今后|往后|下次|下回)(?!的)",
    # Chinese "lesson:" at the start.
    r"^(?:教训|经验教训|踩坑)\s*[:：]",
    # Chinese 不要 anywhere (周五不要部署), but not 不要求 (doesn't require) or 不要紧 (no matter).
    r"不要(?![求紧])",
    # Chinese 别 as "don't", not inside 特别 / 区别 / 分别 / 级别… or 别人 / 别的 / 别名….
    r"(?<![特区分类级告识个性差辨派鉴离判组送道惜作久有辞])别(?![人的名处称墅针致扭具样家号])",
    # Chinese please, not inside 请求 (request) / 申请 (apply) / 请假 (leave).
    r"(?<![申邀聘])请(?![求假客柬])",
    # Chinese must / be sure to / never / forbidden, anywhere.
    r"必须|务必|一定要|切记|切勿|请勿|禁止|不许|不准(?!确)|不得(?![不而])|千万(?:不要|别|记得|要)",
    # Chinese should, but not 应该是 / 应该会 (probably is / will): that is a guess, not a rule.
    r"不应|应当|应该(?!是|会|已经|没|不会|也是)",
    # Chinese "as far as possible / best to / remember to / prefer using / across the board".
    r"尽量|最好(?!的)|要记得|记住|优先(?:用|使用|考虑|选择|选用)|一律|统一(?:用|使用)|尽可能",
    # Chinese "rather than" after a use-verb: 用 A 而不是 B (not 用户…而不是…).
    r"(?:用(?!户)|选)[^，。]*而(?:不是|非)",
    # Chinese "I / the user want(s) you to…": 希望 is a request unless a goal follows (希望今年学会…).
    r"(?:^|我|用户|他|她)希望(?!自己|能够?|今年|明年|将来|以后能|成为|学会|掌握|转)",
    # Chinese "asks / has us …": 用户要求…, 我要求….
    r"^(?:用户|我)(?:要求|让你|让我们|叫你)",
    # Chinese "must / has to (first)…" beginning a later clause: …，要脱敏成前三后四, …，得先删掉 node_modules.
    r"[，,；;]\s*(?:要|得|需要|必须|务必)(?![，,。、是])",
    # Chinese "first X, then Y": 先关掉旧的消费者，再启动新的.
    r"^先[^，。]+[，,]\s*(?:再|然后)",
    # Chinese "before X, check / run …": 发版前检查…, 上线之前先跑….
    r"^[^，。]{1,8}(?:前|之前|以前)(?:都|先|要|必须|务必|记得)*(?:检查|确认|跑|运行|执行|备份|通知|测试|更新|同步|看|问)",

    # Japanese polite request / command: 〜てください, 〜ないでください, 〜なさい, お願いします.
    r"ください|下さい|なさい|お願い(?:します|いたします)",
    # Japanese "I want you to…": 〜てほしい, 〜てもらいたい, 〜てくれ.
    r"[てで](?:ほしい|欲しい|もらいたい|もらえる|くれ)",
    # Japanese don't, as a request ending the clause: 〜しないで。, 〜しないでね.
    r"ないで(?:ね|よ|くれ)?" + _END,
    # Japanese obligation: 〜べき, 〜なければならない, 〜なきゃ, 〜ないといけない, 〜てはいけない.
    r"べき|べからず|なければ(?:ならない|いけない|だめ|ダメ)|なくては(?:ならない|いけない)|なきゃ|なくちゃ"
    r"|ないと(?:いけない|だめ|ダメ)|ては(?:いけない|ならない|だめ|ダメ)|ちゃ(?:だめ|ダメ|いけない)|禁止",
    # Japanese advice: 〜したほうがいい, 〜しない方が良い, 〜すればよかった (a lesson).
    r"(?:ほう|方)が(?:いい|良い|よい|無難)|ば(?:よかった|良かった)",
    # Japanese plain negative command ending the clause: 〜するな, 使うな (dictionary form + な).
    r"[うくすつぬふむゆるぐずづぶ]な" + _END,
    # Japanese plain command ending the clause: 使え, 書け, 消せ, 選べ, 守れ, しろ, せよ, やめろ. The
    # verb follows a particle or begins the clause: 「レイヤー分け」 is a noun, no command.
    rf"(?:(?:^|(?<=[\u3041-\u3096]))[{_KANJI}][えけせねべれげ]|しろ|せよ|[{_KANJI}め]ろ|ておけ|でおけ)" + _END,
    # Japanese "X can stay as it is": 技術用語は英語のままでいい, そのままで大丈夫.
    r"(?:のまま|そのまま)で(?:いい|よい|良い|大丈夫|OK|構わない)",
    # Japanese rule in the plain form: 〜を使う (use), 〜てから行う (do only after), 〜必要がある (must).
    r"を使う" + _END + r"|てから(?:行う|やる|実行する|始める)" + _END
    + r"|[うくすつぬふむゆるぐずづぶ]必要が(?:ある|あります)",
    # Japanese directive ending in こと (〜すること, 〜しないこと), not 〜ということ (the fact that).
    r"(?<!とい)(?:[うくすつぬふむゆるぐずづぶ]|ない)こと" + _END,
    # Japanese "make sure that…" ending in ように (〜するように, 〜ようにする); not ようにした (done).
    r"ように(?:する|しよう|して|心がける|気をつける)?" + _END,
    # Japanese casual request ending in the te-form: 書いて, 使って, やめて, 調べて (not すべて / 初めて).
    r"(?:(?<!す)べ|(?<![初改])め|[しいっんえけせれきみじち])[てで](?:ね|よ)?" + _END,
    # Japanese "let's…": 〜しましょう, 書こう, やろう (not だろう / のよう).
    r"ましょう|(?<![だでの])[こおよろごぼ]う" + _END,
    # Japanese "always / never" at the start, as rules.
    r"^(?:必ず|常に|絶対に?|決して)",
    # Japanese 必ず (without fail) anywhere, but not before a failure (必ず落ちる: a fact about a bug).
    r"必ず(?!落ち|失敗|再現|発生|起き|エラー|タイムアウト|遅)",
    # Japanese "don't forget / be careful of".
    r"を忘れずに|忘れないで|に(?:気をつけ|注意)(?:る|て|する)?" + _END,
    # Japanese "from now on / next time …" at the start.
    r"^(?:今後は?|次回は?|次から|これからは)",
    # Japanese "X rather than Y" with a use-verb: 〜ではなく〜を使う, 〜の代わりに〜を使って.
    r"(?:ではなく|じゃなく|の代わりに)[^。]*を使[うえっ]",
    # Japanese "give priority to X" ending the clause.
    r"を優先(?:する|して|すべき)?" + _END,
    # Japanese "lesson:" at the start.
    r"^(?:教訓|学び)\s*[:：]",
]), re.IGNORECASE)

# ---------------------------------------------------------------- user: the person as the subject

_PERSON = re.compile("|".join([
    # English: the user / I / my at the start, or "the user is / likes / prefers…" anywhere.
    # ("The user moved the team chat to Discord" is what they did to the work: not them.)
    r"^(?:the user|user)(?:'s\b|\s+(?!\w+ed\b))|^(?:i am|i'm|my)\b"
    r"|\b(?:the user(?:'s)? (?:is|was|has|likes|prefers|wants))",
    # English: I and a verb about me ("I prefer to review PRs in the morning", "I usually work late").
    r"^i (?:(?:usually|always|often|mostly|also|really|still|sometimes|never|rarely) )?(?:prefer|like|love|hate"
    r"|enjoy|work|live|have|use|read|write|code|review|speak|know|learn|study|commute|start|finish)\b",
    # Chinese 用户 + a verb about the person (用户是 / 喜欢 / 习惯…), not 用户表 / 用户服务 (the users table).
    r"^用户(?:是|想|喜欢|更喜欢|偏好|讨厌|不喜欢|习惯|平时|经常|每天|一般|擅长|熟悉|不熟悉|负责|住在|来自|正在"
    r"|在学|以前|曾经|目前|觉得|认为|希望|爱|的(?:名字|角色|职位|工作|目标|背景|母语|时区|习惯|偏好|爱好))",
    # Chinese 我 + a verb about me (我是 / 我的 / 我喜欢 / 我习惯…), not 我们 (we: the team's work).
    r"^我(?:是|的|喜欢|更喜欢|偏好|讨厌|不喜欢|习惯|平时|经常|每天|一般|通常|擅长|熟悉|不熟悉|负责|住在|来自"
    r"|正在|在学|想|希望|打算|计划|以前|曾经|目前|现在是|爱|主要|比较|在\S{0,8}(?:工作|上班))",
    # Japanese: the user / I / someone-san as the topic (ユーザーは, 私は, 田中さんは), not 私たち (we);
    # ユーザーが… is more often the product's users (ユーザーが迷わないように…).
    r"^(?:ユーザー|ユーザ|利用者)(?:さん)?は|^(?:私|わたし|僕|ぼく|俺|おれ|自分)(?:は|が|の)",
    r"^[^\s、。]{1,12}?(?:さん|くん|君|様|氏)(?:は|が)",
    # a birthday is said of a person ("山口さんの誕生日は4月18日"), not of a feature (a birthday reminder,
    # 出生日期 fields)
    r"(?:'s|\bmy|\bhis|\bher|\btheir) birthday\b|\bbirthday (?:is|falls)\b|誕生日は|(?<!出)生日是",
]), re.IGNORECASE)

# ---------------------------------------------------------------- preferences and likes with no subject

# A preference with no one as its subject is a rule for the agent: "prefer X", 更喜欢 X.
_PREFERENCE = re.compile("|".join([
    # Chinese: prefer / rather / lean towards.
    r"偏好|更喜欢|更倾向|倾向于|宁可|宁愿",
    # Japanese: 〜を好む, 好みは…, AよりBが好き / Bのほうが好き (preferring one over another).
    r"を好む|^好み(?:は|[:：])|(?:より|の方が|のほうが)[^。]*好き",
]), re.IGNORECASE)

# A like, dislike, skill or habit with no one as its subject is about the person.
_LIKES = re.compile("|".join([
    # Chinese: likes / dislikes / is used to / usually / good at / familiar with, at the start.
    r"^(?:喜欢|讨厌|不喜欢|爱用|习惯|平时|擅长|熟悉|不熟悉|正在学|在学)",
    # Japanese: 〜が好き / 嫌い / 苦手 / 得意, 〜に詳しい, 〜に興味がある.
    r"[がは](?:大)?(?:好き|嫌い|苦手|得意)|に詳しい|に興味が(?:ある|あります)",
    # Japanese habits at the start: 普段 / いつも / 毎朝 / 毎晩 (usually, every morning…).
    r"^(?:普段|いつも|毎朝|毎晩)",
]), re.IGNORECASE)


# ---------------------------------------------------------------- what the entry's own words say of its kind

# A label that says the entry is work: a TODO, a plan, a decision, a status, an owner.
_WORK_LABEL = re.compile(r"^(?:to ?do|todo|tasks?|open|pending|done|plan|plans|plan for .+|roadmap|next(?: \w+)?"
                         r"|status|decisions?|decided|owner|owners|deadline|milestones?|progress|blockers?|issues?"
                         r"|下个迭代计划|迭代计划|计划|下一步|待办|状态|决定|决策|负责人|截止|里程碑|进度|问题"
                         r"|今後の予定|予定|計画|決定|決定事項|ステータス|担当|締め切り|未解決タスク|課題|進捗|TODO)$",
                         re.IGNORECASE)
# A label that says the entry is a rule or a lesson learned: how to work next time.
_RULE_LABEL = re.compile(r"^(?:lessons?(?: learned| learnt)?|learned the hard way|learnt the hard way|gotcha"
                         r"|note to self|rules?|remember|important|教训|经验教训|踩坑|记住|记得|注意|注意事项|规则|规范"
                         r"|原则|教訓|学び|反省|注意点?|ルール|約束|決まり)$", re.IGNORECASE)
# A team's decision is a fact about the work, whatever it prescribes ("we agreed that every
# service must…").
_DECISION = re.compile(r"\b(?:we|the team) (?:agreed|decided|chose|settled on)\b", re.IGNORECASE)
# A request the user makes in the first person about replies: feedback ("I prefer short answers").
_REPLY_REQUEST = re.compile(r"^i (?:prefer|like|want|need)\b[^.]*\b(?:answers?|repl(?:y|ies)|responses?"
                            r"|summar(?:y|ies)|explanations?)\b", re.IGNORECASE)
# The user wants something made a certain way (not "wants to learn Rust", a goal): feedback.
_WANTS_MADE = re.compile(r"^(?:the user|user|i) (?:wants|want|would like|expects|expect|asks for|needs|need)"
                         r" (?!to\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:i|my|i'm|我|我的|私|私の|僕|自分)\b|^(?:我|私|僕)", re.IGNORECASE)
# A question (with or without its answer after →) asks about the work: a fact, not a rule.
_QUESTION = re.compile(r"[?？]\s*(?:→.*)?$")


def guess_type(text: str) -> str:
    """The type of an entry by what its first line says (its statement: list markers, a
    checkbox, bold and its labels set apart), not by a heading it was given."""
    lines = [line for line in text.strip().split("\n") if line.strip()]
    # a first line that is only a heading or a label (`Lessons:`, an imported section's heading
    # path) says what its first item says
    head = lines[:2] if len(lines) > 1 and lines[0].rstrip().endswith((":", "：")) else lines[:1]
    entry = read_entry("\n".join(head))
    first = entry.statement
    labels = [label.strip() for label in entry.label.split(":")] if entry.label else []
    if entry.state or any(_WORK_LABEL.match(label) for label in labels):
        return "project"  # a TODO, open or done, or a plan, a decision, a status
    if any(_RULE_LABEL.match(label) for label in labels):
        return "feedback"
    if _REFERENCE.search(_CITED_CHANGE.sub(" ", first)):
        return "reference"
    if _QUESTION.search(first) or _DECISION.search(first):
        return "project"
    # a label in the first person is part of the sentence ("My role: tech lead", "I prefer short answers: …")
    said = f"{entry.label}: {first}" if _FIRST_PERSON.match(entry.label) else first
    if _INSTRUCTION.search(first) or _REPLY_REQUEST.search(said) or _WANTS_MADE.search(said):
        return "feedback"
    if _PERSON.search(said):
        return "user"
    if _PREFERENCE.search(first):
        return "feedback"
    if _LIKES.search(first):
        return "user"
    return "project"
