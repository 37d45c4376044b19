"""TripleWrite's spare copy makes the rewritten partial page recoverable before the run is in
place: forces whose records end on that page are released after the spare write, the others
only after the in-place write, and a crash between the two loses none that was released."""

from __future__ import annotations

import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.records import Commit, Put
from mqlog.core.log.reader import scan
from mqlog.core.log.writer import LogWriter
from mqlog.distributed.space import DistributedLogSpace


def _run(plan=FaultPlan(), triple=True):
    storage = FaultInjectingStorage(MemoryStorage(), plan, keep_write_log=True)
    env = simpy.Environment()
    space = DistributedLogSpace(storage, primary=2, secondary=0, file_pages=64, triple_write=triple)
    writer = LogWriter(env, space, Device(env, get_profile("san")), write_threshold_pages=None,
                       pad_grouped_tail=True)
    seen = {"acked": []}

    def waiter(name, upto):
        yield writer.force(upto)
        seen[name] = env.now
        seen[f"{name}_durable"] = writer.durable
        seen["acked"].append(name)

    def app():
        yield from writer.put(Put("Q", bytes(24), b"first", uow=1))
        yield writer.force()  # a partial page on disk: the next write rewrites it
        seen["io_before"] = writer.stats.physical_writes
        seen["small"] = yield from writer.put(Commit(0, 1, uow=1))  # ends on that page
        small_end = seen["big_start"] = writer.next_address
        yield from writer.put(Put("Q", bytes(24), b"x" * 6000, uow=2))  # runs onto later pages
        env.process(waiter("small", small_end))
        env.process(waiter("big", writer.next_address))

    env.process(app())
    try:
        env.run()
    except SimulatedCrash:
        storage.crash()
    return storage, space, writer, seen


def test_a_force_ending_on_the_rewritten_page_is_released_after_the_spare_copy():
    _, _, writer, seen = _run()
    assert writer.stats.physical_writes - seen["io_before"] == 2  # the spare copy, then the run in place
    one_page = get_profile("san").write_time_us(4096)
    assert seen["big"] - seen["small"] >= one_page  # "big" waited for the in-place write as well


def test_a_record_running_on_past_the_spare_copy_is_not_durable_until_the_run_is_in_place():
    """The spare copy holds the run's first page only: a record that begins there and ends on
    a later page is not on disk yet, so the durable address the early release gives stops at
    its start (a queue file flushed against an address inside it would be ahead of the log,
    and a crash then leaves a queue manager that cannot restart)."""
    _, _, writer, seen = _run()
    assert seen["small_durable"] == seen["big_start"]
    assert seen["big_durable"] == writer.durable > seen["big_start"]


def test_under_single_write_both_wait_for_the_one_write():
    _, _, writer, seen = _run(triple=False)
    assert seen["small"] == seen["big"]


def test_a_crash_between_the_spare_copy_and_the_in_place_write_keeps_what_was_released():
    full, _, _, _ = _run()
    (spare_write,) = [w.number for w in full.write_log if w.name == "amqhlspr.lfh"]
    storage, _, _, seen = _run(FaultPlan(crash_after_writes=spare_write))
    assert seen["acked"] == ["small"]  # told before the crash; "big" never was
    reopened = DistributedLogSpace(storage.durable, primary=2, secondary=0, file_pages=64, triple_write=True)
    records, end = scan(reopened, 32)  # the log's first record
    assert [type(r).__name__ for _, r in records] == ["Put", "Commit"]  # the Commit came from the spare copy
