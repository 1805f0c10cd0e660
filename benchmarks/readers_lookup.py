"""Naming the readers of a wiki's restricted pages on Slack and Teams (rag.sources.readers): the lookups
a sync makes for 1,000 restricted pages, cold and with the answers kept, against the local Slack Web API and
the local Microsoft Graph of the tests (real HTTP on localhost).

    .venv/bin/python benchmarks/readers_lookup.py [--pages 1000] [--people 100] [--groups 10] [--unknown 10]

Each page is restricted to one person and one group; `--unknown` of the people have no Slack or Entra
account (asked again after the ten minutes a "no one" answer is kept). Results:
benchmarks/results/readers_lookup.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import save  # noqa: E402
from rag.index.metadata import DocumentMeta  # noqa: E402
from rag.sources.people import EntraPeople, SlackPeople  # noqa: E402
from rag.sources.readers import ReaderResolver, ResolutionCache  # noqa: E402
from tests.fakes.graph import TOKEN, FakeGraph  # noqa: E402
from tests.fakes.slack_api import SlackApiServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--unknown", type=int, default=10)
    args = parser.parse_args()
    known = range(args.people - args.unknown)
    pages = {f"ENG/{n}.md": DocumentMeta(access=(f"email:p{n % args.people}@example.com",
                                                 f"group:g{n % args.groups}")) for n in range(args.pages)}
    slack_users = {f"U{i:05d}": {"email": f"p{i}@example.com"} for i in known}
    entra = FakeGraph(people={f"p{i}@example.com": f"0000{i:04d}-0000-4000-8000-000000000000" for i in known},
                      groups={f"g{g}": f"9000{g:04d}-0000-4000-8000-000000000000" for g in range(args.groups)})
    with SlackApiServer(users=slack_users) as slack, entra as graph, tempfile.TemporaryDirectory() as folder:
        for g in range(args.groups):
            slack.add_usergroup(f"S{g:05d}", [], handle=f"g{g}")
        clock = [time.time()]

        def sync() -> dict:
            resolver = ReaderResolver([SlackPeople("xoxb-bench", api_url=slack.base_url),
                                       EntraPeople(lambda: TOKEN, graph_url=graph.url)],
                                      ResolutionCache(Path(folder) / "readers.json", clock=lambda: clock[0]))
            slack_before, graph_before = len(slack.calls), len(graph.calls)
            began = time.perf_counter()
            resolver.resolve("bench", pages)
            return {"seconds": round(time.perf_counter() - began, 3), "slack_calls": len(slack.calls) - slack_before,
                    "graph_calls": len(graph.calls) - graph_before}

        cold, kept = sync(), sync()
        clock[0] += 601  # the "no one" answers have expired, the ids found are kept
        misses = sync()
    results = {"pages": args.pages, "people": args.people, "groups": args.groups, "unknown": args.unknown,
               "cold": cold, "kept": kept, "after_ten_minutes": misses}
    for key in ("cold", "kept", "after_ten_minutes"):
        print(f"{key:>18}: {results[key]}")
    save("readers_lookup", results)


if __name__ == "__main__":
    main()
