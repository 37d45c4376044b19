"""RLE speed, as a ratio against a baseline measured in the same process (machines here are
noisy; an absolute time would gate on the machine, not the code). Run with
``pytest perf`` after ``pip install -e '.[perf]'``; the perf gate proper is issue 8's.

Baseline: zlib.compress at level 1 over the same bytes – C code doing more work per byte
than RLE. The pure-Python RLE (regex-found runs, sliced literals) must stay within a small
factor of it; a per-byte Python loop would be hundreds of times slower."""

from __future__ import annotations

import random
import time
import zlib

from mqlog.zos.rle import rle_decode, rle_encode

#: RLE encode + decode may take at most this many times zlib level 1's encode + decode
MAX_RATIO = 10.0


def _data() -> bytes:
    rng = random.Random(1)
    cards = b"".join((b"%08d CUSTOMER ORDER" % i).ljust(80, b"\x40") for i in range(10_000))
    return rng.randbytes(1 << 20) + cards


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_rle_round_trip_speed_is_a_small_multiple_of_zlib(benchmark):
    data = _data()
    baseline = _best_of(lambda: zlib.decompress(zlib.compress(data, 1)))
    benchmark(lambda: rle_decode(rle_encode(data)))
    ours = _best_of(lambda: rle_decode(rle_encode(data)))
    assert ours / baseline < MAX_RATIO, f"RLE takes {ours / baseline:.1f} times zlib level 1 (limit {MAX_RATIO})"
