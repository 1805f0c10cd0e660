"""The scopes file: what it maps, and a mistake stops the start with one line naming file, key and problem."""

from __future__ import annotations

import pytest

from bot.core.scopes import ScopesFileError, load_scopes

GOOD = """
default: [public]            # unmapped channels
dm: [public]                 # direct messages / personal chats
slack: {C0HR: [hr, public], C0ENG: [eng, public]}
teams: {"19:abc@thread.tacv2": [eng, public]}
"""


def test_a_file_maps_places_to_collections(tmp_path):
    path = tmp_path / "scopes.yaml"
    path.write_text(GOOD, encoding="utf-8")
    scopes = load_scopes(path)
    assert scopes.default == {"public"} and scopes.dm == {"public"}
    assert scopes.mapped("slack", "C0HR") == {"hr", "public"}
    assert scopes.mapped("teams", "19:abc@thread.tacv2") == {"eng", "public"}
    assert scopes.mapped("slack", "C0OTHER") is None and scopes.mapped("teams", "C0HR") is None


def test_no_file_and_an_empty_file_leave_every_collection_everywhere(tmp_path):
    for scopes in (load_scopes(None), load_scopes(_write(tmp_path, ""))):
        assert scopes.default is None and scopes.dm is None and scopes.mapped("slack", "C0HR") is None


@pytest.mark.parametrize(("text", "error"), [
    ("default: public\n", "default: expected a list of collection names such as [hr, public], got the text 'public'"),
    ("dm: [hr, '']\n", "dm: a collection name must be a non-empty text, got the text ''"),
    ("slack: {C0HR: hr}\n", "slack.C0HR: expected a list of collection names such as [hr, public], got the text 'hr'"),
    ("slack: {'#hr': [hr]}\n", "slack.#hr: not a Slack channel id (like C0123ABCD; a #name does not work)"),
    ("slack: [C0HR]\n", "slack: expected a mapping of slack conversation ids to collections, got a list"),
    ("teams: {'19:x@thread.tacv2': [hr, 3]}\n", "teams.19:x@thread.tacv2: a collection name must be a non-empty "
                                               "text, got a number"),
    ("slak: {C0HR: [hr]}\n", "slak: unknown key (expected default, dm, slack, teams)"),
    ("slack: {C0HR: ['hr,public']}\n", "slack.C0HR: one name per list item, not 'hr,public'"),
    ("- public\n", "expected keys default, dm, slack, teams, got a list"),
    ("default: [public\n", "not valid YAML (line 2: expected ',' or ']', but got '<stream end>')"),
])
def test_a_mistake_is_one_line_naming_the_file_and_the_key(tmp_path, text, error):
    path = _write(tmp_path, text)
    with pytest.raises(ScopesFileError) as raised:
        load_scopes(path)
    assert str(raised.value) == f"{path}: {error}"
    assert "\n" not in str(raised.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ScopesFileError, match=r"scopes\.yaml: no such file \(AIE_SCOPES_FILE\)$"):
        load_scopes(tmp_path / "scopes.yaml")


def _write(tmp_path, text: str):
    path = tmp_path / "scopes.yaml"
    path.write_text(text, encoding="utf-8")
    return path
