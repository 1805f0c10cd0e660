"""The web source's URLs: which ones belong to the source (its prefix), one spelling for each, and the
URLs a sitemap lists (sitemaps.org protocol 0.9: `<urlset>` and `<sitemapindex>`, gzipped or not)."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from lxml import etree

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"  # what stays as it is in a path; anything else is percent-encoded
_QUERY_SAFE = _PATH_SAFE + "?"
_SKIPPED_SCHEMES = re.compile(r"^\s*(mailto|javascript|tel|data|ftp|file|about|sms):", re.IGNORECASE)
# Files a link can point at that are never documents: not worth a request.
_NOT_DOCUMENTS = re.compile(
    r"\.(css|js|mjs|json|xml|rss|atom|ico|png|jpe?g|gif|svg|webp|bmp|tiff?|avif|mp[34]|m4a|wav|ogg|webm|mov|"
    r"avi|woff2?|ttf|otf|eot|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|msi|dmg|iso|apk|bin)$",
    re.IGNORECASE,
)
# Percent-encoded letters, digits and -._~ mean the same decoded (RFC 3986 6.2.2.2): "%2e%2e" is "..".
_UNRESERVED = re.compile(r"%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])")
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the protocol's own limit for one (uncompressed) sitemap


def normalize(href: str, base: str) -> str | None:
    """`href` (as written on the page at `base`) as an absolute http(s) URL in one spelling: no fragment,
    no user info, no default port, dot segments resolved, unsafe characters percent-encoded. None when
    it is not an http(s) link."""
    if _SKIPPED_SCHEMES.match(href):
        return None
    try:
        parts = urlsplit(urljoin(base, href.strip()))
        port = parts.port
    except ValueError:  # a malformed host or port
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    path = quote(_without_dot_segments(_UNRESERVED.sub(_decoded, parts.path) or "/"), safe=_PATH_SAFE)
    query = quote(_UNRESERVED.sub(_decoded, parts.query), safe=_QUERY_SAFE)
    return urlunsplit((scheme, host, path, query, ""))


def _decoded(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


def _without_dot_segments(path: str) -> str:
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        elif segment == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    joined = "/".join(out)
    return joined if joined.startswith("/") else "/" + joined


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class CrawlBounds:
    """The URLs of one web source: same scheme and host as its `url`, and a path under its folder (the
    folder itself included: `https://x/policies` covers `/policies`, `/policies/` and `/policies/…`)."""

    start: str  # the source's url, normalized: where the crawl starts
    origin: str  # scheme://host[:port]
    folder: str  # the path prefix, ending with "/"

    @classmethod
    def of(cls, url: str) -> CrawlBounds:
        start = normalize(url, url)
        if start is None:
            raise ValueError(f"not an http(s) URL: {url!r}")
        path = urlsplit(start).path
        last = path.rsplit("/", 1)[-1]
        folder = path[: len(path) - len(last)] if "." in last else path.rstrip("/") + "/"
        return cls(start, origin(start), folder)

    def contains(self, url: str) -> bool:
        if origin(url) != self.origin:
            return False
        path = urlsplit(url).path
        return path.startswith(self.folder) or path == self.folder.rstrip("/")

    def relative(self, url: str) -> str:
        """The URL's path (and query) below the folder: "" for the folder itself."""
        parts = urlsplit(url)
        rel = parts.path[len(self.folder):] if parts.path.startswith(self.folder) else ""
        return f"{rel}?{parts.query}" if parts.query else rel

    def wanted(self, url: str | None) -> bool:
        """In bounds and possibly a document (not a stylesheet, an image, an archive…)."""
        return url is not None and self.contains(url) and not _NOT_DOCUMENTS.search(urlsplit(url).path)


@dataclass(frozen=True)
class Sitemap:
    """What one sitemap file lists: pages (`<urlset>`) or other sitemaps (`<sitemapindex>`)."""

    is_index: bool
    locations: list[str]


def parse_sitemap(data: bytes) -> Sitemap | None:
    """The `<loc>` entries of a sitemap or sitemap index; None when `data` is not one (an HTML error page
    served with 200, say)."""
    if data[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(data, MAX_SITEMAP_BYTES)
        except zlib.error:
            return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None or not isinstance(root.tag, str):
        return None
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        return None
    entry = "sitemap" if kind == "sitemapindex" else "url"
    locations = [
        loc.text.strip()
        for element in root if isinstance(element.tag, str) and etree.QName(element).localname == entry
        for loc in element if isinstance(loc.tag, str) and etree.QName(loc).localname == "loc" and loc.text
    ]
    return Sitemap(kind == "sitemapindex", locations)
