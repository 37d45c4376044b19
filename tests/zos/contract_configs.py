"""The z/OS platform's configurations in the recovery contract (registered through
``tests/contract/registry.py``): dual and single logging, COMPLOG(RLE), OFFLOAD=NO, and dual
logging on a device that never splits a CI (write-cached DASD: a CI being rewritten goes to
both copies at once).

Small active data sets (16 CIs) so the contract's workloads switch, offload and read
archives; dual copies claim to survive a torn write, a single copy does not.
"""

from __future__ import annotations

from contract.harness import PlatformConfig
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.platform import zos_platform

CONFIGS = [
    PlatformConfig("zos-dual", lambda storage, log_scale=1: zos_platform(
        storage, data_sets=3, cis=16 * log_scale, logload=1000),
                   survives_torn_writes=True),
    PlatformConfig("zos-single", lambda storage, log_scale=1: zos_platform(
        storage, data_sets=4, cis=32 * log_scale, dual=False, dual_archive=False, logload=1000)),
    PlatformConfig("zos-dual-rle", lambda storage, log_scale=1: zos_platform(
        storage, data_sets=3, cis=16 * log_scale, logload=1000, codec=CompLogCodec("RLE")), survives_torn_writes=True),
    PlatformConfig("zos-dual-no-offload", lambda storage, log_scale=1: zos_platform(
        storage, data_sets=4, cis=64 * log_scale, offload=False, logload=1000, outbuff_kb=80), survives_torn_writes=True),
    PlatformConfig("zos-dual-cached", lambda storage, log_scale=1: zos_platform(
        storage, data_sets=3, cis=16 * log_scale, logload=1000), device="ibm-s6-ds8870", survives_torn_writes=True),
]
