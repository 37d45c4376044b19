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


def test_a_thread_woken_from_a_lock_is_run_before_the_callers_queued_for_a_core():
    """Linux's scheduler favours a thread that slept: woken by a release, a lock's sleeper is
    given the next core before the callers already waiting for one (else, with the cores
    saturated, it would wait behind all of them while others take the lock again)."""
    from mqlog.core.host.profiles import Cores

    env = simpy.Environment()
    cores = Cores(env, 1)
    assert cores.acquire() is None  # the one core, held
    queued = cores.acquire()
    woken = cores.acquire(urgent=True)
    cores.release()
    assert woken.triggered and not queued.triggered
    cores.release()
    assert queued.triggered


def test_an_mqput_holds_its_queues_lock_for_the_whole_call_persistent_or_not():
    """Paice: "whenever an application does a put or get to a queue, a lock is held on the
    queue for the duration of that request". A non-persistent put takes the lock too (a
    persistent get takes it for its persistent part: amqsrua counts lock contention for puts
    only)."""
    np_ = _run("putget-pairs", persistent="false", syncpoint="true", pairs=2, messages_per_pair=200,
               message_size=2048)
    assert np_["messages_put"] == 400
    # every put took its queue's lock (a retry after a wait counts again); gets of
    # non-persistent messages log nothing and do not take it
    assert np_["queue_lock_requests"] - np_["queue_lock_contended"] == np_["messages_put"]
    assert np_["cpu_log_us"] == 0  # nothing logged: the lock covered the call's path alone


def test_cpu_per_round_trip_rises_once_locks_contend_and_flattens_once_the_cores_saturate():
    """F1's shape, from the mechanism: with 200 responders on ten queue pairs, 20 requesters
    leave the cores half idle and the locks free; by 60 the cores saturate in bursts, callers
    find the queues' locks held and pay the wakeups (CPU per round trip rises, as IBM's does
    from 326 to 384 µs); past 100 the cores are saturated and the locks' utilisation – set by
    the throughput the cores allow – no longer grows, so neither does the cost."""
    per_trip, busy = {}, {}
    for n in (20, 60, 100, 200):
        m = _run("requester-responder", requesters=n, responders=200, queue_pairs=10, message_size=2048,
                 duration=0.04, log={"LogBufferPages": "4096"})
        per_trip[n] = m["cpu_busy_us"] / m["round_trips"]
        busy[n] = m["cpu_busy_us"] / (m["workload_s"] * 1e6 * m["host_cores"])
        if n == 20:
            assert m["queue_lock_contended"] < 0.05 * m["queue_lock_requests"]
    assert busy[20] < 0.6 and busy[200] > 0.9
    assert per_trip[60] > 1.08 * per_trip[20]
    assert per_trip[200] < 1.1 * per_trip[100]
