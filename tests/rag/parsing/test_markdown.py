from rag.parsing.markdown import parse_markdown, split_front_matter


def test_front_matter_is_read_and_removed():
    meta, body = split_front_matter("---\ntitle: Travel Policy\nversion: '2026-11-02'\n---\n# Travel\n\ntext\n")
    assert meta == {"title": "Travel Policy", "version": "2026-11-02"}
    assert body.startswith("# Travel")


def test_text_without_front_matter_is_untouched():
    meta, body = split_front_matter("# Title\n---\nnot front matter")
    assert meta == {} and body == "# Title\n---\nnot front matter"


def test_headings_paragraphs_and_tables():
    blocks = parse_markdown(
        "# 第一章 总则\n\n第一条 为了规范管理，制定本办法。\n第二条 本办法适用于全体员工。\n\n"
        "## Meals\nDaily allowance is 45 EUR.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    assert [(b.kind, b.level) for b in blocks] == [
        ("heading", 1), ("text", 0), ("heading", 2), ("text", 0), ("table", 0)
    ]
    assert blocks[0].text == "第一章 总则"
    assert blocks[1].text == "第一条 为了规范管理，制定本办法。\n第二条 本办法适用于全体员工。"
    assert blocks[4].text.splitlines()[0] == "| a | b |"


def test_hash_lines_inside_code_fences_are_not_headings():
    blocks = parse_markdown("# Setup\n\n```bash\n# install\npip install x\n```\n")
    assert [b.kind for b in blocks] == ["heading", "text"]
    assert "# install" in blocks[1].text


def test_setext_headings_and_html_comments():
    blocks = parse_markdown("Policy\n======\n\n<!-- INFO END -->\n\nScope\n-----\nEveryone.\n")
    assert [(b.kind, b.text, b.level) for b in blocks] == [
        ("heading", "Policy", 1), ("heading", "Scope", 2), ("text", "Everyone.", 0)
    ]


def test_a_rule_at_the_top_with_no_access_list_below_is_text():
    meta, body = split_front_matter("---\n\nAccess: the VPN is needed from home.\n")
    assert meta == {} and body.startswith("---")
