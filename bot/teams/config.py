"""Teams settings: the Microsoft 365 Agents SDK's own connection variables, and who may reindex.

The bot's Azure registration is read from `CONNECTIONS__SERVICE_CONNECTION__SETTINGS__*` (the SDK's names:
CLIENTID, CLIENTSECRET, TENANTID, and any other setting the SDK knows, such as AUTHTYPE). Setting
`…__ANONYMOUS_ALLOWED=true` accepts requests without a token — for local testing only. `AIE_TEAMS_GROUPS=true`
looks up the Entra groups of people asking in a personal chat (Microsoft Graph at `AIE_TEAMS_GRAPH_URL`)."""

from __future__ import annotations

import os

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"


class TeamsSettingsError(ValueError):
    """The Teams settings cannot be served as they are."""


class MissingTeamsCredentials(TeamsSettingsError):
    pass


ANONYMOUS_HOST = "127.0.0.1"  # where the anonymous mode listens unless told otherwise


class TeamsSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    client_id: str | None = Field(None, validation_alias=PREFIX + "CLIENTID")
    client_secret: SecretStr | None = Field(None, validation_alias=PREFIX + "CLIENTSECRET")
    tenant_id: str | None = Field(None, validation_alias=PREFIX + "TENANTID")
    auth_type: str | None = Field(None, validation_alias=PREFIX + "AUTHTYPE")
    anonymous_allowed: bool = Field(False, validation_alias=PREFIX + "ANONYMOUS_ALLOWED")
    admin_ids: str = Field("", validation_alias="AIE_TEAMS_ADMIN_IDS")  # comma-separated Entra object ids
    # Resolve Entra groups named on access lists through Microsoft Graph (needs GroupMember.Read.All).
    groups: bool = Field(False, validation_alias="AIE_TEAMS_GROUPS")
    graph_url: str = Field("https://graph.microsoft.com", validation_alias="AIE_TEAMS_GRAPH_URL")

    @field_validator("client_secret", mode="before")
    @classmethod
    def _blank_is_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def configured(self) -> bool:
        """Whether Teams is to be served: a registration, or the explicit local anonymous mode."""
        return bool(self.client_id) or self.anonymous_allowed

    @property
    def admins(self) -> set[str]:
        return {u.strip().lower() for u in self.admin_ids.split(",") if u.strip()}

    def require(self) -> None:
        if self.anonymous_allowed and self.client_id:
            # Half a production setup: serving it would silently accept requests without any token.
            raise TeamsSettingsError(
                f"cannot start the Teams bot: {PREFIX}ANONYMOUS_ALLOWED=true (no authentication, for local testing) "
                f"and {PREFIX}CLIENTID (a registered bot) are both set; unset one of them")
        if self.anonymous_allowed:
            return
        needs_secret = (self.auth_type or "ClientSecret").lower() == "clientsecret"
        missing = [name for name, value in (("CLIENTID", self.client_id), ("CLIENTSECRET", self.client_secret),
                                            ("TENANTID", self.tenant_id))
                   if not value and (name != "CLIENTSECRET" or needs_secret)]
        if missing:
            raise MissingTeamsCredentials(
                "cannot start the Teams bot; set " + " and ".join(PREFIX + m for m in missing)
                + " (see the README section 'Teams app'), or " + PREFIX + "ANONYMOUS_ALLOWED=true for local testing")

    def connection(self) -> dict[str, str | bool]:
        """The service connection's settings for the SDK: every `…SETTINGS__*` variable in the environment,
        with the values of these settings over them."""
        settings: dict[str, str | bool] = {key[len(PREFIX):]: value for key, value in os.environ.items()
                                           if key.startswith(PREFIX)}
        secret = self.client_secret.get_secret_value() if self.client_secret else None
        for key, value in (("CLIENTID", self.client_id), ("CLIENTSECRET", secret),
                           ("TENANTID", self.tenant_id), ("AUTHTYPE", self.auth_type)):
            if value:
                settings[key] = value
        settings["ANONYMOUS_ALLOWED"] = self.anonymous_allowed
        settings.setdefault("VALIDATE_ISSUER", True)  # the SDK checks a token's issuer only when asked to
        return settings
