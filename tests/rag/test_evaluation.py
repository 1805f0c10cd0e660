from rag.evaluation import Gold, compute_metrics, is_hit

ARTICLE = "第五条 初次申领机动车号牌、行驶证的，应当向机动车所有人住所地的公安机关交通管理部门申请注册登记。\n\n申请机动车注册登记，应当交验机动车。"


def test_chunk_holding_the_start_of_the_article_hits():
    gold = Gold("a.md", ARTICLE)
    assert is_hit("a.md", "第四条 机动车的登记。\n\n" + ARTICLE[:60], gold)


def test_chunk_that_is_a_piece_of_the_article_hits():
    gold = Gold("a.md", ARTICLE)
    assert is_hit("a.md", ARTICLE[20:], gold)


def test_other_file_or_other_text_misses():
    gold = Gold("a.md", ARTICLE)
    assert not is_hit("b.md", ARTICLE, gold)
    assert not is_hit("a.md", "第六条 已注册登记的机动车，机动车所有人住所迁出公安机关交通管理部门管辖区域的。", gold)


def test_whitespace_is_ignored():
    gold = Gold("a.md", ARTICLE)
    assert is_hit("a.md", " ".join(ARTICLE[:80]), gold)


def test_metrics():
    metrics = compute_metrics([1, 3, None, 12], total_questions=5)
    assert metrics.answerable == 4 and metrics.questions == 5
    assert metrics.recall[1] == 0.25 and metrics.recall[5] == 0.5 and metrics.recall[100] == 0.75
    assert abs(metrics.mrr_at_10 - (1 + 1 / 3) / 4) < 1e-9


def test_a_gold_passage_copied_from_a_pages_source_hits_the_passage_as_it_reads():
    gold = Gold("travel.md", 'Book through the [travel desk]({% page "/travel/desk/" %}) &mdash; two weeks ahead.')
    assert is_hit("travel.md", "Book through the travel desk — two weeks ahead. Receipts are needed.", gold)
