"""The platform registry: the platforms a user can name (``--platform``), each by the
descriptor its package exports (:class:`~mqlog.core.descriptor.PlatformDescriptor`).

A platform is one package plus one line here: everything the application layer, the Spark
jobs and the command line need to know of it – its parameters (``log.PARAM`` in the
platform's own names: qm.ini names for distributed, CSQ6LOGP/CSQ6SYSP/CSQ6ARVP names for
z/OS) and which are fixed at creation, how to build it, its files, its log ranges, its
claims, its utilities – they ask its descriptor, never its name (tests/test_platform_names.py
keeps it so). ``reference`` is the core's own idealised log (one growing file, no limits),
useful as a baseline. The descriptors import their platforms' modules only when used.
"""

from __future__ import annotations

from mqlog.core.descriptor import REFERENCE, PlatformDescriptor
from mqlog.core.errors import ParameterError
from mqlog.distributed.descriptor import DESCRIPTOR as DISTRIBUTED
from mqlog.zos.descriptor import DESCRIPTOR as ZOS

#: the platforms by canonical name, in the order listings and error messages give them
PLATFORMS: dict[str, PlatformDescriptor] = {d.name: d for d in (REFERENCE, DISTRIBUTED, ZOS)}
#: the platform a calibration case runs when it names none
DEFAULT = DISTRIBUTED.name


def choose(name: str) -> PlatformDescriptor:
    """The platform ``name`` names, in any case (as MQ reads its own names: ``ZOS``,
    ``Distributed``); its :attr:`PlatformDescriptor.name` is the canonical spelling that runs,
    run directories and reports use."""
    choice = PLATFORMS.get(name.strip().lower()) if isinstance(name, str) else None
    if choice is None:
        raise ParameterError("--platform", name, ", ".join(PLATFORMS) + " (any case)")
    return choice


def record_types() -> tuple:
    """Every platform's own record classes: the platforms' codes never meet (docs/FORMAT.md
    §3.2), so a log file of any platform decodes with all of them."""
    return tuple(t for d in PLATFORMS.values() for t in d.record_types())


def owner(command: str) -> PlatformDescriptor:
    """The platform whose own utility the ``mqlog`` command ``command`` is (its descriptor's
    ``commands`` lists it)."""
    for descriptor in PLATFORMS.values():
        if command in descriptor.commands:
            return descriptor
    raise KeyError(f"no platform's descriptor lists the command {command!r}")
