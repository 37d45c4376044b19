"""The fault classes of a campaign, in one registry (:data:`FAULTS`): for each, the points a
campaign could inject it at, how a scenario is chosen at one of them (every draw of the
campaign's generator) and how it is injected into its materialised disk and checked. What a
configuration claims against each class is :func:`mqlog.torture.claims.claims`'s (the generic
claim, and the platform's own where its log differs). A new class is one :class:`FaultClass`
entry here and its methods on :class:`FaultClasses`, which :class:`~mqlog.torture.Campaign`
inherits (they use its recorded run, restart and check); nothing else names it.

``crash``    power loss after physical write *k*, for every *k* (or a seeded sample of
             ``budget``): writes 1..k landed, nothing after.
``torn``     write *k* is torn – a random proper subset of its 512-byte sectors lands –
             for every write that rewrites a page already on disk (a partial log page
             written again, TripleWrite's spare page, a control block in place) or had other
             writes in flight beside it, then the crash; every write in flight beside it is
             torn too (any subset of its sectors lands: z/OS's two copies of a CI, an archive
             copy beside the log).
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

from collections.abc import Callable

import attrs

from mqlog.core.disk.faults import DETECT, NOTHING, SURVIVE, FaultPlan
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.workload.recording import CowStorage
from mqlog.core.workload.run import run_workload
from mqlog.platforms import choose
from mqlog.torture.claims import DAMAGE, ERROR, MISDIRECT_PAGES, SURVIVED, Claim
from mqlog.torture.disks import Cursor, Scenario, copies_of, flip, in_place_writes, is_control, log_file, needed_file


class FaultClasses:
    """The fault classes' planning and injection, mixed into :class:`~mqlog.torture.Campaign`
    (whose recorded run, restart and check they use)."""

    __slots__ = ()

    # -- the points each class could be injected at (before the budget's sample) -----------
    # Each _points_<class>(rng, claimed) returns the list, or None: the configuration cannot
    # have this fault (claimed: the configuration's claims), and nothing is planned.

    def _points_crash(self, rng, claimed):
        return list(range(self.physical_writes))

    def _points_torn(self, rng, claimed):
        # a write that rewrites a page on disk, or that other writes were in flight beside
        # (the power loss tears them too: z/OS's two copies, an archive copy beside the log)
        company = self._engine.recording.in_flight_at
        return sorted({w.number for w in in_place_writes(self._engine.writes)}.union(company))

    def _points_restart(self, rng, claimed):
        return self._restart_points(rng)

    def _points_images(self, rng, claimed):
        """Each of the damage classes' disks in turn, up to the budget (the disks drawn once,
        by the first class that needs them)."""
        if not self._image_points:
            self._image_points = self._images(rng)
        count = len(self._image_points)
        return [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]

    def _points_copy(self, rng, claimed):
        # only where there is a second copy to fall back to: a single copy's damage is bitflip's
        return self._points_images(rng, claimed) if claimed["copy"].level != NOTHING else None

    def _points_writes(self, rng, claimed):
        return [w.number for w in self._engine.writes if w.kind == "write"]

    def _points_fsync(self, rng, claimed):
        # (each sync with the physical write count at it: the power fails soon after)
        self._sync_at = [op[0] for op in self._engine.recording.ops if op[1] == "sync"]
        return list(range(1, len(self._sync_at) + 1))

    def _points_enospc(self, rng, claimed):
        counted = run_workload(self._config(FaultPlan(enospc_at=1 << 62)), MemoryStorage()).storage
        return list(range(1, counted.allocations + 1))

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
        # the control data's copies (dual BSDS), when there are two: one of them overwritten
        controls = sorted(n for n in disk.list() if is_control(self.platform, n))
        if rng.randrange(4) == 0 and len(controls) == 2:
            name = controls[rng.randrange(2)]
            return f"{where}: {name} overwritten", k, (k, name, 0, rng.randbytes(max(1, disk.size(name))))
        found = self._live_page(index, rng)
        if found is None:
            return f"{where}: no log page to damage", k, None
        page, name, offset = found
        copy = 1 + rng.randrange(2)
        copies = copies_of(self.platform, name)  # a file with one copy (an archive) is its own copy 2
        name = copies[min(copy, len(copies)) - 1]
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
        return self._copy_setting() is not None

    def _copy_setting(self) -> str | None:
        """The setting that gives this log one copy, in its platform's words (None: two)."""
        return choose(self.platform).file_roles().single_copy(self.values)

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


@attrs.frozen
class FaultClass:
    """One fault class of the registry: its name (``--faults``), what every configuration
    claims against it unless its platform says otherwise, and its three steps as
    :class:`FaultClasses` methods, called with the campaign first."""

    name: str
    #: the claim of every configuration whose platform does not make its own
    claim: Claim
    #: (campaign, rng, claims) -> every point the class could be injected at, or None
    points: Callable
    #: (campaign, point, rng) -> (label, crash point, injection arguments or None)
    plan: Callable
    #: (campaign, cursor, scenario) -> (outcome, detail): injected, restarted and checked
    inject: Callable
    #: where a campaign plans it: every draw of the campaign's generator happens in this order,
    #: so a campaign's scenarios stay the same from one version to the next only if it does not
    #: change (a new class takes the next number)
    planned: int


def _fault(name: str, planned: int, claim: Claim, points: Callable | None = None) -> FaultClass:
    return FaultClass(name, claim, points or getattr(FaultClasses, f"_points_{name}"),
                      getattr(FaultClasses, f"_plan_{name}"), getattr(FaultClasses, f"_scenario_{name}"), planned)


_SINGLE = ("a device that acknowledges a write it never makes defeats write-ahead logging on a single copy: "
           "a hole followed by later writes is found, but a lost last write looks like the end of the log")

#: every fault class, in the order reports list them and ``--faults`` takes by default
FAULTS: dict[str, FaultClass] = {f.name: f for f in (
    _fault("crash", 0, Claim(SURVIVE, "the write-ahead log: nothing acknowledged is lost at a crash")),
    _fault("torn", 1, Claim(NOTHING, "partial pages are rewritten in place")),
    _fault("bitflip", 3, Claim(DETECT, "log pages and records carry CRCs; control data and queue files are checked"),
           FaultClasses._points_images),
    _fault("copy", 4, Claim(NOTHING, "only z/OS dual logging keeps a second copy")),
    _fault("restart", 2, Claim(SURVIVE, "restart is repeatable: compensation records, no undo done twice")),
    _fault("missing", 5, Claim(DETECT, "a file restart needs that is missing or short is refused, naming it (AMQ6767, "
                                       "CSQJ100E); a lost queue file is marked damaged (AMQ7472) or, on a linear log, "
                                       "re-created from its media image"), FaultClasses._points_images),
    _fault("stale", 6, Claim(DETECT, "each log file's first page is checked against the address the control data "
                                     "gives it (AMQ6762E, CSQJ102E), the log must reach the control data's high-water "
                                     "mark, and past a bad page restart reads to the end of the files in use (a hole "
                                     "of any length is refused); damage wholly past the last update of the control "
                                     "data looks like a crash's end of the log, and is an expected loss"),
           FaultClasses._points_images),
    _fault("lost", 7, Claim(NOTHING, _SINGLE), FaultClasses._points_writes),
    _fault("misdirected", 8, Claim(NOTHING, _SINGLE + ", and the page it hit elsewhere is a damaged page"),
           FaultClasses._points_writes),
    _fault("fsync", 9, Claim(SURVIVE, "a commit whose force failed is never acknowledged: the queue manager ends, "
                                      "naming the failure")),
    _fault("enospc", 10, Claim(SURVIVE, "a full file system fails the format or write that needed room: nothing "
                                        "unacknowledged, the queue manager ends (AMQ6708, CSQJ103E)")),
)}
#: the fault classes by name, as reports list them
FAULT_CLASSES = tuple(FAULTS)


def claims(platform: str, values: dict) -> dict[str, Claim]:
    """What the configuration (a platform and its effective log ``values``) claims for each
    fault class, and why: each class's own claim, with the platform's where its log's design
    decides (partial pages, second copies: its descriptor's ``fault_claims``)."""
    out = {name: fault.claim for name, fault in FAULTS.items()}
    for name, (level, why) in choose(platform).fault_claims(values).items():
        out[name] = Claim(level, why)
    return out
