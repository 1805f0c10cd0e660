"""The Milvus backend end to end on Milvus Lite (a real embedded Milvus, no mock): index real documents,
search, hybrid, path filter, alias switch during queries, incremental reindex and deletion."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from rag.evaluation import first_hit_rank, load_questions
from rag.index import milvus_search
from rag.index.milvus_schema import chunks_filter, create_sentence_collection, sentences_of
from rag.index.milvus_store import MilvusStore
from rag.index.sentences import SENTENCES_VERSION, unit_texts
from tests.conftest import HANDBOOK, cli_env
from tests.lawref_subset import DISTRACTORS, GOLD_FILES, TOURISM, make_subset
from tests.processes import MilvusLiteServer


def milvus_kb(settings: Settings, where: Path, **overrides) -> KnowledgeBase:
    changed = settings.model_copy(update={"vector_store": "milvus", "milvus_uri": str(where / "milvus.db"),
                                          **overrides})
    return KnowledgeBase(changed, where / "kb")


@pytest.fixture(scope="module")
def lawref(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_subset(tmp_path_factory.mktemp("lawref"))


@pytest.fixture
def docs(lawref: Path, tmp_path: Path) -> Path:
    """The subset in a folder of our own, to change and delete files in."""
    return Path(shutil.copytree(lawref / "docs", tmp_path / "docs"))


def recall_at(kb: KnowledgeBase, questions, k: int) -> float:
    ranks = [first_hit_rank(kb.retriever.search(q.question, top_k=k), q.gold) for q in questions]
    return sum(r is not None for r in ranks) / len(ranks)


def unit_count(kb: KnowledgeBase) -> int:
    """The rows of the live collection's sentences (rag.index.sentences)."""
    store: MilvusStore = kb.store
    return store.client.get_collection_stats(sentences_of(store.live_collection()))["row_count"]


def test_milvus_finds_what_faiss_finds_on_lawref(settings, lawref, tmp_path):
    faiss_kb = KnowledgeBase(settings, tmp_path / "faiss")
    milvus = milvus_kb(settings, tmp_path)
    report = milvus.refresh([lawref / "docs"])
    on_faiss = faiss_kb.refresh([lawref / "docs"])
    assert report.dense_index == "milvus-flat" and report.chunks == faiss_kb.retriever.snapshot.manifest.chunk_count
    # Milvus holds the passages' sentences as FAISS does: the ones it embedded (none when an earlier test of
    # the run embedded them into the shared work cache) are all FAISS needed
    units = len(faiss_kb.retriever.snapshot.sentences.vectors)
    assert report.sentences_embedded <= units
    assert on_faiss.embedded == on_faiss.sentences_embedded == 0
    assert milvus.retriever.snapshot.manifest.sentences == SENTENCES_VERSION and unit_count(milvus) == units
    questions = load_questions(lawref / "questions.jsonl")
    assert len(questions) >= 20
    for k in (1, 10):
        on_faiss, on_milvus = recall_at(faiss_kb, questions, k), recall_at(milvus, questions, k)
        assert on_milvus >= on_faiss - 0.05, (k, on_faiss, on_milvus)
    assert recall_at(milvus, questions, 10) >= 0.8
    hits = milvus.retriever.search("旅游经营者安排的导游擅自增加购物次数，旅游者能要求什么赔偿？", top_k=3)
    assert hits[0].chunk.file == TOURISM and set(hits[0].scores) == {"dense", "bm25"}
    assert all(h.chunk == faiss_kb.retriever.snapshot.by_id[h.chunk.id] for h in hits)


def test_each_mode_ranks_by_its_own_retriever(settings, lawref, tmp_path):
    kb = milvus_kb(settings, tmp_path)
    kb.refresh([lawref / "docs"])
    question = "盗窃数额较大的标准是多少"
    bm25 = kb.retriever.search(question, top_k=5, mode="bm25")
    dense = kb.retriever.search(question, top_k=5, mode="dense")
    assert [h.ranks for h in bm25] == [{"bm25": n} for n in range(1, len(bm25) + 1)]
    assert [h.ranks for h in dense] == [{"dense": n} for n in range(1, 6)]
    assert all(h.scores["bm25"] > 0 for h in bm25)
    assert "盗窃" in bm25[0].chunk.file and "盗窃" in dense[0].chunk.file


def test_every_citation_field_survives_the_round_trip(settings, tmp_path):
    """Titles, heading paths, pages, versions, dates, offsets: the chunks Milvus returns are the chunks indexed."""
    faiss_kb = KnowledgeBase(settings, tmp_path / "faiss")
    milvus = milvus_kb(settings, tmp_path)
    faiss_kb.refresh([HANDBOOK])
    milvus.refresh([HANDBOOK])
    indexed = {c.id: c for c in faiss_kb.retriever.snapshot.chunks}
    stored = {c.id: c for c in milvus.retriever.snapshot.chunks}
    assert stored == indexed
    assert any(c.page for c in stored.values()) and any(c.doc_version for c in stored.values())
    hit = milvus.retriever.search("出差吃饭能报多少?", top_k=3)
    meal = next(h for h in hit if "伙食补助" in h.chunk.text)
    assert meal.chunk.heading_path == ("第四章 伙食补助",) and meal.chunk.doc_version == "2026-09-15"


def test_questions_load_no_collection_again_and_ask_only_which_version_is_live(settings, tmp_path, monkeypatch):
    """Milvus Lite forgets nothing it loaded while this process lives: a collection is loaded once, and each
    later question asks Milvus only for the live version (every load was a round trip per question)."""
    milvus = milvus_kb(settings, tmp_path)
    milvus.refresh([HANDBOOK])
    milvus.retriever.search("出差吃饭能报多少?", top_k=3)
    client = milvus.store.client
    loads: list[str] = []
    load = client.load_collection
    monkeypatch.setattr(client, "load_collection", lambda name, *a, **k: (loads.append(name), load(name, *a, **k))[1])
    for question in ("出差吃饭能报多少?", "How many days of annual leave do I get?", "住酒店一晚最多报多少?"):
        hits = milvus.retriever.search(question, top_k=3)
        assert hits and hits[0].chunk.file
    assert loads == []


def test_path_filter_keeps_exactly_one_folder_whatever_its_name(settings, lawref, tmp_path):
    docs = tmp_path / "docs"
    folders = {'民事_2': GOLD_FILES[1], '民事%': GOLD_FILES[3], 'x"y\\z': GOLD_FILES[4], '刑事': GOLD_FILES[2]}
    for folder, rel in folders.items():
        (docs / folder).mkdir(parents=True)
        shutil.copyfile(lawref / "docs" / rel, docs / folder / Path(rel).name)
    kb = milvus_kb(settings, tmp_path)
    kb.refresh([docs])
    question = "租赁合同"
    for folder in folders:
        hits = kb.retriever.search(question, top_k=10, path_prefix=folder + "/")
        assert hits and {h.chunk.file.split("/")[0] for h in hits} == {folder}, folder
    one_file = f"刑事/{Path(folders['刑事']).name}"
    assert {h.chunk.file for h in kb.retriever.search("盗窃", top_k=5, path_prefix=one_file)} == {one_file}
    assert kb.retriever.search(question, top_k=10, path_prefix="民事") == []  # a folder, not a string prefix
    assert kb.retriever.search(question, top_k=10, path_prefix='" or file != "') == []


def test_a_rebuild_switches_the_alias_while_queries_run(settings, lawref, tmp_path):
    kb = milvus_kb(settings, tmp_path, keep_snapshots=2)
    first = kb.refresh([lawref / "docs"])
    store: MilvusStore = kb.store
    first_collection = store.live_collection()
    seen: set[str] = set()
    errors: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.wait(0.05):  # a question every 50 ms while the index is rebuilt (a tighter loop starves
            # the build of the interpreter, in this one process, for minutes)
            try:
                hits = kb.retriever.search("物业服务企业可以停水停电吗", top_k=5)
                assert hits and hits[0].chunk.file.startswith("司法解释/")
                seen.add(kb.retriever.snapshot.version)
            except BaseException as exc:  # noqa: BLE001 - the test reports every failed query
                errors.append(exc)

    reader = threading.Thread(target=ask)
    reader.start()
    try:
        # Other chunking settings: the whole index is rebuilt into a new collection (these two cut these
        # statutes into the same passages, whose embeddings the work cache has: the rebuilds embed nothing).
        second = milvus_kb(settings.model_copy(update={"chunk_overlap_min": 40}), tmp_path).refresh(None)
        third = milvus_kb(settings.model_copy(update={"chunk_min_chars": 290}), tmp_path).refresh(None)
    finally:
        stop.set()
        reader.join()
    assert not errors, errors[:3]
    assert second.rebuild_reason and third.rebuild_reason
    assert first.version in seen and store.current_version() == third.version
    assert store.live_collection() != first_collection
    kept = [c for c in store.client.list_collections() if c.startswith(f"{store.alias}_v")]
    chunk_collections = [c for c in kept if not c.endswith("_sentences")]
    assert len(chunk_collections) == 2 and first_collection not in kept  # AIE_KEEP_SNAPSHOTS
    assert sorted(kept) == sorted([*chunk_collections, *map(sentences_of, chunk_collections)]), \
        "a dropped collection's sentences are dropped with it"


def test_incremental_reindex_upserts_the_changed_file_and_deletes_the_removed_one(settings, docs, tmp_path):
    kb = milvus_kb(settings, tmp_path)
    first = kb.refresh([docs])
    store: MilvusStore = kb.store
    collection = store.live_collection()
    changed, removed = docs / GOLD_FILES[0], docs / DISTRACTORS[0]
    changed.write_text(changed.read_text(encoding="utf-8") + "\n\n第九十九条 乘坐热气球观光的旅游者应当系好安全带。\n",
                       encoding="utf-8")
    removed.unlink()
    report = kb.refresh(None)
    assert report.changed == [GOLD_FILES[0]] and report.removed == [DISTRACTORS[0]] and report.embedded >= 1
    assert store.live_collection() == collection and report.version != first.version  # updated in place
    assert store.client.get_collection_stats(collection)["row_count"] == report.chunks
    hits = kb.retriever.search("热气球观光 安全带", top_k=3)
    assert hits[0].chunk.file == GOLD_FILES[0] and "热气球" in hits[0].chunk.text
    assert all(h.chunk.file != DISTRACTORS[0] for h in kb.retriever.search("限制高消费 被执行人", top_k=20))
    assert set(kb.retriever.snapshot.manifest.files) == {*GOLD_FILES, *DISTRACTORS} - {DISTRACTORS[0]}
    assert kb.refresh(None).up_to_date


def test_a_stale_cached_chunk_id_is_not_found(settings, docs, tmp_path):
    kb = milvus_kb(settings, tmp_path)
    kb.refresh([docs])
    gone = next(c for c in kb.retriever.snapshot.chunks if c.file == DISTRACTORS[1])
    assert gone.id in kb.retriever.snapshot.by_id
    (docs / DISTRACTORS[1]).unlink()
    kb.refresh(None)
    assert gone.id not in kb.retriever.snapshot.by_id and kb.retriever.snapshot.by_id.get(gone.id) is None


def test_unreachable_milvus_is_one_clear_line_without_the_token(tmp_path):
    env = cli_env(tmp_path) | {"AIE_VECTOR_STORE": "milvus", "MILVUS_URI": "http://127.0.0.1:9",
                               "MILVUS_TOKEN": "root:s3cret-token"}
    done = subprocess.run([sys.executable, "-m", "ai_employee.cli", "search", "年假"], env=env,
                          capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in output and "s3cret" not in output
    assert "cannot open Milvus at http://127.0.0.1:9" in output


def test_a_lite_file_is_one_process_s_and_a_second_is_told_how_to_share_it(settings, lawref, tmp_path):
    kb = milvus_kb(settings, tmp_path)
    kb.refresh([lawref / "docs"])
    env = cli_env(settings.data_dir) | {"AIE_VECTOR_STORE": "milvus", "MILVUS_URI": str(tmp_path / "milvus.db")}
    done = subprocess.run([sys.executable, "-m", "ai_employee.cli", "search", "旅游"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "milvus-lite server" in done.stderr


def test_two_processes_share_one_lite_file_through_its_server(settings, lawref, tmp_path):
    with MilvusLiteServer(tmp_path / "shared.db") as server:
        kb = milvus_kb(settings, tmp_path, milvus_uri=server.uri)
        kb.refresh([lawref / "docs"])
        env = cli_env(settings.data_dir) | {"AIE_VECTOR_STORE": "milvus", "MILVUS_URI": server.uri}
        done = subprocess.run([sys.executable, "-m", "ai_employee.cli", "search", "旅游经营者擅自增加购物次数", "--json"],
                              env=env, capture_output=True, text=True, timeout=300, check=True)
        found = json.loads(done.stdout)
        assert found["hits"][0]["chunk"]["file"] == TOURISM
        assert found["index_version"] == kb.store.current_version()
        assert kb.retriever.search("旅游经营者擅自增加购物次数", top_k=1)[0].chunk.file == TOURISM


def test_unknown_vector_store_is_refused(settings, tmp_path):
    kb = KnowledgeBase(settings.model_copy(update={"vector_store": "qdrant"}), tmp_path / "kb")
    with pytest.raises(ValueError, match="AIE_VECTOR_STORE must be faiss or milvus"):
        kb.store  # noqa: B018



def test_chinese_passages_glosses_are_searched_as_on_faiss_and_arrive_with_the_first_chinese_file(settings,
                                                                                                    tmp_path):
    """An English question reads Chinese passages' glosses (rag.words.bilingual.gloss) in Milvus as in FAISS: a
    knowledge base that starts in English and gains a Chinese file is written anew, glosses included."""
    docs = tmp_path / "docs"
    shutil.copytree(HANDBOOK, docs)
    chinese = {p.relative_to(docs): p.read_bytes() for p in docs.rglob("*.md")
               if re.search(r"[\u4e00-\u9fff]", p.name)}
    assert chinese
    for rel in chinese:
        (docs / rel).unlink()
    milvus = milvus_kb(settings, tmp_path)
    milvus.refresh([docs])
    store: MilvusStore = milvus.store
    english_only = store.live_collection()
    assert milvus.retriever.snapshot.manifest.glossing == "" and not milvus.retriever.snapshot.gloss_field
    for rel, body in chinese.items():
        (docs / rel).write_bytes(body)
    report = milvus.refresh(None)
    assert report.added and store.live_collection() != english_only  # a collection with glosses
    faiss_kb = KnowledgeBase(settings, tmp_path / "faiss")
    faiss_kb.refresh([docs])
    question = "How many days of paternity leave do I get?"
    rankings = {}
    for name, kb in (("faiss", faiss_kb), ("milvus", milvus)):
        snapshot = kb.retriever.snapshot
        ranking, _ = snapshot.gloss_ranking(question, 3, None)
        rankings[name] = [c.id for c in snapshot.chunks_at([key for key, _ in ranking])]
        assert "陪产假" in snapshot.chunks_at([ranking[0][0]])[0].text
        hit = next(h for h in kb.retriever.search(question, top_k=5) if "陪产假" in h.chunk.text)
        assert hit.ranks.get("glossed") == 1
    assert rankings["milvus"][0] == rankings["faiss"][0]
    # The Chinese files go and an English one changes: the collection keeps its gloss field, empty in new rows
    for rel in chinese:
        (docs / rel).unlink()
    guide = docs / "onboarding.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n\nBring your passport on your first day.\n",
                     encoding="utf-8")
    report = milvus.refresh(None)
    assert report.changed == ["onboarding.md"] and store.live_collection() != english_only
    assert milvus.retriever.snapshot.manifest.glossing == ""
    assert any("Bring your passport" in c.text for c in milvus.retriever.snapshot.chunks)
    assert store.client.get_collection_stats(store.live_collection())["row_count"] == report.chunks
    hits = milvus.retriever.search("Do I need my passport on my first day?", top_k=5)
    assert any("passport" in h.chunk.text for h in hits) and all("glossed" not in h.ranks for h in hits)


def test_milvus_reads_each_passage_by_its_best_sentence_as_faiss_does(settings, lawref, tmp_path, monkeypatch):
    faiss_kb = KnowledgeBase(settings, tmp_path / "faiss")
    milvus = milvus_kb(settings, tmp_path)
    faiss_kb.refresh([lawref / "docs"])
    milvus.refresh([lawref / "docs"])
    faiss, stored = faiss_kb.retriever.snapshot, milvus.retriever.snapshot
    question = "导游擅自增加购物次数，旅游者能要求什么赔偿？"
    vector = np.asarray(faiss_kb.index_embedder.embed_queries([question])[0], dtype=np.float32)
    rows = [row for row, _ in faiss.dense_ranking(vector, 20, None)]  # candidates, as retrieval asks
    ids = [faiss.chunks[row].id for row in rows]
    expected = {faiss.chunks[row].id: score for row, score in faiss.sentence_scores(rows, vector).items()}
    found = stored.sentence_scores(ids, vector)
    assert len(expected) >= 15 and found.keys() == expected.keys()
    assert all(abs(found[key] - expected[key]) <= 1e-5 for key in expected), (found, expected)
    # ... every passage's, asked in more chunks than one search reads, and stored in order
    everything = [c.id for c in faiss.chunks]
    monkeypatch.setattr(milvus_search, "_UNITS_QUERY", 7)
    every_best = {faiss.chunks[row].id: score
                  for row, score in faiss.sentence_scores(list(range(len(everything))), vector).items()}
    assert len(everything) > 7 and stored.sentence_scores(everything, vector) == pytest.approx(every_best, abs=1e-5)
    rows = milvus.store.client.query(stored.sentences, filter=chunks_filter(everything), output_fields=["*"])
    for row, chunk_id in enumerate(everything):
        start, end = faiss.sentences.starts[row], faiss.sentences.starts[row + 1]
        mine = sorted((int(r["id"].rsplit("#", 1)[1]), r["dense"]) for r in rows if r["chunk"] == chunk_id)
        assert [n for n, _ in mine] == list(range(end - start)), chunk_id
        assert end == start or np.allclose([v for _, v in mine], faiss.sentences.vectors[start:end], atol=1e-6)
    # and the hybrid search ranks as FAISS does with them
    assert [h.chunk.id for h in milvus.retriever.search(question, top_k=5)] == \
        [h.chunk.id for h in faiss_kb.retriever.search(question, top_k=5)]


def test_incremental_reindex_replaces_the_changed_file_s_sentences_and_deletes_the_removed_one_s(settings, docs,
                                                                                                   tmp_path):
    kb = milvus_kb(settings, tmp_path)
    kb.refresh([docs])
    store: MilvusStore = kb.store
    collection = store.live_collection()
    changed, removed = docs / GOLD_FILES[0], docs / DISTRACTORS[0]
    before = kb.retriever.snapshot
    text = changed.read_text(encoding="utf-8")
    # One sentence of the changed file, said otherwise
    old = next(c for c in before.chunks if c.file == GOLD_FILES[0] and "安全保障义务" in c.text)
    old_unit = next(t for t in unit_texts(old) if "安全保障义务" in t)
    sentence = old_unit.rsplit("\n", 1)[-1]
    assert text.count(sentence) == 1
    embed = kb.index_embedder.embed_passages
    old_vector = np.asarray(embed([old_unit])[0], np.float32)
    assert before.sentence_scores([old.id], old_vector)[old.id] == pytest.approx(1.0, abs=1e-5)
    new_sentence = "热气球观光项目的经营者应当为每位乘客配备降落伞，并在起飞前讲解使用方法。"
    changed.write_text(text.replace(sentence, new_sentence), encoding="utf-8")
    gone = [c.id for c in before.chunks if c.file == DISTRACTORS[0]]
    removed.unlink()
    report = kb.refresh(None)
    assert report.changed == [GOLD_FILES[0]] and report.removed == [DISTRACTORS[0]]
    assert report.sentences_embedded >= 1 and store.live_collection() == collection  # updated in place
    after = kb.retriever.snapshot
    chunks = list(after.chunks)
    assert unit_count(kb) == sum(len(unit_texts(c)) for c in chunks), "no unit of an old passage is left"
    # the edited sentence is found: its passage's best unit is its very vector
    edited = next(c for c in chunks if new_sentence in c.text)
    new_unit = next(t for t in unit_texts(edited) if new_sentence in t)
    assert after.sentence_scores([edited.id], np.asarray(embed([new_unit])[0], np.float32))[edited.id] == \
        pytest.approx(1.0, abs=1e-5)
    # ... and the old sentence's vector is no passage's any more
    best = after.sentence_scores([c.id for c in chunks], old_vector)
    assert best and max(best.values()) < 0.999
    # the removed file's units are deleted
    assert gone and store.client.query(sentences_of(collection), filter=chunks_filter(gone),
                                       output_fields=["id"]) == []
    assert kb.refresh(None).up_to_date


def test_a_collection_without_sentences_gets_them_on_the_next_run_without_embedding_its_passages(settings,
                                                                                                   tmp_path):
    """A collection written without sentence vectors (AIE_SENTENCE_SEARCH=false, or before Milvus held them)
    reads as having none; the next run adds them, passages' vectors from the work cache."""
    without = milvus_kb(settings, tmp_path, sentence_search=False)
    first = without.refresh([HANDBOOK])
    store: MilvusStore = without.store
    old = store.live_collection()
    snapshot = without.retriever.snapshot
    assert snapshot.manifest.sentences == 0 and not store.client.has_collection(sentences_of(old))
    assert snapshot.sentence_scores([c.id for c in snapshot.chunks], snapshot.vector(first_id(snapshot))) == {}
    again = milvus_kb(settings, tmp_path).refresh(None)
    assert not again.up_to_date and again.embedded == 0 and again.rebuild_reason is None
    kb = milvus_kb(settings, tmp_path)
    snapshot = kb.retriever.snapshot
    assert snapshot.manifest.sentences == SENTENCES_VERSION and kb.store.live_collection() != old
    assert unit_count(kb) == sum(len(unit_texts(c)) for c in snapshot.chunks) > 0
    assert milvus_kb(settings, tmp_path).refresh(None).up_to_date
    # turned off again: a collection without them (the one with them kept as the previous build); sentences
    # left by a run that died before its collection was written are dropped
    orphan = sentences_of(f"{store.alias}_v20000101T000000000_dead")
    create_sentence_collection(store.client, orphan, 384)
    off = milvus_kb(settings, tmp_path, sentence_search=False).refresh(None)
    assert not off.up_to_date and off.embedded == off.sentences_embedded == 0
    assert not store.client.has_collection(orphan)
    assert store.client.has_collection(sentences_of(snapshot.collection)), "the previous build keeps its own"
    assert milvus_kb(settings, tmp_path, sentence_search=False).retriever.snapshot.manifest.sentences == 0


def first_id(snapshot) -> str:
    return next(iter(snapshot.chunks)).id
