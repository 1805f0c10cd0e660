"""Citation markers: normalised and renumbered while the answer streams, then checked sentence by sentence.

The model is asked to cite sources as `[n]`; it also writes `[1][2]`, `[1, 2]`, `[1-3]`, `【1】`, `[^1]`
or `[Source 1]`. Markers are rewritten on the fly to `[1]`, `[2]`… in order of first use; markers
that point at no source are dropped. Sources themselves always come from index metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.lexical import tokenize
from rag.text import sentence_spans
from rag.types import Chunk, Citation

_OPEN, _CLOSE = "[【［", "]】］"
_MARKER = re.compile(
    r"[\[【［]\s*(?:\^|(?:source|sources|来源|出处|资料)\s*[:：]?\s*)?"
    r"(\d{1,3}(?:\s*(?:[,，、;；]|[-–~～])\s*\d{1,3})*)\s*[\]】］]",
    re.IGNORECASE,
)
_PARTIAL = re.compile(r"[\[【［][^\]】］\n]{0,24}$")  # an opening bracket that may still become a marker
_CANONICAL = re.compile(r"\[(\d+)\]")
_MARKER_RUN = re.compile(r"(?:\[\d+\]){2,}")


def _numbers(body: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,，、;；]\s*", body.strip()):
        bounds = re.split(r"\s*[-–~～]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 10:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(b) for b in bounds if b.isdigit())
    return numbers


class MarkerRewriter:
    """Feed streamed text, get text with canonical, renumbered markers; hold back half-written markers."""

    def __init__(self, source_count: int) -> None:
        self.source_count = source_count
        self.order: list[int] = []  # original source numbers (1-based) in order of first use
        self._pending = ""

    def _renumber(self, original: int) -> int:
        if original not in self.order:
            self.order.append(original)
        return self.order.index(original) + 1

    def _rewrite(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            seen: list[int] = []
            for number in _numbers(match.group(1)):
                if 1 <= number <= self.source_count and number not in seen:
                    seen.append(number)
            return "".join(f"[{self._renumber(n)}]" for n in seen)

        return _collapse(_MARKER.sub(replace, text))

    def feed(self, delta: str) -> str:
        text = self._pending + delta
        partial = _PARTIAL.search(text)
        if partial:
            text, self._pending = text[: partial.start()], text[partial.start() :]
        else:
            self._pending = ""
        return self._rewrite(text)

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return self._rewrite(text)


@dataclass
class CitationCheck:
    text: str
    citations: list[Citation]
    uncited: list[str] = field(default_factory=list)
    aligned: int = 0  # sentences that got a marker by alignment


def finalize(
    text: str,
    sources: list[Chunk],
    order: list[int],
    *,
    refusal: str | None = None,
    align_threshold: float = 0.6,
    check_sentences: bool = True,
) -> CitationCheck:
    """Check every sentence of a rewritten answer; cite unmarked ones when one source clearly covers them.

    `order` maps new marker numbers to original source numbers (MarkerRewriter.order).
    """
    text = _collapse(text)
    cited = [sources[n - 1] for n in order]
    if not check_sentences:
        return CitationCheck(text, [Citation(i + 1, chunk) for i, chunk in enumerate(cited)])
    source_tokens = [set(tokenize(s.indexed_text)) for s in sources]
    pieces: list[str] = []
    uncited: list[str] = []
    aligned = 0
    pos = 0
    for start, end in _sentences(text):
        sentence = text[start:end]
        pieces.append(text[pos:start])
        pos = end
        body = sentence.rstrip()
        if _needs_citation(body, refusal) and not _CANONICAL.search(body):
            best, score = _best_source(body, source_tokens)
            if best is not None and score >= align_threshold:
                original = best + 1
                if original not in order:
                    order.append(original)
                    cited.append(sources[best])
                marker = order.index(original) + 1
                sentence = _insert_marker(sentence, marker)
                aligned += 1
            else:
                uncited.append(body)
        pieces.append(sentence)
    pieces.append(text[pos:])
    citations = [Citation(i + 1, chunk) for i, chunk in enumerate(cited)]
    return CitationCheck("".join(pieces), citations, uncited, aligned)


def _collapse(text: str) -> str:
    """`[1][1][2]` → `[1][2]`: a run of markers names each source once."""

    def unique(match: re.Match[str]) -> str:
        return "".join(f"[{n}]" for n in dict.fromkeys(_CANONICAL.findall(match.group(0))))

    return _MARKER_RUN.sub(unique, text)


def _sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans where markers written after the full stop (`…一百元。[1]`) stay with their sentence."""
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        lead = re.match(r"(?:\s*\[\d+\])+[ \t]*", text[start:end])
        if lead and spans:
            spans[-1] = (spans[-1][0], start + lead.end())
            start += lead.end()
        if end > start:
            spans.append((start, end))
        elif spans:
            spans[-1] = (spans[-1][0], end)
    return spans


def _needs_citation(sentence: str, refusal: str | None) -> bool:
    plain = _CANONICAL.sub("", sentence).strip()
    if len(plain) < 8 or plain.endswith((":", "：")) or plain.startswith("#"):
        return False
    if refusal and refusal.strip() in plain:
        return False
    return len(tokenize(plain)) >= 3


def _best_source(sentence: str, source_tokens: list[set[str]]) -> tuple[int | None, float]:
    tokens = set(tokenize(_CANONICAL.sub("", sentence)))
    if not tokens:
        return None, 0.0
    scores = [len(tokens & s) / len(tokens) for s in source_tokens]
    best = max(range(len(scores)), key=scores.__getitem__, default=None)
    return best, (scores[best] if best is not None else 0.0)


def _insert_marker(sentence: str, marker: int) -> str:
    """Put `[n]` before the sentence's final punctuation and trailing space."""
    match = re.search(r"[。！？；!?;.…]*[\"'”’」』）)]*\s*$", sentence)
    cut = match.start() if match else len(sentence)
    return f"{sentence[:cut]}[{marker}]{sentence[cut:]}"
