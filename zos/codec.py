"""Log compression of persistent message data: z/OS ``COMPLOG`` (IBM MQ for z/OS:
"Controlling archiving and logging"; docs/guide/02-compression.md).

:class:`CompLogCodec` is the z/OS platform's :class:`~mqlog.core.platform.DataCodec`. The
queue manager hands it a message's data before splitting it into put records and stores
what it returns with the codec's number in the record header (flag bits 0-3); restart hands
the stored bytes back with that number to expand them.

``COMPLOG`` as on z/OS, switchable while running (``SET LOG COMPLOG(...)``: assign
:attr:`CompLogCodec.complog`):

* ``NONE`` (the default): never compress.
* ``RLE``: run-length encoding (:mod:`mqlog.zos.rle`, codec 1).
* ``ANY``: the algorithm that compresses best. On real z/OS that is RLE; here zstd (codec 2)
  competes too when ``allow_zstd`` is set.
* ``ZSTD``: beyond IBM, always zstd (level :data:`ZSTD_LEVEL`, no dictionary, so the same
  data always gives the same bytes), for architects to see what a stronger codec would buy.

**Shared queues are never compressed.** IBM: COMPLOG compresses persistent messages put to
private queues only; "messages put to shared queues are not compressed" (docs/calibration.md, case Z2,
from IBM MQ for z/OS's log compression topic; COMPLOG itself is a CSQ6LOGP parameter,
https://www.ibm.com/support/knowledgecenter/SSFKSJ_8.0.0/com.ibm.mq.con.doc/q019310_.htm:
"COMPLOG | Controls whether log compression is enabled"). The queue manager says whether the
queue is kept outside it (``kept``: a shared queue's keeper is its CF structure,
:mod:`mqlog.zos.qsg`); such data is logged as it is whatever COMPLOG says, offered to no
compressor (so it costs no compression CPU and is no QJST request), and counted apart
(``mqlog_cmp_shared_skipped``).

**Compression costs CPU.** IBM: compression "increases the processor utilization" and is
worth it only when throughput is constrained by log I/O bandwidth. :meth:`CompLogCodec.compress`
says which algorithms scanned the data (``Compressed.tried``); the queue manager charges
the host's per-byte cost of each (``mqlog.core.host``: ``rle_compress_ns_per_byte``,
``zstd_compress_ns_per_byte``) on the putting call's path, through the host's cores.
Expanding is charged where restart expands (``*_expand_ns_per_byte``).

If the chosen result is not smaller than the data, the data is stored as it is
(``Codec.NONE``) and the attempt counted as a compression failure. Data shorter than
``min_length`` (:data:`MIN_COMPRESS_LENGTH`, 16 bytes) is not offered to a compressor: the
most RLE could save there is 14 bytes of a put record that costs about 750, so the CPU is
not worth it. Such data is counted apart (``mqlog_cmp_skipped``), not as a request.

:meth:`CompLogCodec.decode` expands any codec whatever the current setting, so records
written under ``RLE`` stay readable after ``SET LOG COMPLOG(NONE)`` – which is why a
platform should always carry a CompLogCodec, even one set to ``NONE``.

Statistics follow SMF 115 QJST (:meth:`CompLogCodec.stats`). The ``QJST*`` keys report RLE,
the only algorithm real z/OS has: every request made under ``RLE`` or ``ANY`` counts there
with what RLE did – ``QJSTCMPUNCMP`` the bytes offered, ``QJSTCMPCOMP`` the bytes RLE would
log (the input length where it failed) – even when ``ANY`` went on to pick zstd. So the
``QJST*`` figures are what z/OS would report for the same work. zstd's attempts are reported
the same way under ``mqlog_zstd_*``. ``mqlog_chosen_none`` / ``_rle`` / ``_zstd`` count, of the
data logged while ``COMPLOG`` was not ``NONE`` (short data and shared-queue data included),
how it was logged.
"""

from __future__ import annotations

from typing import NamedTuple

import attrs
import zstandard

from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.format.records import Codec
from mqlog.zos.rle import rle_decode, rle_encode

#: the COMPLOG values: IBM's three, then ours
COMPLOG_VALUES = ("NONE", "RLE", "ANY", "ZSTD")
#: zstd's own default level: most of its ratio on log-sized data at a small CPU cost
ZSTD_LEVEL = 3
#: data shorter than this is stored as it is without trying (see the module docstring)
MIN_COMPRESS_LENGTH = 16


class Compressed(NamedTuple):
    """What :meth:`CompLogCodec.compress` did with one message's data."""

    codec: Codec  # the codec of the stored bytes (Codec.NONE: stored as they were)
    stored: bytes  # the bytes to log
    tried: tuple[str, ...]  # the algorithms that scanned the whole data ("rle", "zstd"): its CPU


def _complog(value: object) -> str:
    """A COMPLOG value, upper-cased as MQSC would take it, or ParameterError."""
    if isinstance(value, str) and value.strip().upper() in COMPLOG_VALUES:
        return value.strip().upper()
    raise ParameterError("COMPLOG", value, ", ".join(COMPLOG_VALUES))


@attrs.define
class CodecCounters:
    """One algorithm's compression and decompression counts (a QJST slot)."""

    cmp_req: int = 0  # compression requests
    cmp_fail: int = 0  # ... whose result was not smaller, so the data was logged as it was
    cmp_uncmp: int = 0  # bytes offered
    cmp_comp: int = 0  # bytes this algorithm would log for them (the input length where it failed)
    dec_req: int = 0  # decompression requests
    dec_fail: int = 0  # ... that found bytes the algorithm cannot expand
    dec_uncmp: int = 0  # bytes expanded to
    dec_comp: int = 0  # bytes read

    def compressed(self, before: int, after: int) -> bool:
        """Count one request of ``before`` bytes giving ``after``; whether it paid off."""
        smaller = after < before
        self.cmp_req += 1
        self.cmp_uncmp += before
        self.cmp_comp += after if smaller else before
        self.cmp_fail += not smaller
        return smaller

    def fields(self, prefix: str, upper: bool) -> dict[str, int]:
        names = {f.name: getattr(self, f.name) for f in attrs.fields(CodecCounters)}
        return {prefix + (k.replace("_", "").upper() if upper else k.replace("_", "")): v for k, v in names.items()}


@attrs.define
class CompLogCodec:
    """Message-data compression under ``COMPLOG`` (NONE, RLE, ANY, or our ZSTD).

    ``allow_zstd`` lets ``ANY`` pick zstd when it beats RLE; without it ``ANY`` is RLE, as on
    z/OS. Assigning :attr:`complog` switches while running (validated).
    """

    complog: str = attrs.field(default="NONE", converter=_complog)
    allow_zstd: bool = attrs.field(default=False, kw_only=True)
    min_length: int = attrs.field(default=MIN_COMPRESS_LENGTH, kw_only=True)
    rle: CodecCounters = attrs.field(factory=CodecCounters, init=False)
    zstd: CodecCounters = attrs.field(factory=CodecCounters, init=False)
    skipped: int = attrs.field(default=0, init=False)
    shared_skipped: int = attrs.field(default=0, init=False)  # put to a shared queue: never compressed
    chosen: dict[Codec, int] = attrs.field(factory=lambda: dict.fromkeys(Codec, 0), init=False)
    _compressor: zstandard.ZstdCompressor = attrs.field(init=False, repr=False, factory=lambda: zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, write_checksum=False, write_content_size=True, write_dict_id=False))
    _decompressor: zstandard.ZstdDecompressor = attrs.field(
        init=False, repr=False, factory=zstandard.ZstdDecompressor)

    @min_length.validator
    def _check_min_length(self, attribute, value) -> None:
        if not isinstance(value, int) or value < 0:
            raise ParameterError("min_length", value, "a whole number of bytes, 0 or more")

    @property
    def active(self) -> bool:
        """Whether data is offered to compression at all (COMPLOG is not NONE)."""
        return self.complog != "NONE"

    def encode(self, data: bytes, *, kept: bool = False) -> tuple[Codec, bytes]:
        """The codec chosen and the bytes to log (``Codec.NONE`` and ``data`` itself when
        compression is off, the data is short or put to a shared queue (``kept``), or
        nothing came out smaller)."""
        result = self.compress(data, kept=kept)
        return result.codec, result.stored

    def compress(self, data: bytes, *, kept: bool = False) -> Compressed:
        """:meth:`encode`, saying also which algorithms scanned the data (what its CPU is)."""
        data = bytes(data)
        setting = self.complog
        if setting == "NONE":
            return Compressed(Codec.NONE, data, ())
        if kept:
            # IBM: messages put to shared queues are not compressed, whatever COMPLOG says.
            self.shared_skipped += 1
            self.chosen[Codec.NONE] += 1
            return Compressed(Codec.NONE, data, ())
        if len(data) < self.min_length:
            self.skipped += 1
            self.chosen[Codec.NONE] += 1
            return Compressed(Codec.NONE, data, ())
        best, stored, tried = Codec.NONE, data, ()
        if setting in ("RLE", "ANY"):
            rle = rle_encode(data)
            tried += ("rle",)
            if self.rle.compressed(len(data), len(rle)):
                best, stored = Codec.RLE, rle
        if setting == "ZSTD" or (setting == "ANY" and self.allow_zstd):
            packed = self._compressor.compress(data)
            tried += ("zstd",)
            if self.zstd.compressed(len(data), len(packed)) and len(packed) < len(stored):
                best, stored = Codec.ZSTD, packed
        self.chosen[best] += 1
        return Compressed(best, stored, tried)

    def decode(self, codec: Codec | int, stored: bytes, *, expected_length: int | None = None) -> bytes:
        """The data ``stored`` under ``codec`` came from, whatever the current setting.

        Raises LogFormatError for bytes the codec cannot expand, an unknown codec, or (with
        ``expected_length``, the put record's message length) data of another length."""
        stored = bytes(stored)
        try:
            codec = Codec(codec)
        except ValueError:
            raise LogFormatError(f"unknown message-data codec {codec!r}") from None
        if codec is Codec.NONE:
            return stored
        counters = self.rle if codec is Codec.RLE else self.zstd
        counters.dec_req += 1
        try:
            if codec is Codec.RLE:
                data = rle_decode(stored, expected_length=expected_length)
            else:
                data = self._zstd_decode(stored, expected_length)
        except LogFormatError:
            counters.dec_fail += 1
            raise
        counters.dec_comp += len(stored)
        counters.dec_uncmp += len(data)
        return data

    def _zstd_decode(self, stored: bytes, expected_length: int | None) -> bytes:
        try:
            data = self._decompressor.decompress(stored, allow_extra_data=False)
        except zstandard.ZstdError as exc:
            raise LogFormatError(f"zstd data cannot be expanded: {exc}", offset=0) from None
        if expected_length is not None and len(data) != expected_length:
            raise LogFormatError(f"zstd data expands to {len(data)} bytes, expected {expected_length}", offset=0)
        return data

    def stats(self) -> dict[str, int]:
        """Counters like SMF 115 QJST: ``QJST*`` for RLE (what z/OS reports), ``mqlog_zstd_*``
        for zstd, and ``mqlog_*`` for what was actually logged."""
        out = self.rle.fields("QJST", upper=True)
        out.update(self.zstd.fields("mqlog_zstd_", upper=False))
        out["mqlog_cmp_skipped"] = self.skipped
        out["mqlog_cmp_shared_skipped"] = self.shared_skipped
        out.update({f"mqlog_chosen_{codec.name.lower()}": n for codec, n in self.chosen.items()})
        return out
