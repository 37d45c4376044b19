"""Archive offload, a task of its own: a full active data set is queued, copied to its archive
data sets by a background copy job, a copy of the BSDS put beside each, and the BSDS records
it (CSQJ003I). A mixin of :class:`~mqlog.zos.space.ZosLogSpace`: the offload works across its
parts – it reads the active ring's copies, records archives in the archive inventory and
saves the BSDS.

The offload is a task of its own, not part of any log write (IBM MQ for z/OS, "When the
archive log is written", https://www.ibm.com/docs/en/ibm-mq/9.2?topic=written-when-mq-zos-archive-log-is:
"If all the active logs become full, IBM MQ stops processing, until offloading occurs";
"Archiving logs with the ARCHIVE LOG command": "runs an asynchronous offload process, and
updates the BSDS"). The space hands each offload to the core's writer as a background copy
job (:mod:`mqlog.core.log.background`) once the data set's last CI is on disk: the job reads
the data set from the device, writes each archive copy once ("each log control interval
retrieved from the active log is written to two archive log data sets", "Planning your log
archive storage"), puts the BSDS copy beside it, records it in the BSDS and frees the data set
for reuse at that moment. Its I/O competes with the log's for the device. The writer waits
for an offload only when the next data set in the ring is still being offloaded (CSQJ111A,
said once until an offload finishes), and resumes the moment it finishes. At most MAXCNOFF
offloads run at once ("Using CSQ6LOGP": "Maximum number of CSQJOFF7 offload tasks that can
be run in parallel", default 31); the rest wait their turn, oldest first. A request to stop
the queue manager "does not take effect until offload processing has finished" (the core's
clean shutdown waits for the copies). An offload a crash cut short is redone at restart,
under the same archive number, without restart waiting for it.

How an offload reads the active data set IBM does not publish. The model reads it in
requests of INBUFF ("Size of input buffer storage for active and archive log data sets",
default 60 KB) in whole CIs: 15 CIs a request by default – an assumption, stated here.
"""

from __future__ import annotations

from typing import Sequence

from mqlog.core.format.pages import PAGE_SIZE, PageRun, check_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.background import CopyJob
from mqlog.zos.datasets import ActiveDataSet, ArchiveEntry, archive_name, data_set_name


class Offloads:
    """The offloads of a :class:`~mqlog.zos.space.ZosLogSpace`."""

    __slots__ = ()

    # -- offload: a task of its own ---------------------------------------------------------------

    def _queue_offload(self, ds: ActiveDataSet, entry: ArchiveEntry | None = None) -> None:
        """A full data set is to be archived: its archive number is taken now (the BSDS saved
        with the switch records it as being offloaded) and it waits for an offload task."""
        if entry is None:
            seq = self.next_archive
            self.next_archive += 1
            files = tuple(archive_name(prefix, seq) for prefix in self.prefixes)
            entry = ArchiveEntry(seq, ds.start, ds.start + self.ds_bytes - 1, files)
            self.archives.append(entry)
        ds.archive = -entry.seq  # offloading: reusable once complete
        self._offload_queue.append((ds, entry))

    def copy_jobs(self) -> Sequence[CopyJob]:
        """The offloads to start now: the oldest waiting, as many as MAXCNOFF lets run (the
        writer asks once the data set's last CI is on disk, and again as each one ends)."""
        jobs = []
        while self._offload_queue and self.offloads_running < self.max_offloads:
            ds, entry = self._offload_queue.pop(0)
            self.offloads_running += 1
            jobs.append(CopyJob(data_set_name(1, ds.number), self.ds_bytes, self.offload_read_cis * PAGE_SIZE,
                                entry.files, lambda ds=ds: self._offload_pages(ds),
                                lambda ds=ds, entry=entry: self._offload_done(ds, entry)))
        return jobs

    def _offload_pages(self, ds: ActiveDataSet) -> tuple[bytes, ...]:
        """The data set's CIs as the offload read them: copy 1's, or copy 2's where copy 1's
        is bad. A CI bad in both copies leaves a gap in the archive (CSQJ124E)."""
        pages = []
        for k in range(self.cis):
            raw, _, _ = self.ring.read_active(ds.start + k * PAGE_SIZE)
            pages.append(raw if len(raw) == PAGE_SIZE else bytes(PAGE_SIZE))
        bad = [ds.start + k * PAGE_SIZE for k, page in enumerate(pages)
               if ds.start + k * PAGE_SIZE < self.high_written and check_page(page, ds.start + k * PAGE_SIZE)[1]
               is not None and page.strip(b"\0")]
        if bad:
            # Neither copy holds a good version of these CIs: the archive has a gap (CSQJ124E).
            self.events.append(("CSQJ124E", {"start": bad[0], "end": bad[-1] + PAGE_SIZE - 1}))
        return tuple(pages)

    def _offload_done(self, ds: ActiveDataSet, entry: ArchiveEntry) -> None:
        """The archive copies are on disk: put a copy of the BSDS beside each, record them
        (CSQJ003I) and let the active data set be reused – now, not at the next write."""
        self.offloads_running -= 1
        self._out_of_space_said = False
        # The BSDS copies go beside the archives before the BSDS says they are complete:
        # a crash in between redoes the offload (and its copy) under the same number.
        for name in entry.files:
            bsds_copy = name.rsplit(".", 1)[0] + ".B" + name.rsplit(".", 1)[1][1:]
            self.storage.replace(bsds_copy, self._bsds_bytes())
        entry.complete = True
        if ds.archive == -entry.seq:
            ds.archive = entry.seq
        self.archive_offloads += 1
        for copy, name in enumerate(entry.files, 1):
            self.events.append(("CSQJ003I", {"dsname": name, "start": entry.start, "end": entry.end, "copy": copy}))
        for dropped in self.archives.drop_oldest(self.max_arch):
            self.events.append(("archive-dropped", {"dsname": dropped.files[0]}))
        self._save()

    def waits_for_copies(self, run: PageRun) -> bool:
        """Whether ``run`` reaches a data set that is full and not yet archived, whose
        offload is running or waiting for a task: logging stops until it ends (CSQJ111A,
        said once until an offload ends). False if it can be placed now, or if a data set it
        needs can never be freed by an offload (plan_write then refuses it)."""
        if not self._loaded or not self.offload or not self.active:
            return False
        cur = self.active[self.current]
        if cur.start == NO_ADDRESS:
            return False
        need = run.first_address + len(run.pages) * PAGE_SIZE
        edge = cur.start + self.ds_bytes
        step = 1
        while edge < need and step < self.data_sets:
            nxt = self.active[(self.current + step) % self.data_sets]
            if not self.ring.reusable(nxt, self.restart_rba):
                if nxt.archive >= 0:
                    return False
                if not self._out_of_space_said:
                    self._out_of_space_said = True
                    self.events.append(("CSQJ111A", {}))
                return True
            edge += self.ds_bytes
            step += 1
        return False
