"""What the queue manager's tests share: a queue manager on the reference platform over memory
storage in SimPy (a ``Rig``, which runs a process to its end and restarts over what is on disk),
queue definitions, a space policy that relieves the log once, by its oldest unit, and a run's
hook that checks the queue manager after every checkpoint."""

from __future__ import annotations

import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.platform import SpaceAction
from mqlog.core.reference import reference_platform
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.disk.storage import MemoryStorage


class Rig:
    """A queue manager on memory storage, with helpers to run processes to completion."""

    def __init__(self, device="ssd", storage=None, config=QmConfig(), plan=None, **platform_kwargs):
        self.storage = FaultInjectingStorage(storage if storage is not None else MemoryStorage(), plan or FaultPlan())
        self.env = simpy.Environment()
        self.device = Device(self.env, get_profile(device))
        self.platform = reference_platform(self.storage, **platform_kwargs)
        self.qm = QueueManager(self.env, self.platform, self.storage, self.device, config)
        self.crashed = False
        self.report = self.run(self.qm.start())

    def run(self, gen):
        try:
            return self.env.run(until=self.env.process(gen))
        except SimulatedCrash:
            self.crashed = True
            return None

    def stats(self):
        return self.qm.writer.stats

    def restart(self, device="ssd", config=QmConfig(), **platform_kwargs):
        """A new queue manager over a copy of what is on disk now (a crash: nothing unforced)."""
        return Rig(device, _copy(self.storage.durable), config, **platform_kwargs)


def _copy(storage):
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def define(rig, *names, **kwargs):
    def go():
        for name in names:
            yield from rig.qm.define_queue(name, **kwargs)
    rig.run(go())


class OldestOut:
    """A test platform policy: the first time it is asked, roll back (or forward, if
    prepared) the oldest unit of work; then never again."""

    checkpoint_at = 0.5
    relieve_from = 0.0  # asked at every check

    def __init__(self):
        self.fired = False

    def relieve(self, usage, uows):
        if self.fired or not uows:
            return []
        self.fired = True
        oldest = uows[0]
        return [SpaceAction(oldest.uow, "rollforward" if oldest.prepared else "rollback")]


def checked_at_checkpoints(checks: list):
    """A run's ``started`` hook: :meth:`QueueManager.check` after every checkpoint, each one's
    virtual time appended to ``checks``."""
    def started(qm, _report):
        checkpoint = qm.checkpoint

        def checked(*args, **kwargs):
            took = yield from checkpoint(*args, **kwargs)
            qm.check()
            checks.append(qm.env.now)
            return took
        qm.checkpoint = checked
    return started
