"""What damage means on a distributed log: which of its files restart needs and which are
control data (:data:`FILE_ROLES`), and what a configuration claims against the fault classes
where its log's design decides (:func:`fault_claims`; the rest are the same on every
platform: :mod:`mqlog.torture.faults`): a partial page rewritten in place, or first written to
a spare copy (LogWriteIntegrity)."""

from __future__ import annotations

from mqlog.core.disk.faults import NOTHING, SURVIVE, FileRoles


def _log(name: str) -> bool:
    return name.endswith((".LOG", ".log"))  # the extents, S0000000.LOG on


#: the log control file and the spare-pages file end in .lfh (amqhlctl.lfh, amqhlspr.lfh)
FILE_ROLES = FileRoles(
    control=lambda name: name.endswith(".lfh"),
    log=_log,
    needed=lambda name: _log(name) or name == "amqhlspr.lfh",
    single_copy=lambda values: f"LogWriteIntegrity={values.get('LogWriteIntegrity', '-')}",
)


def fault_claims(values: dict) -> dict[str, tuple[str, str]]:
    """{fault class: (claim level, why)} for the effective log ``values``."""
    integrity = str(values.get("LogWriteIntegrity", "TripleWrite"))
    if integrity == "SingleWrite":
        return {"torn": (NOTHING, "LogWriteIntegrity=SingleWrite rewrites a partial log page in place: "
                                  "a torn rewrite can lose records already on that page")}
    return {"torn": (SURVIVE, f"LogWriteIntegrity={integrity} writes a spare copy before rewriting "
                              "a partial page")}
