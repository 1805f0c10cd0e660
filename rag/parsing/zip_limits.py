"""Zip containers (DOCX, PPTX, XLSX, any zip) are judged by what their directory declares before anything
inflates them: a few MB on disk must not become GBs in the parser.

Python's zipfile (python-docx, MinerU's Office readers, our metadata reader) stops a part at its declared
size, so a part that lies about its size fails as corrupt instead; the parser's memory cap
(MinerUOptions.memory_limit_mb) covers whatever else a file makes the parser allocate.
"""

from __future__ import annotations

import io
import struct
import zipfile

MAX_PART_BYTES = 128 * 2**20  # one part, inflated (MinerU's own Office limit for embedded objects)
MAX_TOTAL_BYTES = 512 * 2**20  # all parts, inflated
MAX_RATIO = 100  # inflated : compressed, for parts larger than RATIO_FROM_BYTES (Office XML: 5–40)
RATIO_FROM_BYTES = 2**20
MAX_PARTS = 10_000  # read from the end record before the directory is loaded

ZIP_SIGNATURE = b"PK\x03\x04"
_END_RECORD = b"PK\x05\x06"


def is_zip(data: bytes) -> bool:
    """Starts as a zip, or ends as one (a zip may follow other data: zipfile still opens it)."""
    return data.startswith(ZIP_SIGNATURE) or _end_record_at(data) >= 0


def zip_bomb_reason(data: bytes) -> str | None:
    """Why this zip must not be inflated, or None. An unreadable directory is left to the parser to name."""
    parts = _declared_part_count(data)
    if parts is not None and parts > MAX_PARTS:
        return f"possible zip bomb: {parts} parts (limit {MAX_PARTS}); not parsed"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            infos = package.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        return None
    if len(infos) > MAX_PARTS:
        return f"possible zip bomb: {len(infos)} parts (limit {MAX_PARTS}); not parsed"
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > MAX_PART_BYTES:
            return (f"possible zip bomb: {info.filename} would inflate to {_mb(info.file_size)} "
                    f"(limit {_mb(MAX_PART_BYTES)} per part); not parsed")
        if info.file_size > RATIO_FROM_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size / max(info.compress_size, 1)
            return (f"possible zip bomb: {info.filename} is compressed {ratio:.0f}:1 "
                    f"(limit {MAX_RATIO}:1); not parsed")
    if total > MAX_TOTAL_BYTES:
        return f"possible zip bomb: its parts would inflate to {_mb(total)} in all (limit {_mb(MAX_TOTAL_BYTES)}); not parsed"
    return None


def _declared_part_count(data: bytes) -> int | None:
    """The entry count of the end-of-central-directory record (0xFFFF: a zip64 count, read by zipfile)."""
    at = _end_record_at(data)
    if at < 0 or at + 22 > len(data):
        return None
    (count,) = struct.unpack_from("<H", data, at + 10)
    return None if count == 0xFFFF else count


def _end_record_at(data: bytes) -> int:
    return data.rfind(_END_RECORD, max(0, len(data) - 22 - 0xFFFF))  # the record, then a comment of ≤ 64 KB


def _mb(size: int) -> str:
    return f"{size / 2**20:.0f} MB"
