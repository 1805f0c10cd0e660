"""Zip bombs and the parser's memory cap (issue 17, item 14). The bombs are real zip files written in the
test: their huge parts are deflated once per repeated unit, so a GB-sized part costs a few MB on disk and
nothing is ever inflated here. The index is built with the real MinerU worker, embedder, FAISS and bm25s."""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib
from pathlib import Path

import docx
import pytest

from rag.knowledge_base import KnowledgeBase
from rag.parsing.mineru_worker import MinerUOptions, MinerUWorker, ParserFailure
from rag.parsing.zip_limits import zip_bomb_reason
from tests.conftest import build

PARAGRAPH = b"<w:p><w:r><w:t>all work and no play makes jack a dull boy</w:t></w:r></w:p>"
REPORT_TEXT = "The quarterly report shows that travel costs fell by eleven percent."


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def deflate_repeated(prefix: bytes, unit: bytes, copies: int, suffix: bytes) -> tuple[bytes, int, int]:
    """Raw deflate of prefix + unit * copies + suffix, compressing the unit once: after a full flush the
    compressor starts afresh, so the unit's compressed bytes are the same every time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    body = packer.compress(unit) + packer.flush(zlib.Z_FULL_FLUSH)
    tail = packer.compress(suffix) + packer.flush()
    crc = zlib.crc32(prefix)
    for _ in range(copies):
        crc = zlib.crc32(unit, crc)
    return head + body * copies + tail, zlib.crc32(suffix, crc), len(prefix) + len(unit) * copies + len(suffix)


def write_zip(path: Path, parts: list[tuple[str, bytes, int, int]]) -> None:
    """A zip of already deflated parts (name, deflated bytes, crc32, inflated size), as zipfile writes it."""
    out, directory = io.BytesIO(), []
    for name, packed, crc, size in parts:
        encoded, offset = name.encode(), out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(packed), size, len(encoded), 0))
        out.write(encoded + packed)
        directory.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc, len(packed), size,
                                     len(encoded), 0, 0, 0, 0, 0, offset) + encoded)
    start, listing = out.tell(), b"".join(directory)
    out.write(listing + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(parts), len(parts), len(listing), start, 0))
    path.write_bytes(out.getvalue())


def small_docx(path: Path, text: str) -> Path:
    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph(text)
    document.save(str(path))
    return path


def parts_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as package:
        return {info.filename: package.read(info) for info in package.infolist()}


def bomb_docx(path: Path, template: Path, copies: int) -> Path:
    """`template` with word/document.xml grown by `copies` × ~1 MB of paragraphs (ratio ≈ 290:1)."""
    parts = []
    for name, data in parts_of(template).items():
        if name == "word/document.xml":
            head, rest = data.split(b"<w:body>", 1)
            parts.append((name, *deflate_repeated(head + b"<w:body>", PARAGRAPH * 13_000, copies, rest)))
        else:
            parts.append((name, raw_deflate(data), zlib.crc32(data), len(data)))
    write_zip(path, parts)
    return path


def long_text_docx(path: Path, template: Path, megabytes: int) -> Path:
    """A plain DOCX whose one paragraph holds `megabytes` MB of text: compressed about 1:25, within every zip
    limit, yet far more than a parser allowed a few hundred MB can hold."""
    rng = random.Random(14)
    letters = "abcdefghij klmnop"
    block = "".join(rng.choice(letters) for _ in range(20_000)).encode()
    runs = b"".join(b"<w:r><w:t>" + block * 50 + "".join(rng.choice(letters) for _ in range(24_000)).encode()
                    + b"</w:t></w:r>" for _ in range(megabytes))  # fresh letters in each MB keep the ratio low
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as package:
        for name, data in parts_of(template).items():
            if name == "word/document.xml":
                head, rest = data.split(b"<w:body>", 1)
                data = head + b"<w:body><w:p>" + runs + b"</w:p>" + rest
            package.writestr(name, data)
    return path


def test_a_zip_bomb_docx_is_skipped_with_its_reason_and_the_other_files_are_indexed(settings, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    template = small_docx(tmp_path / "template.docx", "Template text.")
    bomb = bomb_docx(docs / "bomb.docx", template, copies=1000)
    assert bomb.stat().st_size < 5 * 2**20, "a few MB on disk"
    small_docx(docs / "report.docx", REPORT_TEXT)
    (docs / "notes.md").write_text("# Notes\n\nThe canteen opens at noon.\n", encoding="utf-8")
    # Today's code hands the bomb to MinerU: a short timeout keeps that failure quick.
    kb = KnowledgeBase(settings.model_copy(update={"parse_timeout": 60.0}), tmp_path / "kb")
    report = build(kb, [docs])
    assert report.skipped["bomb.docx"] == (
        "possible zip bomb: word/document.xml would inflate to 930 MB (limit 128 MB per part); not parsed")
    assert sorted(report.added) == ["notes.md", "report.docx"]
    top = kb.retriever.search("quarterly travel costs", top_k=1)[0].chunk
    assert top.file == "report.docx" and "eleven percent" in top.text
    kb.retriever.close()


def test_declared_totals_ratios_and_part_counts_are_limits_too(tmp_path):
    zeros, crc, size = deflate_repeated(b"", bytes(2**20), 10, b"")  # 10 MB of zeros: deflate at its best, 1010:1
    write_zip(tmp_path / "ratio.xlsx", [("xl/worksheets/sheet1.xml", zeros, crc, size)])
    assert zip_bomb_reason((tmp_path / "ratio.xlsx").read_bytes()) == (
        "possible zip bomb: xl/worksheets/sheet1.xml is compressed 1010:1 (limit 100:1); not parsed")

    # 600 parts of 1 MB of zeros: each under the per-part and ratio limits, 600 MB in all.
    zeros_mb = deflate_repeated(b"", bytes(2**20), 1, b"")
    write_zip(tmp_path / "total.pptx", [(f"ppt/media/image{i}.bin", *zeros_mb) for i in range(600)])
    assert (tmp_path / "total.pptx").stat().st_size < 2**20
    assert zip_bomb_reason((tmp_path / "total.pptx").read_bytes()) == (
        "possible zip bomb: its parts would inflate to 600 MB in all (limit 512 MB); not parsed")
    with zipfile.ZipFile(tmp_path / "many.docx", "w") as package:
        for i in range(10_001):
            package.writestr(f"p{i}", b"")
    assert zip_bomb_reason((tmp_path / "many.docx").read_bytes()) == (
        "possible zip bomb: 10001 parts (limit 10000); not parsed")
    ordinary = small_docx(tmp_path / "ordinary.docx", REPORT_TEXT)
    assert zip_bomb_reason(ordinary.read_bytes()) is None


def test_the_parser_child_runs_under_its_memory_limit(tmp_path):
    small = small_docx(tmp_path / "small.docx", REPORT_TEXT)
    with MinerUWorker(MinerUOptions(home=str(tmp_path / "mineru"), timeout=120, memory_limit_mb=500)) as worker:
        assert worker.parse(small).items
        limits = Path(f"/proc/{worker._process.pid}/limits").read_text()
    line = next(row for row in limits.splitlines() if row.startswith("Max address space"))
    assert line.split()[3:5] == [str(500 * 2**20)] * 2, line


def test_a_file_that_needs_more_than_the_memory_limit_is_skipped_and_the_build_finishes(settings, tmp_path):
    limit_mb = 500
    docs = tmp_path / "docs"
    docs.mkdir()
    template = small_docx(tmp_path / "template.docx", "Template text.")
    huge = long_text_docx(docs / "a-huge.docx", template, megabytes=60)
    assert zip_bomb_reason(huge.read_bytes()) is None, "no zip limit stops it: only the memory cap can"
    small_docx(docs / "b-report.docx", REPORT_TEXT)  # parsed after the child ran out: a fresh child
    (docs / "notes.md").write_text("# Notes\n\nThe canteen opens at noon.\n", encoding="utf-8")
    kb = KnowledgeBase(settings.model_copy(update={"parse_memory_mb": limit_mb, "parse_timeout": 120.0}), tmp_path / "kb")
    report = build(kb, [docs])
    assert report.skipped["a-huge.docx"] == (
        f"needs more memory than the parser may use ({limit_mb} MB, AIE_PARSE_MEMORY_MB); not parsed")
    assert sorted(report.added) == ["b-report.docx", "notes.md"]
    assert kb.retriever.search("quarterly travel costs", top_k=1)[0].chunk.file == "b-report.docx"
    kb.retriever.close()


def test_a_child_killed_mid_parse_is_reported_with_its_signal_and_the_limit(tmp_path):
    """What the report says when the kernel (or a failed native allocation) ends the child, not Python."""
    import os
    import signal
    import threading

    template = small_docx(tmp_path / "template.docx", "Template text.")
    slow = long_text_docx(tmp_path / "slow.docx", template, megabytes=20)
    with MinerUWorker(MinerUOptions(home=str(tmp_path / "mineru"), timeout=120, memory_limit_mb=4096)) as worker:
        assert worker.parse(template).items
        # The 20 MB file takes the child about 1.5 s to parse (on a fast machine): killed at 1.5 s, it had
        # once already answered; at 0.3 s it is surely still parsing, however fast the machine.
        killer = threading.Timer(0.3, os.kill, (worker._process.pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(ParserFailure) as failure:
            worker.parse(slow)
        killer.join()
        assert worker.parse(template).items, "a fresh child parses the next file"
    assert failure.value.reason == (
        "parser crashed on this file (SIGKILL; it may need more than the parser's 4096 MB (AIE_PARSE_MEMORY_MB))")
