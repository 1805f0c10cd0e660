"""Declared sources for the bot tests: folders of short pages written in the test, a sources file naming
them, and waiting for the bot's own syncs (scheduled, watched or asked for) to publish and be served."""

from __future__ import annotations

import time
from pathlib import Path

from rag.sources.state import StateStore
from tests.bot.harness import RunningBot, wait_for

HOTELS = "# Travel\n\n## Hotels\n\nHotels are reimbursed up to 150 EUR per night, or 220 EUR in London.\n"
HOTELS_EDITED = HOTELS.replace("220 EUR", "260 EUR")
MEALS = "# Meals\n\nThe daily meal allowance on business trips is 45 EUR for a full travel day.\n"
VISA = "# Visas\n\nVisa fees for business travel are paid by the company through the travel desk.\n"
PARKING = "# Parking\n\nParking spaces at the office are assigned by lottery every quarter.\n"
RESTART = "# Runbook\n\n## Restart\n\nRestart the billing service with systemctl restart billing, then watch the logs.\n"
HANDBOOK_URL = "https://git.example.com/handbook/blob/main/{path}"


def write(folder: Path, files: dict[str, str | None]) -> Path:
    """Write (None: delete) each file of `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        if text is None:
            (folder / name).unlink()
        else:
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def sources_file(tmp_path: Path, *lines: str) -> Path:
    """A sources file with these sources (YAML flow mappings, one a line)."""
    file = tmp_path / "sources.yaml"
    file.write_text("sources:\n" + "".join(f"  - {line}\n" for line in lines), encoding="utf-8")
    return file


def status(bot: RunningBot, name: str):
    return StateStore(bot.kb.sources_dir).load(name).status


def files(bot: RunningBot) -> set[str]:
    manifest = bot.kb.store.current_manifest()
    return set(manifest.files) if manifest is not None else set()


def served(bot: RunningBot, *present: str, absent: tuple[str, ...] = (), timeout: float = 120.0) -> float:
    """Wait until the live index holds `present` and not `absent`, and this bot answers from it; the seconds
    that took."""
    began = time.monotonic()

    def done() -> bool:
        names = files(bot)
        loaded = bot.kb.retriever.loaded
        return (set(present) <= names and not names & set(absent) and loaded is not None
                and loaded.version == bot.kb.store.current_version() and not bot.services.reindexer.running)

    wait_for(done, timeout=timeout, interval=0.2)
    return time.monotonic() - began


def idle(bot: RunningBot) -> None:
    """Wait for no sync to run (e.g. before an admin's command, so that it is not refused as busy)."""
    wait_for(lambda: not bot.services.reindexer.running, timeout=120, interval=0.05)
