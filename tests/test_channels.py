"""Channels between queue managers (issue 42): the batch protocol's records on both ends' logs,
BATCHSZ's effect on log writes a message, a link outage holding a batch in doubt, the end-to-end
check catching a channel that resolves its batches in doubt wrongly, and RESOLVE CHANNEL by
hand. The crash sweeps of either end on every platform pair are the channel contract's
(tests/contract/test_channel_contract.py)."""

from __future__ import annotations

import functools
import hashlib

import pytest
from hypothesis import given, strategies as st

from mqlog.core.errors import ParameterError
from mqlog.core.format.records import Put
from mqlog.core.log.reader import scan
from mqlog.core.workload import channels
from mqlog.core.workload.channels import SYNCQ, XQH_BYTES, ChannelDef, LinkDef, SyncRecord, decide_channel, parse_xqh, xqh
from mqlog.core.workload.topology import TopologyConfig

from contract.topologies import CHANNEL_PAIRS, crash_sweep, restart, run
from contract.topologies import topology as shared_topology

PAIRS = CHANNEL_PAIRS
DEVICE = {"zos": "dasd", "distributed": "ssd"}


def topology(pair=("zos", "distributed"), workload="channel-feed", **kwargs) -> TopologyConfig:
    return shared_topology(pair, workload, devices=tuple(DEVICE[p] for p in pair), **kwargs)


# --- formats --------------------------------------------------------------------------------

@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ.0123456789", min_size=1, max_size=20), st.sampled_from(["S0", "S1", "R0"]),
       st.integers(0, 2**64 - 1), st.binary(min_size=8, max_size=8), st.booleans())
def test_a_synchronisation_record_reads_back_as_written(channel, role, seq, luw, indoubt):
    record = SyncRecord(channel, role, seq, luw, indoubt)
    assert SyncRecord.from_bytes(record.to_bytes()) == record


@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ.", min_size=1, max_size=48), st.binary(max_size=300))
def test_the_transmission_header_carries_the_destination_and_the_data(queue, data):
    message = xqh(queue, "QMB") + data
    assert len(message) == XQH_BYTES + len(data)
    assert parse_xqh(message) == (queue, "QMB", data)


def test_a_message_without_its_header_or_a_short_record_is_refused():
    with pytest.raises(ValueError):
        parse_xqh(b"DATA" * 200)
    with pytest.raises(ValueError):
        SyncRecord.from_bytes(b"SYNC")


@pytest.mark.parametrize("field, value", [("batchsz", 0), ("batchsz", 10_000), ("batchint_ms", -1),
                                          ("pipelinelength", 3), ("npmspeed", "QUICK"), ("name", "X" * 21)])
def test_channel_attributes_out_of_mqs_ranges_are_refused_naming_them(field, value):
    with pytest.raises(ParameterError, match="channel name" if field == "name" else field.split("_")[0].upper()):
        ChannelDef(**{"name": "A.TO.B", "sender": "A", "receiver": "B", field: value})


# --- running --------------------------------------------------------------------------------

@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_a_feed_delivers_every_message_once_and_both_logs_hold_the_channels_records(pair):
    cfg = topology(pair, putters=2, messages_per_putter=30)
    result = run(cfg)
    stat = result.channels["QMA.TO.QMB"]
    assert result.crashed is None and stat["status"] == "STOPPED"
    assert stat["messages_sent"] == 60 and stat["redelivered"] == 0 and 1 < stat["batches"] <= 60
    assert stat["lstseqno"] == 60  # the last batch's last message
    # every message is at its destination and was taken by a consumer there
    assert result.metrics["QMB"]["messages_got"] >= 60
    assert restart(result, cfg)["delivery"]["QMA.TO.QMB"] == {"delivered": 60, "waiting": 0, "lost": 0,
                                                               "duplicated": 0}
    # each end's log holds its synchronisation puts (SYSTEM.CHANNEL.SYNCQ), a batch each
    for name in ("QMA", "QMB"):
        qm = result.qms[name]
        records = [r for _a, r in scan(qm.platform.space, 0)[0] if isinstance(r, Put)]
        assert sum(r.queue == SYNCQ for r in records) == stat["batches"], name


def test_the_same_topology_and_seed_give_the_same_bytes_and_figures():
    def once():
        result = run(topology(putters=2, messages_per_putter=20))
        files = {name: {f: hashlib.sha256(fs.durable.read(f, 0, fs.durable.size(f))).hexdigest()
                        for f in fs.durable.list()} for name, fs in result.storages.items()}
        return files, result.metrics

    assert once() == once()


def _writes_per_message(batchsz: int) -> dict:
    cfg = topology(putters=4, messages_per_putter=40, batchsz=batchsz, batchint_ms=20)
    result = run(cfg)
    assert result.channels["QMA.TO.QMB"]["messages_sent"] == 160
    return {name: m["physical_writes"] / 160 for name, m in result.metrics.items()}


def test_a_bigger_batch_means_fewer_log_writes_a_message_on_both_ends():
    # IBM: a batch is one unit of work at each end, hardened once – so BATCHSZ 1 forces each
    # message's batch at both ends, BATCHSZ 50 (with BATCHINT to fill it) a fiftieth as often
    one, fifty = _writes_per_message(1), _writes_per_message(50)
    for name in ("QMA", "QMB"):
        assert fifty[name] < 0.8 * one[name], (name, one, fifty)


def test_a_link_outage_holds_the_senders_batch_in_doubt_until_the_channel_resynchronises():
    cfg = topology(putters=1, messages_per_putter=40, link=LinkDef(outages=((0.01, 5.0),)))
    result = run(cfg)
    stat = result.channels["QMA.TO.QMB"]
    assert stat["outages"] == 1 and stat["status"] == "STOPPED"
    # the sender retries after SHORTTMR (60 s): the run goes on past the outage
    assert result.metrics["QMA"]["virtual_s"] > 60
    assert stat["resolved_commit"] + stat["resolved_backout"] + stat["backed_out_batches"] >= 1
    assert stat["messages_sent"] >= 40 and stat["redelivered"] == 0
    assert restart(result, cfg)["delivery"]["QMA.TO.QMB"]["delivered"] == 40
    said = "\n".join(result.qms["QMA"].messages)
    assert "CSQX599E" in said and "CSQX500I" in said  # QMA is z/OS: ended abnormally, started again


# --- crash and restart of either end (the sweeps themselves: tests/contract/test_channel_contract.py) ----

@pytest.mark.parametrize("wrong, finds", [(lambda record, position: False, "duplicated"),
                                          (lambda record, position: True, "lost")])
def test_the_end_to_end_check_catches_a_resolution_that_decides_wrongly(monkeypatch, wrong, finds):
    # the check above could pass vacuously; a channel that always backs out (or always
    # commits) its batches in doubt must be caught delivering twice (or losing)
    monkeypatch.setattr(channels, "resolution", wrong)
    seen = crash_sweep(functools.partial(topology, ("zos", "distributed"), putters=2, messages_per_putter=10), 11)
    assert any(lost.get("QMA.TO.QMB", {}).get(finds) for *_x, lost in seen["bad"]), seen["bad"][:3]


def test_resolve_channel_by_hand_takes_the_action_given():
    base = run(topology(putters=1, messages_per_putter=10))
    for k in range(base.metrics["QMA"]["storage_writes"]):
        cfg = topology(putters=1, messages_per_putter=10, crash=("QMA", k))
        result = run(cfg)
        from mqlog.core.workload.run import restart_run
        q = cfg.qmgr("QMA")
        _report, _verdict, qm = restart_run(q.make_platform, result.storages["QMA"].durable, device=q.device,
                                            qm_config=q.qm_config)
        if qm.in_doubt():
            assert [c for _u, c in decide_channel(qm, None, "QMA.TO.QMB", "BACKOUT")] == [False] * len(qm.in_doubt())
            assert [c for _u, c in decide_channel(qm, None, "QMA.TO.QMB", "COMMIT")] == [True] * len(qm.in_doubt())
            with pytest.raises(ParameterError, match="COMMIT or BACKOUT"):
                decide_channel(qm, None, "QMA.TO.QMB", "MAYBE")
            return
    pytest.fail("no crash point left the sender in doubt")
