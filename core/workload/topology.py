"""Topologies: several queue managers in one virtual time, joined by channels, running one
workload across them – and their restart, channel resolution and end-to-end verification.

:func:`run_topology` starts every queue manager of a :class:`TopologyConfig` on its own
storage, device and host in one SimPy environment, defines what the channels need on each
(SYSTEM.CHANNEL.SYNCQ, the dead-letter queue, the transmission queues, the destination queues),
starts the channels (:mod:`mqlog.core.workload.channels`) and the workload's applications, and
ends as a run does: when the workload's last call returns, the channels are left to deliver
what is on their transmission queues, stopped, and every queue manager ends with a controlled
shutdown. A crash (``crash``: a queue manager and a storage write count) pulls that queue
manager's plug at that write – its write may tear – and kills the others at the same instant
(``endmqm -p``: every write their storage accepted lands whole, their log buffers are lost).
Assumption: the model stops the whole topology there (no queue manager runs on alone), which
covers every in-doubt window of the channels between them: the partner of a crashed end is
restarted too.

:func:`restart_topology` restarts each queue manager on what a run left, verifies each
against its own application journal, lets every channel resynchronise (its sender's batches
in doubt committed or backed out by the receiver's last committed LUWID), and checks the
channels end to end (:func:`delivery_verdict`): every message that left a transmission queue
arrived exactly once, every message still on one did not.

Workloads (``TOPOLOGY_WORKLOADS``): ``channel-feed`` (putters on the first channel's sending
queue manager, getters at its destination) and ``channel-request-reply`` (requesters on the
first channel's sending queue manager, responders on its receiving one, the replies back over
the channel the other way).
"""

from __future__ import annotations

from typing import Callable, Generator

import attrs
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.disk.storage import Storage
from mqlog.core.errors import MqlogError, SimulatedCrash
from mqlog.core.host.profiles import DEFAULT_HOST, HostProfile, get_host
from mqlog.core.platform import Platform
from mqlog.core.qm.config import QmConfig
from mqlog.core.qm.manager import QueueManager
from mqlog.core.workload.channels import DEAD_LETTER_QUEUE, SYNCQ, ChannelDef, resolve_channel, xqh
from mqlog.core.workload.mca import Channel
from mqlog.core.workload.journal import Journal
from mqlog.core.workload.run import PROGRESS_STEP_US, RunConfig, WorkloadStalled, collect_metrics, restart_run
from mqlog.core.workload.spec import WorkloadSpec
from mqlog.core.workload.workloads import Context

#: a topology workload's parameters and their defaults
TOPOLOGY_WORKLOADS = {
    "channel-feed": {"putters": 1, "messages_per_putter": 100, "message_size": 2048, "persistent": True,
                     "payload": "random"},
    "channel-request-reply": {"requesters": 1, "responders": 1, "requests": 50, "message_size": 2048,
                              "persistent": True, "payload": "random", "reply_wait_s": 60.0},
}
#: how often the end of a run looks whether the channels have delivered everything, µs
_DRAIN_POLL_US = 1000.0
#: virtual time channels may go without moving a message, their links up, before the run
#: says they stalled (ten SHORTTMR retry intervals)
_STALLED_US = 600e6


@attrs.frozen
class QmDef:
    """One queue manager of a topology: its name, platform (and the platform built on a
    storage), log parameters, device and host."""

    name: str
    platform: str
    make_platform: Callable[[Storage], Platform]
    log_config: dict = attrs.field(factory=dict)
    device: str = "ssd"
    host: str | HostProfile = DEFAULT_HOST

    @property
    def qm_config(self) -> QmConfig:
        return QmConfig(name=self.name)


@attrs.frozen
class TopologyConfig:
    qmgrs: tuple = attrs.field(converter=tuple)
    channels: tuple = attrs.field(converter=tuple)
    workload: str = "channel-feed"
    params: dict = attrs.field(factory=dict)
    seed: int = 0
    #: (queue manager name, crash after this many of its storage writes)
    crash: tuple | None = None

    def __attrs_post_init__(self):
        names = [q.name for q in self.qmgrs]
        if len(set(names)) != len(names) or not names:
            raise MqlogError(f"a topology needs queue managers with distinct names, got {names}")
        for ch in self.channels:
            for end in (ch.sender, ch.receiver):
                if end not in names:
                    raise MqlogError(f"channel {ch.name}: no queue manager {end!r} (the topology has "
                                     f"{', '.join(names)})")
            if ch.sender == ch.receiver:
                raise MqlogError(f"channel {ch.name}: sends from {ch.sender} to itself")
        if self.workload not in TOPOLOGY_WORKLOADS:
            raise MqlogError(f"topology workload {self.workload!r}: give one of {', '.join(TOPOLOGY_WORKLOADS)}")
        unknown = set(self.params) - set(TOPOLOGY_WORKLOADS[self.workload])
        if unknown:
            raise MqlogError(f"topology workload {self.workload!r} has no parameter(s) {sorted(unknown)}; known: "
                             f"{', '.join(TOPOLOGY_WORKLOADS[self.workload])}")
        if not self.channels:
            raise MqlogError("a topology workload needs at least one channel")
        if self.workload == "channel-request-reply" and self._back_channel() is None:
            first = self.channels[0]
            raise MqlogError(f"channel-request-reply needs a channel back from {first.receiver} to {first.sender}")
        if self.crash is not None and self.crash[0] not in names:
            raise MqlogError(f"crash: no queue manager {self.crash[0]!r}")

    def spec(self) -> WorkloadSpec:
        return WorkloadSpec(self.workload, {**TOPOLOGY_WORKLOADS[self.workload], **self.params}, self.seed)

    def _back_channel(self) -> ChannelDef | None:
        first = self.channels[0]
        return next((c for c in self.channels if c.sender == first.receiver and c.receiver == first.sender), None)

    def qmgr(self, name: str) -> QmDef:
        return next(q for q in self.qmgrs if q.name == name)


@attrs.define
class TopologyResult:
    #: queue manager name -> its RunResult-like parts
    metrics: dict
    journals: dict
    qms: dict
    storages: dict
    channels: dict  # channel name -> ChannelStatus.as_dict()
    crashed: str | None  # the queue manager whose plug was pulled

    def result_of(self, name: str):
        """Queue manager ``name``'s part as a one-queue-manager run's result (a
        :class:`~mqlog.core.workload.run.RunResult`), for what keeps or shows such a run."""
        from mqlog.core.workload.run import RunResult

        return RunResult(self.metrics[name], self.journals[name], self.qms[name], self.storages[name],
                         self.crashed is not None, list(self.qms[name].messages))


def run_topology(cfg: TopologyConfig, storages: dict[str, Storage], recorders: dict | None = None,
                 progress: Callable[[float, int], None] | None = None) -> TopologyResult:
    """Run ``cfg`` on one storage a queue manager (``storages`` by name): see the module docstring.
    ``progress(virtual seconds, log records of every queue manager)`` is called every
    ``PROGRESS_STEP_US`` of virtual time, as a one-queue-manager run's is.

    ``recorders``: a :class:`~mqlog.core.workload.recording.Recorder` a queue manager (by
    name), which hands that queue manager its storage and journal and keeps their calls – the
    fault campaign's channel scenarios materialise every crash point from one run so."""
    env = simpy.Environment()
    spec = cfg.spec()
    qms, contexts, stores = {}, {}, {}
    for q in cfg.qmgrs:
        crash_after = cfg.crash[1] if cfg.crash is not None and cfg.crash[0] == q.name else None
        profile = get_profile(q.device)
        plan = FaultPlan(crash_after_writes=crash_after, atomic_bytes=profile.atomic_write_bytes)
        recorder = recorders.get(q.name) if recorders else None
        if recorder is None:
            fs = stores[q.name] = FaultInjectingStorage(storages[q.name], plan)
        else:
            fs = stores[q.name] = recorder.storage(storages[q.name], plan, keep_write_log=False)
        qm = qms[q.name] = QueueManager(env, q.make_platform(fs), fs, Device(env, profile), q.qm_config,
                                        get_host(q.host), cfg.seed)
        if qm.platform.attach is not None:
            qm.platform.attach(qm)
        contexts[q.name] = Context(env, qm, spec, cfg.seed, Journal() if recorder is None else recorder.journal())
    channels = {}

    def main() -> Generator:
        for qm in qms.values():
            yield from qm.start()
        for name, qm in qms.items():
            wanted = [SYNCQ, DEAD_LETTER_QUEUE, *(c.transmission_queue for c in cfg.channels if c.sender == name),
                      *_destinations(cfg, name)]
            for queue in dict.fromkeys(wanted):
                if queue not in qm.queues:
                    yield from qm.define_queue(queue, max_depth=999_999_999)
        for ch in cfg.channels:
            channels[ch.name] = Channel(ch, contexts[ch.sender], contexts[ch.receiver])
        running = [c.start() for c in channels.values()]
        for ctx in contexts.values():
            ctx.set_up()
        yield from RUNNERS[cfg.workload](cfg, contexts)
        workload_us = env.now
        last, since = None, env.now
        while not all(c.drained() for c in channels.values()):
            # a channel that stops moving with its link up is a bug, not a wait: say so rather
            # than poll for ever (an outage is waited out: the sender retries when it ends)
            moved = tuple((c.stat.batches, c.stat.messages_sent, c.stat.fast_messages_sent, c.stat.outages)
                          for c in channels.values())
            if moved != last or not all(c.forward.up() for c in channels.values()):
                last, since = moved, env.now
            elif env.now - since > _STALLED_US:
                raise WorkloadStalled(f"channels stalled at {env.now / 1e6:.6f} virtual seconds: "
                                      + "; ".join(f"{n} {c.stat.status}, {c.unconfirmed} batch(es) unconfirmed"
                                                  for n, c in channels.items() if not c.drained()))
            yield env.timeout(_DRAIN_POLL_US)
        drained["us"] = env.now
        for c in channels.values():
            c.stop()
        yield simpy.AllOf(env, running)
        for qm in qms.values():
            qm.end("controlled")
            yield from qm.shutdown()
        return workload_us

    drained = {}
    proc = env.process(main())
    crashed = None
    try:
        if progress is None:
            env.run(until=proc)
        while not proc.triggered:
            env.run(until=env.any_of([proc, env.timeout(PROGRESS_STEP_US)]))
            progress(env.now / 1e6, sum(qm.writer.stats.log_records for qm in qms.values() if qm.writer is not None))
        if not proc.ok:
            raise proc.value
    except SimulatedCrash:
        crashed = cfg.crash[0]
        for name, fs in stores.items():
            if name != crashed:
                fs.kill()
    metrics, journals = {}, {}
    for q in cfg.qmgrs:
        ctx = contexts[q.name]
        ctx.journal.crash()
        run_cfg = RunConfig(q.platform, q.make_platform, q.log_config, spec, cfg.seed, q.device, qm_config=q.qm_config,
                            host=q.host)
        m = metrics[q.name] = collect_metrics(run_cfg, qms[q.name], ctx, env, crashed is not None)
        m["workload_s"] = (proc.value if proc.triggered and proc.ok else env.now) / 1e6
        # when the channels had delivered the last message (the drain, before the shutdowns)
        m["delivered_s"] = drained.get("us", env.now) / 1e6
        m["storage_writes"] = stores[q.name].physical_writes - (stores[q.name].crash_write is not None)
        journals[q.name] = ctx.journal
    return TopologyResult(metrics, journals, qms, stores, {n: c.stat.as_dict() for n, c in channels.items()}, crashed)


def _destinations(cfg: TopologyConfig, qm: str) -> list[str]:
    """The workload's queues local to ``qm``."""
    first = cfg.channels[0]
    if cfg.workload == "channel-feed":
        return ["FEED.IN"] if qm == first.receiver else []
    if qm == first.receiver:
        return ["REQUEST.IN"]
    return ["REPLY.IN"] if qm == first.sender else []


# --- the workloads --------------------------------------------------------------------------

def channel_feed(cfg: TopologyConfig, contexts: dict) -> Generator:
    """One way: putters on the first channel's sending queue manager put ``messages_per_putter`` each to
    FEED.IN on the receiving one (through the transmission queue), committing each; as many
    getters there take them."""
    first = cfg.channels[0]
    source, target = contexts[first.sender], contexts[first.receiver]
    p = source.spec.get
    count, size, persistent = p("messages_per_putter"), p("message_size"), p("persistent")
    header = xqh("FEED.IN", first.receiver)
    env = source.env

    def putter(i: int):
        app = source.app(f"FEEDER{i:05d}")
        for _ in range(count):
            yield from app.put(first.transmission_queue, header + app.payload(size), persistent=persistent,
                               syncpoint=persistent)
            if persistent:
                yield from app.commit()

    def getter(i: int):
        app = target.app(f"CONSUMER{i:05d}")
        for _ in range(count):
            got = yield from app.get("FEED.IN", syncpoint=persistent, wait_us=60e6)
            if got is None:
                return
            if persistent:
                yield from app.commit()

    procs = [target.start(getter(i)) for i in range(p("putters"))]
    procs += [source.start(putter(i)) for i in range(p("putters"))]
    yield simpy.AllOf(env, procs)


def channel_request_reply(cfg: TopologyConfig, contexts: dict) -> Generator:
    """Requesters on the first channel's sending queue manager put ``requests`` requests each to REQUEST.IN on
    the receiving one and wait for the reply on their own REPLY.IN; responders there get each
    request and put a reply of the same size back over the channel the other way."""
    first, back = cfg.channels[0], cfg._back_channel()
    home, away = contexts[first.sender], contexts[first.receiver]
    p = home.spec.get
    count, size, persistent = p("requests"), p("message_size"), p("persistent")
    wait = p("reply_wait_s") * 1e6
    to_request, to_reply = xqh("REQUEST.IN", first.receiver), xqh("REPLY.IN", first.sender)
    env = home.env
    outstanding = [p("requesters") * count]

    def requester(i: int):
        app = home.app(f"REQUESTER{i:05d}")
        for _ in range(count):
            if (yield from app.put(first.transmission_queue, to_request + app.payload(size), persistent=persistent,
                                   syncpoint=persistent)) is None:
                continue
            if persistent:
                yield from app.commit()
            got = yield from app.get("REPLY.IN", syncpoint=persistent, wait_us=wait)
            if got is not None:
                if persistent:
                    yield from app.commit()
                home.counters.round_trips += 1

    def responder(i: int):
        app = away.app(f"RESPONDER{i:05d}")
        while outstanding[0] > 0:
            # (waits in short steps: a responder left without requests ends with the last one)
            got = yield from app.get("REQUEST.IN", syncpoint=persistent, wait_us=_DRAIN_POLL_US * 100)
            if got is None:
                continue
            outstanding[0] -= 1
            yield from app.put(back.transmission_queue, to_reply + app.payload(len(got.data)), persistent=persistent,
                               syncpoint=persistent)
            if persistent:
                yield from app.commit()

    procs = [away.start(responder(i)) for i in range(p("responders"))]
    procs += [home.start(requester(i)) for i in range(p("requesters"))]
    yield simpy.AllOf(env, procs)


RUNNERS = {"channel-feed": channel_feed, "channel-request-reply": channel_request_reply}


# --- restart, resolution and the end-to-end check -------------------------------------------

def restart_topology(cfg: TopologyConfig, storages: dict[str, Storage], journals: dict[str, Journal],
                     channels: dict | None = None) -> dict:
    """Restart every queue manager of ``cfg`` on what a run left, verify each against its
    journal, resynchronise every channel (its batches in doubt resolved by the receiver's
    data) and check delivery end to end. Returns {"reports", "verdicts", "resolved",
    "delivery", "qms"}; every verdict is taken after the channels resolved."""
    qms, reports, first_verdicts = {}, {}, {}
    for q in cfg.qmgrs:
        report, verdict, qm = restart_run(q.make_platform, storages[q.name], device=q.device, host=q.host,
                                          qm_config=q.qm_config, journal=journals[q.name])
        qms[q.name], reports[q.name], first_verdicts[q.name] = qm, report, verdict
    resolved = {}
    for ch in cfg.channels:
        sender = qms[ch.sender]
        proc = sender.env.process(resolve_channel(sender, qms[ch.receiver], ch.name, journal=journals[ch.sender]))
        sender.env.run(until=proc)
        resolved[ch.name] = proc.value
    verdicts = {}
    for name, qm in qms.items():
        verdict = journals[name].verify(qm)
        verdicts[name] = verdict
        if verdict.ok:
            journals[name].settle(journals[name].settlement(qm))
    return {"reports": reports, "verdicts": verdicts, "first_verdicts": first_verdicts, "resolved": resolved,
            "delivery": delivery_verdict(cfg, journals, channels), "qms": qms}


def delivery_verdict(cfg: TopologyConfig, journals: dict[str, Journal], channels: dict | None = None) -> dict:
    """Each channel end to end, from the two ends' journals: ``lost`` – a persistent message
    whose get from the transmission queue committed but whose put at the destination did not;
    ``duplicated`` – one still on (or back on) the transmission queue that the destination also
    committed (it would arrive twice), and those the receiver was sent again after it had
    committed them (``channels``: the run's channel figures, their ``redelivered``);
    ``delivered``, ``waiting`` – the rest."""
    out = {}
    for ch in cfg.channels:
        sent, received = journals[ch.sender], journals[ch.receiver]
        again = ((channels or {}).get(ch.name) or {}).get("redelivered", 0)
        counts = {"delivered": 0, "waiting": 0, "lost": 0, "duplicated": again}
        for msg_id, m in sent.messages.items():
            if m.queue != ch.transmission_queue or not m.persistent or m.put != "committed":
                continue
            there = received.messages.get(msg_id)
            arrived = there is not None and there.put == "committed"
            left = m.got == "committed"
            key = ("delivered" if arrived else "lost") if left else ("duplicated" if arrived else "waiting")
            counts[key] += 1
        out[ch.name] = counts
    return out
