"""The web source on a 500-page site served locally (tests/fakes/website.py), delay 0.

    .venv/bin/python benchmarks/web_crawl.py [--pages 500] [--sitemap] [--repeat 3] [--no-save]

Measures a cold crawl (empty folder) and a re-sync with nothing changed: seconds (the median of `--repeat`
runs, each on a new site and folder), requests, pages written. The site's server runs in the same process
(its own thread), so its work is in the seconds too.
Pages are intranet-like (a menu, a footer, an article of five sections), each linking to the next few, so
without `--sitemap` the crawl follows links breadth-first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import save  # noqa: E402
from rag.sources.config import WebSource  # noqa: E402
from rag.sources.web import WebConnector  # noqa: E402
from tests.fakes.website import MENU, FakeWebsite, page  # noqa: E402


def publish(site: FakeWebsite, pages: int) -> None:
    for i in range(pages):
        sections = [(f"Section {i}.{s}", f"Rule {s} of policy {i}: " + "Employees follow this rule. " * 12)
                    for s in range(5)]
        links = [f"/docs/policy-{j}" for j in range(i + 1, min(pages, i + 4))]
        site.put("/docs/" if i == 0 else f"/docs/policy-{i}", page(f"Policy {i}", sections, links))


def run(pages: int, sitemap: bool) -> dict:
    with FakeWebsite(robots="User-agent: *\nDisallow: /docs/private/\n", sitemap="urlset" if sitemap else None) as site:
        publish(site, pages)
        spec = WebSource(name="bench", type="web", url=site.url + "/docs/", delay=0, max_pages=pages + len(MENU))
        conn = WebConnector(spec, env={})
        with tempfile.TemporaryDirectory() as work:
            results = {}
            state: dict = {}
            for label in ("cold", "unchanged"):
                site.hits.clear()
                started = time.perf_counter()
                fetched = conn.fetch(Path(work), state, lambda done, total, what: None)
                seconds = time.perf_counter() - started
                state = fetched.state
                results[label] = {"seconds": round(seconds, 2), "requests": fetched.calls,
                                  "documents": len(fetched.documents), "written": len(fetched.changed),
                                  "answered_304": sum(h.status == 304 for h in site.hits)}
                print(label, results[label], flush=True)
    return {"pages": pages, "sitemap": sitemap, **results}


def repeated(pages: int, sitemap: bool, times: int) -> dict:
    runs = [run(pages, sitemap) for _ in range(times)]
    result = runs[0]
    for label in ("cold", "unchanged"):
        result[label]["seconds"] = statistics.median(r[label]["seconds"] for r in runs)
        result[label]["seconds_each"] = [r[label]["seconds"] for r in runs]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--sitemap", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    result = repeated(args.pages, args.sitemap, args.repeat)
    if not args.no_save:
        save("web_crawl_sitemap" if args.sitemap else "web_crawl", result)


if __name__ == "__main__":
    main()
