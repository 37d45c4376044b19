"""What restart checks of the distributed log against its control file before it reads it.

The control file ``amqhlctl.lfh`` names every extent in use, the log address each one starts
at, the current one, and (since issue 37) a high-water mark: every page below it held good
log when the control file was last saved (at each extent switch and checkpoint). Damage that
leaves the files present and full-size – an extent zeroed or freshly formatted, two extents
swapped or one copied over another, an older copy of an extent or of the control file
restored – would otherwise look like a clean end of the log, and restart would drop the
committed work after it in silence. So:

* :func:`check_files` – each extent's first page holds the address the control file gives
  it, if it was on disk when the control file was saved (below its high-water mark). One
  given its range by the write in flight then (the control file names it before the write
  that switched to it lands; a long write may switch twice) may hold anything but a newer
  log or a page of a range the control file gives another extent (no earlier lap of it held
  one: the extent before it copied over it is refused, on SingleWrite too): its first page
  may be unwritten, an earlier lap's or torn. An extent the control file has not given an
  address yet must hold no log.
  Anything else is refused as MQ refuses a log extent it cannot use: "AMQ6762E: IBM MQ log
  extent S000nnnn.LOG corrupt." (the text MQ writes to its error log, as quoted in IBM APAR
  IT42690), naming the file, offset and the log address.
* :func:`scan_to` – past a bad page, the reader reads to the end of the current extent for
  pages of later writes (a hole of any length is found), not a fixed few pages.
* the control file's high-water mark (``DistributedLogSpace.high_water``): the reader refuses
  a log whose records end below it (``LogReader.written_to``). (TripleWrite's spare file,
  written at nearly every force, would know the end better, but a slot may hold a page of a
  log a restart has since cut short – the middle of a record that was never completed – so
  it is not a mark; the reader's scan past a bad page does find its page when it is the
  newest write.)
"""

from __future__ import annotations

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import PAGE_SIZE, STALE, UNWRITTEN, check_page
from mqlog.core.format.records import NO_ADDRESS


def _corrupt(space, name: str, why: str, address: int, fmt) -> LogCorruptionError:
    return LogCorruptionError(f"AMQ6762E: IBM MQ log extent {name} corrupt: {why} (the control file "
                              f"{space.control_file} lists it as holding log from LSN {fmt(address)})",
                              source=name, offset=0, address=fmt(address))


def check_files(space, start: int, fmt) -> None:
    """Refuse extents whose first page disagrees with the control file (see the module's
    docstring). Extents restart does not need (all before ``start``) are checked only for a
    good page at another address – a file swapped or restored – if they are there at all
    (deleting an inactive extent is the operator's right)."""
    storage = space.storage
    mark = space.high_water_mark.known
    for ext in sorted(space.extents.values(), key=lambda e: e.number):
        name = space.extent_name(ext.number)
        if ext.reusable:
            continue  # (its log is no longer needed; it is re-created when reused)
        present = storage.exists(name) and storage.size(name) >= PAGE_SIZE
        if ext.start == NO_ADDRESS:
            if present:
                header, _ = check_page(storage.read(name, 0, PAGE_SIZE), NO_ADDRESS)
                if header is not None:
                    raise LogCorruptionError(
                        f"AMQ6762E: IBM MQ log extent {name} corrupt: it holds log from LSN {fmt(header.address)}, "
                        f"but the control file {space.control_file} has given it no log yet (an older control "
                        f"file restored, or an extent copied over it)", source=name, offset=0,
                        address=fmt(header.address))
            continue
        if ext.start + space.extent_bytes <= start:
            if present:
                header, problem = check_page(storage.read(name, 0, PAGE_SIZE), ext.start)
                if problem is STALE and header is not None:
                    raise _corrupt(space, name, f"its first page holds LSN {fmt(header.address)} (swapped, copied "
                                                f"or restored from an older copy)", ext.start, fmt)
            continue
        raw, _, _ = space.scan_page(ext.start)  # (a missing or short extent is refused here)
        header, problem = check_page(raw, ext.start)
        if problem is None:
            continue
        if (ext.start >= mark if mark is not None else ext.number == space.current) and not (
                problem is STALE and header is not None and (
                    header.address > ext.start or _held_by_another(space, ext, header.address))):
            # Given its range by a write that had not finished when the control file was
            # saved (a switch names the extent before the write that switched lands): its
            # first page may be unwritten, an earlier lap's, or torn by the crash – where the
            # log ends the reader decides. Only a newer log in it is damage, or a page of a
            # range the control file gives another extent: no earlier lap of this one held it.
            continue
        if problem is STALE and header is not None:
            why = f"its first page holds LSN {fmt(header.address)} (swapped, copied or restored from an older copy)"
        elif problem is UNWRITTEN:
            why = "its first page was never written (the extent was zeroed or formatted afresh)"
        else:
            why = f"its first page is damaged ({problem})"
        raise _corrupt(space, name, why, ext.start, fmt)


def _held_by_another(space, ext, address: int) -> bool:
    """Whether the control file gives ``address`` to an extent other than ``ext``. A log
    address is given to one extent once (addresses only grow; a circular extent reused, or a
    linear one recycled under a new number, takes a new range and gives up its old one), so
    an earlier lap of ``ext`` – what its first page holds after a crash before the write that
    switched to it landed – never holds an address another extent holds now: a first page
    that does is that extent's, copied or restored over this one."""
    return any(o.number != ext.number and o.start != NO_ADDRESS and o.start <= address < o.start + space.extent_bytes
               for o in space.extents.values())


def scan_to(space, address: int) -> int | None:
    """The end of the current extent, or of the extent holding ``address`` if that is later –
    of the part of it stored (a read past a short file's end would be refused as log gone)."""
    ends = []
    for e in space.extents.values():
        if e.start != NO_ADDRESS and (e.number == space.current or e.start <= address < e.start + space.extent_bytes):
            name = space.extent_name(e.number)
            stored = min(space.extent_bytes, space.storage.size(name)) if space.storage.exists(name) else 0
            ends.append(e.start + stored - stored % PAGE_SIZE)
    return max(ends) if ends else None
