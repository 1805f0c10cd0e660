"""The App Home tab: for admins the index status, the last reindex, the most down-voted answers and the
flagged passages (with confirm / undo / show); for everyone else what the assistant knows, how to ask it
and a few example questions drawn from the indexed documents' titles.

Lists are cut to fit Slack's limits (100 blocks a view, 3,000 characters a section) and say how many
were left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.core.examples import example_questions, folders, title_of
from bot.core.reindex import ReindexRun, run_text
from bot.core.review import STATUS, WORDS, outside, rules_note
from bot.core.assistant import Manifest
from bot.core.sources import SourceRow
from bot.slack.blocks import SECTION_LIMIT, SLACK_STYLE, VIEW_BLOCK_LIMIT, cut, escape, reason_label

REINDEX_NOW = "home_reindex"
CONFIRM_DEMOTION = "home_confirm_demotion"
UNDO_DEMOTION = "home_undo_demotion"
SHOW_PASSAGE = "home_show_passage"
HOME_CALLBACK = "home"
MAX_ANSWERS = 10
MAX_PASSAGES = 15
MAX_FOLDERS = 10
MAX_TITLES = 15  # per folder
MAX_PEOPLE = 10
MAX_DOCUMENTS = 10
MAX_SOURCES = 15
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{2,}")


@dataclass
class AdminHome:
    """What the admins' Home tab shows (gathered off the event loop)."""

    manifest: Manifest | None
    review: dict[str, list[dict[str, Any]]]  # rag.feedback.summary()
    running: ReindexRun | None = None
    last: ReindexRun | None = None
    min_voters: int = 2
    notice: str | None = None
    # How many of the review's answers, passages and documents were left out: outside the admin's scope.
    hidden: dict[str, int] = field(default_factory=dict)
    sources: list[SourceRow] | None = None  # the declared sources (None: no AIE_SOURCES_FILE)


def when(epoch: float) -> str:
    """A time Slack shows in the reader's time zone (the fallback is UTC)."""
    fallback = datetime.fromtimestamp(epoch).astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return f"<!date^{int(epoch)}^{{date_short_pretty}} at {{time}}|{fallback}>"


def built_at(manifest: Manifest) -> str:
    try:
        return when(datetime.fromisoformat(manifest.created).timestamp())
    except ValueError:
        return escape(manifest.created)


def person(user: str) -> str:
    return f"<@{user}>" if _USER_ID.fullmatch(user) else escape(user)


def people(users: list[str]) -> str:
    shown = ", ".join(person(u) for u in users[:MAX_PEOPLE])
    return shown + (f" and {len(users) - MAX_PEOPLE} more" if len(users) > MAX_PEOPLE else "")


def _section(text: str, accessory=None) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=cut(text, SECTION_LIMIT)), accessory=accessory)


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=cut(text, SECTION_LIMIT))])


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=text[:150]))


def _home(blocks: list) -> dict:
    if len(blocks) > VIEW_BLOCK_LIMIT:  # built to fit; never let a long list make Slack refuse the view
        blocks = blocks[: VIEW_BLOCK_LIMIT - 1] + [_context("… (cut to fit the Home tab)")]
    return View(type="home", callback_id=HOME_CALLBACK, blocks=blocks).to_dict()


def _snippet(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return cut(escape(flat), limit)


# ------------------------------------------------------------------------------------------ admins


def admin_home(data: AdminHome) -> dict:
    blocks: list = [_header("Knowledge base — admin")]
    if data.notice:
        blocks.append(_section(data.notice))
    blocks += _index_status(data)
    if data.sources is not None:
        blocks += [DividerBlock(), _header("Sources")] + _sources(data.sources)
    blocks += [DividerBlock(), _header(WORDS.answers)]
    blocks += _answers(data.review.get("answers", []))
    blocks += _outside(data.hidden.get("answers", 0), "down-voted answer", "down-voted answers")
    blocks += [DividerBlock(), _header(WORDS.passages)]
    blocks += _passages(data.review.get("passages", []))
    blocks += _outside(data.hidden.get("passages", 0), "flagged passage", "flagged passages")
    documents = data.review.get("documents", [])
    if documents:
        listed = " · ".join(f"{SLACK_STYLE.name(d['file'])} ({d['flags']})" for d in documents[:MAX_DOCUMENTS])
        if len(documents) > MAX_DOCUMENTS:
            listed += f" · and {len(documents) - MAX_DOCUMENTS} more"
        if data.hidden.get("documents"):
            listed += f" · and {data.hidden['documents']} more outside your scope"
        blocks.append(_section(f"*{WORDS.most_flagged}* {listed}"))
    blocks.append(_context(rules_note(data.min_voters, bold="*")))
    return _home(blocks)


def _outside(hidden: int, one: str, many: str) -> list:
    if not hidden:
        return []
    return [_context(f":lock: {outside(hidden, one, many, 'in your direct messages with the app')}")]


def _index_status(data: AdminHome) -> list:
    blocks: list = []
    manifest = data.manifest
    if manifest is None:
        blocks.append(_section("*Index:* none yet. *Reindex now* builds it from the configured folders "
                               "(`AIE_DOCS_PATHS`)."))
    else:
        skipped = f" · {len(manifest.skipped)} skipped" if manifest.skipped else ""
        blocks.append(_section(
            f"*Index* version `{escape(manifest.version)}` · {len(manifest.files)} files · "
            f"{manifest.chunk_count} passages{skipped}\nBuilt {built_at(manifest)} from "
            + ", ".join(SLACK_STYLE.name(r) for r in manifest.roots[:10])))
    if data.running is not None:
        by = f" by {person(data.running.by)}" if data.running.by else ""
        blocks.append(_section(f":hourglass_flowing_sand: A reindex is running (started {when(data.running.started)}"
                               f"{by}). Answers keep coming from the current index."))
    else:
        blocks.append(ActionsBlock(block_id="home_index", elements=[
            ButtonElement(text="Reindex now", action_id=REINDEX_NOW, value="reindex", style="primary")]))
    last = data.last
    if last is not None and last.finished is not None:
        by = f" by {person(last.by)}" if last.by else ""
        head = f"*Last reindex* (started {when(last.started)}{by}, finished {when(last.finished)}):\n"
        blocks.append(_section(head + run_text(last, SLACK_STYLE, max_chars=SECTION_LIMIT - len(head))))
    elif manifest is not None:
        blocks.append(_context(f"No reindex from Slack since the bot started; the index was built "
                               f"{built_at(manifest)}."))
    return blocks


def _sources(rows: list[SourceRow]) -> list:
    """The sources table, a section a source (Slack has no table that fits a Home tab's width)."""
    if not rows:
        return [_context("No sources are declared in the sources file.")]
    blocks: list = []
    for row in rows[:MAX_SOURCES]:
        synced = when(row.last_success_at) if row.last_success_at else "never"
        upcoming = row.upcoming
        if upcoming not in ("watching", "now", "on demand") and row.next_run_at:
            upcoming = when(row.next_run_at)
        lines = [f"*{escape(row.name)}* · {row.type} · collection `{escape(row.collection)}` · "
                 f"{row.documents} documents",
                 f"Last sync: {synced} · next run: {upcoming}"]
        if row.last_error:
            fix = f" (check `{escape(row.error_variable)}`)" if row.error_variable else ""
            lines.append(f":warning: *Last error* ({row.failures} failed in a row): {escape(row.last_error)}{fix}")
        blocks.append(_section("\n".join(lines)))
    if len(rows) > MAX_SOURCES:
        blocks.append(_context(f"… and {len(rows) - MAX_SOURCES} more sources (`ai-employee sources list` lists all)."))
    blocks.append(_context("`/reindex NAME` syncs one source now; `/reindex` alone syncs all."))
    return blocks


def _answers(answers: list[dict[str, Any]]) -> list:
    if not answers:
        return [_context(f":thumbsdown: {WORDS.no_answers}")]
    blocks: list = []
    for entry in answers[:MAX_ANSWERS]:
        lines = [f"*“{_snippet(entry['question'], 300)}”*"]
        counts = f":thumbsdown: {entry['down_votes']} · :thumbsup: {entry['up_votes']}"
        if _CHANNEL_ID.fullmatch(entry.get("channel") or ""):
            counts += f" · in <#{entry['channel']}>"
        if entry.get("last_vote"):
            counts += f" · last vote {when(entry['last_vote'])}"
        lines.append(counts)
        reasons = entry.get("reasons") or {}
        if reasons:
            lines.append("Reasons: " + " · ".join(f"{escape(reason_label(r))} ×{n}" for r, n in
                                                   sorted(reasons.items(), key=lambda item: -item[1])))
        for comment in (entry.get("comments") or [])[:3]:
            lines.append(f">{_snippet(comment, 400)}")
        if len(entry.get("comments") or []) > 3:
            lines.append(f"_… and {len(entry['comments']) - 3} more comments_")
        lines.append(f"_Answer:_ {_snippet(entry['answer'], 300)}")
        blocks.append(_section("\n".join(lines)))
    hidden = len(answers) - MAX_ANSWERS
    if hidden > 0:
        blocks.append(_context(f"… and {hidden} more down-voted answers "
                               "(`ai-employee feedback summary --limit N` lists more)."))
    return blocks


def _passages(passages: list[dict[str, Any]]) -> list:
    if not passages:
        return [_context(f":triangular_flag_on_post: {WORDS.no_passages}")]
    blocks: list = []
    for entry in passages[:MAX_PASSAGES]:
        status = entry["status"]
        label = f"*{escape(status)}*" + (" (admin)" if entry.get("admin") else "")
        lines = [f"*{escape(entry['location'])}* · {SLACK_STYLE.name(entry['file'])}",
                 f">{_snippet(entry.get('text') or '', 280)}" if entry.get("text") else "",
                 f":triangular_flag_on_post: Flagged by {people(entry['flaggers'])}"
                 + (f" · :thumbsup: found helpful by {people(entry['helpers'])}" if entry.get("helpers") else ""),
                 f"Status: {label} — {STATUS.get(status, '')}"]
        blocks.append(_section("\n".join(line for line in lines if line)))
        buttons = []
        if status != "passage changed" and not (status == "demoted" and entry.get("admin")):
            buttons.append(ButtonElement(text="Confirm demotion", action_id=CONFIRM_DEMOTION,
                                         value=entry["chunk_id"], style="primary"))
        buttons.append(ButtonElement(text="Undo", action_id=UNDO_DEMOTION, value=entry["chunk_id"]))
        buttons.append(ButtonElement(text="Show passage", action_id=SHOW_PASSAGE, value=entry["chunk_id"]))
        blocks.append(ActionsBlock(elements=buttons))
    hidden = len(passages) - MAX_PASSAGES
    if hidden > 0:
        blocks.append(_context(f"… and {hidden} more flagged passages "
                               "(`ai-employee feedback summary --limit N` lists more)."))
    return blocks


# ------------------------------------------------------------------------------------------ everyone


def user_home(manifest: Manifest | None, bot_user: str | None = None, notice: str | None = None) -> dict:
    blocks: list = [_header("Ask me about the company's documents")]
    if notice:
        blocks.append(_section(notice))
    blocks.append(_section(
        "I answer questions from the company's documents and cite the passage behind every statement, "
        "so you can check it. When the documents don't say, I tell you so instead of guessing."))
    blocks += [_header("What I know")]
    if manifest is None:
        blocks.append(_section("No documents yet — an admin can build the knowledge base with `/reindex`."))
    elif not manifest.files:
        blocks.append(_section("No documents are open to you yet — ask an admin if you expected some."))
    else:
        blocks.append(_section(f"*{len(manifest.files)} documents* · {manifest.chunk_count} passages · "
                               f"updated {built_at(manifest)}"))
        groups = folders(manifest)
        for folder, files in groups[:MAX_FOLDERS]:
            titles = [escape(title_of(name, record)) for name, record in files]
            listed = " · ".join(titles[:MAX_TITLES])
            if len(titles) > MAX_TITLES:
                listed += f" · and {len(titles) - MAX_TITLES} more"
            noun = "document" if len(files) == 1 else "documents"
            blocks.append(_section(f":file_folder: *{escape(folder)}* — {len(files)} {noun}\n{listed}"))
        if len(groups) > MAX_FOLDERS:
            rest = groups[MAX_FOLDERS:]
            blocks.append(_context(f"… and {len(rest)} more folders ({sum(len(f) for _, f in rest)} documents)."))
    me = f"<@{bot_user}>" if bot_user else "me"
    blocks += [_header("How to ask"), _section(
        f"• *In a channel:* mention {me} with your question; I answer in a thread.\n"
        "• *In a direct message:* open the *Messages* tab here and just ask.\n"
        "• *Follow-ups:* reply in the thread of an answer — I take the conversation so far into account.\n"
        "• *Assistant pane:* open me from Slack's AI apps button to ask beside whatever you are reading.\n"
        "Each answer lists its sources: *Show source* opens the passage. Use :thumbsup: / :thumbsdown: "
        "and *This source is wrong* when something is off — it helps the answers get better.")]
    if manifest is not None and manifest.files:
        examples = example_questions(manifest)
        if examples:
            blocks += [_header("Try asking"), _section("\n".join(f"• {escape(q)}" for q in examples))]
    return _home(blocks)
