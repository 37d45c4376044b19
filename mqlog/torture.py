"""``mqlog torture``: a fault campaign against one platform configuration (issue 9).

The promise under test: after any crash, torn write or single-copy damage that the
configuration claims to survive, **no committed persistent message is lost and no
uncommitted one appears**; anything beyond that is detected and reported clearly, never
silently wrong.

A campaign runs the workload once, recording every file change and journal event
(:mod:`mqlog.core.workload.recording`), then injects one fault per scenario into the disk that
recording materialises for it – byte for byte what re-running the workload with the fault
would leave –, restarts the queue manager on it, and checks the restarted queues against
the applications' journal (:meth:`~mqlog.core.workload.journal.Journal.verify`). Every scenario is
deterministic (the workload's seed, the campaign's seed), so a failing one can be replayed
from its label.

A campaign is planned, executed and finished in three steps (:meth:`Campaign.plan`,
:meth:`~Campaign.execute`, :meth:`~Campaign.finish`): planning records the run and makes
every random choice, so scenarios can execute in any order and any process (the Spark
driver in :mod:`mqlog.spark.torture` spreads them over executors) and still tally exactly
as one process running them in order would. This module holds the fault classes; the
engine that materialises disks knows nothing of them.

Fault classes:

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
``lost``     physical write *k* is acknowledged, and synced, but never reaches the media
             (a cache that lies), then the power fails a few writes later.
``misdirected`` write *k* lands a few pages away from its target in the same file; the
             target keeps its old bytes.
``fsync``    sync *k* fails with EIO and the kernel drops the file's unsynced pages (the
             "fsyncgate" case), and the power fails within a few writes. The run goes on
             from the failure as the model decides (it ends: the log is unusable).
``enospc``   allocation *k* (an extent or data set formatted, a file grown) fails with
             ENOSPC; the run goes on from there.

``crash``, ``torn``, ``restart``, ``missing``, ``lost`` and ``misdirected`` disks come from
the one recorded run (a lying device does not change what the queue manager does);
``fsync`` and ``enospc`` change the run after them, so each scenario is a run of its own.

Outcomes of a scenario: ``survived`` (the journal checks out), ``detected`` (restart refused
with mqlog's own error naming the damage, restart marked the queues with wrong messages
damaged, AMQ7472, or reading a message back failed its CRC – under a fault the
configuration claims to *survive*, a refusal breaks the claim and fails the campaign),
``expected loss`` (messages lost or wrong under a fault the configuration does not claim to
survive – the report names the configuration choice), ``silent loss`` (lost or wrong with
nothing said, under a fault it claims to survive or to detect: must be 0), ``error`` (the
tool itself failed, or an error that is not about damage: a bug, must be 0).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from mqlog.core.errors import LogFormatError
from mqlog.core.objects.media import MediaRecoveryError
from mqlog.core.disk.faults import FaultPlan
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.qm.manager import QmConfig
from mqlog.core.workload.recording import CowStorage, Recorder, Recording, RecordingStorage
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.disk.storage import MemoryStorage

FAULT_CLASSES = ("crash", "torn", "bitflip", "copy", "restart", "missing", "lost", "misdirected", "fsync",
                 "enospc")
#: how far from its target a misdirected write lands at most, in pages either way
MISDIRECT_PAGES = 8
SURVIVED, DETECTED, EXPECTED, SILENT, ERROR = "survived", "detected", "expected_loss", "silent_loss", "error"
OUTCOMES = (SURVIVED, DETECTED, EXPECTED, SILENT, ERROR)
#: what a configuration claims for a fault class: nothing lost; loss only if detected; nothing
SURVIVE, DETECT, NOTHING = "survive", "detect", "nothing"
#: the errors that report damage (a log, control file, BSDS or queue file that fails its
#: checks; media recovery that cannot rebuild a damaged queue): anything else is the model failing
DAMAGE = (LogFormatError, MediaRecoveryError)
#: scenarios kept in the report per class and outcome (the rest are counted)
EXAMPLES = 5


@attrs.define
class Claim:
    level: str
    why: str


def claims(platform: str, values: dict) -> dict[str, Claim]:
    """What the configuration claims for each fault class, and why."""
    out = {
        "crash": Claim(SURVIVE, "the write-ahead log: nothing acknowledged is lost at a crash"),
        "restart": Claim(SURVIVE, "restart is repeatable: compensation records, no undo done twice"),
        "bitflip": Claim(DETECT, "log pages and records carry CRCs; control data and queue files are checked"),
        "copy": Claim(NOTHING, "only z/OS dual logging keeps a second copy"),
        "missing": Claim(DETECT, "a file restart needs that is missing or short is refused, naming it (AMQ6767, "
                                 "CSQJ100E); a lost queue file is marked damaged (AMQ7472) or, on a linear log, "
                                 "re-created from its media image"),
        "fsync": Claim(SURVIVE, "a commit whose force failed is never acknowledged: the queue manager ends, "
                                "naming the failure"),
        "enospc": Claim(SURVIVE, "a full file system fails the format or write that needed room: nothing "
                                 "unacknowledged, the queue manager ends (AMQ6708, CSQJ103E)"),
    }
    single = ("a device that acknowledges a write it never makes defeats write-ahead logging on a single copy: "
              "a hole followed by later writes is found, but a lost last write looks like the end of the log")
    out["lost"] = Claim(NOTHING, single)
    out["misdirected"] = Claim(NOTHING, single + ", and the page it hit elsewhere is a damaged page")
    if platform == "distributed":
        integrity = str(values.get("LogWriteIntegrity", "TripleWrite"))
        if integrity == "SingleWrite":
            out["torn"] = Claim(NOTHING, "LogWriteIntegrity=SingleWrite rewrites a partial log page in place: "
                                         "a torn rewrite can lose records already on that page")
        else:
            out["torn"] = Claim(SURVIVE, f"LogWriteIntegrity={integrity} writes a spare copy before rewriting "
                                         "a partial page")
    elif platform == "zos":
        if str(values.get("TWOACTV", "YES")) == "YES":
            out["torn"] = Claim(SURVIVE, "TWOACTV=YES rewrites a partial CI one copy after the other")
            out["copy"] = Claim(SURVIVE, "TWOACTV=YES (and TWOBSDS=YES): reads fall back to the other copy")
            dual = ("a device that acknowledges a write it never makes: TWOACTV=YES keeps the log's other copy, "
                    "but a reader takes copy 2 only where copy 1's page is bad, as MQ does; where copy 1 still holds "
                    "a good older version of a page it lost, that is read, and the log can end early there (or, "
                    "with later writes after it, restart refuses); queue files have one copy")
            out["lost"] = Claim(NOTHING, dual)
            out["misdirected"] = Claim(NOTHING, dual)
            if str(values.get("TWOBSDS", "YES")) != "YES":
                out["copy"] = Claim(SURVIVE, "TWOACTV=YES: log reads fall back to the other copy")
        else:
            out["torn"] = Claim(NOTHING, "TWOACTV=NO: a partial CI is rewritten in place on the only copy")
    else:
        out["torn"] = Claim(NOTHING, "the reference platform rewrites partial pages in place")
    return out


@attrs.define
class Tally:
    fault: str
    claim: Claim
    counts: dict = attrs.field(factory=lambda: dict.fromkeys(OUTCOMES, 0))
    examples: dict = attrs.field(factory=dict)  # outcome -> [(label, detail)]
    possible: int = 0  # scenarios of this class before sampling

    @property
    def tried(self) -> int:
        return sum(self.counts.values())

    @property
    def broken(self) -> bool:
        """A configuration that claims to survive this fault refused to restart after it."""
        return self.claim.level == SURVIVE and self.counts[DETECTED] > 0

    def add(self, outcome: str, label: str, detail: str) -> None:
        self.counts[outcome] += 1
        kept = self.examples.setdefault(outcome, [])
        if len(kept) < EXAMPLES:
            kept.append((label, detail))

    def as_dict(self) -> dict:
        return {"fault": self.fault, "claim": self.claim.level, "claim_reason": self.claim.why,
                "possible": self.possible, "tried": self.tried,
                **{("errors" if k == ERROR else k): v for k, v in self.counts.items()},
                "examples": {k: [list(e) for e in v] for k, v in self.examples.items()}}


@attrs.define
class Campaign:
    """One configuration's campaign: the workload's run and what each fault did."""

    platform: str
    values: dict
    make_platform: Callable
    spec: object
    seed: int = 0
    device: str = "ssd"
    budget: int = 100
    faults: tuple = FAULT_CLASSES
    #: how every restart of the campaign runs (QmConfig.restart_mode: "9.1.1" or "legacy")
    restart_mode: str = "9.1.1"
    physical_writes: int = 0
    tallies: dict = attrs.field(factory=dict)
    _last_report: object = None
    #: the recorded run (made by plan(), or by execute() in a process that did not plan)
    _engine: object = attrs.field(default=None, repr=False)
    #: the damage classes' disks: (where, crash point of the recorded run)
    _image_points: list = attrs.field(factory=list)
    _image_facts: dict = attrs.field(factory=dict, repr=False)
    #: the physical write count at each sync of the recorded run (the fsync class)
    _sync_at: list = attrs.field(factory=list, repr=False)

    # -- running the workload --------------------------------------------------------------

    def _config(self, plan: FaultPlan | None = None, keep_write_log: bool = False) -> RunConfig:
        return RunConfig(self.platform, self.make_platform, self.values, self.spec, seed=self.seed,
                         device=self.device, fault_plan=plan, keep_write_log=keep_write_log)

    def _restart(self, storage, journal=None):
        """restart_run on ``storage`` as this campaign restarts (its device and restart mode)."""
        return restart_run(self.make_platform, storage, device=self.device, journal=journal,
                           qm_config=QmConfig(restart_mode=self.restart_mode))

    def _check(self, storage, journal):
        """(outcome, detail) of restarting on ``storage`` and checking against ``journal``."""
        self._last_report = None
        phase = "restart refused"
        try:
            report, verdict, qm = self._restart(storage, journal)
            # Every message's data as an application's MQGET would read it: a damaged block
            # is found there (its CRC), not by restart, which loads queue metadata only.
            phase = "reading a message back"
            for queue in qm.queues.values():
                for message in list(queue.messages.values()):
                    queue.read(message)
        except DAMAGE as exc:  # the damage, named: file, offset, log address
            return DETECTED, f"{phase}: {exc}"
        except Exception as exc:  # anything else is the model failing, never a verdict
            return ERROR, f"{phase}: {type(exc).__name__}: {exc}"
        self._last_report = report
        damaged = set(report.queues_damaged)
        if verdict is None or verdict.ok:
            if damaged:  # nothing wrong in what is left, but a queue is unusable until re-created
                return DETECTED, f"restart marked {', '.join(sorted(damaged))} damaged (unusable until re-created); nothing else wrong"
            return SURVIVED, ""
        lost = ", ".join(f"{k} {v}" for k, v in verdict.as_dict().items() if v and k not in ("indoubt",))
        if damaged:
            # Excused only where restart said so: every wrong message is on a queue it
            # marked damaged (AMQ7472).
            queues = {journal.messages[d[1]].queue for d in verdict.details
                      if len(d) > 1 and d[1] in journal.messages}
            if queues <= damaged:
                return DETECTED, f"restart marked {', '.join(sorted(damaged))} damaged ({lost})"
            lost += f"; on queues restart did not mark damaged: {', '.join(sorted(queues - damaged))}"
        return "loss", lost

    def _judge(self, fault: str, label: str, outcome: str | None, detail: str) -> None:
        tally = self.tallies[fault]
        if outcome is None:
            return  # nothing was injected (no such file on this platform): not a scenario
        if outcome == "loss":
            outcome = EXPECTED if tally.claim.level == NOTHING else SILENT
            if outcome == EXPECTED:
                detail = f"{detail} (expected: {tally.claim.why})"
        elif outcome == "expected":
            outcome = EXPECTED
        tally.add(outcome, label, detail)

    # -- the campaign ---------------------------------------------------------------------

    def run(self, progress: Callable[[int], None] | None = None,
            on_baseline: Callable[[float, int], None] | None = None) -> "Campaign":
        """Run every scenario; ``progress(1)`` after each, ``on_baseline(wall seconds,
        physical writes)`` once the workload's own run is done."""
        scenarios = self.plan(on_baseline)
        return self.finish(scenarios, self.execute(scenarios, progress))

    def plan(self, on_baseline: Callable[[float, int], None] | None = None) -> list[Scenario]:
        """Record the workload's run and choose every scenario, in the campaign's order.

        Every draw of the campaign's random generator happens here, in the order the
        scenarios are reported, so a scenario's fault is fixed before anything runs: the
        scenarios can then run in any order, in any process, and :meth:`finish` tallies
        them as if one after the other."""
        import time

        rng = random.Random(self.seed)
        started = time.perf_counter()
        self._engine = _Engine(self)
        writes = self._engine.writes
        if on_baseline is not None:
            on_baseline(time.perf_counter() - started, len(writes))
        self.physical_writes = len(writes)
        claimed = claims(self.platform, self.values)
        for fault in self.faults:
            self.tallies[fault] = Tally(fault, claimed[fault])
        plans: dict[str, list] = {}
        if "crash" in self.faults:
            plans["crash"] = list(range(self.physical_writes))
        if "torn" in self.faults:
            plans["torn"] = [w.number for w in in_place_writes(writes)]
        if "restart" in self.faults:
            plans["restart"] = self._restart_points(rng)
        if "bitflip" in self.faults or ("copy" in self.faults and claimed["copy"].level != NOTHING):
            self._image_points = self._images(rng)
            count = len(self._image_points)
            if "bitflip" in self.faults:
                plans["bitflip"] = [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]
            if "copy" in self.faults and claimed["copy"].level != NOTHING:
                plans["copy"] = [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]
        if "missing" in self.faults:
            if not self._image_points:
                self._image_points = self._images(rng)
            count = len(self._image_points)
            plans["missing"] = [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]
        for fault in ("lost", "misdirected"):
            if fault in self.faults:
                plans[fault] = [w.number for w in writes if w.kind == "write"]
        if "fsync" in self.faults:
            # (each sync with the physical write count at it: the power fails soon after)
            self._sync_at = [op[0] for op in self._engine.recording.ops if op[1] == "sync"]
            plans["fsync"] = list(range(1, len(self._sync_at) + 1))
        if "enospc" in self.faults:
            counted = run_workload(self._config(FaultPlan(enospc_at=1 << 62)), MemoryStorage()).storage
            plans["enospc"] = list(range(1, counted.allocations + 1))
        scenarios: list[Scenario] = []
        for fault, points in plans.items():
            self.tallies[fault].possible = len(points)
            chosen = points if len(points) <= self.budget else sorted(rng.sample(points, self.budget))
            for point in chosen:
                try:
                    label, at, args = getattr(self, f"_plan_{fault}")(point, rng)
                except Exception as exc:  # the tool failing while it chose the fault: an error, counted
                    scenarios.append(Scenario(len(scenarios), fault, f"{fault} {point}", 0, None,
                                              error=f"{type(exc).__name__}: {exc}"))
                    continue
                scenarios.append(Scenario(len(scenarios), fault, label, at, args))
        self._image_facts.clear()  # (planning's probes: the executors make their own)
        return scenarios

    def execute(self, scenarios: list[Scenario], progress: Callable[[int], None] | None = None) -> dict:
        """Run ``scenarios`` (any of :meth:`plan`'s, in any number of processes); their
        ``{index: (outcome, detail)}``. They run in the order of the crash point they
        start from, so one replay of the recorded run serves them all."""
        if self._engine is None:
            self._engine = _Engine(self)
        engine = self._engine.cursor()
        out = {}
        for scenario in sorted(scenarios, key=lambda s: (s.at, s.index)):
            if scenario.error is not None:
                out[scenario.index] = (ERROR, scenario.error)
            elif scenario.args is None:
                out[scenario.index] = (None, "")  # nothing to inject (no such file here)
            else:
                try:
                    out[scenario.index] = getattr(self, f"_scenario_{scenario.fault}")(engine, scenario)
                except Exception as exc:  # the tool failing outside the restart it checks: an error, counted
                    out[scenario.index] = (ERROR, f"{type(exc).__name__}: {exc}")
            if progress is not None:
                progress(1)
        return out

    def finish(self, scenarios: list[Scenario], results: dict) -> "Campaign":
        """Tally ``results`` (:meth:`execute`'s, merged) in the scenarios' order."""
        for scenario in scenarios:
            outcome, detail = results[scenario.index]
            self._judge(scenario.fault, scenario.label, outcome, detail)
        return self

    def planned(self) -> int:
        """An upper bound of the scenarios :meth:`run` tries (for a progress bar)."""
        return self.budget * len(self.faults)

    @property
    def failed(self) -> bool:
        """Whether any scenario lost data silently, broke the tool, or was refused under a
        fault the configuration claims to survive."""
        return any(t.counts[SILENT] or t.counts[ERROR] or t.broken for t in self.tallies.values())

    def as_dict(self) -> dict:
        return {"platform": self.platform, "log": dict(self.values), "workload": self.spec.workload,
                "params": dict(self.spec.params), "seed": self.seed, "device": self.device, "budget": self.budget,
                "physical_writes": self.physical_writes,
                "classes": [self.tallies[f].as_dict() for f in self.faults if f in self.tallies]}

    def table(self) -> str:
        """The campaign's counts, one line per fault class."""
        head = ("fault", "claim", "tried", "of", "survived", "detected", "expected loss", "silent loss", "errors")
        rows = [head]
        for fault in self.faults:
            t = self.tallies.get(fault)
            if t is None:
                continue
            rows.append((fault, t.claim.level, str(t.tried), str(t.possible), str(t.counts[SURVIVED]),
                         str(t.counts[DETECTED]), str(t.counts[EXPECTED]), str(t.counts[SILENT]),
                         str(t.counts[ERROR])))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in rows]
        notes = []
        for fault in self.faults:
            t = self.tallies.get(fault)
            if t is None:
                continue
            if t.counts[EXPECTED]:
                notes.append(f"{fault}: expected losses: {t.claim.why}" if t.claim.level == NOTHING else
                             f"{fault}: expected losses: " + t.examples[EXPECTED][0][1].rsplit("(expected: ", 1)[-1]
                             .rstrip(")"))
            if t.broken:
                notes.append(f"{fault}: CLAIM BROKEN: restart refused {t.counts[DETECTED]} times although the "
                             f"configuration claims to survive this fault ({t.claim.why})")
                for label, detail in t.examples.get(DETECTED, []):
                    notes.append(f"{fault}: REFUSED: {label}: {detail}")
            for outcome in (SILENT, ERROR):
                for label, detail in t.examples.get(outcome, []):
                    notes.append(f"{fault}: {outcome.replace('_', ' ').upper()}: {label}: {detail}")
        return "\n".join(lines + ([""] + notes if notes else []))

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

    def _scenario_crash(self, engine: "_Cursor", scenario: Scenario):
        (k,) = scenario.args
        return self._check(engine.image(k), engine.journal(k))

    def _scenario_torn(self, engine: "_Cursor", scenario: Scenario):
        k, seed = scenario.args
        return self._check(engine.torn(k, seed), engine.journal(k - 1))

    def _scenario_restart(self, engine: "_Cursor", scenario: Scenario):
        k, j = scenario.args
        # The restart, crashed after its own write j: its recorded writes up to j on the
        # crash image (the recording is of a restart that got through: see _restart_points).
        return self._check(engine.restart_image(k, j), engine.journal(k))

    def _scenario_bitflip(self, engine: "_Cursor", scenario: Scenario):
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

    def _scenario_missing(self, engine: "_Cursor", scenario: Scenario):
        k, name, cut = scenario.args
        disk = engine.image(k)
        if cut is None:
            disk.delete(name)
        else:
            disk.truncate(name, cut)
        return self._check(disk, engine.journal(k))

    def _device_lies(self, engine: "_Cursor", plan: FaultPlan, crash: int):
        """The recorded run replayed through a device that lies as ``plan`` says, with the
        power lost after write ``crash``: restart on what reached the media. (The run does
        not change: the device acknowledged the write, so the applications were told the
        same.)"""
        fs = engine.engine.recording.replay(attrs.evolve(plan, crash_after_writes=crash), upto=crash)
        return self._check(CowStorage(fs.durable), engine.journal(crash))

    def _scenario_lost(self, engine: "_Cursor", scenario: Scenario):
        k, crash = scenario.args
        return self._device_lies(engine, FaultPlan(lose_write=k), crash)

    def _scenario_misdirected(self, engine: "_Cursor", scenario: Scenario):
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

    def _scenario_fsync(self, engine: "_Cursor", scenario: Scenario):
        k, crash = scenario.args
        return self._failing_run(FaultPlan(sync_error_at=k, crash_after_writes=crash))

    def _scenario_enospc(self, engine: "_Cursor", scenario: Scenario):
        (k,) = scenario.args
        return self._failing_run(FaultPlan(enospc_at=k))

    def _scenario_copy(self, engine: "_Cursor", scenario: Scenario):
        k, name, offset, data = scenario.args
        disk = engine.image(k)
        disk.write(name, offset, data)
        return self._check(disk, engine.journal(k))


@attrs.frozen
class Scenario:
    """One fault, fixed at planning: its place in the report (``index``), its class and
    label, the crash point of the recorded run it starts from (``at``: the order scenarios
    run in) and what :meth:`Campaign.execute` needs to inject it (``None``: nothing to
    inject on this disk, not a scenario)."""

    index: int
    fault: str
    label: str
    at: int
    args: tuple | None
    #: what went wrong while the scenario was chosen (the tool failing: an error outcome)
    error: str | None = None


class _Engine:
    """A campaign's recorded run: the workload run once, its physical writes and the
    :class:`~mqlog.core.workload.recording.Recording` that materialises its crash points."""

    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign
        recorder = Recorder()
        base = run_workload(campaign._config(keep_write_log=True), MemoryStorage(), recorder=recorder)
        self.writes = base.storage.write_log
        self.recording = recorder.recording()

    def record_restart(self, image) -> Recording:
        """The restart on ``image`` (a crash point's), run once and recorded: its own writes
        materialise every crash during it. Raises what the restart raised."""
        probe = RecordingStorage(CowStorage(image), keep_write_log=False)
        self.campaign._restart(probe)
        return Recording(probe.ops, [], probe.physical_writes, base=image)

    def cursor(self) -> "_Cursor":
        return _Cursor(self)


class _Cursor:
    """Disks and journals of the recorded run in increasing crash points (one replay for a
    batch of scenarios sorted by the point they start from); each disk a view of its own."""

    def __init__(self, engine: _Engine) -> None:
        self.engine = engine
        self.images = engine.recording.images()
        self.journals = engine.recording.journals()
        self._journal: tuple[int, object] | None = None
        self._restart: tuple[int, Recording] | None = None

    def image(self, k: int) -> CowStorage:
        return self.images.image(k)

    def torn(self, k: int, seed: int) -> CowStorage:
        return self.images.torn(k, seed, "random")

    def journal(self, k: int):
        if self._journal is None or self._journal[0] != k:
            self._journal = (k, self.journals.at(k))
        return self._journal[1]

    def restart_image(self, k: int, j: int) -> CowStorage:
        if self._restart is None or self._restart[0] != k:
            self._restart = (k, self.engine.record_restart(self.images.image(k)))
        return self._restart[1].images().image(j)


def clone(storage) -> MemoryStorage:
    """A copy of every file of ``storage``."""
    out = MemoryStorage()
    for name in storage.list():
        out.write(name, 0, storage.read(name, 0, storage.size(name)))
    return out


def is_control(platform: str, name: str) -> bool:
    """Whether ``name`` is one of the platform's control files (log control, BSDS)."""
    if platform == "zos":
        return name.startswith("BSDS")
    return name.endswith((".lfh", ".ctl"))


def needed_file(platform: str, name: str) -> bool:
    """Whether ``name`` is a file the platform's restart may need: log extents, data sets
    and archives, control files (the log control file, the BSDS, TripleWrite's spare page),
    queue files. Copies of the BSDS kept beside archives are not."""
    if name.endswith(".mqq") or is_control(platform, name):
        return True
    if platform == "zos":
        return name.startswith("LOGCOPY") or ".A" in name
    return name.endswith(".LOG") or name.endswith(".log") or name == "amqhlspr.lfh"


def flip(storage, name: str, offset: int, bit: int) -> None:
    """Flip one bit of ``name`` at ``offset`` in ``storage``."""
    byte = storage.read(name, offset, 1)[0]
    storage.write(name, offset, bytes([byte ^ (1 << bit)]))


def in_place_writes(writes) -> list:
    """The physical writes that rewrite a page already written (at 4 KiB granularity):
    the ones a torn write can damage beyond the write itself."""
    seen: dict[str, set] = {}
    out = []
    for w in writes:
        if w.kind != "write":
            continue  # replace is atomic: it cannot tear
        pages = seen.setdefault(w.name, set())
        first, last = w.offset // PAGE_SIZE, (w.offset + max(w.length, 1) - 1) // PAGE_SIZE
        if any(p in pages for p in range(first, last + 1)):
            out.append(w)
        pages.update(range(first, last + 1))
    return out


__all__ = ["FAULT_CLASSES", "Campaign", "claims", "in_place_writes"]
