"""Question → cited answer: rewrite, retrieve, rerank, gate, stream the answer, check the citations."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from cache import Cache, cache_key
from rag.candidates import CandidateFinder
from rag.citations import NOT_IN_SOURCES, MarkerRewriter, finalize
from rag.evidence import Evidence, gather_evidence
from rag.extractive import choose_quotes, render_quotes
from rag.gate import EvidenceGate, GateDecision
from rag.links import LinkFilter, keep_cited, source_urls
from rag.models.chat import ChatModel, ModelError
from rag.prompt import REFUSALS, EvidenceNote, build_prompt, detect_language
from rag.refusal import refusal_text, related_documents
from rag.rewrite import QueryRewriter
from rag.support import SupportScorer
from rag.types import EVERYTHING, Answer, Chunk, Scope

_log = logging.getLogger(__name__)

INTERRUPTED = {
    "zh": "（回答中断：答案模型出现问题，以上内容可能不完整。）",
    "en": "(The answer was cut short because the answer model failed; what is above may be incomplete.)",
}


TOO_LONG = {
    "zh": "问题太长了（{length} 个字符，上限 {limit}）。请把问题缩短到一两句话再问一次。",
    "en": "That question is too long ({length} characters; the limit is {limit}). "
          "Please ask it again in a sentence or two.",
}


class QuestionTooLong(ValueError):
    """The question exceeds the configured length; `message` is what to tell the person who asked."""

    def __init__(self, question: str, limit: int) -> None:
        self.length, self.limit = len(question), limit
        self.message = TOO_LONG[detect_language(question)].format(length=self.length, limit=limit)
        super().__init__(self.message)


@dataclass(frozen=True)
class PipelineConfig:
    top_k: int = 5  # passages given to the answer model
    max_answer_tokens: int = 800
    rewrite_ttl: int = 24 * 3600
    max_question_chars: int = 2000
    history_turns: int = 3  # earlier (question, answer) pairs given to the models
    history_chars: int = 1500  # per earlier answer (and question); longer ones are cut

    def __post_init__(self) -> None:
        if self.top_k <= 0:
            raise ValueError("top_k must be positive")
        if self.max_question_chars <= 0 or self.history_turns < 0 or self.history_chars <= 0:
            raise ValueError("question and history limits must be positive")


class AnswerPipeline:
    def __init__(
        self,
        finder: CandidateFinder,
        cache: Cache,
        gate: EvidenceGate,
        *,
        rewriter: QueryRewriter | None = None,
        answerer: ChatModel | None = None,
        config: PipelineConfig | None = None,
    ) -> None:
        self.finder = finder
        self.cache = cache
        self.gate = gate
        self.rewriter = rewriter
        self.answerer = answerer
        self.config = config or PipelineConfig()

    @property
    def _fusion_name(self) -> str:
        method = self.finder.retriever.fusion.method
        return "score-fusion" if method == "scores" else "rank-fusion"

    @property
    def models(self) -> dict[str, str]:
        return {
            "rewrite": self.rewriter.name if self.rewriter else "none",
            "embed": self.finder.retriever.embedder.model_id,
            "rerank": self.finder.reranker.name if self.finder.reranker else f"none ({self._fusion_name} order)",
            "answer": self.answerer.name if self.answerer else "extractive",
        }

    async def answer(self, question: str, history: list[tuple[str, str]] | None = None,
                     scope: Scope = EVERYTHING) -> AsyncIterator[str | Answer]:
        """Yields text deltas as they are ready, then the final Answer (its text may add citation markers);
        only passages `scope` allows are retrieved, quoted or cited."""
        question = question.strip()
        if not question:
            raise ValueError("question must not be empty")
        if len(question) > self.config.max_question_chars:
            raise QuestionTooLong(question, self.config.max_question_chars)
        history = self._bounded(history)
        began = time.perf_counter()
        timings: dict[str, float] = {}
        notices: list[str] = []
        failures: list[str] = []  # "<role>:<kind>" of each model call that failed
        # Loading a newly published snapshot takes a moment: never on the event loop.
        snapshot = await asyncio.to_thread(lambda: self.finder.retriever.snapshot)
        version, idf = snapshot.version, snapshot.lexical.idf

        rewritten = await self._rewrite(question, history, version, timings, notices, failures)
        found = await self.finder.find(question, rewritten, version, scope)
        timings.update(found.timings_ms)
        notices.extend(found.notices)
        failures.extend(found.failures)
        sources = [h.chunk for h in found.hits[: self.config.top_k]]
        evidence = None
        if sources and (self.answerer is None
                        or self.gate.wants_evidence(rewritten or question, found.rerank_scores is not None, sources)):
            evidence = await self._evidence(question, rewritten, sources, idf, version, timings)
        gate_began = time.perf_counter()
        decision = await asyncio.to_thread(self.gate.decide, rewritten or question, found.hits, idf,
                                           found.rerank_scores, evidence)
        timings["gate"] = _ms(gate_began)
        quotes = None
        if decision.answer and self.answerer is None:
            quotes = choose_quotes(evidence) if evidence else []
            if not quotes:
                decision = GateDecision(False, "the passages hold no sentence to quote",
                                        decision.signals)
        timings["before_answer_model"] = _ms(began)
        language = detect_language(question)
        base = dict(question=question, rewritten_query=rewritten, gate=decision.signals, index_version=version,
                    models=self.models, notices=notices, failures=failures, near_miss=list(decision.near_miss))

        if not decision.answer:
            related = related_documents(rewritten or question, found.hits, idf)
            text = refusal_text(language, related)
            yield text
            timings["total"] = _ms(began)
            yield Answer(text=text, citations=[], refused=True, mode="refused", sources=related,
                         refusal_reason=decision.reason, timings_ms=timings, **base)
            return

        markers = MarkerRewriter(len(sources))
        links = LinkFilter(source_urls(s.url for s in sources))  # links lead only to the sources' own URLs
        parts: list[str] = []
        mode = "generative" if self.answerer else "extractive"
        deltas = self._generate(question, rewritten, sources, history, idf, quotes, evidence, version, timings,
                                notices, failures, began, evidence_note(decision))
        async for delta in deltas:
            if delta is _FALLBACK:
                mode = "extractive"
                continue
            out = markers.feed(links.feed(delta))
            if out:
                parts.append(out)
                yield out
        tail = markers.feed(links.flush()) + markers.flush()
        if tail:
            parts.append(tail)
            yield tail
        refusal = REFUSALS[language]
        checked = time.perf_counter()
        check = await asyncio.to_thread(
            finalize, "".join(parts), sources, markers.order, refusal=refusal,
            scorer=SupportScorer(idf, self._support_similarity(snapshot)),
            check_sentences=mode == "generative",  # quotes cite themselves
            unsupported_note=NOT_IN_SOURCES[detect_language("".join(parts))],
        )
        timings["citation_check"] = _ms(checked)
        model_refused = refusal in check.text and not check.citations
        timings["total"] = _ms(began)
        text = keep_cited(check.text, (c.chunk.url for c in check.citations), (s.url for s in sources))
        yield Answer(
            text=text, citations=check.citations, refused=model_refused,
            mode="refused" if model_refused else mode, sources=sources, uncited=check.uncited,
            sentences=[s.to_dict() for s in check.sentences],
            refusal_reason="the answer model found no answer in the sources" if model_refused else None,
            timings_ms=timings, **base,
        )

    async def _evidence(self, question: str, rewritten: str | None, sources: list[Chunk], idf, version: str,
                        timings: dict[str, float]) -> Evidence:
        began = time.perf_counter()
        evidence = await asyncio.to_thread(gather_evidence, question, sources, idf,
                                           self._similarity(question, version), query=rewritten,
                                           terms=self._term_similarity(version))
        timings["evidence"] = _ms(began)
        return evidence

    def _bounded(self, history: list[tuple[str, str]] | None) -> list[tuple[str, str]]:
        """The most recent turns, each side cut to `history_chars`: a long thread cannot crowd out the sources."""
        if not history or not self.config.history_turns:
            return []
        limit = self.config.history_chars

        def cut(text: str) -> str:
            return text if len(text) <= limit else text[: limit - 1] + "…"

        return [(cut(q), cut(a)) for q, a in history[-self.config.history_turns :]]

    async def _rewrite(self, question: str, history, version: str, timings: dict, notices: list[str],
                       failures: list[str]) -> str | None:
        if self.rewriter is None:
            return None
        began = time.perf_counter()
        turns = "\x1e".join(f"{q}\x1f{a}" for q, a in (history or [])[-3:])
        key = cache_key("rewrite", version, self.rewriter.name, question, turns)
        cached = await asyncio.to_thread(self.cache.get, "rewrite", key)  # Redis: a network round trip
        if cached is not None:
            timings["rewrite"] = _ms(began)
            return cached.decode() or None
        try:
            rewritten = await self.rewriter.rewrite(question, history)
        except ModelError as exc:
            _log.warning("query rewrite failed, searching with the question as asked: %s", exc)
            failures.append(f"rewrite:{exc.kind}")
            notices.append("The query rewriter is unavailable; searched with the question as asked.")
            timings["rewrite"] = _ms(began)
            return None
        await asyncio.to_thread(self.cache.set, "rewrite", key, (rewritten or "").encode(), self.config.rewrite_ttl)
        timings["rewrite"] = _ms(began)
        return rewritten

    async def _generate(self, question, rewritten, sources, history, idf, quotes, evidence, version, timings,
                        notices, failures, began, note: EvidenceNote):
        """Deltas from the answer model (told what the gate judged); on failure before any text, the
        extractive answer instead."""
        produced = False
        if self.answerer is not None:
            prompt = build_prompt(question, sources, history, note=note)
            try:
                async for delta in self.answerer.stream(prompt.messages, max_tokens=self.config.max_answer_tokens):
                    if not produced:
                        timings["first_token"] = _ms(began)
                        produced = True
                    yield delta
                timings["generate"] = _ms(began) - timings.get("first_token", 0.0)
                return
            except ModelError as exc:
                _log.warning("answer model failed: %s", exc)
                failures.append(f"answer:{exc.kind}")
                if produced:
                    notices.append(f"The answer model failed mid-answer ({exc.kind}).")
                    yield "\n\n" + INTERRUPTED[detect_language(question)]
                    return
                notices.append(f"The answer model is unavailable ({exc.kind}); showing quoted passages instead.")
                yield _FALLBACK
            evidence = evidence or await self._evidence(question, rewritten, sources, idf, version, timings)
            quotes = choose_quotes(evidence)
            if not quotes:
                yield REFUSALS[detect_language(question)]
                return
        timings["first_token"] = _ms(began)
        missing = evidence.missing if evidence is not None else ()
        for line in render_quotes(question, quotes, sources, missing).splitlines(keepends=True):
            yield line

    def _similarity(self, question: str, version: str):
        """Cosine similarity of sentences to the question, with the (cached) query vector of the question's
        index version (not the live one: reading that may load a new index, and this runs on the event loop)."""

        def score(sentences: list[str]) -> list[float]:
            query = self.finder.query_vector(question, version)
            return [float(v @ query) for v in self.finder.passage_vectors(sentences)]

        return score

    def _term_similarity(self, version: str):
        """Cosine of each key term of a question (embedded as a query) to each of the texts."""

        def score(terms: list[str], texts: list[str]) -> list[list[float]]:
            vectors = self.finder.passage_vectors(texts)
            return [[float(v) for v in vectors @ self.finder.query_vector(t, version)] for t in terms]

        return score

    def _support_similarity(self, snapshot):
        """Cosine of an answer sentence to each passage's indexed vector (used across languages)."""

        def score(sentence: str, passages: list[Chunk]) -> list[float]:
            vector = self.finder.query_vector(sentence, snapshot.version)
            return [float(snapshot.vector(p.id) @ vector) for p in passages]

        return score


class _Fallback(str):
    pass


_FALLBACK = _Fallback("")


def evidence_note(decision: GateDecision) -> EvidenceNote:
    """What the gate judged, for the answer model: weak when some key term of the question is in no passage."""
    return EvidenceNote("weak" if decision.near_miss else "strong", tuple(decision.near_miss))


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
