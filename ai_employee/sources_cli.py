"""`ai-employee sources …`: the declared sources (AIE_SOURCES_FILE), how their syncs went, and syncing or
checking them now."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ai_employee.output import Commands, fail, knowledge_base, print_json, require_index, stdout
from ai_employee.progress import index_progress, stderr

if TYPE_CHECKING:
    from rag.knowledge_base import KnowledgeBase
    from rag.sources.base import CheckReport
    from rag.sources.sync import SyncReport

sources_app = typer.Typer(cls=Commands, no_args_is_help=True, help="The knowledge sources: list, sync and check them.")
NAMES = typer.Argument(help="Source names (default: every declared source).")
_TITLES = 10  # titles (or users) `sources check` shows per finding (--json lists them all)


def _kb() -> KnowledgeBase:
    from rag.sources.config import SourcesFileError

    kb = knowledge_base()
    if kb.settings.sources_file is None:
        fail("no sources are declared: set AIE_SOURCES_FILE to a sources file (see the README, \"Sources\")")
    try:
        kb.sources
    except SourcesFileError as exc:
        fail(str(exc), code=2)
    return kb


def source_rows(kb: KnowledgeBase) -> list[dict]:
    """Each declared source with how its syncs went: what `sources list --json` prints."""
    from rag.sources.state import StateStore
    from rag.sources.table import source_rows as rows

    return [row.to_dict() for row in rows(kb.sources, StateStore(kb.sources_dir))]


@sources_app.command("list")
def sources_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every declared source: type, collection, documents, last sync, last error and next run."""
    rows = source_rows(_kb())
    if as_json:
        print_json(rows)
        return
    table = Table(show_lines=False)
    for column in ("source", "type", "collection", "documents", "last sync", "next run", "last error"):
        table.add_column(column, overflow="fold")
    for row in rows:
        upcoming = "watching" if row["watch"] else row["next_run"]
        table.add_row(row["name"], row["type"], row["collection"], str(row["documents"]), row["last_sync"] or "never",
                      upcoming, escape(row["last_error"]))
    stdout.print(table)


def _outcome_dict(report: SyncReport) -> dict:
    sources = {}
    for name, outcome in report.sources.items():
        fetched = outcome.fetched
        sources[name] = {"ok": outcome.ok, "error": outcome.error, "error_variable": outcome.variable,
                         "seconds": round(outcome.seconds, 3),
                         **({"fetched": len(fetched.changed), "removed": fetched.removed, "kept": fetched.kept,
                             "complete": fetched.complete, "calls": fetched.calls, "notes": fetched.notes}
                            if fetched else {})}
    return {"ok": report.ok, "sources": sources, "index": report.index.to_dict() if report.index else None}


@sources_app.command("sync")
def sources_sync(
    names: Annotated[Optional[list[str]], NAMES] = None,
    allow_mass_delete: Annotated[bool, typer.Option(
        "--allow-mass-delete", help="Publish even when a source would lose more than half of its documents.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Fetch the sources and publish what changed (the old index serves until the new one is ready).
    A source that fails keeps its last good documents; exits 1 when any source failed."""
    from rag.index.builder import MassDeleteRefused
    from rag.sources.sync import UnknownSource

    kb = _kb()
    try:
        with index_progress(sys.stderr.isatty() or not as_json) as view:
            report = kb.sync(names, allow_mass_delete=allow_mass_delete, by="the command line", progress=view)
    except UnknownSource as exc:
        fail(str(exc), code=2)
    except MassDeleteRefused as exc:
        fail(str(exc))
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    if as_json:
        print_json(_outcome_dict(report))
    else:
        _print_sync(report)
    if not report.ok:
        raise typer.Exit(1)


def _print_sync(report: SyncReport) -> None:
    from ai_employee.cli import _print_report

    for name, outcome in report.sources.items():
        if not outcome.ok:
            stdout.print(f"[bold red]✗ {escape(name)}[/]: {escape(outcome.error)}")
            continue
        f = outcome.fetched
        kept = f" · kept {len(f.kept)} (failed to fetch)" if f.kept else ""
        short = "" if f.complete else " · listing cut short: nothing unseen was removed"
        stdout.print(f"[green]✓ {escape(name)}[/]: fetched {len(f.changed)} · removed {len(f.removed)}{kept}{short} "
                     f"· {f.calls} requests · {outcome.seconds:.1f} s")
        for note in f.notes:
            stdout.print(f"  [yellow]![/] {escape(note)}")
    if report.index is not None:
        _print_report(report.index)


@sources_app.command("adopt")
def sources_adopt() -> None:
    """Declare the folders indexed with `ai-employee index PATH` in AIE_SOURCES_FILE (created when missing) as
    folder sources that read them where they lie, each document in the collection it is in: the next
    `sources sync` renames their documents and deletes nothing."""
    from rag.sources.adopt import adopted_sources, entry_line, replace_text, with_sources
    from rag.sources.config import SourcesFileError

    kb = knowledge_base()
    file = kb.settings.sources_file
    if file is None:
        fail("set AIE_SOURCES_FILE to the sources file to write the folders into (it is created when missing)")
    require_index(kb)
    try:
        text = file.read_text(encoding="utf-8") if file.exists() else ""
        declared = [s.name for s in kb.sources] if text.strip() else []
        entries = adopted_sources(kb.store.current_manifest(), declared)
    except (OSError, SourcesFileError, ValueError) as exc:
        fail(str(exc), code=2)
    if not entries:
        stdout.print("Nothing to adopt: the index holds no document indexed with `ai-employee index PATH`.")
        return
    lines = "\n".join(f"  - {entry_line(entry)}" for entry in entries)
    try:
        replace_text(file, with_sources(text, entries, str(file)))
    except SourcesFileError:
        fail(f"{file}: its `sources` list cannot be extended at its end; add these lines to it yourself:\n{lines}")
    stdout.print(f"Added to {escape(str(file))}:\n{escape(lines)}\n`ai-employee sources sync` now renames their "
                 "documents <source>/<path> in the same collections; nothing is removed or embedded again.",
                 highlight=False)


@sources_app.command("check")
def sources_check(
    names: Annotated[Optional[list[str]], NAMES] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Reach and authenticate each source and count its documents; changes nothing. Exits 1 on a failure."""
    from rag.sources.state import StateStore
    from rag.sources.sync import UnknownSource, check_sources

    kb = _kb()
    try:
        results = check_sources(kb.sources, StateStore(kb.sources_dir), names, connector=kb.connector)
    except UnknownSource as exc:
        fail(str(exc), code=2)
    if as_json:
        print_json({name: {"ok": r.ok, "documents": r.documents, "detail": r.detail,
                           "unmapped_groups": {g: list(titles) for g, titles in r.unmapped_groups.items()},
                           "unreadable_spaces": r.unreadable_spaces,
                           "unmatched_users": {s: list(users) for s, users in r.unmatched_users.items()}}
                    for name, r in results.items()})
    else:
        for name, result in results.items():
            mark = "[green]✓" if result.ok else "[bold red]✗"
            count = "" if result.documents is None else f" ({result.documents} document{'' if result.documents == 1 else 's'})"
            stdout.print(f"{mark} {escape(name)}[/]{count}: {escape(result.detail)}")
            _print_hidden(result)
    if not all(r.ok for r in results.values()):
        raise typer.Exit(1)


def _print_hidden(result: CheckReport) -> None:
    """Each wiki space whose view permissions could not be read, each space's viewers who cannot be matched to
    chat users, and each wiki group mapped to no chat group with the pages it keeps from its members (titles:
    for the operator)."""
    for space, why in result.unreadable_spaces.items():
        stdout.print(f"  [yellow]![/] space {escape(space)}: {escape(why)}, so no one is let in to its pages")
    for space, users in result.unmatched_users.items():
        stdout.print(f"  [yellow]![/] space {escape(space)} lets {escape(_some(users))} view it, but "
                     "Confluence shows no email to match them to chat users by: none of its pages reaches "
                     "them")
    for group, titles in result.unmapped_groups.items():
        stdout.print(f"  [yellow]![/] the wiki group {escape(group)} is mapped to no chat group (add it "
                     f"under groups: in the sources file); none of its members reads {escape(_some(titles))}")


def _some(names: tuple[str, ...]) -> str:
    """The first few names, and how many more."""
    more = f" and {len(names) - _TITLES} more" if len(names) > _TITLES else ""
    return ", ".join(names[:_TITLES]) + more
