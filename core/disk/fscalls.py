"""What each file-system call costs on a device profile's file system (:class:`FileSystemCalls`).

A device profile used to charge one ``file_op_us`` – its write latency – for every file-system
call. But what a call costs depends on the call and on the file system, not only on the device:

- on a **local file system over a block device** (ext4 or XFS on an SSD, a SAN LUN, a DASD
  volume) an open, a stat, a lock, a buffered write or a read the page cache holds is served
  by the kernel from memory, in microseconds; only what must be made durable reaches the
  device: fsync (the data and one journal commit), and creating, renaming or removing a file
  (a journal commit MQ waits for: "IBM MQ for AIX or Linux platforms use the O_SYNC open
  option and the fsync() system call to explicitly force writes to recoverable media",
  IBM MQ documentation, "Requirements for shared file systems on Multiplatforms");
- on **NFS** the client must ask the server for much of it: close-to-open consistency makes
  an open revalidate the file's attributes (GETATTR, or OPEN on NFSv4) and a close flush the
  file's dirty data and COMMIT it (nfs(5), "Close-to-open cache consistency"); a stat of a
  file whose attributes changed is a GETATTR; a file lock is a LOCK operation on the server
  (NFSv4, RFC 7530 section 9, or the NLM protocol on v3) – all one network round trip each;
  create, rename and remove are synchronous RPCs the server makes durable before replying
  (RFC 1813 section 3.3, and IBM's "export the file system using the sync option"); a read
  the client's page cache holds and a buffered write stay on the client.

Each call belongs to one of three **classes**, and the class sets its cost:

``local``       the kernel serves it from memory: ``local_call_us``; no device slot is held
``round-trip``  one request to the server and its answer, nothing made durable:
                ``round_trip_us``; it holds one of the device's slots (an RPC slot)
``device``      it is made durable on the device: one small synchronous write,
                ``write_latency_us``; it holds a slot

A profile's table (``fs_calls`` in ``devices.toml``) says the class of each call; left out,
a call takes its class on a local file system (:data:`LOCAL_FS`), so a profile that says
nothing is a local file system, and one with ``base =`` inherits its base's table, a call at
a time. The calls the model makes, and where: see :data:`CALLS`.
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from mqlog.core.errors import ParameterError

__all__ = ["CALLS", "CLASSES", "LOCAL_FS", "FileSystemCalls", "as_calls"]

#: the file-system calls the model charges, with where it makes them
CALLS: dict[str, str] = {
    "open": "open an existing file (a queue file loaded at restart or on first use; legacy replay: the queue "
            "file for each record it redoes)",
    "close": "close a file (legacy replay: the queue file after each record)",
    "stat": "read a file's attributes (the log reader checking the extent before each read request)",
    "lock": "take or release a file lock",
    "read": "a read the page cache serves (a miss's device reads are charged apart, by the page cache)",
    "write": "a buffered write (a queue file's change; legacy replay: each record's, a spill's)",
    "fsync": "force a file's data and metadata to the device",
    "create": "create a file (a queue defined, or re-created by replay)",
    "rename": "replace a file by renaming a new one over it (media recovery's re-created queue file)",
    "unlink": "remove a file (a queue deleted)",
}
#: the cost classes a call may have
CLASSES: tuple[str, ...] = ("local", "round-trip", "device")
#: a local journalling file system (ext4, XFS) over a block device: only what is made durable
#: reaches the device
LOCAL_FS: dict[str, str] = {"open": "local", "close": "local", "stat": "local", "lock": "local", "read": "local",
                            "write": "local", "fsync": "device", "create": "device", "rename": "device",
                            "unlink": "device"}


def _check_class(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value not in CLASSES:
        raise ParameterError(f"device.fs_calls.{attribute.name}", value, f"one of {', '.join(CLASSES)}")


def _call(name: str) -> Any:
    return attrs.field(default=LOCAL_FS[name], validator=_check_class)


@attrs.frozen
class FileSystemCalls:
    """The cost class of each file-system call on one profile's file system (see the module)."""

    open: str = _call("open")
    close: str = _call("close")
    stat: str = _call("stat")
    lock: str = _call("lock")
    read: str = _call("read")
    write: str = _call("write")
    fsync: str = _call("fsync")
    create: str = _call("create")
    rename: str = _call("rename")
    unlink: str = _call("unlink")

    def of(self, call: str) -> str:
        """The class of ``call``; a call the model does not know is a ParameterError."""
        try:
            return attrs.asdict(self)[call]
        except KeyError:
            raise ParameterError("call", call, f"a file-system call: {', '.join(CALLS)}") from None

    def by_class(self) -> dict[str, list[str]]:
        """The calls of each class, in :data:`CALLS` order."""
        out: dict[str, list[str]] = {c: [] for c in CLASSES}
        classes = attrs.asdict(self)
        for call in CALLS:
            out[classes[call]].append(call)
        return out


def as_calls(value: Any) -> Any:
    """A profile's ``fs_calls`` from TOML (a table of call = class) or an existing
    :class:`FileSystemCalls`; an unknown call is a ParameterError naming it."""
    if value is None:
        return FileSystemCalls()
    if isinstance(value, FileSystemCalls):
        return value
    if not isinstance(value, Mapping):
        raise ParameterError("device.fs_calls", value, "a table of call = class, e.g. { open = \"round-trip\" }")
    for key in value:
        if key not in CALLS:
            raise ParameterError(f"device.fs_calls.{key}", value[key],
                                 f"a known call ({', '.join(CALLS)}) set to one of {', '.join(CLASSES)}")
    return FileSystemCalls(**dict(value))
