"""Fuse stage: the hit lists of several queries (the question and its rewrite) as one ranking."""

from __future__ import annotations

from rag.judging.navigation import content_first
from rag.index.retrieval import reciprocal_rank_fusion
from rag.types import Hit


class Fuse:
    def __init__(self, rrf_k: int, depth: int) -> None:
        self.rrf_k = rrf_k
        self.depth = depth  # hits kept

    def run(self, lists: list[list[Hit]]) -> list[Hit]:
        """One list, best first, by reciprocal rank over `lists` (navigation passages after content, as each
        list ranks them); a hit keeps the best raw score each retriever gave it."""
        if len(lists) == 1:
            return lists[0][: self.depth]
        first_seen: dict[str, Hit] = {}
        position: dict[str, int] = {}
        best_scores: dict[str, dict[str, float]] = {}
        rankings: dict[str, list[tuple[int, float]]] = {}
        for n, hits in enumerate(lists):
            ranking = []
            for hit in hits:
                cid = hit.chunk.id
                if cid not in position:
                    position[cid], first_seen[cid], best_scores[cid] = len(position), hit, {}
                for name, value in hit.scores.items():
                    best_scores[cid][name] = max(best_scores[cid].get(name, value), value)
                ranking.append((position[cid], hit.score))
            rankings[f"query{n}"] = ranking
        ids = list(position)
        fused = [
            Hit(first_seen[ids[row]].chunk, score, first_seen[ids[row]].ranks, best_scores[ids[row]])
            for row, score, _, _ in reciprocal_rank_fusion(rankings, {}, self.rrf_k)
        ]
        return content_first(fused, lambda hit: hit.chunk.text)[: self.depth]
