"""The core is the only way in: the chat adapters (bot/slack, bot/teams) reach the knowledge base through
bot/core alone. They may name the shared value types (rag.types) and nothing else of rag, not even inside a
function; nor may they walk an attribute chain into the answer pipeline's internals.

Within bot/core they go through its facade, `bot.core.assistant.Assistant`, and hold none of the collaborators
behind it. The rule, as checked (imports at any depth, TYPE_CHECKING ones too):
- an adapter imports nothing of `bot.core.services`, and no name of another bot.core module (the facade's
  own module aside) that is a collaborator or works on one: a class named by a `CoreServices` field's type
  (`Answerer`, `FeedbackStore`, `Reindexer`, `DeliveryMarks`, `ConversationState`, `ScopeResolver`, `ConversationMemory`, `SourceDesk`…;
  read from CoreServices itself, so a new field counts at once), or a function or class whose signature or
  fields name CoreServices or one of those (`vote_on_source(services, …)`, `run_reindex(reindexer, …)`,
  `ScopeCommand(resolver, …)`); importing a module whole counts as importing every name in it;
- nothing in an adapter reads a CoreServices field or method off a `services` (`services.feedback`,
  `self.services.deliveries`, `services.manifest_for`), nor anything private off an `assistant` (`assistant._core`);
- the facade keeps its collaborators private (no public attribute of an `Assistant`).
Neutral values, constants and shared text helpers (`Question`, `SourceVoted`, `TextStyle`, `GONE`…) stay
importable."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("bot/slack", "bot/teams")
ALLOWED_RAG = {"rag.types"}
PIPELINE_INTERNALS = {"pipeline", "finder", "cache", "retriever", "snapshot"}  # attributes behind the core's facade
FACADE = "bot.core.assistant"


def _modules() -> list[Path]:
    return sorted(path for folder in ADAPTERS for path in (ROOT / folder).rglob("*.py"))


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an import statement names, at any depth (function-level and TYPE_CHECKING ones too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "rag":  # `from rag import feedback` names rag.feedback
                found += [(node.lineno, f"rag.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def _forbidden(module: str) -> bool:
    if module != "rag" and not module.startswith("rag."):
        return False
    return not any(module == allowed or module.startswith(allowed + ".") for allowed in ALLOWED_RAG)


def _chains(tree: ast.AST) -> list[tuple[int, str]]:
    """Attribute chains such as `services.answerer.pipeline.finder`: an adapter reading past the core."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PIPELINE_INTERNALS:
            inner = node.value
            if isinstance(inner, ast.Attribute) and inner.attr in {"answerer", "pipeline"}:
                found.append((node.lineno, f"{inner.attr}.{node.attr}"))
    return found


def test_the_adapters_import_nothing_of_rag_but_its_types():
    offences = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                for path in _modules()
                for line, module in _imported(ast.parse(path.read_text(), str(path))) if _forbidden(module)]
    assert offences == []


def test_nothing_but_the_answerer_reaches_into_its_pipeline():
    """The adapters, the rest of the core and the server's operations ask the core's `Answerer`."""
    core = [path for path in (ROOT / "bot/core").rglob("*.py") if path.name != "answering.py"]
    offences = [f"{path.relative_to(ROOT)}:{line} reads {chain}"
                for path in [*_modules(), *core, ROOT / "ai_employee/operations.py"]
                for line, chain in _chains(ast.parse(path.read_text(), str(path)))]
    assert offences == []


def test_the_scan_sees_function_level_imports_and_chains():
    """The checks above can fail: an import hidden in a function and a chain into the finder are caught."""
    tree = ast.parse("def f(services):\n    from rag.answering.prompt import detect_language\n"
                     "    import rag.words.text\n    from rag import feedback\n    from rag.types import Scope\n"
                     "    return services.answerer.pipeline.finder.query_vector\n")
    assert [m for _, m in _imported(tree) if _forbidden(m)] == ["rag.answering.prompt", "rag.words.text", "rag.feedback"]
    assert sorted(chain for _, chain in _chains(tree)) == ["answerer.pipeline", "pipeline.finder"]


def _fields() -> list[dataclasses.Field]:
    from bot.core.services import CoreServices

    return list(dataclasses.fields(CoreServices))


def _members() -> set[str]:
    """CoreServices' fields and public methods: what an adapter holding one could read."""
    from bot.core.services import CoreServices

    return {field.name for field in _fields()} | {name for name, member in vars(CoreServices).items()
                                                  if callable(member) and not name.startswith("_")}


def _collaborator_types() -> set[str]:
    """CoreServices and the classes its fields hold (`Metrics | None` names Metrics; a `dict[…]` no class)."""
    names = {"CoreServices"}
    for field in _fields():
        names |= {part.strip() for part in str(field.type).split("|") if part.strip().isidentifier()} - {"None"}
    return names


def _annotations(obj: object) -> list[str]:
    """The annotations of a function, or of a class's fields and constructor, as written."""
    found = list(obj.__annotations__.values()) if inspect.isfunction(obj) or inspect.isclass(obj) else []
    init = getattr(obj, "__init__", None) if inspect.isclass(obj) else None
    if inspect.isfunction(init):
        found += init.__annotations__.values()
    return [a if isinstance(a, str) else getattr(a, "__name__", repr(a)) for a in found]


def _works_on_collaborators(obj: object, types: set[str]) -> bool:
    if inspect.ismodule(obj):
        return any(_works_on_collaborators(member, types) for name, member in vars(obj).items()
                   if not name.startswith("_") and getattr(member, "__module__", None) == obj.__name__)
    if getattr(obj, "__name__", None) in types and inspect.isclass(obj):
        return True
    return any(set(re.findall(r"\w+", annotation)) & types for annotation in _annotations(obj))


def _core_internals(tree: ast.AST, types: set[str]) -> list[tuple[int, str]]:
    """bot.core names an adapter imports that are collaborators or work on one (see the module docstring)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name == "bot.core.services"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("bot.core"):
            if node.module == "bot.core.services":
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
                continue
            if node.module == FACADE:
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if obj is None:  # `from bot.core import votes`: a module
                    obj = importlib.import_module(f"{node.module}.{alias.name}")
                if _works_on_collaborators(obj, types):
                    found.append((node.lineno, f"{node.module}.{alias.name}"))
    return found


def _past_the_facade(tree: ast.AST, fields: set[str]) -> list[tuple[int, str]]:
    """`services.<a CoreServices field or method>` (also `self.services.…`) and `assistant._…` reads."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        inner = node.value
        owner = inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute) else None
        if (owner == "services" and node.attr in fields) or (owner == "assistant" and node.attr.startswith("_")):
            found.append((node.lineno, f"{owner}.{node.attr}"))
    return found


def test_the_adapters_reach_the_core_through_its_facade_alone():
    types, fields = _collaborator_types(), _members()
    offences = []
    for path in _modules():
        tree = ast.parse(path.read_text(), str(path))
        offences += [f"{path.relative_to(ROOT)}:{line} imports {name}" for line, name in _core_internals(tree, types)]
        offences += [f"{path.relative_to(ROOT)}:{line} reads {chain}" for line, chain in _past_the_facade(tree, fields)]
    assert offences == []


def test_the_facade_scan_can_fail():
    """Each kind of offence is caught, and the neutral values, constants and text helpers pass."""
    tree = ast.parse(
        "from bot.core.review import GONE, SourceVoted, vote_on_source\n"
        "from bot.core.votes import RECORDED, vote_on_answer\n"
        "from bot.core.reindex import TextStyle, run_reindex\n"
        "from bot.core.scopes.command import ScopeCommand, ScopeRequest\n"
        "from bot.core.answering import Answerer, Question\n"
        "from bot.core.services import Manifest\n"
        "from bot.core import review\n"
        "from bot.core.assistant import Assistant\n"
        "def f(services, assistant, self, report):\n"
        "    import bot.core.services\n"
        "    services.feedback.vote()\n"
        "    self.services.deliveries.first_delivery()\n"
        "    assistant._core.memory\n"
        "    services.manifest_for(None)\n"
        "    return services.settings, services.assistant.ask, report.sources, assistant.review\n")
    types, fields = _collaborator_types(), _members()
    assert sorted(name for _, name in _core_internals(tree, types)) == [
        "bot.core.answering.Answerer", "bot.core.reindex.run_reindex", "bot.core.review",
        "bot.core.review.vote_on_source", "bot.core.scopes.command.ScopeCommand", "bot.core.services",
        "bot.core.services.Manifest", "bot.core.votes.vote_on_answer"]
    assert sorted(chain for _, chain in _past_the_facade(tree, fields)) == [
        "assistant._core", "services.deliveries", "services.feedback", "services.manifest_for"]
    assert {"Answerer", "FeedbackStore", "Reindexer", "DeliveryMarks", "ConversationState", "ScopeResolver", "ConversationMemory",
            "SourceDesk"} <= types


def test_the_facade_keeps_its_collaborators_private():
    from bot.core.assistant import Assistant
    from bot.core.services import CoreServices

    core = CoreServices(**{field.name: None for field in _fields() if field.default is dataclasses.MISSING
                           and field.default_factory is dataclasses.MISSING})
    assert [name for name in vars(Assistant(core)) if not name.startswith("_")] == []


@pytest.mark.parametrize("module", ["ai_employee.operations", "ai_employee.wiring", "bot.core.services",
                                    "bot.slack.services", "bot.teams.app", "bot.slack.app"])
def test_each_module_imports_alone(module):
    """No import cycle between the composition root and what it builds: each loads first in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]


def test_operations_does_not_name_the_composition_root():
    """operations is built by wiring: it must not import wiring back (not even for its type hints)."""
    tree = ast.parse((ROOT / "ai_employee/operations.py").read_text())
    assert [m for _, m in _imported(tree) if m.startswith("ai_employee.wiring")] == []
