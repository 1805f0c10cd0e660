"""What an asker may not read never shows through the words the knowledge base is said to use, on both
backends: "The knowledge base does not mention …" (rag.judging.near_miss) and the words looked for in place of the
question's (rag.words.synonyms) are judged over the passages the asker may read. Before, board minutes only HR may
read that speak of stock options took that note from everyone else's answer, which told them such a document
exists."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import shutil

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.config import Settings
from rag.judging.extractive import NEAR_MISS
from rag.words.lexical import UNSEEN, tokenize
from rag.types import EVERYTHING, Answer, Scope
from tests.conftest import HANDBOOK, build

PLAN = """---
access: [U0HRLEAD]
---
# Board minutes, November 2026

## Compensation

The board approved stock options for the leadership team, vesting over four years from March 2027.
"""
HR_LEAD = Scope(None, frozenset({"U0HRLEAD"}))
# A direct message from someone else; a channel that reads the public collection only.
OTHERS = [Scope(None, frozenset({"U0PLAIN"})), Scope(frozenset({"public"}), frozenset())]


@pytest.fixture(scope="module", params=["faiss", "milvus"])
def handbooks(request, shared_data_dir, tmp_path_factory):
    """The sample handbook as it is, and with HR's access-listed minutes beside it (collection "hr")."""
    root = tmp_path_factory.mktemp(f"scoped-vocabulary-{request.param}")
    made = {}
    for name in ("without", "with"):
        docs = root / name / "docs"
        shutil.copytree(HANDBOOK, docs)
        if name == "with":
            (docs / "hr").mkdir()
            (docs / "hr" / "board-minutes.md").write_text(PLAN, encoding="utf-8")
        settings = Settings(data_dir=shared_data_dir, _env_file=None)
        if request.param == "milvus":
            settings = settings.model_copy(update={"vector_store": "milvus",
                                                   "milvus_uri": str(root / name / "milvus.db")})
        kb = KnowledgeBase(settings, root / name / "kb")
        build(kb, [docs])
        made[name] = kb
    yield made
    for kb in made.values():
        kb.retriever.close()


def ask(kb: KnowledgeBase, question: str, scope: Scope) -> Answer:
    pipeline = make_pipeline(kb)

    async def run() -> Answer:
        async for item in pipeline.answer(question, scope=scope):
            if isinstance(item, Answer):
                return item
        raise AssertionError("no answer")

    return asyncio.run(run())


@pytest.mark.parametrize("scope", OTHERS, ids=["direct message", "public channel"])
def test_a_word_only_a_document_the_asker_may_not_read_uses_is_one_the_knowledge_base_never_mentions(
        handbooks, scope):
    question = "Do I get stock options?"
    without = ask(handbooks["without"], question, scope)
    assert without.text.splitlines()[0] == NEAR_MISS["en"].format(terms='"stock", "options"'), without.text
    answer = ask(handbooks["with"], question, scope)
    assert answer.text.splitlines()[0] == without.text.splitlines()[0], answer.text
    assert "leadership team" not in answer.text
    assert {c.chunk.file for c in answer.citations} == {c.chunk.file for c in without.citations}


def test_the_reader_of_that_document_gets_it_quoted(handbooks):
    answer = ask(handbooks["with"], "Do I get stock options?", HR_LEAD)
    assert not answer.refused, answer.refusal_reason
    assert "stock options for the leadership team" in answer.text
    assert answer.citations[0].chunk.file == "hr/board-minutes.md"


def test_a_token_weighs_as_unseen_where_no_allowed_passage_holds_it(handbooks):
    snapshot = handbooks["with"].retriever.snapshot
    stock, leave = tokenize("stock")[0], tokenize("leave")[0]
    whole = snapshot.term_weights(EVERYTHING)([stock, leave, UNSEEN])
    assert whole[stock] < whole[UNSEEN] and whole[leave] < whole[stock]
    assert snapshot.term_weights(HR_LEAD)([stock, leave]) == {stock: whole[stock], leave: whole[leave]}
    for scope in OTHERS:
        assert snapshot.term_weights(scope)([stock, leave]) == {stock: whole[UNSEEN], leave: whole[leave]}
    nothing = Scope(frozenset({"no-such-collection"}), None)
    assert snapshot.term_weights(nothing)([leave]) == {leave: whole[UNSEEN]}


def test_a_milvus_index_written_before_places_were_counted_is_written_anew_by_the_next_reindex(
        shared_data_dir, tmp_path):
    """Its term counts say nothing of who reads what: a reindex that finds no document changed still writes
    them, rather than leaving "does not mention" judged over the whole index until a document changes."""
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "hr" / "board-minutes.md").write_text(PLAN, encoding="utf-8")
    welcome = "# Welcome\n\nThe office opens at 8:00 on working days.\n"
    (docs / "welcome.md").write_text(welcome, encoding="utf-8")
    settings = Settings(data_dir=shared_data_dir, _env_file=None, vector_store="milvus",
                        milvus_uri=str(tmp_path / "milvus.db"))
    kb = KnowledgeBase(settings, tmp_path / "kb")
    build(kb, [docs])
    _forget_places(kb.store, kb.retriever.snapshot.version)
    kb.retriever.close()

    kb = KnowledgeBase(settings, tmp_path / "kb")
    stock, unseen = tokenize("stock")[0], UNSEEN
    old = kb.retriever.snapshot
    assert not old.scoped_terms
    report = build(kb, [docs])
    assert not report.up_to_date and report.version != old.version
    kb.retriever.close()
    kb = KnowledgeBase(settings, tmp_path / "kb")
    snapshot = kb.retriever.snapshot
    assert snapshot.scoped_terms and snapshot.version == report.version
    rare = snapshot.term_weights(EVERYTHING)([unseen])[unseen]
    assert snapshot.term_weights(OTHERS[0])([stock]) == {stock: rare}
    assert snapshot.term_weights(HR_LEAD)([stock])[stock] < rare
    assert build(kb, [docs]).up_to_date, "written once, then up to date as before"
    kb.retriever.close()


def _forget_places(store, version: str) -> None:
    """The version's term counts as an index written before places were counted holds them."""
    rows = store.client.query(store.meta, filter=f'version == "{version}" and part >= 0',
                              output_fields=["key", "collection", "version", "part", "body"])
    rows.sort(key=lambda r: r["part"])
    data = json.loads(gzip.decompress(base64.b64decode("".join(r["body"] for r in rows))))
    assert "places" in data
    data = {k: v for k, v in data.items() if k not in ("places", "held")}
    blob = base64.b64encode(gzip.compress(json.dumps(data, ensure_ascii=False).encode())).decode()
    store.client.delete(store.meta, filter=f'version == "{version}" and part >= 0')
    store.client.upsert(store.meta, [{**rows[0], "key": f"doc/{version}/0", "part": 0, "body": blob,
                                      "unused": [0.0, 0.0]}])
    store.client.flush(store.meta)
