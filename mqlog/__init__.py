"""The command line, the application layer (run directories, the platform registry, fault
campaigns) and the public API of mqlog, a model of IBM MQ's recovery log on distributed
platforms and z/OS.

The public API, importable from ``mqlog`` directly (loaded on first use)::

    from mqlog import LogWriter, ReferenceLogSpace, MemoryStorage, Device, get_profile, scan

The packages behind it: :mod:`mqlog.core` (records, pages, storage and faults, devices,
the log writer and reader), :mod:`mqlog.distributed` and :mod:`mqlog.zos` (the platforms),
:mod:`mqlog.spark` (jobs; only the command line imports it).
"""

from importlib import import_module

from mqlog._version import __version__

_EXPORTS = {
    # records and their format
    "records": "mqlog.core.format.records",
    "decode_record": "mqlog.core.format.records",
    # pages, the buffer, reading back
    "LogBuffer": "mqlog.core.format.pages",
    "LogReader": "mqlog.core.log.reader",
    "EndOfLog": "mqlog.core.log.reader",
    "scan": "mqlog.core.log.reader",
    # storage, faults, devices
    "MemoryStorage": "mqlog.core.disk.storage",
    "DirectoryStorage": "mqlog.core.disk.storage",
    "FaultInjectingStorage": "mqlog.core.disk.faults",
    "FaultPlan": "mqlog.core.disk.faults",
    "Device": "mqlog.core.disk.devices",
    "DeviceProfile": "mqlog.core.disk.devices",
    "get_profile": "mqlog.core.disk.devices",
    "load_profiles": "mqlog.core.disk.devices",
    # the writer and where it writes
    "LogWriter": "mqlog.core.log.writer",
    "LogStatistics": "mqlog.core.log.stats",
    "ReferenceLogSpace": "mqlog.core.log.space",
    "PlainAddressing": "mqlog.core.log.addressing",
    # studies
    "run_group_commit": "mqlog.groupcommit",
    # errors
    "MqlogError": "mqlog.core.errors",
    "ParameterError": "mqlog.core.errors",
    "LogFormatError": "mqlog.core.errors",
    "LogCorruptionError": "mqlog.core.errors",
    "SimulatedCrash": "mqlog.core.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mqlog' has no attribute {name!r}")
    mod = import_module(module)
    value = mod if name == "records" else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
