"""Topologies of queue managers and their channels on the command line (issue 42): ``mqlog
topology list | run | restart``, ``mqlog chstatus`` (DISPLAY CHSTATUS(*) SAVED) and ``mqlog
resolve`` (RESOLVE CHANNEL). The work is :mod:`mqlog.topology`'s; this module parses and prints.
"""

from __future__ import annotations

from pathlib import Path

import click

from mqlog.cli.group import cli, emit_json, json_option
from mqlog.core.errors import SpecError


@cli.group("topology")
def topology_group() -> None:
    """Several queue managers joined by sender/receiver channels, in one virtual time."""


@topology_group.command("list")
@json_option("the built-in topologies")
def topology_list_cmd(as_json: bool):
    """List the built-in topologies (spec files in mqlog/topologies/)."""
    from mqlog.topology import builtins, read_spec

    rows = []
    for name in builtins():
        document, _origin = read_spec(name)
        rows.append({"name": name, "workload": document["workload"], "description": document.get("description", ""),
                     "qmgrs": [f"{q['name']} ({q['platform']}, {q.get('device', 'ssd')})" for q in document["qmgr"]],
                     "channels": [c["name"] for c in document["channel"]]})
    if as_json:
        emit_json({"topologies": rows})
        return
    for row in rows:
        click.echo(f"{row['name']}: {row['description']}")
        click.echo(f"    {row['workload']}; {', '.join(row['qmgrs'])}; channels {', '.join(row['channels'])}")


def _sets(items) -> dict:
    out: dict[str, dict[str, str]] = {"workload": {}, "channel": {}, "link": {}}
    for item in items:
        target, eq, value = item.partition("=")
        section, dot, key = target.strip().partition(".")
        if not eq or not dot or section not in out or not key.strip():
            raise SpecError(f"--set {item!r}: expected SECTION.KEY=VALUE with SECTION one of workload, channel, link")
        if key.strip() in out[section]:
            raise SpecError(f"--set {section}.{key} is given twice; give each once")
        out[section][key.strip()] = value
    return out


@topology_group.command("run")
@click.argument("spec")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="keep the run: a topology run directory (a run directory per queue manager inside)")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="the run's seed (default: the spec's, else 0)")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY (the workload's parameters), channel.ATTR (BATCHSZ, BATCHINT, BATCHLIM, NPMSPEED, "
                   "PIPELINELENGTH: every channel), link.KEY (latency_us, bandwidth_mbps: every channel)")
@click.option("--crash", metavar="QMGR:N", help="pull queue manager QMGR's plug after N of its storage writes "
                                                "(the others are killed at that instant)")
@json_option()
def topology_run_cmd(spec: str, out: Path | None, seed: int | None, sets, crash: str | None, as_json: bool):
    """Run SPEC (a built-in topology or a TOML spec file): every queue manager on its own log,
    device and host, the channels between them, the workload across them; print each queue
    manager's log side by side and each channel's batches."""
    from mqlog.topology import load, run

    from mqlog.cli.group import Progress

    topology = load(spec, _sets(sets), seed=seed, crash=crash)  # every check before any work
    label = f"{topology.origin} ({', '.join(q.name for q in topology.config.qmgrs)})"
    result = run(topology, out, progress=lambda: Progress(label))
    document = summary(topology, result)
    if as_json:
        emit_json(document)
        return
    _print_summary(document)
    if out is not None:
        click.echo(f"kept in {out} (a run directory per queue manager: {', '.join(document['qmgrs'])})")


def summary(topology, result) -> dict:
    """A topology run's figures: each queue manager's log, each channel's batches."""
    from mqlog.core.workload.topology import delivery_verdict

    cfg = topology.config
    rows = {}
    delivered = max(1, sum(c["messages_sent"] for c in result.channels.values()))
    for q in cfg.qmgrs:
        m = result.metrics[q.name]
        rows[q.name] = {"platform": q.platform, "device": q.device, "log_records": m["log_records"],
                        "log_bytes": m["logical_bytes"], "physical_writes": m["physical_writes"],
                        "forces": m["forces"], "commits": m["commits"],
                        "writes_per_message": round(m["physical_writes"] / delivered, 3),
                        "log_bytes_per_message": round(m["logical_bytes"] / delivered, 1),
                        "cpu_busy_us": round(m["cpu_busy_us"], 1), "round_trips": m["round_trips"],
                        "log_used_max_bytes": m["active_log_used_bytes_max"],
                        "log_capacity_bytes": m["active_log_capacity_bytes"],
                        "uows_rolled_forward": m["uows_rolled_forward"], "uows_rolled_back": m["uows_rolled_back"],
                        "shunts": m["shunts"], "failed_calls": m["failed_calls"]}
    channels = {}
    for name, c in result.channels.items():
        channels[name] = {**c, "messages_per_batch": round(c["messages_sent"] / c["batches"], 2) if c["batches"] else 0.0,
                          "in_doubt_s": round(c["in_doubt_us"] / 1e6, 6)}
    delivery = None if result.crashed else delivery_verdict(cfg, result.journals, result.channels)
    return {"topology": topology.origin, "workload": cfg.workload, "params": dict(cfg.spec().params), "seed": cfg.seed,
            "virtual_s": round(max(m["workload_s"] for m in result.metrics.values()), 6), "crashed": result.crashed,
            "delivered_s": round(max(m["delivered_s"] for m in result.metrics.values()), 6),
            "messages_per_s": round(delivered / max(1e-9, max(m["delivered_s"] for m in result.metrics.values())), 1),
            "qmgrs": rows, "channels": channels,
            # (the same in order, each with its name: a channel's name has dots, which a path cannot)
            "qmgr_list": [{"name": n, **r} for n, r in rows.items()],
            "channel_list": [{"name": n, **c, "delivery": (delivery or {}).get(n)} for n, c in channels.items()],
            "delivery": delivery}


def _print_summary(doc: dict) -> None:
    click.echo(f"{doc['topology']}: {doc['workload']} {', '.join(f'{k}={v}' for k, v in doc['params'].items())}, "
               f"seed {doc['seed']}, {doc['virtual_s']:.3f} virtual s"
               + (f"; CRASHED ({doc['crashed']})" if doc["crashed"] else ""))
    click.echo(f"{'QMGR':<10} {'PLATFORM':<12} {'DEVICE':<6} {'RECORDS':>8} {'LOG KB':>9} {'WRITES':>7} "
               f"{'WRITES/MSG':>10} {'LOG B/MSG':>9} {'COMMITS':>8}")
    for name, r in doc["qmgrs"].items():
        click.echo(f"{name:<10} {r['platform']:<12} {r['device']:<6} {r['log_records']:>8} {r['log_bytes'] / 1024:>9.1f} "
                   f"{r['physical_writes']:>7} {r['writes_per_message']:>10.3f} {r['log_bytes_per_message']:>9.1f} "
                   f"{r['commits']:>8}")
    click.echo(f"{'CHANNEL':<20} {'BATCHES':>7} {'MESSAGES':>8} {'MSG/BATCH':>9} {'IN DOUBT ms':>11} {'OUTAGES':>7} "
               f"{'STATUS':<8}")
    for name, c in doc["channels"].items():
        click.echo(f"{name:<20} {c['batches']:>7} {c['messages_sent']:>8} {c['messages_per_batch']:>9.2f} "
                   f"{c['in_doubt_us'] / 1000:>11.1f} {c['outages']:>7} {c['status']:<8}")
    if doc["delivery"] is not None:
        for name, d in doc["delivery"].items():
            click.echo(_delivery_line(name, d))


def _delivery_line(name: str, d: dict) -> str:
    return f"{name}: {d['delivered']} delivered, {d['waiting']} waiting, {d['lost']} lost, {d['duplicated']} duplicated"


def _resolved_line(name: str, decided: list) -> str:
    return (f"{name}: {sum(d['committed'] for d in decided)} batch(es) in doubt committed, "
            f"{sum(not d['committed'] for d in decided)} backed out")


@topology_group.command("restart")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--verify", is_flag=True, help="check each queue manager against its journal and every channel end "
                                             "to end; exit 1 if anything was lost or delivered twice")
@json_option()
def topology_restart_cmd(directory: Path, verify: bool, as_json: bool):
    """Restart every queue manager of the topology run DIRECTORY holds and resynchronise each
    channel (batches in doubt committed or backed out by the receiver's last LUWID); with
    --verify, check each queue manager against its journal and every channel end to end."""
    from mqlog.topology import restart_dir

    result = restart_dir(directory)
    if not verify:
        result = {"resolved": result["resolved"], "restart_s": result["restart_s"]}
    if as_json:
        emit_json(result)
    elif not verify:
        for name, decided in result["resolved"].items():
            click.echo(_resolved_line(name, decided))
        return
    else:
        for name, verdict in result["verdicts"].items():
            click.echo(f"{name}: {'OK' if not (verdict['committed_missing'] or verdict['uncommitted_present'] or verdict['duplicates']) else 'FAILED'} "
                       + ", ".join(f"{k} {v}" for k, v in verdict.items()))
        for name, decided in result["resolved"].items():
            if decided:
                click.echo(_resolved_line(name, decided))
        for name, d in result["delivery"].items():
            click.echo(_delivery_line(name, d))
        click.echo("verified: nothing lost, nothing delivered twice" if result["ok"] else "VERIFY FAILED")
    if verify and not result["ok"]:
        raise SystemExit(1)


@cli.command("chstatus")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_option()
def chstatus_cmd(directory: Path, as_json: bool):
    """DISPLAY CHSTATUS(*) SAVED on each end of every channel of the topology run DIRECTORY
    holds: in doubt or not, the last committed batch's sequence number and LUWID, the batch in
    doubt's (read from each queue manager's synchronisation data; nothing is changed)."""
    from mqlog.topology import chstatus

    rows = chstatus(directory)
    if as_json:
        emit_json({"chstatus": rows})
        return
    for row in rows:
        click.echo(f"CHANNEL({row['CHANNEL']}) CHLTYPE({row['CHLTYPE']}) QMNAME({row['QMNAME']}) "
                   f"INDOUBT({row['INDOUBT']})")
        click.echo(f"   LSTSEQNO({row['LSTSEQNO']}) LSTLUWID({row['LSTLUWID']}) CURSEQNO({row['CURSEQNO']}) "
                   f"CURLUWID({row['CURLUWID']})")


@cli.command("resolve")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--channel", required=True, help="the channel's name")
@click.option("--action", required=True, type=click.Choice(["COMMIT", "BACKOUT"], case_sensitive=False),
              help="COMMIT: the receiver has the batch; BACKOUT: it does not (its messages are sent again)")
@json_option()
def resolve_cmd(directory: Path, channel: str, action: str, as_json: bool):
    """RESOLVE CHANNEL(NAME) ACTION(COMMIT | BACKOUT) on the sending queue manager of the
    topology run DIRECTORY holds: settle its batches in doubt by hand, as an operator does when
    the partner cannot be reached (the wrong action loses or duplicates the batch)."""
    from mqlog.topology import resolve

    decided = resolve(directory, channel, action)
    if as_json:
        emit_json({"channel": channel, "action": action.upper(), "resolved": decided})
        return
    click.echo(f"{channel}: {len(decided)} batch(es) in doubt {'committed' if action.upper() == 'COMMIT' else 'backed out'}"
               if decided else f"{channel}: no batch in doubt")
