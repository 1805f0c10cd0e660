"""The container files, read as Docker and compose would read them (no Docker engine runs in CI): what they
promise — replicas behind one URL, a non-root image healthy on /ready, one install recipe — and settings
that the application actually reads."""

from __future__ import annotations

import re

import yaml

from bot.connections import HttpLimits
from bot.core.config import ChatSettings
from bot.slack.config import SlackSettings
from bot.teams.config import TeamsSettings
from rag.config import Settings
from tests.conftest import PROJECT

ROLES = {"rewrite", "embed", "rerank", "answer"}


def compose() -> dict:
    return yaml.safe_load((PROJECT / "compose.yaml").read_text(encoding="utf-8"))


def known_variables() -> set[str]:
    """Every environment variable the application reads."""
    names = {"AIE_LOG_LEVEL", "REDIS_URL", "PORT"}
    for settings in (Settings, SlackSettings, TeamsSettings, ChatSettings, HttpLimits):
        prefix = settings.model_config.get("env_prefix", "")
        for name, field in settings.model_fields.items():
            alias = field.validation_alias
            choices = getattr(alias, "choices", [alias] if alias else [])
            names |= {str(c).upper() for c in choices} or {f"{prefix}{name}".upper()}
    return names


def test_two_replicas_share_redis_and_one_data_volume_behind_one_url():
    services = compose()["services"]
    bot = services["bot"]
    assert bot["deploy"]["replicas"] == 2 and bot["command"] == ["ai-employee", "serve"]
    assert bot["environment"]["REDIS_URL"] == "redis://redis:6379/0" and "data:/data" in bot["volumes"]
    assert bot["depends_on"]["index"]["condition"] == "service_completed_successfully"
    assert services["proxy"]["ports"] == ["${PORT:-3000}:80"]
    assert "server bot:3000;" in compose()["configs"]["proxy"]["content"]
    assert {"redis", "milvus", "etcd", "minio"} <= set(services)
    assert services["milvus"]["environment"] == {"ETCD_ENDPOINTS": "etcd:2379", "MINIO_ADDRESS": "minio:9000"}


def test_the_models_profile_serves_the_four_roles_and_the_env_file_points_the_bot_at_them():
    services = compose()["services"]
    assert {name for name, s in services.items() if "models" in s.get("profiles", [])} == ROLES
    env = dict(line.split("=", 1) for line in (PROJECT / "compose.models.env").read_text().splitlines()
               if line and not line.startswith("#"))
    for role in ROLES:
        assert env[f"AIE_{role.upper()}_BASE_URL"] == f"http://{role}:8000/v1"
        assert services[role]["command"][:2] == ["--model", env[f"AIE_{role.upper()}_MODEL"]]
        assert f"${{AIE_{role.upper()}_BASE_URL:-}}" == services["bot"]["environment"][f"AIE_{role.upper()}_BASE_URL"]


def test_every_variable_given_to_the_bot_is_one_it_reads():
    given = set(compose()["services"]["bot"]["environment"])
    given |= {line.split("=", 1)[0] for line in (PROJECT / "compose.models.env").read_text().splitlines()
              if line and not line.startswith("#")}
    assert given - known_variables() == set()


def test_the_image_runs_as_a_user_installs_with_the_ci_recipe_and_is_healthy_when_ready():
    dockerfile = (PROJECT / "Dockerfile").read_text(encoding="utf-8")
    assert "RUN scripts/install --app /opt/venv" in dockerfile
    users = re.findall(r"^USER (\S+)", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n.*/ready", dockerfile, re.M)
    assert 'CMD ["ai-employee", "serve"]' in dockerfile
    copied = set(re.findall(r"^COPY (\S+) ", dockerfile, re.M))
    assert {"rag", "cache", "bot", "ai_employee"} <= copied  # every package pyproject.toml installs
    assert "requirements" in copied  # the lock files it installs from
    assert "scripts/install" in (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
