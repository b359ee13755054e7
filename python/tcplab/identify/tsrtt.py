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

The analyzer's series do not carry the option values, so this module reads the capture's TCP
headers itself (pcap and pcapng; Ethernet, Linux SLL/SLL2, raw IP, BSD loopback; IPv4 and
IPv6) — only for receiver-side captures, once per capture.
"""

from __future__ import annotations

import ipaddress
import struct
from pathlib import Path
from typing import Any

import numpy as np

# LINKTYPE_* (tcpdump.org link-layer header types) -> bytes before the IP header, or None for
# the ones whose length depends on the frame (handled in _ip_offset)
_ETHERNET, _NULL, _RAW, _RAW4, _RAW6, _SLL, _SLL2, _LOOP = 1, 0, 101, 228, 229, 113, 276, 108


def _ip_offset(linktype: int, frame: bytes) -> int | None:
    if linktype == _ETHERNET:
        off, et = 14, struct.unpack_from("!H", frame, 12)[0] if len(frame) >= 14 else 0
        while et in (0x8100, 0x88A8) and len(frame) >= off + 4:  # 802.1Q / QinQ tags
            et = struct.unpack_from("!H", frame, off + 2)[0]
            off += 4
        return off if et in (0x0800, 0x86DD) else None
    if linktype in (_RAW, _RAW4, _RAW6, 12, 14):
        return 0
    if linktype in (_NULL, _LOOP):
        return 4
    if linktype == _SLL:
        return 16
    if linktype == _SLL2:
        return 20
    return None


def _records(path: Path) -> Any:
    """(absolute time ns, linktype, frame bytes) for every packet record of a pcap/pcapng."""
    data = path.read_bytes()
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (
        b"\xd4\xc3\xb2\xa1",
        b"\xa1\xb2\xc3\xd4",
        b"\x4d\x3c\xb2\xa1",
        b"\xa1\xb2\x3c\x4d",
    ):
        e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
        linktype = struct.unpack_from(e + "I", data, 20)[0] & 0x0FFFFFFF
        hdr = struct.Struct(e + "IIII")
        mul = 1 if nano else 1000
        off = 24
        while off + 16 <= len(data):
            sec, frac, incl, _ = hdr.unpack_from(data, off)
            off += 16
            yield sec * 1_000_000_000 + frac * mul, linktype, data[off : off + incl]
            off += incl
        return
    if magic == b"\x0a\x0d\x0d\x0a":  # pcapng: section header, interfaces, packets
        off = 0
        e = "<"
        ifaces: list[tuple[int, int]] = []  # (linktype, ns per tick)
        while off + 12 <= len(data):
            btype = struct.unpack_from(e + "I", data, off)[0]
            if btype == 0x0A0D0D0A:
                e = "<" if data[off + 8 : off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                ifaces = []
            blen = struct.unpack_from(e + "I", data, off + 4)[0]
            if blen < 12:
                return
            body = data[off + 8 : off + blen - 4]
            if btype == 1 and len(body) >= 8:  # interface description
                lt = struct.unpack_from(e + "H", body, 0)[0]
                ifaces.append((lt, _if_tsresol(body[8:], e)))
            elif btype == 6 and len(body) >= 20:  # enhanced packet
                ifid, hi, lo, incl = struct.unpack_from(e + "IIII", body, 0)
                if ifid < len(ifaces):
                    lt, res = ifaces[ifid]
                    yield ((hi << 32) | lo) * res, lt, body[20 : 20 + incl]
            off += blen
        return
    raise ValueError("not a pcap or pcapng file")


def _if_tsresol(opts: bytes, e: str) -> int:
    """ns per timestamp tick of a pcapng interface (option if_tsresol, default microseconds)."""
    o = 0
    while o + 4 <= len(opts):
        code, ln = struct.unpack_from(e + "HH", opts, o)
        if code == 0:
            break
        if code == 9 and ln >= 1:
            v = opts[o + 4]
            if v & 0x80:
                return max(1, round(1e9 / 2 ** (v & 0x7F)))
            return max(1, round(1e9 / 10 ** (v & 0x7F)))
        o += 4 + ((ln + 3) & ~3)
    return 1000


def _endpoint(s: str) -> tuple[bytes, int]:
    """'10.0.0.1:5001' or '[fd00::1]:5001' -> (packed address, port)."""
    host, _, port = s.rpartition(":")
    return ipaddress.ip_address(host.strip("[]")).packed, int(port)


def _tcp(frame: bytes, linktype: int) -> tuple[bytes, bytes, int, int, int, bytes] | None:
    """(src, dst, sport, dport, payload length, TCP options) of a TCP frame, else None."""
    off = _ip_offset(linktype, frame)
    if off is None or len(frame) < off + 20:
        return None
    v = frame[off] >> 4
    if v == 4:
        ihl = (frame[off] & 0x0F) * 4
        if frame[off + 9] != 6:
            return None
        total = struct.unpack_from("!H", frame, off + 2)[0]
        src, dst = frame[off + 12 : off + 16], frame[off + 16 : off + 20]
        t = off + ihl
        ip_payload = total - ihl
    elif v == 6:
        if len(frame) < off + 40 or frame[off + 6] != 6:  # no extension headers
            return None
        ip_payload = struct.unpack_from("!H", frame, off + 4)[0]
        src, dst = frame[off + 8 : off + 24], frame[off + 24 : off + 40]
        t = off + 40
    else:
        return None
    if len(frame) < t + 20:
        return None
    sport, dport = struct.unpack_from("!HH", frame, t)
    doff = (frame[t + 12] >> 4) * 4
    return src, dst, sport, dport, ip_payload - doff, frame[t + 20 : t + doff]


def _tsopt(opts: bytes) -> tuple[int, int] | None:
    """(TSval, TSecr) of a TCP option list (RFC 7323 §3: kind 8, length 10)."""
    i = 0
    while i < len(opts):
        k = opts[i]
        if k == 0:
            return None
        if k == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            return None
        if k == 8 and opts[i + 1] == 10 and i + 10 <= len(opts):
            return struct.unpack_from("!II", opts, i + 2)  # type: ignore[return-value]
        i += opts[i + 1]
    return None


def attach(report: dict[str, Any], capture: str | Path, time_to: float | None = None) -> None:
    """Add to every direction of every connection of *report* (``trace.analyze`` of *capture*)
    the timestamp RTT samples as the receiver of that direction sees them: ``ts_rtt_t``
    (arrival times, s, on the report's clock) and ``ts_rtt_ms``; empty without timestamps.
    Near the sender the same pairing measures only the sender's turnaround and is not used
    (features.extract reads these at a receiver-side capture point only)."""
    conns = report.get("connections", [])
    if not conns:
        return
    keys: dict[tuple[bytes, int, bytes, int], tuple[int, str]] = {}
    for i, c in enumerate(conns):
        a, b = _endpoint(c["a"]), _endpoint(c["b"])
        keys[(a[0], a[1], b[0], b[1])] = (i, "a2b")
        keys[(b[0], b[1], a[0], a[1])] = (i, "b2a")
    first_sent: dict[tuple[int, str], dict[int, int]] = {k: {} for k in keys.values()}
    last_ecr = dict.fromkeys(keys.values(), -1)
    samples: dict[tuple[int, str], tuple[list[int], list[int]]] = {
        k: ([], []) for k in keys.values()
    }
    rev = {"a2b": "b2a", "b2a": "a2b"}
    for t, lt, frame in _records(Path(capture)):
        p = _tcp(frame, lt)
        if p is None:
            continue
        src, dst, sp, dp, plen, opts = p
        d = keys.get((src, sp, dst, dp))
        if d is None:
            continue
        ts = _tsopt(opts)
        if ts is None:
            continue
        # as the ACKing side of the other direction: the first departure of each TSval
        fs = first_sent[(d[0], rev[d[1]])]
        if ts[0] not in fs:
            fs[ts[0]] = t
        if plen > 0:
            # as data: the first segment echoing a newer TSval of the other side (a 32-bit
            # wrap within one transfer ends the samples early; not handled)
            ecr = ts[1]
            if ecr > last_ecr[d] and ecr in first_sent[d]:
                samples[d][0].append(t)
                samples[d][1].append(t - first_sent[d][ecr])
                last_ecr[d] = ecr
    for (i, dname), (ts_, rs_) in samples.items():
        c = conns[i]
        origin = int(c["first_ts_ns"]) - round(float(c["first_s"]) * 1e9)
        ta = (np.asarray(ts_, dtype=np.int64) - origin) / 1e9
        rm = np.asarray(rs_, dtype=float) / 1e6
        if time_to is not None:
            keep = ta <= time_to
            ta, rm = ta[keep], rm[keep]
        c[dname]["ts_rtt_t"] = ta
        c[dname]["ts_rtt_ms"] = rm


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
