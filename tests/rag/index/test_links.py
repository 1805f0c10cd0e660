"""Symbolic links are judged by their targets (issue 17, item 4): a link cannot carry a hidden, excluded or
access-listed file into another folder or collection. Real symlinks, the real embedder, FAISS and bm25s,
and the extractive answering pipeline over the built index."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.types import EVERYTHING, Answer, Scope
from tests.conftest import build

VAULT = "The vault combination for the server room safe is 31-41-59, changed every quarter."
CFO = "The chief financial officer earns a yearly salary of 412,000 EUR plus a car allowance."
BANDS = "Senior engineers in salary band E4 earn between 92,000 and 118,000 EUR a year."
BONUS = "The yearly bonus pool for directors is 7 percent of the operating profit."
WELCOME = "The office opens at 8:00; leave your coat in the cloakroom on the ground floor."
CANTEEN = "Lunch in the canteen costs 4 EUR for employees and 6 EUR for guests."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def corpus(docs: Path) -> Path:
    write(docs / "welcome.md", f"# Welcome\n\n{WELCOME}\n")
    write(docs / ".private" / "secret.md", f"# Safe\n\n{VAULT}\n")
    write(docs / ".drafts" / "canteen.md", f"# Canteen\n\n{CANTEEN}\n")
    write(docs / "hr" / "confidential" / "salaries.md", f"# Salaries\n\n{CFO}\n")
    write(docs / "hr" / "bands.md", f"# Salary bands\n\n{BANDS}\n")
    write(docs / "hr" / "bands.md.access", "U0BOSS\n")
    write(docs / "hr" / "bonus.md", f"---\naccess: [U0CEO]\n---\n# Bonus\n\n{BONUS}\n")
    (docs / "eng").mkdir()
    (docs / "public-note.md").symlink_to(".private/secret.md")
    (docs / "current").symlink_to(".drafts", target_is_directory=True)
    (docs / "hr" / "summary.md").symlink_to("confidential/salaries.md")
    (docs / "hr" / "archive").symlink_to("confidential", target_is_directory=True)
    (docs / "bands.md").symlink_to("hr/bands.md")
    (docs / "eng" / "bonus.md").symlink_to("../hr/bonus.md")
    (docs / "team").symlink_to("hr", target_is_directory=True)
    return docs


@pytest.fixture
def linked(kb, tmp_path):
    docs = corpus(tmp_path / "docs")
    report = build(kb, [docs], exclude=["hr/confidential"])
    yield kb, report
    kb.retriever.close()


def texts(kb: KnowledgeBase, query: str, scope: Scope) -> list[tuple[str, str]]:
    return [(h.chunk.file, h.chunk.text) for h in kb.retriever.search(query, top_k=20, allowed=scope)]


def answer(kb: KnowledgeBase, question: str, scope: Scope) -> Answer:
    async def run() -> Answer:
        final = None
        async for item in make_pipeline(kb).answer(question, scope=scope):
            final = item if isinstance(item, Answer) else final
        return final

    return asyncio.run(run())


def test_each_link_is_reported_with_what_became_of_its_target(linked):
    kb, report = linked
    assert sorted(kb.store.current_manifest().files) == ["hr/bands.md", "hr/bonus.md", "welcome.md"]
    assert report.skipped["public-note.md"] == "symbolic link to a hidden file; not indexed"
    assert report.skipped["current"] == "symbolic link to a hidden folder; not indexed"
    assert report.skipped["hr/summary.md"] == "symbolic link to an excluded file; not indexed"
    assert report.skipped["hr/archive"] == "symbolic link to an excluded folder; not indexed"
    assert report.skipped["bands.md"] == "same file as a file of another collection (symbolic link), indexed once"
    assert report.skipped["eng/bonus.md"] == "same file as a file of another collection (symbolic link), indexed once"
    assert report.skipped["team"] == "symbolic link to a folder of another collection, indexed there"
    # The report is read where the link's collection is: it names no hidden, excluded or other collection's file.
    reasons = " ".join(report.skipped.values())
    for name in (".private", "secret.md", ".drafts", "confidential", "salaries", "hr/bands.md", "hr/bonus.md", "hr,"):
        assert name not in reasons, name


def test_a_link_within_its_own_collection_names_its_target(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "hr" / "leave" / "policy.md", f"# Leave\n\n{WELCOME}\n")
    (docs / "hr" / "policy.md").symlink_to("leave/policy.md")
    (docs / "hr" / "current").symlink_to("leave", target_is_directory=True)
    report = build(kb, [docs])
    assert report.skipped["hr/policy.md"] == "same file as hr/leave/policy.md (symbolic link), indexed once"
    assert report.skipped["hr/current"] == "symbolic link to hr/leave, indexed there"


def test_hidden_and_excluded_targets_cannot_be_found_through_a_link(linked):
    kb, _ = linked
    for query, secret in (("vault combination server room safe", "31-41-59"), ("chief financial officer salary", "412,000"),
                          ("canteen lunch price", "4 EUR for employees")):
        assert not [f for f, text in texts(kb, query, EVERYTHING) if secret in text], query
        said = answer(kb, query, EVERYTHING)
        assert secret not in said.text and all(secret not in c.chunk.text for c in said.citations), query


def test_a_link_carries_neither_its_targets_text_out_of_its_collection_nor_past_its_access_list(linked):
    kb, _ = linked
    public_channel = Scope(frozenset({"public"}), frozenset())
    eng_channel = Scope(frozenset({"eng", "public"}), frozenset())
    for query, secret in (("salary band E4 senior engineers", "92,000"), ("bonus pool for directors", "7 percent")):
        for scope in (public_channel, eng_channel, Scope(None, frozenset({"U0STRANGER"}))):
            assert not [f for f, text in texts(kb, query, scope) if secret in text], (query, scope)
            assert secret not in answer(kb, query, scope).text
    # Its readers find it, under its own path and collection only.
    boss = texts(kb, "salary band E4 senior engineers", Scope(frozenset({"hr"}), frozenset({"U0BOSS"})))
    assert [f for f, text in boss if "92,000" in text] == ["hr/bands.md"]
    assert "92,000" in answer(kb, "What do senior engineers in salary band E4 earn?",
                              Scope(frozenset({"hr"}), frozenset({"U0BOSS"}))).text
    ceo = [h.chunk for h in kb.retriever.search("bonus pool for directors", top_k=20, allowed=Scope(None, frozenset({"u0ceo"})))]
    assert [(c.file, c.collection, c.access) for c in ceo if "7 percent" in c.text] == [("hr/bonus.md", "hr", ("u0ceo",))]


def test_exclusion_globs_and_excluded_ancestors_count_for_a_links_target(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "legal" / "drafts" / "2026" / "merger.md", f"# Merger\n\n{CFO}\n")
    write(docs / "welcome.md", f"# Welcome\n\n{WELCOME}\n")
    (docs / "merger.md").symlink_to("legal/drafts/2026/merger.md")
    report = build(kb, [docs], exclude=["*/drafts"])
    assert report.skipped["merger.md"] == "symbolic link to an excluded file; not indexed"
    assert not [c for c in kb.retriever.snapshot.chunks if "412,000" in c.text]
