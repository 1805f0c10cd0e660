"""One published version of a Milvus index, searched through the same interface as a FAISS snapshot
(rag.index.search_index.SearchIndex). Nothing is held in memory but the manifest, the BM25 term statistics
and a bounded cache of the chunks lately returned: searches run in Milvus, hits are fetched by id."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np

from rag.index.milvus_schema import (
    CHUNK_FIELDS,
    HNSW_EF,
    call,
    chunks_filter,
    gloss_text,
    ids_filter,
    normalise,
    row_chunk,
    row_filter,
)
from rag.index.snapshot import Manifest
from rag.words.lexical import Idf, scoped_idf, tokenize
from rag.types import EVERYTHING, Chunk, Scope

_CACHED_CHUNKS = 4096
_UNITS_QUERY = 100  # chunks whose units one search reads


Place = tuple[str, tuple[str, ...]]  # a passage's collection and access list


class TermCounts:
    """Document frequency of our own BM25 tokens (rag.words.lexical), for the answer's support scoring, and which
    places (collection and access list) hold each token, for what an asker may read (`held_by`)."""

    def __init__(self, df: dict[str, int], documents: int, places: list[Place] | None = None,
                 held: dict[str, list[int]] | None = None) -> None:
        self.df = df
        self.documents = documents
        self.places = places  # None: an index written before they were counted
        self.held = held  # token → its places (by their position in `places`); None: one place holds them all

    @classmethod
    def count(cls, tokens: list[list[str]], places: list[Place] | None = None) -> TermCounts:
        """`places`: each passage's, aligned with `tokens`."""
        numbered = {place: n for n, place in enumerate(dict.fromkeys(places or ()))}
        spread = len(numbered) > 1  # one place holds every token: nothing to keep per token
        df: dict[str, int] = {}
        held: dict[str, set[int]] = {}
        for n, chunk_tokens in enumerate(tokens):
            for token in set(chunk_tokens):
                df[token] = df.get(token, 0) + 1
                if spread:
                    held.setdefault(token, set()).add(numbered[places[n]])
        if places is None:
            return cls(df, len(tokens))
        per_token = {t: sorted(found) for t, found in held.items()} if spread else None
        return cls(df, len(tokens), list(numbered), per_token)

    def idf(self, tokens: list[str]) -> dict[str, float]:
        """The same form as rag.index.lexical_index.LexicalIndex.idf."""
        n = max(self.documents, 1)
        return {t: float(math.log(1 + (n - self.df.get(t, 0) + 0.5) / (self.df.get(t, 0) + 0.5))) for t in tokens}

    def held_by(self, tokens: list[str], places: set[int]) -> set[str]:
        """Which of `tokens` a passage of one of `places` holds."""
        if self.held is None:
            return {t for t in tokens if self.df.get(t)} if 0 in places else set()
        return {t for t in tokens if not places.isdisjoint(self.held.get(t, ()))}

    def to_dict(self) -> dict[str, Any]:
        places = {"places": [[c, list(a)] for c, a in self.places]} if self.places is not None else {}
        return {"df": self.df, **places, **({"held": self.held} if self.held is not None else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any], documents: int) -> TermCounts:
        places = [(c, tuple(a)) for c, a in data["places"]] if "places" in data else None
        return cls(data["df"], documents, places, data.get("held"))


class _Chunks:
    """Chunks by id, fetched from Milvus on demand (what `by_id` offers the answer cache)."""

    def __init__(self, snapshot: MilvusSnapshot) -> None:
        self._snapshot = snapshot

    def get(self, chunk_id: str, default: Any = None) -> Chunk | None:
        return self._snapshot.fetch([chunk_id]).get(chunk_id, default)

    def __getitem__(self, chunk_id: str) -> Chunk:
        chunk = self.get(chunk_id)
        if chunk is None:
            raise KeyError(chunk_id)
        return chunk

    def __contains__(self, chunk_id: object) -> bool:
        return isinstance(chunk_id, str) and self.get(chunk_id) is not None


class MilvusSnapshot:
    def __init__(self, client: Any, collection: str, manifest: Manifest, terms: TermCounts,
                 gloss_terms: TermCounts | None = None, sentences: str | None = None) -> None:
        self.client = client
        self.collection = collection  # searched by name, not alias: one query sees one version
        self.manifest = manifest
        self.terms = terms
        self.gloss_terms = gloss_terms  # the glosses' document frequencies (None: no glosses)
        self._cache: OrderedDict[str, tuple[Chunk, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()
        self.sentences = sentences  # the passages' units' collection (rag.index.sentences; None: none)
        described = {f["name"] for f in call(client.describe_collection, collection).get("fields", [])}
        self.fields = [f for f in CHUNK_FIELDS if f in described]
        # Written before collections and access lists: a collection is then its first folder (no lists yet).
        self.legacy = "collection" not in described
        self.gloss_field = "gloss_sparse" in described  # written with room for glosses (rag.words.bilingual.gloss)

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def lexical(self) -> TermCounts:
        return self.terms

    @property
    def by_id(self) -> _Chunks:
        return _Chunks(self)

    @property
    def chunks(self) -> Iterator[Chunk]:
        """Every chunk, streamed (for an incremental reindex)."""
        for batch in self._scan(self.fields):
            yield from (row_chunk(row) for row in batch)

    def ids(self) -> set[str]:
        return {row["id"] for batch in self._scan(["id"]) for row in batch}

    def _scan(self, fields: list[str]) -> Iterator[list[dict[str, Any]]]:
        found = call(self.client.query_iterator, self.collection, batch_size=2000, filter="", output_fields=fields)
        while batch := call(found.next):
            yield batch
        found.close()

    def vector(self, chunk_id: str) -> np.ndarray:
        self.fetch([chunk_id])
        with self._lock:
            return self._cache[chunk_id][1]

    def row_filter(self, prefix: str | None, allowed: Scope = EVERYTHING) -> str | None:
        return row_filter(prefix, allowed, legacy=self.legacy)

    @property
    def scoped_terms(self) -> bool:
        return self.terms.places is not None or self.legacy  # (a legacy collection has no access lists)

    def term_weights(self, allowed: Scope = EVERYTHING) -> Idf:
        places = self.terms.places
        if allowed.unrestricted or places is None or self.legacy:  # (places unknown: as a whole, until the
            return self.terms.idf                                    # next reindex writes them)
        admitted = {n for n, (collection, access) in enumerate(places) if allowed.admits(collection, access)}
        if len(admitted) == len(places):
            return self.terms.idf
        return scoped_idf(self.terms.idf, lambda tokens: self.terms.held_by(tokens, admitted))

    def dense_ranking(self, vector: np.ndarray, k: int, row_filter: str | None) -> list[tuple[str, float]]:
        found = call(self.client.search, self.collection, data=[np.asarray(vector, dtype=np.float32).tolist()],
                           anns_field="dense", limit=k, filter=row_filter or "", output_fields=["id"],
                           search_params={"metric_type": "IP", "params": {"ef": max(HNSW_EF, k)}})
        return [(hit["id"], float(hit["distance"])) for hit in found[0]]

    def bm25_ranking(self, query: str, k: int, row_filter: str | None) -> tuple[list[tuple[str, float]], None]:
        return self._bm25(normalise(query), k, row_filter), None

    def _bm25(self, text: str, k: int, row_filter: str | None,
              field: str = "sparse") -> list[tuple[str, float]]:
        """BM25 of `text` (as `field` holds its text: normalised, or gloss tokens) over the text's sparse
        vectors or the glosses'."""
        found = call(self.client.search, self.collection, data=[text], anns_field=field, limit=k,
                     filter=row_filter or "", output_fields=["id"], search_params={"metric_type": "BM25"})
        # Milvus Lite 3.2 reports BM25 as a negated distance, the server as the score: BM25 is never negative.
        ranked = [(hit["id"], abs(float(hit["distance"]))) for hit in found[0]]
        return [(key, score) for key, score in ranked if score > 0]

    def gloss_ranking(self, query: str, k: int,
                      row_filter: str | None) -> tuple[list[tuple[str, float]], None]:
        return self._gloss_bm25(query, k, row_filter), None

    def gloss_scores(self, keys: list[str], query: str, state: None) -> dict[str, float]:
        found = dict(self._gloss_bm25(query, len(keys), ids_filter(keys))) if keys else {}
        return {key: found.get(key, 0.0) for key in keys}

    def _gloss_bm25(self, query: str, k: int, row_filter: str | None) -> list[tuple[str, float]]:
        text = gloss_text(tokenize(query))
        if not self.gloss_field or self.gloss_terms is None or not text:
            return []
        return self._bm25(text, k, row_filter, "gloss_sparse")

    def exact_scores(self, keys: list[str], vector: np.ndarray, query: str,
                     bm25_state: None) -> dict[str, dict[str, float]]:
        self.fetch(keys)
        query_vector = np.asarray(vector, dtype=np.float32)
        with self._lock:
            dense = {key: float(self._cache[key][1] @ query_vector) for key in keys if key in self._cache}
        # BM25 of exactly these chunks: a search restricted to them returns each one's score.
        bm25 = dict(self._bm25(normalise(query), len(keys), ids_filter(keys)))
        return {"dense": dense, "bm25": {key: bm25.get(key, 0.0) for key in keys}}

    def sentence_scores(self, keys: list[str], vector: np.ndarray) -> dict[str, float]:
        """Each key's best unit cosine, found in Milvus: a search among the keys' units grouped by chunk returns
        each chunk's closest unit (FLAT: exact), nothing but that score crossing the wire."""
        if self.sentences is None or not keys:
            return {}
        query_vector = np.asarray(vector, dtype=np.float32).tolist()
        wanted = list(dict.fromkeys(keys))
        best: dict[str, float] = {}
        for start in range(0, len(wanted), _UNITS_QUERY):
            part = wanted[start : start + _UNITS_QUERY]
            found = call(self.client.search, self.sentences, data=[query_vector], anns_field="dense",
                         limit=len(part), filter=chunks_filter(part), group_by_field="chunk", group_size=1,
                         output_fields=["chunk"], search_params={"metric_type": "IP"})
            best.update((hit["entity"]["chunk"], float(hit["distance"])) for hit in found[0])
        return best

    def chunks_at(self, keys: list[str]) -> list[Chunk]:
        found = self.fetch(keys)
        return [found[key] for key in keys if key in found]

    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks (and vectors) by id, from the cache or Milvus; ids no longer indexed are left out."""
        with self._lock:
            missing = [i for i in dict.fromkeys(ids) if i not in self._cache]
        if missing:
            rows = call(self.client.get, self.collection, ids=missing, output_fields=[*self.fields, "dense"])
            with self._lock:
                for row in rows:
                    self._cache[row["id"]] = (row_chunk(row), np.asarray(row["dense"], dtype=np.float32))
                while len(self._cache) > max(_CACHED_CHUNKS, len(ids)):
                    self._cache.popitem(last=False)
        with self._lock:
            return {i: self._cache[i][0] for i in ids if i in self._cache}
