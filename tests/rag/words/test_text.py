from hypothesis import given, strategies as st

from rag.words.text import hard_split, sentence_spans


def _pieces(text, spans):
    return [text[a:b] for a, b in spans]


def test_chinese_sentences_keep_their_punctuation():
    text = "第一条 员工出差须申请。经批准后方可预订！是否报销？按规定；完毕"
    assert _pieces(text, sentence_spans(text)) == ["第一条 员工出差须申请。", "经批准后方可预订！", "是否报销？", "按规定；", "完毕"]


def test_latin_sentences_split_after_full_stop_and_space():
    text = "Meals are 45 EUR. Hotels e.g. in Paris cost more. Dr. Who agrees! Done"
    assert _pieces(text, sentence_spans(text)) == [
        "Meals are 45 EUR. ", "Hotels e.g. in Paris cost more. ", "Dr. Who agrees! ", "Done"
    ]


def test_closing_quotes_stay_with_their_sentence():
    text = "他说：“可以报销。”然后离开。"
    assert _pieces(text, sentence_spans(text)) == ["他说：“可以报销。”", "然后离开。"]


@given(st.text(alphabet=st.sampled_from(list("ab 。，.!?\n中文x")), max_size=300))
def test_spans_tile_the_text(text):
    spans = sentence_spans(text)
    assert "".join(_pieces(text, spans)) == text
    assert all(a < b for a, b in spans)


@given(st.text(min_size=1, max_size=2000), st.integers(min_value=10, max_value=300))
def test_hard_split_respects_the_limit_and_loses_nothing(text, limit):
    pieces = hard_split(text, 0, len(text), limit)
    assert "".join(text[a:b] for a, b in pieces) == text
    assert all(b - a <= limit for a, b in pieces)


def test_hard_split_prefers_clause_breaks():
    text = "甲" * 50 + "，" + "乙" * 50
    assert [b for _, b in hard_split(text, 0, len(text), 80)][0] == 51
