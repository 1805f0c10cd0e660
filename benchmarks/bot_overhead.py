"""Slack bot overhead with a fast local model stand-in, over real HTTP against the local Slack API server.

    .venv/bin/python benchmarks/bot_overhead.py [--questions 30] [--concurrent 50]

Measures, over the sample handbook on the embedded default:
  * ack latency of single events and of 50 events sent at once (Slack wants < 3 s);
  * event received → first Slack call for the answer (chat.startStream), which includes retrieval and
    the stand-in model's first token (reported next to the pipeline's own time before the model);
  * model token → Slack append: from the stand-in sending a piece to the chat.appendStream call carrying it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import PROJECT, percentiles, save  # noqa: E402
from rag.config import Settings  # noqa: E402
from tests.bot.harness import BOT_USER, TEAM, start_bot, wait_for  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.slack_api import SlackApiServer  # noqa: E402

QUESTIONS = ["How long must a password be?", "出差吃饭能报多少?", "When are the offices open?",
             "How much can I spend on a hotel in Paris?", "What do I do if I lose my laptop?"]
REPLY = "Passwords must be at least 14 characters long [1]. They are stored only in the password manager [1]. " * 3


def mention(slack: SlackApiServer, text: str) -> dict:
    ts = slack.seed_message("C0BENCH01", f"<@{BOT_USER}> {text}", user="U0PLAIN01")
    return {"type": "app_mention", "user": "U0PLAIN01", "text": f"<@{BOT_USER}> {text}", "ts": ts,
            "channel": "C0BENCH01", "event_ts": ts, "team": TEAM}


def append_latencies(slack: SlackApiServer, sent: list[tuple[float, str]]) -> list[float]:
    """For each streaming call, the time since the stand-in sent the last piece of text it carries."""
    cumulative, total = [], 0
    for at, piece in sent:
        total += len(piece)
        cumulative.append((total, at))
    calls = sorted(slack.calls_to("chat.startStream") + slack.calls_to("chat.appendStream")
                   + slack.calls_to("chat.stopStream"), key=lambda c: c.time)
    shown, latencies = 0, []
    for call in calls:
        carried = (call.args.get("markdown_text") or "") + "".join(
            c.get("text", "") for c in call.args.get("chunks") or [])
        if not carried:
            continue
        shown += len(carried)
        at = next((t for length, t in cumulative if length >= shown), None)
        if at is not None:
            latencies.append((call.time - at) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--concurrent", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, SlackApiServer() as slack, FakeOpenAIServer() as model:
        data = Path(tmp)
        KnowledgeBase(Settings(data_dir=data, _env_file=None), data / "index").refresh([PROJECT / "examples" / "handbook"])
        model.script.chat_reply, model.script.chat_pieces = REPLY, 60
        bot = start_bot(data, data / "index", slack.base_url, gate_threshold=0.0,
                        answer_base_url=model.base_url, answer_model="stand-in")
        try:
            acks, first_call, token_to_append = [], [], []
            for n in range(args.questions):
                slack.clear_calls()
                model.script.sent.clear()
                event = mention(slack, QUESTIONS[n % len(QUESTIONS)] + f" ({n})")
                sent = time.time()
                began = time.perf_counter()
                bot.event(event)
                acks.append((time.perf_counter() - began) * 1000)
                wait_for(lambda: slack.calls_to("chat.update"), timeout=60, interval=0.005)
                start = slack.calls_to("chat.startStream")[0]
                first_call.append((start.time - sent) * 1000)
                token_to_append.extend(append_latencies(slack, list(model.script.sent)))
            slack.clear_calls()
            events = [mention(slack, QUESTIONS[n % len(QUESTIONS)] + f" [{n}]") for n in range(args.concurrent)]

            def send(event: dict) -> float:
                began = time.perf_counter()
                bot.event(event)
                return (time.perf_counter() - began) * 1000

            with ThreadPoolExecutor(max_workers=args.concurrent) as pool:
                burst = list(pool.map(send, events))
            wait_for(lambda: len(slack.calls_to("chat.update")) >= args.concurrent, timeout=900, interval=0.2)
        finally:
            bot.stop()
    results = {
        "questions": args.questions,
        "ack_single": percentiles(acks),
        "event_to_first_slack_call": percentiles(first_call),
        "model_token_to_slack_append": percentiles(token_to_append),
        "ack_under_concurrency": {**percentiles(burst), "max_ms": round(max(burst), 1), "events": len(burst)},
    }
    for key, value in results.items():
        print(key, value)
    save("bot_overhead", results)


if __name__ == "__main__":
    main()
