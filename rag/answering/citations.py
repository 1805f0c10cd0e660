"""Citation markers: the model's `[Sn]` markers become `[1]`, `[2]`… as the answer streams, then every
sentence is checked against the passage it cites.

Streaming: markers are renumbered in order of first use, markers naming no source are dropped, and
bracketed numbers that are not markers ("Annex [3]") are neutralised to `〔3〕` (rag.safety.markers).
Finishing: a sentence whose marker names a passage that clearly does not support it — or that states a
number none of its cited passages states — is moved to the passage that does, or flagged (its marker
removed); an unmarked sentence is cited when one passage clearly covers it, else flagged. A flagged
sentence is shown with a note saying it is not in the sources (`NOT_IN_SOURCES`), so that no reader takes
it for a cited one. Every sentence's markers, support score and outcome are reported.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from rag.words.languages import ByLanguage
from rag.words.lexical import tokenize
from rag.safety.markers import CANONICAL, LOOK_ALIKE, MODEL_MARKER, PARTIAL, model_marker_numbers
from rag.judging.support import SupportScorer
from rag.words.text import sentence_spans
from rag.types import Chunk, Citation

_MARKER_RUN = re.compile(r"(?:\[\d+\]){2,}")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
# Written after a flagged sentence, in the answer's language, where its citation would have been.
NOT_IN_SOURCES = ByLanguage({
    "zh": "（来源中未找到）", "en": " (not found in the sources)", "de": " (nicht in den Quellen gefunden)",
    "fr": " (introuvable dans les sources)", "es": " (no encontrado en las fuentes)",
    "pt": " (não encontrado nas fontes)", "it": " (non trovato nelle fonti)", "ja": "（出典に見当たりません）",
    "ko": " (출처에서 찾을 수 없음)",
})

Outcome = Literal["supported", "partly supported", "moved", "cited by alignment", "flagged", "quote", "unchecked",
                  "no claim"]


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
            marker = MODEL_MARKER.fullmatch(match.group(0))
            if marker is None:
                return f"〔{match.group(1).strip()}〕"
            seen = [n for n in dict.fromkeys(model_marker_numbers(marker.group(1))) if 1 <= n <= self.source_count]
            return "".join(f"[{self._renumber(n)}]" for n in seen)

        return _collapse(LOOK_ALIKE.sub(replace, text))

    def feed(self, delta: str) -> str:
        text = self._pending + delta
        partial = PARTIAL.search(text)
        if partial:
            text, self._pending = text[: partial.start()], text[partial.start() :]
        else:
            self._pending = ""
        return self._rewrite(text)

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return self._rewrite(text)


@dataclass
class SentenceCheck:
    """One sentence of an answer as checked: what it cites and how well those passages support it."""

    text: str  # as shown, with its final markers (without the note of a flagged sentence)
    markers: list[int]  # final marker numbers
    support: dict[int, float | None]  # final marker -> support of that passage (0..1; None: not judged)
    outcome: Outcome
    method: str = "lexical"  # "lexical" | "semantic" | "quote" | ""
    written: list[int] = field(default_factory=list)  # original source numbers the model's markers named
    best: float = 0.0  # the best support any passage gives
    missing_numbers: list[str] = field(default_factory=list)  # numbers it states that its passages do not

    @property
    def flagged(self) -> bool:
        return self.outcome == "flagged"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "flagged": self.flagged}


@dataclass
class CitationCheck:
    text: str
    citations: list[Citation]
    sentences: list[SentenceCheck] = field(default_factory=list)

    @property
    def uncited(self) -> list[str]:
        """Sentences no passage supports (flagged), without markers."""
        return [CANONICAL.sub("", s.text).strip() for s in self.sentences if s.flagged]

    @property
    def aligned(self) -> int:
        return sum(s.outcome == "cited by alignment" for s in self.sentences)

    @property
    def moved(self) -> int:
        return sum(s.outcome == "moved" for s in self.sentences)


@dataclass
class _Sentence:
    start: int
    end: int
    cites: list[int | None]  # per marker occurrence: original source number, None = remove it
    append: int | None = None  # original source number of a marker to add at the end
    check: SentenceCheck | None = None
    scores: list[float] | None = None  # support by each source, when checked


def finalize(
    text: str,
    sources: list[Chunk],
    order: list[int],
    *,
    refusal: str | None = None,
    scorer: SupportScorer | None = None,
    check_sentences: bool = True,
    unsupported_note: str | None = None,
) -> CitationCheck:
    """Check every sentence of a rewritten answer against the passages it cites, then number the citations.

    `order` maps marker numbers in `text` to original source numbers (MarkerRewriter.order);
    `unsupported_note` (e.g. NOT_IN_SOURCES["en"]) is written where a flagged sentence's marker would be.
    """
    text = _collapse(text)
    scorer = scorer or SupportScorer()
    sentences = []
    for start, end in _sentences(text) if check_sentences else _lines(text):  # a quote is checked as a whole
        cites = [order[int(m.group(1)) - 1] for m in CANONICAL.finditer(text, start, end)]
        sentence = _Sentence(start, end, list(cites))
        body = text[start:end].strip()
        if not check_sentences:
            sentence.check = SentenceCheck(body, [], {}, "quote" if cites else "no claim", "quote" if cites else "",
                                           cites, 1.0 if cites else 0.0)
        elif _needs_citation(body, refusal):
            _judge(sentence, body, sources, scorer)
        elif cites:  # too short to judge ("Meals [1]."): the marker stays as written, unless a number is off
            missing = scorer.missing_numbers(body, [sources[n - 1] for n in dict.fromkeys(cites)])
            sentence.check = SentenceCheck(body, [], {}, "flagged" if missing else "unchecked", "", cites, 0.0,
                                           missing)
            if missing:
                sentence.cites = [None] * len(cites)
        else:
            sentence.check = SentenceCheck(body, [], {}, "no claim", "", [], 0.0)
        sentences.append(sentence)
    return _render(text, sentences, sources, unsupported_note)


def _judge(sentence: _Sentence, body: str, sources: list[Chunk], scorer: SupportScorer) -> None:
    written = [c for c in dict.fromkeys(sentence.cites) if c is not None]
    basis = [sources[n - 1] for n in written] or None
    scores, method = scorer.scores(body, sources, basis)
    best = max(range(len(sources)), key=scores.__getitem__)
    check = SentenceCheck(body, [], {}, "supported", method, written, scores[best])
    sentence.check, sentence.scores = check, scores
    best_states_numbers = not scorer.missing_numbers(body, [sources[best]])
    if not written:
        if scorer.is_supported(scores[best], method) and best_states_numbers:
            check.outcome, sentence.append = "cited by alignment", best + 1
        else:
            check.outcome = "flagged"
            check.missing_numbers = scorer.missing_numbers(body, sources)
        return
    named = max(scores[n - 1] for n in written)
    check.missing_numbers = scorer.missing_numbers(body, [sources[n - 1] for n in written])
    elsewhere = best + 1 not in written and best_states_numbers and (
        scorer.is_better_elsewhere(named, scores[best], method)
        or (check.missing_numbers and scorer.is_supported(scores[best], method)))
    if elsewhere:
        check.outcome, check.missing_numbers = "moved", []
        sentence.cites = [best + 1] + [None] * (len(sentence.cites) - 1)
    elif check.missing_numbers or scorer.is_unsupported(named, method):
        check.outcome = "flagged"
        sentence.cites = [None] * len(sentence.cites)
    elif method == "semantic":
        check.outcome = "unchecked"  # another language: not clearly unrelated is all that can be told
    else:
        check.outcome = "supported" if scorer.is_supported(named, method) else "partly supported"
        # A marker whose passage contributes nothing to an otherwise supported sentence is dropped.
        weak = {n for n in written if len(written) > 1 and scores[n - 1] < 0.5 * scorer.thresholds.unsupported}
        sentence.cites = [None if c in weak else c for c in sentence.cites]


def _render(text: str, sentences: list[_Sentence], sources: list[Chunk], note: str | None) -> CitationCheck:
    """Number the cited sources by first use and write the final markers into the text."""
    final: list[int] = []  # original source numbers in final marker order

    def number(original: int) -> int:
        if original not in final:
            final.append(original)
        return final.index(original) + 1

    pieces: list[str] = []
    checks: list[SentenceCheck] = []
    pos = 0
    for sentence in sentences:
        pieces.append(text[pos : sentence.start])
        pos = sentence.end
        rendered = _rewrite_markers(text[sentence.start : sentence.end], sentence.cites, number)
        if sentence.append is not None:
            rendered = _insert_marker(rendered, number(sentence.append))
        pieces.append(rendered)
        check = sentence.check
        assert check is not None
        check.text = rendered.strip()
        check.markers = [int(n) for n in dict.fromkeys(CANONICAL.findall(rendered))]
        check.support = {m: _support(sentence, final[m - 1]) for m in check.markers}
        checks.append(check)
        if note and check.flagged and _prose(text, sentence.start):
            pieces[-1] = _insert_marker(rendered, note)
    pieces.append(text[pos:])
    citations = [Citation(i + 1, sources[original - 1]) for i, original in enumerate(final)]
    return CitationCheck("".join(pieces), citations, checks)


def _support(sentence: _Sentence, original: int) -> float | None:
    """The support score of a final marker: measured, 1.0 for a verbatim quote, None when not judged."""
    if sentence.scores is not None:
        return sentence.scores[original - 1]
    return 1.0 if sentence.check is not None and sentence.check.outcome == "quote" else None


def _rewrite_markers(sentence: str, cites: list[int | None], number) -> str:
    """Each marker occurrence becomes its final number, or goes (with the space before it) when None."""
    out: list[str] = []
    cursor = 0
    for occurrence, match in enumerate(CANONICAL.finditer(sentence)):
        out.append(sentence[cursor : match.start()])
        cursor = match.end()
        original = cites[occurrence]
        if original is not None:
            out.append(f"[{number(original)}]")
            continue
        following = sentence[cursor : cursor + 1]
        if not following.isalnum():  # "fee [2]." → "fee." but "A [2] and" keeps its space once
            out[-1] = out[-1].rstrip(" \t")
    out.append(sentence[cursor:])
    return _collapse("".join(out))


def _collapse(text: str) -> str:
    """`[1][1][2]` → `[1][2]`: a run of markers names each source once."""

    def unique(match: re.Match[str]) -> str:
        return "".join(f"[{n}]" for n in dict.fromkeys(CANONICAL.findall(match.group(0))))

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


def _lines(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def _needs_citation(sentence: str, refusal: str | None) -> bool:
    plain = CANONICAL.sub("", sentence).strip()
    if len(plain) < 8 or plain.endswith((":", "：")) or plain.startswith("#"):
        return False
    if refusal and refusal.strip() in plain:
        return False
    return len(tokenize(plain)) >= 3


def _prose(text: str, start: int) -> bool:
    """Whether a note can follow the sentence at `start` without changing Markdown structure: not in a
    code block, a table row or a heading (there the sentence is flagged, but not annotated)."""
    line = text[text.rfind("\n", 0, start) + 1 :].lstrip()
    if line.startswith(("|", "#")):
        return False
    return len(_FENCE.findall(text, 0, start)) % 2 == 0


def _insert_marker(sentence: str, marker: int | str) -> str:
    """Put `[n]` (or a note) before the sentence's final punctuation and trailing space."""
    match = re.search(r"[。！？；!?;.…]*[\"'”’」』）)]*\s*$", sentence)
    cut = match.start() if match else len(sentence)
    inserted = f"[{marker}]" if isinstance(marker, int) else marker
    return f"{sentence[:cut]}{inserted}{sentence[cut:]}"
