"""The toy platform plugs in with its package and one registry line: with the line added
(the ``toy_registered`` fixture), ``mqlog run --platform toy`` runs it through the normal
application code, crashes it, and ``mqlog restart --verify`` recovers it against the
applications' journal; ``mqlog config`` lists its parameter. Without the line, mqlog does not
know it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mqlog.cli import cli
from mqlog.core.errors import ParameterError
from mqlog.platforms import choose


def _mqlog(*args):
    result = CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.output


def test_a_run_crashed_and_restarted_verified(toy_registered, tmp_path):
    out = tmp_path / "run"
    code, text = _mqlog("run", "--platform", "toy", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                        "--set", "workload.messages_per_pair=200", "--set", "log.checkpoint_records=50",
                        "--out", out, "--crash-at", "end")
    assert code == 0, text
    assert json.loads((out / "run.json").read_text())["platform"] == "toy"
    assert len(list((out / "qm").glob("TOY*.LOG"))) > 1, "the run crossed several toy log files"
    code, text = _mqlog("restart", out, "--verify")
    assert code == 0, text
    verify = next(line for line in text.splitlines() if line.startswith("verify:"))
    assert verify.endswith("OK") and "committed_missing 0," in verify, text
    assert "units of work committed 0 " not in text, "the restart recovered the run's committed work"


def test_config_lists_its_parameter(toy_registered):
    code, text = _mqlog("config", "--platform", "toy")
    assert code == 0 and "checkpoint_records" in text, text


def test_unknown_without_its_registry_line():
    with pytest.raises(ParameterError, match="allowed reference, distributed, zos"):
        choose("toy")
