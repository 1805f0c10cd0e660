"""Block Kit for answers: the text, a footnote per source with a "Show source" button, feedback buttons,
and the modal that shows a cited passage. Slack's limits (50 blocks a message, 3,000 characters a
section) are respected by splitting, never by cutting text off."""

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
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from rag.text import hard_split, sentence_spans
from rag.types import Answer, Chunk, Citation

SECTION_LIMIT = 3000
BLOCK_LIMIT = 50
SHOW_SOURCE = "show_source"
WRONG_SOURCE = "wrong_source"
FEEDBACK = "answer_feedback"


def escape(text: str) -> str:
    """Slack's three control characters; `>` at the start of a line stays a quote marker."""
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
    blocks: list = [SectionBlock(text=MarkdownTextObject(text=escape(piece))) for piece in split_text(answer.text)]
    if answer.citations:
        blocks.append(DividerBlock())
        blocks.extend(_footnote(c, answer_id) for c in answer.citations)
    notes = [f":warning: {escape(n)}" for n in answer.notices]
    if answer.uncited:
        notes.append(f":grey_question: {len(answer.uncited)} sentence(s) could not be matched to a source.")
    if notes:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=n[:3000]) for n in notes[:10]]))
    if answer_id:
        blocks.append(ContextActionsBlock(elements=[FeedbackButtonsElement(
            action_id=FEEDBACK,
            positive_button=FeedbackButtonObject(text="Helpful", value=f"up:{answer_id}", accessibility_label="Helpful answer"),
            negative_button=FeedbackButtonObject(text="Not helpful", value=f"down:{answer_id}",
                                                 accessibility_label="Unhelpful answer"),
        )]))
    return [b.to_dict() for b in blocks]


def paginate(blocks: list[dict], limit: int = BLOCK_LIMIT) -> list[list[dict]]:
    return [blocks[i : i + limit] for i in range(0, len(blocks), limit)] or [[]]


def plain_summary(text: str, limit: int = 3000) -> str:
    """The notification text that goes with blocks (Slack shows it in notifications and old clients)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def source_modal(chunk: Chunk, marker: int, answer_id: str, location: str) -> dict:
    title = f"Source [{marker}]"
    blocks: list = [HeaderBlock(text=PlainTextObject(text=(chunk.title or chunk.file)[:150]))]
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=escape(f"{location} · {chunk.file}")[:3000])]))
    body = (chunk.lead + "\n" if chunk.lead else "") + chunk.text
    blocks.extend(SectionBlock(text=MarkdownTextObject(text=escape(piece))) for piece in split_text(body))
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
