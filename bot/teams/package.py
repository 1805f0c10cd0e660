"""The Teams app package: `manifest.json` (schema 1.29: the bot in personal chats, teams and group chats,
its commands — `reindex` and `scope` among them — and valid domains) and its two icons, zipped for upload to Teams.

The icons are drawn here (a white speech bubble; on the accent colour for the colour icon), so the
package needs no image files or imaging library."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.teams.command_names import COMMAND, REVIEW_COMMAND, SCOPE_COMMAND

SCHEMA_URL = "https://developer.microsoft.com/en-us/json-schemas/teams/v1.29/MicrosoftTeams.schema.json"
MANIFEST_VERSION = "1.29"
ACCENT = (0x2E, 0x5C, 0x8A)
SCOPES = ["personal", "team", "groupChat"]
MAX_COMMANDS = 10  # what Teams lists (the 1.29 schema allows 12)
COMMANDS = [
    {"title": COMMAND,
     "description": "Admins: rebuild the knowledge base from its documents (progress and a report follow)."},
    {"title": SCOPE_COMMAND,
     "description": "Show which document collections this conversation answers from; admins change them with "
                    "`scope hr,public` or `scope reset`."},
    {"title": REVIEW_COMMAND,
     "description": "Admins, in the personal chat: the flagged passages and down-voted answers, to confirm or undo."},
]
ASK = "Ask anything about the company's documents, in your own words."


@dataclass(frozen=True)
class AppInfo:
    app_id: str  # the bot's Microsoft App ID (its Azure Bot registration), also used as the Teams app id
    host: str  # public host of the messaging endpoint, e.g. bot.example.com
    name: str = "AI Employee"
    version: str = "1.0.0"
    developer: str = "AI Employee"
    website: str | None = None  # defaults to https://<host>/
    privacy: str | None = None
    terms: str | None = None
    # Suggested questions (bot.core.examples) about documents everyone in the organisation may read:
    # the package is listed to all of it.
    prompts: tuple[str, ...] = ()


def manifest(info: AppInfo) -> dict:
    home = info.website or f"https://{info.host}/"
    return {
        "$schema": SCHEMA_URL,
        "manifestVersion": MANIFEST_VERSION,
        "version": info.version,
        "id": info.app_id,
        "developer": {"name": info.developer[:32], "websiteUrl": home, "privacyUrl": info.privacy or home,
                      "termsOfUseUrl": info.terms or home},
        "name": {"short": info.name[:30], "full": f"{info.name} — answers from your company's documents"[:100]},
        "description": {
            "short": "Answers from your company's documents, with sources."[:80],
            "full": ("Ask in your own words, in a chat with the assistant, in a group chat or in a channel "
                     "(mention it there). Every statement of an answer cites the passage it comes from — "
                     "document, section, page and version — or the assistant says the documents do not hold "
                     "the answer. Rate answers with the thumbs; admins rebuild the knowledge base with `reindex`."),
        },
        "icons": {"color": "color.png", "outline": "outline.png"},
        "accentColor": "#%02X%02X%02X" % ACCENT,
        "bots": [{"botId": info.app_id, "scopes": SCOPES, "isNotificationOnly": False, "supportsFiles": False,
                  "commandLists": [{"scopes": SCOPES, "commands": commands(info.prompts)}]}],
        "permissions": ["identity", "messageTeamMembers"],
        "validDomains": [info.host],
    }


def commands(prompts: tuple[str, ...]) -> list[dict[str, str]]:
    """The admin commands, then each suggested question (or, with none, an invitation to ask)."""
    asked = [{"title": p[:128], "description": ASK} for p in prompts[: MAX_COMMANDS - len(COMMANDS)]]
    return COMMANDS + (asked or [{"title": "Ask a question", "description": ASK}])


def write_package(info: AppInfo, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest(info), indent=2, ensure_ascii=False))
        package.writestr("color.png", color_icon())
        package.writestr("outline.png", outline_icon())
    return out


# ---- icons

Pixel = tuple[int, int, int, int]


def png(size: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """An RGBA PNG of `size`×`size` pixels."""
    rows = b"".join(b"\x00" + bytes(c for x in range(size) for c in pixel(x, y)) for y in range(size))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def _in_bubble(x: float, y: float) -> bool:
    """A speech bubble in the unit square: a rounded box with a tail at the bottom left."""
    if 0.18 <= x <= 0.82 and 0.22 <= y <= 0.66:
        corner = 0.08
        dx = max(0.18 + corner - x, x - (0.82 - corner), 0)
        dy = max(0.22 + corner - y, y - (0.66 - corner), 0)
        return dx * dx + dy * dy <= corner * corner
    return 0.66 <= y <= 0.82 and 0.30 <= x <= 0.30 + (0.82 - y) * 0.8


def color_icon(size: int = 192) -> bytes:
    white, accent = (255, 255, 255, 255), (*ACCENT, 255)

    def pixel(x: int, y: int) -> Pixel:
        u, v = (x + 0.5) / size, (y + 0.5) / size
        line = any(abs(v - row) < 0.025 for row in (0.36, 0.44, 0.52)) and 0.28 <= u <= 0.72
        return accent if line or not _in_bubble(u, v) else white

    return png(size, pixel)


def outline_icon(size: int = 32) -> bytes:
    """White on transparent, as Teams wants the outline icon."""

    def pixel(x: int, y: int) -> Pixel:
        u, v = (x + 0.5) / size, (y + 0.5) / size
        edge = _in_bubble(u, v) and not all(_in_bubble(u + du, v + dv) for du, dv in
                                              ((0.07, 0), (-0.07, 0), (0, 0.07), (0, -0.07)))
        return (255, 255, 255, 255) if edge else (0, 0, 0, 0)

    return png(size, pixel)

