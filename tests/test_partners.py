"""A memory that names another and says how they relate (judge.partners): the pair is listed with
that relation, whatever words the two share."""

import pytest

from auto_dream.judge.partners import mentions, name_keys, names_partner

NEVER_DEFER = name_keys("feedback_never_defer_to_human.md", "Never defer grunt work to the human")
COVER_LETTER = name_keys("feedback_cover_letter_quality.md", "Cover letter quality — location, format, length")


def test_a_memory_is_named_by_its_file_name_and_by_its_words_without_type_and_date():
    assert "never defer to human" in NEVER_DEFER
    assert "feedback never defer to human" in NEVER_DEFER
    assert "resume cover letter quality" in name_keys("feedback_resume_cover_letter_quality_2026-03-26.md")
    assert name_keys("notes.md", "Notes") == frozenset()  # too short to name anything


@pytest.mark.parametrize("text, keys, expected", [
    # real shapes (application-pipeline)
    ('**Why:** The user said "run all of them in order." This extends the existing "never defer to human" '
     "feedback — the human is the conductor.", NEVER_DEFER, "duplicate"),
    ("## ORIGINAL RULES (from feedback_cover_letter_quality.md, 2026-03-20)", COVER_LETTER, "duplicate"),
    ("This note supersedes `feedback_cover_letter_quality.md`: the word count is 550-700 now.", COVER_LETTER,
     "conflict"),
    ("Builds on [[feedback_never_defer_to_human]] for the CLI case.", NEVER_DEFER, "duplicate"),
    # named without a relation, or a relation without the name: nothing
    ("See feedback_cover_letter_quality.md for the details.", COVER_LETTER, None),
    ('This extends the "release checklist" rule to hotfixes.', COVER_LETTER, None),
    ("The human is the conductor; never defer to the human.", NEVER_DEFER, None),  # not a quotation or file name
])
def test_names_partner(text, keys, expected):
    found = names_partner(text, keys)
    assert (found[0] if found else None) == expected


def test_the_sentence_that_names_the_partner_is_quoted_whole():
    kind, sentence = names_partner('The user said "run them all." This extends the existing "never defer to human" '
                                   "feedback.\nMore lines follow.", NEVER_DEFER)
    assert sentence == 'This extends the existing "never defer to human" feedback.'


def test_mentions_are_file_names_and_quoted_phrases():
    assert mentions('From `project_release_plan.md`; "never defer to human"; the "x" rule') == {
        "project release plan", "never defer to human"}


def test_a_file_name_is_read_whole_from_where_its_word_starts_and_a_long_run_of_letters_names_nothing():
    assert mentions("see memories/project/release_plan_notes.md, and (feedback_tabs_over_spaces.md)") == {
        "release plan notes", "feedback tabs over spaces"}
    assert mentions("x" * 150 + ".md") == set()  # longer than any name: not a shorter name's tail
    assert mentions("a" * 200_000) == set()  # one pass: the unbounded pattern backtracked from every letter
