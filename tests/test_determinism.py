"""Determinism: the same spec and seed give byte-identical files and metrics, whatever
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

import attrs
import simpy
from mqlog.core.host.profiles import DEFAULT_HOST, get_host
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.reference import reference_platform
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.log.reader import scan
from mqlog.core.format.records import Get
from mqlog.core.disk.storage import MemoryStorage

#: twelve queues in a scrambled order: the chance that twelve queues' addresses happen to
#: sort this way is 1 in 12! – a wake order by address cannot pass by luck
QUEUES = [f"FAN.{i:02d}" for i in (7, 2, 11, 0, 5, 9, 3, 10, 1, 6, 8, 4)]


def _queue_manager():
    storage = FaultInjectingStorage(MemoryStorage(), FaultPlan())
    env = simpy.Environment()
    platform = reference_platform(storage)
    # each charge exactly its figure: the getters finish in the order they were woken
    host = attrs.evolve(get_host(DEFAULT_HOST), cpu_jitter=0.0)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig(), host)
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


# --- end to end: two processes, two hash seeds, two heaps --------------------------------

DRIVER = Path(__file__).with_name("determinism_driver.py")
#: the driver's workload (tests only): each commit wakes a getter on each of eight queues
FAN_OUT = ["--workload", "fan-out", "--set", "workload.queues=8", "--set", "workload.rounds=20"]
#: small log files: less to write and compare (LogFilePages: 1 MiB extents; z/OS: 1 MiB data sets)
SMALL_DIST = ["--set", "log.LogFilePages=256"]
SMALL_ZOS = ["--set", "log.ACTIVE_LOG_CIS=256"]
#: what each child runs, in its own directory (relative paths: the two children's output
#: must not differ by the directory they ran in)
COMMANDS = [
    ["run", "--platform", "distributed", *FAN_OUT, *SMALL_DIST, "--set", "log.LogType=CIRCULAR",
     "--set", "log.LogWriteIntegrity=TripleWrite", "--out", "circular", "--json"],
    ["run", "--platform", "distributed", *FAN_OUT, *SMALL_DIST, "--set", "log.LogType=LINEAR",
     "--out", "linear", "--json"],
    ["run", "--platform", "zos", *FAN_OUT, *SMALL_ZOS, "--set", "workload.payload=padded-records",
     "--set", "log.TWOACTV=YES", "--set", "log.COMPLOG=RLE", "--out", "zos-rle", "--json"],
    # shunting, log switches, offloads to archives: the z/OS log's busiest paths
    ["run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.background=3",
     "--set", "workload.duration=0.1", "--set", "log.ACTIVE_LOG_CIS=64", "--set", "log.COMPLOG=RLE",
     "--out", "zos-long-uow", "--json"],
    # a crash with units of work in flight, then restart (replay, undo with CLRs, a checkpoint)
    ["run", "--platform", "distributed", *FAN_OUT, *SMALL_DIST, "--set", "log.LogType=LINEAR",
     # (30: where the fan-out has units of work in flight with the default host's CPU per call)
     "--crash-after-writes", "30", "--out", "crash", "--json"],
    ["restart", "crash", "--verify", "--json"],
]
#: files that may differ: .mqlog.lock holds the process id of the last command that wrote the
#: directory (mqlog/rundir.py). Nothing else in a run directory holds a pid or a wall time.
EXCLUDED = {".mqlog.lock"}


def _child(where: Path, hash_seed: str, heap_seed: str):
    where.mkdir()
    (where / "commands.json").write_text(json.dumps(COMMANDS))
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "MQLOG_TEST_HEAP_SEED": heap_seed}
    out = subprocess.run([sys.executable, str(DRIVER), "commands.json"], cwd=where, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    layout = out.stderr.splitlines()[0]
    files = {}
    for path in sorted(where.rglob("*")):
        if path.is_file() and path.name not in EXCLUDED and path.name != "commands.json":
            files[path.relative_to(where).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out.stdout, layout, files


def test_the_same_commands_in_processes_with_other_hash_seeds_and_heaps_leave_identical_files(tmp_path):
    out_a, layout_a, files_a = _child(tmp_path / "a", "0", "1")
    out_b, layout_b, files_b = _child(tmp_path / "b", "12345", "2")
    # The two children did differ: in a string's hash and in where a new queue landed.
    hash_a, addr_a = layout_a.split()[2], layout_a.split()[5]
    hash_b, addr_b = layout_b.split()[2], layout_b.split()[5]
    assert hash_a != hash_b and addr_a != addr_b, (layout_a, layout_b)

    # Every command ran, and did what it is here for.
    results = [json.loads(line) for line in out_a.splitlines() if line.startswith("{")]
    assert [line for line in out_a.splitlines() if line.startswith("===")] == ["=== exit 0"] * len(COMMANDS)
    *runs, crashed, restarted = results
    assert all(r["messages_got"] == r["messages_put"] == 160 for r in runs[:3])
    assert 0 < runs[2]["compression_out_bytes"] < runs[2]["compression_in_bytes"]  # COMPLOG RLE at work
    assert runs[3]["shunts"] > 0 and runs[3]["archive_offloads"] > 0
    assert crashed["crashed"] and restarted["uows_backed_out"] > 0 and restarted["committed_missing"] == 0

    # The metrics and restart reports printed, and every file left, byte for byte.
    assert out_a == out_b
    assert sorted(files_a) == sorted(files_b)
    differ = [name for name in files_a if files_a[name] != files_b[name]]
    assert not differ, f"files differ between the two processes: {differ}"
    assert {"circular/metrics.json", "crash/qm/S0000000.LOG", "zos-rle/qm/LOGCOPY2.DS01"} <= set(files_a)
