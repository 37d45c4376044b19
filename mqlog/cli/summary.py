"""What ``mqlog run`` prints when a run ends (its summary, the target rate it did or did not
reach, how far to trust its figures)."""

from __future__ import annotations

import click

from mqlog.core.workload.run import torn_text
from mqlog.provenance import for_run
from mqlog.provenance import lines as provenance_lines
from mqlog.rundir import JOURNAL_FILE, METRICS_FILE, QM_DIR
from mqlog.usecases import nothing_measured, short_window, why_nothing_measured


def with_address_text(report: dict, qm) -> dict:
    """A restart's JSON with the end of the log's address also in the notation its console
    messages and the platform's dump use (an LSN <a:b:c:d> on distributed, an RBA on z/OS):
    ``address`` is the log's byte address, ``address_text`` the same address as MQ writes it."""
    end = report.get("end_of_log")
    if end and end.get("address") is not None:
        end["address_text"] = qm.platform.addressing.format(end["address"])
    return report


def _refused(m: dict) -> str:
    """The refused MQI calls as MQ names them, most first: "MQRC_Q_FULL (2053) 3, ..."."""
    calls = sorted(m.get("failed_calls", {}).items(), key=lambda kv: (-kv[1]["calls"], kv[0]))
    return ", ".join(f"{name} ({v['reason']}) {v['calls']}" for name, v in calls)


def _spills(m: dict) -> str:
    """The queue-file spills, and how many the putting call wrote itself (a platform whose
    writes behind the calls reached their bound: z/OS's buffer pool)."""
    spills, sync = m.get("queue_spills", 0), m.get("queue_sync_writes", 0)
    return f"{spills} ({sync} written in the call: buffer pool 95% waiting for write I/O)" if sync else str(spills)


def print_metrics(m: dict, out) -> None:
    state = "crashed" if m["crashed"] else "ended with a controlled shutdown"
    if m["crashed"] and m.get("writes_torn_at_crash") is not None:
        state = f"crashed (the plug pulled at {m['ended_at_s']:.6f} s; {torn_text(m['writes_torn_at_crash'])})"
    ended = m.get("ended", "controlled")
    if ended in ("immediate", "preemptive") or (ended == "controlled" and m.get("end_at_s") is not None):
        # the end asked for: its mode, the platform's command, when, and the units it found
        state = (f"ended with {'an' if ended == 'immediate' else 'a'} {ended} shutdown ({m['end_command']} at "
                 f"{m['ended_at_s']:.6f} s; units of work in flight {m['uows_in_flight_at_end']}"
                 + (f": {m['in_flight_at_end']}" if m["uows_in_flight_at_end"] else "") + ")")
    if m.get("abnormal_end"):
        state = f"ended abnormally ({m['abnormal_end']})"
    elif m.get("crash_not_reached"):
        state = m["crash_not_reached"]
    click.echo(f"{m['workload']} on {m['platform']} ({m['device']}, host {m['host']}), seed {m['seed']}: "
               f"{m['virtual_s']:.6f} virtual seconds, {state}")
    rows = [
        ("messages put / got", f"{m['messages_put']} / {m['messages_got']}"),
        ("commits / backouts", f"{m['commits']} / {m['backouts']}"),
        *([("refused MQI calls", _refused(m))] if m.get("failed_calls") else []),
        *([("target rate", _rate_text(target_rate(m)))] if target_rate(m) else []),
        ("CPU busy / waiting for a core (µs)", f"{m['cpu_busy_us']:.0f} / {m['cpu_wait_us']:.0f} "
                                               f"({m['host_cores']} cores)"),
        ("device busy / queued / shared (µs)", f"{m['device_busy_us']:.0f} / {m['device_wait_us']:.0f} / "
                                               f"{m['device_shared_us']:.0f}"),
        ("queue-file spills", _spills(m)),
        ("queue-file bytes cached / written", f"{m.get('queue_file_bytes_cached', 0)} / "
                                              f"{m['queue_file_bytes_written']}"),
        ("forces / waited for the writer", f"{m['forces']} / {m.get('forces_waited', 0)}"),
        ("log records / write cycles", f"{m.get('log_records', 0)} / {m.get('write_cycles', 0)}"),
        ("logical bytes / writes", f"{m['logical_bytes']} / {m['logical_writes']}"),
        ("physical bytes / writes", f"{m['physical_bytes']} / {m['physical_writes']}"),
        ("storage writes, every file", m["storage_writes"]),  # what --crash-after-writes counts
        ("write size short / long / max", f"{m['write_size_short_bytes']:.0f} / {m['write_size_long_bytes']:.0f} / "
                                          f"{m['write_size_max_bytes']}"),
        ("write time short / long / max (µs)", f"{m['write_time_short_us']:.1f} / {m['write_time_long_us']:.1f} / "
                                               f"{m['write_time_max_us']:.1f}"),
        *([("commit time, mean (µs)", f"{m['measured_commit_elapsed_us']:.1f}")]
          if m.get("measured_commit_elapsed_us") else []),
        *([("log writer busy / I/O in flight", _busy_text(m))] if m.get("measured_s") else []),
        ("checkpoints", m["checkpoints"]),
        ("log in use, most (bytes)", m["active_log_used_bytes_max"]),
        ("units of work rolled back / forward", f"{m['uows_rolled_back']} / {m['uows_rolled_forward']}"),
        ("compression in / out (bytes)", f"{m['compression_in_bytes']} / {m['compression_out_bytes']}"),
        ("workload fingerprint", m["fingerprint"][:16]),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"  {key:<{width}}  {value}")
    if nothing_measured(m):
        click.echo(f"  NOTHING MEASURED: {why_nothing_measured(m, 'no figure above')}")
    elif short := short_window(m):
        click.echo(f"  SHORT MEASURED WINDOW: {short}")
    if out is not None:
        click.echo(f"Files in {out}: {QM_DIR}/ (log and queue files), {METRICS_FILE}, {JOURNAL_FILE}, "
                   f"{m['error_log']}")
    for line in provenance_lines(for_run(m)):
        click.echo(line)


def _busy_text(m: dict) -> str:
    """The writer's task busy and I/O busy over the measured window (IBM's "Logger task busy",
    "Logger I/O busy"): how much of the time it had a write cycle in hand, and a write in flight."""
    window = m["measured_s"] * 1e6
    return (f"{min(1.0, m.get('measured_writer_busy_us', 0.0) / window):.1%} / "
            f"{min(1.0, m.get('measured_io_busy_us', 0.0) / window):.1%} of the measured window")


def target_rate(m: dict) -> dict | None:
    """A paced workload's target (``rate``, round trips a second) against what it achieved
    over the time it ran; None for an unpaced one. ``reached``: within 5% of the target (the
    requesters' Poisson schedule varies a little)."""
    params = m.get("params") or {}
    target = params.get("rate") or 0
    span = min(params.get("duration") or 0, m.get("workload_s") or m.get("virtual_s") or 0)
    if not target or not span or m.get("round_trips") is None:
        return None
    achieved = m["round_trips"] / span
    return {"target_per_s": target, "achieved_per_s": round(achieved, 1), "reached": achieved >= 0.95 * target}


def _rate_text(rate: dict) -> str:
    text = f"{rate['target_per_s']:,.0f} round trips/s, achieved {rate['achieved_per_s']:,.0f}/s"
    if rate["reached"]:
        return text
    return (text + ": NOT REACHED (each requester waits for its reply, so a log slower than the target "
            "paces the work: the figures are for the rate achieved)")


