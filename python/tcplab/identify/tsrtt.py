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
option. This module keeps only the pairing rule above; it reads the capture once more, for
receiver-side captures only.
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


def attach(report: dict[str, Any], capture: str | Path, time_to: float | None = None) -> None:
    """Add to every direction of every connection of *report* (``trace.analyze`` of *capture*)
    the timestamp RTT samples as the receiver of that direction sees them: ``ts_rtt_t``
    (arrival times, s, on the report's clock) and ``ts_rtt_ms``; empty without timestamps.
    Near the sender the same pairing measures only the sender's turnaround and is not used
    (features.extract reads these at a receiver-side capture point only)."""
    conns = report.get("connections", [])
    if not conns:
        return
    per_conn = _read(capture)
    for c in conns:
        if c["index"] >= len(per_conn):
            raise ValueError(
                f"{capture} has {len(per_conn)} connections, the report a connection "
                f"{c['index']}: not the report of this capture"
            )
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


def analyze(capture: str | Path, time_to: float | None = None) -> dict[str, Any]:
    """``trace.analyze(capture, time_to=..., graphs=True)``, with the timestamp RTT samples
    (:func:`attach`) when the largest transfer was captured near its receiver."""
    from .. import trace
    from .features import choose_connection, vantage

    rep = trace.analyze(capture, time_to=time_to, graphs=True)
    conns = rep.get("connections", [])
    if conns:
        try:
            ci, dname = choose_connection(rep, None)
        except ValueError:
            return rep
        c = next(x for x in conns if x["index"] == ci)
        rname = "b2a" if dname == "a2b" else "a2b"
        if (
            "series" in c[dname]
            and vantage(c[dname]["series"], c[rname]["series"])[0] == "receiver"
        ):
            attach(rep, capture, time_to)
    return rep
