"""The feedback loop on real questions: noise must not hurt, agreement must help.

    .venv/bin/python benchmarks/feedback_loop.py --data-dir DATA_DIR [--sets lawref,squad2] [--n 300]

Every question is answered by the production pipeline (embedded default, extractive), its citations
recorded in a fresh feedback store, and votes are cast with the gold passages standing in for users:
  * noise: one person votes 👎 on each of N answers whose citations include the gold passage — and, a
    harsher variant, one person also flags the gold citation "this source is wrong";
  * signal: two different people flag every non-gold citation of N answers that have one;
then the same questions are asked again (recall@5 and MRR@10 of the retrieval the answer is built from,
before and after). On squad2, questions about the same paragraph as a voted question (but not voted on
themselves) show what the votes do for similar questions, and all remaining questions whether anything
else moved. Last, the time `FeedbackAdjuster.demotions` takes per question with 10,000 votes stored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, percentiles, save, seeded_settings  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import Gold, first_hit_rank, is_hit  # noqa: E402
from rag.feedback import ANSWER, CitedChunk, FeedbackAdjuster, FeedbackRules, FeedbackStore, citation_target  # noqa: E402
from rag.types import Answer  # noqa: E402


def load(name: str) -> list[dict]:
    rows = [json.loads(line) for line in (DATASETS / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if r.get("answerable", True) and r.get("gold")]


def gold_of(row: dict) -> list[Gold]:
    return [Gold(g["file"], g["text"]) for g in row["gold"]]


class Loop:
    """One dataset's knowledge base with a fresh feedback store, asked through the real pipeline."""

    def __init__(self, settings: Settings, name: str, store_path: Path) -> None:
        store_path.unlink(missing_ok=True)
        dataset = DATASETS / name
        self.kb = KnowledgeBase.for_dataset(
            seeded_settings(settings, dataset).model_copy(update={"feedback_db": store_path}), dataset, [])
        self.kb.refresh([dataset / "docs"], [])
        self.pipeline = make_pipeline(self.kb)
        self.store: FeedbackStore = self.kb.feedback
        self.version = self.kb.retriever.snapshot.version

    def answer(self, question: str) -> Answer:
        async def run() -> Answer:
            async for item in self.pipeline.answer(question):
                if isinstance(item, Answer):
                    return item
            raise RuntimeError("no answer")

        return asyncio.run(run())

    def ranks(self, rows: list[dict]) -> list[int | None]:
        """Rank of the first gold passage in the candidates the answer is built from (with feedback)."""
        finder = self.pipeline.finder
        return [first_hit_rank(asyncio.run(finder.find(r["question"], None, self.version)).hits[:10], gold_of(r))
                for r in rows]

    def record(self, row: dict, answer: Answer) -> str:
        cited = [CitedChunk(c.chunk.id, c.chunk.file, c.location, c.chunk.text) for c in answer.citations]
        vector = self.pipeline.finder.query_vector(row["question"], self.version)
        return self.store.record_answer(row["question"], answer.text, cited, self.version, "bench", "asker", vector)


def quality(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {"recall@5": round(sum(r is not None and r <= 5 for r in ranks) / n, 4),
            "mrr@10": round(sum(1 / r for r in ranks if r is not None) / n, 4), "questions": len(ranks)}


def change(before: list[int | None], after: list[int | None]) -> dict[str, object]:
    b, a = quality(before), quality(after)
    return {"before": b, "after": a, "recall@5_change": round(a["recall@5"] - b["recall@5"], 4),
            "mrr@10_change": round(a["mrr@10"] - b["mrr@10"], 4)}


def answered(loop: Loop, rows: list[dict]) -> list[tuple[dict, Answer]]:
    out = []
    for n, row in enumerate(rows, 1):
        answer = loop.answer(row["question"])
        if not answer.refused and answer.citations:
            out.append((row, answer))
        if n % 200 == 0:
            print(f"  answered {n}/{len(rows)}", flush=True)
    return out


def noise(loop: Loop, pairs: list[tuple[dict, Answer]], n: int, flag_gold: bool) -> dict[str, object]:
    chosen = [(r, a) for r, a in pairs if _gold_markers(r, a)][:n]
    rows = [r for r, _ in chosen]
    before = loop.ranks(rows)
    for k, (row, answer) in enumerate(chosen):
        answer_id = loop.record(row, answer)
        loop.store.vote(answer_id, f"grumpy{k}", ANSWER, -1, "bench")
        if flag_gold:
            loop.store.vote(answer_id, f"grumpy{k}", citation_target(_gold_markers(row, answer)[0]), -1, "bench")
    return change(before, loop.ranks(rows))


def signal(loop: Loop, pairs: list[tuple[dict, Answer]], n: int) -> tuple[dict[str, object], list[dict]]:
    chosen = [(r, a) for r, a in pairs if len(_gold_markers(r, a)) < len(a.citations)][:n]
    rows = [r for r, _ in chosen]
    before = loop.ranks(rows)
    for row, answer in chosen:
        answer_id = loop.record(row, answer)
        gold = set(_gold_markers(row, answer))
        for citation in answer.citations:
            if citation.marker not in gold:
                for user in ("alice", "bob"):
                    loop.store.vote(answer_id, user, citation_target(citation.marker), -1, "bench")
    return change(before, loop.ranks(rows)), rows


def _gold_markers(row: dict, answer: Answer) -> list[int]:
    gold = gold_of(row)
    return [c.marker for c in answer.citations if any(is_hit(c.chunk.file, c.chunk.text, g) for g in gold)]


def demotion_cost(loop: Loop, rows: list[dict], votes: int = 10_000) -> dict[str, float]:
    """p50 time of FeedbackAdjuster.demotions per question with `votes` votes in a store of their own."""
    path = loop.store.path.with_name("cost.sqlite3")
    path.unlink(missing_ok=True)
    store = FeedbackStore(path, retention_days=0)
    rng = random.Random(5)
    finder = loop.pipeline.finder
    vectors = [finder.query_vector(r["question"], loop.version) for r in rows[:400]]
    chunks = loop.kb.retriever.snapshot.chunks
    while len(store.votes()) < votes:
        picks = rng.sample(chunks, 3)
        cited = [CitedChunk(c.id, c.file, c.title, c.text) for c in picks]
        answer_id = store.record_answer("q", "a", cited, loop.version, "bench", "asker", rng.choice(vectors))
        for user in range(5):
            store.vote(answer_id, f"u{user}", citation_target(rng.randint(1, 3)), rng.choice((-1, 1)), "bench")
    adjuster = FeedbackAdjuster(store, FeedbackRules())
    adjuster.demotions(vectors[0])  # the first call loads the votes
    samples = []
    for vector in vectors[:200]:
        began = time.perf_counter()
        adjuster.demotions(vector)
        samples.append((time.perf_counter() - began) * 1000)
    return {"votes": len(store.votes()), **percentiles(samples)}


def similar_questions(voted: list[dict], everyone: list[dict]) -> dict[str, list[dict]]:
    """squad2: questions about a voted question's paragraph, not voted on themselves; and all the others."""
    voted_ids = {r["id"] for r in voted}
    paragraphs = {r["gold"][0]["text"] for r in voted}
    siblings = [r for r in everyone if r["id"] not in voted_ids and r["gold"][0]["text"] in paragraphs]
    others = [r for r in everyone if r["id"] not in voted_ids and r["gold"][0]["text"] not in paragraphs]
    return {"siblings": siblings, "others": others}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="lawref,squad2")
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    results: dict[str, object] = {"n": args.n, "rules": FeedbackRules().__dict__, "sets": {}}
    for name in args.sets.split(","):
        rows = load(name)
        random.Random(11).shuffle(rows)
        report: dict[str, object] = {}
        loop = Loop(settings, name, args.data_dir / f"feedback-loop-{name}.sqlite3")
        print(f"{name}: answering {len(rows)} questions", flush=True)
        pairs = answered(loop, rows)
        report["noise_answer_down_votes"] = noise(loop, pairs, args.n, flag_gold=False)
        report["noise_plus_one_person_flagging_the_gold"] = noise(loop, pairs, args.n, flag_gold=True)
        print(name, "noise", json.dumps(report["noise_answer_down_votes"]), flush=True)
        loop = Loop(settings, name, args.data_dir / f"feedback-loop-{name}.sqlite3")  # signal starts afresh
        before_all = {r["id"]: rank for r, rank in zip(rows, loop.ranks(rows))} if name == "squad2" else {}
        report["signal_two_people_flag_non_gold"], voted = signal(loop, pairs, args.n)
        print(name, "signal", json.dumps(report["signal_two_people_flag_non_gold"]), flush=True)
        if before_all:
            for group, members in similar_questions(voted, rows).items():
                report[f"signal_on_{group}"] = change([before_all[r["id"]] for r in members], loop.ranks(members))
                print(name, group, json.dumps(report[f"signal_on_{group}"]), flush=True)
        report["demotions_cost_ms"] = demotion_cost(loop, rows)
        results["sets"][name] = report
    save("feedback_loop", results)


if __name__ == "__main__":
    main()
