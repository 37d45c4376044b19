"""What a fault campaign judges by: the fault classes, the outcomes of a scenario, what each
platform configuration claims for each class and why (:func:`claims`), and the tally of one
class's outcomes with the examples the report keeps (:class:`Tally`).

Outcomes of a scenario: ``survived`` (the journal checks out), ``detected`` (restart refused
with mqlog's own error naming the damage, restart marked the queues with wrong messages
damaged, AMQ7472, or reading a message back failed its CRC – under a fault the
configuration claims to *survive*, a refusal breaks the claim and fails the campaign),
``expected loss`` (messages lost or wrong under a fault the configuration does not claim to
survive – the report names the configuration choice), ``silent loss`` (lost or wrong with
nothing said, under a fault it claims to survive or to detect: must be 0), ``error`` (the
tool itself failed, or an error that is not about damage: a bug, must be 0).
"""

from __future__ import annotations

import attrs

from mqlog.core.errors import LogFormatError
from mqlog.core.objects.media import MediaRecoveryError


FAULT_CLASSES = ("crash", "torn", "bitflip", "copy", "restart", "missing", "stale", "lost", "misdirected",
                 "fsync", "enospc")
#: how far from its target a misdirected write lands at most, in pages either way
MISDIRECT_PAGES = 8
SURVIVED, DETECTED, EXPECTED, SILENT, ERROR = "survived", "detected", "expected_loss", "silent_loss", "error"
OUTCOMES = (SURVIVED, DETECTED, EXPECTED, SILENT, ERROR)
#: what a configuration claims for a fault class: nothing lost; loss only if detected; nothing
SURVIVE, DETECT, NOTHING = "survive", "detect", "nothing"
#: the errors that report damage (a log, control file, BSDS or queue file that fails its
#: checks; media recovery that cannot rebuild a damaged queue): anything else is the model failing
DAMAGE = (LogFormatError, MediaRecoveryError)
#: scenarios kept in the report per class and outcome (the rest are counted)
EXAMPLES = 5


@attrs.define
class Claim:
    level: str
    why: str


def claims(platform: str, values: dict) -> dict[str, Claim]:
    """What the configuration claims for each fault class, and why."""
    out = {
        "crash": Claim(SURVIVE, "the write-ahead log: nothing acknowledged is lost at a crash"),
        "restart": Claim(SURVIVE, "restart is repeatable: compensation records, no undo done twice"),
        "bitflip": Claim(DETECT, "log pages and records carry CRCs; control data and queue files are checked"),
        "copy": Claim(NOTHING, "only z/OS dual logging keeps a second copy"),
        "missing": Claim(DETECT, "a file restart needs that is missing or short is refused, naming it (AMQ6767, "
                                 "CSQJ100E); a lost queue file is marked damaged (AMQ7472) or, on a linear log, "
                                 "re-created from its media image"),
        "stale": Claim(DETECT, "each log file's first page is checked against the address the control data gives "
                               "it (AMQ6762E, CSQJ102E), the log must reach the control data's high-water mark, and "
                               "past a bad page restart reads to the end of the files in use (a hole of any length "
                               "is refused); damage wholly past the last update of the control data looks like a "
                               "crash's end of the log, and is an expected loss"),
        "fsync": Claim(SURVIVE, "a commit whose force failed is never acknowledged: the queue manager ends, "
                                "naming the failure"),
        "enospc": Claim(SURVIVE, "a full file system fails the format or write that needed room: nothing "
                                 "unacknowledged, the queue manager ends (AMQ6708, CSQJ103E)"),
    }
    single = ("a device that acknowledges a write it never makes defeats write-ahead logging on a single copy: "
              "a hole followed by later writes is found, but a lost last write looks like the end of the log")
    out["lost"] = Claim(NOTHING, single)
    out["misdirected"] = Claim(NOTHING, single + ", and the page it hit elsewhere is a damaged page")
    if platform == "distributed":
        integrity = str(values.get("LogWriteIntegrity", "TripleWrite"))
        if integrity == "SingleWrite":
            out["torn"] = Claim(NOTHING, "LogWriteIntegrity=SingleWrite rewrites a partial log page in place: "
                                         "a torn rewrite can lose records already on that page")
        else:
            out["torn"] = Claim(SURVIVE, f"LogWriteIntegrity={integrity} writes a spare copy before rewriting "
                                         "a partial page")
    elif platform == "zos":
        if str(values.get("TWOACTV", "YES")) == "YES":
            out["torn"] = Claim(SURVIVE, "TWOACTV=YES rewrites a partial CI on copy 2 only once copy 1 holds it")
            out["copy"] = Claim(SURVIVE, "TWOACTV=YES (and TWOBSDS=YES): reads fall back to the other copy")
            dual = ("a device that acknowledges a write it never makes: TWOACTV=YES keeps the log's other copy, "
                    "but a reader takes copy 2 only where copy 1's page is bad, as MQ does; where copy 1 still holds "
                    "a good older version of a page it lost, that is read, and the log can end early there (or, "
                    "with later writes after it, restart refuses); queue files have one copy")
            out["lost"] = Claim(NOTHING, dual)
            out["misdirected"] = Claim(NOTHING, dual)
            if str(values.get("TWOBSDS", "YES")) != "YES":
                out["copy"] = Claim(SURVIVE, "TWOACTV=YES: log reads fall back to the other copy")
        else:
            out["torn"] = Claim(NOTHING, "TWOACTV=NO: a partial CI is rewritten in place on the only copy")
    else:
        out["torn"] = Claim(NOTHING, "the reference platform rewrites partial pages in place")
    return out


@attrs.define
class Tally:
    fault: str
    claim: Claim
    counts: dict = attrs.field(factory=lambda: dict.fromkeys(OUTCOMES, 0))
    examples: dict = attrs.field(factory=dict)  # outcome -> [(label, detail)]
    possible: int = 0  # scenarios of this class before sampling

    @property
    def tried(self) -> int:
        return sum(self.counts.values())

    @property
    def broken(self) -> bool:
        """A configuration that claims to survive this fault refused to restart after it."""
        return self.claim.level == SURVIVE and self.counts[DETECTED] > 0

    def add(self, outcome: str, label: str, detail: str) -> None:
        self.counts[outcome] += 1
        kept = self.examples.setdefault(outcome, [])
        if len(kept) < EXAMPLES:
            kept.append((label, detail))

    def as_dict(self) -> dict:
        return {"fault": self.fault, "claim": self.claim.level, "claim_reason": self.claim.why,
                "possible": self.possible, "tried": self.tried,
                **{("errors" if k == ERROR else k): v for k, v in self.counts.items()},
                "examples": {k: [list(e) for e in v] for k, v in self.examples.items()}}
