"""``mqlog compare``: one workload, one seed, run against a matrix of platform configurations,
one Spark task per configuration.

Every configuration sees the same application calls and payload bytes – the workload is
generated from the spec and seed alone – and each result row carries the workload's
fingerprint; compare fails loudly if any two differ. A task runs the whole simulation in
memory (virtual time, the same code as ``mqlog run``) and returns the metrics schema of
:func:`mqlog.core.workload.run.collect_metrics` plus the configuration's columns; the driver collects
the rows into a DataFrame, writes ``results.parquet`` and the HTML report.

The matrix is data: :data:`DEFAULT_MATRIX`, or a TOML file of ``[[config]]`` tables (``name``,
``platform``, a ``[config.log]`` table of that platform's log parameters, an optional
``[config.qmgr]`` table of queue manager attributes by MQ's names – MAXUMSGS, MAXDEPTH – over
those ``--set qmgr.X`` gives every configuration and, for ``--crash``,
an optional ``restart_mode``: ``"9.1.1"``, the default, or ``"legacy"``, restart as before
MQ 9.1.1 – queues loaded one after another, one page per replay read; docs/guide/05-restart-time.md). Cells are
plain dicts, so they pickle to executors and the same job runs on ``local[*]`` or a cluster.
``--crash end`` crashes each configuration the moment the workload's last call returns.
``--no-shunting`` removes z/OS log shunting from every configuration (the model's switch, as
``tests/zos/test_shunting.py`` removes it: no CSQ6LOGP parameter, and no real queue manager, turns
it off), so that a page can show what shunting saves (docs/guide/03-shunting.md). A restart that
cannot back a unit of work out (5C6-00D1032A: a record it needs was overwritten) is a result,
not a failed comparison: the row's ``restart_failed`` holds its code and ``restart_error`` the
message.
"""

from __future__ import annotations

import json
import re
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path

from mqlog.core.errors import MqlogError
from mqlog.core.host.profiles import DEFAULT_HOST
from mqlog.core.qm.config import DEFAULT_RESTART_MODE, RESTART_MODES, qmgr_settings
from mqlog.platforms import PLATFORMS

#: ``crash_at_s`` of a comparison that crashes each run the moment its workload ends
CRASH_AT_END = "end"

#: the default matrix: each platform's example configurations (its descriptor's ``examples``),
#: each differing from the one before it in one setting; every other parameter keeps its
#: platform's default
DEFAULT_MATRIX: tuple[dict, ...] = tuple({"name": name, "platform": d.name, "log": dict(log)}
                                         for d in PLATFORMS.values() for name, log in d.examples)


#: a configuration's name is also its run directory's name (``--logs``)
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class FingerprintMismatch(MqlogError):
    """Two configurations of one comparison did not see the same workload."""


def read_toml(path: Path, what: str) -> dict:
    """A TOML file the user named (a matrix, a sweep), parsed; a one-line error naming the
    file if it cannot be read, is not UTF-8 or is not TOML."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MqlogError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise MqlogError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise MqlogError(f"{path}: not valid TOML ({exc})") from None


def load_matrix(path: str | Path | None) -> list[dict]:
    """The default matrix (``None`` or ``"default"``) or the ``[[config]]`` tables of a TOML file;
    errors name the file and the field."""
    if path is None or str(path) == "default":
        return [dict(cell, log=dict(cell["log"])) for cell in DEFAULT_MATRIX]
    path = Path(path)
    data = read_toml(path, "matrix")
    cells = data.get("config")
    if not isinstance(cells, list) or not cells:
        raise MqlogError(f"{path}: field 'config' must be a list of [[config]] tables")
    out, names = [], set()
    for i, cell in enumerate(cells):
        where = f"{path}: config[{i}]"
        if not isinstance(cell, dict):
            raise MqlogError(f"{where} must be a table")
        for key, kind in (("name", str), ("platform", str)):
            if not isinstance(cell.get(key), kind):
                raise MqlogError(f"{where}: field {key!r} is missing or not a string")
        log = cell.get("log", {})
        if not isinstance(log, dict):
            raise MqlogError(f"{where}: field 'log' must be a table")
        unknown = set(cell) - {"name", "platform", "log", "qmgr", "restart_mode"}
        if unknown:
            raise MqlogError(f"{where}: unknown field {sorted(unknown)[0]!r} (name, platform, log, qmgr, "
                             "restart_mode)")
        qmgr = cell_qmgr(cell, where)
        mode = cell.get("restart_mode")
        if isinstance(mode, str):  # any case, as the command line's --restart-mode
            mode = {m.lower(): m for m in RESTART_MODES}.get(mode.strip().lower(), mode)
        if mode is not None and mode not in RESTART_MODES:
            raise MqlogError(f"{where}: field 'restart_mode' must be one of "
                             f"{', '.join(repr(m) for m in RESTART_MODES)}, not {mode!r}")
        if not NAME_PATTERN.fullmatch(cell["name"]):
            raise MqlogError(f"{where}: field 'name' must be 1-64 letters, digits, '.', '_' or '-' "
                             f"(it names the configuration's run directory), not {cell['name']!r}")
        if cell["name"] in names:
            raise MqlogError(f"{where}: the name {cell['name']!r} is used twice")
        names.add(cell["name"])
        out.append({"name": cell["name"], "platform": cell["platform"], "log": {k: str(v) for k, v in log.items()}})
        if qmgr:
            out[-1]["qmgr"] = qmgr
        if mode is not None:
            out[-1]["restart_mode"] = mode
    return out


def describe_matrix(cells: list[dict]) -> list[dict]:
    """Each configuration of a matrix (as :func:`load_matrix` gives it) as ``compare --list``
    shows it: its name, platform (and how prose names it), what it sets – log parameters,
    queue manager attributes, restart mode – and those settings on one line (``K=V, ...``);
    every parameter not named keeps its platform's default (``mqlog config``)."""
    from mqlog.platforms import choose

    out = []
    for cell in cells:
        qmgr, mode = cell.get("qmgr", {}), cell.get("restart_mode")
        settings = [f"{k}={v}" for k, v in cell["log"].items()] + [f"qmgr.{k}={v}" for k, v in qmgr.items()]
        if mode is not None:
            settings.append(f"restart_mode={mode}")
        out.append({"name": cell["name"], "platform": cell["platform"], "platform_title": choose(cell["platform"]).shown,
                    "log": dict(cell["log"]), "qmgr": dict(qmgr), "restart_mode": mode,
                    "settings": ", ".join(settings) or "defaults"})
    return out


def cell_qmgr(cell: dict, where: str) -> dict[str, int]:
    """A matrix or sweep configuration's ``qmgr`` table, checked: the attributes it gives, by
    MQ's names; errors name ``where`` and the attribute."""
    qmgr = cell.get("qmgr", {})
    if not isinstance(qmgr, dict):
        raise MqlogError(f"{where}: field 'qmgr' must be a table of queue manager attributes (MAXUMSGS, MAXDEPTH)")
    try:
        return qmgr_settings(qmgr, defaults=False)
    except MqlogError as exc:
        raise MqlogError(f"{where}: {exc}") from None


def check_matrix(cells: list[dict]) -> list[dict]:
    """Each cell's platform and log parameters validated (before any task starts): a bad
    value is reported once, naming the configuration and the parameter."""
    from mqlog.platforms import choose

    checked = []
    for cell in cells:
        try:
            choice = choose(cell["platform"])
            values = choice.configure({k: str(v) for k, v in cell["log"].items()})
        except MqlogError as exc:
            raise MqlogError(f"configuration {cell['name']!r}: {exc}") from None
        checked.append(dict(cell, platform=choice.name, values=values))  # the platform in any case
    return checked


#: the restart report's figures a row carries, each as ``restart_<name>``
RESTART_FIGURES = ("records_replayed", "bytes_read", "uows_backed_out", "uows_indoubt", "clrs_written",
                   "restart_virtual_s", "cpu_expand_us", "cpu_us", "messages_backed_out", "queues_loaded",
                   "queues_deferred", "replay_spills")


def run_cell(task: dict) -> dict:
    """One configuration's run (in an executor): the metrics row, JSON-safe."""
    from mqlog.core.workload.run import RunConfig
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose
    from mqlog.usecases import Updates, keep, recover, run

    from mqlog.core.qm.config import QmConfig, with_qmgr

    choice = choose(task["platform"])
    maker = choice.maker(task["values"])
    if task.get("shunting") is False:   # --no-shunting: the platform's shunting policy removed
        import attrs

        maker = (lambda storage, base=maker: attrs.evolve(base(storage), shunting=None))
    spec = build_spec(BUILTINS[task["workload"]], task["params"], origin="compare")
    host = task.get("host", DEFAULT_HOST)  # a task made before the host model names none
    crash_at = task.get("crash_at_s")
    qm_config = with_qmgr(QmConfig(), task.get("qmgr", {}))
    cfg = RunConfig(task["platform"], maker, task["values"], spec, seed=task["seed"],
                    device=task["device"], crash_at_s=None if crash_at == CRASH_AT_END else crash_at,
                    crash_at_end=crash_at == CRASH_AT_END, qm_config=qm_config, host=host)
    writer = progress_writer(task)
    result = run(cfg, progress=(lambda: Updates(writer)) if writer is not None else None)
    metrics = dict(result.metrics)
    metrics["config_name"] = task["name"]
    # the parameters the matrix set (by the platform's own spelling), so that the table and the
    # report show what each configuration changed, beside the platform's defaults for the rest
    spelled = {k.lower(): k for k in task["values"]}
    metrics["config_settings"] = [spelled.get(str(k).lower(), str(k)) for k in task["log"]]
    if task.get("shunting") is False:
        metrics["shunting_removed"] = True
    if task.get("runs_dir"):
        # The run's files as ``mqlog run --out`` leaves them (before any restart below).
        keep(Path(task["runs_dir"]) / task["name"], result, platform=task["platform"], log=task["log"],
             device=task["device"], host=host, workload=task["workload"], params=task["params"], seed=task["seed"],
             qmgr=task.get("qmgr", {}))
    if task.get("crash_at_s") is not None and result.crashed:
        # The same crash for every configuration: restart each, verify it against the
        # applications' journal, and report what restart cost.
        import attrs

        from mqlog.core.recovery.outcome import BackoutImpossible

        mode = task.get("restart_mode", DEFAULT_RESTART_MODE)
        metrics["restart_mode"] = mode
        try:
            report, verdict, qm = recover(result, maker, device=task["device"], host=host,
                                          qm_config=attrs.evolve(qm_config, restart_mode=mode))
        except BackoutImpossible as exc:   # the restart's own outcome (00D1032A), shown as such
            code = re.search(r"\b[0-9A-F]{3}-[0-9A-F]{8}\b", str(exc))
            metrics.update({f"restart_{k}": None for k in RESTART_FIGURES})   # no figure: it never completed
            metrics.update({f"restart_{k}": None for k in choice.restart_figures})  # the platform's own too
            metrics["restart_failed"] = code.group(0) if code else "failed"
            metrics["restart_error"] = str(exc)
            metrics["restart_verified"] = False
            return metrics
        restart = report.as_dict()
        metrics.update({f"restart_{k}": restart[k] for k in RESTART_FIGURES})
        # IBM's phases and their sub-steps (the contract the R1 calibration reads), as one
        # JSON column and as a column each (restart_replay_s, restart_recovery_s, ...)
        metrics["restart_phases"] = dict(restart["restart_phases"])
        metrics.update({f"restart_{k}": v for k, v in restart["restart_phases"].items()})
        metrics["restart_verified"] = bool(verdict.ok) if verdict is not None else None
        metrics["restart_failed"] = None   # it completed (a row of every restart has the field)
        # the platform's own figures (z/OS: the CIs restart read from an archive)
        metrics.update({f"restart_{k}": v for k, v in choice.restart_readings(qm.platform.space).items()})
    return metrics


def flatten(metrics: dict) -> dict:
    """A metrics dict as one Parquet row: nested values become JSON text columns."""
    row = {}
    for key, value in metrics.items():
        if isinstance(value, (dict, list)):
            row[key] = json.dumps(value, sort_keys=True)
        else:
            row[key] = value
    return row


def progress_writer(task: dict):
    """How far a task's run has got, for the driver to show while it runs: the virtual seconds
    done, at most twice a wall second, written to ``task["progress_dir"]/KEY`` (KEY: the sweep
    cell's key, else the configuration's name) when this executor sees that directory, else
    sent as one datagram ``KEY SECONDS`` to ``task["progress_addr"]`` (``host:port``, the
    driver's: a standalone cluster without a shared file system). None (no reports) when the
    task names neither it can use."""
    import os
    import socket
    import time

    key = str(task.get("key") or task["name"])
    directory = task.get("progress_dir")
    address = task.get("progress_addr")
    if directory and os.path.isdir(directory):
        path = os.path.join(directory, key)

        def send(text: str) -> None:
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
    elif address and ":" in address:
        host, _, port = address.rpartition(":")
        try:
            target = (host, int(port))
            channel = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        except (ValueError, OSError):
            return None

        def send(text: str) -> None:
            channel.sendto(f"{key} {text}".encode(), target)
    else:
        return None
    last = [0.0]

    def report(virtual_s: float, records: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5:
            return
        last[0] = now
        try:
            send(f"{virtual_s:.6f}")
        except OSError:
            pass  # progress is a courtesy: never a reason for a run to fail

    return report


def compare(spark, *, workload: str, params: dict, seed: int, device: str, cells: list[dict],
            crash_at_s: float | str | None = None, progress=None, runs_dir: str | Path | None = None,
            restart_mode: str = DEFAULT_RESTART_MODE, host: str = DEFAULT_HOST,
            qmgr: dict | None = None, progress_dir: str | None = None, progress_addr: str | None = None,
            shunting: bool = True) -> list[dict]:
    """Run every cell as a Spark task; the metrics rows in matrix order. Raises
    FingerprintMismatch if the configurations did not all see the same workload.

    With ``crash_at_s`` (virtual seconds, or :data:`CRASH_AT_END`), each configuration
    restarts after the crash as its cell's ``restart_mode`` says, else as ``restart_mode``
    says. ``qmgr``: queue manager attributes (MQ's names) for every cell; a cell's own
    ``qmgr`` table wins, attribute by attribute.

    With ``runs_dir``, each task also leaves its configuration's run directory there
    (``runs_dir/NAME``, as ``mqlog run --out`` would; on a cluster, a path every executor
    and the driver can reach). ``shunting=False``: no configuration shunts (``--no-shunting``)."""
    runs = str(Path(runs_dir).resolve()) if runs_dir is not None else None
    tasks = [dict(cell, workload=workload, params=dict(params), seed=seed, device=device, host=host,
                  crash_at_s=crash_at_s, qmgr={**(qmgr or {}), **cell.get("qmgr", {})},
                  runs_dir=runs, restart_mode=cell.get("restart_mode") or restart_mode,
                  progress_dir=progress_dir, progress_addr=progress_addr,
                  **({} if shunting else {"shunting": False})) for cell in cells]
    from mqlog.spark.session import run_tasks

    rows = run_tasks(spark, tasks, run_cell, what="a configuration's run failed", progress=progress)
    order = {cell["name"]: i for i, cell in enumerate(cells)}
    rows.sort(key=lambda r: order[r["config_name"]])
    check_fingerprints(rows)
    # every row has every column, as results.parquet has them (a restart that failed has no
    # phases: None, as a completed one's restart_failed is)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return [{k: r.get(k) for k in keys} for r in rows]


def check_fingerprints(rows: list[dict]) -> None:
    """Raise FingerprintMismatch unless every row saw the same workload."""
    prints = {r["fingerprint"] for r in rows}
    if len(prints) > 1:
        detail = ", ".join(f"{r['config_name']}={r['fingerprint'][:12]}" for r in rows)
        raise FingerprintMismatch(f"the configurations did not see the same workload: {detail}")


def results_frame(spark, rows: list[dict]):
    """The rows as a DataFrame with one column per metric (types from the values)."""
    from pyspark.sql import types as T

    flat = [flatten(r) for r in rows]
    keys = []
    for row in flat:
        keys += [k for k in row if k not in keys]
    fields = []
    for key in keys:
        values = [row.get(key) for row in flat if row.get(key) is not None]
        if values and all(isinstance(v, bool) for v in values):
            kind = T.BooleanType()
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = T.LongType()
        elif values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            kind = T.DoubleType()
            for row in flat:
                if row.get(key) is not None:
                    row[key] = float(row[key])
        else:
            kind = T.StringType()
            for row in flat:
                if row.get(key) is not None and not isinstance(row[key], str):
                    row[key] = str(row[key])
        fields.append(T.StructField(key, kind, True))
    schema = T.StructType(fields)
    return spark.createDataFrame([tuple(row.get(k) for k in keys) for row in flat], schema)


#: the side-by-side table: (label, metric) in display order
TABLE_ROWS = (
    ("platform", "platform"),
    ("messages put / got", ("messages_put", "messages_got")),
    ("commits", "commits"),
    ("forces", "forces"),
    ("logical bytes", "logical_bytes"),
    ("physical bytes", "physical_bytes"),
    ("physical writes", "physical_writes"),
    ("bytes / physical write", ("physical_bytes", "physical_writes")),
    ("partial-page writes / rewrites", ("partial_page_writes", "partial_page_rewrites")),
    ("write time short (us)", "write_time_short_us"),
    ("checkpoints", "checkpoints"),
    ("log switches", "log_switches"),
    ("compression in / out", ("compression_in_bytes", "compression_out_bytes")),
    ("shunts", "shunts"),
    ("archive offloads / bytes", ("archive_offloads", "archive_bytes")),
    ("virtual seconds", "virtual_s"),
    ("restart: mode", "restart_mode"),
    ("restart: records replayed", "restart_records_replayed"),
    ("restart: bytes read", "restart_bytes_read"),
    ("restart: units backed out", "restart_uows_backed_out"),
    ("restart: virtual seconds", "restart_restart_virtual_s"),
    ("restart: replay / recovery (s)", ("restart_replay_s", "restart_recovery_s")),
    ("restart: queues loaded / deferred", ("restart_queues_loaded", "restart_queues_deferred")),
    ("restart: verified", "restart_verified"),
    ("restart: failed", "restart_failed"),
)


def table_cells(rows: list[dict]) -> list[tuple[str, list[str]]]:
    """The side-by-side table as text cells: one line per metric, one column per configuration."""
    lines = [("configuration", [r["config_name"] for r in rows])]
    settings = setting_lines(rows)
    for label, key in TABLE_ROWS:
        cells = []
        for r in rows:
            if label == "bytes / physical write":
                writes = r.get("physical_writes") or 0
                cells.append(f"{r.get('physical_bytes', 0) / writes:,.0f}" if writes else "-")
            elif isinstance(key, tuple):
                cells.append(" / ".join(_fmt(r.get(k)) for k in key))
            else:
                cells.append(_fmt(r.get(key)))
        if label.startswith("restart") and all(set(c.split(" / ")) == {"-"} for c in cells):
            continue  # no crash was asked for (a pair of values is "- / -")
        lines.append((label, cells))
        if label == "platform":
            lines += settings
        if label == "commits":
            refused = [_refused_cell(r.get("failed_calls")) for r in rows]
            if any(c != "none" for c in refused):  # only then: a clean comparison's table is unchanged
                lines.append(("refused MQI calls", refused))
    return lines


def setting_lines(rows: list[dict]) -> list[tuple[str, list[str]]]:
    """One line per log parameter any configuration of the matrix set, with every
    configuration's value of it (its platform's default where it set none; ``-`` on the other
    platform), so that what differs between two configurations is there to see."""
    def load(value, empty):
        return json.loads(value) if isinstance(value, str) else (value if value is not None else empty)

    names: list[str] = []
    for r in rows:
        names += [n for n in load(r.get("config_settings"), []) if n not in names]
    lines = []
    for name in names:
        cells = []
        for r in rows:
            config = load(r.get("config"), {})
            cells.append(_fmt(config[name]) if name in config else "-")
        lines.append((f"log.{name}", cells))
    return lines


def _refused_cell(failed) -> str:
    """A configuration's refused MQI calls, by reason code name and number, most first.
    ``failed`` is the metrics' dict, or its JSON text as a Parquet row keeps it."""
    if isinstance(failed, str):
        failed = json.loads(failed)
    if not failed:
        return "none"
    if isinstance(failed, int):  # a row from before the calls were kept by reason code
        return f"{failed:,}"
    calls = sorted(failed.items(), key=lambda kv: (-kv[1]["calls"], kv[0]))
    return ", ".join(f"{name} ({v['reason']}) {v['calls']:,}" for name, v in calls)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):  # one format for a metric in every column: 0.013 beside 1,234.567
        return f"{value:,.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def format_table(rows: list[dict], width: int | None = None) -> str:
    return format_lines(table_cells(rows), width)


def format_lines(lines: list[tuple[str, list[str]]], width: int | None = None) -> str:
    """Text cells (a header line first) as aligned console text. With ``width`` (the
    terminal's), configurations that do not fit beside the labels go on in a block of their
    own below, labels repeated, so every cell is shown and no line is longer than ``width``
    (unless one configuration alone is wider)."""
    width0 = max(len(label) for label, _ in lines)
    widths = [max(len(cells[i]) for _, cells in lines) for i in range(len(lines[0][1]))]
    blocks: list[list[int]] = [[]]
    used = width0
    for i, w in enumerate(widths):
        if blocks[-1] and width is not None and used + 2 + w > width:
            blocks.append([])
            used = width0
        blocks[-1].append(i)
        used += 2 + w
    return "\n\n".join("\n".join((f"{label:<{width0}}  " + "  ".join(f"{cells[i]:>{widths[i]}}" for i in block))
                                  for label, cells in lines) for block in blocks)
