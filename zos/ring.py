"""The z/OS active log: its data sets used as a ring, each in one or two copies (TWOACTV), and
the switch from a full one to the next (IBM MQ for z/OS, "Managing the logs"). A part of
:class:`~mqlog.zos.space.ZosLogSpace`, which composes it with the archives
(:mod:`mqlog.zos.archives`), the offload (:mod:`mqlog.zos.offload`) and the BSDS
(:mod:`mqlog.zos.bsds`); the space decides when to write and what the BSDS records, the ring
where the log goes and which copies take it.

**Writing.** A data set holds one RBA range at a time; a write's pages go to the data set
holding their RBAs, both copies at once, except a partial CI being rewritten
(:meth:`ActiveRing.copy_writes`). When the log reaches the end of the current data set the
ring switches to the next one, if it may be reused (:meth:`ActiveRing.switch`).

**Reading.** A page is read from copy 1, or from copy 2 where copy 1's is bad (CSQJ106E); a
data set the BSDS lists that is missing or short is refused (CSQJ103E), never the end of the
log. What opening the data sets finds: a copy missing or shorter than the log it holds is out
of use from then on, never re-created: the other copy logs alone there (CSQJ004I).
"""

from __future__ import annotations

from typing import Callable

from mqlog.core.errors import LogFileMissingError, StorageError
from mqlog.core.format.pages import PAGE_SIZE, STALE, UNWRITTEN, check_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.space import PhysicalWrite, RangeMemo
from mqlog.core.disk.storage import Storage
from mqlog.zos.bsds import MAX_DATA_SETS
from mqlog.zos.datasets import ActiveDataSet, data_set_name


class ActiveLogFullError(StorageError):
    """CSQJ111A: every active data set is full and none may be reused."""


class ActiveRing:
    """The active data sets of one queue manager, their copies and the current one."""

    def __init__(self, storage: Storage, *, data_sets: int, cis: int, copies: int, offload: bool, start: int,
                 events: list, reads: dict, show: Callable[[int], str],
                 on_full: Callable[[ActiveDataSet], None]):
        self.storage = storage
        self.data_sets = data_sets  # per copy (DEFINE LOG may add some)
        self.cis = cis
        self.ds_bytes = cis * PAGE_SIZE
        self.copies = copies
        #: OFFLOAD: a data set is reused once archived; without it, once restart no longer needs it
        self.offload = offload
        self.start = start  # the log's first RBA
        self.events = events  # the space's, said by the queue manager
        self.reads = reads  # the space's read counts by where satisfied
        self.show = show  # an RBA as the log's mode writes it
        self.on_full = on_full  # a data set filled: its offload is queued (with OFFLOAD)
        self.active: list[ActiveDataSet] = []  # the ring, in the BSDS's order
        self.current = 0  # index into self.active
        self.switches = 0
        #: copies of active data sets the queue manager found missing, or short of the log they
        #: hold, when it started: name -> the RBA the data set then started at. Such a copy is
        #: not written again, nor re-created (a data set of zeros where the log was would be
        #: a second copy in name only) – a short one is, from the first CI of the next range
        #: the ring starts on it: the other copy logs alone there (CSQJ004I), and serves
        #: the reads (while the data set still holds that range, the part of the copy that is
        #: left may be read too)
        self.inactive: dict[str, int] = {}
        self._single_said = 0  # the data set (number) CSQJ004I was said for, while logging on it
        self.current_checked = True  # (a new log: nothing to check; open_data_sets clears it)
        self._read_errors_said: set[tuple[str, int]] = set()  # CSQJ106E: (data set, CI) said
        #: copy 2's rewrite of the plan's first CI, issued once the plan's other writes are done
        self._serial_rewrites: list[PhysicalWrite] = []
        self._full_warned = 0  # CSQJ110E: the last 5% step reported for the last data set
        self._full_said = False  # CSQJ111A said since the last switch (logging waits for a data set)
        #: read_page's active data set for an RBA: (first RBA, copy 1 name, copy 2 name),
        #: remembered for its range until a data set takes a new range
        self.files = RangeMemo(self._hold_for)

    # -- the ring ---------------------------------------------------------------------------------

    def create(self) -> None:
        """A new log's ring: the data sets in order, the first one current from the log's start."""
        self.active = [ActiveDataSet(n) for n in range(1, self.data_sets + 1)]
        self.active[0].start = self.start
        self.files.forget()
        self.current = 0

    def create_data_sets(self) -> None:
        for ds in self.active:
            for copy in range(1, self.copies + 1):
                name = data_set_name(copy, ds.number)
                if not self.storage.exists(name):
                    self.storage.create(name, self.ds_bytes)

    def restore(self, active, current: int) -> None:
        """The ring as the BSDS gives it: ``active`` as ``(number, start, full, archive)`` each."""
        self.active = [ActiveDataSet(n, start, full, a) for n, start, full, a in active]
        self.current = current
        self.files.forget()
        self.data_sets = len(self.active)  # DEFINE LOG may have added some

    def define(self) -> str:
        """``DEFINE LOG``: a new active data set (each copy), formatted now; it joins the
        ring to be switched to after the current one fills. Returns its copy-1 name."""
        if len(self.active) >= MAX_DATA_SETS:
            raise ValueError(f"DEFINE LOG: the active log already has {MAX_DATA_SETS} data sets per copy")
        number = max(d.number for d in self.active) + 1
        for copy in range(1, self.copies + 1):
            name = data_set_name(copy, number)
            if not self.storage.exists(name):
                self.storage.create(name, self.ds_bytes)
        self.active.insert(self.current + 1, ActiveDataSet(number))
        self.files.forget()
        self.data_sets = len(self.active)
        return data_set_name(1, number)

    def holder(self, address: int) -> ActiveDataSet | None:
        for ds in self.active:
            if ds.start != NO_ADDRESS and ds.start <= address < ds.start + self.ds_bytes:
                return ds
        return None

    def reusable(self, ds: ActiveDataSet, checkpoint: int) -> bool:
        """Whether ``ds`` may take a new range: never used, archived (OFFLOAD), or wholly before
        the last checkpoint (``checkpoint``; without OFFLOAD)."""
        if ds.start == NO_ADDRESS:
            return True
        if self.offload:
            return ds.archive > 0
        return checkpoint == NO_ADDRESS or ds.start + self.ds_bytes <= checkpoint

    def oldest_unreusable_start(self, checkpoint: int, tail: int) -> int:
        """Where the part of the active log that cannot be overwritten yet begins."""
        cur = self.active[self.current]
        if self.offload:
            # (a loop, not a list and min(): the queue manager asks before every record it logs)
            oldest = cur.start
            for d in self.active:
                if d.full and d.archive <= 0 and d.start < oldest and d.start != NO_ADDRESS:
                    oldest = d.start
            return oldest
        holder = self.holder(checkpoint if checkpoint != NO_ADDRESS else tail)
        return holder.start if holder is not None else cur.start

    # -- writing ------------------------------------------------------------------------------------

    def copy_writes(self, ds: ActiveDataSet, address: int, pages: tuple, *, rewrite: bool,
                    first: bool) -> list[PhysicalWrite]:
        """The writes of one data set's share of a run, one per copy.

        New CIs go to both copies at once. A CI that is being rewritten (the partial CI a
        write starts with, ``rewrite``) must never be in flight on both copies together where
        a crash can tear a CI: it could tear both, losing records already committed on it.
        So copy 1 is written whole while copy 2 takes the new CIs beside it, and copy 2's
        first CI is rewritten only after copy 1 is on disk (collected in
        ``_serial_rewrites``, issued after every other write of the plan: :meth:`serial_rewrites`):
        one copy of that CI is intact at every moment. No cheaper order keeps that: the two
        writes of the CI cannot overlap and the force waits for both. IBM describes the same
        for DB2 for z/OS, whose log manager MQ's resembles: "The first time a log control
        interval is written to disk, the write I/Os to the log data sets are done in
        parallel. However, if the same 4 KB log control interval is again written to disk,
        then the write I/Os to the log data sets must be done serially", and "I/O overlap in
        dual logging occurs whenever multiple log control intervals have to be written"
        (Redbook "Storage Management with DB2 for OS/390", 10.4.3); MQ's SMF 115 counts such
        writes (QJSTSERW, "Log_CI_Serial" in IBM's MQ SMF formatter).

        Where the device never splits a CI (``atomic_write_bytes`` ≥ 4096, write-cached DASD)
        a crash leaves each copy's CI old or new, both holding every acknowledged record, and
        the space's ``plan_write`` passes ``rewrite=False``: both copies at once. IBM: "In
        some MQ versions, all writes to dual logs are done in parallel if the primary log data
        set is on a write-cached DASD" (InfoSphere Replication Server 11.4, "IBM MQ logging
        configuration for z/OS"); S6 measured the I/O time per write to LOGCOPY1 "almost
        unchanged" with dual logs. With one copy there is nothing to keep intact but the CI
        itself, which single logging leaves unprotected, as IBM says of it."""
        name1 = data_set_name(1, ds.number)
        name2 = data_set_name(2, ds.number)
        live = [name for name in (name1, name2)[:self.copies] if name not in self.inactive]
        if not live:
            # Every copy of the data set the log must go to now is gone (found missing at start):
            # the log cannot be written, and nothing is re-created in its place.
            self.events.append(("log-allocation-error", {"dsname": name1}))
            raise StorageError(f"CSQJ103E LOG ALLOCATION ERROR DSNAME={name1}: no copy of active log data set "
                               f"DS{ds.number:02d} can be written ({' and '.join((name1, name2)[:self.copies])} "
                               f"missing or short since the queue manager started)")
        if len(live) < self.copies:
            self._say_single(ds, live[0])
        elif self._single_said:
            self._single_said = 0
        writes = [PhysicalWrite(live[0], address - ds.start, address, pages, alongside=not first)]
        if len(live) == 1:
            return writes
        if not rewrite:
            return writes + [PhysicalWrite(name2, address - ds.start, address, pages, purpose="copy2",
                                           alongside=True)]
        if len(pages) > 1:
            writes.append(PhysicalWrite(name2, address - ds.start + PAGE_SIZE, address + PAGE_SIZE, pages[1:],
                                        purpose="copy2", alongside=True))
        self._serial_rewrites.append(PhysicalWrite(name2, address - ds.start, address, pages[:1],
                                                   purpose="copy2"))
        return writes

    def serial_rewrites(self) -> list[PhysicalWrite]:
        """Copy 2's rewrites of a first CI the plan's :meth:`copy_writes` held back: they go
        last, after copy 1's (and forgotten here)."""
        writes, self._serial_rewrites = self._serial_rewrites, []
        return writes

    def _say_single(self, ds: ActiveDataSet, live: str) -> None:
        """CSQJ004I, once while logging goes to ``ds``: one of its copies is out of use, so
        the log is written once there (IBM MQ for z/OS, "Active log problems", "Dual logging is
        lost": "CSQJ004I ACTIVE LOG COPY n INACTIVE, LOG IN SINGLE MODE, ENDRBA=...";
        "IBM MQ continues in single mode", back to dual at a data set with both copies).
        ENDRBA is the last RBA the inactive copy holds: where the data set starts."""
        if self._single_said == ds.number:
            return
        self._single_said = ds.number
        copy = 2 if live.startswith("LOGCOPY1") else 1
        self.events.append(("CSQJ004I", {"copy": copy, "end": max(ds.start - 1, self.start)}))

    def switch(self, address: int, checkpoint: int) -> None:
        """The current data set is full: queue its offload (a task of its own, started once
        this write is on disk), move to the next in the ring."""
        old = self.active[self.current]
        if old.start != NO_ADDRESS and address >= old.start + self.ds_bytes:
            old.full = True
            self.events.append(("CSQJ002I", {"dsname": data_set_name(1, old.number), "start": old.start,
                                             "end": old.start + self.ds_bytes - 1}))
            if self.offload:
                self.on_full(old)
        nxt = self.active[(self.current + 1) % self.data_sets]
        if not self.reusable(nxt, checkpoint):
            if not self._full_said:  # once while logging waits (a checkpoint may free nothing yet)
                self._full_said = True
                self.events.append(("CSQJ111A", {}))
            raise ActiveLogFullError(f"CSQJ111A OUT OF SPACE IN ACTIVE LOG DATA SETS: "
                                     f"{data_set_name(1, nxt.number)} is not yet reusable")
        nxt.start, nxt.full, nxt.archive = address, False, 0
        self.files.forget()
        self.current = self.active.index(nxt)
        self.switches += 1
        self._full_warned = 0
        self._full_said = False
        for copy in range(1, self.copies + 1):
            name = data_set_name(copy, nxt.number)
            if name in self.inactive:
                if not self.storage.exists(name):
                    continue  # (never re-created: the write to it says CSQJ004I)
                # A short copy is written afresh from the new range's first CI: no hole, so it
                # is back in use (and logging dual again on this data set).
                del self.inactive[name]
            self.events.append(("CSQJ001I", {"copy": copy, "dsname": data_set_name(copy, nxt.number),
                                             "start": address, "end": address + self.ds_bytes - 1}))

    def warn_if_filling(self, head: int, checkpoint: int) -> None:
        """CSQJ110E at each 5% of the last available data set (the next is not reusable)."""
        nxt = self.active[(self.current + 1) % self.data_sets]
        if self.reusable(nxt, checkpoint) and not (self.offload and nxt.archive < 0):
            return
        cur = self.active[self.current]
        percent = (head - cur.start) * 100 // self.ds_bytes
        step = percent // 5 * 5
        if step >= 5 and step > self._full_warned:
            self._full_warned = step
            self.events.append(("CSQJ110E", {"copy": 1, "percent": step}))

    # -- opening the active data sets -----------------------------------------------------------

    def open_data_sets(self) -> None:
        """The queue manager opens the active data sets the BSDS lists: a copy that is missing
        is an allocation error (CSQJ103E), one shorter than the log it holds a read error at
        the RBA where it is cut (CSQJ106E). Either copy is out of use from now on
        (:attr:`inactive`): with dual logging the other copy serves reads and logs alone
        (CSQJ004I), with none left a read of its log is refused and a write to it ends the
        queue manager. MQ documents CSQJ103E for a data set it cannot allocate ("LOG ALLOCATION
        ERROR DSNAME=dsname, ERROR STATUS=eeeeiiii, SMS REASON CODE=sss"; "If the input is
        needed for recovery, recovery is not successful, and the queue manager ends
        abnormally", IBM MQ for z/OS, "Archive log problems", "Allocation problems"), and dual
        logging's reason to be: "in the event of a problem with one log data set, such as the
        data set being accidentally deleted, the equivalent data set in the other set of logs
        can be used" ("Log data set definitions"). A full data set holds its whole range; the
        current one holds log only up to the head, which restart finds: its copies are judged
        at the first write (:meth:`check_current`), where a copy cut only in the part never
        written is unformatted there, not damaged (writes extend it), as is a data set never
        used yet."""
        self.inactive = {}
        self.current_checked = False
        current = self.active[self.current] if self.active else None
        for ds in self.active:
            for copy in range(1, self.copies + 1):
                name = data_set_name(copy, ds.number)
                if not self.storage.exists(name):
                    self.inactive[name] = ds.start
                    self.events.append(("log-allocation-error", {"dsname": name}))
                elif ds is not current and ds.start != NO_ADDRESS:
                    self._cut_short(ds, name, self.ds_bytes)

    def _cut_short(self, ds: ActiveDataSet, name: str, holds: int) -> None:
        """Copy ``name`` of ``ds`` out of use (CSQJ106E where it ends) if it is shorter than
        the ``holds`` bytes of log it must hold."""
        size = self.storage.size(name)
        if size < holds:
            self.inactive[name] = ds.start
            self.events.append(("log-read-error", {"dsname": name, "rba": ds.start + size - size % PAGE_SIZE}))

    def check_current(self, address: int) -> None:
        """At the first write after the queue manager started (at ``address``, the head restart
        found): a copy of the current data set shorter than the log before the head lost some of
        it, and a write there would leave a hole in that copy: it is out of use from now on."""
        self.current_checked = True
        ds = self.holder(address)
        if ds is None or ds is not self.active[self.current]:
            return
        for copy in range(1, self.copies + 1):
            name = data_set_name(copy, ds.number)
            if name not in self.inactive:
                self._cut_short(ds, name, address - address % PAGE_SIZE - ds.start)

    # -- reading ------------------------------------------------------------------------------------

    def read_active(self, address: int) -> tuple[bytes, str, int]:
        ds = self.holder(address)
        if ds is None:
            return b"", "", 0
        return self.read_copies(address, address - ds.start, data_set_name(1, ds.number),
                                data_set_name(2, ds.number))

    def stored(self, name: str, offset: int, expected: int) -> tuple[bytes, str | None]:
        """The page at ``offset`` of data set ``name`` and, if the data set is missing or
        shorter than ``expected`` bytes (what it was formatted or archived to), why."""
        storage = self.storage
        if not storage.exists(name):
            return b"", f"{name} is missing"
        raw = storage.read(name, offset, PAGE_SIZE)
        if len(raw) < PAGE_SIZE:
            return raw, f"{name} is {storage.size(name)} bytes, short of the {expected} it holds"
        return raw, None

    def gone(self, address: int, offset: int, names, whys) -> LogFileMissingError:
        """The refusal when no copy of a needed data set can be read: MQ's allocation error,
        CSQJ103E ("If the input is needed for recovery, recovery is not successful, and the
        queue manager ends abnormally", IBM MQ for z/OS, "Archive log problems"). (CSQJ100E,
        which this once said, is the BSDS's.)"""
        return LogFileMissingError(
            f"{'; '.join(whys)}: the BSDS lists {' and '.join(names)} as holding RBA {self.show(address)}, "
            f"which is needed here (CSQJ103E: the data set cannot be allocated)", source=names[0], offset=offset,
            address=self.show(address))

    def _copy_page(self, name: str, offset: int, address: int) -> tuple[bytes, str | None]:
        """:meth:`stored` for a copy of an active data set, and why not to read it if the
        copy is out of use and the data set has since taken a new range (what it holds is
        not that range's log)."""
        raw, why = self.stored(name, offset, self.ds_bytes)
        held = self.inactive.get(name)
        if why is None and held is not None and held != address - offset:
            why = f"{name} is out of use (found missing or short when the queue manager started)"
        return raw, why

    def read_copies(self, address: int, offset: int, first: str, second: str) -> tuple[bytes, str, int]:
        """Copy 1's page; copy 2's instead when copy 1's is not good and copy 2's is. (The
        reader checks the page again: check_page remembers the answer for the same bytes.)
        A data set the BSDS lists that is missing or short is damage: with dual logging the
        other copy serves, with none left the read is refused (never the end of the log).

        A CI read from copy 2 because copy 1's is bad is a log read error MQ reports, once
        for each CI: "CSQJ106E LOG READ ERROR DSNAME=..., LOGRBA=..., ERROR STATUS=ccccffss";
        "if the error occurs during restart, if dual logging is used, [MQ] continues with the
        alternative log data set, otherwise the queue manager ends abnormally"; during an
        offload "the process tries to read the RBA range from a second copy" (IBM MQ for z/OS,
        "Active log problems", "I/O errors occur while reading the active log"). A copy found
        missing at start was reported then (CSQJ103E): its reads go to the other copy without
        a message each. Both are counted as copy-2 reads (``reads_copy2``)."""
        raw, why = self._copy_page(first, offset, address)
        if self.copies == 2:
            _, problem = check_page(raw, address) if why is None else (None, why)
            if problem is not None:
                other, why2 = self._copy_page(second, offset, address)
                if why2 is None:
                    # Bytes the same as copy 1's say what copy 1's said (past the end of the
                    # log both copies are unwritten: every CI a reader scans there), and the
                    # reader's own check of copy 1's is then answered from check_page's memo.
                    problem2 = problem if why is None and other == raw else check_page(other, address)[1]
                    if problem2 is None or why is not None:
                        self.reads["copy2"] += 1
                        if (why is None and problem not in (UNWRITTEN, STALE)
                                and (first, address) not in self._read_errors_said):
                            # (a CI copy 1 never received – the write a crash cut short on
                            # one copy – is the end of that copy's log, not an I/O error)
                            self._read_errors_said.add((first, address))
                            self.events.append(("log-read-error", {"dsname": first, "rba": address}))
                        return other, second, offset
                elif why is not None:
                    raise self.gone(address, offset, (first, second), (why, why2))
        elif why is not None:
            raise self.gone(address, offset, (first,), (why,))
        return raw, first, offset

    def unwritten_run(self, address: int, limit: int) -> int:
        """How many pages from ``address`` (below ``limit``, at most :data:`UNWRITTEN_RUN`)
        :meth:`read_copies` would return as zeros: where every copy it would read holds zeros
        – copy 1's unwritten, so copy 2's read and found unwritten too – with nothing said or
        counted. Read a run at a time, for restart's scan past the end of the log (to the
        end of the current data set: thousands of CIs never written). 0 where a read might
        do anything else: the data set not held unambiguously, a copy out of use, missing
        or short, a page not zeros."""
        found = self._hold_for(address)
        if found is None:
            return 0
        (start, first, second), _, end = found
        run = (min(limit, end) - address) // PAGE_SIZE
        if run > UNWRITTEN_RUN:
            run = UNWRITTEN_RUN
        storage = self.storage
        for name in (first, second)[:self.copies]:
            if run <= 0 or name in self.inactive or not storage.exists(name):
                return 0
            run = _zero_pages(storage.read(name, address - start, run * PAGE_SIZE))
        return run

    def _hold_for(self, address: int) -> tuple | None:
        """The active data set holding ``address`` for read_page's memo, or None: for its
        whole range, or for this RBA only if another data set's range overlaps it (then the
        order of the list decides, as :meth:`holder` does)."""
        ds = self.holder(address)
        if ds is None:
            return None
        end = ds.start + self.ds_bytes
        hold = (ds.start, data_set_name(1, ds.number), data_set_name(2, ds.number))
        if any(d is not ds and d.start != NO_ADDRESS and d.start < end and ds.start < d.start + self.ds_bytes
               for d in self.active):
            end = ds.start  # (an empty range: not remembered)
        return hold, ds.start, end


#: the most pages :meth:`ActiveRing.unwritten_run` reads of a copy at once (256 KiB)
UNWRITTEN_RUN = 64
_ZERO_RUN = bytes(UNWRITTEN_RUN * PAGE_SIZE)
_ZERO_PAGE = bytes(PAGE_SIZE)


def _zero_pages(raw: bytes) -> int:
    """How many whole pages of zeros ``raw`` begins with (compared in place, no copies)."""
    whole = len(raw) // PAGE_SIZE
    if len(raw) == whole * PAGE_SIZE and _ZERO_RUN.startswith(raw):
        return whole
    n = 0
    while n < whole and raw.startswith(_ZERO_PAGE, n * PAGE_SIZE):
        n += 1
    return n
