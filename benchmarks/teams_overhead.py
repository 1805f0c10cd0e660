"""Teams bot overhead with a fast local model stand-in, over real HTTP against the local Bot Connector.

    .venv/bin/python benchmarks/teams_overhead.py [--questions 30] [--burst 20] [--piece-delay 0.03] [--no-save]

Measures, over the sample handbook on the embedded default, in personal chats (where answers stream):
  * HTTP ack of single activities, and of `--burst` activities sent at once (Teams wants an answer in time,
    and redelivers otherwise);
  * activity received → first outgoing call (the "Searching the knowledge base…" update), and → first
    streamed text;
  * model token → streamed chunk out: from the stand-in sending a piece to the connector call whose
    (cumulative) text first carries it. Teams' streaming goes at the SDK's pace — one update a second —
    so this is mostly that interval, not our code. The stand-in (the Slack benchmark's reply, in 60 pieces)
    sends a piece every `--piece-delay` seconds, as a served model would: sent all at once, the whole reply
    would land in the final message and there would be no streamed chunk to time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from bisect import bisect_left
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import PROJECT, percentiles, save  # noqa: E402
from bot.teams.config import TeamsSettings  # noqa: E402
from rag.config import Settings  # noqa: E402
from tests.bot.harness import start_bot, wait_for  # noqa: E402
from tests.bot.teams_ui import activity, post  # noqa: E402
from tests.fakes.bot_connector import BotConnector, ConnectorCall  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

QUESTIONS = ["How long must a password be?", "出差吃饭能报多少?", "When are the offices open?",
             "How much can I spend on a hotel in Paris?", "What do I do if I lose my laptop?"]
REPLY = "Passwords must be at least 14 characters long [1]. They are stored only in the password manager [1]. " * 3


def chunk_latencies(calls: list[ConnectorCall], sent: list[tuple[float, str]]) -> list[float]:
    """For each streamed update, the time since the stand-in sent the last piece of text it newly carries
    (an update's text is the whole answer so far)."""
    ends = list(accumulate(len(piece) for _, piece in sent))  # text length once each piece was sent
    updates = [c for c in sorted(calls, key=lambda c: c.time)
               if (c.stream_info or {}).get("streamType") in ("streaming", "final")]
    latencies, shown = [], 0
    for update in updates:
        piece = bisect_left(ends, len(update.text))
        if len(update.text) > shown and piece < len(sent):
            latencies.append((update.time - sent[piece][0]) * 1000)
        shown = max(shown, len(update.text))
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--piece-delay", type=float, default=0.03, help="seconds between the stand-in's pieces")
    parser.add_argument("--no-save", action="store_true", help="print the results only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, BotConnector() as connector, FakeOpenAIServer() as model:
        data = Path(tmp)
        KnowledgeBase(Settings(data_dir=data, _env_file=None), data / "index").refresh([PROJECT / "examples" / "handbook"])
        model.script.chat_reply, model.script.chat_pieces, model.script.piece_delay = REPLY, 60, args.piece_delay
        teams = TeamsSettings(_env_file=None, anonymous_allowed=True)
        bot = start_bot(data, data / "index", None, teams=teams, gate_threshold=0.0, answer_base_url=model.base_url,
                        answer_model="stand-in")
        try:
            acks, first_call, first_text, token_to_chunk = [], [], [], []
            for n in range(args.questions):
                chat = f"a:bench-{n}"
                model.script.sent.clear()
                received = time.time()
                began = time.perf_counter()
                post(bot, activity(connector, QUESTIONS[n % len(QUESTIONS)] + f" ({n})", conversation=chat))
                acks.append((time.perf_counter() - began) * 1000)
                wait_for(lambda: connector.final_messages(chat), timeout=60, interval=0.005)
                calls = connector.calls_to(chat)
                first_call.append((calls[0].time - received) * 1000)
                texts = [c for c in calls if c.text and (c.stream_info or {}).get("streamType") != "informative"]
                first_text.append((texts[0].time - received) * 1000)
                token_to_chunk.extend(chunk_latencies(calls, list(model.script.sent)))
            chats = [f"a:burst-{n}" for n in range(args.burst)]

            def send(n: int) -> float:
                began = time.perf_counter()
                post(bot, activity(connector, QUESTIONS[n % len(QUESTIONS)] + f" [{n}]", conversation=chats[n]))
                return (time.perf_counter() - began) * 1000

            with ThreadPoolExecutor(max_workers=args.burst) as pool:
                burst = list(pool.map(send, range(args.burst)))
            wait_for(lambda: all(connector.final_messages(c) for c in chats), timeout=900, interval=0.2)
        finally:
            bot.stop()
    samples = {"ack_single": acks, "activity_to_first_connector_call": first_call,
               "activity_to_first_streamed_text": first_text, "model_token_to_streamed_chunk": token_to_chunk,
               "ack_under_burst": burst}
    results: dict[str, object] = {"questions": args.questions}
    results.update((name, percentiles(values)) for name, values in samples.items())
    results["ack_under_burst"] |= {"max_ms": round(max(burst), 1), "activities": len(burst)}
    print(json.dumps(results, indent=1, ensure_ascii=False))
    if not args.no_save:
        save("teams_overhead", results)


if __name__ == "__main__":
    main()
