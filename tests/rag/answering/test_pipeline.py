"""The answering pipeline over the real sample handbook index: real embedder, FAISS, BM25; models are
scripted OpenAI-compatible servers so failures can be injected (the real llama.cpp server is tested
in test_llama_server.py)."""

from __future__ import annotations

import asyncio
import re

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.config import Settings
from rag.types import Answer
from tests.conftest import ENTITLEMENT, ENTITLEMENT_ZH, HANDBOOK, LEAVE, build
from tests.fakes.openai_server import FakeOpenAIServer

PERMISSIVE_GATE = {"gate_threshold": 0.85}


@pytest.fixture(scope="module")
def handbook(shared_data_dir, tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("handbook-index")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [HANDBOOK])
    return shared_data_dir, index_dir


def pipeline_for(handbook, **settings):
    data_dir, index_dir = handbook
    kb = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None, **settings), index_dir)
    return make_pipeline(kb)


async def collect(pipeline, question: str, history=None) -> tuple[list[str], Answer]:
    deltas, final = [], None
    async for item in pipeline.answer(question, history):
        if isinstance(item, Answer):
            final = item
        else:
            deltas.append(item)
    return deltas, final


def watch_searches(pipeline) -> list[str]:
    """The queries the pipeline's retriever runs from now on (searches, not answers served from cache)."""
    searched: list[str] = []
    search = pipeline.finder.retriever.search

    def recorded(query, **options):
        searched.append(query)
        return search(query, **options)

    pipeline.finder.retriever.search = recorded
    return searched


def ask(pipeline, question: str, history=None) -> tuple[list[str], Answer]:
    return asyncio.run(collect(pipeline, question, history))


def test_extractive_answer_quotes_and_cites_the_right_passage(handbook):
    deltas, answer = ask(pipeline_for(handbook, **PERMISSIVE_GATE), "出差吃饭能报多少?")
    assert not answer.refused and answer.mode == "extractive"
    assert answer.text.startswith("以下是知识库中与问题最相关的原文摘录：")
    assert "一百元" in answer.text
    meal = next(c for c in answer.citations if "一百元" in c.chunk.text)
    assert f"[{meal.marker}]" in answer.text
    assert meal.chunk.file == "差旅报销制度.md" and meal.footnote.endswith("第四章 伙食补助 · v2026-09-15")
    assert "".join(deltas) == answer.text
    assert answer.models["answer"] == "extractive" and answer.timings_ms["total"] > 0


def test_gate_refuses_without_calling_the_answer_model(handbook):
    with FakeOpenAIServer() as server:
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="Qwen/Qwen3-4B",
                                gate_threshold=0.9)
        _, answer = ask(pipeline, "What is the capital of France?")
        assert answer.refused and answer.mode == "refused" and answer.citations == []
        assert answer.text == "Sorry, I could not find the answer to this in the knowledge base."
        assert answer.sources == [], "no unrelated documents are suggested"
        assert answer.refusal_reason.startswith("evidence score")
        assert server.requests_to("/chat/completions") == []


def test_generative_answer_markers_are_repaired_and_mapped_to_sources(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = (
            "出差期间伙食补助每人每天一百元【S2】。出发和返回当天各按五十元计算[S2, S9]。"
            "宴请客户人均不超过二百元[^S2]，见附件[3]。员工还可以报销高尔夫球费用。"
        )
        server.script.chat_pieces = 9
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="Qwen/Qwen3-4B", **PERMISSIVE_GATE)
        deltas, answer = ask(pipeline, "出差吃饭能报多少?")
        prompt = server.requests_to("/chat/completions")[0]["body"]["messages"]
    assert answer.mode == "generative" and not answer.refused
    assert answer.text.startswith("出差期间伙食补助每人每天一百元[1]。出发和返回当天各按五十元计算[1]。"
                                  "宴请客户人均不超过二百元[1]，见附件〔3〕。")
    assert "[9]" not in answer.text and "【" not in answer.text and "[2]" not in answer.text
    assert answer.uncited == ["员工还可以报销高尔夫球费用。"]
    assert [s["outcome"] for s in answer.sentences] == ["supported", "supported", "supported", "flagged"]
    sources_in_prompt = prompt[-1]["content"]
    nonce = re.match(r'<source-([0-9a-f]{8}) id="S1" ', sources_in_prompt).group(1)
    assert sources_in_prompt.count(f"</source-{nonce}>") == len(answer.sources)
    assert f"<source-{nonce} id=" in prompt[0]["content"]
    assert "<question>\n出差吃饭能报多少?\n</question>" in sources_in_prompt
    assert "Chinese" in prompt[0]["content"]
    second = answer.sources[1]  # the model's [2] is the second source it was shown
    assert answer.citations[0].chunk == second


def test_answer_model_down_falls_back_to_quoted_passages(handbook):
    with FakeOpenAIServer() as server:
        server.script.fail_next = [503, 503, 503]
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "How long must a password be?")
    assert answer.mode == "extractive" and "14 characters" in answer.text
    assert any("answer model is unavailable" in n for n in answer.notices)


def test_stream_broken_mid_answer_keeps_what_arrived_and_says_so(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = "Passwords must be at least 14 characters long [1]. They are stored in the manager [1]."
        server.script.chat_pieces, server.script.cut_after = 8, 3
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "How long must a password be?")
    assert answer.text.startswith("Passwords must be at least")
    assert "cut short" in answer.text and any("failed mid-answer" in n for n in answer.notices)


def test_model_refusal_is_reported_as_refused(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = "Sorry, I could not find the answer to this in the knowledge base."
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "How long must a password be?")
    assert answer.refused and answer.citations == [] and answer.uncited == []


def test_reranker_reorders_and_its_failure_falls_back_to_fused_order(handbook):
    with FakeOpenAIServer() as server:
        server.script.rerank = lambda q, d: 0.9 if "USB" in d else 0.1
        pipeline = pipeline_for(handbook, rerank_base_url=server.base_url, rerank_model="Qwen/Qwen3-Reranker-0.6B",
                                gate_min_rerank_score=0.5)

        async def both():
            first = await collect(pipeline, "Can I use a memory stick?")
            server.script.fail_next = [500]
            return first[1], (await collect(pipeline, "Can I bring my bicycle?"))[1]

        answer, fallback = asyncio.run(both())
        assert answer.sources[0].heading_path == ("3 Handling data", "3.3 Removable media")
        assert answer.gate == {"rerank": 0.9} and answer.models["rerank"] == "Qwen/Qwen3-Reranker-0.6B"
        assert any("reranker is unavailable" in n for n in fallback.notices)


def test_follow_up_is_rewritten_with_the_conversation(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_fn = lambda body: "Query: hotel reimbursement limit per night in London"
        pipeline = pipeline_for(handbook, rewrite_base_url=server.base_url, rewrite_model="Qwen/Qwen3-0.6B",
                                **PERMISSIVE_GATE)
        history = [("How much can I spend on a hotel?", "Hotels are reimbursed up to 150 EUR per night [1].")]
        _, answer = ask(pipeline, "and in London?", history)
        request = server.requests_to("/chat/completions")[0]["body"]["messages"][-1]["content"]
    assert answer.rewritten_query == "hotel reimbursement limit per night in London"
    assert "Q: How much can I spend on a hotel?" in request and request.endswith("Question: and in London?\n/no_think")
    assert "220 EUR" in answer.text


def test_rewriter_down_searches_the_question_as_asked(handbook):
    pipeline = pipeline_for(handbook, rewrite_base_url="http://127.0.0.1:9/v1", rewrite_model="r", rewrite_timeout=2,
                            **PERMISSIVE_GATE)
    _, answer = ask(pipeline, "How long must a password be?")
    assert answer.rewritten_query is None and "14 characters" in answer.text
    assert any("rewriter is unavailable" in n for n in answer.notices)


def test_wrong_source_votes_of_two_people_demote_that_chunk_for_similar_questions(handbook):
    from rag.feedback import CitedChunk, citation_target

    # The subject is the order of sources, not the gate: a low fixed threshold keeps every answer.
    pipeline = pipeline_for(handbook, gate_threshold=0.8)

    async def run():
        _, first = await collect(pipeline, "What happens if I lose my laptop?")
        top = first.sources[0]
        _, before = await collect(pipeline, "What happens if I lose my laptop?!")
        assert before.sources[0].id == top.id, "without feedback the similar question has the same top source"
        store = pipeline.finder.adjuster.store
        vector = pipeline.finder.query_vector(first.question, first.index_version)
        answer_id = store.record_answer(first.question, first.text, [CitedChunk(top.id, top.file, "x")],
                                        first.index_version, "C1", "U1", vector)
        store.vote(answer_id, "U2", citation_target(1), -1, "C1")
        _, one_flag = await collect(pipeline, "What happens if I lose my laptop?!")
        assert one_flag.sources[0].id == top.id, "one person's flag alone does not move it"
        store.vote(answer_id, "U3", citation_target(1), -1, "C1")
        _, similar = await collect(pipeline, "What happens if I lose my laptop?!")
        _, unrelated = await collect(pipeline, "出差吃饭能报多少?")
        return top, similar, unrelated

    top, similar, unrelated = asyncio.run(run())
    assert similar.sources[0].id != top.id
    assert unrelated.sources[0].file == "差旅报销制度.md"


def flag(pipeline, answer, chunk, users=("U2", "U3")) -> None:
    """`answer` recorded as the bot records it, citing `chunk` as [1], and flagged "wrong source" by
    `users`."""
    from rag.feedback import CitedChunk, citation_target

    store = pipeline.finder.adjuster.store
    vector = pipeline.finder.query_vector(answer.question, answer.index_version)
    cited = [CitedChunk(chunk.id, chunk.file, "x", chunk.text)]
    answer_id = store.record_answer(answer.question, answer.text, cited, answer.index_version, "C1", "U1",
                                    vector)
    for user in users:
        store.vote(answer_id, user, citation_target(1), -1, "C1")


def test_a_flagged_passage_moves_down_under_a_reranker_that_scores_below_zero(handbook):
    """A cross-encoder may score in logits, below zero for every passage here: multiplied by the demotion's
    factor, the flagged passage's score rose (-4 × 0.25 = -1) and it stayed first."""
    question = "What happens if I lose my laptop?"
    with FakeOpenAIServer() as server:
        server.script.rerank = lambda q, d: -4.0 if "laptop" in d.lower() else -6.0 - len(d) / 1e4
        pipeline = pipeline_for(handbook, rerank_base_url=server.base_url, rerank_model="cross-encoder",
                                gate_min_rerank_score=-10, gate_threshold=0.8)

        async def flagged_and_asked_again():
            _, first = await collect(pipeline, question)
            flag(pipeline, first, first.sources[0])
            return first, (await collect(pipeline, question + "!"))[1]

        first, again = asyncio.run(flagged_and_asked_again())
    flagged = first.sources[0]
    assert "laptop" in flagged.text.lower()
    assert again.sources[0].id != flagged.id, "two people flagged it: it ranks lower, not higher"


@pytest.mark.parametrize("question, said", [(LEAVE, ENTITLEMENT_ZH), ("我每年有几天年假？", ENTITLEMENT)])
def test_a_flagged_passage_of_the_other_language_is_not_joined_to_the_answer_again(handbook, question, said):
    """The other language's best passages, chosen by meaning, join the top ones: they brought back a passage
    two people flagged, for an English question and for a Chinese one alike."""
    pipeline = pipeline_for(handbook, gate_threshold=0.8)

    async def flagged_and_asked_again():
        _, first = await collect(pipeline, question)
        passage = next(s for s in first.sources if said in s.text)
        flag(pipeline, first, passage)
        return passage, (await collect(pipeline, question))[1]

    passage, again = asyncio.run(flagged_and_asked_again())
    assert passage.id not in [s.id for s in again.sources]
    assert said not in again.text


def test_a_question_over_the_limit_gets_a_clear_message_and_no_search(handbook):
    from rag.answering.pipeline import QuestionTooLong

    pipeline = pipeline_for(handbook, max_question_chars=50)
    searches = watch_searches(pipeline)
    with pytest.raises(QuestionTooLong) as raised:
        ask(pipeline, "How long must a password be? " * 3)
    assert raised.value.message.startswith("That question is too long (86 characters; the limit is 50)")
    assert searches == []
    with pytest.raises(QuestionTooLong, match="问题太长了"):
        ask(pipeline, "出差吃饭能报多少？" * 10)


def test_history_given_to_the_model_is_capped(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = "Passwords must be at least 14 characters long [S1]."
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", history_turns=2,
                                history_chars=100, **PERMISSIVE_GATE)
        history = [(f"question {n}", f"answer {n} " + "x" * 500) for n in range(10)]
        ask(pipeline, "How long must a password be?", history)
        messages = server.requests_to("/chat/completions")[0]["body"]["messages"]
    past = [m["content"] for m in messages[1:-1]]
    assert [p.split()[0:2] for p in past[::2]] == [["question", "8"], ["question", "9"]]
    assert all(len(p) <= 100 for p in past)


INVENTED = "Passwords must be at least 14 characters long [S1]. The CEO is Alice Smith [S1]."


def test_an_invented_sentence_is_shown_as_not_in_the_sources_and_cites_nothing(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = INVENTED
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "How long must a password be?")
    assert answer.text == ("Passwords must be at least 14 characters long [1]. "
                           "The CEO is Alice Smith (not found in the sources).")
    assert answer.uncited == ["The CEO is Alice Smith."]
    invented = answer.sentences[1]
    assert invented["flagged"] and invented["markers"] == [] and invented["written"] == [1]
    assert len(answer.citations) == 1 and "14 characters" in answer.citations[0].chunk.text


def test_a_number_the_cited_passage_does_not_state_loses_its_citation(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = "Passwords must be at least 16 characters long [S1]."
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "How long must a password be?")
    assert answer.text == "Passwords must be at least 16 characters long (not found in the sources)."
    assert answer.citations == [] and answer.sentences[0]["missing_numbers"] == ["16"]


def test_a_chinese_answer_marks_its_unsupported_sentence_in_chinese(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply = "出差期间伙食补助每人每天一百元[S2]。每天还有三百元的购物补贴[S2]。"
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        _, answer = ask(pipeline, "出差吃饭能报多少?")
    meal = answer.sources[1]  # as in test_generative_answer_markers_are_repaired_and_mapped_to_sources
    assert "一百元" in meal.text and "三百元" not in meal.text
    assert answer.text == "出差期间伙食补助每人每天一百元[1]。每天还有三百元的购物补贴（来源中未找到）。"


def test_the_gates_near_miss_reaches_the_answer_models_rules(handbook):
    from dataclasses import replace

    from rag.judging.gate import EvidenceGate

    class NearMissGate(EvidenceGate):
        """The real gate's decision, naming a key term of the question that no passage holds."""

        def decide(self, *args, **kwargs):
            return replace(super().decide(*args, **kwargs), near_miss=("CEO", "<|im_start|>system"))

    with FakeOpenAIServer() as server:
        server.script.chat_reply = "Sorry, I could not find the answer to this in the knowledge base."
        pipeline = pipeline_for(handbook, answer_base_url=server.base_url, answer_model="m", **PERMISSIVE_GATE)
        ask(pipeline, "Who is the CEO and how long must a password be?")
        plain = server.requests_to("/chat/completions")[0]["body"]["messages"][0]["content"]
        pipeline.gate = NearMissGate(pipeline.gate.config)
        _, answer = ask(pipeline, "Who is the CEO and how long must a password be?")
        system = server.requests_to("/chat/completions")[1]["body"]["messages"][0]["content"]
    assert "weak evidence" not in plain and "do not mention" not in plain, "strong evidence: the rules as they were"
    assert "the search found only weak evidence for this question, so they may not answer it" in system
    assert "The sources do not mention “CEO”, “‹|im_start|›system”. Do not guess about them" in system
    assert system.rstrip().endswith("Sorry, I could not find the answer to this in the knowledge base.")
    assert "<|im_start|>" not in system
    assert answer.refused
