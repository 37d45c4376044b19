"""Calibration cases as data: loading them, running their runs, and their figures (computed by
:mod:`mqlog.calibration.figures`).

A case file is TOML, one table per case (``cases.toml`` beside this module holds the
built-in ones; ``mqlog calibrate --cases FILE.toml`` reads another)::

    [D1]
    title = "SingleWrite vs TripleWrite, one putter and one getter"
    source = "IBM's title: what they measured"
    assumption = "what IBM did not state, and what the case assumes instead"   # optional
    mechanism = "which of the model's mechanisms produce the figures"          # optional
    [D1.runs.sw]                       # one or more runs, by name
    platform = "distributed"           # default "distributed"
    workload = "putget-pairs"          # a built-in workload
    params = { pairs = 1, messages_per_pair = 2000 }
    log = { LogWriteIntegrity = "SingleWrite" }
    device = "ssd"                     # default "ssd" (``--device`` overrides every run's)
    host = "v93-xeon"                  # default the built-in default host (``--host`` overrides)
    seed = 0                           # default 0
    qmgr = { max_uow_messages = 100010 }  # optional: queue-manager settings (QmConfig fields)
    crash_at = 2.5                     # optional: pull the plug at 2.5 virtual seconds, or
                                       #   "end" (the moment the workload's last call returns)
    restart = { mode = "legacy", device = "nfs3" }  # optional, with crash_at: how the restart
                                       #   after the crash runs (mode 9.1.1 by default, the
                                       #   run's device by default)
    before = { workload = "deep-queue", params = { depth = 1000 } }  # optional: a workload run
                                       #   to its controlled shutdown on the same files first
    [D1.counters.sw]                   # optional: IBM's own counters, in the model's metric names
    physical_writes = 184710
    [[D1.figures]]
    name = "tw_physical_writes_ratio"
    compute = "ratio"                  # a computation of :data:`COMPUTATIONS` ...
    num = "tw.physical_writes"         # ... with its arguments: metrics as RUN.METRIC
    den = "sw.physical_writes"
    ibm = "counters"                   # IBM's value: a number, or "counters" (the same
                                       #   computation over the [counters] tables)
    tolerance = 0.2                    # ±fraction of IBM's value, or [low, high] for the model
    note = "why this tolerance; what IBM did not say"

A run with ``crash_at`` is restarted after its crash (the same platform, log and queue-manager
settings; ``restart`` says the mode and device) and the restart is verified against the
applications' journal (and ``before``'s): a failed verdict is a
:class:`~mqlog.core.errors.CalibrationRunError`, never a figure. The restart's report joins the
run's metrics: ``restart_s`` (its virtual seconds), ``records_replayed``, ``restart_phases`` (the
phases' virtual seconds, ``RUN.restart_phases.replay_s``), ``restart`` (the whole report,
``RUN.restart.messages_reconciled``), ``restart_mode``, ``restart_device``.

Figures are computed from the runs' metrics by a small named computation chosen from a
fixed registry (no expression is evaluated). A metric is named RUN.METRIC, where METRIC may be
dotted into a nested table (``busy.restart_phases.replay_s``). Besides ``ratio`` and the
writer's figures, the registry has restart's shapes: ``linear_r2`` (R² of a straight line
through ``y`` against ``x`` over the runs ``over``), ``share`` (``part`` / ``whole`` in one run)
and ``gain_lead`` (how far ``metric``'s gain, slow run over fast, in the ``lead`` pair is above the
largest of the ``others`` pairs'). The tolerance is a ± fraction of IBM's value, the model's
[low, high] (``inf`` allowed), or one-sided from IBM's value: "at least", "at most", "more
than", "less than" (IBM's value is then the shape's threshold: R² at least 0.95). A figure whose input metric a run does not
report (``log_records`` and ``write_cycles`` before the writer reports them) is MISSED with a
note saying which metric is missing. Every problem with a case file is a
:class:`~mqlog.core.errors.CalibrationCaseError` naming the file, the case and the field.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import attrs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from mqlog.calibration.figures import COMPUTATIONS, ONE_SIDED, MissingMetric, compute, tolerance_text, within
from mqlog.core.errors import CalibrationCaseError, CalibrationRunError, MqlogError, SpecError
from mqlog.platforms import PLATFORMS

#: the built-in cases' file (package data)
BUILTIN_CASES = "cases.toml"

CASE_KEYS = ("title", "source", "assumption", "mechanism", "runs", "runs_from", "counters", "figures")
RUN_KEYS = ("platform", "workload", "params", "log", "device", "host", "seed", "qmgr", "crash_at", "restart",
            "before")
RESTART_KEYS = ("mode", "device")
BEFORE_KEYS = ("workload", "params")
FIGURE_KEYS = ("name", "compute", "ibm", "tolerance", "note")


def _fail(source: str, field: str, reason: str):
    raise CalibrationCaseError(reason, source=source, field=field)


def _text(table: dict, key: str, source: str, where: str, *, required: bool = True) -> str | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        _fail(source, f"{where}.{key}", "missing: expected text" if value is None
              else f"expected text, got {value!r}")
    return value


def _check_keys(table: dict, allowed: tuple, source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            _fail(source, f"{where}.{key}", f"unknown key; allowed: {', '.join(allowed)}")


def _check_run(name: str, run: object, source: str, where: str) -> dict:
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import DEFAULT, choose

    if not isinstance(run, dict):
        _fail(source, where, "expected a table (platform, workload, params, log, device, host, seed)")
    _check_keys(run, RUN_KEYS, source, where)
    platform = run.get("platform", DEFAULT)
    if platform not in PLATFORMS:
        _fail(source, f"{where}.platform", f"unknown platform {platform!r}; known: {', '.join(PLATFORMS)}")
    workload = _text(run, "workload", source, where)
    if workload not in BUILTINS:
        _fail(source, f"{where}.workload", f"unknown workload {workload!r}; known: {', '.join(BUILTINS)}")
    for key in ("params", "log", "qmgr"):
        if not isinstance(run.get(key, {}), dict):
            _fail(source, f"{where}.{key}", "expected a table")
    seed = run.get("seed", 0)
    if type(seed) is not int or not 0 <= seed < 2**64:
        _fail(source, f"{where}.seed", f"expected a whole number 0 to 2^64-1, got {seed!r}")
    device = run.get("device", "ssd")
    if not isinstance(device, str):
        _fail(source, f"{where}.device", f"expected a device profile name, got {device!r}")
    from mqlog.core.host.profiles import DEFAULT_HOST
    host = run.get("host", DEFAULT_HOST)
    if not isinstance(host, str):
        _fail(source, f"{where}.host", f"expected a host profile name, got {host!r}")
    from mqlog.core.qm.config import QmConfig
    qmgr = run.get("qmgr", {})
    for key in qmgr:
        if key not in attrs.fields_dict(QmConfig):
            _fail(source, f"{where}.qmgr.{key}", f"unknown queue-manager setting; known: "
                                                 f"{', '.join(attrs.fields_dict(QmConfig))}")
    crash_at = run.get("crash_at")
    if crash_at is not None and crash_at != "end" and not (
            type(crash_at) in (int, float) and math.isfinite(crash_at) and crash_at > 0):
        _fail(source, f"{where}.crash_at", f"expected virtual seconds above 0 or \"end\", got {crash_at!r}")
    restart = run.get("restart")
    if restart is not None:
        if crash_at is None:
            _fail(source, f"{where}.restart", "a restart needs a crash: give crash_at too")
        if not isinstance(restart, dict):
            _fail(source, f"{where}.restart", "expected a table (mode, device)")
        _check_keys(restart, RESTART_KEYS, source, f"{where}.restart")
        from mqlog.core.qm.config import DEFAULT_RESTART_MODE, RESTART_MODES
        if restart.get("mode", DEFAULT_RESTART_MODE) not in RESTART_MODES:
            _fail(source, f"{where}.restart.mode", f"expected one of {', '.join(RESTART_MODES)}, "
                                                   f"got {restart['mode']!r}")
        if not isinstance(restart.get("device", device), str):
            _fail(source, f"{where}.restart.device", f"expected a device profile name, got {restart['device']!r}")
        restart = {"mode": restart.get("mode", DEFAULT_RESTART_MODE), "device": restart.get("device")}
    elif crash_at is not None:
        from mqlog.core.qm.config import DEFAULT_RESTART_MODE
        restart = {"mode": DEFAULT_RESTART_MODE, "device": None}
    before = run.get("before")
    if before is not None:
        if not isinstance(before, dict):
            _fail(source, f"{where}.before", "expected a table (workload, params)")
        _check_keys(before, BEFORE_KEYS, source, f"{where}.before")
        before_workload = _text(before, "workload", source, f"{where}.before")
        if before_workload not in BUILTINS:
            _fail(source, f"{where}.before.workload", f"unknown workload {before_workload!r}; "
                                                      f"known: {', '.join(BUILTINS)}")
        if not isinstance(before.get("params", {}), dict):
            _fail(source, f"{where}.before.params", "expected a table")
    try:
        QmConfig(**qmgr)
        # params are TOML's, typed: a string where a number belongs is refused naming the field,
        # as a workload spec file refuses one, never read as the number (text=False)
        spec = build_spec(BUILTINS[workload], run.get("params", {}), origin="", section=f"{where}.params",
                          text=False)
        values = choose(platform).configure({k: str(v) for k, v in run.get("log", {}).items()})
        if before is not None:
            before = {"workload": before_workload,
                      "params": dict(build_spec(BUILTINS[before_workload], before.get("params", {}), origin="",
                                                section=f"{where}.before.params", text=False).params)}
    except CalibrationCaseError:
        raise
    except SpecError as exc:  # a params error names its whole field (CASE.runs.RUN.params.X) already
        _fail(source, None, str(exc))
    except MqlogError as exc:
        _fail(source, where, str(exc))
    return {"platform": platform, "workload": workload, "params": dict(spec.params),
            "log": {k: str(v) for k, v in run.get("log", {}).items()}, "values": values,
            "device": device, "host": host, "seed": seed, "qmgr": dict(qmgr), "crash_at": crash_at,
            "restart": restart, "before": before}


def _check_run_list(value, kind: str, runs: dict, computation: str, args: dict, source: str, where: str) -> None:
    """A figure's list of runs (``runs``: three or more, distinct), pair or list of pairs."""
    def names(items, at_least: int, what: str) -> None:
        if not isinstance(items, list) or len(items) < at_least or not all(isinstance(r, str) for r in items):
            _fail(source, where, f"missing: {computation} needs {', '.join(args)}" if items is None
                  else f"expected {what}, got {items!r}")
        for r in items:
            if r not in runs:
                _fail(source, where, f"no run {r!r} in this case; its runs: {', '.join(runs)}")

    if kind == "runs":
        names(value, 3, "a list of three or more runs (a line through two always fits)")
        if len(set(value)) != len(value):
            _fail(source, where, f"a run named twice in {value!r}")
    elif kind == "pair":
        names(value, 2, "a pair of runs [slow, fast]")
        if len(value) != 2:
            _fail(source, where, f"expected a pair of runs [slow, fast], got {value!r}")
    else:
        if not isinstance(value, list) or not value:
            _fail(source, where, f"missing: {computation} needs {', '.join(args)}" if value is None
                  else f"expected a list of pairs of runs [[slow, fast], ...], got {value!r}")
        for pair in value:
            names(pair, 2, "a pair of runs [slow, fast]")
            if len(pair) != 2:
                _fail(source, where, f"expected a pair of runs [slow, fast], got {pair!r}")


def _check_figure(i: int, figure: object, runs: dict, counters: dict, source: str, where: str) -> dict:
    if not isinstance(figure, dict):
        _fail(source, where, "expected a table (name, compute, its arguments, ibm, tolerance, note)")
    name = _text(figure, "name", source, where)
    where = f"{where[:where.rindex('[')]}.{name}" if name else where
    computation = _text(figure, "compute", source, where)
    if computation not in COMPUTATIONS:
        _fail(source, f"{where}.compute", f"unknown computation {computation!r}; known: {', '.join(COMPUTATIONS)}")
    _, args = COMPUTATIONS[computation]
    _check_keys(figure, FIGURE_KEYS + tuple(args), source, where)
    for arg, kind in args.items():
        value = figure.get(arg)
        if kind in ("runs", "pair", "pairs"):
            _check_run_list(value, kind, runs, computation, args, source, f"{where}.{arg}")
            continue
        if not isinstance(value, str):
            _fail(source, f"{where}.{arg}", f"missing: {computation} needs {', '.join(args)}" if value is None
                  else f"expected text, got {value!r}")
        if kind == "run" and value not in runs:
            _fail(source, f"{where}.{arg}", f"no run {value!r} in this case; its runs: {', '.join(runs)}")
        if kind == "metric":
            run, dot, metric = value.partition(".")
            if not dot or not metric or run not in runs:
                _fail(source, f"{where}.{arg}", f"expected RUN.METRIC with RUN one of {', '.join(runs)}, "
                                                f"got {value!r}")
        if isinstance(kind, tuple) and value not in kind:
            _fail(source, f"{where}.{arg}", f"expected one of {', '.join(kind)}, got {value!r}")
    ibm = figure.get("ibm")
    if ibm == "counters":
        if not counters:
            _fail(source, f"{where}.ibm", "'counters' needs the case's [counters] tables of IBM's figures")
        try:
            ibm = compute(figure, counters)
        except MissingMetric as missing:
            _fail(source, f"{where}.ibm", f"IBM's counters have no {missing}")
        except KeyError as exc:
            _fail(source, f"{where}.ibm", f"IBM's counters have no run {exc.args[0]!r}")
    elif type(ibm) not in (int, float) or not math.isfinite(ibm):
        _fail(source, f"{where}.ibm", "missing: IBM's value (a number, or \"counters\")" if ibm is None
              else f"expected a number or \"counters\", got {ibm!r}")
    tolerance = figure.get("tolerance")
    if isinstance(tolerance, str):
        if tolerance not in ONE_SIDED:
            _fail(source, f"{where}.tolerance", f"expected a ± fraction (0.2), [low, high], or one of "
                                                f"{', '.join(repr(w) for w in ONE_SIDED)}, got {tolerance!r}")
    elif type(tolerance) in (int, float):
        if not 0 <= tolerance < 10:
            _fail(source, f"{where}.tolerance", f"a ± fraction of IBM's value must be 0 to 10, got {tolerance!r}")
    elif (isinstance(tolerance, list) and len(tolerance) == 2
          and all(type(v) in (int, float) and not math.isnan(v) for v in tolerance)):
        if tolerance[0] > tolerance[1]:
            _fail(source, f"{where}.tolerance", f"[low, high] with low above high: {tolerance!r}")
    else:
        _fail(source, f"{where}.tolerance",
              "missing: a ± fraction of IBM's value (0.2), the model's [low, high], or \"at least\" IBM's "
              "value (at most, more than, less than)" if tolerance is None
              else f"expected a ± fraction (0.2), [low, high] or a one-sided word, got {tolerance!r}")
    note = _text(figure, "note", source, where, required=False)
    return {"name": name, "compute": computation, **{a: figure[a] for a in args}, "ibm": float(ibm),
            "tolerance": tolerance if not isinstance(tolerance, list) else [float(v) for v in tolerance],
            "note": note or ""}


def parse_cases(doc: dict, source: str) -> dict[str, dict]:
    """The cases of a parsed case file, checked: id -> case (plain data, ready for a task)."""
    if not doc:
        _fail(source, "", "no cases: expected a table per case ([D1], ...)")
    cases = {}
    for case_id, case in doc.items():
        if not isinstance(case, dict):
            _fail(source, case_id, "expected a table (title, source, runs, figures, ...)")
        _check_keys(case, CASE_KEYS, source, case_id)
        title = _text(case, "title", source, case_id)
        ibm_source = _text(case, "source", source, case_id)
        assumption = _text(case, "assumption", source, case_id, required=False)
        mechanism = _text(case, "mechanism", source, case_id, required=False)
        runs_from = case.get("runs_from")
        if runs_from is not None:
            # The runs of an earlier case, shared: IBM's figures of one experiment checked
            # as cases of their own (Z4-Z6), each run run once when both are chosen.
            if "runs" in case:
                _fail(source, f"{case_id}.runs", "a case with runs_from has no runs of its own")
            if runs_from not in cases:
                _fail(source, f"{case_id}.runs_from", f"{runs_from!r} is no case above this one")
            runs = cases[runs_from]["runs"]
        else:
            raw_runs = case.get("runs")
            if not isinstance(raw_runs, dict) or not raw_runs:
                _fail(source, f"{case_id}.runs", "missing: expected one or more [CASE.runs.NAME] tables")
            runs = {name: _check_run(name, run, source, f"{case_id}.runs.{name}") for name, run in raw_runs.items()}
        counters = case.get("counters", {})
        if not isinstance(counters, dict) or not all(isinstance(t, dict) for t in counters.values()):
            _fail(source, f"{case_id}.counters", "expected [CASE.counters.RUN] tables of IBM's figures")
        figures = case.get("figures")
        if not isinstance(figures, list) or not figures:
            _fail(source, f"{case_id}.figures", "missing: expected one or more [[CASE.figures]] tables")
        checked = [_check_figure(i, f, runs, counters, source, f"{case_id}.figures[{i}]")
                   for i, f in enumerate(figures)]
        names = [f["name"] for f in checked]
        for name in names:
            if names.count(name) > 1:
                _fail(source, f"{case_id}.figures.{name}", "named more than once")
        cases[case_id] = {"id": case_id, "title": title, "source": ibm_source, "assumption": assumption or "",
                          "mechanism": mechanism or "", "runs": runs, "figures": checked,
                          "runs_from": runs_from}
    return cases


def load_cases(path: str | Path | None = None, only: list[str] | None = None) -> dict[str, dict]:
    """The cases of ``path`` (default: the built-in ``cases.toml``), or of them those in ``only``."""
    if path is None:
        source = f"built-in {BUILTIN_CASES}"
        text = resources.files("mqlog.calibration").joinpath(BUILTIN_CASES).read_text(encoding="utf-8")
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CalibrationCaseError(f"cannot read the case file ({exc.strerror or exc})", source=source) from None
        except UnicodeDecodeError as exc:
            raise CalibrationCaseError(f"not UTF-8 text (byte {exc.start})", source=source) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationCaseError(f"not valid TOML ({exc})", source=source) from None
    cases = parse_cases(doc, source)
    if only:
        unknown = [c for c in only if c not in cases]
        if unknown:
            raise CalibrationCaseError(f"--only {unknown[0]!r}: no such case; cases: {', '.join(cases)}",
                                       source=source)
        cases = {c: cases[c] for c in only}
    return cases


# --------------------------------------------------------------------------- scale

#: the workload parameters ``--scale`` multiplies (counts of messages, units of work and
#: virtual seconds); rates, sizes and applications stay, so a scaled run is IBM's run for a
#: shorter time, with as many messages in a unit of work (a unit's own cost, its backout's
#: force, keeps its weight against its messages': R1's 3,200 units of 125 messages stay 125
#: each, in 160 units at 1/20)
SCALED_PARAMS = ("messages", "messages_per_pair", "depth", "then_messages", "transactions", "duration")
#: the log settings that scale with the work, by platform (its descriptor's ``scaled_log``):
#: (name, default, minimum). The checkpoint cadence scales with the records a run writes, so a
#: crash at a scaled time falls at the same point of its checkpoint interval; the log files
#: scale with the bytes, so the log is as full (and a scaled run does not allocate IBM's 2 GiB
#: of extents).
SCALED_LOG = {name: d.scaled_log for name, d in PLATFORMS.items() if d.scaled_log}


def scaled(case: dict, factor: float) -> dict:
    """``case`` at ``factor`` of its scale (0 < factor <= 1; ``mqlog calibrate --scale``, CI's
    reduced R1): the :data:`SCALED_PARAMS` of every run and ``before`` workload, each run's
    ``crash_at`` seconds and the :data:`SCALED_LOG` settings multiplied by ``factor`` (kept at
    their minimums and at least 1; a 0 stays 0). The figures and their tolerances are the
    case's: a reduced run must show the same shapes, because they come from mechanisms, not
    sizes."""
    if not (type(factor) in (int, float) and 0 < factor <= 1):
        raise CalibrationCaseError(f"expected a fraction above 0 and at most 1, got {factor!r}", field="--scale")
    if factor == 1:
        return case
    source = f"{case['id']} at scale {factor:g}"

    def params(values: dict) -> dict:
        out = dict(values)
        for key in SCALED_PARAMS:
            if key in out and out[key]:
                out[key] = out[key] * factor if isinstance(out[key], float) else max(1, round(out[key] * factor))
        return out

    runs = {}
    for name, run in case["runs"].items():
        log = dict(run["log"])
        for key, default, low in SCALED_LOG.get(run["platform"], ()):
            given = next((v for k, v in log.items() if k.lower() == key.lower()), None)
            log = {k: v for k, v in log.items() if k.lower() != key.lower()}
            log[key] = str(max(low, round(int(given if given is not None else default) * factor)))
        raw = {"platform": run["platform"], "workload": run["workload"], "params": params(run["params"]),
               "log": log, "device": run["device"], "host": run["host"], "seed": run["seed"], "qmgr": run["qmgr"]}
        if run.get("crash_at") is not None:
            raw["crash_at"] = run["crash_at"] if run["crash_at"] == "end" else run["crash_at"] * factor
            raw["restart"] = {k: v for k, v in run["restart"].items() if v is not None}
        if run.get("before"):
            raw["before"] = {"workload": run["before"]["workload"], "params": params(run["before"]["params"])}
        runs[name] = _check_run(name, raw, source, f"{case['id']}.runs.{name}")
    return {**case, "runs": runs}


# --------------------------------------------------------------------------- running

def run_case(case: dict, device: str | None = None, host: str | None = None) -> dict:
    """Run every run of ``case`` (``device`` and ``host`` override each run's) and compute its figures:
    ``{"id", "runs": {name: metrics}, "figures": {name: {ibm, model, tolerance, ok, note}}}``."""
    metrics = {name: run_one(case, name, device, host) for name in case["runs"]}
    return {"id": case["id"], "runs": metrics, "figures": figures_of(case, metrics)}


def _crash_options(crash_at) -> dict:
    """RunConfig's fields for a run's ``crash_at``: virtual seconds, or "end"."""
    if crash_at is None:
        return {}
    if crash_at == "end":
        return {"crash_at_end": True}  # the moment the workload's last call returns: IBM's kill -9
    return {"crash_at_s": float(crash_at)}


def run_one(case: dict, name: str, device: str | None = None, host: str | None = None) -> dict:
    """One run of ``case``: its ``before`` workload to a controlled shutdown, the run itself on the
    same files, and, if it crashes (``crash_at``), the restart after it, verified against the
    applications' journals, with the restart's figures joining the run's metrics."""
    from mqlog import usecases
    from mqlog.core.qm.config import QmConfig
    from mqlog.core.workload.run import RunConfig
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    run = case["runs"][name]
    where = f"case {case['id']}, run {name}"
    choice = choose(run["platform"])
    # ``--device`` overrides every device of the run, its restart's too
    restart_device = (device or run["restart"]["device"]) if run.get("restart") else None
    device, host = device or run["device"], host or run["host"]
    restart_device = restart_device or device
    qm_config = QmConfig(**run.get("qmgr", {}))

    def config(workload: str, params: dict, origin: str, **crash) -> RunConfig:
        spec = build_spec(BUILTINS[workload], params, origin=origin)
        return RunConfig(run["platform"], choice.maker(run["values"]), run["values"], spec, seed=run["seed"],
                         device=device, host=host, qm_config=qm_config, **crash)

    storage = None  # new files
    before = None
    if run.get("before"):
        # The files the run starts on: a workload run to its controlled shutdown (a deep queue
        # defined and filled, say), so the run's own restart begins at a clean checkpoint.
        before = usecases.run(config(run["before"]["workload"], run["before"]["params"],
                                     f"{case['id']}.runs.{name}.before"))
        if before.crashed:
            raise CalibrationRunError(f"{where}: its before workload ended abnormally "
                                      f"({before.metrics.get('abnormal_end') or 'a crash'}), so the run has no files "
                                      f"to start on")
        storage = before.storage.durable
    crash_at = run.get("crash_at")
    result = usecases.run(config(run["workload"], run["params"], f"{case['id']}.runs.{name}",
                                 **_crash_options(crash_at)), storage=storage)
    metrics = result.metrics
    if result.metrics.get("abnormal_end"):
        raise CalibrationRunError(f"{where}: the queue manager ended abnormally at "
                                  f"{metrics['virtual_s']:.3f} virtual s ({metrics['abnormal_end']}), "
                                  f"not the crash the case asks for")
    if crash_at is None:
        return metrics
    if not result.crashed:
        raise CalibrationRunError(f"{where}: crash_at = {crash_at} s, but the workload ended at "
                                  f"{metrics['workload_s']:.3f} virtual s, before it: nothing to restart "
                                  f"(crash earlier, or run the workload longer)")
    # Every restart is verified: a figure from a restart that lost or kept the wrong messages
    # would be silently wrong.
    mode = run["restart"]["mode"]
    report, verdict, qm = usecases.recover(result, choice.maker(run["values"]), device=restart_device, host=host,
                                           qm_config=attrs.evolve(qm_config, restart_mode=mode))
    journals = [("its applications' journal", verdict)]
    if before is not None:
        journals.append(("its before workload's journal", before.journal.verify(qm)))
    for which, v in journals:
        if not v.ok:
            problems = ", ".join(f"{k} {n}" for k, n in v.as_dict().items() if n)
            raise CalibrationRunError(f"{where}: the restart after the crash at {crash_at} s failed verification "
                                      f"against {which} ({problems}; first: {v.details[:3]}); no figure is "
                                      f"computed from it")
    metrics.update(restart_metrics(report.as_dict(), mode, restart_device))
    return metrics


def restart_metrics(report: dict, mode: str, device: str) -> dict:
    """A verified restart's report (``RecoveryReport.as_dict()``) as a run's metrics:
    ``restart_s``, ``records_replayed``, ``restart_phases`` (when the report has them), and the
    whole report (its console messages aside) under ``restart``."""
    restart = {k: v for k, v in report.items() if k not in ("messages", "end_of_log")}
    out = {"restart": restart, "restart_mode": mode, "restart_device": device, "restart_verified": True,
           "restart_s": report["restart_virtual_s"], "records_replayed": report["records_replayed"]}
    if "restart_phases" in report:
        out["restart_phases"] = dict(report["restart_phases"])
    return out


def figures_of(case: dict, metrics: dict) -> dict:
    """Each figure of ``case`` over the runs' ``metrics``: IBM's value, the model's, the
    tolerance (text), whether the model is within it, and a note (a missing metric's)."""
    out = {}
    for figure in case["figures"]:
        note = figure["note"]
        try:
            model = compute(figure, metrics)
        except MissingMetric as missing:
            model = None
            note = (f"MISSING METRIC: run {missing.run!r} reports no {missing.metric!r}, so the model "
                    f"cannot give this figure yet" + (f". {note}" if note else ""))
        if model is not None and math.isnan(model):
            model = None
            note = "NO VALUE: the runs give none (a zero divisor, or no checkpoint the record count triggered)" + (
                f". {note}" if note else "")
        out[figure["name"]] = {"ibm": figure["ibm"], "model": model,
                               "tolerance": tolerance_text(figure["tolerance"], figure["ibm"]),
                               "ok": within(model, figure["ibm"], figure["tolerance"]), "note": note}
    return out
