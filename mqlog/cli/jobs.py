"""The Spark jobs' commands: ``compare`` (one workload against a matrix of platform
configurations, one task each, into results.parquet and report.html), ``sweep`` (a grid of
runs, skipping cells already done), ``report`` (the HTML page of either, again) and
``calibrate`` (IBM's published figures against the model's, one task per case).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import click

from mqlog.cli.internal import remember_seed

from mqlog.cli.group import (CrashTime, cli, device_for_restart, emit_json, host_for_restart, host_option,
                             json_option, jsonl_option, resolve_spec, restart_mode_option, terminal_width)
from mqlog.core.errors import MqlogError
from mqlog.rundir import RUN_FILE
from mqlog.rundir import read_json as _read_json
from mqlog.rundir import locked, read_locked, write_json


@cli.command("compare")
@click.option("--workload", default=None,
              help="A built-in workload name (see 'mqlog workloads') or FILE.toml (required unless --list).")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY=VALUE (a workload parameter) or qmgr.ATTR=VALUE (MAXUMSGS, MAXDEPTH: every "
                   "configuration's, under its own [config.qmgr]); repeatable.")
@click.option("--matrix", default="default", show_default=True,
              help="'default' (3 distributed, 3 z/OS configurations) or a TOML file of [[config]] tables.")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@host_option()
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Seed (default: the spec's, else 0).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("out/compare"),
              show_default=True, help="Directory for results.parquet and report.html.")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--crash", "crash_at", type=CrashTime(positive=True), default=None,
              help="Crash every configuration at this virtual time (s), or 'end' (the moment the workload's "
                   "last call returns, before any shutdown), restart it and compare the restarts.")
@restart_mode_option(" With --crash (9.1.1 unless given); a matrix configuration's restart_mode wins.",
                      default=None)
@click.option("--no-shunting", "no_shunting", is_flag=True,
              help="z/OS: remove log shunting from every configuration (the model's switch; no CSQ6LOGP parameter, "
                   "and no real queue manager, turns it off), to see what shunting saves at restart.")
@click.option("--logs", "keep_logs", is_flag=True,
              help="Also leave each configuration's files in OUT/runs/NAME (as 'mqlog run --out' does: "
                   "real logs, up to some hundreds of MB each) and report what each log holds, read back "
                   "with the mqlog data source.")
@click.option("--list", "list_only", is_flag=True,
              help="List the matrix's configurations (name, platform, what each sets) without running them.")
@json_option("the result rows (and with --logs what each log holds), or with --list the configurations")
@jsonl_option("each result row")
def compare_cmd(workload, sets, matrix, device, host, seed, out, master, crash_at, restart_mode, no_shunting, keep_logs,
                list_only, as_json, as_jsonl):
    """Run one workload against a matrix of platform configurations, one Spark task each,
    and compare them side by side (results.parquet, report.html). --crash crashes each at the
    same virtual time and compares the verified restarts; --logs keeps each configuration's
    files and reports what each log holds; --list shows the matrix without running it."""
    from mqlog.core.host.profiles import get_host
    from mqlog.core.workload.spec import parse_set
    from mqlog.spark.compare import check_matrix, compare, format_lines, format_table, load_matrix, results_frame
    from mqlog.spark.contents import CONTENTS_FILE, RUNS_DIR, log_contents
    from mqlog.spark.htmlreport import compare_heading, contents_table, render, window_lines
    from mqlog.spark.session import spark_session, task_errors

    if list_only:
        from mqlog.spark.compare import describe_matrix

        configurations = describe_matrix(check_matrix(load_matrix(matrix)))
        if as_json:
            emit_json({"matrix": matrix, "configurations": configurations})
            return
        width = max(len(c["name"]) for c in configurations)
        for c in configurations:
            click.echo(f"{c['name']:<{width}}  {c['platform_title']:<11}  {c['settings']}")
        return
    if workload is None:
        raise click.UsageError("Missing option '--workload' (a built-in workload or FILE.toml; not needed with --list).")
    parsed = parse_set(list(sets))
    if parsed.get("log"):
        raise click.UsageError("compare takes workload.KEY=VALUE and qmgr.ATTR=VALUE settings; log parameters belong in --matrix")
    spec, _, spec_seed, qmgr = resolve_spec(workload, parsed)
    seed = seed if seed is not None else (spec_seed or 0)
    remember_seed(seed)
    cells = check_matrix(load_matrix(matrix))
    if crash_at is None and (restart_mode is not None or any("restart_mode" in c for c in cells)):
        raise click.UsageError("a restart mode (--restart-mode, or restart_mode in the matrix) needs --crash: "
                               "without a crash nothing restarts")
    from mqlog.core.disk.devices import get_profile

    get_profile(device)  # a bad profile, host or --out is reported before Spark starts
    device = device_for_restart(device)
    get_host(host)
    host = host_for_restart(host)
    check_out_dir(out, "--out")
    spark = spark_session(master, "mqlog compare", arrow=keep_logs)
    click.echo(f"comparing {len(cells)} configurations of {spec.workload} (seed {seed}) on Spark "
               f"{spark.sparkContext.master} ...", err=True)
    def progress(row, done, total):
        finished.add(row["config_name"])
        click.echo(f"  [{done}/{total}] {row['config_name']}: {row['messages_put']} messages put, "
                   f"{row['physical_writes']} physical writes", err=True)

    with nothing_left_on_error(out), locked(out, "--out"):  # one comparison at a time writes OUT
        out.mkdir(parents=True, exist_ok=True)
        runs_dir = out / RUNS_DIR
        if runs_dir.exists():  # a previous comparison's runs: this one's replace them
            foreign = [p.name for p in sorted(runs_dir.iterdir()) if not (p / RUN_FILE).is_file()]
            if foreign:
                raise MqlogError(f"{runs_dir}: holds {foreign[0]!r}, which is not a run directory; "
                                 "choose another --out or move it")
            with contextlib.ExitStack() as runs:
                for run in sorted(runs_dir.iterdir()):
                    # refuses if a command (mqlog restart, print, ...) is using it; held until
                    # the run is deleted, so none can start on it in between
                    runs.enter_context(locked(run))
                shutil.rmtree(runs_dir)
        (out / CONTENTS_FILE).unlink(missing_ok=True)
        with progress_inside(out, {c["name"]: c["name"] for c in cells}, spec.params.get("duration"),
                             driver_host(spark)) as (inside, finished, address):
            rows = compare(spark, workload=spec.workload, params=dict(spec.params), seed=seed, device=device,
                           cells=cells, crash_at_s=crash_at, progress=progress,
                           runs_dir=runs_dir if keep_logs else None, restart_mode=restart_mode or "9.1.1",
                           host=host, qmgr=qmgr, progress_dir=inside, progress_addr=address,
                           shunting=not no_shunting)
        results_frame(spark, rows).coalesce(1).write.mode("overwrite").parquet(str(out / "results.parquet"))
        contents = None
        if keep_logs:
            click.echo(f"reading the {len(rows)} logs back with the mqlog data source ...", err=True)
            with task_errors("reading the logs back"):
                contents = log_contents(spark, {r["config_name"]: runs_dir / r["config_name"] for r in rows})
            write_json(out / CONTENTS_FILE, contents)
        title, subtitle = compare_heading(rows)
        (out / "report.html").write_text(render(rows, title=title, subtitle=subtitle, contents=contents),
                                         encoding="utf-8")
    if as_jsonl:
        for row in rows:
            emit_json(row)  # one document a line
        return
    from mqlog.provenance import for_rows
    from mqlog.provenance import lines as provenance_lines

    if as_json:
        emit_json({"rows": rows, "contents": contents, "results_parquet": out / "results.parquet",
                   "report_html": out / "report.html", "runs": runs_dir if keep_logs else None,
                   "provenance": for_rows(rows)})
        return
    click.echo(format_table(rows, terminal_width()))
    if contents is not None:
        names = [r["config_name"] for r in rows]
        click.echo("\nwhat each log holds at the end (read back with the mqlog data source):")
        click.echo(format_lines([("configuration", names)] + contents_table(names, contents), terminal_width()))
    click.echo(f"fingerprint {rows[0]['fingerprint'][:16]} (identical in every configuration)")
    for line in window_lines(rows):
        click.echo(line)
    for line in provenance_lines(for_rows(rows)):
        click.echo(line)
    click.echo(f"wrote {out / 'results.parquet'} and {out / 'report.html'}"
               + (f"; each configuration's run directory in {runs_dir}" if keep_logs else ""))


@cli.command("sweep")
@click.argument("sweep")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for results/ (Parquet, by platform) and report.html [default: out/sweep-NAME].")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--list", "list_only", is_flag=True, help="List the cells without running them.")
@click.option("--host", default=None,
              help="Host profile name or FILE.toml[:NAME] for a sweep that names no hosts "
                   "[default: v93-xeon; see 'mqlog hosts'].")
@json_option("the cells (with --list) or what ran")
def sweep_cmd(sweep, out, master, list_only, host, as_json):
    """Run SWEEP (a built-in name, or a TOML file) as Spark tasks; cells already in OUT are
    skipped. Built-ins: log-size-vs-rollbacks, complog-vs-payload, logload-vs-shunting,
    dual-vs-single, write-integrity-vs-concurrency, batchsz-vs-channel-log (a topology sweep:
    a row per queue manager per cell)."""
    from mqlog.spark.htmlreport import format_sweep, window_lines
    from mqlog.spark.sweep import cells, describe_sweep, load_sweep, read_results, run_sweep
    from mqlog.spark.topologysweep import TOPOLOGY_COLUMNS, is_topology_sweep
    from mqlog.spark.session import spark_session

    name, doc = load_sweep(sweep)
    tasks = cells(doc, origin=sweep, host=host_for_restart(host) if host is not None else None)
    if list_only:
        if as_json:
            emit_json({"sweep": name, "cells": [{k: t[k] for k in ("key", "name", "seed", "device", "host", "sweep")}
                                                for t in tasks],
                       "summary": describe_sweep(doc, tasks)})
            return
        for t in tasks:
            click.echo(f"{t['key']}  {t['name']:<20} seed {t['seed']} {t['device']:<6} {t['host']:<8} "
                       + " ".join(f"{k}={v}" for k, v in sorted(t["sweep"].items())))
        return
    out = out if out is not None else Path("out") / f"sweep-{name}"
    check_out_dir(out, "--out")
    spark = spark_session(master, f"mqlog sweep {name}")
    click.echo(f"sweep {name}: {len(tasks)} cells on Spark {spark.sparkContext.master} ...", err=True)

    def progress(row, done, total):  # every value that makes the cell, the device and seed too
        finished.add(row["cell_key"])
        click.echo(f"  [{done}/{total}] {row['config_name']} "
                   + " ".join(f"{k}={v}" for k, v in sorted(row["sweep"].items()))
                   + f" device={row.get('device')} host={row.get('host')} seed={row.get('seed')}: "
                   + f"{row.get('commits', 0):,} commits, {row.get('physical_writes', 0):,} physical writes", err=True)

    def label(t):
        return " ".join([t["name"], *(f"{k}={v}" for k, v in sorted(t["sweep"].items())), f"device={t['device']}",
                         f"seed={t['seed']}"])

    with nothing_left_on_error(out), locked(out, "--out"):  # one sweep at a time adds to OUT
        durations = {t["params"].get("duration") for t in tasks}
        with progress_inside(out, {t["key"]: label(t) for t in tasks}, durations.pop() if len(durations) == 1 else None,
                             driver_host(spark)) as (inside, finished, address):
            tasks = [dict(t, progress_dir=inside, progress_addr=address) for t in tasks]
            ran, skipped = run_sweep(spark, tasks, out, progress=progress)
        rows = read_results(spark, out)
        (out / "report.html").write_text(_sweep_page(rows, name, doc), encoding="utf-8")
    if as_json:
        emit_json({"sweep": name, "cells_run": ran, "cells_skipped": skipped, "rows": len(rows),
                   "results": out / "results", "report_html": out / "report.html"})
        return
    click.echo(format_sweep(rows, TOPOLOGY_COLUMNS) if is_topology_sweep(doc) else format_sweep(rows))
    for line in window_lines(rows):
        click.echo(line)
    click.echo(f"{ran} cells run, {skipped} already done; {len(rows)} rows in {out / 'results'}; "
               f"report {out / 'report.html'}")


def _sweep_page(rows: list[dict], name: str, doc: dict) -> str:
    """A sweep's report page; a topology sweep's (rows with a ``qmgr``) draws each queue
    manager's panel side by side."""
    from mqlog.spark.htmlreport import render_sweep
    from mqlog.spark.topologysweep import plot_of, render_topology_sweep

    title = f"mqlog sweep: {name}"
    if any(r.get("qmgr") for r in rows):
        return render_topology_sweep(rows, title=title, plot=plot_of(doc, rows))
    return render_sweep(rows, title=title, plot=doc.get("plot"))


@cli.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML file to write [default: DIRECTORY/report.html].")
@json_option("what was written")
def report_cmd(directory: Path, output, as_json):
    """Write the HTML report of a 'mqlog compare' or 'mqlog sweep' output directory again
    (read with pyarrow: no Spark starts)."""
    from mqlog.spark.contents import CONTENTS_FILE, check_contents
    from mqlog.spark.htmlreport import check_result_rows, compare_heading, read_result_rows, render
    from mqlog.spark.sweep import BUILTIN_SWEEPS, load_sweep

    output = output if output is not None else directory / "report.html"
    if not ((directory / "results.parquet").is_dir() or (directory / "results").is_dir()):
        raise MqlogError(f"{directory}: neither results.parquet (mqlog compare) nor results/ (mqlog sweep) is there")
    _check_writable(output)
    # A compare or sweep writing DIRECTORY holds its lock: read it shared, or exclusively when
    # the page goes into it (the default), as any writer of a directory does.
    writes_there = output.resolve().parent == directory.resolve()
    with (locked(directory) if writes_there else read_locked(directory)):
        if (directory / "results.parquet").is_dir():
            rows = read_result_rows(directory / "results.parquet")
            check_result_rows(rows, directory / "results.parquet")
            rows.sort(key=lambda r: r.get("config_name", ""))
            contents_path = directory / CONTENTS_FILE
            contents = _read_json(contents_path) if contents_path.is_file() else None
            if contents is not None:
                check_contents(contents, contents_path)
            title, subtitle = compare_heading(rows)  # the job's own: device, host and parameters too
            page = render(rows, title=title, subtitle=subtitle, contents=contents)
        else:  # results/ (a sweep's)
            rows = read_result_rows(directory / "results", sweep=True)
            check_result_rows(rows, directory / "results", sweep=True)
            name = directory.name.removeprefix("sweep-")
            page = _sweep_page(rows, name, load_sweep(name)[1] if name in BUILTIN_SWEEPS else {})
        try:
            output.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise MqlogError(f"-o {output}: cannot write the report: {exc.strerror or exc}") from None
    if as_json:
        from mqlog.provenance import for_rows

        emit_json({"wrote": output, "rows": len(rows), "provenance": for_rows(rows)})
        return
    click.echo(f"wrote {output}")


#: how often (wall seconds) the configurations still running are reported
INSIDE_EVERY_S = 10.0


@contextlib.contextmanager
def progress_inside(out: Path, labels: dict[str, str], total_s: float | None, driver_host: str | None = None):
    """Progress inside each configuration while a Spark job runs: its tasks report the virtual
    seconds they have done (see mqlog.spark.compare.progress_writer), and every INSIDE_EVERY_S
    this prints one line of those still running (``labels``: a task's key -> what to call it).
    A task whose executor sees OUT writes OUT/.progress/KEY; one that does not (a standalone
    cluster with no shared file system) sends a datagram to ``driver_host`` (Spark's
    ``spark.driver.host``, which every executor already reaches) on a port this opens, and
    the report lands in the same place. Yields the directory, the set of keys done (the caller
    adds each as its row arrives) and that address (``host:port``; None without a host or
    when no port could be opened); removes the directory and closes the port after."""
    import socket
    import threading

    directory = out / ".progress"
    if directory.exists():  # an interrupted job's
        shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    done: set = set()
    stop = threading.Event()

    def watch():
        last = ""
        while not stop.wait(INSIDE_EVERY_S):
            parts = []
            for key, label in labels.items():
                try:
                    seconds = float((directory / key).read_text())
                except (OSError, ValueError):
                    continue
                if key not in done:
                    parts.append(f"{label} {seconds:.2f}" + (f"/{total_s:g}" if total_s else "") + " virtual s")
            line = "  running: " + ", ".join(parts) if parts else ""
            if line and line != last:
                click.echo(line, err=True)
                last = line

    listener = None
    if driver_host:
        try:
            listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            listener.bind(("", 0))
            listener.settimeout(0.2)
        except OSError:   # progress is a courtesy: no port, no reports from afar
            listener = None

    def listen():
        while not stop.is_set():
            try:
                data = listener.recv(512)
            except OSError:   # a timeout, or the port closed
                continue
            key, _, seconds = data.decode("utf-8", "replace").partition(" ")
            if key not in labels:   # only this job's tasks, by key: never a path of a sender's choosing
                continue
            try:
                float(seconds)
            except ValueError:
                continue
            try:
                (directory / f"{key}.tmp").write_text(seconds)
                (directory / f"{key}.tmp").replace(directory / key)
            except OSError:
                pass

    threads = [threading.Thread(target=watch, name="mqlog-progress", daemon=True)]
    if listener is not None:
        threads.append(threading.Thread(target=listen, name="mqlog-progress-port", daemon=True))
    for thread in threads:
        thread.start()
    address = f"{driver_host}:{listener.getsockname()[1]}" if listener is not None else None
    try:
        yield str(directory.resolve()), done, address
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        if listener is not None:
            listener.close()
        if directory.exists():
            shutil.rmtree(directory, ignore_errors=True)


def driver_host(spark) -> str | None:
    """The address Spark's executors reach the driver at (``spark.driver.host``)."""
    try:
        return spark.sparkContext.getConf().get("spark.driver.host") or None
    except Exception:   # progress is a courtesy: no host, no reports from afar
        return None


def check_out_dir(out: Path, option: str) -> None:
    """An output directory that cannot be made or written is one line naming it, before any
    work starts (Spark included) and without making anything: it must be a directory, or its
    nearest existing parent one that takes a new directory."""
    import os

    if out.exists():
        if not out.is_dir():
            raise MqlogError(f"{option} {out}: not a directory")
        if not os.access(out, os.W_OK | os.X_OK):
            raise MqlogError(f"{option} {out}: the directory is not writable")
        return
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise MqlogError(f"{option} {out}: cannot make the directory: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise MqlogError(f"{option} {out}: cannot make the directory: {parent} is not writable")


@contextlib.contextmanager
def nothing_left_on_error(out: Path):
    """An output directory this command made is removed again if the command fails before
    writing anything into it but its lock (no empty directory left behind by an error)."""
    made = not out.exists()
    try:
        yield
    except BaseException:
        if made and out.is_dir() and all(p.name == ".mqlog.lock" for p in out.iterdir()):
            shutil.rmtree(out, ignore_errors=True)
        raise


def _check_writable(output: Path) -> None:
    """An -o the report cannot be written to is one line naming it before anything is read:
    its directory must exist and take a new file, and the file itself, if there, be writable."""
    import os

    parent = output.parent if str(output.parent) else Path(".")
    problem = None
    if output.is_dir():
        problem = "is a directory"
    elif not parent.is_dir():
        problem = f"no directory {parent}"
    elif output.exists() and not os.access(output, os.W_OK):
        problem = "the file is not writable"
    elif not output.exists() and not os.access(parent, os.W_OK | os.X_OK):
        problem = f"the directory {parent} is not writable"
    if problem is not None:
        raise MqlogError(f"-o {output}: cannot write the report: {problem}")


@cli.command("calibrate")
@click.option("--only", default=None, metavar="ID,...", help="Run only these cases (e.g. D1,C1).")
@click.option("--cases", "cases_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML file of cases [default: the built-in D1, D2, C1].")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--device", default=None, help="Device profile name or FILE.toml[:NAME] for every run "
                                             "[default: each run's own, ssd unless it says].")
@click.option("--host", default=None, help="Host profile name or FILE.toml[:NAME] for every run "
                                           "[default: each run's own, the default host unless it says].")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write calibration.md, calibration.png and results.json into this directory.")
@click.option("--write-docs", is_flag=True,
              help="Also write docs/calibration.md and docs/img/calibration.png (run from the checkout).")
@click.option("--scale", type=click.FloatRange(0.0, 1.0, min_open=True), default=1.0, show_default=True,
              help="Run every case at this fraction of its scale (its messages, units of work, seconds, "
                   "crash times, checkpoint interval and log files), with the same figures: for shapes "
                   "(R1's, in a minute); a count such as C1's 50,000 records scales with it and misses.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {case: {figure: {ibm, model, tolerance, ok, note}}} instead of the table.")
def calibrate_cmd(only, cases_file, master, device, host, out, write_docs, scale, as_json):
    """Run the calibration cases (one Spark task each) and compare the model's figures with
    IBM's: prints case, figure, IBM, model, tolerance and ok/MISSED; exits 1 if any figure
    is MISSED."""
    from mqlog.calibration import output as report
    from mqlog.calibration.cases import load_cases, scaled
    from mqlog.core.disk.devices import get_profile
    from mqlog.spark.calibrate import run_cases
    from mqlog.spark.session import spark_session

    wanted = [c.strip() for c in only.split(",") if c.strip()] if only is not None else None
    if wanted is not None and not wanted:
        raise click.BadParameter("give at least one case id", param_hint="--only")
    cases = {case_id: scaled(case, scale) for case_id, case in load_cases(cases_file, wanted).items()}
    if device is not None:
        get_profile(device)  # an unknown profile is one line now, not a failed task later
        device = device_for_restart(device)
    if host is not None:
        from mqlog.core.host.profiles import get_host

        get_host(host)
        host = host_for_restart(host)
    docs = Path("docs")
    if write_docs and not docs.is_dir():
        raise MqlogError("--write-docs: no docs/ directory here; run it from the mqlog checkout")
    spark = spark_session(master, "mqlog calibrate")
    # (a case sharing another's runs adds none when both are chosen)
    runs = sum(len(case["runs"]) for case in cases.values() if case.get("runs_from") not in cases)
    click.echo(f"calibrating {len(cases)} cases ({runs} runs) on Spark {spark.sparkContext.master} ...", err=True)

    def progress(result, done, total):
        misses = sum(not f["ok"] for f in result["figures"].values())
        click.echo(f"  [{done}/{total}] {result['id']}: {len(result['figures'])} figures, {misses} MISSED", err=True)

    results = run_cases(spark, cases, device=device, host=host, progress=progress)
    command = "mqlog calibrate" + (f" --only {','.join(wanted)}" if wanted else "") + (
        f" --device {device}" if device else "") + (f" --host {host}" if host else "") + (
        f" --scale {scale:g}" if scale != 1 else "")
    if out is not None:
        report.write(cases, results, out / "calibration.md", out / "calibration.png", command=command,
                     image="calibration.png", results_json=out / "results.json")
        click.echo(f"wrote {out / 'calibration.md'}, {out / 'calibration.png'} and {out / 'results.json'}",
                   err=True)
    if write_docs:
        report.write(cases, results, docs / "calibration.md", docs / "img" / "calibration.png", command=command,
                     image="img/calibration.png")
        click.echo(f"wrote {docs / 'calibration.md'} and {docs / 'img' / 'calibration.png'}", err=True)
    if as_json:
        emit_json(report.as_json(cases, results))
    else:
        click.echo(report.table(cases, results))
    misses = report.missed(results)
    if misses:
        click.echo(f"{misses} figure{'s' if misses != 1 else ''} MISSED", err=True)
        raise click.exceptions.Exit(1)
