"""What a fault campaign judges by: the outcomes of a scenario, the levels of what a
configuration claims for a fault class (:class:`Claim`: each class's claim is in the registry,
:mod:`mqlog.torture.faults`, and a platform's own in its descriptor), and the tally of one
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

from mqlog.core.disk.faults import NOTHING, SURVIVE
from mqlog.core.errors import LogFormatError
from mqlog.core.objects.media import MediaRecoveryError


#: how far from its target a misdirected write lands at most, in pages either way
MISDIRECT_PAGES = 8
SURVIVED, DETECTED, EXPECTED, SILENT, ERROR = "survived", "detected", "expected_loss", "silent_loss", "error"
OUTCOMES = (SURVIVED, DETECTED, EXPECTED, SILENT, ERROR)
#: the errors that report damage (a log, control file, BSDS or queue file that fails its
#: checks; media recovery that cannot rebuild a damaged queue): anything else is the model failing
DAMAGE = (LogFormatError, MediaRecoveryError)
#: scenarios kept in the report per class and outcome (the rest are counted)
EXAMPLES = 5


@attrs.define
class Claim:
    level: str
    why: str


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


def table(tallies: list[Tally]) -> str:
    """A campaign's counts, one line per fault class (``tallies`` in the report's order),
    then notes: what the expected losses were, a broken claim, and the examples of silent
    losses and errors."""
    head = ("fault", "claim", "tried", "of", "survived", "detected", "expected loss", "silent loss", "errors")
    rows = [head]
    for t in tallies:
        rows.append((t.fault, t.claim.level, str(t.tried), str(t.possible), str(t.counts[SURVIVED]),
                     str(t.counts[DETECTED]), str(t.counts[EXPECTED]), str(t.counts[SILENT]),
                     str(t.counts[ERROR])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    notes = []
    for t in tallies:
        fault = t.fault
        if t.counts[EXPECTED]:
            notes.append(f"{fault}: expected losses: {t.claim.why}" if t.claim.level == NOTHING else
                         f"{fault}: expected losses: " + t.examples[EXPECTED][0][1].rsplit("(expected: ", 1)[-1]
                         .rstrip(")"))
        if t.broken:
            notes.append(f"{fault}: CLAIM BROKEN: restart refused {t.counts[DETECTED]} times although the "
                         f"configuration claims to survive this fault ({t.claim.why})")
            for label, detail in t.examples.get(DETECTED, []):
                notes.append(f"{fault}: REFUSED: {label}: {detail}")
        for outcome in (SILENT, ERROR):
            for label, detail in t.examples.get(outcome, []):
                notes.append(f"{fault}: {outcome.replace('_', ' ').upper()}: {label}: {detail}")
    return "\n".join(lines + ([""] + notes if notes else []))
