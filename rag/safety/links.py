"""Links in answers: only a cited source's own URL may be a link.

Document text (quoted, or echoed by the model) and model output can carry links a chat surface renders:
Markdown links and images `[text](url)`, reference definitions `[label]: url`, autolinks `<https://…>`,
Slack's `<url|text>`, HTML anchors and bare URLs (`https://…`, `www.…`) that Slack and Teams linkify. A link
whose URL is not one of the sources' own (`Chunk.url`, http or https) loses its link and keeps what a reader
can check: `[click](https://evil.example/x)` becomes ``click (`evil.example`)``, a bare URL becomes code
(`` `https://evil.example/x` ``), which no surface turns into a link.

`LinkFilter` does this while the answer streams, holding back text that may still turn into a link;
`keep_cited` then drops the links to sources the finished answer does not cite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, unquote, urlsplit

from rag.safety.markers import MODEL_MARKER

# Link text: no blank line, brackets nested one level (`[see [S1]](…)`).
_TEXT = r"(?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]\n]*\])*"
_DESTINATION = r"<[^<>\n]*>|(?:[^\s()<>]|\([^\s()<>]*\))+"
_TITLE = r"\"[^\"]*\"|'[^']*'|\([^()]*\)"
_INLINE = rf"(?P<image>!?)\[(?P<text>{_TEXT})\]\(\s*(?P<dest>{_DESTINATION})?(?:\s+(?:{_TITLE}))?\s*\)"
_ABSOLUTE = r"(?:[a-z][a-z0-9+.-]{1,31}:|//|www\.)"
_DEFINITION = rf"(?m:^[ ]{{0,3}}\[(?P<label>[^\[\]\n]+)\]:[ \t]*(?P<target><?{_ABSOLUTE}\S*))"
_ANGLE = r"<(?P<angle>(?:[a-z][a-z0-9+.-]{1,31}:|www\.)[^\s<>|]*)(?:\|(?P<label2>[^<>\n]*))?>"
_HTML = r"</?(?:a|img|image|iframe|link)\b[^>]*>"
# Bare URLs as surfaces linkify them; CJK punctuation and brackets end one.
_URL_CHARS = r"[^\s<>\[\]`\"'\u3000-\u303f\uff00-\uffef]+"
_BARE = rf"(?P<bare>(?:https?|ftp)://{_URL_CHARS}|(?<![\w.@])www\.{_URL_CHARS})"
_LINK = re.compile("|".join((_INLINE, _DEFINITION, _ANGLE, _HTML, _BARE)), re.IGNORECASE)
_HREF = re.compile(r"""(?:href|src)\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_DECIDING = re.compile(r"[\])>\n]")  # what can close an open `[…`, `[…](…`, `[…]: …` or `<…`
_TRAILING = ".,;:!?'\")]}…"
_HOST = re.compile(r"[a-z0-9.-]+")
# Query parameters asking a git web view for a file's source rather than its rendering (GitHub and GitLab
# `plain=1`, Gitea `display=source`), which footnotes add to open a file at its lines: the same document.
SOURCE_VIEW = {"plain": "1", "display": "source"}
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"  # what `safe_url` leaves as it is: RFC 3986 delimiters and escapes
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def source_urls(urls: Iterable[str | None]) -> frozenset[str]:
    """The comparable forms of the http(s) URLs among `urls`."""
    return frozenset(key for key in map(_key, urls) if key)


def safe_url(url: str | None) -> str | None:
    """`url` with what no surface may read as its end (spaces, `|`, `<`, `>`, quotes) percent-encoded;
    None unless it is an http(s) URL with a host: the only links a footnote or a citation may carry."""
    url = (url or "").strip()
    if not url or _CONTROL.search(url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return quote(url, safe=_URL_SAFE)


def unlink(text: str, allowed: frozenset[str], *, only: frozenset[str] | None = None) -> str:
    """`text` with every link whose URL is not in `allowed` (source_urls) made plain; with `only`, just the
    links whose URL is in `only`."""
    def replace(match: re.Match[str]) -> str:
        whole, url, label, rest = _parts(match)
        key = _key(url)
        inner = unlink(label, allowed, only=only) if label else label  # a link inside a link would win
        if (key and key in allowed) or (only is not None and key not in only) or _in_code(match, url):
            return whole.replace(f"[{label}]", f"[{inner}]", 1) if match.group("text") is not None else whole
        return _plain(url, inner, match) + rest

    return _LINK.sub(replace, text)


def keep_cited(text: str, cited: Iterable[str | None], given: Iterable[str | None]) -> str:
    """A finished answer whose links (already filtered to the `given` sources' URLs) now lead only to the
    `cited` sources' URLs."""
    keep = source_urls(cited)
    return unlink(text, keep, only=source_urls(given) - keep)


class LinkFilter:
    """Feed streamed text, get it unlinked; text that may still turn into a link waits for the rest."""

    def __init__(self, allowed: frozenset[str]) -> None:
        self.allowed = allowed
        self._pending = ""
        self._waiting = False  # the pending text begins with an open `[…` or `<…`
        self._context = ""  # "" at the start of a line, else a stand-in for the text already sent

    def feed(self, delta: str) -> str:
        if self._waiting and not _DECIDING.search(delta) and not self._pending.endswith("]"):
            self._pending += delta  # nothing in `delta` can close what is open: no need to look again
            return ""
        text = self._context + self._pending + delta
        cut = max(_undecided(text), len(self._context))
        self._waiting = cut < len(text) and text[cut] in "[<" and _open(text, cut)
        self._pending = text[cut:]
        return self._send(text[:cut])

    def flush(self) -> str:
        text, self._pending, self._waiting = self._context + self._pending, "", False
        return self._send(text)

    def _send(self, text: str) -> str:
        """`text` (after the context) unlinked as it reads after what was sent before."""
        sent = unlink(text, self.allowed)[len(self._context):]
        if sent:
            self._context = "" if sent.endswith("\n") else "\x00"  # no link begins with or spans it
        return sent


def _parts(match: re.Match[str]) -> tuple[str, str, str, str]:
    """(the whole match, its URL, the text a reader sees, what follows the link that is not part of it)."""
    whole, groups = match.group(0), match.groupdict()
    if groups["bare"] is not None:
        url = _trim(groups["bare"])
        return whole, url, "", whole[len(url):]
    if groups["angle"] is not None:
        return whole, groups["angle"], groups["label2"] or "", ""
    if groups["label"] is not None:
        return whole, groups["target"].strip("<>"), groups["label"], ""
    if groups["text"] is not None:
        return whole, (groups["dest"] or "").strip("<>"), groups["text"], ""
    href = _HREF.search(whole)
    return whole, href.group(1) if href else "", "", ""


def _plain(url: str, label: str, match: re.Match[str]) -> str:
    groups = match.groupdict()
    code = f"`{url.replace('`', '')}`"
    if groups["bare"] is not None:
        return code
    if groups["label"] is not None:
        return f"{label}: {code}"
    if groups["angle"] is None and groups["text"] is None:  # an HTML tag: the text between the tags stays
        return ""
    if groups["angle"] is not None and not label:
        return code
    host = _host(url)
    label = label.strip()
    if MODEL_MARKER.fullmatch(f"[{label}]"):
        label = f"[{label}]"  # a citation marker stays one
    return f"{label} (`{host}`)" if label and host else label or (f"`{host}`" if host else "")


def _in_code(match: re.Match[str], url: str) -> bool:
    """A bare URL that is already a code span of its own (`` `https://…` ``), which no surface links."""
    text, start = match.string, match.start()
    end = start + len(url)
    return (match.group("bare") is not None and text[start - 1 : start] == "`" and text[end : end + 1] == "`"
            and text[start - 2 : start - 1] != "\\")


def _trim(url: str) -> str:
    """A bare URL without the punctuation that ends the sentence around it (balanced parentheses stay)."""
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def _key(url: str | None) -> str | None:
    """A URL in the form two spellings of one address share; None unless http(s) with a host. The fragment
    (a heading, a text fragment, lines, a page: a place in the same document) and a source-view parameter
    do not count; a path's percent-escapes compare as the characters they stand for."""
    if not url:
        return None
    url = url.strip().strip("<>")
    if url.lower().startswith("www."):
        url = "http://" + url
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    where = f"{host}:{port}" if port else host
    query = "&".join(p for p in parts.query.split("&") if p.partition("=")[::2] not in SOURCE_VIEW.items())
    return f"{where}{unquote(parts.path).rstrip('/')}?{query}"


def _host(url: str) -> str:
    """The site a link pointed at, in a form that cannot pass for another (IDNA); "" when there is none."""
    if not re.match(_ABSOLUTE, url, re.IGNORECASE):
        return ""  # a relative link leads nowhere a reader could check
    try:
        host = urlsplit("//" + url if url.lower().startswith("www.") else url).hostname or ""
        host = host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return ""
    return host if _HOST.fullmatch(host) else ""


def _undecided(text: str) -> int:
    """Where `text` may still turn into a link once more arrives: from there on it waits."""
    word = len(text) - len(re.search(r"\S*\Z", text).group(0))  # the last word may be the start of a URL
    pos = max(text.rfind("\n\n"), 0)  # nothing before a blank line can still become a link
    while (opening := re.compile(r"[\[<]").search(text, pos)) is not None:
        start = opening.start()
        link = _complete(text, start)
        if link is not None:
            word, pos = max(word, link.end()), link.end()  # the last word cannot split a finished link
        elif _open(text, start):
            return min(start, word)
        else:
            pos = start + 1
    return word


def _complete(text: str, start: int) -> re.Match[str] | None:
    """The finished link that begins at `start`, if there is one."""
    link = _LINK.match(text, start)
    if link is None or link.group("bare") is not None:
        return None
    if link.group("label") is not None and link.end() == len(text):
        return None  # a definition whose URL may still go on
    return link


def _open(text: str, start: int) -> bool:
    """Whether the `[` or `<` at `start`, not a finished link, may still begin one."""
    rest = text[start:]
    if rest[0] == "<":
        return re.match(r"<[/a-z!]", rest, re.IGNORECASE) is not None and ">" not in rest
    closing = re.match(rf"\[{_TEXT}\]", rest)
    if closing is None:
        return "\n\n" not in rest
    after = rest[closing.end():]
    if after == "":
        return True
    if after[0] == "(":
        return "\n\n" not in after and ")" not in after
    return after[0] == ":" and "\n" not in after and _line_start(text, start)


def _line_start(text: str, start: int) -> bool:
    return re.fullmatch(r"[ ]{0,3}", text[text.rfind("\n", 0, start) + 1 : start]) is not None
