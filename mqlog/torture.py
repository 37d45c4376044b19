"""``mqlog torture``: a fault campaign against one platform configuration (issue 9).

The promise under test: after any crash, torn write or single-copy damage that the
configuration claims to survive, **no committed persistent message is lost and no
uncommitted one appears**; anything beyond that is detected and reported clearly, never
silently wrong.

A campaign runs the workload once to learn its physical writes, then injects one fault per
scenario, restarts the queue manager on what the fault left on disk, and checks the
restarted queues against the applications' journal (:meth:`~mqlog.core.journal.Journal.verify`).
Every scenario is deterministic (the workload's seed, the campaign's seed), so a failing one
can be replayed from its label.

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

from mqlog.core.errors import LogFormatError, SimulatedCrash
from mqlog.core.media import MediaRecoveryError
from mqlog.core.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.pages import PAGE_SIZE
from mqlog.core.qmgr import QmConfig
from mqlog.core.run import RunConfig, restart_run, run_workload
from mqlog.core.storage import MemoryStorage

FAULT_CLASSES = ("crash", "torn", "bitflip", "copy", "restart")
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
    }
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
                "possible": self.possible, "tried": self.tried, **self.counts,
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
    _images_cache: list = attrs.field(factory=list)
    _last_report: object = None

    # -- running the workload --------------------------------------------------------------

    def _config(self, plan: FaultPlan | None = None, keep_write_log: bool = False) -> RunConfig:
        return RunConfig(self.platform, self.make_platform, self.values, self.spec, seed=self.seed,
                         device=self.device, fault_plan=plan, keep_write_log=keep_write_log)

    def _run(self, plan: FaultPlan | None = None, keep_write_log: bool = False):
        return run_workload(self._config(plan, keep_write_log), MemoryStorage())

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
        import time

        rng = random.Random(self.seed)
        started = time.perf_counter()
        base = self._run(keep_write_log=True)
        if on_baseline is not None:
            on_baseline(time.perf_counter() - started, len(base.storage.write_log))
        writes = base.storage.write_log
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
            self._images_cache = self._images(rng)
            count = len(self._images_cache)
            if "bitflip" in self.faults:
                plans["bitflip"] = [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]
            if "copy" in self.faults and claimed["copy"].level != NOTHING:
                plans["copy"] = [(i, n) for n in range(self.budget) for i in range(count)][:self.budget]
        for fault, points in plans.items():
            self.tallies[fault].possible = len(points)
            chosen = points if len(points) <= self.budget else sorted(rng.sample(points, self.budget))
            for point in chosen:
                try:
                    label, outcome, detail = getattr(self, f"_scenario_{fault}")(point, rng)
                except Exception as exc:  # the tool failing outside the restart it checks: an error, counted
                    label, outcome, detail = f"{fault} {point}", ERROR, f"{type(exc).__name__}: {exc}"
                self._judge(fault, label, outcome, detail)
                if progress is not None:
                    progress(1)
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

    def _scenario_crash(self, k: int, rng):
        result = self._run(FaultPlan(crash_after_writes=k))
        outcome, detail = self._check(result.storage.durable, result.journal)
        return f"crash after write {k}", outcome, detail

    def _scenario_torn(self, k: int, rng):
        seed = rng.randrange(1 << 30)
        result = self._run(FaultPlan(tear_write=k, tear_mode="random", seed=seed))
        outcome, detail = self._check(result.storage.durable, result.journal)
        return f"tear write {k} (seed {seed})", outcome, detail

    def _scenario_restart(self, point: tuple[int, int], rng):
        k, j = point
        label = f"crash after write {k}, then again at write {j} of the restart"
        crashed = self._run(FaultPlan(crash_after_writes=k))
        disk = crashed.storage.durable
        try:
            self._restart(FaultInjectingStorage(disk, FaultPlan(crash_after_writes=j)))
        except SimulatedCrash:
            pass
        except DAMAGE as exc:
            return label, DETECTED, f"the first restart refused: {exc}"
        except Exception as exc:
            return label, ERROR, f"the first restart: {type(exc).__name__}: {exc}"
        outcome, detail = self._check(disk, crashed.journal)
        return label, outcome, detail

    def _live_page(self, disk, rng) -> tuple[int, str, int] | None:
        """A log page restart reads on ``disk`` (address, file, offset), or None."""
        probe = clone(disk)
        try:
            report, _, qm = self._restart(clone(disk))
        except DAMAGE:  # restart refuses this disk as it is: no page to damage (anything else goes up)
            return None
        end = report.end_of_log.address if report.end_of_log is not None else None
        start = report.checkpoint
        if end is None or start is None or start < 0 or end <= start:
            return None
        space = self.make_platform(probe).space
        page = rng.randrange(start, end)
        page -= page % PAGE_SIZE
        try:
            _, name, offset = space.read_page(page)
        except DAMAGE:
            return None
        return page, name, offset

    def _scenario_bitflip(self, point: tuple[int, int], rng):
        index, _ = point
        where, disk, journal = self._images_cache[index]
        disk = clone(disk)
        target = ("log", "control", "queue")[rng.randrange(3)]
        names = disk.list()
        if target == "log":
            found = self._live_page(disk, rng)
            if found is None:
                target = "queue"
            else:
                page, name, offset = found
                offset += rng.randrange(PAGE_SIZE)
        if target != "log":
            pick = [n for n in names if (n.endswith(".mqq") if target == "queue" else is_control(self.platform, n))]
            if not pick:
                return f"{where}: no {target} file", None, ""
            name = pick[rng.randrange(len(pick))]
            size = disk.size(name)
            if size == 0:
                return f"{where}: {name} is empty", None, ""
            offset = rng.randrange(size)
        bit = rng.randrange(8)
        flip(disk, name, offset, bit)
        outcome, detail = self._check(disk, journal)
        end = self._last_report.end_of_log if self._last_report is not None else None
        if (outcome == "loss" and target == "log" and end is not None and end.reason != "end"
                and end.page_address == page and self._single_copy()):
            # The damaged page is the last one written: with one copy, damage there cannot be
            # told from a write the crash tore, so restart ends the log before it (as MQ does).
            outcome = "expected"
            detail = (f"{detail} (expected: the log's last page was damaged, and with a single copy "
                      f"({self._copy_setting()}) that cannot be told from a torn last write)")
        return f"{where}: bit {bit} of {name} offset {offset}", outcome, detail

    def _single_copy(self) -> bool:
        return not (self.platform == "zos" and str(self.values.get("TWOACTV", "YES")) == "YES")

    def _copy_setting(self) -> str:
        if self.platform == "zos":
            return "TWOACTV=NO"
        return f"LogWriteIntegrity={self.values.get('LogWriteIntegrity', '-')}" if self.platform == "distributed" \
            else "the reference log"

    def _scenario_copy(self, point: tuple[int, int], rng):
        index, _ = point
        where, disk, journal = self._images_cache[index]
        disk = clone(disk)
        if rng.randrange(4) == 0 and disk.exists("BSDS01") and disk.exists("BSDS02"):
            name = ("BSDS01", "BSDS02")[rng.randrange(2)]
            disk.write(name, 0, rng.randbytes(max(1, disk.size(name))))
            outcome, detail = self._check(disk, journal)
            return f"{where}: {name} overwritten", outcome, detail
        found = self._live_page(disk, rng)
        if found is None:
            return f"{where}: no log page to damage", None, ""
        page, name, offset = found
        copy = 1 + rng.randrange(2)
        if copy == 2:
            name = name.replace("LOGCOPY1.", "LOGCOPY2.")
        disk.write(name, offset, rng.randbytes(PAGE_SIZE))
        outcome, detail = self._check(disk, journal)
        return f"{where}: log page {page:#x} of copy {copy} ({name}) overwritten", outcome, detail

    def _restart_points(self, rng) -> list[tuple[int, int]]:
        """(crash point of the run, crash point in the restart) pairs: a few crashes of the
        run, each restart crashed at every one of its own writes."""
        out = []
        for k in sorted(rng.sample(range(1, self.physical_writes), min(3, self.physical_writes - 1))):
            crashed = self._run(FaultPlan(crash_after_writes=k))
            probe = FaultInjectingStorage(clone(crashed.storage.durable), keep_write_log=True)
            try:
                self._restart(probe)
            except Exception as exc:  # no restart to crash: that is a failure in its own right
                self.tallies["restart"].add(ERROR, f"crash after write {k}, then restart",
                                            f"the restart to crash failed: {type(exc).__name__}: {exc}")
                continue
            out += [(k, j) for j in range(probe.physical_writes)]
        return out

    def _images(self, rng) -> list:
        """Disks to damage: the run crashed at a few points, and its clean end."""
        points = sorted(rng.sample(range(1, self.physical_writes), min(2, self.physical_writes - 1)))
        out = []
        for k in points:
            result = self._run(FaultPlan(crash_after_writes=k))
            out.append((f"crash after write {k}", result.storage.durable, result.journal))
        end = self._run()
        out.append(("clean end", end.storage.durable, end.journal))
        return out


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
