"""The z/OS log space runs the log-space conformance suite: single and dual logging (with
one and two BSDS copies), with archiving (full data sets are offloaded, and read from the
archive once reused) and without (OFFLOAD=NO: reused once the checkpoint has passed them).

Active data sets are 8 CIs, so that a few dozen records turn the ring of three.
"""

from __future__ import annotations

from logspace.conformance import ARCHIVED, REUSED, SpaceFactory, conformance_tests
from mqlog.zos.space import BSDS_FILES, ZosLogSpace

CIS = 8
DATA_SETS = 3


def zos(name, *, dual, offload):
    return SpaceFactory(
        name, lambda storage: ZosLogSpace(storage, data_sets=DATA_SETS, cis=CIS, dual=dual, dual_archive=dual,
                                          dual_bsds=dual, offload=offload),
        release=ARCHIVED if offload else REUSED, control_files=BSDS_FILES if dual else BSDS_FILES[:1],
        file_pages=CIS, limit_files=None if offload else DATA_SETS, copies=2 if dual else 1,
        archive_copies=2 if dual else 1)


TestDualArchiving = conformance_tests(zos("dual-archiving", dual=True, offload=True))
TestSingleArchiving = conformance_tests(zos("single-archiving", dual=False, offload=True))
TestDualNoOffload = conformance_tests(zos("dual-no-offload", dual=True, offload=False))
TestSingleNoOffload = conformance_tests(zos("single-no-offload", dual=False, offload=False))
