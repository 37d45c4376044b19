"""Run-time commands of a z/OS queue manager that change its log (IBM MQ for z/OS: SET LOG, SET SYSTEM, DEFINE LOG): ``SET LOG``,
``SET SYSTEM LOGLOAD`` and ``DEFINE LOG``, for workloads and tests to issue
while it runs. Values are checked as CSQ6LOGP/CSQ6SYSP would check them (ParameterError
naming the parameter and its range); what IBM does not allow to change at run time is
refused with the reason."""

from __future__ import annotations

import attrs

from mqlog.zos.config import ZosLogConfig

#: SET LOG's parameters and when a change takes effect
SET_LOG = {"COMPLOG": "at once", "WRTHRSH": "at once", "MAXARCH": "at the next offload", "MAXRTU": "at once",
           "DEALLCT": "at once"}


def _checked(command: str, changes: dict) -> dict:
    """The changes validated against the parameters' ranges (names upper-cased)."""
    base = ZosLogConfig()
    new = base.set_system(**changes) if command == "SET SYSTEM" else base.set_log(**changes)
    return {k.upper(): getattr(new, k.lower()) for k in changes}


def set_log(qm, **changes) -> dict:
    """``SET LOG``: COMPLOG, WRTHRSH, MAXARCH (next offload), MAXRTU, DEALLCT. Returns the
    values now in force."""
    values = _checked("SET LOG", changes)
    platform, space = qm.platform, qm.platform.space
    for name, value in values.items():
        if name == "COMPLOG":
            platform.codec.complog = value
        elif name == "WRTHRSH":
            qm.writer.write_threshold_pages = min(value, qm.writer.buffer.capacity_pages)
        elif name == "MAXARCH":
            space.max_arch = value
        # MAXRTU and DEALLCT govern tape units: accepted, nothing in the model uses them
    qm.say("set-log", changes=values)
    return values


def set_system(qm, *, LOGLOAD: int) -> int:  # noqa: N803 - the MQSC keyword
    """``SET SYSTEM LOGLOAD(n)``: log records between checkpoints, from the next one."""
    value = _checked("SET SYSTEM", {"LOGLOAD": LOGLOAD})["LOGLOAD"]
    # (the run's settings, not the frozen platform bundle: the policy is read from there)
    qm.settings.checkpoint_policy = attrs.evolve(qm.settings.checkpoint_policy, records=value)
    qm.say("set-log", changes={"LOGLOAD": value})
    return value


def define_log(qm) -> str:
    """``DEFINE LOG``: add an active data set to each copy while running."""
    name = qm.platform.space.define_log()
    qm.say("define-log", dsname=name)
    return name


__all__ = ["set_log", "set_system", "define_log", "SET_LOG"]
