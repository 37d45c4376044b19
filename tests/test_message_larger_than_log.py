"""A message larger than the whole active log.

On z/OS the log behind a unit of work is archived (offloaded), never pinned, so a message may
be larger than every active data set together: its segments are logged one after another,
each waiting for an offload to free a data set as it goes (CSQJ111A), and a restart after a
crash part way through backs the half-logged message out, reading its first segments from the
archives. On distributed a unit of work pins the log behind it, so the whole message must fit
beside the reserve: a larger one is refused (MQRC_RESOURCE_PROBLEM, counted) before any of it
is logged, and the run goes on.
"""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

MIB = 1 << 20


def _run(platform: str, log: dict, size: int, *, syncpoint: bool, crash_at_s=None):
    choice = choose(platform)
    values = choice.configure(log)
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "1", "messages_per_pair": "3", "message_size": str(size),
                                                 "syncpoint": str(syncpoint).lower()}, origin="test")
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=2, device="ssd", crash_at_s=crash_at_s)
    return choice.maker(values), run_workload(cfg, MemoryStorage())


#: two active data sets of 64 CIs a copy: 512 KiB of active log, half the message
SMALL_ZOS = {"ACTIVE_LOGS": "2", "ACTIVE_LOG_CIS": "64"}


@pytest.mark.parametrize("syncpoint", [True, False])
def test_zos_logs_a_message_larger_than_its_active_log_waiting_for_offloads(syncpoint):
    maker, out = _run("zos", SMALL_ZOS, MIB, syncpoint=syncpoint)
    m = out.metrics
    assert not m["crashed"] and m["ended"] == "controlled" and not m.get("abnormal_end"), m.get("abnormal_end")
    assert (m["messages_put"], m["messages_got"], m["failed_calls"]) == (3, 3, {})
    assert m["logical_bytes"] > 3 * MIB > m["active_log_capacity_bytes"]
    assert m["archive_offloads"] >= 6  # each message went through the ring and out to the archives
    _, verdict, _ = restart_run(maker, out.storage.durable, journal=out.journal)
    assert verdict.ok, verdict.as_dict()


def test_zos_backs_out_a_message_half_logged_when_the_plug_was_pulled():
    _, clean = _run("zos", SMALL_ZOS, MIB, syncpoint=True)
    end = clean.metrics["workload_s"]
    backed_out = most_read = 0
    for k in range(1, 8):
        maker, out = _run("zos", SMALL_ZOS, MIB, syncpoint=True, crash_at_s=end * k / 8)
        assert out.crashed
        report, verdict, _ = restart_run(maker, out.storage.durable, journal=out.journal)
        assert verdict.ok, (k, verdict.as_dict())
        backed_out += report.uows_backed_out
        most_read = max(most_read, report.bytes_read)
    assert backed_out >= 3  # most crashes came while a message was being logged
    assert most_read > clean.metrics["active_log_capacity_bytes"]  # (its start from the archives)


def test_distributed_refuses_a_message_larger_than_its_log_and_goes_on():
    small_log = {"LogFilePages": "64", "LogPrimaryFiles": "2", "LogSecondaryFiles": "1"}  # 768 KiB
    maker, out = _run("distributed", small_log, MIB, syncpoint=True)
    m = out.metrics
    assert not m["crashed"] and m["messages_put"] == 0
    assert m["failed_calls"]["MQRC_RESOURCE_PROBLEM"]["calls"] == 3
    assert m["logical_bytes"] < MIB // 8  # nothing of the messages was logged
    _, verdict, _ = restart_run(maker, out.storage.durable, journal=out.journal)
    assert verdict.ok, verdict.as_dict()
    # a message that fits goes in on the same log
    _, fits = _run("distributed", small_log, MIB // 8, syncpoint=True)
    assert (fits.metrics["messages_put"], fits.metrics["failed_calls"]) == (3, {})
