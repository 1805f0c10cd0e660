"""A local Confluence for tests: real sockets, real HTTP, one background thread, written from the REST API v1
documentation (developer.atlassian.com, Confluence Cloud REST v1 and Data Center REST). Under its context
path (`/wiki`, as on Cloud) it serves:

  GET /rest/api/space/{spaceKey}                  a space (404 for an unknown key); expand=permissions lists
                                                  its grants, each an operation ({operation: read,
                                                  targetType: space} …) for users and groups (`subjects`,
                                                  as Cloud's answer gives them: `_expandable` for the kind a
                                                  grant is not for) or anonymous access; a Data Center
                                                  (`data_center`) leaves them out
  GET /rest/api/space/{spaceKey}/permissions      Data Center only (404 otherwise, as on Cloud): the space's
                                                  grants as a JSON array, each one operation ({targetType:
                                                  space, operationKey: read} …) for one subject ({type: user
                                                  | group | anonymous, displayName}, a user's with the
                                                  username, userKey and email its user object has), with
                                                  spaceKey and spaceId
  GET /rest/api/content?spaceKey&type=page        a space's pages (none for an unknown or hidden space, as
                                                  Confluence answers), paged by start/limit with
                                                  `_links.next`;
                                                  expand: version, ancestors, space, body.storage,
                                                  restrictions.read.restrictions.user / .group
  GET /rest/api/content/search?cql=               CQL, only the clauses the connector sends:
                                                  `id in (1,2)`, `space = "KEY" and type = page|attachment`;
                                                  results and `totalSize` paged like the listing; expand as
                                                  above plus container (an attachment's page)
  GET /rest/api/content/{id}                      one page, same expansions
  GET /download/attachments/{pageId}/{fileName}   an attachment's bytes (the `_links.download` of its result)

It answers 401 unless the request carries the configured credentials: basic auth (Cloud: email and API token)
or a bearer token (Data Center personal access token). `rate_limit_next` answers 429 with Retry-After,
`fail_next` answers any status (500: a failed listing); `calls` records every request with its status.
A server may cap `limit` (as Confluence does): `max_limit` does, so paging is exercised. A space is open to
anonymous users (and so to everyone) until `restrict_space` names who may view it; its administrators'
group is granted administer space, which is no view permission.
"""

from __future__ import annotations

import base64
import re
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import quote, unquote_plus, urlencode

from aiohttp import web

from tests.fakes.local_server import LocalServer

EMAIL, TOKEN = "bot@example.com", "confluence-token-for-the-tests"


@dataclass
class Page:
    id: str
    space: str
    title: str
    body: str  # storage format (XHTML)
    parent: str | None = None
    version: int = 1
    when: str = "2026-01-05T10:00:00.000Z"
    readers: list[dict] = field(default_factory=list)  # user objects of its read restriction
    reader_groups: list[str] = field(default_factory=list)


@dataclass
class Viewers:
    """Who a space grants read space: users (as the API shows them), groups by name, anonymous users."""

    users: list[dict] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    anonymous: bool = False


@dataclass
class Attachment:
    id: str
    page: str
    title: str  # the file name
    data: bytes
    media_type: str = "application/pdf"
    version: int = 1
    when: str = "2026-01-05T10:00:00.000Z"


@dataclass
class Call:
    method: str
    path: str  # without the context path
    query: dict[str, str]
    authorization: str | None
    status: int
    at: float  # time.monotonic() when it was answered


class FakeConfluence(LocalServer):
    name = "fake Confluence"

    def __init__(self, *, bearer: str | None = None, email: str = EMAIL, token: str = TOKEN,
                 max_limit: int = 3, context: str = "/wiki", data_center: bool = False) -> None:
        super().__init__()
        self.data_center = data_center  # a space's permissions from /permissions, not from its answer
        self.spaces: dict[str, str] = {}  # key -> name
        self.pages: dict[str, Page] = {}
        self.attachments: dict[str, Attachment] = {}
        self.max_limit = max_limit
        self.context = context
        self._credentials = f"Bearer {bearer}" if bearer else (
            "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode())
        self.viewers: dict[str, Viewers] = {}  # space key -> who may view it (not here: anyone, anonymously)
        self.show_space_permissions = True  # False: a space's answer leaves out the permissions asked for
        self.show_restrictions = True  # False: listings leave out the restrictions they were asked to expand
        self.show_ancestors = True  # False: listings leave out the ancestors they were asked to expand
        self.list_readers = True  # False: a restriction counts its users and groups (size) but lists none
        # Set: `_links.next` is absolute, under this base (a Data Center whose base URL setting names another
        # host than the one the bot reaches it by)
        self.absolute_links: str | None = None
        self.unindexed: set[str] = set()  # page ids CQL search does not find yet (its index lags behind)
        self.calls: list[Call] = []
        self._failures: list[tuple[int, dict[str, str], str, str | None]] = []  # status, headers, where, page
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.context}"

    # -- the tests' side -------------------------------------------------------------------------------

    def add_page(self, space: str, id: str, title: str, body: str = "<p>text</p>", **kw) -> Page:
        self.spaces.setdefault(space, space.title())
        page = Page(id=id, space=space, title=title, body=body, **kw)
        self.pages[id] = page
        return page

    def restrict_space(self, space: str, *, users: list[dict] | None = None, groups: list[str] | None = None,
                       anonymous: bool = False) -> None:
        """Only these may view the space's pages (no grant to anonymous users unless `anonymous`)."""
        self.spaces.setdefault(space, space.title())
        self.viewers[space] = Viewers(list(users or []), list(groups or []), anonymous)

    def edit(self, id: str, body: str, when: str = "2026-02-01T09:00:00.000Z") -> None:
        page = self.pages[id]
        page.body, page.version, page.when = body, page.version + 1, when

    def attach(self, page: str, id: str, title: str, data: bytes, **kw) -> Attachment:
        attachment = Attachment(id=id, page=page, title=title, data=data, **kw)
        self.attachments[id] = attachment
        return attachment

    def fail_next(self, status: int, *, times: int = 1, where: str = "/", page: str | None = None) -> None:
        """The next `times` requests whose decoded path and query (without the context) contain `where`
        answer `status`: Confluence's JSON error, or the HTML `page` (a proxy's sign-in page, say)."""
        with self._lock:
            self._failures += [(status, {}, where, page)] * times

    def rate_limit_next(self, retry_after: str = "1") -> None:
        with self._lock:
            self._failures.append((429, {"Retry-After": retry_after}, "/", None))

    def calls_to(self, path_prefix: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.path.startswith(path_prefix)]

    # -- HTTP ------------------------------------------------------------------------------------------

    def routes(self, app: web.Application) -> None:
        c = self.context
        app.router.add_get(c + "/rest/api/space/{key}", self._answering(self._space))
        app.router.add_get(c + "/rest/api/space/{key}/permissions", self._answering(self._space_permissions))
        app.router.add_get(c + "/rest/api/content", self._answering(self._content))
        app.router.add_get(c + "/rest/api/content/search", self._answering(self._search))
        app.router.add_get(c + "/rest/api/content/{id}", self._answering(self._one))
        app.router.add_get(c + "/download/attachments/{page}/{file}", self._answering(self._download))

    def _answering(self, handler):
        async def answer(request: web.Request) -> web.StreamResponse:
            authorization = request.headers.get("Authorization")
            path = request.path.removeprefix(self.context)
            with self._lock:
                asked = unquote_plus(request.path_qs.removeprefix(self.context))
                failure = next((f for f in self._failures if f[2] in asked), None)
                if failure is not None:
                    self._failures.remove(failure)
                    response: web.StreamResponse = web.json_response(
                        {"statusCode": failure[0], "message": "injected failure"}, status=failure[0],
                        headers=failure[1]) if failure[3] is None else web.Response(
                        text=failure[3], status=failure[0], headers=failure[1], content_type="text/html")
                elif authorization != self._credentials:
                    response = web.json_response({"statusCode": 401, "message": "Unauthorized"}, status=401,
                                                 headers={"WWW-Authenticate": 'Basic realm="Confluence"'})
                else:
                    response = handler(request)
                self.calls.append(Call(request.method, path, dict(request.query), authorization,
                                       response.status, time.monotonic()))
            return response
        return answer

    def _space(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        if key not in self.spaces:
            return _not_found(f"No space with key : {key}")
        space = {"id": _space_id(key), "key": key, "name": self.spaces[key], "type": "global",
                 "_links": {"webui": f"/spaces/{key}", "base": self.url}, "_expandable": {"permissions": ""}}
        if ("permissions" in request.query.get("expand", "").split(",") and self.show_space_permissions
                and not self.data_center):
            del space["_expandable"]["permissions"]
            space["permissions"] = self._permissions(self.viewers.get(key, Viewers(anonymous=True)))
        return web.json_response(space)

    def _space_permissions(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        if not self.data_center or key not in self.spaces:
            return _not_found(f"No space with key : {key}" if self.data_center else "no such resource")
        viewers = self.viewers.get(key, Viewers(anonymous=True))
        grants = [("administer", {"type": "group", "displayName": "confluence-administrators"})]
        grants += [("read", {"type": "group", "displayName": name}) for name in viewers.groups]
        shown = ("displayName", "username", "userKey", "email")
        grants += [("read", {"type": "user", **{k: u[k] for k in shown if k in u}}) for u in viewers.users]
        if viewers.anonymous:
            grants.append(("read", {"type": "anonymous", "displayName": "Anonymous"}))
        return web.json_response([{"operation": {"targetType": "space", "operationKey": operation},
                                   "subject": subject, "spaceKey": key, "spaceId": _space_id(key)}
                                  for operation, subject in grants])

    def _permissions(self, viewers: Viewers) -> list[dict]:
        """A space's grants as Confluence lists them: one per operation and subject."""
        grants = [_grant("administer", "space", group="confluence-administrators")]
        grants += [_grant("read", "space", group=name) for name in viewers.groups]
        grants += [_grant("read", "space", user=user) for user in viewers.users]
        if viewers.anonymous:
            grants.append(_grant("read", "space", anonymous=True))
        return [{"id": n + 1, **grant} for n, grant in enumerate(grants)]

    def _content(self, request: web.Request) -> web.Response:
        space, kind = request.query.get("spaceKey"), request.query.get("type", "page")
        if kind != "page":
            return web.json_response({"statusCode": 400, "message": "the fake lists pages only"}, status=400)
        pages = [p for p in self.pages.values() if p.space == space]
        return self._paged(request, "/rest/api/content", pages)

    def _search(self, request: web.Request) -> web.Response:
        cql = request.query.get("cql", "")
        ids = re.fullmatch(r"\s*id\s+in\s*\(([^)]*)\)\s*", cql, re.I)
        scope = re.fullmatch(r'\s*space\s*=\s*"([^"]+)"\s+and\s+type\s*=\s*(page|attachment)\s*', cql, re.I)
        if ids:
            wanted = [i.strip().strip('"') for i in ids.group(1).split(",")]
            found: list = [self.pages[i] for i in wanted if i in self.pages and i not in self.unindexed]
        elif scope and scope.group(2).lower() == "page":
            found = [p for p in self.pages.values() if p.space == scope.group(1)]
        elif scope:
            found = [a for a in self.attachments.values()
                     if a.page in self.pages and self.pages[a.page].space == scope.group(1)]
        else:
            return web.json_response({"statusCode": 400, "message": f"Could not parse cql : {cql}"},
                                     status=400)
        return self._paged(request, "/rest/api/content/search", found)

    def _one(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["id"])
        if page is None:
            return _not_found(f"No content found with id : {request.match_info['id']}")
        expand = set(filter(None, request.query.get("expand", "").split(",")))
        data = self._render(page, expand)
        data["_links"]["base"] = self.url
        return web.json_response(data)

    def _download(self, request: web.Request) -> web.Response:
        for attachment in self.attachments.values():
            if (attachment.page, attachment.title) == (request.match_info["page"],
                                                       request.match_info["file"]):
                return web.Response(body=attachment.data, content_type=attachment.media_type)
        return _not_found("no such attachment")

    def _paged(self, request: web.Request, path: str, items: list) -> web.Response:
        start = int(request.query.get("start", "0"))
        limit = min(int(request.query.get("limit", "25")), self.max_limit)
        expand = set(filter(None, request.query.get("expand", "").split(",")))
        chosen = items[start:start + limit]
        links = {"base": self.url, "context": self.context, "self": f"{self.url}{path}"}
        if start + limit < len(items):
            query = {k: v for k, v in request.query.items() if k not in ("start", "limit")}
            links["next"] = f"{path}?{urlencode({**query, 'start': start + limit, 'limit': limit}, safe=',')}"
            if self.absolute_links:
                links["next"] = self.absolute_links + self.context + links["next"]
        body = {"results": [self._render(item, expand) for item in chosen], "start": start, "limit": limit,
                "size": len(chosen), "_links": links}
        if path.endswith("/search"):
            body["totalSize"] = len(items)
        return web.json_response(body)

    def _render(self, item: Page | Attachment, expand: set[str]) -> dict:
        if isinstance(item, Attachment):
            return self._render_attachment(item, expand)
        page = item
        data: dict = {"id": page.id, "type": "page", "status": "current", "title": page.title,
                      "_links": {"webui": f"/spaces/{page.space}/pages/{page.id}/{quote(page.title)}",
                                 "self": f"{self.url}/rest/api/content/{page.id}"}}
        if "version" in expand:
            data["version"] = {"number": page.version, "when": page.when, "by": {"type": "known"}}
        if "ancestors" in expand and self.show_ancestors:
            data["ancestors"] = [{"id": a.id, "type": "page", "title": a.title}
                                 for a in self._ancestors(page)]
        if "space" in expand:
            data["space"] = {"key": page.space, "name": self.spaces[page.space]}
        if "body.storage" in expand:
            data["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if self.show_restrictions and any(e.startswith("restrictions.read") for e in expand):
            data["restrictions"] = {"read": {"operation": "read", "restrictions": {
                "user": {"results": page.readers if self.list_readers else [], "start": 0, "limit": 200,
                         "size": len(page.readers)},
                "group": {"results": [{"type": "group", "name": g} for g in page.reader_groups]
                          if self.list_readers else [], "start": 0, "limit": 200,
                          "size": len(page.reader_groups)}}}}
        return data

    def _render_attachment(self, attachment: Attachment, expand: set[str]) -> dict:
        name = quote(attachment.title, safe="")
        data: dict = {"id": attachment.id, "type": "attachment", "status": "current",
                      "title": attachment.title,
                      "metadata": {"mediaType": attachment.media_type},
                      "extensions": {"mediaType": attachment.media_type, "fileSize": len(attachment.data)},
                      "_links": {"webui": f"/pages/viewpageattachments.action?pageId={attachment.page}",
                                 "download": f"/download/attachments/{attachment.page}/{name}"
                                             f"?version={attachment.version}&api=v2"}}
        if "version" in expand:
            data["version"] = {"number": attachment.version, "when": attachment.when}
        if "container" in expand:
            page = self.pages[attachment.page]
            data["container"] = {"id": page.id, "type": "page", "title": page.title}
        return data

    def _ancestors(self, page: Page) -> list[Page]:
        chain: list[Page] = []
        parent = page.parent
        while parent is not None and parent in self.pages:
            chain.insert(0, self.pages[parent])
            parent = self.pages[parent].parent
        return chain


def _grant(operation: str, target: str, *, group: str | None = None, user: dict | None = None,
           anonymous: bool = False) -> dict:
    subjects: dict = {"_expandable": {"user": "", "group": ""}}
    if group is not None:
        subjects["group"] = {"results": [{"type": "group", "name": group}], "size": 1}
        del subjects["_expandable"]["group"]
    if user is not None:
        subjects["user"] = {"results": [user], "size": 1}
        del subjects["_expandable"]["user"]
    return {"subjects": subjects, "operation": {"operation": operation, "targetType": target},
            "anonymousAccess": anonymous, "unlicensedAccess": False}


def _space_id(key: str) -> int:
    return abs(hash(key)) % 10**6


def _not_found(message: str) -> web.Response:
    return web.json_response({"statusCode": 404, "message": message}, status=404)
