"""Hybrid retrieval: dense and BM25 (FAISS + bm25s, or Milvus) run concurrently, then are fused — by weighted reciprocal rank
fusion, or by a weighted sum of min-max normalised scores, which also scores each candidate with the
retriever that did not find it (exact cosine, exact BM25).

Score fusion is aware of each passage's language: BM25 cannot match across languages, so a passage in
another language than the question is scored by BM25 only on the question's names, numbers and codes,
scaled among such passages, and by dense alone when BM25 sees none of them."""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rag.words.bilingual import GLOSSED_LANGUAGE, translate
from rag.embedding.base import Embedder
from rag.index.search_index import IndexStore, Ranking, SearchIndex
from rag.words.jargon import spelled_out
from rag.words.languages import detect_language, is_known, passage_language
from rag.words.lexical import TOKENIZER_NAME, tokenize
from rag.judging.navigation import content_first
from rag.judging.scales import comparable, measured_across, translation_for
from rag.judging.sections import named_section
from rag.words.synonyms import expanded, is_key
from rag.types import EVERYTHING, Chunk, Hit, Scope

Mode = Literal["hybrid", "dense", "bm25"]
MODES: tuple[str, ...] = ("hybrid", "dense", "bm25")
FUSION_METHODS: tuple[str, ...] = ("rrf", "scores")
# A candidate whose own section the question names ("my first day": "Your first day") is lifted by this much
# of the fused scale (0 to 1), among the first NAMED_DEPTH: its sentences need not repeat the heading's
# words ("Arrive at 9:30 at the reception desk"). All of lawref (445 of its 1,232 questions name a chapter or
# section among their first 20: 租赁合同, 诉讼时效, 土地经营权…): MRR@10 .445 -> .450, R@1 .355 -> .362, R@5
# .563 -> .567; a bonus of 0.08 / 0.15 / 0.2 / 0.3: MRR@10 .450 / .447 / .442 / .435.
NAMED_SECTION_BONUS = 0.1
NAMED_DEPTH = 20
# An English question's BM25 on a Chinese passage is this much its BM25 on the passage's gloss (rag.words.bilingual.
# gloss), the rest its translated words' on the passage itself (with_glosses). English questions on all of
# lawref (lawref-en / lawref-en-more), answers holding the gold article: .462 / .300 without glosses; with
# the gloss BM25 scaled by its best, .500 / .325 at a weight of .4 and .5, .462 / .325 at .3, .423 / .350 at
# .7, the larger of the two .346 / .325. Scaled by its best alone it cost the handbook sets two honest near
# misses, by the whole `ideal` the lawref gain; by half of it, one near miss (over all the question's words
# it put the handbook's 陪产假 rule 5th; over its key words, 1st: BENCHMARKS.md).
GLOSS_WEIGHT = 0.5
GLOSS_IDEAL_SHARE = 0.5


class IndexMismatchError(RuntimeError):
    """The query embedder is not the model the index was built with."""


@dataclass(frozen=True)
class FusionConfig:
    method: str = "scores"  # "scores" (weighted min-max normalised scores) or "rrf"
    rrf_k: int = 60
    dense_weight: float = 0.6
    bm25_weight: float = 0.4
    candidates: int = 100  # per retriever, before fusion

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise ValueError(f"fusion method must be one of {', '.join(FUSION_METHODS)}")
        if self.rrf_k <= 0 or self.candidates <= 0:
            raise ValueError("rrf_k and candidates must be positive")
        if self.dense_weight < 0 or self.bm25_weight < 0 or self.dense_weight + self.bm25_weight == 0:
            raise ValueError("fusion weights must be non-negative and not both zero")


@dataclass
class SearchTimings:
    embed_ms: float = 0.0
    dense_ms: float = 0.0
    bm25_ms: float = 0.0
    total_ms: float = 0.0


Fused = tuple[Hashable, float, dict[str, int], dict[str, float]]  # key, fused score, ranks, scores


def reciprocal_rank_fusion(
    rankings: dict[str, list[tuple[int, float]]], weights: dict[str, float], k: int
) -> list[Fused]:
    """Fuse ranked (row, score) lists: score(row) = Σ weight_r / (k + rank_r). Ties keep first-seen order."""
    fused: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    scores: dict[int, dict[str, float]] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 1.0)
        for rank, (row, score) in enumerate(ranking, start=1):
            fused[row] = fused.get(row, 0.0) + weight / (k + rank)
            ranks.setdefault(row, {})[name] = rank
            scores.setdefault(row, {})[name] = score
    order = sorted(fused, key=lambda row: -fused[row])
    return [(row, fused[row], ranks[row], scores[row]) for row in order]


def score_fusion(
    rankings: dict[str, list[tuple[int, float]]], exact: dict[str, dict[int, float]],
    weights: dict[str, float], foreign: dict[int, float] | None = None, sighted: bool = False,
    scaled: bool = False,
) -> list[Fused]:
    """Fuse by Σ weight_r · minmax_r(score): every candidate found by any retriever carries every
    retriever's exact score (`exact[r][row]`), normalised over the candidates.

    `foreign` holds the rows in another language than the question, with their BM25 score on the tokens
    that can match across languages: their BM25 is scaled among themselves, not against same-language
    passages' full matches, and when it is zero for all of them — BM25 is blind to them — they are not
    pulled down: their BM25 is taken as the same-language candidates' typical (mean) one, or, when every
    candidate is foreign, they are scored by the other retrievers alone. Unless `sighted`: BM25 read them
    through the question translated word for word, so a zero is a miss (an English question's unrelated
    Chinese passages). `scaled`: `foreign`'s BM25 is on a 0-to-1 scale of its own already (with_glosses)."""
    foreign = foreign or {}
    rows = list(dict.fromkeys(row for ranking in rankings.values() for row, _ in ranking))
    ranks = {row: {} for row in rows}
    for name, ranking in rankings.items():
        for rank, (row, _) in enumerate(ranking, start=1):
            ranks[row][name] = rank
    normalised = {name: _minmax(by_row, rows) for name, by_row in exact.items()}
    fused = dict.fromkeys(rows, 0.0)
    total = sum(weights.get(name, 1.0) for name in exact) or 1.0
    for row in rows:
        if row not in foreign:
            fused[row] = sum(weights.get(name, 1.0) / total * normalised[name][row] for name in exact)
    if foreign:
        # BM25 ≥ 0 and sparse across languages: scaled by its best among the foreign rows, so a lone match
        # counts fully. When it matched none of them, taken as the same-language candidates' mean, not as
        # their best: scored by dense alone, a German question's English rule outranked the German one as
        # close by meaning that holds the question's words (trilingual, BENCHMARKS.md); with no
        # same-language candidate, the weights are those of the retrievers that see them.
        top = 1.0 if scaled else max(foreign.values())
        seen = {name: normalised[name] for name in exact if name != "bm25"}
        if (top > 0 or sighted) and "bm25" in exact:
            seen["bm25"] = {row: value / top if top > 0 else 0.0 for row, value in foreign.items()}
        elif "bm25" in exact and len(foreign) < len(rows):
            own = [normalised["bm25"][row] for row in rows if row not in foreign]
            seen["bm25"] = dict.fromkeys(foreign, sum(own) / len(own))
        share = sum(weights.get(name, 1.0) for name in seen) or 1.0
        for row in foreign:
            if row in fused:
                fused[row] = sum(weights.get(name, 1.0) / share * seen[name][row] for name in seen)
    order = sorted(rows, key=lambda row: -fused[row])
    shown = {row: {name: exact[name].get(row, 0.0) for name in exact} for row in rows}
    return [(row, fused[row], ranks[row], shown[row]) for row in order]


def named_sections_first(query: str, fused: list[Fused],
                         chunks: list[Chunk]) -> tuple[list[Fused], list[Chunk]]:
    """`fused` (with its `chunks`) reordered after adding `NAMED_SECTION_BONUS` to the score of each passage
    whose own section `query` names (rag.judging.sections)."""
    if len(chunks) != len(fused):  # a backend drops keys it no longer holds: then lift none
        return fused, chunks
    asked = set(tokenize(query))
    named = [bool(named_section(asked, chunk.heading_path)) for chunk in chunks]
    lifted = [(key, score + NAMED_SECTION_BONUS * lift, rank, raw)
              for (key, score, rank, raw), lift in zip(fused, named)]
    order = sorted(range(len(lifted)), key=lambda n: -lifted[n][1])
    return [lifted[n] for n in order], [chunks[n] for n in order]


def _minmax(by_row: dict[int, float], rows: list[int]) -> dict[int, float]:
    values = np.array([by_row.get(row, 0.0) for row in rows], dtype=np.float64)
    low, high = (values.min(), values.max()) if len(values) else (0.0, 0.0)
    spread = high - low
    scaled = (values - low) / spread if spread > 0 else np.zeros_like(values)
    return {row: float(value) for row, value in zip(rows, scaled)}


def _lifted(exact: dict[str, dict[Hashable, float]], foreign: dict[Hashable, float], language: str,
            languages: dict[Hashable, str]) -> dict[str, dict[Hashable, float]]:
    """`exact` with each other-language passage's cosine lifted toward its language's own scale
    (rag.judging.scales.comparable): across languages the embedded model scores every passage lower, so without
    this a question's own-language passages outrank the other language's answer."""
    if not foreign or "dense" not in exact:
        return exact
    dense = dict(exact["dense"])
    for key in foreign:
        if key in dense:
            dense[key] = comparable(dense[key], language, languages[key], "dense")
    return {**exact, "dense": dense}


# A passage in the question's language is read by the mean of its own cosine and its best sentence's: the mean
# found the gold passage among the top five more often than either alone on the choosing corpora (dense R@5
# clef-handbook .750 -> .812, apollo-zh .500 -> .562; training/screen_sentence_retrieval.py, BENCHMARKS.md).
SENTENCE_SHARE = 0.5


def by_sentences(exact: dict[str, dict[Hashable, float]],
                 best: dict[Hashable, float]) -> dict[str, dict[Hashable, float]]:
    """`exact` with each cosine of a passage in `best` (its best sentence's cosine, rag.index.sentences) mixed
    in by `SENTENCE_SHARE`: a question in the asker's own words often matches one sentence of a passage closely
    and the passage as a whole loosely."""
    if not best or "dense" not in exact:
        return exact
    dense = {key: (1 - SENTENCE_SHARE) * value + SENTENCE_SHARE * best[key] if key in best else value
             for key, value in exact["dense"].items()}
    return {**exact, "dense": dense}


def _mixed(exact: dict[str, dict[Hashable, float]], translated: dict[str, dict[Hashable, float]],
           language: str) -> dict[str, dict[Hashable, float]]:
    """`exact` with the cosine of each passage in `translated` (the other language's) measured partly
    against the translated question (rag.judging.scales.measured_across): across languages the embedded model
    relates a question to passages loosely, and a bag of the passages' own words more closely (English
    questions on all of lawref, R@5 .231 -> .500; BENCHMARKS.md)."""
    dense = dict(exact["dense"])
    for key, cosine in translated["dense"].items():
        dense[key] = measured_across(dense[key], cosine, language)
    return {**exact, "dense": dense}


def with_glosses(foreign: dict[Hashable, float], glossed: dict[Hashable, float],
                 languages: dict[Hashable, str], ideal: float) -> dict[Hashable, float] | None:
    """`foreign`'s BM25 (the translated question's, on each passage in another language) scaled by its best,
    with each glossed passage's share `GLOSS_WEIGHT` its BM25 on the gloss instead: the dictionary's picks for
    the question's words and the passage's own words translated both count. The gloss BM25 is scaled by its
    best, or by GLOSS_IDEAL_SHARE of `ideal` (a gloss holding each of the question's key words once) when
    that is more: a gloss that holds only the question's commonest word ("year" of "a bonus at the end of
    the year") counts little. None when no gloss holds any of the question's words."""
    glossy = [key for key in foreign if languages.get(key) == GLOSSED_LANGUAGE]
    best_gloss = max((glossed.get(key, 0.0) for key in glossy), default=0.0)
    if best_gloss <= 0:
        return None
    best, scale = max(foreign.values()), max(best_gloss, GLOSS_IDEAL_SHARE * ideal)
    scaled = {key: value / best if best > 0 else 0.0 for key, value in foreign.items()}
    for key in glossy:
        scaled[key] = (1 - GLOSS_WEIGHT) * scaled[key] + GLOSS_WEIGHT * glossed.get(key, 0.0) / scale
    return scaled


def holds_translation_target(snapshot: SearchIndex, language: str) -> bool:
    """Whether the index may hold passages in the dictionary's other language than `language` (one of the
    known two): only those are read through the question translated word for word."""
    if not is_known(language):
        return False
    languages = snapshot.manifest.languages
    return languages is None or any(other != language and is_known(other) for other in languages)


def holds_other_language(snapshot: SearchIndex, language: str) -> bool:
    """Whether the index holds passages in another language than `language` (also when not known: an index
    made before passages' languages were counted)."""
    languages = snapshot.manifest.languages
    return languages is None or any(other != language for other in languages)


def cross_language_query(query: str, language: str) -> str:
    """What of `query` can match a passage in another language: its names, numbers and codes (a Chinese
    question's Latin-script and digit text; an English question's words, which a Chinese passage holds
    only as such), and its words translated by the bilingual dictionary (rag.words.bilingual)."""
    if not is_known(language):
        # No dictionary: the question as written. Its names, codes and cognates match, and a knowledge base
        # written in its language keeps its word search (only its codes: R@5 .851 vs .816 on squad2 asked in
        # German, French and Japanese, the same answers; BENCHMARKS.md).
        return query
    translated = translate(query, language)
    return translated if language == "zh" else f"{query} {translated}".strip()


class PassageLanguages:
    """Each passage's language (rag.words.languages.passage_language), worked out the first time the
    passage is a candidate and kept for the snapshot's lifetime: a dictionary look-up at query time."""

    def __init__(self) -> None:
        self._version: str | None = None
        self._known: dict[Hashable, str] = {}
        self._lock = threading.Lock()

    def of(self, snapshot: SearchIndex, keys: list[Hashable]) -> dict[Hashable, str]:
        with self._lock:
            if self._version != snapshot.version:
                self._version, self._known = snapshot.version, {}
            known = self._known
        missing = [key for key in keys if key not in known]
        if missing:
            chunks = snapshot.chunks_at(missing)
            if len(chunks) == len(missing):  # a backend drops keys it no longer holds: then judge none
                known.update({key: passage_language(c) for key, c in zip(missing, chunks)})
        return {key: known[key] for key in keys if key in known}


class Retriever:
    """Searches the live snapshot; picks up a newly published snapshot on the next query."""

    def __init__(self, store: IndexStore, embedder: Embedder, fusion: FusionConfig | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.fusion = fusion or FusionConfig()
        self._snapshot: SearchIndex | None = None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="retrieve")
        self._languages = PassageLanguages()

    @property
    def snapshot(self) -> SearchIndex:
        version = self.store.current_version()
        current = self._snapshot
        if current is None or current.version != version:
            with self._lock:
                if self._snapshot is None or self._snapshot.version != self.store.current_version():
                    snapshot = self.store.load_current()
                    self._check_compatible(snapshot)
                    self._snapshot = snapshot
                current = self._snapshot
        return current

    @property
    def loaded(self) -> SearchIndex | None:
        """The index in memory, without loading one (None until the first search or warm-up)."""
        return self._snapshot

    def _check_compatible(self, snapshot: SearchIndex) -> None:
        manifest = snapshot.manifest
        if manifest.embedding_model != self.embedder.model_id:
            raise IndexMismatchError(
                f"the index was built with embedding model {manifest.embedding_model} (dim {manifest.dim}) "
                f"but queries would use {self.embedder.model_id}; run `ai-employee index` to rebuild it "
                "or set the AIE_EMBED_* variables back"
            )
        if manifest.dim != self.embedder.dim:
            raise IndexMismatchError(
                f"the index has dimension {manifest.dim} but the embedder produces {self.embedder.dim}; "
                "run `ai-employee index` to rebuild"
            )
        if manifest.tokenizer != TOKENIZER_NAME:
            raise IndexMismatchError("the index was built with another BM25 tokenizer; run `ai-employee index`")

    def search(self, query: str, **options: Any) -> list[Hit]:
        """Top-k hits for `query`; options as for `search_timed`."""
        return self.search_timed(query, **options)[0]

    def search_timed(
        self,
        query: str,
        top_k: int = 10,
        mode: Mode = "hybrid",
        path_prefix: str | None = None,
        query_vector: np.ndarray | None = None,
        allowed: Scope = EVERYTHING,
        translated_vector: np.ndarray | None = None,
        index: SearchIndex | None = None,
    ) -> tuple[list[Hit], SearchTimings]:
        """Top-k hits and where the time went; `path_prefix` keeps only files under that folder (or that
        file), `allowed` only passages that scope allows (both inside each retriever, so top-k is filled from them);
        `query_vector` skips embedding the query (when the caller already has it), `translated_vector` the
        question translated (`translation`); `index` the version an answer already reads (default: the live one)."""
        if not query or not query.strip():
            raise ValueError("query must not be empty")
        if top_k <= 0:
            raise ValueError("top_k must be positive")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        began = time.perf_counter()
        snapshot = index or self.snapshot
        timings = SearchTimings()
        row_filter = snapshot.row_filter(path_prefix, allowed)
        depth = max(top_k, self.fusion.candidates)
        language = detect_language(query)
        fused_by_scores = mode == "hybrid" and self.fusion.method == "scores"
        across = fused_by_scores and holds_other_language(snapshot, language)
        translating = across and holds_translation_target(snapshot, language)
        translated = translation_for(query, language) if translating else ""
        rankings: dict[str, Ranking] = {}
        found: dict[str, Any] = {}

        def dense() -> Ranking:
            t0 = time.perf_counter()
            vector, other = query_vector, translated_vector if translated else None
            if vector is None or (translated and other is None):
                vector, other = self._embed(query, translated, vector)
            t1 = time.perf_counter()
            result = snapshot.dense_ranking(vector, depth, row_filter)
            if other is not None:
                found["translated_vector"] = other
                found["translated_dense"] = snapshot.dense_ranking(other, depth, row_filter)
            found["vector"] = vector
            timings.embed_ms = (t1 - t0) * 1000
            timings.dense_ms = (time.perf_counter() - t1) * 1000
            return result

        # BM25 also looks for the knowledge base's own words for the question's words it never uses
        # (rag.words.synonyms: "bike" finds "Bicycle parking"), of the passages `allowed` reads.
        lexical_query = expanded(query, snapshot.term_weights(allowed))

        def bm25() -> Ranking:
            t0 = time.perf_counter()
            result, found["bm25"] = snapshot.bm25_ranking(lexical_query, depth, row_filter)
            timings.bm25_ms = (time.perf_counter() - t0) * 1000
            return result

        if mode == "hybrid":
            dense_future = self._pool.submit(dense)
            rankings["bm25"] = bm25()
            if translating:
                rankings.update(self._translated(snapshot, query, language, depth, row_filter))
            if translating and language != GLOSSED_LANGUAGE:
                rankings["glossed"], found["glossed"] = snapshot.gloss_ranking(query, depth, row_filter)
            rankings["dense"] = dense_future.result()
            if "translated_dense" in found:
                rankings["translated_dense"] = found["translated_dense"]
        elif mode == "dense":
            rankings["dense"] = dense()
        else:
            rankings["bm25"] = bm25()
        weights = {"dense": self.fusion.dense_weight, "bm25": self.fusion.bm25_weight}
        if fused_by_scores:
            keys = list({key for ranking in rankings.values() for key, _ in ranking})
            exact = snapshot.exact_scores(keys, found["vector"], lexical_query, found.get("bm25")) if keys else {}
            foreign: dict[Hashable, float] = {}
            languages: dict[Hashable, str] = {}
            sighted = scaled = False
            if across:
                languages = self._languages.of(snapshot, keys)
                foreign, sighted = self._foreign(snapshot, keys, query, language, languages, found["vector"],
                                                 exact)
                if rankings.get("glossed") and foreign:
                    foreign, scaled = self._glossed(snapshot, query, foreign, languages, found["glossed"])
            # The question translated word for word reads only passages of the dictionary's other language.
            translatable = [key for key in foreign if is_known(languages.get(key, ""))]
            if translatable and "translated_vector" in found:
                against = snapshot.exact_scores(translatable, found["translated_vector"], "", None)
                exact = _mixed(exact, against, language)
            fusing = _lifted(exact, foreign, language, languages)
            own = [key for key in keys if key not in foreign]
            fusing = by_sentences(fusing, snapshot.sentence_scores(own, found["vector"]))
            fused = score_fusion(rankings, fusing, weights, foreign, sighted, scaled)[:max(top_k, NAMED_DEPTH)]
            chunks = snapshot.chunks_at([key for key, _, _, _ in fused])
            # A heading of the other language is named by the question's words translated ("第一天": "Your
            # first day")
            naming = f"{lexical_query} {translate(query, language)}" if translating else lexical_query
            fused, chunks = named_sections_first(naming, fused, chunks)
            fused, chunks = fused[:top_k], chunks[:top_k]
            # Each hit shows its scores as measured (for a passage in the other language, its cosine measured
            # partly against the translated question); the gate puts the cosine on its own scale itself.
            fused = [(key, score, rank, {name: exact[name].get(key, 0.0) for name in exact})
                     for key, score, rank, _ in fused]
        else:
            fused = reciprocal_rank_fusion(rankings, weights, self.fusion.rrf_k)[:top_k]
            chunks = snapshot.chunks_at([key for key, _, _, _ in fused])
        hits = [Hit(chunk, score, rank, raw) for chunk, (_, score, rank, raw) in zip(chunks, fused)]
        # A table of contents shares the names of the pages it lists with the question, and answers none
        hits = content_first(hits, lambda hit: hit.chunk.text)
        timings.total_ms = (time.perf_counter() - began) * 1000
        return hits, timings

    def translation(self, query: str, index: SearchIndex | None = None) -> str:
        """What a hybrid search of `query` also embeds: `query` translated word for word, when the knowledge
        base (`index`, default: the live one) holds passages in the other language and cosines across that
        language pair are measured partly against it (rag.judging.scales.translation_for); "" otherwise."""
        language = detect_language(query)
        if self.fusion.method != "scores" or not holds_translation_target(index or self.snapshot, language):
            return ""
        return translation_for(query, language)

    def _embed(self, query: str, translated: str,
               vector: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The query's vector (unless given) and its translation's (unless ""), in one call of the model."""
        texts = ([spelled_out(query)] if vector is None else []) + ([translated] if translated else [])
        vectors = list(self.embedder.embed_queries(texts))
        if vector is None:
            vector = vectors.pop(0)
        return vector, (vectors[0] if translated else None)

    @staticmethod
    def _translated(snapshot: SearchIndex, query: str, language: str, depth: int,
                    row_filter: Any) -> dict[str, Ranking]:
        """BM25's ranking of the question translated word for word: candidates in the other language that
        dense retrieval, across languages, ranks too low to bring (fused as any candidate is)."""
        translated = translate(query, language)
        if not translated.strip() or translated == query:
            return {}
        return {"translated": snapshot.bm25_ranking(translated, depth, row_filter)[0]}

    @staticmethod
    def _glossed(snapshot: SearchIndex, query: str, foreign: dict[Hashable, float],
                 languages: dict[Hashable, str], state: Any) -> tuple[dict[Hashable, float], bool]:
        """`foreign` with_glosses, and whether it is on a scale of its own now (unchanged when no gloss holds
        any of the question's words)."""
        glossed = snapshot.gloss_scores(list(foreign), query, state)
        ideal = sum(snapshot.gloss_terms.idf([t for t in tokenize(query) if is_key(t)]).values())
        mixed = with_glosses(foreign, glossed, languages, ideal)
        return (mixed, True) if mixed is not None else (foreign, False)

    @staticmethod
    def _foreign(snapshot: SearchIndex, keys: list[Hashable], query: str, language: str,
                 languages: dict[Hashable, str], vector: np.ndarray,
                 exact: dict[str, dict[Hashable, float]]) -> tuple[dict[Hashable, float], bool]:
        """The candidates in another language than `query` (in `language`), with their BM25 score on the
        tokens that can match across languages, and whether those include the question's translated words.
        A passage in a language the dictionary does not know is scored on the question as written (its
        names, codes and cognates)."""
        foreign = [key for key in keys if languages.get(key, language) != language]
        if not foreign:
            return {}, False
        unknown = {key: exact["bm25"].get(key, 0.0) for key in foreign if not is_known(languages.get(key, ""))}
        translatable = [key for key in foreign if key not in unknown]
        cross = cross_language_query(query, language)
        sighted = bool(translatable) and bool(translate(query, language).strip())
        if cross == query or not translatable:
            return {key: exact["bm25"].get(key, 0.0) for key in foreign}, sighted
        if not cross.strip():
            return dict.fromkeys(translatable, 0.0) | unknown, False
        scores = snapshot.exact_scores(translatable, vector, cross, None)["bm25"]
        return {key: scores.get(key, 0.0) for key in translatable} | unknown, sighted

    def close(self) -> None:
        self._pool.shutdown(wait=False)

