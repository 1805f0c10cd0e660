"""Who may read a Confluence page, as an access list (rag.access) that the sync completes with chat ids.

Confluence lets a reader through only where every level admits them: the space's view permission, each
ancestor's read restriction and the page's own. The access list is what all those levels name in common. A
level names people by email (`email:<address>`, looked up on the chat surfaces at sync time:
rag.sources.readers) and groups by name (`group:<name>`). A group counts only as the sources file maps it
(`groups:`): to the ids of its Slack user group and Entra group, or to everyone (the wiki's group of every
licensed user: a level naming it, like a space open to anonymous users, leaves the page to the source's
collection). Chat groups are never matched by name: anyone allowed to create a Slack user group, and any
Entra user (Microsoft 365 groups are self-service), can create one named like a wiki group. A group mapped
to nothing lets none of its members in: its level admits only the others it names. Unknown is never
everyone: a level naming no one known, an ancestor missing from the listing or a space whose view
permissions could not be read makes the page nobody's.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag.access import NOBODY
from rag.sources.config import ChatGroups
from rag.sources.confluence_listing import ListedPage
from rag.sources.confluence_viewers import SpaceViewers
from rag.sources.readers import GROUP


class PageAccess:
    """`of(page, pages, space)`: the page's access list; `hidden`: each wiki group the sources file does not
    map, with the ids of the pages it was named on (by their space, an ancestor or themselves) and let no one
    in."""

    def __init__(self, groups: Mapping[str, ChatGroups]) -> None:
        self.groups = groups
        self.hidden: dict[str, set[str]] = {}

    def of(self, page: ListedPage, pages: Mapping[str, ListedPage],
           space: SpaceViewers) -> tuple[str, ...] | None:
        """None when nothing is restricted; (NOBODY,) when the levels name no one in common, an ancestor is
        unknown or the space's viewers are (fail closed)."""
        if space.unreadable:
            return (NOBODY,)
        named: list[tuple[str, ...] | None] = [space.names]
        for ancestor_id, _ in page.ancestors:
            ancestor = pages.get(ancestor_id)
            if ancestor is None:
                return (NOBODY,)
            named.append(ancestor.readers)
        named.append(page.readers)
        levels = [ids for level in named
                  if level is not None and (ids := self._ids(level, page.id)) is not None]
        if not levels:
            return None
        common = [i for i in levels[-1] if all(i in other for other in levels[:-1])]
        return tuple(common) or (NOBODY,)

    def _ids(self, level: tuple[str, ...], page_id: str) -> tuple[str, ...] | None:
        """A level's emails as they are and its groups as the chat ids they are mapped to; None when it lets
        everyone in."""
        chats = [self.groups.get(e[len(GROUP):]) for e in level if e.startswith(GROUP)]
        if any(chat is not None and chat.everyone for chat in chats):
            return None
        ids: list[str] = []
        for entry in level:
            if not entry.startswith(GROUP):
                ids.append(entry)
            elif (chat := self.groups.get(entry[len(GROUP):])) is not None:
                ids += chat.ids
            else:
                self.hidden.setdefault(entry[len(GROUP):], set()).add(page_id)
        return tuple(dict.fromkeys(ids))
