"""Slack settings (standard Slack variable names) and the check that names what is missing."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class MissingCredentials(ValueError):
    pass


class SlackSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None  # xapp-…, Socket Mode only
    slack_api_url: str = "https://slack.com/api/"
    admin_user_ids: str = Field("", validation_alias="AIE_ADMIN_USER_IDS")  # comma-separated Slack user ids
    stream_buffer_chars: int = Field(120, validation_alias="AIE_STREAM_BUFFER_CHARS")
    fallback_update_seconds: float = Field(1.0, validation_alias="AIE_FALLBACK_UPDATE_SECONDS")

    @field_validator("slack_bot_token", "slack_signing_secret", "slack_app_token", mode="before")
    @classmethod
    def _blank_is_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def configured(self) -> bool:
        """Whether Slack is to be served: any of its credentials is set (`require` names what else is missing)."""
        return bool(self.slack_bot_token or self.slack_signing_secret or self.slack_app_token)

    @property
    def admins(self) -> set[str]:
        return {u.strip() for u in self.admin_user_ids.split(",") if u.strip()}

    @property
    def api_url(self) -> str:
        return self.slack_api_url if self.slack_api_url.endswith("/") else self.slack_api_url + "/"

    def require(self, socket_mode: bool) -> None:
        missing = []
        if not self.slack_bot_token:
            missing.append("SLACK_BOT_TOKEN (the xoxb-… Bot User OAuth Token)")
        if socket_mode and not self.slack_app_token:
            missing.append("SLACK_APP_TOKEN (an xapp-… app-level token with connections:write)")
        if not socket_mode and not self.slack_signing_secret:
            missing.append("SLACK_SIGNING_SECRET (Basic Information → App Credentials)")
        if missing:
            raise MissingCredentials(
                "cannot start the Slack bot; set " + " and ".join(missing)
                + " (see the README section 'Slack app')"
            )
