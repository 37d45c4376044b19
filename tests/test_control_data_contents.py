"""Issue 37, "Also found": control data with a good checksum but bad contents, a symbolic link
among a queue manager's files, a damaged queue file on z/OS, an address of -1.

A good checksum says the bytes are the ones written, not that they are what mqlog writes: a
control file or BSDS edited by hand (its checksum recomputed), or from another tool. Before
the fix such contents raised IndexError, ValueError or RecursionError from deep inside the
decoder – a traceback. Now each is one line naming the file and the field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from mqlog.zos.bsds import encode_bsds


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def one_line_error(out, *words):
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    for word in words:
        assert word in out.stderr, (word, out.stderr)
    assert "AMQ8003I" not in out.stdout and "CSQR002I" not in out.stdout


BASE = ["--workload", "putget-pairs", "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=50",
        "--crash-at", "end"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for platform in ("distributed", "zos"):
        out = root / platform
        done = mqlog("run", "--platform", platform, *BASE, "--out", out)
        assert done.returncode == 0, done.stderr
        made[platform] = out
    return made


def fresh(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    return copy


DEEP = b"[" * 100_000 + b"]" * 100_000


def write_control(path: Path, body: bytes) -> None:
    path.write_bytes(b"MQLD" + zlib.crc32(body).to_bytes(4, "little") + body)


def edited(path: Path, **fields) -> bytes:
    data = json.loads(path.read_bytes()[8:])
    for key, value in fields.items():
        if key == "extent0":
            data["extents"][0][0] = value
        else:
            data[key] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize("fields, words", [
    ({"current": 99}, ["field 'current' is 99, not one of its extents"]),
    ({"checkpoint": "x"}, ["field 'checkpoint' is \"x\""]),
    ({"checkpoint": float("nan")}, ["field 'checkpoint' is nan"]),
    ({"checkpoint": -1}, ["field 'checkpoint' is -1, not a whole number from 0"]),
    ({"extent0": 0.5}, ["field 'extents' is 0.5"]),
    ({"ring": "abc"}, ["field 'ring' is \"abc\", not a list"]),
])
def test_distributed_control_file_fields_are_checked_after_the_checksum(runs, tmp_path, fields, words):
    run = fresh(runs["distributed"], tmp_path)
    control = run / "qm" / "amqhlctl.lfh"
    write_control(control, edited(control, **fields))
    one_line_error(mqlog("restart", run, "--verify"), "amqhlctl.lfh", "malformed log control file", *words)


def test_distributed_control_file_nested_too_deep_is_one_line(runs, tmp_path):
    run = fresh(runs["distributed"], tmp_path)
    write_control(run / "qm" / "amqhlctl.lfh", DEEP)
    one_line_error(mqlog("restart", run, "--verify"), "amqhlctl.lfh", "nested too deep")


def write_bsds(run: Path, inventory) -> None:
    for name in ("BSDS01", "BSDS02"):
        if isinstance(inventory, bytes):
            (run / "qm" / name).write_bytes(b"MQLB" + zlib.crc32(inventory).to_bytes(4, "little") + inventory)
        else:
            (run / "qm" / name).write_bytes(encode_bsds(inventory))


@pytest.mark.parametrize("field, value, words", [
    ("current", 99, ["field 'current' is 99, not a whole number from 0 to 2"]),
    ("checkpoint", "x", ["field 'checkpoint' is \"x\""]),
    ("checkpoint", float("nan"), ["field 'checkpoint' is nan"]),
    ("checkpoint", -1, ["field 'checkpoint' is -1"]),
    ("active", [[1.5, 0, False, 0]], ["field 'active' is 1.5"]),
])
def test_zos_bsds_fields_are_checked_after_the_checksum(runs, tmp_path, field, value, words):
    run = fresh(runs["zos"], tmp_path)
    inventory = json.loads((run / "qm" / "BSDS01").read_bytes()[8:])
    inventory[field] = value
    write_bsds(run, inventory)
    out = mqlog("restart", run, "--verify")
    one_line_error(out, "BSDS0", "malformed BSDS", *words)
    assert "-000000000001000" not in out.stderr + out.stdout


def test_zos_bsds_nested_too_deep_is_one_line(runs, tmp_path):
    run = fresh(runs["zos"], tmp_path)
    write_bsds(run, DEEP)
    one_line_error(mqlog("restart", run, "--verify"), "BSDS01", "no valid BSDS copy")


@pytest.mark.parametrize("name", ["run.json", "journal.json"])
def test_run_files_nested_too_deep_are_one_line(runs, tmp_path, name):
    run = fresh(runs["distributed"], tmp_path)
    (run / name).write_bytes(DEEP)
    one_line_error(mqlog("restart", run, "--verify"), name, "nested too deep")


# -- a symbolic link in qm/ ------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["restart", "--verify"], ["run", "--in"]])
def test_a_symbolic_link_in_the_queue_managers_directory_is_refused_not_followed(runs, tmp_path, command):
    run = fresh(runs["distributed"], tmp_path)
    outside = tmp_path / "outside.bin"
    spare = run / "qm" / "amqhlspr.lfh"
    shutil.copyfile(spare, outside)
    before = outside.read_bytes()
    spare.unlink()
    spare.symlink_to(outside)
    verb, option = command
    out = mqlog(verb, option, run) if verb == "run" else mqlog(verb, run, option)
    one_line_error(out, "amqhlspr.lfh is a symbolic link: refused")
    assert outside.read_bytes() == before
    assert spare.is_symlink()


# -- z/OS: a damaged queue file -----------------------------------------------------------------------

def test_zos_damaged_queue_file_is_reported_in_the_job_log_and_verify_excuses_its_messages(tmp_path):
    run = tmp_path / "run"
    done = mqlog("run", "--platform", "zos", "--workload", "log-fill", "--set", "workload.messages=4000",
                 "--set", "workload.transactions=40", "--crash-after-writes", "120", "--out", run)
    assert done.returncode == 0, done.stderr
    with open(run / "qm" / "FILL.0000.mqq", "r+b") as f:
        f.seek(10)
        f.write(b"garbage!")
    out = mqlog("restart", run, "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    said = [line for line in out.stdout.splitlines() if "Queue FILL.0000 damaged: FILL.0000.mqq, offset 0" in line]
    assert said, out.stdout
    assert said[0].split(" ", 1)[1] in (run / "CSQMSTR.JESMSGLG").read_text()
    verdict = next(line for line in out.stdout.splitlines() if line.startswith("verify:"))
    assert "committed_missing 0" in verdict and verdict.endswith("OK")
    missing = int(verdict.split("damaged_missing ")[1].split()[0])
    assert missing > 0


def test_an_address_of_minus_one_is_said_as_such():
    from mqlog.core.log.addressing import PlainAddressing
    from mqlog.distributed.space import format_lsn
    from mqlog.zos.platform import RbaAddressing

    assert PlainAddressing().format(-1) == "-1 (not a log address)"
    assert format_lsn(-1) == "-1 (not an LSN)"
    assert RbaAddressing().format(-4096) == "-4096 (not an RBA)"
