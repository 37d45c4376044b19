"""Relieving a full log (distributed's 80% rule, AMQ7469) frees log rather than spending it.

Extents are freed whole, so a checkpoint after rolling back one unit of work frees nothing
while the next unit's first record sits in the same extent: it only writes a checkpoint. With
hundreds of units begun together that was a round a unit – roll one back, checkpoint, find the
log still full – and the checkpoints spent the space held in reserve for backing the units out,
until restart after a crash could not back them out (AMQ7463 at restart: "log full"). MQ
rolls back "one or more long-running transactions" to release log space (AMQ7469), and holds
space "to commit or roll back all in-flight transactions" (IBM MQ, "Managing logs").
"""

from __future__ import annotations

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.qm.config import QmConfig
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from qmrig import checked_at_checkpoints

#: a small circular log (64-page extents: 256 KiB each, 18 of them) that many units of work,
#: begun together and never committed, fill past 80%
LOG = {"LogFilePages": "64", "LogPrimaryFiles": "10", "LogSecondaryFiles": "8", "LogBufferPages": "1024",
       "CheckPointLogRecdMax": "10000"}
FILL = {"queues": 180, "messages": 720, "message_size": 20480, "transactions": 90, "commit": "never"}


def fill_and_crash():
    choice = choose("distributed")
    values = choice.configure(LOG)
    spec = build_spec(BUILTINS["log-fill"], FILL, origin="test")
    cfg = RunConfig("distributed", choice.maker(values), values, spec, seed=0, crash_at_end=True, host="v91-xeon")
    reliefs = []  # (free bytes before, after) of each checkpoint a relief took
    rolled_back_at = []

    def started(qm, _report):
        checkpoint, say = qm.checkpoint, qm.say

        def checked(reason, *args, **kwargs):
            before = qm.log_free_bytes()
            took = yield from checkpoint(reason, *args, **kwargs)
            if reason == "log space released":
                reliefs.append((before, qm.log_free_bytes()))
            return took

        def said(event, *args, **kwargs):
            if event == "uow-rolled-back":
                rolled_back_at.append(qm.env.now)
            return say(event, *args, **kwargs)
        qm.checkpoint, qm.say = checked, said

    result = run_workload(cfg, MemoryStorage(), started=started)
    return choice.maker(values), result, reliefs, rolled_back_at


def test_each_relief_frees_log_and_restart_backs_every_unit_out():
    maker, result, reliefs, rolled_back = fill_and_crash()
    assert result.crashed and result.metrics["log_full_refusals"] > 0  # the log did fill
    assert len(reliefs) >= 1 and len(rolled_back) > len(reliefs)  # several units a relief
    # every checkpoint a relief took freed log: none only wrote itself into the reserve
    assert all(after > before for before, after in reliefs), reliefs
    assert result.qm.log_free_bytes() >= 0
    report, verdict, qm = restart_run(maker, result.storage.durable, journal=result.journal, host="v91-xeon")
    assert verdict is not None and verdict.ok, verdict.details[:5]
    # every unit the fill left open whose first record reached the disk is backed out by
    # restart, with the room held for it (a unit begun in the writes the crash tore or never
    # issued is not in the log: nothing to back out)
    durable = result.qm.writer.durable
    on_disk = sum(1 for first, _ in result.qm.units.ages if first < durable)
    assert 100 < on_disk <= report.uows_backed_out <= len(result.qm.units.ages) and report.clrs_written > 0
    qm.check()


def ends_of_each_unit(maker, storage) -> dict[int, list[str]]:
    """Every Commit and Backout record on the log, by unit of work, in log order."""
    from mqlog.core.log.reader import LogReader

    ends: dict[int, list[str]] = {}
    for _, record in LogReader(maker(storage).space, 0):
        kind = type(record).__name__
        if kind in ("Commit", "Backout"):
            ends.setdefault(record.uow, []).append(kind)
    return ends


def test_relief_never_backs_out_a_unit_whose_commit_has_begun():
    # Ten pairs of 1 MiB messages under syncpoint on a small linear log over a slow NFS mount:
    # commits wait long for their forces, and relief sacrifices several units a round. A unit
    # whose Commit record is on its way is ending on its own: backing it out as well ended it
    # twice, with a Commit and then a Backout on the log (the unit-of-work table's operation
    # count went to -1; seen by a wider stress sweep).
    choice = choose("distributed")
    values = choice.configure({"LogFilePages": "64", "LogPrimaryFiles": "10", "LogSecondaryFiles": "8",
                               "LogBufferPages": "1024", "CheckPointLogRecdMax": "10000", "LogType": "LINEAR",
                               "LogWriteIntegrity": "SingleWrite"})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": 10, "messages_per_pair": 4, "message_size": 1048576,
                                                 "syncpoint": True}, origin="test")
    cfg = RunConfig("distributed", choice.maker(values), values, spec, seed=3493, crash_at_end=True, device="nfs3",
                    qm_config=QmConfig(max_uow_messages=10_000_000, persistent_buffer_bytes=16384))
    checks = []
    result = run_workload(cfg, MemoryStorage(), started=checked_at_checkpoints(checks))
    assert result.metrics["uows_rolled_back"] >= 1 and checks  # relief ran, and checkpoints were checked
    result.qm.check()
    maker = choice.maker(values)
    twice = {uow: kinds for uow, kinds in ends_of_each_unit(maker, result.storage.durable).items() if len(kinds) > 1}
    assert not twice
    report, verdict, qm = restart_run(maker, result.storage.durable, journal=result.journal)
    assert verdict is not None and verdict.ok, verdict.details[:5]
    qm.check()
