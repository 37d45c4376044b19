"""COMPLOG: the z/OS message-data codec (IBM MQ for z/OS, "Controlling archiving and
logging"), its statistics, and a queue manager that logs compressed puts and reads them back
at restart."""

from __future__ import annotations

import random

import pytest
import simpy
import zstandard
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.reference import reference_platform
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.format.records import Codec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError
from mqlog.zos.codec import CompLogCodec

from .test_rle import card_images, zero_filled_structs

PADDED = card_images(40, b"\x40")  # RLE's kind of data
ZEROS = bytes(4000)
RANDOM = random.Random(5).randbytes(3000)  # nothing compresses it
# English-like text: no runs for RLE, plenty of repetition for zstd
TEXT = b" ".join(random.Random(6).choice([b"the", b"queue", b"manager", b"logs", b"message", b"data"])
                 for _ in range(800))
CORPUS = [PADDED, ZEROS, RANDOM, TEXT, zero_filled_structs(8), b"short", bytes(15), bytes(16), b"x" * 100]


def test_none_never_compresses_and_counts_nothing():
    codec = CompLogCodec()
    assert codec.complog == "NONE"
    for data in CORPUS:
        assert codec.encode(data) == (Codec.NONE, data)
    assert not any(codec.stats().values())


def test_rle_compresses_padding_and_stores_the_rest_as_it_is():
    codec = CompLogCodec("RLE")
    kind, stored = codec.encode(PADDED)
    assert kind is Codec.RLE and len(stored) * 3 < len(PADDED)
    assert codec.decode(kind, stored) == PADDED
    assert codec.encode(RANDOM) == (Codec.NONE, RANDOM)
    assert codec.encode(TEXT) == (Codec.NONE, TEXT)  # RLE cannot shrink text without runs
    stats = codec.stats()
    assert (stats["QJSTCMPREQ"], stats["QJSTCMPFAIL"]) == (3, 2)
    assert stats["mqlog_chosen_none"] == 2 and stats["mqlog_chosen_rle"] == 1


def test_short_data_is_not_offered_to_the_compressor():
    codec = CompLogCodec("RLE")
    assert codec.encode(bytes(15)) == (Codec.NONE, bytes(15))
    assert codec.stats()["QJSTCMPREQ"] == 0 and codec.stats()["mqlog_cmp_skipped"] == 1
    kind, stored = codec.encode(bytes(16))
    assert kind is Codec.RLE and len(stored) < 16
    assert CompLogCodec("RLE", min_length=0).encode(bytes(3))[0] is Codec.RLE
    with pytest.raises(ParameterError, match="min_length"):
        CompLogCodec("RLE", min_length=-1)


@pytest.mark.parametrize("data", CORPUS, ids=range(len(CORPUS)))
def test_any_without_zstd_never_picks_zstd(data):
    codec = CompLogCodec("ANY")
    kind, stored = codec.encode(data)
    assert kind is not Codec.ZSTD
    assert (kind, stored) == CompLogCodec("RLE").encode(data)  # today ANY is RLE, as on z/OS
    assert codec.stats()["mqlog_zstd_cmpreq"] == 0


@pytest.mark.parametrize("data", CORPUS, ids=range(len(CORPUS)))
def test_any_with_zstd_logs_the_fewest_bytes_of_either_algorithm(data):
    kind, stored = CompLogCodec("ANY", allow_zstd=True).encode(data)
    rle = CompLogCodec("RLE").encode(data)[1]
    zstd = CompLogCodec("ZSTD").encode(data)[1]
    assert len(stored) == min(len(rle), len(zstd), len(data))
    assert CompLogCodec().decode(kind, stored) == data


def test_any_with_zstd_picks_zstd_for_text_and_rle_for_pure_padding():
    codec = CompLogCodec("ANY", allow_zstd=True)
    assert codec.encode(TEXT)[0] is Codec.ZSTD
    assert codec.encode(bytes(100_000))[0] is Codec.RLE  # 4-byte long runs beat a zstd frame


def test_zstd_stores_a_standard_deterministic_frame():
    kind, stored = CompLogCodec("ZSTD").encode(TEXT)
    assert kind is Codec.ZSTD and len(stored) * 3 < len(TEXT)
    assert zstandard.ZstdDecompressor().decompress(stored) == TEXT  # any zstd reader can expand it
    assert CompLogCodec("ANY", allow_zstd=True).encode(TEXT)[1] == stored  # same data, same bytes


def test_the_setting_switches_while_running_and_old_records_still_decode():
    codec = CompLogCodec("RLE")
    written = [(PADDED, codec.encode(PADDED))]
    codec.complog = "ZSTD"
    written.append((TEXT, codec.encode(TEXT)))
    codec.complog = "none"  # SET LOG COMPLOG(NONE), as MQSC takes it
    assert codec.complog == "NONE"
    written.append((PADDED, codec.encode(PADDED)))
    assert [kind for _, (kind, _) in written] == [Codec.RLE, Codec.ZSTD, Codec.NONE]
    for data, (kind, stored) in written:
        assert codec.decode(kind, stored) == data


@pytest.mark.parametrize("value", ["GZIP", "", None, 1, "RLE2"])
def test_an_invalid_complog_is_a_parameter_error_naming_complog_and_the_allowed_values(value):
    with pytest.raises(ParameterError) as caught:
        CompLogCodec(value)
    assert caught.value.name == "COMPLOG"
    for allowed in ("NONE", "RLE", "ANY"):
        assert allowed in str(caught.value)
    codec = CompLogCodec("RLE")
    with pytest.raises(ParameterError, match="COMPLOG"):
        codec.complog = value
    assert codec.complog == "RLE"  # a refused SET LOG changes nothing


def test_compression_statistics_add_up():
    codec = CompLogCodec("RLE")
    results = [(data, codec.encode(data)) for data in CORPUS]
    requests = [(data, stored) for data, (_, stored) in results if len(data) >= 16]
    stats = codec.stats()
    assert stats["QJSTCMPREQ"] == len(requests)
    assert stats["QJSTCMPUNCMP"] == sum(len(data) for data, _ in requests)
    assert stats["QJSTCMPCOMP"] == sum(len(stored) for _, stored in requests)
    assert stats["QJSTCMPFAIL"] == sum(kind is Codec.NONE for data, (kind, _) in results if len(data) >= 16)
    assert stats["mqlog_cmp_skipped"] == len(results) - len(requests)
    assert stats["QJSTCMPCOMP"] < stats["QJSTCMPUNCMP"]

    compressed = [(kind, stored) for _, (kind, stored) in results if kind is Codec.RLE]
    expanded = [codec.decode(kind, stored) for kind, stored in compressed]
    codec.decode(Codec.NONE, b"as it is")  # nothing to expand, nothing counted
    stats = codec.stats()
    assert stats["QJSTDECREQ"] == len(compressed)
    assert stats["QJSTDECCOMP"] == sum(len(stored) for _, stored in compressed)
    assert stats["QJSTDECUNCMP"] == sum(len(data) for data in expanded)
    assert stats["mqlog_zstd_decreq"] == 0


def test_qjst_reports_what_z_os_would_do_even_when_zstd_is_chosen():
    beyond = CompLogCodec("ANY", allow_zstd=True)
    z_os = CompLogCodec("ANY")
    for data in CORPUS:
        beyond.encode(data)
        z_os.encode(data)
    qjst = {k: v for k, v in beyond.stats().items() if k.startswith("QJST")}
    assert qjst == {k: v for k, v in z_os.stats().items() if k.startswith("QJST")}
    stats = beyond.stats()
    assert stats["mqlog_zstd_cmpreq"] == stats["QJSTCMPREQ"]
    assert stats["mqlog_zstd_cmpuncmp"] == stats["QJSTCMPUNCMP"]
    assert stats["mqlog_chosen_zstd"] > 0
    # both attempts reported; what was logged is never more than either alone
    assert stats["mqlog_zstd_cmpcomp"] < stats["QJSTCMPCOMP"]  # this corpus has text


@pytest.mark.parametrize("kind, stored", [
    (Codec.RLE, b"\x05abc"),
    (Codec.ZSTD, b"not a frame"),
    (Codec.ZSTD, zstandard.ZstdCompressor().compress(TEXT)[:-3]),
    (Codec.ZSTD, zstandard.ZstdCompressor().compress(TEXT) + b"junk"),
    (9, b"anything"),
], ids=["rle-truncated", "zstd-garbage", "zstd-truncated", "zstd-trailing", "unknown-codec"])
def test_bytes_a_codec_cannot_expand_are_format_errors(kind, stored):
    codec = CompLogCodec("NONE")
    with pytest.raises(LogFormatError):
        codec.decode(kind, stored)
    if kind in (Codec.RLE, Codec.ZSTD):
        prefix = "QJST" if kind is Codec.RLE else "mqlog_zstd_"
        assert codec.stats()[prefix + ("DECFAIL" if kind is Codec.RLE else "decfail")] == 1


@pytest.mark.parametrize("setting", ["RLE", "ZSTD"])
def test_decode_checks_the_message_length_when_given(setting):
    codec = CompLogCodec(setting)
    kind, stored = codec.encode(PADDED)
    assert codec.decode(kind, stored, expected_length=len(PADDED)) == PADDED
    with pytest.raises(LogFormatError, match="expected"):
        codec.decode(kind, stored, expected_length=len(PADDED) + 1)


# --- a queue manager logging compressed puts ------------------------------------------------

def message(i: int) -> bytes:
    """A persistent message of padded records; every fifth one large enough that even
    compressed it takes several 15 700-byte segments."""
    head = card_images(8 + i % 5, b"\x40") + zero_filled_structs(2)
    if i % 5 == 4:
        body = random.Random(i).randbytes(20_000) + card_images(300, b"\x40")
        return b"BIG-%03d" % i + body
    return b"MSG-%03d" % i + head


def start(storage, codec):
    env = simpy.Environment()
    platform = reference_platform(storage, codec=codec)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    run(env, qm.start())
    return env, qm


def run(env, gen):
    proc = env.process(gen)
    env.run(until=proc)
    return proc.value


def crashed_after_puts(codec, switch_to: str | None = None):
    """Puts (committed, and one unit of work left in flight), then a crash; the durable image."""
    storage = FaultInjectingStorage(MemoryStorage())
    env, qm = start(storage, codec)

    def work():
        yield from qm.define_queue("Q")
        conn = qm.connect("APP")
        for i in range(20):
            if i == 10 and switch_to is not None:
                codec.complog = switch_to  # SET LOG COMPLOG while running
            yield from conn.put("Q", message(i))
            if i % 2:
                yield from conn.commit()
        yield from conn.commit()
        flight = qm.connect("FLIGHT")
        yield from flight.put("Q", message(99))
        yield qm.writer.force()

    run(env, work())
    storage.crash()
    return storage.durable


def drain(qm, env) -> list[bytes]:
    conn = qm.connect("READER")

    def go():
        got = []
        while True:
            try:
                got.append((yield from conn.get("Q", syncpoint=False)).data)
            except MqiError:
                return got

    return run(env, go())


def log_bytes(durable) -> int:
    return sum(durable.size(name) for name in durable.list() if name.endswith(".log"))


@pytest.mark.parametrize("switch_to", [None, "NONE"], ids=["rle", "rle-then-none"])
def test_compressed_messages_come_back_byte_identical_after_a_crash(switch_to):
    writer = CompLogCodec("RLE")
    durable = crashed_after_puts(writer, switch_to)
    assert writer.stats()["QJSTCMPREQ"] == (21 if switch_to is None else 10)
    reader = CompLogCodec("NONE")  # restart reads RLE records whatever the setting now
    env, qm = start(FaultInjectingStorage(durable), reader)
    assert drain(qm, env) == [message(i) for i in range(20)]  # the in-flight put backed out
    assert reader.stats()["QJSTDECREQ"] > 0  # restart really expanded logged data


def test_compression_shrinks_the_log_by_what_the_statistics_say_it_saved():
    codec = CompLogCodec("RLE")
    compressed = log_bytes(crashed_after_puts(codec))
    plain = log_bytes(crashed_after_puts(CompLogCodec("NONE")))
    assert compressed < 0.7 * plain  # a fifth of the messages are mostly random bytes
    saved = codec.stats()["QJSTCMPUNCMP"] - codec.stats()["QJSTCMPCOMP"]
    assert plain - compressed >= saved - 4096  # give or take the last page


# --- COMPLOG as IBM describes it: private queues only, and compression costs CPU -----------

def exact_host():
    """The default host with no jitter: every charge runs exactly its figure, so a call's
    time is the arithmetic of the profile (what these tests check)."""
    import attrs

    from mqlog.core.host.profiles import get_host

    return attrs.evolve(get_host("v93-xeon"), cpu_jitter=0.0)


def qsg_members(env, complog="RLE", host=None):
    """Two queue-sharing group members under COMPLOG(complog), a shared queue and, on the
    first, a private one."""
    from mqlog.zos.platform import zos_platform
    from mqlog.zos.qsg import QueueSharingGroup

    qsg = QueueSharingGroup()
    members = []
    for name, number in (("QMA", 1), ("QMB", 2)):
        storage = FaultInjectingStorage(MemoryStorage())
        platform = zos_platform(storage, data_sets=4, cis=64, lrsn=True, qm_name=name, codec=CompLogCodec(complog))
        qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig(name=name, member=number),
                          host=host or exact_host())
        qsg.join(qm)
        members.append(qm)
    qsg.define_shared_queue("SHARED.Q", "APPL1")
    return qsg, members


def put_to_both(env, qm, data, n=3):
    def go():
        yield from qm.start()
        yield from qm.define_queue("PRIVATE.Q")
        conn = qm.connect("APP")
        for _ in range(n):
            yield from conn.put("SHARED.Q", data)
            yield from conn.put("PRIVATE.Q", data)
        yield from conn.commit()

    run(env, go())


def test_shared_queue_puts_are_logged_uncompressed_and_private_ones_compressed():
    from mqlog.zos.utilities.logprint import log_records

    env = simpy.Environment()
    _, (a, _) = qsg_members(env)
    put_to_both(env, a, PADDED)
    puts = [r for r in log_records(a.platform.space, a.platform.addressing) if r.get("queue") and "codec" in r
            and "message_length_bytes" in r]
    codecs = {(r["queue"], r["codec"]) for r in puts}
    assert codecs == {("SHARED.Q", "NONE"), ("PRIVATE.Q", "RLE")}  # read back from the log's bytes
    assert all(r["stored_length_bytes"] == len(PADDED) for r in puts if r["queue"] == "SHARED.Q")
    assert all(r["stored_length_bytes"] < len(PADDED) / 4 for r in puts if r["queue"] == "PRIVATE.Q")
    stats = a.platform.codec.stats()
    assert stats["QJSTCMPREQ"] == 3  # the private puts only: a shared put is no request
    assert stats["mqlog_cmp_shared_skipped"] == 3
    # and costs no compression CPU: only the private puts' bytes were scanned
    assert a.cpu.by_kind["compress"] == pytest.approx(3 * len(PADDED) * a.cpu.profile.rle_compress_ns_per_byte / 1000)


def put_time(complog: str, data: bytes, *, allow_zstd=False, host=None) -> float:
    """The virtual time one persistent put under syncpoint takes (no force: only CPU)."""
    from mqlog.zos.platform import zos_platform

    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = zos_platform(storage, data_sets=4, cis=256, codec=CompLogCodec(complog, allow_zstd=allow_zstd))
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig(), host=host or exact_host())
    run(env, qm.start())
    run(env, qm.define_queue("Q"))
    conn = qm.connect("APP")
    started = env.now
    run(env, conn.put("Q", data))
    return env.now - started


@pytest.mark.parametrize("complog, allow_zstd, algorithms", [
    ("RLE", False, ("rle",)), ("ZSTD", False, ("zstd",)), ("ANY", True, ("rle", "zstd"))])
def test_a_put_takes_longer_by_its_compression_cpu(complog, allow_zstd, algorithms):
    host = exact_host()
    data = PADDED + TEXT
    extra = put_time(complog, data, allow_zstd=allow_zstd) - put_time("NONE", data)
    per_byte = sum(getattr(host, f"{a}_compress_ns_per_byte") for a in algorithms)
    assert per_byte > 0
    assert extra == pytest.approx(len(data) * per_byte / 1000)  # every algorithm that scanned it


def test_compression_cpu_competes_for_the_hosts_cores():
    """On one core, an application whose put is being compressed holds the core and its
    queue's lock: another's call waits behind it, so the two finish later than without
    compression."""
    import attrs

    from mqlog.zos.platform import zos_platform

    one_core = attrs.evolve(exact_host(), name="one-core", cores=1)

    def two_putters(complog):
        storage = FaultInjectingStorage(MemoryStorage())
        env = simpy.Environment()
        platform = zos_platform(storage, data_sets=4, cis=256, codec=CompLogCodec(complog))
        qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig(), host=one_core)
        run(env, qm.start())
        run(env, qm.define_queue("Q"))
        ends = []

        def putter(name):
            conn = qm.connect(name)
            yield from conn.put("Q", PADDED)
            ends.append(env.now)

        started = env.now
        env.run(until=simpy.AllOf(env, [env.process(putter("A")), env.process(putter("B"))]))
        return [t - started for t in ends]

    a_none, b_none = two_putters("NONE")
    a_rle, b_rle = two_putters("RLE")
    compress_us = len(PADDED) * one_core.rle_compress_ns_per_byte / 1000
    # its own compression and the other's – and, the other compressing under the queue's lock
    # (mqlog.core.qm.locks), the wakeup of finding the lock held once it had the core
    assert a_rle - a_none == pytest.approx(compress_us)  # the first putter: its own compression
    assert b_rle - b_none == pytest.approx(2 * compress_us + one_core.force_wait_us)


def test_restart_charges_the_expansion_of_compressed_data_to_its_time():
    import attrs


    writer = CompLogCodec("RLE")
    durable = crashed_after_puts(writer)
    host = exact_host()
    free = attrs.evolve(host, name="free-expansion", rle_expand_ns_per_byte=0.0)

    def restart(profile):
        image = MemoryStorage()  # a copy each: a restart writes (its CLRs, its checkpoint)
        for name in durable.list():
            image.replace(name, durable.read(name, 0, durable.size(name)))
        storage = FaultInjectingStorage(image)
        env = simpy.Environment()
        qm = QueueManager(env, reference_platform(storage, codec=CompLogCodec("NONE")), storage,
                          Device(env, get_profile("ssd")), QmConfig(), host=profile)
        report = run(env, qm.start())
        return report, qm

    report, qm = restart(host)
    free_report, _ = restart(free)
    expanded = qm.platform.codec.stats()["QJSTDECUNCMP"]  # bytes restart expanded to
    assert expanded > 0
    assert report.cpu_expand_us == pytest.approx(expanded * host.rle_expand_ns_per_byte / 1000)
    assert qm.cpu.by_kind["expand"] == report.cpu_expand_us
    assert free_report.cpu_expand_us == 0
    slower = report.restart_virtual_s - free_report.restart_virtual_s
    assert slower * 1e6 == pytest.approx(report.cpu_expand_us)


def test_a_qsg_run_under_complog_is_deterministic():
    def once():
        env = simpy.Environment()
        _, (a, _) = qsg_members(env)
        put_to_both(env, a, PADDED + RANDOM, n=5)
        env.run(until=a.writer.force())
        files = {name: bytes(a.storage.read(name, 0, a.storage.size(name))) for name in sorted(a.storage.list())}
        return files, a.cpu.counters(), a.platform.codec.stats(), env.now

    assert once() == once()


def test_a_run_holds_the_queues_shared_queues_names_shared_and_never_compresses_them():
    """log.SHARED_QUEUES: the run's queue manager joins a queue-sharing group of its own, the
    named queues are its CF structure's, and COMPLOG skips exactly the puts to them."""
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("zos")
    values = choice.configure({"COMPLOG": "RLE", "SHARED_QUEUES": "PAIR.00001"})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "3", "messages_per_pair": "20",
                                                 "payload": "padded-records"}, origin="test")
    result = run_workload(RunConfig("zos", choice.maker(values), values, spec, host=exact_host()), MemoryStorage())
    m = result.metrics
    assert m["messages_got"] == 60
    assert result.qm.queues["PAIR.00001"].keeper is not None  # the CF structure's
    assert result.qm.queues["PAIR.00000"].keeper is None
    assert m["platform_mqlog_cmp_shared_skipped"] == 20 and m["platform_QJSTCMPREQ"] == 40
    assert m["cpu_compress_us"] == pytest.approx(
        m["platform_QJSTCMPUNCMP"] * result.qm.cpu.profile.rle_compress_ns_per_byte / 1000)
