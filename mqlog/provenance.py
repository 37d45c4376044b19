"""How far to trust a figure (issue 36): for each headline figure of a run, a restart, a
comparison or a report, which mechanisms behind it are calibrated against IBM's published
results (by case id: docs/calibration.md, ``mqlog calibrate``), which inputs are taken from an
IBM publication without an IBM result to check them against, and which are the model's own
assumptions, named.

An entry is ``{"figure", "basis", "cases", "note"}``: ``basis`` is ``calibrated`` (the shape
or ratio the cases check, not IBM's absolute numbers unless the note says so), ``published``
(an input from an IBM document) or ``assumption``. The commands print them as lines and carry
them in ``--json`` as ``provenance``.
"""

from __future__ import annotations

from mqlog.platforms import PLATFORMS

#: what each calibration case checks (docs/calibration.md has IBM's figures and the model's)
CASES = {
    "D1": "TripleWrite against SingleWrite, one putter and one getter: physical writes, pages per write",
    "D2": "the put/commit/get/commit loop, one thread and fifty: writes per iteration, throughput ratio",
    "C1": "the distributed checkpoint cadence (records between checkpoints)",
    "Z1": "single against dual active logging: maximum capacity ratio, the dual-copy write rule",
    "Z2": "COMPLOG: which puts are compressed, CPU for log bandwidth",
    "Z3": "shunting: every third checkpoint, a large unit shunted",
    "R1": "restart time's shapes in IBM's restart report: linear in records replayed, replay and recovery "
          "shares, units and message sizes, 9.1.1 against legacy",
    "Z4": "the z/OS single logger task: I/O time per write to LOGCOPY1 by message size, single and dual",
    "Z5": "the z/OS single logger task: commit elapsed time by message size",
    "Z6": "the z/OS single logger task: sustained log rate by message size, logger I/O busy against task busy",
}

#: device profiles whose figures come from an IBM publication
_PUBLISHED_DEVICES = {"dasd": "IBM's Hursley z/OS DASD log figures (225 µs a write, 180 MB/s a volume)",
                      "ibm-s6-ds8870": "a line fitted to IBM's I/O times per write on a DS8870 with zHPF (Z4)"}


def _entry(figure: str, basis: str, cases=(), note: str = "") -> dict:
    return {"figure": figure, "basis": basis, "cases": list(cases), "note": note}


def _device(device: str, what: str) -> dict:
    name = str(device).lower()
    if name in _PUBLISHED_DEVICES:
        return _entry(f"{what} on {device}", "published", note=_PUBLISHED_DEVICES[name])
    if name.endswith(".toml") or ".toml:" in name:
        return _entry(f"{what} on {device}", "assumption",
                      note="your profile: as good as the measurements it was fitted to (mqlog devices --from-mqldt)")
    return _entry(f"{what} on {device}", "assumption",
                  note=f"the built-in '{device}' profile's latency and bandwidth, not a measured device; "
                       "fit your own with mqlog devices --from-mqldt")


def for_run(m: dict) -> list[dict]:
    """A run's headline figures (``m``: its metrics)."""
    platform, device, host = m.get("platform"), m.get("device"), m.get("host")
    out = []
    descriptor = PLATFORMS.get(platform)
    if descriptor is not None and descriptor.run_provenance is not None:  # what its calibration cases check
        out += [_entry(*entry) for entry in descriptor.run_provenance(m)]
    else:
        out.append(_entry("physical writes and bytes per commit", "assumption",
                          note="the core's idealised reference log: no platform's rules, no IBM figure"))
    out.append(_entry("commits in virtual time, absolute", "assumption",
                      note="no IBM throughput figure is matched; the device and host profiles set it"))
    out.append(_device(device, "write and read times"))
    out.append(_entry(f"CPU per MQI call, log record and byte on {host}", "assumption",
                      note="IBM publishes no CPU per log record; the host profile's figures (mqlog hosts)"))
    return out


def for_restart(report: dict, *, platform: str, device: str, restart_mode: str = "9.1.1") -> list[dict]:
    """A restart's figures (``report``: its JSON document)."""
    out = []
    cases = ("R1",)
    descriptor = PLATFORMS.get(platform)
    if descriptor is not None and descriptor.restart_provenance:  # IBM's restart report is of its queue managers
        out += [_entry(*entry) for entry in descriptor.restart_provenance]
    else:
        out.append(_entry("restart time: replay and recovery", "assumption",
                          note="IBM's restart report (R1) is of distributed queue managers; the same mechanisms "
                               "are assumed here"))
    phases = report.get("restart_phases") or {}
    if report.get("uows_backed_out") or phases.get("recovery_backout_walk_s"):
        out.append(_entry(f"backout page reads (the backward walk) on {device}", "assumption",
                          note="no IBM figure: the device profile's read latency per page the cache does not hold"))
    if restart_mode == "legacy":
        out.append(_entry("restart time before MQ 9.1.1 (legacy)", "calibrated", cases,
                          "its gain over 9.1.1 is largest on nfs3, as IBM's; not IBM's seconds"))
    out.append(_device(device, "log and queue-file reads"))
    return out


def merged(lists) -> list[dict]:
    """Entries of several runs once each (a comparison's configurations), in first-seen order."""
    seen, out = set(), []
    for entries in lists:
        for e in entries:
            key = (e["figure"], e["basis"], tuple(e["cases"]))
            if key not in seen:
                seen.add(key)
                out.append(e)
    return out


def for_rows(rows: list[dict]) -> list[dict]:
    """A comparison's (or a report's) figures: every configuration's run, and restart when it crashed them."""
    lists = []
    for r in rows:
        lists.append(for_run(r))
        if r.get("restart_phases") is not None and r.get("restart_mode"):
            phases = r["restart_phases"]
            if isinstance(phases, str):
                import json

                phases = json.loads(phases)
            lists.append(for_restart({"restart_phases": phases, "uows_backed_out": r.get("restart_uows_backed_out")},
                                     platform=r.get("platform"), device=r.get("device"),
                                     restart_mode=r.get("restart_mode")))
    return merged(lists)


def lines(entries: list[dict]) -> list[str]:
    """The entries as the commands print them, under one heading."""
    out = ["how far to trust these figures (calibration cases: docs/calibration.md):"]
    for e in entries:
        basis = e["basis"] + (f" ({', '.join(e['cases'])})" if e["cases"] else "")
        out.append(f"  {e['figure']}: {basis}" + (f": {e['note']}" if e["note"] else ""))
    return out
