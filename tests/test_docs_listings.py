"""Issue 36's last tables: README.md's and the guide's tables of settings, names and commands
are made by listing commands that read the code's own tables (the click group, the package
tree, the queue manager's parameter table, a matrix or sweep file, restart's phases, the
guide's pages), so that they cannot go stale; ``mqlog docs --check`` names a row that drifted
and fails on a table no command makes. Through the real command line where it can be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from mqlog.cli import cli
from mqlog.core.host.profiles import load_hosts
from mqlog.core.qm.config import QMGR_PARAMETERS
from mqlog.core.recovery.phases import PHASES
from mqlog.docpages import Block, _cells, compare_tables, parse
from mqlog.docresults import results
from mqlog.docviews import render_table

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def mqlog(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _block(text: str, ident: str) -> Block:
    return next(b for b in parse(text) if b.kind == "table" and b.ident == ident)


def _edited_readme(tmp_name: str, old: str, new: str) -> Path:
    """A copy of README.md beside it (as a hand edit is), with one line changed."""
    text = README.read_text()
    assert old in text
    page = REPO / f".edited-{tmp_name}.md"
    page.write_text(text.replace(old, new, 1))
    return page


# -- the command table -------------------------------------------------------------------------

def test_a_command_added_to_the_cli_appears_in_the_generated_table_and_the_check_names_its_row():
    @click.command("frobnicate")
    @click.argument("directory")
    @click.option("--mode", type=click.Choice(["fast", "slow"]), required=True)
    @click.option("--json", "as_json", is_flag=True)
    def frobnicate(directory, mode, as_json):
        """Frobnicate the queue manager a run left in DIRECTORY.

        More that the table leaves out."""

    cli.add_command(frobnicate)
    try:
        printed = CliRunner().invoke(cli, ["commands", "--json"])
    finally:
        cli.commands.pop("frobnicate")
    assert printed.exit_code == 0, printed.output
    text = README.read_text()
    block = _block(text, "commands")
    now = results([("", json.loads(printed.output))], block.options, REPO)
    row = "| `mqlog frobnicate DIRECTORY --mode fast\\|slow [--json]` | Frobnicate the queue manager a run left in DIRECTORY. |"
    assert row in now
    found = compare_tables("README.md", block, text.split("\n")[block.start:block.end], now)
    assert [(m.where, m.shown) for m in found] == [
        ("table commands, row 'mqlog frobnicate DIRECTORY --mode fast|slow [--json]'", "no such row")]


def test_every_visible_command_is_in_the_readme_with_its_usage():
    listed = json.loads(mqlog("commands", "--json").stdout)["commands"]
    ctx = click.Context(cli)
    visible = [n for n in cli.list_commands(ctx) if not cli.get_command(ctx, n).hidden]
    # a group (mqlog topology) is listed as its commands, each a row of its own
    expanded = [f"{n} {sub}" if isinstance(cli.get_command(ctx, n), click.Group) else n
                for n in visible for sub in (cli.get_command(ctx, n).list_commands(ctx)
                                             if isinstance(cli.get_command(ctx, n), click.Group) else [None])]
    assert [c["name"] for c in listed] == expanded
    assert {"topology list", "topology run", "topology restart"} <= set(expanded)
    run = next(c for c in listed if c["name"] == "run")
    assert "--crash-at SECONDS|END" in run["usage"] and "[--end controlled|immediate|preemptive]" in run["usage"]
    assert "--help" not in run["usage"]
    text = README.read_text()
    for c in listed:
        assert f"| `{c['usage'].replace('|', chr(92) + '|')}` |" in text, c["name"]


def test_a_stale_row_of_the_command_table_fails_the_check_naming_page_row_and_both_values(tmp_path):
    shown = "| `mqlog bsds DIRECTORY [--json]` | BSDS map (like CSQJU004) of the z/OS queue manager a run left in DIRECTORY. |"
    page = _edited_readme(tmp_path.name, shown, shown.replace("BSDS map", "Boot strap map"))
    try:
        out = mqlog("docs", "--check", "--only", "commands", page)
    finally:
        page.unlink()
    assert out.returncode == 1, out.stdout + out.stderr
    assert [line for line in out.stdout.splitlines() if "the page shows" in line] == [
        f"{page.name}: table commands, row 'mqlog bsds DIRECTORY [--json]', column 'what it does': the page shows "
        "'Boot strap map (like CSQJU004) of the z/OS queue manager a run left in DIRECTORY.', the command now gives "
        "'BSDS map (like CSQJU004) of the z/OS queue manager a run left in DIRECTORY.'"], out.stdout


def test_a_pipe_in_a_cell_is_escaped_and_read_back_as_one_cell():
    lines = render_table(["usage", "what"], [["mqlog x --a yes|no", "a|b"]], "ll")
    assert lines[2] == "| mqlog x --a yes\\|no | a\\|b |"
    assert _cells(lines[2]) == ["mqlog x --a yes\\|no", "a\\|b"]


# -- a hand-made table -------------------------------------------------------------------------

def test_a_table_no_command_makes_fails_the_check(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# a page\n\n| name | value |\n|---|---|\n| a | 1 |\n")
    out = mqlog("docs", "--check", page)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 table(s) not generated by a command" in out.stdout
    assert json.loads(mqlog("docs", "--check", page, "--json").stdout)["hand_made"] == 1


def test_no_published_page_has_a_hand_made_table_or_figure():
    listed = json.loads(mqlog("docs", "--list", "--json").stdout)["pages"]
    assert len(listed) >= 8   # README.md, six studies, the index
    from mqlog.docindex import unmarked_figures, unmarked_tables

    for page in listed:
        text = (REPO / page["page"]).read_text()
        assert (unmarked_tables(text), unmarked_figures(text)) == (0, 0), page["page"]


# -- the queue manager's attributes ------------------------------------------------------------

def test_config_reports_the_qmgr_attributes_from_their_parameter_table():
    for platform in ("reference", "distributed", "zos"):
        qmgr = json.loads(mqlog("config", "--platform", platform, "--json").stdout)["qmgr"]
        assert [(a["name"], a["default"], a["allowed"], a["meaning"]) for a in qmgr] == [
            (p.name, p.default, p.allowed, p.meaning) for p in QMGR_PARAMETERS]
    text = mqlog("config", "--platform", "distributed").stdout
    assert "queue manager attributes (--set qmgr.NAME=V, every platform):" in text
    assert "MAXUMSGS" in text and "1 to 999999999" in text


def test_the_readme_attribute_table_fails_the_check_when_a_default_is_edited(tmp_path):
    shown = next(line for line in README.read_text().split("\n") if line.startswith("| `qmgr.MAXUMSGS` |"))
    page = _edited_readme(tmp_path.name, shown, shown.replace("| 10000 |", "| 20000 |"))
    try:
        out = mqlog("docs", "--check", "--only", "qmgr", page)
    finally:
        page.unlink()
    assert out.returncode == 1
    assert (f"{page.name}: table qmgr, row 'qmgr.MAXUMSGS', column 'default': the page shows '20000', "
            "the command now gives '10000'") in out.stdout, out.stdout


# -- the source tree ---------------------------------------------------------------------------

def test_layout_lists_every_package_directory_and_test_path_of_the_checkout():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    rows = json.loads(mqlog("layout", "--json").stdout)["layout"]
    mapping = project["tool"]["setuptools"]["package-dir"]
    testpaths = project["tool"]["pytest"]["ini_options"]["testpaths"]
    assert [r["directory"] for r in rows] == [f"{d}/" for d in mapping.values()] + [f"{d}/" for d in testpaths]
    assert [r["package"] for r in rows] == list(mapping) + [None] * len(testpaths)
    assert all(r["what"] for r in rows), rows   # every directory says what it holds
    core = next(r for r in rows if r["package"] == "mqlog.core")
    assert core["what"].startswith("The transactional core both platforms share")


# -- matrices and sweeps -----------------------------------------------------------------------

def test_compare_list_describes_the_matrix_without_spark_and_without_a_workload():
    from mqlog.spark.compare import DEFAULT_MATRIX

    out = mqlog("compare", "--list", "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["configurations"]
    assert [c["name"] for c in listed] == [c["name"] for c in DEFAULT_MATRIX]
    assert [c["log"] for c in listed] == [c["log"] for c in DEFAULT_MATRIX]
    single = next(c for c in listed if c["name"] == "zos-single-none")
    assert (single["platform_title"], single["settings"]) == ("z/OS", "TWOACTV=NO, COMPLOG=NONE")
    modes = json.loads(mqlog("compare", "--list", "--matrix", "docs/guide/studies/05-restart-modes.toml",
                             "--json").stdout)["configurations"]
    assert modes[1]["restart_mode"] == "legacy" and modes[1]["settings"].endswith("restart_mode=legacy")
    out = mqlog("compare")
    assert out.returncode == 2 and "--workload" in out.stderr


def test_sweep_list_summarises_the_workload_configurations_and_every_swept_axis():
    out = json.loads(mqlog("sweep", "docs/guide/studies/01-long-uow-zos.toml", "--list", "--json").stdout)
    summary = out["summary"]
    assert summary["runs"] == len(out["cells"]) == 24
    assert [(a["name"], a["values"]) for a in summary["axes"]] == [
        ("ACTIVE_LOG_CIS", [16, 64, 256, 1024, 4096, 8192]), ("device", ["ssd", "dasd"])]
    assert summary["swept_text"] == "ACTIVE_LOG_CIS 16 to 8192 (6 values) × device ssd, dasd (24 runs)"
    assert [c["name"] for c in summary["configurations"]] == ["zos-offload", "zos-no-offload"]


# -- restart's phases --------------------------------------------------------------------------

def test_restart_phases_name_what_a_restart_reports_and_the_host_profiles_figures(tmp_path):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget", "--crash-at", "0.05", "--out",
                tmp_path / "r")
    assert out.returncode == 0, out.stderr
    reported = json.loads(mqlog("restart", tmp_path / "r", "--json").stdout)["restart_phases"]
    phases = json.loads(mqlog("restart", "--phases", "--json").stdout)["phases"]
    assert [p["phase"] for p in phases] == [p.name for p in PHASES]
    for phase in phases:
        assert phase["reported"].removeprefix("restart_phases.") in reported, phase
        assert "{" not in phase["costs"], phase   # every figure put in
    hosts = load_hosts()
    replay = phases[0]["costs"]
    for name, host in hosts.items():
        assert f"{host.replay_record_us:g} µs on `{name}`" in replay or f"`{name}`" in replay
    assert f"`replay_record_us` ({hosts['v93-xeon'].replay_record_us:g} µs on `v93-xeon`" in replay
    out = mqlog("restart", "--phases", tmp_path / "r")
    assert out.returncode == 2 and "takes no DIRECTORY" in out.stderr


# -- the guide's index -------------------------------------------------------------------------

INDEX = """# guide

<!-- mqlog docs: table pages view=results list=pages where=study=True key=# fast align=rll
columns="#={number};question={title};page=[{file}]({file})"
mqlog docs --list --json
-->
{table}
<!-- mqlog docs: end -->
"""


def test_a_new_guide_page_is_a_row_the_index_lacks_until_it_is_written(tmp_path):
    guide = tmp_path / "docs" / "guide"
    guide.mkdir(parents=True)
    (guide / "01-first.md").write_text("# 1. How big?\n\ntext\n")
    index = guide / "README.md"
    index.write_text(INDEX.replace("{table}\n", ""))
    assert mqlog("docs", "--write", index, cwd=tmp_path).returncode == 0
    assert "| 1 | How big? | [01-first.md](01-first.md) |" in index.read_text()
    assert mqlog("docs", "--check", index, cwd=tmp_path).returncode == 0
    (guide / "02-second.md").write_text("# 2. How fast?\n")
    out = mqlog("docs", "--check", index, cwd=tmp_path)
    assert out.returncode == 1
    assert ("docs/guide/README.md: table pages, row '2': the page shows 'no such row', the command now gives "
            "'2 | How fast? | [02-second.md](02-second.md)'") in out.stdout, out.stdout
