"""Prompt for the answer model: numbered sources with title, section and page, and the answering rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.types import Chunk, SECTION_SEPARATOR

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")

REFUSALS = {
    "zh": "抱歉，知识库中没有找到这个问题的答案。",
    "en": "Sorry, I could not find the answer to this in the knowledge base.",
}

_SYSTEM = """You are the company's knowledge-base assistant. Answer the employee's question using only the numbered sources.

Rules:
1. Use only facts stated in the sources. Do not add knowledge of your own.
2. End every sentence that states a fact with the number of the source it comes from in square brackets, for example [1] or [2][3]. Cite only numbers that appear in the source list.
3. Answer in {language}, the language of the question.
4. If the sources do not answer the question, reply with exactly this sentence and nothing else: {refusal}
5. Be brief: a direct answer first, then the conditions or exceptions that matter."""

_LANGUAGE_NAMES = {"zh": "Chinese (简体中文)", "en": "English"}


def detect_language(text: str) -> str:
    """'zh' when the question is mostly Chinese, else 'en'."""
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return "zh" if cjk and cjk * 2 >= latin else "en"


def refusal_sentence(question: str) -> str:
    return REFUSALS[detect_language(question)]


def source_heading(number: int, chunk: Chunk) -> str:
    where = SECTION_SEPARATOR.join(p for p in (chunk.title, chunk.section) if p)
    page = f", p. {chunk.page}" if chunk.page else ""
    return f"[{number}] {where}{page}"


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, str]]
    language: str
    refusal: str


def build_prompt(question: str, sources: list[Chunk], history: list[tuple[str, str]] | None = None) -> Prompt:
    """Chat messages for the answer model; `history` is earlier (question, answer) turns, oldest first."""
    if not question.strip():
        raise ValueError("question must not be empty")
    if not sources:
        raise ValueError("at least one source is needed to build an answer prompt")
    language = detect_language(question)
    refusal = REFUSALS[language]
    system = _SYSTEM.format(language=_LANGUAGE_NAMES[language], refusal=refusal)
    blocks = []
    for number, chunk in enumerate(sources, start=1):
        lead = f"{chunk.lead}\n" if chunk.lead else ""
        blocks.append(f"{source_heading(number, chunk)}\n{lead}{chunk.text}")
    messages = [{"role": "system", "content": system}]
    for past_question, past_answer in history or []:
        messages.append({"role": "user", "content": past_question})
        messages.append({"role": "assistant", "content": past_answer})
    messages.append({"role": "user", "content": "Sources:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}"})
    return Prompt(messages, language, refusal)
