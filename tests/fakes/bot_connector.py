"""A local Bot Connector (the service a Teams bot posts its replies to) for tests: real sockets, real HTTP,
one background thread. Point an activity's `serviceUrl` at `connector.service_url`.

It records every call — `POST /v3/conversations/{id}/activities[/{replyToId}]`, `PUT …/activities/{id}`,
`DELETE …/activities/{id}` — with its Authorization header, and checks what Teams would refuse:

* the body parses as a Bot Framework `Activity` (the microsoft-agents-activity models) → else 400;
* streaming (`streaminfo` entities): only in personal chats ("streaming api is not enabled" otherwise), one
  open stream per conversation, one `streamId` per stream, `streamSequence` increasing, informative
  updates of at most 1,000 characters, nothing after the final message; a stream the user stopped
  (`stop_by_user`) answers its later updates and its final message with Teams' 403 ContentStreamNotAllowed;
* citations (an `https://schema.org/Message` entity): positions 1…n, each referenced as `[n]` in the text,
  names ≤ 80, abstracts ≤ 160, at most 3 keywords of ≤ 28 characters;
* a message of at most 40 KB (UTF-16) → else 413.

Such refusals are *rejections* (`connector.rejections`, `assert_no_rejections()`); `fail_next` injects
errors (429 with Retry-After, 5xx) that are not.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from microsoft_agents.activity import Activity
from pydantic import ValidationError

from tests.fakes.local_server import LocalServer

MESSAGE_BYTES = 40 * 1024


@dataclass
class ConnectorCall:
    method: str  # POST / PUT / DELETE
    conversation: str
    activity_id: str | None  # the replyToId of a POST, the id of a PUT / DELETE
    body: dict[str, Any]
    authorization: str | None
    time: float
    status: int = 0  # 0 while it is being answered
    response: dict[str, Any] = field(default_factory=dict)
    problem: str = ""  # why it was rejected

    @property
    def activity(self) -> Activity:
        return Activity.model_validate(self.body)

    @property
    def type(self) -> str:
        return self.body.get("type", "")

    @property
    def text(self) -> str:
        return self.body.get("text") or ""

    def entity(self, kind: str) -> dict[str, Any] | None:
        return next((e for e in self.body.get("entities") or [] if e.get("type") == kind), None)

    @property
    def stream_info(self) -> dict[str, Any] | None:
        return self.entity("streaminfo")

    @property
    def citations(self) -> list[dict[str, Any]]:
        message = self.entity("https://schema.org/Message") or {}
        return message.get("citation") or []


@dataclass
class _Stream:
    stream_id: str
    sequence: int = 0
    stopped: bool = False


USER_STOPPED = {"code": "ContentStreamNotAllowed", "message": "Content stream was cancelled by user."}


class BotConnector(LocalServer):
    name = "fake Bot Connector"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ConnectorCall] = []
        self.rejections: list[ConnectorCall] = []
        self.messages: dict[str, dict[str, Any]] = {}  # activity id -> the activity as it now is
        self._streams: dict[str, _Stream] = {}  # conversation -> its open stream
        self._failures: list[tuple[str, int, float | None, str | None]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def service_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/v3/conversations/{conversation}/activities", self._handle)
        app.router.add_route("*", "/v3/conversations/{conversation}/activities/{activity_id}", self._handle)

    # ---- test-side helpers

    def fail_next(self, method: str, status: int, *, retry_after: float | None = None, times: int = 1,
                  kind: str | None = None) -> None:
        """Answer the next `times` calls of `method` (POST / PUT) — of activities of type `kind`, if given —
        with `status` (429 sends Retry-After)."""
        with self._lock:
            self._failures += [(method, status, retry_after, kind)] * times

    def stop_by_user(self, conversation: str) -> None:
        """The user pressing Stop on the answer streaming in `conversation`."""
        with self._lock:
            self._streams[conversation].stopped = True

    def calls_to(self, conversation: str | None = None, method: str | None = None) -> list[ConnectorCall]:
        with self._lock:
            return [c for c in self.calls if 0 < c.status < 300
                    and (conversation is None or c.conversation == conversation)
                    and (method is None or c.method == method)]

    def messages_in(self, conversation: str) -> list[ConnectorCall]:
        """Accepted message activities (not typing) posted or put in `conversation`, in order."""
        return [c for c in self.calls_to(conversation) if c.type == "message"]

    def final_messages(self, conversation: str) -> list[ConnectorCall]:
        """Messages that are answers: the end of a stream, or a message carrying the AI label."""
        return [c for c in self.messages_in(conversation)
                if (c.stream_info or {}).get("streamType") == "final" or c.entity("https://schema.org/Message")]

    def assert_no_rejections(self) -> None:
        assert not self.rejections, [(r.method, r.problem, r.body) for r in self.rejections]

    # ---- the API

    async def _handle(self, request: web.Request) -> web.Response:
        conversation = request.match_info["conversation"]
        activity_id = request.match_info.get("activity_id")
        try:
            body = await request.json() if request.method != "DELETE" else {}
        except ValueError:
            body = {"unreadable": True}
        call = ConnectorCall(request.method, conversation, activity_id, body, request.headers.get("Authorization"),
                             time.time())
        with self._lock:
            status, response = self._answer(call)
            call.status, call.response = status, response
            self.calls.append(call)
        headers = {}
        if status == 429:
            headers["Retry-After"] = str(call.problem or 1)
        return web.json_response(response, status=status, headers=headers)

    def _answer(self, call: ConnectorCall) -> tuple[int, dict[str, Any]]:
        failure = next((f for f in self._failures if f[0] == call.method and f[3] in (None, call.type)), None)
        if failure is not None:
            self._failures.remove(failure)
            call.problem = str(failure[2] or "") if failure[1] == 429 else ""
            return failure[1], {"error": {"code": "ServiceError", "message": "injected"}}
        if call.method == "DELETE":
            self.messages.pop(call.activity_id or "", None)
            return 200, {}
        stream, info = self._streams.get(call.conversation), call.stream_info or {}
        if stream is not None and stream.stopped and info.get("streamId") == stream.stream_id:
            if info.get("streamType") == "final":
                self._streams.pop(call.conversation)
            return 403, {"error": USER_STOPPED}
        problem, status = self._problem(call)
        if problem:
            call.problem = problem
            self.rejections.append(call)
            return status, {"error": {"code": "BadArgument", "message": problem}}
        if call.method == "PUT":
            self.messages[call.activity_id] = call.body
            return 200, {"id": call.activity_id}
        stream = self._streams.get(call.conversation)
        new_id = stream.stream_id if stream is not None else f"activity-{next(self._ids)}"
        if call.stream_info is not None and stream is None:
            self._streams[call.conversation] = _Stream(new_id, (call.stream_info or {}).get("streamSequence", 0))
        if (call.stream_info or {}).get("streamType") == "final":
            self._streams.pop(call.conversation, None)
        if call.type == "message":
            self.messages[new_id] = call.body
        return 201, {"id": new_id}

    def _problem(self, call: ConnectorCall) -> tuple[str, int]:
        try:
            activity = Activity.model_validate(call.body)
        except ValidationError as exc:
            return f"not an Activity: {exc.errors()[:3]}", 400
        if call.method == "PUT" and call.activity_id not in self.messages:
            return "no such activity", 404
        if len(json.dumps(call.body, ensure_ascii=False).encode("utf-16-le")) > MESSAGE_BYTES:
            return "MessageSizeTooBig", 413
        return self._stream_problem(call, activity) or self._citation_problem(call), 400

    def _stream_problem(self, call: ConnectorCall, activity: Activity) -> str:
        info = call.stream_info
        if info is None:
            return ""
        kind = (activity.conversation.conversation_type if activity.conversation else None) or "personal"
        if kind != "personal":
            return "BadArgument: streaming api is not enabled for this conversation"
        stream = self._streams.get(call.conversation)
        if info.get("streamType") == "informative" and len(call.text) > 1000:
            return "informative update over 1,000 characters"
        if stream is None:
            return "a stream must start with its first update, not a final message" if (
                info.get("streamType") == "final" or info.get("streamId")) else ""
        if info.get("streamId") != stream.stream_id:
            return "ContentStreamNotAllowed: another stream is open in this conversation"
        if info.get("streamType") != "final":
            sequence = info.get("streamSequence") or 0
            if sequence <= stream.sequence:
                return f"streamSequence {sequence} after {stream.sequence}"
            stream.sequence = sequence
        return ""

    def _citation_problem(self, call: ConnectorCall) -> str:
        citations = call.citations
        if not citations:
            return ""
        positions = [c.get("position") for c in citations]
        if sorted(positions) != list(range(1, len(positions) + 1)):
            return f"citation positions {positions} are not 1…n"
        markers = {int(n) for n in re.findall(r"\[(\d+)\]", call.text)}
        for citation in citations:
            appearance = citation.get("appearance") or {}
            keywords = appearance.get("keywords") or []
            if citation["position"] not in markers:
                return f"citation {citation['position']} is not referenced in the text"
            if len(appearance.get("name", "")) > 80 or len(appearance.get("abstract", "")) > 160:
                return "citation name over 80 or abstract over 160 characters"
            if len(keywords) > 3 or any(len(k) > 28 for k in keywords):
                return "citation keywords: at most 3, of at most 28 characters"
        return ""
