"""Issue 22's smaller gaps, through the real command line: a spec file's ``[log]`` problems
name the file, a workload error has one prefix, sweep and calibration files refuse a value of
the wrong TOML type, ``restart --json`` words a clean end of the log as the text does, the
long-run estimate, ``devices`` fitting the terminal and ``print``'s archive log."""

from __future__ import annotations

import pytest

from test_cli_json import TINY_CASES
from clikit import mqlog, one_line_error

SMALL = ("--workload", "putget-pairs", "--set", "workload.pairs=1", "--set", "workload.messages_per_pair=3")


def _spec(tmp_path, log_line: str):
    spec = tmp_path / "spec.toml"
    spec.write_text(f'workload = "putget-pairs"\n[params]\npairs = 1\nmessages_per_pair = 3\n[log]\n{log_line}\n')
    return spec


# ------------------------------------------------------------------ a: [log] names the file

def test_a_bad_name_or_value_in_a_spec_files_log_table_names_the_file(tmp_path):
    for line, words in (("LogFilePagez = 64", ("log.LogFilePagez", "unknown", "LogFilePages")),
                        ("LogFilePages = 1", ("log.LogFilePages=1", "64 to 65535"))):
        spec = _spec(tmp_path, line)
        for command in ("run", "torture"):
            out = mqlog(command, "--platform", "distributed", "--workload", spec)
            one_line_error(out, *words)
            assert f"error: {spec}: log.LogFilePage" in out.stderr, out.stderr


def test_a_log_value_the_command_line_gives_is_not_blamed_on_the_file(tmp_path):
    """A --set log.X over the file's value is the command line's: its error names no file, and a
    file value a --set replaced is not checked on its own."""
    spec = _spec(tmp_path, "LogFilePages = 1")
    out = mqlog("run", "--platform", "distributed", "--workload", spec, "--set", "log.LogFilePages=2")
    one_line_error(out, "log.LogFilePages=2 is not valid")
    assert str(spec) not in out.stderr
    out = mqlog("run", "--platform", "distributed", "--workload", spec, "--set", "log.LogFilePages=64", "--json")
    assert out.returncode == 0, out.stderr


# ------------------------------------------------------------------ b: one prefix

def test_a_workload_parameter_error_has_one_prefix_its_field():
    for item, words in (("workload.pairz=1", ("unknown parameter", "did you mean 'pairs'")),
                        ("workload.think_us=x", ("expected",))):
        out = mqlog("run", "--platform", "distributed", *SMALL, "--set", item)
        one_line_error(out, *words)
        assert out.stderr.startswith(f"mqlog: error: {item.split('=')[0]}: "), out.stderr


def test_a_set_over_a_spec_file_is_not_blamed_on_the_file(tmp_path):
    spec = _spec(tmp_path, "LogFilePages = 64")
    out = mqlog("run", "--platform", "distributed", "--workload", spec, "--set", "workload.pairs=0")
    one_line_error(out, "workload.pairs=0 is not valid")
    assert out.stderr.startswith("mqlog: error: workload.pairs=0"), out.stderr


# ------------------------------------------------------------------ c: typed TOML

SWEEP = '''workload = "putget-pairs"
seeds = [SEED]
[params]
pairs = 1
messages_per_pair = PAIRS
[grid]
message_size = [SIZE]
[[config]]
name = "dist"
platform = "distributed"
'''

# test_cli_json's tiny calibration case, with its message count to be filled in
CASES = TINY_CASES.lstrip().replace("messages = 10,", "messages = MESSAGES,")


def _sweep(tmp_path, **values):
    text = SWEEP
    for key, value in {"SEED": "1", "PAIRS": "5", "SIZE": "500", **values}.items():
        text = text.replace(key, value)
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_a_sweep_file_refuses_a_string_where_a_number_belongs_naming_the_file_and_field(tmp_path):
    for given, field in (({"PAIRS": '"5"'}, "params.messages_per_pair"), ({"SIZE": '"500"'}, "grid.message_size"),
                         ({"SEED": '"1"'}, "seeds")):
        path = _sweep(tmp_path, **given)
        one_line_error(mqlog("sweep", path, "--list"), f"{path}: ", field, "'")
    out = mqlog("sweep", _sweep(tmp_path), "--list")  # the same file with numbers lists its cell
    assert out.returncode == 0 and "workload.message_size=500" in out.stdout, out.stderr


def test_a_calibration_case_file_refuses_a_string_where_a_number_belongs(tmp_path):
    """The case file is checked before Spark starts: --only names a case that is not there, so a
    good file fails on that and a bad one on its value."""
    path = tmp_path / "cases.toml"
    path.write_text(CASES.replace("MESSAGES", '"10"'))
    out = mqlog("calibrate", "--cases", path, "--only", "T9")
    one_line_error(out, f"{path}: T1.runs.sw.params.messages: expected an integer", "got '10'")
    path.write_text(CASES.replace("MESSAGES", "10"))
    one_line_error(mqlog("calibrate", "--cases", path, "--only", "T9"), "'T9': no such case")


# ------------------------------------------------------------------ d: restart's end of log

BIG = ("--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
       "--set", "workload.messages_per_pair=50", "--set", "workload.message_size=200000")


def test_restart_json_words_the_end_of_the_log_as_its_text_does(tmp_path, capsys):
    """A crash while a record's write is on its way leaves the log ending in space never
    written: the console says "end of written log" (the record cut short was never
    acknowledged), and --json must say the same, not "incomplete". Crash points in turn until
    one leaves the last record cut short: each run's two outputs agree, and that end is found.

    Which crash does it moves with the writer: on main crashes at 0.0029-0.0033 virtual s did;
    since issue 38 a cycle writes everything buffered and none of those ends inside a record
    (nor any crash time from 0.002 to 0.005 s by 20 us). A crash between the physical writes of
    one cycle does: 12 writes in, TripleWrite's spare copy of the first 200 KB put's first page
    has landed and the in-place run holding the rest of the put has not. The crash points are
    tried in-process, the one found again through the real command line."""
    import json
    import shutil

    from mqlog.cli import main

    def outputs(run, *command):
        shutil.copytree(run, tmp_path / "copy")
        capsys.readouterr()
        assert main(["restart", str(run), "--verify"]) == 0
        text = capsys.readouterr().out
        assert main(["restart", str(tmp_path / "copy"), "--verify", "--json"]) == 0
        document = capsys.readouterr().out
        shutil.rmtree(tmp_path / "copy")
        return text, document

    def agree(text, document, at):
        end = json.loads(document)["end_of_log"]
        said_cut = "end of written log" in text and "cut short" in text
        assert end["reason"] == "end" and end["last_record_cut_short"] is said_cut, (at, end, text)
        return said_cut

    for writes in range(4, 41):  # the first three leave no log to end
        run = tmp_path / f"crash-{writes}"
        assert main(["run", *BIG, "--crash-after-writes", str(writes), "--out", str(run)]) == 0
        if agree(*outputs(run), writes):
            break
    else:
        pytest.fail("no crash point in the first 40 writes left the log's last record cut short")
    again = tmp_path / "again"
    assert mqlog("run", *BIG, "--crash-after-writes", str(writes), "--out", again).returncode == 0
    shutil.copytree(again, tmp_path / "copy")
    text = mqlog("restart", again, "--verify")
    document = mqlog("restart", tmp_path / "copy", "--verify", "--json")
    assert text.returncode == 0 and document.returncode == 0, (text.stderr, document.stderr)
    assert agree(text.stdout, document.stdout, writes)


# ------------------------------------------------------------------ e: the long-run estimate

def test_the_long_run_warning_prints_the_estimate_core_workload_makes():
    """The estimate lives with the spec (mqlog.core.workload.estimate), the command line prints
    it: the calls and the parameter to lower in the warning are the core's for the same spec,
    and a spec the core does not call long gets no warning."""
    import re

    from mqlog.core.workload.estimate import estimate_wall
    from mqlog.core.workload.spec import BUILTINS, build_spec

    rr = ("run", "--platform", "reference", "--workload", "requester-responder", "--crash-after-writes", "5")
    for duration in (86400, 0.5):
        spec = build_spec(BUILTINS["requester-responder"], {"duration": duration}, origin="")
        estimate = estimate_wall(spec)
        out = mqlog(*rr, "--set", f"workload.duration={duration}", "--json")
        assert out.returncode == 0, out.stderr
        warned = [line for line in out.stderr.splitlines() if "wall time" in line]
        assert bool(warned) is estimate.long, (duration, estimate, out.stderr)
        if warned:
            calls = re.search(r"about ([\d,]+) MQI calls", warned[0]).group(1)
            assert calls == f"{estimate.calls:,.0f}" and f"lower workload.{estimate.scale} " in warned[0]
    assert estimate_wall(build_spec(BUILTINS["requester-responder"], {"duration": 86400}, origin="")).long


# ------------------------------------------------------------------ f: devices fits as config does

def test_devices_lays_out_a_narrow_terminal_as_config_and_compare_do():
    """``mqlog devices`` at COLUMNS=100: each profile is exactly what group.fitted makes of its
    figures and description (the one helper config and compare use), so a description that
    fits stays on its row, one that does not goes under it, and no line is wider."""
    import os
    import subprocess
    import sys

    from mqlog.cli.group import fitted
    from mqlog.core.disk.devices import load_profiles

    out = subprocess.run([sys.executable, "-m", "mqlog", "devices"], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, COLUMNS="100"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 100 and lines[0].endswith("  description")
    printed = lines[1:]
    figures_end = lines[0].index("atomic") + len("atomic")  # the figures' columns end with the atomic block
    for p in load_profiles(None).values():
        row = next(n for n, line in enumerate(printed) if line.startswith(f"{p.name} "))
        assert printed[row][:figures_end].endswith(f"{p.queue_depth:>5} {p.atomic_write_bytes:>6}"), p.name
        head = printed[row][:figures_end] + "  "
        expected = fitted(head, p.description, 100)
        assert printed[row:row + len(expected)] == expected, p.name
    inline = [line for line in printed if line.startswith("ssd ")]
    assert inline and inline[0].endswith("local NVMe SSD")  # short enough to stay on its row


# ------------------------------------------------------------------ g: print and the archived log

ZOS = ("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=2",
       "--set", "workload.messages_per_pair=400", "--set", "workload.message_size=2000",
       "--set", "log.ACTIVE_LOG_CIS=16")


def test_print_reads_the_archived_log_and_says_why_log_no_longer_recorded_is_missing(tmp_path):
    """A z/OS run that offloads many times: with every archive recorded, print reads from RBA 0
    through the archives; with MAXARCH(10) the BSDS forgets the oldest, and a range in them
    prints nothing, saying why, instead of an empty listing that ends "RBAEND reached"."""
    import json

    kept, dropped = tmp_path / "kept", tmp_path / "dropped"
    assert mqlog(*ZOS, "--out", kept).returncode == 0
    assert mqlog(*ZOS, "--set", "log.MAXARCH=10", "--out", dropped).returncode == 0
    assert sorted(p.name for p in (kept / "qm").glob("CSQARC1.A*"))  # it did offload

    whole = json.loads(mqlog("print", kept, "--rba-start", "0", "--rba-end", "100", "--json").stdout)
    assert whole["read"]["oldest"] == "0000000000000000" and whole["read"]["records_read"] > 0
    assert whole["read"]["before_oldest"] is None

    out = mqlog("print", dropped, "--rba-start", "0", "--rba-end", "100")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # (the listing wraps its lines to COLUMNS)
    assert "0 RECORDS PRINTED" in text and "RBAEND reached" not in text
    assert "RBAEND is before the oldest RBA available" in text
    assert "DROPPED FROM THE BSDS (MAXARCH(10))" in text
    read = json.loads(mqlog("print", dropped, "--json").stdout)["read"]
    assert read["oldest"] != "0000000000000000" and "MAXARCH(10)" in read["before_oldest"]
