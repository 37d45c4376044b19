"""MQ for z/OS's checkpoints write a page set's changed pages only once they have waited for
write through two checkpoints (QPSTIMW: "pages ... waiting for write I/O that had been there
for at least two checkpoints"), and restart goes back as far as the page sets need ("During
restart the page set knows how far back in the log restart needs to go"): a message put and
got between two checkpoints never reaches its page set, one that stays is written by the
second checkpoint after its put, and a crash in between loses nothing because restart redoes
from the checkpoint before the last. The checkpoints at start, restart and shutdown write
everything. The distributed queue manager (and the core's reference platform) writes every
change at each checkpoint."""

from __future__ import annotations

import attrs
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.records import NO_ADDRESS, Put
from mqlog.core.log.reader import LogReader
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.reference import reference_platform
from mqlog.zos.bsds import BsdsInventory

from .test_zos_log import make, run


def queue_manager(storage, platform_of=None):
    if platform_of is None:
        return make(storage, cis=256)
    env = simpy.Environment()
    platform = platform_of(storage)
    return env, platform, QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())


def in_page_set(qm, msg_id) -> bool:
    return qm.queues["Q"].file.messages.state_of(msg_id) is not None


def started(platform_of=None):
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = queue_manager(storage, platform_of)
    run(env, qm.start())
    run(env, qm.define_queue("Q"))
    return storage, env, platform, qm


def put(qm, data):
    conn = qm.connect("APP")
    msg_id = yield from conn.put("Q", data)
    yield from conn.commit()
    return msg_id


def get(qm):
    conn = qm.connect("APP")
    yield from conn.get("Q")
    yield from conn.commit()


def checkpoint(env, qm) -> int:
    run(env, qm.checkpoint("request", wait=True))
    return qm.schedule.address


def test_a_message_got_before_its_second_checkpoint_never_reaches_the_page_set():
    storage, env, platform, qm = started()
    first = run(env, put(qm, b"short-lived" * 100))
    kept = run(env, put(qm, b"stays" * 100))
    checkpoint(env, qm)
    assert not in_page_set(qm, first) and not in_page_set(qm, kept)  # one checkpoint: both wait
    run(env, get(qm))  # the first message goes
    checkpoint(env, qm)
    # the second checkpoint since its put writes the message that stayed; the one got never
    # reached the page set
    assert in_page_set(qm, kept) and not in_page_set(qm, first)


def test_the_reference_platform_writes_every_message_at_each_checkpoint():
    storage, env, platform, qm = started(lambda storage: reference_platform(storage))
    msg_id = run(env, put(qm, b"m" * 500))
    checkpoint(env, qm)
    assert in_page_set(qm, msg_id) and platform.space.load_control().redo_from == NO_ADDRESS


def test_a_crash_before_the_second_checkpoint_recovers_the_message_from_the_log():
    storage, env, platform, qm = started()
    start = qm.schedule.address  # the start checkpoint's Begin
    msg_id = run(env, put(qm, b"held" * 200))
    last = checkpoint(env, qm)
    assert not in_page_set(qm, msg_id)
    # the BSDS names the checkpoint and, before it, where the page sets need redo from: the
    # message's put record
    bsds = BsdsInventory.from_bytes(storage.durable.read("BSDS01", 0, storage.durable.size("BSDS01")), "BSDS01")
    held = bsds.redo_from
    assert bsds.checkpoint == last and start < held < last
    first = next(iter(LogReader(platform.space, held, record_types=platform.record_types)))
    assert first[0] == held and isinstance(first[1], Put) and first[1].msg_id == msg_id
    # the log from there on is kept: the tail is not past it
    assert qm.tail() <= held and platform.space.restart_rba == held
    storage.crash()
    env, platform, qm = queue_manager(FaultInjectingStorage(storage.durable))
    report = run(env, qm.start())
    assert msg_id in qm.queues["Q"].messages and report.uows_backed_out == 0
    # restart names the last checkpoint (CSQR003I) and replays from the one before
    assert any(f"PRIOR CHECKPOINT RBA={last:016X}" in m for m in qm.messages)


def test_restart_from_the_last_checkpoint_alone_would_have_lost_it():
    # the same crash with the BSDS's redo_from taken away: the page set lacks the message and
    # a replay from the last checkpoint does not see its put (what the recovery point is for)
    storage, env, platform, qm = started()
    msg_id = run(env, put(qm, b"held" * 200))
    checkpoint(env, qm)
    storage.crash()
    durable = storage.durable
    for name in ("BSDS01", "BSDS02"):
        inventory = BsdsInventory.from_bytes(durable.read(name, 0, durable.size(name)), name)
        durable.replace(name, attrs.evolve(inventory, redo_from=NO_ADDRESS).to_bytes())
    env, platform, qm = queue_manager(FaultInjectingStorage(durable))
    run(env, qm.start())
    assert msg_id not in qm.queues["Q"].messages


def test_a_clean_shutdown_writes_everything_and_restart_replays_only_its_checkpoint():
    storage, env, platform, qm = started()
    msg_id = run(env, put(qm, b"kept" * 300))
    checkpoint(env, qm)
    run(env, qm.shutdown())
    assert in_page_set(qm, msg_id) and platform.space.control.redo_from == NO_ADDRESS
    last = platform.space.control.checkpoint
    env, platform, qm = queue_manager(FaultInjectingStorage(storage.durable))
    report = run(env, qm.start())
    assert msg_id in qm.queues["Q"].messages
    # from the shutdown checkpoint's Begin: that checkpoint's own records, no put
    assert platform.space.control.checkpoint > last and report.records_replayed < 10
