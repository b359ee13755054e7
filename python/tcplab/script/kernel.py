"""Run a behaviour script against this machine's Linux TCP, as packetdrill does (issue 14).

Setup, per script: a fresh network namespace ``tcplab-script-<hex>`` (``ip netns add``; deleted
afterwards, on error too), and, inside it, a TUN device ``tun0`` (``IFF_TUN | IFF_NO_PI``: raw
IPv4 packets on its fd) with the local address 192.168.0.1/24 and a route to the script side's
192.0.2.0/24 through it. A forked child enters the namespace (``setns(2)``), creates the TUN, sets
the namespace's sysctls and performs the script: its socket calls on real sockets, its inbound
segments written to the TUN fd as IPv4+TCP (checksums computed; sequence numbers relative to the
script's ISN, ack numbers and SACK blocks relative to the kernel's ISN, which is learnt from the
kernel's first SYN, as packetdrill's relative mode), and every packet the kernel routes to the
script side read back from the fd and matched with the simulator runner's code
(:func:`.match.run_events`). The result goes back to the parent through a pipe.

A TUN device without ``IFF_VNET_HDR`` has no TSO offload and its receive path does no GRO
(``IFF_NAPI`` unset); software GSO is switched off too (``gso_max_segs 1``: otherwise the kernel
builds multi-segment packets and may defer part of a window, ``tcp_tso_should_defer``), so every
segment is handled as on a device without offloads and seen as the wire would carry it.

Sysctls are written under ``/proc/sys/net`` *after* ``setns``, so they are the namespace's copies
(every ``net.ipv4.tcp_*`` used here is per network namespace since Linux 4.15), never the host's.
Every socket starts with CUBIC, Linux's default (``setsockopt(TCP_CONGESTION)``: a new namespace
inherits the host's default, which may be BBR, and a child namespace may not change its default to
an algorithm outside ``tcp_allowed_congestion_control``). A script sets sysctls with header lines
``--sysctl=net.ipv4.tcp_timestamps=0``. Root is required.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pickle
import secrets
import select
import signal
import socket
import struct
import threading
import time
from pathlib import Path

from ..errors import EngineUnavailable, UserError
from ..kernel.sampler import setns
from .match import (
    DEFAULT_TOLERANCE,
    DEVICE_GSO_MAX_SEGS,
    O_MSS,
    O_SACK,
    O_TS,
    O_WS,
    SYN,
    ScriptResult,
    inbound_seg,
    run_events,
)
from .parser import Event, Segment, Syscall, header_options, header_sysctls

__all__ = ["KERNEL_LABEL", "check_root", "run_kernel"]

KERNEL_LABEL = "kernel"
LOCAL_ADDR = "192.168.0.1"  # the kernel's side (packetdrill's defaults)
REMOTE_ADDR = "192.0.2.1"  # the script's side (RFC 5737 TEST-NET-1)
LOCAL_PORT = 8080  # bind()/listen() port, and connect()'s destination port
REMOTE_PORT = 40000  # source port of a script-side SYN (passive open)
REMOTE_ISN = 0  # the script side's ISN: its sequence numbers are absolute = relative
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
TCP_CONGESTION = 13
TCP_INFO = 11
ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35  # asm-generic/socket.h
PACKET_OUTGOING = 4  # linux/if_packet.h
DEFAULT_SYSCTLS: dict[str, str] = {}
DEFAULT_CCA = "cubic"
# Sysctls a script may set: only per-namespace TCP/IPv4 knobs.


def check_root() -> None:
    if os.geteuid() != 0:
        raise EngineUnavailable(
            "tcplab script --engine kernel needs root (it creates a network namespace and a TUN "
            "device, as packetdrill does); run it as root, or use the simulator (no --engine)."
        )
    if not Path("/dev/net/tun").exists():
        raise EngineUnavailable("--engine kernel needs /dev/net/tun (modprobe tun)")


# ---------------------------------------------------------------- packets


def _csum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _tcp_options(seg: Segment, abs_seg: tuple) -> bytes:
    """The option bytes of an inbound segment, in the script's order (RFC 793, 7323, 2018)."""
    out = b""
    sack_abs = list(abs_seg[10])
    _s, _a, _f, _w, _p, _o, _mss, _ws, tv, te, _sk = abs_seg
    for o in seg.options or ():
        if o.kind == "nop":
            out += b"\x01"
        elif o.kind == "eol":
            out += b"\x00"
        elif o.kind == "mss":
            out += struct.pack("!BBH", 2, 4, o.values[0])
        elif o.kind == "wscale":
            out += struct.pack("!BBB", 3, 3, o.values[0])
        elif o.kind == "sackOK":
            out += b"\x04\x02"
        elif o.kind == "TS":
            out += struct.pack("!BBII", 8, 10, tv, te)
        elif o.kind == "sack":
            n = len(o.values) // 2
            blocks, sack_abs = sack_abs[:n], sack_abs[n:]
            out += struct.pack("!BB", 5, 2 + 8 * n)
            out += b"".join(struct.pack("!II", a, b) for a, b in blocks)
    if len(out) % 4:
        out += b"\0" * (4 - len(out) % 4)
    if len(out) > 40:
        raise UserError(f"TCP options of {len(out)} bytes: at most 40 fit in a TCP header")
    return out


def build_packet(seg: Segment, abs_seg: tuple, sport: int, dport: int, ip_id: int) -> bytes:
    """IPv4+TCP packet from the script side to the kernel, checksums computed (RFC 791, 793)."""
    seq, ack, flags, wnd, payload, *_ = abs_seg
    opts = _tcp_options(seg, abs_seg)
    off = (20 + len(opts)) // 4
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, wnd, 0, 0)
    tcp += opts + b"\0" * payload
    src, dst = socket.inet_aton(REMOTE_ADDR), socket.inet_aton(LOCAL_ADDR)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    c = _csum(pseudo + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ip_id & 0xFFFF, 0x4000, 64, 6, 0, src, dst
    )
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return ip + tcp


def parse_packet(pkt: bytes) -> tuple[int, int, tuple] | None:
    """(sport, dport, Seg) of an IPv4 TCP packet from the kernel; None for anything else."""
    if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6:
        return None
    ihl = (pkt[0] & 0xF) * 4
    total = struct.unpack_from("!H", pkt, 2)[0]
    sport, dport, seq, ack, offb, flags, wnd = struct.unpack_from("!HHIIBBH", pkt, ihl)
    off = (offb >> 4) * 4
    payload = total - ihl - off
    opts = mss = ws = tv = te = 0
    sack: list[tuple[int, int]] = []
    o, end = ihl + 20, ihl + off
    while o < end:
        kind = pkt[o]
        if kind == 0:
            break
        if kind == 1:
            o += 1
            continue
        ln = pkt[o + 1] if o + 1 < end else 0
        if ln < 2:
            break
        if kind == 2:
            opts |= O_MSS
            mss = struct.unpack_from("!H", pkt, o + 2)[0]
        elif kind == 3:
            opts |= O_WS
            ws = pkt[o + 2]
        elif kind == 4:
            opts |= O_SACK
        elif kind == 8:
            opts |= O_TS
            tv, te = struct.unpack_from("!II", pkt, o + 2)
        elif kind == 5:
            sack = [struct.unpack_from("!II", pkt, o + 2 + 8 * i) for i in range((ln - 2) // 8)]
        o += ln
    return sport, dport, (seq, ack, flags & 0x3F, wnd, payload, opts, mss, ws, tv, te, sack)


# ---------------------------------------------------------------- engine (inside the namespace)


def _tcp_info(sock: socket.socket) -> dict[str, int]:
    """TCP_INFO by getsockopt (struct tcp_info, include/uapi/linux/tcp.h: offsets below)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    u32 = lambda off: struct.unpack_from("I", raw, off)[0]  # noqa: E731
    return {
        "ca_state": raw[1],
        "retransmits": raw[2],
        "rto": u32(8),
        "unacked": u32(24),
        "ssthresh": u32(76),
        "cwnd": u32(80),
    }


class KernelEngine:
    """The :class:`.match.Engine` over real sockets and a TUN fd, in real time."""

    remote_isn = REMOTE_ISN
    data_before_write = False

    def __init__(self, tun: int) -> None:
        self.tun = tun
        self.tap = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
        self.tap.bind(("tun0", 0))
        self.tap.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.tap.setblocking(False)
        # CLOCK_REALTIME (the packet timestamps) minus CLOCK_MONOTONIC (the script clock)
        self.clock_offset = time.time() - time.monotonic()
        self.local_isn = 0
        self.local_port = 0  # the kernel's port
        self.remote_port = LOCAL_PORT  # the script side's port (connect() target by default)
        self.ts_val = 0  # last TS val the kernel sent (an inbound TS ecr echoes it)
        self.pending: list[tuple[float, tuple]] = []
        self.now = 0.0
        self.t0 = time.monotonic()
        self.socks: dict[int, socket.socket] = {}
        self.conn: socket.socket | None = None  # the connected socket TCP_INFO is read from
        self.ip_id = 1
        self.writers: list[threading.Thread] = []
        self.errors: list[str] = []
        self.injected: list[float] = []  # script times of injected segments not yet seen on tap
        # Read the TUN fd continuously, as a NIC takes packets, so that the device queue
        # (txqueuelen) never fills and nothing the kernel sends waits on this process's
        # schedule; the segments themselves are taken from the tap (_read).
        self.stop = threading.Event()
        self.drainer = threading.Thread(target=self._drain, daemon=True)
        self.drainer.start()

    def _read(self) -> None:
        """Collect what the kernel sent. The TUN fd is drained by a thread (_drain); segments
        and their times come from a packet socket on tun0 whose kernel timestamps
        (SO_TIMESTAMPNS, taken when the packet passes the device's transmit path, as tcpdump
        sees it) do not depend on when this process gets to run."""
        while True:
            try:
                pkt, anc, _flags, addr = self.tap.recvmsg(65535, 64)
            except BlockingIOError:
                return
            at = time.monotonic() - self.t0
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                    sec, nsec = struct.unpack_from("qq", data)
                    at = sec + nsec / 1e9 - self.clock_offset - self.t0
            if addr[2] != PACKET_OUTGOING:
                # One of our injected segments, as the kernel received it: if that was later
                # than its script time, the script clock waits for it (see _sync).
                if self.injected:
                    due = self.injected.pop(0)
                    if at > due:
                        self.t0 += at - due
                continue
            got = parse_packet(pkt)
            if got is None:
                continue
            sport, dport, seg = got
            if seg[2] & SYN and not self.local_isn:
                self.local_isn = seg[0]
                self.local_port = sport
                self.remote_port = dport
            if seg[5] & O_TS:
                self.ts_val = seg[8]
            self.pending.append((at, seg))

    def _drain(self) -> None:
        while not self.stop.is_set():
            if not select.select([self.tun], [], [], 0.05)[0]:
                continue
            with contextlib.suppress(BlockingIOError, OSError):
                while True:
                    os.read(self.tun, 65535)

    def advance(self, until: float, first: bool = False) -> None:
        while True:
            self._read()
            if first and self.pending:
                return
            left = self.t0 + until - time.monotonic()
            if left <= 0:
                break
            select.select([self.tap], [], [], left)
        self.now = max(self.now, until)

    def _sync(self, t: float) -> None:
        """Pause the script clock while the harness is late: if this input line (an injected
        segment or a system call due at ``t``) runs ``d`` seconds late (the process was not
        scheduled in time), every later time is measured ``d`` later. The kernel cannot react
        before its input, so its responses are timed from when the input really happened; the
        tolerance itself is unchanged. For injected segments the kernel's own receive timestamp
        of the segment (on the tap) is used as well, which also covers a delay between this
        check and the write."""
        late = time.monotonic() - self.t0 - t
        if late > 0:
            self.t0 += late

    def inject(self, t: float, seg: Segment) -> str:
        self._sync(t)
        self.injected.append(t)
        if seg.ack is not None and not self.local_isn and "S" not in seg.flags:
            return "inbound ACK before the kernel sent a SYN: its ISN is unknown"
        if "S" in seg.flags and "." not in seg.flags:  # a SYN from the script: passive open
            self.local_port, self.remote_port = LOCAL_PORT, REMOTE_PORT
        abs_seg = inbound_seg(seg, self.local_isn, REMOTE_ISN, self.ts_val)
        pkt = build_packet(seg, abs_seg, self.remote_port, self.local_port, self.ip_id)
        self.ip_id += 1
        os.write(self.tun, pkt)
        return ""

    def info(self) -> dict[str, int]:
        return _tcp_info(self.conn) if self.conn is not None else {}

    def _sock(self, arg: str) -> socket.socket | None:
        a = arg.strip()
        return self.socks.get(int(a)) if a.isdigit() else None

    def syscall(self, a: Syscall, t: float) -> str:
        self._sync(t)
        name = a.name
        want_err = getattr(errno, a.errno) if a.errno else 0
        if a.errno and not isinstance(want_err, int):
            return f"unknown errno {a.errno}"
        if name == "socket":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            # The namespace's default CCA is the host's and may not be changed from a child
            # namespace unless allowed (EPERM): set CUBIC, Linux's default, on the socket.
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, DEFAULT_CCA.encode())
            self.socks[a.ret] = s
            return ""
        s = self._sock(a.args[0])
        if s is None:
            return f"{name}(): no socket {a.args[0].strip()!r} (create it with socket() = N)"
        if name == "setsockopt":
            opt, val = a.args[2].strip(), a.args[3].strip().strip("[]\"' ")
            try:
                if opt == "TCP_CONGESTION":
                    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, val.encode())
                elif opt in ("SO_SNDBUF", "SO_RCVBUF", "SO_REUSEADDR"):
                    s.setsockopt(socket.SOL_SOCKET, getattr(socket, opt), int(val))
                elif opt in ("TCP_NODELAY",):
                    s.setsockopt(socket.IPPROTO_TCP, getattr(socket, opt), int(val))
                else:
                    return f"setsockopt {opt} is not supported by the kernel runner"
            except (OSError, ValueError) as e:
                return f"setsockopt({opt}, {val}): {e}"
            return ""
        if name == "bind":
            s.bind(("0.0.0.0", LOCAL_PORT))
            return ""
        if name == "listen":
            s.listen(int(a.args[1]) if a.args[1].strip().isdigit() else 1)
            return ""
        if name == "accept":
            try:
                c, _ = s.accept()
            except BlockingIOError:
                return "accept(): no connection is established yet (EAGAIN)"
            c.setblocking(False)
            self.socks[a.ret] = c
            self.conn = c
            return ""
        if name == "connect":
            rc = s.connect_ex((REMOTE_ADDR, LOCAL_PORT))
            self.conn = s
            if rc != want_err and not (rc == 0 and a.ret == 0):
                return f"connect() = {errno.errorcode.get(rc, rc)}, expected {a.errno or a.ret}"
            return ""
        if name == "write":
            n = a.ret
            if n < 0:
                return "write() expecting an error is not supported"
            try:
                sent = s.send(b"\0" * n)
            except BlockingIOError:
                sent = 0
            if sent < n:  # the rest as a blocking write would: in the background
                th = threading.Thread(target=self._finish_write, args=(s, n - sent), daemon=True)
                th.start()
                self.writers.append(th)
            return ""
        if name == "read":
            try:
                got = s.recv(int(a.args[2]) if a.args[2].strip().isdigit() else a.ret or 65536)
            except BlockingIOError:
                return "read(): nothing to read (EAGAIN)"
            if len(got) != a.ret:
                return f"read() = {len(got)}, expected {a.ret}"
            return ""
        if name == "close":
            s.close()
            return ""
        if name == "shutdown":
            how = a.args[1].strip()
            s.shutdown(getattr(socket, how, socket.SHUT_WR))
            return ""
        if name == "getsockopt":
            return ""
        return f"{name}() is not supported by the kernel runner"

    def _finish_write(self, s: socket.socket, left: int) -> None:
        buf = memoryview(b"\0" * left)
        while buf:
            try:
                select.select([], [s], [], 0.05)
                k = s.send(buf)
                buf = buf[k:]
            except BlockingIOError:
                continue
            except OSError as e:
                self.errors.append(f"background write: {e}")
                return

    def close(self) -> None:
        self.stop.set()
        self.drainer.join(timeout=1.0)
        self.tap.close()
        for s in self.socks.values():
            with contextlib.suppress(OSError):
                s.close()


def _ip(*args: str) -> None:
    from ..kernel.netns import run_cmd

    run_cmd(["ip", *args])


def _in_namespace(
    ns: str,
    events: list[Event],
    path: str,
    tol: float,
    sysctls: dict[str, str],
    trace: bool = False,
) -> ScriptResult:
    setns(f"/run/netns/{ns}")
    for name, value in {**DEFAULT_SYSCTLS, **sysctls}.items():
        f = Path("/proc/sys") / name.replace(".", "/")
        try:
            f.write_text(value + "\n")
        except OSError as e:
            raise UserError(f"{path}: sysctl {name}={value} in the namespace: {e}") from e
    tun = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH22x", b"tun0", IFF_TUN | IFF_NO_PI))
    _ip("link", "set", "lo", "up")
    _ip("addr", "add", f"{LOCAL_ADDR}/24", "dev", "tun0")
    # One segment per packet: the kernel builds GSO packets for any device (software GSO) and
    # then may hold back part of a window waiting for more ACKs (tcp_tso_should_defer), an
    # offload-driven behaviour that made sends late by 10-20 ms. gso_max_segs 1 gives what a
    # device without segmentation offload gets.
    _ip("link", "set", "tun0", "gso_max_segs", str(DEVICE_GSO_MAX_SEGS))
    _ip("link", "set", "tun0", "up", "mtu", "1500")
    _ip("route", "add", "192.0.2.0/24", "dev", "tun0")
    eng = KernelEngine(tun)
    try:
        eng.advance(0.0)
        eng.pending.clear()  # anything the interface sent while coming up (none is TCP)
        eng.t0 = time.monotonic()
        res = run_events(eng, events, path, KERNEL_LABEL, tol, trace)
        if res.passed and eng.errors:
            res.lines[-1].ok = False
            res.lines[-1].detail = "; ".join(eng.errors)
        return res
    finally:
        eng.close()
        os.close(tun)


def run_kernel(
    events: list[Event],
    path: str,
    tolerance: float = DEFAULT_TOLERANCE,
    sysctls: dict[str, str] | None = None,
    trace: bool = False,
) -> ScriptResult:
    """Run parsed ``events`` on the kernel in a fresh namespace (deleted afterwards)."""
    from ..kernel.netns import CmdError, delete_namespaces, run_cmd

    if sysctls is None:
        sysctls = header_sysctls(path)
    opts = header_options(path)
    if opts:
        name = sorted(opts)[0]
        raise UserError(
            f"{path}: --{name}: a simulator-only option (the kernel run's peer is where the TUN "
            "device puts it); run the script on the simulator (without --engine kernel)"
        )
    foreign = sorted(k for k in sysctls if k.startswith("net.inet."))
    if foreign:
        raise UserError(
            f"{path}: --sysctl={foreign[0]}: a BSD/XNU sysctl, which this Linux kernel does not "
            "have; run the script on the simulator (without --engine kernel)"
        )
    check_root()
    ns = f"tcplab-script-{secrets.token_hex(4)}"
    last = max((e.time_end or e.time or 0.0) for e in events) if events else 0.0
    try:
        run_cmd(["ip", "netns", "add", ns])
    except CmdError as e:
        raise EngineUnavailable(f"cannot create network namespace {ns}: {e}") from e
    pid = 0
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: enter the namespace, run, send the result back
            os.close(r)
            try:
                out: object = _in_namespace(ns, events, path, tolerance, sysctls, trace)
            except BaseException as e:
                out = f"{type(e).__name__}: {e}"
            with contextlib.suppress(BaseException):
                os.write(w, pickle.dumps(out))
            os._exit(0)
        os.close(w)
        chunks = []
        deadline = time.monotonic() + last + 60.0
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                raise UserError(f"{path}: the kernel run did not finish within {last + 60:.0f} s")
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        os.waitpid(pid, 0)
        pid = 0
        out = pickle.loads(b"".join(chunks)) if chunks else "no result from the child"
        if isinstance(out, str):
            raise UserError(f"{path}: kernel engine: {out}")
        return out
    finally:
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        delete_namespaces([ns])
