"""A document's own edition: the version and date it declares in its metadata.

Office files (DOCX/PPTX/XLSX) carry core properties (`docProps/core.xml`), PDFs an Info dictionary and
often an XMP packet, HTML pages `<meta>` tags and Markdown files front matter. Everything here reads
bytes already in memory with the standard library, except `pdf_metadata`, which uses pdfium and runs in
MinerU's worker process with the parse (a malformed PDF cannot take down indexing).
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

_ISO_LIKE = re.compile(r"^\s*(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})(?!\d)")
_COMPACT = re.compile(r"^\s*(?:D:)?(\d{4})(\d{2})(\d{2})")  # PDF dates: D:YYYYMMDDHHmmSS…
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")

_CORE_PROPERTIES_TYPE = "/metadata/core-properties"
_NS = {
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
}
# Core properties left as they are in the blank templates python-docx and python-pptx start from: those
# dates and revision numbers are the template's, not the document's.
_TEMPLATE_STAMPS = {"2013-12-23T23:15:00Z", "2013-01-27T09:14:16Z", "2013-01-27T09:15:58Z"}  # python-docx, python-pptx
_MAX_CORE_XML = 1 << 20

# Markdown front matter keys, most specific first.
FRONT_MATTER_DATE_KEYS = ("date", "updated", "last_modified", "last-modified", "lastmod", "effective", "modified")
FRONT_MATTER_VERSION_KEYS = ("version", "revision")
# HTML <meta name|property|http-equiv=…>: when it was last changed before when it was first published.
_HTML_DATE_KEYS = (
    "last-modified", "dcterms.modified", "dc.date.modified", "article:modified_time", "og:updated_time",
    "modified", "revised", "date", "dcterms.date", "dc.date", "dcterms.issued", "article:published_time",
)
_HTML_VERSION_KEYS = ("version", "document-version", "doc-version", "revision")
_MAX_HTML_HEAD = 256 * 1024


@dataclass(frozen=True)
class DeclaredMetadata:
    """What a document says about itself; None where it says nothing (usable)."""

    title: str | None = None
    version: str | None = None
    date: str | None = None  # ISO date, YYYY-MM-DD


def normalize_date(value: str | None) -> str | None:
    """`2026-03-01T10:00:00Z`, `2026/3/1`, `2026年3月1日`, `D:20260301…`, `Sun, 01 Mar 2026 …` → `2026-03-01`."""
    if not value or not value.strip():
        return None
    text = value.strip()
    for pattern in (_ISO_LIKE, _COMPACT):
        match = pattern.match(text)
        if match:
            try:
                return date(*(int(g) for g in match.groups())).isoformat()
            except ValueError:
                return None
    try:
        return parsedate_to_datetime(text).date().isoformat()
    except (TypeError, ValueError, IndexError):
        pass
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return None


def front_matter_metadata(meta: dict[str, str]) -> DeclaredMetadata:
    """Markdown front matter (`title`, `version`, `date`, `updated`, `effective`…).

    A date the parser cannot read is kept as written when it names a year (`March 2026`): the author
    declared it, and it still tells the reader which edition this is.
    """
    version = next((meta[k].strip() for k in FRONT_MATTER_VERSION_KEYS if meta.get(k, "").strip()), None)
    when = None
    for key in FRONT_MATTER_DATE_KEYS:
        raw = meta.get(key, "").strip()
        if raw:
            when = normalize_date(raw) or (raw[:20] if _YEAR.search(raw) else None)
            if when:
                break
    return DeclaredMetadata(meta.get("title") or None, version, when)


def office_metadata(data: bytes) -> DeclaredMetadata:
    """Core properties of an Office Open XML package: title, `cp:version` (or `cp:revision`), modified date."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            name = _core_properties_name(package)
            info = package.getinfo(name)
            if info.file_size > _MAX_CORE_XML:
                return DeclaredMetadata()
            root = ElementTree.fromstring(package.read(info))
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError, OSError, ValueError, RuntimeError):
        return DeclaredMetadata()

    def text(tag: str) -> str | None:
        element = root.find(tag, _NS)
        value = (element.text or "").strip() if element is not None else ""
        return value or None

    # A template's stamps (python-docx's and python-pptx's 2013 dates, and the revision "1" beside them) say
    # nothing about the document: absent, so the date falls back as for any file; a version set on it stays.
    modified, created = (None if v in _TEMPLATE_STAMPS else v for v in (text("dcterms:modified"), text("dcterms:created")))
    revision = text("cp:revision")
    if revision == "1" and text("dcterms:modified") in _TEMPLATE_STAMPS:
        revision = None
    version = text("cp:version") or revision
    return DeclaredMetadata(text("dc:title"), version, normalize_date(modified) or normalize_date(created))


def _core_properties_name(package: zipfile.ZipFile) -> str:
    try:
        rels = ElementTree.fromstring(package.read("_rels/.rels"))
    except (KeyError, ElementTree.ParseError):
        return "docProps/core.xml"
    for rel in rels:
        if rel.get("Type", "").endswith(_CORE_PROPERTIES_TYPE) and rel.get("Target"):
            return rel.get("Target", "").lstrip("/")
    return "docProps/core.xml"


class _HeadReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.title: list[str] = []
        self._in_title = False
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = {k.lower(): (v or "") for k, v in attrs}
            key = (values.get("name") or values.get("property") or values.get("http-equiv") or "").strip().lower()
            content = values.get("content", "").strip()
            if key and content:
                self.meta.setdefault(key, content)
        elif tag == "title":
            self._in_title = True
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "head":
            self.done = True

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)


def html_metadata(data: bytes) -> DeclaredMetadata:
    """`<meta name="version">`, `<meta name="last-modified">`, `dcterms.modified`, `article:modified_time`…"""
    head = data[:_MAX_HTML_HEAD]
    body = re.search(rb"<body[\s>]", head, re.IGNORECASE)
    if body:
        head = head[: body.start()]
    charset = re.search(rb"charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", head)
    encoding = charset.group(1).decode("ascii") if charset else "utf-8"
    try:
        text = head.decode(encoding, errors="replace")
    except LookupError:
        text = head.decode("utf-8", errors="replace")
    reader = _HeadReader()
    try:
        reader.feed(text)
    except Exception:  # noqa: BLE001 - html.parser is lenient; anything left is no metadata
        return DeclaredMetadata()
    meta = reader.meta
    version = next((meta[k] for k in _HTML_VERSION_KEYS if meta.get(k)), None)
    when = next((d for d in (normalize_date(meta.get(k)) for k in _HTML_DATE_KEYS) if d), None)
    title = re.sub(r"\s+", " ", "".join(reader.title)).strip() or meta.get("dc.title") or meta.get("og:title")
    return DeclaredMetadata(title or None, version, when)


_XMP_PACKET = re.compile(rb"<x:xmpmeta\b.*?</x:xmpmeta>", re.DOTALL)


def _xmp_value(packet: str, name: str) -> str | None:
    """`name="…"` (attribute form) or `<name>…</name>` (element form) in an XMP packet."""
    escaped = re.escape(name)
    match = re.search(rf"\b{escaped}\s*=\s*\"([^\"]*)\"", packet) or re.search(
        rf"<{escaped}>\s*([^<]*?)\s*</{escaped}>", packet
    )
    return match.group(1).strip() if match and match.group(1).strip() else None


def xmp_metadata(data: bytes) -> dict[str, str]:
    """Dates and version from an uncompressed XMP packet (the last one: incremental saves append)."""
    packets = _XMP_PACKET.findall(data)
    if not packets:
        return {}
    packet = packets[-1].decode("utf-8", errors="replace")
    found = {
        "modified": _xmp_value(packet, "xmp:ModifyDate"),
        "created": _xmp_value(packet, "xmp:CreateDate"),
        "version": _xmp_value(packet, "pdfx:Version") or _xmp_value(packet, "xmpMM:VersionID"),
    }
    return {k: v for k, v in found.items() if v}


def pdf_metadata(path: Path) -> dict[str, str]:
    """A PDF's declared title, version and dates (Info dictionary, then XMP); empty when it has none.

    Called in MinerU's worker process, after the file parsed: it opens the PDF with pdfium.
    """
    import pypdfium2

    info: dict[str, str] = {}
    document = pypdfium2.PdfDocument(str(path))
    try:
        for key in ("Title", "Version", "ModDate", "CreationDate"):
            value = document.get_metadata_value(key).strip()
            if value:
                info[key] = value
    finally:
        document.close()
    with open(path, "rb") as handle:
        xmp = xmp_metadata(handle.read())
    meta = {
        "title": info.get("Title"),
        "version": info.get("Version") or xmp.get("version"),
        "date": next(
            (d for d in map(normalize_date, (xmp.get("modified"), info.get("ModDate"), xmp.get("created"),
                                              info.get("CreationDate"))) if d),
            None,
        ),
    }
    return {k: v for k, v in meta.items() if v}


def metadata_from_dict(meta: dict[str, str]) -> DeclaredMetadata:
    """What MinerU's worker read from a PDF (`pdf_metadata`), as DeclaredMetadata."""
    return DeclaredMetadata(usable_title(meta.get("title")), meta.get("version") or None, normalize_date(meta.get("date")))


# Titles that PDF writers fill in when the author gave none: they name the tool or the file, not the document.
_PLACEHOLDER_TITLES = {"untitled", "anonymous", "unknown", "title", "document", "untitled document"}
_TOOL_PREFIX = re.compile(r"^(?:microsoft\s+\w+\s*-|untitled\s*-)", re.IGNORECASE)
_FILE_NAME = re.compile(r"(?:^|[\\/])[^\\/]*\.(?:pdf|docx?|pptx?|xlsx?|odt|rtf|txt|md|tex|dvi|indd|html?)$", re.IGNORECASE)


def usable_title(value: str | None) -> str | None:
    """A declared title, or None when it is empty or a writer's placeholder ("untitled", "report.docx")."""
    title = re.sub(r"\s+", " ", value or "").strip()
    if title.strip("()[] ").lower() in _PLACEHOLDER_TITLES or _TOOL_PREFIX.match(title) or _FILE_NAME.search(title):
        return None
    return title or None
