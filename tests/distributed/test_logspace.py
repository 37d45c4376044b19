"""The distributed log space runs the log-space conformance suite: circular logs (TripleWrite
and SingleWrite, with and without secondary extents to grow the ring into) and linear logs
(LogManagement Manual keeps inactive extents, Automatic reuses them).

Extents are 8 pages, far below MQ's minimum, so that a few dozen records turn the ring.
"""

from __future__ import annotations

from logspace.conformance import KEPT, REUSED, SpaceFactory, conformance_tests
from mqlog.distributed.space import AUTOMATIC, CONTROL_FILE, DistributedLogSpace

PAGES = 8


def distributed(name, *, release, primary=3, secondary=2, limit=None, **kwargs):
    return SpaceFactory(
        name, lambda storage: DistributedLogSpace(storage, primary=primary, secondary=secondary, file_pages=PAGES,
                                                  **kwargs),
        release=release, control_files=(CONTROL_FILE,), file_pages=PAGES, limit_files=limit, keeps_media=True)


# A circular log whose tail does not move fills its primaries, then its secondaries.
TestCircularTriple = conformance_tests(distributed("circular-triple", release=REUSED, limit=5))
TestCircularSingle = conformance_tests(distributed("circular-single", release=REUSED, limit=5,
                                                   triple_write=False))
TestCircularNoSecondary = conformance_tests(distributed("circular-no-secondary", release=REUSED, secondary=0,
                                                        limit=3))
TestLinearManual = conformance_tests(distributed("linear-manual", release=KEPT, linear=True))


TestLinearAutomatic = conformance_tests(distributed("linear-automatic", release=REUSED, linear=True,
                                                   management=AUTOMATIC, triple_write=False))
