"""training/: the public data is written out as the knowledge bases it claims (no evaluation article in it), and
the learned scores are fitted and measured as their scripts say."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from training.public_data import BUILDERS, XQUAD_ARTICLES
from training.screen_fusion import recall
from training.train_unit_score import FEATURES, fit, ranks_right


def _mirror(root: Path, repo: str, files: dict[str, object]) -> None:
    """A bare git repository at ROOT/OWNER+NAME/repo holding `files` (JSON), as `fetch` leaves a snapshot."""
    work = root / "work" / repo.replace("/", "+")
    work.mkdir(parents=True)
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "data"], check=True)
    bare = root / repo.replace("/", "+") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)


def _article(title: str, context: str, qid: str, question: str, answer: str) -> dict:
    return {"title": title, "paragraphs": [{"context": context, "qas": [
        {"id": qid, "question": question, "answers": [{"text": answer, "answer_start": context.find(answer)}]}]}]}


def test_xquad_keeps_only_articles_outside_squad2_dev_and_pairs_the_languages(tmp_path: Path) -> None:
    kept, left_out = XQUAD_ARTICLES[0], "Normans"  # (Normans: one of squad2's articles)
    _mirror(tmp_path, "google-deepmind/xquad", {
        "xquad.en.json": {"data": [
            _article(kept, "The Panthers defense gave up just 308 points.", "q1", "How many points?", "308"),
            _article(left_out, "The Normans were in Normandy.", "q2", "Where were the Normans?", "Normandy")]},
        "xquad.zh.json": {"data": [
            _article(kept, "黑豹队的防守只丢了 308分，在联赛中排名第六。", "q1", "丢了多少分？", "308分"),
            _article(left_out, "诺曼人在诺曼底。", "q2", "诺曼人在哪里？", "诺曼底")]},
    })
    both = BUILDERS["xquad"](tmp_path, tmp_path / "out")
    rows = both.rows()
    assert {r["id"] for r in rows} == {"q1:en", "q1:zh"}
    assert rows[0]["answers"] == {"en": ["308"], "zh": ["308分"]}
    written = {p.name: p.read_text(encoding="utf-8") for p in both.docs.iterdir()}
    assert written == {"00.en.md": "# Super Bowl 50\n\nThe Panthers defense gave up just 308 points.\n",
                       # a translated article is titled by its first clause, not by its English title
                       "00.zh.md": "# 黑豹队的防守只丢了 308分\n\n黑豹队的防守只丢了 308分，在联赛中排名第六。\n"}
    across = BUILDERS["xquad-en-zh"](tmp_path, tmp_path / "out")
    assert [r["question"] for r in across.rows()] == ["How many points?"]
    assert [p.name for p in across.docs.iterdir()] == ["00.zh.md"]


def test_cmrc_skips_empty_questions(tmp_path: Path) -> None:
    article = _article("战国无双3", "《战国无双3》是由光荣和ω-force开发的。", "T0", "由哪两个公司开发？", "光荣和ω-force")
    article["paragraphs"][0]["id"] = "TRIAL_0"
    article["paragraphs"][0]["qas"].append({"id": "T1", "question": " ", "answers": [{"text": "光荣"}]})
    _mirror(tmp_path, "ymcui/cmrc2018", {"squad-style-data/cmrc2018_trial.json": {"data": [article]},
                                         "squad-style-data/cmrc2018_dev.json": {"data": []}})
    data = BUILDERS["cmrc"](tmp_path, tmp_path / "out")
    assert [r["id"] for r in data.rows()] == ["T0"]
    assert (data.docs / "TRIAL_0.md").read_text(encoding="utf-8").startswith("# 战国无双3\n")


def _unit(score: float, holds: bool, **features: float) -> dict:
    return {name: features.get(name, 0.0) for name in FEATURES} | {"score": score, "holds": holds}


def test_the_learned_unit_score_finds_the_signal_the_hand_set_score_misses() -> None:
    """Questions whose answering unit is the one holding the question's key words (`said`) while the cosine
    says nothing: the hand-set score (the cosine here) picks at random, the fitted one finds it."""
    rng = np.random.default_rng(0)
    questions = []
    for n in range(200):
        units = []
        right = int(rng.integers(5))
        for k in range(5):
            cosine = float(rng.uniform(0.8, 0.9))
            units.append(_unit(cosine, k == right, cosine=cosine, said=1.0 if k == right else float(rng.uniform(0, .5))))
        questions.append({"set": "synthetic", "article": str(n % 10), "lang": "en", "units": units})
    train, held_out = questions[:150], questions[150:]
    weights = fit(train)
    assert weights[FEATURES.index("said")] > 0
    assert ranks_right(held_out, weights)["first"] == 1.0
    assert ranks_right(held_out, None)["first"] < 0.5


def test_fusion_recall_counts_the_gold_among_the_first_five_and_ten() -> None:
    def candidate(fused: float, gold: bool) -> dict:
        return {"fused": fused, "dense": fused, "bm25": 0.0, "dense_rank": 1, "bm25_rank": 0, "foreign": False,
                "gold": gold}

    sixth = {"candidates": [candidate(1 - k / 100, k == 5) for k in range(12)]}
    first = {"candidates": [candidate(1 - k / 100, k == 0) for k in range(12)]}
    assert recall([sixth, first], None) == {"questions": 2, "recall@5": 0.5, "recall@10": 1.0}
