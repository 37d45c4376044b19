"""The distributed platform's configurations in the recovery contract (registered through
``tests/contract/registry.py``): circular and linear logs, TripleWrite and SingleWrite.

Two use 16-page extents, below MQ's 64-page minimum on purpose: the contract's small
workloads must turn the ring and grow the stream.
"""

from __future__ import annotations

from contract.harness import PlatformConfig
from mqlog.distributed.platform import distributed_platform

CONFIGS = [
    PlatformConfig("distributed-circular-triple", lambda storage, log_scale=1: distributed_platform(
        storage, file_pages=16 * log_scale, primary=3, secondary=2, checkpoint_records_max=1000),
        survives_torn_writes=True),
    PlatformConfig("distributed-circular-single", lambda storage, log_scale=1: distributed_platform(
        storage, file_pages=128 * log_scale, integrity="SingleWrite", checkpoint_records_max=1000)),
    PlatformConfig("distributed-linear-triple", lambda storage, log_scale=1: distributed_platform(
        storage, file_pages=128 * log_scale, linear=True, checkpoint_records_max=1000), survives_torn_writes=True),
    PlatformConfig("distributed-linear-single", lambda storage, log_scale=1: distributed_platform(
        storage, file_pages=16 * log_scale, linear=True, integrity="SingleWrite", checkpoint_records_max=1000),
        device="nfs1"),
]
