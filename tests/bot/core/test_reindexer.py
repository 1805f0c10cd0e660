import asyncio
import threading

import pytest

from bot.core.reindex import ReindexBusy, Reindexer, report_text, run_text
from bot.slack.blocks import SLACK_STYLE
from rag.index.builder import EmptyIndexError, IndexProgress, IndexReport


def test_one_reindex_at_a_time_with_progress_updates():
    release = threading.Event()

    def refresh(progress):
        for n in range(3):
            progress(IndexProgress("parse", n + 1, 3, f"f{n}.md"))
        release.wait(10)
        return IndexReport(version="v2", previous_version="v1", roots=["/docs"], files=3, added=["f2.md"],
                           changed=["f1.md"], removed=["old.md"], unchanged=1, skipped={"bad.pdf": "corrupt PDF"},
                           chunks=12, seconds=4.2)

    warmed = []
    reindexer = Reindexer(refresh, lambda: warmed.append(True), update_every=0.05)
    shown: list[str] = []

    async def show(text):
        shown.append(text)

    async def run():
        first = asyncio.create_task(reindexer.run(show, SLACK_STYLE, by="U0ADMIN01"))
        await asyncio.sleep(0.2)
        assert reindexer.running and reindexer.current.by == "U0ADMIN01" and reindexer.last is None
        with pytest.raises(ReindexBusy):
            await reindexer.run(show, SLACK_STYLE)
        release.set()
        return await first

    report = asyncio.run(run())
    assert report.version == "v2" and warmed == [True] and not reindexer.running
    assert any("files 3/3" in text for text in shown)
    text = report_text(report, SLACK_STYLE)
    assert "now serving version `v2`" in text and "`f2.md`" in text and "`bad.pdf` — corrupt PDF" in text
    assert "Removed:* `old.md`" in text
    last = reindexer.last  # kept for the admins' Home tab
    assert (last.by, last.ok, last.report, run_text(last, SLACK_STYLE)) == ("U0ADMIN01", True, report, text)
    assert last.finished >= last.started
    assert reindexer.current is None


def test_a_failed_reindex_is_kept_with_its_short_reason():
    def refresh(progress):
        raise EmptyIndexError("nothing under /secret/path")

    reindexer = Reindexer(refresh, lambda: None, update_every=0.05)

    async def quiet(text):
        pass

    with pytest.raises(EmptyIndexError):
        asyncio.run(reindexer.run(quiet, SLACK_STYLE, by="U0OWNER01"))
    last = reindexer.last
    assert (last.by, last.ok) == ("U0OWNER01", False) and not reindexer.running and reindexer.current is None
    told = run_text(last, SLACK_STYLE)
    assert told.startswith(":x: Reindex failed") and "/secret/path" not in told
