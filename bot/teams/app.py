"""Microsoft Teams on the Microsoft 365 Agents SDK: `POST /api/messages`, JWT-validated (anonymous only in
the explicit local mode), answered within a moment — the answer itself streams in a turn of its own, so a
burst of questions never holds up Teams' requests."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from weakref import WeakValueDictionary

from aiohttp import web
from microsoft_agents.activity import Activity, DeliveryModes
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnContext, TurnState
from microsoft_agents.hosting.core.app import ApplicationOptions
from microsoft_agents.hosting.core.authorization import Connections
from pydantic import ValidationError

from bot.core.admins import AdminCheck
from bot.core.assistant import Assistant
from bot.core.answering import ASK_FOR_A_QUESTION, FAILED, GREETING, no_index, nothing_to_ask
from bot.core.logs import described, event_id_var
from bot.core.not_kept import NotKept
from bot.core.reindex import BUSY, STARTED
from bot.core.scopes.command import ScopeRequest
from bot.core.sources import Teller, parse_request
from bot.teams import commands, feedback
from bot.teams.auth import authorized
from bot.teams.config import TeamsSettings
from bot.teams.conversation import (
    PERSONAL,
    PLATFORM,
    addressed,
    is_direct,
    kind,
    place_of,
    question_from,
    question_text,
    user_ids,
    user_of,
)
from bot.teams.reply import TeamsReply, delivering, with_retries
from bot.teams.review import REVIEW, VERBS, TeamsReview
from bot.teams.sources_card import sources_message
from rag.types import Scope

_log = logging.getLogger(__name__)
MESSAGES_PATH = "/api/messages"
ACTIVITY_TTL = 24 * 3600
NO_INDEX = no_index("the `reindex` command")
EMPTY = f"{ASK_FOR_A_QUESTION} 👋"

Turn = Callable[[TurnContext], Awaitable[None]]


def msal_connections(settings: TeamsSettings) -> MsalConnectionManager:
    """The SDK's token providers for the bot's own Entra app registration."""
    return MsalConnectionManager(CONNECTIONS={"SERVICE_CONNECTION": {"SETTINGS": settings.connection()}})


class TeamsSurface:
    def __init__(self, assistant: Assistant, settings: TeamsSettings, connections: Connections,
                 admins: AdminCheck) -> None:
        """`assistant`: the core's facade (the composition root's); `connections`: the SDK's token providers
        (MSAL with the settings' registration, or stand-ins); `admins`: who may reindex, change scopes and review."""
        self.assistant = assistant
        self.settings = settings
        self.admins = admins
        self.review = TeamsReview(assistant, self.admins.is_admin, self._scope)
        self.connections = connections
        self.adapter = CloudAdapter(connection_manager=self.connections)
        self.adapter.on_turn_error = self._turn_failed  # the SDK's default would show the user the exception
        self.agent = AgentApplication[TurnState](ApplicationOptions(storage=MemoryStorage(), start_typing_timer=False),
                                                 connection_manager=self.connections)
        self._background: set[asyncio.Task] = set()
        self._chats: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()  # one stream per chat
        # admin -> (identity, their last message in their personal chat): how to message them later
        self._personal: dict[str, tuple[object, Activity]] = {}
        self._register()

    def teller(self) -> Teller:
        """How the core reaches an admin privately: in their personal chat (see `tell`)."""
        return Teller(commands.TEAMS_STYLE, self.tell)

    def _register(self) -> None:
        agent = self.agent

        async def retries(context: TurnContext, _state: TurnState) -> bool:
            with_retries(context)
            self._remember(context)
            return True

        agent.before_turn(retries)
        agent.members_added()(self._on_members_added)
        sources = self.assistant.has_sources
        agent.message(commands.REINDEX_SOURCES if sources else commands.REINDEX)(self._on_reindex)
        if sources:
            agent.message(commands.SOURCES)(self._on_sources)
        agent.message(commands.SCOPE)(self._on_scope)
        agent.message(REVIEW)(self._on_review)
        agent.message()(self._on_message)
        agent.invoke(feedback.SUBMIT_ACTION)(
            lambda context, _state: feedback.on_submit_action(self.assistant, context, self.admins.is_admin))
        agent.invoke(feedback.FETCH_TASK)(lambda context, _state: feedback.on_fetch_task(self.assistant, context))
        agent.adaptive_card.action_execute(VERBS)(lambda context, _state, data: self.review.on_action(context, data))
        agent.error(self._turn_failed)

    def add_routes(self, application: web.Application) -> None:
        configuration = self.connections.get_default_connection_configuration()
        application.router.add_post(MESSAGES_PATH, authorized(self._messages, configuration))

    async def _messages(self, request: web.Request) -> web.Response:
        try:
            return await self.adapter.process(request, self.agent)
        except ValidationError:
            return web.json_response({"error": "the body is not a Bot Framework activity"}, status=400)
        except Exception:  # noqa: BLE001 - Teams gets a plain 500; the log gets the details
            _log.exception("could not process a Teams request")
            return web.json_response({"error": "internal error"}, status=500)

    async def _on_members_added(self, context: TurnContext, _state: TurnState) -> None:
        """Greet once, when the app is added to a chat or a team."""
        activity = context.activity
        if any(member.id == activity.recipient.id for member in activity.members_added or []):
            await context.send_activity(GREETING)

    async def _act_on(self, context: TurnContext) -> bool:
        """Whether to act on this message: addressed to the bot, and not seen before (Teams redelivers an
        activity it got no answer to in time: each activity id is answered once)."""
        activity = context.activity
        event_id_var.set(activity.id or "")
        if not addressed(activity):
            return False
        if not activity.id:
            return True
        return await self.assistant.first_delivery("teams-activity", activity.conversation.id, activity.id,
                                                   ttl=ACTIVITY_TTL)

    async def _on_message(self, context: TurnContext, _state: TurnState) -> None:
        if not await self._act_on(context):
            return
        text = question_text(context.activity)
        if reply := nothing_to_ask(text, EMPTY):  # a bare mention, "thanks!": nothing to search for
            await context.send_activity(reply)
            return
        if context.activity.delivery_mode == DeliveryModes.expect_replies:
            await self._answer(context, text)  # the replies go back in this response
            return
        self._in_background(context, lambda turn: self._answer(turn, text), "answering")

    async def _answer(self, context: TurnContext, text: str) -> None:
        activity = context.activity
        streaming = kind(activity) == PERSONAL and activity.delivery_mode != DeliveryModes.expect_replies
        lock = self._chats.setdefault(activity.conversation.id, asyncio.Lock()) if streaming else None
        async with lock or nullcontext():
            history = await self.assistant.history(activity.conversation.id)  # after the turn before
            question = question_from(activity, text, history, await self._scope(activity))
            async with TeamsReply(context, self.assistant, text, streaming=streaming) as reply:
                await self.assistant.ask(question, reply, no_index_message=NO_INDEX)

    async def _scope(self, activity: Activity) -> Scope:
        """What may be quoted where `activity` was sent (in a personal chat: to its sender)."""
        return await self.assistant.scope(PLATFORM, place_of(activity), user_of(activity), is_direct(activity),
                                          also=user_ids(activity))

    async def _on_scope(self, context: TurnContext, _state: TurnState) -> None:
        if not await self._act_on(context):
            return
        activity = context.activity
        user = user_of(activity)
        request = ScopeRequest(PLATFORM, place_of(activity), is_direct(activity), user,
                               commands.scope_argument(question_text(activity)))
        reply = await self.assistant.scope_command(request, await self.admins.is_admin(user), commands.SCOPE_STYLE)
        await context.send_activity(reply)

    async def _on_review(self, context: TurnContext, _state: TurnState) -> None:
        if await self._act_on(context):
            await self.review.on_command(context)

    def _remember(self, context: TurnContext) -> None:
        """Keep how to reach an admin in their personal chat (a failed scheduled sync is told there)."""
        activity = context.activity
        user = user_of(activity)
        if activity.type == "message" and kind(activity) == PERSONAL and user in self.admins.listed:
            kept = activity.model_copy(deep=True)
            kept.delivery_mode = DeliveryModes.normal
            self._personal[user] = (context.identity, kept)

    async def tell(self, user: str, text: str) -> bool:
        """Message an admin in their personal chat with the bot (False: no such chat seen, or it failed)."""
        known = self._personal.get(user)
        if known is None:
            return False

        async def send(turn: TurnContext) -> None:
            async with delivering():
                await with_retries(turn).send_activity(text)

        try:
            await self.adapter.continue_conversation_with_claims(known[0], known[1], send)
            return True
        except Exception as exc:  # noqa: BLE001 - told again on a later failure; it shows in `sources` meanwhile
            _log.warning("could not message Teams admin %s: %s", user, described(exc))
            return False

    async def _on_sources(self, context: TurnContext, _state: TurnState) -> None:
        if not await self._act_on(context):
            return
        activity = context.activity
        if not await self.admins.is_admin(user_of(activity)):
            await context.send_activity(commands.NOT_ADMIN_SOURCES)
        elif kind(activity) != PERSONAL:
            await context.send_activity(commands.PERSONAL_ONLY)
        else:
            await context.send_activity(sources_message(await self.assistant.source_rows()))

    async def _on_reindex(self, context: TurnContext, _state: TurnState) -> None:
        if not await self._act_on(context):
            return
        user = user_of(context.activity)
        if not await self.admins.is_admin(user):
            await context.send_activity(commands.NOT_ADMIN)
            return
        if self.assistant.reindexing:
            await context.send_activity(BUSY)
            return
        request = None
        if self.assistant.has_sources:
            request = parse_request(commands.sync_words(question_text(context.activity)))
            unknown = self.assistant.unknown_sources(request)
            if unknown:  # the source names are for admins' eyes: listed in a personal chat only
                private = kind(context.activity) == PERSONAL
                await context.send_activity(commands.inert(unknown) if private else commands.UNKNOWN_ELSEWHERE)
                return

        async def reindex(turn: TurnContext) -> None:
            async def visible():  # the report names only what may be read where it is posted
                return await self.assistant.names_visible_to(await self._scope(turn.activity))

            outcome = await self.assistant.reindex(commands.ProgressMessage(turn), commands.TEAMS_STYLE, by=user,
                                                   platform="teams", visible=visible, request=request)
            if not outcome.told:  # another reindex won the race, or the progress message could not be updated
                async with delivering():
                    await turn.send_activity(outcome.text)

        if context.activity.delivery_mode == DeliveryModes.expect_replies:
            await context.send_activity(STARTED)  # its progress and report come as messages of their own
        self._in_background(context, reindex, "reindexing")

    def _in_background(self, context: TurnContext, work: Turn, what: str) -> None:
        """Run `work` in a turn of its own (with its own connector client) after this request is answered."""
        activity = context.activity.model_copy(deep=True)
        activity.delivery_mode = DeliveryModes.normal
        identity = context.identity

        async def run() -> None:
            event_id_var.set(activity.id or "")
            try:
                await self.adapter.continue_conversation_with_claims(identity, activity,
                                                                     lambda turn: work(with_retries(turn)))
            except Exception:  # noqa: BLE001 - logged; the process keeps serving
                _log.exception("%s failed", what)

        task = asyncio.create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _turn_failed(self, context: TurnContext, error: Exception) -> None:
        if not isinstance(error, NotKept):  # that one is a warning already, and the user is told why
            _log.error("Teams turn failed: %s", described(error), exc_info=error)
        if context.activity.type != "message":
            return
        try:
            async with delivering():
                await context.send_activity(str(error) if isinstance(error, NotKept) else FAILED)
        except Exception as exc:  # noqa: BLE001
            _log.error("could not tell the user about the failure: %s", described(exc))
