"""The platform's per-user folders for this application, the same whatever the working directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_DIR_NAME = "ai-employee"


def data_dir() -> Path:
    """`$XDG_DATA_HOME/ai-employee` (default `~/.local/share/ai-employee`), `~/Library/Application Support/ai-employee`
    on macOS, `%LOCALAPPDATA%\\ai-employee` on Windows."""
    return _folder("XDG_DATA_HOME", Path(".local", "share"), "Application Support")


def cache_dir() -> Path:
    """What any data dir's commands can share and make again: `$XDG_CACHE_HOME/ai-employee` (default
    `~/.cache/ai-employee`), `~/Library/Caches/ai-employee` on macOS, `%LOCALAPPDATA%\\ai-employee\\cache` on
    Windows."""
    folder = _folder("XDG_CACHE_HOME", Path(".cache"), "Caches")
    return folder / "cache" if sys.platform == "win32" else folder


def _folder(xdg_variable: str, xdg_default: Path, macos: str) -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / macos)
    else:
        xdg = os.environ.get(xdg_variable, "").strip()
        base = xdg if os.path.isabs(xdg) else str(Path.home() / xdg_default)  # XDG: relative is invalid
    return Path(base) / APP_DIR_NAME
