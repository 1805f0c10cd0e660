"""Mistakes a new admin makes, as the CLI shows them: one line on stderr each, no traceback, no noise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from tests.conftest import PROJECT, cli_env

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
