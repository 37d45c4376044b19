"""Shared helpers for the distributed tests: a queue manager over a storage, running a
generator to its end, damaging a queue file, and a queue's contents as comparable data."""

from __future__ import annotations

import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.objects.queuefile import file_name_for
from mqlog.distributed.platform import distributed_platform

PAGES = 64


def make_qm(storage, pages: int = PAGES, **kwargs):
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=pages, **kwargs)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    return env, platform, qm


def run(env, gen):
    proc = env.process(gen)
    env.run(until=proc)
    return proc.value


def damage(storage, name: str = "Q") -> None:
    """Overwrite both header slots of the queue's file: it no longer opens."""
    storage.write(file_name_for(name), 0, b"\xA5" * 1024)


def contents(qm, name: str = "Q") -> dict:
    """What a queue holds: each message with its state, owner and data (data read from
    memory or the file)."""
    queue = qm.queues[name]
    out = {}
    for m in queue.messages.values():
        data, _ = queue.read(m)
        out[m.msg_id] = (m.state, m.uow, data)
    return out


def datas(qm, name: str = "Q") -> list:
    return sorted(data for _, _, data in contents(qm, name).values())
