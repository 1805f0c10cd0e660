"""Block Kit for answers: the text in `markdown` blocks (standard Markdown, so the finished message keeps
the formatting that was streamed), a footnote per source with a "Show source" button, feedback buttons,
the modal that shows a cited passage (with "This source is wrong" / "This source helped") and the one that
asks why an answer was not helpful. Text is escaped first and split afterwards, so Slack's limits
hold for what is sent (50 blocks and 12,000 markdown characters a message, 3,000 a section); answers are
split, never cut off."""

from __future__ import annotations

import re

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextActionsBlock,
    ContextBlock,
    DividerBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    HeaderBlock,
    InputBlock,
    MarkdownBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    RadioButtonsElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.core.answering import UNSUPPORTED, WARNING, answer_notes, no_index
from bot.core.links import document_link, passage_text, without_links
from bot.core.reindex import TextStyle
from bot.core.text import split_text
from bot.core.votes import REASONS
from rag.types import Answer, Chunk, Citation

NO_INDEX = no_index("`/reindex`")
SECTION_LIMIT = 3000
MARKDOWN_LIMIT = 12_000  # Slack's allowance for all markdown blocks of one message together
BLOCK_LIMIT = 50
SHOW_SOURCE = "show_source"
WRONG_SOURCE = "wrong_source"
HELPFUL_SOURCE = "helpful_source"
FEEDBACK = "answer_feedback"
REASON_VIEW = "feedback_reason"  # callback_id of the "what was wrong?" modal
REASON_BLOCK = REASON_ACTION = "reason"
COMMENT_BLOCK = COMMENT_ACTION = "comment"
COMMENT_LIMIT = 2000  # what the feedback store keeps of a comment
VIEW_BLOCK_LIMIT = 100
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
_CLOSE, _REOPEN = "\n```", "```\n"
_PARTIAL_ENTITY = re.compile(r"&[a-z]*$")


def escape(text: str) -> str:
    """Slack's three control characters; `>` at the start of a line stays a quote marker.

    Markdown blocks need it too: Slack reads `<…>` there as its own mentions and links, and shows the
    escaped forms as the characters themselves."""
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return re.sub(r"(?<!^)(?<!\n)>", "&gt;", text)


def link(url: str | None, text: str) -> str:
    """Slack's `<url|text>` for escaped `text`, or `text` alone when `url` is not an http(s) link. The URL
    keeps nothing Slack would read as the end of it (`|`, `>`, spaces: percent-encoded); `&` is its entity.
    A `>` that `escape` left as a quote marker would end the link: inside one it is its entity too."""
    safe = document_link(url)
    return f"<{safe.replace('&', '&amp;')}|{text.replace('>', '&gt;')}>" if safe else text


SLACK_STYLE = TextStyle(working=":hourglass_flowing_sand:", done=":white_check_mark:", failed=":x:", escape=escape)


def escaped_pieces(text: str, limit: int) -> list[str]:
    """`text` escaped, then split into pieces of at most `limit` characters; an entity is never cut."""
    pieces = split_text(escape(text), limit - len("&amp"))
    for n in range(len(pieces) - 1):
        partial = _PARTIAL_ENTITY.search(pieces[n])
        if partial:  # the rest of the entity begins the next piece
            pieces[n], pieces[n + 1] = pieces[n][: partial.start()], partial.group() + pieces[n + 1]
    return [p for p in pieces if p]


def markdown_pieces(text: str, limit: int = MARKDOWN_LIMIT) -> list[str]:
    """The texts of the markdown blocks for `text`; a code block cut in two is closed and reopened."""
    pieces: list[str] = []
    reopen = ""
    for piece in escaped_pieces(text, limit - len(_CLOSE) - len(_REOPEN)):
        piece, reopen = reopen + piece, ""
        if len(_FENCE.findall(piece)) % 2:
            piece, reopen = piece.rstrip("\n") + _CLOSE, _REOPEN
        pieces.append(piece)
    return pieces


def _footnote(citation: Citation, answer_id: str | None) -> SectionBlock:
    chunk = citation.chunk
    room = SECTION_LIMIT - len(f"*[{citation.marker}]* ")  # a long title › headings is cut to fit the section
    label = cut(escape(citation.location), room)
    if document_link(chunk.url):
        title = escape(without_links(chunk.title)) or label  # as the location shows it (untitled: all)
        linked = label.replace(title, link(chunk.url, title), 1)
        label = linked if len(linked) <= room else label
    accessory = None
    if answer_id:
        accessory = ButtonElement(text="Show source", action_id=SHOW_SOURCE,
                                  value=f"{answer_id}:{citation.marker}")
    return SectionBlock(text=MarkdownTextObject(text=f"*[{citation.marker}]* {label}"), accessory=accessory)


NOTE_MARKS = {WARNING: ":warning:", UNSUPPORTED: ":grey_question:"}


def answer_blocks(answer: Answer, answer_id: str | None) -> list[dict]:
    """All blocks of a finished answer, in order; `paginate` fits them into messages."""
    blocks: list = [MarkdownBlock(text=piece) for piece in markdown_pieces(answer.text)]
    if answer.citations:
        blocks.append(DividerBlock())
        blocks.extend(_footnote(c, answer_id) for c in answer.citations)
    notes = [f"{NOTE_MARKS[kind]} {escape(note)}" for kind, note in answer_notes(answer)]
    if notes:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=cut(n, 3000)) for n in notes[:10]]))
    if answer_id:
        blocks.append(ContextActionsBlock(elements=[FeedbackButtonsElement(
            action_id=FEEDBACK,
            positive_button=FeedbackButtonObject(text="Helpful", value=f"up:{answer_id}", accessibility_label="Helpful answer"),
            negative_button=FeedbackButtonObject(text="Not helpful", value=f"down:{answer_id}",
                                                 accessibility_label="Unhelpful answer"),
        )]))
    return [b.to_dict() for b in blocks]


def paginate(blocks: list[dict], limit: int = BLOCK_LIMIT,
             markdown_limit: int = MARKDOWN_LIMIT) -> list[list[dict]]:
    """The blocks in order, as messages of at most `limit` blocks and `markdown_limit` markdown characters."""
    pages: list[list[dict]] = [[]]
    markdown = 0
    for block in blocks:
        size = len(block["text"]) if block.get("type") == "markdown" else 0
        if pages[-1] and (len(pages[-1]) >= limit or markdown + size > markdown_limit):
            pages.append([])
            markdown = 0
        pages[-1].append(block)
        markdown += size
    return pages


def plain_summary(text: str, limit: int = 3000) -> str:
    """The notification text that goes with blocks (Slack shows it in notifications and old clients)."""
    return cut(escape(text), limit)


def cut(escaped: str, limit: int) -> str:
    """Escaped text cut to `limit` characters (ending in "…"), never inside an entity."""
    if len(escaped) <= limit:
        return escaped
    return _PARTIAL_ENTITY.sub("", escaped[: limit - 1]) + "…"


def source_modal(chunk: Chunk, location: str, *, title: str, vote_value: str | None = None,
                 note: str | None = None) -> dict:
    """The passage as it was cited; with `vote_value` ("<answer id>:<marker>"), the two source votes; `note`
    (mrkdwn) is shown below the passage."""
    blocks: list = [HeaderBlock(text=PlainTextObject(text=(chunk.title or chunk.file)[:150]))]
    where = cut(escape(f"{location} · {chunk.file}"), 3000)
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=where)]))
    body = (chunk.lead + "\n" if chunk.lead else "") + chunk.text
    body = passage_text(chunk, body)  # mrkdwn would link a bare URL to elsewhere
    blocks.extend(SectionBlock(text=MarkdownTextObject(text=p)) for p in escaped_pieces(body, SECTION_LIMIT))
    if document_link(chunk.url):
        blocks.append(SectionBlock(text=MarkdownTextObject(text=link(chunk.url, "Open the document"))))
    blocks = blocks[: VIEW_BLOCK_LIMIT - 2]
    if note:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=cut(note, 3000))]))
    if vote_value:
        blocks.append(ActionsBlock(elements=[
            ButtonElement(text="This source is wrong", action_id=WRONG_SOURCE, value=vote_value, style="danger"),
            ButtonElement(text="This source helped", action_id=HELPFUL_SOURCE, value=vote_value),
        ]))
    return modal(title, blocks)


def modal(title: str, blocks: list, *, close: str = "Close", submit: str | None = None,
          callback_id: str | None = None, private_metadata: str | None = None) -> dict:
    """A modal view (its title, close and submit texts cut to Slack's 24 characters)."""
    return View(type="modal", title=PlainTextObject(text=_cut_plain(title, 24)),
                close=PlainTextObject(text=close[:24]), submit=PlainTextObject(text=submit[:24]) if submit else None,
                callback_id=callback_id, private_metadata=private_metadata,
                blocks=blocks[:VIEW_BLOCK_LIMIT]).to_dict()


def _cut_plain(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def vote_confirmation(view: dict, text: str) -> dict:
    """The source modal after a vote: the passage as it was, the buttons replaced by `text`."""
    blocks = [b for b in view.get("blocks", []) if b.get("type") != "actions"][: VIEW_BLOCK_LIMIT - 1]
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=text)]))
    title = (view.get("title") or {}).get("text") or "Source"
    close = (view.get("close") or {}).get("text") or "Close"
    return modal(title, blocks, close=close)


def reason_label(reason: str) -> str:
    return reason[:1].upper() + reason[1:]


def reason_modal(answer_id: str) -> dict:
    """Asked after 👎 (already recorded): why, optionally. Closing it keeps the vote without a reason."""
    return modal("Thanks for the feedback", [
        SectionBlock(text=MarkdownTextObject(
            text="Your :thumbsdown: is recorded. If you have a moment, tell us what was wrong — "
                 "or just close this window.")),
        InputBlock(block_id=REASON_BLOCK, label="What was wrong with the answer?", element=RadioButtonsElement(
            action_id=REASON_ACTION,
            options=[Option(value=reason, text=PlainTextObject(text=reason_label(reason))) for reason in REASONS])),
        InputBlock(block_id=COMMENT_BLOCK, label="Anything else? (optional)", optional=True,
                   element=PlainTextInputElement(action_id=COMMENT_ACTION, multiline=True, max_length=COMMENT_LIMIT,
                                                 placeholder="e.g. which document or rule should it have used")),
    ], close="Skip", submit="Send", callback_id=REASON_VIEW, private_metadata=answer_id)


def reason_thanks(reason: str, comment: str | None) -> dict:
    said = f"Reason: *{escape(reason_label(reason))}*"
    if comment:
        said += "\n>" + cut(escape(comment), 2000).replace("\n", "\n>")
    return modal("Thanks for the feedback", [
        SectionBlock(text=MarkdownTextObject(
            text=":white_check_mark: Thanks — your reason is recorded with your vote. "
                 "The people who look after the knowledge base review answers marked this way.")),
        ContextBlock(elements=[MarkdownTextObject(text=said)]),
    ])


def notice_modal(title: str, text: str) -> dict:
    return modal(title, [SectionBlock(text=MarkdownTextObject(text=cut(text, SECTION_LIMIT)))])
