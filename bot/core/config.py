"""Settings every chat surface shares."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ChatSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Answers worked on at once, across surfaces; later questions wait their turn.
    max_concurrent_answers: int = Field(4, ge=1, validation_alias="AIE_MAX_CONCURRENT_ANSWERS")
    # Which collections each place answers from (YAML); unset: every collection everywhere.
    scopes_file: Path | None = Field(None, validation_alias="AIE_SCOPES_FILE")
    # Where admins' changes from chat (/scope) are kept, with their audit trail; default <data dir>/scopes.sqlite3.
    scopes_db: Path | None = Field(None, validation_alias="AIE_SCOPES_DB")
    # How long group memberships (Slack user groups) are kept before they are looked up again.
    groups_ttl: float = Field(300.0, gt=0, validation_alias="AIE_GROUPS_TTL")
