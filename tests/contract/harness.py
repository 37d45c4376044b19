"""A seeded concurrent workload with an application journal, crash and restart helpers.

The contract suite runs it against every platform configuration (the ``platform_config``
fixture): each platform's test package registers its own (see ``registry.py``); a platform's
own tests use it too (distributed media recovery under crashes).
"""

from __future__ import annotations

import functools
import random

import attrs
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.workload.journal import Journal
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError, Reason

QUEUES = ("APP.Q0", "APP.Q1", "APP.Q2")


@attrs.frozen
class PlatformConfig:
    """How to build a platform over a storage: a name and a factory."""

    name: str
    #: callable(storage) -> Platform; a bounded log's also takes ``log_scale``, a whole factor
    #: its log files (extents, active data sets) are made larger by (see :func:`with_larger_log`)
    make: object
    device: str = "ssd"
    #: whether the configuration claims to survive a torn write (TripleWrite, padding, dual copies)
    survives_torn_writes: bool = False


@attrs.define
class Outcome:
    qm: QueueManager
    storage: FaultInjectingStorage
    journal: Journal
    crashed: bool
    env: simpy.Environment


def clone(storage) -> MemoryStorage:
    """A copy of a storage's files (the disk as a crash left it)."""
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def with_larger_log(config: PlatformConfig, factor: int) -> PlatformConfig:
    """The same configuration – integrity, copies, codec, archiving – with each log file
    ``factor`` times larger: for a scenario a small log cannot hold."""
    return attrs.evolve(config, name=f"{config.name}-x{factor}",
                        make=functools.partial(config.make, log_scale=factor))


def with_buffer(config: PlatformConfig, pages: int) -> PlatformConfig:
    """The same configuration with a log buffer of ``pages`` pages: for a scenario that needs
    the buffer to fill (a platform with no write threshold writes unforced records only then)."""
    def make(storage, **kwargs):
        return attrs.evolve(config.make(storage, **kwargs), buffer_pages=pages)
    return attrs.evolve(config, name=f"{config.name}-buffer{pages}", make=make)


def start(config: PlatformConfig, storage, plan: FaultPlan = FaultPlan(), qm_config: QmConfig = QmConfig(),
          keep_write_log: bool = False):
    profile = get_profile(config.device)
    # a crash tears what the device can tear: whole atomic blocks land (as a run does it)
    fs = FaultInjectingStorage(storage, attrs.evolve(plan, atomic_bytes=profile.atomic_write_bytes),
                               keep_write_log=keep_write_log)
    env = simpy.Environment()
    qm = QueueManager(env, config.make(fs), fs, Device(env, profile), qm_config)
    return env, fs, qm


def run_workload(config: PlatformConfig, *, seed: int = 1, apps: int = 4, rounds: int = 12,
                 plan: FaultPlan = FaultPlan(), storage=None, qm_config: QmConfig = QmConfig(),
                 deep: int = 0, imager=None, keep_write_log: bool = False) -> Outcome:
    """Start a new queue manager and run the workload until it ends or the plan crashes it.

    ``imager(qm)``: an administrative generator run every 600 µs while the applications
    work (media images, say); ``keep_write_log``: record the storage's ``write_log``."""
    env, fs, qm = start(config, storage if storage is not None else MemoryStorage(), plan, qm_config,
                        keep_write_log)
    journal = Journal()
    rng = random.Random(seed)
    prepared: list = []

    def setup():
        yield from qm.start()
        for name in QUEUES:
            yield from qm.define_queue(name, max_depth=100_000)
        loader = qm.connect("LOADER")
        for i in range(deep):
            msg_id = yield from loader.put(QUEUES[i % 3], b"deep-%06d" % i + bytes(200))
            journal.put("LOADER", msg_id, QUEUES[i % 3], True, True)
            if i % 50 == 49 or i == deep - 1:
                journal.commit_asked("LOADER")
                yield from loader.commit()
                journal.ended("LOADER", True)

    def app(n: int, r: random.Random):
        conn = qm.connect(f"APP{n}")
        for round_ in range(rounds):
            key = f"APP{n}.{round_}"  # one journal key per unit of work
            yield env.timeout(r.uniform(0, 200))
            choice = r.random()
            try:
                if choice < 0.55:
                    yield from unit_of_work(conn, key, r)
                elif choice < 0.75:
                    queue = r.choice(QUEUES)
                    persistent = r.random() < 0.8
                    msg_id = yield from conn.put(queue, r.randbytes(r.choice((50, 900, 5000, 20_000))),
                                                 persistent=persistent, syncpoint=False)
                    journal.put(key, msg_id, queue, persistent, False)
                else:
                    queue = r.choice(QUEUES)
                    journal.get_asked(queue, False)
                    try:
                        got = yield from conn.get(queue, syncpoint=False)
                    except MqiError:
                        journal.get_failed(queue, False)
                    else:
                        journal.got(key, got.msg_id, queue, False, got.persistent)
            except MqiError as exc:
                if exc.reason is Reason.MQRC_BACKED_OUT:
                    journal.ended(key, committed=False)
                elif exc.reason is Reason.MQRC_RESOURCE_PROBLEM:
                    # The log is full: the call did nothing; an application backs
                    # its unit of work out (backout never fails for want of log).
                    if conn.uow is not None:
                        journal.backout_asked(key)
                        yield from conn.backout()
                        journal.ended(key, False)
                else:
                    raise

    def unit_of_work(conn, key, r):
        for _ in range(r.randint(1, 4)):
            queue = r.choice(QUEUES)
            if r.random() < 0.7:
                persistent = r.random() < 0.85
                msg_id = yield from conn.put(queue, r.randbytes(r.choice((100, 1500, 9000))), persistent=persistent)
                journal.put(key, msg_id, queue, persistent, True)
            else:
                try:
                    got = yield from conn.get(queue)
                except MqiError as exc:
                    if exc.reason is not Reason.MQRC_NO_MSG_AVAILABLE:
                        raise
                else:
                    journal.got(key, got.msg_id, queue, True, got.persistent)
            yield env.timeout(r.uniform(0, 50))
        end = r.random()
        if end < 0.7:
            journal.commit_asked(key)
            yield from conn.commit()
            journal.ended(key, True)
        elif end < 0.88:
            journal.backout_asked(key)
            yield from conn.backout()
            journal.ended(key, False)
        else:
            journal.prepare_asked(key)
            uow_id = yield from conn.prepare(b"XID-" + key.encode())
            journal.prepared(key, uow_id)
            prepared.append((key, uow_id, r.random() < 0.5, r.random() < 0.7))
            conn.uow = None  # the coordinator owns it now
            # a fresh journal key for this application's next unit of work
            return

    def coordinator():
        while True:
            yield env.timeout(700)
            while prepared:
                key, uow_id, commit, resolve = prepared.pop(0)
                if not resolve:
                    continue  # left in doubt for ever
                (journal.commit_asked if commit else journal.backout_asked)(key)
                yield from qm.resolve(uow_id, commit)
                journal.ended(key, commit)

    main = env.process(setup())
    procs = []

    def launch():
        yield main
        for n in range(apps):
            procs.append(env.process(app(n, random.Random(rng.random()))))
        env.process(coordinator())
        if imager is not None:
            env.process(administrator())
        yield simpy.AllOf(env, procs)

    def administrator():
        while not all(p.triggered for p in procs):
            yield env.timeout(600)
            yield from imager(qm)

    def monitor():  # the invariant checker, between steps (sortedcontainers' _check() style)
        while True:
            yield env.timeout(250)
            qm.check()

    env.process(monitor())
    done = env.process(launch())
    crashed = False
    try:
        env.run(until=done)
    except SimulatedCrash:
        crashed = True
    journal.crash()
    if not crashed:
        qm.check()
    return Outcome(qm, fs, journal, crashed, env)


def restart(config: PlatformConfig, storage, plan: FaultPlan = FaultPlan(), qm_config: QmConfig = QmConfig()):
    """Restart a queue manager on ``storage``; returns (qm, report, crashed)."""
    env, fs, qm = start(config, storage, plan, qm_config)
    proc = env.process(qm.start())
    try:
        env.run(until=proc)
    except SimulatedCrash:
        return qm, None, True
    qm.check()
    return qm, proc.value, False
