"""The core's reference platform in the recovery contract: one growing log file; padded
partial pages (which survive a torn write); a small buffer on a slow device."""

from __future__ import annotations

from mqlog.core.reference import reference_platform

from .harness import PlatformConfig

CONFIGS = [
    PlatformConfig("reference", lambda storage: reference_platform(storage, checkpoint_records=60)),
    PlatformConfig("reference-padded", lambda storage: reference_platform(
        storage, checkpoint_records=60, pad_partial_pages=True), survives_torn_writes=True),
    PlatformConfig("reference-small-buffer", lambda storage: reference_platform(
        storage, checkpoint_records=25, buffer_pages=18, write_threshold_pages=4), device="nfs1"),
]
