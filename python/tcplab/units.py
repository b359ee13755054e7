"""Quantities with units, as written in scenario files and on the command line.

Every parser returns an exact integer in the base unit of the normalized config (docs/design.md §3):
nanoseconds, bytes, bit/s, packets. Numbers are read as decimals (``Decimal``), never floats, so
``"2.5Gbps"`` is exactly 2 500 000 000 and ``"0.1ms"`` exactly 100 000 ns. A value that does not
come out as a whole number of base units (``"0.5ns"``, ``"1.5B"``) is an error.

=========== ============================================================ ===========================
kind        units (case-sensitive unless noted)                          bare number
=========== ============================================================ ===========================
rate        ``bit bps bit/s``, ``kbit kbps kbit/s``, ``Mbit Mbps Mbit/s``, bit/s
            ``Gbit Gbps``, ``Tbit Tbps``; decimal prefixes (k = 10^3);
            prefix letter case-insensitive (``mbit`` = ``Mbit``). ``bps``
            means *bits* per second (unlike tc, where ``mbps`` is bytes).
            Byte rates (``MB/s``, ``MBps``) are refused with the bit form.
duration    ``ns``, ``us`` (``µs``), ``ms``, ``s`` (``sec``), ``min``, ``h`` only ``0``
bytes       ``B``; decimal ``kB``/``KB`` 10^3, ``MB`` 10^6, ``GB`` 10^9,     bytes
            ``TB`` 10^12; binary ``KiB`` 2^10, ``MiB`` 2^20, ``GiB`` 2^30,
            ``TiB`` 2^40. Bare ``K``/``M``/``G`` are refused as ambiguous:
            iperf's ``-w 16M`` means 16 MiB, so write ``16MiB``.
packets     ``pkt``, ``pkts``, ``packet``, ``packets``                       packets
probability ``"0.5%"`` (= 0.005) or a number in [0, 1]                       probability
queue       ``"bdp"``, ``"0.5bdp"`` (a multiple of the path BDP), a packet   refused
            count (``"64pkt"``) or a byte size (``"256KB"``)
=========== ============================================================ ===========================

Whitespace between number and unit is allowed (``"100 Mbit"``). Negative values are refused.
So are values that parse but do not fit the engine's integer fields (docs/design.md §3): rates,
durations and sizes above ``2^64 − 1`` base units, packet counts above ``2^32 − 1`` (each parser
takes a ``limit``; knobs whose field is narrower pass theirs, see :mod:`tcplab.catalog`).
Errors are :class:`UnitError`; their message says what was wrong and shows a valid example.

Hand-written, not ``pint``: pint computes in floats by default and its registry reads other
spellings (``m`` is metre), while tcplab needs exact base-unit integers and these refusals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .errors import UserError, nearest

__all__ = [
    "U32_MAX",
    "U64_MAX",
    "QueueSize",
    "UnitError",
    "format_bytes",
    "format_duration",
    "format_rate",
    "parse_bytes",
    "parse_duration",
    "parse_packets",
    "parse_probability",
    "parse_queue",
    "parse_rate",
]

#: The largest values of the engine's unsigned integer fields (Rust ``u32`` and ``u64``).
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

RATE_EXAMPLE = "a rate such as '100Mbit', '2.5Gbps', '500kbit' or a bare number of bit/s"
DURATION_EXAMPLE = "a duration such as '180ms', '1.5s', '200us', '10ns' or '2min'"
BYTES_EXAMPLE = (
    "a size such as '1500B', '64KB' (10^3), '16MB' (10^6), '16MiB' (2^20) or a bare number of bytes"
)
PACKETS_EXAMPLE = "a packet count such as '64pkt' or a bare integer"
PROBABILITY_EXAMPLE = "a probability such as '0.5%' or a number from 0 to 1 like 0.005"
QUEUE_EXAMPLE = (
    "'bdp', a multiple like '0.5bdp', a packet count like '64pkt' or a size like '256KB'"
)


class UnitError(UserError, ValueError):
    """A quantity could not be parsed. ``problem`` says why, ``allowed`` shows valid values."""

    def __init__(self, value: object, problem: str, allowed: str) -> None:
        self.value = value
        self.problem = problem
        self.allowed = allowed
        super().__init__(f"{value!r}: {problem}; expected {allowed}")


_SI = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_RATE_UNITS: dict[str, int] = {}
for _p, _m in _SI.items():
    for _suffix in ("bit", "bits", "bps", "bit/s", "bits/s", "b/s"):
        if _p == "" and _suffix == "b/s":
            continue
        _RATE_UNITS[_p + _suffix] = _m
# A bare "b/s" is ambiguous; "kb/s" etc. (lower-case b) are bits, as iperf prints them.

_DURATION_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "sec": 10**9,
    "secs": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}

_BYTE_UNITS = {
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}

_PACKET_UNITS = {"pkt": 1, "pkts": 1, "packet": 1, "packets": 1}

_NUMBER = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*(.*?)\s*$")


def _split(value: str, allowed: str) -> tuple[Decimal, str]:
    """Split ``"2.5 Gbit"`` into (Decimal('2.5'), 'Gbit')."""
    text = value.strip()
    if text.startswith("-"):
        raise UnitError(value, "must not be negative", allowed)
    if text.startswith("+"):
        text = text[1:]
    m = _NUMBER.match(text)
    if not m:
        raise UnitError(value, "does not start with a number", allowed)
    mantissa, exponent, unit = m.groups()
    try:
        num = Decimal(mantissa)
        if exponent:
            num = num.scaleb(int(exponent))
    except (InvalidOperation, ValueError) as exc:  # pragma: no cover - regex guarantees digits
        raise UnitError(value, "is not a number", allowed) from exc
    return num, unit


def _whole(
    value: object, num: Decimal | Fraction, base: str, allowed: str, limit: int | None = None
) -> int:
    frac = Fraction(num)
    if frac.denominator != 1:
        raise UnitError(value, f"is not a whole number of {base}", allowed)
    n = int(frac)
    if limit is not None and n > limit:
        raise too_large(value, limit, base)
    return n


def at_most(limit: int, base: str = "") -> str:
    """``"4294967295 packets (2^32 − 1)"``: a limit for error messages."""
    bits = (limit + 1).bit_length() - 1
    power = f" (2^{bits} − 1)" if limit + 1 == 1 << bits and bits > 8 else ""
    unit = f" {base}" if base else ""
    return f"{limit}{unit}{power}"


def too_large(value: object, limit: int, base: str) -> UnitError:
    """The error of a value that parses but is more than the engine can hold."""
    return UnitError(
        value, "is more than the engine can represent", f"a value from 0 to {at_most(limit, base)}"
    )


def _number_value(value: object, allowed: str) -> Decimal | None:
    """A TOML int/float as an exact Decimal; None for strings; error for anything else."""
    if isinstance(value, bool):
        raise UnitError(value, "is a boolean, not a quantity", allowed)
    if isinstance(value, int):
        if value < 0:
            raise UnitError(value, "must not be negative", allowed)
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UnitError(value, "is not a finite number", allowed)
        if value < 0:
            raise UnitError(value, "must not be negative", allowed)
        return Decimal(repr(value))
    if isinstance(value, str):
        return None
    raise UnitError(value, f"is a {type(value).__name__}, not a quantity", allowed)


def _unknown_unit(value: object, unit: str, units: list[str], allowed: str) -> UnitError:
    near = nearest(unit, units)
    hint = f" (did you mean '{near}'?)" if near else ""
    return UnitError(value, f"unknown unit '{unit}'{hint}", allowed)


def parse_rate(value: object, limit: int = U64_MAX) -> int:
    """A rate in bit/s: ``"100Mbit"``, ``"2.5Gbps"``, ``"500kbit"``, or a bare number (bit/s),
    at most *limit*."""
    num = _number_value(value, RATE_EXAMPLE)
    if num is not None:
        return _whole(value, num, "bit/s", RATE_EXAMPLE, limit)
    assert isinstance(value, str)
    num, unit = _split(value, RATE_EXAMPLE)
    if unit == "":
        return _whole(value, num, "bit/s", RATE_EXAMPLE, limit)
    key = unit.lower().replace(" ", "")
    if "B" in unit:
        # Upper-case B means bytes: MB/s, MBps, GB/s.
        prefix = key[0] if key[0] in "kmgt" else ""
        bits = num * 8
        suggestion = f"{_fmt_decimal(bits)}{prefix.upper() if prefix != 'k' else 'k'}bit"
        raise UnitError(
            value,
            f"'{unit}' is a byte rate; rates are in bits per second (write '{suggestion}')",
            RATE_EXAMPLE,
        )
    if key not in _RATE_UNITS:
        raise _unknown_unit(
            value, unit, ["bit", "kbit", "Mbit", "Gbit", "Tbit", "Gbps"], RATE_EXAMPLE
        )
    return _whole(value, num * _RATE_UNITS[key], "bit/s", RATE_EXAMPLE, limit)


def parse_duration(value: object, limit: int = U64_MAX) -> int:
    """A duration in integer nanoseconds: ``"180ms"``, ``"1.5s"``, ``"200us"``, ``"2min"``, at
    most *limit*."""
    num = _number_value(value, DURATION_EXAMPLE)
    if num is not None:
        if num == 0:
            return 0
        raise UnitError(value, "needs a unit (only 0 may be written without one)", DURATION_EXAMPLE)
    assert isinstance(value, str)
    num, unit = _split(value, DURATION_EXAMPLE)
    if unit == "":
        if num == 0:
            return 0
        raise UnitError(value, "needs a unit (only 0 may be written without one)", DURATION_EXAMPLE)
    if unit == "m":
        raise UnitError(
            value, "'m' is ambiguous; write 'min' for minutes or 'ms'", DURATION_EXAMPLE
        )
    if unit not in _DURATION_UNITS:
        raise _unknown_unit(value, unit, list(_DURATION_UNITS), DURATION_EXAMPLE)
    return _whole(value, num * _DURATION_UNITS[unit], "nanoseconds", DURATION_EXAMPLE, limit)


def parse_bytes(value: object, limit: int = U64_MAX) -> int:
    """A size in bytes: ``"16MB"`` (10^6), ``"16MiB"`` (2^20), ``"64KB"``, ``"1500B"``, a number;
    at most *limit*."""
    num = _number_value(value, BYTES_EXAMPLE)
    if num is not None:
        return _whole(value, num, "bytes", BYTES_EXAMPLE, limit)
    assert isinstance(value, str)
    num, unit = _split(value, BYTES_EXAMPLE)
    if unit == "":
        return _whole(value, num, "bytes", BYTES_EXAMPLE, limit)
    if unit in ("k", "K", "m", "M", "g", "G", "t", "T"):
        p = unit.upper()
        n = _fmt_decimal(num)
        raise UnitError(
            value,
            f"'{unit}' is ambiguous: write '{n}{p}iB' (2^{_binexp(p)}, what iperf's "
            f"-w {n}{p} means) or '{n}{p}B' (10^{_decexp(p)})",
            BYTES_EXAMPLE,
        )
    if unit not in _BYTE_UNITS:
        if unit.endswith("b") and unit[:-1].upper() in ("K", "M", "G", "T", "KI", "MI", "GI", "TI"):
            raise UnitError(
                value,
                f"'{unit}' ends in a lower-case 'b' (bits); sizes are in bytes: write "
                f"'{_fmt_decimal(num)}{unit[:-1]}B'",
                BYTES_EXAMPLE,
            )
        raise _unknown_unit(value, unit, list(_BYTE_UNITS), BYTES_EXAMPLE)
    return _whole(value, num * _BYTE_UNITS[unit], "bytes", BYTES_EXAMPLE, limit)


def parse_packets(value: object, limit: int = U32_MAX) -> int:
    """A packet count: ``"64pkt"`` or a bare integer, at most *limit*."""
    num = _number_value(value, PACKETS_EXAMPLE)
    if num is not None:
        return _whole(value, num, "packets", PACKETS_EXAMPLE, limit)
    assert isinstance(value, str)
    num, unit = _split(value, PACKETS_EXAMPLE)
    if unit and unit not in _PACKET_UNITS:
        raise _unknown_unit(value, unit, list(_PACKET_UNITS), PACKETS_EXAMPLE)
    return _whole(value, num, "packets", PACKETS_EXAMPLE, limit)


def parse_probability(value: object) -> float:
    """A probability: ``"0.5%"`` → 0.005, or a number in [0, 1]."""
    num = _number_value(value, PROBABILITY_EXAMPLE)
    if num is None:
        assert isinstance(value, str)
        num, unit = _split(value, PROBABILITY_EXAMPLE)
        if unit == "%":
            num = num / 100
        elif unit != "":
            raise UnitError(
                value, f"unknown unit '{unit}' (only '%' is allowed)", PROBABILITY_EXAMPLE
            )
    if num > 1:
        raise UnitError(value, "is more than 1 (100%)", PROBABILITY_EXAMPLE)
    return float(num)


@dataclass(frozen=True)
class QueueSize:
    """A queue limit as written: a BDP multiple, a packet count, or a byte size."""

    kind: str  # "bdp" | "pkts" | "bytes"
    amount: Fraction | int

    def limit(self, rate_bps: int, rtt_ns: int, mtu: int) -> tuple[int | None, int | None]:
        """(limit_pkts, limit_bytes) for a link of *rate_bps* on a path of base RTT *rtt_ns*.

        BDP = rate × RTT in packets of *mtu* bytes, rounded up, at least 2 (the tcplab rule in
        docs/scenario-format.md: a drop-tail queue needs room for at least two packets so that a
        back-to-back pair is not dropped at an idle link). A BDP multiple of more packets than
        the engine's packet limit holds (2^32 − 1) is a :class:`UnitError`.
        """
        if self.kind == "pkts":
            return int(self.amount), None
        if self.kind == "bytes":
            return None, int(self.amount)
        pkts = max(2, _ceil(Fraction(self.amount) * rate_bps * rtt_ns / (8 * 10**9 * mtu)))
        if pkts > U32_MAX:
            raise UnitError(
                f"{float(self.amount):g}bdp",
                f"is {pkts} packets on this path, more than the engine can represent",
                f"a queue of at most {at_most(U32_MAX, 'packets')}",
            )
        return pkts, None


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def parse_queue(value: object) -> QueueSize:
    """A queue size: ``"bdp"``, ``"0.5bdp"``, ``"64pkt"`` or ``"256KB"``."""
    if not isinstance(value, str) or isinstance(value, bool):
        raise UnitError(value, "needs a unit", QUEUE_EXAMPLE)
    text = value.strip()
    if text.lower() == "bdp":
        return QueueSize("bdp", Fraction(1))
    num, unit = _split(value, QUEUE_EXAMPLE)
    if unit.lower() == "bdp":
        if num == 0:
            raise UnitError(value, "must be more than 0 BDP", QUEUE_EXAMPLE)
        return QueueSize("bdp", Fraction(num))
    if unit in _PACKET_UNITS:
        n = _whole(value, num, "packets", QUEUE_EXAMPLE, U32_MAX)
        if n < 1:
            raise UnitError(value, "must hold at least 1 packet", QUEUE_EXAMPLE)
        return QueueSize("pkts", n)
    if unit in _BYTE_UNITS:
        n = _whole(value, num * _BYTE_UNITS[unit], "bytes", QUEUE_EXAMPLE, U64_MAX)
        if n < 1:
            raise UnitError(value, "must hold at least 1 byte", QUEUE_EXAMPLE)
        return QueueSize("bytes", n)
    if unit == "":
        raise UnitError(value, "needs a unit ('pkt', 'B', 'KB', 'bdp', ...)", QUEUE_EXAMPLE)
    raise _unknown_unit(value, unit, ["bdp", *_PACKET_UNITS, *_BYTE_UNITS], QUEUE_EXAMPLE)


def _fmt_decimal(d: Decimal) -> str:
    s = format(d.normalize(), "f")
    return s


def _binexp(p: str) -> int:
    return {"K": 10, "M": 20, "G": 30, "T": 40}[p]


def _decexp(p: str) -> int:
    return {"K": 3, "M": 6, "G": 9, "T": 12}[p]


# ---------------------------------------------------------------------------------------------
# Formatting (canonical, exact, and parseable by the functions above)


def _format_exact(n: int, units: list[tuple[str, int]], base: str) -> str:
    for name, mult in units:
        if n != 0 and n % mult == 0:
            return f"{n // mult}{name}"
    return f"{n}{base}"


def _format_decimal_units(n: int, units_: list[tuple[str, int]], base: str) -> str:
    """*n* in the largest unit it reaches, as an exact decimal (``24_800_000`` → ``24.8ms``)."""
    for name, mult in units_:
        if n >= mult:
            return f"{_fmt_decimal(Decimal(n) / Decimal(mult))}{name}"
    return f"{n}{base}"


def format_duration(ns: int) -> str:
    """``100_000_000`` → ``"100ms"``, ``24_800_000`` → ``"24.8ms"``; exact and parseable."""
    if ns != 0 and ns % (60 * 10**9) == 0:
        return f"{ns // (60 * 10**9)}min"
    if ns == 0:
        return "0s"
    return _format_decimal_units(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3)], "ns")


def format_rate(bps: int) -> str:
    """``100_000_000`` → ``"100Mbit"``, ``5_400_000_000`` → ``"5.4Gbit"``; exact and parseable."""
    return _format_decimal_units(
        bps, [("Tbit", 10**12), ("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3)], "bit"
    )


def format_bytes(n: int) -> str:
    """``16 * 2**20`` → ``"16MiB"``, ``64000`` → ``"64KB"``; exact."""
    return _format_exact(
        n,
        [
            ("GiB", 2**30),
            ("GB", 10**9),
            ("MiB", 2**20),
            ("MB", 10**6),
            ("KiB", 2**10),
            ("KB", 10**3),
        ],
        "B",
    )


def human_rate(bps: float) -> str:
    """A rounded rate for display: ``94.2 Mbit/s``."""
    for name, mult in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(bps) >= mult:
            return f"{bps / mult:.4g} {name}"
    return f"{bps:.4g} bit/s"


def human_duration(ns: float) -> str:
    """A rounded duration for display: ``24.8 ms``."""
    if ns == 0:
        return "0 s"
    for name, mult in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= mult:
            return f"{ns / mult:.4g} {name}"
    return f"{ns:.4g} ns"
