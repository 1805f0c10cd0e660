"""The fake Slack Web API, driven through the real slack_sdk clients (sync and async)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import SlackApiServer, load_reference

TOKEN = "xoxb-test-token"
DM = "D0DIRECT01"
CHANNEL = "C0GENERAL1"


@pytest.fixture
def slack():
    with SlackApiServer() as server:
        yield server


@pytest.fixture
def client(slack: SlackApiServer) -> WebClient:
    return WebClient(token=TOKEN, base_url=slack.base_url)


def api_error(call) -> SlackApiError:
    with pytest.raises(SlackApiError) as raised:
        call()
    return raised.value


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


# ---------------------------------------------------------------------------- reference and transport


def test_reference_loads_patches_undocumented_methods_and_amendments():
    reference = load_reference()
    assert len(reference.methods) > 300
    assert reference.method("users.prefs.get").undocumented  # from methods/_undocumented
    groups = [list(group["args"]) for group in reference.method("views.open").arg_groups]
    assert ["trigger_id", "interactivity_pointer"] in groups  # from methods/_patches
    append = reference.method("chat.appendStream")
    assert "markdown_text" not in append.required
    assert ["markdown_text", "chunks"] in [list(group["args"]) for group in append.arg_groups]


def test_base_url_and_auth_test(slack: SlackApiServer, client: WebClient):
    assert slack.base_url == f"http://127.0.0.1:{slack.port}/api/"
    identity = client.auth_test()
    assert (identity["user_id"], identity["bot_id"], identity["team_id"]) == (
        "U0FAKEBOT", "B0FAKEBOT", "T0FAKE001")
    assert slack.calls_to("auth.test")[0].token == TOKEN


def test_missing_and_invalid_tokens_are_rejected():
    with SlackApiServer(tokens={TOKEN}) as slack:
        assert api_error(WebClient(base_url=slack.base_url).auth_test).response["error"] == "not_authed"
        wrong = WebClient(token="xoxb-other", base_url=slack.base_url)
        assert api_error(wrong.auth_test).response["error"] == "invalid_auth"
        assert WebClient(token=TOKEN, base_url=slack.base_url).auth_test()["ok"]
        assert [call.error for call in slack.rejected_calls] == ["not_authed", "invalid_auth"]


def test_form_body_token_is_accepted_but_json_body_token_is_not(slack: SlackApiServer):
    form = urllib.parse.urlencode({"token": TOKEN, "channel": DM, "text": "form"}).encode()
    with urllib.request.urlopen(slack.base_url + "chat.postMessage", data=form) as answer:
        assert json.load(answer)["ok"]
    request = urllib.request.Request(slack.base_url + "auth.test", data=json.dumps({"token": TOKEN}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        assert json.load(answer)["error"] == "not_authed"
    assert slack.messages(DM)[0]["text"] == "form"


def test_malformed_bodies_are_rejected(slack: SlackApiServer):
    def post(body: bytes, content_type: str) -> dict:
        request = urllib.request.Request(slack.base_url + "auth.test", data=body, headers={
            "Content-Type": content_type, "Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request) as answer:
            return json.load(answer)

    assert post(b"<xml/>", "text/xml")["error"] == "invalid_post_type"
    assert post(b"{not json", "application/json")["error"] == "invalid_form_data"
    assert len(slack.rejected_calls) == 2


def test_unknown_method(slack: SlackApiServer, client: WebClient):
    error = api_error(lambda: client.api_call("chat.postMesage", json={"channel": DM, "text": "typo"}))
    assert error.response["error"] == "unknown_method"
    assert slack.rejected_calls[0].method == "chat.postMesage"


# --------------------------------------------------------------------------------------- validation


def test_missing_required_argument_answers_the_documented_error(slack: SlackApiServer, client: WebClient):
    assert api_error(lambda: client.api_call("chat.postMessage", json={"text": "hi"})).response["error"] == (
        "channel_not_found")
    assert api_error(lambda: client.api_call("users.info", params={})).response["error"] == "user_not_found"
    assert len(slack.rejected_calls) == 2


def test_missing_required_argument_without_a_documented_error(client: WebClient):
    error = api_error(lambda: client.api_call("views.open", json={"trigger_id": "123.456"}))
    assert error.response.data == {
        "ok": False, "error": "invalid_arguments",
        "response_metadata": {"messages": ["[ERROR] missing required field: view"]}}


def test_unknown_argument_is_rejected_by_name(slack: SlackApiServer, client: WebClient):
    error = api_error(lambda: client.chat_postMessage(channel=DM, text="hi", thread_tss="1.2"))
    assert error.response["error"] == "invalid_arguments"
    assert "thread_tss" in error.response["response_metadata"]["messages"][0]
    form = api_error(lambda: client.api_call("users.info", params={"user": "U1", "locale": "true"}))
    assert "locale" in form.response["response_metadata"]["messages"][0]
    with pytest.raises(AssertionError, match="thread_tss"):
        slack.assert_no_rejections()


def test_argument_groups(client: WebClient):
    with pytest.warns(UserWarning, match="text"):
        assert api_error(lambda: client.chat_postMessage(channel=DM)).response["error"] == "no_text"
    both = api_error(lambda: client.chat_postMessage(channel=DM, text="a", markdown_text="**a**"))
    assert both.response["error"] == "markdown_text_conflict"
    no_trigger = api_error(lambda: client.api_call("views.open", json={"view": {"type": "modal"}}))
    assert no_trigger.response["error"] == "invalid_arguments"
    with pytest.warns(UserWarning, match="text"):  # slack_sdk's own advice; Slack accepts it
        assert client.chat_postMessage(channel=DM, blocks=[section("blocks alone")])["ok"]


def test_type_checks(client: WebClient):
    broken = api_error(lambda: client.api_call("chat.postMessage", params={"channel": DM, "blocks": "[{"}))
    assert broken.response["error"] == "invalid_blocks_format"
    not_bool = api_error(lambda: client.chat_postMessage(channel=DM, text="x", unfurl_links="maybe"))
    assert not_bool.response["error"] == "invalid_arguments"
    as_list = api_error(lambda: client.api_call("chat.postMessage", json={"channel": [DM], "text": "x"}))
    assert as_list.response["error"] == "invalid_array_arg"
    bad_chunk = api_error(lambda: client.chat_startStream(channel=DM, thread_ts="1.2",
                                                          chunks=[{"type": "poem"}]))
    assert bad_chunk.response["error"] == "invalid_chunks"
    assert client.api_call("chat.postMessage", params={"channel": DM, "text": "x", "unfurl_links": "1"})["ok"]


def test_block_kit_limits(slack: SlackApiServer, client: WebClient):
    assert client.chat_postMessage(channel=DM, text="fifty", blocks=[section("b")] * 50)["ok"]
    too_many = api_error(lambda: client.chat_postMessage(channel=DM, text="x", blocks=[section("b")] * 51))
    assert too_many.response["error"] == "invalid_blocks"
    assert "no more than 50 items" in too_many.response["response_metadata"]["messages"][0]
    long_section = api_error(
        lambda: client.chat_postMessage(channel=DM, text="x", blocks=[section("y" * 3001)]))
    assert long_section.response["error"] == "invalid_blocks"
    assert long_section.response["response_metadata"]["messages"] == [
        "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"]
    assert client.chat_postMessage(channel=DM, text="x", blocks=[section("y" * 3000)])["ok"]
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    stop = api_error(lambda: client.chat_stopStream(channel=DM, ts=ts, blocks=[section("b")] * 51))
    assert stop.response["error"] == "msg_blocks_too_many"  # the streaming methods document their own code


def test_markdown_blocks_share_one_12000_character_allowance(slack: SlackApiServer, client: WebClient):
    def markdown(n: int) -> dict:
        return {"type": "markdown", "text": "m" * n}

    assert client.chat_postMessage(channel=DM, text="x", blocks=[markdown(6_000), markdown(6_000)])["ok"]
    over = api_error(lambda: client.chat_postMessage(channel=DM, text="x",
                                                     blocks=[markdown(6_000), markdown(6_001)]))
    assert over.response["error"] == "msg_blocks_too_long"  # chat.postMessage documents it
    assert "12000 characters together" in over.response["response_metadata"]["messages"][0]
    ts = client.chat_postMessage(channel=DM, text="x")["ts"]
    update = api_error(lambda: client.chat_update(channel=DM, ts=ts, text="x", blocks=[markdown(12_001)]))
    assert update.response["error"] == "invalid_blocks"  # chat.update does not document msg_blocks_too_long


def test_text_length_limits(client: WebClient):
    assert client.chat_postMessage(channel=DM, text="x" * 40_000)["ok"]
    assert api_error(lambda: client.chat_postMessage(channel=DM, text="x" * 40_001)).response["error"] == (
        "msg_too_long")
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    assert client.chat_appendStream(channel=DM, ts=ts, markdown_text="m" * 12_000)["ok"]
    too_long = api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="m" * 12_001))
    assert too_long.response["error"] == "msg_too_long"


# ------------------------------------------------------------------------------------------- state


def test_streaming_lifecycle(slack: SlackApiServer, client: WebClient):
    question = slack.seed_message(DM, "what is our leave policy?")
    ts = client.chat_startStream(channel=DM, thread_ts=question, markdown_text="Leave: ")["ts"]
    client.chat_appendStream(channel=DM, ts=ts, markdown_text="25 days")
    client.chat_appendStream(channel=DM, ts=ts, chunks=[{"type": "markdown_text", "text": " a year"}])
    assert slack.stream_state(DM, ts) == "streaming"
    busy = api_error(lambda: client.chat_update(channel=DM, ts=ts, text="edit while streaming"))
    assert busy.response["error"] == "streaming_state_conflict"
    feedback = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "sources: handbook"}]}]
    stopped = client.chat_stopStream(channel=DM, ts=ts, markdown_text=".", blocks=feedback)
    assert stopped["message"]["text"] == "Leave: 25 days a year."
    assert slack.final_text(DM, ts) == "Leave: 25 days a year."
    assert slack.message(DM, ts)["blocks"] == feedback
    assert slack.stream_state(DM, ts) == "stopped"
    after = api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="late"))
    assert after.response["error"] == "message_not_in_streaming_state"
    assert [message["ts"] for message in slack.thread(DM, question)] == [question, ts]
    slack.assert_no_rejections()


def test_stream_stopped_by_user_and_missing_stream(slack: SlackApiServer, client: WebClient):
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    slack.stop_by_user(DM, ts)
    assert api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="x")).response[
        "error"] == "stopped_by_user"
    assert api_error(lambda: client.chat_appendStream(channel=DM, ts="9.9", markdown_text="x")).response[
        "error"] == "message_not_found"


def test_a_stream_expired_on_slacks_side_refuses_appends_but_can_be_updated(slack: SlackApiServer,
                                                                           client: WebClient):
    ts = client.chat_startStream(channel=DM, thread_ts="1.2", markdown_text="draft")["ts"]
    slack.expire_stream(DM, ts)
    assert api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="x")).response[
        "error"] == "message_not_in_streaming_state"
    assert api_error(lambda: client.chat_stopStream(channel=DM, ts=ts)).response[
        "error"] == "message_not_in_streaming_state"
    assert client.chat_update(channel=DM, ts=ts, text="final")["ok"] and slack.final_text(DM, ts) == "final"
    slack.assert_no_rejections()


def test_response_urls_take_messages_five_times(slack: SlackApiServer):
    url = slack.response_url("cmd1")

    def post(body: object) -> tuple[int, str]:
        request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    assert post({"text": "Checking…", "response_type": "ephemeral"}) == (200, "ok")
    assert post({"response_type": "ephemeral"}) == (400, "no_text")
    assert post({"text": "x", "blocks": [section("y" * 3001)]}) == (400, "invalid_blocks")
    assert [post({"text": f"n{n}"})[0] for n in range(5)] == [200, 200, 200, 200, 404]
    answered = [c.args["text"] for c in slack.calls_to("response_url") if c.ok]
    assert answered == ["Checking…", "n0", "n1", "n2", "n3"]
    assert len(slack.rejected_calls) == 2


def test_start_stream_in_a_channel_needs_the_recipient(client: WebClient):
    error = api_error(lambda: client.chat_startStream(channel=CHANNEL, thread_ts="1.2"))
    assert error.response["error"] == "missing_recipient_user_id"
    assert client.chat_startStream(channel=CHANNEL, thread_ts="1.2", recipient_user_id="U1",
                                   recipient_team_id="T0FAKE001")["ok"]


def test_update_messages(slack: SlackApiServer, client: WebClient):
    ts = client.chat_postMessage(channel=CHANNEL, text="draft")["ts"]
    updated = client.chat_update(channel=CHANNEL, ts=ts, text="final")
    assert updated["message"]["text"] == "final" and slack.final_text(CHANNEL, ts) == "final"
    assert api_error(lambda: client.chat_update(channel=CHANNEL, ts="1.1", text="x")).response[
        "error"] == "message_not_found"
    human = slack.seed_message(CHANNEL, "a user's words")
    assert api_error(lambda: client.chat_update(channel=CHANNEL, ts=human, text="x")).response[
        "error"] == "cant_update_message"


def test_threads_users_views_and_recorded_calls(slack: SlackApiServer, client: WebClient):
    root = slack.seed_message(CHANNEL, "<@U0FAKEBOT> help")
    reply = client.chat_postMessage(channel=CHANNEL, thread_ts=root, text="on it")["ts"]
    replies = client.conversations_replies(channel=CHANNEL, ts=root)["messages"]
    assert [message["ts"] for message in replies] == [root, reply]
    assert replies[0]["reply_count"] == 1
    assert api_error(lambda: client.conversations_replies(channel=CHANNEL, ts="1.0")).response[
        "error"] == "thread_not_found"
    slack.add_user("U0BOSS001", is_admin=True, name="boss")
    assert client.users_info(user="U0BOSS001")["user"]["is_admin"] is True
    assert client.users_info(user="U0SOMEONE")["user"]["is_admin"] is False
    view = {"type": "modal", "title": {"type": "plain_text", "text": "Feedback"}, "blocks": [section("?")]}
    opened = client.views_open(trigger_id="123.456.abc", view=view)
    assert opened["view"]["id"] == slack.views[0]["view"]["id"]
    client.reactions_add(channel=CHANNEL, timestamp=root, name="eyes")
    assert api_error(lambda: client.reactions_add(channel=CHANNEL, timestamp=root, name="eyes")).response[
        "error"] == "already_reacted"
    client.chat_postEphemeral(channel=CHANNEL, user="U0BOSS001", text="only you")
    assert slack.ephemerals[0]["text"] == "only you"
    client.assistant_threads_setStatus(channel_id=DM, thread_ts=root, status="is thinking...",
                                       loading_messages=["Reading the handbook…"])
    client.assistant_threads_setSuggestedPrompts(channel_id=DM,
                                                 prompts=[{"title": "Leave", "message": "Leave?"}])
    client.assistant_threads_setTitle(channel_id=DM, thread_ts=root, title="Help")
    status = slack.calls_to("assistant.threads.setStatus")[0]
    assert status.args["loading_messages"] == ["Reading the handbook…"] and status.time <= time.time()
    assert client.conversations_info(channel=CHANNEL)["ok"]  # any other documented method: validated, ok
    slack.assert_no_rejections()


def test_views_publish_takes_a_home_view_for_a_user_and_keeps_it(slack: SlackApiServer, client: WebClient):
    home = {"type": "home", "blocks": [section("Welcome home")]}
    published = client.views_publish(user_id="U0BOSS001", view=home)["view"]
    assert published["type"] == "home" and published["id"] and published["hash"]
    assert slack.home_view("U0BOSS001")["blocks"] == [section("Welcome home")]
    again = client.views_publish(user_id="U0BOSS001", view={"type": "home", "blocks": [section("Updated")]},
                                 hash=published["hash"])["view"]
    assert again["id"] == published["id"] and slack.home_view("U0BOSS001")["blocks"] == [section("Updated")]
    assert slack.home_view("U0NOBODY1") is None
    slack.assert_no_rejections()
    stale = api_error(lambda: client.views_publish(user_id="U0BOSS001", view=home, hash=published["hash"]))
    assert stale.response["error"] == "hash_conflict" and not slack.rejected_calls  # a state error


def test_views_publish_is_validated_against_the_reference(slack: SlackApiServer, client: WebClient):
    home = {"type": "home", "blocks": [section("hi")]}

    def rejected(**args) -> dict:
        return api_error(lambda: client.api_call("views.publish", json=args)).response

    assert rejected(view=home)["response_metadata"]["messages"] == ["[ERROR] missing required field: user_id"]
    assert rejected(user_id="U0BOSS001")["response_metadata"]["messages"] == [
        "[ERROR] missing required field: view"]
    assert rejected(user_id="C0GENERAL1", view=home)["response_metadata"]["messages"] == ["invalid `user_id`"]
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "x"}, "blocks": []}
    assert rejected(user_id="U0BOSS001", view=modal)["response_metadata"]["messages"] == [
        "[ERROR] must be a valid enum value [json-pointer:/view/type]"]
    assert rejected(user_id="U0BOSS001", view={"type": "home"})["response_metadata"]["messages"] == [
        "[ERROR] missing required field: blocks [json-pointer:/view]"]
    too_many = rejected(user_id="U0BOSS001", view={"type": "home", "blocks": [section("b")] * 101})
    assert "[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]" in too_many["response_metadata"]["messages"]
    long_text = rejected(user_id="U0BOSS001", view={"type": "home", "blocks": [section("y" * 3001)]})
    assert long_text["response_metadata"]["messages"] == [
        "[ERROR] must be less than 3001 characters [json-pointer:/view/blocks/0/text/text]"]
    button = {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Go"},
                                               "action_id": "go", "value": "v" * 2001}]}
    assert rejected(user_id="U0BOSS001", view={"type": "home", "blocks": [button]})["response_metadata"][
        "messages"] == ["[ERROR] must be less than 2001 characters [json-pointer:/view/blocks/0/elements/0/value]"]
    assert all(call.error == "invalid_arguments" for call in slack.rejected_calls)
    assert len(slack.rejected_calls) == 8
    assert client.views_publish(user_id="U0BOSS001", view={"type": "home", "blocks": [section("b")] * 100})["ok"]


def test_modals_are_validated_and_updated_in_place(slack: SlackApiServer, client: WebClient):
    radio = {"type": "input", "block_id": "reason", "label": {"type": "plain_text", "text": "Why?"},
             "element": {"type": "radio_buttons", "action_id": "reason", "options": [
                 {"text": {"type": "plain_text", "text": "Outdated"}, "value": "outdated"}]}}
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Feedback"},
             "submit": {"type": "plain_text", "text": "Send"}, "blocks": [radio]}
    opened = client.views_open(trigger_id="1.2.3", view=modal)["view"]
    updated = client.views_update(view_id=opened["id"], hash=opened["hash"],
                                  view={**modal, "blocks": [section("Thanks")]})["view"]
    assert updated["id"] == opened["id"] and slack.views[0]["view"]["blocks"] == [section("Thanks")]
    slack.assert_no_rejections()
    assert api_error(lambda: client.views_update(view_id=opened["id"], hash=opened["hash"], view=modal)).response[
        "error"] == "hash_conflict"
    assert api_error(lambda: client.views_update(view_id="V0UNKNOWN", view=modal)).response["error"] == "not_found"
    assert not slack.rejected_calls, "state errors are not rejections"

    def problems(view: dict) -> list[str]:
        return api_error(lambda: client.views_open(trigger_id="1.2.3", view=view)).response[
            "response_metadata"]["messages"]

    assert problems({**modal, "type": "home"}) == ["[ERROR] must be a valid enum value [json-pointer:/view/type]"]
    assert problems({"type": "modal", "blocks": []}) == ["[ERROR] missing required field: title [json-pointer:/view]"]
    assert problems({**modal, "title": {"type": "plain_text", "text": "t" * 25}}) == [
        "[ERROR] must be less than 25 characters [json-pointer:/view/title/text]"]
    assert problems({**modal, "submit": None}) == [
        "[ERROR] missing required field: submit (the view has input blocks) [json-pointer:/view]"]
    eleven = {**radio, "element": {**radio["element"], "options": radio["element"]["options"] * 11}}
    assert problems({**modal, "blocks": [eleven]}) == [
        "[ERROR] no more than 10 items allowed [json-pointer:/view/blocks/0/element/options]"]
    assert problems({**modal, "private_metadata": "m" * 3001}) == [
        "[ERROR] must be less than 3001 characters [json-pointer:/view/private_metadata]"]


def test_scripted_response_for_a_stateless_method(slack: SlackApiServer, client: WebClient):
    slack.set_response("conversations.info", {"channel": {"id": CHANNEL, "is_im": False}})
    assert client.conversations_info(channel=CHANNEL)["channel"]["id"] == CHANNEL
    with pytest.raises(ValueError, match="state"):
        slack.set_response("chat.postMessage", {})
    slack.clear_calls()
    assert slack.calls == []


def test_user_groups_list_their_members_only_when_asked(slack: SlackApiServer, client: WebClient):
    slack.add_usergroup("S0HRLEADS", ["U0LEAD1", "U0LEAD2"], handle="hr-leads")
    slack.add_usergroup("S0OLD", ["U0LEAD1"], enabled=False)
    plain = client.usergroups_list()["usergroups"]
    assert [g["id"] for g in plain] == ["S0HRLEADS"] and "users" not in plain[0] and plain[0]["handle"] == "hr-leads"
    full = client.usergroups_list(include_users=True, include_disabled=True, include_count=True)["usergroups"]
    assert [(g["id"], g["users"], g["user_count"]) for g in full] == [
        ("S0HRLEADS", ["U0LEAD1", "U0LEAD2"], "2"), ("S0OLD", ["U0LEAD1"], "1")]
    assert client.usergroups_users_list(usergroup="S0HRLEADS")["users"] == ["U0LEAD1", "U0LEAD2"]
    assert api_error(lambda: client.usergroups_users_list(usergroup="S0OLD")).response["error"] == "no_such_subteam"
    assert api_error(lambda: client.api_call("usergroups.list", params={"include_user": "true"})).response[
        "error"] == "invalid_arguments", "a misspelt argument is rejected, as for every method"
    slack.clear_calls()


def test_strict_users():
    with SlackApiServer(strict_users=True, users={"U0KNOWN01": {"is_owner": True}}) as slack:
        client = WebClient(token=TOKEN, base_url=slack.base_url)
        assert client.users_info(user="U0KNOWN01")["user"]["is_owner"] is True
        assert api_error(lambda: client.users_info(user="U0NOBODY1")).response["error"] == "user_not_found"


# --------------------------------------------------------------------------------- failure injection


def test_rate_limit_surfaces_as_429_with_retry_after(slack: SlackApiServer, client: WebClient):
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    slack.fail_next("chat.appendStream", error="ratelimited", status=429, retry_after=1)
    error = api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="x"))
    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "1"
    assert error.response["error"] == "ratelimited"
    assert client.chat_appendStream(channel=DM, ts=ts, markdown_text="y")["ok"]  # only the next call failed
    assert slack.final_text(DM, ts) == "y"
    assert [call.injected for call in slack.calls_to("chat.appendStream")] == [True, False]


def test_rate_limit_retry_handler_retries(slack: SlackApiServer):
    client = WebClient(token=TOKEN, base_url=slack.base_url, retry_handlers=[RateLimitErrorRetryHandler(1)])
    slack.fail_next("chat.postMessage", status=429, retry_after=0)
    assert client.chat_postMessage(channel=DM, text="eventually")["ok"]
    assert [call.status for call in slack.calls_to("chat.postMessage")] == [429, 200]
    assert len(slack.messages(DM)) == 1


def test_server_errors_and_documented_error_injection(slack: SlackApiServer, client: WebClient):
    slack.fail_next("auth.test", status=503)
    error = api_error(client.auth_test)
    assert (error.response.status_code, error.response["error"]) == (503, "service_unavailable")
    retrying = WebClient(token=TOKEN, base_url=slack.base_url, retry_handlers=[ServerErrorRetryHandler(1)])
    slack.fail_next("auth.test", status=500)
    assert retrying.auth_test()["ok"]
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    slack.fail_next("chat.appendStream", error="message_not_in_streaming_state")
    assert api_error(lambda: client.chat_appendStream(channel=DM, ts=ts, markdown_text="x")).response[
        "error"] == "message_not_in_streaming_state"
    assert not slack.rejected_calls  # injected failures are not the bot's fault


def test_injecting_an_undocumented_error_raises(slack: SlackApiServer):
    with pytest.raises(ValueError, match="not a documented error"):
        slack.fail_next("chat.appendStream", error="cant_update_message")
    with pytest.raises(ValueError, match="not a method"):
        slack.fail_next("chat.appendStreem", error="ratelimited")
    with pytest.raises(ValueError, match="HTTP"):
        slack.fail_next("auth.test", error="fatal_error", status=404)
    slack.fail_next("chat.postMessage", error="not_in_channel")  # documented for chat.postMessage
    slack.fail_next("views.open", error="expired_trigger_id")


def test_slow_method(slack: SlackApiServer, client: WebClient):
    slack.slow("auth.test", 0.3)
    started = time.monotonic()
    client.auth_test()
    assert time.monotonic() - started >= 0.3


def test_a_dropped_connection_reaches_the_client_unanswered_and_is_not_acted_on(slack: SlackApiServer,
                                                                               client: WebClient):
    ts = client.chat_startStream(channel=DM, thread_ts="1.2")["ts"]
    slack.drop_next("chat.appendStream", times=2)
    client.retry_handlers.clear()  # slack_sdk's sync client retries no connection errors by default anyway
    with pytest.raises(Exception) as raised:
        client.chat_appendStream(channel=DM, ts=ts, markdown_text="lost")
    assert not isinstance(raised.value, SlackApiError), "no answer at all, not an error answer"
    assert slack.final_text(DM, ts) == "" and slack.calls_to("chat.appendStream")[0].status == 0
    with pytest.raises(Exception):
        client.chat_appendStream(channel=DM, ts=ts, markdown_text="lost")
    assert client.chat_appendStream(channel=DM, ts=ts, markdown_text="kept")["ok"]
    assert slack.final_text(DM, ts) == "kept"


def test_context_element_texts_are_limited_like_any_text_object(client: WebClient):
    def context(text: str) -> list[dict]:
        return [{"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}]

    assert client.chat_postMessage(channel=DM, text="x", blocks=context("y" * 3000))["ok"]
    long_context = api_error(lambda: client.chat_postMessage(channel=DM, text="x", blocks=context("y" * 3001)))
    assert long_context.response["response_metadata"]["messages"] == [
        "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/elements/0/text]"]


# ------------------------------------------------------------------ slack_sdk's own streaming helper


def test_sync_chat_stream_helper_end_to_end(slack: SlackApiServer, client: WebClient):
    question = slack.seed_message(DM, "summarise the handbook")
    streamer = client.chat_stream(channel=DM, thread_ts=question, buffer_size=16)
    pieces = ["The handbook ", "covers leave, ", "expenses ", "and security."]
    for piece in pieces:
        streamer.append(markdown_text=piece)
    final = streamer.stop(blocks=[section("Was this helpful?")])
    assert final["message"]["text"] == "".join(pieces)
    assert slack.final_text(DM, streamer.ts) == "".join(pieces)
    assert slack.message(DM, streamer.ts)["blocks"] == [section("Was this helpful?")]
    methods = [call.method for call in slack.calls if call.method.startswith("chat.")]
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"
    assert "chat.appendStream" in methods  # sent as chunks only, which the amendment allows
    with pytest.raises(SlackRequestError):
        streamer.append(markdown_text="after stop")
    slack.assert_no_rejections()


def test_async_client_streaming_rate_limit_and_concurrency(slack: SlackApiServer):
    async def scenario() -> None:
        client = AsyncWebClient(token=TOKEN, base_url=slack.base_url)
        question = slack.seed_message(DM, "hello")
        streamer = await client.chat_stream(channel=DM, thread_ts=question, buffer_size=4)
        for piece in ["Hel", "lo ", "there"]:
            await streamer.append(markdown_text=piece)
        await streamer.stop()
        assert slack.final_text(DM, streamer.ts) == "Hello there"

        slack.fail_next("conversations.replies", status=429, retry_after=1)
        with pytest.raises(SlackApiError) as raised:
            await client.conversations_replies(channel=DM, ts=question)  # an async GET call
        assert raised.value.response.status_code == 429
        assert raised.value.response.headers["Retry-After"] == "1"

        patient = AsyncWebClient(token=TOKEN, base_url=slack.base_url,
                                 retry_handlers=[AsyncRateLimitErrorRetryHandler(1)])
        slack.fail_next("users.info", status=429, retry_after=0)
        assert (await patient.users_info(user="U0HUMAN01"))["ok"]

        answers = await asyncio.gather(*(client.chat_postMessage(channel=CHANNEL, text=f"n{n}")
                                         for n in range(50)))
        assert len({answer["ts"] for answer in answers}) == 50

    asyncio.run(scenario())
    assert len(slack.messages(CHANNEL)) == 50
    assert [call.http_method for call in slack.calls_to("conversations.replies")] == ["GET"]
    slack.assert_no_rejections()
