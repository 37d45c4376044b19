"""``mqlog calibrate``'s machinery: the case loader, the figure computations, and the command's
table, JSON and exit status (the cases run in this process here; tests/spark/test_calibrate.py
runs one through Spark)."""

from __future__ import annotations

import json
import math

import pytest

from mqlog.calibration import output as report
from mqlog.calibration.cases import COMPUTATIONS, figures_of, load_cases, parse_cases, run_case
from mqlog.cli import main
from mqlog.core.errors import CalibrationCaseError, MqlogError

TINY = '''
[T1]
title = "a tiny case"
source = "nobody: a test"
[T1.runs.sw]
workload = "putget"
params = { apps = 1, messages = 20, message_size = 100 }
log = { LogWriteIntegrity = "SingleWrite" }
[[T1.figures]]
name = "writes_per_iteration"
compute = "per_round_trip"
metric = "sw.physical_writes"
ibm = 2
tolerance = [1.5, 3.0]
[[T1.figures]]
name = "{second}"
compute = "ratio"
num = "sw.messages_got"
den = "sw.messages_put"
ibm = {ibm}
tolerance = 0.1
'''


def tiny(tmp_path, *, second="got_per_put", ibm="1.0"):
    path = tmp_path / "cases.toml"
    path.write_text(TINY.replace("{second}", second).replace("{ibm}", ibm))
    return path


def mqlog(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def in_process(monkeypatch):
    """The command's cases run here, one after the other, instead of as Spark tasks."""
    import mqlog.spark.calibrate as job
    import mqlog.spark.session as session

    monkeypatch.setattr(session, "spark_session", lambda master, name: _NoSpark())
    monkeypatch.setattr(job, "run_cases", lambda spark, cases, *, device=None, host=None, progress=None:
                        {c: run_case(case, device, host) for c, case in cases.items()})


class _NoSpark:
    class sparkContext:
        master = "in-process"


# --------------------------------------------------------------------------- loading

def test_the_built_in_cases_load_with_ibm_values_from_ibm_counters():
    cases = load_cases()
    assert list(cases) == ["D1", "D2", "C1", "Z1", "Z2", "Z3", "R1", "F1", "F7", "F13", "Z4", "Z5", "Z6"]
    # Z5 and Z6 check IBM's other figures of Z4's runs: the same runs, run once
    assert cases["Z5"]["runs"] is cases["Z4"]["runs"] and cases["Z6"]["runs_from"] == "Z4"
    d1 = {f["name"]: f for f in cases["D1"]["figures"]}
    # computed from IBM's amqldmpa counters by the figure's own computation
    assert d1["tw_physical_writes_ratio"]["ibm"] == pytest.approx(231_340 / 184_710)
    assert d1["sw_utilisation"]["ibm"] == pytest.approx(0.1609, abs=5e-4)
    assert d1["sw_logical_bytes_per_logical_write"]["ibm"] == pytest.approx(785, abs=0.5)
    assert "512-byte" in cases["D1"]["assumption"]
    assert list(load_cases(only=["C1"])) == ["C1"]


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace('compute = "ratio"', 'compute = "eval"'), "T1.figures.got_per_put.compute"),
    (lambda t: t.replace("tolerance = 0.1", 'tolerance = "lots"'), "T1.figures.got_per_put.tolerance"),
    (lambda t: t.replace("tolerance = 0.1", "tolerance = [3, 1]"), "T1.figures.got_per_put.tolerance"),
    (lambda t: t.replace("ibm = 1.0", 'ibm = "counters"'), "T1.figures.got_per_put.ibm"),
    (lambda t: t.replace('num = "sw.messages_got"', 'num = "tw.messages_got"'), "T1.figures.got_per_put.num"),
    (lambda t: t.replace('workload = "putget"', 'workload = "putgot"'), "T1.runs.sw.workload"),
    (lambda t: t.replace("apps = 1,", "apps = 0,"), "T1.runs.sw.params.apps"),
    (lambda t: t.replace('LogWriteIntegrity = "SingleWrite"', 'LogWriteIntegrity = "Sometimes"'),
     "LogWriteIntegrity"),
    (lambda t: t.replace('title = "a tiny case"', 'titel = "a tiny case"'), "T1.titel"),
    (lambda t: t.replace('log = { LogWriteIntegrity = "SingleWrite" }',
                         'log = { LogWriteIntegrity = "SingleWrite" }\nqmgr = { max_uow = 5 }'), "T1.runs.sw.qmgr.max_uow"),
    (lambda t: t.replace('log = { LogWriteIntegrity = "SingleWrite" }',
                         'log = { LogWriteIntegrity = "SingleWrite" }\nqmgr = { max_uow_messages = 0 }'),
     "max_uow_messages"),
    (lambda t: t.replace('name = "got_per_put"', 'name = "writes_per_iteration"'),
     "T1.figures.writes_per_iteration"),
])
def test_a_bad_case_file_names_the_file_the_case_and_the_field(tmp_path, edit, field):
    path = tiny(tmp_path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(CalibrationCaseError) as caught:
        load_cases(path)
    message = str(caught.value)
    assert str(path) in message and field in message and "\n" not in message


SHARED = TINY.replace("{second}", "got_per_put").replace("{ibm}", "1.0") + '''
[T2]
title = "the same runs, another figure"
source = "nobody: a test"
runs_from = "T1"
[[T2.figures]]
name = "puts"
compute = "ratio"
num = "sw.messages_put"
den = "sw.messages_put"
ibm = 1
tolerance = 0.1
'''


@pytest.mark.parametrize("edit, field, says", [
    (lambda t: t.replace('runs_from = "T1"', 'runs_from = "T9"'), "T2.runs_from", "no case above"),
    (lambda t: t.replace('runs_from = "T1"', 'runs_from = "T1"\n[T2.runs.sw]\nworkload = "putget"'),
     "T2.runs", "no runs of its own"),
])
def test_a_case_shares_an_earlier_cases_runs_or_says_why_not(tmp_path, edit, field, says):
    path = tmp_path / "cases.toml"
    path.write_text(SHARED)
    cases = load_cases(path)
    assert cases["T2"]["runs"] is cases["T1"]["runs"] and cases["T2"]["runs_from"] == "T1"
    result = run_case(cases["T2"])
    assert result["figures"]["puts"]["model"] == 1.0
    path.write_text(edit(SHARED))
    with pytest.raises(CalibrationCaseError) as caught:
        load_cases(path)
    assert field in str(caught.value) and says in str(caught.value)


def test_unreadable_and_non_toml_case_files_and_unknown_ids_are_one_line_errors(tmp_path):
    with pytest.raises(CalibrationCaseError, match="cannot read"):
        load_cases(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[T1\n")
    with pytest.raises(CalibrationCaseError, match="not valid TOML"):
        load_cases(broken)
    with pytest.raises(CalibrationCaseError, match="--only 'D9'.*D1, D2, C1"):
        load_cases(only=["D9"])


# --------------------------------------------------------------------------- computations

SYNTHETIC = {
    "sw": {"physical_writes": 100, "logical_writes": 80, "physical_bytes": 100 * 4096 + 50 * 4096,
           "logical_bytes": 61_440, "round_trips": 50, "messages_got": 500, "virtual_s": 2.1, "workload_s": 2.0,
           "checkpoint_marks": [{"reason": "start", "messages_put": 0, "log_records": 0},
                                {"reason": "records", "messages_put": 100, "log_records": 400},
                                {"reason": "records", "messages_put": 300, "log_records": 1200},
                                {"reason": "shutdown", "messages_put": 310, "log_records": 1240}],
           # unit 1 shunted at checkpoints 4, 7 and 10 (the last two whole), unit 2 at 5 and 9
           "params": {"long_messages": 100},
           "shunt_rounds": [{"uow": 1, "checkpoint": 4, "operations": 50}, {"uow": 2, "checkpoint": 5, "operations": 60},
                            {"uow": 1, "checkpoint": 7, "operations": 100},
                            {"uow": 2, "checkpoint": 9, "operations": 60},
                            {"uow": 1, "checkpoint": 10, "operations": 100}]},
    "tw": {"physical_writes": 125, "messages_got": 500, "virtual_s": 2.9, "workload_s": 2.5},
    # a z/OS writer's measured window: 0.5 s, 40 MB to copy 1 in 200 writes of 300 µs each,
    # busy with writes 0.45 s of its 0.5 s at work; commits of 400 µs
    "zs": {"measured_s": 0.5, "measured_physical_bytes": 40e6, "measured_primary_writes": 200,
           "measured_primary_write_time_us": 60_000.0, "measured_io_busy_us": 450_000.0,
           "measured_writer_busy_us": 500_000.0, "measured_commit_elapsed_us": 400.0},
    "zb": {"measured_s": 0.25, "measured_physical_bytes": 50e6},
}


def figure(compute, ibm=1.0, tolerance=0.2, **args):
    return {"name": "f", "compute": compute, "ibm": ibm, "tolerance": tolerance, "note": "", **args}


@pytest.mark.parametrize("fig, expected", [
    (figure("ratio", num="tw.physical_writes", den="sw.physical_writes"), 1.25),
    (figure("pages_per_write", run="sw"), 1.5),
    (figure("utilisation", run="sw"), 0.1),
    (figure("per_round_trip", metric="sw.physical_writes"), 2.0),
    (figure("throughput_ratio", num="tw", den="sw"), 0.8),
    (figure("checkpoint_interval", run="sw", measure="log_records"), 600.0),
    (figure("checkpoint_interval", run="sw", measure="messages"), 150.0),
    (figure("shunt_cadence", run="sw"), 10 / 3),
    (figure("units_shunted_whole", run="sw"), 1.0),
    (figure("io_time_per_write", run="zs"), 300.0),
    (figure("commit_elapsed", run="zs"), 400.0),
    (figure("rate_ratio", num="zb", den="zs"), 2.5),
    (figure("io_busy_share", run="zs"), 0.9),
])
def test_each_computation_over_synthetic_metrics(fig, expected):
    assert fig["compute"] in COMPUTATIONS
    (result,) = figures_of({"figures": [fig]}, SYNTHETIC).values()
    assert result["model"] == pytest.approx(expected)


def test_tolerance_as_fraction_or_range_decides_ok():
    def ok(model_ratio, ibm, tolerance):
        metrics = {"a": {"x": model_ratio, "y": 1}}
        fig = figure("ratio", ibm=ibm, tolerance=tolerance, num="a.x", den="a.y")
        return figures_of({"figures": [fig]}, metrics)["f"]

    assert ok(1.19, 1.0, 0.2)["ok"] and not ok(1.21, 1.0, 0.2)["ok"] and not ok(0.79, 1.0, 0.2)["ok"]
    assert ok(2.0, 2.0, [2.0, 2.4])["ok"] and not ok(1.99, 2.0, [2.0, 2.4])["ok"]
    at_least = ok(7.0, 1.0, [0.95, math.inf])
    assert at_least["ok"] and at_least["tolerance"] == "at least 0.95"
    assert ok(1.0, 1.0, 0.2)["tolerance"] == "±20%"


def test_a_missing_metric_is_missed_with_a_note_saying_which():
    fig = figure("ratio", num="sw.write_cycles", den="sw.physical_writes", note="cycles of the writer")
    result = figures_of({"figures": [fig]}, SYNTHETIC)["f"]
    assert result["model"] is None and not result["ok"]
    assert "write_cycles" in result["note"] and "cycles of the writer" in result["note"]


def test_a_run_too_short_for_a_checkpoint_has_no_value_and_misses():
    metrics = {"sw": {"checkpoint_marks": [{"reason": "start", "messages_put": 0, "log_records": 0},
                                           {"reason": "shutdown", "messages_put": 9, "log_records": 40}]}}
    result = figures_of({"figures": [figure("checkpoint_interval", run="sw", measure="messages")]}, metrics)["f"]
    assert result["model"] is None and not result["ok"] and "checkpoint" in result["note"]


# --------------------------------------------------------------------------- the command

def test_calibrate_prints_the_table_and_exits_0_when_every_figure_is_ok(tmp_path, capsys, in_process):
    code, out, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["case", "figure", "IBM", "model", "tolerance"]
    assert any(line.split()[:2] == ["T1", "writes_per_iteration"] and line.endswith("ok") for line in lines)
    assert "MISSED" not in out


def test_calibrate_exits_1_and_says_missed_when_a_figure_is_outside(tmp_path, capsys, in_process):
    code, out, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path, ibm="2.0"))
    assert code == 1
    assert any(line.startswith("T1") and "got_per_put" in line and line.endswith("MISSED")
               for line in out.splitlines())
    assert "1 figure MISSED" in err


def test_calibrate_json_and_out_dir(tmp_path, capsys, in_process):
    out_dir = tmp_path / "calib"
    code, out, _ = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path, ibm="2.0"), "--json", "--out", out_dir)
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"T1"} and set(doc["T1"]) == {"writes_per_iteration", "got_per_put"}
    got = doc["T1"]["got_per_put"]
    assert (got["ibm"], got["model"], got["tolerance"], got["ok"]) == (2.0, 1.0, "±10%", False)
    assert json.loads((out_dir / "results.json").read_text()) == doc
    page = (out_dir / "calibration.md").read_text()
    assert "| T1 | got_per_put |" in page and "calibration.png" in page and "nobody: a test" in page
    assert (out_dir / "calibration.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_user_errors_are_one_line(tmp_path, capsys, in_process):
    code, _, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path), "--only", "T9")
    assert code == 2 and "T9" in err and "Traceback" not in err
    code, _, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path), "--device", "floppy")
    assert code == 2 and "floppy" in err and "Traceback" not in err


def test_the_same_case_gives_the_same_figures():
    import tomllib

    (case,) = parse_cases(tomllib.loads(TINY.replace("{second}", "g").replace("{ibm}", "1")), "t").values()
    assert run_case(case) == run_case(case)


def test_the_device_override_reaches_every_run():
    """``--device`` runs every run of a case on that device: the runs' time moves with it."""
    import tomllib

    (case,) = parse_cases(tomllib.loads(TINY.replace("{second}", "g").replace("{ibm}", "1")), "t").values()
    fast, slow = run_case(case, "ssd"), run_case(case, "nfs2")
    assert (fast["runs"]["sw"]["device"], slow["runs"]["sw"]["device"]) == ("ssd", "nfs2")
    assert fast["runs"]["sw"]["virtual_s"] < slow["runs"]["sw"]["virtual_s"]


def test_triplewrite_cost_for_a_pair_comes_from_the_host_cpu_against_the_device_write_time():
    """D1's +25% is not typed in: the released application's next force can share the cycle
    only if its CPU between forces is shorter than the in-place write. A faster device than
    the host's CPU (ram), or a slower host on the same device (V9.1 class on ssd), makes the
    pair alternate strictly and TripleWrite doubles the writes. A slow device (V9.1 class on
    san) lets the released application join the other's cycle about half the time; a cycle
    that carries both forces closes its partial page with padding, so the cycle after it
    rewrites nothing and writes no spare copy: TripleWrite's extra writes are exactly its
    rewriting cycles', it needs a third fewer cycles than SingleWrite, and costs almost
    nothing (session 40: 4,010 writes against 4,005)."""
    d1 = load_cases(None, ["D1"])["D1"]

    def ratio(**override):
        return run_case(d1, **override)["figures"]["tw_physical_writes_ratio"]

    default = ratio()
    assert default["ok"]
    assert ratio(device="ram")["model"] == pytest.approx(2.0, abs=0.02)
    assert ratio(host="v91-xeon")["model"] == pytest.approx(2.0, abs=0.02)
    slow = run_case(d1, host="v91-xeon", device="san")
    sw, tw = slow["runs"]["sw"], slow["runs"]["tw"]
    assert sw["write_cycles"] == sw["forces_waited"]  # SingleWrite: strict alternation
    assert tw["physical_writes"] - tw["write_cycles"] == tw["partial_page_rewrites"] < tw["write_cycles"]
    assert tw["write_cycles"] < 0.8 * sw["write_cycles"]  # shared cycles
    assert slow["figures"]["tw_physical_writes_ratio"]["model"] < default["model"]


def test_the_host_override_reaches_every_run():
    import tomllib

    (case,) = parse_cases(tomllib.loads(TINY.replace("{second}", "g").replace("{ibm}", "1")), "t").values()
    result = run_case(case, host="v91-xeon")
    assert {m["host"] for m in result["runs"].values()} == {"v91-xeon"}


# --------------------------------------------------------------------------- restart's shapes (R1)

RESTARTS = {  # restart_s = 0.1 + 2e-6 * records_replayed exactly, but for "off"
    "k1": {"records_replayed": 10_000, "restart_s": 0.12, "restart_phases": {"replay_s": 0.09, "recovery_s": 0.02}},
    "k2": {"records_replayed": 20_000, "restart_s": 0.14, "restart_phases": {"replay_s": 0.11, "recovery_s": 0.02}},
    "k3": {"records_replayed": 40_000, "restart_s": 0.18, "restart_phases": {"replay_s": 0.15, "recovery_s": 0.02}},
    "off": {"records_replayed": 30_000, "restart_s": 0.10, "restart_phases": {"replay_s": 0.07, "recovery_s": 0.02}},
    "flat": {"records_replayed": 10_000, "restart_s": 0.5},
    "legacy_nfs3": {"restart_s": 9.0}, "new_nfs3": {"restart_s": 1.5},
    "legacy_san": {"restart_s": 2.0}, "new_san": {"restart_s": 1.0},
    "legacy_ssd": {"restart_s": 1.2}, "new_ssd": {"restart_s": 1.0},
}


def model_of(fig, metrics=RESTARTS):
    (result,) = figures_of({"figures": [fig]}, metrics).values()
    return result


def test_linear_r2_is_one_on_a_line_and_falls_with_a_point_off_it():
    line = figure("linear_r2", over=["k1", "k2", "k3"], x="records_replayed", y="restart_s")
    assert model_of(line)["model"] == pytest.approx(1.0)
    # (10k, .12) (20k, .14) (40k, .18) (30k, .10): Sxy = 700, Sxx = 5e8, Syy = 0.0035
    bent = figure("linear_r2", over=["k1", "k2", "k3", "off"], x="records_replayed", y="restart_s")
    assert model_of(bent)["model"] == pytest.approx(700 ** 2 / (5e8 * 0.0035))  # 0.28


def test_linear_r2_without_spread_has_no_value():
    same_x = figure("linear_r2", over=["k1", "flat", "k2"], x="records_replayed", y="restart_s")
    assert model_of(same_x)["model"] is not None  # two points share x, the third does not
    none = figure("linear_r2", over=["k1", "flat", "k1"], x="records_replayed", y="restart_s")
    result = model_of(none, {**RESTARTS, "flat": dict(RESTARTS["k1"])})
    assert result["model"] is None and not result["ok"] and "NO VALUE" in result["note"]


def test_share_and_ratio_read_dotted_restart_metrics():
    replay = model_of(figure("share", run="k3", part="restart_phases.replay_s", whole="restart_s"))
    assert replay["model"] == pytest.approx(0.15 / 0.18)
    assert model_of(figure("ratio", num="k1.restart_phases.recovery_s", den="k3.restart_phases.recovery_s"))[
        "model"] == pytest.approx(1.0)
    missing = model_of(figure("share", run="flat", part="restart_phases.replay_s", whole="restart_s"))
    assert missing["model"] is None and "restart_phases.replay_s" in missing["note"]


def test_gain_lead_is_the_lead_pairs_gain_over_the_largest_other():
    lead = figure("gain_lead", metric="restart_s", lead=["legacy_nfs3", "new_nfs3"],
                  others=[["legacy_san", "new_san"], ["legacy_ssd", "new_ssd"]])
    assert model_of(lead)["model"] == pytest.approx((9.0 / 1.5) / 2.0)
    behind = figure("gain_lead", metric="restart_s", lead=["legacy_ssd", "new_ssd"],
                    others=[["legacy_san", "new_san"], ["legacy_nfs3", "new_nfs3"]])
    assert model_of(behind)["model"] == pytest.approx(1.2 / 6.0)


@pytest.mark.parametrize("word, value, ok", [
    ("at least", 0.95, True), ("at least", 0.9499, False), ("at least", 7.0, True),
    ("more than", 0.95, False), ("more than", 0.9501, True),
    ("at most", 0.95, True), ("at most", 0.9501, False), ("at most", -3.0, True),
    ("less than", 0.95, False), ("less than", 0.9499, True),
])
def test_one_sided_tolerances_from_ibms_value(word, value, ok):
    fig = figure("ratio", ibm=0.95, tolerance=word, num="a.x", den="a.y")
    result = model_of(fig, {"a": {"x": value, "y": 1}})
    assert result["ok"] is ok and result["tolerance"] == f"{word} 0.95"


R1_LIKE = '''
[T2]
title = "crash and restart"
source = "nobody: a test"
[T2.runs.busy]
workload = "requester-responder"
params = { requesters = 4, responders = 4, queue_pairs = 2, rate = 2000, duration = 0.4, message_size = 1024 }
crash_at = 0.2
[T2.runs.slow]
workload = "requester-responder"
params = { requesters = 4, responders = 4, queue_pairs = 2, rate = 2000, duration = 0.4, message_size = 1024 }
crash_at = 0.2
restart = { mode = "legacy", device = "nfs3" }
[[T2.figures]]
name = "slower"
compute = "ratio"
num = "slow.restart_s"
den = "busy.restart_s"
ibm = 1
tolerance = "more than"
'''


def r1_like(edit=lambda t: t):
    import tomllib

    (case,) = parse_cases(tomllib.loads(edit(R1_LIKE)), "t").values()
    return case


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("crash_at = 0.2\n[T2.runs.slow]", "crash_at = -1\n[T2.runs.slow]"), "T2.runs.busy.crash_at"),
    (lambda t: t.replace("crash_at = 0.2\n[T2.runs.slow]", "crash_at = \"later\"\n[T2.runs.slow]"),
     "T2.runs.busy.crash_at"),
    (lambda t: t.replace("crash_at = 0.2\nrestart", "restart"), "T2.runs.slow.restart"),
    (lambda t: t.replace('mode = "legacy"', 'mode = "9.2"'), "T2.runs.slow.restart.mode"),
    (lambda t: t.replace('mode = "legacy"', 'modus = "legacy"'), "T2.runs.slow.restart.modus"),
    (lambda t: t.replace("crash_at = 0.2\n[T2.runs.slow]",
                         "before = { workload = \"deeep\" }\n[T2.runs.slow]"), "T2.runs.busy.before.workload"),
    (lambda t: t.replace("crash_at = 0.2\n[T2.runs.slow]",
                         "before = { workload = \"deep-queue\", params = { depth = -1 } }\n[T2.runs.slow]"),
     "T2.runs.busy.before.params.depth"),
    (lambda t: t.replace('tolerance = "more than"', 'tolerance = "roughly"'), "T2.figures.slower.tolerance"),
    (lambda t: t.replace('compute = "ratio"\nnum = "slow.restart_s"\nden = "busy.restart_s"',
                         'compute = "linear_r2"\nover = ["busy", "slow"]\nx = "records_replayed"\ny = "restart_s"'),
     "T2.figures.slower.over"),
    (lambda t: t.replace('compute = "ratio"\nnum = "slow.restart_s"\nden = "busy.restart_s"',
                         'compute = "linear_r2"\nover = ["busy", "slow", "fast"]\nx = "records_replayed"\ny = "s"'),
     "T2.figures.slower.over"),
    (lambda t: t.replace('compute = "ratio"\nnum = "slow.restart_s"\nden = "busy.restart_s"',
                         'compute = "gain_lead"\nmetric = "restart_s"\nlead = ["slow"]\nothers = [["busy", "slow"]]'),
     "T2.figures.slower.lead"),
    (lambda t: t.replace('compute = "ratio"\nnum = "slow.restart_s"\nden = "busy.restart_s"',
                         'compute = "gain_lead"\nmetric = "restart_s"\nlead = ["slow", "busy"]\nothers = ["busy"]'),
     "T2.figures.slower.others"),
])
def test_a_bad_crash_restart_or_shape_names_the_field(edit, field):
    import tomllib

    with pytest.raises(CalibrationCaseError) as caught:
        parse_cases(tomllib.loads(edit(R1_LIKE)), "r1.toml")
    message = str(caught.value)
    assert "r1.toml" in message and field in message and "\n" not in message


def test_a_crashed_run_is_restarted_as_its_case_says_and_reports_the_restart():
    result = run_case(r1_like())
    busy, slow = result["runs"]["busy"], result["runs"]["slow"]
    # the same crash (same workload, seed and crash time) ...
    assert busy["crashed"] and slow["crashed"] and busy["log_records"] == slow["log_records"]
    # ... restarted on the run's device as 9.1.1, and on nfs3 as legacy: both verified
    assert (busy["restart_mode"], busy["restart_device"]) == ("9.1.1", "ssd")
    assert (slow["restart_mode"], slow["restart_device"]) == ("legacy", "nfs3")
    assert busy["restart_verified"] and slow["restart_verified"]
    assert busy["records_replayed"] == slow["records_replayed"] > 0
    assert busy["restart_s"] == busy["restart"]["restart_virtual_s"] > 0
    assert result["figures"]["slower"]["ok"] and slow["restart_s"] > 3 * busy["restart_s"]
    assert run_case(r1_like()) == result  # deterministic, restart included


def test_the_device_override_reaches_the_restart_too():
    result = run_case(r1_like(), device="san")
    assert {(m["device"], m["restart_device"]) for m in result["runs"].values()} == {("san", "san")}


def test_a_crash_after_the_workload_ended_is_refused_naming_case_and_run():
    from mqlog.core.errors import CalibrationRunError

    case = r1_like(lambda t: t.replace(
        'workload = "requester-responder"\nparams = { requesters = 4, responders = 4, queue_pairs = 2, rate = 2000, '
        'duration = 0.4, message_size = 1024 }\ncrash_at = 0.2\n[T2.runs.slow]',
        'workload = "putget"\nparams = { messages = 20 }\ncrash_at = 9.0\n[T2.runs.slow]'))
    with pytest.raises(CalibrationRunError, match=r"case T2, run busy: crash_at = 9.0 s, but the workload ended"):
        run_case(case)


def test_a_restart_that_fails_verification_is_refused_not_computed(monkeypatch):
    from mqlog.core.errors import CalibrationRunError
    from mqlog.core.workload.journal import Journal, Verdict

    monkeypatch.setattr(Journal, "verify", lambda self, qm: Verdict(committed_missing=3))
    with pytest.raises(CalibrationRunError) as caught:
        run_case(r1_like())
    message = str(caught.value)
    assert "case T2, run busy" in message and "failed verification" in message and "committed_missing 3" in message


def test_a_before_workloads_messages_are_verified_after_the_runs_restart(monkeypatch):
    """The run starts on the files its before workload left (a deep queue here); the restart
    after the run's crash is verified against both journals."""
    from mqlog.core.errors import CalibrationRunError
    from mqlog.core.workload.journal import Journal, Verdict

    case = r1_like(lambda t: t.replace(
        "crash_at = 0.2\n[T2.runs.slow]",
        "crash_at = 0.2\nbefore = { workload = \"deep-queue\", params = { queues = 1, depth = 300, "
        "then_messages = 0, message_size = 512 } }\n[T2.runs.slow]"))
    deep = run_case(case)["runs"]["busy"]
    assert deep["restart_verified"] and deep["messages_put"] < 2 * deep["round_trips"] + 10  # its own puts only
    real = Journal.verify

    def deep_queue_lost(self, qm):  # the before journal sees its deep queue's messages gone
        if any(m.queue.startswith("DEEP.") for m in self.messages.values()):
            return Verdict(committed_missing=300)
        return real(self, qm)

    monkeypatch.setattr(Journal, "verify", deep_queue_lost)
    with pytest.raises(CalibrationRunError, match="before workload's journal"):
        run_case(case)


def test_a_scaled_case_runs_shorter_with_the_same_shape_settings():
    from mqlog.calibration.cases import scaled

    case = r1_like(lambda t: t.replace(
        "crash_at = 0.2\n[T2.runs.slow]",
        "crash_at = 0.2\nbefore = { workload = \"deep-queue\", params = { depth = 300 } }\n"
        "log = { CheckPointLogRecdMax = 20000 }\n[T2.runs.slow]"))
    small = scaled(case, 0.1)
    busy, slow = small["runs"]["busy"], small["runs"]["slow"]
    # The workload's own virtual seconds (its duration and crash point, spec settings, not a
    # measured time) shrink with the scale.
    full = case["runs"]["busy"]
    # (the same product scaled() computes, so equal to the bit)
    assert busy["params"]["duration"] == full["params"]["duration"] * 0.1
    assert busy["crash_at"] == full["crash_at"] * 0.1
    assert busy["params"]["rate"] == 2000 and busy["params"]["requesters"] == 4  # rates and apps stay
    assert busy["before"]["params"]["depth"] == 30 and busy["before"]["params"]["queues"] == 4
    # the checkpoint interval and the log files scale with the work, the given one and the default
    assert (busy["values"]["CheckPointLogRecdMax"], slow["values"]["CheckPointLogRecdMax"]) == (2000, 5000)
    assert slow["values"]["LogFilePages"] == 410
    assert slow["restart"] == {"mode": "legacy", "device": "nfs3"} and small["figures"] == case["figures"]
    assert scaled(case, 1.0) is case
    with pytest.raises(CalibrationCaseError, match="--scale"):
        scaled(case, 0)


def test_calibrate_scale_reaches_every_run(tmp_path, capsys, in_process, monkeypatch):
    import mqlog.spark.calibrate as job

    ran = {}
    monkeypatch.setattr(job, "run_cases", lambda spark, cases, *, device=None, host=None, progress=None: {
        c: run_case(ran.setdefault(c, case), device, host) for c, case in cases.items()})
    code, _, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path), "--scale", "0.5", "--json")
    assert code == 0, err
    assert ran["T1"]["runs"]["sw"]["params"]["messages"] == 10  # of 20
    code, _, err = mqlog(capsys, "calibrate", "--cases", tiny(tmp_path), "--scale", "0")
    assert code == 2 and "--scale" in err and "Traceback" not in err


def test_the_docs_runs_line_says_what_sets_each_run_apart():
    # Runs that differ only in their crash time, restart, device or parameters must not read
    # alike in docs/calibration.md: the "Runs." line names each of these.
    r1 = load_cases(only=["R1"])["R1"]
    runs = {name: report._run_text(run) for name, run in r1["runs"].items()}
    assert len(set(runs.values())) == len(runs)
    assert "crashed at 1.25 s, restarted 9.1.1" in runs["busy_1250ms"] and "on san" in runs["busy_1250ms"]
    assert "restarted legacy on nfs3" in runs["legacy_nfs3"]
    assert "transactions=3200" in runs["units3200"] and "crashed at the workload's end" in runs["units3200"]
    assert "after a clean run of deep-queue" in runs["deep"]
    d1 = load_cases(only=["D1"])["D1"]["runs"]["sw"]
    assert "crashed" not in report._run_text(d1) and "LogWriteIntegrity=SingleWrite" in report._run_text(d1)
