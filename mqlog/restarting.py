"""Settings changed at a restart, and what run.json says after one: which log parameters a
restart may change (``mqlog restart DIR --set log.X=V``, ``mqlog run --in DIR``) and which
were fixed when the queue manager was created – with IBM's word for each, from the platform's
descriptor (``fixed_at_creation``). The restarted queue manager's settings and history are
written back to run.json (:meth:`mqlog.runrecord.RunRecord.restarted`, by
:mod:`mqlog.usecases`), so that every later command sees the queue manager as it now is.

run.json's top-level ``log``, ``device``, ``host`` are the queue manager's current settings;
``history`` lists the commands that ran it, oldest first: the first ``run``, each
``restart`` (with what it changed) and each ``run --in``, a run's entry naming the file that
keeps its metrics (``metrics.json`` the latest's, ``metrics-N.json`` an earlier one's:
:func:`mqlog.rundir.keep_metrics`); ``finished`` says whether the last
one's process ended normally, ``journal_complete`` whether journal.json holds what every
run's applications were told (false for good once a run's process died before writing it:
``restart --verify`` then says it cannot check, and ``run --in`` refuses to extend it)."""

from __future__ import annotations

from pathlib import Path

from mqlog.core.errors import MqlogError
from mqlog.rundir import run_platform


def restart_log(directory: Path, run, overrides: dict[str, str], option: str = "--set"):
    """(platform choice, the log values a restart runs with, {name: [old, new]} of those it
    changes): run.json's values with ``overrides`` (``--set log.X=V``, text) over them, checked
    as ``run --set`` checks them (any case, an unknown name with the closest ones, a value out
    of range with its range). A parameter fixed at creation given a new value is a one-line
    error naming it and why."""
    choice, old = run_platform(directory, run)
    if not overrides:
        return choice, old, {}
    choice.configure(overrides)  # the names and values alone, with run --set's own errors
    names = choice.parameters()
    merged = {str(k): str(v) for k, v in old.items()}
    for key, text in overrides.items():
        param = names.lookup(key, text)
        merged[param.name] = text
    new = choice.configure(merged)
    changed = {name: [old[name], value] for name, value in new.items() if old.get(name) != value}
    for name in changed:
        reason = choice.fixed_at_creation.get(name)  # the platform's descriptor says why
        if reason is not None:
            raise MqlogError(f"{option} log.{name}: cannot change at a restart ({old[name]} to {new[name]}): {reason}")
    return choice, new, changed


def _units(field: str) -> str:
    return " µs" if field.endswith("_us") else " ns" if field.endswith("_ns_per_byte") else ""


def restart_phases() -> list[dict]:
    """Restart's phases (:data:`mqlog.core.recovery.phases.PHASES`) with the model's figures
    put in: each ``{host:FIELD}`` as ``FIELD`` and its value on every built-in host profile
    (the default first), the replay read and the queue buffer from the code's constants.
    ``mqlog restart --phases`` prints them; docs/guide/05-restart-time.md's table is made
    from its ``--json``."""
    import re

    from mqlog.core.format.pages import PAGE_SIZE
    from mqlog.core.host.profiles import DEFAULT_HOST, load_hosts
    from mqlog.core.qm.config import QmConfig
    from mqlog.core.recovery.state import REPLAY_CHUNK_PAGES
    from mqlog.core.recovery.phases import PHASES

    hosts = load_hosts()
    names = sorted(hosts, key=lambda n: (n != DEFAULT_HOST, n))

    def host_field(match) -> str:
        field = match.group(1)
        groups: dict[str, list[str]] = {}
        for name in names:
            groups.setdefault(f"{getattr(hosts[name], field):g}{_units(field)}", []).append(f"`{name}`")
        return f"`{field}` (" + "; ".join(f"{value} on {' and '.join(on)}" for value, on in groups.items()) + ")"

    read_kib = REPLAY_CHUNK_PAGES * PAGE_SIZE // 1024
    fixed = {"replay_read": f"{REPLAY_CHUNK_PAGES} pages ({read_kib} KiB)", "replay_read_kib": f"{read_kib} KiB",
             "queue_buffer": f"{QmConfig().persistent_buffer_bytes // 1024} KiB"}

    def filled(text: str) -> str:
        text = re.sub(r"\{host:(\w+)\}", host_field, text)
        return re.sub(r"\{(\w+)\}", lambda m: fixed[m.group(1)], text)

    return [{"phase": p.name, "reported": f"restart_phases.{p.reported}", "does": p.does, "costs": filled(p.costs)}
            for p in PHASES]
