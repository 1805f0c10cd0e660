"""Question → cited answer: the stages of rag.answering, run in order over one AnswerContext.

rewrite → retrieve → fuse → rerank → feedback look-up (rag.answering.candidates) → pool, the demotions applied to every
draw (rag.answering.pools) → parts (each ask's own passages, when a question asks more than one thing) → judge (the
question analysed once; its sentence evidence, near-miss terms, gate decision and, without an answer model, the
quotes: rag.judging.judge) → generate or extract → cite. Each stage is a small component with typed inputs and outputs; this module only
runs them.

The threading rule: the synchronous stages of one answer run one after another in one worker thread of that
answer's own (rag.answering.worker; the retriever may search its dense index beside BM25 in its own pool
for it), and the text streams from there into the event loop; on the loop run
only the model calls (rewrite, rerank, answer), which are asynchronous, and pure text handling (markers,
links, the quotes' lines). Nothing on the event loop reads or writes Redis, SQLite, Milvus or the index
snapshot (tests/rag/answering/test_threading.py holds this)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from cache import Cache
from rag.answering.cite import Cite, CitedStream
from rag.answering.context import AnswerContext, ms
from rag.answering.extract import Extract
from rag.answering.generate import UNAVAILABLE, Generate
from rag.answering.judge import JudgeStage
from rag.answering.parts import PartPassages
from rag.answering.pool import Pool
from rag.answering.refuse import Refusal, Refuse
from rag.answering.rewrite import Rewrite
from rag.answering.worker import Worker
from rag.answering.candidates import CandidateFinder
from rag.answering.framing import asked_part
from rag.judging.gate import EvidenceGate
from rag.words.languages import ByLanguage, detect_language
from rag.models.chat import ChatModel
from rag.answering.rewriter import QueryRewriter
from rag.types import EVERYTHING, Answer, Scope

TOO_LONG = ByLanguage({
    "zh": "问题太长了（{length} 个字符，上限 {limit}）。请把问题缩短到一两句话再问一次。",
    "en": "That question is too long ({length} characters; the limit is {limit}). "
          "Please ask it again in a sentence or two.",
    "de": "Diese Frage ist zu lang ({length} Zeichen; erlaubt sind {limit}). "
          "Bitte stellen Sie sie in ein, zwei Sätzen noch einmal.",
    "fr": "Cette question est trop longue ({length} caractères\u202f; la limite est de {limit}). "
          "Merci de la reformuler en une ou deux phrases.",
    "es": "Esa pregunta es demasiado larga ({length} caracteres; el límite es {limit}). "
          "Vuelva a hacerla en una o dos frases.",
    "pt": "Essa pergunta é demasiado longa ({length} caracteres; o limite é {limit}). "
          "Volte a fazê-la numa ou duas frases.",
    "it": "La domanda è troppo lunga ({length} caratteri; il limite è {limit}). "
          "La riformuli in una o due frasi.",
    "ja": "質問が長すぎます（{length} 文字、上限は {limit} 文字）。1〜2文に短くしてもう一度質問してください。",
    "ko": "질문이 너무 깁니다({length}자, 최대 {limit}자). 한두 문장으로 줄여서 다시 질문해 주세요.",
})


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
        answer_chat_model: ChatModel | None = None,
        config: PipelineConfig | None = None,
    ) -> None:
        self.finder = finder
        self.cache = cache
        self.rewriter = rewriter
        self.answer_chat_model = answer_chat_model
        self.config = config or PipelineConfig()
        self.rewrite = Rewrite(rewriter, cache, self.config.rewrite_ttl) if rewriter is not None else None
        self.pool = Pool(finder.vectors, self.config.top_k)
        self.parts = PartPassages(finder)
        self.judging = JudgeStage(gate, finder.vectors, self.config.top_k)
        self.refuse = Refuse()
        self.generate = (Generate(answer_chat_model, self.config.max_answer_tokens)
                         if answer_chat_model is not None else None)
        self.extract = Extract()
        self.cite = Cite(finder.vectors)

    @property
    def gate(self) -> EvidenceGate:
        return self.judging.judge.gate

    @gate.setter
    def gate(self, gate: EvidenceGate) -> None:
        self.judging.judge.gate = gate

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
            "answer": self.answer_chat_model.name if self.answer_chat_model else "extractive",
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
        # What is asked, without the greeting and thanks around it: neither is searched for nor a near miss.
        ctx = AnswerContext(asked_part(question), self._bounded(history), scope)
        with Worker() as worker:
            await worker.run(self.finder.open, ctx)
            ctx.rewritten = await self._rewritten(ctx, worker)
            ctx.candidates = await self.finder.candidates(ctx, worker)
            await worker.run(self._judge, ctx)
            ctx.timings["before_answer_model"] = ms(ctx.began)
            if not ctx.decision.answer:
                refusal = await worker.run(self.refuse.run, ctx)
                yield refusal.text
                ctx.timings["total"] = ms(ctx.began)
                yield self._refused(ctx, refusal)
                return
            stream, mode = CitedStream(ctx.sources), "generative" if self.generate else "extractive"
            async for delta in self._text(ctx, worker):
                if delta is UNAVAILABLE:
                    mode = "extractive"
                elif out := stream.feed(delta):
                    yield out
            if tail := stream.flush():
                yield tail
            checked = await worker.run(self.cite.run, ctx, stream, mode == "generative")
        ctx.timings["total"] = ms(ctx.began)
        refused = checked.refused
        yield Answer(
            text=checked.text, citations=checked.check.citations, refused=refused,
            mode="refused" if refused else mode, sources=ctx.sources, uncited=checked.check.uncited,
            sentences=[s.to_dict() for s in checked.check.sentences],
            refusal_reason="the answer model found no answer in the sources" if refused else None,
            **self._told(ctx),
        )

    async def _rewritten(self, ctx: AnswerContext, worker: Worker) -> str | None:
        """The rewrite stage: the cache (in the worker), else the model (on the loop), then remembered."""
        if self.rewrite is None:
            return None
        lookup = await worker.run(self.rewrite.lookup, ctx)
        if not lookup.settled:
            lookup = await self.rewrite.run(ctx, lookup)
            if lookup.settled:
                await worker.run(self.rewrite.remember, ctx, lookup)
        return lookup.rewritten

    def _judge(self, ctx: AnswerContext) -> None:
        """Pool, parts and judge stages (the quotes too, of an extractive answer). In the worker."""
        ctx.candidates, ctx.sources = self.pool.run(ctx)
        self.parts.run(ctx)
        self.judging.run(ctx, extractive=self.generate is None)

    async def _text(self, ctx: AnswerContext, worker: Worker) -> AsyncIterator[str]:
        """The generate stage's deltas; the extract stage's lines without a model, or when it failed before
        writing anything (then `UNAVAILABLE` first)."""
        if self.generate is not None:
            unavailable = False
            async for delta in self.generate.run(ctx):
                unavailable = delta is UNAVAILABLE
                yield delta
            if not unavailable:
                return
            await worker.run(self._quote, ctx)
        if ctx.quotes:
            ctx.timings["first_token"] = ms(ctx.began)
        for line in self.extract.lines(ctx):
            yield line

    def _quote(self, ctx: AnswerContext) -> None:
        """The quotes that stand in for a failed answer model (the evidence first, if the gate did not need
        it). In the worker."""
        self.judging.stand_in(ctx)

    def _refused(self, ctx: AnswerContext, refusal: Refusal) -> Answer:
        return Answer(text=refusal.text, citations=[], refused=True, mode="refused", sources=refusal.related,
                      refusal_reason=ctx.decision.reason if ctx.decision else None, **self._told(ctx))

    def _told(self, ctx: AnswerContext) -> dict:
        """What every Answer reports of how it was made."""
        decision = ctx.decision
        return dict(question=ctx.question, rewritten_query=ctx.rewritten, index_version=ctx.version,
                    gate=decision.signals if decision else {}, models=self.models, timings_ms=ctx.timings,
                    notices=ctx.notices, failures=ctx.failures,
                    near_miss=list(decision.near_miss) if decision else [])

    def _bounded(self, history: list[tuple[str, str]] | None) -> list[tuple[str, str]]:
        """The most recent turns, each side cut to `history_chars`: a long thread cannot crowd out the sources."""
        if not history or not self.config.history_turns:
            return []
        limit = self.config.history_chars

        def cut(text: str) -> str:
            return text if len(text) <= limit else text[: limit - 1] + "…"

        return [(cut(q), cut(a)) for q, a in history[-self.config.history_turns :]]
