"""The queue lock (mqlog.core.qm.locks): what MQPUT and MQGET hold while they change a queue,
what waiting for it costs, and that it is not held across a log force (CALIBRATION D1)."""

from __future__ import annotations

import simpy

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.host.profiles import get_host
from mqlog.core.qm.locks import QueueLock
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose


def _run(workload, *, host="v91-xeon", device="ssd", log=None, **params):
    choice = choose("distributed")
    values = choice.configure(log or {})
    spec = build_spec(BUILTINS[workload], {k: str(v) for k, v in params.items()}, origin="test")
    return run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=3, device=device,
                                  host=host), MemoryStorage()).metrics


def test_a_release_wakes_the_oldest_sleeper_who_must_try_again():
    """A futex-style mutex: the caller that finds it held sleeps; a release wakes the oldest
    sleeper but does not hand the lock over – whoever tries first takes it."""
    env = simpy.Environment()
    lock = QueueLock(env)
    assert lock.try_take("a") is None and lock.holder == "a"
    b, c = lock.try_take("b"), lock.try_take("c")
    assert (lock.requests, lock.contended) == (3, 2)
    lock.release()
    assert b.triggered and not c.triggered and lock.holder is None
    assert lock.try_take("d") is None  # a running thread takes it before the woken one
    assert lock.try_take("b") is not None  # the woken caller finds it held again
    assert lock.contended == 3


def test_contention_grows_as_load_is_spread_over_fewer_queues():
    """IBM: "spread message load across multiple queues where possible, to alleviate queue
    locking". The same applications on one request/reply pair contend for its locks far more
    often than over ten, and every wait costs the waiter the CPU of being woken."""
    params = dict(requesters=40, responders=40, message_size=2048, duration=0.05)
    one = _run("requester-responder", queue_pairs=1, **params)
    ten = _run("requester-responder", queue_pairs=10, **params)
    share = {n: m["queue_lock_contended"] / m["queue_lock_requests"] for n, m in ((1, one), (10, ten))}
    assert share[1] > 2 * share[10]
    assert one["queue_lock_contended"] > 0
    # each contended attempt slept and paid a wakeup before it tried again
    assert one["cpu_lock_us"] == get_host("v91-xeon").force_wait_us * one["queue_lock_contended"]


def test_an_out_of_syncpoint_put_and_get_do_not_hold_the_lock_across_their_force():
    """D1's mechanism: one putter and one getter outside syncpoint on one queue. The lock
    is released before each waits for its force, so under TripleWrite (where a force is
    released after the spare copy) the putter's next put and the getter's get overlap, and
    some writes carry both forces – IBM's +25% TripleWrite writes need it. Held across the
    force, the putter's next put would take the lock before the woken getter and every
    write would carry one force."""
    m = _run("putget-pairs", device="ssd", host="v93-xeon", log={"LogWriteIntegrity": "TripleWrite"},
             pairs=1, messages_per_pair=500, message_size=512, syncpoint="false")
    assert m["forces_waited"] > 1.2 * m["write_cycles"]
    sw = _run("putget-pairs", device="ssd", host="v93-xeon", log={"LogWriteIntegrity": "SingleWrite"},
              pairs=1, messages_per_pair=500, message_size=512, syncpoint="false")
    assert 1.0 < m["physical_writes"] / sw["physical_writes"] < 1.5  # IBM: +25%
