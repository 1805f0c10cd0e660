from rag.lexical import tokenize


def test_chinese_is_segmented_with_search_mode_and_stopwords_removed():
    tokens = tokenize("中华人民共和国道路交通安全法的规定")
    assert "道路" in tokens and "交通" in tokens and "中华人民共和国" in tokens
    assert "的" not in tokens


def test_latin_words_are_lowercased_and_stemmed():
    assert tokenize("The Employees are travelling") == ["employe", "travel"]


def test_mixed_text_and_full_width_characters():
    tokens = tokenize("出差用Ｕｂｅｒ报销50EUR")
    assert "uber" in tokens and "出差" in tokens and "报销" in tokens and "50eur" in tokens


def test_empty_and_punctuation_only():
    assert tokenize("") == [] and tokenize("？！。,.") == []
