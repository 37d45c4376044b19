"""``mqlog docs`` on the guide's kind of table (issue 36): a table made from a sweep's Parquet
or a compare's runs (view ``results``), and claims on the table ``mqlog compare`` prints in a
console transcript. Through the real command line on a small page of their own: ``--write``
puts the commands' figures in, a number edited by hand fails ``--check`` naming the page, the
row, the column and both values (a figure's moved point: its series and x), and a comparison
that flipped fails it too.

The sweep and the compare start Spark, so those tests are marked ``spark``; the generator's
own options (a twin command's run, a failed restart's cell, a ratio, a run's own series, a
command's label as a series) are checked on canned command output, in seconds."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mqlog import docpages
from mqlog.docfigures import draw, read_points

DATA = Path(__file__).parent / "data"

SWEEP_PAGE = """# a study

<!-- mqlog docs: table bytes view=results key=payload,configuration
sort="sweep.workload.payload:random|padded-records,config_name:none|rle"
columns="payload={sweep.workload.payload};configuration={config_name};logical bytes={logical_bytes};vs none={logical_bytes vs config_name=none};per commit={logical_bytes/commits:.1f}"
only: mqlog sweep docs/study.toml --out out/study --json
-->
| payload | configuration | logical bytes | vs none | per commit |
|---|---|---:|---:|---:|
<!-- mqlog docs: end -->

<!-- mqlog docs: table spread view=results key=configuration sort=sweep.workload.payload:random|padded-records
columns="configuration={config_name};bytes={logical_bytes}" across="{sweep.workload.payload}"
only: mqlog sweep docs/study.toml --out out/study --json
-->
<!-- mqlog docs: end -->

<!-- mqlog docs: table ranged view=results key=payload collapse=payload sort=sweep.workload.payload:random|padded-records
columns="payload={sweep.workload.payload};rolled back={uows_rolled_back:?yes|no}"
only: mqlog sweep docs/study.toml --out out/study --json
-->
<!-- mqlog docs: end -->

<!-- mqlog docs: figure img/bytes.png x=sweep.workload.payload y=logical_bytes series=config_name
xorder="random|padded-records"
only: mqlog sweep docs/study.toml --out out/study --json
-->
![logical bytes by payload](img/bytes.png)

RLE logs fewer bytes of padded records than none does.
<!-- mqlog docs: claim bytes["padded-records / rle"]["logical bytes"] < bytes["padded-records / none"]["logical bytes"] -->
"""


def docs(*args, cwd: Path):
    return subprocess.run([sys.executable, "-m", "mqlog", "docs", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def _rows(text: str) -> dict[str, list[str]]:
    """The page's first table, each row by its payload / configuration."""
    first = text.split("<!-- mqlog docs: end -->")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in first.splitlines()
            if line.startswith("| ") and not line.startswith("| payload")]
    return {f"{r[0]} / {r[1]}": r for r in rows}


@pytest.mark.spark
def test_a_sweep_table_is_written_from_the_parquet_and_an_edited_number_fails_the_check(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(DATA / "docs-study.toml", tmp_path / "docs" / "study.toml")
    (tmp_path / "img").mkdir()
    page = tmp_path / "study.md"
    page.write_text(SWEEP_PAGE)
    out = docs("--write", page, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = _rows(page.read_text())
    assert list(rows) == ["random / none", "random / rle", "padded-records / none", "padded-records / rle"]
    assert [r[3] for r in rows.values() if r[1] == "none"] == ["+0.0%", "+0.0%"]   # each against itself
    shrunk = rows["padded-records / rle"]
    assert shrunk[3].startswith("−"), shrunk            # RLE shrinks padded records
    plain, packed = (int(rows[f"padded-records / {c}"][2].replace(",", "")) for c in ("none", "rle"))
    assert shrunk[3] == f"{packed / plain - 1:+.1%}".replace("-", "−")
    assert not list(tmp_path.glob("out"))               # the commands ran in a scratch directory
    text = page.read_text()   # the same runs spread across payloads, and alike rows as one
    assert "| configuration | random | padded-records |" in text
    for c in ("none", "rle"):
        assert f"| {c} | {rows[f'random / {c}'][2]} | {rows[f'padded-records / {c}'][2]} |" in text
    assert "| random to padded-records | no |" in text
    drawn = read_points(tmp_path / "img" / "bytes.png")  # the figure carries the points it draws
    assert drawn["series"] == {c: [[p, int(rows[f"{p} / {c}"][2].replace(",", ""))] for p in ("random", "padded-records")]
                               for c in ("none", "rle")}

    # a number edited by hand, and a comparison the figures do not make
    edited = shrunk[2][:-1] + ("9" if shrunk[2][-1] != "9" else "8")
    flipped = ('<!-- mqlog docs: claim bytes["padded-records / rle"]["logical bytes"] > '
               'bytes["padded-records / none"]["logical bytes"] -->')
    text = page.read_text().replace(f"| {shrunk[2]} |", f"| {edited} |", 1)   # in the first table only
    page.write_text(text + "\n" + flipped + "\n")
    by_hand = dict(drawn, series={c: [[x, y] for x, y in pts] for c, pts in drawn["series"].items()})
    by_hand["series"]["rle"][1][1] += 1000                # a point of the figure moved by hand
    (tmp_path / "img" / "bytes.png").write_bytes(draw(by_hand, {}))
    out = docs("--check", page, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    named = [line for line in out.stdout.splitlines() if "the page shows" in line]
    assert named[0] == (f"study.md: table bytes, row 'padded-records / rle', column 'logical bytes': "
                        f"the page shows {edited!r}, the command now gives {shrunk[2]!r}"), out.stdout
    moved = by_hand["series"]["rle"][1][1]
    assert named[1] == (f"study.md: figure img/bytes.png, series 'rle', x=padded-records: the page shows "
                        f"'{moved}', the command now gives '{moved - 1000}'"), out.stdout
    assert len(named) == 3 and "claim bytes[\"padded-records / rle\"][\"logical bytes\"] > " in named[2]
    assert "the comparison the prose makes no longer holds" in named[2]


@pytest.mark.spark
def test_a_view_over_a_field_the_runs_lack_is_one_line_naming_table_and_field(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(DATA / "docs-study.toml", tmp_path / "docs" / "study.toml")
    page = tmp_path / "study.md"
    page.write_text(SWEEP_PAGE.replace("{logical_bytes/commits:.1f}", "{no_such_metric}"))
    out = docs("--check", page, cwd=tmp_path)
    assert out.returncode != 0
    errors = [line for line in out.stderr.splitlines() if line.startswith("mqlog")]
    assert errors == ["mqlog: error: study.md: table bytes: view results: a run has no field 'no_such_metric'"], out.stderr



COMPARE_PAGE = """# a comparison

<!-- mqlog docs: console id=cmp -->
```
$ mqlog compare --workload putget-pairs --set workload.pairs=1 --set workload.messages_per_pair=20 --matrix docs/m.toml --out out/c
...
```

Dual logging writes more physical bytes than single logging, for the same commits.
<!-- mqlog docs: claim cmp["physical bytes"]["dual"] > cmp["physical bytes"]["single"] and cmp["commits"]["dual"] == cmp["commits"]["single"] -->
And fewer (a claim that does not hold).
<!-- mqlog docs: claim cmp["physical bytes"]["dual"] < cmp["physical bytes"]["single"] -->
"""


@pytest.mark.spark
def test_claims_on_the_table_a_console_transcript_prints(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(DATA / "docs-matrix.toml", tmp_path / "docs" / "m.toml")
    page = tmp_path / "cmp.md"
    page.write_text(COMPARE_PAGE)
    out = docs("--check", page, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    failed = re.findall(r"line (\d+): claim (.*?): the page shows", out.stdout)
    assert failed == [("12", 'cmp["physical bytes"]["dual"] < cmp["physical bytes"]["single"]')], out.stdout
    assert "cmp.md: 3 block(s) checked, 1 mismatch(es)" in out.stdout   # the transcript and both claims


# -- the generator's options on canned command output (no Spark: seconds) -------------------

def _row(name, shunts, bytes_read, *, failed=None, series=None):
    row = {"config_name": name, "shunts": shunts, "shunted_bytes": 88 * shunts, "logical_bytes": 1000,
           "restart_bytes_read": bytes_read, "restart_failed": None,
           "log_in_use_series": series or [[0.0, 0], [0.1, 500], [0.2, 100], [0.3, 700]]}
    if failed:
        row.update(restart_failed=failed, restart_bytes_read=None)
    return row


CANNED = {
    "mqlog compare --matrix m.toml --json": {"rows": [_row("small", 9, 700_000), _row("large", 0, 17_000_000),
                                                      _row("nooffload", 9, 710_000)]},
    "mqlog compare --matrix m.toml --no-shunting --json": {"rows": [
        _row("small", 0, 3_700_000), _row("large", 0, 17_000_000), _row("nooffload", 0, 0, failed="5C6-00D1032A")]},
}

CANNED_PAGE = """# shunting

<!-- mqlog docs: table restart view=results key=configuration rows=with
columns="configuration={config_name};shunts={shunts};read, with={restart_bytes_read};read, without={without@restart_bytes_read};without, restart={without@restart_failed:?fails: %s|completes};kB a shunt={restart_bytes_read*0.001/shunts:.0f};over large={restart_bytes_read over config_name=large:.3f};less shunted={restart_bytes_read-shunted_bytes};per shunt and byte={shunts*shunted_bytes*2/logical_bytes:.1f}"
with: mqlog compare --matrix m.toml --json
without: mqlog compare --matrix m.toml --no-shunting --json
-->
<!-- mqlog docs: end -->

Shunting reads less where a round was written.
<!-- mqlog docs: claim restart["small"]["read, with"] * 5 < restart["small"]["read, without"] -->

<!-- mqlog docs: figure img/read.png x=config_name y=restart_bytes_read series=label logy xorder="small|large|nooffload"
with: mqlog compare --matrix m.toml --json
without: mqlog compare --matrix m.toml --no-shunting --json
-->
![read](img/read.png)

<!-- mqlog docs: figure img/share.png x=config_name y=shunted_bytes/logical_bytes where="config_name=small|large"
with: mqlog compare --matrix m.toml --json
-->
![share](img/share.png)

<!-- mqlog docs: figure img/phases.png x=label y=restart_bytes_read,shunts where=config_name=small
with: mqlog compare --matrix m.toml --json
without: mqlog compare --matrix m.toml --no-shunting --json
-->
![phases](img/phases.png)

<!-- mqlog docs: figure img/trace.png x=virtual_s y=log_in_use trace=log_in_use_series trace_step=2 series=config_name where=config_name=small
with: mqlog compare --matrix m.toml --json
-->
![trace](img/trace.png)
"""


@pytest.fixture
def canned(monkeypatch):
    """The page's commands print CANNED instead of running (a copy: a test may change it)."""
    outputs = json.loads(json.dumps(CANNED))
    monkeypatch.setattr(docpages, "run_command", lambda command, cwd, merge=False: json.dumps(outputs[command]))
    return outputs


def _check(page: Path, write: bool = False):
    result = docpages.check_page(page, root=page.parent, write=write)
    if write:
        page.write_text(result.text)
    return result


def test_a_twin_command_a_failed_restart_and_figures_from_canned_runs(tmp_path, canned):
    (tmp_path / "img").mkdir()
    page = tmp_path / "p.md"
    page.write_text(CANNED_PAGE)
    _check(page, write=True)
    text = page.read_text()
    # scaled and divided: 700 / 9; a ratio to another run of the command; a difference; fields as factors
    assert "| small | 9 | 700,000 | 3,700,000 | completes | 78 | 0.041 | 699,208 | 14.3 |" in text
    assert "| nooffload | 9 | 710,000 | – | fails: 5C6-00D1032A | 79 | 0.042 | 709,208 | 14.3 |" in text   # no figure, and why
    assert "| large | 0 | 17,000,000 | 17,000,000 | completes | – | 1.000 | 17,000,000 | 0.0 |" in text
    assert read_points(tmp_path / "img" / "read.png")["series"] == {   # a command's label as a series
        "with": [["small", 700_000.0], ["large", 17_000_000.0], ["nooffload", 710_000.0]],
        "without": [["small", 3_700_000.0], ["large", 17_000_000.0], ["nooffload", None]]}
    assert read_points(tmp_path / "img" / "share.png")["series"] == {   # a ratio, two runs of three
        "shunted_bytes/logical_bytes": [["large", 0.0], ["small", 0.792]]}
    assert read_points(tmp_path / "img" / "phases.png")["series"] == {   # two fields, the commands' labels as x
        "restart_bytes_read": [["with", 700_000.0], ["without", 3_700_000.0]], "shunts": [["with", 9.0], ["without", 0.0]]}
    assert read_points(tmp_path / "img" / "trace.png")["series"] == {   # a run's own series, every 2nd point
        "small": [[0.0, 0.0], [0.2, 100.0], [0.3, 700.0]]}
    assert not _check(page).mismatches   # as written

    # a number edited by hand, and the comparison flipped by the runs
    page.write_text(text.replace("| 3,700,000 |", "| 3,700,001 |"))
    found = [str(m) for m in _check(page).mismatches]
    assert found == ["p.md: table restart, row 'small', column 'read, without': "
                     "the page shows '3,700,001', the command now gives '3,700,000'"], found
    page.write_text(text)
    canned["mqlog compare --matrix m.toml --no-shunting --json"]["rows"][0]["restart_bytes_read"] = 800_000
    canned["mqlog compare --matrix m.toml --json"]["rows"][1]["log_in_use_series"] = [[0.0, 0]]
    found = [str(m) for m in _check(page).mismatches]
    assert any("column 'read, without'" in m for m in found)
    assert any("figure img/read.png, series 'without', x=small" in m for m in found)
    assert any(m.startswith("p.md: line 16: claim restart[\"small\"]") and "no longer holds" in m for m in found), found
    assert not any("trace.png" in m for m in found)   # the other run's series: not drawn there


def _canned_page(tmp_path, monkeypatch, outputs: dict, text: str) -> Path:
    """A page whose commands print ``outputs`` (command -> its JSON) instead of running."""
    monkeypatch.setattr(docpages, "run_command", lambda command, cwd, merge=False: json.dumps(outputs[command]))
    (tmp_path / "img").mkdir(exist_ok=True)
    page = tmp_path / "p.md"
    page.write_text(text)
    return page


def _refusal(page: Path) -> str:
    """The one error ``--check`` stops with on ``page``."""
    with pytest.raises(docpages.DocsError) as raised:
        _check(page)
    return str(raised.value)


# -- a yes/no figure with reference ticks, and a field plus a number (guide page 1's Figure 1) --

MIB = 1048576


def _sizing(n, mib, rolled_back, *, logical, used_max):
    return {"config_name": "circ", "sweep": {"workload.duration": n, "log.LogPrimaryFiles": mib},
            "active_log_capacity_bytes": mib * MIB, "uows_rolled_back": rolled_back, "workload_s": n,
            "logical_bytes": logical, "active_log_used_bytes_max": used_max}


SIZING = {"mqlog compare --matrix s.toml --json": {"rows": [
    # N = 1 s: rolled back at 24 MiB, not at 40; the widest run logs 10 MiB a second and used 24 MiB
    _sizing(1.0, 24, 1, logical=99, used_max=99), _sizing(1.0, 40, 0, logical=10 * MIB, used_max=24 * MIB),
    # N = 2 s: rolled back at 24 MiB, not at 72; the widest logs 2.5 MiB a second and used 48 MiB
    _sizing(2.0, 72, 0, logical=5 * MIB, used_max=48 * MIB), _sizing(2.0, 24, 1, logical=99, used_max=99)]}}

SIZING_PAGE = """# sizing

<!-- mqlog docs: figure img/rb.png kind=outcome x=active_log_capacity_bytes y=uows_rolled_back series=sweep.workload.duration
xscale=9.5367431640625e-07 series_label="N = {} s" outcome="rolled back|not rolled back"
ticks="80% limit=active_log_used_bytes_max / 0.8 / 1048576;IBM rule=2 * (sweep.workload.duration + 1) * logical_bytes / workload_s / 1048576"
s: mqlog compare --matrix s.toml --json
-->
![rb](img/rb.png)

<!-- mqlog docs: table rule view=results key=N where=sweep.log.LogPrimaryFiles=40|72 sort=sweep.workload.duration
columns="N={sweep.workload.duration:g} s;rule (MiB)={logical_bytes*2*sweep.workload.duration+1*9.5367431640625e-07/workload_s:.1f}"
s: mqlog compare --matrix s.toml --json
-->
<!-- mqlog docs: end -->
"""


def test_an_outcome_figure_marks_each_run_and_ticks_each_row_from_its_widest_run(tmp_path, monkeypatch):
    outputs = json.loads(json.dumps(SIZING))
    page = _canned_page(tmp_path, monkeypatch, outputs, SIZING_PAGE)
    _check(page, write=True)
    drawn = read_points(tmp_path / "img" / "rb.png")
    assert drawn["series"] == {"1.0": [[24.0, 1], [40.0, 0]], "2.0": [[24.0, 1], [72.0, 0]]}   # MiB, by size
    # 24 / 0.8 = 30 and 48 / 0.8 = 60 MiB; 2 x (1 + 1) x 10 = 40 and 2 x (2 + 1) x 2.5 = 15 MiB
    assert drawn["ticks"] == {"80% limit": [["1.0", 30.0], ["2.0", 60.0]], "IBM rule": [["1.0", 40.0], ["2.0", 15.0]]}
    assert "| 1 s | 40.0 |" in page.read_text() and "| 2 s | 15.0 |" in page.read_text()   # (N + 1): a field plus 1
    assert not _check(page).mismatches

    outputs["mqlog compare --matrix s.toml --json"]["rows"][2]["logical_bytes"] = 6 * MIB   # N = 2 s logs faster
    found = [str(m) for m in _check(page).mismatches]
    assert "p.md: figure img/rb.png, tick 'IBM rule', row=2.0: the page shows '15.0', the command now gives '18.0'" in found
    assert any("table rule, row '2 s', column 'rule (MiB)'" in m for m in found), found
    outputs["mqlog compare --matrix s.toml --json"]["rows"][1]["uows_rolled_back"] = 1      # 40 MiB now rolled back
    found = [str(m) for m in _check(page).mismatches]
    assert "p.md: figure img/rb.png, series '1.0', x=40.0: the page shows '0', the command now gives '1'" in found


@pytest.mark.parametrize("option, says", [
    ("kind=pie", "a figure's kind is line (the default), outcome or bars"),
    ('ticks="limit"', "ticks: 'limit' is not LABEL=EXPR"),
    ('ticks="limit=logical_bytes ** 2"', "Pow is not allowed"),
    ('ticks="limit=no_such_field / 2"', "no field 'no_such_field'"),
    ("xscale=MiB", "xscale=MiB: not a number"),
])
def test_a_bad_outcome_figure_is_one_error_naming_the_option(tmp_path, monkeypatch, option, says):
    page = _canned_page(tmp_path, monkeypatch, SIZING, SIZING_PAGE.split("<!-- mqlog docs: table")[0].replace(
        "s: mqlog compare", f"{option}\ns: mqlog compare", 1))   # the last word on an option wins
    error = _refusal(page)
    assert "figure img/rb.png" in error and says in error
    assert not (tmp_path / "img" / "rb.png").exists()


# -- bars in panels from several commands (guide page 2's COMPLOG figure) --------------------

def _complog(config, payload, *, logical, seconds):
    return {"config_name": config, "sweep": {"workload.payload": payload}, "logical_bytes": logical,
            "workload_s": seconds}


def _crashed(config, payload, *, read, replayed):
    return {"config_name": config, "params": {"payload": payload}, "restart_bytes_read": read,
            "restart_records_replayed": replayed}


COMPLOG = {
    "mqlog compare --matrix ssd.toml --json": {"rows": [
        _complog("none", "text", logical=2_000_000, seconds=0.5), _complog("rle", "text", logical=1_500_000, seconds=0.4),
        _complog("none", "random", logical=2_000_000, seconds=0.5), _complog("rle", "random", logical=2_000_000, seconds=0.5)]},
    "mqlog compare --matrix dasd.toml --json": {"rows": [
        _complog("none", "text", logical=2_000_000, seconds=2.0), _complog("rle", "text", logical=1_500_000, seconds=1.0),
        _complog("none", "random", logical=2_000_000, seconds=2.0), _complog("rle", "random", logical=2_000_000, seconds=2.5)]},
    "mqlog compare --matrix ssd.toml --crash 0.1 --json": {"rows": [
        _crashed("none", "text", read=400_000, replayed=100), _crashed("rle", "text", read=300_000, replayed=100)]},
}

COMPLOG_PAGE = """# complog

<!-- mqlog docs: figure img/bars.png kind=bars x=sweep.workload.payload series=config_name xorder="random|text"
names="none=NONE|rle=RLE"
panel1="y={logical_bytes*1e-6} rows=ssd title='logical MB'"
panel2="y={restart_bytes_read/restart_records_replayed} x=params.payload rows=crash title='bytes read\\\\na record'"
panel3="y='{workload_s vs config_name=none}' rows=ssd,dasd hatch=label:ssd|dasd"
ssd: mqlog compare --matrix ssd.toml --json
dasd: mqlog compare --matrix dasd.toml --json
crash: mqlog compare --matrix ssd.toml --crash 0.1 --json
-->
![bars](img/bars.png)
"""


def test_bars_in_panels_draw_each_panels_field_from_its_own_commands(tmp_path, monkeypatch):
    outputs = json.loads(json.dumps(COMPLOG))
    page = _canned_page(tmp_path, monkeypatch, outputs, COMPLOG_PAGE)
    _check(page, write=True)
    drawn = read_points(tmp_path / "img" / "bars.png")["series"]
    assert drawn["1 / rle"] == [["random", 2.0], ["text", 1.5]]            # MB, in xorder; the ssd runs only
    assert drawn["2 / none"] == [["text", 4000.0]] and drawn["2 / rle"] == [["text", 3000.0]]   # bytes a record
    # the change against none's run in the same command and cell, in percent: 0.4 / 0.5 - 1 = -20%,
    # 1.0 / 2.0 - 1 = -50% on dasd, 2.5 / 2.0 - 1 = +25%; none against itself 0
    assert drawn["3 / rle / ssd"] == [["random", 0.0], ["text", -20.0]]
    assert drawn["3 / rle / dasd"] == [["random", 25.0], ["text", -50.0]]
    assert drawn["3 / none / dasd"] == [["random", 0.0], ["text", 0.0]]
    assert set(drawn) == {"1 / none", "1 / rle", "2 / none", "2 / rle", "3 / none / ssd", "3 / rle / ssd",
                          "3 / none / dasd", "3 / rle / dasd"}
    assert not _check(page).mismatches

    outputs["mqlog compare --matrix dasd.toml --json"]["rows"][1]["workload_s"] = 1.5   # rle on dasd: -25%
    found = [str(m) for m in _check(page).mismatches]
    assert found == ["p.md: figure img/bars.png, series '3 / rle / dasd', x=text: the page shows '-50.0', "
                     "the command now gives '-25.0'"], found


@pytest.mark.parametrize("option, says", [
    ('panel4="y=logical_bytes"', "panel4: y='logical_bytes' is not a field"),
    ('panel4="y={logical_bytes} colour=red"', "panel4: 'colour' is not a panel's option"),
    ('panel4="y={logical_bytes} rows=hdd"', "panel4: rows=hdd names no command of the figure"),
])
def test_a_bad_panel_is_one_error_naming_it(tmp_path, monkeypatch, option, says):
    page = _canned_page(tmp_path, monkeypatch, COMPLOG, COMPLOG_PAGE.replace(
        "ssd: mqlog compare --matrix ssd.toml --json", f"{option}\nssd: mqlog compare --matrix ssd.toml --json"))
    error = _refusal(page)
    assert "figure img/bars.png" in error and says in error


def test_a_results_table_from_mqldt_runs_a_block_size_a_column(tmp_path, monkeypatch):
    """``mqlog mqldt --json``'s results (a block size each) are a results table's runs: README's
    table of what the device profiles imply, one profile a row, one block size a column."""
    def run(device, latency_ns):
        return {"device": device, "results": [
            {"blocksize_bytes": 4096, "avg_latency_ns": latency_ns, "avg_bytes_sec": 4096e9 / latency_ns},
            {"blocksize_bytes": 131072, "avg_latency_ns": 2 * latency_ns, "avg_bytes_sec": 131072e9 / (2 * latency_ns)}]}

    outputs = {"mqlog mqldt --device a --json": run("a", 50_000), "mqlog mqldt --device b --json": run("b", 400_000)}
    page = _canned_page(tmp_path, monkeypatch, outputs, """<!-- mqlog docs: table dev view=results key=profile
columns="profile={label};latency, rate={avg_latency_ns*0.001:,.0f} µs, {avg_bytes_sec*1e-6:,.1f} MB/s"
across="{blocksize_bytes*0.0009765625:.0f} KiB"
a: mqlog mqldt --device a --json
b: mqlog mqldt --device b --json
-->
<!-- mqlog docs: end -->
<!-- mqlog docs: claim dev["a"]["128 KiB"] < dev["b"]["4 KiB"] -->
""")
    result = _check(page, write=True)
    # 4096 bytes in 50 µs: 81.9 MB/s; 131072 in 100 µs: 1,310.7 MB/s
    assert "| a | 50 µs, 81.9 MB/s | 100 µs, 1,310.7 MB/s |" in page.read_text()
    assert "| b | 400 µs, 10.2 MB/s | 800 µs, 163.8 MB/s |" in page.read_text()
    assert not [m for m in result.mismatches if "claim" in m.where]   # 100 µs < 400 µs
    assert not _check(page).mismatches


# -- a sweep over devices: a ratio to the run on the row's own device --

DEVICES_PAGE = """# two devices

<!-- mqlog docs: table dev view=results key=device,configuration
columns="device={device};configuration={config_name};rate={commits/workload_s:,.0f};÷ single={commits/workload_s over config_name=single:.2f}"
d: mqlog sweep d.toml --json
-->
<!-- mqlog docs: end -->
"""


def test_over_another_configuration_takes_the_run_on_the_rows_own_device(tmp_path, monkeypatch):
    """A sweep over two devices has a single and a dual run on each: dual's ratio is to the
    single run on the same device, not to whichever came first."""
    rows = [{"config_name": c, "device": d, "host": "h", "seed": 0, "sweep": {}, "commits": n, "workload_s": 1.0}
            for c, d, n in (("single", "fast", 1000), ("dual", "fast", 900), ("single", "slow", 400),
                            ("dual", "slow", 200))]
    page = _canned_page(tmp_path, monkeypatch, {"mqlog sweep d.toml --json": {"rows": rows}}, DEVICES_PAGE)
    _check(page, write=True)
    text = page.read_text()
    assert "| fast | dual | 900 | 0.90 |" in text and "| slow | dual | 200 | 0.50 |" in text, text
    assert "| slow | single | 400 | 1.00 |" in text


def test_a_command_that_prints_no_json_is_named_not_a_decoder_traceback(tmp_path, monkeypatch):
    """A figure's command that failed with exit 1 printed nothing: the check stops with one
    error naming it (it used to end in JSONDecodeError, an internal error)."""
    monkeypatch.setattr(docpages, "run_command", lambda command, cwd, merge=False: "")
    page = tmp_path / "p.md"
    (tmp_path / "img").mkdir()
    page.write_text("<!-- mqlog docs: figure img/x.png x=device y=commits\nmqlog compare --json\n-->\n"
                    "![x](img/x.png)\n")
    message = _refusal(page)
    assert "'mqlog compare --json' printed no JSON document (nothing)" in message
