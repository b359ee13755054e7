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
headers itself (pcap and pcapng; Ethernet with at most one VLAN tag, Linux SLL/SLL2, raw IP,
BSD loopback; IPv4, and IPv6 without extension headers) — only for receiver-side captures,
once per capture. One Python step per record finds the records; the headers are then read
with numpy over all packets at once (a 60-s, 100 Mbit/s capture is ~780,000 packets).
"""

from __future__ import annotations

import ipaddress
import struct
from pathlib import Path
from typing import Any

import numpy as np

# LINKTYPE_* (tcpdump.org link-layer header types) -> bytes before the network header
_L2 = {1: 14, 0: 4, 108: 4, 101: 0, 12: 0, 14: 0, 228: 0, 229: 0, 113: 16, 276: 20}
_ETHERNET = 1


def _index(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(time ns, linktype, frame offset in *data*, captured length) of every packet record of
    a pcap or pcapng file's bytes."""
    ts: list[int] = []
    lts: list[int] = []
    offs: list[int] = []
    lens: list[int] = []
    magic = data[:4]
    pcap = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000)}
    pcap |= {b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
    if len(data) >= 24 and magic in pcap:
        e, mul = pcap[magic]
        linktype = struct.unpack_from(e + "I", data, 20)[0] & 0x0FFFFFFF
        # the record headers are found one by one (each gives the next one's offset) and
        # read all at once
        unpack = struct.Struct(e + "I").unpack_from
        append = offs.append
        off, n = 24, len(data) - 16
        while off <= n:
            append(off)
            off += 16 + unpack(data, off + 8)[0]
        h = np.asarray(offs, dtype=np.int64)
        raw = np.frombuffer(data, dtype=np.uint8)
        # (seconds, fraction, captured length) of every record: gathered byte-wise (a record
        # header is 4-byte aligned only when every captured length before it is)
        hdr = raw[h[:, None] + np.arange(12)].copy().view(np.dtype(e + "u4")).reshape(len(h), 3)
        t = hdr[:, 0].astype(np.int64) * 1_000_000_000 + hdr[:, 1].astype(np.int64) * mul
        return t, np.full(len(h), linktype, dtype=np.int64), h + 16, hdr[:, 2].astype(np.int64)
    elif magic == b"\x0a\x0d\x0d\x0a":  # pcapng: section header, interfaces, packets
        off, e = 0, "<"
        ifaces: list[tuple[int, int]] = []  # (linktype, ns per tick)
        while off + 12 <= len(data):
            btype = struct.unpack_from(e + "I", data, off)[0]
            if btype == 0x0A0D0D0A:
                e = "<" if data[off + 8 : off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                ifaces = []
            blen = struct.unpack_from(e + "I", data, off + 4)[0]
            if blen < 12:
                break
            if btype == 1 and blen >= 20:  # interface description
                lt = struct.unpack_from(e + "H", data, off + 8)[0]
                ifaces.append((lt, _if_tsresol(data[off + 16 : off + blen - 4], e)))
            elif btype == 6 and blen >= 32:  # enhanced packet
                ifid, hi, lo, incl = struct.unpack_from(e + "IIII", data, off + 8)
                if ifid < len(ifaces):
                    lt, res = ifaces[ifid]
                    ts.append(((hi << 32) | lo) * res)
                    lts.append(lt)
                    offs.append(off + 28)
                    lens.append(incl)
            off += blen
    else:
        raise ValueError("not a pcap or pcapng file")
    return (
        np.asarray(ts, dtype=np.int64),
        np.asarray(lts, dtype=np.int64),
        np.asarray(offs, dtype=np.int64),
        np.asarray(lens, dtype=np.int64),
    )


def _if_tsresol(opts: bytes, e: str) -> int:
    """ns per timestamp tick of a pcapng interface (option if_tsresol, default microseconds)."""
    o = 0
    while o + 4 <= len(opts):
        code, ln = struct.unpack_from(e + "HH", opts, o)
        if code == 0:
            break
        if code == 9 and ln >= 1:
            v = opts[o + 4]
            return max(1, round(1e9 / (2 ** (v & 0x7F) if v & 0x80 else 10 ** (v & 0x7F))))
        o += 4 + ((ln + 3) & ~3)
    return 1000


def _endpoint(s: str) -> tuple[bytes, int]:
    """'10.0.0.1:5001' or '[fd00::1]:5001' -> (packed address, port)."""
    host, _, port = s.rpartition(":")
    return ipaddress.ip_address(host.strip("[]")).packed, int(port)


class _Packets:
    """The TCP headers of every record, read with numpy (fields of non-TCP records are
    meaningless and masked out by :attr:`tcp`)."""

    def __init__(self, data: bytes) -> None:
        self.t, lt, off, ln = _index(data)
        # zero padding past the end: a header read beyond a short last record stays in range
        # (such reads are masked out by the captured lengths)
        self.buf = np.frombuffer(data + bytes(256), dtype=np.uint8)
        end = off + ln
        lut = np.full(512, -1, dtype=np.int64)
        for k, v in _L2.items():
            lut[k] = v
        l2 = np.where(lt < len(lut), lut[np.clip(lt, 0, len(lut) - 1)], -1)
        ok = l2 >= 0
        ip = off + np.maximum(l2, 0)
        eth = lt == _ETHERNET
        et = self._u16(off + 12)
        vlan = eth & ((et == 0x8100) | (et == 0x88A8))
        ip = np.where(vlan, ip + 4, ip)
        et = np.where(vlan, self._u16(off + 16), et)
        ok &= ~eth | (et == 0x0800) | (et == 0x86DD)
        ver = self._u8(ip) >> 4
        v4, v6 = ok & (ver == 4), ok & (ver == 6)
        ihl = (self._u8(ip) & 0x0F) * 4
        proto = np.where(v4, self._u8(ip + 9), self._u8(ip + 6))
        tcp = np.where(v4, ip + ihl, ip + 40)
        ip_payload = np.where(v4, self._u16(ip + 2) - ihl, self._u16(ip + 4))
        self.v4 = v4
        self.ip = ip
        self.th = tcp
        self.tcp = (v4 | v6) & (proto == 6) & (tcp + 20 <= end)
        self.sport = self._u16(tcp)
        self.dport = self._u16(tcp + 2)
        doff = (self._u8(tcp + 12) >> 4) * 4
        self.plen = ip_payload - doff
        self.opt_end = np.minimum(tcp + doff, end)

    def _u8(self, idx: np.ndarray) -> np.ndarray:
        # indices are never negative and at most ~200 bytes past a record's start
        return self.buf[np.minimum(idx, len(self.buf) - 1)].astype(np.int64)

    def _u16(self, idx: np.ndarray) -> np.ndarray:
        return (self._u8(idx) << 8) | self._u8(idx + 1)

    def _u32(self, idx: np.ndarray) -> np.ndarray:
        return (self._u16(idx) << 16) | self._u16(idx + 2)

    def direction(self, src: tuple[bytes, int], dst: tuple[bytes, int]) -> np.ndarray:
        """Mask of the TCP packets from *src* to *dst* (address, port)."""
        m = self.tcp & (self.sport == src[1]) & (self.dport == dst[1])
        for addr, at in ((src[0], 12), (dst[0], 16)):
            if len(addr) == 4:
                base, m = self.ip + at, m & self.v4
            else:
                base, m = self.ip + (8 if at == 12 else 24), m & ~self.v4
            for k, byte in enumerate(addr):
                m &= self._u8(base + k) == byte
        return m

    def timestamps(self, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(has the option, TSval, TSecr) of the packets *sel* (indices): the option list is
        walked as TCP does (RFC 9293 §3.1: kind 0 ends it, kind 1 is one byte, the others
        carry their length); the timestamp option is kind 8, length 10 (RFC 7323 §3)."""
        pos = self.th[sel] + 20
        end = self.opt_end[sel]
        found = np.full(len(sel), -1, dtype=np.int64)
        active = pos < end
        for _ in range(40):  # at most 40 bytes of options
            if not active.any():
                break
            k, ln = self._u8(pos), self._u8(pos + 1)
            is_ts = active & (k == 8) & (ln == 10) & (pos + 10 <= end)
            found = np.where(is_ts, pos, found)
            active &= ~is_ts & (k != 0) & ((k == 1) | (ln >= 2))
            pos = np.where(active, pos + np.where(k == 1, 1, ln), pos)
            active &= pos < end
        has = found >= 0
        return has, self._u32(found + 2), self._u32(found + 6)


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
    pk = _Packets(Path(capture).read_bytes())
    for c in conns:
        a, b = _endpoint(c["a"]), _endpoint(c["b"])
        side = {}
        for name, src, dst in (("a2b", a, b), ("b2a", b, a)):
            sel = np.flatnonzero(pk.direction(src, dst))
            has, tsval, tsecr = pk.timestamps(sel)
            sel, tsval, tsecr = sel[has], tsval[has], tsecr[has]
            side[name] = (pk.t[sel], tsval, tsecr, pk.plen[sel] > 0)
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
