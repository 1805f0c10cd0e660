"""A settings mistake as one line naming the environment variable, the value it has and what it may be."""

from __future__ import annotations

import os
import re
import typing

from pydantic import AliasChoices, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings


def describe(exc: ValidationError) -> str:
    """`exc` (raised while loading settings from the environment) as one line; a secret's value is never shown."""
    model = _settings_class(exc.title)
    return "; ".join(_describe_one(model, error) for error in exc.errors(include_url=False))


def _describe_one(model: type[BaseSettings] | None, error: dict) -> str:
    name = str(error["loc"][0]) if error["loc"] else ""
    field = _field(model, name) if model is not None else None
    variable = _variable(model, name, field) if model is not None else name
    if error["type"] == "missing":
        return f"{variable} is not set"
    hidden = field is None or _is_secret(field)
    rule = re.sub(r"^(Input|Value) should", "it should", error["msg"].removeprefix("Value error, "))
    if hidden:
        rule = re.sub(r", not \S+$", "", rule)  # not even a secret's length
    return f"{variable}={'(hidden)' if hidden else repr(error['input'])} is not allowed: {rule}"


def _settings_class(title: str) -> type[BaseSettings] | None:
    pending = list(BaseSettings.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__name__ == title:
            return cls
        pending.extend(cls.__subclasses__())
    return None


def _field(model: type[BaseSettings], name: str) -> FieldInfo | None:
    """The field an error's location names: pydantic names a field by the alias it was read from, if any."""
    for key, field in model.model_fields.items():
        if name == key or name in _aliases(field):
            return field
    return None


def _aliases(field: FieldInfo) -> list[str]:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    return [alias] if isinstance(alias, str) else []


def _variable(model: type[BaseSettings], name: str, field: FieldInfo | None) -> str:
    aliases = _aliases(field) if field is not None else []
    if name in aliases:
        return name
    if aliases:  # the one that is set, else the first
        present = {key.upper() for key in os.environ}
        return next((a for a in aliases if a.upper() in present), aliases[0])
    return (model.model_config.get("env_prefix", "") + name).upper()


def _is_secret(field: FieldInfo) -> bool:
    pending = [field.annotation]
    while pending:
        annotation = pending.pop()
        if annotation is SecretStr:
            return True
        pending.extend(typing.get_args(annotation))
    return False
