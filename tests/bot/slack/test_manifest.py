"""The Slack app manifest subscribes only to real events, with the scopes they need, and points every
URL at the path the bot serves."""

import json

import yaml

from bot.slack.app import EVENTS_PATH
from tests.conftest import PROJECT

REFERENCE = PROJECT.parent / "shared" / "slack-api-ref" / "events"


def manifest() -> dict:
    return yaml.safe_load((PROJECT / "slack-app-manifest.yml").read_text(encoding="utf-8"))


def test_events_exist_and_their_scopes_are_requested():
    app = manifest()
    scopes = set(app["oauth_config"]["scopes"]["bot"])
    for event in app["settings"]["event_subscriptions"]["bot_events"]:
        spec = json.loads((REFERENCE / f"{event}.json").read_text(encoding="utf-8"))
        needed = {s.replace(".", ":") for s in spec["scopes"]}
        assert not needed or needed & scopes, f"{event} needs one of {needed}"


def test_urls_point_at_the_bot_and_the_commands_are_declared():
    app = manifest()
    urls = [app["settings"]["event_subscriptions"]["request_url"], app["settings"]["interactivity"]["request_url"],
            *(c["url"] for c in app["features"]["slash_commands"])]
    assert all(url.endswith(EVENTS_PATH) for url in urls)
    assert [c["command"] for c in app["features"]["slash_commands"]] == ["/reindex", "/scope"]
    assert "assistant:write" in app["oauth_config"]["scopes"]["bot"] and app["features"]["assistant_view"]


def test_the_home_tab_is_enabled_and_its_event_subscribed():
    app = manifest()
    assert app["features"]["app_home"]["home_tab_enabled"] is True
    assert "app_home_opened" in app["settings"]["event_subscriptions"]["bot_events"]


def test_user_groups_can_be_read_for_access_lists():
    assert "usergroups:read" in manifest()["oauth_config"]["scopes"]["bot"]
