"""What a distributed log configuration claims against the fault classes where its log's
design decides it (the rest are the same on every platform: :mod:`mqlog.torture.claims`):
a partial page rewritten in place, or first written to a spare copy (LogWriteIntegrity)."""

from __future__ import annotations

from mqlog.core.disk.faults import NOTHING, SURVIVE


def fault_claims(values: dict) -> dict[str, tuple[str, str]]:
    """{fault class: (claim level, why)} for the effective log ``values``."""
    integrity = str(values.get("LogWriteIntegrity", "TripleWrite"))
    if integrity == "SingleWrite":
        return {"torn": (NOTHING, "LogWriteIntegrity=SingleWrite rewrites a partial log page in place: "
                                  "a torn rewrite can lose records already on that page")}
    return {"torn": (SURVIVE, f"LogWriteIntegrity={integrity} writes a spare copy before rewriting "
                              "a partial page")}
