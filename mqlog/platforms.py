"""The platforms a user can name (``--platform``), their log parameters, and how to build them.

Each entry knows its parameters (``log.PARAM`` in the platform's own names: qm.ini names for
distributed, CSQ6LOGP/CSQ6SYSP/CSQ6ARVP names for z/OS), their defaults and ranges, and how to
build the platform over a storage. ``distributed`` and ``zos`` have configuration objects of
their own (:mod:`mqlog.distributed.config`, :mod:`mqlog.zos.config`); ``reference`` is the
core's own idealised log (one growing file, no limits), useful as a baseline, whose three
parameters are defined here. All of them are :class:`~mqlog.core.params.Parameter` objects.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from mqlog.core.disk.faults import NOTHING, FileRoles
from mqlog.core.errors import ParameterError
from mqlog.core.params import Number, Parameter, ParameterSet
from mqlog.core.platform import Platform, reference_platform
from mqlog.core.disk.storage import Storage


@attrs.frozen
class _WholeNumber(Number):
    """The reference platform's notation: Python's integer literals (``0x200``, ``1_000``);
    text that is none says so with the range, quoted in full."""

    not_a_number: str = "a whole number from {low} to {high}"

    def from_text(self, text: str) -> int | None:
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return None

    def from_value(self, value: Any) -> int | None:
        return self.from_text(str(value))

    def shown(self, value: Any) -> object:
        return value


@attrs.frozen
class LogParam(Parameter):
    """A reference platform parameter, with the range and meaning ``mqlog config`` lists."""

    @property
    def low(self) -> int:
        return self.kind.low

    @property
    def high(self) -> int:
        return self.kind.high

    @property
    def doc(self) -> str:
        return self.meaning


@attrs.frozen
class PlatformChoice:
    name: str
    description: str
    factory: Callable[[Storage, dict], Platform]
    params: tuple[Parameter, ...] = ()
    #: checks across parameters, on the effective values (raise ParameterError)
    check: Callable[[dict], None] | None = None
    #: a platform with its own configuration object: text overrides -> effective values
    configurer: Callable[[dict], dict] | None = None
    #: rows (name, value, default, allowed, meaning) and derived sizes for `mqlog config`
    describer: Callable[[dict], tuple[list, dict]] | None = None
    #: where the platform's real parameter names come from ("qm.ini Log: keys"), and a function
    #: giving the names of those of its parameters that are the model's own (no such real name):
    #: an MQ professional must see which settings have no counterpart on a real queue manager
    real_names: str = ""
    model_only: Callable[[], tuple[str, ...]] | None = None
    #: what the configuration (effective values) claims against the fault classes its log's
    #: design decides: {fault class: (SURVIVE/DETECT/NOTHING, why)} over the generic claims
    #: of :func:`mqlog.torture.claims.claims`
    fault_claims: Callable[[dict], dict[str, tuple[str, str]]] = lambda values: {}
    #: what each of its files is to restart (a :class:`~mqlog.core.disk.faults.FileRoles`)
    file_roles: Callable[[], FileRoles] = lambda: _REFERENCE_FILES
    #: how it writes a log address, as its own dump and messages do: (the bare form for a
    #: column, a labelled one for a sentence, the column's width); the default is the
    #: reference log's byte address in hex
    notation: Callable[[], tuple[Callable[[int], str], Callable[[int], str], int]] = \
        lambda: ("{:016X}".format, "{:016X}".format, 16)
    #: how prose and tables name the platform ("z/OS"); its ``name`` unless given
    title: str = ""

    @property
    def shown(self) -> str:
        """The platform's name as prose and tables write it."""
        return self.title or self.name

    def model_only_names(self) -> tuple[str, ...]:
        """The parameters that are the model's own, not the platform's real names (all of them
        for a platform without real names)."""
        if self.model_only is not None:
            return self.model_only()
        return tuple(p.name for p in self.params) if not self.real_names else ()

    def configure(self, overrides: dict[str, str]) -> dict:
        """The effective log parameters: defaults with ``overrides`` (text) applied and checked."""
        if self.configurer is not None:
            return self.configurer(overrides)
        known = ParameterSet(self.params, f"a log parameter of platform {self.name}")
        values = {p.name: p.default for p in self.params}
        for key, text in overrides.items():
            param = known.lookup(key, text)
            values[param.name] = param.parse(text, f"log.{param.name}")
        if self.check is not None:
            self.check(values)
        return values

    def maker(self, values: dict) -> Callable[[Storage], Platform]:
        factory = self.factory
        return lambda storage: factory(storage, values)


def _reference_check(values: dict) -> None:
    if values["write_threshold_pages"] > values["buffer_pages"]:
        raise ParameterError("log.write_threshold_pages", values["write_threshold_pages"],
                             f"1 to log.buffer_pages ({values['buffer_pages']})")


def _reference(storage: Storage, values: dict) -> Platform:
    return reference_platform(storage, checkpoint_records=values["checkpoint_records"],
                              buffer_pages=values["buffer_pages"],
                              write_threshold_pages=values["write_threshold_pages"])


def _distributed_configure(overrides: dict) -> dict:
    from mqlog.distributed.config import LogConfig

    return LogConfig.from_settings(overrides).settings()


def _distributed_describe(values: dict) -> tuple[list, dict]:
    from mqlog.distributed.config import LogConfig

    config = LogConfig.from_settings({k: str(v) for k, v in values.items()})
    return config.describe(), config.derived()


def _distributed(storage: Storage, values: dict) -> Platform:
    from mqlog.distributed.config import LogConfig
    from mqlog.distributed.platform import distributed_platform

    c = LogConfig.from_settings({k: str(v) for k, v in values.items()})
    return distributed_platform(storage, primary=c.log_primary_files, secondary=c.log_secondary_files,
                                file_pages=c.log_file_pages, buffer_pages=c.buffer_pages, linear=c.is_linear,
                                integrity=c.effective_write_integrity,
                                checkpoint_records_max=c.checkpoint_log_recd_max,
                                checkpoint_records_min=c.checkpoint_log_recd_min,
                                checkpoint_wait_minutes=c.checkpoint_wait_len,
                                checkpoint_basis=c.checkpoint_basis,
                                queue_buffer_bytes=c.default_pq_buffer_size,
                                management=c.log_management if c.is_linear else "Manual")


def _zos_configure(overrides: dict) -> dict:
    from mqlog.zos.config import configure

    return configure(overrides)


def _zos_describe(values: dict) -> tuple[list, dict]:
    from mqlog.zos.config import describe

    return describe(values)


def _zos_model_only() -> tuple[str, ...]:
    from mqlog.zos.config import MODEL, PARAMETERS

    return tuple(p.name for p in PARAMETERS if p.where == MODEL)


def _distributed_model_only() -> tuple[str, ...]:
    from mqlog.distributed.config import MODEL_SETTING, PARAMETERS

    return tuple(p.name for p in PARAMETERS if p.where == MODEL_SETTING)


def _distributed_fault_claims(values: dict) -> dict:
    from mqlog.distributed.damage import fault_claims

    return fault_claims(values)


def _distributed_files() -> FileRoles:
    from mqlog.distributed.damage import FILE_ROLES

    return FILE_ROLES


def _distributed_notation():
    from mqlog.distributed.space import format_lsn  # an LSN <a:b:c:d>, as dmpmqlog and AMQ7230I write it

    return format_lsn, lambda a: f"LSN {format_lsn(a)} ({a:016X})", 22


def _zos_notation():
    return "{:016X}".format, lambda a: f"RBA {a:016X}", 16  # an RBA in hex, as CSQ1LOGP writes it


def _zos_fault_claims(values: dict) -> dict:
    from mqlog.zos.damage import fault_claims

    return fault_claims(values)


def _zos_files() -> FileRoles:
    from mqlog.zos.damage import FILE_ROLES

    return FILE_ROLES


#: the reference log (reference.log) and its control file (reference.ctl)
_REFERENCE_FILES = FileRoles(control=lambda name: name.endswith(".ctl"), log=lambda name: name.endswith(".log"),
                             needed=lambda name: name.endswith(".log"),
                             single_copy=lambda values: "the reference log")


def _reference_fault_claims(values: dict) -> dict:
    # Its control file keeps the checkpoint and the tail, not a high-water mark as the
    # distributed control file and the BSDS do: a log file cut short after the checkpoint
    # ends where a crash's log would (found by `mqlog torture --platform reference`, whose
    # `missing` class lost messages silently under the generic claim to detect).
    return {"torn": (NOTHING, "the reference platform rewrites partial pages in place"),
            "missing": (NOTHING, "the reference platform's control data keeps no high-water mark: a log file "
                                 "cut short after the last checkpoint looks like a crash's end of the log; a "
                                 "missing file or one cut before the checkpoint is refused")}


def _zos(storage: Storage, values: dict) -> Platform:
    from mqlog.zos.config import ZosLogConfig
    from mqlog.zos.platform import zos_platform_from_config

    config = ZosLogConfig.from_settings({k: str(v) for k, v in values.items()})
    platform = zos_platform_from_config(storage, config)
    if config.shared_queue_names:  # SHARED_QUEUES: the run joins a queue-sharing group of its own
        from mqlog.zos.qsg import attach_shared_queues

        platform = attrs.evolve(platform, attach=attach_shared_queues(config.shared_queue_names),
                                restart_refusal=(
            f"cannot restart a run with SHARED_QUEUES ({', '.join(config.shared_queue_names)}): its shared "
            f"queues lived in a coupling-facility structure of the run's own queue-sharing group, which the "
            f"run directory does not keep, so a restart would find none of their messages"))
    return platform


PLATFORMS: dict[str, PlatformChoice] = {
    "reference": PlatformChoice(
        "reference", "the core's idealised log: one growing file, no space limits", _reference,
        (LogParam("checkpoint_records", 10_000, _WholeNumber(1, 16_000_000),
                  "log records between checkpoints"),
         LogParam("buffer_pages", 512, _WholeNumber(2, 65_535), "log buffer size in 4 KiB pages"),
         LogParam("write_threshold_pages", 20, _WholeNumber(1, 65_535),
                  "full buffer pages that start a write nobody forced")),
        check=_reference_check, fault_claims=_reference_fault_claims),
    "distributed": PlatformChoice("distributed", "Linux/UNIX/Windows queue manager log (qm.ini Log: names)",
                                  _distributed, configurer=_distributed_configure,
                                  describer=_distributed_describe, real_names="qm.ini Log: key",
                                  model_only=_distributed_model_only, fault_claims=_distributed_fault_claims,
                                  file_roles=_distributed_files, notation=_distributed_notation),
    "zos": PlatformChoice("zos", "z/OS queue manager log (CSQ6LOGP / CSQ6SYSP / CSQ6ARVP names)",
                          _zos, configurer=_zos_configure, describer=_zos_describe,
                          real_names="CSQ6LOGP, CSQ6SYSP or CSQ6ARVP keyword", model_only=_zos_model_only,
                          fault_claims=_zos_fault_claims, file_roles=_zos_files, notation=_zos_notation,
                          title="z/OS"),
}


def choose(name: str) -> PlatformChoice:
    """The platform ``name`` names, in any case (as MQ reads its own names: ``ZOS``,
    ``Distributed``); its :attr:`PlatformChoice.name` is the canonical spelling that runs,
    run directories and reports use."""
    choice = PLATFORMS.get(name.strip().lower()) if isinstance(name, str) else None
    if choice is None:
        raise ParameterError("--platform", name, ", ".join(PLATFORMS) + " (any case)")
    return choice
