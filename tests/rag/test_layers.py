"""rag's layers, as its modules import them (at any depth: inside functions and TYPE_CHECKING blocks too).

- rag knows no chat surface and no command line: nothing in rag/ imports bot, ai_employee, Bolt or the Agents
  SDK. Its public entry point, `rag.knowledge_base.KnowledgeBase`, is given what only the chat side knows
  (`find_readers`). (rag.sources.people looks a document's readers up by email in the Slack and Entra
  directories, through slack_sdk's Web API client and Microsoft Graph: directories, as Confluence is a source.)
- The index knows no source: rag/index/ imports nothing of rag.sources (a source writes `DocumentMeta`, the
  index reads it), so the two packages do not import each other; rag.sources builds on rag.index.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imports_of(folder: str) -> list[tuple[str, int, str]]:
    """(file, line, module) for every import in the folder's modules; a relative import resolved."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(str(path.relative_to(ROOT)), node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                names = [f"{base}.{alias.name}" for alias in node.names] if base in {"rag", "rag.index"} else [base]
                found += [(str(path.relative_to(ROOT)), node.lineno, name) for name in names]
    return found


def under(module: str, *packages: str) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def test_rag_imports_no_chat_platform_and_no_command_line():
    chat = ("bot", "ai_employee", "slack_bolt", "microsoft_agents")

    offending = [f"{file}:{line} imports {module}" for file, line, module in imports_of("rag") if under(module, *chat)]

    assert offending == []


def test_the_index_imports_nothing_of_the_sources():
    offending = [f"{file}:{line} imports {module}" for file, line, module in imports_of("rag/index")
                 if under(module, "rag.sources")]

    assert offending == []


@pytest.mark.parametrize("module", ["rag.sources.sync", "rag.index.builder"])
def test_the_sources_build_on_the_index(module):
    """The direction that stays: a sync publishes through the index's builder (and the check above is no
    accident of a folder that imports nothing)."""
    file = module.replace(".", "/") + ".py"

    assert any(under(imported, "rag.index") for found, _, imported in imports_of(str(Path(file).parent))
               if found == file)


def component_of(module: str) -> str | None:
    """The package of rag a module is in (`rag.judging.gate` → "judging"); None for the shared base modules
    directly in rag/ (types, config, access …) and for what is not rag."""
    parts = module.split(".")
    if parts[0] != "rag" or len(parts) < 2 or not (ROOT / "rag" / parts[1]).is_dir():
        return None
    return parts[1]


def test_rags_components_import_one_another_without_a_cycle():
    """rag reads as components a newcomer can name (words, safety, parsing, embedding, index, judging, answering,
    feedback, sources, models), each building on those below it: no two import each other, however indirectly."""
    uses: dict[str, set[str]] = {}
    for file, _, module in imports_of("rag"):
        importer, imported = component_of(file.removesuffix(".py").replace("/", ".")), component_of(module)
        if importer and imported and imported != importer:
            uses.setdefault(importer, set()).add(imported)

    def reached(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for other in uses.get(todo.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        return seen

    cycles = sorted(f"{a} <-> {b}" for a in uses for b in reached(a) if a < b and a in reached(b))

    assert len(uses) >= 8, "the components were found"
    assert cycles == []
