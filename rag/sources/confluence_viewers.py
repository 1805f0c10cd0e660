"""Who a Confluence space lets view its pages: its read space grants, in the shape the server gives them.

- Cloud (REST v1): `GET /rest/api/space/{key}?expand=permissions` lists them, each grant an operation
  (`{operation: read, targetType: space}`) for users and groups (`subjects`) or for anonymous users
  (`anonymousAccess`).
- Data Center, whose space answer does not list them: `GET /rest/api/space/{key}/permissions` (8.x and later),
  a list of grants, each one operation (`{operationKey: read, targetType: space}`) for one `subject`: a user,
  a group or the anonymous user (`type`; `displayName`, the group's name for a group).

Grants name people by the email the answer shows (`email:<address>`) and groups by name (`group:<name>`). A
user whose email the answer does not show (Data Center documents none for a grant's subject; Cloud hides some)
lets no one in and is counted among the space's unmatched users, which `sources check` names. Unknown is
never everyone: a space whose permissions neither shape lists, or that Confluence refuses or garbles, is
unreadable, with why (its pages reach no one). A passing failure (a 5xx, a timeout) fails the listing
instead, so the last good documents keep serving.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from rag.sources.confluence_api import ConfluenceApi, NotFound, Refused, Unreadable
from rag.sources.readers import EMAIL, GROUP

UNLISTED = "Confluence's answer did not list who may view it"


@dataclass(frozen=True)
class SpaceViewers:
    """Who a space lets view its pages, named as a read restriction names readers (`names`); None: anyone
    (anonymous access). `unreadable` says why they are not known: then no one may be assumed to. `unmatched`:
    the users it names whose email the answer does not show, as Confluence calls them."""

    names: tuple[str, ...] | None
    unreadable: str = ""
    unmatched: tuple[str, ...] = ()


class Named:
    """The people and groups a space's grants or a page's restriction name; `unmatched`: each user of them
    the answer shows no email for."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.unmatched: list[str] = []

    def subjects(self, subjects: Any) -> None:
        """The users and groups of a restriction's or a Cloud grant's `subjects`."""
        for user in _results(subjects, "user"):
            self.user(user)
        for group in _results(subjects, "group"):
            self.group(group.get("name"))

    def user(self, user: dict) -> None:
        email = str(user.get("email") or "").strip().lower()
        if email:
            self.names.append(EMAIL + email)
        else:
            self.unmatched.append(_who(user))

    def group(self, name: Any) -> None:
        if str(name or "").strip():
            self.names.append(GROUP + str(name).strip().lower())

    def viewers(self) -> SpaceViewers:
        return SpaceViewers(tuple(dict.fromkeys(self.names)), unmatched=tuple(dict.fromkeys(self.unmatched)))


def space_viewers(api: ConfluenceApi, space: str) -> SpaceViewers:
    """The space's viewers from its own answer (which raises for a space that does not exist), else (none
    listed: a space always has grants, its administrators' at least) from its permissions resource."""
    key = quote(space, safe="")
    answer = api.get(f"rest/api/space/{key}", {"expand": "permissions"}, what=f"space {space}")
    listed = answer.get("permissions") if isinstance(answer, dict) else None
    if isinstance(listed, list) and listed:
        return _cloud_viewers(listed)
    try:
        grants = api.get(f"rest/api/space/{key}/permissions", what=f"the view permissions of space {space}")
    except NotFound:  # no such resource (Cloud, a Data Center before 8.x)
        return SpaceViewers((), unreadable=UNLISTED)
    except (Refused, Unreadable) as exc:
        return SpaceViewers((), unreadable=str(exc))
    if not isinstance(grants, list):
        return SpaceViewers((), unreadable="Confluence's answer to its view permissions was no list of them")
    return _data_center_viewers(grants)


def _cloud_viewers(grants: list) -> SpaceViewers:
    named = Named()
    for grant in _reading(grants):
        if grant.get("anonymousAccess"):
            return SpaceViewers(None)
        named.subjects(grant.get("subjects"))  # (unlicensed access: Service Management customers only)
    return named.viewers()


def _data_center_viewers(grants: list) -> SpaceViewers:
    named = Named()
    for grant in _reading(grants):
        subject = _object(grant.get("subject"))
        kind = subject.get("type")
        if kind == "anonymous":
            return SpaceViewers(None)
        if kind == "user":
            named.user(subject)
        elif kind == "group":
            named.group(subject.get("name") or subject.get("displayName"))
    return named.viewers()


def _reading(grants: list) -> Iterator[dict]:
    """The grants of read space (Cloud names the operation `operation`, Data Center `operationKey`)."""
    for grant in (g for g in grants if isinstance(g, dict)):
        operation = _object(grant.get("operation"))
        if (operation.get("operation", operation.get("operationKey")), operation.get("targetType")) == (
                "read", "space"):
            yield grant


def _results(subjects: Any, kind: str) -> list[dict]:
    found = _object(_object(subjects).get(kind)).get("results")
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _object(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _who(user: dict) -> str:
    """A user as Confluence shows them: their name and, on Data Center, their username."""
    shown, login = (str(user.get(k) or "").strip() for k in ("displayName", "username"))
    if shown and login:
        return f"{shown} ({login})"
    return shown or login or str(user.get("userKey") or user.get("accountId") or "a user without a name")
