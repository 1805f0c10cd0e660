"""Reading the version and date documents declare about themselves."""

from __future__ import annotations

import pytest

from rag.parsing.metadata import front_matter_metadata, html_metadata, normalize_date, xmp_metadata
from rag.types import Chunk, Citation


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("2026-03-01", "2026-03-01"),
        ("2026-03-01T23:15:00Z", "2026-03-01"),
        ("2026/3/1", "2026-03-01"),
        ("2026年3月1日", "2026-03-01"),
        ("D:20260301101500+01'00'", "2026-03-01"),
        ("Sun, 01 Mar 2026 10:00:00 GMT", "2026-03-01"),
        ("2026-02-30", None),
        ("soon", None),
        ("", None),
    ],
)
def test_dates_are_normalised_or_refused(raw, iso):
    assert normalize_date(raw) == iso


def test_front_matter_keeps_a_declared_date_it_cannot_parse_when_it_names_a_year():
    assert front_matter_metadata({"version": "2", "date": "March 2026"}).date == "March 2026"
    assert front_matter_metadata({"date": "TBD", "updated": "2026-04-05"}).date == "2026-04-05"
    assert front_matter_metadata({"revision": "B"}).version == "B"


def test_html_meta_prefers_the_modification_date_and_reads_only_the_head():
    page = (b'<html><head><meta charset="utf-8"><meta name="dcterms.issued" content="2024-01-01">'
            b'<meta name="DCTERMS.modified" content="2025-06-07"><title> Guide </title></head>'
            b'<body><meta name="version" content="9"><p>text</p></body></html>')
    meta = html_metadata(page)
    assert (meta.title, meta.version, meta.date) == ("Guide", None, "2025-06-07")
    assert html_metadata(b'<head><meta http-equiv="last-modified" content="Tue, 15 Nov 1994 12:45:26 GMT">').date == \
        "1994-11-15"


def test_xmp_packet_dates_and_version():
    packet = (b"%PDF-1.7 ...<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF><rdf:Description "
              b'xmp:ModifyDate="2026-01-02T03:04:05Z" xmp:CreateDate="2025-01-01T00:00:00Z">'
              b"<pdfx:Version>1.4b</pdfx:Version></rdf:Description></rdf:RDF></x:xmpmeta>...")
    assert xmp_metadata(packet) == {"modified": "2026-01-02T03:04:05Z", "created": "2025-01-01T00:00:00Z",
                                    "version": "1.4b"}
    assert xmp_metadata(b"%PDF-1.4 no packet") == {}


def chunk(version: str, when: str) -> Chunk:
    return Chunk(id="c", file="travel.md", title="Travel Policy", heading_path=("Meals",), text="45 EUR", start=0,
                 end=6, page=3, page_end=3, doc_version=version, doc_date=when)


@pytest.mark.parametrize(
    ("version", "when", "location"),
    [
        ("2026-11-02", "2026-11-02", "Travel Policy › Meals, p. 3 · v2026-11-02"),  # a date as version: once
        ("3", "2026-03-01", "Travel Policy › Meals, p. 3 · v3 · 2026-03-01"),
        ("v3", "2026-03-01", "Travel Policy › Meals, p. 3 · v3 · 2026-03-01"),
        ("Rev. B", "2026-03-01", "Travel Policy › Meals, p. 3 · Rev. B · 2026-03-01"),
        ("", "2026-03-01", "Travel Policy › Meals, p. 3 · 2026-03-01"),
        ("", "", "Travel Policy › Meals, p. 3"),
    ],
)
def test_footnote_shows_the_declared_version_and_the_documents_date(version, when, location):
    assert Citation(1, chunk(version, when)).location == location
