"""The Confluence connector against a local Confluence (tests/fakes/confluence.py): what lands in the
folder the indexer reads, with what metadata, at what cost in API calls, and what happens when Confluence
refuses, fails or rate-limits."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from rag.access import NOBODY
from rag.sources.base import SourceError
from rag.sources.config import ConfluenceSource
from rag.sources.confluence import ConfluenceConnector
from rag.sources.confluence_api import Retry
from rag.sources.confluence_storage import storage_to_markdown
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence

ENV = {"CONFLUENCE_USER": EMAIL, "CONFLUENCE_TOKEN": TOKEN}
HR_ENTRA = "0000a000-0000-4000-8000-0000000000a4"
HR_GROUPS = {"HR": {"slack": "S0HR", "entra": HR_ENTRA}}  # the wiki group HR's chat groups (the sources file's)
ALICE = {"type": "known", "accountId": "5b1", "email": "Alice@Example.com", "displayName": "Alice"}
HIDDEN = {"type": "known", "accountId": "5b2", "email": "", "displayName": "Someone"}  # Cloud hid the email
BOB = {"type": "known", "accountId": "5b3", "email": "bob@example.com", "displayName": "Bob"}

HOME = "<p>Welcome to engineering.</p>"
ONBOARDING = """<h1>First day</h1><p>Collect your badge at reception.</p>
<ac:structured-macro ac:name="info"><ac:parameter ac:name="title">Tip</ac:parameter>
<ac:rich-text-body><p>Bring an ID card.</p></ac:rich-text-body></ac:structured-macro>
<h2>Accounts</h2><table><tbody><tr><th>System</th><th>Who</th></tr>
<tr><td>VPN</td><td>IT desk</td></tr></tbody></table>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter>
<ac:plain-text-body><![CDATA[ssh-keygen -t ed25519]]></ac:plain-text-body></ac:structured-macro>
<p>See <ac:link><ri:page ri:content-title="Laptop setup"/></ac:link>.</p>"""


class Sleeps(list):
    """Records each wait instead of waiting it."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def confluence():
    server = FakeConfluence(max_limit=3)
    server.add_page("ENG", "1", "Engineering", HOME)
    server.add_page("ENG", "2", "Onboarding", ONBOARDING, parent="1")
    server.add_page("ENG", "3", "Laptop setup", "<p>Install the disk encryption.</p>", parent="2", version=4,
                    when="2026-01-07T08:30:00.000Z")
    server.add_page("ENG", "4", "Salaries", "<p>The salary bands.</p>", parent="1", readers=[ALICE],
                    reader_groups=["HR"])
    server.add_page("ENG", "5", "Reorg", "<p>The reorg plan.</p>", parent="1", readers=[HIDDEN])
    server.add_page("ENG", "6", "Bands 2026", "<p>This year's bands.</p>", parent="4")
    server.add_page("OPS", "7", "On call", "<p>Page the on-call engineer.</p>")
    server.attach("3", "att1", "Laptop guide.pdf", b"%PDF-1.4 guide")
    server.attach("3", "att2", "tools.zip", b"PK zip")  # a format the indexer does not read: not fetched
    server.attach("4", "att3", "../bands?.pdf", b"%PDF-1.4 bands")
    with server:
        yield server


def connector(server: FakeConfluence, env=ENV, sleeps: Sleeps | None = None, retry: Retry | None = None,
              **spec) -> ConfluenceConnector:
    source = ConfluenceSource(**{"name": "eng-wiki", "type": "confluence", "url": server.url,
                                 "spaces": ["ENG", "OPS"], "user_env": "CONFLUENCE_USER",
                                 "token_env": "CONFLUENCE_TOKEN", "groups": HR_GROUPS, **spec})
    return ConfluenceConnector(source, env, retry=retry or Retry(attempts=3, max_wait=30.0, backoff=0.01),
                               sleep=sleeps if sleeps is not None else Sleeps())


def no_progress(done: int, total: int, what: str) -> None:
    pass


def sync(server, workdir: Path, state=None, **kw):
    return connector(server, **kw).fetch(workdir, state or {}, no_progress)


def test_first_sync_writes_each_page_as_markdown_with_its_place_version_and_date(confluence, tmp_path):
    fetched = sync(confluence, tmp_path)

    assert fetched.root == tmp_path / "pages"
    assert sorted(fetched.documents) == ["ENG/1.md", "ENG/2.md", "ENG/3.md", "ENG/3/Laptop guide.pdf",
                                         "ENG/4.md", "ENG/4/_bands_.pdf", "ENG/5.md", "ENG/6.md", "OPS/7.md"]
    text = (fetched.root / "ENG/2.md").read_text()
    assert text.startswith("# Onboarding\n\n# First day\n\nCollect your badge at reception.")
    assert "## Accounts" in text and "| System | Who |\n| --- | --- |\n| VPN | IT desk |" in text
    assert "Bring an ID card." in text and "Tip" not in text  # a macro's text kept, its settings dropped
    assert "```\nssh-keygen -t ed25519\n```" in text and "bash" not in text
    assert "See Laptop setup." in text
    meta = fetched.documents["ENG/3.md"]
    assert meta.url == f"{confluence.url}/spaces/ENG/pages/3/Laptop%20setup"
    assert (meta.link, meta.title, meta.version, meta.date) == ("heading", "Laptop setup", "4",
                                                                "2026-01-07T08:30:00.000Z")
    assert meta.headings == ("Engineering", "Onboarding")  # its ancestors, the root first
    assert meta.access is None
    assert fetched.documents["ENG/1.md"].headings == ()
    assert fetched.complete and not fetched.removed and not fetched.kept
    assert sorted(fetched.changed) == sorted(fetched.documents)


def test_attachments_are_saved_under_their_page_with_the_pages_place_and_access(confluence, tmp_path):
    fetched = sync(confluence, tmp_path)

    assert (fetched.root / "ENG/3/Laptop guide.pdf").read_bytes() == b"%PDF-1.4 guide"
    assert not list(fetched.root.rglob("*.zip"))
    assert not (tmp_path / "bands?.pdf").exists() and (fetched.root / "ENG/4/_bands_.pdf").is_file()
    meta = fetched.documents["ENG/3/Laptop guide.pdf"]
    assert meta.url == f"{confluence.url}/download/attachments/3/Laptop%20guide.pdf?version=1&api=v2"
    assert (meta.title, meta.version, meta.headings) == ("Laptop guide.pdf", "1",
                                                         ("Engineering", "Onboarding", "Laptop setup"))
    assert fetched.documents["ENG/4/_bands_.pdf"].access == fetched.documents["ENG/4.md"].access


def test_restrictions_become_access_lists_and_fail_closed(confluence, tmp_path):
    documents = sync(confluence, tmp_path).documents

    assert documents["ENG/4.md"].access == ("email:alice@example.com", "s0hr", HR_ENTRA)
    assert documents["ENG/5.md"].access == (NOBODY,)  # restricted to a user whose email we cannot see
    assert documents["ENG/6.md"].access == ("email:alice@example.com", "s0hr", HR_ENTRA)  # inherited from Salaries
    assert documents["ENG/1.md"].access is None and documents["OPS/7.md"].access is None


def test_a_listing_that_leaves_out_restrictions_serves_nothing_to_anyone(confluence, tmp_path):
    confluence.show_restrictions = False

    documents = sync(confluence, tmp_path).documents

    assert {meta.access for meta in documents.values()} == {(NOBODY,)}


def test_a_listing_that_leaves_out_ancestors_or_lists_no_reader_it_counts_serves_those_pages_to_nobody(
        confluence, tmp_path):
    """Without its ancestors a page read as top-level, and a restriction counting readers it did not list read
    as no restriction: both made restricted pages everyone's."""
    confluence.list_readers = False
    documents = sync(confluence, tmp_path / "counted").documents
    assert documents["ENG/4.md"].access == (NOBODY,) and documents["ENG/6.md"].access == (NOBODY,)
    assert documents["ENG/1.md"].access is None, "a page with no restriction (size 0) is still everyone's"

    confluence.list_readers, confluence.show_ancestors = True, False
    documents = sync(confluence, tmp_path / "orphaned").documents
    assert {meta.access for name, meta in documents.items() if name.endswith(".md")} == {(NOBODY,)}


def test_a_page_restricted_again_below_a_restricted_ancestor_admits_only_whom_both_name(confluence, tmp_path):
    confluence.pages["6"].readers = [ALICE]
    confluence.add_page("ENG", "8", "Bands draft", "<p>Draft.</p>", parent="4", reader_groups=["finance"])

    documents = sync(confluence, tmp_path).documents

    assert documents["ENG/6.md"].access == ("email:alice@example.com",)
    assert documents["ENG/8.md"].access == (NOBODY,)


def test_a_sync_with_nothing_changed_costs_only_the_listing_and_rewrites_nothing(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in first.root.rglob("*") if p.is_file()}
    confluence.calls.clear()

    again = sync(confluence, tmp_path, first.state)

    # per space: the space, its pages 3 a call (ENG 6: 2 calls, OPS 1), its attachments (ENG 3: 1, OPS 0: 1)
    assert again.calls == len(confluence.calls) == (1 + 2 + 1) + (1 + 1 + 1)
    assert not confluence.calls_to("/download") and not any("id in" in c.query.get("cql", "")
                                                             for c in confluence.calls)
    assert again.changed == [] and again.removed == []
    assert again.documents == first.documents
    assert {p: p.stat().st_mtime_ns for p in again.root.rglob("*") if p.is_file()} == stamps


def test_an_edited_page_is_fetched_and_rewritten_alone(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in first.root.rglob("*") if p.is_file()}
    confluence.edit("3", "<p>Install the disk encryption and the VPN client.</p>",
                    when="2026-02-03T12:00:00.000Z")
    confluence.calls.clear()

    again = sync(confluence, tmp_path, first.state)

    assert again.changed == ["ENG/3.md"]
    assert "the VPN client" in (again.root / "ENG/3.md").read_text()
    meta = again.documents["ENG/3.md"]
    assert (meta.version, meta.date) == ("5", "2026-02-03T12:00:00.000Z")
    bodies = [c for c in confluence.calls if "id in" in c.query.get("cql", "")]
    assert [c.query["cql"] for c in bodies] == ["id in (3)"]
    assert [p for p, s in stamps.items() if p.stat().st_mtime_ns != s] == [again.root / "ENG/3.md"]


def test_a_page_whose_body_cannot_be_fetched_keeps_its_last_good_copy(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    confluence.edit("3", "<p>New text.</p>")
    confluence.fail_next(502, times=3, where="cql=id in")  # the body batch, each attempt

    again = sync(confluence, tmp_path, first.state)

    assert "disk encryption" in (again.root / "ENG/3.md").read_text()
    assert again.kept == {"ENG/3.md": "Confluence answered 502 for eng-wiki (page bodies): "
                                      "a server error, retried"}
    assert again.documents["ENG/3.md"] == first.documents["ENG/3.md"]  # still version 4
    assert sync(confluence, tmp_path, again.state).changed == ["ENG/3.md"]  # and fetched on the next sync


def test_an_attachment_is_downloaded_once_and_again_when_its_version_changes(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    assert len(confluence.calls_to("/download/attachments/3/")) == 1
    confluence.attachments["att1"].data, confluence.attachments["att1"].version = b"%PDF-1.4 guide v2", 2

    again = sync(confluence, tmp_path, first.state)

    assert again.changed == ["ENG/3/Laptop guide.pdf"]
    assert (again.root / "ENG/3/Laptop guide.pdf").read_bytes() == b"%PDF-1.4 guide v2"
    assert again.documents["ENG/3/Laptop guide.pdf"].version == "2"
    assert len(confluence.calls_to("/download/attachments/3/")) == 2


def test_a_page_the_search_index_has_not_seen_yet_is_fetched_by_id(confluence, tmp_path):
    confluence.add_page("ENG", "9", "Brand new", "<p>Just written.</p>", parent="1")
    confluence.unindexed.add("9")

    fetched = sync(confluence, tmp_path)

    assert "Just written." in (fetched.root / "ENG/9.md").read_text()
    assert confluence.calls_to("/rest/api/content/9")


def test_a_deleted_page_is_removed_with_its_attachments(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    del confluence.pages["3"]

    again = sync(confluence, tmp_path, first.state)

    assert sorted(again.removed) == ["ENG/3.md", "ENG/3/Laptop guide.pdf"]
    assert not (again.root / "ENG/3.md").exists() and not (again.root / "ENG/3").exists()
    assert "ENG/3.md" not in again.documents and "3" not in again.state["pages"]


def test_a_failed_listing_removes_nothing_and_says_what_failed(confluence, tmp_path):
    first = sync(confluence, tmp_path)
    files = sorted(p for p in first.root.rglob("*") if p.is_file())
    del confluence.pages["3"]
    confluence.fail_next(500, times=3, where="type = attachment")  # ENG's attachments, each attempt

    with pytest.raises(SourceError) as raised:
        sync(confluence, tmp_path, first.state)

    assert str(raised.value) == ("Confluence answered 500 for eng-wiki (the attachments of ENG): "
                                 "a server error, retried")
    assert raised.value.transient
    assert sorted(p for p in first.root.rglob("*") if p.is_file()) == files


def test_an_answer_that_is_not_json_fails_the_listing_in_one_line(confluence, tmp_path):
    """A proxy's sign-in page instead of Confluence's answer ended the sync with a JSON decoding traceback."""
    confluence.fail_next(200, where="/space/ENG", page="<html><body>Sign in to continue</body></html>")

    with pytest.raises(SourceError) as raised:
        sync(confluence, tmp_path)

    assert str(raised.value) == "Confluence's answer for eng-wiki (space ENG) was not JSON"


def test_a_confluence_trickling_its_answers_fails_the_sync_at_the_deadline(confluence, tmp_path):
    """Each byte comes well within the read timeout; one answer as a whole would take minutes."""
    first = sync(confluence, tmp_path)
    confluence.trickle_every = 0.01
    asked = len(confluence.calls)

    began = time.monotonic()
    with pytest.raises(SourceError) as raised:
        sync(confluence, tmp_path, first.state, retry=Retry(attempts=3, backoff=0.01, deadline=1))

    assert time.monotonic() - began < 3
    assert str(raised.value) == "Confluence took longer than 1 s to answer for eng-wiki (space ENG)"
    assert raised.value.transient and len(confluence.calls) == asked + 1, "not asked again"


def test_a_server_error_is_retried_with_backoff(confluence, tmp_path):
    confluence.fail_next(503, times=2)
    sleeps = Sleeps()

    fetched = sync(confluence, tmp_path, sleeps=sleeps)

    assert "ENG/1.md" in fetched.documents
    assert len(sleeps) == 2 and sleeps[0] < sleeps[1]
    assert [c.status for c in confluence.calls[:3]] == [503, 503, 200]


def test_a_429_waits_the_retry_after_it_names_capped(confluence, tmp_path):
    confluence.rate_limit_next("7")
    sleeps = Sleeps()
    sync(confluence, tmp_path, sleeps=sleeps)
    assert sleeps == [7.0]
    assert [c.status for c in confluence.calls[:2]] == [429, 200]

    confluence.rate_limit_next("86400")
    sleeps.clear()
    sync(confluence, tmp_path / "again", sleeps=sleeps)
    assert sleeps == [30.0]  # Retry.max_wait


def test_a_429_is_waited_out_for_real(confluence, tmp_path):
    confluence.rate_limit_next("1")
    source = ConfluenceSource(name="eng-wiki", type="confluence", url=confluence.url, spaces=["OPS"],
                              user_env="CONFLUENCE_USER", token_env="CONFLUENCE_TOKEN")

    ConfluenceConnector(source, ENV).fetch(tmp_path, {}, no_progress)

    limited, retried = confluence.calls[:2]
    assert (limited.status, retried.status) == (429, 200) and retried.path == limited.path
    assert retried.at - limited.at >= 1.0


def test_a_refused_token_names_the_variable_and_never_the_token(confluence, tmp_path, caplog):
    secret = "wrong-secret-1234567"
    caplog.set_level(logging.DEBUG)
    first = sync(confluence, tmp_path)
    confluence.calls.clear()

    with pytest.raises(SourceError) as raised:
        sync(confluence, tmp_path, first.state, env={**ENV, "CONFLUENCE_TOKEN": secret})

    assert str(raised.value) == ("Confluence answered 401 for eng-wiki: "
                                 "check CONFLUENCE_TOKEN and CONFLUENCE_USER")
    assert raised.value.variable == "CONFLUENCE_TOKEN" and not raised.value.transient
    assert (first.root / "ENG/1.md").is_file()
    assert [c.status for c in confluence.calls] == [401]  # a refused token is not retried
    conn = connector(confluence, env={**ENV, "CONFLUENCE_TOKEN": secret})
    for shown in (caplog.text, repr(conn), repr(raised.value), str(conn.check())):
        assert secret not in shown and TOKEN not in shown


def test_a_missing_variable_is_named(confluence, tmp_path):
    with pytest.raises(SourceError, match="^eng-wiki: CONFLUENCE_TOKEN is not set") as raised:
        sync(confluence, tmp_path, env={"CONFLUENCE_USER": EMAIL})
    assert raised.value.variable == "CONFLUENCE_TOKEN"


def test_an_unknown_space_fails_instead_of_listing_as_empty(confluence, tmp_path):
    first = sync(confluence, tmp_path)

    with pytest.raises(SourceError, match="^Confluence answered 404 for eng-wiki: space ENGX not found"):
        sync(confluence, tmp_path, first.state, spaces=["ENGX", "OPS"])
    assert (first.root / "ENG/1.md").is_file()


def test_data_center_with_a_personal_access_token(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    server = FakeConfluence(bearer="dc-pat", context="/confluence")
    server.add_page("DOC", "10", "Release notes", "<h2>9.2</h2><p>Faster search.</p>")
    with server:
        source = ConfluenceSource(name="dc-wiki", type="confluence", url=server.url, spaces=["DOC"],
                                  token_env="CONFLUENCE_PAT")
        fetched = ConfluenceConnector(source, {"CONFLUENCE_PAT": "dc-pat"}).fetch(tmp_path, {}, no_progress)
        assert "## 9.2\n\nFaster search." in (fetched.root / "DOC/10.md").read_text()
        assert all(c.authorization == "Bearer dc-pat" for c in server.calls)
    assert "dc-pat" not in caplog.text and "dc-pat" not in repr(fetched)


def test_check_counts_the_pages_of_each_space_and_changes_nothing(confluence):
    report = connector(confluence).check()

    assert report.ok and report.documents == 7
    assert report.detail == f"{confluence.url}: pages ENG 6, OPS 1"
    assert all(c.method == "GET" for c in confluence.calls)


def test_check_reports_a_refused_token_in_one_line(confluence):
    report = connector(confluence, env={**ENV, "CONFLUENCE_TOKEN": "nope"}).check()

    assert not report.ok
    assert report.detail.startswith("Confluence answered 401 for eng-wiki: check CONFLUENCE_TOKEN")


@pytest.mark.parametrize("storage, markdown", [
    ("<h3>Three</h3><h6>Six</h6><p>x</p>", "# T\n\n### Three\n\n###### Six\n\nx\n"),
    ('<p><ac:link><ri:page ri:content-title="VPN"/><ac:link-body>the <b>VPN</b> page</ac:link-body></ac:link></p>',
     "# T\n\nthe VPN page\n"),
    ('<ac:task-list><ac:task><ac:task-id>7</ac:task-id><ac:task-status>complete</ac:task-status>'
     '<ac:task-body>Return the laptop</ac:task-body></ac:task></ac:task-list>', "# T\n\n- Return the laptop\n"),
    ('<p>Done <ac:emoticon ac:name="tick"/><ac:image><ri:attachment ri:filename="a.png"/></ac:image></p>',
     "# T\n\nDone\n"),
])
def test_storage_format_becomes_markdown_a_reader_would_write(storage, markdown):
    assert storage_to_markdown(storage, "T") == markdown


def test_an_absolute_link_to_another_host_is_followed_on_the_configured_one(confluence, tmp_path):
    """A Data Center whose base URL setting names its public host gives absolute `next` links there; the
    credentials go with every request, so each is sent to the host the source is configured with."""
    confluence.absolute_links = "http://wiki.public.invalid"
    fetched = sync(confluence, tmp_path)
    assert "OPS/7.md" in fetched.documents and "ENG/6.md" in fetched.documents and fetched.complete
    assert any(c.query.get("start") == "3" for c in confluence.calls), "the second page of a listing was read"


def test_an_attachment_whose_new_version_cannot_be_fetched_keeps_its_last_good_copy_and_its_readers(
        confluence, tmp_path):
    """Its last good copy stayed on disk but went unlisted: read from the folder it had no readers
    (everyone's), and since unlisted files are not read at all, it would have left the index."""
    first = sync(confluence, tmp_path)
    confluence.attachments["att3"].version = 2  # on Salaries: Alice and HR only
    confluence.fail_next(502, times=3, where="/download/attachments/4/")

    again = sync(confluence, tmp_path, first.state)

    assert list(again.kept) == ["ENG/4/_bands_.pdf"]
    kept, was = again.documents["ENG/4/_bands_.pdf"], first.documents["ENG/4/_bands_.pdf"]
    assert (kept.version, kept.title, kept.headings) == (was.version, was.title, was.headings) == (
        "1", "../bands?.pdf", ("Engineering", "Salaries"))
    assert kept.access == ("email:alice@example.com", "s0hr", HR_ENTRA)


def test_a_space_only_some_may_view_gives_its_pages_those_readers(confluence, tmp_path):
    """A page with no restriction in a space only HR and Alice may view reached everyone who may read the
    source's collection: a space's view permissions were not read. Its pages' readers are the space's
    viewers; a restricted page's those both name (Confluence lets in only whom both admit)."""
    confluence.restrict_space("ENG", users=[ALICE], groups=["HR"])
    confluence.add_page("ENG", "8", "Bob's review", "<p>Review.</p>", parent="1", readers=[BOB])

    documents = sync(confluence, tmp_path).documents

    everyone_in_eng = {"email:alice@example.com", "s0hr", HR_ENTRA}
    assert set(documents["ENG/1.md"].access) == everyone_in_eng
    assert set(documents["ENG/3/Laptop guide.pdf"].access) == everyone_in_eng  # as its page
    assert set(documents["ENG/4.md"].access) == everyone_in_eng  # restricted to Alice and HR, who may view ENG
    assert documents["ENG/5.md"].access == (NOBODY,) and documents["ENG/8.md"].access == (NOBODY,)
    assert documents["OPS/7.md"].access is None, "a space anyone may view leaves its pages to the collection"


def test_a_space_every_licensed_user_may_view_is_left_to_the_collection_once_its_group_is_mapped(confluence,
                                                                                                 tmp_path):
    confluence.restrict_space("OPS", groups=["confluence-users"])

    unmapped = sync(confluence, tmp_path / "unmapped")
    mapped = sync(confluence, tmp_path / "mapped", groups={**HR_GROUPS, "confluence-users": "everyone"})

    assert unmapped.documents["OPS/7.md"].access == (NOBODY,)
    assert unmapped.notes == ["the wiki group confluence-users is mapped to no chat group (groups: in the sources "
                              "file): its members are let in to none of the 1 page it may read"]
    assert mapped.documents["OPS/7.md"].access is None and not mapped.notes
    assert mapped.documents["ENG/4.md"].access == ("email:alice@example.com", "s0hr", HR_ENTRA)


def test_a_space_whose_view_permissions_are_not_said_reaches_no_one_and_the_report_says_why(confluence, tmp_path):
    confluence.show_space_permissions = False  # an answer that leaves out the expansion asked for

    fetched = sync(confluence, tmp_path)
    report = connector(confluence).check()

    assert {meta.access for meta in fetched.documents.values()} == {(NOBODY,)}
    why = "Confluence's answer did not list who may view it"
    assert fetched.notes == [f"space ENG: {why}, so no one is let in to its 6 pages",
                             f"space OPS: {why}, so no one is let in to its 1 page"]
    assert report.ok and report.unreadable_spaces == {"ENG": why, "OPS": why}


def test_check_names_the_pages_a_space_keeps_from_an_unmapped_group(confluence):
    confluence.restrict_space("OPS", groups=["ops-team"])

    report = connector(confluence).check()

    assert report.unmapped_groups == {"ops-team": ("On call",)} and not report.unreadable_spaces


CAROL = {"type": "known", "username": "carol", "userKey": "8a7f80836e0e5a3b016e0e5b1c2d0003",
         "displayName": "Carol"}  # a Data Center user: no email shown


@pytest.fixture
def data_center():
    """A Data Center: the view permissions are at /rest/api/space/{key}/permissions, not in the space."""
    server = FakeConfluence(bearer="dc-pat", context="/confluence", data_center=True)
    server.add_page("HR", "20", "Leave policy", "<p>26 days.</p>")
    server.add_page("HR", "21", "Payroll", "<p>Paid on the 25th.</p>", parent="20")
    server.add_page("DOC", "30", "Release notes", "<p>Faster search.</p>")
    server.add_page("OPS", "31", "On call", "<p>Page the on-call engineer.</p>")
    with server:
        yield server


def dc_connector(server: FakeConfluence, **groups) -> ConfluenceConnector:
    source = ConfluenceSource(name="dc-wiki", type="confluence", url=server.url, spaces=["HR", "DOC", "OPS"],
                              token_env="CONFLUENCE_PAT", groups={**HR_GROUPS, **groups})
    return ConfluenceConnector(source, {"CONFLUENCE_PAT": "dc-pat"}, retry=Retry(attempts=2, backoff=0.01),
                               sleep=Sleeps())


def test_a_data_center_space_only_hr_may_view_reaches_hr_alone(data_center, tmp_path):
    """Data Center's space answer does not list who may view it: every space's pages reached no one. Its
    grants are read from the space's permissions; a user Confluence shows no email for lets no one in, and
    `sources check` names them."""
    data_center.restrict_space("HR", users=[CAROL], groups=["HR"])

    fetched = dc_connector(data_center).fetch(tmp_path, {}, no_progress)
    report = dc_connector(data_center).check()

    assert fetched.documents["HR/20.md"].access == fetched.documents["HR/21.md"].access == ("s0hr", HR_ENTRA)
    assert not fetched.notes
    assert data_center.calls_to("/rest/api/space/HR/permissions")
    assert report.ok and not report.unreadable_spaces
    assert report.unmatched_users == {"HR": ("Carol (carol)",)}


def test_an_open_data_center_space_reaches_everyone_of_the_collection(data_center, tmp_path):
    data_center.restrict_space("DOC", anonymous=True)
    data_center.restrict_space("OPS", groups=["confluence-users"])

    documents = dc_connector(data_center, **{"confluence-users": "everyone"}).fetch(
        tmp_path, {}, no_progress).documents

    assert documents["DOC/30.md"].access is None, "open to anonymous users"
    assert documents["OPS/31.md"].access is None, "open to the group of every licensed user"


@pytest.mark.parametrize("status, page, why", [
    (403, None, "Confluence answered 403 for dc-wiki: the account of CONFLUENCE_PAT may not read the view "
                "permissions of space HR"),
    (200, None, "Confluence's answer to its view permissions was no list of them"),  # an object, no array
    (200, "<html><body>Sign in</body></html>",
     "Confluence's answer for dc-wiki (the view permissions of space HR) was not JSON"),
])
def test_a_data_center_space_whose_permissions_cannot_be_read_reaches_no_one_and_says_why(
        data_center, tmp_path, status, page, why):
    data_center.fail_next(status, times=2, where="/space/HR/permissions", page=page)

    fetched = dc_connector(data_center).fetch(tmp_path, {}, no_progress)
    report = dc_connector(data_center).check()

    assert fetched.documents["HR/20.md"].access == fetched.documents["HR/21.md"].access == (NOBODY,)
    assert fetched.notes == [f"space HR: {why}, so no one is let in to its 2 pages"]
    assert fetched.documents["DOC/30.md"].access is None, "the other spaces are read"
    assert report.ok and report.unreadable_spaces == {"HR": why}
