"""Collections and access lists inside retrieval, on both backends (FAISS + bm25s snapshots, Milvus Lite):
the top k is filled from allowed passages only, and access-listed documents reach only their readers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.types import EVERYTHING, Scope
from tests.conftest import build

LEAVE = """# Leave policy

## Annual leave

Every employee has 26 working days of annual leave per calendar year.

## Sick leave

Sick leave needs a doctor's note from the third day of absence on.

## Parental leave

Parental leave of up to 14 months is shared between both parents.
"""
SALARIES = """---
title: Salary bands
access: [U0BOSS, S0HRLEADS]
---
# Salary bands

## Engineering

Senior engineers earn between 92,000 and 118,000 EUR a year in salary band E4.
"""
DEPLOY = """# Deployments

## Release train

Production deployments leave every Tuesday and Thursday at 10:00 with the release train.

## Rollback

A rollback is started with the deploy tool and takes about four minutes.

## Freeze

No deployments happen during the December code freeze.
"""
ONCALL = """On-call pager rota

The on-call engineer's pager PIN is rotated every Monday; the current PIN for the annual leave handover
is kept by the engineering managers.
"""
WELCOME = """# Welcome

## Office

The office opens at 8:00; leave your coat in the cloakroom on the ground floor.
"""
BLOCK_LIST = """---
access:
  - U0CFO
  - 'U0CEO'
---
# Board minutes

## Leave for the board

Board members take annual leave in August only.
"""


def corpus(root: Path) -> Path:
    for rel, text in {"hr/leave.md": LEAVE, "hr/salaries.md": SALARIES, "eng/deploy.md": DEPLOY,
                      "eng/oncall.txt": ONCALL, "welcome.md": WELCOME, "board/minutes.md": BLOCK_LIST}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "eng" / "oncall.txt.access").write_text("# managers only\nU0MGR1\nS0ENGMGRS\n", encoding="utf-8")
    return root


@pytest.fixture(params=["faiss", "milvus"])
def indexed(request, settings, tmp_path) -> tuple[KnowledgeBase, Path]:
    if request.param == "milvus":
        settings = settings.model_copy(update={"vector_store": "milvus", "milvus_uri": str(tmp_path / "milvus.db")})
    kb = KnowledgeBase(settings, tmp_path / "kb")
    docs = corpus(tmp_path / "docs")
    report = build(kb, [docs])
    assert "eng/oncall.txt.access" not in report.skipped, "a sidecar is not a document"
    yield kb, docs
    kb.retriever.close()


def found(kb: KnowledgeBase, query: str, scope: Scope, k: int = 5) -> list[tuple[str, str]]:
    return [(h.chunk.file, h.chunk.text) for h in kb.retriever.search(query, top_k=k, allowed=scope)]


def test_each_chunk_carries_its_first_folder_as_collection_and_its_access_list(indexed):
    kb, _ = indexed
    hits = kb.retriever.search("annual leave", top_k=20)
    by_file = {h.chunk.file: h.chunk for h in hits}
    assert by_file["hr/leave.md"].collection == "hr" and by_file["hr/leave.md"].access == ()
    assert by_file["welcome.md"].collection == "public"
    assert by_file["eng/oncall.txt"].collection == "eng"
    assert by_file["eng/oncall.txt"].access == ("u0mgr1", "s0engmgrs"), "ids compare case-insensitively"
    assert by_file["board/minutes.md"].access == ("u0cfo", "u0ceo")


def test_top_k_is_filled_from_the_scope_alone(indexed):
    kb, _ = indexed
    everywhere = found(kb, "annual leave", EVERYTHING)
    assert any(f.startswith("hr/") for f, _ in everywhere) and any(not f.startswith("hr/") for f, _ in everywhere)
    eng_only = found(kb, "annual leave", Scope(frozenset({"eng"}), frozenset()), k=3)
    assert [f for f, _ in eng_only] == ["eng/deploy.md"] * 3, "three eng passages, though hr ranks higher"
    assert found(kb, "annual leave", Scope(frozenset({"nothing-here"}), frozenset())) == []


def test_access_listed_documents_reach_their_readers_only(indexed):
    kb, _ = indexed
    question = "salary band for senior engineers"
    channel = Scope(frozenset({"hr", "public"}), frozenset())
    assert all(f != "hr/salaries.md" for f, _ in found(kb, question, channel, k=10))
    stranger = Scope(frozenset({"hr", "public"}), frozenset({"U0NOBODY", "S0OTHERS"}))
    assert all(f != "hr/salaries.md" for f, _ in found(kb, question, stranger, k=10))
    for reader in ({"U0BOSS"}, {"U0SOMEONE", "S0HRLEADS"}):
        top = found(kb, question, Scope(frozenset({"hr", "public"}), frozenset(reader)), k=1)
        assert top[0][0] == "hr/salaries.md" and "92,000" in top[0][1]
    # A sidecar's list, and one written as a YAML block list, work the same way.
    pin = "pager PIN rotation"
    assert all(f != "eng/oncall.txt" for f, _ in found(kb, pin, Scope(None, frozenset({"U0DEV"})), k=10))
    assert found(kb, pin, Scope(None, frozenset({"S0ENGMGRS"})), k=1)[0][0] == "eng/oncall.txt"
    assert found(kb, "board annual leave August", Scope(None, frozenset({"u0ceo"})), k=1)[0][0] == "board/minutes.md"


def test_a_reindex_follows_a_changed_access_list_and_a_moved_document(indexed):
    kb, docs = indexed
    (docs / "eng" / "oncall.txt.access").write_text("U0DEV\n", encoding="utf-8")
    (docs / "hr" / "ops").mkdir()
    shutil.move(docs / "eng" / "deploy.md", docs / "ops.md")
    report = build(kb, [docs])
    assert "eng/oncall.txt" in report.changed
    pin = "pager PIN rotation"
    assert found(kb, pin, Scope(None, frozenset({"U0DEV"})), k=1)[0][0] == "eng/oncall.txt"
    assert all(f != "eng/oncall.txt" for f, _ in found(kb, pin, Scope(None, frozenset({"S0ENGMGRS"})), k=10))
    moved = found(kb, "release train deployments", Scope(frozenset({"eng"}), frozenset()), k=10)
    assert all(f != "ops.md" and "release train" not in t for f, t in moved)
    public = found(kb, "release train deployments", Scope(frozenset({"public"}), frozenset()), k=1)
    assert public[0][0] == "ops.md"


def test_front_matter_saved_on_windows_still_restricts_and_a_list_too_long_for_the_index_is_skipped(settings, tmp_path):
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "hr" / "bonus.md").write_bytes(b"---\r\naccess: [U0BOSS]\r\n---\r\n# Bonus\r\n\r\n"
                                            b"The yearly bonus is paid in March.\r\n")
    (docs / "hr" / "huge.md").write_text("---\naccess: [" + ", ".join(f"U{n}" for n in range(1100)) + "]\n---\n"
                                         "# Huge\n\nA document for too many readers.\n", encoding="utf-8")
    kb = KnowledgeBase(settings, tmp_path / "kb")
    report = build(kb, [docs])
    assert "access list too long" in report.skipped["hr/huge.md"]
    assert found(kb, "yearly bonus", Scope(None, frozenset())) == []
    top = found(kb, "yearly bonus", Scope(None, frozenset({"U0BOSS"})), k=1)
    assert top[0][0] == "hr/bonus.md" and "access" not in top[0][1]


def test_a_snapshot_written_before_collections_gets_them_from_its_paths(settings, tmp_path):
    kb = KnowledgeBase(settings, tmp_path / "kb")
    build(kb, [corpus(tmp_path / "docs")])
    chunks_file = kb.store.current_path() / "chunks.jsonl"
    rows = [json.loads(line) for line in chunks_file.read_text(encoding="utf-8").splitlines()]
    chunks_file.write_text("".join(json.dumps({k: v for k, v in row.items() if k not in ("collection", "access")},
                                              ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    old = KnowledgeBase(settings, tmp_path / "kb")
    files = {f for f, _ in found(old, "annual leave", Scope(frozenset({"eng"}), frozenset()), k=10)}
    assert files and all(f.startswith("eng/") for f in files)
