"""`ai-employee feedback …`: the votes, what they do to retrieval, undo/confirm, and the votes as an eval set."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ai_employee.output import Commands, fail, knowledge_base, print_json, stdout

feedback_app = typer.Typer(cls=Commands, no_args_is_help=True, help="Votes users gave answers and citations, and what they do.")
DAY = 86400.0


def _kb():
    """The knowledge base, when a feedback database exists; an error (creating nothing) otherwise."""
    kb = knowledge_base()
    path = kb.settings.feedback_path
    if not path.exists():
        fail(f"no feedback recorded yet: {path} does not exist (votes are stored when people use the chat bot)")
    return kb


def _live(kb):
    """Whether a chunk id is in the live index (None when there is no index to ask)."""
    if kb.store.current_version() is None:
        return None
    ids = kb.store.load_current().by_id
    return ids.__contains__


@feedback_app.command("export")
def feedback_export(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of all votes.")] = False,
    eval_dir: Annotated[Optional[Path], typer.Option(
        "--eval", help="Write DIR/questions.jsonl (datasets layout: gold and known negatives from the votes) "
                       "and link the indexed documents as DIR/docs, for `ai-employee eval DIR`.")] = None,
) -> None:
    """Every vote with its question, answer, cited passages, index version, user, channel, reason and time."""
    kb = _kb()
    if eval_dir is not None:
        from rag.feedback import write_evaluation_set

        manifest = kb.store.current_manifest()
        written = write_evaluation_set(kb.feedback, eval_dir, [Path(r) for r in manifest.roots] if manifest else None)
        if as_json:
            print_json(written)
        else:
            stdout.print(f"{written['questions']} question(s) ({written['with_gold']} with gold passages, "
                         f"{written['with_negatives']} with known wrong ones) → {written['path']}")
            if not written["docs_linked_to"] and not (eval_dir / "docs").exists():
                stdout.print(f"Put the documents in {eval_dir / 'docs'}, then run `ai-employee eval {eval_dir}`.")
            else:
                stdout.print(f"Run `ai-employee eval {eval_dir}` to measure retrieval against these questions.")
        return
    rows = kb.feedback.export()
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} vote(s)", title_justify="left")
    for column in ("when", "user", "where", "vote", "on", "reason", "question"):
        table.add_column(column, overflow="fold")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated"]))
        reason = " — ".join(p for p in (row["reason"], row["comment"]) if p)
        table.add_row(when, row["user"] + (" (admin)" if row["admin"] else ""), f"{row['platform']} {row['channel']}",
                      "👍" if row["value"] > 0 else "👎", row["target"], reason, row["question"])
    stdout.print(table)


@feedback_app.command("summary")
def feedback_summary(
    limit: Annotated[int, typer.Option(min=1)] = 10,
    days: Annotated[float, typer.Option(help="Only votes of the last DAYS days (0: all).")] = 30,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The most down-voted answers (with reasons), the most flagged passages and their documents."""
    from rag.feedback import summary

    kb = _kb()
    since = time.time() - days * DAY if days > 0 else None
    result = summary(kb.feedback, kb.adjuster, limit, since, _live(kb))
    if as_json:
        print_json(result)
        return
    stdout.print("[bold]Most down-voted answers[/]")
    for row in result["answers"] or [{"down_votes": 0, "question": "(none)", "reasons": {}}]:
        reasons = ", ".join(f"{r} ×{n}" for r, n in row["reasons"].items())
        stdout.print(f"  {row['down_votes']:>4} 👎  {row['question']}  [dim]{reasons}[/]", highlight=False)
    stdout.print("[bold]Most flagged passages[/]")
    for row in result["passages"] or [{"flaggers": [], "location": "(none)", "file": "", "status": ""}]:
        stdout.print(f"  {len(row['flaggers']):>4} ⚑  {row['location']}  [dim]{row['file']} · {row['status']}[/]",
                     highlight=False)


@feedback_app.command("adjustments")
def feedback_adjustments(
    all_: Annotated[bool, typer.Option("--all", help="Also passages whose votes do nothing (yet, or any more).")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Passages the votes demote for similar questions (and, with --all, the ones that do not qualify)."""
    kb = _kb()
    found = [a for a in kb.adjuster.adjustments(_live(kb)) if all_ or a.status == "demoted"]
    if as_json:
        print_json([a.to_dict() for a in found])
        return
    if not found:
        stdout.print("No passage is demoted." if not all_ else "No votes on passages.")
        return
    table = Table(title_justify="left")
    for column in ("status", "passage", "flagged by", "helped", "strength", "chunk id"):
        table.add_column(column, overflow="fold")
    for a in found:
        flaggers = ", ".join(a.flaggers) + (" (admin)" if a.admin else "")
        table.add_row(a.status, a.cited.location, flaggers, ", ".join(a.helpers), f"{a.strength:.2f}", a.chunk_id)
    stdout.print(table)


@feedback_app.command("undo")
def feedback_undo(chunk_id: Annotated[str, typer.Argument(help="The passage's chunk id (see `adjustments`).")]) -> None:
    """Void the votes on a passage so far: it is no longer demoted (new votes count again)."""
    _record_verdict(chunk_id, "undo")


@feedback_app.command("confirm")
def feedback_confirm(chunk_id: Annotated[str, typer.Argument(help="The passage's chunk id (see `adjustments`).")]) -> None:
    """Confirm the flags on a passage as an admin: it is demoted for the questions it was flagged on."""
    _record_verdict(chunk_id, "confirm")


def _record_verdict(chunk_id: str, action: str) -> None:
    import getpass

    kb = _kb()
    known = {a.chunk_id: a for a in kb.adjuster.adjustments()}
    if chunk_id not in known:
        fail(f"no votes on a passage with id {chunk_id}; `ai-employee feedback adjustments --all` lists them")
    kb.feedback.record_verdict(chunk_id, action, f"cli:{getpass.getuser()}")
    after = {a.chunk_id: a for a in kb.adjuster.adjustments()}.get(chunk_id)
    status = after.status if after else "no votes count any more"
    stdout.print(f"{'Undone' if action == 'undo' else 'Confirmed'}: {known[chunk_id].cited.location} → {status}",
                 highlight=False)
