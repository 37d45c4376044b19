"""The queue manager's settings and its counters.

:class:`QmConfig` holds what the core itself reads from a queue manager's configuration
(unit-of-work and queue limits, how restart runs, its member number among those sharing
kept queues; the CPU of an MQI call and of restart's paths is the host's,
:mod:`mqlog.core.host`) – a platform's log parameters live with the
platform. :class:`QmCounters` holds the queue-manager level figures the metrics report.

:data:`QMGR_PARAMETERS` are the queue manager attributes a user sets by MQ's names (a spec's
``[qmgr]`` table, ``--set qmgr.MAXUMSGS=N``): :func:`qmgr_settings` checks them,
:func:`with_qmgr` puts them into a :class:`QmConfig` and :func:`qmgr_of` reads them back out
(for a run's metrics and run.json).
"""

from __future__ import annotations

import attrs

from collections.abc import Mapping

from mqlog.core.errors import ParameterError
from mqlog.core.params import Number, Parameter, ParameterSet

#: how restart runs: as MQ 9.1.1 and later (queues loaded in parallel, replay in large
#: reads), or as before it ("legacy")
RESTART_MODES = ("9.1.1", "legacy")
DEFAULT_RESTART_MODE = "9.1.1"


def _bounded(name: str, low: int, high: int):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ParameterError(f"qmgr.{name}", value, f"{low} to {high}")
    return check


@attrs.frozen
class QmConfig:
    """Queue-manager settings the core uses (platform log parameters live with the platform)."""

    name: str = "QM1"
    #: MAXUMSGS: operations one unit of work may hold
    max_uow_messages: int = attrs.field(default=10_000, validator=_bounded("max_uow_messages", 1, 999_999_999))
    #: MAXDEPTH given to queues defined without one
    max_depth: int = attrs.field(default=5000, validator=_bounded("max_depth", 0, 999_999_999))
    #: persistent bytes a queue keeps in memory before spilling to its file (128 KiB, doubled on 64-bit)
    persistent_buffer_bytes: int = attrs.field(default=256 * 1024,
                                               validator=_bounded("persistent_buffer_bytes", 0, 1 << 30))
    #: "9.1.1": queues loaded in parallel, replay reads the log in large chunks;
    #: "legacy": queues loaded one at a time, replay reads page by page with a file-system call each
    restart_mode: str = attrs.field(default=DEFAULT_RESTART_MODE, validator=attrs.validators.in_(RESTART_MODES))
    #: this queue manager's number among those sharing kept queues: unit-of-work ids carry
    #: it, so the units of all of them can meet on a shared queue without clashing
    member: int = attrs.field(default=0, validator=_bounded("member", 0, 31))


_QMGR_DEFAULTS = attrs.fields_dict(QmConfig)

#: The queue manager attributes a run may set, by MQ's names (ALTER QMGR MAXUMSGS, and the
#: MAXDEPTH a queue defined without one gets – MQ takes that from the default local queue,
#: SYSTEM.DEFAULT.LOCAL.QUEUE; the model keeps it with the queue manager). ``attribute`` is
#: the :class:`QmConfig` field each one sets.
QMGR_PARAMETERS = ParameterSet((
    Parameter("MAXUMSGS", _QMGR_DEFAULTS["max_uow_messages"].default, Number(1, 999_999_999),
              "operations one unit of work may hold; the next is refused with MQRC 2024", where="ALTER QMGR",
              attribute="max_uow_messages"),
    Parameter("MAXDEPTH", _QMGR_DEFAULTS["max_depth"].default, Number(0, 999_999_999),
              "MAXDEPTH of a queue defined without one. The built-in workloads define every queue "
              "of theirs with MAXDEPTH 999999999, so for them it changes nothing", where="DEFINE QLOCAL default", attribute="max_depth"),
), "a queue manager attribute")


def qmgr_settings(values: Mapping[str, object], *, defaults: bool = True) -> dict[str, int]:
    """``values`` (MQ attribute names in any case → text or int) checked, by MQ's name
    (``{"MAXUMSGS": 10000, "MAXDEPTH": 5000}``); with ``defaults``, every attribute not
    given has its default. Errors are :class:`ParameterError` naming ``qmgr.NAME`` and what
    is allowed, or the known names for an unknown one."""
    chosen = QMGR_PARAMETERS.choose(values, prefix="qmgr.")
    return {p.name: chosen[p.attribute] if p.attribute in chosen else p.default
            for p in QMGR_PARAMETERS if defaults or p.attribute in chosen}


def with_qmgr(config: QmConfig, qmgr: Mapping[str, object]) -> QmConfig:
    """``config`` with the queue manager attributes ``qmgr`` (by MQ's names) set."""
    return attrs.evolve(config, **{QMGR_PARAMETERS.lookup(name, value, "qmgr.").attribute: value
                                   for name, value in qmgr_settings(qmgr, defaults=False).items()})


def qmgr_of(config: QmConfig) -> dict[str, int]:
    """The attributes of :data:`QMGR_PARAMETERS` as ``config`` has them, by MQ's names."""
    fields = attrs.asdict(config)
    return {p.name: fields[p.attribute] for p in QMGR_PARAMETERS}


@attrs.define
class QmCounters:
    """Queue-manager level figures for the metrics schema."""

    messages_put: int = 0
    messages_got: int = 0
    commits: int = 0
    backouts: int = 0
    checkpoints: int = 0
    uows_rolled_back: int = 0
    uows_rolled_forward: int = 0
    log_full_events: int = 0  # times the log-space policy had to release space
    # MQI calls that found the log full: refused with 2102, or, on a platform whose calls wait
    # for log space (``full_log_waits``), each wait of a call counted
    log_full_refusals: int = 0
    #: virtual µs MQI calls spent waiting for log space (``full_log_waits`` platforms), summed
    #: over the calls that waited: the time a full log held work up
    log_full_wait_us: float = 0.0
    shunted_bytes: int = 0
    shunts_failed: int = 0  # rounds refused: the active log could not hold them beside the reserve
    media_images: int = 0
    media_image_bytes: int = 0
    queues_recreated: int = 0
    queues_loaded_on_use: int = 0  # queues restart left unloaded, loaded by their first MQPUT/MQGET
    shunts: int = 0
    compression_in_bytes: int = 0
    compression_out_bytes: int = 0
    direct_handoffs: int = 0  # persistent puts passed to a waiting getter without logging
    spills: int = 0
    #: bytes of queue-file writes that reached the device (on a platform whose queue files
    #: go through the page cache: what checkpoints forced) ...
    queue_file_bytes_written: int = 0
    #: ... and bytes the calls wrote into the page cache (a page written twice between
    #: checkpoints reaches the device once)
    queue_file_bytes_cached: int = 0
    queue_file_bytes_read: int = 0
    #: spills written in the putting call because the queue's writes waiting behind the
    #: calls had reached the platform's bound (:attr:`Platform.queue_writes_behind_max
    #: <mqlog.core.platform.Platform.queue_writes_behind_max>`; MQ for z/OS's QPSTDMC)
    queue_sync_writes: int = 0
