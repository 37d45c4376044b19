"""A queue whose persistent messages outgrow its buffer (DefaultPQBufferSize) spills them to
its file in the putting call: on distributed, a buffered write into the host's page cache,
forced to the device by the next checkpoint (mqlog.core.disk.filecache); on z/OS, written by
the buffer manager behind the call. The spills and their bytes are counted and shown; a page
written twice between checkpoints reaches the device once; a get reads a spilled message back
from memory; the putting call waits for the log (the write-ahead rule), not for the queue
file's device."""

from __future__ import annotations

import json
import re

import simpy

from clikit import mqlog

from mqlog.core.disk.devices import Device
from mqlog.core.disk.filecache import PAGE_BYTES, WRITEBACK_MAX_BYTES, QueueFileCache
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.reference import reference_platform
from mqlog.core.qm.config import QmConfig
from mqlog.core.qm.manager import QueueManager
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

#: 30 requesters of 200 KB messages over 10 queue pairs: three messages a queue outgrow the
#: default 256 KiB buffer
PARAMS = {"requesters": "30", "responders": "30", "message_size": "204800", "duration": "0.1"}


def _run(buffer_bytes: int, params=PARAMS, device: str = "ssd") -> dict:
    choice = choose("distributed")
    values = choice.configure({"LogWriteIntegrity": "SingleWrite", "DefaultPQBufferSize": str(buffer_bytes)})
    spec = build_spec(BUILTINS["requester-responder"], params, origin="test")
    return run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=1, device=device),
                        MemoryStorage()).metrics


def _rate(m: dict) -> float:
    return m["measured_round_trips"] / m["measured_s"]


def test_spills_go_to_the_page_cache_and_reach_the_device_at_checkpoints():
    default, large = _run(262144), _run(104857600)
    assert default["queue_spills"] > default["messages_put"] / 2  # most puts find their queue's buffer full
    assert large["queue_spills"] == 0
    # every spill wrote its messages into the page cache; rewritten pages (blocks reused as
    # messages come and go) reached the device once, at a checkpoint
    assert default["queue_file_bytes_cached"] > 100 * 204800
    assert default["queue_file_bytes_written"] < default["queue_file_bytes_cached"] / 2
    assert default["checkpoints"] >= 1 and default["queue_file_bytes_written"] > 0
    # a get of a spilled message finds it in memory: no device read in normal running
    assert default["queue_file_bytes_read"] == 0
    # the putting call waits for the log (write-ahead), not for its queue file's device: the
    # round trips are within a tenth of those with a buffer that holds every message (they
    # fell by a third while spills were written through to the device)
    assert _rate(default) > 0.9 * _rate(large)


def test_the_summary_shows_the_spills():
    args = [a for k, v in PARAMS.items() for a in ("--set", f"workload.{k}={v}")]
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder", *args, "--seed", "1", "--json")
    m = json.loads(out.stdout)
    text = mqlog("run", "--platform", "distributed", "--workload", "requester-responder", *args, "--seed", "1").stdout
    spills = int(re.search(r"queue-file spills\s+(\d+)\n", text)[1])
    cached, written = map(int, re.search(r"queue-file bytes cached / written\s+(\d+) / (\d+)\n", text).groups())
    assert (spills, cached, written) == (m["queue_spills"], m["queue_file_bytes_cached"],
                                         m["queue_file_bytes_written"]) and spills > 0


# -- the cache itself ---------------------------------------------------------------------------

def test_a_page_written_twice_between_checkpoints_is_written_back_once():
    cache = QueueFileCache()
    cache.write("Q.A", 0, 512)              # a header slot: page 0
    cache.write("Q.A", 512, 512)            # the other slot: page 0 again
    cache.write("Q.A", 3 * PAGE_BYTES, 2 * PAGE_BYTES + 1)  # pages 3, 4 and 5
    cache.write("Q.A", 4 * PAGE_BYTES, 100)  # page 4 again
    assert cache.bytes_dirtied == 512 + 512 + 2 * PAGE_BYTES + 1 + 100
    assert cache.dirty_bytes() == 4 * PAGE_BYTES
    taken = list(cache.take_dirty(lambda name: 10 * PAGE_BYTES))
    assert taken == [("Q.A", [PAGE_BYTES, 3 * PAGE_BYTES])]  # two runs: page 0, pages 3-5
    assert cache.dirty_bytes() == 0 and list(cache.take_dirty(lambda name: 10 * PAGE_BYTES)) == []


def test_write_back_splits_long_runs_and_drops_what_the_file_no_longer_has():
    cache = QueueFileCache()
    pages = 2 * WRITEBACK_MAX_BYTES // PAGE_BYTES + 3
    cache.write("Q.LONG", 0, pages * PAGE_BYTES)
    cache.write("Q.GONE", 0, PAGE_BYTES)
    cache.write("Q.CUT", 0, 8 * PAGE_BYTES)
    sizes = {"Q.LONG": pages * PAGE_BYTES, "Q.GONE": None, "Q.CUT": 2 * PAGE_BYTES + 1}
    taken = dict(cache.take_dirty(sizes.get))
    assert taken == {"Q.LONG": [WRITEBACK_MAX_BYTES, WRITEBACK_MAX_BYTES, 3 * PAGE_BYTES],
                     "Q.CUT": [3 * PAGE_BYTES]}  # truncated to 3 pages since; Q.GONE deleted


def test_reads_reach_the_device_only_for_pages_not_held():
    cache = QueueFileCache()
    cache.write("Q.R", PAGE_BYTES, PAGE_BYTES)  # page 1 held
    assert cache.read("Q.R", 0, 3 * PAGE_BYTES) == [PAGE_BYTES, PAGE_BYTES]  # pages 0 and 2
    assert cache.read("Q.R", 0, 3 * PAGE_BYTES) == [] and cache.read_hits == 1  # all held now
    assert cache.read("Q.R", 10 * PAGE_BYTES + 5, 10) == [PAGE_BYTES]  # a page at a time


def test_a_checkpoint_forces_the_dirty_pages_and_its_end_follows_them():
    """The checkpoint writes every dirty page to the device and syncs each file before its
    End record: the End's force starts after the last queue-file write."""
    env = simpy.Environment()
    storage = MemoryStorage()
    device = Device(env, "ssd")
    qm = QueueManager(env, reference_platform(storage, checkpoint_records=16_000_000), storage, device,
                      QmConfig(persistent_buffer_bytes=8192))
    order = []
    sync = qm.sync_queue_files

    def traced_sync():
        order.append(("sync", qm.file_cache.dirty_bytes()))
        yield from sync()
        order.append(("synced", qm.file_cache.dirty_bytes()))

    def work():
        yield from qm.start()
        yield from qm.define_queue("Q.SPILL")
        conn = qm.connect("APP")
        for i in range(20):
            yield from conn.put("Q.SPILL", bytes([i]) * 2000, syncpoint=False)
        assert qm.counters.spills > 0 and qm.file_cache.dirty_bytes() > 0
        qm.sync_queue_files = traced_sync
        before = qm.counters.queue_file_bytes_written
        yield from qm.checkpoint("test", wait=True)
        return qm.counters.queue_file_bytes_written - before

    forced = env.run(until=env.process(work()))
    assert qm.file_cache.dirty_bytes() == 0 and forced >= 20 * 2000 - 8192
    dirty_at_sync = next(d for what, d in order if what == "sync")
    assert dirty_at_sync > 0 and ("synced", 0) in order


def test_requests_whose_place_is_unknown_reach_the_device():
    """A cost summed from one that says where its requests went and one that does not (an
    open's metadata reads): the placed write goes to the page cache, the unplaced one to the
    device; the placed read finds its page held, the unplaced one reads the device."""
    from mqlog.core.objects.queuelayout import IoCost

    env = simpy.Environment()
    storage = MemoryStorage()
    qm = QueueManager(env, reference_platform(storage), storage, Device(env, "ssd"))
    placed = IoCost([PAGE_BYTES], [PAGE_BYTES], 0, [("Q.P", 0)], [("Q.P", 0)])
    cost = placed + IoCost([512], [512])
    assert cost.write_at == [("Q.P", 0), None] and cost.read_at == [("Q.P", 0), None]

    def charge():
        yield from qm.charge_io(cost)
        yield from qm.sync_queue_files()  # (Q.P does not exist: its page is dropped)

    env.run(until=env.process(charge()))
    assert qm.counters.queue_file_bytes_cached == PAGE_BYTES
    assert qm.counters.queue_file_bytes_written == 512  # the unplaced write, behind the call
    assert qm.counters.queue_file_bytes_read == 512  # the placed read was a hit


# -- z/OS: the buffer pool's pages waiting for write I/O ------------------------------------------

def _zos_qm(buffers: int):

    from mqlog.zos.platform import zos_platform

    env = simpy.Environment()
    storage = MemoryStorage()
    platform = zos_platform(storage, buffers=buffers)
    return env, QueueManager(env, platform, storage, Device(env, "dasd")), platform


def test_zos_spills_wait_behind_the_call_until_95_percent_of_the_pool_waits_for_write_io():
    """MQ for z/OS writes a full buffer pool's pages behind the putting call, until more than
    95% of the pool's pages are waiting for write I/O: then the update is written
    synchronously (QPSTDMC). Spills of one queue that fit beside the writes still waiting go
    behind the call (no virtual time passes in it); the one that would leave more than 95% of
    the pool waiting is written in the call, which waits for it; another queue's pool is its
    own (the model's assumption: one queue a pool)."""
    from mqlog.core.objects.queuelayout import IoCost

    env, qm, platform = _zos_qm(buffers=100)
    bound = platform.queue_writes_behind_max
    assert bound == int(100 * 4096 * 0.95)
    spill = 150_000
    took = []

    def put(name: str):
        start = env.now
        yield from qm.charge_io(IoCost([], [spill], 0, [(name, 0)]))
        took.append((name, env.now - start))

    def puts():
        for name in ("Q.A", "Q.A", "Q.A", "Q.B"):
            yield from put(name)

    env.run(until=env.process(puts()))
    assert [name for name, _ in took] == ["Q.A", "Q.A", "Q.A", "Q.B"]
    # two fit (300,000 waiting), the third would make 450,000 > 389,120: written in the call
    assert took[0][1] == took[1][1] == 0 and took[2][1] > 0 and took[3][1] == 0
    assert qm.counters.queue_sync_writes == 1
    env.run()  # the writes behind finish: nothing of Q.A's is waiting any more
    assert qm.bytes_behind["Q.A"] == 0 and qm.bytes_behind["Q.B"] == 0
    assert qm.counters.queue_file_bytes_written == 4 * spill


def test_a_large_pool_never_writes_a_spill_in_the_call():
    """The same spills with the default 1,000 buffers (3.9 MB may wait): all behind the call."""
    from mqlog.core.objects.queuelayout import IoCost

    env, qm, _ = _zos_qm(buffers=1000)

    def puts():
        for _ in range(10):
            start = env.now
            yield from qm.charge_io(IoCost([], [150_000], 0, [("Q.A", 0)]))
            assert env.now == start

    env.run(until=env.process(puts()))
    assert qm.counters.queue_sync_writes == 0


def test_a_small_buffer_pool_writes_spills_in_the_putting_call_and_says_so():
    """A z/OS run whose queue's pool (BUFFERS=100, 400 KB) cannot hold 200 KB messages waiting
    for write I/O: spills are written in the putting call, counted, and the summary says how
    many; with a pool that holds every message none is."""
    args = ["--set", "workload.requesters=30", "--set", "workload.responders=30",
            "--set", "workload.message_size=204800", "--set", "workload.duration=0.05", "--seed", "1"]
    small = json.loads(mqlog("run", "--platform", "zos", "--workload", "requester-responder", *args,
                             "--set", "log.BUFFERS=100", "--json").stdout)
    large = json.loads(mqlog("run", "--platform", "zos", "--workload", "requester-responder", *args,
                             "--set", "log.BUFFERS=50000", "--json").stdout)
    assert small["queue_spills"] > 0 and small["queue_sync_writes"] > 0
    assert large["queue_spills"] == 0 and large["queue_sync_writes"] == 0
    text = mqlog("run", "--platform", "zos", "--workload", "requester-responder", *args,
                 "--set", "log.BUFFERS=100").stdout
    assert f"queue-file spills                    {small['queue_spills']} ({small['queue_sync_writes']} " \
           f"written in the call" in text
