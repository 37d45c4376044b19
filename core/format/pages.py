"""Log pages: 4 KiB units with a header that lets a reader tell a good page from a torn or stale one.

The log is written in pages of ``PAGE_SIZE`` bytes: a 32-byte header and 4064 bytes of
payload. Records are laid end to end in the payload and may span pages. The page header::

    offset size field
    0      4    magic b"MQLP"
    4      1    format version (1)
    5      1    flags (bit 0 PARTIAL: not full when written; bit 1 AFTER_PAD: the page
                before this one was closed short, so no record continues from it)
    6      2    index of this page in the write that wrote it (0: the write's first page)
    8      8    address of the page's first byte (the page's identity in the log)
    16     8    number of the write that wrote this copy of the page
    24     2    payload bytes used
    26     2    offset in the payload of the first record that starts here (0xFFFF: none)
    28     4    CRC-32 of the whole page with this field zeroed

The page size is the unit the storage stack is assumed to write atomically *or tear at
512-byte sectors*: the checksum covers all 4096 bytes so that any mix of old and new
sectors fails it, while the stored address tells a stale page (left from an earlier lap of
a circular log) from the page the reader expects. The write number and the page's index
in its write let a reader find where the last write began, and so tell a torn final write
(nothing in it was acknowledged) from damage to a page an earlier write hardened.

:class:`LogBuffer` is the in-memory side: it assigns each appended record its address,
frames the bytes into pages on demand and keeps the last partial page until it fills.
"""

from __future__ import annotations

import struct
import zlib

import attrs

from mqlog.core.format.construct import builder

PAGE_SIZE = 4096
PAGE_HEADER = struct.Struct("<4sBBHQQHHI")
PAGE_HEADER_SIZE = PAGE_HEADER.size  # 32
PAGE_PAYLOAD = PAGE_SIZE - PAGE_HEADER_SIZE  # 4064
PAGE_MAGIC = b"MQLP"
PAGE_VERSION = 1
NO_FIRST_RECORD = 0xFFFF
FLAG_PARTIAL = 0x0001
FLAG_AFTER_PAD = 0x0002

_CRC_OFFSET = 28
_ZERO_CRC = b"\0\0\0\0"


@attrs.frozen(weakref_slot=False)  # (built by mqlog.core.format.construct.builder)
class PageHeader:
    """A decoded page header."""

    flags: int
    address: int
    write_no: int
    used: int
    first_record: int
    #: the page's position in the write that wrote it
    index: int = 0

    @property
    def write_start(self) -> int:
        """The address of the first page of the write that wrote this page."""
        return self.address - self.index * PAGE_SIZE


def build_page(address: int, write_no: int, payload, first_record: int, flags: int = 0,
               index: int = 0) -> bytes:
    """Frame ``payload`` (at most 4064 bytes) as the ``index``-th page of write ``write_no``;
    unused payload bytes are zeros."""
    used = len(payload)
    if used > PAGE_PAYLOAD:
        raise ValueError(f"a page holds at most {PAGE_PAYLOAD} payload bytes, not {used}")
    head = PAGE_HEADER.pack(PAGE_MAGIC, PAGE_VERSION, flags, index, address, write_no, used, first_record, 0)
    if used < PAGE_PAYLOAD:
        payload = bytes(payload) + bytes(PAGE_PAYLOAD - used)
    crc = zlib.crc32(payload, zlib.crc32(head))
    return b"".join((head[:_CRC_OFFSET], crc.to_bytes(4, "little"), payload))


#: a PageHeader from checked values (check_page is once per page read)
_build_header = builder(PageHeader)


class PageProblem(str):
    """Why a page is not a good page at the expected address (a short reason string)."""


UNWRITTEN = PageProblem("unwritten (no page header)")
STALE = PageProblem("stale (a page from an earlier use of this space)")
TORN = PageProblem("checksum mismatch (torn or damaged)")
MALFORMED = PageProblem("malformed header")
#: a page with no page header whose first sector holds something other than zeros: a torn
#: write lands whole sectors, each either the new page's or what the file held before (zeros
#: as formatted, or a page of an earlier lap, header first), so no crash leaves this – only
#: damage (bytes shifted, overwritten, or another file's contents)
GARBLED = PageProblem("no page header, and its first sector is not zeros (damaged, not torn)")

#: the unit a physical write lands whole when a crash tears it (``mqlog.core.disk.faults``
#: tears writes in these): a page's header lies in its first sector
SECTOR_SIZE = 512


#: the last page :func:`check_page` judged: (bytes, expected address, result). The reader
#: checks the very bytes a platform's ``read_page`` has just checked (the first of a dual
#: log's copies, a spare page written to protect a partial one), and the CRC over 4 KiB is
#: most of the cost: the second check is answered from here. Only immutable ``bytes`` are
#: remembered, by identity; the tuple keeps them alive, so the identity cannot be reused by
#: other bytes meanwhile.
_last_check: tuple = (None, None, None)


def check_page(raw: bytes, expected_address: int) -> tuple[PageHeader | None, PageProblem | None]:
    """Validate one page read from storage. Returns ``(header, None)`` or ``(None, problem)``.

    Never raises for bad bytes: deciding whether a bad page ends the log or is damage in the
    middle of it needs the pages around it (see :mod:`mqlog.core.log.reader`).
    """
    global _last_check
    last = _last_check
    if raw is last[0] and expected_address == last[1]:
        return last[2]
    if len(raw) < PAGE_SIZE:
        result = None, _without_header(raw)
    else:
        # One unpack gives the magic and every field (the page is longer than its header).
        magic, version, flags, index, address, write_no, used, first, crc = _unpack_header(raw)
        if magic != PAGE_MAGIC:
            result = None, _without_header(raw)
        else:
            view = memoryview(raw)
            if _crc32(view[_CRC_OFFSET + 4:], _crc32(_ZERO_CRC, _crc32(view[:_CRC_OFFSET]))) != crc:
                result = None, TORN
            elif (version != PAGE_VERSION or used > PAGE_PAYLOAD or (first != NO_FIRST_RECORD and first >= used)
                    or index * PAGE_SIZE > address):
                result = None, MALFORMED
            else:
                header = _build_header(flags, address, write_no, used, first, index)
                result = header, (None if address == expected_address else STALE)
    if type(raw) is bytes:
        _last_check = (raw, expected_address, result)
    return result


def _without_header(raw) -> PageProblem:
    """A page that is short or has no magic: nothing stored, or only zeros, was never
    written; a page whose first sector is zeros but not the rest was partly written (a torn
    write landed later sectors, not the header's), as is a short page (a torn append leaves
    the file ending mid-page); a whole page whose first sector is anything else is damage
    (GARBLED). (A whole page is compared with a page of zeros, one memcmp: restart reads to
    the end of every file in use past a bad page, thousands of unwritten pages.)"""
    if len(raw) < PAGE_SIZE:
        return TORN if raw.strip(b"\0") else UNWRITTEN
    if raw == _ZERO_PAGE:
        return UNWRITTEN
    return TORN if raw[:SECTOR_SIZE] == _ZERO_SECTOR else GARBLED


_unpack_header = PAGE_HEADER.unpack_from
_crc32 = zlib.crc32
_ZERO_PAGE = bytes(PAGE_SIZE)
_ZERO_SECTOR = bytes(SECTOR_SIZE)


def page_of(address: int) -> int:
    """The address of the page holding ``address``."""
    return address - address % PAGE_SIZE


def payload_offset(address: int) -> int:
    """Where ``address`` falls in its page's payload (addresses inside a header are invalid)."""
    off = address % PAGE_SIZE - PAGE_HEADER_SIZE
    if off < 0:
        raise ValueError(f"address {address} falls inside a page header")
    return off


def advance(address: int, nbytes: int) -> int:
    """The address ``nbytes`` payload bytes after ``address``, skipping page headers."""
    page = page_of(address)
    off = address - page - PAGE_HEADER_SIZE + nbytes
    pages, off = divmod(off, PAGE_PAYLOAD)
    if off == 0 and pages:
        # The end of a page's payload is the start of the next page's payload.
        return page + pages * PAGE_SIZE + PAGE_HEADER_SIZE
    return page + pages * PAGE_SIZE + PAGE_HEADER_SIZE + off


@attrs.frozen
class PageRun:
    """Pages cut from the buffer for one physical write (consecutive addresses)."""

    first_address: int
    pages: tuple[bytes, ...]
    #: the first page was written before, partly: writing it again is a partial-page rewrite
    rewrites_partial: bool
    #: the last page is not full and will be written again when more records arrive
    ends_partial: bool
    #: the log address up to which records are complete once this run is on disk
    end_address: int
    #: bytes of records first written by this run (excludes re-written bytes and padding)
    new_bytes: int


class LogBuffer:
    """The log buffer: records appended in order, cut into pages for the writer.

    Complexity: ``append`` is O(len(record)) amortised; ``cut`` is O(bytes buffered);
    ``release`` drops written full pages from the front in O(1) (CPython's bytearray keeps
    a start offset for deletions from the front).
    """

    def __init__(self, start_address: int, capacity_pages: int = 512):
        if start_address % PAGE_SIZE:
            raise ValueError(f"the log must start on a page boundary, not {start_address}")
        self.capacity_pages = capacity_pages
        self._base = start_address  # address of the first page still buffered
        self._buf = bytearray()  # payload of buffered pages, from _base
        # first-record offsets of buffered pages, and offsets of the last record begun on each:
        # always one entry for every page up to the one the next record starts on, so that
        # an append grows them only when a record reaches a new page (not once a record)
        self._firsts: list[int] = [NO_FIRST_RECORD]
        self._lasts: list[int] = [NO_FIRST_RECORD]
        self._short: dict[int, int] = {}  # page index -> bytes used, for padded pages
        self._submitted = 0  # payload bytes (from _base) already cut for a write
        self._written = 0  # payload bytes of the first page already on disk
        self.pad_policy = None  # callable(used_bytes) -> bool: pad instead of rewriting
        self._close = False  # the writer closed the partial page it cut last (close_tail)
        #: the tail page on disk may hold bytes past the last good record (a torn or
        #: incomplete one, restart dropped them): it must be rewritten, never padded past,
        #: or a reader coming through it later would find that stale record
        self._must_rewrite = False
        #: the address the next appended record will get, and the payload bytes held (not
        #: yet on disk, plus the partial page's bytes that are): kept up to date as records
        #: are appended rather than worked out from the buffer's length at each ask, which
        #: the log's every record does (the room check, the writer's statistics)
        self.next_address = start_address + PAGE_HEADER_SIZE
        self.buffered_bytes = 0

    @classmethod
    def resume(cls, end_address: int, tail_payload: bytes = b"", capacity_pages: int = 512, *,
               first_record: int = NO_FIRST_RECORD, after_pad: bool = False) -> "LogBuffer":
        """A buffer that continues a log whose last record ends at ``end_address``.

        ``tail_payload`` is the payload already on disk in ``end_address``'s page (restart
        reads it), so that the next write can rewrite that partial page in full;
        ``first_record`` is that page's first-record offset and ``after_pad`` its AFTER_PAD
        flag (from its header), which the rewritten page must keep. Restart should use
        :meth:`resume_from_page`, which takes them from the page itself.
        """
        page = page_of(end_address)
        off = payload_offset(end_address) if end_address % PAGE_SIZE else 0
        if len(tail_payload) != off:
            raise ValueError(f"tail payload has {len(tail_payload)} bytes, the page holds {off}")
        buf = cls(page, capacity_pages)
        buf._buf += tail_payload
        buf.next_address = page + PAGE_HEADER_SIZE + off
        buf.buffered_bytes = off
        buf._submitted = off
        if off:
            buf._must_rewrite = True
            buf._firsts[0] = first_record  # (the last record begun before the resumed end is not known)
            if after_pad:
                buf._short[-1] = 0  # the page before the tail was closed short
        return buf

    @classmethod
    def resume_from_page(cls, end_address: int, tail_page: bytes, capacity_pages: int = 512) -> "LogBuffer":
        """Continue a log whose last good record ends at ``end_address``, given the stored
        bytes of the page that address falls in (ignored when it starts a fresh page).

        Bytes past ``end_address`` on that page (a torn or incomplete record) are dropped.
        """
        off = payload_offset(end_address) if end_address % PAGE_SIZE else 0
        if not off:
            return cls.resume(end_address, b"", capacity_pages)
        header, problem = check_page(tail_page, page_of(end_address))
        if problem is not None:
            raise ValueError(f"the tail page at {page_of(end_address)} is not good: {problem}")
        first = header.first_record if header.first_record < off else NO_FIRST_RECORD
        return cls.resume(end_address, bytes(tail_page[PAGE_HEADER_SIZE:PAGE_HEADER_SIZE + off]), capacity_pages,
                          first_record=first, after_pad=bool(header.flags & FLAG_AFTER_PAD))

    # -- appending --

    def has_room(self, nbytes: int) -> bool:
        # Room is counted in pages: the buffer holds at most capacity_pages pages.
        return self.buffered_bytes + nbytes <= self.capacity_pages * PAGE_PAYLOAD or not self._buf

    def append(self, data: bytes) -> int:
        """Add one encoded record; return its address."""
        buf = self._buf
        pos = self.buffered_bytes
        idx, off = divmod(pos, PAGE_PAYLOAD)
        if (pos == self._submitted and off and not self._must_rewrite
                and (self._close or (self.pad_policy is not None and self.pad_policy(off)))):
            # The page's data is already on its way to disk: start a fresh page rather than
            # rewrite it (the writer closed it, or the policy decides; see LogWriteIntegrity).
            self._close = False
            self._short[idx] = off
            buf += bytes(PAGE_PAYLOAD - off)
            pos = len(buf)
            self._submitted = pos  # the padding itself is never written
            idx, off = idx + 1, 0
            self.next_address = self._base + idx * PAGE_SIZE + PAGE_HEADER_SIZE
            self._cover(idx)
        firsts = self._firsts
        if firsts[idx] == NO_FIRST_RECORD:
            firsts[idx] = off
        self._lasts[idx] = off
        buf += data
        n = len(data)
        self.buffered_bytes = pos + n
        address = self.next_address
        end = off + n
        if end < PAGE_PAYLOAD:  # (the usual case: the record ends on the page it starts on)
            self.next_address = address + n
        else:
            pages, end = divmod(end, PAGE_PAYLOAD)
            self.next_address = address - off + pages * PAGE_SIZE + end
            self._cover(idx + pages)
        return address

    def _cover(self, idx: int) -> None:
        """Give the page-offset lists an entry for every page up to ``idx`` (no record
        begins on the new ones yet)."""
        firsts = self._firsts
        while len(firsts) <= idx:
            firsts.append(NO_FIRST_RECORD)
            self._lasts.append(NO_FIRST_RECORD)

    def complete_before(self, page_address: int, run_end: int) -> int:
        """How far the records of a run ending at ``run_end`` are whole once only its first
        page, the buffered page at ``page_address``, is on disk (TripleWrite's spare copy): the
        run's end if it ends on that page, the page's end if a record begins right after it,
        else the start of the record that runs on past it – a record whose first bytes are on
        that page but whose end is not is not yet on disk, and nothing may treat it as durable
        (a queue file flushed on the strength of it would be ahead of the log)."""
        end = page_address + PAGE_SIZE + PAGE_HEADER_SIZE
        if run_end <= end:
            return run_end
        idx = (page_address - self._base) // PAGE_SIZE
        if self._firsts[idx + 1] == 0:  # (the cut framed the run's pages: idx + 1 is one of them)
            return end
        last = self._lasts[idx]
        if last == NO_FIRST_RECORD:
            return page_address  # no record begins on it: none ends there whole either
        return page_address + PAGE_HEADER_SIZE + last

    # -- writing --

    def pending_bytes(self) -> int:
        """Payload bytes not yet cut for a write."""
        return len(self._buf) - self._submitted

    def full_pages_pending(self) -> int:
        """Full pages not yet cut for a write (a platform may start a write once there are this many)."""
        return len(self._buf) // PAGE_PAYLOAD - self._submitted // PAGE_PAYLOAD

    def full_pages_end(self) -> int:
        """The log address just past the last full page buffered: what a write of only full
        pages makes durable (records that end exactly on a page's end are complete there)."""
        idx = len(self._buf) // PAGE_PAYLOAD
        return self._base + idx * PAGE_SIZE + PAGE_HEADER_SIZE

    def close_tail(self) -> None:
        """The partial last page just cut will not be continued: the next record appended
        starts a fresh page, and the rest of that one is padding (a page that must be
        rewritten – restart's tail – is rewritten all the same)."""
        self._close = True

    def cut(self, write_no: int, max_pages: int | None = None) -> PageRun | None:
        """Frame every page holding unwritten bytes for one physical write – at most
        ``max_pages`` of them: the rest waits for the next cut; None if nothing pending."""
        buf = self._buf
        total = len(buf)
        self._close = False
        if total <= self._submitted:
            return None
        first_idx = self._submitted // PAGE_PAYLOAD
        if max_pages is not None and (total - 1) // PAGE_PAYLOAD - first_idx + 1 > max_pages:
            # More pages than one write may carry: cut after the last page it can; the rest,
            # the partial page with it, is the next cut's.
            total = (first_idx + max_pages) * PAGE_PAYLOAD
        last_idx = (total - 1) // PAGE_PAYLOAD
        self._cover(last_idx)
        firsts = self._firsts
        pages = []
        short = self._short
        for idx in range(first_idx, last_idx + 1):
            start = idx * PAGE_PAYLOAD
            end = min(start + short.get(idx, PAGE_PAYLOAD), total)
            flags = FLAG_PARTIAL if end - start < PAGE_PAYLOAD and idx not in short else 0
            if idx - 1 in short:
                flags |= FLAG_AFTER_PAD
            pages.append(build_page(self._base + idx * PAGE_SIZE, write_no, buf[start:end], firsts[idx], flags,
                                    idx - first_idx))
        rewrites = self._submitted % PAGE_PAYLOAD != 0
        self._must_rewrite = False
        ends_partial = total % PAGE_PAYLOAD != 0
        new_bytes = total - self._submitted
        self._submitted = total
        idx, off = divmod(total, PAGE_PAYLOAD)
        end_address = self._base + idx * PAGE_SIZE + PAGE_HEADER_SIZE + off
        return PageRun(self._base + first_idx * PAGE_SIZE, tuple(pages), rewrites, ends_partial,
                       end_address, new_bytes)

    def release(self, run: PageRun) -> None:
        """The run is on disk: drop its full pages from the buffer (a final partial page stays)."""
        done_idx = (run.first_address - self._base) // PAGE_SIZE + len(run.pages)
        if run.ends_partial:
            done_idx -= 1
        if done_idx <= 0:
            return
        cut = done_idx * PAGE_PAYLOAD
        del self._buf[:cut]
        self.buffered_bytes -= cut  # (next_address stays: the pages dropped come before it)
        del self._firsts[:done_idx]
        del self._lasts[:done_idx]
        self._short = {i - done_idx: u for i, u in self._short.items() if i >= done_idx - 1}
        self._submitted -= cut
        self._base += done_idx * PAGE_SIZE

    def slot(self, page_address: int) -> int:
        """Which of the buffer's page slots a page occupies (the buffer is a ring of pages)."""
        return (page_address // PAGE_SIZE) % self.capacity_pages
