"""Shared fixtures: real components, a per-session embedding cache so repeated text is embedded once."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.processes import RedisProcess, free_port

PROJECT = Path(__file__).resolve().parent.parent
# The commands the tests run print for a terminal this wide (rich reads COLUMNS when it writes to a pipe), so
# that a long temporary path — longer under pytest-xdist, whose workers nest theirs — never wraps a line a
# test reads.
os.environ["COLUMNS"] = "1000"
DATASETS = PROJECT.parent / "shared" / "datasets"
LAWREF = DATASETS / "lawref"
HANDBOOK = PROJECT / "examples" / "handbook"
# A question the handbook answers in both languages: the English policy's sentence and the Chinese rules' one
LEAVE = "How many days of annual leave do I get?"
ENTITLEMENT = ("Full-time employees receive 26 working days of paid annual leave per calendar year, "
               "in addition to public holidays.")
ENTITLEMENT_ZH = "员工入职满一年后享受带薪年休假。"


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose work cache (embeddings, tokens) is shared by the whole run: by every pytest-xdist
    worker too (their base temp folders share a parent), so that a text is embedded once per run. It starts
    from lawref's published work cache (its passages' vectors, as ../shared/datasets/lawref/embeddings says
    to seed a data dir), so the statutes the tests index embed only their sentences."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return seeded(tmp_path_factory.mktemp("aie-data"))
    shared = tmp_path_factory.getbasetemp().parent / "aie-data"
    shared.mkdir(exist_ok=True)
    with FileLock(shared.parent / "aie-data.lock"):  # the first worker copies it
        return seeded(shared)


def seeded(data_dir: Path) -> Path:
    seed, cache = LAWREF / "embeddings" / "cache.sqlite3", data_dir / "cache.sqlite3"
    if seed.is_file() and not cache.exists():
        shutil.copyfile(seed, data_dir / "cache.partial")
        (data_dir / "cache.partial").replace(cache)
    return data_dir


@pytest.fixture
def settings(shared_data_dir: Path, tmp_path: Path) -> Settings:
    return Settings(data_dir=shared_data_dir, _env_file=None)


@pytest.fixture
def kb(settings: Settings, tmp_path: Path) -> KnowledgeBase:
    """A fresh knowledge base (own snapshots) that shares the session's embedding cache."""
    return KnowledgeBase(settings, tmp_path / "kb")


def build(kb: KnowledgeBase, paths: list[Path] | None, exclude: list[str] | None = None):
    return kb.refresh(paths, exclude)


def built_index(data_dir: Path, factory: pytest.TempPathFactory, name: str,
                folders: list[Path]) -> tuple[Path, Path]:
    """(data dir, index dir) of `folders` indexed into a new index dir of `name`, on the shared work cache."""
    index_dir = factory.mktemp(name)
    build(KnowledgeBase(Settings(data_dir=data_dir, _env_file=None), index_dir), folders)
    return data_dir, index_dir


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIE_")}
    env["AIE_DATA_DIR"] = str(data_dir)
    return env


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see the embedded default, whatever AIE_* variables the developer's shell has."""
    for name in list(os.environ):
        if name.startswith(("AIE_", "MILVUS_")) or name == "REDIS_URL":
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def redis_process():
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is required for the cache tests (.ci/run installs/starts it)")
    server = RedisProcess(free_port())
    server.start()
    yield server
    server.stop()
