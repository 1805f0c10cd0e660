"""What a source says of one of its documents (its URL, version, readers, place in a page tree): the metadata
the index keeps beside the document's own, compares to tell a change, and reads its footnotes' links from.
Sources (rag.sources) write it; the index reads it and knows nothing of where a document came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# How a passage's footnote points into the document's URL (rag.index.anchors):
#   "plain"     the URL as it is
#   "fragment"  a web page: a text fragment (#:~:text=…) of the cited passage
#   "heading"   a Confluence page: the anchor of the cited heading
#   "lines"     a file on a git web view: #L<first>-L<last> of the cited passage
#   "template"  the URL has {path} and {page} to fill (a folder source's `url`)
LinkStyle = Literal["plain", "fragment", "heading", "lines", "template"]


@dataclass(frozen=True)
class DocumentMeta:
    """What a source says of one of its documents; None leaves the file's own value (front matter, PDF
    metadata, file time). Everything here is part of what the index compares: a change re-indexes it."""

    url: str | None = None
    link: LinkStyle = "plain"
    title: str | None = None
    version: str | None = None  # a page version, a commit
    date: str | None = None  # ISO date (YYYY-MM-DD or a full timestamp)
    access: tuple[str, ...] | None = None  # ids allowed to read it (rag.access); None: as the file says
    headings: tuple[str, ...] = ()  # put before the document's own headings (a page's ancestors)
    collection: str | None = None  # its own collection (a wiki space's); None: the source's

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {k: v for k, v in self.__dict__.items() if v not in (None, (), "plain")}
        for key in ("access", "headings"):
            if key in data:
                data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentMeta:
        values = dict(data)
        for key in ("access", "headings"):
            if key in values and values[key] is not None:
                values[key] = tuple(values[key])
        return cls(**values)
