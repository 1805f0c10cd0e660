"""The sources file: what it accepts, and the one line it gives for each kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.sources.config import SourcesFileError, load_sources, parse_sources

WIKI = {"name": "eng-wiki", "type": "confluence", "url": "https://example.atlassian.net/wiki", "spaces": ["ENG"],
        "user_env": "CONFLUENCE_USER", "token_env": "CONFLUENCE_TOKEN"}


def test_the_readme_example_parses_with_its_intervals_and_defaults() -> None:
    handbook, runbooks, intranet, wiki = parse_sources({"sources": [
        {"name": "handbook", "type": "folder", "path": "/srv/handbook", "collection": "hr", "watch": True,
         "url": "https://git.example.com/handbook/blob/main/{path}"},
        {"name": "runbooks", "type": "git", "url": "https://git.example.com/ops/runbooks.git", "branch": "main",
         "collection": "eng", "every": "10m"},
        {"name": "intranet", "type": "web", "url": "https://intranet.example.com/policies/", "every": "1d"},
        {**WIKI, "spaces": {"ENG": "eng", "HR": "hr"}, "collection": "eng", "every": "15m",
         "groups": {"HR": {"slack": "S0614TZR7", "entra": "3F1C2A9E-0B7D-4C55-9E21-6D0F8A4B7C13"},
                    "confluence-users": "everyone"}}]})
    assert (handbook.watch, handbook.every, handbook.collection) == (True, 0.0, "hr")
    assert (runbooks.every, intranet.every, intranet.collection, intranet.max_pages) == (600, 86400, "public", 500)
    assert wiki.space_keys == ["ENG", "HR"] and wiki.space_collection("HR") == "hr" and wiki.every == 900
    assert wiki.secrets() == ("CONFLUENCE_USER", "CONFLUENCE_TOKEN")
    # compared as a question's Scope compares ids (lower case), whatever case the file writes them in
    assert wiki.groups["hr"].ids == ("s0614tzr7", "3f1c2a9e-0b7d-4c55-9e21-6d0f8a4b7c13")
    assert wiki.groups["confluence-users"].everyone and not wiki.groups["hr"].everyone


@pytest.mark.parametrize("source, message", [
    ({"name": "a", "type": "ftp"}, "sources[0]: type must be one of folder, git, web, confluence"),
    ({"name": "a"}, "sources[0]: each source needs a type: folder, git, web or confluence"),
    ({"name": "a", "type": "git"}, "sources[0].url: required"),
    ({"name": "a", "type": "web", "url": "x", "every": "soon"},
     "sources[0].every: expected an interval such as 15m, 1h or 1d (0: only on demand), got 'soon'"),
    ({"name": "a", "type": "web", "url": "x", "colection": "hr"}, "sources[0].colection: unknown key (a typo?)"),
    ({"name": "Eng Wiki", "type": "web", "url": "x"}, "sources[0].name: lower-case letters, digits"),
    ({**WIKI, "token_env": "sk-live-123 456"}, "sources[0].token_env: the name of an environment variable"),
    ({**WIKI, "spaces": {"ENG": "hr,eng"}}, "sources[0].spaces: one collection name"),
    ({**WIKI, "groups": {"HR": {"slack": "hr-team"}}},
     "sources[0].groups.HR.slack: a Slack user group id (S and letters or digits, such as S0614TZR7), not its name"),
    ({**WIKI, "groups": {"HR": {"entra": "HR staff"}}}, "sources[0].groups.HR.entra: an Entra group's object id"),
    ({**WIKI, "groups": {"HR": "S0HR"}}, "sources[0].groups.HR: expected {slack: <Slack user group id>, entra:"),
    ({**WIKI, "groups": {"HR": {}}}, "sources[0].groups.HR: a Slack user group id (slack:), an Entra group id"),
    ({**WIKI, "groups": {"HR": {"slack": "S0HR"}, "hr": {"slack": "S0HR2"}}},
     "sources[0].groups: 'hr': each wiki group once"),
    ({**WIKI, "groups": {"staff": {"everyone": True, "slack": "S0HR"}}}, "sources[0].groups.staff: a Slack user"),
])
def test_a_mistake_is_one_line_naming_the_key(source: dict, message: str) -> None:
    with pytest.raises(SourcesFileError) as raised:
        parse_sources({"sources": [source]}, "sources.yaml")
    text = str(raised.value)
    assert text.startswith(f"sources.yaml: {message}") and "\n" not in text
    assert "sk-live" not in text  # a secret written where its variable's name belongs is not repeated


def test_the_file_itself(tmp_path: Path) -> None:
    assert load_sources(None) == []
    with pytest.raises(SourcesFileError, match="no such file \\(AIE_SOURCES_FILE\\)"):
        load_sources(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("sources:\n  - {name: a, type: web\n", encoding="utf-8")
    with pytest.raises(SourcesFileError, match="not valid YAML \\(line"):
        load_sources(bad)
    twice = tmp_path / "twice.yaml"
    twice.write_text("sources:\n  - {name: a, type: web, url: x}\n  - {name: a, type: web, url: y}\n", encoding="utf-8")
    with pytest.raises(SourcesFileError, match="sources\\[1\\].name: 'a' is declared twice"):
        load_sources(twice)
