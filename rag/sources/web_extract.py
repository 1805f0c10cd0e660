"""A crawled HTML page's main content as Markdown (no menus, no footers; headings kept, since chunking
follows them), with what it says of itself (title, date, robots directives) and the links it holds.

trafilatura finds the main content. Where it loses headings the page has (it does on pages made of
plain divs, and on short pages it falls back to the whole body, menus included), the content region is
read here instead: `<main>`, else the one `<article>`, else `<body>`, without navigation, asides,
forms, scripts and the site's header and footer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import lxml.html
import trafilatura
from lxml import etree

from rag.parsing.metadata import html_metadata
from rag.sources.web_urls import normalize

_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCKS = _HEADINGS | {
    "p", "div", "section", "article", "main", "header", "footer", "ul", "ol", "li", "dl", "dt", "dd", "table",
    "pre", "blockquote", "figure", "figcaption", "address", "details", "summary", "hr", "center",
}
# Not <form>: ASP.NET (SharePoint) pages put the whole page in one.
_NOT_CONTENT = {"script", "style", "noscript", "template", "nav", "aside", "button", "svg", "iframe", "select",
                "textarea", "dialog", "menu"}
_NOT_CONTENT_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
_NOT_CONTENT_NAMES = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|navigation|menu|footer|sidebar|breadcrumbs?|cookies?|skip-link|site-header)"
    r"(?:$|[\s_-])",
    re.IGNORECASE)
_MARKDOWN_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


@dataclass(frozen=True)
class Page:
    """What one HTML page gives the web source."""

    markdown: str  # the main content
    title: str | None = None
    date: str | None = None  # the date the page declares (<meta>), ISO
    links: list[str] = field(default_factory=list)  # absolute, normalized http(s) URLs, in page order
    index: bool = True  # <meta name="robots"> lets it be indexed
    follow: bool = True  # … and its links followed


def is_ready() -> bool:
    """True once this module (lxml, trafilatura) is imported: what a reading child answers when it starts."""
    return True


def read_page(data: bytes, url: str, charset: str | None = None) -> Page:
    """Read the HTML page `data` fetched from `url` (`charset`: the one its Content-Type named)."""
    text = _XML_DECLARATION.sub("", decode(data, charset), count=1)
    declared = html_metadata(data)
    try:
        tree = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):  # nothing parsable: an empty or binary body
        return Page("", declared.title, declared.date)
    directives = _robots_directives(tree)
    links = _links(tree, url) if "nofollow" not in directives else []
    region = _content_region(tree)
    title = declared.title or _first_heading(region)
    markdown = main_content(text, region)
    return Page(markdown, title, declared.date, links, "noindex" not in directives, "nofollow" not in directives)


def decode(data: bytes, charset: str | None) -> str:
    """The page's text: in the charset its answer named, else the one its <meta> names, else UTF-8."""
    if not charset:
        found = _META_CHARSET.search(data[:4096])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        return data.decode(charset, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


def main_content(text: str, region: lxml.html.HtmlElement) -> str:
    """trafilatura's Markdown of the page, unless it lost headings of the content `region`: then the region's."""
    if not region.text_content().strip():
        return ""  # only menus and footers: whatever trafilatura would find is one of them
    extracted = trafilatura.extract(
        text, output_format="markdown", include_comments=False, include_tables=True, include_links=False,
        include_images=False, deduplicate=False) or ""
    expected = {_key(h.text_content()) for h in region.iter(*_HEADINGS)} - {""}
    if extracted.strip() and expected <= {_key(h) for h in _MARKDOWN_HEADING.findall(extracted)}:
        return extracted.strip() + "\n"
    own = to_markdown(region)
    return own if own.strip() else extracted.strip() + "\n"


def _key(heading: str) -> str:
    return re.sub(r"[\W_]+", "", heading.casefold())


def _robots_directives(tree: lxml.html.HtmlElement) -> set[str]:
    values: set[str] = set()
    for meta in tree.iter("meta"):
        if (meta.get("name") or "").strip().lower() in ("robots", "ai-employee"):
            values |= {v.strip().lower() for v in (meta.get("content") or "").split(",")}
    if "none" in values:
        values |= {"noindex", "nofollow"}
    return values


def _links(tree: lxml.html.HtmlElement, url: str) -> list[str]:
    base = next((b.get("href") for b in tree.iter("base") if b.get("href")), None)
    base_url = (normalize(base, url) or url) if base else url
    seen: dict[str, None] = {}
    for anchor in tree.iter("a", "area"):
        href = anchor.get("href")
        link = normalize(href, base_url) if href else None
        if link:
            seen.setdefault(link, None)
    return list(seen)


def _content_region(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The element holding the page's content, with what is not content dropped (the tree is changed)."""
    mains = tree.xpath("//main | //*[@role='main']")
    articles = tree.xpath("//article")
    bodies = tree.xpath("//body")
    region = mains[0] if mains else articles[0] if len(articles) == 1 else bodies[0] if bodies else tree
    inside_content = region.tag in ("main", "article") or region.get("role") == "main"
    for element in list(region.iterdescendants()):
        if _is_boilerplate(element, inside_content) and element.getparent() is not None:
            element.drop_tree()
    return region


def _is_boilerplate(element: etree._Element, inside_content: bool) -> bool:
    if not isinstance(element.tag, str):
        return True  # comments and processing instructions
    if element.tag in _NOT_CONTENT or (element.get("role") or "").lower() in _NOT_CONTENT_ROLES:
        return True
    if element.tag in ("header", "footer") and not inside_content:
        return True  # the site's own header and footer (an article's header holds its title)
    names = f"{element.get('class') or ''} {element.get('id') or ''}"
    return bool(names.strip()) and bool(_NOT_CONTENT_NAMES.search(names))


def _first_heading(region: lxml.html.HtmlElement) -> str | None:
    for heading in region.iter("h1"):
        text = " ".join(heading.text_content().split())
        if text:
            return text
    return None


def to_markdown(region: lxml.html.HtmlElement) -> str:
    """The region as Markdown: headings, paragraphs, list items, tables and code blocks."""
    writer = _Writer()
    writer.element(region)
    writer.flush()
    return "\n\n".join(writer.out) + "\n" if writer.out else ""


class _Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.inline: list[str] = []
        self.prefix = ""

    def flush(self) -> None:
        text = " ".join("".join(self.inline).split())
        self.inline.clear()
        if text:
            self.out.append(self.prefix + text)
            self.prefix = ""

    def element(self, element: etree._Element) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in _HEADINGS or tag in ("pre", "table"):
            self.flush()
            block = _heading(element) if tag in _HEADINGS else _code(element) if tag == "pre" else _table(element)
            if block:
                self.out.append(block)
        elif tag in _BLOCKS:
            self.flush()
            if tag == "li":
                self.prefix = "- "
            self.children(element)
            self.flush()
        else:
            self.children(element)

    def children(self, element: etree._Element) -> None:
        self.inline.append(element.text or "")
        for child in element:
            self.element(child)
            self.inline.append(child.tail or "")


def _heading(element: etree._Element) -> str:
    text = " ".join(element.text_content().split())
    return f"{'#' * int(element.tag[1])} {text}" if text else ""


def _code(element: etree._Element) -> str:
    code = element.text_content().strip("\n")
    return f"```\n{code}\n```" if code.strip() else ""


def _table(element: etree._Element) -> str:
    rows = []
    for row in element.iter("tr"):
        cells = [" ".join(c.text_content().split()).replace("|", r"\|") for c in row if c.tag in ("th", "td")]
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return ""
    width = rows[0].count(" | ") + 1
    return "\n".join([rows[0], "|" + "---|" * width, *rows[1:]])
