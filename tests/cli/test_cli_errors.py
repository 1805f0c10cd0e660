"""Mistakes a new admin makes, as the CLI shows them: one line on stderr each, no traceback, no noise."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from tests.bot.harness import wait_for
from tests.cli.serving import Served, serve_env
from tests.conftest import PROJECT, cli_env
from tests.fakes.slack_api import SlackApiServer
from tests.processes import free_port

SLACK = {"SLACK_BOT_TOKEN": "xoxb-not-checked", "SLACK_SIGNING_SECRET": "not-checked"}


def run(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=cli_env(data_dir) | {"PYTHONPATH": str(PROJECT)} | (env or {}),
                          capture_output=True, text=True, timeout=600, cwd=data_dir.parent)


@pytest.mark.parametrize("args", [("status",), ("feedback", "summary"), ("serve", "--port", "0"), ("ask", "x"),
                                  ("search", "x"), ("index",)])
def test_an_unknown_vector_store_is_one_line_naming_the_variable_and_the_choices(tmp_path, args):
    done = run(tmp_path / "data", *args, env={"AIE_VECTOR_STORE": "bogus", **SLACK})
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: AIE_VECTOR_STORE='bogus' is not allowed: it should be 'faiss' or 'milvus'\n"
    assert done.stdout == ""


def test_a_number_that_is_not_one_names_the_environment_variable(tmp_path):
    done = run(tmp_path / "data", "status", env={"AIE_TOP_K": "abc"})
    assert (done.returncode, done.stderr) == (
        2, "error: AIE_TOP_K='abc' is not allowed: it should be a valid integer, unable to parse string as an integer\n")
    done = run(tmp_path / "data", "serve", env={"AIE_MAX_CONCURRENT_ANSWERS": "0", **SLACK})
    assert (done.returncode, done.stderr) == (
        2, "error: AIE_MAX_CONCURRENT_ANSWERS='0' is not allowed: it should be greater than or equal to 1\n")
    done = run(tmp_path / "data", "search", "x", env={"AIE_LOG_LEVEL": "loud"})
    assert (done.returncode, done.stderr) == (
        2, "error: AIE_LOG_LEVEL='loud' is not allowed: it should be DEBUG, INFO, WARNING, ERROR or CRITICAL\n")


class _Probe(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AIE_PROBE_")

    token: SecretStr = Field(min_length=40)
    retries: int = 3


def test_a_secret_setting_is_never_echoed(monkeypatch):
    from ai_employee.settings_errors import describe

    monkeypatch.setenv("AIE_PROBE_TOKEN", "s3cret-short")
    monkeypatch.setenv("AIE_PROBE_RETRIES", "many")
    with pytest.raises(ValidationError) as raised:
        _Probe()
    assert describe(raised.value) == (
        "AIE_PROBE_TOKEN=(hidden) is not allowed: it should have at least 40 items after validation; "
        "AIE_PROBE_RETRIES='many' is not allowed: it should be a valid integer, unable to parse string as an integer")


LONG = ("Employees get twenty six working days of annual leave each year and may carry five of them over into the "
        "first quarter of the next year, with their manager's agreement.")
ID = "hr/annual-leave-and-time-off-policy-for-every-office-and-country-2026-edition.md"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """A data dir with two collections indexed, hr (a long sentence, a long file name) and eng."""
    root = tmp_path_factory.mktemp("cli-errors")
    docs = root / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "eng").mkdir()
    (docs / ID).write_text(f"# Annual leave\n\n{LONG}\n", encoding="utf-8")
    (docs / "eng" / "deploy.md").write_text("# Deploys\n\nDeploys run on Tuesdays after the change review.\n",
                                            encoding="utf-8")
    done = run(root / "data", "index", str(docs), "--json")
    assert done.returncode == 0, done.stderr
    return root


def test_a_scope_naming_no_collection_says_so_and_lists_the_collections(indexed, tmp_path):
    done = run(indexed / "data", "search", "annual leave", "--scope", "nosuch")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "error: no collection nosuch in the index; it has: eng, hr\n"
    dataset = tmp_path / "dataset"
    (dataset / "docs" / "hr").mkdir(parents=True)
    (dataset / "docs" / "hr" / "leave.md").write_text(f"# Leave\n\n{LONG}\n", encoding="utf-8")
    (dataset / "questions.jsonl").write_text(
        '{"id": "1", "question": "How much annual leave?", "gold": [{"file": "hr/leave.md", "text": "twenty six"}]}\n',
        encoding="utf-8")
    done = run(indexed / "data", "eval", str(dataset), "--scope", "finance", "--json")
    assert done.returncode == 1 and done.stderr.splitlines()[-1] == "error: no collection finance in the index; it has: hr"
    # Some of them known (`hr,public` with nothing at the root): a warning, and the known ones are searched.
    done = run(indexed / "data", "search", "annual leave", "--scope", "hr,public")
    assert done.returncode == 0 and "Annual leave" in done.stdout
    assert done.stderr.splitlines()[0] == "warning: the index has no collection public (it has: eng, hr)"


def test_ask_in_a_channel_whose_collections_the_index_lacks_warns(indexed, tmp_path):
    scopes = tmp_path / "scopes.yaml"
    scopes.write_text("slack: {C0FIN: [finance, hr]}\n", encoding="utf-8")
    done = run(indexed / "data", "ask", "How much annual leave?", "--channel", "C0FIN",
               env={"AIE_SCOPES_FILE": str(scopes)})
    assert done.returncode == 0, done.stderr
    assert "warning: the index has no collection finance (it has: eng, hr)" in done.stderr.splitlines()


def test_piped_output_keeps_long_lines_whole(indexed):
    done = run(indexed / "data", "search", "annual leave carry over", "-k", "1")
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"1. {ID} · Annual leave") and lines[1] == "   " + LONG
    done = run(indexed / "data", "ask", "How much annual leave do employees get?")
    timing = [line for line in done.stderr.splitlines() if "first text after" in line]
    assert len(timing) == 1 and timing[0].endswith("answer=extractive"), done.stderr
    assert f"({ID})" in done.stdout.splitlines()[-1]


def test_ask_with_redis_down_warns_once(indexed):
    port = free_port()
    done = run(indexed / "data", "ask", "How much annual leave do employees get?",
               env={"AIE_REDIS_URL": f"redis://127.0.0.1:{port}/0"})
    assert done.returncode == 0 and "twenty six" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings == [f"WARNING cache.redis_cache: Redis at redis://127.0.0.1:{port}/0 unavailable (Error 111 "
                        f"connecting to 127.0.0.1:{port}. Connection refused.); continuing without it, retrying every 5 s"]


def test_health_says_what_cache_is_in_use_and_serve_warns_once_about_redis(indexed, tmp_path):
    with SlackApiServer(tokens=["xoxb-errors-test"]) as slack:
        env = serve_env(indexed / "data", SLACK_BOT_TOKEN="xoxb-errors-test", SLACK_SIGNING_SECRET="s",
                        SLACK_API_URL=slack.base_url, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
        with Served(env, tmp_path, "--host", "127.0.0.1") as served:
            assert served.get("/health").json()["cache"] == "none (redis unreachable)"
            assert served.get("/ready").json()["redis"] == {"configured": True, "reachable": False}
            time.sleep(1)
            records = served.records()
    assert [r["message"].split(" (")[0] for r in records if "Redis" in r["message"]] == [
        env["REDIS_URL"].join(("Redis at ", " unavailable"))]


def test_library_start_up_chatter_is_debug_only(indexed, tmp_path):
    with SlackApiServer(tokens=["xoxb-errors-test"]) as slack:
        env = serve_env(indexed / "data", SLACK_BOT_TOKEN="xoxb-errors-test", SLACK_SIGNING_SECRET="s",
                        SLACK_API_URL=slack.base_url)
        with Served(env, tmp_path, "--host", "127.0.0.1") as served:
            wait_for(lambda: served.get("/ready").status_code == 200, 60)
            records = served.records()
    assert records and not [r for r in records if r["logger"] in ("faiss.loader", "jieba")], records
    assert any(r["message"].startswith("serving Slack on") for r in records), "INFO lines are still there"
    quiet = run(indexed / "data", "search", "年假", "-k", "1", env={"AIE_LOG_LEVEL": "INFO"})
    assert quiet.stderr.splitlines()[:-1] == [], quiet.stderr  # only the timing line
    verbose = run(indexed / "data", "search", "年假", "-k", "1", env={"AIE_LOG_LEVEL": "DEBUG"}).stderr.splitlines()
    assert "DEBUG faiss.loader: Loading faiss." in verbose and "DEBUG jieba: Prefix dict has been built successfully." in verbose


def test_jieba_started_by_another_library_is_quiet_too(tmp_path):
    """Milvus Lite's analyzer starts jieba itself, before the BM25 tokenizer could set its level."""
    probe = "from ai_employee import cli\ncli._setup_logging()\nimport jieba\njieba.initialize()\nprint('ok')\n"
    env = cli_env(tmp_path) | {"PYTHONPATH": str(PROJECT)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert (done.stdout, done.stderr) == ("ok\n", "")
