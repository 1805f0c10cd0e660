"""Turn a file into a ParsedDocument, or say precisely why it was skipped."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rag.access import parse_ids
from rag.parsing.markdown import FrontMatterError, parse_markdown, split_front_matter
from rag.parsing.metadata import (
    DeclaredMetadata,
    front_matter_metadata,
    html_metadata,
    metadata_from_dict,
    office_metadata,
)
from rag.parsing.mineru_blocks import content_list_to_blocks, document_title, infer_heading_levels
from rag.parsing.mineru_worker import MIDDLE_JSON_NAME, MinerUOptions, MinerUWorker, ParserFailure
from rag.parsing.zip_limits import ZIP_SIGNATURE, is_zip, zip_bomb_reason
from rag.types import Block, ParsedDocument

TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text"}
MINERU_SUFFIXES = {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm"}
OCR_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
CONTENT_LIST_SUFFIX = "_content_list.json"

_OOXML_SUFFIXES = {".docx", ".pptx", ".xlsx"}
_HTML_SUFFIXES = {".html", ".htm"}
_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})[-_.](\d{2})[-_.](\d{2})(?!\d)")

# Where a document's date came from, most trustworthy first. The last two can change while the content
# stays the same (a new commit, a copy), so the index re-reads them for unchanged files.
DATE_FROM_DOCUMENT = "document"
DATE_FROM_FILE_NAME = "file name"
DATE_FROM_GIT = "git"
DATE_FROM_FILE_TIME = "file time"
VOLATILE_DATE_SOURCES = {DATE_FROM_GIT, DATE_FROM_FILE_TIME}
# Bump when what is read from a document's metadata changes: unchanged files are parsed again.
METADATA_VERSION = 3  # 2: collections and access lists; 3: a PDF's declared title wins


@dataclass(frozen=True)
class FileDate:
    """The date a file gets when the document declares none: its last commit, else its modification time."""

    date: str
    source: str  # DATE_FROM_GIT or DATE_FROM_FILE_TIME


def file_time(path: Path) -> FileDate:
    stamp = path.stat().st_mtime
    return FileDate(datetime.fromtimestamp(stamp, tz=timezone.utc).date().isoformat(), DATE_FROM_FILE_TIME)


class SkipFile(Exception):
    """The file is not indexed; `reason` goes into the index report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_candidate(path: Path) -> bool:
    name = path.name.lower()
    suffix = path.suffix.lower()
    return (
        suffix in TEXT_SUFFIXES
        or suffix in MINERU_SUFFIXES
        or suffix in OCR_SUFFIXES
        or name.endswith(CONTENT_LIST_SUFFIX)
        or name == MIDDLE_JSON_NAME
    )


def shadowed_by_mineru_output(path: Path) -> str | None:
    """A Markdown file MinerU wrote beside its content list is the same document: index it once."""
    if path.suffix.lower() != ".md":
        return None
    siblings = [path.with_name(path.stem + CONTENT_LIST_SUFFIX)]
    if path.name == "markdown.md":
        siblings.append(path.with_name(MIDDLE_JSON_NAME))
    for sibling in siblings:
        try:
            if sibling.exists():
                return f"same document as {sibling.name}, indexed from there"
        except OSError:  # a name too long for the file system: no such sibling can exist
            continue
    return None


class DocumentLoader:
    def __init__(self, mineru: MinerUOptions, max_file_bytes: int = 50 * 1024 * 1024,
                 max_html_bytes: int = 5 * 1024 * 1024) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_html_bytes = max_html_bytes  # HTML costs far more to parse than its size suggests
        self._mineru = mineru
        self._worker: MinerUWorker | None = None

    def load(self, path: Path, rel: str, data: bytes, fallback_date: FileDate | None = None) -> ParsedDocument:
        """Parse `data` (the bytes of `path`); raise SkipFile with a reason on bad input.

        The document's version and date are its own (front matter, core properties, PDF or HTML
        metadata), then a date in the file name, then `fallback_date` (the builder passes the last
        commit date in a git checkout), then the file's modification time.
        """
        if not data:
            raise SkipFile("empty file")
        if len(data) > self.max_file_bytes:
            raise SkipFile(f"too large ({len(data) / 2**20:.1f} MB > {self.max_file_bytes / 2**20:.0f} MB limit)")
        name, suffix = path.name.lower(), path.suffix.lower()
        if suffix in _HTML_SUFFIXES and len(data) > self.max_html_bytes:
            raise SkipFile(f"too large for HTML ({len(data) / 2**20:.1f} MB > {self.max_html_bytes / 2**20:g} MB "
                           "limit, AIE_MAX_HTML_MB)")
        meta: dict[str, str] = {}
        declared = DeclaredMetadata()
        if name.endswith(CONTENT_LIST_SUFFIX):
            blocks, parser = self._content_list(data), "mineru-content-list"
        elif suffix in TEXT_SUFFIXES:
            try:
                meta, body = split_front_matter(_decode_text(data, suffix))
            except FrontMatterError as exc:
                raise SkipFile(str(exc)) from None
            blocks, parser = parse_markdown(body), "markdown"
            declared = front_matter_metadata(meta)
        else:
            _check_signature(data, suffix)
            _refuse_zip_bombs(data)
            blocks, parser, found = self._with_mineru(path)
            if suffix in _OOXML_SUFFIXES:
                declared = office_metadata(data)
            elif suffix in _HTML_SUFFIXES:
                declared = html_metadata(data)
            else:
                declared = metadata_from_dict(found)
        if not any(b.kind != "heading" and b.text.strip() for b in blocks):
            raise SkipFile("no text found" + (" (scanned? needs OCR)" if suffix == ".pdf" else ""))
        # A workbook's headings are its sheets' names (rag.parsing.sheets), not its title
        printed, title_heading = (document_title(blocks) if suffix != ".xlsx" else None), ""
        if suffix == ".pdf":  # a PDF's declared title wins: its headings are the parser's guesses from font sizes
            title = declared.title or printed or _title_from_name(path)
            title_heading = printed if printed and printed != title else ""  # a cover line, not a section
        else:
            title = meta.get("title") or printed or declared.title or _title_from_name(path)
        modified, date_source = _document_date(declared, path, fallback_date)
        return ParsedDocument(
            file=rel,
            title=title,
            blocks=blocks,
            version=declared.version or "",
            modified=modified,
            url=meta.get("url") or meta.get("source"),
            parser=parser,
            date_source=date_source,
            access=_access_list(meta),
            title_heading=title_heading,
        )

    def _with_mineru(self, path: Path) -> tuple[list[Block], str, dict[str, str]]:
        if self._worker is None:
            self._worker = MinerUWorker(self._mineru)
        try:
            output = self._worker.parse(path)
        except ParserFailure as exc:
            raise SkipFile(exc.reason) from None
        blocks = content_list_to_blocks(output.items, paged=output.paged)
        if path.suffix.lower() == ".pdf":
            blocks = infer_heading_levels(blocks)
        return blocks, output.engine, output.metadata

    def _content_list(self, data: bytes) -> list[Block]:
        try:
            items = json.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SkipFile(f"corrupt MinerU content list ({exc})") from None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise SkipFile("not a MinerU content list (expected a JSON array of blocks)")
        paged = any(i.get("page_idx") for i in items)
        return infer_heading_levels(content_list_to_blocks(items, paged=paged))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def _check_signature(data: bytes, suffix: str) -> None:
    """Catch files whose content does not match their extension before handing them to MinerU."""
    if suffix == ".pdf" and b"%PDF" not in data[:1024]:
        raise SkipFile("not a valid .pdf file (no PDF header)")
    if suffix in _OOXML_SUFFIXES and not data.startswith(ZIP_SIGNATURE):
        raise SkipFile(f"not a valid {suffix} file (not an Office Open XML package)")


def _refuse_zip_bombs(data: bytes) -> None:
    """Before the parser, and our own metadata reader in this process, inflate any of it."""
    reason = zip_bomb_reason(data) if is_zip(data) else None
    if reason:
        raise SkipFile(reason)


def _decode_text(data: bytes, suffix: str) -> str:
    if b"\x00" in data[:8192]:
        raise SkipFile(f"binary content in a {suffix} file")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise SkipFile("unknown text encoding (not UTF-8 or GB18030)")


def _title_from_name(path: Path) -> str:
    name = re.sub(r"[_-]+", " ", _DATE_IN_NAME.sub("", path.stem)).strip(" ()（）")
    return name or path.stem


def _document_date(declared: DeclaredMetadata, path: Path, fallback: FileDate | None) -> tuple[str, str]:
    """The document's date and where it came from (one of the DATE_FROM_* names)."""
    if declared.date:
        return declared.date, DATE_FROM_DOCUMENT
    version_date = _DATE_IN_NAME.fullmatch(declared.version or "")
    if version_date:  # `version: 2026-09-15` dates the document too
        return "-".join(version_date.groups()), DATE_FROM_DOCUMENT
    match = _DATE_IN_NAME.search(path.stem)
    if match:
        return "-".join(match.groups()), DATE_FROM_FILE_NAME
    fallback = fallback or file_time(path)
    return fallback.date, fallback.source


def _access_list(meta: dict[str, str]) -> tuple[str, ...]:
    """The front matter's `access:` ids; () when there is none."""
    if "access" not in meta:
        return ()
    try:
        return parse_ids(meta["access"])
    except ValueError as exc:
        raise SkipFile(str(exc)) from None
