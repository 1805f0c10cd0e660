"""Declared sources synced into one index: collections, carrying what was not synced, failures that delete
nothing, the mass-delete guard. Folder sources and a scripted connector, the real builder and embedder."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from rag.index.builder import MassDeleteRefused
from rag.index.metadata import DocumentMeta
from rag.sources.base import Fetched, SourceError
from rag.types import Scope
from tests.fakes.website import FakeWebsite, page

HOTELS = "# Travel\n\n## Hotels\n\nHotels are reimbursed up to 150 EUR per night, or 220 EUR in London.\n"
MEALS = "# Meals\n\nThe daily meal allowance on business trips is 45 EUR for a full travel day.\n"
VISA = "# Visas\n\nVisa fees for business travel are paid by the company through the travel desk.\n"
RESTART = "# Runbook\n\n## Restart\n\nRestart the billing service with systemctl restart billing, then watch the logs.\n"


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def knowledge_base(shared_data_dir: Path, tmp_path: Path, sources: str) -> KnowledgeBase:
    file = tmp_path / "sources.yaml"
    file.write_text(sources, encoding="utf-8")
    return KnowledgeBase(Settings(data_dir=shared_data_dir, sources_file=file, _env_file=None), tmp_path / "index")


@pytest.fixture
def two_folders(shared_data_dir: Path, tmp_path: Path) -> KnowledgeBase:
    write(tmp_path / "hb", {"hotels.md": HOTELS, "meals.md": MEALS, "visa.md": VISA})
    write(tmp_path / "ops", {"restart.md": RESTART})
    return knowledge_base(shared_data_dir, tmp_path, f"""sources:
  - {{name: handbook, type: folder, path: {tmp_path / 'hb'}, collection: hr}}
  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}
""")



def test_each_source_is_its_own_collection(two_folders: KnowledgeBase) -> None:
    report = two_folders.sync()
    assert report.ok and report.index is not None
    manifest = two_folders.store.current_manifest()
    assert sorted(manifest.files) == ["handbook/hotels.md", "handbook/meals.md", "handbook/visa.md", "ops/restart.md"]
    assert {manifest.collection(n) for n in manifest.files} == {"hr", "eng"}
    assert manifest.collection("ops/gone.md") == "eng"  # a removed file's collection is still known
    eng = Scope(collections=frozenset({"eng"}))
    found = two_folders.retriever.search("how much is a hotel night", top_k=5, allowed=eng)
    assert [h.chunk.file for h in found] == ["ops/restart.md"]
    assert all(h.chunk.collection == "eng" for h in found)


def test_a_source_not_synced_keeps_its_documents_without_being_read(two_folders: KnowledgeBase, tmp_path: Path) -> None:
    two_folders.sync()
    shutil.rmtree(tmp_path / "hb")  # unmounted, say: only `ops` is synced, so nobody looks
    (tmp_path / "ops" / "restart.md").write_text(RESTART.replace("the logs", "the dashboard"), encoding="utf-8")
    report = two_folders.sync(["ops"])
    assert report.ok and report.index.changed == ["ops/restart.md"]
    assert report.index.embedded == 1 and report.index.removed == []
    assert "handbook/hotels.md" in two_folders.store.current_manifest().files
    for mode in ("bm25", "dense", "hybrid"):  # every retriever still finds the kept documents, and the edit
        assert two_folders.retriever.search("hotel night London", top_k=1, mode=mode)[0].chunk.file == "handbook/hotels.md"
        assert "dashboard" in two_folders.retriever.search("restart billing", top_k=1, mode=mode)[0].chunk.text


def test_a_missing_folder_deletes_nothing_and_is_reported(two_folders: KnowledgeBase, tmp_path: Path) -> None:
    first = two_folders.sync()
    shutil.move(tmp_path / "hb", tmp_path / "hb-away")
    report = two_folders.sync()
    outcome = report.sources["handbook"]
    assert not outcome.ok and "missing or unreadable" in outcome.error and str(tmp_path / "hb") in outcome.error
    assert report.index is not None and report.index.up_to_date and report.index.version == first.index.version
    status = two_folders.source_sync(None).states.load("handbook").status
    assert status.failures == 1 and status.last_error == outcome.error and status.documents == 3
    assert status.next_run(every=86400) == pytest.approx(status.last_attempt + 60)  # retried soon, backing off
    assert status.next_run(every=0) is None  # on demand: retried when an admin asks


def test_losing_most_of_a_source_waits_for_an_admin(two_folders: KnowledgeBase, tmp_path: Path) -> None:
    two_folders.sync()
    (tmp_path / "hb" / "meals.md").unlink()
    (tmp_path / "hb" / "visa.md").unlink()
    (tmp_path / "ops" / "restart.md").write_text(RESTART + "\nPage the on-call engineer first.\n", encoding="utf-8")
    report = two_folders.sync()
    held = report.sources["handbook"]
    assert not held.ok and isinstance(held.held_back, MassDeleteRefused)
    assert "would remove 2 of its 3 documents" in held.error and "--allow-mass-delete" in held.error
    assert report.sources["ops"].ok and report.index.changed == ["ops/restart.md"]  # the rest still publishes
    assert "handbook/visa.md" in two_folders.store.current_manifest().files
    alone = two_folders.sync(["handbook"])  # held back on its own: reported and recorded, not raised
    assert alone.index is None and not alone.sources["handbook"].ok and "--allow-mass-delete" in alone.sources["handbook"].error
    status = two_folders.source_sync(None).states.load("handbook").status
    assert "would remove 2 of its 3 documents" in status.last_error and not status.told  # the admins are told once
    allowed = two_folders.sync(["handbook"], allow_mass_delete=True)
    assert allowed.ok and sorted(allowed.index.removed) == ["handbook/meals.md", "handbook/visa.md"]


def test_a_source_dropped_from_the_file_is_not_deleted_silently(two_folders: KnowledgeBase, shared_data_dir: Path,
                                                               tmp_path: Path) -> None:
    two_folders.sync()
    kb = knowledge_base(shared_data_dir, tmp_path, f"""sources:
  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}
""")
    with pytest.raises(MassDeleteRefused, match="handbook would remove 3 of its 3"):
        kb.sync()
    assert "handbook/hotels.md" in kb.store.current_manifest().files
    assert sorted(kb.sync(allow_mass_delete=True).index.removed) == [
        "handbook/hotels.md", "handbook/meals.md", "handbook/visa.md"]


def test_nothing_changed_costs_no_embedding(two_folders: KnowledgeBase) -> None:
    first = two_folders.sync()
    again = two_folders.sync()
    assert again.index.up_to_date and again.index.embedded == 0 and again.index.version == first.index.version


class Scripted:
    """A connector that hands over what the test wrote, with metadata, or fails as told."""

    def __init__(self, name: str, folder: Path, documents: dict[str, DocumentMeta]) -> None:
        self.name, self.folder, self.documents, self.fail = name, folder, documents, None

    def fetch(self, workdir, state, progress):
        if self.fail:
            raise SourceError(self.fail, variable="WIKI_TOKEN")
        return Fetched(self.folder, dict(self.documents), state={"seen": len(self.documents)}, calls=1)

    def check(self):
        raise NotImplementedError


def test_what_the_source_says_of_a_document_reaches_its_passages(shared_data_dir: Path, tmp_path: Path) -> None:
    folder = write(tmp_path / "wiki", {"42.md": HOTELS})
    kb = knowledge_base(shared_data_dir, tmp_path, f"""sources:
  - {{name: wiki, type: folder, path: {folder}, collection: eng}}
""")
    meta = DocumentMeta(url="https://wiki.example.com/pages/42", link="heading", title="Travel rules", version="7",
                        date="2026-11-30T09:15:00Z", access=("U0ANN", "S0Finance"), headings=("Finance", "Policies"))
    connector = Scripted("wiki", folder, {"42.md": meta})
    sync = kb.source_sync(kb.loader())
    sync._connector = lambda spec, workdir: connector
    report = sync.sync()
    assert report.ok
    chunk = kb.retriever.snapshot.chunks[0]
    assert (chunk.file, chunk.title, chunk.doc_version, chunk.doc_date) == ("wiki/42.md", "Travel rules", "7", "2026-11-30")
    assert chunk.heading_path == ("Finance", "Policies", "Hotels")
    assert chunk.url == "https://wiki.example.com/pages/42#Travelrules-Hotels"  # the cited heading, as the wiki names it
    assert chunk.access == ("u0ann", "s0finance") and chunk.collection == "eng"  # chat ids, as Scopes compare them
    assert sync.states.load("wiki").connector == {"seen": 1}

    connector.fail = "the wiki answered 401 for wiki: check WIKI_TOKEN"
    failed = sync.sync()
    assert failed.index is None and failed.sources["wiki"].variable == "WIKI_TOKEN"
    assert kb.store.current_manifest().files["wiki/42.md"].version == "7"


def test_moving_from_indexed_folders_to_sources_says_what_goes(two_folders: KnowledgeBase, tmp_path: Path) -> None:
    two_folders.refresh([tmp_path / "hb"])  # an index built with `ai-employee index PATH`, before the sources file
    with pytest.raises(MassDeleteRefused, match="folders indexed with `ai-employee index` would remove 3 of its 3"):
        two_folders.sync()
    assert sorted(two_folders.store.current_manifest().files) == ["hotels.md", "meals.md", "visa.md"]
    report = two_folders.sync(allow_mass_delete=True)
    assert sorted(report.index.removed) == ["hotels.md", "meals.md", "visa.md"] and len(report.index.added) == 4


def test_a_file_its_source_did_not_list_is_never_indexed(shared_data_dir: Path, tmp_path: Path) -> None:
    """A wiki sync writes page bodies batch by batch; a 403 on a later batch stops it before its listing is
    kept, and the pages already written stay in the source's folder without the source's word on who may read
    them. A later build that reads the folder (another source's sync, a rebuild) read them as everyone's."""
    board = "# Board\n\nThe board approved the layoffs.\n"
    folder = write(tmp_path / "wiki", {"42.md": HOTELS, "43.md": board})
    kb = knowledge_base(shared_data_dir, tmp_path, """sources:
  - {name: wiki, type: web, url: "https://wiki.example.com/", collection: eng}
""")
    connector = Scripted("wiki", folder, {"42.md": DocumentMeta(title="Travel rules")})
    sync = kb.source_sync(kb.loader())
    sync._connector = lambda spec, workdir: connector
    assert sync.sync().ok
    assert set(kb.store.current_manifest().files) == {"wiki/42.md"}
    anyone = Scope(None, frozenset({"U0ANY"}))
    hits = kb.retriever.search("layoffs approved by the board", top_k=5, allowed=anyone)
    assert all("layoffs" not in h.chunk.text for h in hits)


def test_a_source_stuck_on_a_slow_page_holds_up_no_other_sync(shared_data_dir: Path, tmp_path: Path) -> None:
    """The web source's one page trickles its answer for as long as its deadline allows; meanwhile the other
    source is synced and published, a sync of every source publishes the rest, and the stuck source, asked
    for again, is said to be syncing."""
    write(tmp_path / "hb", {"hotels.md": HOTELS})
    with FakeWebsite() as site:
        site.put("/docs/", page("Policies", [("Welcome", "Every company policy, kept by HR.")], ["visa"]))
        site.put("/docs/visa", page("Visas", [("Fees", "Visa fees are paid by the travel desk.")]))
        site.trickle("/docs/visa", 0.05)
        file = tmp_path / "sources.yaml"
        file.write_text(f"""sources:
  - {{name: handbook, type: folder, path: {tmp_path / 'hb'}, collection: hr}}
  - {{name: intranet, type: web, url: "{site.url}/docs/", delay: 0}}
""", encoding="utf-8")
        kb = KnowledgeBase(Settings(data_dir=shared_data_dir, sources_file=file, web_request_timeout=15,
                                    _env_file=None), tmp_path / "index")
        stuck: list = []
        crawl = threading.Thread(target=lambda: stuck.append(kb.sync(["intranet"])))
        crawl.start()
        while not site.hits_for("/docs/visa"):
            time.sleep(0.05)

        alone = kb.sync(["handbook"])
        (tmp_path / "hb" / "meals.md").write_text(MEALS, encoding="utf-8")
        every = kb.sync()
        live = set(kb.store.current_manifest().files)
        crawl.join(30)

    assert alone.ok and alone.index.added == ["handbook/hotels.md"]
    assert every.index.added == ["handbook/meals.md"] and every.sources["handbook"].ok
    assert every.sources["intranet"].error == ("a sync of intranet is already running; it publishes what it "
                                               "fetches when it is done")
    assert live == {"handbook/hotels.md", "handbook/meals.md"}, "published while the crawl was still stuck"
    assert stuck[0].ok and stuck[0].index.added == ["intranet/index.md"], "published on top of the others"
    assert set(kb.store.current_manifest().files) == {"handbook/hotels.md", "handbook/meals.md", "intranet/index.md"}
