"""The git source against real repositories: a bare repository made in the test (the "server"), a work
clone that commits and pushes to it, and for tokens git's own HTTP server (tests.fakes.git_http)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from rag.index.metadata import DocumentMeta
from rag.sources.base import Fetched, SourceError
from rag.sources.config import GitSource
from rag.sources.git import GitConnector
from tests.fakes.git_http import GitHttpServer
from tests.fakes.git_origin import Origin, git as _git

TOKEN = "ghp-test-token-3f9a1c"


def _spec(url: str | Path, **fields) -> GitSource:
    return GitSource(type="git", name="runbooks", url=str(url), **fields)


def _fetch(connector: GitConnector, workdir: Path, state: dict | None = None) -> Fetched:
    return connector.fetch(workdir, state or {}, lambda done, total, what: None)


@pytest.fixture
def origin(tmp_path: Path) -> Origin:
    return Origin(tmp_path / "server")


FILES = {"README.md": "# Runbooks\n", "docs/deploy.md": "# Deploy\nRun make deploy.\n",
         "docs/on call.md": "# On call\n", "文档/说明.md": "# 说明\n", ".github/ci.yml": "on: push\n"}


def test_first_sync_lists_every_file_with_its_commit_and_date(origin: Origin, tmp_path: Path) -> None:
    first = origin.commit(FILES, date="2026-01-05T10:00:00+00:00")
    second = origin.commit({"docs/deploy.md": "# Deploy\nRun make release.\n"}, date="2026-02-10T09:30:00+00:00")
    fetched = _fetch(GitConnector(_spec(origin.bare)), tmp_path / "work")

    assert fetched.root == tmp_path / "work" / "checkout"
    assert sorted(fetched.documents) == ["README.md", "docs/deploy.md", "docs/on call.md", "文档/说明.md"]
    assert fetched.documents["README.md"] == DocumentMeta(version=first[:12], date="2026-01-05")
    assert fetched.documents["docs/deploy.md"] == DocumentMeta(version=second[:12], date="2026-02-10")
    assert (fetched.root / "docs" / "deploy.md").read_text(encoding="utf-8") == "# Deploy\nRun make release.\n"
    assert (fetched.root / "文档" / "说明.md").read_text(encoding="utf-8") == "# 说明\n"
    assert fetched.changed == sorted(fetched.documents) and fetched.removed == []
    assert fetched.state["commit"] == second and fetched.version == second and fetched.calls == 1
    assert fetched.complete


def test_a_new_commit_changes_only_the_file_it_touched(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare))
    before = _fetch(connector, tmp_path / "work")
    new = origin.commit({"docs/deploy.md": "# Deploy\nRun make ship.\n"}, date="2026-03-01T08:00:00+00:00")
    after = _fetch(connector, tmp_path / "work", before.state)

    assert after.changed == ["docs/deploy.md"] and after.removed == []
    assert after.documents["docs/deploy.md"] == DocumentMeta(version=new[:12], date="2026-03-01")
    assert {n: m for n, m in after.documents.items() if n != "docs/deploy.md"} == \
           {n: m for n, m in before.documents.items() if n != "docs/deploy.md"}
    assert (after.root / "docs" / "deploy.md").read_text(encoding="utf-8") == "# Deploy\nRun make ship.\n"
    assert after.state["commit"] == new and after.calls == 1


def test_a_sync_with_nothing_new_changes_nothing(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare))
    before = _fetch(connector, tmp_path / "work")
    again = _fetch(GitConnector(_spec(origin.bare)), tmp_path / "work", before.state)  # a new process, too

    assert again.changed == [] and again.removed == [] and again.calls == 1
    assert again.documents == before.documents and again.state == before.state


def test_a_deleted_and_a_renamed_file(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare))
    before = _fetch(connector, tmp_path / "work")
    _git(origin.work, "mv", "docs/deploy.md", "docs/release.md")
    new = origin.commit({"README.md": None}, date="2026-04-01T12:00:00+00:00")
    after = _fetch(connector, tmp_path / "work", before.state)

    assert after.removed == ["README.md", "docs/deploy.md"]
    assert after.changed == ["docs/release.md"]
    assert after.documents["docs/release.md"] == DocumentMeta(version=new[:12], date="2026-04-01")
    assert not (after.root / "README.md").exists() and not (after.root / "docs" / "deploy.md").exists()
    assert (after.root / "docs" / "release.md").read_text(encoding="utf-8") == FILES["docs/deploy.md"]


def test_a_missing_branch_is_named_and_leaves_nothing_behind(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    with pytest.raises(SourceError, match="has no branch 'release': check branch") as caught:
        _fetch(GitConnector(_spec(origin.bare, branch="release")), tmp_path / "work")
    assert "\n" not in str(caught.value)
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == []  # no half-made clone


def test_a_branch_deleted_upstream_keeps_the_checkout(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES, branch="release")
    connector = GitConnector(_spec(origin.bare, branch="release"))
    before = _fetch(connector, tmp_path / "work")
    _git(origin.work, "push", "--quiet", "origin", ":refs/heads/release")
    with pytest.raises(SourceError, match="has no branch 'release'"):
        _fetch(connector, tmp_path / "work", before.state)
    assert (before.root / "docs" / "deploy.md").read_text(encoding="utf-8") == FILES["docs/deploy.md"]


def test_an_unreachable_repository_keeps_the_checkout_as_it_was(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    workdir = tmp_path / "work"
    before = _fetch(GitConnector(_spec(origin.bare)), workdir)
    origin.commit({"docs/deploy.md": "# Deploy\nNew text.\n"})
    head = _git(before.root, "rev-parse", "HEAD")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    for url, why in ((f"http://127.0.0.1:{port}/docs.git", "cannot be reached"),
                     (tmp_path / "nowhere.git", "no repository there")):
        with pytest.raises(SourceError, match=why) as caught:
            _fetch(GitConnector(_spec(url)), workdir, before.state)
        assert "\n" not in str(caught.value)
    assert caught.value.variable is None
    assert _git(before.root, "rev-parse", "HEAD") == head
    assert (before.root / "docs" / "deploy.md").read_text(encoding="utf-8") == FILES["docs/deploy.md"]
    assert _fetch(GitConnector(_spec(origin.bare)), workdir, before.state).changed == ["docs/deploy.md"]


def test_a_server_that_never_answers_times_out(origin: Origin, tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/docs.git"
        with pytest.raises(SourceError, match="gave no answer within 2 s") as caught:
            _fetch(GitConnector(_spec(url), timeout=2.0), tmp_path / "work")
    assert caught.value.transient
    assert list((tmp_path / "work").iterdir()) == []


def test_web_links_pin_the_files_commit_and_quote_the_path(origin: Origin, tmp_path: Path) -> None:
    first = origin.commit(FILES)
    second = origin.commit({"README.md": "# Runbooks, edited\n"})
    fetched = _fetch(GitConnector(_spec(origin.bare, web_url="https://github.com/acme/runbooks/")), tmp_path / "a")
    assert fetched.documents["README.md"].url == f"https://github.com/acme/runbooks/blob/{second}/README.md"
    assert fetched.documents["docs/on call.md"].url == f"https://github.com/acme/runbooks/blob/{first}/docs/on%20call.md"
    assert fetched.documents["文档/说明.md"].url == \
        f"https://github.com/acme/runbooks/blob/{first}/%E6%96%87%E6%A1%A3/%E8%AF%B4%E6%98%8E.md"
    assert fetched.documents["README.md"].link == "lines"

    template = "https://code.example.com/view?ref={branch}&file={path}&at={commit}"
    fetched = _fetch(GitConnector(_spec(origin.bare, web_url=template)), tmp_path / "b")
    assert fetched.documents["docs/on call.md"].url == \
        f"https://code.example.com/view?ref=main&file=docs/on%20call.md&at={first}"

    with pytest.raises(SourceError, match="web_url must be an http"):
        _fetch(GitConnector(_spec(origin.bare, web_url="javascript:alert(1)")), tmp_path / "c")


def test_a_path_limits_the_source_to_one_folder(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare, path="docs/", web_url="https://git.example.com/ops/runbooks"))
    before = _fetch(connector, tmp_path / "work")
    assert before.root == tmp_path / "work" / "checkout" / "docs"
    assert sorted(before.documents) == ["deploy.md", "on call.md"]
    assert before.documents["deploy.md"].url.endswith("/docs/deploy.md")

    origin.commit({"README.md": "# Changed outside the folder\n", "docs/new.md": "# New\n"})
    after = _fetch(connector, tmp_path / "work", before.state)
    assert after.changed == ["new.md"] and after.removed == []


@pytest.mark.parametrize(("path", "why"), [("handbook", "does not exist"), ("README.md", "is a file, not a folder")])
def test_a_path_not_in_the_repository_is_an_error(origin: Origin, tmp_path: Path, path: str, why: str) -> None:
    origin.commit(FILES)
    with pytest.raises(SourceError, match=f"the path '{path}' {why} on branch main"):
        _fetch(GitConnector(_spec(origin.bare, path=path)), tmp_path / "work")
    assert list((tmp_path / "work").iterdir()) == []


def test_a_folder_removed_upstream_keeps_the_checkout(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare, path="docs"))
    before = _fetch(connector, tmp_path / "work")
    origin.commit({"docs/deploy.md": None, "docs/on call.md": None})
    with pytest.raises(SourceError, match="the path 'docs' does not exist"):
        _fetch(connector, tmp_path / "work", before.state)
    assert sorted(p.name for p in before.root.iterdir()) == ["deploy.md", "on call.md"]


def test_symbolic_links_are_never_followed(origin: Origin, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("# Salaries\n", encoding="utf-8")
    origin.commit(FILES)
    (origin.work / "leak.md").symlink_to(tmp_path / "secret.md")
    _git(origin.work, "add", "leak.md")
    origin.commit({})
    fetched = _fetch(GitConnector(_spec(origin.bare)), tmp_path / "work")
    assert "leak.md" not in fetched.documents
    assert not os.path.lexists(fetched.root / "leak.md")


def test_a_crashed_first_clone_is_started_afresh(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    partial = tmp_path / "work" / "checkout.partial"
    partial.mkdir(parents=True)
    (partial / "half.md").write_text("# Half\n", encoding="utf-8")
    fetched = _fetch(GitConnector(_spec(origin.bare)), tmp_path / "work")
    assert "half.md" not in fetched.documents and not partial.exists()


def test_a_rewritten_history_still_dates_every_file(origin: Origin, tmp_path: Path) -> None:
    origin.commit(FILES)
    connector = GitConnector(_spec(origin.bare))
    before = _fetch(connector, tmp_path / "work")
    _git(origin.work, "commit", "--quiet", "--amend", "-m", "rewritten", date="2026-05-05T00:00:00+00:00")
    rewritten = _git(origin.work, "rev-parse", "HEAD")
    _git(origin.work, "push", "--quiet", "--force", "origin", "HEAD:main")
    after = _fetch(connector, tmp_path / "work", before.state)
    assert {m.version for m in after.documents.values()} == {rewritten[:12]}
    assert after.changed == [] and after.removed == []  # the same files, the same text


def test_check_reports_the_branch_and_the_checkout_without_changing_it(origin: Origin, tmp_path: Path) -> None:
    first = origin.commit(FILES)
    workdir = tmp_path / "work"
    report = GitConnector(_spec(origin.bare), workdir=workdir).check()
    assert report.ok and report.documents is None and first[:12] in report.detail
    assert not workdir.exists()

    _fetch(GitConnector(_spec(origin.bare)), workdir)
    second = origin.commit({"docs/new.md": "# New\n"})
    report = GitConnector(_spec(origin.bare), workdir=workdir).check()
    assert report.ok and report.documents == 4
    assert second[:12] in report.detail and f"4 documents at {first[:12]}" in report.detail
    assert not (workdir / "checkout" / "docs" / "new.md").exists()

    report = GitConnector(_spec(origin.bare, branch="gone"), workdir=workdir).check()
    assert not report.ok and "has no branch 'gone'" in report.detail


# -- tokens: git's own HTTP server behind Basic authentication ----------------------------------------------


@pytest.fixture
def server(origin: Origin):
    with GitHttpServer(origin.bare.parent, token=TOKEN) as running:
        yield running


def _everything_written(workdir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in workdir.rglob("*") if p.is_file())


def test_a_token_reaches_git_but_never_its_config_nor_the_command_line(
        origin: Origin, server: GitHttpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    origin.commit(FILES)
    commands: list[list[str]] = []
    real_popen = subprocess.Popen

    def recording(args, *rest, **kwargs):
        commands.append(list(args))
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    connector = GitConnector(_spec(server.url("docs.git"), token_env="RUNBOOKS_TOKEN"), {"RUNBOOKS_TOKEN": TOKEN},
                             workdir=tmp_path / "work")
    fetched = _fetch(connector, tmp_path / "work")
    assert sorted(fetched.documents) == ["README.md", "docs/deploy.md", "docs/on call.md", "文档/说明.md"]
    assert connector.check().ok
    assert server.expected in server.authorizations

    basic = server.expected.split()[1]
    assert TOKEN.encode() not in _everything_written(tmp_path / "work")
    assert basic.encode() not in _everything_written(tmp_path / "work")
    assert not [c for c in commands if any(TOKEN in a or basic in a for a in c)]
    assert TOKEN not in repr(connector) and basic not in repr(connector._remote())


def test_a_refused_token_names_its_variable_and_keeps_the_checkout(
        origin: Origin, server: GitHttpServer, tmp_path: Path) -> None:
    origin.commit(FILES)
    spec = _spec(server.url("docs.git"), token_env="RUNBOOKS_TOKEN")
    before = _fetch(GitConnector(spec, {"RUNBOOKS_TOKEN": TOKEN}), tmp_path / "work")
    origin.commit({"docs/deploy.md": "# Deploy\nChanged.\n"})
    wrong = "ghp-expired-token-77c2"
    with pytest.raises(SourceError, match="refused the credentials .*: check RUNBOOKS_TOKEN") as caught:
        _fetch(GitConnector(spec, {"RUNBOOKS_TOKEN": wrong}), tmp_path / "work", before.state)
    assert caught.value.variable == "RUNBOOKS_TOKEN" and not caught.value.transient
    assert wrong not in str(caught.value) and "\n" not in str(caught.value)
    assert (before.root / "docs" / "deploy.md").read_text(encoding="utf-8") == FILES["docs/deploy.md"]
    report = GitConnector(spec, {"RUNBOOKS_TOKEN": wrong}).check()
    assert not report.ok and "check RUNBOOKS_TOKEN" in report.detail and wrong not in report.detail

    with pytest.raises(SourceError, match="RUNBOOKS_TOKEN is not set") as caught:
        _fetch(GitConnector(spec, {}), tmp_path / "work", before.state)
    assert caught.value.variable == "RUNBOOKS_TOKEN"
    with pytest.raises(SourceError, match="asks for credentials|refused the credentials.*set token_env"):
        _fetch(GitConnector(_spec(server.url("docs.git")), {}), tmp_path / "other")


def test_credentials_in_the_url_are_used_but_never_stored_nor_shown(
        origin: Origin, server: GitHttpServer, tmp_path: Path) -> None:
    origin.commit(FILES)
    url = server.url("docs.git").replace("http://", f"http://x-access-token:{quote(TOKEN)}@")
    fetched = _fetch(GitConnector(_spec(url)), tmp_path / "work")
    assert "README.md" in fetched.documents
    assert TOKEN.encode() not in _everything_written(tmp_path / "work")

    with pytest.raises(SourceError) as caught:
        _fetch(GitConnector(_spec(url.replace("docs.git", "missing.git"))), tmp_path / "other")
    assert TOKEN not in str(caught.value) and "x-access-token:***@" not in str(caught.value)


def test_a_token_is_never_sent_over_plain_http_to_another_host(tmp_path: Path) -> None:
    spec = _spec("http://git.example.com/ops/runbooks.git", token_env="RUNBOOKS_TOKEN")
    with pytest.raises(SourceError, match="refusing to send a token over plain http to git.example.com"):
        _fetch(GitConnector(spec, {"RUNBOOKS_TOKEN": TOKEN}), tmp_path / "work")
