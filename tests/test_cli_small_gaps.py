"""Issue 22's smaller gaps, through the real command line: a spec file's ``[log]`` problems
name the file, a workload error has one prefix, sweep and calibration files refuse a value of
the wrong TOML type, ``restart --json`` words a clean end of the log as the text does, the
long-run estimate, ``devices`` fitting the terminal and ``print``'s archive log."""

from __future__ import annotations

from test_cli_run import mqlog, one_line_error

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
