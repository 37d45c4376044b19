"""What a z/OS log configuration claims against the fault classes where its log's design
decides it (the rest are the same on every platform: :mod:`mqlog.torture.claims`): dual
active logs (TWOACTV) and dual BSDS (TWOBSDS) against torn rewrites, a damaged copy, and a
device that loses or misdirects a write it acknowledged."""

from __future__ import annotations

from mqlog.core.disk.faults import NOTHING, SURVIVE


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
