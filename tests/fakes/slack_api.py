"""A strict, local Slack Web API server for tests (real sockets, real HTTP, one background thread).

Point any slack_sdk client at it::

    with SlackApiServer() as slack:
        client = WebClient(token="xoxb-test", base_url=slack.base_url)
        client.chat_postMessage(channel="C0TEST", text="hi")
        slack.assert_no_rejections()

Every call is checked against Slack's published method reference (``../shared/slack-api-ref`` beside the project,
override with ``reference_dir=`` or ``$SLACK_API_REF``): ``methods/<group>/<method>.json``, with
``methods/_patches/…`` merged over it (top-level keys replaced, ``args``/``errors`` merged per key) and
``methods/_undocumented/…`` added as known methods. What is validated, in this order:

* transport: ``/api/<method>`` by GET (query string) or POST with ``application/json``,
  ``application/x-www-form-urlencoded``, ``multipart/form-data`` (or ``text/plain``, read as a form).
  A body without Content-Type → ``missing_post_type``; another type → ``invalid_post_type``; an unreadable
  body → ``invalid_form_data``. Unknown method → ``unknown_method``.
* auth: ``Authorization: Bearer <token>``, or ``token`` in the query/form (NOT in a JSON body: Slack only
  reads the bearer header for JSON). Missing → ``not_authed``; not accepted → ``invalid_auth``. By default
  any ``xoxb-``/``xoxp-`` token is accepted; pass ``tokens=`` to accept only those. ``api.test`` and the
  oauth/openid token exchanges need no token.
* argument names: not ``[A-Za-z0-9_]+`` → ``invalid_arg_name``; not in the method's ``args`` (``token``
  and the client-wide ``team_id`` aside) → ``invalid_arguments`` naming it. Slack itself ignores unknown arguments; this server does not,
  to catch typos and arguments the method does not take.
* required arguments (an empty string counts as missing): the method's own documented error when one of
  its error descriptions says that argument is missing/invalid (``channel`` → ``channel_not_found``,
  ``user`` → ``user_not_found``, conversations.replies ``ts`` → ``thread_not_found``, …); otherwise
  ``invalid_arguments`` with ``[ERROR] missing required field: <name>``.
* ``arg_groups``: not mutually exclusive → at least one of them; mutually exclusive → at most one, and
  exactly one unless ``"required": false``. Missing content → ``no_text`` where documented; text with
  ``markdown_text`` (or ``markdown_text`` with ``blocks``) → ``markdown_text_conflict`` where documented.
* types: booleans (``true/false/1/0``), integers, numbers, arrays (JSON list, JSON string or comma list),
  objects, and ``format: json`` fields, decoded (→ ``invalid_blocks_format`` / ``invalid_attachments`` /
  ``invalid_metadata_format`` / ``invalid_chunks`` where documented). A list or object given for a plain
  string argument → ``invalid_array_arg``. An array documented with "Maximum of N" is limited to N items.
* Block Kit (``blocks``, blocks chunks, ``view.blocks``): a list of objects with a ``type``; at most 50 blocks
  per message (100 in a view) → ``msg_blocks_too_many`` where documented, else ``invalid_blocks``; section
  text ≤ 3000 (not empty), section fields ≤ 10 × 2000, header plain_text ≤ 150, markdown blocks ≤ 12,000
  characters together (Slack's "cumulative limit for all markdown blocks in a single payload"; over it →
  ``msg_blocks_too_long`` where documented, else ``invalid_blocks``), context ≤ 10 elements, actions ≤ 25
  elements (each text ≤ 3000), block_id ≤ 255. Messages mimic Slack's ``[ERROR] … [json-pointer:/blocks/0/text/text]``.
* Block Kit elements (in actions blocks, section accessories and input blocks): buttons (text ≤ 75,
  value ≤ 2000, url ≤ 3000), radio buttons (1–10 options; option text ≤ 75, value ≤ 150),
  plain_text_input (min/max_length ≤ 3000, placeholder ≤ 150), any ``action_id`` ≤ 255; input blocks need
  a plain_text ``label`` (≤ 2000, hint too) and an ``element``.
* views (``view`` of views.open/push/update/publish): ``type`` ``modal`` (open, push, update) or ``home``
  (publish); ``blocks`` required (≤ 100); a modal needs a plain_text ``title`` ≤ 24 characters,
  ``close``/``submit`` are plain_text ≤ 24 and ``submit`` is required when there is an input block;
  ``private_metadata`` ≤ 3000, ``callback_id`` and ``external_id`` ≤ 255. views.publish's ``user_id``
  must be a user id (Slack: ``invalid `user_id```). Failures answer ``invalid_arguments`` with the
  problems, as Slack does.
* streaming chunks: a list of ``markdown_text`` (text), ``plan_update`` (title), ``task_update``
  (id, title, status) or ``blocks`` (blocks) objects → else ``invalid_chunks``.
* text lengths → ``msg_too_long``: limits read from the reference ("Limit this field to 12,000 characters"
  for ``markdown_text``; chat.update's documented 4,000 for ``text``), plus chat.postMessage ``text`` 40,000.
  Streaming calls count ``markdown_text`` plus markdown chunks together; ``stream_text_limit=`` optionally
  caps a streamed message's total text.
* chat.startStream into a channel (C…/G…) needs ``recipient_user_id``/``recipient_team_id``
  (→ ``missing_recipient_user_id`` / ``missing_recipient_team_id``).

Response URLs (``slack.response_url()``, handed to the app in a slash command or interaction payload) take
a JSON message with ``text`` or ``blocks`` (same Block Kit checks; else HTTP 400 ``no_text`` /
``invalid_blocks``), at most 5 times (then HTTP 404 ``used_url``), and answer ``ok``. They are recorded as
calls of the pseudo-method ``response_url``.

Views are kept: views.open returns the view with its ``id`` and ``hash``; views.update replaces a view opened
before (``not_found`` for another id, ``hash_conflict`` when ``hash`` is not the current one); views.publish
keeps each user's Home tab (``slack.home_view(user)``), with the same hash check.

User groups added with ``slack.add_usergroup(id, members)`` answer usergroups.list (members only with
``include_users``, disabled groups only with ``include_disabled``) and usergroups.users.list
(``no_such_subteam`` for a group it does not know). Users added with an ``email`` (``add_user(id, email=…)``,
kept in their profile as Slack does) answer users.lookupByEmail (``users_not_found`` for any other address).

``drop_next(method)`` closes the connection of a call without answering or acting on it, as a network
failure would (recorded with status 0).

Such failures are *rejections* (``slack.rejected_calls``, ``slack.assert_no_rejections()``). State errors
(``message_not_found``, ``message_not_in_streaming_state``, ``streaming_state_conflict``, …) are ordinary
API errors, not rejections.

Local amendment to the reference: chat.appendStream's ``markdown_text`` is marked required, yet
slack_sdk's own ``ChatStream`` appends with ``chunks`` only; here it needs ``markdown_text`` or ``chunks``.

Errors the server may answer, and that ``fail_next`` may inject: the method's ``errors``, the common
errors file, error codes in its response examples, ``invalid_auth``/``invalid_arguments`` (every method),
and ``msg_too_long`` for chat.postMessage and the chat.*Stream methods (Slack answers it there, though the
reference does not list it). Anything else makes ``fail_next`` raise ValueError.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import functools
import json
import os
import re
import threading
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

# ../shared beside the project checkout, as on every developer machine and in CI.
DEFAULT_REFERENCE_DIR = Path(
    os.environ.get("SLACK_API_REF", Path(__file__).resolve().parents[3] / "shared" / "slack-api-ref")
)

# Slack answers these for any method, though most method files do not list them.
UNIVERSAL_ERRORS = frozenset({"invalid_auth", "invalid_arguments"})
# Errors Slack is known to answer for these methods although their reference files do not list them.
OBSERVED_ERRORS: Mapping[str, frozenset[str]] = {
    "chat.postMessage": frozenset({"msg_too_long"}),
    "chat.startStream": frozenset({"msg_too_long"}),
    "chat.appendStream": frozenset({"msg_too_long"}),
    "chat.stopStream": frozenset({"msg_too_long"}),
}
# Text limits stated in Slack's prose documentation rather than the method files.
EXTRA_TEXT_LIMITS: Mapping[str, Mapping[str, int]] = {"chat.postMessage": {"text": 40_000}}
# Corrections applied after the reference's own patches (see the module docstring).
AMENDMENTS: Mapping[str, Mapping[str, Any]] = {
    "chat.appendStream": {
        "args": {"markdown_text": {"required": False}},
        "extra_arg_groups": [
            {"args": ["markdown_text", "chunks"], "mutually_exclusive": False,
             "desc": "Appended content: markdown_text or chunks (slack_sdk's ChatStream sends chunks only)."},
        ],
    },
}
TOKENLESS_METHODS = frozenset({
    "api.test", "oauth.access", "oauth.v2.access", "oauth.v2.user.access", "oauth.v2.exchange",
    "openid.connect.token",
})
STREAM_METHODS = frozenset({"chat.startStream", "chat.appendStream", "chat.stopStream"})

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
VIEW_TYPES: Mapping[str, tuple[str, ...]] = {
    "views.open": ("modal",), "views.push": ("modal",), "views.update": ("modal",), "views.publish": ("home",),
}
VIEW_TEXT_LIMIT = 24  # a modal's title, close and submit
VIEW_FIELD_LIMITS = {"private_metadata": 3000, "callback_id": 255, "external_id": 255}
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2000
URL_LIMIT = 3000
ACTION_ID_LIMIT = 255
RADIO_OPTIONS_MAX = 10
OPTION_TEXT_LIMIT = 75
OPTION_VALUE_LIMIT = 150
INPUT_LENGTH_LIMIT = 3000
PLACEHOLDER_LIMIT = 150
INPUT_LABEL_LIMIT = 2000
USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
BLOCK_ID_LIMIT = 255
SECTION_TEXT_LIMIT = 3000
SECTION_FIELDS_MAX = 10
SECTION_FIELD_LIMIT = 2000
HEADER_TEXT_LIMIT = 150
TEXT_OBJECT_LIMIT = 3000
MARKDOWN_BLOCK_LIMIT = 12_000
ELEMENT_LIMITS = {"context": 10, "actions": 25}
CHUNK_FIELDS: Mapping[str, tuple[str, ...]] = {
    "markdown_text": ("text",),
    "plan_update": ("title",),
    "task_update": ("id", "title", "status"),
    "blocks": ("blocks",),
}
JSON_ARG_ERRORS: Mapping[str, tuple[str, ...]] = {
    "blocks": ("invalid_blocks_format", "invalid_blocks"),
    "attachments": ("invalid_attachments",),
    "metadata": ("invalid_metadata_format",),
    "chunks": ("invalid_chunks",),
}
SCALAR_TYPES = frozenset({"string", "channel", "user", "timestamp", "enum", "file", "date"})
ARG_NAME = re.compile(r"[A-Za-z0-9_]+")
TRUE_WORDS, FALSE_WORDS = frozenset({"true", "1"}), frozenset({"false", "0"})
HUMAN_USER = "U0HUMAN01"


class ApiError(Exception):
    """A Slack error answer: ``{"ok": false, "error": code}``, with optional response_metadata messages."""

    def __init__(self, code: str, *messages: str, rejected: bool = False) -> None:
        super().__init__(code)
        self.code = code
        self.messages = list(messages)
        self.rejected = rejected  # the call broke the protocol or the method reference

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error": self.code}
        if self.messages:
            body["response_metadata"] = {"messages": self.messages}
        return body


def _reject(code: str, *messages: str) -> ApiError:
    return ApiError(code, *messages, rejected=True)


# ----------------------------------------------------------------------------------------- reference


@dataclass(frozen=True)
class MethodSpec:
    """One method of the reference, with patches and amendments applied."""

    name: str
    args: Mapping[str, Mapping[str, Any]]
    errors: Mapping[str, str]  # documented code → description
    arg_groups: tuple[Mapping[str, Any], ...]
    allowed_errors: frozenset[str]  # what this method may answer (and what fail_next may inject)
    text_limits: Mapping[str, int]
    undocumented: bool = False

    @property
    def required(self) -> list[str]:
        return [name for name, arg in self.args.items() if arg.get("required")]

    def allows(self, code: str) -> bool:
        return code in self.allowed_errors

    def pick(self, *codes: str) -> str:
        """The first of ``codes`` this method documents, else ``invalid_arguments``."""
        return next((code for code in codes if code in self.allowed_errors), "invalid_arguments")


class Reference:
    """Slack's method reference as loaded from disk (immutable; shared between servers)."""

    def __init__(self, root: Path) -> None:
        methods_dir = root / "methods"
        self.common_errors: Mapping[str, str] = _read_json(methods_dir / "_errors" / "common.json")["errors"]
        raw = {doc["name"]: (doc, False) for doc in _documents(methods_dir, documented=True)}
        for doc in _documents(methods_dir / "_undocumented", documented=False):
            raw.setdefault(doc["name"], (doc, True))
        patches = {path.stem: _read_json(path) for path in (methods_dir / "_patches").glob("*/*.json")}
        self.methods: dict[str, MethodSpec] = {
            name: self._build(_merge(doc, patches.get(name, {})), undocumented)
            for name, (doc, undocumented) in raw.items()
        }

    def method(self, name: str) -> MethodSpec | None:
        return self.methods.get(name)

    def _build(self, doc: Mapping[str, Any], undocumented: bool) -> MethodSpec:
        amendment = AMENDMENTS.get(doc["name"], {})
        doc = _merge(doc, {"args": amendment.get("args", {})})
        errors = dict(doc.get("errors") or {})
        allowed = (set(errors) | set(self.common_errors) | _example_errors(doc) | UNIVERSAL_ERRORS
                   | OBSERVED_ERRORS.get(doc["name"], frozenset()))
        return MethodSpec(
            name=doc["name"],
            args=doc.get("args") or {},
            errors=errors,
            arg_groups=tuple(doc.get("arg_groups", [])) + tuple(amendment.get("extra_arg_groups", [])),
            allowed_errors=frozenset(allowed),
            text_limits=_text_limits(doc),
            undocumented=undocumented,
        )


@functools.lru_cache(maxsize=4)
def load_reference(root: Path = DEFAULT_REFERENCE_DIR) -> Reference:
    return Reference(Path(root))


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _documents(directory: Path, *, documented: bool) -> Iterable[dict[str, Any]]:
    for path in sorted(directory.glob("*/*.json")):
        if documented and path.parent.name.startswith("_"):
            continue
        yield _read_json(path)


def _merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Patch keys replace the base's, except args/errors, merged per entry (and per arg field)."""
    merged = copy.deepcopy(dict(base))
    for key, value in patch.items():
        if key == "args":
            args = merged.setdefault("args", {})
            for name, fields in value.items():
                args[name] = {**args.get(name, {}), **fields}
        elif key == "errors":
            merged.setdefault("errors", {}).update(value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _example_errors(doc: Mapping[str, Any]) -> set[str]:
    examples = (doc.get("response") or {}).get("examples") or []
    return {code for example in examples for code in re.findall(r'"error"\s*:\s*"([a-z_]+)"', example)}


def _text_limits(doc: Mapping[str, Any]) -> dict[str, int]:
    limits: dict[str, int] = {}
    for name, arg in (doc.get("args") or {}).items():
        found = re.search(r"[Ll]imit this field to ([\d,]+) characters", arg.get("desc", ""))
        if found:
            limits[name] = int(found.group(1).replace(",", ""))
    too_long = (doc.get("errors") or {}).get("msg_too_long", "")
    found = re.search(r"`(\w+)` field cannot exceed ([\d,]+) characters", too_long)
    if found:
        limits[found.group(1)] = int(found.group(2).replace(",", ""))
    limits.update(EXTRA_TEXT_LIMITS.get(doc["name"], {}))
    return limits


# ---------------------------------------------------------------------------------------- validation


def validate_call(spec: MethodSpec, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Check one call's arguments against the reference; return them decoded. Raises ApiError."""
    _check_names(spec, raw)
    present = {name for name, value in raw.items() if value not in ("", None)}
    _check_required(spec, present)
    _check_groups(spec, present)
    args = {name: _decode(spec, name, value) if name in present else value for name, value in raw.items()}
    _check_lengths(spec, args)
    _check_method_rules(spec, args)
    return args


# slack_sdk sends `team_id` with every call once a client knows its workspace (Bolt's per-request
# clients do, for org-wide installs); Slack accepts it on any method, so it is not a bot mistake.
CLIENT_WIDE_ARGS = frozenset({"team_id"})


def _check_names(spec: MethodSpec, raw: Mapping[str, Any]) -> None:
    for name in raw:
        if not ARG_NAME.fullmatch(name):
            raise _reject("invalid_arg_name", f"[ERROR] invalid argument name: {name!r}")
    unknown = sorted(set(raw) - set(spec.args) - CLIENT_WIDE_ARGS)
    if unknown:
        raise _reject("invalid_arguments", *(
            f"[ERROR] unknown argument: {name} (not in the {spec.name} reference)" for name in unknown))


def _check_required(spec: MethodSpec, present: set[str]) -> None:
    for name in spec.required:
        if name not in present:
            code = _missing_arg_error(spec, name)
            if code == "invalid_arguments":
                raise _reject(code, f"[ERROR] missing required field: {name}")
            raise _reject(code)


def _missing_arg_error(spec: MethodSpec, name: str) -> str:
    """The method's documented error for a missing ``name``, found in its error descriptions."""
    arg = rf"`?{re.escape(name)}`?(?!\w)"
    missing = [rf"no `{re.escape(name)}` argument", rf"no value (was )?(passed|provided) for {arg}",
               rf"value (passed )?for {arg} (was|is) (missing|empty)", rf"missing {arg}"]
    invalid = [rf"value (passed )?for {arg} (was|is) invalid", rf"invalid {arg}", rf"^{arg} was invalid"]
    for patterns in (missing, invalid):
        for code, desc in spec.errors.items():
            if any(re.search(pattern, desc, re.IGNORECASE) for pattern in patterns):
                return code
    return "invalid_arguments"


def _check_groups(spec: MethodSpec, present: set[str]) -> None:
    for group in spec.arg_groups:
        names = list(group["args"])
        given = [name for name in names if name in present]
        exclusive = group.get("mutually_exclusive", False)
        if exclusive and len(given) > 1:
            code = spec.pick("markdown_text_conflict") if "markdown_text" in names else "invalid_arguments"
            raise _reject(code, f"[ERROR] only one of {', '.join(names)} may be given")
        if not given and group.get("required", True):
            content = {"text", "markdown_text"} & set(names)
            code = spec.pick("no_text") if content else "invalid_arguments"
            raise _reject(code, f"[ERROR] missing required field: one of {', '.join(names)}")


def _decode(spec: MethodSpec, name: str, value: Any) -> Any:
    arg = spec.args.get(name, {})
    kind, fmt = arg.get("type"), arg.get("format")
    if name == "blocks":
        return _decode_blocks(spec, value)
    if name == "chunks":
        return _decode_chunks(spec, value)
    if fmt == "json":
        return _decode_json(spec, name, value)
    if kind == "boolean":
        return _decode_bool(name, value)
    if kind in ("integer", "number"):
        return _decode_number(name, value, int if kind == "integer" else float)
    if kind == "array":
        return _decode_array(spec, name, value)
    if kind == "object":
        return _decode_object(name, value)
    if kind in SCALAR_TYPES and isinstance(value, (list, dict)):
        raise _reject("invalid_array_arg", f"[ERROR] {name} must be a string")
    return value


def _parse_json_text(spec: MethodSpec, name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        code = spec.pick(*JSON_ARG_ERRORS.get(name, ()))
        raise _reject(code, f"[ERROR] {name} is not valid JSON") from None


def _decode_json(spec: MethodSpec, name: str, value: Any) -> Any:
    decoded = _parse_json_text(spec, name, value)
    if name == "view":
        _check_view(spec, decoded)
    return decoded


def _decode_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in TRUE_WORDS | FALSE_WORDS:
        return word in TRUE_WORDS
    raise _reject("invalid_arguments", f"[ERROR] {name} must be a boolean, got {value!r}")


def _decode_number(name: str, value: Any, kind: type) -> int | float:
    if isinstance(value, bool):
        raise _reject("invalid_arguments", f"[ERROR] {name} must be a number")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise _reject("invalid_arguments", f"[ERROR] {name} must be a number, got {value!r}") from None


def _decode_array(spec: MethodSpec, name: str, value: Any) -> list[Any]:
    if isinstance(value, str):
        value = _parse_json_text(spec, name, value) if value.lstrip().startswith("[") else value.split(",")
    if not isinstance(value, list):
        raise _reject("invalid_arguments", f"[ERROR] {name} must be an array")
    found = re.search(r"Maximum of (\d+)", spec.args[name].get("desc", ""))
    if found and len(value) > int(found.group(1)):
        raise _reject("invalid_arguments", f"[ERROR] no more than {found.group(1)} items allowed "
                                           f"[json-pointer:/{name}]")
    return value


def _decode_object(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise _reject("invalid_arguments", f"[ERROR] {name} is not valid JSON") from None
    if not isinstance(value, dict):
        raise _reject("invalid_arguments", f"[ERROR] {name} must be an object")
    return value


def _decode_blocks(spec: MethodSpec, value: Any) -> list[Any]:
    blocks = _parse_json_text(spec, "blocks", value)
    if not isinstance(blocks, list):
        raise _reject(spec.pick("invalid_blocks_format", "invalid_blocks"),
                      "[ERROR] must be an array [json-pointer:/blocks]")
    _raise_block_problems(spec, blocks, "/blocks")
    return blocks


def _raise_block_problems(spec: MethodSpec, blocks: list[Any], pointer: str) -> None:
    problems = block_problems(blocks, pointer, MAX_MESSAGE_BLOCKS)
    if not problems:
        return
    if len(blocks) > MAX_MESSAGE_BLOCKS:
        code = spec.pick("msg_blocks_too_many", "invalid_blocks")
    elif markdown_length(blocks) > MARKDOWN_BLOCK_LIMIT:
        code = spec.pick("msg_blocks_too_long", "invalid_blocks")
    else:
        code = spec.pick("invalid_blocks")
    raise _reject(code, *problems)


def markdown_length(blocks: list[Any]) -> int:
    """Characters in all markdown blocks of a message together (Slack limits the sum)."""
    return sum(len(b["text"]) for b in blocks
               if isinstance(b, dict) and b.get("type") == "markdown" and isinstance(b.get("text"), str))


def block_problems(blocks: list[Any], pointer: str = "/blocks",
                   max_blocks: int = MAX_MESSAGE_BLOCKS) -> list[str]:
    """Slack-style ``[ERROR] …`` messages for the Block Kit limits Slack enforces (empty when fine)."""
    problems = []
    if len(blocks) > max_blocks:
        problems.append(f"[ERROR] no more than {max_blocks} items allowed [json-pointer:{pointer}]")
    for index, block in enumerate(blocks):
        where = f"{pointer}/{index}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            problems.append(f"[ERROR] missing required field: type [json-pointer:{where}]")
            continue
        problems.extend(_one_block_problems(block, where))
    if markdown_length(blocks) > MARKDOWN_BLOCK_LIMIT:
        problems.append(f"[ERROR] markdown blocks may hold {MARKDOWN_BLOCK_LIMIT} characters together, "
                        f"got {markdown_length(blocks)} [json-pointer:{pointer}]")
    return problems


def _one_block_problems(block: Mapping[str, Any], where: str) -> list[str]:
    problems = []
    kind = block["type"]
    if len(str(block.get("block_id", ""))) > BLOCK_ID_LIMIT:
        problems.append(_too_long(BLOCK_ID_LIMIT, f"{where}/block_id"))
    if kind == "section":
        problems.extend(_section_problems(block, where))
    elif kind == "header":
        problems.extend(_text_object_problems(block.get("text"), f"{where}/text", HEADER_TEXT_LIMIT,
                                              kinds=("plain_text",)))
    elif kind == "markdown":
        text = block.get("text")
        if not isinstance(text, str) or len(text) > MARKDOWN_BLOCK_LIMIT:
            problems.append(_too_long(MARKDOWN_BLOCK_LIMIT, f"{where}/text"))
    elif kind == "input":
        problems.extend(_text_object_problems(block.get("label"), f"{where}/label", INPUT_LABEL_LIMIT,
                                              kinds=("plain_text",)))
        if "hint" in block:
            problems.extend(_text_object_problems(block["hint"], f"{where}/hint", INPUT_LABEL_LIMIT,
                                                  kinds=("plain_text",)))
        if not isinstance(block.get("element"), dict):
            problems.append(f"[ERROR] missing required field: element [json-pointer:{where}]")
        else:
            problems.extend(_element_problems(block["element"], f"{where}/element"))
    elif kind in ELEMENT_LIMITS:
        elements = block.get("elements")
        if not isinstance(elements, list) or not elements:
            problems.append(f"[ERROR] missing required field: elements [json-pointer:{where}]")
        elif len(elements) > ELEMENT_LIMITS[kind]:
            problems.append(f"[ERROR] no more than {ELEMENT_LIMITS[kind]} items allowed "
                            f"[json-pointer:{where}/elements]")
        elif kind == "actions":
            for index, element in enumerate(elements):
                problems.extend(_element_problems(element, f"{where}/elements/{index}"))
        else:  # context: images and text objects, each text at most a text object's 3,000 characters
            for index, element in enumerate(elements):
                if isinstance(element, dict) and element.get("type") in ("plain_text", "mrkdwn"):
                    problems.extend(_text_object_problems(element, f"{where}/elements/{index}", TEXT_OBJECT_LIMIT))
    return problems


def _element_problems(element: Any, where: str) -> list[str]:
    """Limits of the interactive elements the Block Kit reference states (buttons, radio buttons, text input)."""
    if not isinstance(element, dict) or not isinstance(element.get("type"), str):
        return [f"[ERROR] missing required field: type [json-pointer:{where}]"]
    problems = []
    kind = element["type"]
    if len(str(element.get("action_id", ""))) > ACTION_ID_LIMIT:
        problems.append(_too_long(ACTION_ID_LIMIT, f"{where}/action_id"))
    if kind == "button":
        problems.extend(_text_object_problems(element.get("text"), f"{where}/text", BUTTON_TEXT_LIMIT,
                                              kinds=("plain_text",)))
        for name, limit in (("value", BUTTON_VALUE_LIMIT), ("url", URL_LIMIT)):
            if len(str(element.get(name, ""))) > limit:
                problems.append(_too_long(limit, f"{where}/{name}"))
    elif kind == "radio_buttons":
        options = element.get("options")
        if not isinstance(options, list) or not options:
            problems.append(f"[ERROR] missing required field: options [json-pointer:{where}]")
        elif len(options) > RADIO_OPTIONS_MAX:
            problems.append(f"[ERROR] no more than {RADIO_OPTIONS_MAX} items allowed [json-pointer:{where}/options]")
        else:
            for index, option in enumerate(options):
                at = f"{where}/options/{index}"
                if not isinstance(option, dict):
                    problems.append(f"[ERROR] must be an object [json-pointer:{at}]")
                    continue
                problems.extend(_text_object_problems(option.get("text"), f"{at}/text", OPTION_TEXT_LIMIT))
                value = option.get("value")
                if not isinstance(value, str) or not value or len(value) > OPTION_VALUE_LIMIT:
                    problems.append(_too_long(OPTION_VALUE_LIMIT, f"{at}/value"))
    elif kind == "plain_text_input":
        for name in ("min_length", "max_length"):
            if name in element and not (isinstance(element[name], int) and 0 <= element[name] <= INPUT_LENGTH_LIMIT):
                problems.append(f"[ERROR] must be at most {INPUT_LENGTH_LIMIT} [json-pointer:{where}/{name}]")
        if "placeholder" in element:
            problems.extend(_text_object_problems(element["placeholder"], f"{where}/placeholder", PLACEHOLDER_LIMIT,
                                                  kinds=("plain_text",)))
    return problems


def _section_problems(block: Mapping[str, Any], where: str) -> list[str]:
    if "text" not in block and "fields" not in block:
        return [f"[ERROR] must provide either text or fields [json-pointer:{where}]"]
    problems = []
    if "text" in block:
        problems.extend(_text_object_problems(block["text"], f"{where}/text", SECTION_TEXT_LIMIT))
    if isinstance(block.get("accessory"), dict):
        problems.extend(_element_problems(block["accessory"], f"{where}/accessory"))
    fields = block.get("fields", [])
    if not isinstance(fields, list):
        return problems + [f"[ERROR] must be an array [json-pointer:{where}/fields]"]
    if len(fields) > SECTION_FIELDS_MAX:
        problems.append(f"[ERROR] no more than {SECTION_FIELDS_MAX} items allowed "
                        f"[json-pointer:{where}/fields]")
    for index, item in enumerate(fields):
        problems.extend(_text_object_problems(item, f"{where}/fields/{index}", SECTION_FIELD_LIMIT))
    return problems


def _text_object_problems(obj: Any, where: str, limit: int,
                          kinds: tuple[str, ...] = ("plain_text", "mrkdwn")) -> list[str]:
    if not isinstance(obj, dict) or obj.get("type") not in kinds:
        return [f"[ERROR] must be a text object of type {' or '.join(kinds)} [json-pointer:{where}]"]
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        return [f"[ERROR] must be more than 0 characters [json-pointer:{where}/text]"]
    if len(text) > limit:
        return [_too_long(limit, f"{where}/text")]
    return []


def _too_long(limit: int, where: str) -> str:
    return f"[ERROR] must be less than {limit + 1} characters [json-pointer:{where}]"


def _decode_chunks(spec: MethodSpec, value: Any) -> list[dict[str, Any]]:
    chunks = _parse_json_text(spec, "chunks", value)
    if not isinstance(chunks, list):
        raise _reject("invalid_chunks", "[ERROR] must be an array [json-pointer:/chunks]")
    for index, chunk in enumerate(chunks):
        where = f"/chunks/{index}"
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind not in CHUNK_FIELDS:
            raise _reject("invalid_chunks",
                          f"[ERROR] unknown chunk type {kind!r} [json-pointer:{where}/type]")
        for name in CHUNK_FIELDS[kind]:
            if chunk.get(name) in (None, ""):
                raise _reject("invalid_chunks",
                              f"[ERROR] missing required field: {name} [json-pointer:{where}]")
        if kind == "blocks":
            if not isinstance(chunk["blocks"], list):
                raise _reject("invalid_chunks", f"[ERROR] must be an array [json-pointer:{where}/blocks]")
            _raise_block_problems(spec, chunk["blocks"], f"{where}/blocks")
    return chunks


def _check_view(spec: MethodSpec, view: Any) -> None:
    if not isinstance(view, dict) or not isinstance(view.get("type"), str):
        raise _reject("invalid_arguments", "[ERROR] missing required field: type [json-pointer:/view]")
    problems = view_problems(view, VIEW_TYPES.get(spec.name, ("modal", "home")))
    if problems:
        raise _reject("invalid_arguments", *problems)


def view_problems(view: Mapping[str, Any], types: tuple[str, ...]) -> list[str]:
    """Slack-style ``[ERROR] …`` messages for a view object (empty when fine)."""
    if view.get("type") not in types:
        return ["[ERROR] must be a valid enum value [json-pointer:/view/type]"]
    problems = []
    blocks = view.get("blocks")
    if blocks is None:
        problems.append("[ERROR] missing required field: blocks [json-pointer:/view]")
    elif not isinstance(blocks, list):
        problems.append("[ERROR] must be an array [json-pointer:/view/blocks]")
    else:
        problems.extend(block_problems(blocks, "/view/blocks", MAX_VIEW_BLOCKS))
    for name, limit in VIEW_FIELD_LIMITS.items():
        if name in view and (not isinstance(view[name], str) or len(view[name]) > limit):
            problems.append(_too_long(limit, f"/view/{name}"))
    if view["type"] == "modal":
        if "title" not in view:
            problems.append("[ERROR] missing required field: title [json-pointer:/view]")
        for name in ("title", "close", "submit"):
            if view.get(name) is not None:
                problems.extend(_text_object_problems(view[name], f"/view/{name}", VIEW_TEXT_LIMIT,
                                                      kinds=("plain_text",)))
        has_input = isinstance(blocks, list) and any(isinstance(b, dict) and b.get("type") == "input"
                                                     for b in blocks)
        if has_input and view.get("submit") is None:
            problems.append("[ERROR] missing required field: submit (the view has input blocks) "
                            "[json-pointer:/view]")
    return problems


def markdown_of(args: Mapping[str, Any]) -> str:
    """The markdown a streaming call carries: ``markdown_text`` then its markdown_text chunks."""
    pieces = [args.get("markdown_text") or ""]
    pieces += [chunk["text"] for chunk in args.get("chunks") or [] if chunk.get("type") == "markdown_text"]
    return "".join(pieces)


def _check_lengths(spec: MethodSpec, args: Mapping[str, Any]) -> None:
    for name, limit in spec.text_limits.items():
        streamed = spec.name in STREAM_METHODS and name == "markdown_text"
        value = markdown_of(args) if streamed else args.get(name)
        if isinstance(value, str) and len(value) > limit:
            raise _reject(spec.pick("msg_too_long"), _too_long(limit, f"/{name}"))


def _check_method_rules(spec: MethodSpec, args: Mapping[str, Any]) -> None:
    if "markdown_text_conflict" in spec.errors and args.get("markdown_text") and args.get("blocks"):
        raise _reject("markdown_text_conflict", "[ERROR] markdown_text cannot be used with blocks")
    if spec.name == "views.publish" and not USER_ID.fullmatch(str(args.get("user_id", ""))):
        raise _reject("invalid_arguments", "invalid `user_id`")
    if spec.name == "chat.startStream" and str(args.get("channel", "")).startswith(("C", "G")):
        for name in ("recipient_user_id", "recipient_team_id"):
            if not args.get(name):
                raise _reject(f"missing_{name}")


# ------------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class RecordedCall:
    """One request as the server saw and answered it."""

    method: str
    args: dict[str, Any]  # decoded when the call passed validation, else as received
    time: float  # epoch seconds when the request arrived
    response: dict[str, Any]
    status: int = 200
    http_method: str = "POST"
    token: str | None = None
    rejected: bool = False  # broke the protocol, auth or the method reference
    injected: bool = False  # answered by fail_next
    response_key: str | None = None  # the response URL's key, for ``response_url`` calls

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))

    @property
    def error(self) -> str | None:
        return self.response.get("error")


@dataclass
class StoredMessage:
    """A message in a channel (posted, seeded or streamed)."""

    channel: str
    ts: str
    text: str = ""
    user: str | None = None
    bot_id: str | None = None
    app_id: str | None = None
    thread_ts: str | None = None
    blocks: list[Any] | None = None
    attachments: Any = None
    metadata: Any = None
    state: str = "posted"  # posted | streaming | stopped
    stopped_by_user: bool = False
    edited: bool = False
    chunks: list[dict[str, Any]] = field(default_factory=list)
    reactions: dict[str, list[str]] = field(default_factory=dict)
    replies: list[str] = field(default_factory=list)

    @property
    def by_app(self) -> bool:
        return self.bot_id is not None

    def to_api(self) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text, "user": self.user}
        optional = {"bot_id": self.bot_id, "app_id": self.app_id, "thread_ts": self.thread_ts,
                    "blocks": self.blocks, "attachments": self.attachments, "metadata": self.metadata}
        message.update({key: copy.deepcopy(value) for key, value in optional.items() if value is not None})
        if self.replies:
            message.update(thread_ts=self.ts, reply_count=len(self.replies), latest_reply=self.replies[-1])
        if self.reactions:
            message["reactions"] = [{"name": name, "users": list(users), "count": len(users)}
                                    for name, users in self.reactions.items()]
        if self.edited:
            message["edited"] = {"user": self.user, "ts": self.ts}
        return message


@dataclass
class _Failure:
    error: str
    status: int
    retry_after: int | None


@dataclass
class _Request:
    method: str
    http_method: str
    args: dict[str, Any]
    token: str | None
    received: float
    problem: ApiError | None = None


# -------------------------------------------------------------------------------------------- server


class SlackApiServer:
    """Strict fake of the Slack Web API; see the module docstring for what it checks.

    Options: ``tokens`` (accepted tokens; default any ``token_prefixes`` token), identity (``team_id``,
    ``team``, ``bot_user_id``, ``bot_id``, ``app_id``, ``bot_name``), ``users`` (user id → fields for
    users.info), ``strict_users`` (unknown users → ``user_not_found`` instead of a plain member),
    ``stream_text_limit`` (cap on a streamed message's total text), ``reference_dir``.
    """

    def __init__(
        self,
        *,
        tokens: Collection[str] | None = None,
        token_prefixes: tuple[str, ...] = ("xoxb-", "xoxp-"),
        team_id: str = "T0FAKE001",
        team: str = "Fake Workspace",
        bot_user_id: str = "U0FAKEBOT",
        bot_id: str = "B0FAKEBOT",
        app_id: str = "A0FAKEAPP",
        bot_name: str = "ai-employee",
        users: Mapping[str, Mapping[str, Any]] | None = None,
        strict_users: bool = False,
        stream_text_limit: int | None = None,
        reference_dir: Path | str | None = None,
    ) -> None:
        self.reference = load_reference(Path(reference_dir) if reference_dir else DEFAULT_REFERENCE_DIR)
        self.tokens = frozenset(tokens) if tokens is not None else None
        self.token_prefixes = token_prefixes
        self.identity = {"team_id": team_id, "team": team, "user_id": bot_user_id, "bot_id": bot_id,
                         "app_id": app_id, "user": bot_name}
        self.strict_users = strict_users
        self.stream_text_limit = stream_text_limit
        self._lock = threading.RLock()
        self._users: dict[str, dict[str, Any]] = {}
        self._calls: list[RecordedCall] = []
        self._channels: dict[str, dict[str, StoredMessage]] = {}
        self._ephemerals: list[dict[str, Any]] = []
        self._views: list[dict[str, Any]] = []
        self._homes: dict[str, dict[str, Any]] = {}  # user id -> their published Home tab
        self._usergroups: dict[str, dict[str, Any]] = {}  # group id -> its record, with its members
        self._view_count = 0
        self._failures: dict[str, list[_Failure]] = {}
        self._delays: dict[str, float] = {}
        self._drops: dict[str, int] = {}  # method -> connections still to drop
        self._responses: dict[str, dict[str, Any]] = {}
        self._last_ts_us = 0
        self._handlers = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "chat.postEphemeral": self._post_ephemeral,
            "conversations.replies": self._replies,
            "users.info": self._users_info,
            "users.lookupByEmail": self._users_lookup_by_email,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "reactions.add": self._reactions_add,
            "usergroups.list": self._usergroups_list,
            "usergroups.users.list": self._usergroup_users,
        }
        for user_id, fields in (users or {}).items():
            self.add_user(user_id, **fields)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._startup_error: BaseException | None = None
        self.port: int | None = None

    # ---- lifecycle

    def __enter__(self) -> SlackApiServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self.port}/api/"

    def start(self) -> SlackApiServer:
        if self._thread is not None:
            raise RuntimeError("already started")
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="fake-slack-api", daemon=True)
        self._thread.start()
        ready.wait(timeout=10)
        if self._startup_error is not None or self.port is None:
            raise RuntimeError("the fake Slack API did not start") from self._startup_error
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self.port = None

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            self._runner = loop.run_until_complete(self._open_site())
        except BaseException as error:  # reported to start()
            self._startup_error = error
            ready.set()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    async def _open_site(self) -> web.AppRunner:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_post("/hooks/{key}", self._handle_response_url)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self.port = runner.addresses[0][1]
        return runner

    # ---- test-side helpers: scripting

    def fail_next(self, method: str, error: str | None = None, *, status: int = 200,
                  retry_after: int | None = None, times: int = 1) -> None:
        """Answer the next ``times`` valid calls of ``method`` with a documented error.

        ``status=429`` sends ``Retry-After`` (``retry_after``, default 1) and defaults to ``ratelimited``;
        a 5xx status defaults to ``service_unavailable`` (503) or ``fatal_error``.
        """
        spec = self._spec_or_value_error(method)
        if status != 200 and status != 429 and not 500 <= status <= 599:
            raise ValueError(f"Slack answers errors with HTTP 200, 429 or 5xx, not {status}")
        error = error or _default_error(status)
        if not spec.allows(error):
            raise ValueError(f"{error!r} is not a documented error of {method}")
        if retry_after is not None and status != 429:
            raise ValueError("retry_after only goes with status=429")
        if status == 429 and retry_after is None:
            retry_after = 1
        with self._lock:
            queue = self._failures.setdefault(method, [])
            queue.extend(_Failure(error, status, retry_after) for _ in range(times))

    def drop_next(self, method: str, *, times: int = 1) -> None:
        """Close the connection of the next ``times`` calls of ``method`` without answering them (and without
        acting on them), as a network failure would; they are recorded with status 0."""
        self._spec_or_value_error(method)
        with self._lock:
            self._drops[method] = self._drops.get(method, 0) + times

    def slow(self, method: str, seconds: float) -> None:
        """Delay every later call of ``method`` by ``seconds`` before it is handled (0 to undo)."""
        self._spec_or_value_error(method)
        with self._lock:
            self._delays[method] = seconds

    def set_response(self, method: str, payload: Mapping[str, Any]) -> None:
        """Answer valid calls of a method that has no stateful handler with ``{"ok": true, **payload}``."""
        self._spec_or_value_error(method)
        if method in self._handlers:
            raise ValueError(f"{method} is answered from the server's state")
        with self._lock:
            self._responses[method] = copy.deepcopy(dict(payload))

    def add_user(self, user_id: str, *, is_admin: bool = False, is_owner: bool = False,
                 **fields: Any) -> dict[str, Any]:
        """Register a user for users.info; extra fields override the defaults."""
        user = _user_record(user_id, self.identity["team_id"], is_admin=is_admin, is_owner=is_owner, **fields)
        with self._lock:
            self._users[user_id] = user
        return copy.deepcopy(user)

    def add_usergroup(self, group_id: str, users: Iterable[str], *, handle: str | None = None,
                      enabled: bool = True, name: str | None = None) -> None:
        """A user group (S…) with these members, for usergroups.list and usergroups.users.list."""
        now = int(time.time())
        handle = handle or group_id.lower()
        record = {
            "id": group_id, "team_id": self.identity["team_id"], "is_usergroup": True,
            "name": name or handle.title(),
            "description": "", "handle": handle, "is_external": False, "date_create": now, "date_update": now,
            "date_delete": 0 if enabled else now, "auto_type": None, "created_by": HUMAN_USER,
            "updated_by": HUMAN_USER, "deleted_by": None, "prefs": {"channels": [], "groups": []},
            "users": list(users),
        }
        with self._lock:
            self._usergroups[group_id] = record

    def seed_message(self, channel: str, text: str, *, user: str = HUMAN_USER,
                     thread_ts: str | None = None) -> str:
        """Put a (human) message into a channel, as if a user had written it; returns its ts."""
        with self._lock:
            message = StoredMessage(channel=channel, ts=self._next_ts(), text=text, user=user,
                                    thread_ts=thread_ts)
            self._store(message)
            return message.ts

    def stop_by_user(self, channel: str, ts: str) -> None:
        """Simulate the user pressing "stop" on a streaming message: later appends get ``stopped_by_user``."""
        with self._lock:
            message = self._channels[channel][ts]
            message.state, message.stopped_by_user = "stopped", True

    def expire_stream(self, channel: str, ts: str) -> None:
        """Simulate Slack ending a stream on its side (e.g. it timed out): later appends and stops get
        ``message_not_in_streaming_state``; the message can be updated like any other."""
        with self._lock:
            self._channels[channel][ts].state = "stopped"

    def response_url(self, key: str = "command") -> str:
        """A response URL to put into a slash command or interaction payload."""
        return f"http://127.0.0.1:{self.port}/hooks/{key}"

    def clear_calls(self) -> None:
        with self._lock:
            self._calls.clear()

    # ---- test-side helpers: reading

    @property
    def calls(self) -> list[RecordedCall]:
        with self._lock:
            return list(self._calls)

    def calls_to(self, method: str) -> list[RecordedCall]:
        return [call for call in self.calls if call.method == method]

    @property
    def rejected_calls(self) -> list[RecordedCall]:
        return [call for call in self.calls if call.rejected]

    def assert_no_rejections(self) -> None:
        rejected = self.rejected_calls
        assert not rejected, "Slack calls rejected by the fake Slack API:\n" + "\n".join(
            f"  {call.method}: {call.response} args={call.args}" for call in rejected)

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """Every message of a channel (thread replies included), oldest first, as Slack shows them."""
        with self._lock:
            return [message.to_api() for message in self._sorted(channel)]

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        with self._lock:
            return [message.to_api() for message in self._sorted(channel)
                    if thread_ts in (message.ts, message.thread_ts)]

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        with self._lock:
            message = self._channels.get(channel, {}).get(ts)
            return message.to_api() if message else None

    def final_text(self, channel: str, ts: str) -> str:
        """The text of a message: posted or updated text, or everything streamed into it."""
        with self._lock:
            return self._channels[channel][ts].text

    def stream_state(self, channel: str, ts: str) -> str:
        """``posted``, ``streaming`` or ``stopped``."""
        with self._lock:
            return self._channels[channel][ts].state

    def chunks(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """Every chunk streamed into a message, in order."""
        with self._lock:
            return copy.deepcopy(self._channels[channel][ts].chunks)

    @property
    def ephemerals(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._ephemerals)

    @property
    def views(self) -> list[dict[str, Any]]:
        """Modals opened (``trigger_id``, ``interactivity_pointer``, ``view`` as it is now)."""
        with self._lock:
            return copy.deepcopy(self._views)

    def home_view(self, user_id: str) -> dict[str, Any] | None:
        """The Home tab last published for a user, as Slack keeps it (None: never published)."""
        with self._lock:
            return copy.deepcopy(self._homes.get(user_id))

    # ---- request handling

    async def _handle(self, request: web.Request) -> web.Response:
        parsed = await _read_request(request)
        delay = self._delays.get(parsed.method, 0.0)
        if delay:
            await asyncio.sleep(delay)
        if self._take_drop(parsed.method):
            with self._lock:
                self._calls.append(RecordedCall(method=parsed.method, args=copy.deepcopy(parsed.args),
                                                time=parsed.received, response={}, status=0, injected=True))
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)  # never reaches the client: the connection is gone
        status, body, headers = self._process(parsed)
        return web.json_response(body, status=status, headers=headers)

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        received, key = time.time(), request.match_info["key"]
        try:
            body = await request.json()
        except ValueError:
            body = None
        with self._lock:
            used = sum(1 for c in self._calls if c.response_key == key and c.ok)
            status, error = _response_url_problem(body, used)
            self._calls.append(RecordedCall(
                method="response_url", args=body if isinstance(body, dict) else {}, time=received,
                status=status, response={"ok": True} if status == 200 else {"ok": False, "error": error},
                rejected=status == 400, response_key=key))
        return web.Response(status=status, text=error or "ok")

    def _process(self, request: _Request) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            args, status, headers, injected, rejected = request.args, 200, {}, False, False
            try:
                spec = self._checked_spec(request)
                args = validate_call(spec, request.args)
                failure = self._take_failure(request.method)
                if failure:
                    status, injected = failure.status, True
                    if failure.retry_after is not None:
                        headers = {"Retry-After": str(failure.retry_after)}
                    raise ApiError(failure.error)
                body = {"ok": True, **self._answer(request.method, args)}
            except ApiError as error:
                body, rejected = error.body(), error.rejected
            except Exception as bug:  # a fault of this fake: answer 500 and make it visible to the test
                status, rejected = 500, True
                body = ApiError("fatal_error", f"[fake Slack API bug] {bug!r}").body()
            self._calls.append(RecordedCall(
                method=request.method, args=copy.deepcopy(args), time=request.received,
                response=copy.deepcopy(body), status=status, http_method=request.http_method,
                token=request.token, rejected=rejected, injected=injected))
            return status, body, headers

    def _checked_spec(self, request: _Request) -> MethodSpec:
        if request.problem is not None:
            raise request.problem
        spec = self.reference.method(request.method)
        if spec is None:
            raise _reject("unknown_method")
        if request.method not in TOKENLESS_METHODS:
            if not request.token:
                raise _reject("not_authed")
            if not self._token_accepted(request.token):
                raise _reject("invalid_auth")
        return spec

    def _token_accepted(self, token: str) -> bool:
        if self.tokens is not None:
            return token in self.tokens
        return token.startswith(self.token_prefixes)

    def _take_drop(self, method: str) -> bool:
        with self._lock:
            if not self._drops.get(method):
                return False
            self._drops[method] -= 1
            return True

    def _take_failure(self, method: str) -> _Failure | None:
        queue = self._failures.get(method)
        return queue.pop(0) if queue else None

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = self._handlers.get(method)
        if handler is not None:
            return handler(args)
        return copy.deepcopy(self._responses.get(method, {}))

    def _spec_or_value_error(self, method: str) -> MethodSpec:
        spec = self.reference.method(method)
        if spec is None:
            raise ValueError(f"{method!r} is not a method of the Slack reference")
        return spec

    # ---- state

    def _next_ts(self) -> str:
        self._last_ts_us = max(int(time.time() * 1_000_000), self._last_ts_us + 1)
        seconds, micros = divmod(self._last_ts_us, 1_000_000)
        return f"{seconds}.{micros:06d}"

    def _store(self, message: StoredMessage) -> None:
        self._channels.setdefault(message.channel, {})[message.ts] = message
        parent = self._channels[message.channel].get(message.thread_ts or "")
        if parent is not None and parent is not message:
            parent.replies.append(message.ts)

    def _sorted(self, channel: str) -> list[StoredMessage]:
        return sorted(self._channels.get(channel, {}).values(), key=lambda message: float(message.ts))

    def _find(self, channel: str, ts: str) -> StoredMessage:
        message = self._channels.get(channel, {}).get(ts)
        if message is None:
            raise ApiError("message_not_found")
        return message

    def _bot_message(self, args: Mapping[str, Any], state: str) -> StoredMessage:
        return StoredMessage(
            channel=args["channel"], ts=self._next_ts(), user=self.identity["user_id"],
            bot_id=self.identity["bot_id"], app_id=self.identity["app_id"], thread_ts=args.get("thread_ts"),
            state=state)

    # ---- method handlers (called under the lock with validated, decoded args)

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        identity = self.identity
        return {"url": "https://fake-workspace.slack.com/", "team": identity["team"],
                "user": identity["user"], "team_id": identity["team_id"], "user_id": identity["user_id"],
                "bot_id": identity["bot_id"], "is_enterprise_install": False}

    def _post_message(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._bot_message(args, "posted")
        _apply_content(message, args)
        self._store(message)
        return {"channel": message.channel, "ts": message.ts, "message": message.to_api()}

    def _update(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._find(args["channel"], args["ts"])
        if not message.by_app:
            raise ApiError("cant_update_message")
        if message.state == "streaming":
            raise ApiError("streaming_state_conflict")
        _apply_content(message, args)
        message.edited = True
        return {"channel": message.channel, "ts": message.ts, "text": message.text,
                "message": message.to_api()}

    def _start_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._bot_message(args, "streaming")
        self._stream_into(message, args)
        self._store(message)
        return {"channel": message.channel, "ts": message.ts}

    def _append_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_target(args, "append")
        self._stream_into(message, args)
        return {"channel": message.channel, "ts": message.ts}

    def _stop_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_target(args, "stop")
        self._stream_into(message, args)
        if args.get("blocks"):
            message.blocks = args["blocks"]
        if args.get("metadata"):
            message.metadata = args["metadata"]
        message.state = "stopped"
        return {"channel": message.channel, "ts": message.ts, "message": message.to_api()}

    def _streaming_target(self, args: Mapping[str, Any], action: str) -> StoredMessage:
        message = self._find(args["channel"], args["ts"])
        if not message.by_app:
            raise ApiError("message_not_owned_by_app")
        if message.stopped_by_user and action == "append":
            raise ApiError("stopped_by_user")
        if message.state != "streaming":
            raise ApiError("message_not_in_streaming_state")
        return message

    def _stream_into(self, message: StoredMessage, args: Mapping[str, Any]) -> None:
        text = message.text + markdown_of(args)
        if self.stream_text_limit is not None and len(text) > self.stream_text_limit:
            raise ApiError("msg_too_long")
        message.text = text
        if args.get("markdown_text"):
            message.chunks.append({"type": "markdown_text", "text": args["markdown_text"]})
        message.chunks.extend(copy.deepcopy(args.get("chunks") or []))

    def _post_ephemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        ts = self._next_ts()
        self._ephemerals.append({**copy.deepcopy(args), "message_ts": ts})
        return {"message_ts": ts}

    def _replies(self, args: dict[str, Any]) -> dict[str, Any]:
        found = self._channels.get(args["channel"], {}).get(args["ts"])
        if found is None:
            raise ApiError("thread_not_found")
        root = found.thread_ts or found.ts
        thread = [message.to_api() for message in self._sorted(args["channel"])
                  if root in (message.ts, message.thread_ts)]
        start = _cursor_offset(args.get("cursor"))
        limit = int(args.get("limit") or 1000)
        page = thread[start:start + limit]
        more = start + limit < len(thread)
        cursor = base64.b64encode(f"offset:{start + limit}".encode()).decode() if more else ""
        return {"messages": page, "has_more": more, "response_metadata": {"next_cursor": cursor}}

    def _users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = self._users.get(args["user"])
        if user is None:
            if self.strict_users:
                raise ApiError("user_not_found")
            user = _user_record(args["user"], self.identity["team_id"])
        return {"user": copy.deepcopy(user)}

    def _users_lookup_by_email(self, args: dict[str, Any]) -> dict[str, Any]:
        wanted = args["email"].strip().lower()
        for user in self._users.values():
            if (user["profile"].get("email") or "").lower() == wanted and not user.get("deleted"):
                return {"user": copy.deepcopy(user)}
        raise ApiError("users_not_found")

    def _new_view_id(self) -> str:
        self._view_count += 1
        return f"V{self._view_count:08d}"

    def _view_record(self, view: Mapping[str, Any], view_id: str, root_view_id: str) -> dict[str, Any]:
        return {**copy.deepcopy(dict(view)), "id": view_id, "team_id": self.identity["team_id"],
                "app_id": self.identity["app_id"], "bot_id": self.identity["bot_id"],
                "root_view_id": root_view_id, "previous_view_id": None, "state": {"values": {}},
                "hash": f"{time.time():.7f}.{view_id}"}

    def _views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        view_id = self._new_view_id()
        view = self._view_record(args["view"], view_id, view_id)
        self._views.append({"trigger_id": args.get("trigger_id"),
                            "interactivity_pointer": args.get("interactivity_pointer"), "view": view})
        return {"view": view}

    def _views_update(self, args: dict[str, Any]) -> dict[str, Any]:
        wanted = args.get("view_id") or args.get("external_id")
        key = "id" if args.get("view_id") else "external_id"
        entry = next((e for e in self._views if e["view"].get(key) == wanted), None)
        if entry is None:
            raise ApiError("not_found")
        if args.get("hash") and args["hash"] != entry["view"]["hash"]:
            raise ApiError("hash_conflict")
        current = entry["view"]
        entry["view"] = self._view_record(args["view"], current["id"], current["root_view_id"])
        return {"view": entry["view"]}

    def _views_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        current = self._homes.get(args["user_id"])
        if args.get("hash") and (current is None or args["hash"] != current["hash"]):
            raise ApiError("hash_conflict")
        view_id = current["id"] if current else self._new_view_id()
        view = {**self._view_record(args["view"], view_id, view_id), "close": None, "submit": None}
        self._homes[args["user_id"]] = view
        return {"view": view}

    def _usergroups_list(self, args: dict[str, Any]) -> dict[str, Any]:
        listed = []
        for group in self._usergroups.values():
            if group["date_delete"] and not args.get("include_disabled"):
                continue
            record = {key: copy.deepcopy(value) for key, value in group.items() if key != "users"}
            if args.get("include_users"):
                record["users"] = list(group["users"])
            if args.get("include_count"):
                record["user_count"] = str(len(group["users"]))  # a string, as in Slack's example
            listed.append(record)
        return {"usergroups": listed}

    def _usergroup_users(self, args: dict[str, Any]) -> dict[str, Any]:
        group = self._usergroups.get(args["usergroup"])
        if group is None or (group["date_delete"] and not args.get("include_disabled")):
            raise ApiError("no_such_subteam")
        return {"users": list(group["users"])}

    def _reactions_add(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._find(args["channel"], args["timestamp"])
        users = message.reactions.setdefault(args["name"], [])
        if self.identity["user_id"] in users:
            raise ApiError("already_reacted")
        users.append(self.identity["user_id"])
        return {}


# ------------------------------------------------------------------------------------------- helpers


async def _read_request(request: web.Request) -> _Request:
    """Method, token and arguments of an HTTP request, the way Slack reads them."""
    parsed = _Request(method=request.match_info["method"], http_method=request.method,
                      args=dict(request.query), token=_bearer(request), received=time.time())
    if request.method == "POST" and request.can_read_body:
        try:
            await _read_body(request, parsed)
        except ApiError as error:
            parsed.problem = error
        except ValueError:  # a form or multipart body aiohttp could not parse
            parsed.problem = _reject("invalid_form_data", "[ERROR] the form body could not be parsed")
    form_token = parsed.args.pop("token", None)
    parsed.token = parsed.token or form_token
    return parsed


async def _read_body(request: web.Request, parsed: _Request) -> None:
    content_type = request.headers.get("Content-Type")
    if not content_type:
        raise _reject("missing_post_type")
    kind = request.content_type
    if kind == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise _reject("invalid_form_data", "[ERROR] the JSON body could not be parsed") from None
        if not isinstance(body, dict):
            raise _reject("invalid_form_data", "[ERROR] the JSON body must be an object")
        body.pop("token", None)  # Slack reads only the bearer header for JSON bodies
        parsed.args.update(body)
    elif kind in ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain"):
        form = await (request.post() if kind != "text/plain" else _plain_text_form(request))
        parsed.args.update({key: _form_value(value) for key, value in form.items()})
    else:
        raise _reject("invalid_post_type")


async def _plain_text_form(request: web.Request) -> dict[str, str]:
    return dict(parse_qsl(await request.text(), keep_blank_values=True))


def _form_value(value: Any) -> Any:
    if isinstance(value, web.FileField):
        return {"filename": value.filename, "size": len(value.file.read())}
    return value


def _bearer(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


RESPONSE_URL_USES = 5


def _response_url_problem(body: Any, used: int) -> tuple[int, str | None]:
    """HTTP status and error text for a message posted to a response URL."""
    if used >= RESPONSE_URL_USES:
        return 404, "used_url"
    if not isinstance(body, dict):
        return 400, "invalid_payload"
    if not body.get("text") and not body.get("blocks"):
        return 400, "no_text"
    blocks = body.get("blocks") or []
    if not isinstance(blocks, list) or block_problems(blocks):
        return 400, "invalid_blocks"
    return 200, None


def _default_error(status: int) -> str:
    if status == 429:
        return "ratelimited"
    if status == 503:
        return "service_unavailable"
    if status >= 500:
        return "fatal_error"
    raise ValueError("error= is required for an HTTP 200 failure")


def _apply_content(message: StoredMessage, args: Mapping[str, Any]) -> None:
    if args.get("text") or args.get("markdown_text"):
        message.text = args.get("text") or args.get("markdown_text")
    for name in ("blocks", "attachments", "metadata"):
        if args.get(name) not in (None, ""):
            setattr(message, name, copy.deepcopy(args[name]))


def _cursor_offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode().removeprefix("offset:"))
    except ValueError:
        raise ApiError("invalid_cursor") from None


def _user_record(user_id: str, team_id: str, *, is_admin: bool = False, is_owner: bool = False,
                 **fields: Any) -> dict[str, Any]:
    name = fields.pop("name", user_id.lower())
    real_name = fields.pop("real_name", name.title())
    email = fields.pop("email", None)
    user = {
        "id": user_id, "team_id": team_id, "name": name, "real_name": real_name, "deleted": False,
        "tz": "Europe/Berlin", "tz_offset": 3600, "is_bot": False, "is_app_user": False,
        "is_admin": is_admin, "is_owner": is_owner, "is_primary_owner": False,
        "is_restricted": False, "is_ultra_restricted": False,
        "profile": {"real_name": real_name, "display_name": name, "team": team_id,
                    **({"email": email} if email else {})},
    }
    user.update(fields)
    return user
