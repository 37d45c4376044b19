"""``mqlog history``: the commands that ran the queue manager in a run directory, with each
run's headline figures, what a killed run was running, and what each restart took."""

from __future__ import annotations

from pathlib import Path

import click

from mqlog.cli.group import cli, emit_json, json_option
from mqlog.rundir import load_run as _load_run


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.6f}"


@cli.command("history")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_option("the history, each run with all its metrics,")
def history_cmd(directory: Path, as_json: bool):
    """The commands that ran the queue manager in DIRECTORY, oldest first, each run's headline numbers
    and what each restart changed; --json gives every run's metrics in full.

    A run directory is one queue manager's life: its first 'run', each 'restart' (with the
    settings it changed) and each 'run --in'. Every run's metrics are kept (metrics.json the
    latest, metrics-N.json the earlier ones); --json gives them all."""
    from mqlog.cli.group import reading
    from mqlog.rundir import history_metrics

    with reading(directory):
        run = _load_run(directory)
        entries = history_metrics(directory, run)
    if as_json:
        emit_json({"directory": str(directory), "platform": run.platform, "device": run.device,
                   "host": run.host, "finished": run.finished, "journal_complete": run.journal_complete,
                   "history": [{**{k: v for k, v in entry.items() if k != "metrics"}, "metrics_file": name,
                                "metrics": metrics} for entry, name, metrics in entries]})
        return
    click.echo(f"{directory}: a {run.platform} queue manager, now on {run.device}, host {run.host}")
    rows, notes = [("#", "command", "workload", "seed", "virtual s", "ended", "put / got", "commits",
                    "physical bytes", "metrics")], {}
    for n, (entry, name, m) in enumerate(entries, 1):
        if m is not None:
            ended = "crashed" if m.get("crashed") else m.get("ended") or "controlled"
            rows.append((str(n), str(entry.get("command")), str(m.get("workload")), str(m.get("seed")),
                         f"{m.get('virtual_s', 0):.6f}", ended, f"{m.get('messages_put')} / {m.get('messages_got')}",
                         str(m.get("commits")), str(m.get("physical_bytes")), name))
        elif entry.get("command") == "restart":
            rows.append((str(n), "restart", "-", "-", _seconds(entry.get("restart_s")), "restarted", *["-"] * 4))
        else:  # a run whose process was killed: what it ran, and that no figures were kept
            rows.append((str(n), str(entry.get("command")), str(entry.get("workload") or "-"),
                         str(entry.get("seed") if entry.get("seed") is not None else "-"), "-",
                         "killed" if not entry.get("finished") else "-", *["-"] * 4))
        if entry.get("restart_s") is not None:
            restart = (f"restart {entry['restart_s']:.6f} virtual s: {entry.get('records_replayed', 0):,} records "
                       f"replayed, {entry.get('uows_backed_out', 0)} units of work backed out, "
                       f"{entry.get('uows_indoubt', 0)} in doubt")
            notes_for = notes.setdefault(n, [])
            notes_for.append(restart)
        why = []
        if entry.get("changed"):
            why.append("changed " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in entry["changed"].items()))
        if entry.get("stopped"):
            why.append(f"stopped: {entry['stopped']}")
        elif m is None and entry.get("command") != "restart" and not entry.get("finished"):
            why.append("its process ended before it finished: no metrics")
        if why:
            notes.setdefault(n, []).insert(0, "; ".join(why))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    left = {1, 2, 5, 9}  # the words; the numbers right-aligned
    for k, row in enumerate(rows):
        click.echo("  " + "  ".join(cell.ljust(w) if i in left else cell.rjust(w)
                                    for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
        for note in notes.get(k, []):
            click.echo(" " * (4 + widths[0]) + note)


