"""What the distributed log space shows of itself: the extents in use, DISPLAY QMSTATUS's log
fields and the resource monitor's DISK/Log figures, computed from one account of the log in
use (:meth:`SpaceStatus.log_use`), so that they agree. A mixin of
:class:`~mqlog.distributed.space.DistributedLogSpace` (split from it at this seam to keep
the module small).
"""

from __future__ import annotations

from mqlog.core.format.records import NO_ADDRESS

#: LogManagement's values
MANUAL, AUTOMATIC, ARCHIVE = "Manual", "Automatic", "Archive"


class SpaceStatus:
    """The diagnostics of a :class:`~mqlog.distributed.space.DistributedLogSpace`."""

    __slots__ = ()

    # -- what the diagnostics show ------------------------------------------------------------

    def active_extents(self) -> list[int]:
        """Extents holding data restart may need, oldest first."""
        held = [(e.start, e.number) for e in self.extents.values()
                if e.start != NO_ADDRESS and not e.inactive and self._needed(e) or e.number == self.current]
        return [n for _, n in sorted(held)]

    def metrics(self) -> dict:
        return {"extents": len(self.extents), "ring": list(self.ring), "secondaries_in_use":
                sum(1 for n in self.ring if not self.extents[n].primary),
                "current_extent": self.extent_name(self.current) if self.current is not None else None}

    def resource_monitor(self, head: int, writer_stats: dict) -> dict:
        """The resource monitor's DISK/Log class as amqsrua shows it: the sizes in bytes as
        counted (:meth:`log_use`), not from DISPLAY QMSTATUS's two-decimal MB, and the
        percentages DISPLAY QMSTATUS shows for the same head."""
        use = self.log_use(head)
        return {
            "log_bytes_in_use": use["rec_bytes"],
            "log_bytes_max": self.capacity_bytes,
            "log_physical_bytes_written": writer_stats.get("physical_bytes", 0),
            "log_logical_bytes_written": writer_stats.get("logical_bytes", 0),
            "log_write_latency_us": writer_stats.get("write_time_short_us", 0.0),
            "log_write_size_bytes": writer_stats.get("write_size_short_bytes", 0.0),
            "log_current_primary_space_in_use_percent": use["LOGINUSE"],
            "log_workload_primary_space_utilization_percent": use["LOGUTIL"],
            "log_bytes_required_for_media_recovery": use["media_bytes"],
            "log_bytes_in_reusable_extents": use["reusable_bytes"],
            "log_slowest_write_since_restart_us": writer_stats.get("write_time_max_us", 0.0),
            "log_slowest_write_at_us": writer_stats.get("write_time_max_at_us", 0.0),
        }

    def log_use(self, head: int) -> dict:
        """What the log holds with its head at ``head``, counted in bytes: the one computation
        behind both DISPLAY QMSTATUS (:meth:`status`, which shows the sizes in MB) and the
        resource monitor's figures (:meth:`resource_monitor`, in bytes), so that the two agree
        for the same head. ``holder``/``media_holder``: the extents restart and media recovery
        need from; ``waiting``: (start, number) of extents waiting for SET LOG ARCHIVED."""
        holder = self._holder(self.tail)
        media_holder = self._holder(self.media) if self.linear and self.media != NO_ADDRESS else None
        if self.linear and media_holder is None:
            media_holder = holder  # no queue needs older log than restart does
        elif media_holder is not None and holder is not None and holder.start < media_holder.start:
            media_holder = holder
        rec_start = holder.start if holder is not None else self.tail
        rec_bytes = max(0, head - rec_start)
        primary_bytes = self.primary * self.extent_bytes
        waiting = sorted((e.start, e.number) for e in self.extents.values()
                         if self.linear and self.management == ARCHIVE and e.start != NO_ADDRESS
                         and not e.archived and not e.reusable and e.number != self.current)
        return {
            "holder": holder,
            "media_holder": media_holder,
            "waiting": waiting,
            "rec_bytes": rec_bytes,
            "media_bytes": max(0, head - media_holder.start) if media_holder is not None else 0,
            "reusable_bytes": sum(self.extent_bytes for e in self.extents.values() if e.reusable),
            "LOGUTIL": round(100.0 * rec_bytes / primary_bytes, 1),
            "LOGINUSE": round(100.0 * min(rec_bytes, primary_bytes) / primary_bytes, 1),
        }

    def status(self, head: int) -> dict:
        """DISPLAY QMSTATUS's log fields, with the log's head at ``head``.

        Sizes are in MB (10^6 bytes, as MQ reports them); LOGUTIL and LOGINUSE are
        percentages. MEDIALOG is the extent holding the oldest media recovery record of
        any queue (its latest image, or its creation); ARCHLOG the oldest extent still
        waiting for SET LOG ARCHIVED (LogManagement=Archive)."""
        use = self.log_use(head)
        holder, media_holder, waiting = use["holder"], use["media_holder"], use["waiting"]
        mb = lambda n: round(n / 1e6, 2)  # noqa: E731
        return {
            "CURRLOG": self.extent_name(self.current) if self.current is not None else "",
            "RECLOG": self.extent_name(holder.number) if holder is not None else "",
            "MEDIALOG": self.extent_name(media_holder.number) if media_holder is not None else "",
            "ARCHLOG": self.extent_name(waiting[0][1]) if waiting else "",
            "LOGUTIL": use["LOGUTIL"],
            "LOGINUSE": use["LOGINUSE"],
            "RECSZ": mb(use["rec_bytes"]),
            "MEDIASZ": mb(use["media_bytes"]),
            "REUSESZ": mb(use["reusable_bytes"]),
            "ARCHSZ": mb(len(waiting) * self.extent_bytes),
            "LOGPRIM": self.primary,
            "LOGSEC": self.secondary,
            "LOGEXTSZ": self.file_pages,
            "LOGTYPE": "LINEAR" if self.linear else "CIRCULAR",
        }
