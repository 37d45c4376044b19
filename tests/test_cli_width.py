"""Tables fit the terminal (issue 22): with ``COLUMNS=80`` no line of ``mqlog devices``,
``hosts``, ``bsds``, ``print``, ``stats`` or of compare's side-by-side table is wider than 80
characters, and every cell is still shown; piped output without ``COLUMNS`` keeps whole
lines, as before.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mqlog.cli.group import terminal_width
from mqlog.spark.compare import check_matrix, format_table, load_matrix, run_cell, table_cells


def devices(columns: str | None):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    out = subprocess.run([sys.executable, "-m", "mqlog", "devices"], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_devices_fits_80_columns_and_keeps_every_description():
    from mqlog.core.disk.devices import load_profiles

    narrow = devices("80")
    assert max(len(line) for line in narrow.splitlines()) <= 80
    words = " ".join(narrow.split())
    for p in load_profiles(None).values():
        assert p.name in words and " ".join(p.description.split()) in words
    # piped, no COLUMNS: one line a profile, its description at the end
    wide = devices(None)
    assert max(len(line) for line in wide.splitlines()) > 80
    assert all(p.description in wide for p in load_profiles(None).values())


@pytest.fixture(scope="module")
def rows():
    """The default matrix's six configurations on a small workload, run here (no Spark)."""
    cells = check_matrix(load_matrix("default"))
    return [run_cell(dict(cell, workload="putget-pairs", params={"pairs": 1, "messages_per_pair": 5}, seed=0,
                          device="ssd", qmgr={})) for cell in cells]


def test_compare_table_fits_80_columns_with_every_cell(rows, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    width = terminal_width()
    assert width == 80
    text = format_table(rows, width)
    assert max(len(line) for line in text.splitlines()) <= 80
    cells = table_cells(rows)
    assert len(cells[0][1]) == 6
    blocks = text.split("\n\n")
    assert len(blocks) > 1  # six configurations do not fit beside the labels in 80 columns
    # each block has every label, and across the blocks each configuration's column once
    shown = []
    for block in blocks:
        lines = block.splitlines()
        assert [line.split("  ")[0].rstrip() for line in lines] == [label for label, _ in cells]
        shown += lines[0].split()[1:]
    assert shown == [r["config_name"] for r in rows]


def test_compare_table_without_a_width_is_one_block(rows, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() is None  # pytest's stdout is not a terminal
    text = format_table(rows, terminal_width())
    assert "\n\n" not in text and len(text.splitlines()) == len(table_cells(rows))
    assert max(len(line) for line in text.splitlines()) > 80


@pytest.mark.parametrize("platform", ["distributed", "zos", "reference"])
def test_config_fits_80_columns_and_keeps_every_parameter(platform):
    from mqlog.platforms import choose

    env = dict(os.environ, COLUMNS="80")
    narrow = subprocess.run([sys.executable, "-m", "mqlog", "config", "--platform", platform], capture_output=True,
                            text=True, timeout=120, env=env)
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    names = {line.split()[0] for line in narrow.stdout.splitlines() if line.startswith("  ") and line[2] != " "}
    assert set(choose(platform).configure({})) <= names


def _mqlog(args, columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    out = subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def zos_run(tmp_path_factory):
    """A z/OS run with archives, a long-running unit and shunting: long BSDS, print and stats lines."""
    out = tmp_path_factory.mktemp("zos-width")
    _mqlog(["run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.05",
            "--set", "log.ACTIVE_LOG_CIS=16", "--out", out], None)
    return out


@pytest.mark.parametrize("command", [["bsds"], ["print", "--summary", "yes"], ["stats"]])
def test_zos_listings_fit_the_terminal_and_keep_every_word(zos_run, command):
    whole = _mqlog([command[0], zos_run, *command[1:]], None)
    assert max(len(line) for line in whole.splitlines()) > 80  # piped: whole lines, as before
    for columns in (80, 200):
        text = _mqlog([command[0], zos_run, *command[1:]], str(columns))
        assert max(len(line) for line in text.splitlines()) <= columns, columns
        assert text.split() == whole.split()  # wrapped, nothing cut or dropped
    assert _mqlog([command[0], zos_run, *command[1:]], "200") != _mqlog([command[0], zos_run, *command[1:]], "80")


def test_hosts_fits_80_columns_and_keeps_every_figure_and_description():
    from mqlog.core.host.profiles import load_hosts

    for columns in ("80", "200"):
        text = _mqlog(["hosts"], columns)
        assert max(len(line) for line in text.splitlines()) <= int(columns)
        words = " ".join(text.split())
        for p in load_hosts(None).values():
            assert p.name in words and " ".join(p.description.split()) in words
            assert f"{p.round_trip_us(2048, persistent=False):.1f} / {p.round_trip_us(2048, persistent=True):.1f}" \
                in words
    assert max(len(line) for line in _mqlog(["hosts"], None).splitlines()) > 80  # piped: one line a host
