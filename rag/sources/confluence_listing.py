"""A Confluence space listed: who it lets view its pages, every page with its version, ancestors and read
restriction, and every attachment with its version, in a few paged calls (no page body), so a sync that
finds nothing changed costs about (pages + attachments) / page size calls (and one more a space on Data
Center, for its view permissions: rag.sources.confluence_viewers)."""

from __future__ import annotations

from dataclasses import dataclass

from rag.sources.confluence_api import ConfluenceApi
from rag.sources.confluence_viewers import Named, SpaceViewers, space_viewers

_PAGE_EXPAND = "version,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group"
_UNKNOWN = "?"  # the id of an ancestor the answer did not name


@dataclass(frozen=True)
class ListedPage:
    id: str
    space: str
    title: str
    version: int
    when: str  # ISO timestamp of that version
    webui: str  # the page's web path, relative to the base URL
    ancestors: tuple[tuple[str, str], ...]  # (id, title), the space's root first
    # Its own read restriction, `email:<address>` and `group:<name>`. None: it has none; (): it has one
    # naming no one we can name.
    readers: tuple[str, ...] | None


@dataclass(frozen=True)
class ListedAttachment:
    id: str
    page: str  # the id of the page it is attached to
    title: str  # its file name
    version: int
    when: str
    download: str  # the download path, relative to the base URL


@dataclass
class SpaceListing:
    viewers: SpaceViewers
    pages: list[ListedPage]
    attachments: list[ListedAttachment]


def list_space(api: ConfluenceApi, space: str, *, page_size: int, attachments: bool) -> SpaceListing:
    """Every current page (and attachment) of `space`. A space that does not exist raises, rather than
    listing as empty (the content listing answers an unknown key with no results)."""
    viewers = space_viewers(api, space)
    pages = [_page(item, space) for item in api.listing(
        "rest/api/content", {"spaceKey": space, "type": "page", "status": "current", "limit": page_size,
                             "expand": _PAGE_EXPAND}, what=f"the pages of {space}")]
    found: list[ListedAttachment] = []
    if attachments:
        found = [a for item in api.listing(
            "rest/api/content/search", {"cql": f"space = {_quoted(space)} and type = attachment",
                                        "limit": page_size, "expand": "version,container"},
            what=f"the attachments of {space}")
            if (a := _attachment(item)) is not None]
    return SpaceListing(viewers, pages, found)


def _quoted(value: str) -> str:
    """A CQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _page(item: dict, space: str) -> ListedPage:
    version = item.get("version") or {}
    return ListedPage(
        id=str(item["id"]), space=space, title=str(item.get("title") or item["id"]),
        version=int(version.get("number", 0)), when=str(version.get("when", "")),
        webui=str(item.get("_links", {}).get("webui", "")),
        # An answer without ancestors says nothing of the restrictions above the page: an ancestor no listing
        # holds, so the page is nobody's (PageAccess) rather than read as a top-level page
        ancestors=tuple((str(a["id"]), str(a.get("title", ""))) for a in item["ancestors"])
        if isinstance(item.get("ancestors"), list) else ((_UNKNOWN, ""),),
        readers=_readers(item))


def _readers(item: dict) -> tuple[str, ...] | None:
    """Who the page's read restriction names (`_named`); None when it has none; () when the answer says
    nothing of its restrictions (unknown is not unrestricted)."""
    restrictions = ((item.get("restrictions") or {}).get("read") or {}).get("restrictions")
    if not isinstance(restrictions, dict):
        return ()
    users = (restrictions.get("user") or {}).get("results") or []
    groups = (restrictions.get("group") or {}).get("results") or []
    if not users and not groups:
        # ... unless a part counts readers it does not list, or was left unexpanded: unknown, not unrestricted
        unsaid = restrictions.get("_expandable") or {}
        for kind in ("user", "group"):
            part = restrictions.get(kind)
            if (part is None and kind in unsaid) or (isinstance(part, dict) and part.get("size")):
                return ()
        return None
    return tuple(dict.fromkeys(_named(restrictions)))


def _named(subjects: dict) -> list[str]:
    """`email:<address>` for each user whose email the API shows (Cloud hides it for some accounts; Data
    Center does not give it) and `group:<name>` for each group of a restriction's subjects."""
    named = Named()
    named.subjects(subjects)
    return named.names


def _attachment(item: dict) -> ListedAttachment | None:
    container = item.get("container") or {}
    download = item.get("_links", {}).get("download")
    if not container.get("id") or not download:
        return None
    version = item.get("version") or {}
    return ListedAttachment(id=str(item["id"]), page=str(container["id"]), title=str(item.get("title", "")),
                            version=int(version.get("number", 0)), when=str(version.get("when", "")),
                            download=str(download))
