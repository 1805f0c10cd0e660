"""An answer's footnotes as Teams' native citations: `[n]` in the text opens citation n, which shows where
the passage comes from (title › section, page, document version — the Slack footnote) and the passage.

Teams' limits: a citation's name at most 80 characters, its abstract 160, at most three keywords of 28.
The whole footnote and the whole passage go into the citation's card, which Teams shows when it is opened.
"""

from __future__ import annotations

import json
import re

from microsoft_agents.activity import ClientCitation, ClientCitationAppearance

from bot.core.links import document_link, passage_text
from rag.types import Chunk, Citation

NAME_LIMIT, ABSTRACT_LIMIT, KEYWORD_LIMIT, KEYWORDS = 80, 160, 28, 3
CARD_FORMAT = "application/vnd.microsoft.card.adaptive"
# The SDK turns `[doc3]` / `[docs3]` in streamed text into `[3]`; such text is not ours to number.
_SDK_MARKER = re.compile(r"\[(docs?\d+)\]", re.IGNORECASE)
_OPEN_BRACKET = re.compile(r"\[[^\]\n]{0,8}$")


def neutral(text: str) -> str:
    """Text whose only `[n]` are our own markers: the SDK's `[docN]` form is shown as `〔docN〕`."""
    return _SDK_MARKER.sub(r"〔\1〕", text)


def held_back(text: str) -> tuple[str, str]:
    """`text` split into what can be sent and a trailing bracket that may still become `[docN]`."""
    tail = _OPEN_BRACKET.search(text)
    return (text[: tail.start()], tail.group()) if tail else (text, "")


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def _shown(chunk: Chunk, text: str) -> str:
    """Passage text for a card, whose TextBlocks render Markdown: links only to the document's own URL."""
    return neutral(passage_text(chunk, text))


def _card(citation: Citation) -> str:
    chunk = citation.chunk
    passage = (chunk.lead + "\n" if chunk.lead else "") + chunk.text
    body = [{"type": "TextBlock", "text": citation.location, "weight": "Bolder", "wrap": True},
            {"type": "TextBlock", "text": _shown(chunk, chunk.file), "isSubtle": True, "size": "Small", "wrap": True},
            {"type": "TextBlock", "text": _shown(chunk, passage), "wrap": True}]
    return json.dumps({"type": "AdaptiveCard", "version": "1.5", "body": body}, ensure_ascii=False)


def _keywords(citation: Citation) -> list[str] | None:
    words = [cut(part, KEYWORD_LIMIT) for part in citation.chunk.edition.split(" · ") if part.strip()]
    return words[:KEYWORDS] or None


def teams_citation(citation: Citation) -> ClientCitation:
    chunk = citation.chunk
    return ClientCitation(position=citation.marker, appearance=ClientCitationAppearance(
        name=cut(citation.location, NAME_LIMIT),
        abstract=cut(_shown(chunk, chunk.text), ABSTRACT_LIMIT),
        url=document_link(chunk.url),
        keywords=_keywords(citation),
        text=_card(citation),
        encoding_format=CARD_FORMAT,
    ))
