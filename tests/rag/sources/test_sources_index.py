"""Each source type synced into the real index, as a footnote shows it: which passages are searchable,
with which version and date, and the link that opens the place quoted. A git repository made in the test,
a local web site and a local Confluence, over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence
from tests.fakes.git_origin import Origin
from tests.fakes.website import FakeWebsite, page

DEPLOY = "# Deploy\n\nIntro line.\n\n## Rollback\n\nTo roll back a release run make rollback VERSION=previous and\nannounce it in the ops channel.\n"


def knowledge_base(shared_data_dir: Path, tmp_path: Path, sources: str) -> KnowledgeBase:
    file = tmp_path / "sources.yaml"
    file.write_text("sources:\n" + sources, encoding="utf-8")
    return KnowledgeBase(Settings(data_dir=shared_data_dir, sources_file=file, _env_file=None), tmp_path / "index")


def top(kb: KnowledgeBase, question: str):
    return kb.retriever.search(question, top_k=1)[0].chunk


def test_git_footnotes_open_the_quoted_lines_of_the_commit(shared_data_dir: Path, tmp_path: Path) -> None:
    origin = Origin(tmp_path / "server")
    first = origin.commit({"deploy.md": DEPLOY, "oncall.md": "# On call\n\nThe on-call engineer answers pages within 15 minutes.\n"})
    kb = knowledge_base(shared_data_dir, tmp_path, f"""  - {{name: runbooks, type: git, url: "{origin.bare}", collection: eng,
     web_url: "https://git.example.com/ops/runbooks"}}
""")
    assert kb.sync().ok
    chunk = top(kb, "how do I roll back a release")
    assert chunk.file == "runbooks/deploy.md" and chunk.collection == "eng"
    assert chunk.doc_version == first[:12] and chunk.doc_date == "2026-01-05"
    assert chunk.url == f"https://git.example.com/ops/runbooks/blob/{first}/deploy.md?plain=1#L7-L8"

    second = origin.commit({"oncall.md": "# On call\n\nThe on-call engineer answers pages within 5 minutes.\n"},
                           date="2026-02-01T08:00:00+00:00")
    report = kb.sync()
    assert report.index.changed == ["runbooks/oncall.md"] and report.index.embedded == 1
    oncall = top(kb, "how fast does on-call answer a page")
    assert "5 minutes" in oncall.text and oncall.doc_version == second[:12] and oncall.doc_date == "2026-02-01"
    assert top(kb, "how do I roll back a release").doc_version == first[:12]  # untouched file, untouched edition


def test_web_pages_are_indexed_without_their_menus_and_vanish_on_404(shared_data_dir: Path, tmp_path: Path) -> None:
    site = FakeWebsite(sitemap="urlset")
    site.put("/docs/", page("Policies", [("About", "The company policies.")], ["/docs/travel", "/docs/leave", "/docs/visa"]))
    site.put("/docs/travel", page("Travel", [("Per diem", "The per diem for a business trip abroad is 60 EUR a day.")]))
    site.put("/docs/leave", page("Leave", [("Parental leave", "Parents get sixteen weeks of paid parental leave.")]))
    site.put("/docs/visa", page("Visas", [("Fees", "Visa fees are paid by the company through the travel desk.")]))
    with site:
        kb = knowledge_base(shared_data_dir, tmp_path, f"""  - {{name: intranet, type: web, url: "{site.url}/docs/", delay: 0}}
""")
        assert kb.sync().ok
        chunk = top(kb, "what is the per diem abroad")
        assert chunk.file.startswith("intranet/") and "60 EUR a day" in chunk.text
        assert "Travel desk" not in chunk.text and "Imprint" not in chunk.text  # no menu, no footer
        assert chunk.url.startswith(f"{site.url}/docs/travel#:~:text=") and chunk.collection == "public"

        site.delete("/docs/leave")  # 404 now
        site.fail("/docs/visa", 500)  # broken, not gone
        report = kb.sync()
        assert report.ok and report.index.removed == ["intranet/leave.md"]
        files = set(kb.store.current_manifest().files)
        assert "intranet/visa.md" in files and "intranet/leave.md" not in files
        assert report.sources["intranet"].fetched.kept == {"visa.md": "HTTP 500"}


def test_confluence_pages_keep_their_tree_version_and_readers(shared_data_dir: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_USER", EMAIL)
    monkeypatch.setenv("WIKI_TOKEN", TOKEN)
    server = FakeConfluence()
    server.add_page("ENG", "1", "Engineering", "<p>Welcome to engineering.</p>")
    server.add_page("ENG", "2", "Deployments", "<h2>Freeze</h2><p>No deploys on Fridays after 3 pm.</p>", parent="1",
                    version=3, when="2026-03-02T10:00:00.000Z")
    server.add_page("ENG", "3", "Salaries", "<p>The salary bands are reviewed every April.</p>", parent="1",
                    readers=[{"type": "known", "accountId": "a1", "email": "Ann@Example.com"}])
    with server:
        kb = knowledge_base(shared_data_dir, tmp_path, f"""  - {{name: wiki, type: confluence, url: "{server.url}", spaces: [ENG],
     user_env: WIKI_USER, token_env: WIKI_TOKEN, collection: eng}}
""")
        assert kb.sync().ok
        chunk = top(kb, "can we deploy on friday")
        assert (chunk.title, chunk.heading_path, chunk.doc_version, chunk.doc_date) == (
            "Deployments", ("Engineering", "Freeze"), "3", "2026-03-02")
        assert chunk.url == f"{server.url}/spaces/ENG/pages/2/Deployments#Freeze" and chunk.collection == "eng"
        salaries = top(kb, "when are salary bands reviewed")
        assert salaries.access == ("-",)  # no chat surface to name Ann on: nobody (test_readers.py names her)

        server.fail_next(500, times=10)  # the listing fails: nothing is removed
        failed = kb.sync()
        assert not failed.ok and "500" in failed.sources["wiki"].error
        assert len(kb.store.current_manifest().files) == 3


def test_each_wiki_space_may_have_its_own_collection(shared_data_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKI_TOKEN", TOKEN)
    server = FakeConfluence(bearer=TOKEN)
    server.add_page("ENG", "1", "Deployments", "<p>No deploys on Fridays after 3 pm.</p>")
    server.add_page("HR", "2", "Payroll", "<p>Salaries are paid on the 25th of each month.</p>")
    with server:
        kb = knowledge_base(shared_data_dir, tmp_path, f"""  - {{name: wiki, type: confluence, url: "{server.url}",
     spaces: {{ENG: eng, HR: hr}}, token_env: WIKI_TOKEN}}
""")
        assert kb.sync().ok
        assert top(kb, "when is salary paid").collection == "hr"
        assert top(kb, "can we deploy on friday").collection == "eng"
        manifest = kb.store.current_manifest()
        assert {name: manifest.collection(name) for name in manifest.files} == {"wiki/ENG/1.md": "eng", "wiki/HR/2.md": "hr"}
