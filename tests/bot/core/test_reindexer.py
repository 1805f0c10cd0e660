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


def test_a_sync_shown_in_chat_names_sources_not_the_documents_it_fetches(tmp_path):
    """Progress and kept documents are shown where the reindex was asked for, which may not read every
    document a source fetches (an attachment of a restricted wiki page, a crawled page): the progress names
    the source alone, and why a document was kept is said only where that document may be read."""
    from bot.core.sources import sync_text
    from rag.sources.base import Fetched
    from rag.sources.sync import SourceOutcome, SyncReport

    release = threading.Event()

    def refresh(progress):
        progress(IndexProgress("fetch", 1, 2, "wiki: attachment Layoff plan Q3.xlsx", "wiki"))
        release.wait(10)
        return IndexReport(version="v2", previous_version="v1", roots=[], files=1, chunks=3, seconds=1.0)

    shown: list[str] = []

    async def show(text):
        shown.append(text)

    async def run():
        task = asyncio.create_task(Reindexer(refresh, lambda: None, update_every=0.05).run(show, SLACK_STYLE))
        await asyncio.sleep(0.3)
        release.set()
        await task

    asyncio.run(run())
    assert any("fetching wiki (1/2)" in text for text in shown), shown
    assert not any("Layoff" in text for text in shown)

    why = "Confluence answered 502 for wiki (attachment 9001)"
    fetched = Fetched(tmp_path, kept={"HR/Layoff plan Q3.xlsx": why})
    report = SyncReport({"wiki": SourceOutcome("wiki", True, fetched=fetched)})
    everyone = sync_text(report, SLACK_STYLE, visible=lambda name: not name.startswith("wiki/HR/"))
    assert "• `wiki`: fetched 0 · removed 0 · kept 1" in everyone and why not in everyone
    assert why in sync_text(report, SLACK_STYLE, visible=lambda name: True)


def test_a_sync_report_says_which_bound_a_crawl_hit(tmp_path):
    from bot.core.sources import sync_text
    from rag.sources.base import Fetched
    from rag.sources.sync import SourceOutcome, SyncReport

    note = "more links were found than the crawl may queue (24, AIE_WEB_MAX_QUEUED): the rest were not followed"
    fetched = Fetched(tmp_path, complete=False, notes=[note])
    text = sync_text(SyncReport({"intranet": SourceOutcome("intranet", True, fetched=fetched)}), SLACK_STYLE)
    assert text.splitlines()[1] == ("• `intranet`: fetched 0 · removed 0 · kept 0 · the listing was cut short: "
                                    f"nothing it did not see was removed · {note}")
