"""The scheduled loop: the yardstick suite 9 counts the whole model's opcodes against.

:func:`scheduled_loop` runs suite 4's records through a minimal discrete-event scheduler, as the
model runs its work: each record is an event object on a time-ordered heap, popped in turn,
resuming the generator of the task that owns it, which packs and CRCs the record into one
reused 4 KiB page and keeps it in a dict of records not yet on a "written" page. It is pure
standard library, frozen, so a change to the model (or to SimPy, attrs or sortedcontainers)
never moves it, and its opcodes a record (180 on Python 3.11) move only with the interpreter –
which is why suite 9 divides by them.

**Tried as suite 4's timed baseline and dropped (2026-11-30).** The raw record loop that suite 4
times against appends 28 MB to one growing ``bytearray``: its time depends on the heap the
process has (right after a model round freed its objects the same loop took 268 ms, then 101,
69, 57), and its rounds spread 2–4× in one process. The scheduled loop's rounds spread only
1.04–1.19×, and in three processes of a plain script the median of its interleaved rounds'
ratios to the model stayed within ±2%. But in the gate's own processes it moved far more
(0.058–0.068, then 0.083–0.119 over three runs after session 45's speed-up, where the raw
loop's best-round ratio read 0.027–0.028): a tight loop's speed depends on where its objects
land in memory (the same loop took 100–119 ms in fresh processes, garbage collection ruled
out), and the raw loop's best round – the heap's luck filtered out – follows the model's best
round more closely. What no timed baseline gives, a count does: suite 9.
"""

from __future__ import annotations

import heapq
import zlib

from mqlog.core.format.records import HEADER
from mqlog.core.format.records.header import _CRC

#: records a task takes in turn, and the tasks that share them (putget-pairs' 10 pairs: 20
#: applications)
TASKS = 20
PAGE = 4096


class _Event:
    """One scheduled record: its time, its order, its task and its frame."""

    __slots__ = ("at", "order", "task", "frame")

    def __init__(self, at: float, order: int, task: int, frame: tuple) -> None:
        self.at = at
        self.order = order
        self.task = task
        self.frame = frame


def _task(page: bytearray, pending: dict, counts: list):
    """One task: packs each record it is resumed with into ``page`` (cut when full: the
    records on it leave ``pending``), CRC and all; yields the bytes it has written."""
    pack, crc, pack_crc_into = HEADER.pack, zlib.crc32, _CRC.pack_into
    head = HEADER.size
    written = 0
    while True:
        event = yield written
        rtype, rm, flags, length, uow, prev, stamp, body = event.frame
        prefix = pack(rtype, rm, flags, length, uow, prev, stamp)
        size = head + 4 + len(body)
        pos = counts[0]
        if pos + size > PAGE:  # the page is cut: its records are written
            pending.clear()
            pos = 0
        end = pos + min(size, PAGE)
        page[pos:pos + head] = prefix
        if pos + head + 4 <= PAGE:
            pack_crc_into(page, pos + head, crc(body, crc(prefix)))
        counts[0] = end
        pending[event.order] = event
        written += size


def scheduled_loop(frames: list[tuple], tasks: int = TASKS) -> int:
    """Every frame of ``frames`` (suite 1's ``frames_of`` tuples) as a timed event through a
    heap to its task's generator; the records run."""
    page = bytearray(PAGE)
    pending: dict = {}
    counts = [0]
    runners = [_task(page, pending, counts) for _ in range(tasks)]
    for runner in runners:
        next(runner)
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    ran = 0
    for order, frame in enumerate(frames):
        # each task's next record is due a little after its last: the heap holds one a task
        event = _Event(order // tasks + (order % tasks) / tasks, order, order % tasks, frame)
        push(heap, (event.at, order, event))
        if len(heap) >= tasks:
            _, _, due = pop(heap)
            runners[due.task].send(due)
            ran += 1
    while heap:
        _, _, due = pop(heap)
        runners[due.task].send(due)
        ran += 1
    return ran

