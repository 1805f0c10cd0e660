"""The bot's Prometheus metrics, all in one registry per process (served on /metrics).

Counted where the chat-neutral core sees them, so each platform is counted once: questions, refusals and
answer errors by the answerer, votes by the feedback store, reindexes by the reindexer. The cache and the
index are read when scraped. `prometheus_client` is imported only when a bot is built (not by the CLI).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from cache import Cache
    from rag.sources.sync import SyncReport
    from rag.sources.table import SourceRow
    from rag.types import Answer

# The stages users wait for, as Answer.timings_ms names them.
STAGES = {"rewrite": "rewrite", "retrieval": "retrieve", "rerank": "rerank", "first_token": "first_token",
          "total": "total"}
SECONDS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
REINDEX_SECONDS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
ACK_SECONDS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0)  # Slack retries after 3 s


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.questions = Counter("aie_questions", "Questions received, by platform.", ["platform"], registry=r)
        self.refusals = Counter("aie_refusals", "Answers that refused: no evidence in the documents.", ["platform"],
                                registry=r)
        self.errors = Counter("aie_answer_errors", "Answers that failed or degraded, by kind "
                              "(failed, no_index, too_long, unfinished, or <model role>:<failure>).", ["kind"],
                              registry=r)
        self.latency = Histogram("aie_stage_seconds", "Time spent per answering stage (first_token and total "
                                 "from the question's arrival).", ["stage"], buckets=SECONDS, registry=r)
        self.votes = Counter("aie_votes", "Votes recorded, by target (answer or citation) and value.",
                             ["target", "value"], registry=r)
        self.acks = Histogram("aie_slack_ack_seconds", "Time the Slack handler took to acknowledge an event "
                              "(on the event loop's clock, from the request's headers reaching it: "
                              "a body that trails them counts).", buckets=ACK_SECONDS,
                              registry=r)
        self.reindexes = Histogram("aie_reindex_seconds", "Duration of reindexes run by this process, by result.",
                                   ["result"], buckets=REINDEX_SECONDS, registry=r)
        self.source_syncs = Histogram("aie_source_sync_seconds", "Duration of each source's fetch in the syncs "
                                      "this process ran, by source and result.", ["source", "result"],
                                      buckets=REINDEX_SECONDS, registry=r)

    def observe(self, cache: Cache, index: Callable[[], tuple[str, int] | None]) -> None:
        """Report the cache's hit ratio and the served index (version, passages) at each scrape."""
        self.registry.register(_Scraped(cache, index))

    def answered(self, answer: Answer, platform: str) -> None:
        self.questions.labels(platform).inc()
        if answer.refused:
            self.refusals.labels(platform).inc()
        for kind in answer.failures:
            self.errors.labels(kind).inc()
        for stage, name in STAGES.items():
            if name in answer.timings_ms:
                self.latency.labels(stage).observe(answer.timings_ms[name] / 1000)

    def failed(self, kind: str, platform: str) -> None:
        """A question that got no answer (`kind`: failed, no_index, too_long) or whose answer was not shown."""
        if kind != "unfinished":
            self.questions.labels(platform).inc()
        self.errors.labels(kind).inc()

    def voted(self, target: str, value: int) -> None:
        kind = "citation" if target.startswith("citation:") else target
        self.votes.labels(kind, "up" if value > 0 else "down").inc()

    def acked(self, seconds: float) -> None:
        self.acks.observe(seconds)

    def reindexed(self, seconds: float, ok: bool) -> None:
        self.reindexes.labels("ok" if ok else "failed").observe(seconds)

    def synced(self, report: SyncReport | None) -> None:
        for name, outcome in (report.sources.items() if report is not None else ()):
            if not outcome.busy:  # another run was syncing it: it observes it
                self.source_syncs.labels(name, "ok" if outcome.ok else "failed").observe(outcome.seconds)

    def observe_sources(self, rows: Callable[[], list[SourceRow]]) -> None:
        """Report each declared source's documents, last good sync and failures at each scrape."""
        self.registry.register(_Sources(rows))

    def exposition(self) -> tuple[bytes, str]:
        """The text format and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Scraped:
    def __init__(self, cache: Cache, index: Callable[[], tuple[str, int] | None]) -> None:
        self.cache, self.index = cache, index

    def describe(self) -> list[Metric]:
        return []  # collected at scrape time only

    def collect(self) -> Iterator[Metric]:
        stats = self.cache.stats.counts()["namespaces"]
        lookups = CounterMetricFamily("aie_cache_lookups", "Answer-cache lookups by namespace and result.",
                                      labels=["namespace", "result"])
        ratio = GaugeMetricFamily("aie_cache_hit_ratio", "Answer-cache hits / lookups since start, by namespace.",
                                  labels=["namespace"])
        for namespace, counts in stats.items():
            lookups.add_metric([namespace, "hit"], counts["hits"])
            lookups.add_metric([namespace, "miss"], counts["misses"])
            total = counts["hits"] + counts["misses"]
            ratio.add_metric([namespace], counts["hits"] / total if total else 0.0)
        yield lookups
        yield ratio
        served = self.index()
        info = GaugeMetricFamily("aie_index_info", "The index version this process serves (value 1).",
                                 labels=["version"])
        passages = GaugeMetricFamily("aie_index_passages", "Passages in the index this process serves.")
        if served is not None:
            info.add_metric([served[0]], 1)
            passages.add_metric([], served[1])
        yield info
        yield passages


class _Sources:
    def __init__(self, rows: Callable[[], list[SourceRow]]) -> None:
        self.rows = rows

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        documents = GaugeMetricFamily("aie_source_documents", "Documents of each source in the live index.",
                                      labels=["source"])
        success = GaugeMetricFamily("aie_source_last_success_timestamp_seconds", "When each source last synced "
                                    "well (epoch seconds; absent: never).", labels=["source"])
        failures = GaugeMetricFamily("aie_source_failures", "Failed syncs of each source since its last good one.",
                                     labels=["source"])
        for row in self.rows():
            documents.add_metric([row.name], row.documents)
            failures.add_metric([row.name], row.failures)
            if row.last_success_at is not None:
                success.add_metric([row.name], row.last_success_at)
        yield documents
        yield success
        yield failures
