"""The distributed platform's descriptor (:data:`DESCRIPTOR`): what the rest of mqlog knows of
it, in one object the registry (:mod:`mqlog.platforms`) lists. Its functions import the
platform's modules when called, so that listing the platforms stays fast."""

from __future__ import annotations

from mqlog.core.descriptor import LogRange, PlatformDescriptor
from mqlog.core.disk.faults import FileRoles
from mqlog.core.disk.storage import Storage
from mqlog.core.platform import Platform

#: The log parameters a restart may not change, and why: everything else is read when the
#: queue manager starts. IBM MQ "Log stanza of the qm.ini file" and "Calculating the size of
#: the log" (https://www.ibm.com/docs/SSFKSJ_9.0.0/com.ibm.mq.con.doc/q018470_.html):
#: LogPrimaryFiles is "examined when the queue manager is created or started ... a change in
#: the value is not effective until the queue manager is restarted"; "you can change the number
#: of primary and secondary log files each time the queue manager starts"; "you cannot change
#: the log file size; you must determine it before creating the queue manager". LogType is
#: chosen by crtmqm (-lc/-ll); IBM changes it only offline with migmqlog, which the model does
#: not have. LogBufferPages, LogWriteIntegrity and the checkpoint settings are read at each start.
FIXED_AT_CREATION = {
    "LogFilePages": "the log files' size is fixed when the queue manager is created (IBM: \"you cannot change "
                    "the log file size; you must determine it before creating the queue manager\")",
    "LogType": "circular or linear logging is chosen when the queue manager is created (crtmqm -lc/-ll); "
               "IBM changes it only offline, with migmqlog",
}


def _config(values: dict):
    from mqlog.distributed.config import LogConfig

    return LogConfig.from_settings({k: str(v) for k, v in values.items()})


def _configure(overrides: dict) -> dict:
    from mqlog.distributed.config import LogConfig

    return LogConfig.from_settings(overrides).settings()


def _describe(values: dict) -> tuple[list, dict]:
    config = _config(values)
    return config.describe(), config.derived()


def _build(storage: Storage, values: dict, qm_name: str = "QM1") -> Platform:
    from mqlog.distributed.platform import distributed_platform

    c = _config(values)
    return distributed_platform(storage, primary=c.log_primary_files, secondary=c.log_secondary_files,
                                file_pages=c.log_file_pages, buffer_pages=c.buffer_pages, linear=c.is_linear,
                                integrity=c.effective_write_integrity,
                                checkpoint_records_max=c.checkpoint_log_recd_max,
                                checkpoint_records_min=c.checkpoint_log_recd_min,
                                checkpoint_wait_minutes=c.checkpoint_wait_len,
                                checkpoint_basis=c.checkpoint_basis,
                                queue_buffer_bytes=c.default_pq_buffer_size,
                                management=c.log_management if c.is_linear else "Manual", qm_name=qm_name)


def _parameters() -> tuple:
    from mqlog.distributed.config import PARAMETERS

    return tuple(PARAMETERS)


def _model_only() -> tuple[str, ...]:
    from mqlog.distributed.config import MODEL_SETTING, PARAMETERS

    return tuple(p.name for p in PARAMETERS if p.where == MODEL_SETTING)


def _fault_claims(values: dict) -> dict:
    from mqlog.distributed.damage import fault_claims

    return fault_claims(values)


def _files() -> FileRoles:
    from mqlog.distributed.damage import FILE_ROLES

    return FILE_ROLES


def _notation():
    from mqlog.distributed.space import format_lsn  # an LSN <a:b:c:d>, as dmpmqlog and AMQ7230I write it

    return format_lsn, lambda a: f"LSN {format_lsn(a)} ({a:016X})", 22


def _record_types() -> tuple:
    from mqlog.distributed.media import RECORD_TYPES

    return RECORD_TYPES


def _log_ranges(space) -> list[LogRange]:
    """Every extent the log control file lists."""
    from mqlog.distributed.space import extent_name

    return [(extent_name(number), start, start + space.extent_bytes) for start, number in space.by_start.items()]


def _run_provenance(metrics: dict) -> list[tuple]:
    return [("physical writes and bytes per commit", "calibrated", ("D1", "D2"),
             "the distributed writer's partial-page rules and TripleWrite's spare copy"),
            ("commits in virtual time, between configurations", "calibrated", ("D2",),
             "TripleWrite against SingleWrite at fifty threads; other ratios follow from the same mechanisms"),
            ("checkpoints", "calibrated", ("C1",), "records between checkpoints")]


def _tools():
    from mqlog.distributed import tools

    return tools


DESCRIPTOR = PlatformDescriptor(
    "distributed", "Linux/UNIX/Windows queue manager log (qm.ini Log: names)", _build, named=True,
    configurer=_configure, parameter_table=_parameters, describer=_describe, real_names="qm.ini Log: key",
    model_only=_model_only, fixed_at_creation=FIXED_AT_CREATION, fault_claims=_fault_claims, file_roles=_files,
    file_names=((r"S\d{7}\.LOG", "a distributed log extent"),),
    file_markers={b"MQMI": "a media image (the queue image rcdmqimg writes into the log)",
                  b"MQLD": "the distributed log control file (amqhlctl.lfh): use mqlog qmstatus or mqlog dump"},
    page_files={"amqhlspr.lfh": "the distributed log's TripleWrite spare pages (amqhlspr.lfh): copies of single "
                                "pages, not a stretch of log"},
    log_file_noun="extent", record_types=_record_types, log_ranges=_log_ranges, notation=_notation,
    # The checkpoint cadence scales with the records a run writes, the log files with its bytes.
    scaled_log=(("CheckPointLogRecdMax", 50_000, 1000), ("LogFilePages", 4096, 64)),
    run_provenance=_run_provenance,
    restart_provenance=(
        ("restart time: replay", "calibrated", ("R1",),
         "its shape: linear in records replayed, most of a committed workload's restart; not IBM's seconds"),
        ("restart time: recovery (queue loading and backout)", "calibrated", ("R1",),
         "its shape: most of an uncommitted workload's restart, by units and message size; not IBM's seconds")),
    # each differs from the one before it in one setting (TripleWrite -> SingleWrite, CIRCULAR -> LINEAR)
    examples=(("dist-circular-triple", {"LogType": "CIRCULAR", "LogWriteIntegrity": "TripleWrite"}),
              ("dist-circular-single", {"LogType": "CIRCULAR", "LogWriteIntegrity": "SingleWrite"}),
              ("dist-linear", {"LogType": "LINEAR"})),
    commands=("qmstatus", "dump", "rcdmqimg", "rcrmqobj", "set-log-archived", "dmpmqlog"), tools=_tools,
    log_formatter=("dmpmqlog", "dmpmqlog"))
