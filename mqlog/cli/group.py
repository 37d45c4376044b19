"""The ``mqlog`` command group, its entry point and what several command families share.

:func:`main` runs the group and turns mqlog's own errors into one line on stderr (exit 2);
the helpers here are the ones more than one family of commands uses: resolving a workload
spec with its ``--set`` overrides (the ``qmgr`` section among them), the progress bars on
stderr, the ``--restart-mode`` option, a crash time (seconds, or ``end``), how run.json names a
device, holding a run directory's lock for reading, and the one output contract of ``--json``
(:func:`json_option`, :func:`emit_json`): every command prints one JSON document on stdout.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from pathlib import Path

import click

from mqlog._version import __version__
from mqlog.core.errors import MqlogError
from mqlog.rundir import load_run as _load_run
from mqlog.rundir import read_locked


def parse_list(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of whole numbers",
                                 param_hint=name) from None
    if not values:
        raise click.BadParameter("give at least one value", param_hint=name)
    return values



class CrashTime(click.ParamType):
    """When to pull the plug: a virtual time in seconds, or ``end`` – the moment the
    workload's last call returns, before any shutdown. ``positive``: 0 is refused too."""

    name = "seconds|end"

    def __init__(self, positive: bool = False):
        self.positive = positive

    def convert(self, value, param, ctx):
        if isinstance(value, float) or value == END:
            return value
        word = str(value).strip()
        if word.lower() == END:
            return END
        bound = "more than 0" if self.positive else "0 or more"
        try:
            seconds = float(word)
        except ValueError:
            seconds = None
        if seconds is None or not math.isfinite(seconds) or seconds < 0 or (self.positive and seconds == 0):
            self.fail(f"{value!r} is neither a number of virtual seconds ({bound}) nor 'end' "
                      "(the moment the workload's last call returns)", param, ctx)
        return seconds


#: the crash time that is no time: the workload's end
END = "end"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mqlog")
def cli() -> None:
    """mqlog: a model of IBM MQ's recovery log on distributed platforms and z/OS.

    Log records, pages, a write-ahead log buffer with group commit and storage devices in
    virtual time; real bytes in real log files.
    """


def resolve_spec(workload: str, sets: dict, *, platform: str | None = None):
    """The workload spec from a built-in name or a TOML file, with --set overrides applied:
    (spec, log parameters as text, the file's seed or None, queue manager attributes by MQ's
    names, every one filled in – a file's ``[qmgr]`` table, ``--set qmgr.X`` over it).

    With ``platform`` a file's ``[log]`` table is checked here by that platform's names and
    ranges, so that a wrong name or value in it is reported naming the file, as everything
    else in the file is (the caller configures the platform with the merged values later)."""
    import attrs

    from mqlog.core.qm.config import qmgr_settings
    from mqlog.core.workload.spec import BUILTINS, build_spec, load_spec_document

    log_from_file: dict = {}
    qmgr_from_file: dict = {}
    seed = None
    qmgr_set = qmgr_settings(sets.get("qmgr", {}), defaults=False)  # a bad --set first, before any file
    if workload not in BUILTINS and (workload.endswith(".toml") or Path(workload).is_file()):
        spec, log_from_file, qmgr_from_file = load_spec_document(workload, BUILTINS)
        seed = spec.seed
        overrides = {**dict(spec.params), **sets.get("workload", {})}
        name, origin = spec.workload, workload
    else:
        name, overrides, origin = workload, sets.get("workload", {}), "--workload"
    definition = BUILTINS.get(name)
    if definition is None:
        raise click.BadParameter(f"unknown workload {name!r}; built-ins: {', '.join(BUILTINS)}",
                                 param_hint="--workload")
    qmgr = qmgr_settings({**qmgr_from_file, **qmgr_set})
    log = {**log_from_file, **sets.get("log", {})}
    if platform is not None and log_from_file:
        _check_file_log(platform, log, log_from_file.keys() - sets.get("log", {}).keys(), workload)
    # a bad value here is a --set's (the file's own params were checked with the file's name):
    # its field, workload.X, is the one prefix the error needs
    spec = build_spec(definition, overrides, origin="")
    return attrs.evolve(spec, origin=origin), log, seed, qmgr


def _check_file_log(platform: str, log: dict, from_file, path: str) -> None:
    """``log`` (a spec file's ``[log]`` table with the --set log values over it) configured on
    ``platform``; an error about one of the names only the file gave names the file."""
    from mqlog.core.errors import ParameterError, SpecError
    from mqlog.platforms import choose

    try:
        choose(platform).configure(log)
    except ParameterError as exc:
        named = exc.name.lower().removeprefix("log.")
        if any(named == key.lower() for key in from_file):
            raise SpecError(str(exc), source=path) from None
        raise


class Progress:
    """A progress bar on stderr that appears only for runs longer than two seconds, and
    never when stderr is not a terminal (so --json output and logs stay clean)."""

    DELAY_S = 2.0

    def __init__(self, label: str, *, long: bool = False, total: float | None = None):
        from tqdm import tqdm

        # a run estimated to be long shows its bar even when stderr is not a terminal (a log
        # file, a CI job): silence for hours looks like a hang; stdout (--json) is never touched.
        # With the virtual seconds it will run (``total``) the bar says how far it is and how
        # long is left.
        shape = ("{desc}: {n:.2f}{unit} [{elapsed}]{postfix}" if total is None else
                 "{desc}: {n:.2f}/{total:g}{unit} {percentage:.0f}% [{elapsed}<{remaining}]{postfix}")
        self.bar = tqdm(desc=label, unit=" virtual s", bar_format=shape, total=total,
                        delay=self.DELAY_S, file=sys.stderr, disable=False if long else None, leave=True)

    def update(self, virtual_s: float, records: int) -> None:
        # update() (not refresh()) so that tqdm's own delay decides when the bar first shows,
        # and close() then knows whether to end its line.
        self.bar.set_postfix_str(f"{records} log records", refresh=False)
        self.bar.update(virtual_s - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def restart_bar():
    """A counter on stderr of the records restart has replayed, shown only for restarts
    longer than two seconds and never when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(desc="restart: replay", unit=" records", delay=Progress.DELAY_S, file=sys.stderr, disable=None,
                leave=False)


def restart_mode_option(scope: str, default: str | None = "9.1.1"):
    """``--restart-mode``: a user chooses MQ 9.1.1's restart or the one before it."""
    return click.option(
        "--restart-mode", type=click.Choice(["9.1.1", "legacy"], case_sensitive=False), default=default, show_default=default is not None,
        help="How the queue manager restarts: as MQ 9.1.1 and later (queues loaded in parallel, replay "
             "reading 16 pages a time) or as before it (queues loaded one by one, a page and a file-system "
             f"call per replay read).{scope}")


def device_for_restart(device: str) -> str:
    """How run.json names the device (or the host): a built-in's name, or a profile file's
    absolute path (so that restart finds it from any working directory)."""
    path, name = device.rsplit(":", 1) if ".toml:" in device else (device, "")
    if Path(path).is_file():
        return str(Path(path).resolve()) + (f":{name}" if name else "")
    return device


#: a host profile is named in run.json, task dicts and metrics as a device profile is
host_for_restart = device_for_restart


def host_option(scope: str = ""):
    """``--host``: the host profile the queue manager and its applications run on."""
    from mqlog.core.host.profiles import DEFAULT_HOST

    return click.option("--host", default=DEFAULT_HOST, show_default=True,
                        help="Host profile name or FILE.toml[:NAME]: cores and CPU per MQI call "
                             f"(see 'mqlog hosts').{scope}")


def json_option(what: str = "the result"):
    """``--json``: the command prints one JSON document on stdout instead of its text."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as one JSON document.")


def jsonl_option(what: str = "each row"):
    """``--jsonl``: for a command that streams rows, one JSON document per row as it comes (JSON
    Lines); only on request, so that ``--json`` stays one document everywhere."""
    return click.option("--jsonl", "as_jsonl", is_flag=True, help=f"Print {what} as one JSON line (JSON Lines).")


def _plain(value):
    """``value`` as JSON has it: a non-finite float (which ``json.dumps`` would print as the
    invalid ``NaN``/``Infinity``) is null, a path its text, tuples and sets lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, Path):
        return str(value)
    return value


def terminal_width() -> int | None:
    """How wide a table may be: ``COLUMNS`` if set, else the terminal's; None (no limit) when
    stdout is not a terminal, so that piped and saved output keeps whole lines."""
    import os
    import shutil

    if not os.environ.get("COLUMNS", "").strip().isdigit() and not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def fitted(head: str, tail: str, width: int | None, indent: int = 4, wrapped: str | None = None) -> list[str]:
    """A table line of fixed columns (``head``) and free text at its end (``tail``): one line
    when it fits ``width`` (or there is none), else the columns and, under them, the text
    (``wrapped`` if given: the tail's columns run together) wrapped and indented, so that
    nothing is cut and no line is wider than the terminal. A line of text alone (a blank
    ``head``) wraps under its own indent."""
    import textwrap

    if width is None or len(head) + len(tail) <= width:
        return [head + tail]
    text = (wrapped if wrapped is not None else tail).strip()
    if not head.strip():
        return textwrap.wrap(text, max(width - len(head) - 2, 20), initial_indent=head,
                             subsequent_indent=head + "  ", break_on_hyphens=False)
    pad = " " * indent
    return [head.rstrip()] + textwrap.wrap(text, max(width - indent, 20), initial_indent=pad,
                                           subsequent_indent=pad, break_on_hyphens=False)


def text_value(value) -> str:
    """A value in a line of text as MQ would show it, never a Python repr (``{'Q': 42}``,
    ``['S0000000.LOG']``, ``None``): a mapping as name=value pairs and a list as its items,
    comma-separated; nothing at all as ``none``."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={text_value(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(text_value(v) for v in value) or "none"
    return "none" if value is None else str(value)


#: whether this process has printed its ``--json`` document (so that an error after it adds none)
_emitted = False


def emit_json(document) -> None:
    """Print ``document`` as one valid JSON document on one line of stdout (keys sorted, so the
    same run prints the same bytes). The one place every ``--json`` goes through."""
    global _emitted
    click.echo(json.dumps(_plain(document), sort_keys=True, allow_nan=False))
    _emitted = True


def _asks_for_json(argv: list[str]) -> bool:
    """Whether the command line asks for ``--json`` (an option, not an argument after ``--``):
    read from the words themselves, since an error may come before click has parsed them."""
    words = [str(word) for word in argv]
    if "--" in words:
        words = words[:words.index("--")]
    return "--json" in words


def _fail(message: str, exit_code: int, as_json: bool, label: str = "error") -> int:
    """An error's one line on stderr and, under ``--json``, its document on stdout too, so that a
    script reading stdout gets one JSON document whatever happened (README's contract), unless
    the command had already printed its own."""
    click.echo(f"mqlog: {label}: {message}", err=True)
    if as_json and not _emitted:
        emit_json({"error": message, "exit_code": exit_code})
    return exit_code


@contextlib.contextmanager
def reading(directory: Path):
    """Hold ``directory``'s lock shared while a read-only command reads it (refused, naming the
    process, while a command writes it); a directory that is not a run's is told so first."""
    _load_run(directory)
    with read_locked(directory):
        yield


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning mqlog's own errors into one line on stderr (and, under
    ``--json``, into one document ``{"error": ..., "exit_code": ...}`` on stdout)."""
    from mqlog.cli import interrupt

    as_json = _asks_for_json(sys.argv[1:] if argv is None else argv)
    interrupt.install()
    try:
        # Without standalone mode, click returns an Exit's code instead of raising it.
        code = cli.main(args=argv, prog_name="mqlog", standalone_mode=False)
        if isinstance(code, int):
            return code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        # One line, like mqlog's own errors; usage errors point at --help.
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        return _fail(f"{exc.format_message()}{hint}", exc.exit_code, as_json)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except MqlogError as exc:
        return _fail(str(exc), 2, as_json)
    except (interrupt.Interrupted, KeyboardInterrupt) as exc:
        return interrupt.stopped(exc)
    except Exception as exc:  # a bug in mqlog: one line, the traceback to a file (mqlog.cli.internal)
        from mqlog.cli.internal import EXIT_INTERNAL, INTERNAL_LABEL, internal_error_line

        words = [str(w) for w in (sys.argv[1:] if argv is None else argv)]
        return _fail(internal_error_line(exc, words), EXIT_INTERNAL, as_json, INTERNAL_LABEL)
    return 0

