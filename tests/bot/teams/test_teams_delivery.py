"""A Teams answer longer than one Teams message arrives whole: as several messages through the local Bot
Connector (which refuses a message over 40 KB), each with the citations of its own markers. A file name in
a reindex report is code that nothing in the name can end."""

from __future__ import annotations

import re

from tests.bot.harness import one_page_index, wait_for
from tests.bot.teams_ui import ADMIN, activity, answer_of, post, start_teams_bot
from tests.fakes.bot_connector import MESSAGE_BYTES
from tests.fakes.openai_server import FakeOpenAIServer

CHAT = "a:personal-chat-1"
SENTENCE = "Passwords must be at least 14 characters long and are kept in the company password manager [S1]. "


def test_a_long_teams_answer_arrives_whole_in_several_messages_with_their_citations(handbook_index, tmp_path,
                                                                                   connector):
    reply = "\n\n".join(SENTENCE * 8 for _ in range(40))  # ~31,000 characters
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces = reply, 200
        bot = start_teams_bot(handbook_index, tmp_path, answer_base_url=models.base_url, answer_model="m",
                              answer_max_tokens=12_000)
        try:
            post(bot, activity(connector, "How long must a password be?"))
            wait_for(lambda: len(connector.final_messages(CHAT)) >= 2, timeout=180)
            wait_for(lambda: "".join(m.text for m in connector.final_messages(CHAT)).count("14 characters")
                     >= reply.count("14 characters"), timeout=30)
            finals = connector.final_messages(CHAT)
            recorded = answer_of(bot, CHAT, finals[0].response["id"])
            later = answer_of(bot, CHAT, finals[-1].response["id"])
        finally:
            bot.stop()
    shown = "".join(m.text for m in finals)
    assert shown.count("14 characters") == reply.count("14 characters"), "nothing cut off"
    assert "".join(shown.split()) == "".join(recorded.answer.split()), "the answer as recorded, in order"
    assert "cut here" not in shown
    for message in finals:
        assert [c["position"] for c in message.citations] == [1] and "[1]" in message.text
        assert "password" in message.citations[0]["appearance"]["text"].lower()
        assert message.entity("https://schema.org/Message")["additionalType"] == ["AIGeneratedContent"]
        assert message.body["channelData"]["feedbackLoop"] == {"type": "custom"}
    assert later is not None and later.answer_id == recorded.answer_id, "a vote on any part finds the answer"
    streamed = [c for c in connector.calls_to(CHAT) if c.type == "typing" and c.text]
    assert all(len(c.text.encode("utf-16-le")) < MESSAGE_BYTES for c in streamed)


def test_a_teams_reindex_report_shows_a_file_name_as_code_it_cannot_break_out_of(tmp_path, connector,
                                                                               shared_data_dir):
    docs = one_page_index(tmp_path, shared_data_dir)
    (docs / "a` [Open](https:⁄⁄evil.example) **bold** `.md").write_text("# Evil\n\nJust a name.\n", encoding="utf-8")
    bot = start_teams_bot((shared_data_dir, tmp_path / "index"), tmp_path)
    try:
        post(bot, activity(connector, "reindex", conversation="a:admin-chat", user=ADMIN))
        done = wait_for(lambda: [c for c in connector.calls_to("a:admin-chat") if "Reindex finished" in c.text],
                        timeout=120)[0]
    finally:
        bot.stop()
    assert "**Added:** `aˋ [Open](https:⁄⁄evil.example) **bold** ˋ.md`" in done.text, "one code span, whole"


def test_a_teams_reindex_report_renders_skip_reasons_as_text():
    """A skip reason may carry text from the file (a parser's message): in Teams it links and tags nothing."""
    from bot.core.reindex import report_text
    from bot.teams.commands import TEAMS_STYLE
    from rag.index.builder import IndexReport

    report = IndexReport(version="v2", previous_version="v1", roots=["/docs"], files=2, added=["ok.md"],
                         skipped={"bad.docx": "corrupt DOCX: [Open](https://evil.example/x) <img src=x onerror=y> <b>bold</b>",
                                  "[x](mailto:a@evil.example).md": "unsupported file type"})
    text = report_text(report, TEAMS_STYLE)
    assert "• `bad.docx` — corrupt DOCX: Open (`evil.example`)" in text and "<img" not in text
    assert "• `[x](mailto:a@evil.example).md` — unsupported file type" in text  # a name is code, shown whole
    outside_code = re.sub(r"`[^`\n]*`", "", text)
    assert "](" not in outside_code and "<" not in outside_code and "‹b›bold‹/b›" in outside_code
