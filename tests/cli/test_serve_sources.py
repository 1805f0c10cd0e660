"""`serve` with a sources file it cannot use stops before anything else with the file's one line."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import PROJECT, cli_env


def test_serve_with_a_wrong_sources_file_is_one_line_naming_the_key(tmp_path):
    sources = tmp_path / "sources.yaml"
    sources.write_text("sources:\n  - {name: handbook, type: folder, path: /srv/hb, every: soon}\n", encoding="utf-8")
    env = cli_env(tmp_path / "data") | {"PYTHONPATH": str(PROJECT), "AIE_SOURCES_FILE": str(sources),
                                        "SLACK_BOT_TOKEN": "xoxb-not-checked", "SLACK_SIGNING_SECRET": "not-checked"}
    done = subprocess.run([sys.executable, "-m", "ai_employee.cli", "serve", "--port", "0"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert " ".join(done.stderr.split()) == (f"error: {sources}: sources[0].every: expected an interval such as 15m, "
                                             "1h or 1d (0: only on demand), got 'soon'")
