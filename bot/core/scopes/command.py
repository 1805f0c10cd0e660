"""The scope command, on every platform (`/scope` in Slack, `scope` in Teams): with no argument it shows
the place's collections and where they come from; admins change them (`hr,public`) or go back to the
scopes file (`reset`). A change is stored and audited, and counts from the next question."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.core.scopes.config import Collections
from bot.core.scopes.documents import Documents, collection_sizes
from bot.core.scopes.resolver import DEFAULT, DM, FILE, UNLIMITED, Placement, ScopeResolver

_log = logging.getLogger(__name__)
RESET = "reset"
_FROM = {FILE: "from the scopes file", DM: "the scopes file's entry for direct messages",
         DEFAULT: "the scopes file's default for places it does not name",
         UNLIMITED: "no scopes file limits it"}


@dataclass(frozen=True)
class ScopeStyle:
    command: str  # how users type it: "/scope" or "scope"
    bold: str  # wraps bold text
    person: Callable[[str], str]  # a user id as the platform shows a person
    escape: Callable[[str], str] = str  # user-typed text made safe for the platform
    # Whether the reply reaches only the person who typed the command (Slack's response URL); else it is
    # posted where everyone there reads it (Teams), and the index-wide list is kept to personal chats.
    private_reply: bool = True


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
            everyone = self._everyone_reads(request)
            lines.append(self._index_collections(placement.collections if everyone else None))
            lines.append(f"Change it with `{self.style.command} hr,public`; `{self.style.command} {RESET}` "
                         "goes back to the scopes file.")
        return "\n".join(lines)

    def _everyone_reads(self, request: ScopeRequest) -> bool:
        """Whether the reply is posted where everyone in a channel or group chat reads it."""
        return not request.is_direct and not self.style.private_reply

    def _index_collections(self, only: Collections = None) -> str:
        """The index's collections and their sizes; `only`: just these (the place's own, for a reply
        everyone in a channel reads)."""
        documents = self.documents()
        if not documents:
            return "There is no index yet, so no collections."
        sizes = collection_sizes(documents)
        title = "Collections in the index"
        if only is not None:  # ... counting what may be quoted there: no document with an access list
            sizes = collection_sizes(_open(documents, only))
            title = "This channel's collections in the index"
        listed = ", ".join(f"{self.style.escape(name)} ({count})" for name, count in sizes.items()) or "none yet"
        return f"{self.style.bold}{title}{self.style.bold} (documents): {listed}"

    def _set(self, request: ScopeRequest, names: frozenset[str]) -> str:
        before = self._placement(request)
        self.resolver.overrides.set(request.platform, request.place, names, request.user)
        _logged(request, "changed", before.collections, names)
        b = self.style.bold
        lines = [f"Scope of {self._where(request)} is now {b}{self._names(names)}{b} (it was "
                 f"{self._names(before.collections)}). It counts from the next question."]
        documents = self.documents() or {}
        if self._everyone_reads(request):
            documents = _open(documents, names)
        unknown = sorted(names - set(collection_sizes(documents)))
        if unknown:
            lines.append(f"Note: no indexed document is in {self._names(frozenset(unknown))} yet — kept anyway; "
                         "it counts once a reindex brings documents there.")
        return "\n".join(lines)

    def _reset(self, request: ScopeRequest) -> str:
        dropped = self.resolver.overrides.reset(request.platform, request.place, request.user)
        after = self._placement(request)
        _logged(request, "reset" if dropped is not None else "reset (no override)",
                dropped.collections if dropped is not None else after.collections, after.collections)
        names = f"{self.style.bold}{self._names(after.collections)}{self.style.bold}"
        if dropped is None:
            return f"{self._where(request).capitalize()} has no override; its scope is {names} ({self._origin(after)})."
        return (f"Override dropped: the scope of {self._where(request)} is {names} again "
                f"({self._origin(after)}). It counts from the next question.")


def _logged(request: ScopeRequest, what: str, old: Collections, new: Collections) -> None:
    """One line per change from chat: who changed which place's scope from what to what (ids and names only)."""
    def names(collections: Collections) -> str:
        return "every collection" if collections is None else ",".join(sorted(collections)) or "no collection"

    _log.info("scope %s: platform=%s place=%s user=%s %r -> %r", what, request.platform, request.place,
              request.user, names(old), names(new))


def _open(documents: Documents, collections: frozenset[str]) -> Documents:
    """The documents of `collections` that everyone in a channel may be quoted (no access list)."""
    return {file: chunk for file, chunk in documents.items()
            if chunk.collection in collections and not chunk.access}
