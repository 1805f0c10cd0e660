"""Which links a chat surface may show, the same on every surface: only a cited document's own http(s) URL
is ever a link; any other link in a document's text or a title is made plain (see `rag.safety.links`)."""

from __future__ import annotations

from rag.safety.links import safe_url, source_urls, unlink
from rag.types import Chunk


def document_link(url: str | None) -> str | None:
    """A document's URL as a footnote or citation may link it (escaped for any markup), or None: no link."""
    return safe_url(url)


def passage_text(chunk: Chunk, text: str) -> str:
    """`text` from or about `chunk` with every link made plain except one to the chunk's own document."""
    return unlink(text, source_urls([chunk.url]))


def without_links(text: str) -> str:
    """`text` with every link in it made plain (titles, commands' echoes)."""
    return unlink(text, frozenset())
