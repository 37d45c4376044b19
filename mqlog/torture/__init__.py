"""``mqlog torture``: a fault campaign against one platform configuration. The promise under
test: after any crash, torn write or single-copy damage that the configuration claims to
survive, **no committed persistent message is lost and no uncommitted one appears**; anything
beyond that is detected and reported clearly, never silently wrong. A campaign
(:mod:`~mqlog.torture.campaign`) runs the workload once, recording every file change and
journal event (:mod:`mqlog.core.workload.recording`), then injects one fault per scenario
(:mod:`~mqlog.torture.faults`) into the disk that recording materialises for it
(:mod:`~mqlog.torture.disks`) – byte for byte what re-running the workload with the fault would
leave –, restarts the queue manager on it, checks the restarted queues against the
applications' journal and judges the outcome against what the configuration claims
(:mod:`~mqlog.torture.claims`). Every scenario is deterministic (the workload's seed, the
campaign's seed), so a failing one can be replayed from its label.
"""

from __future__ import annotations

from mqlog.torture.campaign import Campaign
from mqlog.core.disk.faults import DETECT, NOTHING, SURVIVE
from mqlog.torture.claims import DAMAGE, OUTCOMES, Claim, Tally
from mqlog.torture.disks import Scenario, in_place_writes
from mqlog.torture.faults import FAULT_CLASSES, FAULTS, FaultClass, claims

__all__ = ["FAULT_CLASSES", "FAULTS", "FaultClass", "Campaign", "claims", "in_place_writes", "DAMAGE", "DETECT", "NOTHING", "OUTCOMES",
           "SURVIVE", "Claim", "Scenario", "Tally"]
