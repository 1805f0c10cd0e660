"""The sources file (`AIE_SOURCES_FILE`, YAML): every knowledge source, declared once.

    sources:
      - {name: handbook, type: folder, path: /srv/handbook, collection: hr, watch: true,
         url: "https://git.example.com/handbook/blob/main/{path}"}
      - {name: runbooks, type: git, url: "https://git.example.com/ops/runbooks.git", branch: main,
         collection: eng, every: 10m}
      - {name: intranet, type: web, url: "https://intranet.example.com/policies/", every: 1d}
      - {name: eng-wiki, type: confluence, url: "https://example.atlassian.net/wiki", spaces: [ENG, OPS],
         user_env: CONFLUENCE_USER, token_env: CONFLUENCE_TOKEN, collection: eng, every: 15m,
         groups: {HR: {slack: S0614TZR7, entra: 3f1c2a9e-0b7d-4c55-9e21-6d0f8a4b7c13},
                  confluence-users: everyone}}

Secrets are never written here: a source names the environment variable that holds each one. A mistake
stops the command with one line naming the file, the key and what is wrong.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from rag.types import PUBLIC
from rag.yaml_files import read_yaml

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
EVERYONE = "everyone"  # a wiki group every licensed user is in (groups:)
# A chat group id: how it looks, the case its platform writes it in, and what to write instead of a mistake
_CHAT_GROUP_IDS = {
    "slack": (re.compile(r"S[A-Z0-9]{2,}"), str.upper,
              "a Slack user group id (S and letters or digits, such as S0614TZR7)"),
    "entra": (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), str.lower,
              "an Entra group's object id (such as 3f1c2a9e-0b7d-4c55-9e21-6d0f8a4b7c13)"),
}


class SourcesFileError(ValueError):
    """A sources file that cannot be used; the message is one line: file, key, what is wrong."""


def seconds(value: Any) -> float:
    """`15m`, `1h`, `1d`, `30s`, `0` (only on demand) as seconds."""
    match = _DURATION.fullmatch(str(value).strip().lower())
    if match is None:
        raise ValueError(f"expected an interval such as 15m, 1h or 1d (0: only on demand), got {value!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


class _Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    collection: str = PUBLIC
    every: float = 0.0  # seconds between syncs; 0: only when asked

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("lower-case letters, digits, - and _ (at most 48), starting with a letter or digit")
        return value

    @field_validator("collection")
    @classmethod
    def _collection(cls, value: str) -> str:
        if not value.strip() or "," in value or "/" in value:
            raise ValueError("one collection name, such as hr or public")
        return value.strip()

    @field_validator("every", mode="before")
    @classmethod
    def _every(cls, value: Any) -> float:
        return seconds(value)

    def secrets(self) -> tuple[str, ...]:
        """The environment variables this source reads secrets from."""
        return ()


def _env_name(value: str | None) -> str | None:
    if value is not None and not _ENV.fullmatch(value):
        raise ValueError("the name of an environment variable (the secret itself never goes in this file)")
    return value


class FolderSource(_Source):
    type: Literal["folder"]
    path: Path
    watch: bool = False  # reflect saved, added and deleted files within seconds
    url: str | None = None  # footnote link template: {path} (the file's path in the folder), {page}
    exclude: list[str] = Field(default_factory=list)


class GitSource(_Source):
    type: Literal["git"]
    url: str  # what `git clone` takes (https, ssh, or a path to a repository on disk)
    branch: str = "main"
    path: str = ""  # only the files under this folder of the repository
    web_url: str | None = None  # the repository's web view: footnotes link to the file (and lines) there
    token_env: str | None = None  # an HTTPS token, for a private repository

    _token = field_validator("token_env")(lambda cls, v: _env_name(v))

    def secrets(self) -> tuple[str, ...]:
        return (self.token_env,) if self.token_env else ()


class WebSource(_Source):
    type: Literal["web"]
    url: str  # the crawl stays under this prefix
    max_pages: int = Field(500, ge=1)
    delay: float = Field(0.5, ge=0)  # seconds between requests (or the site's Crawl-delay when longer)
    token_env: str | None = None  # sent as a bearer token, for an intranet behind one

    _token = field_validator("token_env")(lambda cls, v: _env_name(v))

    def secrets(self) -> tuple[str, ...]:
        return (self.token_env,) if self.token_env else ()


class ChatGroups(BaseModel):
    """The chat groups a wiki group's members are in, by id: its Slack user group, its Entra group (either or
    both). Never found by name: anyone may make a Slack user group or a Microsoft 365 group named like it.
    `everyone` (written alone): the wiki's group of every licensed user, such as confluence-users; a page or
    space it may read is left to the source's collection."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slack: str | None = None  # a Slack user group id, S…
    entra: str | None = None  # an Entra group's object id
    everyone: bool = False

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        if value == EVERYONE:
            return {"everyone": True}
        if not isinstance(value, dict):
            raise ValueError("expected {slack: <Slack user group id>, entra: <Entra group id>} or "
                             + EVERYONE)
        return value

    @field_validator("slack", "entra")
    @classmethod
    def _id(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The id as the platform writes it (Slack upper case, Entra lower case)."""
        if value is None:
            return None
        pattern, case, what = _CHAT_GROUP_IDS[info.field_name]
        if not pattern.fullmatch(case(value.strip())):
            raise ValueError(f"{what}, not its name")
        return case(value.strip())

    @model_validator(mode="after")
    def _some(self) -> ChatGroups:
        if self.everyone == (self.slack is not None or self.entra is not None):
            raise ValueError("a Slack user group id (slack:), an Entra group id (entra:) or both; or "
                             f"{EVERYONE} alone")
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids as access lists hold them (lower case, as a Scope compares them)."""
        return tuple(i.lower() for i in (self.slack, self.entra) if i)


class ConfluenceSource(_Source):
    type: Literal["confluence"]
    url: str  # https://example.atlassian.net/wiki (Cloud) or the Data Center base URL
    # The space keys, or each space key with its own collection ({ENG: eng, HR: hr}; a list: the source's)
    spaces: list[str] | dict[str, str] = Field(min_length=1)
    user_env: str | None = None  # Cloud: the account's email; Data Center with a personal token: leave out
    token_env: str
    cloud: bool | None = None  # None: judged from the URL (atlassian.net)
    attachments: bool = True
    # Each wiki group whose members may read what it may, with their chat groups ({HR: {slack: S…, entra: …}},
    # or {confluence-users: everyone}); a group not here lets none of its members in (only the others named)
    groups: dict[str, ChatGroups] = Field(default_factory=dict)

    _envs = field_validator("user_env", "token_env")(lambda cls, v: _env_name(v))

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: dict[str, ChatGroups]) -> dict[str, ChatGroups]:
        """Keyed by the group's name in lower case, as Confluence compares group names."""
        named: dict[str, ChatGroups] = {}
        for name, chat in value.items():
            key = name.strip().lower()
            if not key or key in named:
                raise ValueError(f"{name!r}: each wiki group once, by its name (compared ignoring case)")
            named[key] = chat
        return named

    @field_validator("spaces")
    @classmethod
    def _spaces(cls, value: list[str] | dict[str, str]) -> list[str] | dict[str, str]:
        for collection in value.values() if isinstance(value, dict) else ():
            _Source._collection(collection)
        return value

    @property
    def space_keys(self) -> list[str]:
        return list(self.spaces)

    def space_collection(self, space: str) -> str:
        """The collection a space's pages belong to: its own when `spaces` maps it, else the source's."""
        return self.spaces.get(space, self.collection) if isinstance(self.spaces, dict) else self.collection

    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in (self.user_env, self.token_env) if v)


SourceSpec = Annotated[FolderSource | GitSource | WebSource | ConfluenceSource, Field(discriminator="type")]


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sources: list[SourceSpec]


def load_sources(path: Path | None) -> list[FolderSource | GitSource | WebSource | ConfluenceSource]:
    """The sources declared in `path` (None: no file, no sources). Raises SourcesFileError."""
    if path is None:
        return []
    data = read_yaml(path, "AIE_SOURCES_FILE", SourcesFileError)
    return parse_sources(data, str(path))


def parse_sources(data: Any, where: str = "sources file") -> list[FolderSource | GitSource | WebSource | ConfluenceSource]:
    if not isinstance(data, dict) or "sources" not in data:
        raise SourcesFileError(f"{where}: sources: expected a list of sources under the key `sources`")
    try:
        parsed = _File.model_validate(data).sources
    except ValidationError as exc:
        raise SourcesFileError(f"{where}: {_first_error(exc, data)}") from None
    seen: set[str] = set()
    for i, source in enumerate(parsed):
        if source.name in seen:
            raise SourcesFileError(f"{where}: sources[{i}].name: {source.name!r} is declared twice")
        seen.add(source.name)
    return parsed


def _first_error(exc: ValidationError, data: dict) -> str:
    error = exc.errors()[0]
    loc = [p for p in error["loc"] if p not in ("folder", "git", "web", "confluence")]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "union_tag_invalid":
        message = "type must be one of folder, git, web, confluence"
    elif error["type"] == "union_tag_not_found":
        message = "each source needs a type: folder, git, web or confluence"
    elif error["type"] == "extra_forbidden":
        message = "unknown key (a typo?)"
    elif error["type"] == "missing":
        message = "required"
    return f"{key}: {message}"
