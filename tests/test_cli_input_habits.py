"""Issue 22, part B: the command line reads input with MQ's own habits, through the real entry
point: names and enumerated values in any case (the canonical spelling stored and printed),
unknown names reported as unknown with the closest ones, CSQ6LOGP's own names on z/OS, spec
values of the wrong type refused, a key given twice refused, the same seed range everywhere,
and a warning before a long run."""

from __future__ import annotations

import itertools
import json

from clikit import mqlog, one_line_error

SMALL = ("--workload", "putget-pairs", "--set", "workload.messages_per_pair=3")


# ------------------------------------------------------------------------------ names in any case

def test_platform_names_are_read_in_any_case_and_stored_canonically(tmp_path):
    out = mqlog("run", "--platform", "ZOS", *SMALL, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["platform"] == "zos"
    out = mqlog("run", "--platform", "Distributed", *SMALL, "--out", tmp_path / "r")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "r" / "run.json").read_text())["platform"] == "distributed"
    out = mqlog("config", "--platform", "Zos", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["platform"] == "zos"
    one_line_error(mqlog("config", "--platform", "zOS390"), "--platform", "zos")


def test_enumerated_values_are_read_in_any_case_and_printed_canonically():
    out = mqlog("config", "--platform", "distributed", "--set", "log.LogType=circular",
                "--set", "log.LogWriteIntegrity=triplewrite", "--json")
    assert out.returncode == 0, out.stderr
    log = json.loads(out.stdout)["log"]
    assert (log["LogType"], log["LogWriteIntegrity"]) == ("CIRCULAR", "TripleWrite")
    out = mqlog("config", "--platform", "zos", "--set", "log.TWOACTV=yes", "--set", "log.COMPLOG=rle", "--json")
    assert out.returncode == 0, out.stderr
    log = json.loads(out.stdout)["log"]
    assert (log["TWOACTV"], log["COMPLOG"]) == ("YES", "RLE")
    out = mqlog("run", "--platform", "reference", *SMALL, "--set", "workload.PAYLOAD=Padded-Records",
                "--set", "workload.Pairs=2", "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["messages_put"] == 2 * 3


def test_restart_mode_is_read_in_any_case(tmp_path):
    out = mqlog("run", "--platform", "distributed", *SMALL, "--out", tmp_path / "r", "--crash-at", "end")
    assert out.returncode == 0, out.stderr
    out = mqlog("restart", tmp_path / "r", "--restart-mode", "LEGACY", "--verify", "--json")
    assert out.returncode == 0, out.stderr


def test_a_matrix_and_torture_read_platform_and_restart_mode_in_any_case(tmp_path):
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[[config]]\nname = "a"\nplatform = "Distributed"\nrestart_mode = "LEGACY"\n')
    for where in (("--matrix", matrix), ("--platform", "ZOS")):
        out = mqlog("torture", *where, *SMALL, "--budget", "2", "--json")
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        (config,) = doc["configs"] if "configs" in doc else [doc]  # a matrix reports each configuration
        assert config["platform"] == {"--matrix": "distributed", "--platform": "zos"}[where[0]]


# ------------------------------------------------------------------------ unknown names

def test_an_unknown_parameter_name_is_unknown_with_the_closest_names_not_a_bad_value():
    for item, closest in (("log.LogFilePagez=10", "LogFilePages"), ("workload.pairz=3", "pairs"),
                          ("qmgr.MAXUMSG=5", "MAXUMSGS")):
        out = mqlog("run", "--platform", "distributed", *SMALL, "--set", item)
        one_line_error(out, item.split("=")[0], "unknown", "did you mean", closest)
        assert "is not valid" not in out.stderr
    out = mqlog("config", "--platform", "zos", "--set", "log.OUTBUF=4000")
    one_line_error(out, "log.OUTBUF", "unknown", "OUTBUFF")
    out = mqlog("run", "--platform", "reference", *SMALL, "--set", "log.write_treshold_pages=4")
    one_line_error(out, "log.write_treshold_pages", "unknown", "write_threshold_pages")


def test_an_unknown_name_in_a_spec_file_or_a_matrix_is_unknown_with_the_closest_names(tmp_path):
    cases = {"params": ("messages_per_pairz = 3", "params.messages_per_pairz", "messages_per_pair"),
             "log": ("LogFilePagez = 10", "log.LogFilePagez", "LogFilePages"),
             "qmgr": ("MAXUMSG = 10", "qmgr.MAXUMSG", "MAXUMSGS")}
    for table, (line, name, closest) in cases.items():
        spec = tmp_path / f"{table}.toml"
        spec.write_text(f'workload = "putget-pairs"\n[{table}]\n{line}\n')
        out = mqlog("run", "--platform", "distributed", "--workload", spec)
        one_line_error(out, name, "unknown", "did you mean", closest)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[[config]]\nname = "a"\nplatform = "distributed"\n[config.log]\nLogFilePagez = 10\n')
    out = mqlog("compare", "--workload", "putget-pairs", "--matrix", matrix, "--out", tmp_path / "c")
    one_line_error(out, "configuration 'a'", "log.LogFilePagez", "unknown", "LogFilePages")


# ------------------------------------------------------------------------ MQ's own names

#: IBM MQ for z/OS, "Using CSQ6LOGP" (with ZHYWRITE and ZHYLINK), "Using CSQ6SYSP" and "Using
#: CSQ6ARVP": the keywords of the parameters the model has; written out here, not taken from the model
IBM_ZOS_KEYWORDS = {"COMPLOG", "DEALLCT", "INBUFF", "MAXARCH", "MAXCNOFF", "MAXRTU", "OFFLOAD", "OUTBUFF",
                    "TWOACTV", "TWOARCH", "TWOBSDS", "WRTHRSH", "ZHYWRITE", "ZHYLINK", "LOGLOAD", "ARCPFX1",
                    "ARCPFX2", "BUFFERS"}  # (BUFFERS: DEFINE BUFFPOOL's)
#: IBM MQ, "Log stanza of the qm.ini file" (the model also takes LogDefaults' LogDefaultPath for LogPath)
IBM_QMINI_LOG_KEYS = {"LogPrimaryFiles", "LogSecondaryFiles", "LogFilePages", "LogType", "LogBufferPages",
                      "LogPath", "LogWriteIntegrity", "LogManagement", "CheckPointLogRecdMax",
                      "CheckPointLogRecdMin", "CheckPointWaitLen", "DefaultPQBufferSize"}


def test_config_says_which_parameters_are_the_models_own_and_not_mqs():
    for platform, real, source in (("zos", IBM_ZOS_KEYWORDS, "CSQ6LOGP"), ("distributed", IBM_QMINI_LOG_KEYS, "qm.ini"),
                                   ("reference", set(), "real queue manager")):
        out = mqlog("config", "--platform", platform, "--json")
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert set(doc["model_only"]) == set(doc["log"]) - real, platform
        assert doc["model_only"], platform  # every platform has settings of the model's own
        text = mqlog("config", "--platform", platform)
        lines = text.stdout.splitlines()
        starts = [i for i, x in enumerate(lines) if x.startswith("model only")]
        # the line, with what a narrow terminal wrapped under it (indented)
        line = [" ".join(y.strip() for y in [lines[i], *itertools.takewhile(lambda y: y.startswith("  "),
                                                                            lines[i + 1:])]) for i in starts]
        assert len(line) == 1 and source in line[0] and all(name in line[0] for name in doc["model_only"]), text.stdout
    # the z/OS names a professional types are IBM's, in any case
    out = mqlog("config", "--platform", "zos", "--set", "log.outbuff=400", "--set", "log.MaxCnOff=4", "--json")
    assert out.returncode == 0, out.stderr
    assert (json.loads(out.stdout)["log"]["OUTBUFF"], json.loads(out.stdout)["log"]["MAXCNOFF"]) == (400, 4)


# ------------------------------------------------------------------------ types in a spec file

def test_a_spec_value_of_the_wrong_type_is_refused_naming_the_field_and_the_type(tmp_path):
    for line, field, expected in (('messages_per_pair = "5"', "params.messages_per_pair", "an integer"),
                                  ('persistent = "yes"', "params.persistent", "true or false"),
                                  ('think_us = "0.5"', "params.think_us", "a number")):
        spec = tmp_path / "spec.toml"
        spec.write_text(f'workload = "putget-pairs"\n[params]\n{line}\n')
        out = mqlog("run", "--platform", "distributed", "--workload", spec)
        one_line_error(out, str(spec), field, f"expected {expected}")
    # the same values typed as TOML types run; on the command line --set stays text, parsed
    spec.write_text('workload = "putget-pairs"\n[params]\nmessages_per_pair = 5\npersistent = true\n'
                    'think_us = 0.5\n')
    out = mqlog("run", "--platform", "distributed", "--workload", spec, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["messages_put"] == 5
    out = mqlog("run", "--platform", "distributed", "--workload", spec, "--set", "workload.messages_per_pair=7",
                "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["messages_put"] == 7


# ------------------------------------------------------------------------ a key given twice

def test_a_set_key_given_twice_is_refused_naming_it_on_every_command_that_takes_set(tmp_path):
    twice = {"workload": ("workload.pairs=3", "workload.pairs=4"), "cased": ("workload.pairs=3", "workload.PAIRS=3"),
             "log": ("log.LogFilePages=3000", "log.logfilepages=3000"), "qmgr": ("qmgr.MAXUMSGS=5", "qmgr.maxumsgs=6")}
    commands = {"run": ("run", "--platform", "distributed", *SMALL),
                "torture": ("torture", "--platform", "distributed", *SMALL, "--budget", "1"),
                "compare": ("compare", *SMALL, "--out", tmp_path / "c")}
    for command, args in commands.items():
        for kind, (first, second) in twice.items():
            if command == "compare" and kind == "log":
                continue  # compare takes no log.* items: its matrix holds them
            out = mqlog(*args, "--set", first, "--set", second)
            one_line_error(out, "given twice", first.split("=")[0].lower(), second)
    for first, second in (("log.LogFilePages=3000", "log.LOGFILEPAGES=4000"), ("log.LogPath=/a", "log.LogDefaultPath=/b")):
        out = mqlog("config", "--platform", "distributed", "--set", first, "--set", second)
        one_line_error(out, first.split("=")[0], second.split("=")[0])


# ------------------------------------------------------------------------ seeds

def test_groupcommit_refuses_a_seed_out_of_range_as_run_does():
    for seed in ("-5", str(2**64)):
        run = mqlog("run", "--platform", "distributed", *SMALL, "--seed", seed)
        group = mqlog("groupcommit", "--committers", "1", "--commits", "2", "--seed", seed)
        one_line_error(run, "--seed", seed)
        one_line_error(group, "--seed", seed)
        assert group.stderr.replace("groupcommit", "run") == run.stderr  # the same range, the same words
    out = mqlog("groupcommit", "--committers", "1", "--commits", "2", "--seed", str(2**64 - 1), "--json")
    assert out.returncode == 0, out.stderr


# ------------------------------------------------------------------------ long runs

def test_a_run_estimated_to_be_long_says_so_before_it_starts_and_a_short_one_does_not():
    rr = ("run", "--platform", "distributed", "--workload", "requester-responder")
    # a day of virtual time: announced; the plug pulled after 5 writes keeps the test short
    out = mqlog(*rr, "--set", "workload.duration=86400", "--crash-after-writes", "5", "--json")
    assert out.returncode == 0, out.stderr
    json.loads(out.stdout)  # stdout stays one JSON document
    (line,) = [x for x in out.stderr.splitlines() if "wall time" in x]
    assert "days" in line and "MQI calls" in line and "workload.duration" in line and "86400" in line
    out = mqlog("run", "--platform", "zos", "--workload", "log-fill", "--set", "workload.messages=100000000",
                "--crash-after-writes", "5", "--json")
    assert out.returncode == 0, out.stderr
    assert "wall time" in out.stderr and "workload.messages" in out.stderr
    out = mqlog("run", "--platform", "reference", "--workload", "long-uow", "--set", "workload.duration=86400",
                "--crash-after-writes", "5", "--json")  # a workload without think_us
    assert out.returncode == 0, out.stderr
    assert "wall time" in out.stderr and "workload.duration" in out.stderr
    # short runs say nothing: a small duration, a small count, a long duration cut short by --crash-at
    for args in ((*rr, "--set", "workload.duration=0.01"), ("run", "--platform", "zos", *SMALL),
                 (*rr, "--set", "workload.duration=86400", "--crash-at", "0.01")):
        out = mqlog(*args, "--json")
        assert out.returncode == 0, out.stderr
        assert out.stderr == "", out.stderr
