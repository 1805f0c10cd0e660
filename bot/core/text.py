"""Text cut into pieces that fit a chat platform's message limits, between paragraphs where it can."""

from __future__ import annotations

from rag.words.text import hard_split, sentence_spans


def split_text(text: str, limit: int) -> list[str]:
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
