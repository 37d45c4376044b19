"""The host's cache in front of the queue files (:class:`QueueFileCache`): where a queue
file's writes wait for a checkpoint, and which of its reads reach the device.

The log and the queue files are written differently. The log is written synchronously: the
writer waits for every write, and a commit is not answered before its record is on the
device. A queue file need only be durable at a checkpoint: the log holds every change since
the last one, and restart redoes them (a checkpoint "makes the queue files consistent with
the log", SPEC §3.5). IBM: "IBM MQ for AIX or Linux platforms use the O_SYNC open option and
the fsync() system call to explicitly force writes to recoverable media" (IBM MQ
documentation, "Requirements for shared file systems on Multiplatforms"): O_SYNC for the log,
fsync for what MQ writes through the file system and forces when it must. So a queue file's
write – a queue buffer's spill, replay's spill, a checkpoint's flush, a media recovery's – is
a buffered ``write`` call: it dirties the file's pages in the host's page cache and returns.
Nothing of it reaches the device until the next checkpoint, which forces every file written
since – its dirty pages as contiguous runs, then an ``fsync`` – before it logs its End record
(:meth:`QueueFileCache.take_dirty`). A page written twice between checkpoints (a queue
file's blocks are reused as messages come and go) reaches the device once. A read finds in
memory every page written or read since the queue manager started; only the rest reach the
device, a page (4 KiB) at a time.

Before this, the model wrote every spill through to the device in the putting call, and a
get read the spilled message back from the device: with MQ's default queue buffer, 20 KB and
200 KB messages at a few dozen requesters spilled on nearly every put, and the round trips
fell by a third past their peak (session 49's curve sweep).

Assumptions, where IBM's public material is silent:
- the host's memory holds every queue-file page the run touches (IBM's hosts have tens to
  hundreds of GB), and a restart starts cold, as IBM's restart tests dropped the cache
  (:mod:`mqlog.core.recovery.pagecache`);
- the kernel's own write-back of dirty pages before a checkpoint (pages older than
  ``dirty_expire_centisecs``, 30 s, or past ``dirty_background_ratio``) is not modelled: a
  checkpoint writes them all;
- the model's files receive each write at once, so a crash finds the pages as if the kernel
  had written them back (one of the outcomes a power loss can leave; restart must survive
  the others too, which the model does not produce);
- write-back requests are at most :data:`WRITEBACK_MAX_BYTES` (the block layer's largest
  request, ``max_sectors_kb``, commonly 512–1,280 KiB);
- a spill still forces the log first (the write-ahead rule: the kernel may write a dirty
  page back at any moment, so MQ cannot let one reach the page cache before the log
  describing it is on disk).
"""

from __future__ import annotations

from typing import Callable, Iterator

#: the page cache's page, bytes (x86-64 and s390x Linux)
PAGE_BYTES = 4096
#: the largest write request write-back makes, bytes
WRITEBACK_MAX_BYTES = 1 << 20


class QueueFileCache:
    """The queue files' pages the host holds (every page written or read since the queue
    manager started) and which of them are dirty (written since the last checkpoint)."""

    __slots__ = ("_dirty", "_held", "bytes_dirtied", "read_hits")

    def __init__(self) -> None:
        self._dirty: dict[str, set[int]] = {}
        #: per file, one byte a page: 1 where the page is held
        self._held: dict[str, bytearray] = {}
        #: bytes the calls wrote into the cache
        self.bytes_dirtied = 0
        #: read requests the cache answered whole
        self.read_hits = 0

    def _hold(self, name: str, first: int, end: int) -> bytearray:
        held = self._held.get(name)
        if held is None:
            held = self._held[name] = bytearray()
        if len(held) < end:
            held.extend(bytes(max(end, 2 * len(held)) - len(held)))
        return held

    def write(self, name: str, offset: int, size: int) -> None:
        """A buffered write of ``size`` bytes at ``offset`` of file ``name``: its pages are
        dirty (and held) until a checkpoint takes them."""
        first, end = offset // PAGE_BYTES, -(-(offset + size) // PAGE_BYTES)
        self.bytes_dirtied += size
        pages = self._dirty.get(name)
        if pages is None:
            pages = self._dirty[name] = set()
        pages.update(range(first, end))
        self._hold(name, first, end)[first:end] = b"\x01" * (end - first)

    def read(self, name: str, offset: int, size: int) -> list[int]:
        """A read of ``size`` bytes at ``offset`` of file ``name``: the device reads it takes,
        in bytes, one for each run of pages the cache does not hold (held afterwards)."""
        first, end = offset // PAGE_BYTES, -(-(offset + size) // PAGE_BYTES)
        held = self._hold(name, first, end)
        if held.count(0, first, end) == 0:
            self.read_hits += 1
            return []
        runs, start = [], None
        for page in range(first, end):
            if held[page]:
                if start is not None:
                    runs.append((page - start) * PAGE_BYTES)
                    start = None
            elif start is None:
                start = page
        if start is not None:
            runs.append((end - start) * PAGE_BYTES)
        held[first:end] = b"\x01" * (end - first)
        return runs

    def take_dirty(self, size_of: Callable[[str], int | None]) -> Iterator[tuple[str, list[int]]]:
        """The write-back a checkpoint forces: for each file with dirty pages, in name order,
        its write requests in bytes (contiguous pages, at most :data:`WRITEBACK_MAX_BYTES`
        each). Pages past the file's size now (``size_of(name)``; None: the file is gone)
        are dropped unwritten: the file was truncated or deleted since. Nothing is dirty
        afterwards."""
        dirty, self._dirty = self._dirty, {}
        for name in sorted(dirty):
            size = size_of(name)
            if size is None:
                self._held.pop(name, None)
                continue
            last = -(-size // PAGE_BYTES)
            pages = sorted(page for page in dirty[name] if page < last)
            if not pages:
                continue
            requests, start, prev = [], pages[0], pages[0]
            most = WRITEBACK_MAX_BYTES // PAGE_BYTES
            for page in pages[1:] + [None]:
                if page is not None and page == prev + 1 and page - start < most:
                    prev = page
                    continue
                requests.append((prev + 1 - start) * PAGE_BYTES)
                if page is not None:
                    start = prev = page
            yield name, requests

    def dirty_bytes(self) -> int:
        """Bytes of dirty pages waiting for a checkpoint."""
        return sum(len(pages) for pages in self._dirty.values()) * PAGE_BYTES


__all__ = ["PAGE_BYTES", "QueueFileCache", "WRITEBACK_MAX_BYTES"]
