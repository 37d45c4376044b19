"""What restart checks of the z/OS active log against the BSDS before it reads it.

The BSDS names each active data set's RBA range, the current one, and (since issue 37) a
high-water mark: every CI below it held good log when the BSDS was last updated (at each
log switch, checkpoint and offload). Damage that leaves the data sets present and full-size –
both copies zeroed, a data set swapped or restored, the BSDS replaced by an older one (the
copy beside an archive) – would otherwise look like a clean end of the log. So:

* :func:`check_files` – each active data set's first CI holds the RBA the BSDS gives it
  (read as restart reads it: copy 2's where copy 1's is bad). MQ checks the same when it
  opens an active data set and refuses with CSQJ102E "LOG RBA CONTENT OF LOG DATA SET
  DSNAME=dsname, STARTRBA=sss, ENDRBA=ttt, DOES NOT AGREE WITH BSDS INFORMATION". (That
  wording is MQ's message as we know it; the search of IBM's documentation available here
  did not return the page, so it could not be confirmed word for word.) A data set given its
  range by the write in flight when the BSDS was last updated (at or above its high-water
  mark: the BSDS names it before the write that switched to it lands) may hold anything but
  a newer log there or an RBA the BSDS gives another data set (no earlier lap of it held
  one); a data set the BSDS has given no range must hold no log.
* :func:`scan_to` – past a bad CI, the reader reads to the end of the current data set for
  CIs of later writes (a hole of any length is found).
* the high-water mark itself is the reader's (``LogReader.written_to``).
"""

from __future__ import annotations

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import PAGE_SIZE, STALE, UNWRITTEN, check_page
from mqlog.core.format.records import NO_ADDRESS


def _csqj102e(space, name: str, start: int, why: str, address: int) -> LogCorruptionError:
    hexa = space.limits.hex
    end = f"{hexa(start + space.ds_bytes - 1)}" if start != NO_ADDRESS else "(none)"
    return LogCorruptionError(
        f"CSQJ102E LOG RBA CONTENT OF LOG DATA SET DSNAME={name}, STARTRBA="
        f"{hexa(start) if start != NO_ADDRESS else '(none)'}, ENDRBA={end}, DOES NOT AGREE WITH BSDS INFORMATION: "
        f"{why}", source=name, offset=0, address=hexa(address))


def check_files(space, start: int) -> None:
    """Refuse active data sets whose first CI disagrees with the BSDS (see the module's
    docstring). Data sets restart does not need (all before ``start``) are checked only for
    a good CI at another RBA – a data set swapped or restored, or a BSDS older than the log."""
    storage, hexa = space.storage, space.limits.hex
    current = space.active[space.current] if space.active else None
    mark = space.high_water_mark.known
    for ds in space.active:
        names = [space.data_set_name(copy, ds.number) for copy in range(1, space.copies + 1)]
        live = [n for n in names if n not in space.inactive_copies and storage.exists(n)
                and storage.size(n) >= PAGE_SIZE]
        if ds.start == NO_ADDRESS or ds.start + space.ds_bytes <= start:
            for name in live:
                header, problem = check_page(storage.read(name, 0, PAGE_SIZE), ds.start)
                if header is not None and (ds.start == NO_ADDRESS or problem is STALE):
                    raise _csqj102e(space, name, ds.start, f"its first CI holds RBA {hexa(header.address)}"
                                    + (", but the BSDS has given it no range (a BSDS older than the log)"
                                       if ds.start == NO_ADDRESS else ""), header.address)
            continue
        raw, name, _ = space.scan_page(ds.start)  # (no copy left to read: refused here, CSQJ103E)
        header, problem = check_page(raw, ds.start)
        if problem is None:
            continue
        if (ds.start >= mark if mark is not None else ds is current) and not (
                problem is STALE and header is not None and (
                    header.address > ds.start or _held_by_another(space, ds, header.address))):
            # Given its range by a write that had not finished when the BSDS was updated (a
            # switch names the data set before the write that switched lands; a long write
            # may switch twice): its first CI may be unwritten, an earlier lap's, or torn by
            # the crash – where the log ends the reader decides. Only a newer log is damage,
            # or an RBA the BSDS gives another data set: no earlier lap of this one held it.
            continue
        if problem is STALE and header is not None:
            why = f"its first CI holds RBA {hexa(header.address)} (swapped, copied or restored, or a BSDS older " \
                  f"than the log)"
        elif problem is UNWRITTEN:
            why = "its first CI was never written (the data set was zeroed or formatted afresh)"
        else:
            why = f"its first CI is damaged ({problem})"
        raise _csqj102e(space, name or names[0], ds.start, why, ds.start)


def _held_by_another(space, ds, rba: int) -> bool:
    """Whether the BSDS gives ``rba`` to an active data set other than ``ds``: an RBA range is
    given to one data set once (a data set reused takes a new range), so no earlier lap of
    ``ds`` held it, and a first CI that does is the other data set's, copied over this one."""
    return any(o is not ds and o.start != NO_ADDRESS and o.start <= rba < o.start + space.ds_bytes
               for o in space.active)


def scan_to(space, address: int) -> int | None:
    """The end of the current data set, or of the one holding ``address`` if that is later –
    of the part of it stored: a copy cut short beyond the head lost nothing (writes extend
    it), and a read past its end would be refused as log gone."""
    ends = []
    for i, d in enumerate(space.active):
        if d.start != NO_ADDRESS and (i == space.current or d.start <= address < d.start + space.ds_bytes):
            sizes = [space.storage.size(n) for n in (space.data_set_name(c, d.number)
                                                     for c in range(1, space.copies + 1))
                     if n not in space.inactive_copies and space.storage.exists(n)]
            stored = min(space.ds_bytes, max(sizes, default=0))
            ends.append(d.start + stored - stored % PAGE_SIZE)
    return max(ends) if ends else None
