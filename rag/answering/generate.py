"""Generate stage: the answer model's text, streamed as it arrives (a model call, on the event loop)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from rag.answering.context import AnswerContext, ms
from rag.judging.gate import GateDecision
from rag.words.languages import ByLanguage, detect_language
from rag.models.chat import ChatModel, ModelError
from rag.answering.prompt import EvidenceNote, build_prompt

_log = logging.getLogger(__name__)

INTERRUPTED = ByLanguage({
    "zh": "（回答中断：答案模型出现问题，以上内容可能不完整。）",
    "en": "(The answer was cut short because the answer model failed; what is above may be incomplete.)",
    "de": "(Die Antwort wurde abgebrochen, weil das Antwortmodell ausgefallen ist; der Text oben ist "
          "womöglich unvollständig.)",
    "fr": "(La réponse a été interrompue car le modèle de réponse a échoué\u202f; ce qui précède est "
          "peut-être incomplet.)",
    "es": "(La respuesta se interrumpió porque falló el modelo de respuesta; lo anterior puede estar "
          "incompleto.)",
    "pt": "(A resposta foi interrompida porque o modelo de resposta falhou; o que está acima pode estar "
          "incompleto.)",
    "it": "(La risposta è stata interrotta per un errore del modello di risposta; quanto sopra potrebbe "
          "essere incompleto.)",
    "ja": "（回答モデルの障害により回答が中断されました。上の内容は不完全な可能性があります。）",
    "ko": "(답변 모델에 문제가 생겨 답변이 중단되었습니다. 위 내용은 불완전할 수 있습니다.)",
})


class Unavailable(str):
    """Yielded instead of text when the answer model failed before writing any: the caller quotes instead."""


UNAVAILABLE = Unavailable("")


class Generate:
    def __init__(self, model: ChatModel, max_tokens: int) -> None:
        self.model = model
        self.max_tokens = max_tokens

    async def run(self, ctx: AnswerContext) -> AsyncIterator[str]:
        """Deltas from the answer model, told what the gate judged; a failure mid-answer ends the text with a
        note, one before any text yields `UNAVAILABLE`."""
        prompt = build_prompt(ctx.question, ctx.sources, ctx.history, note=evidence_note(ctx.decision))
        produced = False
        try:
            async for delta in self.model.stream(prompt.messages, max_tokens=self.max_tokens):
                if not produced:
                    ctx.timings["first_token"] = ms(ctx.began)
                    produced = True
                yield delta
            ctx.timings["generate"] = ms(ctx.began) - ctx.timings.get("first_token", 0.0)
        except ModelError as exc:
            _log.warning("answer model failed: %s", exc)
            if produced:
                ctx.failed("answer", exc.kind, f"The answer model failed mid-answer ({exc.kind}).")
                yield "\n\n" + INTERRUPTED[detect_language(ctx.question)]
                return
            ctx.failed("answer", exc.kind,
                       f"The answer model is unavailable ({exc.kind}); showing quoted passages instead.")
            yield UNAVAILABLE


def evidence_note(decision: GateDecision | None) -> EvidenceNote:
    """What the gate judged, for the answer model: weak when some key term of the question is in no passage."""
    near_miss = decision.near_miss if decision is not None else ()
    return EvidenceNote("weak" if near_miss else "strong", tuple(near_miss))
