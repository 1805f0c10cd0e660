"""Helpers shared by the benchmark scripts: machine description, repeated timing, result files."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
# BENCH_DATASETS: another folder laid out like ../shared/datasets (e.g. a slice of lawref, kept outside the
# project) when the whole set would take too long to embed on the machine at hand.
DATASETS = Path(os.environ.get("BENCH_DATASETS") or PROJECT.parent / "shared" / "datasets")
LAWREF = DATASETS / "lawref"
RESULTS = PROJECT / "benchmarks" / "results"


def machine() -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_gb, 1),
        "python": platform.python_version(),
        "os": platform.platform(),
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
    }


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered), 3), "p95_ms": round(pick(0.95), 3),
            "p99_ms": round(pick(0.99), 3), "n": len(ordered)}


def repeat(fn: Callable[[], object], runs: int) -> tuple[list[float], list[object]]:
    seconds, results = [], []
    for _ in range(runs):
        began = time.perf_counter()
        results.append(fn())
        seconds.append(time.perf_counter() - began)
    return seconds, results


def save(name: str, data: dict[str, object]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(), **data}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(PROJECT)}")
    return path


def cli(args: list[str], data_dir: Path, timed: bool = False,
        extra_env: dict[str, str] | None = None) -> tuple[dict, dict[str, float]]:
    """Run `ai-employee … --json` in a child process; with `timed`, also its wall time and peak RSS."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIE_")} | {"AIE_DATA_DIR": str(data_dir)}
    env |= extra_env or {}
    cmd = [str(PROJECT / ".venv" / "bin" / "ai-employee"), *args, "--json"]
    if timed:
        cmd = ["/usr/bin/time", "-f", "__TIME__ %e %M", *cmd]
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    stats = {"wall_s": round(wall, 2)}
    for line in done.stderr.splitlines():
        if line.startswith("__TIME__"):
            _, elapsed, max_kb = line.split()
            stats = {"wall_s": float(elapsed), "peak_rss_mb": round(int(max_kb) / 1024, 1)}
    return json.loads(done.stdout), stats


def seeded_settings(settings, dataset: Path):
    """`settings` for an index of `dataset`: lawref's is read by its passages' vectors alone unless
    AIE_SENTENCE_SEARCH says otherwise. Its seeded vectors (lawref/embeddings) are the passages', not their
    sentences', and embedding its 155,187 sentences takes about 1.5 hours on two cores (BENCHMARKS.md, dense
    search by sentence)."""
    if "AIE_SENTENCE_SEARCH" in os.environ or not Path(dataset).resolve().is_relative_to(LAWREF.resolve()):
        return settings
    return settings.model_copy(update={"sentence_search": False})
