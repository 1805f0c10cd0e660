"""Who may read a source's restricted documents, in the ids the chat surfaces ask with.

A connector names a restricted page's readers in chat ids where it knows them (a wiki group by the ids of
the chat groups the sources file maps it to: rag.sources.confluence_access) and people as the source knows
them, `email:<address>`. A question's Scope holds chat ids: the asker's Slack user id or Entra object id and
the ids of their groups. `ReaderResolver` turns an email into the Slack user and the Teams (Entra) user with
that verified address, on every surface configured, at sync time, before the build. Nothing is looked up by
a group's name (`group:<name>` is dropped): anyone may create a chat group named like a wiki group.

Fail closed: an entry no surface knows is dropped, and a list left with no one becomes NOBODY (the page is
served to nobody). A lookup that fails (a 5xx, a timeout, a refused token) fails the source's sync, so its
last good documents keep serving rather than a page reaching nobody, or the wrong people, by accident.
Answers are kept in the data dir for a while (a wiki names the same people on many pages); a "no such
user" answer only briefly, so someone who joins the workspace is found at the next syncs.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from rag.access import NOBODY
from rag.index.metadata import DocumentMeta
from rag.sources.base import SourceError

_log = logging.getLogger(__name__)
EMAIL = "email:"  # a person by their address: looked up
GROUP = "group:"  # a group by its name: never looked up (anyone may name a chat group so), dropped
TTL, MISS_TTL = 24 * 3600.0, 600.0  # seconds a found id is kept; seconds a "no one" answer is kept


class LookupFailed(Exception):
    """A surface that would not answer. `reason` is safe to show (an error code or HTTP status, never a
    token); `variable` names the setting to fix when one is at fault."""

    def __init__(self, reason: str, *, transient: bool = False, variable: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.transient, self.variable = reason, transient, variable
        self.retry_after = retry_after  # seconds the surface asked us to wait (a 429's Retry-After)


class People(Protocol):
    """One chat surface's people: the id it knows an email by."""

    name: str  # how the surface is named in a message and in the cache ("Slack", "Teams")

    def users(self, emails: list[str]) -> dict[str, str | None]:
        """email -> the user's id (None: no such user). Raises LookupFailed."""
        ...


def needs_lookup(entry: str) -> bool:
    """Whether the entry names someone as the source knows them (no chat id): only a lookup may name them."""
    return entry.startswith((EMAIL, GROUP))


def chat_ids_only(access: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The access list without what only a lookup could name (no chat surface to ask): fail closed."""
    if access is None or not any(needs_lookup(e) for e in access):
        return access
    return tuple(e for e in access if not needs_lookup(e)) or (NOBODY,)


def unresolved(documents: Mapping[str, DocumentMeta]) -> dict[str, DocumentMeta]:
    """`documents` with only chat ids on their access lists (for when the readers cannot be looked up)."""
    return {name: replace(meta, access=chat_ids_only(meta.access)) for name, meta in documents.items()}


class ResolutionCache:
    """Entry -> id answers per surface, in one JSON file written whole (a crash keeps the last one)."""

    def __init__(self, path: Path, *, ttl: float = TTL, miss_ttl: float = MISS_TTL,
                 clock: Callable[[], float] = time.time) -> None:
        self.path, self.ttl, self.miss_ttl, self._clock = path, ttl, miss_ttl, clock
        self._answers: dict[str, dict[str, list]] = self._read()  # surface -> entry -> [id or None, when]

    def _read(self) -> dict[str, dict[str, list]]:
        """The kept answers for emails: anything else a cache from before holds (a group once matched by its
        name) is dropped, never used."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                return {}
            surfaces = {str(k): v for k, v in data.items() if isinstance(v, dict)}
            return {k: {e: a for e, a in v.items() if str(e).startswith(EMAIL)}
                    for k, v in surfaces.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, AttributeError) as exc:  # unreadable: everything is asked anew
            _log.warning("the readers cache %s cannot be read (%s); the readers are looked up anew", self.path, exc)
            return {}

    def known(self, surface: str, entry: str) -> tuple[bool, str | None]:
        """(whether a fresh answer is kept, the id it gave)."""
        answer = self._answers.get(surface, {}).get(entry)
        age = self._age(answer)
        if age == math.inf:
            return False, None
        found = answer[0]  # type: ignore[index]
        return age < (self.ttl if found else self.miss_ttl), found

    def _age(self, answer: object) -> float:
        """Seconds since a kept answer was given; infinite for one unreadable or from the future."""
        try:
            found, when = answer  # type: ignore[misc]
            age = self._clock() - float(when)
        except (TypeError, ValueError):
            return math.inf
        return age if age >= 0 and (found is None or isinstance(found, str)) else math.inf

    def keep(self, surface: str, answers: Mapping[str, str | None]) -> None:
        now = self._clock()
        self._answers.setdefault(surface, {}).update({e: [i, now] for e, i in answers.items()})

    def save(self) -> None:
        """Write the answers still fresh (someone no page names any more is forgotten within a TTL)."""
        for answers in self._answers.values():
            for entry in [e for e, answer in answers.items() if not self._age(answer) < self.ttl]:
                del answers[entry]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".readers-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(self._answers, out)
        os.replace(tmp, self.path)


@dataclass
class ReaderResolver:
    """`resolve(source, documents)`: each document's access list in chat ids, looked up on `surfaces`."""

    surfaces: list[People]
    cache: ResolutionCache

    def resolve(self, source: str, documents: Mapping[str, DocumentMeta]) -> dict[str, DocumentMeta]:
        """Raises SourceError (naming the surface and what failed) when a lookup fails."""
        named = {e for meta in documents.values() for e in (meta.access or ()) if needs_lookup(e)}
        if not named:
            return dict(documents)
        ids: dict[str, set[str]] = {e: set() for e in named}  # a group by name stays with none
        emails = sorted(e for e in named if e.startswith(EMAIL))
        try:
            for surface in self.surfaces:
                for entry, found in self._answers(surface, emails).items():
                    if found:
                        ids[entry].add(found.lower())
        except LookupFailed as exc:
            raise SourceError(f"{exc.args[0]}: the readers of {source}'s restricted pages could not be looked up",
                              variable=exc.variable, transient=exc.transient, retry_after=exc.retry_after) from None
        finally:
            self.cache.save()
        return {name: replace(meta, access=_named(meta.access, ids)) for name, meta in documents.items()}

    def _answers(self, surface: People, entries: list[str]) -> dict[str, str | None]:
        answers: dict[str, str | None] = {}
        asked: list[str] = []
        for entry in entries:
            fresh, found = self.cache.known(surface.name, entry)
            if fresh:
                answers[entry] = found
            else:
                asked.append(entry)
        if asked:
            found = {EMAIL + email: i for email, i in surface.users([e[len(EMAIL):] for e in asked]).items()}
            self.cache.keep(surface.name, found)
            answers.update(found)
        return answers


def _named(access: tuple[str, ...] | None, ids: Mapping[str, Iterable[str]]) -> tuple[str, ...] | None:
    if access is None or not any(needs_lookup(e) for e in access):
        return access
    named = [i for e in access for i in (sorted(ids.get(e, ())) if needs_lookup(e) else (e,)) if i != NOBODY]
    return tuple(dict.fromkeys(named)) or (NOBODY,)
