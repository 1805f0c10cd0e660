from __future__ import annotations

import numpy as np

from cache.memory import MemoryCache
from rag.answering.vectors import Vectors
from rag.index.work_cache import text_key


def test_passage_vectors_outlive_the_answer_cache_in_the_work_cache(handbook):
    kb = handbook.knowledge_base()
    sentence = "A sentence to quote, embedded once per knowledge base (vectors stage)."
    first = Vectors(kb.embedder, MemoryCache(), 60, kb.work_cache)
    vector = first.passages([sentence, sentence])
    assert vector.shape[0] == 2 and np.allclose(vector[0], vector[1])
    stored = kb.work_cache.get_vectors(kb.embedder.model_id, [text_key(sentence)])
    assert np.allclose(stored[text_key(sentence)], vector[0])
    restarted = Vectors(kb.embedder, MemoryCache(), 60, kb.work_cache)
    assert np.allclose(restarted.passages([sentence])[0], vector[0])
    query = first.query("How long must a password be?", "v1")
    assert np.allclose(first.query("How long must a password be?", "v1"), query)
    assert not np.allclose(query, vector[0]), "a query is embedded in its own form"
