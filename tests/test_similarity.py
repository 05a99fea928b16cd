"""Word overlap, duplicates and contradictions (docs/dream.md), CJK included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auto_dream.distill.deterministic import new_memory_from_text
from auto_dream.judge.similarity import AIMS, ANCHORS, PINS, Profile, from_low, overlap, relation, significant_words
from conftest import examples

DUPLICATE, CONTRADICTION = 0.6, 0.4  # the config defaults


def related(a: str, b: str) -> str | None:
    return relation(Profile.of(a), Profile.of(b), DUPLICATE, CONTRADICTION)


# ---------------------------------------------------------------- significant_words


def test_words_are_lower_cased_and_split_on_punctuation():
    assert significant_words("Deploy, TESTS;staging!(api)") == {"deploy", "test", "stage", "api"}


def test_a_short_form_is_the_word_it_stands_for():
    assert significant_words("deploy to prod") == significant_words("deploy to production")
    assert significant_words("a backend dev") == significant_words("a backend developer")


def test_english_words_meet_at_their_stem():
    # "The user managed the rollout" and "the user manages rollouts" say one thing
    assert significant_words("managed rollouts") == significant_words("manages the rollout")


def test_stop_words_and_short_words_are_dropped():
    assert significant_words("The user is in a hurry to ship it on Friday") == {"user", "hurri", "ship", "friday"}


def test_contractions_leave_no_fragments_behind():
    # "don't" splits at the apostrophe: neither "don" nor "t" is a word that matters
    assert significant_words("Don't mock it") == {"mock"}


def test_chinese_runs_become_character_bigrams():
    # whitespace splitting would see one "word" in the whole sentence
    assert significant_words("分享知识") == {"分享", "享知", "知识"}


def test_japanese_and_korean_runs_become_bigrams_too():
    assert significant_words("テスト") == {"テス", "スト"}
    assert significant_words("데이터") == {"데이", "이터"}


def test_mixed_chinese_and_latin_keep_both_scripts_apart():
    # Spaces or not, the Latin word is one word and the Chinese around it is bigrams.
    spaced = significant_words("我们用 Postgres 数据库")
    assert spaced == {"我们", "们用", "postgr", "数据", "据库"}


def test_mixed_chinese_and_latin_without_spaces():
    # Chinese writers rarely put spaces around Latin words: "用Postgres数据库" is normal text.
    assert significant_words("我们用Postgres数据库") == {"我们", "们用", "postgr", "数据", "据库"}


def test_text_with_no_significant_word_is_empty():
    assert significant_words("It is a do, or not.") == frozenset()
    assert significant_words("") == frozenset()


# ---------------------------------------------------------------- overlap


def test_overlap_divides_by_the_smaller_set():
    assert overlap(frozenset({"a1", "b1"}), frozenset({"a1", "b1", "c1", "d1"})) == 1.0
    assert overlap(frozenset({"a1", "b1", "c1"}), frozenset({"a1", "x1", "y1", "z1"})) == pytest.approx(1 / 3)


def test_overlap_of_an_empty_set_is_zero():
    assert overlap(frozenset(), frozenset({"word"})) == 0.0
    assert overlap(frozenset({"word"}), frozenset()) == 0.0
    assert overlap(frozenset(), frozenset()) == 0.0


# ---------------------------------------------------------------- relation: contradictions


def test_always_versus_never_is_a_contradiction_even_above_the_duplicate_threshold():
    a, b = "Always rebase feature branches", "Never rebase feature branches"
    assert overlap(significant_words(a), significant_words(b)) > DUPLICATE
    assert related(a, b) == "contradiction"


def test_switching_tools_is_a_contradiction():
    assert related("Use pnpm", "Switched to npm instead of pnpm") == "contradiction"


def test_chinese_do_not_use_is_a_contradiction():
    assert related("用 Postgres 做数据库", "不要用 Postgres 做数据库") == "contradiction"


def test_chinese_switch_to_is_a_contradiction():
    assert related("后端用 MySQL 存储订单", "后端改用 Postgres 存储订单") == "contradiction"


def test_japanese_shinai_is_a_contradiction():
    assert related("このプロジェクトではモックを使う", "このプロジェクトではモックを使用しない") == "contradiction"


def test_two_negated_statements_are_not_a_contradiction():
    assert related("Don't force push", "Never force push to main") != "contradiction"


def test_a_negation_about_something_else_is_not_a_contradiction():
    # the subjects share too little for a negation to oppose anything
    assert related("Never deploy on Fridays", "Deploy the billing service with the staging script") is None


# A negation counts against a text that says what it negates. Word overlap alone made
# these pairs, of the shapes that lost observations in the LoCoMo benchmark, contradictions.


def memory_text(text: str) -> str:
    """What a memory made of `text` holds: its name (a head of it), its description, its body."""
    new = new_memory_from_text("project", text)
    return "\n".join([new.name, new.description, new.body])


def test_the_same_negation_on_both_sides_is_not_a_contradiction():
    a = "Priya reminds Tom that practice pays off and urges him not to give up."
    b = "Priya urges Tom to focus on the long race ahead, not give up, and offers to coach him."
    assert related(a, b) is None
    # as a memory: its name stops before the negated clause, its description is that clause: it
    # still negates, it does not say "give"
    assert memory_text(b).startswith("Priya urges Tom to focus on the long race ahead\nNot give up, and offers")
    assert related(a, memory_text(b)) is None and related(memory_text(a), memory_text(b)) is None


def test_a_negation_stops_at_but_and_takes_its_auxiliary_verb_along():
    a = ("Maria is swamped with exams and packing but is eager to explore Lisbon, taste the pastries, "
         "and see the old tram lines with Ana.")
    b = "Maria has never been to Lisbon but is eager to see the famous tiles next spring."
    assert overlap(significant_words(a), significant_words(b)) >= CONTRADICTION
    assert related(a, b) is None
    assert related("Ines can't have gluten.", "Ines is keen to bake the gluten-free bread from Leo's recipe.") \
        != "contradiction"


def test_negated_words_said_in_another_order_are_not_a_contradiction():
    a = "Omar has never tried sushi but plans to try it while in Osaka."
    b = "Lena shares a photo of a sushi platter she tried in Kyoto and tells Omar to try it in Osaka."
    assert overlap(significant_words(a), significant_words(b)) >= CONTRADICTION
    assert related(a, b) != "contradiction"


def test_a_shortened_copy_of_a_negation_aims_at_nothing_on_its_own():
    # the name stops before "did not get" (never right after it): the whole statement, in the
    # description and the body, is about the final round
    b = memory_text("Samuel and his older brother Tiago from Porto did not get into the final round "
                    "of the chess open.")
    assert b.startswith("Samuel and his older brother Tiago\n")
    assert related("Samuel and Tiago from Porto will get new chess books.", b) != "contradiction"


@pytest.mark.parametrize("said, negated", [
    ("Maria has been to Lisbon twice", "Maria has never been to Lisbon"),
    ("The release was deployed", "The release has not been deployed"),
    ("Omar tried sushi in Osaka", "Omar has never tried sushi"),
    ("Ines has gluten every morning", "Ines can't have gluten"),
    ("Push directly to main for hotfixes", "Never push directly to main, even for hotfixes"),
    ("Use the shared cache for builds", "Do not use the shared cache for builds, it is flaky"),
    ("The staging server lives at staging.example.com", "We don't have a staging server anymore"),
])
def test_a_negation_of_what_the_other_text_says_is_still_a_contradiction(said, negated):
    assert related(said, negated) == "contradiction"
    assert related(memory_text(said), negated) == "contradiction"
    assert related(said, memory_text(negated)) == "contradiction"


# ---------------------------------------------------------------- relation: duplicates


def test_english_rephrasing_is_a_duplicate():
    assert related("Don't mock the database in integration tests", "Do not mock the database in tests") == "duplicate"


def test_chinese_rephrasing_is_a_duplicate():
    assert related("用户想通过内容平台分享知识", "用户想通过内容平台分享知识和经验") == "duplicate"


def test_the_same_chinese_fact_with_and_without_spaces_around_a_latin_word_is_a_duplicate():
    assert related("项目用Postgres数据库存储订单", "项目用 Postgres 数据库存储订单") == "duplicate"


def test_short_facts_differing_in_the_word_that_matters_are_not_merged():
    a, b = "The user is learning Japanese", "The user is learning the piano"
    assert overlap(significant_words(a), significant_words(b)) >= DUPLICATE
    assert related(a, b) is None


def test_unrelated_memories_sharing_a_couple_of_words_are_neither():
    assert related("The deploy script runs nightly on the build server",
                   "The user prefers tabs and runs tests nightly") is None


# ---------------------------------------------------------------- properties

_TEXT = st.lists(
    st.one_of(
        st.sampled_from(list("abcdefghij ABC,.!'")),
        st.sampled_from(["not ", "never ", "don't ", "instead ", "instead of ", "rather than ", "switched to ",
                         "always ", "use ", "avoid ", "pnpm ", "npm "]),
        st.sampled_from(list("用户数据库不要改用分享知识")),
        st.sampled_from(list("モックをしないテスト")),
        st.sampled_from(list("데이터")),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(_TEXT, _TEXT)
def test_relation_is_symmetric_and_overlap_is_a_fraction(a, b):
    pa, pb = Profile.of(a), Profile.of(b)
    assert relation(pa, pb, DUPLICATE, CONTRADICTION) == relation(pb, pa, DUPLICATE, CONTRADICTION)
    assert 0.0 <= overlap(pa.words, pb.words) <= 1.0
    assert overlap(pa.words, pb.words) == overlap(pb.words, pa.words)


def test_short_texts_that_differ_in_a_lone_letter_are_not_duplicates():
    # real shape: two Claude Code topic files named `a` and `b`, "a body." / "b body."; and plans A/B/C
    assert related("b\nb in one line\nb body.", "c\nc in one line\nc body.") is None
    assert related("Go with plan B for the cache", "Go with plan C for the cache") is None
    assert related("Don't mock the database in integration tests", "Do not mock the database in tests") == "duplicate"


# ---------------------------------------------------------------- what is no negation


@pytest.mark.parametrize("text", [
    "List queries skip archived orders with `WHERE archived IS NOT TRUE`.",  # code
    "Reports filter WHERE refunded IS NOT NULL before the sum.",  # SQL, upper case
    'The user said "I don\'t want to remember any commands" after the demo.',  # a quotation
    "Shipping the hook now is a no-op until it is wired.",  # a word joined by a hyphen
    "Build PDFs with `--no-pdf-header-footer` set.",
    "Custom pre-release identifiers work too (not just alpha/beta/rc).",  # "not just" adds
])
def test_what_is_shown_quoted_or_joined_negates_nothing(text):
    assert "negation" not in Profile.of(text).signals


def test_a_negation_outside_the_code_still_reaches_into_it():
    assert related("Use `float` for money amounts", "Never use `float` for money amounts") == "contradiction"


def test_zero_and_no_say_one_thing():
    a, b = "Rendering the overlay has zero per-frame cost.", "The overlay has no per-frame cost."
    assert related(a, b) == "duplicate"


def test_words_in_quotation_marks_are_mentioned_not_said():
    # the rule is said twice; "fresh" in quotes in one is no claim that anyone is fresh
    a = "Check contacts.yaml interactions before listing anyone as fresh; with any interaction they're not fresh."
    b = 'Check contacts.yaml interactions before listing as "fresh".'
    assert Profile.of(a).signals_against(Profile.of(b)) == frozenset()
    assert Profile.of(a).signals_against(Profile.of('Check contacts.yaml interactions before listing as fresh.'))


# (text, its grounds): what lets a pair with it be compared below the duplicate threshold
GROUNDS = [
    ("The user is learning the piano.", 0),
    ("Never rebase feature branches.", AIMS),
    ("本番DBはPostgreSQL 16を使っている。", PINS | ANCHORS),
    ("Staging deploys no longer run on Thursdays.", AIMS | PINS),
    # a Latin term in Chinese or Japanese text is an anchor (values.anchors): the pair is searched
    # from the lower threshold (the anchored floor, against another that holds one), and the judge
    # decides whether the words around it are alike
    ("李娜在学Python。", PINS | ANCHORS),
    ("Li Na is learning Python.", 0),  # an English name pins nothing down
    ("小林在学日语。", 0),  # Chinese text without an anchor
]


@pytest.mark.parametrize("text, grounds", GROUNDS, ids=[case[0][:30] for case in GROUNDS])
def test_what_lets_a_pair_be_compared_below_the_duplicate_threshold(text, grounds):
    assert Profile.of(text).grounds == grounds


def test_a_pair_is_compared_from_the_lower_threshold_when_one_aims_or_both_pin():
    assert from_low(AIMS, 0) and from_low(0, AIMS) and from_low(PINS, PINS) and from_low(AIMS | PINS, 0)
    assert not from_low(PINS, 0) and not from_low(0, 0)
