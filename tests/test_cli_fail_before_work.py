"""Issue 36, "fail before the work": compare and sweep check devices, hosts, the matrix, the
sweep file and the output directory before Spark starts, say what is wrong in one line, and
leave nothing behind. Through the real command line."""

from __future__ import annotations

import pytest
from clikit import mqlog, one_line_error

SPARK_STARTED = ("Setting default log level", "SparkContext", "py4j", "Traceback")


def _refused_before_spark(out, *words):
    one_line_error(out, *words)
    for sign in SPARK_STARTED:
        assert sign not in out.stderr, out.stderr


@pytest.mark.parametrize("device, words", [("floppy", ("unknown device profile 'floppy'",)),
                                           ("broken.toml", ("broken.toml", "not valid TOML"))])
def test_compare_refuses_a_bad_device_before_spark_and_writes_nothing(tmp_path, device, words):
    (tmp_path / "broken.toml").write_text("x = [\n")
    device = str(tmp_path / device) if device.endswith(".toml") else device
    out_dir = tmp_path / "out"
    out = mqlog("compare", "--workload", "requester-responder", "--device", device, "--out", out_dir)
    _refused_before_spark(out, *words)
    assert not out_dir.exists()


def test_compare_refuses_an_output_directory_it_cannot_make_before_spark(tmp_path):
    (tmp_path / "plain").write_text("")
    out = mqlog("compare", "--workload", "requester-responder", "--out", tmp_path / "plain" / "x")
    _refused_before_spark(out, "--out", "cannot make the directory", "is not a directory")
    out = mqlog("compare", "--workload", "requester-responder", "--out", "/dev/null/x")
    _refused_before_spark(out, "/dev/null is not a directory")


def test_sweep_refuses_an_unknown_device_in_its_file_before_spark(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text('workload = "long-uow"\ndevices = ["ssd", "floppy"]\n[[config]]\nname = "z"\nplatform = "zos"\n')
    out_dir = tmp_path / "out"
    out = mqlog("sweep", sweep, "--out", out_dir)
    _refused_before_spark(out, f"{sweep}: devices: unknown device profile 'floppy'")
    assert not out_dir.exists()
    out = mqlog("sweep", "dual-vs-single", "--out", "/dev/null/y")
    _refused_before_spark(out, "--out /dev/null/y", "/dev/null is not a directory")


def test_a_sweep_file_without_workload_names_the_missing_field(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[[config]]\nname = "z"\nplatform = "zos"\n')
    out = mqlog("sweep", sweep, "--out", tmp_path / "out")
    _refused_before_spark(out, f"{sweep}: field 'workload' is missing")
    out = mqlog("sweep", sweep, "--list")
    _refused_before_spark(out, "field 'workload' is missing")
