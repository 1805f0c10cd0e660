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


class CountingEmbedder:
    """The real embedder, counting its calls of the model."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, []
        self.model_id = real.model_id

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.real.embed_queries(texts)


def test_a_question_and_its_translation_are_embedded_in_one_call_and_then_kept(handbook):
    kb = handbook.knowledge_base()
    embedder = CountingEmbedder(kb.embedder)
    vectors = Vectors(embedder, MemoryCache(), 60)
    question, translated = "How many days of paternity leave do I get?", "陪产假 天"
    pair = vectors.queries([question, translated], "v1")
    assert embedder.calls == [[question, translated]]
    assert np.allclose(pair[0], kb.embedder.embed_query(question), atol=1e-5)
    assert np.allclose(pair[1], kb.embedder.embed_query(translated), atol=1e-5)
    again = vectors.queries([translated, question, "陪产假 天"], "v1")
    assert len(embedder.calls) == 1 and np.allclose(again[0], pair[1]) and np.allclose(again[2], pair[1])
    vectors.queries([question], "v2")  # a new index version: asked again
    assert embedder.calls[-1] == [question]


def test_a_replica_reads_the_vectors_another_made_and_asks_redis_once_for_each(handbook, redis_process):
    from cache.redis_cache import RedisCache

    kb = handbook.knowledge_base()
    question = "Can my wife come on a business trip?"
    one = Vectors(CountingEmbedder(kb.embedder), RedisCache(redis_process.url), 60)
    made = one.queries([question, "wife"], "v1")
    other_cache = RedisCache(redis_process.url)
    other = Vectors(CountingEmbedder(kb.embedder), other_cache, 60)
    for _ in range(3):  # every stage of an answer asks for its question's vector
        again = other.queries(["wife", question], "v1")
    assert other.embedder.calls == [], "the other replica's vectors came from Redis"
    assert np.allclose(again[0], made[1]) and np.allclose(again[1], made[0])
    assert other_cache.stats.counts()["namespaces"]["query-embedding"] == {"hits": 2, "misses": 0}
