"""Block Kit for answers: the text in `markdown` blocks (standard Markdown, so the finished message keeps
the formatting that was streamed), a footnote per source with a "Show source" button, feedback buttons,
and the modal that shows a cited passage. Text is escaped first and split afterwards, so Slack's limits
hold for what is sent (50 blocks and 12,000 markdown characters a message, 3,000 a section); answers are
split, never cut off."""

from __future__ import annotations

import re

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextActionsBlock,
    ContextBlock,
    DividerBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    HeaderBlock,
    MarkdownBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from rag.text import hard_split, sentence_spans
from rag.types import Answer, Chunk, Citation

SECTION_LIMIT = 3000
MARKDOWN_LIMIT = 12_000  # Slack's allowance for all markdown blocks of one message together
BLOCK_LIMIT = 50
SHOW_SOURCE = "show_source"
WRONG_SOURCE = "wrong_source"
FEEDBACK = "answer_feedback"
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
_CLOSE, _REOPEN = "\n```", "```\n"
_PARTIAL_ENTITY = re.compile(r"&[a-z]*$")


def escape(text: str) -> str:
    """Slack's three control characters; `>` at the start of a line stays a quote marker.

    Markdown blocks need it too: Slack reads `<…>` there as its own mentions and links, and shows the
    escaped forms as the characters themselves."""
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return re.sub(r"(?<!^)(?<!\n)>", "&gt;", text)


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Pieces of at most `limit` characters, cut between paragraphs, else sentences, else anywhere."""
    pieces: list[str] = []
    current = ""
    for paragraph in text.split("\n\n"):
        candidate = f"{current}\n\n{paragraph}" if current else paragraph
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        for start, end in sentence_spans(paragraph):
            for a, b in hard_split(paragraph, start, end, limit):
                piece = paragraph[a:b]
                if len(current) + len(piece) <= limit:
                    current += piece
                else:
                    pieces.append(current)
                    current = piece
    if current:
        pieces.append(current)
    return [p for p in pieces if p.strip()]


def escaped_pieces(text: str, limit: int) -> list[str]:
    """`text` escaped, then split into pieces of at most `limit` characters; an entity is never cut."""
    pieces = split_text(escape(text), limit - len("&amp"))
    for n in range(len(pieces) - 1):
        partial = _PARTIAL_ENTITY.search(pieces[n])
        if partial:  # the rest of the entity begins the next piece
            pieces[n], pieces[n + 1] = pieces[n][: partial.start()], partial.group() + pieces[n + 1]
    return [p for p in pieces if p]


def markdown_pieces(text: str, limit: int = MARKDOWN_LIMIT) -> list[str]:
    """The texts of the markdown blocks for `text`; a code block cut in two is closed and reopened."""
    pieces: list[str] = []
    reopen = ""
    for piece in escaped_pieces(text, limit - len(_CLOSE) - len(_REOPEN)):
        piece, reopen = reopen + piece, ""
        if len(_FENCE.findall(piece)) % 2:
            piece, reopen = piece.rstrip("\n") + _CLOSE, _REOPEN
        pieces.append(piece)
    return pieces


def _footnote(citation: Citation, answer_id: str | None) -> SectionBlock:
    chunk = citation.chunk
    label = escape(citation.location)
    if chunk.url:
        title = escape(chunk.title)
        label = label.replace(title, f"<{chunk.url}|{title}>", 1)
    accessory = None
    if answer_id:
        accessory = ButtonElement(text="Show source", action_id=SHOW_SOURCE,
                                  value=f"{answer_id}:{citation.marker}")
    return SectionBlock(text=MarkdownTextObject(text=f"*[{citation.marker}]* {label}"), accessory=accessory)


def answer_blocks(answer: Answer, answer_id: str | None) -> list[dict]:
    """All blocks of a finished answer, in order; `paginate` fits them into messages."""
    blocks: list = [MarkdownBlock(text=piece) for piece in markdown_pieces(answer.text)]
    if answer.citations:
        blocks.append(DividerBlock())
        blocks.extend(_footnote(c, answer_id) for c in answer.citations)
    notes = [f":warning: {escape(n)}" for n in answer.notices]
    if answer.uncited:
        notes.append(f":grey_question: {len(answer.uncited)} sentence(s) could not be matched to a source.")
    if notes:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=_cut(n, 3000)) for n in notes[:10]]))
    if answer_id:
        blocks.append(ContextActionsBlock(elements=[FeedbackButtonsElement(
            action_id=FEEDBACK,
            positive_button=FeedbackButtonObject(text="Helpful", value=f"up:{answer_id}", accessibility_label="Helpful answer"),
            negative_button=FeedbackButtonObject(text="Not helpful", value=f"down:{answer_id}",
                                                 accessibility_label="Unhelpful answer"),
        )]))
    return [b.to_dict() for b in blocks]


def paginate(blocks: list[dict], limit: int = BLOCK_LIMIT,
             markdown_limit: int = MARKDOWN_LIMIT) -> list[list[dict]]:
    """The blocks in order, as messages of at most `limit` blocks and `markdown_limit` markdown characters."""
    pages: list[list[dict]] = [[]]
    markdown = 0
    for block in blocks:
        size = len(block["text"]) if block.get("type") == "markdown" else 0
        if pages[-1] and (len(pages[-1]) >= limit or markdown + size > markdown_limit):
            pages.append([])
            markdown = 0
        pages[-1].append(block)
        markdown += size
    return pages


def plain_summary(text: str, limit: int = 3000) -> str:
    """The notification text that goes with blocks (Slack shows it in notifications and old clients)."""
    return _cut(escape(text), limit)


def _cut(escaped: str, limit: int) -> str:
    """Escaped text cut to `limit` characters (ending in "…"), never inside an entity."""
    if len(escaped) <= limit:
        return escaped
    return _PARTIAL_ENTITY.sub("", escaped[: limit - 1]) + "…"


def source_modal(chunk: Chunk, marker: int, answer_id: str, location: str) -> dict:
    title = f"Source [{marker}]"
    blocks: list = [HeaderBlock(text=PlainTextObject(text=(chunk.title or chunk.file)[:150]))]
    where = _cut(escape(f"{location} · {chunk.file}"), 3000)
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=where)]))
    body = (chunk.lead + "\n" if chunk.lead else "") + chunk.text
    blocks.extend(SectionBlock(text=MarkdownTextObject(text=p)) for p in escaped_pieces(body, SECTION_LIMIT))
    if chunk.url:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=f"<{chunk.url}|Open the document>")))
    blocks.append(ActionsBlock(elements=[ButtonElement(
        text="This source is wrong", action_id=WRONG_SOURCE, value=f"{answer_id}:{marker}", style="danger")]))
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": title[:24]},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": [b.to_dict() for b in blocks[:100]],
    }
