"""Command start-up: each command run as a real process, as a user runs it.

    .venv/bin/python benchmarks/startup.py [--runs 5] [--data-dir DIR] [--before CHECKOUT]

Times `--help`, `status`, `teams-package`, `search` and `ask` (seconds to exit; for `ask` also seconds to
the first answer text on stdout) over the sample handbook, indexed once into DIR. Each command runs once
unmeasured (a warm file cache), then `--runs` times; the median is reported, with the load average around
the runs. `--before CHECKOUT` (an export of an older commit, e.g. `git archive BASE | tar -x -C DIR`) runs
the same commands from that checkout, alternating with this one run by run, so both see the same load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import PROJECT, save  # noqa: E402

QUESTION = "出差吃饭能报多少?"
APP_ID = "00000000-0000-0000-0000-000000000000"


def commands(out_dir: Path) -> dict[str, list[str]]:
    return {
        "--help": ["--help"],
        "status": ["status"],
        "teams-package": ["teams-package", "--app-id", APP_ID, "--host", "bot.example.com", "--out",
                          str(out_dir / "app.zip"), "--privacy-url", "https://example.com/privacy",
                          "--terms-url", "https://example.com/terms"],
        "search": ["search", QUESTION],
        "ask": ["ask", QUESTION],
    }


def environment(data_dir: Path) -> dict[str, str]:
    """The caller's environment without this project's settings (no Redis, no model servers): the default."""
    mine = ("AIE_", "REDIS_URL", "SLACK_", "CONNECTIONS__")
    return {k: v for k, v in os.environ.items() if not k.startswith(mine)} | {"AIE_DATA_DIR": str(data_dir)}


def run_once(checkout: Path, args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds to exit and to the first non-blank stdout text, of `python -m ai_employee.cli ARGS` run in
    `checkout` (so that checkout's code is imported)."""
    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "ai_employee.cli", *args], cwd=checkout, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first_text = None
    while chunk := os.read(child.stdout.fileno(), 65536):
        if first_text is None and chunk.strip():
            first_text = time.perf_counter() - began
    _, errors = child.communicate()
    exit_s = time.perf_counter() - began
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} in {checkout} failed ({child.returncode}):\n"
                           f"{errors.decode()[-2000:]}")
    return {"exit_s": exit_s, "first_text_s": first_text if first_text is not None else exit_s}


def ensure_index(data_dir: Path, env: dict[str, str]) -> None:
    if (data_dir / "index" / "CURRENT").exists():
        return
    print(f"indexing examples/handbook into {data_dir} (once)")
    subprocess.run([sys.executable, "-m", "ai_employee.cli", "index", str(PROJECT / "examples" / "handbook")],
                   cwd=PROJECT, env=env, check=True, capture_output=True)


def measure(checkouts: dict[str, Path], runs: int, env: dict[str, str]) -> dict[str, dict]:
    """Per checkout, per command: the median (and every run) of exit time and first-text time."""
    samples: dict[str, dict[str, list[dict[str, float]]]] = {label: {} for label in checkouts}
    loads: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, args in commands(Path(scratch)).items():
            loads[name] = [os.getloadavg()[0]]
            for checkout in checkouts.values():
                run_once(checkout, args, env)  # unmeasured: the file cache is warm for the runs that count
            for _ in range(runs):
                for label, checkout in checkouts.items():
                    samples[label].setdefault(name, []).append(run_once(checkout, args, env))
            loads[name].append(os.getloadavg()[0])
    results: dict[str, dict] = {}
    for label, by_command in samples.items():
        results[label] = {}
        for name, rows in by_command.items():
            entry = {"exit_s": round(statistics.median(r["exit_s"] for r in rows), 3),
                     "runs_exit_s": [round(r["exit_s"], 3) for r in rows],
                     "load_avg_1m": [round(v, 2) for v in loads[name]]}
            if name == "ask":
                entry["first_text_s"] = round(statistics.median(r["first_text_s"] for r in rows), 3)
                entry["runs_first_text_s"] = [round(r["first_text_s"], 3) for r in rows]
            results[label][name] = entry
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "aie-bench-startup")
    parser.add_argument("--before", type=Path, help="An older checkout to compare with, run by run.")
    parser.add_argument("--before-label", default="before", help="What to call the --before checkout.")
    parser.add_argument("--name", default="startup", help="Result file name under benchmarks/results/.")
    args = parser.parse_args()
    env = environment(args.data_dir.resolve())
    ensure_index(args.data_dir, env)
    checkouts = {"current": PROJECT}
    if args.before:
        checkouts = {"after": PROJECT, args.before_label: args.before.resolve()}
    results = measure(checkouts, args.runs, env)
    for label, by_command in results.items():
        for name, entry in by_command.items():
            first = f", first text {entry['first_text_s']:.2f} s" if "first_text_s" in entry else ""
            load = entry["load_avg_1m"]
            print(f"{label:>15} {name:<14} {entry['exit_s']:.2f} s to exit{first} (load {load})")
    save(args.name, {"runs": args.runs, "question": QUESTION,
                     "checkouts": {k: str(v) for k, v in checkouts.items()}, "results": results})


if __name__ == "__main__":
    main()
