"""Reading the z/OS log back: a page from the active data set holding its RBA (copy 1's, or
copy 2's where copy 1's is bad, CSQJ106E), or from the archive whose range holds it once it
has left the active log; a data set the BSDS lists that is missing or short is refused
(CSQJ103E), never the end of the log. And what opening the active data sets finds: a copy
missing or shorter than the log it holds is out of use from then on. A mixin of
:class:`~mqlog.zos.space.ZosLogSpace` (split from it at this seam to keep the module small).
"""

from __future__ import annotations

from mqlog.core.errors import LogFileMissingError
from mqlog.core.format.pages import PAGE_SIZE, STALE, UNWRITTEN, check_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.zos.datasets import ActiveDataSet, data_set_name


class ActiveLogReads:
    """The reads of a :class:`~mqlog.zos.space.ZosLogSpace`."""

    __slots__ = ()

    # -- opening the active data sets -----------------------------------------------------------

    def _check_data_sets(self) -> None:
        """The queue manager opens the active data sets the BSDS lists: a copy that is missing
        is an allocation error (CSQJ103E), one shorter than the log it holds a read error at
        the RBA where it is cut (CSQJ106E). Either copy is out of use from now on
        (:attr:`_inactive`): with dual logging the other copy serves reads and logs alone
        (CSQJ004I), with none left a read of its log is refused and a write to it ends the
        queue manager. MQ documents CSQJ103E for a data set it cannot allocate ("LOG ALLOCATION
        ERROR DSNAME=dsname, ERROR STATUS=eeeeiiii, SMS REASON CODE=sss"; "If the input is
        needed for recovery, recovery is not successful, and the queue manager ends
        abnormally", IBM MQ for z/OS, "Archive log problems", "Allocation problems"), and dual
        logging's reason to be: "in the event of a problem with one log data set, such as the
        data set being accidentally deleted, the equivalent data set in the other set of logs
        can be used" ("Log data set definitions"). A full data set holds its whole range; the
        current one holds log only up to the head, which restart finds: its copies are judged
        at the first write (:meth:`_check_current`), where a copy cut only in the part never
        written is unformatted there, not damaged (writes extend it), as is a data set never
        used yet."""
        self._inactive = {}
        self._current_checked = False
        current = self.active[self.current] if self.active else None
        for ds in self.active:
            for copy in range(1, self.copies + 1):
                name = data_set_name(copy, ds.number)
                if not self.storage.exists(name):
                    self._inactive[name] = ds.start
                    self.events.append(("log-allocation-error", {"dsname": name}))
                elif ds is not current and ds.start != NO_ADDRESS:
                    self._cut_short(ds, name, self.ds_bytes)

    def _cut_short(self, ds: ActiveDataSet, name: str, holds: int) -> None:
        """Copy ``name`` of ``ds`` out of use (CSQJ106E where it ends) if it is shorter than
        the ``holds`` bytes of log it must hold."""
        size = self.storage.size(name)
        if size < holds:
            self._inactive[name] = ds.start
            self.events.append(("log-read-error", {"dsname": name, "rba": ds.start + size - size % PAGE_SIZE}))

    def _check_current(self, address: int) -> None:
        """At the first write after the queue manager started (at ``address``, the head restart
        found): a copy of the current data set shorter than the log before the head lost some of
        it, and a write there would leave a hole in that copy: it is out of use from now on."""
        self._current_checked = True
        ds = self._holder(address)
        if ds is None or ds is not self.active[self.current]:
            return
        for copy in range(1, self.copies + 1):
            name = data_set_name(copy, ds.number)
            if name not in self._inactive:
                self._cut_short(ds, name, address - address % PAGE_SIZE - ds.start)

    # -- reading ------------------------------------------------------------------------------------

    def _read_active(self, address: int) -> tuple[bytes, str, int]:
        ds = self._holder(address)
        if ds is None:
            return b"", "", 0
        return self._read_copies(address, address - ds.start, data_set_name(1, ds.number),
                                 data_set_name(2, ds.number))

    def _stored(self, name: str, offset: int, expected: int) -> tuple[bytes, str | None]:
        """The page at ``offset`` of data set ``name`` and, if the data set is missing or
        shorter than ``expected`` bytes (what it was formatted or archived to), why."""
        storage = self.storage
        if not storage.exists(name):
            return b"", f"{name} is missing"
        raw = storage.read(name, offset, PAGE_SIZE)
        if len(raw) < PAGE_SIZE:
            return raw, f"{name} is {storage.size(name)} bytes, short of the {expected} it holds"
        return raw, None

    def _gone(self, address: int, offset: int, names, whys) -> LogFileMissingError:
        """The refusal when no copy of a needed data set can be read: MQ's allocation error,
        CSQJ103E ("If the input is needed for recovery, recovery is not successful, and the
        queue manager ends abnormally", IBM MQ for z/OS, "Archive log problems"). (CSQJ100E,
        which this once said, is the BSDS's.)"""
        return LogFileMissingError(
            f"{'; '.join(whys)}: the BSDS lists {' and '.join(names)} as holding RBA {self.limits.hex(address)}, "
            f"which is needed here (CSQJ103E: the data set cannot be allocated)", source=names[0], offset=offset,
            address=self.limits.hex(address))

    def _copy_page(self, name: str, offset: int, address: int) -> tuple[bytes, str | None]:
        """:meth:`_stored` for a copy of an active data set, and why not to read it if the
        copy is out of use and the data set has since taken a new range (what it holds is
        not that range's log)."""
        raw, why = self._stored(name, offset, self.ds_bytes)
        held = self._inactive.get(name)
        if why is None and held is not None and held != address - offset:
            why = f"{name} is out of use (found missing or short when the queue manager started)"
        return raw, why

    def _read_copies(self, address: int, offset: int, first: str, second: str) -> tuple[bytes, str, int]:
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
                    _, problem2 = check_page(other, address)
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
                    raise self._gone(address, offset, (first, second), (why, why2))
        elif why is not None:
            raise self._gone(address, offset, (first,), (why,))
        return raw, first, offset

    def _hold_for(self, address: int) -> tuple | None:
        """The active data set holding ``address`` for read_page's memo, or None: for its
        whole range, or for this RBA only if another data set's range overlaps it (then the
        order of the list decides, as _holder does)."""
        ds = self._holder(address)
        if ds is None:
            return None
        end = ds.start + self.ds_bytes
        hold = (ds.start, data_set_name(1, ds.number), data_set_name(2, ds.number))
        if any(d is not ds and d.start != NO_ADDRESS and d.start < end and ds.start < d.start + self.ds_bytes
               for d in self.active):
            end = ds.start  # (an empty range: not remembered)
        return hold, ds.start, end

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        if not self._loaded:
            self._load_or_create(create=False)
        hold = self._files.get(address)
        if hold is not None:
            self.reads["active"] += 1
            return self._read_copies(address, address - hold[0], hold[1], hold[2])
        entry = self._archive_for(address)
        if entry is None:
            return b"", data_set_name(1, self.active[self.current].number) if self.active else "BSDS01", 0
        self.reads["archive"] += 1
        offset = address - entry.start
        found = None
        whys = []
        for name in entry.files:
            raw, why = self._stored(name, offset, entry.end + 1 - entry.start)
            if why is not None:
                whys.append(why)
                continue
            if check_page(raw, address)[1] is None:
                return raw, name, offset
            if found is None:
                found = (raw, name, offset)
        if found is None:
            # Every copy of the archive the BSDS records is gone: its log cannot be read.
            raise self._gone(address, offset, entry.files, whys)
        return found
