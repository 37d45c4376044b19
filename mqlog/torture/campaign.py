"""One configuration's fault campaign, planned, executed and finished in three steps
(:meth:`Campaign.plan`, :meth:`~Campaign.execute`, :meth:`~Campaign.finish`): planning records
the run and makes every random choice, so scenarios can execute in any order and any process
(the Spark driver in :mod:`mqlog.spark.torture` spreads them over executors) and still tally
exactly as one process running them in order would; each restart is checked against the
journal and judged against the configuration's claims, and the figures come out as a table or
a dict. The fault classes themselves are :mod:`mqlog.torture.faults`'; the engine that
materialises disks (:mod:`mqlog.torture.disks`) knows nothing of them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from mqlog.core.disk.faults import NOTHING, FaultPlan
from mqlog.core.host.profiles import DEFAULT_HOST
from mqlog.core.qm.config import QmConfig, with_qmgr
from mqlog.core.workload.run import RunConfig, restart_run
from mqlog.torture.claims import DAMAGE, DETECTED, ERROR, EXPECTED, SILENT, SURVIVED, Tally, table
from mqlog.torture.disks import Engine, Scenario
from mqlog.torture.faults import FAULT_CLASSES, FAULTS, FaultClasses, claims


@attrs.define
class Campaign(FaultClasses):
    """One configuration's campaign: the workload's run and what each fault did."""

    platform: str
    values: dict
    make_platform: Callable
    spec: object
    seed: int = 0
    device: str = "ssd"
    budget: int = 100
    #: the host profile (name or FILE.toml[:NAME]) the workload's run charges its CPU to
    host: str = DEFAULT_HOST
    faults: tuple = FAULT_CLASSES
    #: how every restart of the campaign runs (QmConfig.restart_mode: "9.1.1" or "legacy")
    restart_mode: str = "9.1.1"
    #: queue manager attributes by MQ's names (MAXUMSGS, MAXDEPTH), for the run and every restart
    qmgr: dict = attrs.field(factory=dict)
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
                         device=self.device, fault_plan=plan, keep_write_log=keep_write_log, host=self.host,
                         qm_config=with_qmgr(QmConfig(), self.qmgr))

    def _restart(self, storage, journal=None):
        """restart_run on ``storage`` as this campaign restarts (its device and restart mode)."""
        return restart_run(self.make_platform, storage, device=self.device, host=self.host, journal=journal,
                           qm_config=with_qmgr(QmConfig(restart_mode=self.restart_mode), self.qmgr))

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
        self._engine = Engine(self)
        writes = self._engine.writes
        if on_baseline is not None:
            on_baseline(time.perf_counter() - started, len(writes))
        self.physical_writes = len(writes)
        claimed = claims(self.platform, self.values)
        for fault in self.faults:
            self.tallies[fault] = Tally(fault, claimed[fault])
        plans: dict[str, list] = {}
        for fault in sorted(FAULTS.values(), key=lambda f: f.planned):
            if fault.name in self.faults:
                points = fault.points(self, rng, claimed)
                if points is not None:
                    plans[fault.name] = points
        scenarios: list[Scenario] = []
        for fault, points in plans.items():
            self.tallies[fault].possible = len(points)
            chosen = points if len(points) <= self.budget else sorted(rng.sample(points, self.budget))
            for point in chosen:
                try:
                    label, at, args = FAULTS[fault].plan(self, point, rng)
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
            self._engine = Engine(self)
        engine = self._engine.cursor()
        out = {}
        for scenario in sorted(scenarios, key=lambda s: (s.at, s.index)):
            if scenario.error is not None:
                out[scenario.index] = (ERROR, scenario.error)
            elif scenario.args is None:
                out[scenario.index] = (None, "")  # nothing to inject (no such file here)
            else:
                try:
                    out[scenario.index] = FAULTS[scenario.fault].inject(self, engine, scenario)
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
                "params": dict(self.spec.params), "seed": self.seed, "device": self.device, "host": self.host, "budget": self.budget,
                "physical_writes": self.physical_writes,
                "classes": [self.tallies[f].as_dict() for f in self.faults if f in self.tallies]}

    def table(self) -> str:
        """The campaign's counts, one line per fault class."""
        return table([self.tallies[f] for f in self.faults if f in self.tallies])
