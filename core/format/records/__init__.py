"""Typed log records: frozen value objects with ``to_bytes()`` / ``from_bytes()`` side by side.

Every record is a 36-byte header followed by a type-specific body; ``docs/FORMAT.md`` §3 is
the byte-level specification. The package's modules: the header, its codes and the field
helpers record bodies share (:mod:`.header`); the public record base, the table of record
classes and the decoder (:mod:`.base`); the unit-of-work and message records (:mod:`.units`);
the checkpoint and object-change records (:mod:`.checkpoints`). Importing the package
registers every core record class, so :func:`decode_record` knows them all; the names below
are the format's public ones, importable from here.
"""

from mqlog.core.format.records.header import (APPL_NAME_LENGTH, DESCRIPTOR_LENGTH, FLAG_BACKOUT_ONLY, FLAG_CODEC_MASK,
                                              FLAG_RELOGGED, HEADER, HEADER_SIZE, MAX_RECORD_SIZE, MSG_ID_LENGTH,
                                              NO_ADDRESS, PLATFORM_RMS, PLATFORM_TYPES, PUT_SEGMENT_BYTES,
                                              QUEUE_NAME_LENGTH, XID_MAX_LENGTH, ClrAction, Codec, ObjectAction,
                                              ObjectType, RecordType, ResourceManager, UowState, name_field, pad_name,
                                              unpad_name)
from mqlog.core.format.records.base import (MALFORMED, BackoutOp, BackoutRound, ImagePiece, LogRecord, OpaqueRecord,
                                            code_names, decode_record, peek_length, record_length, record_table,
                                            record_types, register)
from mqlog.core.format.records.units import (Backout, Begin, Clr, Commit, Get, Prepare, Put, PutSegment, UndoneOp,
                                             split_message)
from mqlog.core.format.records.checkpoints import CheckpointBegin, CheckpointEnd, ObjectChange, QueueEntry, UowEntry

__all__ = [
    "APPL_NAME_LENGTH", "DESCRIPTOR_LENGTH", "FLAG_BACKOUT_ONLY", "FLAG_CODEC_MASK", "FLAG_RELOGGED", "HEADER",
    "HEADER_SIZE", "MAX_RECORD_SIZE", "MSG_ID_LENGTH", "NO_ADDRESS", "PLATFORM_RMS", "PLATFORM_TYPES",
    "PUT_SEGMENT_BYTES", "QUEUE_NAME_LENGTH", "XID_MAX_LENGTH", "ClrAction", "Codec", "ObjectAction", "ObjectType",
    "RecordType", "ResourceManager", "UowState", "name_field", "pad_name", "unpad_name",
    "MALFORMED", "BackoutOp", "BackoutRound", "ImagePiece", "LogRecord", "OpaqueRecord", "code_names",
    "decode_record", "peek_length", "record_length", "record_table", "record_types", "register",
    "Backout", "Begin", "Clr", "Commit", "Get", "Prepare", "Put", "PutSegment", "UndoneOp", "split_message",
    "CheckpointBegin", "CheckpointEnd", "ObjectChange", "QueueEntry", "UowEntry",
]
