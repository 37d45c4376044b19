"""A log space's background copy work, run beside the writer: the jobs and their runner.

Some spaces copy log they already hold to other files while logging goes on – z/OS's
archive offload copies a full active data set to its archive data sets. That copy is not
part of any write: a commit must not wait for it, but it reads and writes the same device
the log does, and the space may not reuse what it copies until it has finished. The core
runs such work without knowing what it is for:

* the space describes each piece as a :class:`CopyJob` – how many bytes to read from its
  files and in what requests, the files to write them to, a function that supplies the
  bytes once the reads are charged (``collect``) and one to call once they are on disk
  (``finish``: the space records the copy and may reuse what it copied);
* the space hands jobs out when asked (``LogSpace.copy_jobs``: each one once; a space that
  bounds how many run at once hands out only that many and the rest when one finishes),
  and says whether a run of pages can be placed only once a copy has finished
  (``LogSpace.waits_for_copies``);
* :class:`BackgroundCopies`, the writer's, asks for jobs at the start and end of each write
  cycle and when a job finishes, runs each as a SimPy process of its own (its reads, then
  one write of the whole copy to each target, the targets at once), and fires
  :meth:`BackgroundCopies.progress` whenever one finishes, so that whoever waits for the
  space – the writer at a run it cannot place, the queue manager's callers waiting for log
  space – resumes at that moment. Nothing polls.

A job's I/O is issued concurrently with the log's own: the device decides how they share it.
A storage error in a job makes the log unusable, as a failed log write does (the runner
calls the writer's failure handler); a crash simply stops it, and the space redoes the copy
at restart from what its control data says.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Generator, Sequence

import attrs
import simpy

from mqlog.core.errors import StorageError
from mqlog.core.format.pages import PAGE_SIZE


#: finished copies remembered in :attr:`BackgroundCopies.history`
HISTORY = 256


@attrs.frozen
class CopyJob:
    """One background copy: read ``read_bytes`` of the log's files in requests of at most
    ``request_bytes``, then write the pages ``collect()`` returns to each of ``targets``
    (from offset 0, created if missing, synced), then call ``finish()``."""

    #: what is copied, for messages and errors (e.g. the file read)
    source: str
    read_bytes: int
    request_bytes: int
    targets: tuple[str, ...]
    #: the pages to write, read from the space's files once the reads are charged (so they
    #: are what the files hold when the copy reads them)
    collect: Callable[[], Sequence[bytes]]
    #: the copy is on disk in every target: the space records it and may reuse the source
    finish: Callable[[], None]

    def __attrs_post_init__(self):
        if self.request_bytes <= 0:
            raise ValueError(f"a copy of {self.source} must read in requests of at least one byte")


class BackgroundCopies:
    """Runs a space's :class:`CopyJob`\\ s as processes beside the writer (see the module
    docstring). ``on_failure(exc)`` is told of a storage error in a job (the writer's: the
    log is then unusable)."""

    def __init__(self, env: simpy.Environment, space, device, stats,
                 on_failure: Callable[[StorageError], None]):
        self.env = env
        self.space = space
        self.device = device
        self.stats = stats
        self.on_failure = on_failure
        self.running = 0
        #: (source, started, finished) of the last :data:`HISTORY` copies finished, virtual µs:
        #: what a report or a test sets beside the log's own events
        self.history: deque[tuple[str, float, float]] = deque(maxlen=HISTORY)
        self._progress: simpy.Event | None = None
        self._idle: simpy.Event | None = None

    def start_pending(self) -> None:
        """Start every job the space hands out now."""
        for job in self.space.copy_jobs():
            self.running += 1
            self.env.process(self._run(job))

    def progress(self) -> simpy.Event:
        """An event that fires when the next job finishes (or fails)."""
        if self._progress is None:
            self._progress = self.env.event()
        return self._progress

    def idle(self) -> simpy.Event:
        """An event that fires once no job is running (at once if none is): a clean
        shutdown waits for it, so no copy is left half done."""
        if not self.running:
            event = self.env.event()
            event.succeed()
            return event
        if self._idle is None:
            self._idle = self.env.event()
        return self._idle

    def _run(self, job: CopyJob) -> Generator:
        env, device, stats = self.env, self.device, self.stats
        started = env.now
        try:
            left = job.read_bytes
            while left > 0:
                n = min(job.request_bytes, left)
                yield from device.read(n)
                stats.offload_reads += 1
                stats.offload_read_bytes += n
                left -= n
            pages = tuple(job.collect())
            # Each copy is written once, whole: no formatting pass first (a new file is
            # allocated to the copy's size). The copies go to the device at once.
            writes = [env.process(self._write(name, pages)) for name in job.targets]
            if writes:
                yield env.all_of(writes)
            job.finish()
            stats.offloads += 1
            stats.offload_us += env.now - started
            self.history.append((job.source, started, env.now))
        except StorageError as exc:
            self.running -= 1
            self.on_failure(exc)
            self._fire()
            return
        except BaseException:
            self.running -= 1  # a crash: nothing more happens on this storage
            raise
        self.running -= 1
        # A space that bounds how many copies run at once hands out the next now (before
        # anyone waiting for the copies to be idle is told they are).
        self.start_pending()
        self._fire()

    def _write(self, name: str, pages: Sequence[bytes]) -> Generator:
        env, storage = self.env, self.space.storage
        nbytes = len(pages) * PAGE_SIZE
        started = env.now
        storage.begin_write(name, 0, pages)  # on its way until written (beside the log's): a power loss tears it
        yield from self.device.write(nbytes)
        if not storage.exists(name):
            storage.create(name, nbytes)
        storage.write(name, 0, pages)
        storage.sync(name)
        self.stats.record_write(name, nbytes, len(pages), env.now - started, env.now, "archive")

    def _fire(self) -> None:
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.succeed()
        if not self.running and self._idle is not None:
            idle, self._idle = self._idle, None
            idle.succeed()
