"""The one way into the assistant for every chat surface. A surface parses its events into plain values (who,
where, which answer, which marker), calls one of these methods and formats the neutral value it gets back
(an `Answer` into its reply sink, a `Review`, a `SourceVoted`, a reply text in its markup).

`Assistant` only delegates: what each operation does lives in the core module it names (answering, votes,
review, reindex, sources, scopes). Every method that blocks (SQLite, the live index, the scopes database)
runs off the event loop, so a surface awaits any of them from its handlers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from bot.core import votes
from bot.core.not_kept import keeping
from bot.core.reindex import ReindexOutcome, ReindexRun, run_reindex
from bot.core.review import (
    Review,
    SourceToShow,
    SourceVoted,
    VerdictGiven,
    VotedPassage,
    admin_review,
    give_verdict,
    passage_for_admin,
    source_to_show,
    vote_on_source,
)
from bot.core.scopes.command import ScopeCommand
from bot.core.services import CoreServices, Manifest

if TYPE_CHECKING:
    from bot.core.answering import Question, ReplySink
    from bot.core.reindex import ProgressMessage, TextStyle, Visible
    from bot.core.scopes.command import ScopeRequest, ScopeStyle
    from bot.core.sources import SyncRequest
    from rag.sources.table import SourceRow
    from rag.types import Answer, Scope

__all__ = ["Assistant", "Manifest"]


class Assistant:
    """Everything a chat surface asks of the core, around the collaborators the composition root built."""

    def __init__(self, core: CoreServices) -> None:
        self._core = core

    # ----------------------------------------------------------------------------------- asking

    async def scope(self, platform: str, place: str, user: str, is_direct: bool, *,
                    also: Iterable[str] = ()) -> Scope:
        """What may be quoted to `user` in `place` (in a channel: to everyone there); `also`: more of their ids."""
        return await self._core.scopes.resolve(platform, place, user, is_direct, also=also)

    async def ask(self, question: Question, reply: ReplySink, *, no_index_message: str) -> Answer | None:
        """Answer `question`, streaming into `reply`; the finished answer is recorded for votes (None: it
        failed or was stopped, and the user was told)."""
        return await self._core.answerer.answer(question, reply, no_index_message=no_index_message)

    # ------------------------------------------------------------- what a conversation remembers

    async def history(self, conversation: str) -> list[tuple[str, str]]:
        """The conversation's earlier (question, answer) turns, oldest first (where the platform keeps none)."""
        return await self._core.memory.history(conversation)

    async def add_turn(self, conversation: str, question: str, answer: str) -> None:
        await self._core.memory.add_turn(conversation, question, answer)

    async def link_message(self, conversation: str, message_id: str, answer_id: str) -> None:
        """Record which answer a bot message shows, so that a vote on the message finds it."""
        await self._core.memory.link_message(conversation, message_id, answer_id)

    async def answer_of(self, conversation: str, message_id: str) -> str | None:
        """The recorded answer a bot message shows (None: not known here)."""
        return await self._core.memory.answer_of(conversation, message_id)

    async def first_delivery(self, kind: str, *ids: str, ttl: int) -> bool:
        """True the first time (on any replica) a platform delivers what `ids` name; `kind` says what it is."""
        return await self._core.deliveries.first_delivery(kind, *ids, ttl=ttl)

    async def read_mark(self, namespace: str, key: str) -> bytes | None:
        """A mark of the conversation state (e.g. that the bot answered in a Slack thread)."""
        return await self._core.conversation_state.get(namespace, key)

    async def write_mark(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        await self._core.conversation_state.put(namespace, key, value, ttl)

    async def write_mark_if_absent(self, key: str, value: bytes, ttl: int) -> bool:
        """Keep `value` unless `key` holds a mark already; True when this call kept it."""
        return await self._core.conversation_state.put_if_absent(key, value, ttl)

    # ------------------------------------------------------------------------------------- votes

    @keeping
    async def vote_on_answer(self, answer_id: str, user: str, helpful: bool, conversation: str, platform: str,
                             comment: str | None = None) -> bool | None:
        """👍/👎 on a whole answer: True for a new vote, False for a changed one, None when it is not on record."""
        return await votes.vote_on_answer(self._core.feedback, answer_id, user, helpful, conversation, platform,
                                          comment)

    @keeping
    async def give_reason(self, answer_id: str, user: str, reason: str, comment: str | None) -> bool:
        """Why `user` down-voted an answer (one of `votes.REASONS`); False when their 👎 is not on record."""
        return await votes.give_reason(self._core.feedback, answer_id, user, reason, comment)

    async def cited_locations(self, answer_id: str | None) -> list[str] | None:
        """Each citation of an answer as its footnote said it (None: the answer is not on record)."""
        return await votes.cited_locations(self._core.feedback, answer_id)

    @keeping
    async def vote_on_source(self, answer_id: str, marker: int, user: str, value: int, admin: bool,
                             platform: str | None = None) -> SourceVoted:
        """"This source helped" (+1) or "wrong source" (-1) on citation `marker` of an answer."""
        return await asyncio.to_thread(vote_on_source, self._core, answer_id, marker, user, value, admin,
                                       platform)

    async def source_to_show(self, answer_id: str, marker: int, scope: Scope,
                             conversation: str) -> SourceToShow:
        """Citation `marker` of an answer, asked for in `conversation` by a viewer reading in `scope`."""
        return await asyncio.to_thread(source_to_show, self._core, answer_id, marker, scope, conversation)

    # ------------------------------------------------------------------------- the admins' review

    async def review(self, scope: Scope) -> Review:
        """The recent feedback as an admin reviewing in `scope` may see it."""
        return await asyncio.to_thread(admin_review, self._core, scope)

    async def passage_for_admin(self, chunk_id: str, scope: Scope) -> VotedPassage | None:
        return await asyncio.to_thread(passage_for_admin, self._core, chunk_id, scope)

    @keeping
    async def give_verdict(self, chunk_id: str, action: str, user: str, scope: Scope) -> VerdictGiven | None:
        """An admin's "confirm" or "undo" on a flagged passage (None: outside their review, nothing done)."""
        return await asyncio.to_thread(give_verdict, self._core, chunk_id, action, user, scope)

    # --------------------------------------------------------------------- the index and sources

    async def manifest(self) -> Manifest | None:
        """The live index's whole manifest, for an admin (None: no index yet)."""
        return await asyncio.to_thread(self._core.manifest)

    async def manifest_for(self, scope: Scope) -> Manifest | None:
        """The live index's manifest listing only the documents `scope` may read."""
        return await asyncio.to_thread(self._core.manifest_for, scope)

    @property
    def has_sources(self) -> bool:
        """Whether sources are declared (AIE_SOURCES_FILE): a reindex then syncs them."""
        return self._core.sources is not None

    async def source_rows(self) -> list[SourceRow] | None:
        """The sources table (None: no sources declared)."""
        desk = self._core.sources
        return None if desk is None else await asyncio.to_thread(desk.rows)

    def unknown_sources(self, request: SyncRequest) -> str | None:
        """The reply to a request naming an undeclared source (None: every name is known, or none is declared)."""
        return self._core.sources.unknown(request) if self._core.sources is not None else None

    # ------------------------------------------------------------------------------------ reindex

    @property
    def reindexing(self) -> bool:
        """Whether an admin's reindex would be refused now (one is running)."""
        return self._core.reindexer.busy

    @property
    def current_reindex(self) -> ReindexRun | None:
        return self._core.reindexer.current

    @property
    def last_reindex(self) -> ReindexRun | None:
        """The last finished reindex of this process."""
        return self._core.reindexer.last

    async def reindex(self, message: ProgressMessage, style: TextStyle, *, by: str, platform: str,
                      visible: Callable[[], Awaitable[Visible]] | None = None,
                      request: SyncRequest | None = None) -> ReindexOutcome:
        """Reindex (with declared sources: sync those `request` names), progress and report in `message`."""
        return await run_reindex(self._core.reindexer, message, style, by=by, platform=platform, visible=visible,
                                 request=request)

    async def names_visible_to(self, scope: Scope) -> Visible:
        """Which file names may be shown to `scope`, as the live index says now (a reindex report)."""
        return await self._core.names_visible_to(scope)

    # -------------------------------------------------------------------------------------- scope

    @keeping
    async def scope_command(self, request: ScopeRequest, admin: bool, style: ScopeStyle) -> str:
        """Show a place's scope, or (for an admin) change or reset it; the reply in `style`."""
        command = ScopeCommand(self._core.scopes, self._core.documents, style)
        return await asyncio.to_thread(command.run, request, admin)
