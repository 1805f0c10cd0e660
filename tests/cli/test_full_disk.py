"""On a full disk (a real one: a small tmpfs filled to its last byte) each command says so in one line: `index`
keeps the index in use, `ask` still answers, and `serve` starts with /ready saying why it is not ready until
there is room again."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rag.feedback import FeedbackStore
from tests.bot.harness import wait_for
from tests.cli.full_disk import make_room, on_a_full_disk
from tests.cli.serving import TEAMS, Served, serve_env
from tests.cli.test_cli_errors import run
from tests.conftest import PROJECT, cli_env


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A data dir with one small document indexed and its votes database made (no question asked yet: an answer
    on the full disk has passages to embed and no room to keep their vectors)."""
    root = tmp_path_factory.mktemp("full-disk")
    (root / "docs").mkdir()
    (root / "docs" / "leave.md").write_text("# Leave\n\nEmployees get twenty six days of annual leave.\n"
                                            "Requests for leave go to your manager two weeks ahead.\n")
    done = run(root / "data", "index", str(root / "docs"))
    assert done.returncode == 0, done.stderr
    FeedbackStore(root / "data" / "feedback.sqlite3").close()
    return root / "data"


def on_full_disk(data_dir, mount_point, *args: str) -> subprocess.CompletedProcess[str]:
    """`ai-employee ARGS` with its data dir a full disk holding a copy of `data_dir`."""
    env = cli_env(mount_point) | {"PYTHONPATH": str(PROJECT)}
    return subprocess.run([*on_a_full_disk(data_dir, mount_point), sys.executable, "-m", "ai_employee.cli", *args],
                          env=env, capture_output=True, text=True, timeout=300, cwd=mount_point.parent)


def version(data_dir) -> str:
    return json.loads(run(data_dir, "status", "--json").stdout)["version"]


def test_index_on_a_full_disk_is_one_line_and_keeps_the_index_in_use(data_dir, tmp_path):
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "travel.md").write_text("# Travel\n\nTrain tickets are booked through the travel desk.\n")
    done = on_full_disk(data_dir, tmp_path / "full", "index", "--add", str(tmp_path / "more"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (f"error: the disk holding {tmp_path / 'full'} is full: nothing was "
                                            f"indexed, the index in use is unchanged (snapshot {version(data_dir)})")
    assert [line for line in done.stderr.splitlines() if line.startswith("error")] == done.stderr.splitlines()[-1:]


def test_ask_on_a_full_disk_answers_and_says_nothing_is_kept(data_dir, tmp_path):
    done = on_full_disk(data_dir, tmp_path / "full", "ask", "Who do leave requests go to?")
    assert done.returncode == 0, done.stderr
    assert "go to your manager two weeks ahead" in done.stdout
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0] == (f"warning: the disk holding {tmp_path / 'full'} is full: answering from "
                                           "what is saved there, nothing new is kept")


def test_serve_on_a_full_disk_starts_and_is_not_ready_until_there_is_room(data_dir, tmp_path):
    full = tmp_path / "full"
    env = serve_env(full, **{f"{TEAMS}ANONYMOUS_ALLOWED": "true"})
    with Served(env, tmp_path, under=on_a_full_disk(data_dir, full)) as served:
        assert served.get("/health").status_code == 200
        ready = wait_for(lambda: (r := served.get("/ready")).json()["index"]["loaded"] and r, 60)
        assert ready.status_code == 503
        assert ready.json()["storage"] == {"writable": False, "reason": f"the disk holding {full} is full"}
        make_room(served.process.pid, full)
        assert wait_for(lambda: served.get("/ready").status_code == 200, 30)
        records = served.records()
    assert "Traceback" not in served.text
    warnings = [r["message"] for r in records if r["level"] in ("warning", "error")]
    assert warnings == [f"the disk holding {full} is full: answers are not kept for feedback, votes and scope "
                        "changes cannot be saved, and /ready answers 503 until there is room"]
