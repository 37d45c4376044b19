"""MQ for z/OS's single logger task (zos/platform.py): it pays its own CPU for each write it
starts, carries at most 128 CIs a write, and writes a large message's CIs while the putting
application is still copying the rest in; the buffer pool (BUFFERS) keeps short-lived
messages out of the page set."""

from __future__ import annotations

import attrs
import pytest

from mqlog.core.disk.devices import get_profile
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import ParameterError
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.host.profiles import get_host
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.zos.platform import MAX_WRITE_CIS

KB = 1024


def _run(apps: int, messages: int, size: int, host=None, **log) -> dict:
    choice = choose("zos")
    values = choice.configure({"TWOACTV": "NO", "TWOARCH": "NO", "ACTIVE_LOG_CIS": "8192", "BUFFERS": "50000",
                               **{k: str(v) for k, v in log.items()}})
    spec = build_spec(BUILTINS["putget"], {"apps": apps, "messages": messages, "message_size": size}, origin="test")
    host = host or attrs.evolve(get_host("z14-3cp"), cpu_jitter=0.0)
    cfg = RunConfig("zos", choice.maker(values), values, spec, device="ibm-s6-ds8870", host=host)
    return run_workload(cfg, MemoryStorage()).metrics


def test_one_write_carries_at_most_128_cis_and_a_backlog_goes_out_in_the_writes_after_it():
    m = _run(2, 4, 2048 * KB)
    assert MAX_WRITE_CIS == 128
    assert m["write_size_max_bytes"] == 128 * PAGE_SIZE
    full = dict(m["write_size_histogram"])
    assert sum(n for label, n in full.items() if label.endswith("+") or "512" in label) > 0
    # 16 MB of messages went out in writes of 128 CIs, back to back: many more writes than commits
    assert m["physical_writes"] > m["pages_written"] / 128 >= 2 * m["commits"] / 2


def test_the_logger_task_pays_its_cpu_for_each_write_and_is_busy_around_it():
    """Two applications at 2 KB keep the logger task busy (IBM: 99.95% at capacity); outside
    its I/O it spends the host's log_io_us on each write, and nothing else. (The host's
    jitter is kept: without it the two stay in step and the logger waits for both.)"""
    host = get_host("z14-3cp")
    m = _run(2, 300, 2 * KB, host=host)
    window = m["measured_s"] * 1e6
    # (the window ends at the last call; the counters take in the shutdown's last cycle or two)
    assert m["measured_io_busy_us"] < m["measured_writer_busy_us"] <= 1.01 * window
    assert m["measured_writer_busy_us"] / window > 0.98
    own = m["measured_writer_busy_us"] - m["measured_io_busy_us"]
    assert own == pytest.approx(m["measured_physical_writes"] * host.log_io_us, rel=0.02)
    # single logging: the log's only copy is written once a cycle, its time the device's
    device = get_profile("ibm-s6-ds8870")
    assert m["measured_primary_writes"] == m["measured_physical_writes"] == m["measured_write_cycles"]
    per_write = m["measured_primary_write_time_us"] / m["measured_primary_writes"]
    pages = m["pages_written"] / m["physical_writes"]
    assert per_write == pytest.approx(device.write_time_us(pages * PAGE_SIZE), rel=0.02)


def test_a_large_message_reaches_the_logger_while_it_is_being_copied():
    """A put copies its message into the log buffer a segment at a time: with a copy slower
    than the log (2 ns a byte: 500 MB/s against the device's 770), the logger writes the CIs as
    they fill, and the commit's write carries only the last of them – not the 2 MB a copy made
    before any write would leave, four writes of 128 CIs after it."""
    slow = attrs.evolve(get_host("z14-3cp"), cpu_jitter=0.0, copy_ns_per_byte=2.0)
    m = _run(1, 4, 2048 * KB, host=slow)
    backlog_writes = 2048 * KB // (128 * PAGE_SIZE)  # what each message would take after its copy
    # the writes were cut while the message was arriving: smaller than the 128 CIs a backlog gives,
    # and most started by the write threshold (WRTHRSH's 20 full CIs, QJSTTHRW), no commit behind them:
    # more of them a message than a backlog would need in all
    assert m["write_size_max_bytes"] < 128 * PAGE_SIZE
    assert m["threshold_writes"] > backlog_writes * m["messages_put"] > 0
    assert m["threshold_writes"] > m["commits"] > 0


def test_the_buffer_pool_keeps_short_lived_messages_out_of_the_page_set_until_85_percent_full():
    """DEFINE BUFFPOOL's BUFFERS (1000 by default: 4 MB): a queue's messages stay in its pool
    until it is 85% full, so a 2 MB message put and got at once never reaches the page set;
    with 100 buffers (340 KB of room) it does."""
    assert _run(1, 3, 2048 * KB, BUFFERS=1000)["queue_file_bytes_written"] == 0
    assert _run(1, 3, 2048 * KB, BUFFERS=100)["queue_file_bytes_written"] >= 3 * 2048 * KB
    with pytest.raises(ParameterError) as caught:
        choose("zos").configure({"BUFFERS": "99"})
    assert "BUFFERS" in str(caught.value) and "100" in str(caught.value)
