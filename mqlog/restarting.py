"""Settings changed at a restart, and what run.json says after one: which log parameters a
restart may change (``mqlog restart DIR --set log.X=V``, ``mqlog run --in DIR``) and which
were fixed when the queue manager was created – with IBM's word for each. The restarted
queue manager's settings and history are written back to run.json
(:meth:`mqlog.runrecord.RunRecord.restarted`, by :mod:`mqlog.usecases`), so that every later
command sees the queue manager as it now is.

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
from mqlog.core.params import ParameterSet
from mqlog.rundir import run_platform

#: The log parameters a restart may not change, by platform, and why: everything else is read
#: when the queue manager starts.
#:
#: Distributed, IBM MQ "Log stanza of the qm.ini file" and "Calculating the size of the log"
#: (https://www.ibm.com/docs/SSFKSJ_9.0.0/com.ibm.mq.con.doc/q018470_.html): LogPrimaryFiles is
#: "examined when the queue manager is created or started ... a change in the value is not
#: effective until the queue manager is restarted"; "you can change the number of primary and
#: secondary log files each time the queue manager starts"; "you cannot change the log file
#: size; you must determine it before creating the queue manager". LogType is chosen by crtmqm
#: (-lc/-ll); IBM changes it only offline with migmqlog, which the model does not have.
#: LogBufferPages, LogWriteIntegrity and the checkpoint settings are read at each start.
#:
#: z/OS: CSQ6LOGP, CSQ6SYSP and CSQ6ARVP are assembled into the system parameter module the
#: queue manager loads when it starts (START QMGR PARM), so a new module takes effect at the
#: next restart ("Using CSQ6LOGP"). What is not a parameter of that module is the log data sets
#: themselves: how many active data sets, their size, single or dual copies and the BSDS copies
#: are allocated with IDCAMS and recorded in the BSDS with CSQJU003 NEWLOG when the queue
#: manager is created; the RBA width is changed by CSQJUCNV and the start RBA by a log reset
#: (CSQJU003 CRESTART), both with the queue manager stopped.
FIXED_AT_CREATION: dict[str, dict[str, str]] = {
    "distributed": {
        "LogFilePages": "the log files' size is fixed when the queue manager is created (IBM: \"you cannot change "
                        "the log file size; you must determine it before creating the queue manager\")",
        "LogType": "circular or linear logging is chosen when the queue manager is created (crtmqm -lc/-ll); "
                   "IBM changes it only offline, with migmqlog",
    },
    "zos": {
        "TWOACTV": "single or dual active logs are the data sets allocated and recorded in the BSDS (CSQJU003 "
                   "NEWLOG) when the queue manager was created, not a start-time setting",
        "TWOBSDS": "the BSDS copies are allocated when the queue manager is created, not at a restart",
        "ACTIVE_LOGS": "the active log data sets are allocated and recorded in the BSDS (CSQJU003 NEWLOG) when the "
                       "queue manager is created; a running one adds more with DEFINE LOG",
        "ACTIVE_LOG_CIS": "the active log data sets' size is fixed when they are allocated (IDCAMS, at creation)",
        "RBA8": "the RBA width is converted with CSQJUCNV while the queue manager is stopped "
                "('mqlog convert-rba'), not by a restart",
        "STARTRBA": "where the log begins is set at creation or by a log reset (CSQJU003 CRESTART), not by a restart",
        "SHARED_QUEUES": "the queue-sharing group's structure is made with the run and is not in the run "
                         "directory",
    },
}


def _parameters(choice) -> ParameterSet:
    """The platform's parameters, looked up by name in any case (as ``--set`` takes them)."""
    if choice.name == "distributed":
        from mqlog.distributed.config import PARAMETERS
    elif choice.name == "zos":
        from mqlog.zos.config import PARAMETERS
    else:
        PARAMETERS = choice.params
    return ParameterSet(tuple(PARAMETERS), f"a log parameter of platform {choice.name}")


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
    names = _parameters(choice)
    merged = {str(k): str(v) for k, v in old.items()}
    for key, text in overrides.items():
        param = names.lookup(key, text)
        merged[param.name] = text
    new = choice.configure(merged)
    changed = {name: [old[name], value] for name, value in new.items() if old.get(name) != value}
    for name in changed:
        reason = FIXED_AT_CREATION.get(choice.name, {}).get(name)
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
    from mqlog.core.recovery.engine import REPLAY_CHUNK_PAGES
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
