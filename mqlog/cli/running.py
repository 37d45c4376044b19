"""The commands that run the model: ``run`` (a workload on a platform, into a run directory),
``restart`` (recover what a run left, and verify it against the application journal),
``history`` (the commands that ran a run directory's queue manager, and every run's metrics).
What can be set – ``workloads`` and ``config`` – is :mod:`mqlog.cli.settings`. These parse the
options, call :mod:`mqlog.usecases` (which does the work and keeps the run directory) and
print what it returns.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from mqlog.cli.internal import remember_seed

from mqlog.cli.group import (END, CrashTime, Progress, cli, device_for_restart, emit_json, host_for_restart,
                             host_option, resolve_spec, restart_bar, restart_mode_option)
from mqlog.cli.summary import print_metrics as _print_metrics
from mqlog.cli.summary import target_rate, with_address_text
from mqlog.provenance import for_restart, for_run
from mqlog.provenance import lines as provenance_lines


@cli.command("run")
@click.option("--platform", "platform_name", default=None, help="distributed, zos, or reference (required "
                                                                  "unless --in).")
@click.option("--workload", default=None, help="A built-in workload name (see 'mqlog workloads') or FILE.toml "
                                               "(required unless --in; with --in, default: the run's own).")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY=VALUE, log.PARAM=VALUE (the platform's own parameter names) or "
                   "qmgr.ATTR=VALUE (MAXUMSGS, MAXDEPTH); repeatable.")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@host_option()
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None,
              help="Seed for payloads and timing, 0 to 2^64-1 (default: the spec's, else 0).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Directory for the real log files, queue files, messages, metrics and journal.")
@click.option("--in", "in_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Carry on in a run directory: restart the queue manager it holds (recovery verified against "
                   "its journal), then run the workload on it, extending the journal.")
@click.option("--crash-after-writes", type=click.IntRange(min=0), default=None,
              help="Pull the plug after this many storage writes: writes to every file (log, queue files, "
                   "control file or BSDS, archives), the summary's 'storage writes'; the log's own are its "
                   "'physical writes', fewer.")
@click.option("--crash-at", type=CrashTime(), default=None,
              help="Pull the plug at this virtual time (s), or 'end': the moment the workload's last call "
                   "returns, before any shutdown. A time after the workload ends crashes nothing.")
@click.option("--end", "end_mode", type=click.Choice(["controlled", "immediate", "preemptive"], case_sensitive=False),
              default=None, help="End the run with MQ's shutdown (endmqm -c/-i/-p; on zos STOP QMGR "
                                 "MODE(QUIESCE)/MODE(FORCE)/a CANCEL) instead of the default controlled one.")
@click.option("--end-at", type=float, default=None, metavar="SECONDS", callback=lambda c, p, v: _end_at(v),
              help="The virtual time the end command is issued (default: when the workload's last call returns).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as one JSON object.")
def run_cmd(platform_name, workload, sets, device, host, seed, out, in_dir, crash_after_writes, crash_at, end_mode,
            end_at, as_json):
    """Run a workload on a platform in virtual time and report the log's figures; with --in,
    carry on in a run directory (restart its queue manager, verify the recovery against its
    journal, run the workload on it and extend the journal). --crash-at end crashes it the
    moment the workload's last call returns; --end shuts it down as MQ does (endmqm -c/-i/-p,
    on z/OS STOP QMGR MODE(QUIESCE)/MODE(FORCE)/a CANCEL). A run estimated to take over a
    minute of wall time says so before it starts and shows its progress."""
    if in_dir is not None:
        _run_in(in_dir, platform_name, workload, sets, device, host, seed, out, crash_after_writes, crash_at, end_mode,
                end_at, as_json)
        return
    for value, name in ((platform_name, "platform"), (workload, "workload")):
        if value is None:
            raise click.MissingParameter(param_type="option", param_hint=f"'--{name}'")
    from mqlog.core.disk.devices import get_profile
    from mqlog.core.host.profiles import get_host
    from mqlog.core.qm.config import QmConfig, with_qmgr
    from mqlog.core.workload.run import RunConfig
    from mqlog.core.workload.spec import parse_set
    from mqlog.platforms import choose
    from mqlog.usecases import run

    end_mode = _ending(end_mode, end_at, crash_at, crash_after_writes)
    parsed = parse_set(list(sets))
    spec, log_overrides, spec_seed, qmgr = resolve_spec(workload, parsed, platform=platform_name)
    choice = choose(platform_name)
    platform_name = choice.name  # the canonical spelling goes into the run directory and metrics
    log_config = choice.configure(log_overrides)
    get_profile(device)  # a bad profile is reported before anything runs
    get_host(host)
    host = host_for_restart(host)
    seed = seed if seed is not None else (spec_seed if spec_seed is not None else 0)
    remember_seed(seed)
    if out is not None:
        if not out.strip():
            raise click.BadParameter("needs a directory name", param_hint="--out")
        out = Path(out)
    cfg = RunConfig(platform_name, choice.maker(log_config), log_config, spec, seed, device,
                    crash_after_writes, None if crash_at == END else crash_at, crash_at_end=crash_at == END,
                    qm_config=with_qmgr(QmConfig(), qmgr), host=host, end=end_mode, end_at_s=end_at)
    result = run(cfg, out=out, device=device_for_restart(device), qmgr=qmgr,
                 progress=lambda: _progress(spec, platform_name, crash_at, end_at, device=get_profile(device)))
    metrics = result.metrics
    _echo_warnings(result.messages)
    if metrics.get("crash_not_reached"):
        click.echo(f"mqlog run: {metrics['crash_not_reached']}", err=True)
    if metrics.get("end_not_reached"):
        click.echo(f"mqlog run: {metrics['end_not_reached']}", err=True)
    if as_json:
        emit_json({**metrics, "target_rate": target_rate(metrics), "provenance": for_run(metrics)})
        return
    _print_metrics(metrics, out)


def _ending(end_mode, end_at, crash_at, crash_after_writes):
    """How a run is to end, checked: the end mode in its canonical spelling (None: the ordinary
    end), or a one-line usage error for a crash and a shutdown given together."""
    if crash_after_writes is not None and crash_at is not None:
        raise click.UsageError("give --crash-after-writes or --crash-at, not both")
    if end_mode is None and end_at is None:
        return None
    ending = "--end" if end_mode is not None else "--end-at"
    crash = "--crash-at" if crash_at is not None else "--crash-after-writes" if crash_after_writes is not None else None
    if crash is not None:
        raise click.UsageError(f"give {ending} or {crash}, not both: a run ends with a shutdown or a crash")
    return (end_mode or "controlled").lower()


def _end_at(value):
    """--end-at: a virtual time, 0 or more (a one-line error otherwise)."""
    import math

    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value!r} is not a number of virtual seconds (0 or more)", param_hint="--end-at")
    return value


#: a console message's id: MQ's AMQnnnn (with or without its severity letter) or CSQxnnn + letter
_MESSAGE_ID = re.compile(r"(AMQ\d{4}|CSQ[A-Z0-9]\d{3})([A-Z]?)\b")


def _echo_warnings(messages) -> None:
    """Echo on stderr the queue manager's messages that are not informational – MQ's
    warnings, errors and actions (an id ending W, E, A, S; the AMQ ids the model writes
    without a letter are all log-space problems) – so that a run that hit one does not
    look clean with the message only in its error log. Informational ones (…I) and the
    reference platform's id-less notes stay in the log. A message repeated (CSQJ111A at every
    call the full log refuses, say) is echoed once, with how many times it was written."""
    counts: dict[str, int] = {}
    for message in messages:
        for line in message.splitlines():
            found = _MESSAGE_ID.match(line)
            if found is not None and found.group(2) != "I":
                counts[line] = counts.get(line, 0) + 1
    for line, n in counts.items():  # in the order first written
        click.echo(line + (f"  [{n} times]" if n > 1 else ""), err=True)


def _progress(spec, platform: str, crash_at, end_at, label: str = "", device=None) -> Progress:
    """A run's progress bar, after saying on stderr if it is estimated to be long (on
    ``device``, a device profile; None: the estimate's base device, which errs long)."""
    long = _warn_if_long(spec, end_at if end_at is not None else None if crash_at in (None, END) else crash_at,
                         device)
    return Progress(f"{spec.workload} on {platform}{label}", long=long,
                    total=spec.params.get("duration") if long else None)


def _warn_if_long(spec, crash_at_s: float | None, device=None) -> bool:
    """Say on stderr, before a run starts, that it is estimated to be long (one line: the
    estimate, what it rests on and how to shorten it); True if it is."""
    from mqlog.core.workload.estimate import estimate_wall
    from mqlog.core.workload.spec import format_value

    estimate = estimate_wall(spec, crash_at_s, device)
    if not estimate.long:
        return False
    scale = estimate.scale
    click.echo(f"mqlog: this run may take about {_duration_text(estimate.wall_s)} of wall time (about "
               f"{estimate.calls:,.0f} MQI calls at {estimate.us_per_call:.0f} µs each, measured for {spec.workload} at "
               f"this concurrency); to shorten it, lower "
               f"workload.{scale} (now {format_value(spec.params[scale])}) with --set workload.{scale}=N", err=True)
    return True


def _duration_text(seconds: float) -> str:
    for unit, size in (("days", 86_400), ("hours", 3_600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} seconds"


def _given(name: str) -> bool:
    """Whether the user gave option ``name`` (not its default)."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) is not ParameterSource.DEFAULT


def _run_in(directory: Path, platform_name, workload, sets, device, host, seed, out, crash_after_writes, crash_at,
            end_mode, end_at, as_json) -> None:
    """``mqlog run --in DIR``: restart the queue manager DIR holds with its settings (``--set
    log.X``, ``--device``, ``--host`` changing them as ``restart`` does), verify the recovered
    queues against DIR's journal, then run the workload (default: the run's own) on it and
    extend the journal, so that crash, restart and carrying on are one experiment and a later
    ``restart --verify`` checks everything ever committed. The new messages' ids carry the
    restarted queue manager's incarnation (its first checkpoint's number), so they differ from
    every earlier message's."""
    from mqlog.core.disk.devices import get_profile
    from mqlog.core.workload.spec import parse_set
    from mqlog.usecases import carry_on

    if out is not None:
        raise click.UsageError("give --in DIR (carry on in a run directory) or --out DIR (a new one), not both")
    if platform_name is not None:
        raise click.UsageError("--in DIR: the platform is the queue manager's in DIR; drop --platform")
    end_mode = _ending(end_mode, end_at, crash_at, crash_after_writes)
    parsed = parse_set(list(sets))
    if parsed.get("qmgr"):
        raise click.UsageError("--in DIR: the queue manager's attributes are the run's; --set qmgr.X is not taken")
    device, host = _checked_device_host(device if _given("device") else None, host if _given("host") else None)

    def starting(spec, platform: str, seed: int) -> Progress:
        remember_seed(seed)
        return _progress(spec, platform, crash_at, end_at, ", carried on",
                         device=get_profile(device) if device is not None else None)

    outcome = carry_on(directory, resolve=resolve_spec, workload=workload, sets=parsed, seed=seed, device=device,
                       host=host, crash_after_writes=crash_after_writes,
                       crash_at_s=None if crash_at == END else crash_at, crash_at_end=crash_at == END, end=end_mode,
                       end_at=end_at, starting=starting)
    result, report, verdict = outcome.result, outcome.report, outcome.verdict
    recovery = {**(with_address_text(report.as_dict(), outcome.qm) if report is not None else {}),
                **(verdict.as_dict() if verdict else {}),
                "changed": outcome.changed}
    ending = outcome.restarted_after
    if ending is not None:
        recovery["restarted_after"] = ending
    if result is not None:
        metrics = {**result.metrics, "restart": recovery}
        _echo_warnings(result.messages)
        if metrics.get("crash_not_reached"):
            click.echo(f"mqlog run: {metrics['crash_not_reached']}", err=True)
        if metrics.get("end_not_reached"):
            click.echo(f"mqlog run: {metrics['end_not_reached']}", err=True)
        if result.crashed and report is None:
            click.echo("mqlog run: the crash came during the restart, before the workload's first call: "
                       f"'mqlog restart {directory} --verify' recovers it", err=True)
    if as_json:
        emit_json({**metrics, "target_rate": target_rate(metrics), "provenance": for_run(metrics)}
                  if result is not None else {"restart": recovery})
    else:
        _print_restart_head(ending, outcome.changed, report.messages if report is not None else ())
        if verdict is not None:
            _print_verdict(verdict)
        if result is not None:
            _print_metrics(metrics, directory)
    if result is None:
        raise click.exceptions.Exit(1)  # the recovered queues are not what the journal says: nothing was run


def _print_restart_head(ending, changed: dict, messages) -> None:
    """How the queue manager had last stopped, what the restart changed, and its messages."""
    if ending is not None:
        from mqlog.core.workload.run import ending_text

        click.echo(f"restarting after {ending_text(ending)}")
    if changed:
        click.echo("changed at restart: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in changed.items()))
    for line in messages:
        click.echo(line)


def _print_verdict(verdict) -> None:
    click.echo("verify: " + ", ".join(f"{k} {v}" for k, v in verdict.as_dict().items())
               + ("  OK" if verdict.ok else "  FAILED"))


class _ReplayCounter:
    """:func:`~mqlog.cli.group.restart_bar` as a restart's progress (the records replayed so far)."""

    def __init__(self):
        self.bar = restart_bar()

    def update(self, records: int) -> None:
        self.bar.update(records - self.bar.n)

    def close(self) -> None:
        self.bar.close()


@cli.command("restart")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path), required=False)
@click.option("--verify", is_flag=True, help="Check the recovered queues against the application journal.")
@restart_mode_option("")
@click.option("--set", "sets", multiple=True, metavar="log.PARAM=VALUE",
              help="A log parameter the restarted queue manager runs with (one read at start: LogPrimaryFiles, "
                   "OUTBUFF, ...; one fixed at creation is refused); repeatable.")
@click.option("--device", default=None, help="Device profile name or FILE.toml[:NAME] the log is on from now on "
                                              "(default: the run's).")
@click.option("--host", default=None, help="Host profile name or FILE.toml[:NAME] from now on (default: the run's).")
@click.option("--phases", "list_phases", is_flag=True,
              help="Say what each restart phase does and what it costs on each host profile (no DIRECTORY).")
@click.option("--json", "as_json", is_flag=True, help="Print the recovery report (with --phases: the phases) as JSON.")
def restart_cmd(directory: Path | None, verify: bool, restart_mode: str, sets, device, host, list_phases: bool,
                as_json: bool):
    """Restart the queue manager a run left in DIRECTORY and report the recovery: as MQ 9.1.1
    and later or as before it, with log settings read at start, device or host changed (a
    parameter fixed at creation is refused), verified against the application journal;
    run.json records the queue manager as it now is. --phases says what each phase does and
    costs."""
    if list_phases:
        from mqlog.restarting import restart_phases

        if directory is not None:
            raise click.UsageError("--phases describes restart itself and takes no DIRECTORY")
        phases = restart_phases()
        if as_json:
            emit_json({"phases": phases})
            return
        for p in phases:
            click.echo(f"{p['phase']} ({p['reported']}): {p['does']}\n    costs: {p['costs']}")
        return
    if directory is None:
        raise click.UsageError("Missing argument 'DIRECTORY' (the run directory to restart).")
    from mqlog.usecases import restart

    log_sets = _log_sets(sets, "restart")
    device, host = _checked_device_host(device, host)
    outcome = restart(directory, log_sets=log_sets, device=device, host=host, verify=verify,
                      restart_mode=restart_mode, progress=_ReplayCounter)
    report, verdict, qm, changed = outcome.report, outcome.verdict, outcome.qm, outcome.changed
    unverifiable = outcome.unverifiable
    result = with_address_text(report.as_dict(), qm)
    result["changed"] = changed
    ending = outcome.restarted_after
    if ending is not None:
        result["restarted_after"] = ending
    if verdict is not None:
        result.update(verdict.as_dict())
    if unverifiable is not None:
        result["not_verified"] = unverifiable
    result["provenance"] = for_restart(result, platform=outcome.run.platform, device=outcome.device,
                                       restart_mode=restart_mode)
    if as_json:
        emit_json(result)
    else:
        _print_restart_head(ending, changed, report.messages)
        click.echo(f"records replayed {report.records_replayed}, bytes read {report.bytes_read}, "
                   f"units of work committed {report.uows_committed} / backed out {report.uows_backed_out} / "
                   f"in doubt {report.uows_indoubt}, messages reconciled {report.messages_reconciled}, "
                   f"queues loaded {report.queues_loaded} / left to first use {report.queues_deferred}"
                   + (f", re-created from media images {report.queues_recreated}" if report.queues_recreated else "")
                   + (f", DAMAGED {' '.join(report.queues_damaged)}" if report.queues_damaged else ""))
        p = report.restart_phases
        if p:
            click.echo(f"restart {p['total_s']:.6f} virtual s = replay {p['replay_s']:.6f} (log reads "
                       f"{p['replay_log_read_s']:.6f}, queue files {p['replay_queue_files_s']:.6f} with "
                       f"{report.replay_spills} spills, CPU "
                       f"{p['replay_cpu_s']:.6f}) + recovery {p['recovery_s']:.6f} (queue loading "
                       f"{p['recovery_queue_load_s']:.6f}, backout {p['recovery_backout_s']:.6f}) + media recovery "
                       f"{p['media_recovery_s']:.6f} + checkpoint {p['checkpoint_s']:.6f}")
        if verdict is not None:
            _print_verdict(verdict)
        if unverifiable is not None:
            click.echo(f"verify: NOT VERIFIED: {unverifiable}")
        for line in provenance_lines(result["provenance"]):
            click.echo(line)
    if (verdict is not None and not verdict.ok) or unverifiable is not None:
        raise click.exceptions.Exit(1)  # --verify asked for a check that did not pass, or could not be made


def _log_sets(sets, command: str) -> dict:
    """``--set`` items of a command that takes log.PARAM=VALUE only (restart, run --in)."""
    from mqlog.core.workload.spec import parse_set

    parsed = parse_set(list(sets))
    if parsed.get("workload") or parsed.get("qmgr"):
        raise click.UsageError(f"{command} takes log.PARAM=VALUE settings only")
    return parsed.get("log", {})


def _checked_device_host(device, host):
    """``--device`` and ``--host`` as run.json names them (None: not given), a bad profile
    refused before anything runs."""
    from mqlog.core.disk.devices import get_profile
    from mqlog.core.host.profiles import get_host

    if device is not None:
        get_profile(device)
        device = device_for_restart(device)
    if host is not None:
        get_host(host)
        host = host_for_restart(host)
    return device, host
