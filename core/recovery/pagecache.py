"""The host's page cache as restart sees its own log reads (:class:`PageCache`).

IBM dropped the file-system cache before each restart it timed ("Queue Manager Restart Times
for IBM MQ V9.1 & V9.1.1", Paul Harris, March 2019: the queue manager killed with kill -9,
the cache dropped, then strmqm timed; developer.ibm.com/messaging/2019/03/12/
queue-manager-restart-times-in-v9-1-1/). So a restart starts with a cold cache – a new
:class:`PageCache` per restart – and warms it as it reads: the pages replay has just read
are hits when the in-doubt walk reads records among them again, and a page before the
replay point that the walk (or a segmented message's chain) reads once is a hit the next
time. Only misses are charged to the device.

It is restart's own object, not the device's: the log's writer and the queue files do not
go through it (writes are synchronous and durable, see :mod:`mqlog.core.disk.devices`).

Not bounded. Assumption: the host's memory holds every log page one restart reads (IBM's
largest log, 32 × 64 MiB primaries = 2 GiB, beside hosts of tens or hundreds of GB); a
restart that read more than the host's free memory would find the oldest pages evicted,
which this does not model. Pages are known by their log address (``page_of``), which
every platform's addressing maps one page to one multiple of ``PAGE_SIZE``.
"""

from __future__ import annotations

from mqlog.core.format.pages import PAGE_SIZE, page_of


class PageCache:
    """The log pages one restart has read: a contiguous run (replay's, from its start page)
    and any others (the walk's random reads)."""

    __slots__ = ("_run_from", "_run_to", "_pages", "hits", "misses")

    def __init__(self):
        self._run_from = 0
        self._run_to = 0  # exclusive: [run_from, run_to) is warm
        self._pages: set[int] = set()
        self.hits = 0
        self.misses = 0

    def replayed(self, start: int, pages: int) -> None:
        """Replay has read ``pages`` pages in a row from the page holding ``start``."""
        self._run_from = page_of(start)
        self._run_to = self._run_from + pages * PAGE_SIZE

    def read(self, address: int, pages: int) -> int:
        """A read of ``pages`` pages in a row from the page holding ``address``: how many
        were not in the cache (the caller charges those to the device); all are now."""
        first = page_of(address)
        missed = 0
        for i in range(pages):
            page = first + i * PAGE_SIZE
            if self._run_from <= page < self._run_to or page in self._pages:
                self.hits += 1
            else:
                self._pages.add(page)
                self.misses += 1
                missed += 1
        return missed
