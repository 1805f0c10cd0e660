"""Knowledge scopes in chat: which collections each place answers from, and who reads there (see the
README section "Knowledge scopes")."""

from bot.core.scopes.config import ScopesFile, ScopesFileError, load_scopes
from bot.core.scopes.groups import GroupDirectory, GroupLookupFailed
from bot.core.scopes.overrides import ScopeOverrides
from bot.core.scopes.resolver import Placement, ScopeResolver

__all__ = ["GroupDirectory", "GroupLookupFailed", "Placement", "ScopeOverrides", "ScopeResolver", "ScopesFile",
           "ScopesFileError", "load_scopes"]
