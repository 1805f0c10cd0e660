"""The refusal's suggested documents: their titles are document text, so they carry no link but their own."""

from __future__ import annotations

from rag.answering.refusal import refusal_text
from rag.types import Chunk


def chunk(file: str, title: str, heading: str, url: str | None = None) -> Chunk:
    return Chunk(id=file, file=file, title=title, heading_path=(heading,), text="…", start=0, end=1, page=None,
                 page_end=None, doc_version="", doc_date="2026-11-01", url=url)


def test_a_title_cannot_put_a_foreign_link_into_a_refusal():
    related = [chunk("travel.md", "Travel [sign in](https://evil.example/login)", "Meals <https://evil.example>"),
               chunk("wiki.md", "[Expense wiki](https://wiki.example.com/expenses)", "Limits",
                     url="https://wiki.example.com/expenses")]
    text = refusal_text("en", related)
    assert "You might look at:" in text and "(travel.md)" in text and "(wiki.md)" in text
    assert "(https://evil.example" not in text and "<https://evil.example>" not in text
    assert "sign in" in text and "evil.example" in text  # the words stay, readable and checkable
    assert "[Expense wiki](https://wiki.example.com/expenses)" in text  # the suggested document's own URL
