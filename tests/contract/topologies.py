"""Topologies for the channel contract and the channel tests: two queue managers QMA and QMB
on the platforms given, a channel each way, run and restarted on memory; and the crash
sweep – either end crashed at its storage writes, both restarted, each channel resolved with
its partner and checked end to end (:func:`crash_sweep`).

The platforms are data (their registry names, :data:`mqlog.platforms.PLATFORMS`), so the
contract names none: :data:`CHANNEL_PLATFORMS` are every registered platform but the core's
reference log (one idealised file with no limits: a channel joins real queue managers).
"""

from __future__ import annotations

import itertools

from mqlog.core.descriptor import REFERENCE
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.channels import ChannelDef, LinkDef
from mqlog.core.workload.topology import QmDef, TopologyConfig, restart_topology, run_topology
from mqlog.platforms import PLATFORMS, choose

#: the platforms a queue manager of a channel topology runs on
CHANNEL_PLATFORMS = tuple(name for name, d in PLATFORMS.items() if d is not REFERENCE)
#: every (sender, receiver) pair of them, both ways and each with itself
CHANNEL_PAIRS = tuple(itertools.product(CHANNEL_PLATFORMS, repeat=2))


def qm(name: str, platform: str, device: str = "ssd") -> QmDef:
    """Queue manager ``name`` on ``platform`` with its default log."""
    choice = choose(platform)
    values = choice.configure({})
    return QmDef(name, platform, choice.named_maker(values, name), values, device)


def topology(pair, workload="channel-feed", *, devices=("ssd", "ssd"), crash=None, seed=1, link=LinkDef(),
             batchsz=5, batchint_ms=0, **params) -> TopologyConfig:
    """QMA on ``pair[0]`` and QMB on ``pair[1]``, channels QMA.TO.QMB and QMB.TO.QMA."""
    (a, b), (da, db) = pair, devices
    qms = [qm("QMA", a, da), qm("QMB", b, db)]
    chs = [ChannelDef("QMA.TO.QMB", "QMA", "QMB", batchsz=batchsz, batchint_ms=batchint_ms, link=link),
           ChannelDef("QMB.TO.QMA", "QMB", "QMA", batchsz=batchsz, batchint_ms=batchint_ms, link=link)]
    return TopologyConfig(qms, chs, workload, params, seed=seed, crash=crash)


def run(cfg):
    return run_topology(cfg, {q.name: MemoryStorage() for q in cfg.qmgrs})


def restart(result, cfg):
    return restart_topology(cfg, {name: fs.durable for name, fs in result.storages.items()}, result.journals,
                            result.channels)


def crash_sweep(make, step: int = 1, offset: int = 0) -> dict:
    """Crash each end of ``make(crash=...)``'s topology at every ``step``-th storage write
    (from ``offset``), re-running it to each; restart both, resolve, verify. Returns the runs
    made, the batches in doubt resolved by commit and by backout, and every crash point
    whose restart was wrong (a verdict not ok, a message lost or delivered twice)."""
    base = run(make())
    seen = {"runs": 0, "commit": 0, "backout": 0, "bad": []}
    for victim in ("QMA", "QMB"):
        for k in range(offset % step, base.metrics[victim]["storage_writes"], step):
            cfg = make(crash=(victim, k))
            result = run(cfg)
            assert result.crashed == victim
            out = restart(result, cfg)
            seen["runs"] += 1
            for decided in out["resolved"].values():
                seen["commit"] += sum(c for _u, c in decided)
                seen["backout"] += sum(not c for _u, c in decided)
            wrong = {n: v.as_dict() for n, v in out["verdicts"].items() if not v.ok}
            lost = {c: d for c, d in out["delivery"].items() if d["lost"] or d["duplicated"]}
            if wrong or lost:
                seen["bad"].append((victim, k, wrong, lost))
    return seen
