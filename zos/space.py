"""The z/OS queue manager's log space: dual active log data sets used cyclically, the bootstrap
data set (BSDS), and archive offload (IBM MQ for z/OS, "Managing the logs" and "The BSDS").
It is the object the core's log writer and restart see (the ``LogSpace`` protocol), composed
of parts: the active ring (:mod:`mqlog.zos.ring`: data sets, their copies, switching), the
archive inventory (:mod:`mqlog.zos.archives`, indexed by RBA), the offload task
(:mod:`mqlog.zos.offload`) and the BSDS's format (:mod:`mqlog.zos.bsds`). The space plans
each write across them and keeps the BSDS: what it records, when it is saved, which copy is
read back.

**Active logs.** ``data_sets`` data sets per copy, each ``cis`` control intervals (CIs) of
4 KiB: ``LOGCOPY1.DS01`` … and, with dual logging (TWOACTV), ``LOGCOPY2.DS01`` …. A data set
holds one RBA range at a time (start ending in 000, end in FFF). New CIs go to both copies
at once; a partial CI being rewritten goes to copy 1 first and to copy 2 only once copy 1
holds it, unless the device never splits a CI (write-cached DASD): then to both at once
(:meth:`~mqlog.zos.ring.ActiveRing.copy_writes`). A reader takes copy 1's page, or copy 2's when
copy 1's is damaged or torn – so dual logging survives one damaged copy, and a torn rewrite
of a partial CI. A copy missing or short when the queue manager starts is out of use from then
on, never re-created (:meth:`~mqlog.zos.ring.ActiveRing.open_data_sets`): the other copy logs alone there.

**Offload.** When a data set fills, the logger switches to the next one in the ring
(CSQJ002I, CSQJ001I) and the full one is copied to an archive data set
(``CSQARC1.A0000001``, and ``CSQARC2.A0000001`` with TWOARCH), with a copy of the BSDS
beside it (``….B0000001``); the BSDS inventory records it (CSQJ003I) once the copy is on
disk. An active data set is reused only after it has been archived; the log never wraps over
unarchived data. Archive entries beyond MAXARCH drop out of the BSDS, oldest first (the files
stay). With OFFLOAD=NO (test systems) nothing is archived: a data set is reused as soon as
restart no longer needs it from the last checkpoint, even if a long unit of work still does –
its records are then gone.

The offload is a task of its own, not part of any log write: how it runs, and IBM's words
for it, are in :mod:`mqlog.zos.offload`.

**BSDS.** ``BSDS01`` and, with TWOBSDS, ``BSDS02``: the active and archive inventory with RBA
ranges and status, the checkpoint queue, the highest RBA written and offloaded. Each copy is
replaced atomically; a reader takes the valid copy with the higher sequence number, and says
so when both are valid and differ (CSQJ120E; the next update rewrites both).

**Reads.** A page is read from the active data set holding its RBA, or from the archive
whose range holds it once it has left the active log; reads are counted by where they were
satisfied (QJSTRACT, QJSTRARH) and by copy.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Sequence

from mqlog.core.errors import LogFileMissingError, LogFormatError, StorageError
from mqlog.core.format.pages import PAGE_SIZE, PageRun, check_page
from mqlog.core.platform import LogControl, SpaceDefaults
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.space import HighWaterMark, PhysicalWrite
from mqlog.core.disk.storage import Storage
from mqlog.zos import logcheck
from mqlog.zos.archives import ArchiveLog
from mqlog.zos.datasets import ActiveDataSet, ArchiveEntry, archive_name, data_set_name  # noqa: F401 (re-exported)
from mqlog.zos.offload import Offloads
from mqlog.zos.ring import ActiveLogFullError, ActiveRing  # noqa: F401 (re-exported)
from mqlog.zos.bsds import BSDS_FILES, BsdsInventory, decode_bsds
from mqlog.zos.config import RbaThreshold, rba_limits

#: where (as a fraction of the way from the warning RBA to the termination RBA) the model
#: gives CSQI045I, CSQI046E and CSQI047E: IBM does not publish these points
RBA_WARNING_STEPS = (0.0, 0.5, 0.9)

#: the checkpoint queue in the BSDS wraps after this many entries
CHECKPOINT_QUEUE = 100

#: what a crash can split on a device that says nothing: a sector
SECTOR_BYTES = 512
#: MAXCNOFF's default: offload tasks that may run at once (IBM MQ for z/OS, "Using CSQ6LOGP")
DEFAULT_MAX_OFFLOADS = 31
#: INBUFF's default in bytes: the offload reads the active data set in requests of this
#: much, in whole CIs (an assumption: IBM does not publish how the offload reads)
DEFAULT_OFFLOAD_READ_BYTES = 60 * 1024


class RbaLimitReached(StorageError):
    """The log reached the termination RBA of its mode: the queue manager ends with reason
    code 00D10257 (convert to 8-byte RBAs, or reset the log)."""


class ZosLogSpace(Offloads, SpaceDefaults):
    """Active data sets (one or two copies), archive offload and the BSDS of one queue manager:
    the active ring (:attr:`ring`) and the archives (:attr:`archives`) it is composed of, the
    BSDS it keeps."""

    #: a unit of work whose log was overwritten cannot be backed out: the queue manager ends
    #: with abend 5C6, reason 00D1032A
    lost_code = "5C6-00D1032A"

    def __init__(self, storage: Storage, *, data_sets: int = 3, cis: int = 4096, dual: bool = True,
                 dual_archive: bool = True, dual_bsds: bool = True, offload: bool = True, max_arch: int = 500,
                 arcpfx1: str = "CSQARC1", arcpfx2: str = "CSQARC2", start: int = 0, rba8: bool = True,
                 max_offloads: int = DEFAULT_MAX_OFFLOADS, offload_read_bytes: int = DEFAULT_OFFLOAD_READ_BYTES):
        if start % PAGE_SIZE:
            raise ValueError(f"the log must start on a CI boundary (an RBA ending in 000), not {start:X}")
        self.storage = storage
        #: the block a crash never splits on the log's device (the queue manager sets it)
        self.atomic_write_bytes = SECTOR_BYTES
        self.cis = cis
        self.ds_bytes = cis * PAGE_SIZE
        self.copies = 2 if dual else 1
        self.dual_archive = dual_archive
        self.bsds_files = BSDS_FILES if dual_bsds else BSDS_FILES[:1]
        self.offload = offload
        self.max_arch = max_arch
        self.prefixes = (arcpfx1, arcpfx2) if dual_archive else (arcpfx1,)
        self.rba8 = rba8
        self.limits = rba_limits(rba8)
        self._rba_stage = 0  # the RBA warnings already given (1: CSQI045I, 2: CSQI046E, 3: CSQI047E)
        self.reads = {"active": 0, "archive": 0, "copy2": 0}
        self.events: list[tuple[str, dict]] = []
        #: the active data sets, their copies and the current one
        self.ring = ActiveRing(storage, data_sets=data_sets, cis=cis, copies=self.copies, offload=offload,
                               start=start, events=self.events, reads=self.reads,
                               show=lambda address: self.limits.hex(address), on_full=self._queue_offload)
        self.archives = ArchiveLog()  # the BSDS's archive inventory, indexed by RBA
        self.control = LogControl(NO_ADDRESS, start, 0)
        #: where restart would begin (the control data's ``restart_from``): the active log
        #: from there on may not be overwritten (asked before every record: an attribute)
        self.restart_rba = NO_ADDRESS
        self.checkpoints: list[list[int]] = []  # [begin RBA, number], newest last
        self.tail = start
        self.high_written = start
        #: the BSDS's forced high-water mark (restart refuses a log ending below it);
        #: ``high_written`` is where the latest planned write ends, not yet on disk
        self.high_water_mark = HighWaterMark(start)
        self.next_archive = 1
        self.sequence = 0  # BSDS update count
        self.archive_offloads = 0
        self.bsds_accesses = 0
        self._loaded = False
        #: offload tasks: at most this many at once (MAXCNOFF), each reading the data set in
        #: requests of ``offload_read_cis`` CIs
        self.max_offloads = max_offloads
        self.offload_read_cis = max(1, offload_read_bytes // PAGE_SIZE)
        #: offloads waiting for a task (data set, archive entry), oldest first
        self._offload_queue: list[tuple[ActiveDataSet, ArchiveEntry]] = []
        self.offloads_running = 0
        self._out_of_space_said = False  # CSQJ111A for the writer's wait, until an offload ends

    # -- the ring's state, where readers of the space (restart's checks, the utilities, the log
    # data source) have always found it: the data sets in the BSDS's order, the current one's
    # index, how many there are, the log's first RBA, the switches made
    active = property(attrgetter("ring.active"))
    current = property(attrgetter("ring.current"))
    data_sets = property(attrgetter("ring.data_sets"))
    start = property(attrgetter("ring.start"))
    switches = property(attrgetter("ring.switches"))

    # -- capacity -----------------------------------------------------------------------------

    @property
    def capacity_bytes(self) -> int:
        return self.ring.data_sets * self.ds_bytes  # (the ring's own: asked before every record)

    def usage(self, head: int, tail: int) -> float:
        if not self._loaded:
            return 0.0
        return max(0, head - self.ring.oldest_unreusable_start(self.restart_rba, tail)) / self.capacity_bytes

    def free_bytes(self, head: int, tail: int) -> int:
        """Bytes the active log can take before every data set is full and none may be
        reused (CSQJ111A)."""
        if not self._loaded:
            return self.capacity_bytes
        return self.capacity_bytes - max(0, head - self.ring.oldest_unreusable_start(self.restart_rba, tail))

    def release(self, tail: int) -> None:
        self.tail = max(self.tail, tail)

    # -- the writer's questions ---------------------------------------------------------------------

    def plan_write(self, run: PageRun) -> Sequence[PhysicalWrite]:
        if not self._loaded:
            self._load_or_create()
        ring = self.ring
        if not ring.current_checked:
            ring.check_current(run.first_address)
        self.high_water_mark.advance(run)
        if self.control.checkpoint == NO_ADDRESS:
            # Until the first checkpoint the queue manager is being created: a crash between
            # its BSDS copies and its data sets left them to make now (nothing is logged yet).
            ring.create_data_sets()
        writes: list[PhysicalWrite] = []
        address = run.first_address
        i = 0
        switched = False
        while i < len(run.pages):
            ds = ring.holder(address)
            if ds is None:
                ring.switch(address, self.restart_rba)
                ds = ring.active[ring.current]
                switched = True
            room = (ds.start + self.ds_bytes - address) // PAGE_SIZE
            chunk = run.pages[i:i + room]
            # A CI being rewritten goes to copy 2 only after copy 1 holds it, unless the device
            # never splits a CI: then neither copy can be torn, and both go at once.
            serial = run.rewrites_partial and i == 0 and self.atomic_write_bytes < PAGE_SIZE
            writes += ring.copy_writes(ds, address, tuple(chunk), rewrite=serial, first=not writes)
            i += len(chunk)
            address += len(chunk) * PAGE_SIZE
        writes += ring.serial_rewrites()
        self._check_rba(address)
        self.high_written = max(self.high_written, run.end_address)
        ring.warn_if_filling(run.end_address, self.restart_rba)
        if switched:
            self._save()
        return writes

    def _check_rba(self, end: int) -> None:
        """The RBA thresholds of the mode (IBM MQ for z/OS, "Larger log Relative Byte Address"): warnings past the warning RBA, and
        the end of the queue manager at the termination RBA (00D10257)."""
        limits = self.limits
        level = limits.threshold(min(end, limits.end))
        if level >= RbaThreshold.TERMINATION:
            self.events.append(("rba-termination", {"rba": end, "limit": limits.termination}))
            raise RbaLimitReached(
                f"00D10257: the log RBA {limits.hex(min(end, limits.end))} reached the termination point "
                f"{limits.hex(limits.termination)} of the {limits.width}-byte RBA range; convert the BSDS to "
                f"8-byte RBAs (mqlog convert-rba) or reset the log")
        if level < RbaThreshold.WARNING:
            return
        # IBM names three data-manager warnings, CSQI045I (plan a reset), CSQI046E (perform
        # one) and CSQI047E (stop and reset), without publishing where each starts. The model
        # says them as the used range passes the warning RBA, half-way to the termination
        # RBA, and nine tenths of the way (a documented choice, RBA_WARNING_STEPS).
        used = (min(end, limits.termination) - limits.warning) / (limits.termination - limits.warning)
        stage = sum(1 for step in RBA_WARNING_STEPS if used >= step)
        if stage > self._rba_stage:
            self._rba_stage = stage
            self.events.append(("rba-warning", {"rba": end, "limit": limits.termination, "stage": stage,
                                                "end": limits.end, "width": limits.width}))

    def define_log(self) -> str:
        """``DEFINE LOG``: a new active data set (each copy), formatted now; it joins the
        ring to be switched to after the current one fills. Returns its copy-1 name."""
        if not self._loaded:
            self._load_or_create()
        name = self.ring.define()
        self._save()
        return name

    def convert_to_rba8(self) -> bool:
        """CSQJUCNV: convert the BSDS to 8-byte RBAs (one way). False if it already was."""
        if not self._loaded:
            self._load_or_create(create=False)
        if self.rba8:
            return False
        self.rba8, self.limits, self._rba_stage = True, rba_limits(True), 0
        self._save()
        return True

    def lost(self, address: int) -> bool:
        """Whether the log at ``address`` is gone: written once, but neither an active data
        set nor a recorded archive holds it now (OFFLOAD=NO overwrote it, or MAXARCH
        dropped its archive from the BSDS)."""
        if not self._loaded:
            self._load_or_create(create=False)
        return (self.start <= address < self.high_written and self.ring.holder(address) is None
                and self.archives.covering(address) is None)

    # -- reading -------------------------------------------------------------------------------------

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        """The page at ``address``: from the active data set holding it (the ring's copies), or
        once it has left the active log from the archive whose range holds it (any copy that
        is good); counted by where it was satisfied (QJSTRACT, QJSTRARH)."""
        if not self._loaded:
            self._load_or_create(create=False)
        ring = self.ring
        hold = ring.files.get(address)
        if hold is not None:
            self.reads["active"] += 1
            return ring.read_copies(address, address - hold[0], hold[1], hold[2])
        entry = self.archives.covering(address)
        if entry is None:
            return b"", data_set_name(1, ring.active[ring.current].number) if ring.active else "BSDS01", 0
        self.reads["archive"] += 1
        offset = address - entry.start
        found = None
        whys = []
        for name in entry.files:
            raw, why = ring.stored(name, offset, entry.end + 1 - entry.start)
            if why is not None:
                whys.append(why)
                continue
            if check_page(raw, address)[1] is None:
                return raw, name, offset
            if found is None:
                found = (raw, name, offset)
        if found is None:
            # Every copy of the archive the BSDS records is gone: its log cannot be read.
            raise ring.gone(address, offset, entry.files, whys)
        return found

    # -- control data: the BSDS -------------------------------------------------------------------

    def _load_or_create(self, create: bool = True) -> None:
        if self._loaded:
            return
        if self._load():
            self._loaded = True  # (the RBA thresholds are said again at the first write: restart's)
            return
        if not create:
            return
        self._loaded = True
        self.ring.create()
        # The BSDS first, then the data sets (no I/O that could crash in between): data sets
        # without a BSDS are then always a BSDS lost, never a creation a crash cut short.
        self._save()
        self.ring.create_data_sets()

    def save_control(self, control: LogControl) -> None:
        self.control = control
        self.restart_rba = control.restart_from
        self.tail = max(self.tail, control.tail)
        if not self.checkpoints or self.checkpoints[-1][0] != control.checkpoint:
            self.checkpoints.append([control.checkpoint, control.checkpoint_number])
            del self.checkpoints[:-CHECKPOINT_QUEUE]
        self._save()

    def load_control(self) -> LogControl | None:
        if not self._loaded:
            self._load_or_create(create=False)
        return self.control if self.control.checkpoint != NO_ADDRESS else None

    def _bsds_bytes(self) -> bytes:
        return BsdsInventory(
            sequence=self.sequence, cis=self.cis, copies=self.copies, start=self.start, rba8=self.rba8,
            current=self.current, high_written=self.high_written, **self.high_water_mark.fields(),
            tail=self.tail, checkpoint=self.control.checkpoint, checkpoint_number=self.control.checkpoint_number,
            redo_from=self.control.redo_from,
            checkpoints=tuple(tuple(c) for c in self.checkpoints), next_archive=self.next_archive,
            active=tuple((d.number, d.start, d.full, d.archive) for d in self.active),
            archives=tuple((e.seq, e.start, e.end, tuple(e.files), e.complete) for e in self.archives),
        ).to_bytes()

    def _save(self) -> None:
        self.sequence += 1
        data = self._bsds_bytes()
        for name in self.bsds_files:
            self.storage.replace(name, data)
            self.bsds_accesses += 1

    def _load(self) -> bool:
        found = []
        for name in self.bsds_files:
            if not self.storage.exists(name):
                continue
            data, problem = decode_bsds(self.storage.read(name, 0, self.storage.size(name)))
            if problem is not None:
                self.events.append(("bsds-damaged", {"dsname": name}))
                continue
            found.append((data["sequence"], name, data))
        if not found:
            if any(self.storage.exists(n) for n in self.bsds_files):
                raise LogFormatError("no valid BSDS copy (magic or checksum)", source=self.bsds_files[0], offset=0)
            logs = [n for n in self.storage.list("LOGCOPY")] + [
                n for prefix in self.prefixes for n in self.storage.list(prefix + ".")]
            if logs:
                # The BSDS is written before any data set exists: log data sets without it
                # are a queue manager whose BSDS is lost, not a new one (CSQJ100E).
                raise LogFileMissingError(
                    f"CSQJ100E no BSDS ({' and '.join(self.bsds_files)} missing), but the queue manager's log "
                    f"data sets are there ({', '.join(logs[:3])}{' …' if len(logs) > 3 else ''}): its inventory "
                    f"is lost (restore the BSDS, e.g. from the copy beside an archive)", source=self.bsds_files[0])
            return False
        for name in self.bsds_files:
            if not self.storage.exists(name):
                self.events.append(("bsds-damaged", {"dsname": name}))
        if len(found) == 2 and found[0][0] != found[1][0]:
            # Both copies are readable but out of step: a copy was restored, or the queue
            # manager ended between its updates of the two. MQ says CSQJ120E and "attempts to
            # resynchronize the BSDS data sets using the more recent copy. If this fails, queue
            # manager startup is terminated" (IBM MQ for z/OS, "BSDS problems", "Unequal time
            # stamps", whose causes include "The queue manager terminated abnormally after
            # updating one copy of the BSDS but before updating the second copy"). The model
            # goes on with the more recent copy, and its next update of the BSDS (restart's
            # checkpoint) writes both copies from it; a failure to write them ends the queue
            # manager. The model's BSDS has an update sequence number where MQ's has the
            # system time stamp, and no utility time stamp (nothing in the model updates one
            # copy alone, as CSQJU003 run on one copy does, whose mismatch MQ cannot resolve):
            # the message gives the sequence numbers as SYSTEM and leaves UTILITY out.
            by_name = {n: seq for seq, n, _ in found}
            self.events.append(("bsds-out-of-step", {"bsds1": self.bsds_files[0], "bsds2": self.bsds_files[1],
                                                     "seq1": by_name[self.bsds_files[0]],
                                                     "seq2": by_name[self.bsds_files[1]]}))
        _, name, data = max(found)
        inventory = BsdsInventory.from_inventory(data, name)
        if inventory.cis != self.cis:
            raise LogFormatError(f"the active data sets are {inventory.cis} CIs, the configuration says {self.cis}",
                                 source=name)
        self.sequence = inventory.sequence
        self.ring.start = inventory.start
        if inventory.rba8 and not self.rba8:
            self.rba8, self.limits = True, rba_limits(True)  # converted: there is no way back
        elif self.rba8 and not inventory.rba8:
            raise LogFormatError("the BSDS is in 6-byte RBA mode and the configuration asks for 8-byte RBAs: "
                                 "convert it first (mqlog convert-rba)", source=name)
        self.high_written = inventory.high_written
        self.high_water_mark.address, self.high_water_mark.write = inventory.written_to, inventory.written_write
        self.tail = inventory.tail
        self.control = LogControl(inventory.checkpoint, self.tail, inventory.checkpoint_number,
                                  redo_from=inventory.redo_from)
        self.restart_rba = self.control.restart_from
        self.checkpoints = [list(c) for c in inventory.checkpoints]
        self.next_archive = inventory.next_archive
        self.ring.restore(inventory.active, inventory.current)
        self.archives = ArchiveLog(ArchiveEntry(q, start, end, files, c)
                                   for q, start, end, files, c in inventory.archives)
        if self.control.checkpoint != NO_ADDRESS:  # (before it, data sets are still to be made)
            self.ring.open_data_sets()
        self._offload_queue = []
        self.offloads_running = 0
        for ds in sorted((d for d in self.active if self.offload and d.full and d.archive <= 0
                          and d.start != NO_ADDRESS), key=lambda d: d.start):
            # The offload was cut short by the crash: it is done again, under the same number
            # (a number taken for a data set is never given to another one, so offloads that
            # ended out of order leave no gap and no duplicate). Restart does not wait for it.
            self._queue_offload(ds, self.archives.waiting(-ds.archive))
        return True

    # -- what restart checks (zos/logcheck.py) ---------------------------------------------------

    data_set_name = staticmethod(data_set_name)

    @property
    def inactive_copies(self) -> dict:
        return self.ring.inactive

    def high_water(self) -> int | None:
        if not self._loaded:
            self._load_or_create(create=False)
        return self.high_water_mark.mark()

    def scan_to(self, address: int) -> int | None:
        return logcheck.scan_to(self, address)

    def scan_page(self, address: int) -> tuple[bytes, str, int]:
        counted = dict(self.reads)
        try:
            return self.read_page(address)
        finally:
            self.reads.update(counted)  # (restart's own checks: not QJST's reads)

    def unwritten_run(self, address: int, limit: int) -> int:
        """The reader's run of pages :meth:`scan_page` would return as zeros (the active
        log's: :meth:`~mqlog.zos.ring.ActiveRing.unwritten_run`)."""
        return self.ring.unwritten_run(address, limit) if self._loaded else 0

    def check_files(self, start: int) -> None:
        if not self._loaded:
            self._load_or_create(create=False)
        if self._loaded:
            logcheck.check_files(self, start)

    # -- what utilities show --------------------------------------------------------------------

    @property
    def copies_out_of_use(self) -> list[str]:
        """The active data set copies found missing or short when the queue manager started,
        which it no longer writes: where the ring is on one of them, logging is single."""
        return sorted(self.ring.inactive)

    def metrics(self) -> dict:
        out = {"active_data_sets": self.data_sets, "copies": self.copies, "current_data_set":
               data_set_name(1, self.active[self.current].number) if self.active else None,
               "archives_recorded": self.archives.recorded,
               "reads_active": self.reads["active"], "reads_archive": self.reads["archive"],
               "reads_copy2": self.reads["copy2"], "bsds_accesses": self.bsds_accesses}
        if self.ring.inactive:  # (only then: a run with its copies intact has the figures it had)
            out["copies_out_of_use"] = self.copies_out_of_use
        return out
