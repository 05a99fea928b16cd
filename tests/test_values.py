"""What kind of value a few words are (judge.values): a value stands in only for one of its kind."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.judge.values import anchored, anchors, pins, same_kind, specifics, spelled, value_kind
from conftest import examples


@pytest.mark.parametrize("written, kind", [
    (["9:30"], "number"), (["40,000"], "number"), (["3.11"], "number"), (["16"], "number"),
    (["30", "万", "円"], "number"), (["13", "時"], "number"), (["three"], "number"),
    (["Thursday"], "weekday"), (["Wednesdays"], "weekday"), (["木曜日"], "weekday"), (["周四"], "weekday"),
    (["May"], "month"),
    (["m1"], None), (["S3"], None), (["Postgres"], None), (["staging"], None), ([], None),
])
def test_value_kind(written, kind):
    assert value_kind(written) == kind


def test_a_value_stands_in_only_for_one_of_its_kind():
    assert same_kind(["Thursday"], ["Wednesday"]) == "weekday"
    assert same_kind(["15:00"], ["13:00"]) == "number"
    assert same_kind(["Thursday"], ["14:00"]) is None
    assert same_kind(["pnpm"], ["bun"]) is None


# (text, what it pins down, the names it holds)
SPECIFICS = [
    ("Mobile releases are frozen from March 3 until the App Store review of 5.0 completes.",
     {"march", "3", "5.0"}, {"app", "store"}),
    ("Kenji is based in Tokyo (UTC+9).", {"utc+9"}, {"tokyo"}),  # a sentence's first word is no name
    ("Run `make lint` before committing.", {"make", "lint"}, set()),
    ("Dashboard: https://grafana.acme.internal/d/api-latency.", {"grafana.acme.internal/d/api-latency"}, set()),
    ("Post incidents in #incidents on Slack; the ETL writes to analytics_raw.",
     {"#incidents", "analytics_raw"}, {"slack", "etl"}),
    ("Standups are on mondays; we may meet in May.", {"monday", "may"}, set()),  # "may" the verb is no month
    ("线上事故报告发到钉钉群“线上事故通报”。", {"线上事故通报"}, set()),
    # a URL right after a Chinese or Japanese word is one URL, not "https" and a host
    ("APIの遅延はGrafanaのhttps://grafana.example.jp/d/api-latencyで確認できる。",
     {"grafana.example.jp/d/api-latency"}, {"api", "grafana"}),
    ("数据管道的缺陷登记在Jira的DATA项目。", set(), {"jira", "data"}),  # Latin words in CJK text: names
    ("6月1日到6月20日冻结发布，每周五例会。", {"6", "1", "20", "周五"}, set()),
    ("Caroline volunteers at an LGBTQ+ youth center, e.g. on weekends.", set(), {"lgbtq+"}),
    ("The user is learning Rust; MAY is a name.", set(), {"rust", "may"}),
    ("The user is learning the piano.", set(), set()),
]


@pytest.mark.parametrize("text, pinned, names", SPECIFICS, ids=[case[0][:30] for case in SPECIFICS])
def test_what_a_statement_pins_down_and_the_names_it_holds(text, pinned, names):
    assert specifics(text) == (pinned, names)
    # pins also holds for an anchor: a word of Latin letters in Chinese or Japanese text (values.anchors)
    assert pins(text) == bool(pinned or anchors(text))
    assert anchored(text) == bool(anchors(text))  # the pair search's first sign of one


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.sampled_from(list("aZ09 _#+-./:`“”「」\n,Mayondfri周五") + ["Monday", "March", "://", "http"]),
                max_size=30).map("".join))
def test_pins_is_true_whenever_a_text_pins_something_down(text):
    """The pair search asks pins of every memory: it may say yes more often, never less (a pair
    it left out would never be compared)."""
    assert pins(text) or not specifics(text).pinned


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.sampled_from(list("aZ09 _#+-./:`“”「」\n,周五数据の") + ["Monday", "://", "http", "mock"]),
                max_size=30).map("".join))
def test_anchored_is_true_whenever_a_text_holds_an_anchor(text):
    """The pair search compares two texts that hold anchors from a lower overlap (similarity.ANCHORED_FLOOR):
    `anchored` may say yes more often than anchors, never less."""
    assert anchored(text) or not anchors(text)


def test_a_term_spelt_in_chinese_or_japanese_holds_the_anchor_another_writes_in_latin_letters():
    assert spelled("客户数据导出功能必须挂在功能开关后面上线。", frozenset({"feature", "flag"})) == {"feature", "flag"}
    terms = frozenset({"feature", "flag", "pr"})
    assert spelled("顧客データのエクスポートはフィーチャーフラグの裏で出す。", terms) == {"feature", "flag"}
    assert spelled("客户数据导出功能必须挂在功能开关后面上线。", frozenset({"feature"})) == set()  # the whole term
    assert spelled("发布前先检查功能开关的默认值。", frozenset()) == set()
    assert anchors("发布前先检查功能开关的默认值。") == set()  # never an anchor of its own
    assert anchored("发布前先检查功能开关的默认值。")  # but searched as one that may hold another's
