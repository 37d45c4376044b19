"""Message payloads with controlled compressibility, deterministic from a seed.

Log compression (a platform's codec) only pays off on some data, so every workload
takes a ``payload`` kind saying what its message bodies look like:

``random``
    Incompressible bytes: the worst case for any codec. Run-length encoding finds nothing to
    shorten and only costs processor time.
``text``
    English-like prose (sentences of common words with punctuation): a general codec such as
    zstd shrinks it about 3x, but it has almost no runs of one byte, so RLE gains little.
``padded-records``
    Fixed-width business records as z/OS applications write them -- zero-padded numbers,
    blank-padded names and addresses, packed-decimal amounts, low-value (``0x00``) fillers
    and long trailing blanks. Long runs of one byte are what RLE likes: this is the
    structured, record-oriented data IBM says ``COMPLOG(RLE)`` is for. Characters are ASCII
    (blank ``0x20``, zero ``0x30``) as the message arrives after conversion.
``mixed``
    Each message picks one of the three above, from the same generator.

:func:`make_payload` draws every choice from the caller's :class:`random.Random`, so the same
generator state gives the same bytes. It is cheap (a few microseconds for a 2 KiB message):
the vocabulary, sentences and records are built once, from a fixed private seed, and a
message is assembled by choosing among them, never byte by byte in Python.
"""

from __future__ import annotations

import functools
import itertools
import random

from mqlog.core.errors import ParameterError

__all__ = ["PAYLOAD_KINDS", "make_payload"]

#: The payload kinds a workload's ``payload`` parameter accepts.
PAYLOAD_KINDS: tuple[str, ...] = ("random", "text", "padded-records", "mixed")

# The pools below are built from their own generator, never the caller's, so a message's bytes
# depend only on the caller's generator state; the pool size bounds the import-time cost
# (a few milliseconds, on first use) while leaving a 2 KiB message unlikely to repeat a sentence
# or record.
_POOL_SEED = 0x4D51  # "MQ"
_PHRASES = 400
_SENTENCES = 2048
_RECORDS = 2048

# A few hundred common English words, most frequent first (the order sets their Zipf weights).
_VOCABULARY = """
the of and to a in is it you that he was for on are with as his they be at one have this from
or had by hot word but what some we can out other were all there when up use your how said an
each she which do their time if will way about many then them write would like so these her
long make thing see him two has look more day could go come did number sound no most people my
over know water than call first who may down side been now find any new work part take get
place made live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ turn cause
much mean before move right boy old too same tell does set three want air well also play small
end put home read hand port large spell add even land here must big high such follow act why
ask men change went light kind off need house picture try us again animal point mother world
near build self earth father head stand own page should country found answer school grow study
still learn plant cover food sun four between state keep eye never last let thought city tree
cross farm hard start might story saw far sea draw left late run while press close night real
life few north open seem together next white children begin got walk example ease paper group
always music those both mark often letter until mile river car feet care second book carry took
science eat room friend began idea fish mountain stop once base hear horse cut sure watch color
face wood main enough plain girl usual young ready above ever red list though feel talk bird
soon body dog family direct pose leave song measure door product black short numeral class wind
question happen complete ship area half rock order fire south problem piece told knew pass
since top whole king space heard best hour better true during hundred five remember step early
hold west ground interest reach fast verb sing listen six table travel less morning ten simple
several vowel toward war lay against pattern slow center love person money serve appear road
map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark
machine note wait plan figure star box noun field rest correct able pound done beauty drive
stood contain front teach week final gave green quick develop ocean warm free minute strong
special mind behind clear tail produce fact street inch multiply nothing course stay wheel full
force blue object decide surface deep moon island foot system busy test record boat common gold
possible plane stead dry wonder laugh thousand ago ran check game shape equate miss brought heat
snow tire bring yes distant fill east paint language among
""".split()

# Fixed-width record fields: left-justified, blank-padded text taken from these lists.
_SURNAMES = """SMITH JONES WILLIAMS BROWN TAYLOR DAVIES WILSON EVANS THOMAS JOHNSON ROBERTS WALKER
WRIGHT ROBINSON THOMPSON WHITE HUGHES EDWARDS GREEN HALL WOOD HARRIS LEWIS MARTIN JACKSON CLARKE
CLARK TURNER HILL SCOTT COOPER MORRIS WARD MOORE KING WATSON BAKER HARRISON MORGAN PATEL YOUNG
ALLEN MITCHELL JAMES ANDERSON PHILLIPS LEE BELL PARKER DAVIS MUELLER SCHMIDT SCHNEIDER FISCHER
WEBER MEYER WAGNER BECKER ROSSI RUSSO FERRARI ESPOSITO BIANCHI ROMANO MARTINEZ GARCIA
LOPEZ""".split()
_FIRST_NAMES = """JAMES MARY JOHN PATRICIA ROBERT JENNIFER MICHAEL LINDA WILLIAM ELIZABETH DAVID
BARBARA RICHARD SUSAN JOSEPH JESSICA THOMAS SARAH CHARLES KAREN DANIEL NANCY MATTHEW LISA ANTHONY
BETTY MARK HELEN PAUL SANDRA STEVEN DONNA ANDREW CAROL KENNETH RUTH GEORGE SHARON JOSHUA MICHELLE
HANS ANNA KLAUS PETRA MARCO GIULIA LUCA SOFIA JUAN MARIA CARLOS ELENA""".split()
_CITIES = """LONDON MANCHESTER BIRMINGHAM LEEDS GLASGOW HURSLEY WINCHESTER SOUTHAMPTON BRISTOL
EDINBURGH CARDIFF FRANKFURT MUNICH HAMBURG STUTTGART MILAN ROME TURIN MADRID BARCELONA PARIS LYON
NEW-YORK CHICAGO POUGHKEEPSIE ARMONK RALEIGH AUSTIN DALLAS TORONTO""".split()
_STREETS = """HIGH-ST STATION-RD CHURCH-ST PARK-RD MAIN-ST LONDON-RD VICTORIA-RD GREEN-LANE
MANOR-RD CHURCH-LANE PARK-AVE THE-AVENUE QUEENS-RD NEW-RD GRANGE-RD KINGS-RD MILL-LANE""".split()
_ITEMS = """WIDGET-STANDARD BOLT-M8-STEEL NUT-M8-STEEL WASHER-8MM BRACKET-L-SHAPE HINGE-BRASS
CABLE-2M-GREY SWITCH-2WAY FUSE-13A PANEL-SOLAR-200W BATTERY-12V PUMP-HYDRAULIC VALVE-BALL-1IN
PIPE-COPPER-15MM GASKET-RUBBER FILTER-OIL BEARING-6204 MOTOR-0.5KW SENSOR-TEMP RELAY-24V""".split()

#: The record layouts ``padded-records`` draws from, by width in bytes.
RECORD_WIDTHS: tuple[int, ...] = (80, 120)


def make_payload(kind: str, size: int, rng: random.Random) -> bytes:
    """A message body of exactly ``size`` bytes of the given kind, drawn from ``rng``.

    ``kind`` is one of :data:`PAYLOAD_KINDS`; the same ``rng`` state always gives the same
    bytes. Raises :class:`~mqlog.core.errors.ParameterError` for an unknown kind or a
    negative size.
    """
    make = _MAKERS.get(kind)
    if make is None:
        raise ParameterError("payload", kind, "one of " + ", ".join(PAYLOAD_KINDS))
    if type(size) is not int or size < 0:
        raise ParameterError("message_size", size, "an integer 0 or more")
    if size == 0:
        return b""
    return make(size, rng)


def _random(size: int, rng: random.Random) -> bytes:
    return rng.randbytes(size)


def _text(size: int, rng: random.Random) -> bytes:
    sentences, mean = _sentence_pool()
    # Ask for a few more sentences than the mean length needs, so one draw nearly always
    # suffices; the loop only guards against a run of short sentences.
    parts = rng.choices(sentences, k=size // mean + 3)
    body = b"".join(parts)
    while len(body) < size:
        body += b"".join(rng.choices(sentences, k=size // mean + 3))
    return body[:size]


def _padded_records(size: int, rng: random.Random) -> bytes:
    # One message carries records of one layout, as a batch read from one file would.
    width = RECORD_WIDTHS[rng.randrange(len(RECORD_WIDTHS))]
    pool = _record_pool(width)
    return b"".join(rng.choices(pool, k=-(-size // width)))[:size]


_PLAIN_KINDS = ("random", "text", "padded-records")


def _mixed(size: int, rng: random.Random) -> bytes:
    return _MAKERS[_PLAIN_KINDS[rng.randrange(3)]](size, rng)


_MAKERS = {"random": _random, "text": _text, "padded-records": _padded_records, "mixed": _mixed}


@functools.cache
def _sentence_pool() -> tuple[list[bytes], int]:
    """Sentences of common phrases, each ending in a space or newline; and their mean length.

    Words are Zipf-weighted and grouped into a few hundred recurring phrases, as real prose
    repeats "of the" and "in the": that repetition is what a dictionary codec finds.
    """
    rng = random.Random(_POOL_SEED)
    cum_weights = list(itertools.accumulate(1.0 / rank**1.1
                                            for rank in range(1, len(_VOCABULARY) + 1)))
    phrases = [" ".join(rng.choices(_VOCABULARY, cum_weights=cum_weights, k=rng.randint(1, 4)))
               for _ in range(_PHRASES)]
    sentences = []
    for _ in range(_SENTENCES):
        chosen = rng.choices(phrases, k=rng.randint(2, 5))
        for i in range(len(chosen) - 1):
            if rng.random() < 0.1:
                chosen[i] += ","
        end = rng.choices((". ", "? ", "! ", ".\n"), weights=(80, 8, 4, 8))[0]
        sentences.append((" ".join(chosen).capitalize() + end).encode("ascii"))
    mean = sum(map(len, sentences)) // len(sentences)
    return sentences, mean


def _packed_decimal(value: int, nbytes: int) -> bytes:
    """``value`` as signed packed decimal (COMP-3), ``nbytes`` long, positive sign ``C``."""
    return bytes.fromhex(str(value).rjust(2 * nbytes - 1, "0") + "C")


@functools.cache
def _record_pool(width: int) -> list[bytes]:
    """Fixed-width records of one layout: 80-byte customer records or 120-byte order lines."""
    rng = random.Random(_POOL_SEED + width)
    records = []
    for n in range(_RECORDS):
        if width == 80:
            # CUSTNO(10) TYPE(1) SURNAME(20) FIRST(12) CITY(15) BALANCE(11) STATUS(1) FILLER(10)
            rec = (
                f"{rng.randrange(1, 200_000):010d}C"
                f"{rng.choice(_SURNAMES):<20}{rng.choice(_FIRST_NAMES):<12}"
                f"{rng.choice(_CITIES):<15}{rng.randrange(0, 5_000_000):011d}"
                f"{rng.choice('AAAAAS')}"
            ).encode("ascii") + b" " * 10
        else:
            # ORDERNO(12) CUSTNO(10) DATE(8) ITEM(24) STREET(16) QTY(7) AMOUNT(8, packed)
            # CURRENCY(3) LOW-VALUES(16) FILLER(16)
            rec = (
                f"{rng.randrange(1, 10_000_000):012d}{rng.randrange(1, 200_000):010d}"
                f"2026{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
                f"{rng.choice(_ITEMS):<24}{rng.choice(_STREETS):<16}"
                f"{rng.randrange(1, 500):07d}"
            ).encode("ascii") + _packed_decimal(rng.randrange(100, 10_000_000), 8) + (
                rng.choice((b"GBP", b"EUR", b"USD"))) + b"\x00" * 16 + b" " * 16
        assert len(rec) == width, (width, len(rec), n)
        records.append(rec)
    return records
