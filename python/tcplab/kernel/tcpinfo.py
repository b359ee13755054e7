"""TCP_INFO of every TCP socket of a network namespace, through NETLINK_SOCK_DIAG (what ``ss -ti``
uses), without spawning a process per sample.

Layouts are the kernel's user-space ABI: ``struct nlmsghdr`` (include/uapi/linux/netlink.h),
``struct inet_diag_req_v2`` / ``inet_diag_msg`` and the ``INET_DIAG_*`` attributes
(include/uapi/linux/inet_diag.h), ``struct tcp_info`` (include/uapi/linux/tcp.h; fields are only
ever appended, so the offsets below hold for every kernel that returns at least that many bytes —
later fields are ``None`` when the kernel's struct is shorter).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

__all__ = ["TCP_INFO_FIELDS", "DiagSocket", "SockSample", "build_request", "parse_dump"]

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
INET_DIAG_INFO = 2
INET_DIAG_CONG = 4
# Every TCP state except LISTEN (10), SYN_RECV (3) and TIME_WAIT (6): connections with data.
STATES = sum(1 << s for s in (1, 2, 4, 5, 7, 8, 9, 11))

# name → (offset, struct format) in struct tcp_info.
TCP_INFO_FIELDS: dict[str, tuple[int, str]] = {
    "state": (0, "B"),
    "ca_state": (1, "B"),
    "retransmits": (2, "B"),
    "backoff": (4, "B"),
    "rto_us": (8, "I"),
    "ato_us": (12, "I"),
    "snd_mss": (16, "I"),
    "rcv_mss": (20, "I"),
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "pmtu": (60, "I"),
    "rcv_ssthresh": (64, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "advmss": (84, "I"),
    "reordering": (88, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    "segs_out": (136, "I"),
    "segs_in": (140, "I"),
    "notsent_bytes": (144, "I"),
    "min_rtt_us": (148, "I"),
    "data_segs_in": (152, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "delivered": (192, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "dsack_dups": (216, "I"),
    "snd_wnd": (228, "I"),
    "rcv_wnd": (232, "I"),
    "total_rto": (240, "H"),
    "total_rto_recoveries": (242, "H"),
}
FIELD_NAMES = tuple(TCP_INFO_FIELDS)


@dataclass
class SockSample:
    src: str
    sport: int
    dst: str
    dport: int
    state: int
    cong: str | None
    info: dict[str, int | None]


def build_request(seq: int = 1, family: int = socket.AF_INET) -> bytes:
    """A dump request for all TCP sockets of *family* with TCP_INFO and the CCA name."""
    ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1))
    # inet_diag_req_v2: family, protocol, ext, pad, states, then a zero inet_diag_sockid (48 B).
    req = struct.pack("=BBBxI", family, socket.IPPROTO_TCP, ext, STATES) + bytes(48)
    hdr = struct.pack(
        "=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq, 0
    )
    return hdr + req


def parse_tcp_info(raw: bytes) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for name, (off, fmt) in TCP_INFO_FIELDS.items():
        size = struct.calcsize(fmt)
        out[name] = struct.unpack_from("=" + fmt, raw, off)[0] if off + size <= len(raw) else None
    return out


V4_MAPPED = bytes(10) + b"\xff\xff"


def _addr(family: int, raw: bytes) -> str:
    """IPv4 address text; IPv6 sockets (iperf3 listens on ::) carry IPv4 as ::ffff:a.b.c.d."""
    if family == socket.AF_INET:
        return socket.inet_ntop(socket.AF_INET, raw[:4])
    if raw[:12] == V4_MAPPED:
        return socket.inet_ntop(socket.AF_INET, raw[12:16])
    return socket.inet_ntop(socket.AF_INET6, raw[:16])


def parse_dump(buf: bytes) -> tuple[list[SockSample], bool]:
    """Parse one recv() worth of netlink messages; returns (sockets, done)."""
    socks: list[SockSample] = []
    done = False
    off = 0
    while off + 16 <= len(buf):
        length, mtype, _flags, _seq, _pid = struct.unpack_from("=IHHII", buf, off)
        if length < 16:
            break
        body = buf[off + 16 : off + length]
        off += (length + 3) & ~3
        if mtype == NLMSG_DONE:
            done = True
            break
        if mtype == NLMSG_ERROR:
            (err,) = struct.unpack_from("=i", body, 0)
            if err != 0:
                raise OSError(-err, "sock_diag dump failed")
            continue
        if mtype != SOCK_DIAG_BY_FAMILY or len(body) < 72:
            continue
        family, state, _timer, _retrans = struct.unpack_from("=BBBB", body, 0)
        sport, dport = struct.unpack_from("!HH", body, 4)
        src, dst = _addr(family, body[8:24]), _addr(family, body[24:40])
        info: dict[str, int | None] = {}
        cong = None
        a = 72
        while a + 4 <= len(body):
            alen, atype = struct.unpack_from("=HH", body, a)
            if alen < 4:
                break
            data = body[a + 4 : a + alen]
            if atype == INET_DIAG_INFO:
                info = parse_tcp_info(data)
            elif atype == INET_DIAG_CONG:
                cong = data.split(b"\0", 1)[0].decode("ascii", "replace")
            a += (alen + 3) & ~3
        socks.append(SockSample(src, sport, dst, dport, state, cong, info))
    return socks, done


class DiagSocket:
    """A NETLINK_SOCK_DIAG socket bound to the network namespace it was created in."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self.sock.bind((0, 0))
        self.seq = 0

    def dump(self) -> list[SockSample]:
        """Every TCP socket with data, IPv4 and IPv6 (v4-mapped addresses shown as IPv4)."""
        out: list[SockSample] = []
        for family in (socket.AF_INET, socket.AF_INET6):
            self.seq += 1
            self.sock.send(build_request(self.seq, family))
            while True:
                buf = self.sock.recv(1 << 16)
                socks, done = parse_dump(buf)
                out.extend(socks)
                if done or not buf:
                    break
        return out

    def close(self) -> None:
        self.sock.close()
