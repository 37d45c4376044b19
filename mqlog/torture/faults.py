"""The fault classes of a campaign: for each, how a scenario is chosen at planning
(``_plan_<class>``: every draw of the campaign's generator) and how it is injected into its
materialised disk and checked (``_scenario_<class>``), as methods :class:`~mqlog.torture.Campaign`
inherits from :class:`FaultClasses`.

``crash``    power loss after physical write *k*, for every *k* (or a seeded sample of
             ``budget``): writes 1..k landed, nothing after.
``torn``     write *k* is torn – a random proper subset of its 512-byte sectors lands –
             for every write that rewrites a page already on disk (a partial log page
             written again, TripleWrite's spare page, a control block in place), then the
             crash.
``bitflip``  one bit flipped in a log page restart reads, in a control file (distributed
             ``amqhlctl.lfh``, z/OS BSDS) or in a queue file, on the disk a crash left.
``copy``     z/OS dual logging: one copy of a log page (copy 1 or copy 2), or one BSDS,
             overwritten with garbage.
``restart``  a crash at write *j* of the restart itself, then a restart again.
``missing``  a file restart may need – a log extent, active data set or archive, a BSDS
             copy, the control file, TripleWrite's spare file, a queue file – deleted or
             truncated, on the disk a crash (or the clean end) left.
``stale``    a log file that stays present and full-size but disagrees with the control
             data, on the disk a crash (or the clean end) left: an extent or active data
             set zeroed (freshly formatted), two of them swapped, one restored from an
             earlier crash point (a backup), the control file or BSDS restored from one, or
             a hole of 17-1,000 zeroed pages from a page restart reads (every copy of it).
``lost``     physical write *k* is acknowledged, and synced, but never reaches the media
             (a cache that lies), then the power fails a few writes later.
``misdirected`` write *k* lands a few pages away from its target in the same file; the
             target keeps its old bytes.
``fsync``    sync *k* fails with EIO and the kernel drops the file's unsynced pages (the
             "fsyncgate" case), and the power fails within a few writes. The run goes on
             from the failure as the model decides (it ends: the log is unusable).
``enospc``   allocation *k* (an extent or data set formatted, a file grown) fails with
             ENOSPC; the run goes on from there.

``crash``, ``torn``, ``restart``, ``missing``, ``stale``, ``lost`` and ``misdirected`` disks come from
the one recorded run (a lying device does not change what the queue manager does);
``fsync`` and ``enospc`` change the run after them, so each scenario is a run of its own.
"""

from __future__ import annotations

import attrs

from mqlog.core.disk.faults import FaultPlan
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.workload.recording import CowStorage
from mqlog.core.workload.run import run_workload
from mqlog.torture.claims import DAMAGE, ERROR, MISDIRECT_PAGES, SURVIVED
from mqlog.torture.disks import Cursor, Scenario, copies_of, flip, is_control, log_file, needed_file


class FaultClasses:
    """The fault classes' planning and injection, mixed into :class:`~mqlog.torture.Campaign`
    (whose recorded run, restart and check they use)."""

    __slots__ = ()

    # -- choosing the scenarios (every draw of the campaign's generator) -------------------
    # Each _plan_<class>(point, rng) returns (label, the crash point the scenario starts
    # from, what _scenario_<class> needs to inject it, or None: nothing to inject here).

    def _plan_crash(self, k: int, rng):
        return f"crash after write {k}", k, (k,)

    def _plan_torn(self, k: int, rng):
        seed = rng.randrange(1 << 30)
        return f"tear write {k} (seed {seed})", k - 1, (k, seed)

    def _plan_restart(self, point: tuple[int, int], rng):
        k, j = point
        return f"crash after write {k}, then again at write {j} of the restart", k, (k, j)

    def _image_fact(self, index: int):
        """(image view, restart's (start, end) of the log or None, a space on the image) of
        the damage classes' image ``index``, probed once."""
        fact = self._image_facts.get(index)
        if fact is None:
            _, k = self._image_points[index]
            image = self._engine.recording.materialise(k)
            try:
                report, _, _ = self._restart(CowStorage(image))
            except DAMAGE:  # restart refuses this disk as it is: no page to damage (anything else goes up)
                span = None
            else:
                end = report.end_of_log.address if report.end_of_log is not None else None
                start = report.checkpoint
                span = None if end is None or start is None or start < 0 or end <= start else (start, end)
            fact = self._image_facts[index] = (image, span, self.make_platform(CowStorage(image)).space)
        return fact

    def _live_page(self, index: int, rng) -> tuple[int, str, int] | None:
        """A log page restart reads on image ``index`` (address, file, offset), or None."""
        _, span, space = self._image_fact(index)
        if span is None:
            return None
        page = rng.randrange(*span)
        page -= page % PAGE_SIZE
        try:
            _, name, offset = space.read_page(page)
        except DAMAGE:
            return None
        return page, name, offset

    def _plan_bitflip(self, point: tuple[int, int], rng):
        index, _ = point
        where, k = self._image_points[index]
        disk = self._image_fact(index)[0]
        target = ("log", "control", "queue")[rng.randrange(3)]
        page = None
        if target == "log":
            found = self._live_page(index, rng)
            if found is None:
                target = "queue"
            else:
                page, name, offset = found
                offset += rng.randrange(PAGE_SIZE)
        if target != "log":
            names = disk.list()
            pick = [n for n in names if (n.endswith(".mqq") if target == "queue" else is_control(self.platform, n))]
            if not pick:
                return f"{where}: no {target} file", k, None
            name = pick[rng.randrange(len(pick))]
            size = disk.size(name)
            if size == 0:
                return f"{where}: {name} is empty", k, None
            offset = rng.randrange(size)
        bit = rng.randrange(8)
        return f"{where}: bit {bit} of {name} offset {offset}", k, (k, target, page, name, offset, bit)

    def _plan_copy(self, point: tuple[int, int], rng):
        index, _ = point
        where, k = self._image_points[index]
        disk = self._image_fact(index)[0]
        if rng.randrange(4) == 0 and disk.exists("BSDS01") and disk.exists("BSDS02"):
            name = ("BSDS01", "BSDS02")[rng.randrange(2)]
            return f"{where}: {name} overwritten", k, (k, name, 0, rng.randbytes(max(1, disk.size(name))))
        found = self._live_page(index, rng)
        if found is None:
            return f"{where}: no log page to damage", k, None
        page, name, offset = found
        copy = 1 + rng.randrange(2)
        if copy == 2:
            name = name.replace("LOGCOPY1.", "LOGCOPY2.")
        return (f"{where}: log page {page:#x} of copy {copy} ({name}) overwritten", k,
                (k, name, offset, rng.randbytes(PAGE_SIZE)))

    def _plan_missing(self, point: tuple[int, int], rng):
        index, _ = point
        where, k = self._image_points[index]
        disk = self._image_fact(index)[0]
        names = [n for n in disk.list() if needed_file(self.platform, n)]
        if not names:
            return f"{where}: no file to remove", k, None
        name = names[rng.randrange(len(names))]
        size = disk.size(name)
        if rng.randrange(2) == 0 or size == 0:
            return f"{where}: {name} deleted", k, (k, name, None)
        cut = rng.randrange(size)
        return f"{where}: {name} truncated to {cut} bytes", k, (k, name, cut)

    #: the kinds of ``stale`` damage, drawn evenly
    STALE_KINDS = ("zeroed", "swapped", "restored", "control restored", "hole")

    def _plan_stale(self, point: tuple[int, int], rng):
        index, _ = point
        where, k = self._image_points[index]
        disk = self._image_fact(index)[0]
        kind = self.STALE_KINDS[rng.randrange(len(self.STALE_KINDS))]
        logs = [n for n in disk.list() if log_file(self.platform, n)]
        earlier = rng.randrange(1, k) if k > 1 else None
        if kind == "hole":
            found = self._live_page(index, rng)
            if found is None:
                return f"{where}: no log page to make a hole at", k, None
            page, name, offset = found
            pages = 17 + rng.randrange(984)
            return (f"{where}: {pages} pages zeroed from {name} offset {offset} (log address {page:#x})", k,
                    (k, kind, copies_of(self.platform, name), offset, pages))
        if kind == "control restored":
            names = [n for n in disk.list() if is_control(self.platform, n)]
            if not names or earlier is None:
                return f"{where}: no control data to restore", k, None
            return f"{where}: {' and '.join(names)} restored from the crash after write {earlier}", k, \
                (k, kind, names, earlier, None)
        if not logs:
            return f"{where}: no log file", k, None
        name = logs[rng.randrange(len(logs))]
        if kind == "zeroed":
            return f"{where}: {name} zeroed (formatted afresh)", k, (k, kind, copies_of(self.platform, name), None,
                                                                      None)
        if kind == "swapped":
            others = [n for n in logs if n != name and disk.size(n) == disk.size(name)]
            if not others:
                return f"{where}: no log file to swap {name} with", k, None
            other = others[rng.randrange(len(others))]
            return f"{where}: {name} and {other} swapped", k, (k, kind, copies_of(self.platform, name),
                                                                  copies_of(self.platform, other), None)
        if earlier is None:
            return f"{where}: no earlier copy of {name}", k, None
        return f"{where}: {name} restored from the crash after write {earlier}", k, \
            (k, kind, copies_of(self.platform, name), earlier, None)

    def _plan_lost(self, k: int, rng):
        crash = min(self.physical_writes, k + rng.randrange(17))
        when = "the end" if crash >= self.physical_writes else f"write {crash}"
        return f"write {k} lost, crash after {when}", crash, (k, crash)

    def _plan_misdirected(self, k: int, rng):
        crash = min(self.physical_writes, k + rng.randrange(17))
        pages = rng.choice([d for d in range(-MISDIRECT_PAGES, MISDIRECT_PAGES + 1) if d])
        when = "the end" if crash >= self.physical_writes else f"write {crash}"
        return f"write {k} landed {pages:+d} pages off, crash after {when}", crash, (k, crash, pages)

    def _plan_fsync(self, k: int, rng):
        # The power fails within a few writes of the failed fsync: whatever the queue manager
        # acknowledged after it must be on disk by then (the fsyncgate case: a retried sync
        # "succeeds" without the pages the kernel dropped).
        crash = self._sync_at[k - 1] + rng.randrange(3)
        return f"fsync {k} fails (EIO), power lost after write {crash}", 0, (k, crash)

    def _plan_enospc(self, k: int, rng):
        return f"allocation {k} fails (ENOSPC)", 0, (k,)

    def _restart_points(self, rng) -> list[tuple[int, int]]:
        """(crash point of the run, crash point in the restart) pairs: a few crashes of the
        run, each restart crashed at every one of its own writes."""
        out = []
        for k in sorted(rng.sample(range(1, self.physical_writes), min(3, self.physical_writes - 1))):
            try:
                restart = self._engine.record_restart(self._engine.recording.materialise(k))
            except Exception as exc:  # no restart to crash: that is a failure in its own right
                self.tallies["restart"].add(ERROR, f"crash after write {k}, then restart",
                                            f"the restart to crash failed: {type(exc).__name__}: {exc}")
                continue
            out += [(k, j) for j in range(restart.physical_writes)]
        return out

    def _images(self, rng) -> list[tuple[str, int]]:
        """Disks to damage: the run crashed at a few points, and its clean end (where, crash point)."""
        points = sorted(rng.sample(range(1, self.physical_writes), min(2, self.physical_writes - 1)))
        return [(f"crash after write {k}", k) for k in points] + [("clean end", self.physical_writes)]

    # -- running one scenario on its materialised disk --------------------------------------

    def _scenario_crash(self, engine: Cursor, scenario: Scenario):
        (k,) = scenario.args
        return self._check(engine.image(k), engine.journal(k))

    def _scenario_torn(self, engine: Cursor, scenario: Scenario):
        k, seed = scenario.args
        return self._check(engine.torn(k, seed), engine.journal(k - 1))

    def _scenario_restart(self, engine: Cursor, scenario: Scenario):
        k, j = scenario.args
        # The restart, crashed after its own write j: its recorded writes up to j on the
        # crash image (the recording is of a restart that got through: see _restart_points).
        return self._check(engine.restart_image(k, j), engine.journal(k))

    def _scenario_bitflip(self, engine: Cursor, scenario: Scenario):
        k, target, page, name, offset, bit = scenario.args
        disk = engine.image(k)
        flip(disk, name, offset, bit)
        outcome, detail = self._check(disk, engine.journal(k))
        end = self._last_report.end_of_log if self._last_report is not None else None
        if (outcome == "loss" and target == "log" and end is not None and end.reason != "end"
                and end.page_address == page and self._single_copy()):
            # The damaged page is the last one written: with one copy, damage there cannot be
            # told from a write the crash tore, so restart ends the log before it (as MQ does).
            outcome = "expected"
            detail = (f"{detail} (expected: the log's last page was damaged, and with a single copy "
                      f"({self._copy_setting()}) that cannot be told from a torn last write)")
        return outcome, detail

    def _single_copy(self) -> bool:
        return not (self.platform == "zos" and str(self.values.get("TWOACTV", "YES")) == "YES")

    def _copy_setting(self) -> str:
        if self.platform == "zos":
            return "TWOACTV=NO"
        return f"LogWriteIntegrity={self.values.get('LogWriteIntegrity', '-')}" if self.platform == "distributed" \
            else "the reference log"

    def _scenario_missing(self, engine: Cursor, scenario: Scenario):
        k, name, cut = scenario.args
        disk = engine.image(k)
        if cut is None:
            disk.delete(name)
        else:
            disk.truncate(name, cut)
        return self._check(disk, engine.journal(k))

    def _scenario_stale(self, engine: Cursor, scenario: Scenario):
        k, kind, names, arg, pages = scenario.args
        disk = engine.image(k)
        names = [n for n in names if disk.exists(n)]
        if kind == "hole":
            for name in names:
                length = max(0, min(pages * PAGE_SIZE, disk.size(name) - arg))
                disk.write(name, arg, bytes(length))
        elif kind == "zeroed":
            for name in names:
                disk.write(name, 0, bytes(disk.size(name)))
        elif kind == "swapped":
            others = [n for n in arg if disk.exists(n)]
            for a, b in zip(names, others):
                data_a, data_b = disk.read(a, 0, disk.size(a)), disk.read(b, 0, disk.size(b))
                disk.replace(a, data_b)
                disk.replace(b, data_a)
        else:  # restored, control restored: the file as it was at an earlier crash point
            before = engine.engine.recording.materialise(arg)
            restored = [n for n in names if before.exists(n)]
            if not restored:
                return None, ""  # it did not exist then: nothing to restore
            for name in restored:
                disk.replace(name, before.read(name, 0, before.size(name)))
        try:
            found = self.make_platform(CowStorage(disk)).space.high_water()
        except DAMAGE:
            found = None  # (control data restart will refuse anyway)
        mark = found[0] if found is not None else None
        outcome, detail = self._check(disk, engine.journal(k))
        end = self._last_report.end_of_log if self._last_report is not None else None
        if (outcome == "loss" and end is not None and end.page_address is not None
                and (mark is None or end.page_address >= mark)):
            # Nothing good after the damage, and it lies past the control data's high-water
            # mark (its last update): the log ends exactly as a crash after that update
            # leaves it. No check can tell them apart; MQ's could not either.
            outcome = "expected"
            detail = (f"{detail} (expected: the damage lies past the control data's high-water mark, where the "
                      f"log ends as it does after a crash)")
        return outcome, detail

    def _device_lies(self, engine: Cursor, plan: FaultPlan, crash: int):
        """The recorded run replayed through a device that lies as ``plan`` says, with the
        power lost after write ``crash``: restart on what reached the media. (The run does
        not change: the device acknowledged the write, so the applications were told the
        same.)"""
        fs = engine.engine.recording.replay(attrs.evolve(plan, crash_after_writes=crash), upto=crash)
        return self._check(CowStorage(fs.durable), engine.journal(crash))

    def _scenario_lost(self, engine: Cursor, scenario: Scenario):
        k, crash = scenario.args
        return self._device_lies(engine, FaultPlan(lose_write=k), crash)

    def _scenario_misdirected(self, engine: Cursor, scenario: Scenario):
        k, crash, pages = scenario.args
        return self._device_lies(engine, FaultPlan(misdirect_write=k, misdirect_pages=pages), crash)

    def _failing_run(self, plan: FaultPlan):
        """A run of its own (the fault changes what the queue manager does next), then the
        check of its restart against what its applications were told."""
        result = run_workload(self._config(plan), MemoryStorage())
        outcome, detail = self._check(result.storage.durable, result.journal)
        if result.metrics.get("abnormal_end") is None and outcome == SURVIVED:
            detail = "the failure did not reach the queue manager (a later retry covered it)"
        return outcome, detail

    def _scenario_fsync(self, engine: Cursor, scenario: Scenario):
        k, crash = scenario.args
        return self._failing_run(FaultPlan(sync_error_at=k, crash_after_writes=crash))

    def _scenario_enospc(self, engine: Cursor, scenario: Scenario):
        (k,) = scenario.args
        return self._failing_run(FaultPlan(enospc_at=k))

    def _scenario_copy(self, engine: Cursor, scenario: Scenario):
        k, name, offset, data = scenario.args
        disk = engine.image(k)
        disk.write(name, offset, data)
        return self._check(disk, engine.journal(k))
