"""``mqlog torture``: fault campaigns (:mod:`mqlog.torture`) on one platform configuration or
a matrix of them, in this process or as Spark tasks, with their figures as a table or JSON;
it exits 1 when a configuration failed a claim or the tool itself failed.
"""

from __future__ import annotations

import sys

import click

from mqlog.cli.internal import remember_seed

from mqlog.cli.group import cli, emit_json, host_for_restart, host_option, resolve_spec, restart_mode_option
from mqlog.torture import FAULT_CLASSES, FAULTS


@cli.command("torture")
@click.option("--platform", "platform_name", default=None,
              help="distributed, zos, or reference (or use --matrix); with a channel workload two, "
                   "SENDER,RECEIVER (zos,distributed): the queue managers QMA and QMB.")
@click.option("--matrix", default=None,
              help="Instead of --platform: 'default' (the compare matrix: 3 distributed, 3 z/OS "
                   "configurations) or a TOML file of [[config]] tables; one campaign each.")
@click.option("--workload", required=True, help="A built-in workload name or FILE.toml. It runs once, recorded; "
                                                "each scenario restarts on a disk materialised from the recording. "
                                                "channel-feed or channel-request-reply: channel scenarios "
                                                "(below).")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY=VALUE, log.PARAM=VALUE (log.* only with --platform) or qmgr.ATTR=VALUE "
                   "(MAXUMSGS, MAXDEPTH; a matrix configuration's [config.qmgr] wins); repeatable.")
@click.option("--faults", default=",".join(FAULT_CLASSES), show_default=True,
              help="Fault classes to inject, comma-separated.")
@click.option("--budget", type=click.IntRange(1, 1_000_000), default=100, show_default=True,
              help="Most scenarios per fault class (a seeded sample when there are more).")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@host_option()
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None,
              help="Seed of the workload and of the campaign's choices (default: the spec's, else 0).")
@restart_mode_option(" Every restart of the campaign; a matrix configuration's restart_mode wins.")
@click.option("--master", default=None, help="Run the scenarios as Spark tasks on this master (local[*], "
                                            "spark://HOST:PORT); the figures are those of a run without it.")
@click.option("--json", "as_json", is_flag=True, help="Print the campaign's figures as JSON.")
def torture_cmd(platform_name, matrix, workload, sets, faults, budget, device, host, seed, restart_mode, master, as_json):
    """Inject crashes, torn writes, bit flips, single-copy damage and crashes during restart,
    one scenario at a time; restart after each and check the queues against what
    applications were told. Exits 1 if any loss went undetected under a fault the
    configuration claims to survive or detect (or the tool itself failed).

    Channel scenarios (--workload channel-feed or channel-request-reply, --platform
    SENDER,RECEIVER): two queue managers joined by a channel each way run the workload once,
    recorded; each scenario crashes one of them after one of its storage writes (every write,
    or --budget of them a queue manager drawn by the seed), restarts both, resolves each
    channel's batch in doubt with its partner and checks every message end to end – none
    lost, none delivered twice. One row a queue manager (crash QMA, crash QMB); only --set
    workload.KEY=VALUE, --budget, --device, --host, --seed and --json apply to them."""
    from tqdm import tqdm

    from mqlog.core.disk.devices import get_profile
    from mqlog.core.host.profiles import get_host
    from mqlog.core.workload.spec import parse_set
    from mqlog.platforms import choose
    from mqlog.torture import Campaign

    from mqlog.core.workload.topology import TOPOLOGY_WORKLOADS

    if workload in TOPOLOGY_WORKLOADS or (platform_name is not None and "," in platform_name):
        return _channels(platform_name, matrix, workload, sets, faults, budget, device, host, seed, restart_mode,
                         master, as_json)
    chosen = tuple(dict.fromkeys(f.strip() for f in faults.split(",") if f.strip()))  # in order, once each
    unknown = [f for f in chosen if f not in FAULTS]  # (the registry: a class added there is taken here)
    if unknown or not chosen:
        raise click.BadParameter(f"{unknown[0] if unknown else faults!r} is not a fault class; choose from "
                                 + ", ".join(FAULTS), param_hint="--faults")
    if (platform_name is None) == (matrix is None):
        raise click.UsageError("give --platform or --matrix (one of them)")
    spec, log_overrides, spec_seed, qmgr = resolve_spec(workload, parse_set(list(sets)), platform=platform_name)
    if matrix is not None:
        from mqlog.spark.compare import check_matrix, load_matrix

        if log_overrides:
            raise click.UsageError("with --matrix, log parameters belong in the matrix, not in --set log.* "
                                   "or the workload file's [log] table")
        cells = [(c["name"], c["platform"], c["log"], c["values"], c.get("restart_mode") or restart_mode,
                  {**qmgr, **c.get("qmgr", {})})
                 for c in check_matrix(load_matrix(matrix))]
    else:
        platform_name = choose(platform_name).name  # any case; the canonical spelling in reports
        cells = [(platform_name, platform_name, log_overrides, choose(platform_name).configure(log_overrides),
                  restart_mode, qmgr)]
    get_profile(device)
    get_host(host)
    host = host_for_restart(host)
    seed = seed if seed is not None else (spec_seed if spec_seed is not None else 0)
    remember_seed(seed)
    campaigns = [(name, log, Campaign(platform, values, choose(platform).maker(values), spec, seed=seed,
                                      device=device, host=host, budget=budget, faults=chosen, restart_mode=mode,
                                      qmgr=attributes))
                 for name, platform, log, values, mode, attributes in cells]
    bar = tqdm(total=sum(c.planned() for _, _, c in campaigns), desc="torture", unit=" scenarios",
               file=sys.stderr, disable=None, delay=1.0, leave=False)

    def planned(total):  # the bar's total was an upper bound until the scenarios were chosen
        bar.total = total
        bar.refresh()

    try:
        if master is not None:
            from mqlog.spark.session import spark_session
            from mqlog.spark.torture import run_campaigns

            run_campaigns(spark_session(master, "mqlog-torture"), [c for _, _, c in campaigns],
                          on_planned=planned, progress=bar.update)
        else:
            plans = [c.plan() for _, _, c in campaigns]
            planned(sum(len(p) for p in plans))
            for (_, _, campaign), scenarios in zip(campaigns, plans):
                campaign.finish(scenarios, campaign.execute(scenarios, progress=bar.update))
    finally:
        bar.close()
    if as_json:
        if matrix is None:
            emit_json(campaigns[0][2].as_dict())
        else:
            emit_json({"matrix": matrix, "configs": [dict(c.as_dict(), name=name) for name, _, c in campaigns]})
    else:
        for n, (name, log, campaign) in enumerate(campaigns):
            settings = " ".join(f"{k}={v}" for k, v in sorted(log.items()))
            label = name if matrix is not None else campaign.platform
            click.echo(("\n" if n else "") + f"{label} {settings}".rstrip()
                       + f", {spec.workload} (seed {seed}): {campaign.physical_writes} storage writes")
            click.echo(campaign.table())
    if any(c.failed for _, _, c in campaigns):
        raise click.exceptions.Exit(1)


def _channels(platform_name, matrix, workload, sets, faults, budget, device, host, seed, restart_mode, master,
              as_json) -> None:
    """``mqlog torture`` with a channel workload: a :class:`~mqlog.torture.channels.ChannelCampaign`.
    Everything it cannot take is refused here, before the topology runs."""
    from tqdm import tqdm

    from mqlog.core.disk.devices import get_profile
    from mqlog.core.host.profiles import get_host
    from mqlog.core.workload.spec import parse_set
    from mqlog.core.workload.topology import TOPOLOGY_WORKLOADS
    from mqlog.torture.channels import ChannelCampaign, channel_topology, topology_params

    names = ", ".join(TOPOLOGY_WORKLOADS)
    if workload not in TOPOLOGY_WORKLOADS:
        raise click.BadParameter(f"two platforms ({platform_name}) run channel scenarios, which need a channel "
                                 f"workload: {names}", param_hint="--workload")
    if matrix is not None or platform_name is None or len(platform_name.split(",")) != 2:
        raise click.BadParameter(f"{workload} is a channel workload: give two platforms, --platform SENDER,RECEIVER "
                                 f"(e.g. zos,distributed){'' if matrix is None else ', not --matrix'}",
                                 param_hint="--platform")
    if master is not None:
        raise click.BadParameter("channel scenarios run in this process (a topology's queue managers share one "
                                 "virtual time); leave --master out", param_hint="--master")
    if faults != ",".join(FAULT_CLASSES) and [f.strip() for f in faults.split(",") if f.strip()] != ["crash"]:
        raise click.BadParameter(f"{faults!r}: channel scenarios are crashes of either queue manager ('crash')",
                                 param_hint="--faults")
    if restart_mode.lower() != "9.1.1":
        raise click.BadParameter("channel scenarios restart as MQ 9.1.1 and later do", param_hint="--restart-mode")
    given = parse_set(list(sets))
    other = [f"{section}.{key}" for section, keys in given.items() if section != "workload" for key in keys]
    if other:
        raise click.BadParameter(f"{other[0]}: channel scenarios take workload.KEY=VALUE only (each queue manager "
                                 f"runs its platform's default log)", param_hint="--set")
    get_profile(device)
    get_host(host)
    seed = seed if seed is not None else 0
    remember_seed(seed)
    platforms = tuple(p.strip() for p in platform_name.split(","))
    cfg = channel_topology(platforms, workload, topology_params(workload, given["workload"]), seed=seed,
                           device=device, host=host_for_restart(host))
    campaign = ChannelCampaign(cfg, seed=seed, budget=budget)
    scenarios = campaign.plan()
    with tqdm(total=len(scenarios), desc="torture", unit=" scenarios", file=sys.stderr, disable=None, delay=1.0,
              leave=False) as bar:
        campaign.finish(scenarios, campaign.execute(scenarios, progress=bar.update))
    if as_json:
        emit_json(campaign.as_dict())
    else:
        ends = " -> ".join(f"{q.name} {q.platform}" for q in cfg.qmgrs)
        writes = ", ".join(f"{name} {n}" for name, n in campaign.physical_writes.items())
        click.echo(f"{ends}, {workload} (seed {seed}): storage writes {writes}")
        click.echo(campaign.table())
        click.echo(f"batches in doubt resolved: commit {campaign.resolved['commit']}, "
                   f"backout {campaign.resolved['backout']}")
    if campaign.failed:
        raise click.exceptions.Exit(1)
