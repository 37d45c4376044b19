"""The measured window (the ``measured_*`` figures: from the end of the set-up or ramp to the
workload's last call) counts what happened inside it – not the shutdown after it, not the
whole of a write cycle that straddles one of its edges – and a window too short for its
figures to be the steady state's says so (``short_window``) wherever they are shown."""

from __future__ import annotations

import re

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.spark.htmlreport import empty_cells, nothing_measured_note, window_lines
from mqlog.usecases import WINDOW_CYCLES_MIN, short_window

from clikit import mqlog

#: 100 requesters of 20 KB messages for 10 ms: the ramp (every requester's first reply) takes
#: most of it, and the window holds about ten write cycles, one straddling its start
SHORT = {"requesters": "100", "responders": "50", "message_size": "20480", "duration": "0.01"}


def _run(platform: str, params: dict, **cfg) -> dict:
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["requester-responder"], params, origin="test")
    return run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=1, **cfg),
                        MemoryStorage()).metrics


def _window(m: dict) -> dict:
    return {k: v for k, v in m.items() if k.startswith("measured_")}


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_the_window_ends_when_the_last_call_returns_not_after_the_shutdown(platform):
    # A controlled shutdown checkpoints and writes after the last call; a crash at the end
    # pulls the plug before any of that. The window is the same stretch of the same run in
    # both, so every figure of it is the same (the shutdown's writes were counted before).
    ended = _run(platform, SHORT)
    crashed = _run(platform, SHORT, crash_at_end=True)
    assert crashed["crashed"] and not ended["crashed"]
    assert ended["write_cycles"] > crashed["write_cycles"]  # the shutdown wrote ...
    assert _window(ended) == _window(crashed)               # ... outside the window


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_the_writer_is_never_busier_than_the_window_is_long(platform):
    # The cycle in flight when the window opens is counted from the window's start, not whole
    # (it was: 5.3 ms of writer busy in a 4.5 ms window, 118%).
    m = _run(platform, SHORT)
    window_us = m["measured_s"] * 1e6
    assert 0 < m["measured_io_busy_us"] <= m["measured_writer_busy_us"] <= window_us
    # ... and with the cycles counted whole it would not fit: the straddling cycle is real
    assert m["measured_write_cycles"] < WINDOW_CYCLES_MIN


def test_a_short_window_is_said_and_a_long_one_is_not():
    short = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                  *(a for k, v in SHORT.items() for a in ("--set", f"workload.{k}={v}")), "--seed", "1")
    assert short.returncode == 0, short.stderr
    line = next(x for x in short.stdout.splitlines() if "SHORT MEASURED WINDOW" in x)
    cycles, trips = map(int, re.search(r"holds (\d+) write cycles and (\d+) round trips of 100 requesters", line).groups())
    assert cycles < WINDOW_CYCLES_MIN and "workload.duration 0.01 s" in line and "lengthen the duration" in line
    # the ramp before the window is named with its length
    assert re.search(r"the ramp-up before it took [\d.]+ ms", line)
    longer = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                   *(a for k, v in {**SHORT, "duration": "0.2"}.items() for a in ("--set", f"workload.{k}={v}")),
                   "--seed", "1")
    assert longer.returncode == 0 and "SHORT MEASURED WINDOW" not in longer.stdout and "MEASURED" not in longer.stdout


def _row(name: str, **m) -> dict:
    return {"config_name": name, "params": '{"duration": 1.0, "requesters": 60}', "measured_s": 0.5,
            "workload_s": 0.9, "measured_from": "ramp-up", "measured_write_cycles": 400,
            "measured_round_trips": 6000, **m}


def test_which_windows_are_short():
    assert short_window(_row("a")) == ""
    assert "holds 19 write cycles and 6000 round trips of 60 requesters" in short_window(_row("a", measured_write_cycles=19))
    # fewer than ten round trips a requester: one in flight at each edge is a tenth
    assert "599 round trips of 60 requesters" in short_window(_row("a", measured_round_trips=599))
    assert short_window(_row("a", measured_round_trips=600)) == ""
    # a workload with no requesters is judged by its write cycles alone
    no_requesters = _row("a", params='{"duration": 1.0}', measured_round_trips=0)
    assert short_window(no_requesters) == "" and "holds 3 write cycles:" in short_window(dict(no_requesters,
                                                                                            measured_write_cycles=3))
    # nothing measured, a crash, or a run with no duration: not this warning's to say
    for other in (_row("a", measured_s=0), _row("a", crashed=True, measured_write_cycles=1),
                  _row("a", params="{}", measured_write_cycles=1)):
        assert short_window(other) == ""


def test_a_report_names_the_configurations_whose_window_is_short():
    rows = [_row("long"), _row("short", measured_write_cycles=5), _row("shorter", measured_round_trips=7)]
    assert empty_cells(rows, short_window) == ["short", "shorter"]
    note = nothing_measured_note(rows)
    assert "<strong>SHORT MEASURED WINDOW</strong> in 2 of 3 configurations: short; shorter." in note
    assert "NOTHING MEASURED" not in note and "holds 5 write cycles" in note
    assert nothing_measured_note([_row("long")]) == ""
    # compare's and sweep's console say the same under their tables, one line a warning
    empty = _row("empty", measured_s=0)
    (nothing, short) = window_lines([*rows, empty])
    assert nothing.startswith("NOTHING MEASURED in 1 of 4 configurations (empty): the set-up")
    assert short.startswith("SHORT MEASURED WINDOW in 2 of 4 configurations (short; shorter): the first: "
                            "the measured window (500 ms of workload.duration 1 s; the ramp-up before it took 400 ms) "
                            "holds 5 write cycles and 6000 round trips of 60 requesters")
    cells = [dict(_row("dist", measured_write_cycles=5), sweep={"workload.duration": 1.0}, device="san", seed=0)]
    assert window_lines(cells) == [f"SHORT MEASURED WINDOW in 1 of 1 cells (dist workload.duration=1.0 device=san "
                                   f"seed=0): {short_window(cells[0])}"]
    assert window_lines([_row("long")]) == []
