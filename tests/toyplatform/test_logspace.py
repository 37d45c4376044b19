"""The toy platform's log space runs the log-space conformance suite: files kept, never
reused, so its log never fills; its control data does not list its files."""

from __future__ import annotations

from logspace.conformance import KEPT, SpaceFactory, conformance_tests
from toyplatform.toy import CONTROL_FILE, FILE_PAGES, ToyLogSpace

TestToy = conformance_tests(SpaceFactory("toy", ToyLogSpace, release=KEPT, control_files=(CONTROL_FILE,),
                                         file_pages=FILE_PAGES, lists_files=False, limited=False))
