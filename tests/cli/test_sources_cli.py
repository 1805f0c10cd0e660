"""`ai-employee sources …` and `index` with AIE_SOURCES_FILE, as an operator runs them: a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence

POLICY = "# Travel\n\n## Hotels\n\nHotels are reimbursed up to 150 EUR per night, or 220 EUR in London.\n"
RUNBOOK = "# Restart\n\nRestart the billing service with systemctl restart billing, then watch the logs.\n"


def run(tmp_path: Path, sources: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path / "data")
    if sources is not None:
        (tmp_path / "sources.yaml").write_text(sources, encoding="utf-8")
        env["AIE_SOURCES_FILE"] = str(tmp_path / "sources.yaml")
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def folders(tmp_path: Path) -> str:
    for name, text in (("hb", POLICY), ("ops", RUNBOOK)):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / f"{name}.md").write_text(text, encoding="utf-8")
    return (f"sources:\n  - {{name: handbook, type: folder, path: {tmp_path / 'hb'}, collection: hr, every: 1h}}\n"
            f"  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}\n")


def test_sync_list_and_check(tmp_path: Path) -> None:
    sources = folders(tmp_path)
    synced = run(tmp_path, sources, "sources", "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["ok"] and sorted(report["index"]["added"]) == ["handbook/hb.md", "ops/ops.md"]

    listed = json.loads(run(tmp_path, sources, "sources", "list", "--json").stdout)
    assert [(r["name"], r["type"], r["collection"], r["documents"], r["last_error"]) for r in listed] == [
        ("handbook", "folder", "hr", 1, ""), ("ops", "folder", "eng", 1, "")]
    assert listed[0]["next_run"].endswith("UTC") and listed[1]["next_run"] == "on demand"

    (tmp_path / "hb" / "hb.md").unlink()
    (tmp_path / "hb").rmdir()
    checked = run(tmp_path, sources, "sources", "check")
    assert checked.returncode == 1
    assert "✗ handbook" in checked.stdout and "missing or unreadable" in checked.stdout and "✓ ops" in checked.stdout

    failed = run(tmp_path, sources, "sources", "sync")
    assert failed.returncode == 1 and "✗ handbook" in failed.stdout
    table = run(tmp_path, sources, "sources", "list").stdout
    assert "missing or unreadable" in table
    searched = json.loads(run(tmp_path, sources, "search", "hotel per night", "--json").stdout)
    assert searched["hits"][0]["chunk"]["file"] == "handbook/hb.md"  # its last good document keeps serving


def test_a_wrong_sources_file_is_one_line(tmp_path: Path) -> None:
    result = run(tmp_path, "sources:\n  - {name: wiki, type: confluence, url: x, spaces: [A], token_env: T, evry: 1h}\n",
                 "sources", "list")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'sources.yaml'}: sources[0].evry: unknown key (a typo?)"]


def test_index_syncs_the_sources_and_refuses_a_path(tmp_path: Path) -> None:
    sources = folders(tmp_path)
    refused = run(tmp_path, sources, "index", str(tmp_path / "hb"))
    assert refused.returncode == 1 and "declare the folder there as a source" in refused.stderr
    indexed = run(tmp_path, sources, "index", "--json")
    assert indexed.returncode == 0 and json.loads(indexed.stdout)["ok"]
    unknown = run(tmp_path, sources, "sources", "sync", "wiki")
    assert unknown.returncode == 2 and "no source named wiki; the sources are: handbook, ops" in unknown.stderr


def test_check_names_the_wiki_groups_mapped_to_no_chat_group_and_the_pages_they_keep_from_their_members(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wiki group lets in the chat groups the sources file maps it to, and no one else: the operator is
    told which groups are not mapped and (by title) which pages their members do not get, and which spaces'
    view permissions could not be read."""
    monkeypatch.setenv("WIKI_USER", EMAIL)
    monkeypatch.setenv("WIKI_TOKEN", TOKEN)
    alice = {"type": "known", "accountId": "5b1", "email": "alice@example.com", "displayName": "Alice"}
    server = FakeConfluence()
    server.add_page("ENG", "1", "Engineering", "<p>Welcome.</p>")
    server.add_page("ENG", "2", "Board minutes", "<p>Minutes.</p>", parent="1", readers=[alice],
                    reader_groups=["Board-Only"])
    server.add_page("ENG", "3", "Budget 2027", "<p>Budget.</p>", parent="2")
    server.add_page("ENG", "4", "Salaries", "<p>Bands.</p>", parent="1", reader_groups=["HR"])
    with server:
        sources = (f'sources:\n  - {{name: wiki, type: confluence, url: "{server.url}", spaces: [ENG], '
                   "user_env: WIKI_USER, token_env: WIKI_TOKEN, groups: {HR: {slack: S0HR}}}\n")
        checked = run(tmp_path, sources, "sources", "check")
        as_json = run(tmp_path, sources, "sources", "check", "--json")
        synced = run(tmp_path, sources, "sources", "sync")
        server.show_space_permissions = False
        unreadable = run(tmp_path, sources, "sources", "check")

    assert checked.returncode == 0, checked.stderr
    assert "✓ wiki (4 documents)" in checked.stdout
    assert ("! the wiki group board-only is mapped to no chat group (add it under groups: in the sources file); "
            "none of its members reads Board minutes, Budget 2027") in " ".join(checked.stdout.split())
    assert "the wiki group hr" not in checked.stdout
    assert json.loads(as_json.stdout)["wiki"]["unmapped_groups"] == {"board-only": ["Board minutes", "Budget 2027"]}
    assert synced.returncode == 0, synced.stderr
    assert ("! the wiki group board-only is mapped to no chat group (groups: in the sources file): its members are "
            "let in to none of the 2 pages it may read") in " ".join(synced.stdout.split())
    assert "Board minutes" not in synced.stdout, "the sync's report names no restricted page"
    assert unreadable.returncode == 0, unreadable.stderr
    assert ("! space ENG: Confluence's answer did not list who may view it, so no one is let in to its pages"
            in " ".join(unreadable.stdout.split()))


def test_check_names_the_users_a_data_center_space_lets_in_whom_no_email_matches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Data Center names a space's users without their email: they are let in to none of its pages, and the
    operator is told who they are."""
    monkeypatch.setenv("WIKI_PAT", "dc-pat")
    carol = {"type": "known", "username": "carol", "userKey": "8a7f80836e0e5a3b016e0e5b1c2d0003",
             "displayName": "Carol"}
    server = FakeConfluence(bearer="dc-pat", context="/confluence", data_center=True)
    server.add_page("HR", "1", "Leave policy", "<p>26 days.</p>")
    server.restrict_space("HR", users=[carol], groups=["HR"])
    with server:
        sources = (f'sources:\n  - {{name: wiki, type: confluence, url: "{server.url}", spaces: [HR], '
                   "token_env: WIKI_PAT, groups: {HR: {slack: S0HR}}}\n")
        checked = run(tmp_path, sources, "sources", "check")
        as_json = run(tmp_path, sources, "sources", "check", "--json")

    assert checked.returncode == 0, checked.stderr
    assert ("! space HR lets Carol (carol) view it, but Confluence shows no email to match them to chat "
            "users by: none of its pages reaches them") in " ".join(checked.stdout.split())
    assert json.loads(as_json.stdout)["wiki"]["unmatched_users"] == {"HR": ["Carol (carol)"]}


LEAVE = "# Leave\n\nEveryone gets 26 days of paid annual leave a year.\n"


def indexed_handbook(tmp_path: Path) -> Path:
    """A handbook indexed with `ai-employee index PATH`, before any sources file: its own file in `public`,
    hr/'s in `hr`."""
    handbook = tmp_path / "handbook"
    (handbook / "hr").mkdir(parents=True)
    (handbook / "travel.md").write_text(POLICY, encoding="utf-8")
    (handbook / "hr" / "leave.md").write_text(LEAVE, encoding="utf-8")
    indexed = run(tmp_path, None, "index", str(handbook))
    assert indexed.returncode == 0, indexed.stderr
    return handbook


def in_file(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command with AIE_SOURCES_FILE naming tmp_path/sources.yaml as it is (or is not) there."""
    env = cli_env(tmp_path / "data") | {"AIE_SOURCES_FILE": str(tmp_path / "sources.yaml")}
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_a_sync_that_published_nothing_shows_why_in_the_sources_table(tmp_path: Path) -> None:
    indexed_handbook(tmp_path)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "ops.md").write_text(RUNBOOK, encoding="utf-8")
    sources = f"sources:\n  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}\n"
    refused = run(tmp_path, sources, "sources", "sync")
    assert refused.returncode == 1 and "would remove 2 of its 2 documents" in refused.stderr
    listed = json.loads(run(tmp_path, sources, "sources", "list", "--json").stdout)
    assert listed[0]["failures"] == 1 and listed[0]["last_error"].startswith(
        "fetched, but nothing was published: the sync of the folders indexed with `ai-employee index` would "
        "remove 2 of its 2 documents")


def test_moving_from_indexed_folders_to_a_sources_file_keeps_every_document(tmp_path: Path) -> None:
    handbook = indexed_handbook(tmp_path)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "ops.md").write_text(RUNBOOK, encoding="utf-8")
    ops = f"  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}\n"
    (tmp_path / "sources.yaml").write_text(f"# the knowledge sources\nsources:\n{ops}", encoding="utf-8")
    refused = in_file(tmp_path, "sources", "sync")
    assert refused.returncode == 1 and "would remove 2 of its 2 documents" in refused.stderr
    assert "`ai-employee sources adopt` declares those folders" in " ".join(refused.stderr.split())
    adopted = in_file(tmp_path, "sources", "adopt")
    assert adopted.returncode == 0, adopted.stderr
    assert (tmp_path / "sources.yaml").read_text(encoding="utf-8") == (
        f"# the knowledge sources\nsources:\n{ops}  - {{name: handbook, type: folder, path: {handbook}, exclude: [hr]}}\n"
        f"  - {{name: handbook-hr, type: folder, path: {handbook / 'hr'}, collection: hr}}\n")
    assert "sources sync" in adopted.stdout

    synced = in_file(tmp_path, "sources", "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    index = json.loads(synced.stdout)["index"]
    assert (index["added"], index["removed"]) == (["ops/ops.md"], [])
    assert sorted(index["refiled"]) == ["handbook-hr/leave.md", "handbook/travel.md"]
    hr = json.loads(in_file(tmp_path, "search", "annual leave days", "--scope", "hr", "--json").stdout)["hits"]
    assert [hit["chunk"]["file"] for hit in hr] == ["handbook-hr/leave.md"]
    again = in_file(tmp_path, "sources", "adopt")
    assert again.returncode == 0 and "Nothing to adopt" in again.stdout
