"""The scope command, on every platform (`/scope` in Slack, `scope` in Teams): with no argument it shows
the place's collections and where they come from; admins change them (`hr,public`) or go back to the
scopes file (`reset`). A change is stored and audited, and counts from the next question."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.scopes.config import Collections
from bot.core.scopes.documents import Documents, collection_sizes
from bot.core.scopes.resolver import DEFAULT, DM, EVERYTHING, FILE, Placement, ScopeResolver

RESET = "reset"
_FROM = {FILE: "from the scopes file", DM: "the scopes file's entry for direct messages",
         DEFAULT: "the scopes file's default for places it does not name",
         EVERYTHING: "no scopes file limits it"}


@dataclass(frozen=True)
class ScopeStyle:
    command: str  # how users type it: "/scope" or "scope"
    bold: str  # wraps bold text
    person: Callable[[str], str]  # a user id as the platform shows a person
    escape: Callable[[str], str] = str  # user-typed text made safe for the platform


@dataclass(frozen=True)
class ScopeRequest:
    platform: str
    place: str  # the conversation whose scope is meant
    is_direct: bool
    user: str
    argument: str  # what followed the command


class ScopeCommand:
    def __init__(self, resolver: ScopeResolver, documents: Callable[[], Documents | None], style: ScopeStyle) -> None:
        self.resolver = resolver
        self.documents = documents
        self.style = style

    def run(self, request: ScopeRequest, admin: bool) -> str:
        """The reply (blocking: reads and writes the stored overrides, reads the live index)."""
        argument = request.argument.strip()
        if not argument:
            return self._show(request, admin)
        if not admin:
            return (f"Sorry, only knowledge-base admins can change the scope. `{self.style.command}` alone "
                    "shows it.")
        if argument.lower() == RESET:
            return self._reset(request)
        names = frozenset(n.strip() for n in argument.split(",") if n.strip())
        if not names:
            return f"Name the collections, separated by commas: `{self.style.command} hr,public`."
        return self._set(request, names)

    def _placement(self, request: ScopeRequest) -> Placement:
        return self.resolver.placement(request.platform, request.place, request.is_direct)

    def _where(self, request: ScopeRequest) -> str:
        return "this direct message" if request.is_direct else "this channel"

    def _names(self, collections: Collections) -> str:
        if collections is None:
            return "every collection"
        if not collections:
            return "no collection"
        return ", ".join(self.style.escape(n) for n in sorted(collections))

    def _origin(self, placement: Placement) -> str:
        override = placement.override
        if override is None:
            return _FROM[placement.configured_by]
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(override.changed))
        return (f"set by {self.style.person(override.user)} on {when}; without it: "
                f"{self._names(placement.configured)}, {_FROM[placement.configured_by]}")

    def _show(self, request: ScopeRequest, admin: bool) -> str:
        placement = self._placement(request)
        b = self.style.bold
        lines = [f"{b}Scope of {self._where(request)}:{b} {self._names(placement.collections)} "
                 f"({self._origin(placement)})."]
        if request.is_direct:
            lines.append("Documents with an access list are quoted here only to the people and groups on it.")
        else:
            lines.append("Documents with an access list are never quoted here: everyone in a channel reads "
                         "the answers.")
        if admin:
            lines.append(self._index_collections())
            lines.append(f"Change it with `{self.style.command} hr,public`; `{self.style.command} {RESET}` "
                         "goes back to the scopes file.")
        return "\n".join(lines)

    def _index_collections(self) -> str:
        documents = self.documents()
        if not documents:
            return "There is no index yet, so no collections."
        sizes = collection_sizes(documents)
        listed = ", ".join(f"{self.style.escape(name)} ({count})" for name, count in sizes.items())
        return f"{self.style.bold}Collections in the index{self.style.bold} (documents): {listed}"

    def _set(self, request: ScopeRequest, names: frozenset[str]) -> str:
        before = self._placement(request)
        self.resolver.overrides.set(request.platform, request.place, names, request.user)
        b = self.style.bold
        lines = [f"Scope of {self._where(request)} is now {b}{self._names(names)}{b} (it was "
                 f"{self._names(before.collections)}). It counts from the next question."]
        documents = self.documents() or {}
        unknown = sorted(names - set(collection_sizes(documents)))
        if unknown:
            lines.append(f"Note: no indexed document is in {self._names(frozenset(unknown))} yet — kept anyway; "
                         "it counts once a reindex brings documents there.")
        return "\n".join(lines)

    def _reset(self, request: ScopeRequest) -> str:
        dropped = self.resolver.overrides.reset(request.platform, request.place, request.user)
        after = self._placement(request)
        names = f"{self.style.bold}{self._names(after.collections)}{self.style.bold}"
        if dropped is None:
            return f"{self._where(request).capitalize()} has no override; its scope is {names} ({self._origin(after)})."
        return (f"Override dropped: the scope of {self._where(request)} is {names} again "
                f"({self._origin(after)}). It counts from the next question.")
