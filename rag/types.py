"""Shared vocabulary of the knowledge base: parsed documents, chunks and search hits."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from rag.safety.links import unlink
from rag.judging.navigation import is_navigation

BlockKind = Literal["heading", "text", "table", "code"]
SECTION_SEPARATOR = " › "
PUBLIC = "public"  # the collection of files directly under the indexed root


# Hex digits of a commit that name a git source's document version (rag.sources.git): a fixed length, as git's
# own abbreviation grows with the repository and would change every version
SHORT_COMMIT = 12
_COMMIT = re.compile(rf"[0-9a-f]{{{SHORT_COMMIT}}}")


def collection_of(rel: str) -> str:
    """`hr/leave/policy.md` → `hr`; a file directly under the indexed root → `public`."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 and parts[0] else PUBLIC


@dataclass(frozen=True)
class Block:
    """One structural unit of a parsed document, in reading order."""

    kind: BlockKind
    text: str
    level: int = 0  # heading level (1 = top); 0 for non-headings
    page: int | None = None  # 1-based page for paged formats
    rows: tuple[int, ...] = ()  # a spreadsheet's table: each of its rows' number in the sheet, header first


@dataclass
class ParsedDocument:
    """A document as the parsers hand it to the chunker."""

    file: str  # path relative to the indexed root, with forward slashes
    title: str
    blocks: list[Block]
    version: str  # the version the document declares (front matter, core properties…); "" when none
    modified: str  # the document's date, ISO (YYYY-MM-DD) when it could be read
    url: str | None = None
    parser: str = ""
    date_source: str = ""  # where `modified` came from: "document", "file name", "git" or "file time"
    access: tuple[str, ...] = ()  # user and group ids allowed to read it (front matter or sidecar); () = all
    title_heading: str = ""  # the heading it opens with as its title, when `title` is another (metadata)
    collection: str = ""  # its source's collection; "": the first folder of `file` (collection_of)
    headings: tuple[str, ...] = ()  # where it sits above its own headings (a wiki page's ancestors)

    def render(self) -> tuple[str, list[int]]:
        """The parsed text that chunk offsets refer to, and each block's start offset."""
        parts: list[str] = []
        starts: list[int] = []
        pos = 0
        for block in self.blocks:
            text = ("#" * block.level + " " + block.text) if block.kind == "heading" else block.text
            if parts:
                pos += 2
            starts.append(pos)
            parts.append(text)
            pos += len(text)
        return "\n\n".join(parts), starts


@dataclass(frozen=True)
class Chunk:
    """A retrievable passage with everything needed to cite it."""

    id: str
    file: str
    title: str
    heading_path: tuple[str, ...]
    text: str
    start: int  # character offsets into ParsedDocument.render()[0]
    end: int
    page: int | None
    page_end: int | None
    doc_version: str  # declared by the document, "" when it declares none (never a content hash)
    doc_date: str  # the document's own date, else its last commit date, else its file time
    url: str | None = None
    lead: str = ""  # context shown before the text, e.g. the header of a table continued from an earlier chunk
    collection: str = PUBLIC  # the first folder under the indexed root; files at the root are "public"
    access: tuple[str, ...] = ()  # user and group ids allowed to read the document; empty: no access list
    row: int | None = None  # a spreadsheet's passage: the first and last rows it holds, as the sheet numbers them
    row_end: int | None = None

    @property
    def edition(self) -> str:
        """Which edition this passage is from: `v3 · 2026-03-01`, `v2026-09-15` (a date as version),
        `Rev. B · 2026-03-01`, or `2026-03-01` when the document declares no version."""
        version, when = self.doc_version.strip(), self.doc_date.strip()
        if not version:
            return when
        # A commit (a git source's version) is shown as it is, whichever character its hash starts with
        label = f"v{version}" if version[0].isdigit() and not _COMMIT.fullmatch(version) else version
        return label if not when or when in version else f"{label} · {when}"

    @property
    def section(self) -> str:
        return SECTION_SEPARATOR.join(self.heading_path)

    @property
    def navigation(self) -> bool:
        """A list of links to pages — a table of contents, a sidebar (rag.judging.navigation): ranked after content,
        never quoted."""
        return is_navigation(self.text)

    @property
    def context(self) -> str:
        """Title and heading path: what the passage is about, for embedding and BM25."""
        return SECTION_SEPARATOR.join((self.title, *self.heading_path))

    @property
    def indexed_text(self) -> str:
        lead = f"{self.lead}\n" if self.lead else ""
        return f"{self.context}\n{lead}{self.text}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["heading_path"] = list(self.heading_path)
        data["access"] = list(self.access)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        # A snapshot written before collections existed: the collection follows from the path.
        return cls(**{**data, "heading_path": tuple(data["heading_path"]), "access": tuple(data.get("access", ())),
                      "collection": data.get("collection") or collection_of(data["file"])})


@dataclass(frozen=True)
class Scope:
    """Which passages a question may be answered from: the collections of the place where it is asked and,
    for documents with an access list, who is reading. Filters are applied inside retrieval, so the top k
    are filled from allowed passages only."""

    collections: frozenset[str] | None = None  # None: every collection
    # The asker's id and the ids of their groups, in a direct message; empty in a channel (everyone there
    # reads the answer), so access-listed documents are never quoted there. None: access lists are not
    # checked (an operator's own search at the terminal).
    readers: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.readers is not None:  # ids compare case-insensitively (access lists are stored lower-case)
            object.__setattr__(self, "readers", frozenset(r.lower() for r in self.readers))

    def allows(self, chunk: Chunk) -> bool:
        return self.admits(chunk.collection, chunk.access)

    def admits(self, collection: str, access: tuple[str, ...] | list[str]) -> bool:
        """Whether a passage of `collection` with the access list `access` is allowed."""
        if self.collections is not None and collection not in self.collections:
            return False
        if access and self.readers is not None:
            return not self.readers.isdisjoint(access)
        return True

    @property
    def unrestricted(self) -> bool:
        return self.collections is None and self.readers is None

    @property
    def key(self) -> str:
        """Stable text naming this scope, for cache keys and feedback ("" when unrestricted)."""
        if self.unrestricted:
            return ""
        where = "*" if self.collections is None else ",".join(sorted(self.collections)) or "-"
        who = "*" if self.readers is None else ",".join(sorted(self.readers))
        return f"{where}|{who}"

    @property
    def collections_key(self) -> str:
        """The collections alone ("" for every collection): where feedback given here applies."""
        if self.collections is None:
            return ""
        return ",".join(sorted(self.collections)) or "-"  # no collection at all is not "every collection"

    @classmethod
    def parse(cls, collections: str | None) -> Scope:
        """`hr,public` as typed on a command line; empty or None: everything."""
        names = frozenset(c.strip() for c in (collections or "").split(",") if c.strip())
        return cls(collections=names or None)


EVERYTHING = Scope()


@dataclass(frozen=True)
class Hit:
    """A chunk returned by retrieval, with the fused score and each retriever's view of it."""

    chunk: Chunk
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # retriever name -> 1-based rank
    scores: dict[str, float] = field(default_factory=dict)  # retriever name -> raw score

    def to_dict(self) -> dict[str, Any]:
        return {"chunk": self.chunk.to_dict(), "score": self.score, "ranks": self.ranks, "scores": self.scores}


@dataclass(frozen=True)
class Citation:
    """A numbered source as the reader sees it: `[marker]` in the text points at `chunk`."""

    marker: int
    chunk: Chunk

    @property
    def location(self) -> str:
        """`Travel Policy › Meals, p. 3 · v2026-11-02` (or `… · v3 · 2026-03-01`, `… · 2026-03-01` when the
        document declares no version; a spreadsheet's `Holidays › Sheet1, rows 2–7`) — built from index
        metadata, never from the model."""
        where = SECTION_SEPARATOR.join(p for p in (self.chunk.title, self.chunk.section) if p)
        where = unlink(where, frozenset())  # a title or heading is document text: no link of its own
        c = self.chunk
        where += _span("p.", "pp.", c.page, c.page_end) + _span("row", "rows", c.row, c.row_end)
        return f"{where} · {c.edition}" if c.edition else where

    @property
    def footnote(self) -> str:
        return f"[{self.marker}] {self.location}"

    def to_dict(self) -> dict[str, Any]:
        return {"marker": self.marker, "footnote": self.footnote, "chunk": self.chunk.to_dict()}


def _span(one: str, several: str, first: int | None, last: int | None) -> str:
    """`, p. 3`, `, pp. 3–4` (or rows); "" without a first."""
    if not first:
        return ""
    return f", {several} {first}–{last}" if last and last != first else f", {one} {first}"


@dataclass
class Answer:
    """The finished answer: text with `[n]` markers, what each marker cites, and how it was made."""

    question: str
    text: str
    citations: list[Citation]
    refused: bool
    mode: str  # "generative" | "extractive" | "refused"
    sources: list[Chunk] = field(default_factory=list)  # what the answer was built from, or the nearest passages
    uncited: list[str] = field(default_factory=list)  # sentences no source supports (flagged)
    sentences: list[dict[str, Any]] = field(default_factory=list)  # per sentence: markers, support, outcome
    rewritten_query: str | None = None
    refusal_reason: str | None = None
    gate: dict[str, float] = field(default_factory=dict)
    index_version: str = ""
    models: dict[str, str] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # degraded service the user should know about
    failures: list[str] = field(default_factory=list)  # "<role>:<kind>" of each model call that failed
    near_miss: list[str] = field(default_factory=list)  # the question's key terms no passage mentions

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "text": self.text,
            "refused": self.refused,
            "mode": self.mode,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [s.to_dict() for s in self.sources],
            "uncited": self.uncited,
            "sentences": self.sentences,
            "rewritten_query": self.rewritten_query,
            "refusal_reason": self.refusal_reason,
            "gate": self.gate,
            "index_version": self.index_version,
            "models": self.models,
            "timings_ms": self.timings_ms,
            "notices": self.notices,
            "near_miss": self.near_miss,
        }
