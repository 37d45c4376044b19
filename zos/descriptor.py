"""The z/OS platform's descriptor (:data:`DESCRIPTOR`): what the rest of mqlog knows of it, in
one object the registry (:mod:`mqlog.platforms`) lists. Its functions import the platform's
modules when called, so that listing the platforms stays fast."""

from __future__ import annotations

import attrs

from mqlog.core.descriptor import LogRange, PlatformDescriptor
from mqlog.core.disk.faults import FileRoles
from mqlog.core.disk.storage import Storage
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.platform import Platform

#: The log parameters a restart may not change, and why: everything else is read when the
#: queue manager starts. CSQ6LOGP, CSQ6SYSP and CSQ6ARVP are assembled into the system
#: parameter module the queue manager loads when it starts (START QMGR PARM), so a new module
#: takes effect at the next restart ("Using CSQ6LOGP"). What is not a parameter of that module
#: is the log data sets themselves: how many active data sets, their size, single or dual
#: copies and the BSDS copies are allocated with IDCAMS and recorded in the BSDS with CSQJU003
#: NEWLOG when the queue manager is created; the RBA width is changed by CSQJUCNV and the start
#: RBA by a log reset (CSQJU003 CRESTART), both with the queue manager stopped.
FIXED_AT_CREATION = {
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
}


def _configure(overrides: dict) -> dict:
    from mqlog.zos.config import configure

    return configure(overrides)


def _describe(values: dict) -> tuple[list, dict]:
    from mqlog.zos.config import describe

    return describe(values)


def _build(storage: Storage, values: dict, qm_name: str = "CSQ1") -> Platform:
    from mqlog.zos.config import ZosLogConfig
    from mqlog.zos.platform import zos_platform_from_config

    config = ZosLogConfig.from_settings({k: str(v) for k, v in values.items()})
    platform = zos_platform_from_config(storage, config, qm_name=qm_name)
    if config.shared_queue_names:  # SHARED_QUEUES: the run joins a queue-sharing group of its own
        from mqlog.zos.qsg import attach_shared_queues

        platform = attrs.evolve(platform, attach=attach_shared_queues(config.shared_queue_names),
                                restart_refusal=(
            f"cannot restart a run with SHARED_QUEUES ({', '.join(config.shared_queue_names)}): its shared "
            f"queues lived in a coupling-facility structure of the run's own queue-sharing group, which the "
            f"run directory does not keep, so a restart would find none of their messages"))
    return platform


def _parameters() -> tuple:
    from mqlog.zos.config import PARAMETERS

    return tuple(PARAMETERS)


def _model_only() -> tuple[str, ...]:
    from mqlog.zos.config import MODEL, PARAMETERS

    return tuple(p.name for p in PARAMETERS if p.where == MODEL)


def _fault_claims(values: dict) -> dict:
    from mqlog.zos.damage import fault_claims

    return fault_claims(values)


def _files() -> FileRoles:
    from mqlog.zos.damage import FILE_ROLES

    return FILE_ROLES


def _notation():
    return "{:016X}".format, lambda a: f"RBA {a:016X}", 16  # an RBA in hex, as CSQ1LOGP writes it


def _record_types() -> tuple:
    from mqlog.zos.records import RECORD_TYPES

    return RECORD_TYPES


def _log_ranges(space) -> list[LogRange]:
    """Every active data set (copy 1) the BSDS lists, then every complete archive whose range
    no active data set holds: read_page prefers an active data set to an archive."""
    from mqlog.zos.datasets import data_set_name

    ranges: dict[int, LogRange] = {}
    for ds in space.active:
        if ds.start != NO_ADDRESS:
            ranges[ds.start] = (data_set_name(1, ds.number), ds.start, ds.start + space.ds_bytes)
    for entry in space.archives:
        if entry.complete and entry.start not in ranges:
            ranges[entry.start] = (entry.files[0], entry.start, entry.end + 1)
    return list(ranges.values())


def _run_provenance(m: dict) -> list[tuple]:
    device, host = m.get("device"), m.get("host")
    out = [("physical writes and bytes per commit", "calibrated", ("Z1", "Z4"),
            "the dual-copy write order (copy 2's rewrite of a CI after copy 1's where a CI can "
            "tear, QJSTSERW; both at once on write-cached DASD); one logger task, 128 CIs a write"),
           ("commits in virtual time, between configurations", "calibrated", ("Z1", "Z6"),
            "single against dual logging on dasd, the log rate's shape by message size; other "
            "ratios follow from the same mechanisms")]
    if str(device).lower() == "ibm-s6-ds8870" and str(host).lower() == "z14-3cp":
        out.append(("commit time and log rate by message size", "calibrated", ("Z5", "Z6"),
                    "IBM's z14 and DS8870 figures, two putting and getting applications"))
    if m.get("shunts"):
        out.append(("shunts", "calibrated", ("Z3",), "every third checkpoint"))
    if m.get("compression_in_bytes"):
        out.append(("compressed log bytes and their CPU", "calibrated", ("Z2",),
                    "which puts are compressed; RLE's ratio is the model's RLE on these bytes"))
    return out


def _tools():
    from mqlog.zos import tools

    return tools


DESCRIPTOR = PlatformDescriptor(
    "zos", "z/OS queue manager log (CSQ6LOGP / CSQ6SYSP / CSQ6ARVP names)", _build, named=True,
    configurer=_configure, parameter_table=_parameters, describer=_describe,
    real_names="CSQ6LOGP, CSQ6SYSP or CSQ6ARVP keyword", model_only=_model_only,
    fixed_at_creation=FIXED_AT_CREATION, fault_claims=_fault_claims, file_roles=_files,
    file_names=((r"LOGCOPY[12]\.DS\d{2,3}", "a z/OS active log data set"),
                (r"[A-Z@#$][A-Z0-9@#$-]{0,7}(\.[A-Z@#$][A-Z0-9@#$-]{0,7})*\.A\d{7}", "a z/OS archive log data set")),
    file_markers={b"MQLB": "a BSDS (z/OS bootstrap data set, or the copy an offload puts beside an archive): "
                           "use mqlog bsds"},
    log_file_noun="data set", record_types=_record_types, log_ranges=_log_ranges, notation=_notation,
    # LOGLOAD, the checkpoint cadence, scales with the records a run writes
    scaled_log=(("LOGLOAD", 500_000, 200),),
    run_provenance=_run_provenance,
    # the CIs restart read from an archive (none when it failed)
    restart_figures=("archive_reads",), restart_readings=lambda space: {"archive_reads": space.reads["archive"]},
    # dual active logs without and with RLE compression, then single active logs
    examples=(("zos-dual-none", {"TWOACTV": "YES", "COMPLOG": "NONE"}),
              ("zos-dual-rle", {"TWOACTV": "YES", "COMPLOG": "RLE"}),
              ("zos-single-none", {"TWOACTV": "NO", "COMPLOG": "NONE"})),
    # oranges: a report tells the platforms' configurations apart at a glance
    palette=("#c55a11", "#f4b183", "#843c0c"),
    commands=("print", "bsds", "stats", "convert-rba"), tools=_tools, log_formatter=("print", "CSQ1LOGP"),
    title="z/OS")
