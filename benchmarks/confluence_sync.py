"""The Confluence connector syncing a 1,000-page space from the local Confluence of the tests
(tests/fakes/confluence.py, real HTTP on localhost): cold, again with nothing changed, and with 10 pages
edited — seconds, API calls, documents handed to the indexer as changed (what it embeds again).

    .venv/bin/python benchmarks/confluence_sync.py [--pages 1000] [--edited 10] [--limit 100] [--batch 25]

The pages form a tree (10 sections of 99 pages under one home page), each about 2 kB of storage format with
headings, a table and a macro; every 20th page has a PDF attachment. `--limit` is the most results the server
gives per call (Cloud caps listings with expansions; 25 to 100 is typical). Results:
benchmarks/results/confluence_sync_limit<limit>.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import save  # noqa: E402
from rag.sources.config import ConfluenceSource  # noqa: E402
from rag.sources.confluence import ConfluenceConnector  # noqa: E402
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence  # noqa: E402

BODY = ("<h2>Purpose</h2><p>{title} explains how the team handles {topic}.</p>"
        "<ac:structured-macro ac:name=\"info\"><ac:rich-text-body><p>Ask in #help when unsure.</p>"
        "</ac:rich-text-body></ac:structured-macro>"
        "<h2>Steps</h2><ol>" + "<li>A step of the {topic} procedure, with the details it needs.</li>" * 8 +
        "</ol><h2>Contacts</h2><table><tbody><tr><th>Role</th><th>Who</th></tr>"
        "<tr><td>Owner</td><td>Team {section}</td></tr><tr><td>Backup</td><td>On call</td></tr>"
        "</tbody></table>"
        "<p>" + "Further notes on {topic} that a reader may need. " * 12 + "</p>")


def build(server: FakeConfluence, pages: int) -> None:
    server.add_page("ENG", "1", "Engineering", "<p>Home.</p>")
    for n in range(2, pages + 1):
        section = (n - 2) // 99
        parent = "1" if (n - 2) % 99 == 0 else str(2 + section * 99)
        title = f"Page {n}"
        server.add_page("ENG", str(n), title, BODY.format(title=title, topic=f"topic {n}", section=section),
                        parent=parent)
        if n % 20 == 0:
            server.attach(str(n), f"att{n}", f"guide {n}.pdf", b"%PDF-1.4 " + b"x" * 20_000)


def run(connector: ConfluenceConnector, server: FakeConfluence, workdir: Path,
        state: dict) -> tuple[dict, dict]:
    server.calls.clear()
    began = time.perf_counter()
    fetched = connector.fetch(workdir, state, lambda *_: None)
    seconds = time.perf_counter() - began
    return {"seconds": round(seconds, 3), "calls": fetched.calls, "changed": len(fetched.changed),
            "removed": len(fetched.removed), "documents": len(fetched.documents)}, fetched.state


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--edited", type=int, default=10)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--batch", type=int, default=25)
    args = parser.parse_args()
    server = FakeConfluence(max_limit=args.limit)
    build(server, args.pages)
    with server, tempfile.TemporaryDirectory() as folder:
        spec = ConfluenceSource(name="bench", type="confluence", url=server.url, spaces=["ENG"],
                                user_env="CONFLUENCE_USER", token_env="CONFLUENCE_TOKEN")
        connector = ConfluenceConnector(spec, {"CONFLUENCE_USER": EMAIL, "CONFLUENCE_TOKEN": TOKEN},
                                        page_size=args.limit, batch=args.batch)
        cold, state = run(connector, server, Path(folder), {})
        unchanged, state = run(connector, server, Path(folder), state)
        for n in range(2, args.pages + 1, max(1, (args.pages - 1) // args.edited))[:args.edited]:
            server.edit(str(n), BODY.format(title=f"Page {n}", topic=f"topic {n} revised", section=0))
        edited, state = run(connector, server, Path(folder), state)
    results = {"pages": args.pages, "attachments": len(server.attachments), "server_limit": args.limit,
               "batch": args.batch, "cold": cold, "unchanged": unchanged, f"{args.edited}_edited": edited}
    for key in ("cold", "unchanged", f"{args.edited}_edited"):
        print(f"{key:>10}: {results[key]}")
    save(f"confluence_sync_limit{args.limit}", results)


if __name__ == "__main__":
    main()
