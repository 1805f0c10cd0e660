"""Two replicas vs one: answered questions per second, sustained, with the model stand-in.

    .venv/bin/python benchmarks/replicas.py [--questions 40] [--runs 3]

Each replica is a real `ai-employee serve` process; they share one data directory and one redis-server
(started here on a free port). A burst of distinct Slack mentions (no cache hits) is spread round-robin
over the replicas, as a load balancer would; throughput = questions / (first event sent → last finished
answer posted to the local Slack API). Two stand-ins: an instant model (the bot's own CPU work is the
limit) and one that takes ~1 s per answer like a small served model (the answer slots are the limit), and
one replica with as many answer slots (AIE_MAX_CONCURRENT_ANSWERS) as the two together, for comparison.
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
from benchmarks.bot_overhead import QUESTIONS, REPLY, mention  # noqa: E402
from benchmarks.common import PROJECT, save  # noqa: E402
from rag.config import Settings  # noqa: E402
from tests.bot.harness import wait_for  # noqa: E402
from tests.bot.replicas import Replica, replica_env  # noqa: E402
from tests.bot.test_bot import final_answers  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.slack_api import SlackApiServer  # noqa: E402
from tests.processes import RedisProcess, free_port  # noqa: E402

MODELS = {"instant": (0.0, 0.0), "1s": (0.3, 0.025)}  # first-token delay, per-piece delay (30 pieces)


def burst(replicas: list[Replica], slack: SlackApiServer, questions: int, tag: str) -> float:
    """Questions per second for one burst spread over `replicas`."""
    slack.clear_calls()
    events = [mention(slack, f"{QUESTIONS[n % len(QUESTIONS)]} ({tag}-{n})") for n in range(questions)]
    started = time.time()  # the local Slack API stamps its calls with time.time()
    with ThreadPoolExecutor(max_workers=16) as pool:
        # Delivery ids unique across replicas: the same id twice is one delivery (shared de-duplication).
        list(pool.map(lambda n: replicas[n % len(replicas)].event(events[n], event_id=f"Ev{tag}-{n}"),
                      range(questions)))
    wait_for(lambda: len(final_answers(slack)) >= questions, timeout=600, interval=0.05)
    last = max(call.time for call in final_answers(slack))
    return questions / (last - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    redis = RedisProcess(free_port())
    redis.start()
    results: dict[str, dict] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp, SlackApiServer() as slack, FakeOpenAIServer() as model:
            work = Path(tmp)
            KnowledgeBase.default(Settings(data_dir=work / "data", _env_file=None)).refresh(
                [PROJECT / "examples" / "handbook"])
            model.script.chat_reply, model.script.chat_pieces = REPLY, 30
            env = replica_env(work / "data", slack.base_url, redis.url, gate_threshold="0.0", log_level="WARNING",
                              answer_base_url=model.base_url, answer_model="stand-in")
            for name, (delay, piece_delay) in MODELS.items():
                model.script.delay, model.script.piece_delay = delay, piece_delay
                for count, slots in ((1, 4), (2, 4), (1, 8)):  # 1 × 8: as many answer slots as 2 × 4
                    slots_env = {**env, "AIE_MAX_CONCURRENT_ANSWERS": str(slots)}
                    replicas = [Replica(f"r{n}", slots_env, work) for n in range(count)]
                    try:
                        tag = f"{name}-{count}x{slots}"  # delivery ids unique in the shared Redis
                        burst(replicas, slack, 8, f"warm-{tag}")  # load the index and the embedder
                        qps = [burst(replicas, slack, args.questions, f"{tag}-{run}")
                               for run in range(args.runs)]
                    finally:
                        for replica in replicas:
                            replica.stop()
                    key = f"{name}_model_{count}_replica{'s' if count > 1 else ''}_{slots}_slots"
                    results[key] = {"qps_median": round(statistics.median(qps), 2),
                                    "qps_runs": [round(q, 2) for q in qps]}
                    print(key, results[key], flush=True)
    finally:
        redis.stop()
    save("replicas", {"questions_per_run": args.questions, "runs": args.runs, **results})


if __name__ == "__main__":
    main()
