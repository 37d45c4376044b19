"""The host's page cache as restart sees its own log reads (:class:`PageCache`), with Linux's
read-ahead.

IBM dropped the file-system cache before each restart it timed ("Queue Manager Restart Times
for IBM MQ V9.1 & V9.1.1", Paul Harris, March 2019: the queue manager killed with kill -9,
the cache dropped, then strmqm timed; developer.ibm.com/messaging/2019/03/12/
queue-manager-restart-times-in-v9-1-1/). So a restart starts with a cold cache – a new
:class:`PageCache` per restart – and warms it as it reads. Every log read request of restart
goes through it: replay's forward reads, the backward walk of the units of work, a segmented
message's chain. Only the pages it does not hold reach the device, as device reads of
contiguous runs (:meth:`PageCache.read` returns them).

**Read-ahead.** A request that continues the previous one forward (a sequential read) and
misses is extended to at least the profile's read-ahead window (``read_ahead_kb``, Linux's
``read_ahead_kb``: 128 KiB by default, for block devices and, since Linux 5.4, NFS mounts):
one device read brings the window in and the next requests are hits. This is Linux's
on-demand read-ahead reduced to its steady state (mm/readahead.c: the window starts smaller
and ramps up to the maximum; a read-ahead of the next window while this one is read – the
asynchronous part – is not modelled, so a forward scan waits for every window). A request
that does not continue the previous one – a random read, or a read backwards – is read as
asked: Linux does not read ahead of a backward scan, so what a backward walk reads at once is
what the reader asks for (:mod:`.undo`: MQ's log reader asks for as much as replay reads at a
time, ending at the page it needs). Read-ahead stops at a page the cache already holds.

It is restart's own object, not the device's: the log's writer does not go through it (its
writes are synchronous and durable, see :mod:`mqlog.core.disk.devices`), and the queue
files have one of their own (:mod:`mqlog.core.disk.filecache`).

Not bounded. Assumption: the host's memory holds every log page one restart reads (IBM's
largest log, 32 × 64 MiB primaries = 2 GiB, beside hosts of tens or hundreds of GB); a
restart that read more than the host's free memory would find the oldest pages evicted,
which this does not model. Pages are known by their log address (``page_of``), which every
platform's addressing maps one page to one multiple of ``PAGE_SIZE``; read-ahead does not
know where one log file ends and the next begins (assumption: at most one window per 64 MiB
extent is read past an end, which is not charged apart).
"""

from __future__ import annotations

from mqlog.core.format.pages import PAGE_SIZE, page_of

#: Linux's default read-ahead window, in pages (128 KiB)
DEFAULT_READ_AHEAD_PAGES = 32


class PageCache:
    """The log pages one restart has read, and where its last request ended (what a
    sequential request continues)."""

    __slots__ = ("read_ahead", "_pages", "_next", "hits", "misses", "read_ahead_pages", "device_reads")

    def __init__(self, read_ahead_pages: int = DEFAULT_READ_AHEAD_PAGES):
        #: the read-ahead window, pages
        self.read_ahead = max(1, int(read_ahead_pages))
        self._pages: set[int] = set()
        self._next: int | None = None  # the page after the last request
        self.hits = 0            # pages asked for and held
        self.misses = 0          # pages asked for and not held
        self.read_ahead_pages = 0  # pages read ahead of what was asked for
        self.device_reads = 0    # device reads the misses took

    def holds(self, address: int) -> bool:
        """Whether the page holding ``address`` is in the cache."""
        return page_of(address) in self._pages

    def read(self, address: int, pages: int) -> list[int]:
        """A request for ``pages`` pages in a row from the page holding ``address``: the device
        reads it takes, each a count of contiguous pages (the caller charges them). Every page
        asked for, and every page read ahead, is in the cache afterwards."""
        first = page_of(address)
        end = first + pages * PAGE_SIZE
        sequential = first == self._next
        self._next = end
        cache = self._pages
        runs: list[int] = []
        run_start = None
        page = first
        while page < end:
            if page in cache:
                self.hits += 1
                if run_start is not None:
                    runs.append((page - run_start) // PAGE_SIZE)
                    run_start = None
            else:
                self.misses += 1
                cache.add(page)
                if run_start is None:
                    run_start = page
            page += PAGE_SIZE
        if run_start is not None:
            # The run reaches the end of the request: a sequential miss reads ahead from where
            # it began to the window's end, up to the first page already held.
            size = (end - run_start) // PAGE_SIZE
            if sequential and size < self.read_ahead:
                page = end
                while size < self.read_ahead and page not in cache:
                    cache.add(page)
                    self.read_ahead_pages += 1
                    size += 1
                    page += PAGE_SIZE
            runs.append(size)
        self.device_reads += len(runs)
        return runs
