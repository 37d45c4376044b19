"""The platforms a user can name (``--platform``), their log parameters, and how to build them.

Each entry knows its parameters (``log.PARAM`` in the platform's own names: qm.ini names for
distributed, CSQ6LOGP/CSQ6SYSP names for z/OS), their defaults and ranges, and how to build
the platform over a storage. ``reference`` is the core's own idealised log (one growing
file, no limits), useful as a baseline. ``distributed`` and ``zos`` are turned on by their
own issues; until then naming them is a clear error.
"""

from __future__ import annotations

from typing import Callable

import attrs

from mqlog.core.errors import MqlogError, ParameterError
from mqlog.core.platform import Platform, reference_platform
from mqlog.core.disk.storage import Storage


class PlatformUnavailable(MqlogError):
    """A platform the command line knows of but the model does not provide yet."""


@attrs.frozen
class LogParam:
    name: str
    default: int
    low: int
    high: int
    doc: str

    def parse(self, text: str) -> int:
        try:
            value = int(str(text).replace("_", ""), 0)
        except ValueError:
            raise ParameterError(f"log.{self.name}", text, f"a whole number from {self.low} to {self.high}") from None
        if not self.low <= value <= self.high:
            raise ParameterError(f"log.{self.name}", value, f"{self.low} to {self.high}")
        return value


@attrs.frozen
class PlatformChoice:
    name: str
    description: str
    params: tuple[LogParam, ...] = ()
    factory: Callable[[Storage, dict], Platform] | None = None
    unavailable: str = ""  # why not yet
    #: checks across parameters, on the effective values (raise ParameterError)
    check: Callable[[dict], None] | None = None
    #: a platform with its own configuration object: text overrides -> effective values
    configurer: Callable[[dict], dict] | None = None
    #: rows (name, value, default, allowed, meaning) and derived sizes for `mqlog config`
    describer: Callable[[dict], tuple[list, dict]] | None = None

    def configure(self, overrides: dict[str, str]) -> dict:
        """The effective log parameters: defaults with ``overrides`` (text) applied and checked."""
        if self.factory is None:
            raise PlatformUnavailable(f"platform {self.name!r} is not available yet: {self.unavailable}")
        if self.configurer is not None:
            return self.configurer(overrides)
        known = {p.name.lower(): p for p in self.params}
        values = {p.name: p.default for p in self.params}
        for key, text in overrides.items():
            param = known.get(key.lower())
            if param is None:
                raise ParameterError(f"log.{key}", text, f"a log parameter of platform {self.name}: "
                                     + ", ".join(p.name for p in self.params))
            values[param.name] = param.parse(text)
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
                                management=c.log_management if c.is_linear else "Manual")


def _zos_configure(overrides: dict) -> dict:
    from mqlog.zos.config import configure

    return configure(overrides)


def _zos_describe(values: dict) -> tuple[list, dict]:
    from mqlog.zos.config import describe

    return describe(values)


def _zos(storage: Storage, values: dict) -> Platform:
    from mqlog.zos.config import ZosLogConfig
    from mqlog.zos.platform import zos_platform_from_config

    return zos_platform_from_config(storage, ZosLogConfig.from_settings({k: str(v) for k, v in values.items()}))


PLATFORMS: dict[str, PlatformChoice] = {
    "reference": PlatformChoice(
        "reference", "the core's idealised log: one growing file, no space limits",
        (LogParam("checkpoint_records", 10_000, 1, 16_000_000, "log records between checkpoints"),
         LogParam("buffer_pages", 512, 2, 65_535, "log buffer size in 4 KiB pages"),
         LogParam("write_threshold_pages", 20, 1, 65_535, "full buffer pages that start a write nobody forced")),
        _reference, check=_reference_check),
    "distributed": PlatformChoice("distributed", "Linux/UNIX/Windows queue manager log (qm.ini Log: names)",
                                  factory=_distributed, configurer=_distributed_configure,
                                  describer=_distributed_describe),
    "zos": PlatformChoice("zos", "z/OS queue manager log (CSQ6LOGP / CSQ6SYSP / CSQ6ARVP names)",
                          factory=_zos, configurer=_zos_configure, describer=_zos_describe),
}


def choose(name: str) -> PlatformChoice:
    choice = PLATFORMS.get(name)
    if choice is None:
        raise ParameterError("--platform", name, ", ".join(PLATFORMS))
    return choice
