"""The scopes file (`AIE_SCOPES_FILE`, YAML): which collections each place may answer from.

    default: [public]            # channels the file does not name
    dm: [public]                 # direct messages / personal chats
    slack: {C0HR: [hr, public], C0ENG: [eng, public]}
    teams: {"19:abc@thread.tacv2": [eng, public]}

A key left out means every collection, as does having no file at all. The file is read once, at startup;
a mistake stops the bot with one line naming the file, the key and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.yaml_files import read_yaml

PLATFORMS = ("slack", "teams")
_KEYS = ("default", "dm", *PLATFORMS)
_SLACK_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,}")

Collections = frozenset[str] | None  # None: every collection


class ScopesFileError(ValueError):
    """A scopes file that cannot be used; the message is one line: file, key, what is wrong."""


@dataclass(frozen=True)
class ScopesFile:
    default: Collections = None
    dm: Collections = None
    places: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)  # platform -> place -> names
    path: Path | None = None  # None: no file (every collection everywhere)

    def mapped(self, platform: str, place: str) -> frozenset[str] | None:
        """The collections the file gives this place by name (None: it does not name it)."""
        return self.places.get(platform, {}).get(place)


def collection_names(value: Any) -> frozenset[str] | str:
    """The names of a YAML list of collections, or what is wrong with it."""
    if isinstance(value, str) or not isinstance(value, list):
        return f"expected a list of collection names such as [hr, public], got {_kind(value)}"
    names = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            return f"a collection name must be a non-empty text, got {_kind(item)}"
        if "," in item:
            return f"one name per list item, not {item!r}"
        names.append(item.strip())
    return frozenset(names)


def load_scopes(path: Path | None) -> ScopesFile:
    """The scopes file at `path` (None: no file). Raises ScopesFileError."""
    if path is None:
        return ScopesFile()
    data = read_yaml(path, "AIE_SCOPES_FILE", ScopesFileError)
    return _parse(path, {} if data is None else data)


def _parse(path: Path, data: Any) -> ScopesFile:
    def wrong(key: str, problem: str) -> ScopesFileError:
        return ScopesFileError(f"{path}: {key}: {problem}")

    if not isinstance(data, dict):
        raise ScopesFileError(f"{path}: expected keys {', '.join(_KEYS)}, got {_kind(data)}")
    for key in data:
        if key not in _KEYS:
            raise wrong(str(key), f"unknown key (expected {', '.join(_KEYS)})")
    general: dict[str, Collections] = {}
    for key in ("default", "dm"):
        names = collection_names(data[key]) if key in data else None
        if isinstance(names, str):
            raise wrong(key, names)
        general[key] = names
    places = {platform: _places(platform, data.get(platform), wrong) for platform in PLATFORMS}
    return ScopesFile(general["default"], general["dm"], places, path)


def _places(platform: str, value: Any, wrong) -> dict[str, frozenset[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise wrong(platform, f"expected a mapping of {platform} conversation ids to collections, got {_kind(value)}")
    places: dict[str, frozenset[str]] = {}
    for place, collections in value.items():
        key = f"{platform}.{place}"
        if not isinstance(place, str) or not place.strip():
            raise wrong(key, "a conversation id must be a text")
        if platform == "slack" and not _SLACK_CHANNEL.fullmatch(place):
            raise wrong(key, "not a Slack channel id (like C0123ABCD; a #name does not work)")
        names = collection_names(collections)
        if isinstance(names, str):
            raise wrong(key, names)
        places[place.strip()] = names
    return places


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"the text {value!r}"
    return {dict: "a mapping", list: "a list", bool: "a yes/no value", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
