"""One resolver for every place: an admin's override over the scopes file over its defaults; readers only in
a direct message; overrides stored (and audited) where every replica reads them at once."""

from __future__ import annotations

import asyncio

from bot.core.scopes import GroupDirectory, ScopeOverrides, ScopeResolver, ScopesFile
from bot.core.scopes.resolver import DEFAULT, DM, FILE, OVERRIDE, UNLIMITED
from rag.types import Scope

FILE_SCOPES = ScopesFile(default=frozenset({"public"}), dm=frozenset({"public", "hr"}),
                         places={"slack": {"C0HR": frozenset({"hr", "public"})}, "teams": {}})


def resolve(resolver: ScopeResolver, place: str, user: str, direct: bool, platform: str = "slack") -> Scope:
    return asyncio.run(resolver.resolve(platform, place, user, direct))


def test_the_file_names_places_and_its_defaults_cover_the_rest(tmp_path):
    resolver = ScopeResolver(FILE_SCOPES, ScopeOverrides(tmp_path / "scopes.sqlite3"))
    assert resolve(resolver, "C0HR", "U1", False) == Scope(frozenset({"hr", "public"}), frozenset())
    assert resolve(resolver, "C0ANY", "U1", False) == Scope(frozenset({"public"}), frozenset())
    assert resolve(resolver, "D0U1", "U1", True) == Scope(frozenset({"public", "hr"}), frozenset({"U1"}))
    assert resolve(resolver, "C0HR", "U1", False, platform="teams").collections == {"public"}, "per platform"
    assert [resolver.placement("slack", p, d).origin for p, d in (("C0HR", False), ("C0X", False), ("D0", True))] == [
        FILE, DEFAULT, DM]


def test_without_a_file_every_collection_is_searched_but_access_lists_still_count(tmp_path):
    resolver = ScopeResolver(ScopesFile(), ScopeOverrides(tmp_path / "scopes.sqlite3"))
    assert resolve(resolver, "C0HR", "U1", False) == Scope(None, frozenset()), "a channel: no access-listed document"
    assert resolve(resolver, "D0U1", "U1", True) == Scope(None, frozenset({"U1"}))
    assert resolver.placement("slack", "C0HR", False).origin == UNLIMITED
    only_default = ScopeResolver(ScopesFile(default=frozenset({"public"})))
    assert resolve(only_default, "D0U1", "U1", True).collections == {"public"}, "a DM never gets more than channels"


def test_an_override_wins_at_once_for_every_replica_and_is_audited(tmp_path):
    clock = iter(range(1000, 2000)).__next__
    first = ScopeResolver(FILE_SCOPES, ScopeOverrides(tmp_path / "scopes.sqlite3", clock=clock))
    second = ScopeResolver(FILE_SCOPES, ScopeOverrides(tmp_path / "scopes.sqlite3"))  # another process
    assert first.overrides.set("slack", "C0HR", frozenset({"eng"}), "U0ADMIN") is None
    assert resolve(second, "C0HR", "U1", False).collections == {"eng"}
    placement = second.placement("slack", "C0HR", False)
    assert (placement.origin, placement.configured, placement.override.user) == (OVERRIDE, {"hr", "public"}, "U0ADMIN")
    assert first.overrides.set("slack", "C0HR", frozenset({"eng", "public"}), "U0OTHER").collections == {"eng"}
    assert second.overrides.reset("slack", "C0HR", "U0ADMIN").collections == {"eng", "public"}
    assert second.overrides.reset("slack", "C0HR", "U0ADMIN") is None, "nothing to drop: nothing written"
    assert resolve(first, "C0HR", "U1", False).collections == {"hr", "public"}
    audit = first.overrides.audit("slack", "C0HR")
    assert [(a.user, a.old, a.new) for a in audit] == [
        ("U0ADMIN", None, {"eng"}), ("U0OTHER", {"eng"}, {"eng", "public"}), ("U0ADMIN", {"eng", "public"}, None)]
    assert audit[0].changed == 1000 and audit[-1].changed > audit[0].changed


def test_a_direct_message_reads_with_the_askers_groups(tmp_path):
    async def memberships():
        return {"U1": frozenset({"S0LEADS"})}

    resolver = ScopeResolver(ScopesFile(), None, {"slack": GroupDirectory(memberships)})
    assert resolve(resolver, "D0U1", "U1", True).readers == {"u1", "s0leads"}, "ids compare lower-cased"
    assert resolve(resolver, "C0HR", "U1", False).readers == frozenset(), "no lookup matters in a channel"
    assert resolve(resolver, "a:chat", "U1", True, platform="teams").readers == {"u1"}, "no Teams groups"
    teams = asyncio.run(resolver.resolve("teams", "a:chat", "aad-1", True, also=("AAD-1", "29:x", "")))
    assert teams.readers == {"aad-1", "29:x"}
