"""A queue whose persistent messages outgrow its buffer (DefaultPQBufferSize) spills them to
its file in the putting call, on the log's own device: the spills and their bytes are counted
and shown, and their writes share the device's channel with the log's, so that a run of large
messages at a few dozen requesters logs less with the default buffer than with IBM's
performance runs' 100 MB one."""

from __future__ import annotations

import json
import re

from clikit import mqlog

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

#: 30 requesters of 200 KB messages over 10 queue pairs: three messages a queue outgrow the
#: default 256 KiB buffer
PARAMS = {"requesters": "30", "responders": "30", "message_size": "204800", "duration": "0.1"}


def _run(buffer_bytes: int) -> dict:
    choice = choose("distributed")
    values = choice.configure({"LogWriteIntegrity": "SingleWrite", "DefaultPQBufferSize": str(buffer_bytes)})
    spec = build_spec(BUILTINS["requester-responder"], PARAMS, origin="test")
    return run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=1), MemoryStorage()).metrics


def test_spills_share_the_log_device_and_a_buffer_that_holds_the_messages_has_none():
    default, large = _run(262144), _run(104857600)
    assert default["queue_spills"] > default["messages_put"] / 2  # most puts find their queue's buffer full
    assert default["queue_file_bytes_written"] > 100 * 204800
    assert large["queue_spills"] == 0 and large["queue_file_bytes_written"] < default["queue_file_bytes_written"] / 2  # (checkpoints still flush)
    # the spills' writes beside the log's: transfers slowed by sharing the channel, and fewer
    # round trips in the same virtual time
    assert default["device_shared_us"] > 20 * large["device_shared_us"]
    assert default["measured_round_trips"] / default["measured_s"] < 0.8 * large["measured_round_trips"] / large["measured_s"]


def test_the_summary_shows_the_spills():
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                *(a for k, v in PARAMS.items() for a in ("--set", f"workload.{k}={v}")), "--seed", "1", "--json")
    m = json.loads(out.stdout)
    text = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                 *(a for k, v in PARAMS.items() for a in ("--set", f"workload.{k}={v}")), "--seed", "1").stdout
    spills, written = map(int, re.search(r"queue-file spills / bytes written\s+(\d+) / (\d+)\n", text).groups())
    assert (spills, written) == (m["queue_spills"], m["queue_file_bytes_written"]) and spills > 0
