"""Suite 3, RLE (COMPLOG RLE, zos/rle.py): compress and decompress throughput on the
``padded-records`` and ``text`` payloads, against zstandard level 1 on the same bytes.

Target: RLE compress ≥ 0.1 × zstd-1 compress MB/s, and decompress ≥ 0.09 × zstd-1 decompress
MB/s. zstd is C; a byte-at-a-time Python loop or a plain regex scan reaches about 0.03×.
"""

from __future__ import annotations

import random

import pytest
import zstandard

from mqlog.core.workload.payload import make_payload
from mqlog.zos.rle import rle_decode, rle_encode

TARGET = 0.1
#: decompress of padded-records measures 0.105-0.117 on a quiet machine: 0.1 left no 15% margin
#: for the gate in CI (issue 35)
DECOMPRESS_TARGET = 0.09


def _data(kind: str, messages: int) -> bytes:
    return b"".join(make_payload(kind, 4096, random.Random(i)) for i in range(messages))


@pytest.mark.parametrize("kind", ["padded-records", "text"])
def test_rle_compress_against_zstd_level_1(benchmark, gate, kind):
    data = _data(kind, 4 if gate.smoke(benchmark) else 256)
    zstd = zstandard.ZstdCompressor(level=1)
    assert rle_decode(rle_encode(data)) == data
    gate.ratio(benchmark, name=f"RLE compress, {kind}", group="3 RLE", model=lambda: rle_encode(data),
               baseline=lambda: zstd.compress(data), target=TARGET, model_items=len(data) / 1e6,
               baseline_items=len(data) / 1e6, unit="MB", rounds=21)


@pytest.mark.parametrize("kind", ["padded-records", "text"])
def test_rle_decompress_against_zstd_level_1(benchmark, gate, kind):
    data = _data(kind, 4 if gate.smoke(benchmark) else 256)
    ours, theirs = rle_encode(data), zstandard.ZstdCompressor(level=1).compress(data)
    unzstd = zstandard.ZstdDecompressor()
    assert unzstd.decompress(theirs) == data
    gate.ratio(benchmark, name=f"RLE decompress, {kind}", group="3 RLE", model=lambda: rle_decode(ours),
               baseline=lambda: unzstd.decompress(theirs), target=DECOMPRESS_TARGET, model_items=len(data) / 1e6,
               baseline_items=len(data) / 1e6, unit="MB", rounds=21)
