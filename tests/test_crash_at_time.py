"""A plug pulled at a virtual time (``--crash-at SECONDS`` or ``end``) is a power loss between
writes: every unsynced write is dropped, and every write on its way to the device then is torn
– a seeded subset of its sectors, none to all, lands – as beside a torn write. Restart loses
nothing acknowledged, and the run and the restart say how many writes were torn.
"""

from __future__ import annotations

import pytest
from clikit import mqlog

from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose


def _run(platform: str, crash_at_s=None, *, crash_at_end: bool = False):
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["requester-responder"], {"duration": "0.03", "requesters": "6", "responders": "6"},
                      origin="test")
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=5, device="san", crash_at_s=crash_at_s,
                    crash_at_end=crash_at_end)
    return choice.maker(values), run_workload(cfg, MemoryStorage())


def _image(storage) -> dict:
    return {name: storage.read(name, 0, storage.size(name)) for name in storage.list()}


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_a_plug_pulled_at_a_virtual_time_tears_the_writes_in_flight_and_loses_nothing_acknowledged(
        platform, monkeypatch):
    _, clean = _run(platform)
    end = clean.metrics["workload_s"]
    times = [end * (k + 0.5) / 16 for k in range(16)]
    torn_at = []
    for t in times:
        maker, out = _run(platform, t)
        assert out.crashed and out.metrics["ended"] == "crash" and out.metrics["ended_at_s"] == pytest.approx(t)
        torn = out.metrics["writes_torn_at_crash"]
        assert torn == len(out.storage.torn_beside) >= 0
        _, verdict, _ = restart_run(maker, out.storage.durable, journal=out.journal)
        assert verdict.ok, (t, verdict.as_dict())
        if torn:
            torn_at.append((t, _image(out.storage.durable)))
    # on san a log write takes long enough that most crash times find one on its way
    assert len(torn_at) >= len(times) // 2, len(torn_at)
    # ... and part of what was in flight reached the disk: the images differ from a plug
    # pulled at the same moments that dropped the writes in flight whole
    monkeypatch.setattr(FaultInjectingStorage, "power_loss", lambda fs: fs.crash() or 0)
    landed = sum(_image(_run(platform, t)[1].storage.durable) != image for t, image in torn_at)
    assert landed >= 1


def test_a_crash_at_the_end_tears_what_is_in_flight_too():
    maker, out = _run("distributed", crash_at_end=True)
    assert out.crashed and isinstance(out.metrics["writes_torn_at_crash"], int)
    _, verdict, _ = restart_run(maker, out.storage.durable, journal=out.journal)
    assert verdict.ok, verdict.as_dict()


def test_the_run_and_the_restart_say_what_the_crash_tore(tmp_path):
    d = tmp_path / "run"
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder", "--set",
                "workload.duration=0.03", "--device", "san", "--crash-at", "0.02", "--out", str(d))
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert "crashed (the plug pulled at 0.020000 s; " in first
    assert first.endswith(("in flight, torn)", "no write in flight)")), first
    said = first.split("; ", 1)[1].rstrip(")")
    again = mqlog("restart", str(d), "--verify")
    assert again.returncode == 0, again.stderr
    assert f"restarting after a crash at 0.020000 virtual seconds ({said})" in again.stdout
