"""One output contract (issue 22): every subcommand of the ``mqlog`` group takes ``--json`` and
prints exactly one valid JSON document on stdout, through the real command line.

The commands come from the click group itself, so a command added without a case here fails
:func:`test_every_command_has_a_json_case` instead of being forgotten. The run directories
the commands read are made once per module by ``mqlog run``; a command that changes its
directory gets a copy. The Spark commands run on the smallest input that is a real one
(a one-configuration matrix, a one-cell sweep, a one-run calibration case).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from clikit import mqlog

from mqlog.cli import cli

SPARK = "local[1]"

TINY_CASES = '''
[T1]
title = "a tiny case"
source = "nobody: a test"
[T1.runs.sw]
workload = "putget"
params = { apps = 1, messages = 10, message_size = 100 }
[[T1.figures]]
name = "got_per_put"
compute = "ratio"
num = "sw.messages_got"
den = "sw.messages_put"
ibm = 1.0
tolerance = 0.1
'''

ONE_CELL_SWEEP = '''
workload = "putget-pairs"
seeds = [1]
[params]
pairs = 1
messages_per_pair = 5
[grid]
message_size = [500]
[[config]]
name = "dist"
platform = "distributed"
'''

ONE_CONFIG_MATRIX = '[[config]]\nname = "dist"\nplatform = "distributed"\n'

SMALL_WORKLOAD = ["--workload", "putget-pairs", "--set", "workload.pairs=1", "--set", "workload.messages_per_pair=5"]


def ok(out):
    assert out.returncode == 0, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    return out


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The inputs every case may use: a distributed run (linear log, archived extents managed),
    a z/OS run, a log file, an mqldt CSV, a cases file, a sweep and a matrix."""
    root = tmp_path_factory.mktemp("json")
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
             "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64", "--set", "log.LogType=LINEAR",
             "--set", "log.LogManagement=Archive", "--out", root / "dist"))
    ok(mqlog("run", "--platform", "zos", *SMALL_WORKLOAD, "--out", root / "zos"))
    ok(mqlog("groupcommit", "--committers", "1", "--commits", "3", "--out", root / "gc"))
    ok(mqlog("mqldt", "--bsize", "4K,16K,64K", "--duration", "1", "--csvFile", root / "mqldt.csv"))
    (root / "cases.toml").write_text(TINY_CASES)
    (root / "sweep.toml").write_text(ONE_CELL_SWEEP)
    (root / "matrix.toml").write_text(ONE_CONFIG_MATRIX)
    return root


@pytest.fixture(scope="module")
def compared(place):
    """``compare --json`` on the one-configuration matrix, once (Spark starts slowly): what it
    printed, for compare's case, and its output directory, for ``report``'s."""
    _need_java()
    out = mqlog("compare", *SMALL_WORKLOAD, "--matrix", place / "matrix.toml", "--master", SPARK,
                "--out", place / "compared", "--json")
    return out, place / "compared"


def _need_java():
    # the Spark tests' rule (tests/spark/conftest.py): a skip on a machine without Java, a
    # failure under CI=true, where CI installs it and a skip would hide a check that never ran
    home = os.environ.get("JAVA_HOME")
    if shutil.which(os.path.join(home, "bin", "java") if home else "java"):
        return
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail("CI=true: Java is not installed; CI installs it", pytrace=False)
    pytest.skip("Java is not installed (apt-get install openjdk-17-jre-headless)")


def _docs_page(tmp_path):
    """A page for ``mqlog docs``: one generated table (of ``mqlog hosts``) and a claim on it."""
    page = tmp_path / "page.md"
    page.write_text('<!-- mqlog docs: table h view=fields rows=hosts columns="host=name"\nmqlog hosts --json\n-->\n'
                    "| host |\n|---|\n| v93-xeon |\n| v91-xeon |\n| z14-3cp |\n<!-- mqlog docs: end -->\n")
    return page


def copy(place, tmp_path, name):
    """A copy of a run directory, for a command that changes the one it is given."""
    return shutil.copytree(place / name, tmp_path / name)


def _topology(tmp_path):
    """A small topology run directory (two Linux queue managers, one channel)."""
    out = tmp_path / "topology"
    if not out.exists():
        ran = mqlog("topology", "run", "linux-feed", "--set", "workload.putters=1", "--set", "workload.messages_per_putter=5",
                    "--out", out)
        assert ran.returncode == 0, ran.stderr
    return out


#: (command, what the case is, its arguments from (place, tmp_path, request); --json is added;
#: or what a fixture's run of the command printed)
CASES = [
    ("bsds", "", lambda p, t, r: ["bsds", p / "zos"]),
    ("calibrate", "one tiny case", lambda p, t, r: ["calibrate", "--cases", p / "cases.toml", "--master", SPARK]),
    ("commands", "", lambda p, t, r: ["commands"]),
    ("compare", "one configuration", lambda p, t, r: r.getfixturevalue("compared")[0]),
    ("compare", "--list", lambda p, t, r: ["compare", "--list"]),
    ("config", "distributed", lambda p, t, r: ["config", "--platform", "distributed"]),
    ("config", "zos", lambda p, t, r: ["config", "--platform", "zos"]),
    ("config", "reference", lambda p, t, r: ["config", "--platform", "reference"]),
    ("convert-rba", "", lambda p, t, r: ["convert-rba", copy(p, t, "zos")]),
    ("devices", "", lambda p, t, r: ["devices"]),
    ("docs", "a page with a claim", lambda p, t, r: ["docs", _docs_page(t)]),
    ("docs", "--list", lambda p, t, r: ["docs", "--list"]),
    ("devices", "--from-mqldt", lambda p, t, r: ["devices", "--from-mqldt", p / "mqldt.csv", "-o", t / "fit.toml"]),
    ("dmpmqlog", "--base", lambda p, t, r: ["dmpmqlog", p / "dist", "--base"]),
    ("dump", "", lambda p, t, r: ["dump", p / "dist"]),
    ("groupcommit", "", lambda p, t, r: ["groupcommit", "--committers", "1,2", "--commits", "3"]),
    ("history", "", lambda p, t, r: ["history", p / "dist"]),
    ("hosts", "", lambda p, t, r: ["hosts"]),
    ("layout", "", lambda p, t, r: ["layout"]),
    ("mqldt", "", lambda p, t, r: ["mqldt", "--bsize", "4K,8K", "--duration", "1"]),
    ("print", "", lambda p, t, r: ["print", p / "zos", "--summary", "yes"]),
    ("qmstatus", "", lambda p, t, r: ["qmstatus", p / "dist"]),
    ("rcdmqimg", "", lambda p, t, r: ["rcdmqimg", copy(p, t, "dist"), "PAIR.00000"]),
    ("rcrmqobj", "", lambda p, t, r: ["rcrmqobj", copy(p, t, "dist"), "PAIR.00001"]),
    ("report", "of a compare", lambda p, t, r: ["report", r.getfixturevalue("compared")[1], "-o", t / "r.html"]),
    ("restart", "--verify", lambda p, t, r: ["restart", copy(p, t, "dist"), "--verify"]),
    ("restart", "--phases", lambda p, t, r: ["restart", "--phases"]),
    ("restart", "--set", lambda p, t, r: ["restart", copy(p, t, "dist"), "--verify", "--set",
                                          "log.LogPrimaryFiles=4"]),
    ("run", "", lambda p, t, r: ["run", "--platform", "reference", *SMALL_WORKLOAD]),
    ("run", "--in", lambda p, t, r: ["run", "--in", copy(p, t, "dist")]),
    ("scan", "--records", lambda p, t, r: ["scan", p / "gc" / "committers-1" / "reference.log", "--records"]),
    ("set-log-archived", "", lambda p, t, r: ["set-log-archived", copy(p, t, "dist"), "S0000000.LOG"]),
    ("stats", "", lambda p, t, r: ["stats", p / "zos"]),
    ("sweep", "--list", lambda p, t, r: ["sweep", p / "sweep.toml", "--list"]),
    ("sweep", "one cell", lambda p, t, r: ["sweep", p / "sweep.toml", "--master", SPARK, "--out", t / "s"]),
    ("torture", "", lambda p, t, r: ["torture", "--platform", "reference", *SMALL_WORKLOAD, "--budget", "2",
                                     "--faults", "crash"]),
    ("workloads", "", lambda p, t, r: ["workloads"]),
    ("topology", "list", lambda p, t, r: ["topology", "list"]),
    ("topology", "run", lambda p, t, r: ["topology", "run", "linux-feed", "--set", "workload.putters=1",
                                         "--set", "workload.messages_per_putter=5"]),
    ("topology", "restart", lambda p, t, r: ["topology", "restart", _topology(t), "--verify"]),
    ("chstatus", "", lambda p, t, r: ["chstatus", _topology(t)]),
    ("resolve", "", lambda p, t, r: ["resolve", _topology(t), "--channel", "LQM1.TO.LQM2", "--action", "BACKOUT"]),
]

#: the cases that start Spark (or read what a Spark job wrote)
NEEDS_SPARK = {("calibrate", "one tiny case"), ("compare", "one configuration"), ("report", "of a compare"),
               ("sweep", "one cell")}


def test_every_command_has_a_json_case():
    assert set(cli.commands) == {command for command, _, _ in CASES}


def _messages_are_strings(value, where="$"):
    """Wherever a document has ``messages`` they are a list of strings (the contract)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "messages":
                assert isinstance(item, list) and all(isinstance(m, str) for m in item), (where, item)
            _messages_are_strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _messages_are_strings(item, f"{where}[{n}]")


#: words that name a size or a time: a key holding one says its unit (README's --json contract)
QUANTITY_WORDS = {"size", "time", "latency", "seconds", "position", "duration", "elapsed", "length"}
#: the last word of a key that is a unit: microseconds, nanoseconds, milliseconds, seconds,
#: bytes, pages (4 KiB), percent, a fraction (a ratio has none); rates end in one too (``mb_s``)
UNIT_WORDS = {"us", "ns", "ms", "s", "bytes", "pages", "percent", "fraction", "sec"}
#: documents whose keys are MQ's own field names and stay MQ's: dump's amqldmpa names,
#: qmstatus's DISPLAY QMSTATUS names
MQ_NAMED = {"dump", "qmstatus"}
#: subtrees whose keys are the names a user gives (workload and log parameters, a sweep's grid
#: axes): echoed as given, so that they can be given back
AS_GIVEN = {"params", "config", "sweep", "grid"}
#: keys with a quantity word that hold a count, not a size or a time (why, for each)
COUNTS = {
    "write_size_histogram": "writes per size bucket; the bucket labels carry the unit",
    "max_latency_write": "the number of the write that took longest (mqldt's #N)",
    "min_latency_write": "the number of the write that took shortest (mqldt's #N)",
}


def unitless_keys(document, command):
    """The keys of a --json document that name a size or a time without a unit, as paths."""
    if command in MQ_NAMED:
        return []
    found = []

    def walk(value, where):
        if isinstance(value, dict):
            for key, item in value.items():
                words = str(key).lower().split("_")
                if set(words) & QUANTITY_WORDS and words[-1] not in UNIT_WORDS and key not in COUNTS:
                    found.append(f"{where}.{key}")
                if key not in AS_GIVEN:
                    walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for item in value:
                walk(item, f"{where}[]")

    walk(document, "$")
    return sorted(set(found))


def test_unit_check_refuses_the_old_unitless_names():
    """The check below is not one that cannot fail: the names the metrics had before issue 22
    gave them units are caught, wherever they sit, and the renamed ones pass."""
    old = {"virtual_seconds": 1.0, "workload_seconds": 1.0, "write_size_short": 1.0, "write_size_long": 1.0,
           "write_size_max": 1, "platform_log_write_size": 1.0, "restart": {"restart_virtual_seconds": 0.1},
           "results": [{"message_size": 2048}]}
    assert unitless_keys(old, "run") == [
        "$.platform_log_write_size", "$.restart.restart_virtual_seconds", "$.results[].message_size",
        "$.virtual_seconds", "$.workload_seconds", "$.write_size_long", "$.write_size_max", "$.write_size_short"]
    new = {"virtual_s": 1.0, "workload_s": 1.0, "write_size_short_bytes": 1.0, "platform_log_write_size_bytes": 1.0,
           "restart": {"restart_virtual_s": 0.1}, "results": [{"message_size_bytes": 2048}],
           "params": {"message_size": 2048}, "channel_mb_s": 1.0, "avg_bytes_sec": 1}
    assert unitless_keys(new, "run") == []
    assert unitless_keys({"WriteSizeShort": 1}, "dump") == []  # amqldmpa's name stays MQ's


@pytest.mark.parametrize("name", ["dist", "zos"])
def test_every_platforms_metrics_carry_units(place, name):
    """The ``run`` case above runs the reference platform: the metrics of a distributed and a
    z/OS run (their ``platform_*`` keys among them) are what ``run --json`` prints for those."""
    metrics = json.loads((place / name / "metrics.json").read_text())
    assert unitless_keys(metrics, "run") == []


@pytest.mark.parametrize("command, what, args", [
    pytest.param(c, w, a, id=f"{c} {w}".strip(), marks=[pytest.mark.spark] if (c, w) in NEEDS_SPARK else [])
    for c, w, a in CASES])
def test_json_is_one_valid_document(command, what, args, place, tmp_path, request):
    if (command, what) in NEEDS_SPARK:
        _need_java()
    given = args(place, tmp_path, request)
    out = ok(given if isinstance(given, subprocess.CompletedProcess) else mqlog(*given, "--json"))
    # json.loads takes exactly one document: a second one, a table line or a NaN fails it
    document = json.loads(out.stdout, parse_constant=lambda word: pytest.fail(f"{word} is not JSON"))
    assert isinstance(document, dict) and document
    assert out.stdout.count("\n") == 1  # one line: a stream of them is --jsonl's
    _messages_are_strings(document)
    assert unitless_keys(document, command) == []


def test_jsonl_streams_a_document_a_row_only_when_asked():
    rows = ok(mqlog("groupcommit", "--committers", "1,2", "--commits", "3", "--jsonl")).stdout.splitlines()
    assert [json.loads(line)["committers"] for line in rows] == [1, 2]
    whole = json.loads(ok(mqlog("groupcommit", "--committers", "1,2", "--commits", "3", "--json")).stdout)
    assert [r["committers"] for r in whole["results"]] == [1, 2]


def test_text_output_shows_names_and_values_not_python_reprs(place, tmp_path):
    """The media commands' summary line: name=value pairs and plain lists, as MQ prints them,
    not ``imaged {'PAIR.00000': 35}`` or ``archived ['S0000000.LOG']``."""
    run = copy(place, tmp_path, "dist")
    lines = [ok(mqlog(*args)).stdout.splitlines()[-1] for args in (
        ("rcdmqimg", run, "PAIR.00000", "PAIR.00001"), ("rcrmqobj", run, "PAIR.00001"),
        ("set-log-archived", run, "S0000000.LOG"))]
    for line in lines:
        assert not any(mark in line for mark in ("{", "}", "[", "]", "'", "None")), line
    imaged, recreated, archived = lines
    assert imaged.startswith("imaged PAIR.00000=") and ", PAIR.00001=" in imaged and "; CURRLOG S" in imaged
    assert recreated.startswith("recreated PAIR.00001=") and "; damaged none;" in recreated
    assert archived.startswith("archived S0000000.LOG; ")


@pytest.mark.parametrize("args", [
    ["run", "--platform", "distributed", "--workload", "putget", "--set", "log.LogPrimaryFiles=1"],  # MqlogError
    ["config", "--platform", "bogus"],                                                             # a bad choice
    ["qmstatus", "/nonexistent/run"],                                                              # click's own check
    ["groupcommit", "--committers", "x"],                                                          # a BadParameter
], ids=["run bad --set", "config bad platform", "qmstatus missing dir", "groupcommit bad list"])
def test_an_error_under_json_is_one_document_too(args):
    """A user error under --json: the one line on stderr and, on stdout, one valid document
    holding the same message and the exit code (a script reading stdout gets JSON either way)."""
    out = mqlog(*args, "--json")
    assert out.returncode == 2
    document = json.loads(out.stdout)
    assert out.stdout.count("\n") == 1
    assert document == {"error": document["error"], "exit_code": 2}
    assert out.stderr.strip() == f"mqlog: error: {document['error']}"
    # without --json stdout stays empty: the document is --json's alone
    assert mqlog(*args).stdout == ""
