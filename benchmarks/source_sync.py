"""Whole syncs through the real index (connector, parse, embed on the embedded default, publish), as
`ai-employee sources sync` runs them:

- a 1,000-page Confluence space from the local Confluence of the tests (real HTTP on localhost): cold,
  again with nothing changed, and with 10 pages edited — seconds, API calls, passages embedded;
- freshness of a git source: a commit pushed to a bare repository, then the sync a 1-minute schedule runs —
  seconds until the new text is what search returns (the schedule adds up to its interval before that);
- freshness of a watched folder: `serve`'s own scheduler (bot.core.schedule) running, a file saved — seconds
  until search returns its text.

    .venv/bin/python benchmarks/source_sync.py [--pages 1000] [--edited 10] [--skip-confluence] [--skip-git]
                                               [--skip-watch]

Results: benchmarks/results/source_sync.json. A fresh data dir each run, so the cold sync embeds everything.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import machine, save  # noqa: E402
from benchmarks.confluence_sync import BODY, build  # noqa: E402
from rag.config import Settings  # noqa: E402
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence  # noqa: E402
from tests.fakes.git_origin import Origin  # noqa: E402


def knowledge_base(folder: Path, sources: str) -> KnowledgeBase:
    (folder / "sources.yaml").write_text("sources:\n" + sources, encoding="utf-8")
    return KnowledgeBase(Settings(data_dir=folder / "data", sources_file=folder / "sources.yaml", _env_file=None),
                         folder / "data" / "index")


def timed_sync(kb: KnowledgeBase, server: FakeConfluence | None = None) -> dict:
    if server is not None:
        server.calls.clear()
    began = time.perf_counter()
    report = kb.sync()
    seconds = time.perf_counter() - began
    outcome = next(iter(report.sources.values()))
    index = report.index
    return {"seconds": round(seconds, 2), "ok": report.ok, "calls": outcome.fetched.calls if outcome.fetched else None,
            "fetched": len(outcome.fetched.changed) if outcome.fetched else None,
            "embedded": index.embedded if index else 0, "passages": index.chunks if index else None,
            "published": bool(index and not index.up_to_date), "error": outcome.error}


def confluence(folder: Path, pages: int, edited: int) -> dict:
    os.environ.update(BENCH_WIKI_USER=EMAIL, BENCH_WIKI_TOKEN=TOKEN)
    server = FakeConfluence(max_limit=100)
    build(server, pages)
    with server:
        kb = knowledge_base(folder, f"""  - {{name: wiki, type: confluence, url: "{server.url}", spaces: [ENG],
     user_env: BENCH_WIKI_USER, token_env: BENCH_WIKI_TOKEN, collection: eng}}
""")
        cold = timed_sync(kb, server)
        print("cold", cold, flush=True)
        unchanged = timed_sync(kb, server)
        print("unchanged", unchanged, flush=True)
        for n in range(2, pages + 1, max(1, (pages - 1) // edited))[:edited]:
            server.edit(str(n), BODY.format(title=f"Page {n}", topic=f"topic {n} revised", section=0))
        changed = timed_sync(kb, server)
        print(f"{edited} edited", changed, flush=True)
    return {"pages": pages, "attachments": len(server.attachments), "cold": cold, "unchanged": unchanged,
            f"{edited}_edited": changed}


def git_freshness(folder: Path, runs: int = 5) -> dict:
    origin = Origin(folder / "server")
    origin.commit({f"runbook-{i}.md": f"# Runbook {i}\n\nStep one of procedure {i} is to page the owner.\n"
                   for i in range(50)})
    kb = knowledge_base(folder, f"""  - {{name: runbooks, type: git, url: "{origin.bare}", every: 1m}}
""")
    kb.sync()
    seconds = []
    for run in range(runs):
        code = f"ZX{run}Q{int(time.time())}"
        origin.commit({"runbook-7.md": f"# Runbook 7\n\nThe release freeze code is {code}.\n"})
        began = time.perf_counter()
        kb.sync()
        found = kb.retriever.search(f"release freeze code {code}", top_k=1)[0].chunk.text
        seconds.append(time.perf_counter() - began)
        assert code in found, found
    seconds.sort()
    return {"files": 50, "interval_seconds": 60, "runs": runs, "commit_to_searchable_after_sync_start_median":
            round(seconds[len(seconds) // 2], 3), "worst_case_with_interval": round(60 + seconds[-1], 1)}


def watched_freshness(folder: Path, runs: int = 5) -> dict:
    import asyncio

    from ai_employee.wiring import make_core
    from bot.core.schedule import SyncScheduler

    docs = folder / "handbook"
    docs.mkdir()
    for i in range(50):
        (docs / f"policy-{i}.md").write_text(f"# Policy {i}\n\nRule {i} applies to every office.\n", encoding="utf-8")
    kb = knowledge_base(folder, f"""  - {{name: handbook, type: folder, path: {docs}, watch: true}}
""")

    async def measure() -> list[float]:
        services = make_core(kb)
        scheduler = SyncScheduler(services.sources, services.reindexer, services.tellers, tick=5.0)
        task = asyncio.create_task(scheduler.run())
        while kb.store.current_version() is None or services.reindexer.running:  # the first sync, at start
            await asyncio.sleep(0.1)
        seconds = []
        for run in range(runs):
            code = f"WX{run}Q{int(time.time())}"
            began = time.perf_counter()
            (docs / f"new-{run}.md").write_text(f"# Notice {run}\n\nThe door code is {code}.\n", encoding="utf-8")
            while True:
                hits = await asyncio.to_thread(kb.retriever.search, f"door code {code}", top_k=1)
                if hits and code in hits[0].chunk.text:
                    break
                await asyncio.sleep(0.05)
            seconds.append(time.perf_counter() - began)
            await asyncio.sleep(1.0)
        scheduler.stop()
        task.cancel()
        return sorted(seconds)

    seconds = asyncio.run(measure())
    return {"files": 50, "runs": runs, "debounce_ms": 500, "saved_to_searchable_median": round(seconds[len(seconds) // 2], 2),
            "max": round(seconds[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--edited", type=int, default=10)
    parser.add_argument("--skip-confluence", action="store_true")
    parser.add_argument("--skip-git", action="store_true")
    parser.add_argument("--skip-watch", action="store_true")
    args = parser.parse_args()
    results: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory() as folder:
        if not args.skip_git:
            (Path(folder) / "git").mkdir()
            results["git"] = git_freshness(Path(folder) / "git")
            print("git", results["git"], flush=True)
        if not args.skip_watch:
            (Path(folder) / "watch").mkdir()
            results["watched_folder"] = watched_freshness(Path(folder) / "watch")
            print("watched folder", results["watched_folder"], flush=True)
        if not args.skip_confluence:
            (Path(folder) / "wiki").mkdir()
            results["confluence"] = confluence(Path(folder) / "wiki", args.pages, args.edited)
    save("source_sync" if not (args.skip_confluence or args.skip_git or args.skip_watch) else "source_sync_partial",
         results)


if __name__ == "__main__":
    main()
