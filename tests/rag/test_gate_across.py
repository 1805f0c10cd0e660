"""The evidence gate across languages, on real data: Chinese questions about English Wikipedia paragraphs
(../shared/datasets/squad2), answered when the best English sentence holds the question's words translated
by the bilingual dictionary, while a Chinese legal question asked of the same paragraphs stays refused."""

from __future__ import annotations

import shutil

import pytest

from rag.knowledge_base import KnowledgeBase
from tests.conftest import DATASETS, build
from tests.rag.test_gate_lawref import outcomes

SQUAD = DATASETS / "squad2"


@pytest.fixture(scope="module")
def squad_kb(tmp_path_factory):
    """All of squad2's articles, indexed from the dataset's precomputed vectors (a copy of its work cache)."""
    from rag.config import Settings

    data_dir = tmp_path_factory.mktemp("squad-data")
    shutil.copyfile(DATASETS / "lawref" / "embeddings" / "cache.sqlite3", data_dir / "cache.sqlite3")
    # The precomputed vectors are the passages', not their sentences': embedding these would take most of
    # the suite's time (tests/rag/index/test_sentences.py reads passages by their sentences on real statutes).
    kb = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None, sentence_search=False), data_dir / "index")
    build(kb, [SQUAD / "docs"])
    return kb


def test_a_chinese_question_whose_words_the_english_sentence_holds_translated_is_answered(squad_kb):
    """Both were refused before the gate read the translated words (the model's cross-language cosines
    alone put them among unrelated questions)."""
    channel, founded = outcomes(squad_kb, ["泽西岛和根西岛在哪里？", "这所学校是哪一年创办的？"])
    assert not channel.refused, channel.gate
    assert "Channel Islands" in channel.text
    assert not founded.refused, founded.gate
    assert founded.citations and {c.chunk.file for c in founded.citations} == {"Harvard_University.md"}
    assert channel.gate["translated"] > 0.3 and founded.gate["translated"] > 0.3


def test_an_unrelated_chinese_question_is_still_refused(squad_kb):
    (storage,) = outcomes(squad_kb, ["仓储合同一定要以书面方式签订吗？"])
    assert storage.refused, storage.text
