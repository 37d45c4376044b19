"""A channel's attributes as MQ defines them (issue 42): BATCHLIM ends a batch after the message
that crosses it; NPMSPEED(FAST) sends non-persistent messages outside any batch (nothing
synchronised, nothing logged), NORMAL inside; PIPELINELENGTH(2) keeps two batches in flight –
more messages a second on a long link, up to two batches in doubt at a crash, and still
nothing lost or delivered twice."""

from __future__ import annotations

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.records import Put
from mqlog.core.log.reader import scan
from mqlog.core.workload.channels import SYNCQ
from mqlog.core.workload.topology import restart_topology, run_topology
from mqlog.topology import build


def feed(channel: dict, *, putters: int = 2, messages: int = 20, size: int = 2048, persistent: bool = True,
         crash=None):
    document = {"workload": "channel-feed",
                "params": {"putters": putters, "messages_per_putter": messages, "message_size": size,
                           "persistent": persistent},
                "qmgr": [{"name": "LQM1", "platform": "distributed"}, {"name": "ZQM1", "platform": "zos"}],
                "channel": [{"name": "LQM1.TO.ZQM1", "from": "LQM1", "to": "ZQM1", **channel}]}
    cfg = build(document, "test", crash=crash).config
    return cfg, run_topology(cfg, {"LQM1": MemoryStorage(), "ZQM1": MemoryStorage()})


def _syncq_puts(qm) -> int:
    return sum(isinstance(r, Put) and r.queue == SYNCQ for _a, r in scan(qm.platform.space, 0)[0])


def test_batchlim_ends_a_batch_after_the_message_that_crosses_it():
    # 100 KiB messages (and their 428-byte headers) against BATCHLIM 250 KB: the third crosses it
    _cfg, result = feed({"BATCHSZ": 50, "BATCHINT": 50, "BATCHLIM": 250}, putters=4, messages=6, size=100 * 1024)
    stat = result.channels["LQM1.TO.ZQM1"]
    assert stat["messages_sent"] == 24 and stat["batch_messages_max"] == 3


def test_npmspeed_fast_sends_non_persistent_messages_outside_any_batch():
    _cfg, fast = feed({"NPMSPEED": "FAST", "BATCHINT": 20}, persistent=False)
    _cfg, normal = feed({"NPMSPEED": "NORMAL", "BATCHINT": 20}, persistent=False)
    f, n = fast.channels["LQM1.TO.ZQM1"], normal.channels["LQM1.TO.ZQM1"]
    assert f["fast_messages_sent"] == 40 and f["batches"] == 0 and f["lstseqno"] == 0
    assert n["fast_messages_sent"] == 0 and n["messages_sent"] == 40 and n["batches"] >= 1
    # a batch of non-persistent messages still synchronises (NORMAL); FAST writes nothing at all
    for name in ("LQM1", "ZQM1"):
        assert _syncq_puts(fast.qms[name]) == 0
        assert _syncq_puts(normal.qms[name]) == n["batches"]
        assert fast.metrics[name]["forces"] < normal.metrics[name]["forces"]


def test_a_pipeline_of_two_overlaps_batches_on_a_long_link():
    link = {"latency_us": 5000, "BATCHSZ": 5}
    _c, one = feed({**link, "PIPELINELENGTH": 1}, putters=8, messages=20)
    _c, two = feed({**link, "PIPELINELENGTH": 2}, putters=8, messages=20)
    assert two.metrics["LQM1"]["delivered_s"] < 0.8 * one.metrics["LQM1"]["delivered_s"]


def test_a_pipeline_of_two_can_leave_two_batches_in_doubt_and_recovers_them_all():
    channel = {"latency_us": 5000, "BATCHSZ": 5, "PIPELINELENGTH": 2}
    _c, base = feed(channel, putters=8, messages=10)
    most_in_doubt, bad = 0, []
    for k in range(0, base.metrics["LQM1"]["storage_writes"], 4):
        cfg, result = feed(channel, putters=8, messages=10, crash=("LQM1", k))
        out = restart_topology(cfg, {n: fs.durable for n, fs in result.storages.items()}, result.journals,
                               result.channels)
        most_in_doubt = max(most_in_doubt, len(out["resolved"]["LQM1.TO.ZQM1"]))  # its batches in doubt, resolved
        delivery = out["delivery"]["LQM1.TO.ZQM1"]
        if not all(v.ok for v in out["verdicts"].values()) or delivery["lost"] or delivery["duplicated"]:
            bad.append((k, delivery))
    assert not bad, bad[:3]
    assert most_in_doubt == 2  # both slots of the pipeline in doubt at once, never more


def test_a_channel_that_stops_moving_with_its_link_up_is_said_to_have_stalled(monkeypatch):
    # (a confirmation that never comes – the kind of bug a pipeline's closures once had – must
    # end the run with an error naming the channel, not poll the drain for ever)
    import pytest

    from mqlog.core.workload import mca
    from mqlog.core.workload.run import WorkloadStalled

    def never(self, *args):
        yield self.env.event()

    monkeypatch.setattr(mca.Channel, "_commit_when_confirmed", never)
    with pytest.raises(WorkloadStalled, match="LQM1.TO.ZQM1 RUNNING, 1 batch"):
        feed({"BATCHSZ": 5})


def test_a_topology_run_reports_its_progress_in_virtual_time():
    # (what the command line's progress bar shows on a long run: virtual seconds and records)
    seen = []
    document = {"workload": "channel-feed", "params": {"putters": 2, "messages_per_putter": 40},
                "qmgr": [{"name": "LQM1", "platform": "distributed"}, {"name": "ZQM1", "platform": "zos"}],
                "channel": [{"name": "LQM1.TO.ZQM1", "from": "LQM1", "to": "ZQM1", "latency_us": 2000}]}
    cfg = build(document, "test").config
    result = run_topology(cfg, {"LQM1": MemoryStorage(), "ZQM1": MemoryStorage()},
                          progress=lambda s, records: seen.append((s, records)))
    assert len(seen) >= 2 and seen == sorted(seen)
    assert seen[-1][1] == sum(m["log_records"] for m in result.metrics.values())
