"""The z/OS job log in MQ for z/OS's habits (issue 22), driven through the command line: a unit
of recovery is named by its URID – the RBA of its first log record, the one `mqlog print`
shows it beginning at –, each successful round of log shunting issues CSQR026I, and every
line carries its virtual time of day as a JES job log line does."""

from __future__ import annotations

import json
import re

import pytest

from clikit import mqlog

#: a z/OS run whose long-running unit of work is shunted again and again and reported as
#: long-running at the log switches (the workload of test_zos_utilities_from_the_command_line)
LONG_UOW = ["--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.1",
            "--set", "log.ACTIVE_LOG_CIS=16", "--set", "log.COMPLOG=RLE",
            "--set", "workload.payload=padded-records"]


@pytest.fixture(scope="module")
def long_uow_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("zos-console")
    run = mqlog("run", *LONG_UOW, "--out", out, "--json")
    assert run.returncode == 0, run.stderr
    printed = mqlog("print", out, "--json")
    assert printed.returncode == 0, printed.stderr
    return out, json.loads(run.stdout), json.loads(printed.stdout)


#: a job log line: the virtual time of day, hh.mm.ss.ffffff, then the message
STAMPED = re.compile(r"(\d\d)\.(\d\d)\.(\d\d)\.(\d{6}) (.*)")
#: the date line JES writes first and at midnight
DATE = re.compile(r"---- [A-Z]+DAY, \d\d [A-Z]{3} \d{4} ----")


def _stamped(out) -> list[tuple[float, str]]:
    """The job log's lines, each as (seconds of the day, message); every line is stamped or a date line."""
    lines = []
    for line in (out / "CSQMSTR.JESMSGLG").read_text().splitlines():
        found = STAMPED.fullmatch(line)
        assert found or DATE.fullmatch(line), line
        if found:
            h, m, s, us, text = found.groups()
            lines.append((int(h) * 3600 + int(m) * 60 + int(s) + int(us) / 1e6, text))
    return lines


def _job_log(out) -> list[str]:
    return [text for _, text in _stamped(out)]


def test_every_urid_in_the_job_log_is_the_rba_of_that_units_first_record_in_the_print(long_uow_run):
    out, _, printed = long_uow_run
    begins = {r["address_text"]: r for r in printed["records"] if r["type"] == "BEGIN"}
    named = [(line, m.group(1)) for line in _job_log(out) for m in [re.search(r"URID=([0-9A-F]+)", line)] if m]
    assert "CSQJ161I" in {line.split()[0] for line, _ in named}
    for line, urid in named:
        assert urid in begins, line  # an RBA, as wide as the print's, where the unit begins
        # and every record the print gives that unit names the same URID
        assert {r["urid_hex"] for r in printed["records"] if r["uow"] == begins[urid]["uow"]} == {urid}
    # selecting by that URID prints the unit from its first record on
    urid = named[0][1]
    listing = mqlog("print", out, "--urid", urid)
    assert listing.returncode == 0, listing.stderr
    records = [line for line in listing.stdout.splitlines() if line[:1].isalnum() and "  URID(" in line]
    assert records[0].startswith(f"{urid}  URID({urid}) RM(RECOVERY) TYPE(BEGIN)")
    assert all(f"URID({urid})" in line for line in records)


def test_each_successful_round_of_shunting_issues_csqr026i_with_the_rba_it_was_shunted_to(long_uow_run):
    out, metrics, printed = long_uow_run
    shunted = [line for line in _job_log(out) if line.startswith("CSQR026I ")]
    assert metrics["shunts"] > 0 and len(shunted) == metrics["shunts"]
    shunts = {r["address_text"]: r for r in printed["records"] if r["type"] == "SHUNT"}
    for line in shunted:
        found = re.fullmatch(r"CSQR026I CSQ1 LONG-RUNNING UOW SHUNTED TO RBA=([0-9A-F]+), URID=([0-9A-F]+) "
                             r"CONNECTION NAME=LONGUOW", line)
        assert found, line
        rba, urid = found.groups()
        # the round starts with a shunt record of that unit (IBM: "shunted to RBA=")
        assert shunts[rba]["urid_hex"] == urid


def test_job_log_lines_carry_virtual_times_that_never_go_back_and_a_restart_comes_after_the_run(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        run = mqlog("run", *LONG_UOW, "--crash-at", "end", "--out", out, "--json")
        assert run.returncode == 0, run.stderr
        ran = _stamped(out)
        restart = mqlog("restart", out, "--verify")
        assert restart.returncode == 0, restart.stderr
        runs.append((out, json.loads(run.stdout), ran, _stamped(out)))
    out, metrics, ran, after = runs[0]
    times = [t for t, _ in after]
    assert times == sorted(times) and len(set(times)) > 10  # stamped from the run's clock, never going back
    assert 0 < ran[-1][0] <= metrics["virtual_s"]  # the run's lines within the run
    restarted = after[len(ran):]
    assert restarted[0][1].startswith("CSQR001I ")
    assert restarted[0][0] > metrics["virtual_s"]  # the restart's lines after the run's end
    # the same spec and seed: the same job log, byte for byte (virtual time, never the wall clock)
    assert (runs[0][0] / "CSQMSTR.JESMSGLG").read_bytes() == (runs[1][0] / "CSQMSTR.JESMSGLG").read_bytes()
