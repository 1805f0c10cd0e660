"""Questions go first: a reindex that embeds passages (cold, real lawref statutes, the embedded model) does
not make a question wait behind its batches."""

from __future__ import annotations

import shutil
import statistics
import threading
import time

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.conftest import LAWREF

STATUTE = "宪法相关法/全国人民代表大会议事规则(2021-03-11).md"  # ~25k characters: several batches of 16
QUESTIONS = ["全国人民代表大会会议每年举行几次", "代表可以提出质询案吗", "主席团由谁选举产生", "议案如何表决通过",
             "会议公开举行吗", "代表的发言受法律保护吗"]


def timed_search(kb: KnowledgeBase, question: str) -> float:
    began = time.perf_counter()
    kb.retriever.search(question, top_k=5)
    return time.perf_counter() - began


def test_a_question_does_not_wait_behind_the_passages_a_reindex_embeds(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "welcome.md").write_text("# 欢迎\n\n全国人民代表大会每年举行一次会议，由常务委员会召集。\n", encoding="utf-8")
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "data", _env_file=None), tmp_path / "kb")  # cold embeddings
    kb.refresh([docs])
    idle = [timed_search(kb, q) for q in QUESTIONS[:3]]

    shutil.copyfile(LAWREF / "docs" / STATUTE, docs / "rules.md")
    batches = threading.Semaphore(0)
    reindex = threading.Thread(target=kb.refresh, args=(None,),
                               kwargs={"progress": lambda e: e.stage == "embed" and e.done and batches.release()})
    reindex.start()
    try:
        assert batches.acquire(timeout=300), "the reindex embedded nothing"  # a batch done, the next one running
        during = [timed_search(kb, q) for q in QUESTIONS[3:]]
        still_embedding = reindex.is_alive()
    finally:
        reindex.join(600)
    bound = max(1.5, 4 * max(idle))
    assert max(during) < bound, f"idle {statistics.median(idle):.2f} s, during a reindex {during} (bound {bound:.2f} s)"
    assert still_embedding, "the questions must be asked while the reindex embeds"
