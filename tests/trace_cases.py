"""Hand-built TCP conversations for the trace tests (written with ``_core.write_tcp_capture``).

Each case function returns the list of packet dicts (``t_ns`` since the epoch, ``src``/``dst``,
ports, ``seq``/``ack`` as 32-bit numbers, ``flags``, ``win``, ``len`` and options). Sequence
offsets are relative to each side's initial sequence number: the SYN is offset 0, the first data
byte 1.
"""

from __future__ import annotations

from typing import Any

MOD = 2**32
#: Capture start (ns since the epoch). Real captures never start at time 0, and tcptrace treats a
#: timestamp of exactly 0 as "unset".
T0_NS = 1_700_000_000 * 10**9


class Conv:
    """Packets of one connection between A (who sends the SYN) and B."""

    def __init__(
        self,
        a: str = "10.0.0.1",
        b: str = "10.0.0.2",
        aport: int = 40000,
        bport: int = 5001,
        isn_a: int = 1000,
        isn_b: int = 900_000,
    ) -> None:
        self.A, self.B, self.aport, self.bport = a, b, aport, bport
        self.isn_a, self.isn_b = isn_a % MOD, isn_b % MOD
        self.packets: list[dict[str, Any]] = []

    def _pkt(
        self,
        from_a: bool,
        t: float,
        off: int,
        ack: int | None,
        flags: str,
        n: int,
        win: int,
        **opts: Any,
    ) -> None:
        if ack is not None and "A" not in flags:
            flags += "A"
        p: dict[str, Any] = {
            "t_ns": T0_NS + round(t * 1e9),
            "src": self.A if from_a else self.B,
            "dst": self.B if from_a else self.A,
            "sport": self.aport if from_a else self.bport,
            "dport": self.bport if from_a else self.aport,
            "seq": ((self.isn_a if from_a else self.isn_b) + off) % MOD,
            "ack": 0 if ack is None else ((self.isn_b if from_a else self.isn_a) + ack) % MOD,
            "flags": flags,
            "win": win,
            "len": n,
        }
        if "sack" in opts:
            base = self.isn_b if from_a else self.isn_a
            opts["sack"] = [
                ((base + left) % MOD, (base + right) % MOD) for left, right in opts["sack"]
            ]
        p.update(opts)
        self.packets.append(p)

    def a(
        self,
        t: float,
        off: int,
        ack: int | None = None,
        flags: str = "",
        n: int = 0,
        win: int = 65535,
        **opts: Any,
    ) -> None:
        """A packet from A: sequence offset *off*, acknowledging B's offset *ack*."""
        self._pkt(True, t, off, ack, flags, n, win, **opts)

    def b(
        self,
        t: float,
        off: int,
        ack: int | None = None,
        flags: str = "",
        n: int = 0,
        win: int = 65535,
        **opts: Any,
    ) -> None:
        """A packet from B."""
        self._pkt(False, t, off, ack, flags, n, win, **opts)

    def handshake(
        self,
        t: float,
        rtt: float,
        *,
        ws: tuple[int | None, int | None] = (None, None),
        sack: bool = False,
        mss: int = 1460,
        win: int = 65535,
    ) -> float:
        """SYN, SYN/ACK, ACK as seen at A; returns the time of A's ACK."""
        o_a: dict[str, Any] = {"mss": mss, "sackok": sack}
        o_b: dict[str, Any] = {"mss": mss, "sackok": sack}
        if ws[0] is not None:
            o_a["ws"] = ws[0]
        if ws[1] is not None:
            o_b["ws"] = ws[1]
        self.a(t, 0, None, "S", win=win, **o_a)
        self.b(t + rtt, 0, 1, "S", win=win, **o_b)
        self.a(t + rtt, 1, 1, win=win)
        return t + rtt


def by_time(*convs: Conv) -> list[dict[str, Any]]:
    pk = [p for c in convs for p in c.packets]
    return sorted(pk, key=lambda p: p["t_ns"])  # stable: equal times keep their order


# ------------------------------------------------------------------------------------------------


def basic_transfer() -> list[dict[str, Any]]:
    """Handshake, 20 segments, delayed ACKs (every second segment, 200 ms for a last odd one),
    FIN exchange; sender-side capture, RTT 50 ms."""
    c = Conv()
    t = c.handshake(0.0, 0.05, sack=True)
    mss = 1000
    for i in range(21):
        ts = t + 0.001 + i * 0.004
        c.a(ts, 1 + i * mss, 1, "P" if i % 5 == 4 else "", n=mss)
        if i % 2 == 1:
            c.b(ts + 0.05, 1, 1 + (i + 1) * mss, win=30000)
    last = t + 0.001 + 20 * 0.004
    c.b(last + 0.2, 1, 1 + 21 * mss, win=30000)  # delayed ACK for the odd last segment
    end = 1 + 21 * mss
    c.a(last + 0.3, end, 1, "F")
    c.b(last + 0.35, 1, end + 1, "F", win=30000)
    c.a(last + 0.35, end + 1, 2)
    return by_time(c)


def losses_and_retransmissions() -> list[dict[str, Any]]:
    """Fast retransmit after three duplicate ACKs (with SACK blocks), an RTO retransmission that
    repacketizes two lost segments with new data, a partial retransmission, and a spurious
    retransmission of acknowledged data answered by a D-SACK."""
    c = Conv(isn_a=123_456_789, isn_b=42)
    t = c.handshake(0.0, 0.04, sack=True)
    m = 1000
    seg = lambda i: 1 + i * m  # noqa: E731 - offset of segment i
    # Segments 0..9 at 2 ms spacing; segment 3 is lost downstream.
    for i in range(10):
        c.a(t + 0.002 * (i + 1), seg(i), 1, n=m)
    for i in range(10):
        ts = t + 0.002 * (i + 1) + 0.04
        if i < 3:
            c.b(ts, 1, seg(i + 1))
        elif i > 3:  # duplicate ACKs for segment 3, SACKing what arrived
            c.b(ts, 1, seg(3), sack=[(seg(4), seg(i + 1))])
    t2 = t + 0.002 * 7 + 0.04
    c.a(t2 + 0.0001, seg(3), 1, n=m)  # fast retransmit
    c.b(t2 + 0.0401, 1, seg(10))
    # Segments 10..13; 11 and 12 are lost; RTO after 1 s resends 11-12 as one 2000-byte segment,
    # then a partial retransmission of 13's first half with 500 new bytes... of 14.
    t3 = t2 + 0.05
    for i in range(10, 14):
        c.a(t3 + 0.002 * (i - 9), seg(i), 1, n=m)
    c.b(t3 + 0.002 + 0.04, 1, seg(11))
    c.b(t3 + 0.008 + 0.04, 1, seg(11), sack=[(seg(13), seg(14))])
    t4 = t3 + 1.0
    c.a(t4, seg(11), 1, n=2 * m)  # RTO, repacketized
    c.b(t4 + 0.04, 1, seg(14))
    c.a(t4 + 0.05, seg(13) + 500, 1, n=m)  # 500 bytes already sent, 500 new
    c.a(t4 + 0.051, seg(14) + 500, 1, n=m)
    c.b(t4 + 0.091, 1, seg(15) + 500)
    # A lone segment lost and resent on timeout: its ACK is ambiguous (Karn).
    c.a(t4 + 0.092, seg(15) + 500, 1, n=m)
    c.a(t4 + 0.5, seg(15) + 500, 1, n=m)
    c.b(t4 + 0.54, 1, seg(16) + 500)
    # Spurious retransmission of segment 2 (acknowledged long ago): D-SACK answers it.
    c.a(t4 + 0.6, seg(2), 1, n=m)
    c.b(t4 + 0.64, 1, seg(16) + 500, sack=[(seg(2), seg(3))])
    end = seg(16) + 500
    c.a(t4 + 0.7, end, 1, "F")
    c.b(t4 + 0.74, 1, end + 1, "F")
    c.a(t4 + 0.74, end + 1, 2)
    return by_time(c)


def sequence_wrap() -> list[dict[str, Any]]:
    """Data across the 2^32 wrap: a segment spanning it, retransmissions on both sides of it,
    ACKs before and after it."""
    c = Conv(isn_a=MOD - 2500, isn_b=MOD - 1)
    t = c.handshake(0.0, 0.03, ws=(4, 4), sack=True)
    m = 1000
    for i in range(8):
        c.a(t + 0.001 * (i + 1), 1 + i * m, 1, n=m, win=4000)
    # Segment 2 ([2001, 3001): spans the wrap at offset 2500) is lost; segment 5 too.
    for i in range(8):
        ts = t + 0.001 * (i + 1) + 0.03
        if i < 2:
            c.b(ts, 1, 1 + (i + 1) * m, win=4000)
        elif i > 2 and i != 5:
            c.b(ts, 1, 2001, win=4000)
    t2 = t + 0.045
    c.a(t2, 2001, 1, n=m, win=4000)
    c.b(t2 + 0.03, 1, 5001, win=4000)
    c.a(t2 + 0.031, 5001, 1, n=m, win=4000)
    c.b(t2 + 0.061, 1, 8001, win=4000)
    for i in range(8, 12):
        c.a(t2 + 0.062 + 0.001 * i, 1 + i * m, 1, n=m, win=4000)
        c.b(t2 + 0.092 + 0.001 * i, 1, 1 + (i + 1) * m, win=4000)
    end = 12001
    c.a(t2 + 0.2, end, 1, "F", win=4000)
    c.b(t2 + 0.23, 1, end + 1, "F", win=4000)
    c.a(t2 + 0.23, end + 1, 2, win=4000)
    return by_time(c)


def window_scaling_zero_window() -> list[dict[str, Any]]:
    """Window scaling (A shift 2, B shift 7), the receiver's window closing to zero, one-byte
    zero-window probes, the window reopening, and data continuing through the probed byte."""
    c = Conv(isn_a=3_000_000_000, isn_b=77)
    t = c.handshake(0.0, 0.02, ws=(2, 7))
    m = 1000
    for i in range(12):
        c.a(t + 0.001 * (i + 1), 1 + i * m, 1, n=m, win=1000)
    # B's application stops reading: windows 100, 60, 20, 0 (× 128 bytes).
    c.b(t + 0.022, 1, 4001, win=100)
    c.b(t + 0.026, 1, 8001, win=60)
    c.b(t + 0.030, 1, 12001, win=0)
    probe = 12001
    for k in range(3):  # persist timer: probes at 0.2, 0.4, 0.8 s
        tp = t + 0.030 + 0.2 * 2**k
        c.a(tp, probe, 1, n=1, win=1000)
        c.b(tp + 0.02, 1, probe, win=0)
    t2 = t + 1.2
    c.b(t2, 1, probe, win=200)  # window update
    for i in range(6):
        c.a(t2 + 0.001 * (i + 1), probe + i * m, 1, n=m, win=1000)
    c.b(t2 + 0.03, 1, probe + 6 * m, win=200)
    end = probe + 6 * m
    c.a(t2 + 0.1, end, 1, "F", win=1000)
    c.b(t2 + 0.12, 1, end + 1, "F", win=200)
    c.a(t2 + 0.12, end + 1, 2, win=1000)
    return by_time(c)


def receiver_side_out_of_order() -> list[dict[str, Any]]:
    """Captured at the receiver: a lost segment's retransmission arrives after later data (an
    out-of-order fill, not a retransmission, for tcptrace), and two segments swap places."""
    c = Conv(a="192.0.2.10", b="192.0.2.20", isn_a=555, isn_b=777)
    c.a(0.0, 0, None, "S", sackok=True, mss=1460)
    c.b(0.0001, 0, 1, "S", sackok=True, mss=1460)
    t = 0.05
    c.a(t, 1, 1)
    m = 1000
    arrivals = [0, 1, 2, 4, 5, 6, 3, 8, 7, 9, 10, 11]
    received: set[int] = set()
    for k, i in enumerate(arrivals):
        ta = t + 0.002 * (k + 1)
        c.a(ta, 1 + i * m, 1, n=m)
        received.add(i)
        cum = 0
        while cum in received:
            cum += 1
        above = sorted(x for x in received if x >= cum)
        sack = [(1 + above[0] * m, 1 + (above[-1] + 1) * m)] if above else None
        if sack and len(above) != above[-1] - above[0] + 1:
            sack = [(1 + i * m, 1 + (i + 1) * m)]
        opts = {"sack": sack} if sack else {}
        c.b(ta + 0.0002, 1, 1 + cum * m, **opts)
    end = 1 + 12 * m
    c.a(t + 0.1, end, 1, "F")
    c.b(t + 0.1002, 1, end + 1, "F")
    c.a(t + 0.15, end + 1, 2)
    return by_time(c)


def many_connections() -> list[dict[str, Any]]:
    """Interleaved connections: IPv6, one reset, one captured mid-stream (no SYN), and a
    four-tuple reused after a finished connection (new ISN far from the old window)."""
    v6 = Conv(a="2001:db8::1", b="2001:db8::2", aport=50000, bport=443, isn_a=10, isn_b=20)
    t = v6.handshake(0.0, 0.01)
    for i in range(5):
        v6.a(t + 0.001 * i, 1 + i * 500, 1, n=500)
    v6.b(t + 0.012, 1, 2501)
    v6.a(t + 0.02, 2501, 1, "F")
    v6.b(t + 0.03, 1, 2502, "F")
    v6.a(t + 0.03, 2502, 2)

    rst = Conv(aport=41000, bport=80, isn_a=4_000_000_000, isn_b=1)
    t = rst.handshake(0.003, 0.02)
    rst.a(t + 0.001, 1, 1, n=300)
    rst.b(t + 0.021, 1, 301, n=700)
    rst.a(t + 0.022, 301, 701)
    rst.b(t + 0.03, 701, 301, "R")

    mid = Conv(aport=42000, bport=8080, isn_a=777_777, isn_b=888_888)
    for i in range(6):
        mid.a(0.004 + 0.002 * i, 50_001 + i * 1200, 100, n=1200)
        mid.b(0.004 + 0.002 * i + 0.015, 100, 50_001 + (i + 1) * 1200, win=20000)

    first = Conv(aport=43000, bport=5001, isn_a=5000, isn_b=6000)
    t = first.handshake(0.001, 0.01)
    first.a(t + 0.001, 1, 1, n=1000)
    first.b(t + 0.011, 1, 1001)
    first.a(t + 0.02, 1001, 1, "F")
    first.b(t + 0.03, 1, 1002, "F")
    first.a(t + 0.03, 1002, 2)
    again = Conv(aport=43000, bport=5001, isn_a=2_000_000_000, isn_b=3_000_000)
    t = again.handshake(0.2, 0.01)
    again.a(t + 0.001, 1, 1, n=2000)
    again.b(t + 0.011, 1, 2001)
    return by_time(v6, rst, mid, first, again)


def anomalies() -> list[dict[str, Any]]:
    """What seed experiment J4 looks for: a sender going beyond the advertised window while SACKs
    arrive, and a receiver sending SACK blocks that cannot be valid."""
    c = Conv(isn_a=10_000, isn_b=20_000)
    t = c.handshake(0.0, 0.02, ws=(0, 0), sack=True)
    m = 1000
    c.b(t + 0.001, 1, 1, win=5000)  # window 5000 from offset 1: right edge 5001
    for i in range(5):
        c.a(t + 0.002 + 0.001 * i, 1 + i * m, 1, n=m)
    # Segment 1 lost; SACKs arrive; the sender keeps sending new data past the edge.
    c.b(t + 0.03, 1, 1001, win=5000, sack=[(2001, 3001)])  # edge 6001
    c.a(t + 0.031, 5001, 1, n=m)  # ends 6001: inside
    c.b(t + 0.032, 1, 1001, win=5000, sack=[(2001, 4001)])
    c.a(t + 0.033, 6001, 1, n=m)  # ends 7001 > 6001: beyond the window
    c.a(t + 0.034, 7001, 1, n=m)  # beyond
    c.b(t + 0.035, 1, 1001, win=5000, sack=[(4001, 2001)])  # reversed
    c.b(t + 0.036, 1, 1001, win=5000, sack=[(2001, 5001), (100, 900)])  # 2nd below the ACK
    c.b(t + 0.037, 1, 1001, win=5000, sack=[(2001, 99001)])  # beyond anything sent
    c.a(t + 0.05, 1001, 1, n=m)  # retransmission of the lost segment
    c.b(t + 0.07, 1, 8001, win=5000)
    return by_time(c)
