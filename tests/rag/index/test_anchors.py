"""Every footnote opens the exact place it quotes: the page at the cited words, the Confluence heading, the
file's lines on its git web view, the PDF page; and never a link that is not http(s).

Text fragments are checked the way a browser reads them: the page is the passage's Markdown rendered to
HTML (markdown-it), and the directive is matched as the URL Fragment Text Directives spec says (each term
whole words inside one block, case-insensitive, textEnd after textStart)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

import lxml.html
from markdown_it import MarkdownIt

from rag.index.chunking import Chunker, ChunkingConfig
from rag.parsing.markdown import parse_markdown
from rag.index.anchors import line_range, line_ranges, passage_url, plain_text
from rag.types import Chunk, ParsedDocument

PAGE = "https://intranet.example.com/policies/travel"
BLOCKS = {"p", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "tr", "td",
          "th", "div"}

HANDBOOK = """---
title: Travel policy
url: https://intranet.example.com/policies/travel
---
# Travel policy

<!-- reviewed by HR
     in March -->
## Booking

Book trains and flights through the **travel desk** at least two weeks ahead; a trip booked later needs
your manager's pre-approval, and the desk will ask for it by e-mail.

- Economy class for journeys under six hours.
- Business class only with the [director's approval](https://intranet.example.com/approvals), never for
  trips inside the country.

## Meals

Meals are reimbursed up to 45 EUR a day & 60 EUR in Paris, London or Zurich, with the receipts attached to
the expense report. Alcohol is never reimbursed. Tips up to 10 % are, when the receipt shows them.

| City | Daily limit |
|------|-------------|
| Paris | 60 EUR |
"""


def chunk(text: str = "Some text.", *, title: str = "Travel policy", headings: tuple[str, ...] = (),
          page: int | None = None, lead: str = "") -> Chunk:
    return Chunk("c1", "travel.md", title, headings, text, 0, len(text), page, page, "", "2026-11-02", lead=lead)


def handbook_chunks(source: str = HANDBOOK) -> list[Chunk]:
    body = source.split("---\n", 2)[2]
    doc = ParsedDocument("travel.md", "Travel policy", parse_markdown(body), "", "2026-11-02")
    return Chunker(ChunkingConfig(min_chars=120, max_chars=260, overlap_min=0, overlap_max=40)).chunk(doc)


def page_blocks(markdown: str) -> list[str]:
    """The page's text as a browser lays it out: one string per block, whitespace (a soft line break
    too) collapsed."""
    root = lxml.html.fromstring(f"<div>{MarkdownIt('commonmark').enable('table').render(markdown)}</div>")
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag in BLOCKS:
            element.text = "\u2029" + (element.text or "")
            element.tail = "\u2029" + (element.tail or "")
    return [" ".join(b.split()) for b in root.text_content().split("\u2029") if b.strip()]


def highlighted(blocks: list[str], url: str) -> str | None:
    """What a browser highlights for the text directive of `url` in a page of `blocks`, or None."""
    fragment = urlsplit(url).fragment
    if not fragment.startswith(":~:text="):
        return None
    terms = [unquote(t) for t in fragment.removeprefix(":~:text=").split(",")]
    assert 1 <= len(terms) <= 2 and all(terms), "no prefix or suffix is written, so one or two terms"
    page = "\n".join(blocks)  # a term containing no newline stays inside one block

    def find(term: str, after: int) -> re.Match[str] | None:
        return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE).search(page, after)

    start = find(terms[0], 0)
    if start is None:
        return None
    if len(terms) == 1:
        return start.group()
    end = find(terms[1], start.end())
    return None if end is None else page[start.start() : end.end()]


def shown(text: str) -> str:
    """A passage as the page shows it, lines joined."""
    return " ".join(filter(None, map(plain_text, text.splitlines())))


def test_a_text_fragment_highlights_exactly_the_cited_passage_on_the_rendered_page():
    blocks = page_blocks(HANDBOOK.split("---\n", 2)[2])
    passages = [c for c in handbook_chunks() if not c.lead]
    assert len(passages) >= 4 and any("|" in c.text for c in passages)
    for passage in passages:
        url = passage_url(PAGE, "fragment", passage)
        assert url.startswith(PAGE + "#:~:text="), url
        prose = passage.text.split("\n\n|")[0]  # a passage running into a table is quoted up to it
        assert " ".join(highlighted(blocks, url).split()) == shown(prose), passage.text


def test_a_fragment_percent_encodes_its_delimiters_and_stays_short():
    meals = chunk("Meals are reimbursed up to 45 EUR a day & 60 EUR in Paris, London or Zurich, with the receipts "
                  "attached. A pre-approval is needed.")
    url = passage_url(PAGE, "fragment", meals)
    assert url == PAGE + "#:~:text=Meals%20are%20reimbursed%20up,A%20pre%2Dapproval%20is%20needed."
    compare = passage_url(PAGE, "fragment", chunk("If a < b > c, <b>pay</b> b."))
    assert compare == PAGE + "#:~:text=If%20a%20%3C%20b%20%3E%20c%2C%20pay%20b.", "a tag is no text, < is"
    one = passage_url(PAGE, "fragment", chunk("Tips, up-front & later."))
    assert one == PAGE + "#:~:text=Tips%2C%20up%2Dfront%20%26%20later."
    assert len(passage_url(PAGE, "fragment", chunk(" ".join(["word"] * 200)))) < len(PAGE) + 80


def test_a_fragment_replaces_the_urls_own_fragment_and_is_never_doubled():
    url = passage_url(PAGE + "#meals", "fragment", chunk("Alcohol is never reimbursed."))
    assert url == PAGE + "#:~:text=Alcohol%20is%20never%20reimbursed."
    again = passage_url(url, "fragment", chunk("Alcohol is never reimbursed."))
    assert again == url


def test_a_table_code_or_continued_table_passage_opens_the_page_without_a_fragment():
    table = "| City | Daily limit |\n|------|-------------|\n| Paris | 60 EUR |"
    code = "```\nexpense submit --receipt r.pdf\n```"
    for passage in (chunk(table), chunk(code), chunk("| Paris | 60 EUR |", lead="| City | Daily limit |")):
        assert passage_url(PAGE + "#top", "fragment", passage) == PAGE + "#top"


def test_unspaced_text_is_cut_at_punctuation_a_word_boundary_in_every_script():
    passage = chunk("员工出差的餐费标准为每天一百元，超出部分需自行承担。\n住宿费用按城市等级报销，需附发票。")
    url = passage_url(PAGE, "fragment", passage)
    blocks = ["员工出差的餐费标准为每天一百元，超出部分需自行承担。", "住宿费用按城市等级报销，需附发票。"]
    assert highlighted(blocks, url) == "\n".join(blocks)
    endless = chunk("这是一段没有任何标点符号而且非常非常长的中文文本它一直写下去直到超过了三十个字的限制为止")
    assert passage_url(PAGE, "fragment", endless) == PAGE, "no boundary to cut at: the page, no fragment"


def test_a_pdf_opens_at_the_passages_page_in_every_style_but_a_paged_template():
    pdf = "https://intranet.example.com/files/Travel%20Policy.pdf"
    assert passage_url(pdf + "#view=fit", "plain", chunk(page=3)) == pdf + "#page=3"
    assert passage_url(pdf, "fragment", chunk(page=3)) == pdf + "#page=3", "browsers' PDF viewers ignore text"
    assert passage_url(pdf, "plain", chunk()) == pdf
    assert passage_url(PAGE, "plain", chunk(page=3)) == PAGE, "not a PDF: the page is not in the URL"
    viewer = "https://docs.example.com/view?file={path}&page={page}"
    assert passage_url(viewer, "template", chunk(page=7), path="hr/travel.pdf") == \
        "https://docs.example.com/view?file=hr/travel.pdf&page=7"


def test_a_folder_template_gets_the_quoted_path_and_the_page_blank_when_there_is_none():
    template = "https://git.example.com/handbook/blob/main/{path}"
    assert passage_url(template, "template", chunk(), path="hr/leave policy #2.md") == \
        "https://git.example.com/handbook/blob/main/hr/leave%20policy%20%232.md"
    assert passage_url(template, "template", chunk(page=4), path="hr/travel.pdf") == \
        "https://git.example.com/handbook/blob/main/hr/travel.pdf#page=4"
    paged = "https://files.example.com/{path}#page={page}"
    assert passage_url(paged, "template", chunk(), path="a.md") == "https://files.example.com/a.md#page="
    assert passage_url("file:///srv/handbook/{path}", "template", chunk(), path="a.md") is None


def test_a_confluence_passage_opens_at_the_id_confluence_gives_its_heading():
    whats_new = chunk(title="Release Notes", headings=("Engineering", "Handbook", "What's new?"))
    dc = "https://wiki.example.com/display/ENG/Release+Notes"
    url = passage_url(dc, "heading", whats_new, ancestors=2)
    assert unquote(urlsplit(url).fragment) == "ReleaseNotes-What'snew?"
    assert url.startswith(dc + "#") and "'" not in urlsplit(url).fragment
    cloud = "https://example.atlassian.net/wiki/spaces/ENG/pages/123/Release+Notes"
    assert unquote(urlsplit(passage_url(cloud, "heading", whats_new, ancestors=2)).fragment) == "What's-new?"
    own_domain = "https://wiki.example.org/wiki/spaces/ENG/pages/123/Release+Notes"
    assert unquote(urlsplit(passage_url(own_domain, "heading", whats_new)).fragment) == "What's-new?"
    assert unquote(urlsplit(passage_url(dc, "heading", whats_new, cloud=True)).fragment) == "What's-new?"


def test_a_confluence_passage_without_a_heading_of_its_own_opens_the_page():
    under_ancestors = chunk(title="Release Notes", headings=("Engineering", "Handbook"))
    dc = "https://wiki.example.com/pages/viewpage.action?pageId=42"
    assert passage_url(dc, "heading", under_ancestors, ancestors=2) == dc
    assert passage_url(dc + "#old", "heading", chunk(headings=())) == dc + "#old"


def test_git_web_views_open_the_passages_lines_in_each_hosts_form():
    github = "https://github.com/acme/handbook/blob/4f2a9c1/docs/travel.md"
    assert passage_url(github, "lines", chunk(), lines=(12, 18)) == github + "?plain=1#L12-L18"
    assert passage_url(github.replace(".md", ".py"), "lines", chunk(), lines=(5, 5)) == \
        github.replace(".md", ".py") + "#L5"
    gitlab = "https://gitlab.example.com/acme/handbook/-/blob/4f2a9c1/docs/travel.md"
    assert passage_url(gitlab, "lines", chunk(), lines=(12, 18)) == gitlab + "?plain=1#L12-18"
    gitea = "https://code.example.com/acme/handbook/src/commit/4f2a9c1/docs/travel.md"
    assert passage_url(gitea, "lines", chunk(), lines=(12, 18)) == gitea + "?display=source#L12-L18"
    assert passage_url(github + "?plain=1#L1", "lines", chunk(), lines=(2, 3)) == github + "?plain=1#L2-L3"
    assert passage_url(github, "lines", chunk(), lines=None) == github
    assert passage_url(github, "lines", chunk(), lines=(9, 3)) == github, "a bad range: the file, no lines"


def test_only_http_links_come_out_and_what_would_end_a_link_is_encoded():
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "ftp://files.example.com/a", "mailto:hr@example.com",
                "https://", "https://intranet.example.com/a\nb", "", None, "//intranet.example.com/a"):
        for style in ("plain", "fragment", "heading", "lines", "template"):
            assert passage_url(bad, style, chunk("Alcohol is never reimbursed."), lines=(1, 2)) is None, (bad, style)
    odd = passage_url("https://intranet.example.com/a b|c>d\"e", "plain", chunk())
    assert odd == "https://intranet.example.com/a%20b%7Cc%3Ed%22e"


def test_line_range_finds_each_passage_in_the_raw_file_despite_front_matter_comments_and_markup():
    raw_lines = HANDBOOK.splitlines()
    for passage in handbook_chunks():
        found = line_range(HANDBOOK, passage.text)
        assert found is not None, passage.text
        first, last = found
        span = " ".join(raw_lines[first - 1 : last])
        words = passage.text.split()
        assert words[0] in raw_lines[first - 1] and words[-1] in raw_lines[last - 1], (passage.text, found)
        assert all(w in span for w in words if not w.startswith("|")), (passage.text, found)


def test_line_range_counts_lines_of_a_windows_file_and_says_none_for_text_it_does_not_hold():
    raw = "---\r\ntitle: A\r\n---\r\n\r\nFirst line of the rule\r\nand its second line.\r\n"
    assert line_range(raw, "First line of the rule\nand its second line.") == (5, 6)
    assert line_range(raw, "its second line.") == (6, 6), "a passage may start mid-line"
    assert line_range(raw, "Something the file never said.") is None
    assert line_range(raw, "") is None
    joined = "Book trains through the travel desk at least two weeks ahead"  # a parser that joins lines
    assert line_range("Intro.\n\nBook trains through the **travel desk**\nat least two weeks ahead", joined) == (3, 4)
    assert line_range("Book trains", "Book trains through the travel desk") is None, "all of it, or nothing"


def test_a_documents_passages_placed_in_order_find_a_repeated_paragraph_where_it_stands_again():
    note = "Keep every receipt until the expense report is approved."
    raw = f"# Trains\n\n{note}\n\nBook second class.\n\n# Hotels\n\n{note}\n\nBook three stars.\n"
    texts = [f"{note}\n\nBook second class.", f"{note}\n\nBook three stars.", note, "Not in the file."]
    assert line_ranges(raw, texts) == [(3, 5), (9, 11), (3, 3), None], "none further on: found from the start"
    assert line_range(raw, f"{note}\n\nBook three stars.") == (9, 11)
    assert line_range(raw, note) == (3, 3), "alone, a repeated passage is found where it first stands"


def test_lines_are_counted_as_a_git_web_view_counts_them():
    raw = "Page one ends here.\fPage two starts\nand goes on.\u2028Still line two."
    assert line_range(raw, "and goes on. Still line two.") == (2, 2), "form feed and U+2028 break no line"
