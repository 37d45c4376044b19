"""Payload generation speed as a ratio against a same-process baseline (moved from tests/,
where a timed assertion gated on the machine). Baseline: ``random.Random.randbytes`` of the
same size – the cheapest seeded bytes Python makes. Every kind must stay a small multiple."""

from __future__ import annotations

import random
import time

from mqlog.core.payload import PAYLOAD_KINDS, make_payload

MAX_RATIO = 20.0
COUNT = 2000


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_a_2kib_payload_of_every_kind_is_a_small_multiple_of_randbytes(benchmark):
    rng = random.Random(0)
    for kind in PAYLOAD_KINDS:
        make_payload(kind, 2048, rng)  # build the pools outside the timing
    baseline = _best_of(lambda: [rng.randbytes(2048) for _ in range(COUNT)])
    benchmark(lambda: [make_payload("mixed", 2048, rng) for _ in range(COUNT)])
    for kind in PAYLOAD_KINDS:
        ours = _best_of(lambda: [make_payload(kind, 2048, rng) for _ in range(COUNT)])
        assert ours / baseline < MAX_RATIO, f"{kind}: {ours / baseline:.1f} times randbytes (limit {MAX_RATIO})"
