"""Run MinerU in a child process: a crash, hang or runaway memory in one file cannot take down indexing.

The child receives file paths over a pipe and answers with MinerU's content list (images stripped)
or a classified error. A timed-out or dead child is killed and replaced for the next file. The child's
address space is capped (`memory_limit_mb`), so a file that needs more fails alone in the child, and the
kernel's OOM killer never has to choose among the processes of the machine.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import traceback
import zipfile
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from rag.safety.redaction import redact


class ParserFailure(Exception):
    """MinerU could not parse a file; `reason` is fit for the index report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class MinerUOptions:
    home: str  # MINERU_HOME: keeps MinerU's config and caches inside our data dir
    server_url: str | None = None
    server_api_key: str | None = field(default=None, repr=False)
    server_tier: str | None = None
    timeout: float = 300.0
    memory_limit_mb: int = 4096  # the child's address space (RLIMIT_AS); 0: no limit


@dataclass(frozen=True)
class MinerUOutput:
    items: list[dict[str, Any]]
    paged: bool
    engine: str
    metadata: dict[str, str] = field(default_factory=dict)  # a PDF's declared title, version, date


_log = logging.getLogger(__name__)


MIDDLE_JSON_NAME = "middle_json.json"
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif"}
_PAGED_SUFFIXES = {".pdf", ".pptx", ".ppt"}


def _configure_env(options: MinerUOptions) -> None:
    os.environ["MINERU_HOME"] = options.home
    os.environ.setdefault("MINERU_MODEL_SOURCE", "local")  # never reach for a model hub
    os.environ.setdefault("MINERU_LOG_LEVEL", "error")
    os.environ.setdefault("DOCVORTEX_PDF_RENDER_THREADS", "1")


def _needs_ocr(path: Path) -> bool:
    if path.suffix.lower() in _IMAGE_SUFFIXES:
        return True
    if path.suffix.lower() != ".pdf":
        return False
    from docvortex.document.pdf import PDFDocument

    with PDFDocument(path.read_bytes()) as document:
        return document.classify() == "ocr"


def _strip_images(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k not in ("img_path", "bbox")} for item in items]


def parse_with_mineru(path: Path, options: MinerUOptions) -> MinerUOutput:
    """Parse one file in this process (the child calls this)."""
    from mineru.render import render_content_list

    _configure_env(options)
    if path.name == MIDDLE_JSON_NAME:  # a folder MinerU 4.x already produced (`save()` / zip layout)
        from mineru.parser.base import ParseResult

        result = ParseResult.from_json(path.read_text(encoding="utf-8"))
        paged = f".{result.middle_json.metadata.file_suffix}" in _PAGED_SUFFIXES
        return MinerUOutput(_strip_images(render_content_list(result.middle_json)), paged, "mineru-output")
    if _needs_ocr(path):
        if not options.server_url:
            raise ParserFailure("needs OCR (no text layer); configure AIE_MINERU_SERVER_URL to parse scans")
        from mineru import MinerUApiParser

        parser = MinerUApiParser(
            api_url=options.server_url, api_key=options.server_api_key, tier=options.server_tier, ocr_mode="auto"
        )
        result = parser.parse(str(path))
        engine = f"mineru-server:{options.server_tier or 'default'}"
    else:
        from mineru import parse

        result = parse(str(path), tier="flash", ocr_mode="txt", image_analysis=False)
        engine = "mineru-flash"
    items = _strip_images(render_content_list(result.middle_json))
    if path.suffix.lower() == ".xlsx":
        items = _named_sheets(path, items)
    return MinerUOutput(items, path.suffix.lower() in _PAGED_SUFFIXES, engine, _declared_metadata(path))


def _named_sheets(path: Path, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A workbook's tables under their sheets' names, numbered as the sheets number their rows; a workbook
    whose sheets cannot be read that way keeps MinerU's items (the parse succeeded)."""
    from rag.parsing.sheets import visible_sheets, with_sheets

    try:
        return with_sheets(items, visible_sheets(path))
    except (KeyError, ValueError, OSError, zipfile.BadZipFile, ElementTree.ParseError) as exc:
        _log.warning("could not read the sheets of %s: %s", path.name, exc)
        return items


def _declared_metadata(path: Path) -> dict[str, str]:
    """A PDF's own title, version and date; unreadable metadata never fails a parse that succeeded."""
    if path.suffix.lower() != ".pdf":
        return {}
    from rag.parsing.metadata import pdf_metadata

    try:
        return pdf_metadata(path)
    except Exception as exc:  # noqa: BLE001
        _log.warning("could not read the metadata of %s: %s", path.name, exc)
        return {}


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space; MinerU's own render workers inherit the cap."""
    if megabytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = megabytes * 2**20 if hard == resource.RLIM_INFINITY else min(megabytes * 2**20, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def out_of_memory_reason(megabytes: int) -> str:
    return f"needs more memory than the parser may use ({megabytes} MB, AIE_PARSE_MEMORY_MB); not parsed"


def classify_error(exc: BaseException, path: Path, memory_limit_mb: int = 0) -> str:
    if isinstance(exc, MemoryError):
        return out_of_memory_reason(memory_limit_mb) if memory_limit_mb > 0 else "ran out of memory"
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = message.lower()
    if isinstance(exc, ParserFailure):
        return exc.reason
    if type(exc).__module__.startswith("mineru.parser.api"):
        return f"MinerU server could not parse it: {message}"
    if isinstance(exc, (ConnectionError, OSError)) and "connect" in lowered:
        return f"MinerU server unreachable: {message}"
    if "password" in lowered or "encrypt" in lowered:
        return "encrypted (password-protected)"
    if "unsupported file type: empty" in lowered:
        return "empty file"
    if "unsupported file type:" in lowered:
        actual = message.split(":")[-1].strip()
        return f"not a valid {path.suffix.lower()} file (content looks like {actual})"
    if type(exc).__name__ in ("PdfiumError",) or "data format error" in lowered:
        return f"corrupt PDF ({message})"
    if type(exc).__name__ in ("BadZipFile", "PackageNotFoundError", "XMLSyntaxError"):
        return f"corrupt {path.suffix.lower()} file ({message})"
    return f"parser error: {type(exc).__name__}: {message}"


def _serve(conn: Connection, options: MinerUOptions) -> None:
    os.setpgrp()  # MinerU's own render workers join our group, so a kill takes them too
    limit_memory(options.memory_limit_mb)
    _configure_env(options)
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        path = Path(request)
        try:
            conn.send(("ok", parse_with_mineru(path, options)))
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a report line
            # After a MemoryError the heap may be left fragmented: the parent replaces this child.
            kind = "out of memory" if isinstance(exc, MemoryError) else "error"
            # A server's reply may quote the key it was sent: the reason is shown in chat, the trace logged
            secrets = [options.server_api_key]
            conn.send((kind, redact(classify_error(exc, path, options.memory_limit_mb), secrets),
                       redact(traceback.format_exc(limit=3), secrets)))


class MinerUWorker:
    """A lazily started child process that parses one file at a time with a deadline."""

    def __init__(self, options: MinerUOptions) -> None:
        self.options = options
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def parse(self, path: Path) -> MinerUOutput:
        conn = self._ensure_started()
        conn.send(str(path))
        if not conn.poll(self.options.timeout):
            self._kill()
            raise ParserFailure(f"parser timed out after {self.options.timeout:.0f} s")
        try:
            reply = conn.recv()
        except (EOFError, OSError):
            reason = self._crash_reason()
            self._kill()
            raise ParserFailure(reason) from None
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "out of memory":
            self._kill()
        raise ParserFailure(reply[1])

    def _crash_reason(self) -> str:
        """A native allocation that fails under the memory cap aborts the child rather than raising."""
        self._process.join(2)
        code = self._process.exitcode
        if code is None or code >= 0:
            return "parser crashed on this file"
        name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
        limit = self.options.memory_limit_mb
        hint = f"; it may need more than the parser's {limit} MB (AIE_PARSE_MEMORY_MB)" if limit > 0 else ""
        return f"parser crashed on this file ({name}{hint})"

    def _ensure_started(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._kill()
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self.options), daemon=False)
        self._process.start()
        child.close()
        self._conn = parent
        return parent

    def _kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self._process.kill()
            self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            try:
                self._conn.send(None)
                self._process.join(10)
            except (OSError, BrokenPipeError):
                pass
        self._kill()

    def __enter__(self) -> MinerUWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
