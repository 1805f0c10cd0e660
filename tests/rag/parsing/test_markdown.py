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
    assert [b.kind for b in blocks] == ["heading", "code"]  # a fenced block is read as code
    assert blocks[1].text == "```bash\n# install\npip install x\n```"


def test_setext_headings_and_html_comments():
    blocks = parse_markdown("Policy\n======\n\n<!-- INFO END -->\n\nScope\n-----\nEveryone.\n")
    assert [(b.kind, b.text, b.level) for b in blocks] == [
        ("heading", "Policy", 1), ("heading", "Scope", 2), ("text", "Everyone.", 0)
    ]


def test_a_rule_at_the_top_with_no_access_list_below_is_text():
    meta, body = split_front_matter("---\n\nAccess: the VPN is needed from home.\n")
    assert meta == {} and body.startswith("---")


def read(markdown: str) -> list[tuple[str, str]]:
    """Each block's kind and text."""
    return [(b.kind, b.text) for b in parse_markdown(markdown)]


def test_html_blocks_read_as_the_text_they_show():
    assert read(
        '<div class="note"><style>.note{width:100%;color:red}</style>\n<p>Work from home up to <b>two</b> days.</p>'
        '</div>\n\n<iframe src="https://calendar.example.com/embed"\n  width="100%" height="600">\n</iframe>\n\n'
        "<table><tr><th>City</th><th>Limit</th></tr><tr><td>Paris</td><td>60 EUR</td></tr></table>\n\n"
        "<h3>Equipment</h3>\n\nA laptop is provided.\n") == [
        ("text", "Work from home up to two days."),
        ("table", "| City | Limit |\n|---|---|\n| Paris | 60 EUR |"),
        ("heading", "Equipment"), ("text", "A laptop is provided."),
    ]


def test_prose_loses_inline_tags_template_directives_and_entities_but_code_spans_keep_theirs():
    assert read(
        "# &nbsp;\n# Travel &amp; leave\n\n{% include banner.html %}\n\n"
        'Book through the [travel desk]({% page "/travel/desk/" %}) {{ site.note }}at least<br>two weeks ahead '
        "&mdash; see `&amp;` and `{{ x }}`.\n\n> Note: <kbd>Ctrl</kbd> saves.\n\n"
        "{% comment %}\nNot shown.\n{% endcomment %}\n") == [
        ("heading", "Travel & leave"),
        ("text", "Book through the travel desk at least two weeks ahead — see `&amp;` and `{{ x }}`."),
        ("text", "> Note: Ctrl saves."),
    ]


def test_fenced_code_is_code_also_inside_a_list_and_a_table_without_outer_pipes_is_a_table():
    assert read(
        "1. Install the client:\n   ```bash\n   pip install client\n   ```\n2. Start it.\n\n"
        "{% highlight yaml %}\nport: 8080\n{% endhighlight %}\n\n参数名 | 必选\n--- | ---\npage | false\n") == [
        ("text", "1. Install the client:"), ("code", "```bash\npip install client\n```"), ("text", "2. Start it."),
        ("code", "```yaml\nport: 8080\n```"), ("table", "| 参数名 | 必选 |\n|---|---|\n| page | false |"),
    ]


def test_rows_of_pipes_directly_after_prose_are_a_table_of_their_own():
    assert read("Limits per city:\n| Paris | 60 EUR |\n| Rome | 50 EUR |\nAsk before booking.\n") == [
        ("text", "Limits per city:"), ("table", "| Paris | 60 EUR |\n| Rome | 50 EUR |"), ("text", "Ask before booking."),
    ]
