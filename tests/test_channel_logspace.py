"""A channel in doubt holds log space (issue 42; SPEC §4.4: "causes worth reporting: in-doubt
channels"): a sender whose link fails after it prepared its batch keeps the batch's unit of
work open – prepared, so the logger rolls it forward (AMQ7469, re-logged at the head) rather
than back – until the channel resynchronises; a sender whose batch is not yet prepared when a
full log backs its unit out ends the channel, and its messages go again. Nothing is lost or
delivered twice either way."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.topology import restart_topology, run_topology
from mqlog.topology import build

SMALL_LOG = {"LogFilePages": 64, "LogPrimaryFiles": 2, "LogSecondaryFiles": 1}


def feed(*, latency_us: float, outage_at: float, log=SMALL_LOG, messages: int = 200):
    document = {
        "workload": "channel-feed", "params": {"putters": 4, "messages_per_putter": messages},
        "qmgr": [{"name": "LQM1", "platform": "distributed", "log": log},
                 {"name": "LQM2", "platform": "distributed"}],
        "channel": [{"name": "LQM1.TO.LQM2", "from": "LQM1", "to": "LQM2", "latency_us": latency_us,
                     "outages": [[outage_at, 100.0]]}],
    }
    cfg = build(document, "test").config
    result = run_topology(cfg, {"LQM1": MemoryStorage(), "LQM2": MemoryStorage()})
    return cfg, result


def _end_to_end(cfg, result) -> dict:
    out = restart_topology(cfg, {n: fs.durable for n, fs in result.storages.items()}, result.journals,
                           result.channels)
    assert all(v.ok for v in out["verdicts"].values()), out["verdicts"]
    return out["delivery"]["LQM1.TO.LQM2"]


def test_a_batch_in_doubt_through_an_outage_pins_the_log_until_the_logger_rolls_it_forward():
    # a WAN link (20 ms each way): the sender spends most of each batch in doubt, so the link
    # failing at 0.2 s catches a batch prepared; 100 s later the sender reconnects (SHORTTMR)
    cfg, result = feed(latency_us=20_000, outage_at=0.2)
    stat, metrics = result.channels["LQM1.TO.LQM2"], result.metrics["LQM1"]
    assert stat["outages"] == 1 and stat["in_doubt_us"] >= 100e6  # in doubt through the outage
    said = "\n".join(result.qms["LQM1"].messages)
    assert metrics["uows_rolled_forward"] >= 1 and "rolled forward" in said and "AMQ7469" in said
    assert metrics["uows_rolled_back"] == 0  # a prepared unit is never backed out by the logger
    assert _end_to_end(cfg, result) == {"delivered": 800, "waiting": 0, "lost": 0, "duplicated": 0}


def test_the_same_outage_on_a_big_log_rolls_nothing_forward():
    cfg, result = feed(latency_us=20_000, outage_at=0.2, log={})
    assert result.channels["LQM1.TO.LQM2"]["in_doubt_us"] >= 100e6
    assert result.metrics["LQM1"]["uows_rolled_forward"] == 0 and result.metrics["LQM1"]["log_full_events"] == 0
    assert _end_to_end(cfg, result)["delivered"] == 800


@pytest.mark.parametrize("outage_at", [0.02, 0.03])
def test_a_batch_the_full_log_backs_out_before_it_is_in_doubt_is_sent_again_not_twice(outage_at):
    # a LAN link: the outage finds the sender between batches or mid-batch (not in doubt); the
    # messages put meanwhile fill the small log, and the first batch after the outage – the
    # longest-running unit – is rolled back (2003): the channel ends, the receiver backs out
    cfg, result = feed(latency_us=250, outage_at=outage_at)
    stat = result.channels["LQM1.TO.LQM2"]
    assert stat["backed_out_batches"] >= 1
    assert stat["redelivered"] == 0
    delivery = _end_to_end(cfg, result)
    assert delivery["lost"] == delivery["duplicated"] == 0 and delivery["waiting"] == 0


def test_on_zos_a_batch_in_doubt_through_an_outage_is_shunted_not_rolled_back():
    # z/OS keeps no 80% rule: a long-running unit of work is shunted at every third checkpoint
    # (CSQR026I), the channel's prepared batch among them, and stays in doubt until resolved
    document = {
        "workload": "channel-feed", "params": {"putters": 4, "messages_per_putter": 200},
        "qmgr": [{"name": "ZQM1", "platform": "zos", "device": "dasd", "log": {"LOGLOAD": 200}},
                 {"name": "LQM1", "platform": "distributed"}],
        "channel": [{"name": "ZQM1.TO.LQM1", "from": "ZQM1", "to": "LQM1", "latency_us": 20_000,
                     "outages": [[0.2, 100.0]]}],
    }
    cfg = build(document, "test").config
    result = run_topology(cfg, {"ZQM1": MemoryStorage(), "LQM1": MemoryStorage()})
    said = [line for line in result.qms["ZQM1"].messages if "CSQR026I" in line]
    assert result.channels["ZQM1.TO.LQM1"]["in_doubt_us"] >= 100e6
    assert said and all("CONNECTION NAME=ZQM1.TO.LQM1.S" in line for line in said)
    assert result.metrics["ZQM1"]["uows_rolled_back"] == 0
    out = restart_topology(cfg, {n: fs.durable for n, fs in result.storages.items()}, result.journals,
                           result.channels)
    assert out["delivery"]["ZQM1.TO.LQM1"] == {"delivered": 800, "waiting": 0, "lost": 0, "duplicated": 0}
