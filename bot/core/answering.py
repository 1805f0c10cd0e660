"""Answer one question in a conversation, whatever the chat platform: stream the pipeline into a reply,
finish it with the cited answer, record it for feedback, and turn every failure into a short message.

A platform adapter supplies the `ReplySink` (how text reaches its users) and the `Question`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from bot.core.logs import described
from rag.answering.citations import NOT_IN_SOURCES
from rag.feedback import CitedChunk, FeedbackStore
from rag.index.snapshot import IndexNotFoundError
from rag.answering.framing import courtesy, courtesy_language
from rag.words.languages import ByLanguage, answer_language, detect_language
from rag.answering.pipeline import AnswerPipeline, QuestionTooLong
from rag.types import Answer, Scope

if TYPE_CHECKING:
    import numpy as np

    from bot.core.metrics import Metrics

_log = logging.getLogger(__name__)

GREETING = "Hi! Ask me anything about our policies and documents — I answer with sources you can check."
ASK_FOR_A_QUESTION = "Ask me a question about the company's documents"  # a message with nothing to search for
# The reply to a message that only greets or thanks ("hi!", "thanks!" under an answer): nothing to search for.
COURTESY_REPLIES = {
    "greeting": ByLanguage({
        "en": GREETING,
        "zh": "你好！关于公司的制度和文档，尽管问我——每个回答都附有可以核对的出处。",
        "de": "Hallo! Fragen Sie mich alles zu unseren Richtlinien und Dokumenten – ich antworte mit "
              "Quellen, die Sie prüfen können.",
        "fr": "Bonjour ! Posez-moi vos questions sur nos règles et documents — je réponds avec des sources "
              "vérifiables.",
        "es": "¡Hola! Pregúnteme lo que quiera sobre nuestras normas y documentos: respondo con fuentes que "
              "puede comprobar.",
        "pt": "Olá! Pergunte-me o que quiser sobre as nossas normas e documentos — respondo com fontes que "
              "pode verificar.",
        "it": "Ciao! Chiedimi pure delle nostre regole e dei nostri documenti: rispondo con fonti "
              "verificabili.",
        "ja": "こんにちは！社内の規程や文書について何でも聞いてください。確認できる出典を付けてお答えします。",
        "ko": "안녕하세요! 회사 규정과 문서에 대해 무엇이든 물어보세요. 확인할 수 있는 출처와 함께 답합니다.",
    }),
    "thanks": ByLanguage({
        "en": "You're welcome! Ask me anything else about our documents.",
        "zh": "不客气！还有其他问题随时问我。",
        "de": "Gern geschehen! Fragen Sie mich gern noch mehr zu unseren Dokumenten.",
        "fr": "Avec plaisir ! N’hésitez pas si vous avez d’autres questions sur nos documents.",
        "es": "¡De nada! Pregúnteme lo que necesite sobre nuestros documentos.",
        "pt": "De nada! Pergunte-me o que precisar sobre os nossos documentos.",
        "it": "Prego! Chiedimi pure altro sui nostri documenti.",
        "ja": "どういたしまして！ほかにも文書について何でも聞いてください。",
        "ko": "천만에요! 문서에 대해 더 궁금한 점이 있으면 물어보세요.",
    }),
}
FAILED = "Sorry, something went wrong while answering. Please try again in a moment."
NOT_FINISHED = ("Sorry, I could not put the finished answer in place, so its sources and buttons are "
                "missing. Please ask again in a moment.")


# The footer of an answer with sentences no source supports: (one sentence, several), in the answer's language.
UNSUPPORTED_NOTES = ByLanguage({
    "zh": ("有 1 句话在来源中找不到依据，已标注“{mark}”，不引用任何来源。",
           "有 {count} 句话在来源中找不到依据，已标注“{mark}”，不引用任何来源。"),
    "en": ("1 sentence is not backed by any source: it is marked “{mark}” and cites nothing.",
           "{count} sentences are not backed by any source: they are marked “{mark}” and cite nothing."),
    "de": ("1 Satz wird von keiner Quelle gestützt: Er ist mit „{mark}“ gekennzeichnet und zitiert nichts.",
           ("{count} Sätze werden von keiner Quelle gestützt: Sie sind mit „{mark}“ gekennzeichnet und zitieren "
           "nichts.")),
    "fr": (("1 phrase n’est étayée par aucune source\u00a0: elle est signalée par «\u202f{mark}\u202f» et ne cite "
           "rien."),
           ("{count} phrases ne sont étayées par aucune source\u00a0: elles sont signalées par «\u202f{mark}\u202f» "
           "et ne citent rien.")),
    "es": ("1 frase no está respaldada por ninguna fuente: está marcada con «{mark}» y no cita nada.",
           "{count} frases no están respaldadas por ninguna fuente: están marcadas con «{mark}» y no citan nada."),
    "pt": ("1 frase não é sustentada por nenhuma fonte: está marcada com «{mark}» e não cita nada.",
           "{count} frases não são sustentadas por nenhuma fonte: estão marcadas com «{mark}» e não citam nada."),
    "it": ("1 frase non è supportata da alcuna fonte: è contrassegnata con «{mark}» e non cita nulla.",
           ("{count} frasi non sono supportate da alcuna fonte: sono contrassegnate con «{mark}» e non citano "
           "nulla.")),
    "ja": ("出典で裏付けられていない文が 1 件あります。「{mark}」と表示し、出典を引用していません。",
           "出典で裏付けられていない文が {count} 件あります。「{mark}」と表示し、出典を引用していません。"),
    "ko": ("출처로 뒷받침되지 않는 문장이 1개 있습니다. ‘{mark}’ 표시를 붙였으며 출처를 인용하지 않습니다.",
           "출처로 뒷받침되지 않는 문장이 {count}개 있습니다. ‘{mark}’ 표시를 붙였으며 출처를 인용하지 않습니다."),
})


def unsupported_note(answer: Answer) -> str | None:
    """The footer of an answer with sentences no source supports (each is marked in the text itself), in
    the answer's language; None when there are none."""
    count = len(answer.uncited)
    if not count:
        return None
    language = answer_language(answer.question, answer.text)
    one, several = UNSUPPORTED_NOTES[language]
    # The mark as the sentence carries it, in the answer's language (Chinese keeps its full-width brackets).
    mark = NOT_IN_SOURCES[language].strip()
    return (one if count == 1 else several).format(count=count, mark=mark)


WARNING, UNSUPPORTED = "warning", "unsupported"  # the kinds of note below an answer (a surface marks each)


def answer_notes(answer: Answer) -> list[tuple[str, str]]:
    """The notes below a finished answer, in order, each with its kind: WARNING for what the pipeline noticed
    (e.g. a near miss), UNSUPPORTED for the sentences no source backs."""
    notes = [(WARNING, notice) for notice in answer.notices]
    unsupported = unsupported_note(answer)
    return notes + [(UNSUPPORTED, unsupported)] if unsupported else notes


def nothing_to_ask(text: str, empty: str) -> str | None:
    """The reply to a message with nothing to search for — `empty` (the platform's prompt) for a bare mention,
    the courtesy reply for "hi!" or "thanks!" — or None for a question."""
    return empty if not text else courtesy_reply(text)


def courtesy_reply(text: str) -> str | None:
    """The reply to a message that only greets or thanks (rag.answering.framing), in its language; None for a question.
    Searching for "thanks!" would answer that the knowledge base does not have it."""
    kind = courtesy(text)
    return COURTESY_REPLIES[kind][courtesy_language(text) or detect_language(text)] if kind else None


def no_index(reindex: str) -> str:
    """What users hear before the first index exists; `reindex` names the platform's way to build it."""
    return f"The knowledge base has not been built yet — an admin can build it with {reindex}."


class AnswerStopped(Exception):
    """The user stopped the answer (e.g. Slack's stop button): stop generating."""


class DeliveryError(Exception):
    """The chat platform refused or failed a call; `reason` is short and safe to log (no secrets)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# What a question may be answered from when its adapter says nothing: every collection, and never a document
# with an access list (as in a channel, where everyone reads the answer).
CHANNEL_DEFAULT = Scope(readers=frozenset())


@dataclass
class Question:
    text: str  # cleaned: no mentions, no platform markup
    conversation: str  # where the answer is recorded as given (a Slack channel, a Teams conversation)
    user: str
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier (question, answer) turns
    event_id: str = ""  # the platform's delivery id, for the logs
    platform: str = "slack"
    scope: Scope = CHANNEL_DEFAULT  # the place's collections and, in a direct message, who reads the answer


class ReplySink(Protocol):
    """Where one answer goes. Every method may raise DeliveryError; `append` may raise AnswerStopped."""

    async def append(self, text: str) -> None: ...

    async def finish(self, answer: Answer, answer_id: str | None) -> None:
        """Replace whatever was streamed with the finished answer (its text, citations, feedback controls)."""

    async def fail(self, message: str) -> None:
        """End with a short, human error message instead of an answer."""

    async def notice(self, message: str) -> None:
        """A short message of its own after whatever the reply already shows."""


class _Slot:
    """One of the Answerer's answer slots, held by the task answering; lent out while that task only waits."""

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self._slots = slots
        self.held = False
        self._owner: asyncio.Task | None = None

    async def __aenter__(self) -> _Slot:
        await self._slots.acquire()
        self.held = True
        self._owner = asyncio.current_task()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.held:
            self.held = False
            self._slots.release()

    def give_back(self) -> None:
        """The answer is made: what is left (delivering it at the platform's pace) only waits, so the slot goes
        to the next question for good."""
        if self.held and asyncio.current_task() is self._owner:
            self.held = False
            self._slots.release()

    @asynccontextmanager
    async def lent(self) -> AsyncIterator[None]:
        # Only the answering task itself may lend: a task it started (e.g. an SDK's stream drain, which inherits
        # the context) waiting does not mean the answer waits, and must not hand the slot on or take it back.
        if not self.held or asyncio.current_task() is not self._owner:
            yield
            return
        self.held = False
        self._slots.release()
        try:
            yield
        finally:
            await self._slots.acquire()  # cancelled meanwhile: not held, so not released twice
            self.held = True


_slot: ContextVar[_Slot | None] = ContextVar("answer_slot", default=None)


@asynccontextmanager
async def slot_lent() -> AsyncIterator[None]:
    """While the answer being worked on only waits (e.g. out a platform's rate limit), another question may
    use its slot; it waits its turn for one again afterwards."""
    slot = _slot.get()
    if slot is None:
        yield
        return
    async with slot.lent():
        yield


class Answerer:
    def __init__(self, pipeline: AnswerPipeline, feedback: FeedbackStore, *, max_concurrent: int = 4,
                 metrics: Metrics | None = None) -> None:
        self.pipeline = pipeline
        self.feedback = feedback
        self.metrics = metrics
        # Later questions wait their turn: retrieval and extractive answers are CPU work, so on a small
        # machine a burst of questions otherwise starves the acks and every answer. A slot is held while the
        # answer is made, not while the platform takes its final message (Teams then pauses a second).
        self._slots = asyncio.Semaphore(max_concurrent)

    async def answer(self, question: Question, reply: ReplySink, *,
                     no_index_message: str = no_index("the reindex command")) -> Answer | None:
        """The finished answer (None when it failed or was stopped; the user was told). One log line says
        how it went: platform, place, outcome and latency (the question's words only at DEBUG)."""
        arrived = time.monotonic()  # its wait for a free answer slot counts
        async with _Slot(self._slots) as slot:
            _slot.set(slot)  # in this task's own context (each event is answered in a task of its own)
            try:
                final, outcome = await self._answer(question, reply, no_index_message)
            finally:
                _slot.set(None)  # not reset(): a task closed at shutdown finishes in another context
        _log_question(question, outcome, time.monotonic() - arrived)
        return final

    async def _answer(self, question: Question, reply: ReplySink,
                      no_index_message: str) -> tuple[Answer | None, str]:
        """The finished answer, and the outcome the log says (answered, refused, stopped, unfinished, or the
        kind of failure)."""
        final: Answer | None = None
        stream = self.pipeline.answer(question.text, question.history, scope=question.scope)
        try:
            async for item in stream:
                if isinstance(item, Answer):
                    final = item
                else:
                    await reply.append(item)
        except AnswerStopped:
            await stream.aclose()
            return None, "stopped"
        except QuestionTooLong as exc:
            return None, await self._fail(reply, exc.message, question, "too_long")
        except IndexNotFoundError:
            return None, await self._fail(reply, no_index_message, question, "no_index")
        except Exception:  # noqa: BLE001 - the user gets a short message; the log gets the details
            _log.exception("answering failed", extra={"event_id": question.event_id})
            return None, await self._fail(reply, FAILED, question, "failed")
        if final is None:
            return None, await self._fail(reply, FAILED, question, "failed")
        if self.metrics is not None:
            self.metrics.answered(final, question.platform)
        answer_id = await self._record(final, question)
        if slot := _slot.get():
            slot.give_back()
        try:
            await reply.finish(final, answer_id)
        except Exception as exc:  # noqa: BLE001 - the platform refused the final message, or it failed to build
            reason = exc.reason if isinstance(exc, DeliveryError) else described(exc)
            _log.error("could not post the final answer: %s", reason, extra={"event_id": question.event_id})
            if self.metrics is not None:
                self.metrics.failed("unfinished", question.platform)
            await self._tell(reply.notice(NOT_FINISHED), question)
            return final, "unfinished"
        return final, "refused" if final.refused else "answered"

    async def _record(self, answer: Answer, question: Question) -> str | None:
        """The recorded answer's id; None when it could not be recorded (the answer is shown without votes)."""
        try:
            return await asyncio.to_thread(self.record, answer, question)  # an fsync'd write: off the loop
        except Exception as exc:  # noqa: BLE001 - e.g. the feedback database is locked or full
            _log.error("could not record the answer for feedback: %s", described(exc),
                       extra={"event_id": question.event_id})
            return None

    def record(self, answer: Answer, question: Question) -> str:
        """Keep the answer as shown, for feedback (blocking); its id."""
        cited = [CitedChunk(c.chunk.id, c.chunk.file, c.location, c.chunk.text, c.chunk.title, c.chunk.url)
                 for c in answer.citations]
        vector = self.question_vector(answer.question, answer.index_version)
        return self.feedback.record_answer(answer.question, answer.text, cited, answer.index_version,
                                           question.conversation, question.user, vector, platform=question.platform,
                                           scope=question.scope, sources=shown_uncited(answer))

    def question_vector(self, question: str, index_version: str) -> np.ndarray:
        """`question` embedded as retrieval embeds it for `index_version` (blocking): where votes are judged."""
        return self.pipeline.finder.query_vector(question, index_version)

    async def _fail(self, reply: ReplySink, message: str, question: Question, kind: str) -> str:
        """End the reply with `message`; `kind`, the failure's name in metrics and the log."""
        if self.metrics is not None:
            self.metrics.failed(kind, question.platform)
        await self._tell(reply.fail(message), question)
        return kind

    async def _tell(self, telling: Awaitable[None], question: Question) -> None:
        try:
            await telling
        except Exception as exc:  # noqa: BLE001 - nothing more can reach the user; the log says why
            reason = exc.reason if isinstance(exc, DeliveryError) else described(exc)
            _log.error("could not tell the user about a failure: %s", reason, extra={"event_id": question.event_id})


def _log_question(question: Question, outcome: str, seconds: float) -> None:
    """The question's one line in the log; its words only at DEBUG (they may be personal)."""
    line = f"question on {question.platform} in {question.conversation}: {outcome} in {seconds * 1000:.0f} ms"
    if _log.isEnabledFor(logging.DEBUG):
        line += f" — {question.text!r}"
    _log.info("%s", line, extra={"event_id": question.event_id})


def shown_uncited(answer: Answer) -> list[str]:
    """The files whose words `answer` may show without citing them: a refusal names the documents it suggests,
    and the answer model may have written from any passage it read. An extractive answer shows only what it
    cites."""
    return [] if answer.mode == "extractive" else [s.file for s in answer.sources]
