"""What damage means on a z/OS log: which of its files restart needs, which are control data
and which are copies of each other (:data:`FILE_ROLES`), and what a configuration claims
against the fault classes where its log's design decides (:func:`fault_claims`; the rest are
the same on every platform: :mod:`mqlog.torture.faults`): dual active logs (TWOACTV) and dual
BSDS (TWOBSDS) against torn rewrites, a damaged copy, and a device that loses or misdirects a
write it acknowledged."""

from __future__ import annotations

from mqlog.core.disk.faults import NOTHING, SURVIVE, FileRoles


def _copies(name: str) -> tuple:
    if name.startswith("LOGCOPY1."):
        return name, name.replace("LOGCOPY1.", "LOGCOPY2.")
    return (name,)


#: BSDS01/BSDS02; active data sets LOGCOPY1.DSnn and LOGCOPY2.DSnn; archives PREFIX.Annnnnnn
FILE_ROLES = FileRoles(
    control=lambda name: name.startswith("BSDS"),
    log=lambda name: name.startswith("LOGCOPY1."),  # copy 1: _copies gives copy 2
    needed=lambda name: name.startswith("LOGCOPY") or ".A" in name,
    copies=_copies,
    single_copy=lambda values: None if str(values.get("TWOACTV", "YES")) == "YES" else "TWOACTV=NO",
)


def fault_claims(values: dict) -> dict[str, tuple[str, str]]:
    """{fault class: (claim level, why)} for the effective log ``values``."""
    if str(values.get("TWOACTV", "YES")) != "YES":
        return {"torn": (NOTHING, "TWOACTV=NO: a partial CI is rewritten in place on the only copy")}
    dual = ("a device that acknowledges a write it never makes: TWOACTV=YES keeps the log's other copy, "
            "but a reader takes copy 2 only where copy 1's page is bad, as MQ does; where copy 1 still holds "
            "a good older version of a page it lost, that is read, and the log can end early there (or, "
            "with later writes after it, restart refuses); queue files have one copy")
    copy = ("TWOACTV=YES (and TWOBSDS=YES): reads fall back to the other copy"
            if str(values.get("TWOBSDS", "YES")) == "YES" else "TWOACTV=YES: log reads fall back to the other copy")
    return {"torn": (SURVIVE, "TWOACTV=YES rewrites a partial CI on copy 2 only once copy 1 holds it"),
            "copy": (SURVIVE, copy), "lost": (NOTHING, dual), "misdirected": (NOTHING, dual)}
