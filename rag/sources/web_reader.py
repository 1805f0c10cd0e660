"""Crawled pages read (rag.sources.web_extract.read_page) in a child process, each within a deadline.

lxml and trafilatura work in C, in the interpreter that calls them: a page that takes them minutes (a huge
one, or one built to be slow) can be neither interrupted nor stopped from holding a CPU. In a child it
can: past the deadline the child is ended, the page skipped with the reason, and the next page read by a
new child. The child is started with the first page and ended with the crawl; the deadline counts the
reading only, not the child's start (a new interpreter importing lxml and trafilatura: a second or more on
a busy machine).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.pool import Pool

from rag.sources.web_extract import Page, is_ready, read_page

EXTRACT_SECONDS = 30.0  # AIE_WEB_EXTRACT_TIMEOUT
START_SECONDS = 120.0  # a child that has not imported its readers by then is not going to


class TooSlow(Exception):
    """A page whose text was not read within the deadline; `reason` says so for the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PageReader:
    """`read` a page in the child; a context manager that ends the child."""

    def __init__(self, seconds: float = EXTRACT_SECONDS) -> None:
        self.seconds = seconds
        self._pool: Pool | None = None

    def read(self, data: bytes, url: str, charset: str | None = None) -> Page:
        """read_page(data, url, charset), or TooSlow past the deadline."""
        if self._pool is None:
            self._pool = self._started()
        pending = self._pool.apply_async(read_page, (data, url, charset))
        try:
            return pending.get(self.seconds)
        except multiprocessing.TimeoutError:
            self.close()  # the page is still being read: its child is ended with it
            raise TooSlow(f"its text took longer than {self.seconds:g} s to read (AIE_WEB_EXTRACT_TIMEOUT)") from None

    @staticmethod
    def _started() -> Pool:
        """A child that has imported what reads a page (read_page's module), so that a page's deadline is
        its own."""
        pool = multiprocessing.get_context("spawn").Pool(1)
        try:
            pool.apply_async(is_ready).get(START_SECONDS)
        except BaseException:
            pool.terminate()
            raise
        return pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> PageReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
