"""`ai-employee sources …` and `index` with AIE_SOURCES_FILE, as an operator runs them: a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

POLICY = "# Travel\n\n## Hotels\n\nHotels are reimbursed up to 150 EUR per night, or 220 EUR in London.\n"
RUNBOOK = "# Restart\n\nRestart the billing service with systemctl restart billing, then watch the logs.\n"


def run(tmp_path: Path, sources: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path / "data")
    if sources is not None:
        (tmp_path / "sources.yaml").write_text(sources, encoding="utf-8")
        env["AIE_SOURCES_FILE"] = str(tmp_path / "sources.yaml")
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def folders(tmp_path: Path) -> str:
    for name, text in (("hb", POLICY), ("ops", RUNBOOK)):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / f"{name}.md").write_text(text, encoding="utf-8")
    return (f"sources:\n  - {{name: handbook, type: folder, path: {tmp_path / 'hb'}, collection: hr, every: 1h}}\n"
            f"  - {{name: ops, type: folder, path: {tmp_path / 'ops'}, collection: eng}}\n")


def test_sync_list_and_check(tmp_path: Path) -> None:
    sources = folders(tmp_path)
    synced = run(tmp_path, sources, "sources", "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["ok"] and sorted(report["index"]["added"]) == ["handbook/hb.md", "ops/ops.md"]

    listed = json.loads(run(tmp_path, sources, "sources", "list", "--json").stdout)
    assert [(r["name"], r["type"], r["collection"], r["documents"], r["last_error"]) for r in listed] == [
        ("handbook", "folder", "hr", 1, ""), ("ops", "folder", "eng", 1, "")]
    assert listed[0]["next_run"].endswith("UTC") and listed[1]["next_run"] == "on demand"

    (tmp_path / "hb" / "hb.md").unlink()
    (tmp_path / "hb").rmdir()
    checked = run(tmp_path, sources, "sources", "check")
    assert checked.returncode == 1
    assert "✗ handbook" in checked.stdout and "missing or unreadable" in checked.stdout and "✓ ops" in checked.stdout

    failed = run(tmp_path, sources, "sources", "sync")
    assert failed.returncode == 1 and "✗ handbook" in failed.stdout
    table = run(tmp_path, sources, "sources", "list").stdout
    assert "missing or unreadable" in table
    searched = json.loads(run(tmp_path, sources, "search", "hotel per night", "--json").stdout)
    assert searched["hits"][0]["chunk"]["file"] == "handbook/hb.md"  # its last good document keeps serving


def test_a_wrong_sources_file_is_one_line(tmp_path: Path) -> None:
    result = run(tmp_path, "sources:\n  - {name: wiki, type: confluence, url: x, spaces: [A], token_env: T, evry: 1h}\n",
                 "sources", "list")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {tmp_path / 'sources.yaml'}: sources[0].evry: unknown key (a typo?)"]


def test_index_syncs_the_sources_and_refuses_a_path(tmp_path: Path) -> None:
    sources = folders(tmp_path)
    refused = run(tmp_path, sources, "index", str(tmp_path / "hb"))
    assert refused.returncode == 1 and "declare the folder there as a source" in refused.stderr
    indexed = run(tmp_path, sources, "index", "--json")
    assert indexed.returncode == 0 and json.loads(indexed.stdout)["ok"]
    unknown = run(tmp_path, sources, "sources", "sync", "wiki")
    assert unknown.returncode == 2 and "no source named wiki; the sources are: handbook, ops" in unknown.stderr
