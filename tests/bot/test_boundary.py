"""The core is the only way in: the chat adapters (bot/slack, bot/teams) reach the knowledge base through
bot/core alone. They may name the shared value types (rag.types) and nothing else of rag, not even inside a
function; nor may they walk an attribute chain into the answer pipeline's internals."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("bot/slack", "bot/teams")
ALLOWED_RAG = {"rag.types"}
PIPELINE_INTERNALS = {"pipeline", "finder", "cache", "retriever", "snapshot"}  # attributes behind the core's facade


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
    tree = ast.parse("def f(services):\n    from rag.prompt import detect_language\n"
                     "    import rag.text\n    from rag import feedback\n    from rag.types import Scope\n"
                     "    return services.answerer.pipeline.finder.query_vector\n")
    assert [m for _, m in _imported(tree) if _forbidden(m)] == ["rag.prompt", "rag.text", "rag.feedback"]
    assert sorted(chain for _, chain in _chains(tree)) == ["answerer.pipeline", "pipeline.finder"]


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
