"""The one answer to "what may be quoted here, to this person": a place's collections (an admin's
override, else the scopes file, else its default) and, in a direct message, who is reading (the asker and
their groups). In a channel everyone there reads the answer, so access-listed documents never count."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.scopes.config import Collections, ScopesFile
from bot.core.scopes.groups import GroupDirectory
from bot.core.scopes.overrides import ScopeOverride, ScopeOverrides
from rag.types import Scope

OVERRIDE, FILE, DEFAULT, DM, UNLIMITED = "override", "file", "default", "dm", "unlimited"


@dataclass(frozen=True)
class Placement:
    """A place's collections and where they come from."""

    configured: Collections  # what the scopes file gives the place (None: every collection)
    configured_by: str  # FILE (named there), DM or DEFAULT (the file's entries), UNLIMITED (no file or entry)
    override: ScopeOverride | None = None  # set by an admin from chat: wins over the file

    @property
    def collections(self) -> Collections:
        return self.override.collections if self.override is not None else self.configured

    @property
    def origin(self) -> str:
        return OVERRIDE if self.override is not None else self.configured_by


class ScopeResolver:
    def __init__(self, file: ScopesFile, overrides: ScopeOverrides | None = None,
                 directories: dict[str, GroupDirectory] | None = None) -> None:
        self.file = file
        self.overrides = overrides  # None: no changes from chat (the command needs them)
        self.directories = dict(directories or {})  # platform -> its group memberships

    def use_groups(self, platform: str, directory: GroupDirectory) -> None:
        self.directories[platform] = directory

    def configured(self, platform: str, place: str, is_direct: bool) -> tuple[Collections, str]:
        named = self.file.mapped(platform, place)
        if named is not None:
            return named, FILE
        # A direct message without a `dm` entry gets the default: never more than channels get.
        for collections, origin in ((self.file.dm, DM), (self.file.default, DEFAULT)):
            if collections is not None and (is_direct or origin == DEFAULT):
                return collections, origin
        return None, UNLIMITED

    def placement(self, platform: str, place: str, is_direct: bool) -> Placement:
        """The place's collections now (blocking: reads the overrides, so a change counts at once)."""
        collections, origin = self.configured(platform, place, is_direct)
        override = self.overrides.get(platform, place) if self.overrides is not None else None
        return Placement(collections, origin, override)

    async def readers(self, platform: str, user: str, also: Iterable[str] = ()) -> frozenset[str]:
        """The asker's ids and their groups' ids (only their own ids when groups cannot be looked up)."""
        ids = {i for i in (user, *also) if i}
        directory = self.directories.get(platform)
        if directory is not None and user:
            ids |= await directory.groups_of(user)
        return frozenset(ids)

    async def resolve(self, platform: str, place: str, user: str, is_direct: bool, *,
                      also: Iterable[str] = ()) -> Scope:
        """What a question asked in `place` by `user` may be answered from; `also`: more ids of the user."""
        placement = await asyncio.to_thread(self.placement, platform, place, is_direct)
        readers = await self.readers(platform, user, also) if is_direct else frozenset()
        return Scope(placement.collections, readers)
