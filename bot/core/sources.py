"""The declared sources (AIE_SOURCES_FILE) as chat sees them: which ones a command asks to sync, the sync's
report in a platform's markup, the sources table, and the failures still to tell an admin. Platform-neutral:
each surface parses its own command into words and renders the texts and rows it gets here."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.core.reindex import REPORT_CHARS, TextStyle, Visible, code_span, report_text
from rag.index.builder import IndexReport, MassDeleteRefused
from rag.sources.state import StateStore
from rag.sources.sync import SourceOutcome, Spec, SyncReport, due_sources
from rag.sources.table import SourceRow, source_rows

ALLOW_MASS_DELETE = "allow-mass-delete"  # the word after the chat command that lets a sync remove most of a source
_REQUESTER = re.compile(r"(?P<user>\S+) \((?P<platform>slack|teams)\)")


@dataclass(frozen=True)
class SyncRequest:
    """What an admin asked to sync: `names` (none: every source), and whether a mass delete may publish."""

    names: tuple[str, ...] = ()
    allow_mass_delete: bool = False


def parse_request(words: str) -> SyncRequest:
    """`handbook runbooks allow-mass-delete` → the request (the word may come anywhere)."""
    parts = words.split()
    names = tuple(dict.fromkeys(p for p in parts if p.lower() != ALLOW_MASS_DELETE))
    return SyncRequest(names, allow_mass_delete=len(names) < len(parts))


def requester(user: str, platform: str) -> str:
    """Who started a sync as the sources' state keeps it (and the index lock shows it)."""
    return f"{user} ({platform})"


def requested_by(by: str) -> tuple[str, str] | None:
    """(platform, user id) of a chat admin in `requester`'s form; None for anyone else (the command line)."""
    found = _REQUESTER.fullmatch(by or "")
    return (found["platform"], found["user"]) if found else None


# ------------------------------------------------------------------------------------------ texts


def starting_text(request: SyncRequest, style: TextStyle) -> str:
    """What the admin is told as their sync starts."""
    which = ", ".join(style.name(n) for n in request.names) if request.names else "every source"
    return f"Syncing {which}… I'll post progress here."


def held_back_text(refused: MassDeleteRefused, style: TextStyle) -> str:
    allow = style.escape(code_span(f"{style.command} {refused.source} {ALLOW_MASS_DELETE}"))
    return (f"the sync of {style.name(refused.source)} would remove {refused.removing} of its {refused.total} "
            f"documents, so none of its changes were published. If that is intended, send {allow}.")


def _outcome_line(outcome: SourceOutcome, index: IndexReport | None, style: TextStyle,
                  visible: Visible | None = None) -> str:
    name = style.name(outcome.name)
    if outcome.held_back is not None:
        return f"• {name}: {style.bold}held back{style.bold} — {held_back_text(outcome.held_back, style)}"
    if outcome.busy:
        return f"• {name}: {style.escape(outcome.error)}"
    if not outcome.ok:
        fix = f" (check {code_span(outcome.variable)})" if outcome.variable and outcome.variable not in outcome.error else ""
        kept = "its last good documents are kept"
        if outcome.restricted:  # (counted, not named: the report may go where they may not be read)
            n = len(outcome.restricted)
            kept = (f"it is published with its last good readers, but {n} document{'s' if n > 1 else ''} "
                    "restricted at the source since then reach no one until the readers can be looked up")
        return f"• {name}: {style.bold}failed{style.bold} — {style.escape(outcome.error)}{fix}; {kept}"
    prefix = outcome.name + "/"
    taken, removed = _counted(outcome.name, index)
    kept = outcome.fetched.kept
    line = f"• {name}: fetched {taken} · removed {removed} · kept {len(kept)}"
    # Why a document was kept may name it (a wiki attachment's title): said only where it may be read
    reasons = sorted({why for name, why in kept.items() if visible is None or visible(f"{prefix}{name}")})
    if reasons:
        line += " (" + style.escape("; ".join(reasons[:3])) + (" …" if len(reasons) > 3 else "") + ")"
    if not outcome.fetched.complete:
        line += " · the listing was cut short: nothing it did not see was removed"
    if outcome.fetched.notes:  # (they name no document)
        line += " · " + style.escape("; ".join(outcome.fetched.notes))
    return line


def _counted(source: str, index: IndexReport | None) -> tuple[int, int]:
    """A source's documents the index took in (added or changed) and removed, counted in the index whatever the
    connector could tell (a folder is read where it lies)."""
    prefix = source + "/"
    taken = sum(n.startswith(prefix) for n in (index.added + index.changed)) if index else 0
    removed = sum(n.startswith(prefix) for n in index.removed) if index else 0
    return taken, removed


def sync_log(report: SyncReport) -> list[tuple[int, str]]:
    """(level, line) of each source synced, for the log: what it took in, removed and kept, and how long the
    fetch and the index build took; a held-back deletion or a failure with why."""
    lines = []
    built = report.index.seconds if report.index is not None else 0.0
    for outcome in report.sources.values():
        if outcome.held_back is not None:
            lines.append((logging.WARNING, f"sync of {outcome.name} held back: {outcome.held_back}"))
        elif not outcome.ok:
            lines.append((logging.WARNING, f"sync of {outcome.name} failed after {outcome.seconds:.1f} s: "
                                           f"{outcome.error}"))
        else:
            taken, removed = _counted(outcome.name, report.index)
            lines.append((logging.INFO, f"sync of {outcome.name}: fetched {taken}, removed {removed}, kept "
                                        f"{len(outcome.fetched.kept)} in {outcome.seconds + built:.1f} s"))
    return lines


def sync_text(report: SyncReport, style: TextStyle, visible: Visible | None = None,
              max_chars: int = REPORT_CHARS) -> str:
    """Per source what the sync did, then the index's report (naming only the files `visible` allows)."""
    if report.ok:
        head = f"{style.done} Sync finished:"
    elif report.index is None:
        head = f"{style.failed} Sync failed — the previous index is still serving:"
    else:
        head = f"{style.failed} Sync finished with problems:"
    lines = [_outcome_line(o, report.index, style, visible) for o in report.sources.values()]
    text = "\n".join([head, *lines])
    if len(text) > max_chars // 2:
        text = text[: max_chars // 2 - 1] + "…"
    if report.index is None:
        return text
    return text + "\n" + report_text(report.index, style, visible=visible, max_chars=max_chars - len(text) - 1)


def failure_notice(row: SourceRow, style: TextStyle) -> str:
    """The one message an admin gets when a scheduled sync of a source they synced fails."""
    fix = (f" The variable to fix: {code_span(row.error_variable)}."
           if row.error_variable and row.error_variable not in row.last_error else "")
    again = style.escape(code_span(f"{style.command} {row.name}"))
    return (f"{style.failed} The scheduled sync of source {style.name(row.name)} failed: "
            f"{style.escape(row.last_error)}.{fix} Its last good documents keep serving; once it is fixed, {again} "
            "syncs it now (it is also retried on its own, less and less often).")


# ------------------------------------------------------------------------------------------ the desk


@dataclass(frozen=True)
class Teller:
    """How a platform reaches one of its admins privately: `send(user, text)` is False when it could not."""

    style: TextStyle
    send: Callable[[str, str], Awaitable[bool]]


class SourceDesk:
    """The declared sources for chat: their names, table and untold failures (every call reads the sources'
    state files: run them off the event loop)."""

    def __init__(self, specs: list[Spec], states: StateStore) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self.states = states

    def unknown(self, request: SyncRequest) -> str | None:
        """The reply to a request naming a source that is not declared (None: every name is known)."""
        missing = [n for n in request.names if n not in self.specs]
        if not missing:
            return None
        listed = ", ".join(code_span(n) for n in self.specs) or "none"
        return f"There is no source named {', '.join(code_span(n) for n in missing)}. The sources are: {listed}."

    def rows(self) -> list[SourceRow]:
        return source_rows(self.specs.values(), self.states)

    def due(self) -> list[str]:
        """The sources the schedule should sync now."""
        return due_sources(list(self.specs.values()), self.states, time.time())

    def watched(self) -> dict[Path, str]:
        """Each watched folder and its source's name."""
        return {Path(spec.path): name for name, spec in self.specs.items() if getattr(spec, "watch", False)}

    def never_synced(self, names: list[str]) -> list[str]:
        return [n for n in names if self.states.load(n).status.last_attempt is None]

    def untold(self) -> list[tuple[str, str, SourceRow]]:
        """(platform, admin's user id, row) of each failure not told yet to the chat admin who last synced it."""
        found = []
        for row in self.rows():
            status = self.states.load(row.name).status
            who = requested_by(status.by)
            if status.last_error and not status.told and who is not None:
                found.append((*who, row))
        return found

    def told(self, names: list[str]) -> None:
        """The admins know of these sources' last errors (told in a report or a message)."""
        for name in names:
            state = self.states.load(name)
            if state.status.last_error and not state.status.told:
                state.status.told = True
                self.states.save(name, state)
