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
