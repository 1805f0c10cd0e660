"""What a Slack user sees of a finished answer (bot/slack/blocks.py): the answer's text, a footnote per cited
source, the buttons and their values, and the messages the blocks are split into — within Block Kit's limits
(50 blocks a message, 3,000 characters a section, 12,000 markdown characters a message; the notification
text within chat.update's 4,000), checked by the local Slack API's own validator."""

from __future__ import annotations

import re

from bot.slack.blocks import answer_blocks, markdown_pieces, paginate, plain_summary
from rag.judging.extractive import NEAR_MISS
from rag.answering.refusal import refusal_text
from rag.types import Answer, Chunk, Citation
from tests.fakes.slack_api import block_problems

URL = "https://intranet.example.com/travel?lang=en&view=full"
ESCAPED_URL = URL.replace("&", "&amp;")  # as mrkdwn carries it
MEALS = "Meals are reimbursed up to 45 EUR a day [1]."


def chunk(title: str = "Travel policy", *, url: str | None = URL, headings: tuple[str, ...] = ("Meals",),
          page: int | None = None, page_end: int | None = None, version: str = "3") -> Chunk:
    text = "Meals are reimbursed up to 45 EUR a day."
    return Chunk("c1", "travel.md", title, headings, text, 0, len(text), page, page_end, version,
                 "2026-11-02", url=url)


def answer(text: str = MEALS, *cited: Chunk, **fields) -> Answer:
    citations = [Citation(n, c) for n, c in enumerate(cited, 1)]
    return Answer("How much for meals?", text, citations, False, "generative", **fields)


def of_type(blocks: list[dict], kind: str) -> list[dict]:
    return [b for b in blocks if b["type"] == kind]


def footnotes(blocks: list[dict]) -> list[str]:
    return [b["text"]["text"] for b in of_type(blocks, "section")]


def notes(blocks: list[dict]) -> list[str]:
    return [e["text"] for b in of_type(blocks, "context") for e in b["elements"]]


def shown(text: str) -> str:
    """The characters a reader gets, whitespace aside (pieces are cut between paragraphs)."""
    return re.sub(r"\s", "", text)


# ------------------------------------------------------------------------------------------ the answer


def test_the_answer_text_is_shown_with_slacks_control_characters_escaped():
    blocks = answer_blocks(answer("Up to 45 EUR & <b>more</b> if 2 > 1 [1].", chunk()), "a1")
    [block] = of_type(blocks, "markdown")
    assert block["text"] == "Up to 45 EUR &amp; &lt;b&gt;more&lt;/b&gt; if 2 &gt; 1 [1]."


def test_mentions_and_links_smuggled_into_the_text_reach_no_one():
    text = "Ask <!channel> or <@U0ADMIN01>, see <https://evil.example|the form>."
    [block] = of_type(answer_blocks(answer(text), None), "markdown")
    assert "<" not in block["text"]
    assert "&lt;!channel&gt;" in block["text"] and "&lt;@U0ADMIN01&gt;" in block["text"]


def test_a_quote_keeps_its_marker_at_the_start_of_a_line():
    text = NEAR_MISS["en"].format(terms='"Mars"') + "\n> Meals are reimbursed up to 45 EUR a day. [1]"
    [block] = of_type(answer_blocks(answer(text, chunk()), "a1"), "markdown")
    assert block["text"] == ('The knowledge base does not mention "Mars". The closest it has, which may not '
                             "answer your question:\n> Meals are reimbursed up to 45 EUR a day. [1]")


def test_a_refusal_shows_its_suggestions_without_footnotes_and_can_still_be_voted_on():
    suggested = chunk(url="https://evil.example/x")
    text = refusal_text("en", [suggested])
    refusal = Answer("Who won?", text, [], True, "refused", sources=[suggested])
    blocks = answer_blocks(refusal, "a9")
    assert [b["type"] for b in blocks] == ["markdown", "context_actions"]
    assert blocks[0]["text"] == ("Sorry, I could not find the answer to this in the knowledge base.\n"
                                 "You might look at:\n• Travel policy › Meals (travel.md)")


def test_degraded_service_and_unsupported_sentences_are_noted_under_the_answer():
    text = "Meals are 45 EUR [1]. Dinner is free (not found in the sources)."
    blocks = answer_blocks(answer(text, chunk(), notices=["The answer model is unavailable <here>."],
                                  uncited=["Dinner is free."]), "a1")
    assert notes(blocks) == [":warning: The answer model is unavailable &lt;here&gt;.",
                             ":grey_question: 1 sentence is not backed by any source: it is marked "
                             "“(not found in the sources)” and cites nothing."]


# ---------------------------------------------------------------------------------------- footnotes


def test_a_footnote_names_title_section_page_and_edition_and_links_the_title_to_the_source():
    [note] = footnotes(answer_blocks(answer(MEALS, chunk(page=3, page_end=4)), "a1"))
    assert note == f"*[1]* <{ESCAPED_URL}|Travel policy> › Meals, pp. 3–4 · v3 · 2026-11-02"


def test_a_source_without_an_http_url_gets_no_link():
    for url in (None, "javascript:alert(1)", "file:///srv/handbook/travel.md"):
        [note] = footnotes(answer_blocks(answer(MEALS, chunk(url=url, page=3)), "a1"))
        assert note == "*[1]* Travel policy › Meals, p. 3 · v3 · 2026-11-02", url


def test_mentions_and_links_in_a_title_are_plain_text_in_the_footnote():
    title = "Travel <!channel> & <https://evil.example/x|expenses>"
    cited = chunk(title, url=None, headings=("Meals <@U0ADMIN01>",))
    [note] = footnotes(answer_blocks(answer(MEALS, cited), None))
    assert note == ("*[1]* Travel &lt;!channel&gt; &amp; expenses (`evil.example`) › Meals &lt;@U0ADMIN01&gt;"
                    " · v3 · 2026-11-02")


def test_a_title_beginning_with_a_quote_marker_stays_the_link_text():
    [note] = footnotes(answer_blocks(answer(MEALS, chunk(">> Travel | policy")), "a1"))
    link = re.match(r"\*\[1\]\* <([^<>|]*)\|([^<>]*)>", note)
    assert link and link.group(2) == "&gt;&gt; Travel | policy", note


def test_an_untitled_source_is_still_linked():
    [note] = footnotes(answer_blocks(answer(MEALS, chunk("")), "a1"))
    assert note == f"*[1]* <{ESCAPED_URL}|Meals · v3 · 2026-11-02>"


# ------------------------------------------------------------------------------------------- buttons


def test_each_footnote_opens_its_source_and_the_answer_can_be_voted_on():
    blocks = answer_blocks(answer("Meals [1], hotels [2].", chunk(), chunk("Hotels")), "a7")
    assert [b["accessory"]["value"] for b in of_type(blocks, "section")] == ["a7:1", "a7:2"]
    assert {b["accessory"]["action_id"] for b in of_type(blocks, "section")} == {"show_source"}
    [votes] = of_type(blocks, "context_actions")[0]["elements"]
    assert (votes["positive_button"]["value"], votes["negative_button"]["value"]) == ("up:a7", "down:a7")
    assert blocks[-1]["type"] == "context_actions"


def test_an_unrecorded_answer_has_no_buttons():
    blocks = answer_blocks(answer(MEALS, chunk()), None)
    assert "accessory" not in of_type(blocks, "section")[0] and not of_type(blocks, "context_actions")


# ------------------------------------------------------------------------------------- Slack's limits


def test_a_long_answer_is_split_into_messages_within_slacks_limits_and_nothing_is_lost():
    paragraph = "Meals are reimbursed up to 45 EUR a day & 60 EUR in Paris [1]. " * 40  # ~2,600 characters
    text = "\n\n".join([paragraph] * 12)
    pages = paginate(answer_blocks(answer(text, chunk()), "a1"))
    assert len(pages) > 1 and all(block_problems(page) == [] for page in pages)
    markdown = [b["text"] for page in pages for b in of_type(page, "markdown")]
    assert shown("".join(markdown)) == shown(text.replace("&", "&amp;"))


def test_a_cut_never_falls_inside_an_entity_or_a_character():
    text = "报销&餐费<规定>🍜" * 300 + "餐" * 2986 + "&" + "🍜" * 2000  # one sentence: cut anywhere
    pieces = markdown_pieces(text, limit=3000)
    assert len(pieces) > 1 and all(len(p) <= 3000 for p in pieces)
    assert not any(re.search(r"&(?!amp;|lt;|gt;)", p) or re.match(r"[a-z]*;", p) for p in pieces)
    assert "".join(pieces) == text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_a_code_block_cut_in_two_is_closed_and_reopened():
    code = "```\n" + "\n".join(f"step {n}: submit the receipt" for n in range(900)) + "\n```"
    pieces = markdown_pieces(code)
    assert len(pieces) > 1 and all(p.startswith("```\n") and p.count("```") == 2 for p in pieces)


def test_sixty_footnotes_fill_two_messages_and_none_is_cut():
    cited = [chunk(f"Policy {n}") for n in range(60)]
    blocks = answer_blocks(answer(MEALS, *cited), "a1")
    pages = paginate(blocks)
    assert [len(page) for page in pages] == [50, len(blocks) - 50]
    assert all(block_problems(page) == [] for page in pages)
    assert [b for page in pages for b in page] == blocks, "in order, whole"
    assert footnotes(pages[1])[-1].startswith(f"*[60]* <{ESCAPED_URL}|Policy 59>")


def test_a_footnote_of_a_very_long_title_fits_a_section():
    [note] = footnotes(answer_blocks(answer(MEALS, chunk("Travel & <Expenses> " * 300)), "a1"))
    assert len(note) <= 3000 and note.endswith("…") and not re.search(r"&[a-z]*…$", note)


def test_the_notification_text_is_escaped_and_fits_an_update():
    summary = plain_summary("Meals & <lunch> " * 400)
    assert len(summary) <= 3000 < 4000 and summary.endswith("…") and "<" not in summary
    assert not re.search(r"&[a-z]*…$", summary)
    assert plain_summary("Meals & <lunch>") == "Meals &amp; &lt;lunch&gt;"
