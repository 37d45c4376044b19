"""qm.ini TuningParameters DefaultPQBufferSize: the persistent bytes a queue keeps in memory
before it spills them to its queue file. IBM's performance runs raise it (tuning scripts
written with IBM Hursley set 100 MB); with MQ's default (128 KiB, doubled on 64-bit), 180
requesters with 20 KB messages hold more than that on their request queues, and every put
beyond it writes the queue's messages to its file (through the host's page cache: the
device sees them at the next checkpoint)."""

from __future__ import annotations

import json
import subprocess
import sys


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def _run(tmp_path, *extra):
    out = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    result = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                   "--set", "workload.requesters=180", "--set", "workload.responders=200",
                   "--set", "workload.message_size=20480", "--set", "workload.duration=0.1",
                   "--out", out, "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_larger_queue_buffer_spills_less_to_the_queue_files(tmp_path):
    default = _run(tmp_path)
    large = _run(tmp_path, "--set", "log.DefaultPQBufferSize=10485760")
    assert default["config"]["DefaultPQBufferSize"] == 262_144
    assert large["config"]["DefaultPQBufferSize"] == 10_485_760
    # the same work reached the log; only the queue files' share changed
    assert large["round_trips"] > 0 and default["round_trips"] > 0
    # a spill writes messages to the file (through the page cache, where the gets find them
    # again); with the buffer large enough nothing spills, and the files are written only by
    # checkpoints' flushes
    assert default["queue_spills"] > 0 and large["queue_spills"] == 0
    assert large["queue_file_bytes_cached"] < default["queue_file_bytes_cached"] * 0.75
    assert default["queue_file_bytes_read"] == large["queue_file_bytes_read"] == 0


def test_the_setting_is_refused_outside_its_range_before_any_work(tmp_path):
    out = tmp_path / "never"
    result = mqlog("run", "--platform", "distributed", "--workload", "putget",
                   "--set", "log.DefaultPQBufferSize=104857601", "--out", out)
    assert result.returncode == 2
    assert "DefaultPQBufferSize" in result.stderr and "104857600" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
