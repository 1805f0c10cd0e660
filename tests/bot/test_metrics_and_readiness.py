"""What an operator's Prometheus scrapes from /metrics after real questions, and /ready going from false to true."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.bot.harness import start_bot, wait_for
from tests.bot.slack.test_bot import final_answers, mention
from tests.conftest import HANDBOOK, build
from tests.processes import free_port


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """Every sample, keyed by name and sorted labels, parsed by the client library's own parser."""
    response = httpx.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text) for s in family.samples}


def test_metrics_count_questions_refusals_votes_and_time_each_stage(bot, slack):
    assert ("aie_questions_total", (("platform", "slack"),)) not in scrape(bot.url)
    bot.event(mention(slack, "How long must a password be?"))
    answered = wait_for(lambda: final_answers(slack))[0]
    bot.event(mention(slack, "What is the airspeed velocity of an unladen swallow?"))
    wait_for(lambda: len(final_answers(slack)) == 2)
    feedback = next(b for b in answered.args["blocks"] if b["type"] == "context_actions")["elements"][0]
    answer_id = feedback["positive_button"]["value"].split(":", 1)[1]
    bot.services.feedback.vote(answer_id, "U0PLAIN01", "answer", 1, "C0GENERAL")
    bot.services.feedback.vote(answer_id, "U0PLAIN01", "citation:1", -1, "C0GENERAL")

    samples = scrape(bot.url)
    assert samples[("aie_questions_total", (("platform", "slack"),))] == 2
    assert samples[("aie_refusals_total", (("platform", "slack"),))] == 1
    for stage, count in (("retrieval", 2), ("total", 2), ("first_token", 1)):  # a refusal streams no answer
        assert samples[("aie_stage_seconds_count", (("stage", stage),))] == count, stage
        assert samples[("aie_stage_seconds_sum", (("stage", stage),))] > 0, stage
    assert ("aie_stage_seconds_count", (("stage", "rewrite"),)) not in samples  # no rewriter configured
    assert samples[("aie_votes_total", (("target", "answer"), ("value", "up")))] == 1
    assert samples[("aie_votes_total", (("target", "citation"), ("value", "down")))] == 1
    version = bot.kb.store.current_version()
    assert samples[("aie_index_info", (("version", version),))] == 1
    assert samples[("aie_index_passages", ())] == bot.kb.store.current_manifest().chunk_count
    lookups = samples[("aie_cache_lookups_total", (("namespace", "candidates"), ("result", "miss")))]
    assert lookups >= 2 and 0 <= samples[("aie_cache_hit_ratio", (("namespace", "candidates"),))] <= 1
    assert not [key for key in samples if key[0] == "aie_answer_errors_total"]


def test_an_answer_that_fails_is_counted_by_kind(bot, slack):
    bot.event(mention(slack, "x" * 2500))  # over the length limit: the user is told, the operator sees it
    wait_for(lambda: slack.calls_to("chat.postMessage") + slack.calls_to("chat.update"))
    samples = wait_for(lambda: (s := scrape(bot.url)).get(("aie_answer_errors_total", (("kind", "too_long"),)))
                       and s)
    assert samples[("aie_questions_total", (("platform", "slack"),))] == 1


def test_ready_is_false_until_an_index_is_built_then_true_without_a_question(slack, shared_data_dir, tmp_path):
    index_dir = tmp_path / "index"
    bot = start_bot(shared_data_dir, index_dir, slack.base_url, feedback_db=tmp_path / "f.sqlite3")
    try:
        assert httpx.get(f"{bot.url}/health", timeout=10).status_code == 200  # alive, though not ready
        response = httpx.get(f"{bot.url}/ready", timeout=10)
        assert response.status_code == 503
        assert wait_for(lambda: httpx.get(f"{bot.url}/ready", timeout=10).json()["index"].get("reason")) == \
            "no index has been built yet"
        assert response.json()["redis"] == {"configured": False}
        build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [HANDBOOK])
        ready = wait_for(lambda: (r := httpx.get(f"{bot.url}/ready", timeout=10)).status_code == 200 and r, 30)
        body = ready.json()
        assert body["ready"] is True and body["index"]["loaded"] is True
        assert body["index"]["version"] == bot.kb.store.current_version()
    finally:
        bot.stop()


def test_ready_is_false_while_the_configured_redis_cannot_be_reached(handbook_index, slack, tmp_path):
    data_dir, index_dir = handbook_index
    bot = start_bot(data_dir, index_dir, slack.base_url, feedback_db=tmp_path / "f.sqlite3",
                    redis_url=f"redis://:s3cret@127.0.0.1:{free_port()}/0")
    try:
        response = wait_for(lambda: (r := httpx.get(f"{bot.url}/ready", timeout=10)).json()["index"]["loaded"] and r)
        assert response.status_code == 503
        assert response.json()["redis"] == {"configured": True, "reachable": False}
        assert "s3cret" not in response.text
    finally:
        bot.stop()
