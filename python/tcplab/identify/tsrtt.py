"""RTT samples at a receiver-side capture point from TCP timestamps (RFC 7323).

Near the receiver the analyzer (crates/tcplab-trace) has no RTT samples: its ACK-based samples
there measure the receiver's own ACK delay. TCP timestamps give the round trip all the same
(Veal, Li & Lowekamp, "New methods for passive estimation of TCP round-trip times", PAM 2005,
§3): the receiver's ACK leaves with TSval = v; the sender echoes the most recent TSval it has
received (RFC 7323 §4.3: TS.Recent is updated by every in-window ACK, and pure ACKs always are
in window) in the TSecr of the data it sends next, which reaches the capture point one round
trip after that ACK left. A sample is the arrival of the first data segment echoing a new v
minus the first departure of an ACK carrying v: the full path RTT, queueing included, with an
error of at most one tick of the receiver's timestamp clock (1 ms on Linux) upwards, and of
the sender's own delay (pacing, a window that does not open) upwards too.

The analyzer's series do not carry the option values; ``tcplab._core.capture_timestamps``
(crates/tcplab-trace, ``analysis::timestamps``) reads them from the capture with the analyzer's
own reader, decoder and connection tracking: per connection of the report and direction, the
capture time, TSval, TSecr and whether the segment carries data, of every segment with the
option. This module keeps only the pairing rule above, and the rate of each side's timestamp
clock (:func:`clock_rate`: a personality's HZ shows in every TSval); it reads the capture once
more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _columns(raw: tuple[bytes, bytes, bytes, bytes]) -> tuple[np.ndarray, ...]:
    """(capture time ns, TSval, TSecr, carries data) of one direction: read-only views of the
    binding's bytes (native byte order, bytes 0/1 for the flag; ``frombuffer`` copies nothing)."""
    t, val, ecr, data = raw
    return (
        np.frombuffer(t, dtype=np.int64),
        np.frombuffer(val, dtype=np.uint32),
        np.frombuffer(ecr, dtype=np.uint32),
        np.frombuffer(data, dtype=np.bool_),
    )


def _read(capture: str | Path) -> list[Any]:
    """``capture_timestamps`` of *capture*: one ``(a2b, b2a)`` per connection of the report."""
    from .. import trace
    from ..errors import EngineUnavailable

    core = trace._core()
    if not hasattr(core, "capture_timestamps"):
        raise EngineUnavailable(
            "this build of tcplab._core has no capture_timestamps; rebuild it (maturin develop)"
        )
    try:
        return list(core.capture_timestamps(str(capture)))
    except (OSError, ValueError) as e:
        raise trace.TraceError(str(e)) from e


def _pair(
    t_ack: np.ndarray, tsval: np.ndarray, t_data: np.ndarray, tsecr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(arrival times, RTT samples) from one side's TSvals (*t_ack*, *tsval*: every packet
    of the ACKing side that carries the option) and the other side's data echoing them."""
    if not len(tsval) or not len(tsecr):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    u, first = np.unique(tsval, return_index=True)  # the first departure of each TSval
    j = np.clip(np.searchsorted(u, tsecr), 0, len(u) - 1)
    known = u[j] == tsecr
    td, ecr, j = t_data[known], tsecr[known], j[known]
    # the first data segment echoing a newer TSval than any before it (a 32-bit wrap of the
    # receiver's clock within one transfer ends the samples early; not handled)
    prev = np.concatenate([[-1], np.maximum.accumulate(ecr)[:-1]]) if len(ecr) else ecr
    new = ecr > prev
    return td[new], td[new] - t_ack[first[j[new]]]


def _per_conn(report: dict[str, Any], capture: str | Path) -> list[Any]:
    per_conn = _read(capture)
    for c in report.get("connections", []):
        if c["index"] >= len(per_conn):
            raise ValueError(
                f"{capture} has {len(per_conn)} connections, the report a connection "
                f"{c['index']}: not the report of this capture"
            )
    return per_conn


def attach(
    report: dict[str, Any],
    capture: str | Path,
    time_to: float | None = None,
    per_conn: list[Any] | None = None,
) -> None:
    """Add to every direction of every connection of *report* (``trace.analyze`` of *capture*)
    the timestamp RTT samples as the receiver of that direction sees them: ``ts_rtt_t``
    (arrival times, s, on the report's clock) and ``ts_rtt_ms``; empty without timestamps.
    Near the sender the same pairing measures only the sender's turnaround and is not used
    (features.extract reads these at a receiver-side capture point only). *per_conn*: the
    columns already read (``_per_conn``)."""
    conns = report.get("connections", [])
    if not conns:
        return
    per_conn = per_conn if per_conn is not None else _per_conn(report, capture)
    for c in conns:
        side = dict(zip(("a2b", "b2a"), map(_columns, per_conn[c["index"]]), strict=True))
        origin = int(c["first_ts_ns"]) - round(float(c["first_s"]) * 1e9)
        for name, other in (("a2b", "b2a"), ("b2a", "a2b")):
            t_d, _, ecr, data = side[name]
            t_a, val, _, _ = side[other]
            ta, rtt = _pair(t_a, val, t_d[data], ecr[data])
            ta_s = (ta - origin) / 1e9
            keep = ta_s <= time_to if time_to is not None else np.ones(len(ta_s), bool)
            c[name]["ts_rtt_t"] = ta_s[keep]
            c[name]["ts_rtt_ms"] = rtt[keep] / 1e6


#: Shortest stretch of a direction's TSvals (s, between the medians of its first and last
#: quarter) over which :func:`clock_rate` fits a rate.
CLOCK_MIN_SPAN_S = 0.5


def clock_rate(t_ns: np.ndarray, tsval: np.ndarray) -> float | None:
    """The rate (Hz) of the timestamp clock that stamped *tsval* at capture times *t_ns*, or
    None (fewer than 20 values, a span under :data:`CLOCK_MIN_SPAN_S`, or a clock that did not
    advance).

    RFC 7323 §5.4 leaves the clock's rate to the host (1 ms to 1 s per tick), and stacks take
    it from their system tick: Linux's jiffies before 4.13 (HZ 100, 250 or 1000), 1 ms since
    (TCP_TS_HZ), the BSDs' slow timer or hz. The initial value is arbitrary (Linux adds a
    random offset per connection since 4.10), so only the rate is read: the slope between the
    medians (capture time, TSval) of the first and the last quarter of the span. Medians, not
    a least-squares fit, because at a receiver-side capture point the sender's stamps arrive
    late by a queueing delay that varies over the transfer, and an outlier (a retransmission
    that waited in a queue) moves a median little. The values are unwrapped (a 32-bit clock
    wraps, §5.2) from the packet-to-packet steps, taken as signed 32-bit differences (a step
    backwards is a reordered or retransmitted packet's older stamp, not a wrap)."""
    if len(tsval) < 20:
        return None
    order = np.argsort(t_ns, kind="stable")
    t = t_ns[order].astype(np.float64) / 1e9
    steps = np.diff(tsval[order].astype(np.int64)) % (1 << 32)
    steps = np.where(steps >= (1 << 31), steps - (1 << 32), steps)
    v = np.concatenate([[0], np.cumsum(steps)]).astype(np.float64)
    t0, t1 = t[0], t[-1]
    q = (t1 - t0) / 4
    lo, hi = t <= t0 + q, t >= t1 - q
    tl, th = float(np.median(t[lo])), float(np.median(t[hi]))
    if th - tl < CLOCK_MIN_SPAN_S:
        return None
    rate = (float(np.median(v[hi])) - float(np.median(v[lo]))) / (th - tl)
    return rate if rate > 0 else None


def attach_clocks(report: dict[str, Any], per_conn: list[Any], time_to: float | None) -> None:
    """Add ``ts_hz`` (:func:`clock_rate` of the TSvals that direction sent up to *time_to*, s
    on the report's clock; None without the option) to both directions of every connection of
    *report*."""
    for c in report.get("connections", []):
        origin = int(c["first_ts_ns"]) - round(float(c["first_s"]) * 1e9)
        for name, raw in zip(("a2b", "b2a"), per_conn[c["index"]], strict=True):
            t, val, _, _ = _columns(raw)
            if time_to is not None:
                keep = t <= origin + round(time_to * 1e9)
                t, val = t[keep], val[keep]
            c[name]["ts_hz"] = clock_rate(t, val)


def analyze(capture: str | Path, time_to: float | None = None) -> dict[str, Any]:
    """``trace.analyze(capture, time_to=..., graphs=True)``, with each direction's timestamp
    clock rate (:func:`attach_clocks`) and, when the largest transfer was captured near its
    receiver, the timestamp RTT samples (:func:`attach`); the option values are read once."""
    from .. import trace
    from .features import choose_connection, vantage

    rep = trace.analyze(capture, time_to=time_to, graphs=True)
    conns = rep.get("connections", [])
    if conns:
        try:
            ci, dname = choose_connection(rep, None)
        except ValueError:
            return rep
        per_conn = _per_conn(rep, capture)
        attach_clocks(rep, per_conn, time_to)
        c = next(x for x in conns if x["index"] == ci)
        rname = "b2a" if dname == "a2b" else "a2b"
        if (
            "series" in c[dname]
            and vantage(c[dname]["series"], c[rname]["series"])[0] == "receiver"
        ):
            attach(rep, capture, time_to, per_conn)
    return rep
