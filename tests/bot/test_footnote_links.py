"""A footnote's anchored link (rag.index.anchors) survives each surface whole: Slack's footnote and "Show
source" modal (mrkdwn `<url|text>`, where `|` and `>` would end the URL early and `&` is an entity), and
Teams' citation; a URL that is not http(s) gives the reader no link anywhere."""

from __future__ import annotations

import html
import re

from bot.slack.blocks import answer_blocks, source_modal
from bot.teams.citations import teams_citation
from rag.index.anchors import passage_url
from rag.types import Answer, Chunk, Citation

PAGE = "https://intranet.example.com/policies/travel?lang=en&view=full"
# Slack reads `<` up to the first `|` or `>` as the URL, then the text up to `>`; it decodes the entities.
_SLACK_LINK = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def chunk(url: str | None) -> Chunk:
    text = "Meals are reimbursed up to 45 EUR a day & 60 EUR in Paris, London or Zurich. A pre-approval is needed."
    return Chunk("c1", "travel.md", "Travel | policy", ("Meals",), text, 0, len(text), None, None, "", "2026-11-02",
                 url=url)


def slack_links(mrkdwn: str) -> list[tuple[str, str]]:
    """(URL, text) of each link Slack shows for `mrkdwn`."""
    return [(html.unescape(url), html.unescape(text or url)) for url, text in _SLACK_LINK.findall(mrkdwn)]


def footnote_links(cited: Chunk) -> list[tuple[str, str]]:
    answer = Answer("q", "Meals are reimbursed [1].", [Citation(1, cited)], False, "generative")
    sections = [b for b in answer_blocks(answer, "a1") if b["type"] == "section"]
    return slack_links(sections[0]["text"]["text"])


def modal_links(cited: Chunk) -> list[tuple[str, str]]:
    view = source_modal(cited, "Travel policy › Meals", title="Source")
    return [link for b in view["blocks"] if b["type"] == "section" for link in slack_links(b["text"]["text"])]


def test_slack_footnote_and_show_source_open_the_anchored_passage():
    anchored = passage_url(PAGE, "fragment", chunk(None))
    assert "%2D" in anchored and "," in anchored and "&" in anchored
    assert footnote_links(chunk(anchored)) == [(anchored, "Travel | policy")]
    assert modal_links(chunk(anchored)) == [(anchored, "Open the document")]


def test_slack_links_keep_a_url_whole_that_holds_what_would_end_it():
    odd = "https://intranet.example.com/search?q=meals|hotels&sort=>date"
    whole = "https://intranet.example.com/search?q=meals%7Chotels&sort=%3Edate"
    assert footnote_links(chunk(odd)) == [(whole, "Travel | policy")]
    assert modal_links(chunk(odd)) == [(whole, "Open the document")]


def test_a_url_that_is_not_http_is_no_link_on_slack_or_teams():
    for bad in ("javascript:alert(1)", "file:///srv/handbook/travel.md"):
        assert footnote_links(chunk(bad)) == [] and modal_links(chunk(bad)) == [], bad
        assert teams_citation(Citation(1, chunk(bad))).appearance.url is None, bad


def test_teams_citation_carries_the_anchored_url():
    anchored = passage_url(PAGE, "fragment", chunk(None))
    assert teams_citation(Citation(1, chunk(anchored))).appearance.url == anchored
    assert teams_citation(Citation(1, chunk(None))).appearance.url is None
