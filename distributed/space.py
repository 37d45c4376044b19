"""The distributed queue manager's log space: extent files in a ring (circular) or a stream
(linear), the log control file, and TripleWrite's spare page (IBM MQ, "Types of logging" and "Log stanza of the qm.ini file").

Each extent ``S0000000.LOG`` … is ``LogFilePages`` pages of 4 KiB, pre-formatted. The log's
addresses run on without end; an extent holds one range of them at a time, assigned when the
logger moves into it. The control file ``amqhlctl.lfh`` records which extents hold which
ranges, the ring order and the restart data; it is replaced atomically (a crash leaves the
old or the new), at every extent switch and every checkpoint.

**Circular.** The ring starts as the primaries in order. When the logger fills an extent it
takes the next one in the ring – unless that one still holds data restart needs (it is at or
after the log's tail): then it inserts a secondary into the ring *at the head*, right after
the extent it just filled and before the one still needed, formatting it then (a cost paid
at that moment). With 3 primaries: 0,1,2 → (2 still needed) 0,1,3,2 → (later 1 still needed
while filling 0) 0,4,1,3,2. When no secondary is left the log is full (AMQ7463).

**Linear.** The logger always moves to a new extent, pre-formatted ahead of need; extents
whose data is all before the tail become inactive. What happens to them then is
LogManagement's: **Manual** keeps them until somebody deletes them; **Automatic** reuses an
extent once neither restart nor media recovery needs it (it is before RECLOG and MEDIALOG);
**Archive** does the same only after ``SET LOG ARCHIVED`` says it has been archived. A
reusable extent takes the next number when the log needs one, with no formatting cost.

**LogWriteIntegrity.** SingleWrite rewrites a partial page in place. TripleWrite (and
DoubleWrite, which behaves as TripleWrite) first writes the new version of the page to a
spare slot – this model keeps two, alternating, in ``amqhlspr.lfh`` – and only then
overwrites the original; a reader finding the original torn, or older than a spare copy
of the same page, uses the spare. Full pages are never written twice.
"""

from __future__ import annotations

from typing import Sequence

import attrs
from sortedcontainers import SortedDict

from mqlog.core.errors import LogFileMissingError, StorageError
from mqlog.core.format.pages import PAGE_SIZE, PageRun, check_page
from mqlog.core.platform import LogControl, SpaceDefaults
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.space import HighWaterMark, PhysicalWrite, RangeMemo
from mqlog.core.disk.storage import Storage
from mqlog.distributed import logcheck
from mqlog.distributed.controlfile import CONTROL_FILE, ControlFile, ExtentEntry, extent_name, format_lsn
from mqlog.distributed.spacestatus import ARCHIVE, AUTOMATIC, MANUAL, SpaceStatus

SPARE_FILE = "amqhlspr.lfh"


class LogFullError(StorageError):
    """AMQ7463: the log is full – no extent may be reused and no secondary is left."""




@attrs.define
class Extent:
    number: int
    primary: bool
    start: int = NO_ADDRESS  # first address it holds now (NO_ADDRESS: none yet)
    inactive: bool = False  # linear: left the active log
    archived: bool = False  # linear, Archive: SET LOG ARCHIVED named it
    reusable: bool = False  # linear: needed by neither restart nor media recovery, may be reused
    idle_laps: int = 0  # secondary: laps in a row the ring could have done without it


#: a secondary leaves the ring after this many laps in a row in which it looked superfluous
#: (the logger avoids shrinking and growing the ring over and over)
SECONDARY_IDLE_LAPS = 3


class DistributedLogSpace(SpaceStatus, SpaceDefaults):
    """Extents, ring or stream, control file and spare page of one queue manager's log."""

    control_file = CONTROL_FILE
    extent_name = staticmethod(extent_name)

    def __init__(self, storage: Storage, *, primary: int = 3, secondary: int = 2, file_pages: int = 4096,
                 linear: bool = False, triple_write: bool = True, start: int = 0, management: str = MANUAL):
        self.storage = storage
        self.primary = primary
        self.secondary = secondary
        self.file_pages = file_pages
        self.extent_bytes = file_pages * PAGE_SIZE
        self.linear = linear
        self.triple_write = triple_write
        if management not in (MANUAL, AUTOMATIC, ARCHIVE):
            raise ValueError(f"LogManagement {management!r}")
        self.management = management
        self.media = NO_ADDRESS  # the oldest media recovery record (MEDIALOG's address)
        self.reused = 0  # linear extents reused instead of formatted
        self.start = start
        self.extents: dict[int, Extent] = {}
        self.ring: list[int] = []  # circular: the order extents are used in
        self.by_start = SortedDict()  # first address -> extent number (address-ordered index)
        self.current: int | None = None
        self.tail = start
        self.control = LogControl(NO_ADDRESS, start, 0)
        #: the high-water mark the control file keeps (restart refuses a log ending below it)
        self.high_water_mark = HighWaterMark(start)
        self.switches = 0
        self.spare_slot = 0
        self.archive_offloads = 0
        self.events: list[tuple[str, dict]] = []  # ("AMQ7463", {...}) for the platform's messages
        self._loaded = False
        #: pages whose newest good version only the spare file holds (found by reading):
        #: they are written back in place before a spare slot can be reused
        self._repairs: dict[int, bytes] = {}
        self._missing_said: set[str] = set()
        #: read_page's extent for an address: (first address, extent, file name), remembered
        #: for the addresses _holder maps to that extent until by_start changes
        self._files = RangeMemo(self._hold_for)
        #: the only addresses a spare slot may hold a good copy of (None: look again); see
        #: _spare_candidates. Restart reads thousands of pages and the spare can matter for
        #: a few of them at most: the others skip reading and checking both slots.
        self._spare_addresses: frozenset | None = None
        #: the address of the page last planned for each spare slot (its write may still
        #: be on its way to disk when read_page looks)
        self._spare_planned = [NO_ADDRESS, NO_ADDRESS]

    # -- capacity ------------------------------------------------------------------------------

    @property
    def capacity_bytes(self) -> int:
        """The most the active log may hold: primaries and secondaries."""
        return (self.primary + self.secondary) * self.extent_bytes

    def usage(self, head: int, tail: int) -> float:
        """Head-to-tail distance as a fraction of the active log (IBM MQ, "Managing logs"), measured from
        the start of the extent holding the tail: extents are freed whole, so that is the
        space really taken."""
        return max(0, head - self._start_of(tail)) / self.capacity_bytes

    def free_bytes(self, head: int, tail: int) -> int:
        """Bytes the log can still take before it is full (AMQ7463): every extent of the
        active log, primaries and secondaries, from the one holding the tail – the tail the
        last checkpoint saved, which is what frees extents, not a newer one."""
        if self._loaded and self.tail < tail:
            tail = self.tail
        return self.capacity_bytes - max(0, head - self._start_of(tail))

    def _start_of(self, address: int) -> int:
        """The first address of the extent holding ``address`` (``address`` if none does),
        through read_page's memo: the queue manager asks before every record it logs, and the
        tail's extent changes only when the tail moves on or an extent is reassigned."""
        hold = self._files.get(address)
        return hold[0] if hold is not None else address

    def release(self, tail: int) -> None:
        self.tail = max(self.tail, tail)
        if self.linear:
            keep_from = self.tail if self.media == NO_ADDRESS else min(self.tail, self.media)
            for ext in self.extents.values():
                if ext.start == NO_ADDRESS or ext.number == self.current:
                    continue
                if ext.start + self.extent_bytes <= self.tail:
                    ext.inactive = True
                if (ext.inactive and ext.start + self.extent_bytes <= keep_from and not ext.reusable
                        and (self.management == AUTOMATIC or self.management == ARCHIVE and ext.archived)):
                    ext.reusable = True
                    self.events.append(("extent-reusable", {"extent": extent_name(ext.number)}))

    def set_log_archived(self, name: str) -> bool:
        """``SET LOG ARCHIVED(name)``: the extent has been archived; under LogManagement=Archive
        it may be reused once restart and media recovery no longer need it. Returns False if
        it was already marked (MQ then writes a message and does not fail)."""
        if not self._loaded:
            self._load_or_empty()
        if not self.linear or self.management != ARCHIVE:
            raise ValueError(f"SET LOG ARCHIVED needs LogManagement=Archive (this log is "
                             f"{'LINEAR' if self.linear else 'CIRCULAR'}, {self.management})")
        matches = [e for e in self.extents.values() if extent_name(e.number) == name.strip().upper()]
        if matches and matches[0].archived:
            self.events.append(("extent-archived-again", {"extent": name}))
            return False  # already marked (perhaps reusable since): a message, not a failure
        if not matches or matches[0].start == NO_ADDRESS or matches[0].reusable:
            raise ValueError(f"log extent {name!r} is not recognized (or is waiting to be reused)")
        ext = matches[0]
        if ext.number == self.current:
            raise ValueError(f"log extent {name} is being written: it cannot be archived yet")
        ext.archived = True
        self.release(self.tail)
        self._save()
        return True

    def recovery_extents(self) -> tuple[str, str]:
        """(RECLOG, MEDIALOG): the oldest extents restart and media recovery need (MEDIALOG
        only for a linear log, which is the one that supports media recovery)."""
        if not self.linear:
            return "", ""  # a circular log reuses its files: nothing for an operator to keep
        status = self.status(self.tail)
        return status["RECLOG"], status["MEDIALOG"]

    # -- mapping addresses to extents -------------------------------------------------------------

    def holder(self, address: int) -> Extent | None:
        """The extent holding log address ``address`` now (None if no extent does): the log's
        address-to-extent map, for readers that walk the log in its own order (dmpmqlog)."""
        return self._holder(address)

    def _holder(self, address: int) -> Extent | None:
        idx = self.by_start.bisect_right(address) - 1
        if idx < 0:
            return None
        start, number = self.by_start.peekitem(idx)
        if address >= start + self.extent_bytes:
            return None
        return self.extents[number]

    def _assign(self, ext: Extent, start: int) -> None:
        self._files.forget()
        if ext.start != NO_ADDRESS:
            self.by_start.pop(ext.start, None)
        ext.start = start
        ext.inactive = False
        self.by_start[start] = ext.number

    def _needed(self, ext: Extent) -> bool:
        """Whether an extent still holds data restart needs (anything at or after the tail)."""
        return ext.start != NO_ADDRESS and ext.start + self.extent_bytes > self.tail

    def _next_extent(self, start: int) -> tuple[Extent, bool]:
        """The extent that will hold addresses from ``start``; and whether it must be formatted."""
        if self.linear:
            # The next extent in sequence: one formatted ahead if there is one, else a
            # reusable old one under its new number, else a new one.
            fresh = [n for n, e in self.extents.items() if e.start == NO_ADDRESS]
            if fresh:
                return self.extents[min(fresh)], False
            number = max(self.extents) + 1
            reusable = sorted((e.start, e.number) for e in self.extents.values() if e.reusable)
            if reusable:
                old = self.extents.pop(reusable[0][1])
                self.by_start.pop(old.start, None)
                if old.number in self.ring:
                    self.ring.remove(old.number)  # a first primary gives way: the ring names only extents that exist
                self._files.forget()
                self.storage.delete(extent_name(old.number))
                self.storage.create(extent_name(number), self.extent_bytes)
                self.reused += 1
                ext = self.extents[number] = Extent(number, primary=False)
                return ext, False
            ext = self.extents[number] = Extent(number, primary=False)
            return ext, True
        pos = self.ring.index(self.current)
        candidate = self.extents[self.ring[(pos + 1) % len(self.ring)]]
        candidate = self._release_superfluous(candidate)
        if not self._needed(candidate):
            return candidate, False
        primaries = sum(1 for n in self.ring if self.extents[n].primary)
        if primaries < self.primary:
            # LogPrimaryFiles was raised: a new primary joins the ring only when needed.
            number = max(self.extents) + 1
            ext = self.extents[number] = Extent(number, primary=True)
            self.ring.insert(pos + 1, number)
            return ext, True
        secondaries = sum(1 for n in self.ring if not self.extents[n].primary)
        if secondaries >= self.secondary:
            self.events.append(("AMQ7463", {"extent": extent_name(candidate.number)}))
            raise LogFullError(f"log full: {extent_name(candidate.number)} is still needed and all "
                               f"{self.secondary} secondary extents are in use (AMQ7463)")
        number = max(self.extents) + 1
        ext = self.extents[number] = Extent(number, primary=False)
        self.ring.insert(pos + 1, number)  # at the head: after the extent just filled
        return ext, True

    def _release_superfluous(self, candidate: Extent) -> Extent:
        """A secondary about to be reused counts a lap in which it looked superfluous if the
        extent after it is free too (the ring would have coped without it); after
        SECONDARY_IDLE_LAPS such laps in a row it leaves the ring and its file is deleted."""
        if candidate.primary or self._needed(candidate):
            candidate.idle_laps = 0
            return candidate
        pos = self.ring.index(candidate.number)
        after = self.extents[self.ring[(pos + 1) % len(self.ring)]]
        if self._needed(after) or after.number == self.current:
            candidate.idle_laps = 0
            return candidate
        candidate.idle_laps += 1
        if candidate.idle_laps < SECONDARY_IDLE_LAPS:
            return candidate
        self.ring.remove(candidate.number)
        if candidate.start != NO_ADDRESS:
            self.by_start.pop(candidate.start, None)
            self._files.forget()
        del self.extents[candidate.number]
        if self.storage.exists(extent_name(candidate.number)):
            self.storage.delete(extent_name(candidate.number))
        self.events.append(("secondary-released", {"extent": extent_name(candidate.number)}))
        return after

    # -- the writer's questions -----------------------------------------------------------------

    def plan_write(self, run: PageRun) -> Sequence[PhysicalWrite]:
        if not self._loaded:
            self._create()
        # Every write before this one has finished (the writer issues one cycle at a time):
        # the pages before this run's first are on disk, whatever becomes of this one.
        self.high_water_mark.advance(run)
        writes: list[PhysicalWrite] = []
        for address, page in sorted(self._repairs.items()):
            # Restart read this page from the spare file: put it back in place first, so the
            # spare slot is free for reuse and the page does not depend on it any more.
            ext = self._holder(address)
            if ext is not None:
                writes.append(PhysicalWrite(extent_name(ext.number), address - ext.start, address, (page,),
                                            purpose="repair"))
        self._repairs.clear()
        if run.rewrites_partial and self.triple_write:
            # TripleWrite: the new version of the partial page goes elsewhere first.
            self.spare_slot ^= 1
            self._spare_planned[self.spare_slot] = run.first_address
            self._spare_addresses = None
            writes.append(PhysicalWrite(SPARE_FILE, self.spare_slot * PAGE_SIZE, run.first_address,
                                        run.pages[:1], purpose="spare", hardens_first_page=True))
        address = run.first_address
        i = 0
        switched = False
        while i < len(run.pages):
            ext = self._holder(address)
            fmt = 0
            if ext is None:
                ext, must_format = self._next_extent(address)
                name = extent_name(ext.number)
                if not self.storage.exists(name):
                    # The file exists, formatted, before the control data names it (saved
                    # below): a control file that lists an extent whose file is missing or
                    # short is then always damage, never a crash between the two.
                    self.storage.create(name, self.extent_bytes)
                    must_format = True
                self._assign(ext, address)
                self.current = ext.number
                self.switches += 1
                switched = True
                fmt = self.extent_bytes if must_format else 0
            room = (ext.start + self.extent_bytes - address) // PAGE_SIZE
            chunk = run.pages[i:i + room]
            writes.append(PhysicalWrite(extent_name(ext.number), address - ext.start, address, tuple(chunk),
                                        format_bytes=fmt))
            i += len(chunk)
            address += len(chunk) * PAGE_SIZE
        if switched and self.linear:
            # Pre-format the next extent ahead of need (the log formatter task), so the
            # switch after this one finds it ready.
            nxt = max(self.extents) + 1
            if all(e.start != NO_ADDRESS for e in self.extents.values()) and not any(
                    e.reusable for e in self.extents.values()):
                self.extents[nxt] = Extent(nxt, primary=False)
                if not self.storage.exists(extent_name(nxt)):
                    self.storage.create(extent_name(nxt), self.extent_bytes)
                writes.append(PhysicalWrite(extent_name(nxt), 0, NO_ADDRESS, (), purpose="format",
                                            format_bytes=self.extent_bytes))
        if switched:
            self._save()  # which extent holds which addresses must survive a crash
        return writes

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        if not self._loaded:
            self._load_or_empty()
        hold = self._files.get(address)
        if hold is None:
            return b"", CONTROL_FILE, 0
        name, offset = hold[2], address - hold[0]
        if self.storage.exists(name):
            raw = self.storage.read(name, offset, PAGE_SIZE)
            if len(raw) < PAGE_SIZE:
                size = self.storage.size(name)
                raise LogFileMissingError(
                    f"log extent {name} is {size} bytes, short of the {self.extent_bytes} it was formatted to: "
                    f"the log it held from offset {size} on is gone (the control file {CONTROL_FILE} lists it "
                    f"as holding log from LSN {format_lsn(hold[0])})", source=name, offset=offset,
                    address=format_lsn(address))
        else:
            if name not in self._missing_said:
                self._missing_said.add(name)
                self.events.append(("extent-missing", {"extent": name}))
            # Deleted or archived away (AMQ6767): the log it held is needed here, so it is
            # damage, never the end of the log.
            raise LogFileMissingError(
                f"log extent {name} is missing: it holds log from LSN {format_lsn(hold[0])} that is needed "
                f"here (the control file {CONTROL_FILE} lists it; AMQ6767)", source=name, offset=offset,
                address=format_lsn(address))
        # The spare file is read whatever LogWriteIntegrity is now: a queue manager that ran
        # with TripleWrite may have left the newest copy of its last partial page only there,
        # and a restart with SingleWrite (a setting read at each start) must still find it.
        candidates = self._spare_addresses
        if candidates is None:
            candidates = self._spare_addresses = self._spare_candidates()
        found = self._spare_copy(address) if address in candidates else None
        if found is not None:
            spare, slot = found
            header, problem = check_page(raw, address)
            spare_header, _ = check_page(spare, address)
            if problem is not None or spare_header.write_no > header.write_no:
                self._repairs[address] = spare
                # (the slot's own offset: damage the reader finds in this copy is there,
                # in slot 1 as often as in slot 0)
                return spare, SPARE_FILE, slot * PAGE_SIZE
        return raw, name, offset

    def _hold_for(self, address: int) -> tuple | None:
        """_holder(address) for read_page's memo, with the range of addresses it answers the
        same for: up to the end of the extent or the next extent's first address, whichever
        is first."""
        ext = self._holder(address)
        if ext is None:
            return None
        end = ext.start + self.extent_bytes
        idx = self.by_start.bisect_right(ext.start)
        if idx < len(self.by_start):
            end = min(end, self.by_start.peekitem(idx)[0])
        return (ext.start, ext, extent_name(ext.number)), ext.start, end

    def _spare_candidates(self) -> frozenset:
        """The addresses whose page a spare slot may hold a good copy of: what each slot
        holds now, if it is a good page, and what was last planned for it (its write may
        not have landed yet). A slot changes only by a write this space planned (the queue
        manager owns its log), and each plan forgets this set: for any other address
        _spare_copy would find nothing."""
        found = {a for a in self._spare_planned if a != NO_ADDRESS}
        if self.storage.exists(SPARE_FILE):
            for slot in (0, 1):
                header, _ = check_page(self.storage.read(SPARE_FILE, slot * PAGE_SIZE, PAGE_SIZE), NO_ADDRESS)
                if header is not None:  # a good page (at its own address, not NO_ADDRESS's)
                    found.add(header.address)
        return frozenset(found)

    def _spare_copy(self, address: int) -> tuple[bytes, int] | None:
        """The newest good spare copy of the page at ``address`` and its slot, if a spare slot
        holds one."""
        if not self.storage.exists(SPARE_FILE):
            return None
        best = None
        for slot in (0, 1):
            raw = self.storage.read(SPARE_FILE, slot * PAGE_SIZE, PAGE_SIZE)
            header, problem = check_page(raw, address)
            if problem is None and (best is None or header.write_no > best[0]):
                best = (header.write_no, raw, slot)
        return None if best is None else best[1:]

    # -- control data ----------------------------------------------------------------------------

    def _create(self) -> None:
        """A new log: the primaries formatted, the first one current.

        The control file is written first and the extents after it (with no I/O that could
        crash in between): extent files without a control file are then always a control
        file lost, never a queue manager whose creation a crash cut short."""
        self._loaded = True
        for number in range(self.primary):
            self.extents[number] = Extent(number, primary=True)
            self.ring.append(number)
        first = self.extents[0]
        self._assign(first, self.start)
        self.current = 0
        self._save()
        for number in range(self.primary):
            if not self.storage.exists(extent_name(number)):
                self.storage.create(extent_name(number), self.extent_bytes)

    def save_control(self, control: LogControl) -> None:
        """Save a checkpoint's control data: its tail and media address, and the extents'
        inactive and reusable flags as that tail and media address make them (the same
        write; until 2026-12-01 the flags were those of the checkpoint before)."""
        self.control = control
        self.media = control.media
        self.release(control.tail)
        self._save()

    def load_control(self) -> LogControl | None:
        if not self._loaded:
            self._load_or_empty()
        return self.control if self.control.checkpoint != NO_ADDRESS else None

    def _save(self) -> None:
        self.storage.replace(CONTROL_FILE, ControlFile(
            linear=self.linear, extent_pages=self.file_pages, checkpoint=self.control.checkpoint,
            checkpoint_number=self.control.checkpoint_number, tail=self.tail, media=self.media,
            written_to=self.high_water_mark.address, written_write=self.high_water_mark.write,
            current=self.current, ring=tuple(self.ring),
            extents=tuple(ExtentEntry(e.number, e.primary, e.start, e.inactive, e.archived, e.reusable)
                          for e in sorted(self.extents.values(), key=lambda e: e.number)),
        ).to_bytes())

    def _load_or_empty(self) -> None:
        self._loaded = True
        if not self.storage.exists(CONTROL_FILE):
            self._loaded = False  # a new log: created on the first write
            orphans = [n for n in self.storage.list("S") if n.endswith(".LOG")]
            if self.storage.exists(SPARE_FILE):
                orphans.append(SPARE_FILE)
            if orphans:
                # The control file is written before any extent exists (_create): log
                # files without it are a queue manager whose control data is lost, not a
                # new one (MQ will not start it either).
                raise LogFileMissingError(
                    f"the log control file is missing, but the log directory holds {', '.join(orphans[:3])}"
                    f"{' …' if len(orphans) > 3 else ''}: this queue manager has logged and its control data "
                    f"is lost (restore {CONTROL_FILE} with the log, or re-create the queue manager)",
                    source=CONTROL_FILE)
            return
        control = ControlFile.from_bytes(self.storage.read(CONTROL_FILE, 0, self.storage.size(CONTROL_FILE)),
                                         file_pages=self.file_pages)
        self.linear = control.linear
        self.media = control.media
        self.control = LogControl(control.checkpoint, control.tail, control.checkpoint_number, self.media)
        self.tail = self.control.tail
        self.high_water_mark.address, self.high_water_mark.write = control.written_to, control.written_write
        self.ring = list(control.ring)
        for entry in control.extents:
            ext = self.extents[entry.number] = Extent(entry.number, entry.primary, NO_ADDRESS, entry.inactive)
            if entry.start != NO_ADDRESS:
                self._assign(ext, entry.start)
                ext.inactive, ext.archived, ext.reusable = entry.inactive, entry.archived, entry.reusable
        self.current = control.current
        if self.linear:
            # A linear log's ring is only the primaries it was created with; a control file
            # written before reused extents left it could still name them.
            self.ring = [n for n in self.ring if n in self.extents]
            return
        # A raised LogPrimaryFiles counts the extents already in the ring as primaries and
        # adds new primaries only when needed (IBM MQ, "Log stanza of the qm.ini file": a new
        # LogPrimaryFiles takes effect at restart, "and the effect might not be immediate").
        primaries = sum(1 for n in self.ring if self.extents[n].primary)
        for number in self.ring:
            if primaries >= self.primary:
                break
            if not self.extents[number].primary:
                self.extents[number].primary = True
                primaries += 1

    # -- what restart checks (distributed/logcheck.py) ---------------------------------------------

    def high_water(self) -> int | None:
        if not self._loaded:
            self._load_or_empty()
        return self.high_water_mark.mark()

    def scan_to(self, address: int) -> int | None:
        return logcheck.scan_to(self, address)

    def check_files(self, start: int) -> None:
        if not self._loaded:
            self._load_or_empty()
        if self._loaded:
            logcheck.check_files(self, start, format_lsn)
