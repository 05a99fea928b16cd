"""The one Markdown block parser (store/markdown.py) that the Claude index and the OpenClaw import read with."""

from auto_dream.store.markdown import block_tokens


def test_blocks_are_read_as_commonmark_reads_them_with_tables():
    text = "# Notes\n\n| plan | price |\n|---|---|\n| Free | 0 |\n\n```sh\n# not a heading\n```\n\n- item\n"
    kinds = [(token.type, token.map) for token in block_tokens(text) if token.level == 0 and token.nesting != -1]
    assert kinds == [("heading_open", [0, 1]), ("table_open", [2, 5]), ("fence", [6, 9]),
                     ("bullet_list_open", [10, 11])]
