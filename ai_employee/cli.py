"""`ai-employee` command line: index, search, eval, ask, status, serve, teams-package, feedback.

The knowledge base (embedder, FAISS, BM25, model clients, Slack SDK, MinerU) is imported inside the
commands that use it: `ai-employee --help` and argument errors answer at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ai_employee.feedback_cli import feedback_app
from ai_employee.noise import quiet_libraries
from ai_employee.output import Commands, fail, knowledge_base, print_json, require_index, settings, stdout
from ai_employee.progress import counter, index_progress, stderr
from ai_employee.sources_cli import sources_app

if TYPE_CHECKING:
    from rag.knowledge_base import KnowledgeBase
    from rag.evaluation import AnswerOutcome
    from rag.index.builder import IndexReport
    from rag.types import Answer, Scope

MODES = ("hybrid", "dense", "bm25")  # rag.index.retrieval.MODES, checked before anything heavy is loaded
PLATFORMS = ("slack", "teams")
SCOPE_HELP = "Only these collections (first folders under the indexed root), e.g. hr,public; access lists are not checked."

app = typer.Typer(cls=Commands, add_completion=False, no_args_is_help=True, help="A knowledge-base assistant that cites its sources.")


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _setup_logging() -> None:
    level = os.environ.get("AIE_LOG_LEVEL", "WARNING").upper()
    if level not in LOG_LEVELS:
        stderr.print(f"[bold red]error:[/] AIE_LOG_LEVEL={escape(repr(os.environ['AIE_LOG_LEVEL']))} is not allowed: "
                     f"it should be {', '.join(LOG_LEVELS[:-1])} or {LOG_LEVELS[-1]}", soft_wrap=True)
        sys.exit(2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    quiet_libraries()


def _index_in_use(kb: KnowledgeBase) -> str:
    version = kb.store.current_version()
    return f"the index in use is unchanged (snapshot {version})" if version else "there is no index yet"


def _print_report(report: IndexReport) -> None:
    if report.up_to_date:
        stdout.print(f"[green]Index is up to date[/] (snapshot {report.version}, {report.chunks} chunks)")
        if report.roots:
            stdout.print(f"  roots: {', '.join(report.roots)}")
        return
    t = report.timings
    stdout.print(
        f"[bold green]Indexed[/] {report.indexed} of {report.files} files → {report.chunks} chunks in {report.seconds:.1f} s · snapshot {report.version}"
    )
    stdout.print(
        f"  added {len(report.added)} · changed {len(report.changed)} · removed {len(report.removed)} · "
        f"unchanged {report.unchanged}"
        + (f" · renamed {len(report.refiled)}" if report.refiled else "")
        + (f" (version or date updated: {len(report.metadata_updated)})" if report.metadata_updated else "")
        + f" · newly embedded chunks {report.embedded}"
        + (f" and sentences {report.sentences_embedded}" if report.sentences_embedded else "") + " "
        f"({report.embedder}, embedder busy {report.embed_busy:.0%}) · dense index {report.dense_index}"
    )
    if report.roots:
        stdout.print(f"  roots: {', '.join(report.roots)}")
    if report.collections_moved:
        stdout.print("  [yellow]moved to another collection:[/] "
                     + ", ".join(f"{count} {escape(move)}" for move, count in report.collections_moved.items()))
    stdout.print(
        "  time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in t.items() if seconds >= 0.05)
    )
    if report.rebuild_reason:
        stdout.print(f"  [yellow]full rebuild:[/] {report.rebuild_reason}")
    if report.skipped:
        table = Table(title=f"Skipped {len(report.skipped)} file(s)", show_lines=False, title_justify="left")
        table.add_column("file", overflow="fold")
        table.add_column("reason", overflow="fold")
        for name, reason in sorted(report.skipped.items()):
            table.add_row(name, reason)
        stdout.print(table)


def _planned_roots(kb: KnowledgeBase, paths: list[Path], add: bool, replace: bool) -> list[Path]:
    """PATHS as the admin meant them: never a silent drop of an indexed folder's documents."""
    from rag.index.roots import plan_roots

    manifest = kb.store.current_manifest()
    if manifest is None:
        return paths
    plan = plan_roots(manifest.roots, list(manifest.files), paths, add)
    if plan.dropped and not replace:
        fail(f"the index also covers {', '.join(map(str, plan.dropped))} ({plan.documents_dropped} document(s)), "
             f"which indexing only {', '.join(map(str, paths))} would remove: pass --add to add it, "
             "or --replace to remove them")
    if plan.dropped:
        stderr.print(f"Replacing: {plan.documents_dropped} document(s) under "
                     f"{', '.join(map(str, plan.dropped))} go away")
    return plan.roots


def _index(kb: KnowledgeBase, paths: list[Path] | None, exclude: list[str] | None, show_progress: bool,
           rename_collections: bool = False) -> IndexReport:
    with index_progress(show_progress) as view:
        return kb.refresh(paths, exclude, view, rename_collections=rename_collections)


@app.command()
def index(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Folders or files to index (default: the previous ones).")] = None,
    add: Annotated[bool, typer.Option("--add", help="Add PATH to the indexed folders.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Index only PATH: the other folders' documents go away.")] = False,
    rename_collections: Annotated[bool, typer.Option(
        "--rename-collections", help="Let indexed documents move to another collection (refused otherwise, "
                                     "with what would move: a scopes file naming the old one stops reaching them).")] = False,
    exclude_file: Annotated[Optional[Path], typer.Option(help="File listing paths or globs to leave out.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    allow_empty: Annotated[bool, typer.Option(
        "--allow-empty", help="With nothing to index yet (no PATH, no index, no AIE_DOCS_PATHS), exit 0: "
                              "for a first deploy's release step.")] = False,
) -> None:
    """Build or refresh the knowledge base from documents (incremental; the old index serves until done).

    Without PATH: refresh every folder indexed, or, when there is no index yet, index
    AIE_DOCS_PATHS; with neither there is nothing to do yet (an error, unless --allow-empty).
    With AIE_SOURCES_FILE: sync every declared source (as `sources sync`).
    PATH on an index of other folders: --add adds it, --replace indexes it alone.
    """
    from rag.index.discovery import read_exclude_file
    from rag.storage import full_disk, out_of_space

    kb = knowledge_base()
    if add and replace:
        fail("--add and --replace exclude each other")
    if kb.settings.sources_file is not None:
        if paths or add or replace or exclude_file or rename_collections:
            fail(f"the knowledge base is built from the sources in AIE_SOURCES_FILE ({kb.settings.sources_file}): "
                 "declare the folder there as a source (type: folder), or unset AIE_SOURCES_FILE")
        from ai_employee.sources_cli import sources_sync

        return sources_sync(None, False, as_json)
    if not paths and kb.store.current_version() is None:
        if not kb.docs_paths:
            message = (f"Nothing to index yet: there is no index in {kb.index_dir} and no folder to index. "
                       "Run `ai-employee index PATH`, or set AIE_DOCS_PATHS to the documents' folders.")
            if not allow_empty:
                fail(message)
            stderr.print(message)
            return
        paths = kb.docs_paths
        stderr.print(f"No index yet: indexing AIE_DOCS_PATHS ({', '.join(map(str, paths))})")
    for path in paths or []:
        if not path.exists():
            fail(f"no such file or folder: {path}")
    if paths:
        paths = _planned_roots(kb, paths, add, replace)
    try:
        exclude = read_exclude_file(exclude_file) if exclude_file else None
        report = _index(kb, paths or None, exclude, show_progress=sys.stderr.isatty() or not as_json,
                        rename_collections=rename_collections)
    except Exception as exc:
        if out_of_space(exc, kb.settings.data_dir):
            fail(f"{full_disk(kb.settings.data_dir)}: nothing was indexed, {_index_in_use(kb)}")
        if not isinstance(exc, (ValueError, FileNotFoundError, RuntimeError)):
            raise
        fail(str(exc))
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question, in your own words.")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1)] = 5,
    mode: Annotated[str, typer.Option(help="hybrid, dense or bm25.")] = "hybrid",
    path: Annotated[Optional[str], typer.Option(help="Only files under this folder (or this file).")] = None,
    scope: Annotated[Optional[str], typer.Option(help=SCOPE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Find the passages that best match a question."""
    from rag.types import Scope

    if mode not in MODES:
        fail(f"--mode must be one of {', '.join(MODES)}")
    kb = knowledge_base()
    require_index(kb)
    allowed = Scope.parse(scope)
    _require_collections(kb, allowed)
    try:
        hits, timings = kb.retriever.search_timed(query, top_k=top_k, mode=mode, path_prefix=path,  # type: ignore[arg-type]
                                                  allowed=allowed)
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    if as_json:
        print_json(
            {
                "query": query,
                "mode": mode,
                "scope": scope_json(allowed),
                "index_version": kb.retriever.snapshot.version,
                "took_ms": round(timings.total_ms, 2),
                "hits": [h.to_dict() for h in hits],
            }
        )
        return
    if not hits:
        stdout.print("No matching passages.")
        return
    for rank, hit in enumerate(hits, start=1):
        c = hit.chunk
        where = " › ".join(p for p in (c.title, c.section) if p)
        page = f", p. {c.page}" if c.page else ""
        ranks = " ".join(f"{name}#{r}" for name, r in sorted(hit.ranks.items()))
        edition = f" · {c.edition}" if c.edition else ""
        stdout.print(f"[bold]{rank}.[/] [cyan]{c.file}[/]{page} · {where}{edition} [dim]({ranks})[/]")
        text = (c.lead + "\n" if c.lead else "") + c.text
        text = text if len(text) <= 400 else text[:400] + "…"
        stdout.print("   " + text.replace("\n", "\n   "), highlight=False)
    stderr.print(f"[dim]{timings.total_ms:.0f} ms (query embedding {timings.embed_ms:.0f} ms)[/]")


@app.command(name="eval")
def eval_(
    dataset_dir: Annotated[Path, typer.Argument(help="A dataset folder with docs/ and questions.jsonl.")],
    questions: Annotated[Optional[Path], typer.Option(help="Questions file (default DATASET_DIR/questions.jsonl).")] = None,
    exclude_file: Annotated[Optional[Path], typer.Option(help="Files under docs/ to leave out of the index.")] = None,
    mode: Annotated[str, typer.Option(help="hybrid, dense or bm25.")] = "hybrid",
    top_k: Annotated[int, typer.Option("--top-k", min=1)] = 100,
    limit: Annotated[Optional[int], typer.Option(help="Only the first N questions.")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Where to write one JSON line per question.")] = None,
    answers: Annotated[bool, typer.Option("--answers", help="Also run the evidence gate and answer every question.")] = False,
    with_feedback: Annotated[bool, typer.Option(
        "--feedback", help="Rank as the bot does: with the demotions users' votes cause (AIE_FEEDBACK_*).")] = False,
    scope: Annotated[Optional[str], typer.Option(help=SCOPE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Index DATASET_DIR/docs (reusing an up-to-date index), run every question, report recall and MRR
    (and, with --answers, refusal and false-refusal rates; with known wrong passages, how often one is in
    the top 5)."""
    from rag.knowledge_base import KnowledgeBase
    from rag.evaluation import evaluate, load_questions
    from rag.index.discovery import read_exclude_file
    from rag.types import Scope

    if mode not in MODES:
        fail(f"--mode must be one of {', '.join(MODES)}")
    allowed = Scope.parse(scope)
    docs = dataset_dir / "docs"
    questions_path = questions or dataset_dir / "questions.jsonl"
    if not docs.is_dir():
        fail(f"{docs} is not a folder")
    if not questions_path.is_file():
        fail(f"{questions_path} not found")
    loaded = settings()
    try:
        exclude = read_exclude_file(exclude_file) if exclude_file else []
        rows = load_questions(questions_path)
    except ValueError as exc:
        fail(str(exc))
    rows = rows[:limit] if limit else rows
    kb = KnowledgeBase.for_dataset(loaded, dataset_dir, exclude)
    tag = kb.index_dir.name
    show = not as_json or sys.stderr.isatty()
    try:
        report = _index(kb, [docs], exclude, show_progress=show)
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    _require_collections(kb, allowed)
    out = out or kb.index_dir / f"results-{questions_path.stem}-{mode}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    answer = _answer_outcomes(kb, allowed) if answers else None
    with counter("questions", len(rows), enabled=show) as advance:
        metrics = evaluate(rows, _search(kb, top_k, mode, with_feedback, allowed), out, advance, answer=answer)
    result = {
        "dataset": str(dataset_dir),
        "questions_file": str(questions_path),
        "mode": mode,
        "scope": scope_json(allowed),
        "top_k": top_k,
        "index_version": report.version,
        "chunks": report.chunks,
        **metrics.to_dict(),
        "results": str(out),
    }
    if as_json:
        print_json(result)
        return
    stdout.print(
        f"[bold]{tag}[/] · {mode} · {metrics.answerable} answerable of {metrics.questions} questions · "
        f"{report.chunks} chunks"
    )
    stdout.print(
        "  " + "  ".join(f"recall@{k} {v:.3f}" for k, v in metrics.recall.items()) + f"  MRR@10 {metrics.mrr_at_10:.3f}"
    )
    if metrics.negative_at_5 is not None:
        stdout.print(f"  a known wrong passage in the top 5 for {metrics.negative_at_5:.1%} of the "
                     f"{metrics.with_negatives} questions that have one")
    if answers:
        stdout.print(
            f"  refused {_rate(metrics.refusal_rate)} of {metrics.unanswerable} unanswerable · "
            f"false refusals {_rate(metrics.false_refusal_rate)} of {metrics.answerable} answerable"
        )
    stdout.print(f"  per-question results: {out}")


def _unknown_collections(kb: KnowledgeBase, scope: Scope) -> tuple[list[str], list[str]]:
    """The collections `scope` names that the live index does not have, and the ones it has."""
    manifest = kb.store.current_manifest()
    known = sorted({manifest.collection(name) for name in manifest.files}) if manifest else []
    return sorted((scope.collections or set()) - set(known)), known


def _require_collections(kb: KnowledgeBase, scope: Scope) -> None:
    """None of the scope's collections in the index: an error; some of them (`hr,public` where nothing sits at
    the root): a warning, and the rest is searched."""
    unknown, known = _unknown_collections(kb, scope)
    if unknown and set(unknown) == set(scope.collections or ()):
        fail(f"no collection {', '.join(unknown)} in the index; it has: {', '.join(known) or 'none'}")
    _warn_unknown(unknown, known)


def _warn_unknown(unknown: list[str], known: list[str]) -> None:
    if unknown:
        stderr.print(f"warning: the index has no collection {', '.join(unknown)} (it has: {', '.join(known) or 'none'})",
                     style="yellow", markup=False, highlight=False)


def _search(kb: KnowledgeBase, top_k: int, mode: str, with_feedback: bool, allowed: Scope):
    """`question -> hits` within `allowed`, optionally reordered by the feedback demotions for that question."""
    retriever = kb.retriever
    if not with_feedback:
        return lambda q: retriever.search(q, top_k=top_k, mode=mode, allowed=allowed)
    from rag.feedback import reorder
    from rag.words.jargon import spelled_out
    from rag.words.languages import detect_language

    def search(question: str):
        vector = kb.embedder.embed_query(spelled_out(question))
        hits = retriever.search(question, top_k=top_k, mode=mode, query_vector=vector, allowed=allowed)
        factors = kb.adjuster.demotions(vector, detect_language(question), allowed)
        order, _ = reorder([h.score for h in hits], [h.chunk.id for h in hits], factors)
        return [hits[i] for i in order]

    return search


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _answer_outcomes(kb: KnowledgeBase, allowed: Scope):
    """A synchronous `question -> AnswerOutcome` over one event loop for the whole evaluation."""
    from rag.knowledge_base import make_pipeline
    from rag.evaluation import AnswerOutcome
    from rag.types import Answer

    loop = asyncio.new_event_loop()
    pipeline = make_pipeline(kb)

    async def run(question: str) -> AnswerOutcome:
        final = None
        async for item in pipeline.answer(question, scope=allowed):
            if isinstance(item, Answer):
                final = item
        return AnswerOutcome(final.refused, final.text)

    return lambda question: loop.run_until_complete(run(question))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question, in your own words.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole answer as JSON instead of streaming.")] = False,
    channel: Annotated[Optional[str], typer.Option(
        help="Answer as the bot does in this conversation: a Slack channel id (D…: a direct message) or a "
             "Teams conversation id.")] = None,
    user: Annotated[Optional[str], typer.Option(
        help="With --channel: who asks (in a direct message, documents whose access list names them or "
             "their Slack user groups).")] = None,
    platform: Annotated[str, typer.Option(help="With --channel: slack or teams.")] = "slack",
) -> None:
    """Answer a question from the knowledge base, citing every statement (with --channel: only from what the
    bot may use there, for that person)."""
    from bot.core.answering import ASK_FOR_A_QUESTION, nothing_to_ask

    if user and not channel:
        fail("--user goes with --channel: the place decides what may be quoted")
    if platform not in PLATFORMS:
        fail(f"--platform must be one of {', '.join(PLATFORMS)}")
    # What the chat surfaces do with a message first: "thanks!" or "hi" gets the courtesy reply, not a search
    reply = nothing_to_ask(question.strip(), ASK_FOR_A_QUESTION)
    if reply is not None:
        if as_json:
            print_json({"question": question, "reply": reply})
        else:
            stdout.print(reply, markup=False, highlight=False)
        return
    kb = knowledge_base()
    require_index(kb)
    try:
        scope = _place_scope(kb, platform, channel, user or "") if channel else None
        answer = asyncio.run(_ask(kb, question, stream=not as_json, scope=scope))
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    if as_json:
        print_json({**answer.to_dict(), "scope": scope_json(scope)} if scope is not None else answer.to_dict())


def _place_scope(kb: KnowledgeBase, platform: str, channel: str, user: str) -> Scope:
    from ai_employee.wiring import place_scope
    from bot.slack.config import SlackSettings
    from bot.teams.config import TeamsSettings

    slack = SlackSettings() if platform == "slack" else None
    teams = TeamsSettings() if platform == "teams" else None
    scope = asyncio.run(place_scope(kb, platform, channel, user, slack=slack, teams=teams))
    where = ", ".join(sorted(scope.collections)) if scope.collections is not None else "every collection"
    stderr.print(f"as the bot answers in {channel}{f' to {user}' if user else ''}: {where}", style="dim",
                 markup=False, highlight=False)
    _warn_unknown(*_unknown_collections(kb, scope))
    return scope


def scope_json(scope: Scope | None) -> dict | None:
    if scope is None:
        return None
    return {"collections": None if scope.collections is None else sorted(scope.collections),
            "readers": None if scope.readers is None else sorted(scope.readers)}


async def _ask(kb: KnowledgeBase, question: str, stream: bool, scope: Scope | None = None) -> Answer:
    from rag.knowledge_base import make_pipeline
    from rag.types import EVERYTHING, Answer

    pipeline = make_pipeline(kb)
    if problem := kb.feedback.read_only or kb.work_cache.read_only:  # the disk is full
        stderr.print(f"warning: {problem}: answering from what is saved there, nothing new is kept", style="yellow",
                     markup=False, highlight=False)
    streamed: list[str] = []
    final: Answer | None = None
    async for item in pipeline.answer(question, scope=scope or EVERYTHING):
        if isinstance(item, Answer):
            final = item
        elif stream:
            streamed.append(item)
            sys.stdout.write(item)
            sys.stdout.flush()
    assert final is not None
    if stream:
        _print_answer_tail(final, "".join(streamed))
    return final


def _print_answer_tail(answer: Answer, streamed: str) -> None:
    stdout.print()
    if answer.text != streamed:
        stdout.print("\n[dim]With citations checked:[/]")
        stdout.print(answer.text, highlight=False)
    if answer.citations:
        stdout.print("\n[bold]Sources[/]")
        for citation in answer.citations:
            link = f" {escape(citation.chunk.url)}" if citation.chunk.url else ""  # front matter url:/source:
            stdout.print(f"{escape(citation.footnote)}  [dim]({escape(citation.chunk.file)})[/]{link}", highlight=False)
    for sentence in answer.sentences:
        if sentence["outcome"] == "moved":
            stdout.print(f"[yellow]citation moved to the passage that supports it:[/] {sentence['text']}",
                         highlight=False)
    for sentence in answer.uncited:
        stdout.print(f"[yellow]not supported by any source:[/] {sentence}", highlight=False)
    for notice in answer.notices:
        stdout.print(f"[yellow]note:[/] {notice}")
    t = answer.timings_ms
    stderr.print(
        f"[dim]{answer.mode} · {t.get('total', 0):.0f} ms total · first text after {t.get('first_token', t.get('total', 0)):.0f} ms"
        f" · models: {', '.join(f'{k}={v}' for k, v in answer.models.items())}[/]"
    )


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the live snapshot: version, files, chunks, embedding model, and the data dir it is in."""
    from rag.config import legacy_data_notice

    kb = knowledge_base()
    data_dir, source = kb.settings.data_dir.resolve(), kb.settings.data_dir_source
    where = "from AIE_DATA_DIR" if source == "AIE_DATA_DIR" else "the default; set AIE_DATA_DIR to use another"
    place = {"data_dir": str(data_dir), "data_dir_source": source,  # "AIE_DATA_DIR" or "default"
             "notice": legacy_data_notice(kb.settings)}  # an index left in ./data by an earlier version
    manifest = kb.store.current_manifest()
    if manifest is None:
        message = f"no index in {kb.index_dir} (data dir {data_dir}: {where}); run `ai-employee index PATH`"
        if as_json:  # scripts get where it looked, and the notice, on stdout
            print_json(place | {"error": message})
        fail(message)
    info = {
        **place,
        "version": manifest.version,
        "created": manifest.created,
        "roots": manifest.roots,
        "sources": sorted(manifest.sources),
        "files": len(manifest.files),
        "skipped": len(manifest.skipped),
        "chunks": manifest.chunk_count,
        "embedding_model": manifest.embedding_model,
        "dim": manifest.dim,
        "dense_index": manifest.dense_index,
        "languages": sorted(manifest.languages or ()),  # of the passages (empty: indexed before they were told)
        # English questions also search the Chinese passages' words in English (rag.words.bilingual.gloss)
        "glosses": "Chinese passages, in English" if manifest.glossing else "none",
    }
    if as_json:
        print_json(info)
    else:
        info["data_dir"] = f"{data_dir} ({where})"
        del info["data_dir_source"], info["notice"]
        for key, value in info.items():
            stdout.print(f"{key:>16}: {', '.join(value) if isinstance(value, list) else value}")


@app.command()
def serve(
    port: Annotated[int, typer.Option(envvar="PORT", help="HTTP port (Slack and Teams endpoints, /health).")] = 3000,
    host: Annotated[Optional[str], typer.Option(
        help="Interface to listen on (default 0.0.0.0; 127.0.0.1 in Teams' anonymous mode).")] = None,
    socket_mode: Annotated[bool, typer.Option(
        "--socket-mode", help="Connect to Slack with Socket Mode (needs SLACK_APP_TOKEN).")] = False,
) -> None:
    """Run the bot in Slack (SLACK_* set) and/or Microsoft Teams (CONNECTIONS__SERVICE_CONNECTION__SETTINGS__* set)."""
    from ai_employee.wiring import make_bot
    from bot.connections import HttpLimits
    from bot.core.config import ChatSettings
    from bot.core.logs import configure
    from bot.core.scopes import ScopesFileError, load_scopes
    from bot.server import serve_http, serve_socket_mode
    from bot.slack.config import MissingCredentials, SlackSettings
    from bot.teams.config import ANONYMOUS_HOST, TeamsSettings, TeamsSettingsError
    from rag.sources.config import SourcesFileError

    slack, teams = SlackSettings(), TeamsSettings()
    if not slack.configured and not teams.configured:
        fail("nothing to serve: set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (README: 'Slack app') and/or "
             "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID, __CLIENTSECRET and __TENANTID (README: 'Teams app')")
    try:
        if slack.configured or socket_mode:
            slack.require(socket_mode)
        if teams.configured:
            teams.require()
    except (MissingCredentials, TeamsSettingsError) as exc:
        fail(str(exc))
    anonymous = teams.configured and teams.anonymous_allowed
    if host is None:
        host = ANONYMOUS_HOST if anonymous else "0.0.0.0"
    chat, limits = ChatSettings(), HttpLimits()
    try:
        load_scopes(chat.scopes_file)  # before anything is loaded: a mistake there is all the output
    except ScopesFileError as exc:
        fail(str(exc))
    configure(os.environ.get("AIE_LOG_LEVEL", "INFO").upper())
    if anonymous and host not in (ANONYMOUS_HOST, "localhost", "::1"):
        logging.getLogger("ai_employee.serve").warning(
            "Teams runs in anonymous mode (ANONYMOUS_ALLOWED=true) on %s:%d: anyone who can reach that port can act "
            "as any Teams user, admins included", host, port)
    kb = knowledge_base()  # a settings mistake is all the output, before any platform is asked
    try:
        kb.sources  # so is one in the sources file (AIE_SOURCES_FILE) that serve keeps in sync
    except SourcesFileError as exc:
        fail(str(exc), code=2)
    connections, credentials, served = _verified(slack if slack.configured or socket_mode else None,
                                                 teams if teams.configured else None)
    bot = make_bot(kb, slack if "slack" in served else None, teams if "teams" in served else None,
                   chat, teams_connections=connections, credentials=credentials)
    what = " and ".join(name for name, on in (("Slack", bot.slack_app), ("Teams", bot.teams)) if on is not None)
    if socket_mode and bot.slack_app is not None:
        # Slack's events come over the socket, so /slack/events is not served; /health (and Teams) stay on HTTP.
        app_token = slack.slack_app_token.get_secret_value()
        asyncio.run(serve_socket_mode(bot.slack_app, app_token, bot.web_app(slack_events=False), host, port,
                                      limits))
    else:
        asyncio.run(serve_http(bot.web_app(), host, port, what, limits))


def _verified(slack, teams):
    """Each configured surface's credentials, checked with its platform (one call each, at once): `serve`
    stops with one line (exit code 2) when all are refused, else serves the others and says so once. The
    result: the SDK's Teams connections (checked), what /ready shows of each surface, the surfaces to serve."""
    from ai_employee.credentials import checks, nothing_to_serve, refused, verify, warnings

    connections = None
    if teams is not None and teams.client_id:
        from bot.teams.app import msal_connections

        connections = msal_connections(teams)
    credentials = verify(checks(slack, teams, connections))
    bad = refused(credentials)
    if bad and len(bad) == len(credentials.results):
        stderr.print(f"[bold red]error:[/] {escape(nothing_to_serve(credentials))}", soft_wrap=True)
        raise typer.Exit(2)
    for line in warnings(credentials):
        logging.getLogger("ai_employee.serve").warning("%s", line)
    return connections, credentials, set(credentials.results) - set(bad)


@app.command("teams-package")
def teams_package(
    app_id: Annotated[str, typer.Option(
        "--app-id", help="The bot's Microsoft App ID (Azure Bot registration), a GUID.")],
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Where to write the zip (default: app.zip in the current folder).")] = None,
    host: Annotated[Optional[str], typer.Option(
        "--host", help="Public host of the messaging endpoint, e.g. bot.example.com (default: AIE_PUBLIC_URL's).")] = None,
    name: Annotated[str, typer.Option("--name", help="The app's name in Teams (30 characters at most).")] = "AI Employee",
    privacy_url: Annotated[Optional[str], typer.Option(
        "--privacy-url", help="Your privacy statement (https://…), linked from the app's page in Teams.")] = None,
    terms_url: Annotated[Optional[str], typer.Option(
        "--terms-url", help="Your terms of use (https://…), linked from the app's page in Teams.")] = None,
) -> None:
    """Write the Teams app package (manifest.json and icons) to upload in Teams."""
    import re
    from urllib.parse import urlsplit

    from bot.teams.package import AppInfo, write_package

    if not re.fullmatch(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", app_id):
        fail("--app-id must be the bot's Microsoft App ID, a GUID like 00000000-0000-0000-0000-000000000000 "
             f"(got {app_id!r})")
    public = os.environ.get("AIE_PUBLIC_URL", "").strip()
    host = host or (urlsplit(public).netloc if public else None)
    if not host:
        fail("--host is needed (or AIE_PUBLIC_URL): the public host Teams reaches the bot at, e.g. bot.example.com")
    if not re.fullmatch(r"[A-Za-z0-9.-]+(?::\d+)?", host):
        fail(f"--host is a host name such as bot.example.com, without https:// or a path (got {host!r})")
    if len(name) > 30:
        fail("--name may have at most 30 characters")
    for option, url in (("--privacy-url", privacy_url), ("--terms-url", terms_url)):
        if url is not None and not (urlsplit(url).scheme == "https" and urlsplit(url).netloc):
            fail(f"{option} is an https:// address (got {url!r})")
    if privacy_url is None or terms_url is None:
        stderr.print(f"warning: the app's privacy and terms links point at https://{host}/ until --privacy-url "
                     "and --terms-url name your own pages", style="yellow", markup=False, highlight=False)
    from ai_employee.wiring import public_examples

    prompts = public_examples(knowledge_base())
    written = write_package(AppInfo(app_id.lower(), host, name, privacy=privacy_url, terms=terms_url,
                                    prompts=prompts), out or Path("app.zip")).resolve()
    where = "" if out else " (in the current folder; --out writes it elsewhere)"
    stdout.print(f"wrote {escape(str(written))}{where}: upload it in Teams (Apps → Manage your apps → Upload an app)",
                 highlight=False)


app.add_typer(feedback_app, name="feedback")
app.add_typer(sources_app, name="sources")


def main() -> None:
    from pydantic import ValidationError

    _setup_logging()
    try:
        app()
    except ValidationError as exc:  # settings are loaded as a command needs them: a mistake is one line
        from ai_employee.settings_errors import describe

        stderr.print(f"[bold red]error:[/] {escape(describe(exc))}", soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
