from rag.parsing.mineru_blocks import (
    content_list_to_blocks,
    document_title,
    html_table_to_markdown,
    infer_heading_levels,
)
from rag.types import Block


def test_html_table_with_header_colspan_and_pipes():
    html = ("<table><tr><th>Item</th><th colspan='2'>Limit</th></tr>"
            "<tr><td>Meals</td><td>45 EUR</td><td>per day</td></tr>"
            "<tr><td>A|B</td><td>1<br>2</td><td></td></tr></table>")
    assert html_table_to_markdown(html).splitlines() == [
        "| Item | Limit |  |",
        "|---|---|---|",
        "| Meals | 45 EUR | per day |",
        "| A\\|B | 1 2 |  |",
    ]


def test_flat_pdf_headings_get_depth_from_their_numbering():
    flat = [Block("heading", "Employee Handbook", 1), Block("heading", "1 Travel", 2), Block("heading", "1.2 Meals", 2),
            Block("heading", "1.2.1 Abroad", 2), Block("heading", "第二章 假期", 2), Block("heading", "第一节 年假", 2),
            Block("heading", "Appendix", 2)]
    levels = [b.level for b in infer_heading_levels(flat)]
    assert levels == [1, 2, 3, 4, 3, 4, 2]


def test_a_real_hierarchy_is_left_alone():
    blocks = [Block("heading", "Title", 1), Block("heading", "1.1 Deep", 2), Block("heading", "Other", 3)]
    assert infer_heading_levels(blocks) == blocks


def test_running_headers_dropped_single_header_kept_and_page_numbers_ignored():
    items = [
        {"type": "header", "text": "ACME Confidential", "page_idx": 0},
        {"type": "header", "text": "Chapter 3 starts here", "page_idx": 1},
        {"type": "header", "text": "ACME Confidential", "page_idx": 1},
        {"type": "footer", "text": "Page 1 of 9", "page_idx": 0},
        {"type": "footer", "text": "Page 2 of 9", "page_idx": 1},
        {"type": "page_number", "text": "2", "page_idx": 1},
        {"type": "list", "list_items": ["- one", "- two"], "page_idx": 1},
        {"type": "equation", "text": "E = mc^2", "page_idx": 1},
    ]
    blocks = content_list_to_blocks(items, paged=True)
    assert [(b.text, b.page) for b in blocks] == [
        ("Chapter 3 starts here", 2), ("- one\n- two", 2), ("E = mc^2", 2)]


def test_unpaged_formats_have_no_pages_and_bold_heading_markers_go():
    blocks = content_list_to_blocks([{"type": "text", "text": "**Intro**", "text_level": 2, "page_idx": 0}], paged=False)
    assert blocks == [Block("heading", "Intro", level=2, page=None)]


def test_a_numbered_heading_mineru_put_on_top_is_a_section_like_its_siblings():
    # MinerU's flash tier reports the first heading one level above the others, whatever it says.
    blocks = [Block("heading", "2. Client dinners", 1, page=1), Block("text", "Up to 80 EUR.", page=1),
              Block("heading", "3. Mileage", 2, page=2), Block("text", "0.30 EUR per km.", page=2)]
    refined = infer_heading_levels(blocks)
    assert refined[0].level == refined[2].level
    assert document_title(refined) is None, "a numbered section does not name the document"


def test_the_title_is_the_top_heading_the_document_opens_with():
    opening = [Block("heading", "Expense Policy", 1), Block("heading", "1 Scope", 2), Block("text", "All staff.")]
    assert document_title(opening) == "Expense Policy"
    later = [Block("text", "Intro."), Block("heading", "Mileage", 1), Block("text", "Per km.")]
    assert document_title(later) is None
