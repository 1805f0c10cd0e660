"""Footnote links that open the exact place a passage quotes, computed from what the index knows.

A source says how its documents' URLs take an anchor (`LinkStyle`, rag.index.metadata); `passage_url` applies
it to one passage (the indexer stores the result as `Chunk.url`), `line_range` finds the lines a passage
comes from in a raw text file. Pure functions: nothing here reads a file or the network.

What each style produces, and what it rests on:

- "plain": the URL; a PDF (the path ends in .pdf) opens at the passage's page, `#page=N` (PDF open
  parameters, honoured by the viewers of Chrome, Firefox, Edge and Acrobat).
- "fragment": a text fragment (URL Fragment Text Directives, wicg.github.io/scroll-to-text-fragment):
  `#:~:text=start` or, for a longer passage, `#:~:text=start,end`, the first and last words of the passage.
  The spec matches each term inside one block of the page and on word boundaries, so terms are whole words
  of the passage's first and last lines; text without spaces (Chinese, Japanese) is cut at punctuation,
  which is a word boundary in every script. `-`, `&` and `,` delimit the directive, so they are
  percent-encoded with everything else but letters, digits and `_.~`. A table or a code block, which a
  page shows in cells or preformatted, is not quoted: a passage running into one is quoted up to it, and
  a passage that starts with one (or continues a table) gets no fragment: the page itself opens.
- "heading": a Confluence page at the passage's heading. Confluence writes each heading's `id` itself:
  Data Center (and Cloud pages of the legacy editor) `<PageTitle>-<Heading>` with the spaces removed
  and other characters kept (`ReleaseNotes-What'snew?`; a repeated heading gets `.1`, `.2`), Cloud pages
  of the current editor the heading with each space made `-` (`What's-new?`), case kept in both. Found in
  HtmlElementIdCreator's documented pattern and in the anchors sphinx-contrib/confluencebuilder and
  hunyadi/md2conf had to match (their issues #1121, #846 and #139). Limits: a repeated heading links its
  first occurrence; a heading holding a macro or an inline extension gets an id Confluence prefixes
  (`[inlineExtension]…`), which this does not guess, so that link opens the top of the page; a Cloud site
  on its own domain is told by its page URLs (`/wiki/spaces/…`), else pass `cloud=`.
- "lines": a file on a git web view, `#L<first>-L<last>` (GitHub, Gitea, Forgejo), `#L<first>-<last>`
  (GitLab, told by `/-/blob/` in the path or a host named gitlab). A Markdown (or other rendered markup)
  file is asked for its source view, where lines exist: `?plain=1` (GitHub, GitLab), `?display=source`
  (Gitea, `/src/branch|commit|tag/` paths).
- "template": a folder source's `url` with `{path}` (the file's path, URL-quoted, `/` kept) and `{page}`
  (the passage's page, blank when it has none) filled in; without `{page}`, a PDF still opens at its page.

An anchor replaces a fragment the URL already has; a URL that is not http(s) gives no link at all (None).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from urllib.parse import quote, urlsplit, urlunsplit

from rag.safety.links import SOURCE_VIEW, safe_url
from rag.parsing.markdown import HTML_COMMENT
from rag.index.metadata import LinkStyle
from rag.types import Chunk

FRAGMENT_WORDS = 4  # words of the passage's first and of its last line in a text fragment
CLAUSE_CHARS = 30  # the longest clause of unspaced text a fragment term takes
_RENDERED = {".md", ".markdown", ".mdown", ".mkd", ".rst", ".adoc", ".asciidoc", ".org", ".textile", ".rdoc",
             ".mediawiki", ".wiki", ".creole", ".pod"}
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_CLAUSE_END = re.compile(r"[，。；：！？、,;:!?]")
_TABLE_OR_CODE = re.compile(r"^\s*(?:\||```|~~~)|<t[rdh]\b|<table\b", re.IGNORECASE)  # a line that starts one
# Markdown that a page does not show as text: list and quote markers, emphasis, link targets, tags.
_LINE_MARKER = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d{1,9}[.)]\s+)?(?:\[[ xX]\]\s+)?")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EMPHASIS = re.compile(r"\*\*|__|~~|[*`]|\\(?=[^\w\s])")


def passage_url(url: str | None, link: LinkStyle, chunk: Chunk, *, path: str = "",
                lines: tuple[int, int] | None = None, ancestors: int = 0, cloud: bool | None = None) -> str | None:
    """The link a footnote of `chunk` opens, or None when there is none to give.

    `path`: the document's path, for a template; `lines`: (first, last), 1-based, in the raw file;
    `ancestors`: how many of the chunk's headings the source put before the document's own (a Confluence
    page's ancestors, `len(DocumentMeta.headings)`); `cloud`: a Confluence Cloud site (None: told by URL).
    """
    if not url:
        return None
    paged = link == "template" and "{page}" in url  # the template puts the page where its viewer reads it
    if link == "template":
        url = fill_template(url, path, chunk.page)
    url = safe_url(url)
    if url is None:
        return None
    if chunk.page and _is_pdf(url) and not paged:
        return with_fragment(url, f"page={chunk.page}")
    if link == "fragment":
        fragment = text_fragment(chunk)
    elif link == "heading":
        fragment = confluence_anchor(url, chunk, ancestors=ancestors, cloud=cloud)
    elif link == "lines" and lines is not None:
        return line_link(url, *lines)
    else:
        fragment = None
    return with_fragment(url, fragment) if fragment else url


def with_fragment(url: str, fragment: str) -> str:
    """`url` with its fragment (if any) replaced by `fragment`."""
    return urlunsplit(urlsplit(url)._replace(fragment=fragment))


def fill_template(template: str, path: str, page: int | None) -> str:
    return template.replace("{path}", quote(path, safe="/")).replace("{page}", str(page) if page else "")


def text_fragment(chunk: Chunk) -> str | None:
    """`:~:text=…` for the passage's prose: up to a table or code block it runs into, or None when it
    starts with one (or continues a table) or has no words to quote."""
    if chunk.lead:
        return None
    lines: list[str] = []
    for line in chunk.text.splitlines():
        if _TABLE_OR_CODE.search(line):
            break
        if text := plain_text(line):
            lines.append(text)
    if not lines:
        return None
    first, last = lines[0], lines[-1]
    if len(lines) == 1 and not _UNSPACED.search(first) and len(first.split()) <= 2 * FRAGMENT_WORDS:
        return f":~:text={_term(first)}"
    start, end = _head(first), _tail(last)
    if not start:
        return None
    return f":~:text={_term(start)},{_term(end)}" if end and end != start else f":~:text={_term(start)}"


def confluence_anchor(url: str, chunk: Chunk, *, ancestors: int = 0, cloud: bool | None = None) -> str | None:
    """The id Confluence gives the passage's own last heading (percent-encoded), or None without one."""
    own = chunk.heading_path[ancestors:]
    if not own or not own[-1].strip():
        return None
    heading = own[-1]
    if cloud is None:
        cloud = _is_cloud(url)
    anchor = "-".join(heading.split()) if cloud else "".join(chunk.title.split()) + "-" + "".join(heading.split())
    return quote(anchor, safe="")


def line_link(url: str, first: int, last: int) -> str:
    """`url` (a file on a git web view) opened at lines `first`..`last`; `url` itself for a bad range."""
    if not 1 <= first <= last:
        return url
    parts = urlsplit(url)
    gitlab = "/-/blob/" in parts.path or "gitlab" in (parts.hostname or "")
    gitea = re.search(r"/src/(?:branch|commit|tag)/", parts.path) is not None
    query = parts.query
    if any(parts.path.lower().endswith(suffix) for suffix in _RENDERED):
        key = "display" if gitea and not gitlab else "plain"
        view = f"{key}={SOURCE_VIEW[key]}"
        if view not in query.split("&"):
            query = f"{query}&{view}" if query else view
    if first == last:
        fragment = f"L{first}"
    else:
        fragment = f"L{first}-{last}" if gitlab else f"L{first}-L{last}"
    return urlunsplit(parts._replace(query=query, fragment=fragment))


def line_range(raw: str, chunk_text: str) -> tuple[int, int] | None:
    """The first and last line (1-based) of `raw` that the passage `chunk_text` spans, or None.

    Both are compared as a page shows them, words in order: Markdown markup, comments, line breaks and
    case do not matter, and the passage may begin or end inside a raw line (or a word, when a chunk was cut).
    A passage the file holds twice is found where it first stands; `line_ranges` places a document's
    passages in order, so a repeated one is found again further on.
    """
    found = _locate(raw, chunk_text, 0)
    return found[0] if found else None


def line_ranges(raw: str, chunk_texts: list[str]) -> list[tuple[int, int] | None]:
    """`line_range` of each of a document's passages, given in reading order: each is looked for from where
    the one before it starts (passages overlap), or from the start of the file after one not found."""
    ranges: list[tuple[int, int] | None] = []
    after = 0
    for text in chunk_texts:
        found = _locate(raw, text, after) or _locate(raw, text, 0)
        ranges.append(found[0] if found else None)
        if found:
            after = found[1] + 1
    return ranges


def _locate(raw: str, chunk_text: str, after: int) -> tuple[tuple[int, int], int] | None:
    """The lines of the passage's first occurrence at or after `after` in the file's words, and where
    that occurrence starts in them."""
    wanted = " ".join(" ".join(map(_comparable, chunk_text.splitlines())).split())
    if not wanted:
        return None
    text, ends = _raw_words(raw)
    at = text.find(wanted, after)
    if at < 0:
        return None
    return (bisect_right(ends, at) + 1, bisect_left(ends, at + len(wanted)) + 1), at


@lru_cache(maxsize=8)  # the passages of one file are looked up one after another
def _raw_words(raw: str) -> tuple[str, tuple[int, ...]]:
    """The raw file's words as one comparable line, and where each raw line's words end in it."""
    raw = HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), raw)
    pieces: list[str] = []
    ends: list[int] = []
    size = 0
    for line in raw.replace("\r\n", "\n").split("\n"):  # lines as a git web view numbers them
        words = _comparable(line)
        if words:
            size += len(words) + (1 if pieces else 0)
            pieces.append(words)
        ends.append(size)
    return " ".join(pieces), tuple(ends)


def plain_text(line: str) -> str:
    """A line of passage text as a page shows it: without Markdown markers, link targets and tags."""
    line = _LINE_MARKER.sub("", line, count=1)
    line = _LINK.sub(r"\1", _IMAGE.sub("", line))
    line = _EMPHASIS.sub("", _TAG.sub("", line))
    return " ".join(html.unescape(line).split())


def _comparable(line: str) -> str:
    return plain_text(line).casefold()


def _head(line: str) -> str | None:
    if _UNSPACED.search(line):
        clause = _CLAUSE_END.split(line, maxsplit=1)[0].strip()
        return clause if 0 < len(clause) <= CLAUSE_CHARS else None
    return " ".join(line.split()[:FRAGMENT_WORDS])


def _tail(line: str) -> str | None:
    if _UNSPACED.search(line):
        body = line.rstrip("，。；：！？、,;:!?")
        cut = max((m.end() for m in _CLAUSE_END.finditer(body)), default=0)
        clause = line[cut:].strip()
        return clause if 0 < len(clause) <= CLAUSE_CHARS else None
    return " ".join(line.split()[-FRAGMENT_WORDS:])


def _term(text: str) -> str:
    return quote(text, safe="").replace("-", "%2D")


def _is_pdf(url: str) -> bool:
    return urlsplit(url).path.lower().endswith(".pdf")


def _is_cloud(url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return host.endswith(".atlassian.net") or "/wiki/spaces/" in parts.path
