"""The core's reference log space runs the log-space conformance suite.

It keeps one file that grows without limit and control data beside it, and no list of
files: nothing tells it that its log file should be there, so it declares no refusal of
missing log files (``lists_files=False``), no limit and no switching.
"""

from __future__ import annotations

from logspace.conformance import KEPT, SpaceFactory, conformance_tests
from mqlog.core.reference import ReferenceSpace

TestReferenceSpace = conformance_tests(SpaceFactory(
    "reference", ReferenceSpace, release=KEPT, control_files=("reference.ctl",), lists_files=False,
    limited=False))
