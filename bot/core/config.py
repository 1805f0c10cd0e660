"""Settings every chat surface shares."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ChatSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Answers worked on at once, across surfaces; later questions wait their turn.
    max_concurrent_answers: int = Field(4, ge=1, validation_alias="AIE_MAX_CONCURRENT_ANSWERS")
