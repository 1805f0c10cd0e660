"""A Confluence page's storage format (XHTML with `ac:` macros and `ri:` resource references) as Markdown:
headings, lists and tables kept, a macro's readable text kept and its settings dropped, so the page is
chunked by its own headings like any Markdown document."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

# Macro settings and non-text elements: nothing a reader sees as text.
_DROPPED = ("ac:parameter", "ac:image", "ac:emoticon", "ac:placeholder", "ri:attachment", "ri:url")
_BLANK_LINES = re.compile(r"\n{3,}")
_CONVERTER = MarkdownConverter(heading_style="ATX", bullets="-")


def storage_to_markdown(storage: str, title: str = "") -> str:
    """The page as Markdown, its title as the first heading when given."""
    soup = BeautifulSoup(storage, "html.parser")
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    for code in soup.find_all("ac:plain-text-body"):
        code.replace_with(_code_block(soup, code.get_text()))
    for link in soup.find_all("ac:link"):
        link.replace_with(_link_text(link))
    for task in soup.find_all("ac:task"):
        body = task.find("ac:task-body")
        task.replace_with(_tag(soup, "li", body.get_text(" ", strip=True) if body else ""))
    for tasks in soup.find_all("ac:task-list"):
        tasks.name = "ul"
    text = _CONVERTER.convert_soup(soup)  # the parsed tree as it is: no second parse
    text = _BLANK_LINES.sub("\n\n", text).strip()
    heading = f"# {title.strip()}\n\n" if title.strip() else ""
    return heading + text + "\n"


def _code_block(soup: BeautifulSoup, code: str) -> Tag:
    pre = soup.new_tag("pre")
    pre.append(_tag(soup, "code", code))
    return pre


def _link_text(link: Tag) -> str:
    """What a link shows: its body, else the title of the page it points to."""
    body = link.find(["ac:link-body", "ac:plain-text-link-body"])
    if body is not None and body.get_text(strip=True):
        return body.get_text(" ", strip=True)
    page = link.find("ri:page")
    return page.get("ri:content-title", "") if page is not None else ""


def _tag(soup: BeautifulSoup, name: str, text: str) -> Tag:
    tag = soup.new_tag(name)
    tag.string = text
    return tag
