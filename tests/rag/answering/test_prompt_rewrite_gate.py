import pytest

from rag.judging.extractive import extract_answer
from rag.judging.gate import EvidenceGate, GateConfig, lexical_coverage
from rag.words.languages import detect_language
from rag.answering.prompt import REFUSALS, build_prompt
from rag.answering.rewriter import clean_rewrite, rewrite_messages
from rag.types import Chunk, Hit


def chunk(text: str, title: str = "Travel Policy", section=("Meals",), page=None, n: int = 1) -> Chunk:
    return Chunk(f"c{n}", f"f{n}.md", title, section, text, 0, len(text), page, page, "v1", "2026-01-01")


def idf(tokens):
    return {t: 1.0 for t in tokens}


def test_language_detection():
    assert detect_language("出差吃饭能报多少?") == "zh"
    assert detect_language("How many vacation days do I get?") == "en"
    assert detect_language("VPN 怎么连") == "zh"
    assert REFUSALS[detect_language("年假有几天")].startswith("抱歉")  # the refusal in the asker's language


def test_prompt_numbers_sources_with_location_and_keeps_history():
    sources = [chunk("Meals are 45 EUR.", page=3), chunk("Hotels 150 EUR.", section=("Hotels",), n=2)]
    prompt = build_prompt("How much for meals?", sources, history=[("Hi", "Hello [1].")], nonce="0a1b2c3d")
    assert [m["role"] for m in prompt.messages] == ["system", "user", "assistant", "user"]
    user = prompt.messages[-1]["content"]
    assert ('<source-0a1b2c3d id="S1" from="Travel Policy › Meals" page="3">\nMeals are 45 EUR.\n</source-0a1b2c3d>'
            in user)
    assert '<source-0a1b2c3d id="S2" from="Travel Policy › Hotels">\nHotels 150 EUR.\n</source-0a1b2c3d>' in user
    assert user.endswith("<question>\nHow much for meals?\n</question>")
    assert prompt.messages[2]["content"] == "Hello.", "an earlier answer's markers are not this answer's"
    assert prompt.refusal in prompt.messages[0]["content"] and "English" in prompt.messages[0]["content"]
    with pytest.raises(ValueError):
        build_prompt("q", [])


def test_rewrite_cleaning():
    assert clean_rewrite("Query: 差旅 伙食补助 标准\n(explanation)", "出差吃饭能报多少") == "差旅 伙食补助 标准"
    assert clean_rewrite('"annual leave entitlement days"', "how many vacation days") == "annual leave entitlement days"
    assert clean_rewrite("", "q") is None and clean_rewrite("same", "same") is None
    messages = rewrite_messages("and for managers?", [("How many days?", "26 days [1].")])
    assert "Q: How many days?\nA: 26 days." in messages[-1]["content"]


LONG_TRAVEL = ("Economy class is the standard for every flight booked through the travel portal, whatever the "
               "destination and whoever travels. Business class needs CFO approval for flights over ten hours. "
               "Upgrades paid with personal miles are always allowed and need no approval at all.")


def test_extractive_answer_quotes_the_sentence_with_the_question_terms():
    sources = [chunk(LONG_TRAVEL), chunk("The daily meal allowance is 45 EUR.", n=2)]
    text = extract_answer("When is business class allowed?", sources, idf)
    assert text.splitlines()[0].startswith("Quoted passages")
    assert "Business class needs CFO approval for flights over ten hours." in text.splitlines()[1]
    assert text.splitlines()[1].endswith(" [S1]") and "[S2]" not in text


def test_a_short_paragraph_is_quoted_whole():
    article = "第九条 出差期间按天发放伙食补助，标准为每人每天一百元；出发和返回当天各按五十元计算。伙食补助包干使用，无需提供餐饮发票。"
    text = extract_answer("伙食补助标准是多少", [chunk(article)], idf)
    assert text.splitlines()[1] == f"> {article} [S1]"


def test_extractive_similarity_decides_between_lexical_candidates():
    long = ("Meals cost money, and travellers are reminded that restaurants near airports and stations are often "
            "expensive, so plan ahead where you can. The meal allowance is 45 EUR per day. Receipts are not needed "
            "for the daily allowance, which is paid with the next salary.")
    text = extract_answer("meal allowance per day", [chunk(long)], idf,
                          similarity=lambda sentences: [0.9 if "45" in s else 0.1 for s in sentences])
    assert text.splitlines()[1].startswith("> The meal allowance is 45 EUR per day.")


def test_nothing_is_quoted_when_no_sentence_shares_a_word_with_the_question():
    assert extract_answer("What is the capital of France?", [chunk("The daily meal allowance is 45 EUR.")], idf) is None


def test_gate_with_reranker_scores():
    gate = EvidenceGate(GateConfig(min_rerank_score=0.5))
    hits = [Hit(chunk("x"), 0.1)]
    assert not gate.decide("q", hits, idf, [0.2]).answer
    assert gate.decide("q", hits, idf, [0.7]).answer


def test_gate_without_reranker_combines_dense_and_coverage():
    gate = EvidenceGate(GateConfig(dense_weight=1.0, coverage_weight=0.5, threshold_zh=1.0, threshold_en=1.0,
                                   use_evidence=False))
    strong = [Hit(chunk("The daily meal allowance is 45 EUR."), 0.1, {"dense": 1}, {"dense": 0.8})]
    weak = [Hit(chunk("Parking is assigned by lottery.", title="Office", section=("Parking",)), 0.1, {"dense": 1}, {"dense": 0.8})]
    assert lexical_coverage("daily meal allowance", strong, idf) == 1.0
    assert gate.decide("daily meal allowance", strong, idf).answer
    decision = gate.decide("daily meal allowance", weak, idf)
    assert not decision.answer and decision.signals["coverage"] == 0.0
    assert not gate.decide("anything", [], idf).answer


def test_gate_threshold_follows_the_language_and_a_cross_language_cosine_is_put_on_its_scale():
    from rag.judging.scales import comparable, on_passage_scale

    gate = EvidenceGate(GateConfig(dense_weight=1.0, coverage_weight=0.0, threshold_zh=0.9, threshold_en=0.8,
                                   use_evidence=False))
    english_hits = [Hit(chunk("The daily meal allowance is 45 EUR."), 0.1, {"dense": 1}, {"dense": 0.85})]
    chinese_hits = [Hit(chunk("出差期间按天发放伙食补助，标准为每人每天一百元。"), 0.1, {"dense": 1}, {"dense": 0.85})]
    english, chinese = gate.decide("meal allowance?", english_hits, idf), gate.decide("伙食补助是多少?", chinese_hits, idf)
    assert english.answer and english.signals["threshold"] == 0.8
    assert not chinese.answer and chinese.signals["threshold"] == 0.9
    # A Chinese question, an English passage: the cosine on English's scale is reported; a threshold set by
    # hand is the question's language's, read on the cosine as compared across languages.
    across = gate.decide("伙食补助是多少?", [Hit(english_hits[0].chunk, 0.1, {"dense": 1}, {"dense": 0.78})], idf)
    assert across.signals["dense"] == round(on_passage_scale(0.78, "zh", "en", "dense"), 4) and across.signals["dense"] > 0.78
    compared = comparable(0.78, "zh", "en", "dense")
    assert across.signals["threshold"] == 0.9 and across.signals["combined"] == round(compared, 4)
    assert 0.78 < compared < on_passage_scale(0.78, "zh", "en", "dense") and not across.answer


def test_with_sentence_evidence_the_gate_uses_the_model_of_the_passages_language():
    from rag.judging.evidence import Evidence
    from rag.judging.gate import AnswerabilityModel

    models = {"zh": AnswerabilityModel({"sentence": 10.0}, -9.0), "en": AnswerabilityModel({"sentence": 10.0}, -8.0)}
    gate = EvidenceGate(GateConfig(models=models))
    hits = [Hit(chunk("The daily meal allowance is 45 EUR."), 0.1, {"dense": 1}, {"dense": 0.85})]
    chinese_hits = [Hit(chunk("出差期间按天发放伙食补助，标准为每人每天一百元。"), 0.1, {"dense": 1}, {"dense": 0.85})]
    evidence = Evidence([], signals={"sentence": 0.85, "sentence_coverage": 0.5, "missing_names": 0.0})
    english, chinese = gate.decide("meal allowance?", hits, idf, evidence=evidence), \
        gate.decide("伙食补助是多少?", chinese_hits, idf, evidence=evidence)
    assert english.answer and english.signals["answerability"] == 0.5
    assert not chinese.answer and chinese.reason == "answerability -0.500 < 0.000"
    assert chinese.signals["sentence"] == 0.85 and chinese.signals["dense"] == 0.85
    without = EvidenceGate(GateConfig(models=models, use_evidence=False, threshold_zh=0.8))
    assert without.decide("伙食补助是多少?", chinese_hits, idf, evidence=evidence).answer, "the cosine rule when told so"


def test_a_threshold_set_by_hand_also_refuses_to_answer_the_opposite_of_the_question():
    from rag.judging.evidence import Evidence
    from rag.judging.gate import OPPOSITE

    gate = EvidenceGate(GateConfig(threshold_en=0.8, use_evidence=False))
    hits = [Hit(chunk("Company laptops are encrypted with BitLocker."), 0.1, {"dense": 1}, {"dense": 0.9})]
    opposite = Evidence([], opposite=True)
    decision = gate.decide("Which laptops are not encrypted?", hits, idf, evidence=opposite)
    assert not decision.answer and decision.reason == OPPOSITE
    assert gate.decide("Which laptops are encrypted?", hits, idf, evidence=Evidence([])).answer
