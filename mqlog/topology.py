"""Topologies of queue managers joined by channels (issue 42), as the command line and Spark use
them: topology spec files and the built-in ones, their run directories, restart with channel
resolution, DISPLAY CHSTATUS SAVED and RESOLVE CHANNEL.

A **topology spec** is TOML data (never evaluated), checked whole before anything runs – every
error names the file and the field::

    workload = "channel-request-reply"   # or "channel-feed"
    seed = 7                             # optional
    [params]                             # the workload's (mqlog.core.workload.topology)
    requesters = 4
    [[qmgr]]                             # two or more
    name = "ZQM1"                        # 1-48 characters
    platform = "zos"                     # a platform mqlog knows
    device = "dasd"                      # optional (ssd), a device profile or FILE.toml[:NAME]
    host = "..."                         # optional, a host profile
    [qmgr.log]                           # optional: the platform's log parameters
    OUTBUFF = 4000
    [[channel]]                          # a sender/receiver pair
    name = "ZQM1.TO.LQM1"
    from = "ZQM1"
    to = "LQM1"
    BATCHSZ = 50                         # optional: BATCHSZ, BATCHINT (ms), BATCHLIM (KB),
    latency_us = 250                     #   NPMSPEED, PIPELINELENGTH, XMITQ, latency_us,
    outages = [[0.5, 2.0]]               #   bandwidth_mbps, outages ([start, length] seconds)

The built-in topologies are such files in ``mqlog/topologies/`` (``mqlog topology list``).
``--set`` items go over a spec: ``workload.KEY=VALUE``, ``channel.ATTR=VALUE`` (every channel),
``link.KEY=VALUE`` (every channel's link).

A **topology run directory** holds ``topology.json`` (the spec as run, the seed, the crash if
any, each channel's figures and the end-to-end check) and, for each queue manager, a run
directory of its own named after it (``DIR/ZQM1/``: run.json, ``qm/``, metrics, journal, error
log), so that every tool that reads one queue manager's run reads it there unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from mqlog.core.disk.devices import get_profile
from mqlog.core.errors import MqlogError, ParameterError, SpecError
from mqlog.core.host.profiles import DEFAULT_HOST, get_host
from mqlog.core.workload.channels import ChannelDef, LinkDef
from mqlog.core.workload.topology import TOPOLOGY_WORKLOADS, QmDef, TopologyConfig
from mqlog.platforms import choose
from mqlog.rundir import locked, write_json

#: the built-in topologies' spec files
BUILTIN_DIR = Path(__file__).with_name("topologies")
#: a topology run directory's own file
TOPOLOGY_FILE = "topology.json"

#: a channel's attributes in a spec: MQ's name -> (ChannelDef field, type)
CHANNEL_ATTRIBUTES = {"BATCHSZ": ("batchsz", int), "BATCHINT": ("batchint_ms", int), "BATCHLIM": ("batchlim_kb", int),
                      "NPMSPEED": ("npmspeed", str), "PIPELINELENGTH": ("pipelinelength", int), "XMITQ": ("xmitq", str)}
#: a link's keys in a spec
LINK_KEYS = {"latency_us": float, "bandwidth_mbps": float, "outages": list}
_QMGR_KEYS = {"name", "platform", "device", "host", "log"}
_TOP_KEYS = {"workload", "seed", "params", "qmgr", "channel", "description"}


def builtins() -> dict[str, Path]:
    """The built-in topologies: name -> spec file."""
    return {path.stem: path for path in sorted(BUILTIN_DIR.glob("*.toml"))}


@attrs.frozen
class Topology:
    """A checked topology spec: the config the core runs, and the document that says it (for
    topology.json, from which a restart builds the same config again)."""

    config: TopologyConfig
    document: dict
    origin: str


def _typed(value, kind, where: str):
    """``value`` (TOML's, or --set's text) as ``kind``, or a SpecError naming ``where``."""
    if isinstance(value, str) and kind is not str:
        try:
            value = json.loads(value) if kind in (list, bool) else kind(value)
        except ValueError:
            raise SpecError(f"{where}: expected {kind.__name__}, got {value!r}") from None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SpecError(f"{where}: expected {kind.__name__}, got {value!r}")
    return value


def _unknown(keys, known, where: str) -> None:
    extra = sorted(set(keys) - set(known))
    if extra:
        raise SpecError(f"{where}: unknown field(s) {', '.join(extra)}; known: {', '.join(sorted(known))}")


def read_spec(name_or_file: str) -> tuple[dict, str]:
    """The spec document of a built-in name or a TOML file, and its origin; a SpecError naming
    the file (and line, for TOML syntax) otherwise."""
    known = builtins()
    path = known.get(name_or_file, Path(name_or_file))
    if name_or_file not in known and not path.is_file():
        raise SpecError(f"topology {name_or_file!r}: neither a built-in topology ({', '.join(known)}) nor a file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), str(path if name_or_file not in known else name_or_file)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise SpecError(f"{path}: not a topology spec: {exc}") from None


def apply_sets(document: dict, sets: dict[str, dict[str, str]]) -> dict:
    """``--set`` items over a spec document: workload.KEY (the workload's parameters),
    channel.ATTR and link.KEY (every channel)."""
    out = json.loads(json.dumps(document))
    out.setdefault("params", {}).update(sets.get("workload", {}))
    for key, value in sets.get("channel", {}).items():
        for channel in out.get("channel", []):
            channel[key.upper()] = value
    for key, value in sets.get("link", {}).items():
        for channel in out.get("channel", []):
            channel[key] = value
    return out


def build(document: dict, origin: str, *, seed: int | None = None, crash: tuple | None = None) -> Topology:
    """Check a spec document whole and build its topology (SpecError naming ``origin`` and the
    field on the first thing wrong)."""
    if not isinstance(document, dict):
        raise SpecError(f"{origin}: not a topology spec")
    _unknown(document, _TOP_KEYS, origin)
    workload = document.get("workload")
    if workload not in TOPOLOGY_WORKLOADS:
        raise SpecError(f"{origin}: workload: give one of {', '.join(TOPOLOGY_WORKLOADS)}, got {workload!r}")
    defaults = TOPOLOGY_WORKLOADS[workload]
    raw = document.get("params", {})
    _unknown(raw, defaults, f"{origin}: params")
    params = {k: _typed(v, type(defaults[k]), f"{origin}: params.{k}") for k, v in raw.items()}
    for k, v in params.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
            raise SpecError(f"{origin}: params.{k}: must not be negative, got {v}")
    qmgrs, kept = [], []
    for i, q in enumerate(document.get("qmgr", [])):
        where = f"{origin}: qmgr[{i}]"
        if not isinstance(q, dict):
            raise SpecError(f"{where}: expected a table")
        _unknown(q, _QMGR_KEYS, where)
        name = _typed(q.get("name", ""), str, f"{where}.name")
        if not (1 <= len(name) <= 48) or not all(c.isalnum() or c in "._%/" for c in name):
            raise SpecError(f"{where}.name: 1 to 48 characters of A-Z, 0-9, . _ % /, got {name!r}")
        try:
            choice = choose(_typed(q.get("platform", ""), str, f"{where}.platform"))
            values = choice.configure({k: str(v) for k, v in q.get("log", {}).items()})
            device = _typed(q.get("device", "ssd"), str, f"{where}.device")
            get_profile(device)
            host = _typed(q.get("host", DEFAULT_HOST), str, f"{where}.host")
            get_host(host)
        except MqlogError as exc:
            raise SpecError(f"{where} ({name}): {exc}") from None
        qmgrs.append(QmDef(name, choice.name, choice.named_maker(values, name), values, device, host))
        kept.append({"name": name, "platform": choice.name, "device": device, "host": host,
                     "log": {k: str(v) for k, v in q.get("log", {}).items()}})
    channels, kept_channels = [], []
    for i, c in enumerate(document.get("channel", [])):
        where = f"{origin}: channel[{i}]"
        if not isinstance(c, dict):
            raise SpecError(f"{where}: expected a table")
        _unknown(c, {"name", "from", "to", *CHANNEL_ATTRIBUTES, *LINK_KEYS}, where)
        fields = {field: _typed(c[key], kind, f"{where}.{key}") for key, (field, kind) in CHANNEL_ATTRIBUTES.items()
                  if key in c}
        link = {key: _typed(c[key], kind, f"{where}.{key}") for key, kind in LINK_KEYS.items() if key in c}
        try:
            if "outages" in link:
                link["outages"] = tuple((float(a), float(b)) for a, b in link["outages"])
            if "npmspeed" in fields:
                fields["npmspeed"] = fields["npmspeed"].upper()
            channels.append(ChannelDef(_typed(c.get("name", ""), str, f"{where}.name"),
                                       _typed(c.get("from", ""), str, f"{where}.from"),
                                       _typed(c.get("to", ""), str, f"{where}.to"), link=LinkDef(**link), **fields))
        except (MqlogError, TypeError, ValueError) as exc:
            raise SpecError(f"{where}: {exc}") from None
        kept_channels.append(dict(c))
    try:
        config = TopologyConfig(qmgrs, channels, workload, params, seed if seed is not None else
                                _typed(document.get("seed", 0), int, f"{origin}: seed"), crash)
    except MqlogError as exc:
        raise SpecError(f"{origin}: {exc}") from None
    return Topology(config, {"workload": workload, "params": dict(config.spec().params),
                             "qmgr": kept, "channel": kept_channels, "seed": config.seed}, origin)


def load(name_or_file: str, sets: dict | None = None, *, seed: int | None = None, crash: str | None = None) -> Topology:
    """A built-in topology or a spec file, with ``--set`` items over it, a seed and a crash
    (``QM:N``: pull QM's plug after N of its storage writes), all checked before any work."""
    document, origin = read_spec(name_or_file)
    return build(apply_sets(document, sets or {}), origin, seed=seed, crash=parse_crash(crash))


def parse_crash(text: str | None) -> tuple | None:
    if text is None:
        return None
    name, colon, count = text.rpartition(":")
    if not colon or not name or not count.isdigit():
        raise SpecError(f"--crash {text!r}: give QMGR:N (crash queue manager QMGR after N of its storage writes)")
    return name, int(count)


# --- run directories --------------------------------------------------------------------------

def run(topology: Topology, out: Path | None = None, progress=None):
    """Run a topology (in memory), and with ``out`` keep it as a topology run directory (refused
    if ``out`` already holds a run); ``progress()`` makes the caller's progress (an update
    function and close, :class:`mqlog.usecases.Progress`). Returns the core's TopologyResult."""
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.workload.topology import delivery_verdict, run_topology
    from mqlog.usecases import keep

    cfg = topology.config
    if out is not None and (out / TOPOLOGY_FILE).exists():
        raise MqlogError(f"{out}: already holds a topology run; give a new directory")
    sink = progress() if progress is not None else None
    try:
        result = run_topology(cfg, {q.name: MemoryStorage() for q in cfg.qmgrs},
                              progress=sink.update if sink is not None else None)
    finally:
        if sink is not None:
            sink.close()
    if out is None:
        return result
    out.mkdir(parents=True, exist_ok=True)
    with locked(out, "--out"):
        for q in cfg.qmgrs:
            keep(out / q.name, result.result_of(q.name), platform=q.platform, log=q.log_config, device=q.device,
                 host=q.host, workload=cfg.workload, params=dict(cfg.spec().params), seed=cfg.seed, qm_name=q.name)
        write_json(out / TOPOLOGY_FILE, {"version": 1, "spec": topology.document, "origin": topology.origin,
                                         "crash": list(cfg.crash) if cfg.crash else None, "crashed": result.crashed,
                                         "channels": result.channels,
                                         "delivery": None if result.crashed else delivery_verdict(cfg, result.journals,
                                                                                                 result.channels),
                                         "restarts": []})
    return result


def load_dir(directory: Path) -> tuple[Topology, dict]:
    """The topology a run directory holds (its spec rebuilt and checked) and topology.json."""
    from mqlog.rundir import read_json

    path = Path(directory) / TOPOLOGY_FILE
    if not path.is_file():
        raise MqlogError(f"{directory}: no {TOPOLOGY_FILE}: not a directory written by 'mqlog topology run --out'")
    saved = read_json(path)
    if not isinstance(saved, dict) or saved.get("version") != 1 or not isinstance(saved.get("spec"), dict):
        raise MqlogError(f"{path}: not a topology record (version 1 with its spec)")
    return build(saved["spec"], str(path)), saved


def _storages(topology: Topology, directory: Path) -> dict:
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.rundir import QM_DIR

    return {q.name: DirectoryStorage(Path(directory) / q.name / QM_DIR) for q in topology.config.qmgrs}


def _journals(topology: Topology, directory: Path) -> dict:
    from mqlog.core.workload.journal import Journal
    from mqlog.rundir import JOURNAL_FILE, read_json

    out = {}
    for q in topology.config.qmgrs:
        path = Path(directory) / q.name / JOURNAL_FILE
        if not path.is_file():
            raise MqlogError(f"{path}: missing: the topology's journals say what its applications and channels were "
                             f"told, and restart verifies against them")
        out[q.name] = Journal.from_json(read_json(path), source=str(path))
    return out


def restart_dir(directory: Path) -> dict:
    """``mqlog topology restart DIR``: restart every queue manager of the topology on its files,
    let each channel resynchronise (its batches in doubt committed or backed out by the
    receiver's last LUWID), verify each queue manager against its journal and every channel
    end to end; the files, journals, error logs and topology.json are updated. Returns
    {"verdicts", "resolved", "delivery", "reports"} as JSON-able data."""
    from mqlog.core.workload.run import later_ending
    from mqlog.core.workload.topology import restart_topology
    from mqlog.rundir import JOURNAL_FILE, append_messages, record_ending

    directory = Path(directory)
    topology, saved = load_dir(directory)
    names = [q.name for q in topology.config.qmgrs]
    with locked(directory):
        storages = _storages(topology, directory)
        journals = _journals(topology, directory)
        try:
            out = restart_topology(topology.config, storages, journals, saved.get("channels"))
        finally:
            for storage in storages.values():
                storage.close()
        for name in names:
            qm = out["qms"][name]
            write_json(directory / name / JOURNAL_FILE, journals[name].to_json())
            append_messages(directory / name, qm.platform, qm.messages)
            record_ending(directory / name, later_ending(qm.platform, "restart", indoubt=len(qm.in_doubt())))
        summary = {"verdicts": {n: v.as_dict() for n, v in out["verdicts"].items()},
                   "ok": all(v.ok for v in out["verdicts"].values()) and not any(
                       d["lost"] or d["duplicated"] for d in out["delivery"].values()),
                   "resolved": {c: [{"uow": u, "committed": k} for u, k in d] for c, d in out["resolved"].items()},
                   "delivery": out["delivery"],
                   "restart_s": {n: r.restart_virtual_s for n, r in out["reports"].items()}}
        saved.setdefault("restarts", []).append(summary)
        write_json(directory / TOPOLOGY_FILE, saved)
    return summary


def chstatus(directory: Path) -> list[dict]:
    """DISPLAY CHSTATUS(*) SAVED on each end of every channel of a topology run directory: the
    synchronisation data each queue manager's files hold (a restart in memory reads it; the
    directory is not changed). A row an end: CHANNEL, CHLTYPE (SDR | RCVR), the queue manager,
    INDOUBT, LSTSEQNO, LSTLUWID, CURSEQNO, CURLUWID."""
    from mqlog.core.disk.storage import DirectoryStorage, MemoryStorage
    from mqlog.core.objects.queuefile import MessageState
    from mqlog.core.workload.channels import sync_records
    from mqlog.core.workload.run import restart_run
    from mqlog.rundir import QM_DIR, read_locked

    directory = Path(directory)
    topology, _saved = load_dir(directory)
    qms = {}
    with read_locked(directory):
        for q in topology.config.qmgrs:
            files, storage = DirectoryStorage(directory / q.name / QM_DIR), MemoryStorage()
            for name in files.list():
                storage.write(name, 0, files.read(name, 0, files.size(name)))
            files.close()
            _report, _verdict, qms[q.name] = restart_run(q.make_platform, storage, device=q.device, host=q.host,
                                                          qm_config=q.qm_config)
    rows = []
    for ch in topology.config.channels:
        for end, role in ((ch.sender, "SDR"), (ch.receiver, "RCVR")):
            records = [(r, state) for _m, r, state in sync_records(qms[end], ch.name) if r.role[0] == role[0]]
            done = [r for r, state in records if state is not MessageState.PUT_UNCOMMITTED]
            doubt = [r for r, state in records if state is MessageState.PUT_UNCOMMITTED]
            last = max(done, key=lambda r: r.seq, default=None)
            current = max(doubt, key=lambda r: r.seq, default=last)
            rows.append({"CHANNEL": ch.name, "CHLTYPE": role, "QMNAME": end, "INDOUBT": "YES" if doubt else "NO",
                         "LSTSEQNO": last.seq if last else 0, "LSTLUWID": (last.luwid if last else bytes(8)).hex().upper(),
                         "CURSEQNO": current.seq if current else 0,
                         "CURLUWID": (current.luwid if current else bytes(8)).hex().upper()})
    return rows


def resolve(directory: Path, channel: str, action: str) -> list[dict]:
    """RESOLVE CHANNEL(channel) ACTION(COMMIT | BACKOUT) on the sending queue manager of a
    topology run directory: its batches in doubt for the channel are committed (the messages
    leave the transmission queue: right only if the receiver has them) or backed out (back on
    the transmission queue, to be sent again). The files and the sender's journal are updated."""
    from mqlog.core.workload.channels import resolve_channel
    from mqlog.core.workload.run import later_ending, restart_run
    from mqlog.rundir import JOURNAL_FILE, append_messages, record_ending

    directory = Path(directory)
    topology, _saved = load_dir(directory)
    chosen = next((c for c in topology.config.channels if c.name == channel), None)
    if chosen is None:
        raise MqlogError(f"{directory}: no channel {channel!r} (the topology has "
                         f"{', '.join(c.name for c in topology.config.channels)})")
    action = action.upper()
    if action not in ("COMMIT", "BACKOUT"):
        raise ParameterError("RESOLVE CHANNEL ACTION", action, "COMMIT or BACKOUT")
    q = topology.config.qmgr(chosen.sender)
    with locked(directory):
        storages = _storages(topology, directory)
        journal = _journals(topology, directory)[q.name]
        try:
            _report, _verdict, qm = restart_run(q.make_platform, storages[q.name], device=q.device, host=q.host,
                                                qm_config=q.qm_config)
            proc = qm.env.process(resolve_channel(qm, None, channel, action, journal=journal))
            qm.env.run(until=proc)
        finally:
            for storage in storages.values():
                storage.close()
        write_json(directory / q.name / JOURNAL_FILE, journal.to_json())
        append_messages(directory / q.name, qm.platform, qm.messages)
        record_ending(directory / q.name, later_ending(qm.platform, "restart", indoubt=len(qm.in_doubt())))
    return [{"uow": u, "committed": c} for u, c in proc.value]
