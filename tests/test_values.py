"""What kind of value a few words are (judge.values): a value stands in only for one of its kind."""

import pytest

from auto_dream.judge.values import same_kind, value_kind


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
