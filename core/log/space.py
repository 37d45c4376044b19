"""Log space: where pages go on storage. The platform decides; the core's writer does the I/O.

A platform's log space answers two questions for the writer and the reader:

* :meth:`LogSpace.plan_write` – given the pages of one write, which physical writes
  (file, offset, pages) carry them. This is where a platform puts its mechanisms: a
  distributed circular ring of extents, TripleWrite's spare copy of a partial page, z/OS
  dual copies; a run that crosses a file boundary becomes two physical writes.
* :meth:`LogSpace.read_page` – which bytes are stored for a page address (a
  :class:`~mqlog.core.log.reader.PageSource`), choosing the good copy where there are several.

and, for a space that copies log it holds to other files in the background (z/OS archive
offload), two more (:mod:`~mqlog.core.log.background`): :meth:`LogSpace.copy_jobs` – the copies
to start now – and :meth:`LogSpace.waits_for_copies` – whether a run can be placed only once
a copy in progress has finished. :class:`NoBackgroundCopies` gives their neutral answers.

:class:`ReferenceLogSpace` is the core's own: one file that grows without limit, every
page at ``address - start``. It serves the core's tests the way ZODB's MappingStorage
serves ZODB's. :class:`RangeMemo` is what a space over many files uses to map a read's
address to its file without looking it up again for every page of the same file.
:class:`HighWaterMark` is the mark a space's control data keeps of how far the log is
known to be on disk, which restart refuses a log to end below.
"""

from __future__ import annotations

from typing import Callable, Generic, Protocol, Sequence, TypeVar

import attrs

from mqlog.core.format.fields import Fields
from mqlog.core.format.pages import PAGE_HEADER, PAGE_SIZE, PageRun
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.disk.storage import Storage
from mqlog.core.log.background import CopyJob


@attrs.frozen
class PhysicalWrite:
    """One I/O request: ``pages`` (starting with the page at ``first_address``) written
    contiguously at ``offset`` of ``file``."""

    file: str
    offset: int
    first_address: int
    pages: tuple[bytes, ...]
    #: what the write is for: "log", or a platform's extra ("spare" copy, "copy2", …)
    purpose: str = "log"
    #: format the file to this many bytes first (a new log extent): it is created if it
    #: does not exist yet (a space may create it itself, before its control data names it),
    #: and the formatting is charged to the device as one write
    format_bytes: int = 0
    #: once this write is on disk, the records that end on its page are recoverable even if
    #: the rest of the run never gets there (TripleWrite's spare copy: recovery takes the
    #: newer good copy of a page), so forces waiting for them may be released
    hardens_first_page: bool = False
    #: start this write together with the one before it in the plan rather than after it has
    #: finished: they are in flight at once (and share the device). A write without it waits
    #: for every earlier write of the plan – the order that protects a rewritten page.
    alongside: bool = False

    @property
    def nbytes(self) -> int:
        return len(self.pages) * PAGE_SIZE


class LogSpace(Protocol):
    """What the writer and reader need from a platform's log space."""

    storage: Storage
    #: the aligned block a crash never splits on the log's device (its profile's
    #: ``atomic_write_bytes``, 512 unless it says more), set by the queue manager before the
    #: first write: a space that keeps a copy of a page being rewritten intact while the
    #: other is written needs that only where a crash can split the page
    atomic_write_bytes: int

    def plan_write(self, run: PageRun) -> Sequence[PhysicalWrite]:
        """The physical writes, in order, that put ``run`` on disk: each starts once the
        writes before it have finished, unless it is ``alongside`` the one before it."""

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        """The stored page at ``address`` (b"" if none), its file name and offset."""

    def copy_jobs(self) -> Sequence[CopyJob]:
        """Background copies to start now, each handed out once (the writer asks at the start
        and end of each write cycle and whenever a copy finishes)."""

    def waits_for_copies(self, run: PageRun) -> bool:
        """Whether ``run`` can be placed only once a background copy handed out (or about to
        be) has finished: the writer then waits for one to finish and asks again. False when
        it can be placed now – or never (plan_write then says why)."""


class NoBackgroundCopies:
    """The neutral answers of a space that copies nothing in the background."""

    def copy_jobs(self) -> Sequence[CopyJob]:
        return ()

    def waits_for_copies(self, run: PageRun) -> bool:
        return False


class ReferenceLogSpace(NoBackgroundCopies):
    """One log file that grows forever; page ``a`` lives at offset ``a - start``."""

    def __init__(self, storage: Storage, *, file: str = "reference.log", start: int = 0):
        self.storage = storage
        self.file = file
        self.start = start

    def plan_write(self, run: PageRun) -> Sequence[PhysicalWrite]:
        return (PhysicalWrite(self.file, run.first_address - self.start, run.first_address, run.pages),)

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        offset = address - self.start
        if not self.storage.exists(self.file):
            return b"", self.file, offset
        return self.storage.read(self.file, offset, PAGE_SIZE), self.file, offset


@attrs.define
class HighWaterMark:
    """The high-water mark a space's control data keeps (the control file, the BSDS): every
    page below ``address`` was on disk when the control data was last saved. It is the first
    page of the latest write planned – the writer runs one cycle at a time, so the writes
    before it have all finished – and ``write`` is that write's number: a log a restart has
    rewritten since (pages of later writes below the mark) no longer answers to it. A space
    saves it with its control data (:meth:`fields`, :meth:`load`) and moves it as it plans
    each write (:meth:`advance`)."""

    address: int
    write: int = 0

    def advance(self, run: PageRun) -> None:
        """A write of ``run`` is being planned: every page before its first is on disk. (A
        restart resuming the log before the mark – its last record was cut short – sets it
        back: the log is what restart makes it.)"""
        self.address = run.first_address
        if run.pages:
            self.write = PAGE_HEADER.unpack_from(run.pages[0])[5]  # (its write number)

    @property
    def known(self) -> int | None:
        """The mark's address, or None: the control data keeps none (a log from before it)."""
        return None if self.address == NO_ADDRESS else self.address

    def mark(self) -> tuple[int, int] | None:
        """What restart's reader checks the end of the log against (``LogReader.written_to``)."""
        return None if self.address == NO_ADDRESS else (self.address, self.write)

    def fields(self) -> dict:
        """The mark's fields in the control data."""
        return {"written_to": self.address, "written_write": self.write}

    def load(self, f: Fields) -> None:
        """The mark as the control data ``f`` saved it (none in control data from before it)."""
        self.address = f.int("written_to", default=NO_ADDRESS)
        self.write = f.int("written_write", default=0)


T = TypeVar("T")


class RangeMemo(Generic[T]):
    """The answer of a space's address-to-file lookup, remembered for the range of addresses
    it holds for: a reader goes through a file page by page, so one lookup serves every page
    until the next file. ``lookup(address)`` returns ``(answer, first, end)`` – the answer
    holds for ``first <= address < end``; an empty range answers this address only – or
    None (no file holds it). The space calls :meth:`forget` whenever the mapping changes
    (a file takes a new range, is removed or added)."""

    __slots__ = ("_lookup", "_first", "_end", "_answer")

    def __init__(self, lookup: Callable[[int], tuple[T, int, int] | None]):
        self._lookup = lookup
        self.forget()

    def forget(self) -> None:
        self._first = self._end = 0
        self._answer: T | None = None

    def get(self, address: int) -> T | None:
        if self._first <= address < self._end:
            return self._answer
        found = self._lookup(address)
        if found is None:
            return None
        answer, first, end = found
        if first < end:
            self._first, self._end, self._answer = first, end, answer
        return answer
