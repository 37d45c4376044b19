"""Channel crash scenarios: a topology of queue managers joined by channels
(:mod:`mqlog.core.workload.topology`), its run recorded once, a crash of either end at a
storage write, every queue manager restarted, each channel resolved with its partner and
checked end to end.

A fault :class:`~mqlog.torture.Campaign` is one platform configuration and one queue
manager's workload; a topology is several of each, and its promise spans them (MQ: "a
message is never lost or delivered twice" across a channel, whichever end fails). So the
topology's campaign is a class beside it, :class:`ChannelCampaign`, with the same three
steps (plan, execute, finish) and the same report rows (:func:`~mqlog.torture.claims.table`,
:class:`~mqlog.torture.claims.Tally`): one fault class per queue manager, ``crash QMA``,
``crash QMB``.

Recording: every queue manager runs over its own
:class:`~mqlog.core.workload.recording.RecordingStorage` and journal, and every call and
journal event of all of them is stamped with one sequence number shared by the topology
(:class:`TopologyRecording`), which is the order virtual time ran them in. A crash of
queue manager *Q* after its write *k* (``crash=(Q, k)`` of a run) then materialises as: *Q*'s
calls up to its write *k+1*, replayed and the power cut (unsynced writes lost); every other
queue manager's calls stamped before that instant, replayed and killed (``endmqm -p``: what
its storage accepted lands whole); each journal's events stamped before it, with the crash
applied – byte for byte what re-running the topology with that crash leaves
(tests/test_torture_channels.py compares them).
"""

from __future__ import annotations

import bisect
import itertools
import random

import attrs

from mqlog.core.disk.faults import SURVIVE, FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import ParameterError
from mqlog.core.workload.channels import ChannelDef
from mqlog.core.workload.journal import Journal
from mqlog.core.workload.recording import CowStorage, Recorder
from mqlog.core.workload.topology import TOPOLOGY_WORKLOADS, QmDef, TopologyConfig, restart_topology, run_topology
from mqlog.platforms import choose
from mqlog.torture.claims import DAMAGE, DETECTED, ERROR, SILENT, SURVIVED, Claim, Tally, table
from mqlog.torture.disks import Scenario

#: the claim of a channel crash: MQ's own promise for a channel's batches
CHANNEL_CLAIM = Claim(SURVIVE, "a batch in doubt at the crash is resolved with the partner by the receiver's last "
                               "committed LUWID (commit or back out): nothing lost, nothing delivered twice")


def channel_topology(platforms: tuple, workload: str, params: dict | None = None, *, seed: int = 0,
                     device: str = "ssd", host=None, batchsz: int = 50) -> TopologyConfig:
    """Two queue managers, QMA on ``platforms[0]`` and QMB on ``platforms[1]`` (each with its
    platform's default log), a channel each way: what a channel campaign runs. Refuses
    anything but two platforms, naming the parameter."""
    if isinstance(platforms, str) or len(platforms) != 2:
        raise ParameterError("--platform", ",".join(platforms) if not isinstance(platforms, str) else platforms,
                             "two platforms, sender and receiver (SENDER,RECEIVER): a channel joins two queue managers")
    if workload not in TOPOLOGY_WORKLOADS:
        raise ParameterError("--workload", workload, ", ".join(TOPOLOGY_WORKLOADS))
    qms = []
    for name, platform in zip(("QMA", "QMB"), platforms):
        descriptor = choose(platform)
        values = descriptor.configure({})
        extra = {} if host is None else {"host": host}
        qms.append(QmDef(name, descriptor.name, descriptor.named_maker(values, name), values, device, **extra))
    channels = [ChannelDef("QMA.TO.QMB", "QMA", "QMB", batchsz=batchsz),
                ChannelDef("QMB.TO.QMA", "QMB", "QMA", batchsz=batchsz)]
    return TopologyConfig(qms, channels, workload, dict(params or {}), seed=seed)


_KINDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def topology_params(workload: str, texts: dict[str, str]) -> dict:
    """The topology workload's parameters from ``--set workload.KEY=VALUE`` text, each read as
    its default's type; an unknown key or a value of the wrong kind is refused naming it."""
    defaults = TOPOLOGY_WORKLOADS[workload]
    out = {}
    for key, text in texts.items():
        name = key.lower()
        if name not in defaults:
            raise ParameterError(f"workload.{key}", text, f"a parameter of {workload}: {', '.join(defaults)}")
        kind = type(defaults[name])
        try:
            if kind is bool:
                if text.strip().lower() not in ("true", "false", "yes", "no", "1", "0"):
                    raise ValueError(text)
                value = text.strip().lower() in ("true", "yes", "1")
            else:
                value = kind(text.strip())
        except ValueError:
            raise ParameterError(f"workload.{key}", text, f"{_KINDS[kind]} (its default: {defaults[name]})") from None
        if kind in (int, float) and value < (0 if name == "reply_wait_s" else 1):
            raise ParameterError(f"workload.{key}", text, "a positive number")
        out[name] = value
    return out


class _Stamped(list):
    """A recording's list of calls (or journal events) that notes, for each, the topology's
    next sequence number: the order the queue managers made them in."""

    def __init__(self, clock) -> None:
        super().__init__()
        self.stamps: list[int] = []
        self._clock = clock

    def append(self, item) -> None:
        self.stamps.append(next(self._clock))
        super().append(item)


class _StampedRecorder(Recorder):
    """A queue manager's recorder whose calls and events share the topology's sequence."""

    def __init__(self, clock) -> None:
        super().__init__()
        self._clock = clock

    def storage(self, *args, **kwargs):
        fs = super().storage(*args, **kwargs)
        fs.ops = _Stamped(self._clock)
        return fs

    def journal(self):
        journal = super().journal()
        journal.events = _Stamped(self._clock)
        return journal


class TopologyRecording:
    """A topology's run, recorded once: its storage writes per queue manager and the disks
    and journals of a crash of any of them after any of its writes."""

    def __init__(self, cfg: TopologyConfig) -> None:
        self.cfg = cfg
        clock = itertools.count()
        self.recorders = {q.name: _StampedRecorder(clock) for q in cfg.qmgrs}
        self.result = run_topology(cfg, {q.name: MemoryStorage() for q in cfg.qmgrs}, self.recorders)
        #: storage writes a queue manager: its crash points are 0 .. writes - 1
        self.writes = {name: r.fs.physical_writes for name, r in self.recorders.items()}

    def crash(self, victim: str, k: int) -> tuple[dict, dict]:
        """(disks, journals) by queue manager name after ``victim``'s plug is pulled at its
        write ``k+1`` and the others are killed at the same instant."""
        if victim not in self.recorders or not 0 <= k < self.writes[victim]:
            raise ParameterError("crash point", (victim, k), f"a queue manager of {', '.join(self.recorders)} and "
                                                             f"0 .. its writes - 1")
        ops = self.recorders[victim].fs.ops
        cut = ops.stamps[next(i for i, op in enumerate(ops) if op[0] > k)]
        disks, journals = {}, {}
        for name, recorder in self.recorders.items():
            calls = recorder.fs.ops
            # (over a copy-on-write view: a created log file costs nothing until written)
            fs = FaultInjectingStorage(CowStorage(MemoryStorage()), keep_write_log=False)
            for _tag, method, args in calls[:bisect.bisect_left(calls.stamps, cut)]:
                if method != "begin_write":  # (a power cut here tears nothing in flight: none is torn)
                    getattr(fs, method)(*args)
            if name != victim:
                fs.kill()  # (the victim's power cut: only its durable image is left)
            disks[name] = fs.durable
            events = recorder.journal_.events
            journal = Journal()
            for _tag, method, args, kwargs in events[:bisect.bisect_left(events.stamps, cut)]:
                getattr(journal, method)(*args, **kwargs)
            journal.crash()
            journals[name] = journal
        return disks, journals


@attrs.define
class ChannelCampaign:
    """A topology's campaign: crashes of each queue manager at its storage writes (every one,
    or a seeded sample of ``budget`` a queue manager), each restarted, resolved and checked."""

    cfg: TopologyConfig
    seed: int = 0
    budget: int = 100
    tallies: dict = attrs.field(factory=dict)
    #: batches in doubt the scenarios resolved, by how: MQ's two resolutions
    resolved: dict = attrs.field(factory=lambda: {"commit": 0, "backout": 0})
    physical_writes: dict = attrs.field(factory=dict)
    _recording: object = attrs.field(default=None, repr=False)

    @property
    def faults(self) -> tuple:
        return tuple(f"crash {q.name}" for q in self.cfg.qmgrs)

    def plan(self) -> list[Scenario]:
        """Record the topology's run and draw every crash point (the campaign's generator)."""
        rng = random.Random(self.seed)
        self._recording = TopologyRecording(self.cfg)
        self.physical_writes = dict(self._recording.writes)
        scenarios: list[Scenario] = []
        for q, fault in zip(self.cfg.qmgrs, self.faults):
            tally = self.tallies[fault] = Tally(fault, CHANNEL_CLAIM)
            points = range(self.physical_writes[q.name])
            tally.possible = len(points)
            chosen = points if len(points) <= self.budget else sorted(rng.sample(points, self.budget))
            scenarios += [Scenario(len(scenarios) + i, fault, f"crash {q.name} ({q.platform}) after write {k}", k,
                                   (q.name, k)) for i, k in enumerate(chosen)]
        return scenarios

    def execute(self, scenarios: list[Scenario], progress=None) -> dict:
        """Each scenario's ``(outcome, detail)`` by index: its disks and journals
        materialised, every queue manager restarted, the channels resolved and checked."""
        if self._recording is None:
            self._recording = TopologyRecording(self.cfg)
        out = {}
        for scenario in scenarios:
            out[scenario.index] = self._scenario(*scenario.args)
            if progress is not None:
                progress(1)
        return out

    def _scenario(self, victim: str, k: int) -> tuple[str, str]:
        phase = "materialising the crash"
        try:
            disks, journals = self._recording.crash(victim, k)
            phase = "restart"
            done = restart_topology(self.cfg, disks, journals)
        except DAMAGE as exc:  # the damage, named
            return DETECTED, f"{phase}: {exc}"
        except Exception as exc:  # anything else is the model failing, never a verdict
            return ERROR, f"{phase}: {type(exc).__name__}: {exc}"
        for decided in done["resolved"].values():
            self.resolved["commit"] += sum(bool(c) for _u, c in decided)
            self.resolved["backout"] += sum(not c for _u, c in decided)
        wrong = [f"{name}: " + ", ".join(f"{key} {v}" for key, v in verdict.as_dict().items() if v and key != "indoubt")
                 for name, verdict in done["verdicts"].items() if not verdict.ok]
        wrong += [f"{channel}: lost {d['lost']}, duplicated {d['duplicated']}"
                  for channel, d in done["delivery"].items() if d["lost"] or d["duplicated"]]
        return (SILENT, "; ".join(wrong)) if wrong else (SURVIVED, "")

    def finish(self, scenarios: list[Scenario], results: dict) -> "ChannelCampaign":
        """Tally ``results`` in the scenarios' order."""
        for scenario in scenarios:
            outcome, detail = results[scenario.index]
            self.tallies[scenario.fault].add(outcome, scenario.label, detail)
        return self

    def run(self, progress=None) -> "ChannelCampaign":
        scenarios = self.plan()
        return self.finish(scenarios, self.execute(scenarios, progress))

    @property
    def failed(self) -> bool:
        return any(t.counts[SILENT] or t.counts[ERROR] or t.broken for t in self.tallies.values())

    def table(self) -> str:
        return table([self.tallies[f] for f in self.faults if f in self.tallies])

    def as_dict(self) -> dict:
        return {"topology": [{"name": q.name, "platform": q.platform, "device": q.device} for q in self.cfg.qmgrs],
                "channels": [c.name for c in self.cfg.channels], "workload": self.cfg.workload,
                "params": dict(self.cfg.spec().params), "seed": self.seed, "budget": self.budget,
                "physical_writes": dict(self.physical_writes), "resolved": dict(self.resolved),
                "classes": [self.tallies[f].as_dict() for f in self.faults if f in self.tallies]}
