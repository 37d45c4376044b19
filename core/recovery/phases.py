"""Restart's phases as data: what each does and what it is charged, beside the code that
charges it (:mod:`.restart`, :mod:`.state`, :mod:`.undo`).

Each :class:`Phase` names the ``restart_phases`` field a restart reports its time in, so a
phase here that restart no longer reports fails the tests (``tests/test_docs_listings.py``).
``mqlog restart --phases`` prints the table with the figures put in: a ``{host:FIELD}`` is
the host profiles' FIELD (``replay_record_us``: 5 µs on ``v93-xeon``, 10 on ``v91-xeon``),
``{replay_read}`` the size of one replay read (:data:`.state.REPLAY_CHUNK_PAGES` pages) and
``{queue_buffer}`` a queue's buffer (:class:`~mqlog.core.qm.config.QmConfig`), so that
docs/guide/05-restart-time.md's table of them follows the model's figures.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Phase:
    """One phase of restart: its name, the ``restart_phases`` field its time is reported in,
    what it does and what it costs (9.1.1; legacy where it differs)."""

    name: str
    reported: str
    does: str
    costs: str


PHASES: tuple[Phase, ...] = (
    Phase("replay", "replay_s",
          "reads every record from the last complete checkpoint to the end of the log, redoes it onto the queues "
          "and rebuilds the table of units of work",
          "**log reads**: a request per {replay_read} (legacy: per 4 KiB page), each a stat and a read call, "
          "through the page cache (cold after the kill), which reads ahead the device's window (128 KiB) on a "
          "sequential miss: one device read a window, read latency + window / bandwidth. **Queue-file work** of the "
          "records that change a queue (put, segment, get, CLR): each queue's changes wait in its queue buffer "
          "({queue_buffer}, `persistent_buffer_bytes`), as in normal running, and when the persistent data held "
          "there outgrows it the queue is spilled to its file (a write call and the file's writes); legacy also "
          "opens, writes and closes the queue file per such record (`core/recovery/state.py`, `restart.py`). A "
          "call costs by its class on the device's file system (`mqlog devices --calls`): a kernel call on a "
          "local one, a round trip or a server commit on NFS. **CPU**: {host:replay_record_us} a "
          "record and {host:copy_ns_per_byte} a byte read, on one core"),
    Phase("recovery: queue load", "recovery_queue_load_s",
          "loads the queues holding uncommitted messages of units still open; every other queue is left to its "
          "first MQPUT or MQGET after restart, which pays its load then",
          "per queue: an open call and its metadata reads; per message: {host:load_message_us}; all at "
          "once, each on a core and sharing the device's channel; legacy: one after another"),
    Phase("recovery: backout", "recovery_backout_s",
          "walks each open unit's backward chain through restart's page cache, then backs out units not prepared: "
          "a CLR per operation, a Backout record per unit (forced with the closing checkpoint)",
          "per record walked: `replay_record_us` to decode it, and a device read only for pages not in the cache "
          "(dropped at the start of restart; pages replay read are hits, an older page a cold read of the aligned "
          "{replay_read} block that holds it (legacy: its page), once; no read-ahead backwards); per uncommitted "
          "message: {host:log_record_us} to build its CLR and {host:reconcile_message_us} to put the message "
          "right, plus the CLR's log write; per unit: a Backout record, forced with the closing checkpoint"),
    Phase("media recovery", "media_recovery_s",
          "queues whose files would not load re-created from their media image (or creation record) and every "
          "later record that touches them, or left damaged; queues the log holds no media image of imaged",
          "the log read from the image to the end of the log, as replay reads it, and `replay_record_us` a record; "
          "a rename call and the re-created file's writes; each image's log write"),
    Phase("checkpoint", "checkpoint_s",
          "the end-of-restart checkpoint: force the log, write the queues' changes back, save the control data",
          "log and queue-file writes"),
)
