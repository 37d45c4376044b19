"""The toy platform in the recovery contract: fixed-size log files that are never reused, a
checkpoint every 60 records (so that restarts start from one)."""

from __future__ import annotations

from contract.harness import PlatformConfig
from toyplatform.toy import toy_platform

CONFIGS = [
    PlatformConfig("toy", lambda storage, log_scale=1: toy_platform(storage, checkpoint_records=60,
                                                                      log_scale=log_scale)),
]
