from fractions import Fraction

import pytest

from tcplab.units import (
    QueueSize,
    UnitError,
    format_bytes,
    format_duration,
    format_rate,
    parse_bytes,
    parse_duration,
    parse_packets,
    parse_probability,
    parse_queue,
    parse_rate,
)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Mbit", 100_000_000),
        ("1Gbit", 1_000_000_000),
        ("2.5Gbps", 2_500_000_000),
        ("500kbit", 500_000),
        ("500 kbit/s", 500_000),
        ("10mbit", 10_000_000),
        ("64bit", 64),
        ("1e3bit", 1000),
        (1_000_000, 1_000_000),
        ("1000000", 1_000_000),
        (2.5e9, 2_500_000_000),
    ],
)
def test_rate_parses(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("180ms", 180_000_000),
        ("1.5s", 1_500_000_000),
        ("200us", 200_000),
        ("200µs", 200_000),
        ("10ns", 10),
        ("2min", 120_000_000_000),
        ("0.1ms", 100_000),
        ("1h", 3_600_000_000_000),
        (0, 0),
        ("0", 0),
    ],
)
def test_duration_parses(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("16MB", 16_000_000),
        ("64KB", 64_000),
        ("64kB", 64_000),
        ("1500B", 1500),
        ("16MiB", 16 * 2**20),
        ("1.5KiB", 1536),
        ("2GiB", 2 * 2**30),
        (1500, 1500),
    ],
)
def test_bytes_parse_decimal_and_binary(text, n):
    assert parse_bytes(text) == n


def test_packets_and_probability():
    assert parse_packets("64pkt") == 64
    assert parse_packets("3 packets") == 3
    assert parse_packets(7) == 7
    assert parse_probability("0.5%") == 0.005
    assert parse_probability("1%") == 0.01
    assert parse_probability(0.02) == 0.02
    assert parse_probability(0) == 0.0


def test_queue_sizes():
    assert parse_queue("bdp") == QueueSize("bdp", Fraction(1))
    assert parse_queue("0.5bdp") == QueueSize("bdp", Fraction(1, 2))
    assert parse_queue("64pkt") == QueueSize("pkts", 64)
    assert parse_queue("256KB") == QueueSize("bytes", 256_000)
    # BDP of 100 Mbit/s x 50 ms = 625000 B = 416.67 packets of 1500 B -> 417
    assert parse_queue("bdp").limit(100_000_000, 50_000_000, 1500) == (417, None)
    assert parse_queue("0.5bdp").limit(100_000_000, 50_000_000, 1500) == (209, None)
    # tiny BDP is at least 2 packets
    assert parse_queue("bdp").limit(1_000_000, 1_000_000, 1500) == (2, None)
    assert parse_queue("256KB").limit(1, 1, 1500) == (None, 256_000)


@pytest.mark.parametrize(
    ("parse", "value", "fragments"),
    [
        (
            parse_rate,
            "100Mbt",
            ["'100Mbt'", "unknown unit 'Mbt'", "did you mean 'Mbit'", "100Mbit"],
        ),
        (parse_rate, "100MB/s", ["byte rate", "800Mbit"]),
        (parse_rate, "-5Mbit", ["negative", "100Mbit"]),
        (parse_rate, "fast", ["does not start with a number", "100Mbit"]),
        (parse_rate, True, ["boolean"]),
        (parse_duration, "10", ["needs a unit", "180ms"]),
        (parse_duration, 10, ["needs a unit"]),
        (parse_duration, "5m", ["ambiguous", "min"]),
        (parse_duration, "0.5ns", ["whole number of nanoseconds"]),
        (parse_duration, "3 sekunden", ["unknown unit 'sekunden'", "180ms"]),
        (parse_bytes, "16M", ["ambiguous", "16MiB", "iperf", "16MB"]),
        (parse_bytes, "16Mb", ["lower-case 'b'", "16MB"]),
        (parse_bytes, "1.5B", ["whole number of bytes"]),
        (parse_bytes, "16Mbytes", ["unknown unit", "16MiB"]),
        (parse_probability, "150%", ["more than 1"]),
        (parse_probability, 2, ["more than 1", "0.5%"]),
        (parse_probability, "1 percent", ["unknown unit 'percent'", "'%'"]),
        (parse_queue, 64, ["needs a unit", "64pkt"]),
        (parse_queue, "64", ["needs a unit"]),
        (parse_queue, "64bdb", ["unknown unit 'bdb'", "did you mean 'bdp'"]),
        (parse_queue, "0pkt", ["at least 1 packet"]),
    ],
)
def test_unit_errors_say_what_and_give_an_example(parse, value, fragments):
    with pytest.raises(UnitError) as info:
        parse(value)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_format_roundtrips():
    for ns in (1, 999, 100_000, 24_800_000, 1_500_000_000, 120_000_000_000, 7):
        assert parse_duration(format_duration(ns)) == ns
    for bps in (1, 500_000, 100_000_000, 2_500_000_000, 5_400_000_000):
        assert parse_rate(format_rate(bps)) == bps
    for n in (1, 1500, 64_000, 16 * 2**20, 16_000_000, 1536):
        assert parse_bytes(format_bytes(n)) == n
    assert format_duration(100_000_000) == "100ms"
    assert format_rate(100_000_000) == "100Mbit"
    assert format_bytes(16 * 2**20) == "16MiB"


# ---------------------------------------------------------------- values the engine cannot hold

U32 = 2**32 - 1
U64 = 2**64 - 1


@pytest.mark.parametrize(
    ("parse", "value", "limit", "base"),
    [
        (parse_rate, "1e30bit", U64, "bit/s"),
        (parse_rate, "18446744073709551616", U64, "bit/s"),
        (parse_rate, 2**64, U64, "bit/s"),
        (parse_rate, 1e20, U64, "bit/s"),
        (parse_duration, "1e30s", U64, "nanoseconds"),
        # 2^64 ns is 18446744073.709551616 s: one nanosecond too many.
        (parse_duration, "18446744073.709551616s", U64, "nanoseconds"),
        (parse_duration, "600000000min", U64, "nanoseconds"),
        (parse_bytes, "1e30B", U64, "bytes"),
        (parse_bytes, "16777216TiB", U64, "bytes"),  # 2^64 bytes
        (parse_bytes, 2**64, U64, "bytes"),
        (parse_packets, "4294967296pkt", U32, "packets"),
        (parse_packets, 2**40, U32, "packets"),
        (parse_queue, "4294967296pkt", U32, "packets"),
        (parse_queue, "1e30B", U64, "bytes"),
    ],
)
def test_values_beyond_the_engine_fields_say_the_range(parse, value, limit, base):
    with pytest.raises(UnitError) as info:
        parse(value)
    msg = str(info.value)
    assert "more than the engine can represent" in msg, msg
    bits = limit.bit_length()
    assert f"from 0 to {limit} {base} (2^{bits} − 1)" in msg, msg


def test_the_largest_representable_values_parse():
    assert parse_rate(str(U64)) == U64
    assert parse_rate(f"{U64}bit") == U64
    assert parse_duration("18446744073.709551615s") == U64
    assert parse_bytes(f"{U64}B") == U64
    assert parse_bytes(U64) == U64
    assert parse_packets(f"{U32}pkt") == U32
    assert parse_queue(f"{U32}pkt").limit(10**9, 10**8, 1500) == (U32, None)
    assert parse_queue(f"{U64}B").limit(10**9, 10**8, 1500) == (None, U64)


def test_a_narrower_limit_is_checked_and_named():
    # A knob stored in 32 bits (e.g. mss) passes its own limit.
    assert parse_bytes("4294967295B", limit=U32) == U32
    with pytest.raises(UnitError) as info:
        parse_bytes("5GB", limit=U32)
    assert "from 0 to 4294967295 bytes (2^32 − 1)" in str(info.value)
    with pytest.raises(UnitError):
        parse_duration("5s", limit=4 * 10**9)
    with pytest.raises(UnitError):
        parse_rate("5Gbit", limit=U32)


def test_a_bdp_queue_of_more_packets_than_the_engine_holds_is_an_error():
    # 1 Gbit/s x 100 ms with 1500-byte packets is 8334 packets per BDP.
    assert QueueSize("bdp", Fraction(1)).limit(10**9, 10**8, 1500) == (8334, None)
    with pytest.raises(UnitError) as info:
        QueueSize("bdp", Fraction(10**30)).limit(10**9, 10**8, 1500)
    msg = str(info.value)
    assert "packets on this path, more than the engine can represent" in msg, msg
    assert "at most 4294967295 packets (2^32 − 1)" in msg, msg
    # The largest multiple that still fits.
    most = Fraction(U32, 8334)
    assert QueueSize("bdp", most).limit(10**9, 10**8, 1500)[0] <= U32


# Knobs and CCA parameters: the core gives each integer field its range (catalog.Param).


def _param(kind, **kw):
    from tcplab.catalog import Param

    return Param.from_dict({"name": "p", "kind": kind, **kw})


def test_param_reads_the_range_the_core_gives():
    p = _param("int", min=0, max=U32)
    assert (p.min, p.max) == (0, U32)
    q = _param("float", min=None, max=None)
    assert (q.min, q.max) == (None, None)


def test_knob_values_beyond_their_field_are_errors_with_the_range():
    from tcplab.catalog import ParamError

    mss = _param("bytes", min=0, max=U32)
    assert mss.convert("4294967295B") == U32
    with pytest.raises(UnitError) as info:
        mss.convert("5GB")
    assert "from 0 to 4294967295 bytes (2^32 − 1)" in str(info.value)
    dupthresh = _param("int", min=0, max=U32)
    assert dupthresh.convert(U32) == U32
    for bad in (U32 + 1, -1, 10**30):
        with pytest.raises(ParamError) as pinfo:
            dupthresh.convert(bad)
        assert "out of the range the engine can represent" in str(pinfo.value)
        assert "an integer from 0 to 4294967295 (2^32 − 1)" in str(pinfo.value)
    iw = _param("iw", min=0, max=U32, choices=["rfc3390", "rfc6928"])
    assert iw.convert(10) == 10
    with pytest.raises(ParamError) as pinfo:
        iw.convert(U32 + 1)
    assert "integer from 1 to 4294967295" in str(pinfo.value)
    # Durations, sizes and rates without a narrower range: 2^64 − 1 base units.
    with pytest.raises(UnitError):
        _param("duration").convert("1e30s")
    with pytest.raises(UnitError):
        _param("rate").convert("1e30bit")
    assert _param("duration").convert("200ms") == 200_000_000


def test_cca_parameter_values_beyond_the_engine_are_errors_with_the_range():
    from tcplab.catalog import ParamError

    # A CCA's integer parameter is an i64 in the engine; without a range from the core the
    # same range applies.
    for p in (_param("int", min=-(2**63), max=2**63 - 1), _param("int")):
        assert p.convert(2**63 - 1) == 2**63 - 1
        assert p.convert(-(2**63)) == -(2**63)
        with pytest.raises(ParamError) as info:
            p.convert(2**63)
        assert "from -9223372036854775808 to 9223372036854775807 (2^63 − 1)" in str(info.value)
    beta = _param("float")
    assert beta.convert(0.7) == 0.7
    assert beta.convert(10**30) == 1e30
    for bad, why in (
        (10**400, "too large for the engine's 64-bit floating point"),
        (float("nan"), "not a finite number"),
        (float("inf"), "not a finite number"),
    ):
        with pytest.raises(ParamError) as info:
            beta.convert(bad)
        assert why in str(info.value)
        assert "magnitude at most 1.8e308" in str(info.value)
