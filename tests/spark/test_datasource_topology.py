"""The ``mqlog`` data source over a topology run directory (issue 42): every queue manager's
log in one frame, each row saying whose log (``qmgr``), the queue a message record names and a
Prepare's xid, so the channel's records show on the end that writes them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mqlog.core.errors import MqlogError

pytestmark = pytest.mark.spark

#: the sender's batch units' xids begin "CHL " + the channel's name padded to 20 (FORMAT.md)
SENDER_XID = (b"CHL " + b"ZQM1.TO.LQM1".ljust(20)).hex().upper()


@pytest.fixture(scope="module")
def feed(tmp_path_factory) -> Path:
    """z/OS ZQM1 feeding Linux LQM1 over ZQM1.TO.LQM1 (one way: each end has one role)."""
    out = tmp_path_factory.mktemp("topo") / "feed"
    subprocess.run([sys.executable, "-m", "mqlog", "topology", "run", "zos-linux-feed",
                    "--set", "workload.messages_per_putter=10", "--set", "channel.BATCHSZ=4", "--out", str(out)],
                   check=True, capture_output=True, timeout=300)
    return out


def test_a_topology_directory_reads_each_ends_channel_records(spark, feed):
    from mqlog.spark.datasource import SCHEMA, register

    register(spark)
    df = spark.read.format("mqlog").load(str(feed))
    names = [c.strip().split()[0] for c in SCHEMA.split(",")]
    assert df.columns == names + ["qmgr", "queue", "xid"]
    rows = df.collect()
    assert not any(r.bad for r in rows)
    assert {r.qmgr: r.platform for r in rows} == {"ZQM1": "zos", "LQM1": "distributed"}
    channel = json.loads((feed / "topology.json").read_text())["channels"]["ZQM1.TO.LQM1"]
    batches, messages = channel["batches"], channel["messages_sent"]
    assert messages == 40 and 10 <= batches < 40  # BATCHSZ 4: batches of up to four

    def count(qmgr, kind, queue=None):
        return sum(1 for r in rows if r.qmgr == qmgr and r.record_type == kind and (queue is None or r.queue == queue))

    # the sender: the applications' puts to the transmission queue (named after LQM1), the MCA's
    # gets from it, a sync put and a Prepare a batch; no destination queue
    assert count("ZQM1", "PUT", "LQM1") == count("ZQM1", "GET", "LQM1") == messages
    assert count("ZQM1", "PUT", "SYSTEM.CHANNEL.SYNCQ") == batches
    prepares = [r for r in rows if r.qmgr == "ZQM1" and r.record_type == "PREPARE"]
    assert len(prepares) == batches and all(r.xid.startswith(SENDER_XID) for r in prepares)
    assert count("ZQM1", "PUT", "FEED.IN") == 0
    # each prepared batch unit holds its messages' gets and its sync put
    for p in prepares:
        own = [r for r in rows if r.qmgr == "ZQM1" and r.uow == p.uow]
        assert {(r.record_type, r.queue) for r in own} >= {("GET", "LQM1"), ("PUT", "SYSTEM.CHANNEL.SYNCQ")}
    # the receiver: a put a message to the destination, a sync put a batch, no Prepare
    assert count("LQM1", "PUT", "FEED.IN") == messages
    assert count("LQM1", "PUT", "SYSTEM.CHANNEL.SYNCQ") == batches
    assert count("LQM1", "PREPARE") == 0 and count("LQM1", "PUT", "LQM1") == 0
    # a queue manager's own run directory reads as before: SCHEMA, no topology columns
    assert spark.read.format("mqlog").load(str(feed / "LQM1")).columns == names


def test_a_topology_directory_is_read_under_its_lock(feed):
    from mqlog.rundir import locked
    from mqlog.spark.datasource import TopologyReader

    parts = TopologyReader(str(feed)).partitions()
    assert {p.qmgr for p in parts} == {"ZQM1", "LQM1"}
    with locked(feed):  # as 'mqlog topology restart' holds it while it writes
        with pytest.raises(MqlogError, match="is being written by another mqlog command"):
            TopologyReader(str(feed)).partitions()
