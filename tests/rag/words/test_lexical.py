import os
import subprocess
import sys

import pytest

from rag.words.lexical import function_word, tokenize
from tests.conftest import PROJECT


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


def test_the_pipeline_loads_jieba_before_the_first_question(tmp_path):
    """`serve` makes the pipeline as it starts: jieba's dictionary is then read in a thread of its own, not
    by the first question (≈0.5 s, and in a burst of questions on the event loop's time)."""
    probe = (  # (waits for the load rather than for a thread that may have ended already)
        "import time\n"
        "from rag.knowledge_base import KnowledgeBase, make_pipeline\n"
        "from rag.words import lexical\n"
        "from rag.config import Settings\n"
        f"make_pipeline(KnowledgeBase.default(Settings(data_dir={str(tmp_path)!r})))\n"
        "deadline = time.monotonic() + 60\n"
        "while lexical._jieba is None and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print(lexical._jieba is not None)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=False,
                          cwd=PROJECT, env={k: v for k, v in os.environ.items() if not k.startswith("AIE_")})
    assert done.stdout.split() == ["True"], done.stderr[-2000:]


@pytest.mark.parametrize("word, function", [
    ("what's", True), ("doesn't", True), ("can’t", True), ("i'm", True), ("we'r", True), ("the", True),
    ("holiday", False), ("company's", False), ("o'clock", False), ("what", True),
])
def test_a_contraction_of_a_function_word_is_one(word, function):
    """tokenize keeps a contraction whole ("what's" stems to "what", "doesn't" stays): it is still a function
    word, never what the question asks about; a possessive or a word with an apostrophe is not."""
    assert function_word(word) is function
