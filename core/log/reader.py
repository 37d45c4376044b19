"""Reading the log back: pages validated, records reassembled across pages, the tail found.

The reader walks pages at consecutive addresses from a start address. Each page is checked
(:func:`mqlog.core.format.pages.check_page`); the first page that is not a good page at the
expected address ends the walk, and the reader then decides what kind of end it is:

* **end** – the page was never written (nothing stored, or zeros) or is stale (another
  address: left from an earlier lap of a circular log), and no good page of a later write
  follows up to the end of the files in use (``scan_to``: the platform's control data says
  where that is; without it, :data:`HOLE_PAGES` pages). The reader looks past a run of bad
  pages of any kind (a lost write of several pages is a run of zeros or stale pages exactly
  like the end), so that is what every walk reads beyond the end of the log. An end whose
  good pages stop below the control data's high-water mark (``written_to``) is refused:
  those pages were on disk when the control data was saved.
* **torn** – the page fails its checksum, or good pages follow a bad page but all of them
  come from one write that *began at or before* the bad page (each page records its write
  number and its index in that write). That is the signature of the final write cut short
  by a crash; nothing in it was acknowledged, so the log ends before it. A page that
  follows a short page without the AFTER_PAD flag means the rewrite of that short page,
  part of the same write, was lost: also torn.
* **corruption** – good pages from a write that began *after* the bad page, or from
  several writes, follow it: the bad page was hardened by an earlier write that
  completed, so records that were acknowledged are gone. That raises
  :class:`~mqlog.core.errors.LogCorruptionError` naming the file, offset and address. So
  does a page with no header whose first sector is not zeros (``GARBLED``), met at the end
  or anywhere the reader looks past it: a torn write lands whole sectors, each the new
  page's or what was there (zeros, or an earlier lap's page, header first), so only damage
  leaves one – bytes shifted or overwritten – and past it the end cannot be told.

A single-copy log cannot tell a bit flip in a page of its very last write from a torn
write; the reader reports such an end as ``torn`` with the page and its location so that
restart can say so (platforms with a second copy, or TripleWrite's spare page, resolve it
first by supplying the good copy from their :class:`PageSource`).
"""

from __future__ import annotations

import functools
import struct
import zlib
from typing import Callable, Iterator, Protocol, Sequence

import attrs

from mqlog.core.errors import LogCorruptionError, LogFormatError
from mqlog.core.format.pages import (FLAG_AFTER_PAD, GARBLED, NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_PAYLOAD, PAGE_SIZE,
                              STALE, UNWRITTEN, PageProblem, check_page, page_of, payload_offset)
from mqlog.core.format.records import (HEADER, HEADER_SIZE, MALFORMED, MAX_RECORD_SIZE, decode_record, peek_length,
                                       record_table)

_HEAD = HEADER.size  # header bytes before the record's CRC
#: a record header and its CRC in one: type and resource manager as one number, flags,
#: length, UOW, previous record, stamp, CRC
_FRAME = struct.Struct("<HHIQQQI")
assert _FRAME.size == HEADER_SIZE


#: bad pages in a row the reader looks past, for good pages from later writes, before it
#: decides a bad page is the end of the log: a hole of up to this many pages (unwritten,
#: stale or damaged) with later writes after it is found. It is also what every walk that
#: reaches the end of the log reads past it (64 KiB), so it covers the lost writes of a
#: few pages that group commit makes (a typical force is 3-5 pages) without reading far;
#: a lost write longer than this, like a lost last write, looks like the end of the log
HOLE_PAGES = 16


class PageSource(Protocol):
    """Where a reader gets pages: the platform's log space maps addresses to files."""

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        """The 4096 bytes stored for the page at ``address`` (b"" if the space holds none),
        the name of the file they came from and the offset in it."""


@attrs.frozen
class EndOfLog:
    """Where and why a walk of the log stopped."""

    #: the address just past the last good record (where a writer would resume)
    address: int
    #: "end", "torn" or "incomplete" (a record cut off by the end of the written log)
    reason: str
    #: the page that stopped the walk, its file and offset, and what was wrong with it
    page_address: int | None = None
    source: str | None = None
    offset: int | None = None
    problem: str | None = None
    #: good pages after the bad one that were discarded as part of a torn final write
    discarded_pages: int = 0


LOST_REWRITE = PageProblem("short page whose rewrite was lost (the next page does not follow a pad)")
OUT_OF_SEQUENCE = PageProblem("out of sequence (left from a write cut short before the log went on)")


def continues(prev, header) -> bool:
    """Whether ``header``'s page may follow ``prev``'s: the next page of the same write, or
    the first page of a later write. Write numbers never go down along a log."""
    if header.write_no == prev.write_no:
        return header.index == prev.index + 1
    return header.write_no > prev.write_no and header.index == 0


def _decoders(platform_types: tuple) -> dict[int, Callable]:
    """The body decoders of the core's record classes and ``platform_types``, by the
    header's first two bytes as one little-endian number: record type + 256 × resource
    manager (a wrong resource manager finds nothing)."""
    return {code | int(cls.RM) << 8: cls._from_body for code, cls in record_table(platform_types).items()}


def _quick_decode(decoders: dict, data, length: int):
    """The record that is the whole of ``data`` (``length`` bytes, a length already checked)
    if it passes every check, else None: the caller then decodes it the slow way, which
    reports what is wrong. A decoder that fails other than on bad bytes (a bug) raises."""
    key, flags, _, uow, prev, stamp, crc = _FRAME.unpack_from(data)
    decoder = decoders.get(key)
    if decoder is None:
        return None
    view = memoryview(data)
    body = view[HEADER_SIZE:length]
    if zlib.crc32(body, zlib.crc32(view[:_HEAD])) != crc:
        return None
    try:
        return decoder(flags, uow, prev, stamp, body)
    except MALFORMED:
        return None


def _hex(address: int) -> str:
    return f"{address:016X}"


class LogReader:
    """Iterate ``(address, record)`` from ``start`` to the end of the log.

    After iteration, :attr:`end` says where and why the log ended; :attr:`pages_read` and
    :attr:`bytes_read` count the I/O (restart charges it to the device).
    """

    def __init__(self, source: PageSource, start: int, *, format_address: Callable[[int], str] = _hex,
                 lookahead_pages: int = 1024, record_types: Sequence[type] = (), written_to: tuple[int, int] | None = None,
                 scan_to: Callable[[int], int | None] | None = None,
                 scan_read: Callable[[int], tuple[bytes, str, int]] | None = None,
                 unwritten_run: Callable[[int, int], int] | None = None):
        if start % PAGE_SIZE and start % PAGE_SIZE < PAGE_HEADER_SIZE:
            raise LogFormatError(f"start address {format_address(start)} falls inside a page header: "
                                 f"not the address of a record")
        self.source = source
        self.start = start
        self.format_address = format_address
        self.lookahead_pages = lookahead_pages
        #: the control data's high-water mark, (address, write number): every page below the
        #: address held good log, of writes before that one, when it was last saved (None: not
        #: known). A walk whose good pages stop below it is refused – unless its last good
        #: page is of a later write (a restart has since cut the log short and rewritten it).
        self.written_to = written_to
        #: past a bad page at an address, the address up to which later writes may lie (the
        #: end of the last file the control data says is in use); None, or a callable that
        #: answers None: HOLE_PAGES pages
        self.scan_to = scan_to
        #: how the pages read past HOLE_PAGES are read (the source's read_page if None): the
        #: reads past the end that a reader of the log's own pages alone would not make are
        #: counted in :attr:`scan_pages`, not in pages_read/bytes_read (not charged)
        self.scan_read = scan_read or source.read_page
        self.scan_pages = 0
        #: ``unwritten_run(address, limit)``: how many pages from ``address`` (below
        #: ``limit``) scan_read would return as zeros – each unwritten, nothing else to say –
        #: found without reading them one by one (0 where it cannot tell cheaply); None: read
        #: them. Past the end of the log restart reads to the end of the file in use:
        #: thousands of pages of zeros, most of its reading.
        self.unwritten_run = unwritten_run
        #: the record classes by code: the core's and ``record_types`` (a platform's; a
        #: platform record of no class given decodes as OpaqueRecord)
        self.record_types = tuple(record_types)
        self.types = record_table(self.record_types)
        self.end: EndOfLog | None = None
        self.pages_read = 0
        self.bytes_read = 0
        self.last_write_no: int | None = None
        #: the highest write number on any page the reader saw, discarded ones included: a
        #: writer resuming this log must number its writes above it
        self.max_write_no = 0

    def _read(self, address: int):
        raw, name, offset = self.source.read_page(address)
        self.pages_read += 1
        self.bytes_read += len(raw)
        return raw, name, offset

    def __iter__(self) -> Iterator[tuple[int, object]]:
        return self.records()

    def records(self) -> Iterator[tuple[int, object]]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[tuple[int, object]]]:
        """The records page by page: for each page read, a list of ``(address, record)`` of
        the records that end in it (restart's replay takes them a page at a time). A record
        the fast path below does not decode (a platform record, any doubt) closes the list
        so far, so a page's records may come as two lists or more.

        Nothing is read or decoded ahead of what :meth:`records` would: a page's records are
        listed once its bytes are checked, and every record before one that raises is
        delivered (as a batch of its own) before the error."""
        fmt = self.format_address
        decoders = _decoders(self.record_types)
        decoder_of = decoders.get
        unpack_frame, crc32 = _FRAME.unpack_from, zlib.crc32
        page_addr = page_of(self.start)
        cursor = payload_offset(self.start) if self.start % PAGE_SIZE else 0
        pend = bytearray()
        pend_addr = 0
        need = 0  # total length of the record being reassembled (0: header not yet complete)
        prev_short = False  # the previous page was not full: no record may continue from it
        prev = None  # the previous page's header
        prev_where = (None, None)
        resume = self.start  # address just after the last complete record
        out: list[tuple[int, object]] = []  # this page's records
        append = out.append
        while True:
            raw, name, offset = self._read(page_addr)
            header, problem = check_page(raw, page_addr)
            if header is not None and header.write_no > self.max_write_no:
                self.max_write_no = header.write_no
            if problem is None and prev_short and not header.flags & FLAG_AFTER_PAD:
                # The page before was left short but the writer did not pad it, so this
                # page's write was meant to rewrite it in full: that rewrite never landed.
                problem = LOST_REWRITE
            elif problem is None and prev is not None and not continues(prev, header):
                # Neither the next page of the same write nor the first page of a later one:
                # left over from a write that a crash cut short before the log went on.
                problem = OUT_OF_SEQUENCE
            if problem is not None:
                self.end = self._classify(page_addr, name, offset, problem, header, resume, bool(pend),
                                          prev_where)
                return
            prev = header
            prev_where = (name, offset)
            if pend:
                first = header.first_record
                remaining = need - len(pend) if need else HEADER_SIZE - len(pend)
                if first != NO_FIRST_RECORD and first < min(remaining, header.used):
                    raise LogCorruptionError(
                        f"page says a record starts at payload offset {first}, inside the record "
                        f"continued from {fmt(pend_addr)}", source=name, offset=offset, address=fmt(page_addr))
            self.last_write_no = header.write_no
            used = header.used
            view = memoryview(raw)[PAGE_HEADER_SIZE:PAGE_HEADER_SIZE + used]
            base = offset + PAGE_HEADER_SIZE  # file offset of payload byte 0
            first_addr = page_addr + PAGE_HEADER_SIZE  # log address of payload byte 0
            i = cursor
            while i < used:
                if not pend:
                    # Fast path: records wholly inside this page, of a registered type, that
                    # pass every check, one after another. Anything else – a record that runs
                    # on to the next page, or any doubt at all – stops it, and the path below
                    # checks the same bytes again and reports what is wrong exactly as it
                    # always has.
                    at = i
                    runs_on = False
                    while used - i >= HEADER_SIZE:
                        key, flags, length, uow, prev_rec, stamp, crc = unpack_frame(view, i)
                        end = i + length
                        if end > used:
                            runs_on = length <= MAX_RECORD_SIZE  # (a longer one: the path below says so)
                            break
                        decoder = decoder_of(key)
                        if decoder is None or length < HEADER_SIZE:
                            break
                        body = view[i + HEADER_SIZE:end]
                        if crc32(body, crc32(view[i:i + _HEAD])) != crc:
                            break
                        try:
                            record = decoder(flags, uow, prev_rec, stamp, body)
                        except MALFORMED:
                            break  # malformed: the path below reports it (a bug goes up as itself)
                        append((first_addr + i, record))
                        i = end
                    if i != at:
                        resume = first_addr + i
                    if runs_on:
                        # It runs on into the next page, and its length passes the checks
                        # peek_length makes: reassemble it from the rest of this page.
                        pend_addr = first_addr + i
                        pend_where = (name, base + i)
                        pend += view[i:used]
                        need = length
                        break
                    if i >= used:
                        break
                    if out:  # what was decoded comes before any error the slow path raises
                        yield out
                        out = []
                        append = out.append
                    rec_addr = first_addr + i
                    if used - i >= HEADER_SIZE:
                        length = self._peek(view, i, name, base + i, rec_addr)
                        if used - i >= length:
                            record = self._decode(view, i, name, base + i, rec_addr)
                            i += length
                            resume = page_addr + PAGE_HEADER_SIZE + i
                            append((rec_addr, record))
                            continue
                    pend_addr = rec_addr
                    pend_where = (name, base + i)
                if not need:
                    take = min(HEADER_SIZE - len(pend), used - i)
                    pend += view[i:i + take]
                    i += take
                    if len(pend) < HEADER_SIZE:
                        break
                    need = self._peek(pend, 0, pend_where[0], pend_where[1], pend_addr)
                take = min(need - len(pend), used - i)
                pend += view[i:i + take]
                i += take
                if len(pend) == need:
                    # (a record continued from earlier pages ends before any other record of
                    # this page starts: ``out`` is still empty, no error can overtake a record)
                    record = _quick_decode(decoders, pend, need)
                    if record is None:
                        record = self._decode(pend, 0, pend_where[0], pend_where[1], pend_addr)
                    pend = bytearray()
                    need = 0
                    resume = page_addr + PAGE_HEADER_SIZE + i
                    append((pend_addr, record))
            if out:
                yield out
                out = []
                append = out.append
            prev_short = used < PAGE_PAYLOAD
            if prev_short and pend:
                # A writer never leaves a record hanging off a page that is not full, and a
                # torn write cannot produce a good page that does: this is damage.
                raise LogCorruptionError(f"record at {fmt(pend_addr)} runs past a page that is not full",
                                         source=name, offset=offset, address=fmt(page_addr))
            if resume % PAGE_SIZE == 0:
                resume += PAGE_HEADER_SIZE  # the end of a full page is the start of the next payload
            page_addr += PAGE_SIZE
            cursor = 0

    def _inside_good_page(self, step, data, at, name, where, address):
        """Run a record-level ``step`` on bytes from a page whose checksum is good: any format
        error there is damage, not a tear, and is reported with the record's log address."""
        try:
            return step(data, at, source=name, where=where)
        except LogFormatError as exc:
            raise LogCorruptionError(exc.reason, source=name, offset=where,
                                     address=self.format_address(address)) from None

    def _peek(self, data, at, name, where, address):
        return self._inside_good_page(peek_length, data, at, name, where, address)

    def _decode(self, data, at, name, where, address):
        return self._inside_good_page(functools.partial(decode_record, types=self.types), data, at, name, where,
                                      address)

    def _classify(self, page_addr, name, offset, problem, header, resume, incomplete,
                  prev_where=(None, None)) -> EndOfLog:
        """Decide what the bad page at ``page_addr`` means, from the good pages after it.

        If none follow, the log ends there. If they all come from one write that began at
        or before the damage, that write is the last one and was cut short by the crash:
        nothing in it was acknowledged, so the log ends before it ("torn"). Anything else
        means a page that an earlier, completed write hardened is gone: corruption.
        """
        fmt = self.format_address
        if problem is GARBLED:
            raise self._garbled(page_addr, name, offset)
        if problem is LOST_REWRITE:
            # The page itself is good; what is missing is the rewrite of the short page
            # before it, so that is the page to name (its short version was read, good).
            damaged, later = page_addr - PAGE_SIZE, [header]
            page_addr, (name, offset) = damaged, prev_where
            reached = page_addr + PAGE_SIZE  # (its short version was read, good)
        else:
            damaged, later = page_addr, []
            reached = page_addr  # (the walk's good pages stop here)
        probe = later[0].address + PAGE_SIZE if later else page_addr + PAGE_SIZE
        hole = 1  # bad pages in a row from the damaged one
        if not later and self.lookahead_pages:
            # Look past a run of bad pages, of any kind, for good ones: a lost write of
            # several pages, or a run of garbage, leaves a hole of unwritten, stale or
            # damaged pages with the log going on after it. The end of the log looks the
            # same from its first page – zeros, or pages of an earlier lap – and differs only
            # in what comes after the run: nothing good, or only the rest of the final write.
            # So the reader reads on to the end of the last file the control data says is
            # in use (``scan_to``): a hole of any length with later writes after it is found.
            # Without control data to say so it looks HOLE_PAGES pages past the bad one.
            # Past those HOLE_PAGES (as far as every reader looked before), a good page from a
            # write before the last good page's is a leftover (a torn write's pages beyond the
            # point a restart wrote over), not a later write.
            charged = page_addr + (HOLE_PAGES + 1) * PAGE_SIZE  # (what a reader always looked at)
            limit = self.scan_to(page_addr) if self.scan_to is not None else None
            limit = charged if limit is None else max(limit, charged)
            floor = self.last_write_no or 0
            unwritten_run = self.unwritten_run
            zeros = unwritten_run is not None  # (whether the next page may well be zeros)
            while probe < limit:
                if probe < charged:
                    nraw, nname, noffset = self._read(probe)
                else:
                    if zeros:
                        # Pages of zeros: each would be read, found unwritten and passed over.
                        run = unwritten_run(probe, limit)
                        if run:
                            probe += run * PAGE_SIZE
                            hole += run
                            self.scan_pages += run
                            continue
                    nraw, nname, noffset = self.scan_read(probe)
                    self.scan_pages += 1
                probe += PAGE_SIZE
                nheader, nproblem = check_page(nraw, probe - PAGE_SIZE)
                zeros = unwritten_run is not None and nproblem is UNWRITTEN
                if nproblem is GARBLED:
                    raise self._garbled(probe - PAGE_SIZE, nname, noffset)
                if nheader is not None and nheader.write_no > self.max_write_no:
                    self.max_write_no = nheader.write_no
                if nproblem is None and (probe <= charged or nheader.write_no >= floor):
                    later.append(nheader)
                    break
                hole += 1
        for _ in range(self.lookahead_pages - len(later) if later else 0):
            nraw, _, _ = self._read(probe)
            nheader, nproblem = check_page(nraw, probe)
            if nheader is not None and nheader.write_no > self.max_write_no:
                self.max_write_no = nheader.write_no
            if nproblem is not None or not continues(later[-1], nheader):
                break
            later.append(nheader)
            probe += PAGE_SIZE
        if not later:
            if incomplete:
                reason = "incomplete"
            else:
                reason = "end" if problem in (UNWRITTEN, STALE) else "torn"
            return self._below_high_water(EndOfLog(resume, reason, page_addr, name, offset, str(problem)), reached)
        writes = {h.write_no for h in later}
        if len(writes) == 1 and later[0].write_start <= damaged:
            return self._below_high_water(EndOfLog(resume, "torn", page_addr, name, offset, str(problem),
                                                   len(later)), reached)
        raise LogCorruptionError(
            f"page {problem}{f', the first of {hole} bad pages in a row' if hole > 1 else ''}, but "
            f"{len(later)} good page{'s follow' if len(later) > 1 else ' follows'} {'them' if hole > 1 else 'it'} from "
            f"{'a write that began after it' if len(writes) == 1 else f'{len(writes)} later writes'}",
            source=name, offset=offset, address=fmt(page_addr))


    def _garbled(self, page_addr, name, offset) -> LogCorruptionError:
        """A page no crash can leave (GARBLED) where the log is or may go on: damage, so the
        end of the log cannot be told from it."""
        return LogCorruptionError(
            f"page {GARBLED}: a torn write lands whole sectors, each the new page's or zeros or an "
            f"earlier page's (header first), so this is damage and the end of the log cannot be "
            f"found past it", source=name, offset=offset, address=self.format_address(page_addr))

    def _below_high_water(self, end: EndOfLog, reached: int) -> EndOfLog:
        """``end``, unless the walk's good pages stop (at ``reached``) below the control data's
        high-water mark: every page there was on disk when the control data was saved, so
        records that were forced are gone (a zeroed or reformatted file, an older copy
        restored): damage, never the end. A log whose last good page is of a write after
        the mark's was rewritten since by a restart that resumed before the mark (its last
        record was cut short): the mark no longer applies."""
        if self.written_to is None:
            return end
        mark, write = self.written_to
        if reached >= mark or (self.last_write_no or 0) > write:
            return end
        fmt = self.format_address
        raise LogCorruptionError(
            f"page {end.problem}, but the log's control data records it as written up to {fmt(mark)}: the "
            f"log ends below its high-water mark, so records that were forced are gone (a file zeroed, "
            f"reformatted or restored from an older copy)",
            source=end.source, offset=end.offset, address=fmt(end.page_address))


def scan(source: PageSource, start: int, **kwargs) -> tuple[list[tuple[int, object]], EndOfLog]:
    """Read every record from ``start``; return them with the end-of-log verdict."""
    reader = LogReader(source, start, **kwargs)
    records = list(reader.records())
    return records, reader.end
