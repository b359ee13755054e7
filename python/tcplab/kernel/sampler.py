"""TCP_INFO sampler: ``python -m tcplab.kernel.sampler`` (started by the kernel engine).

Protocol (line-based): the first line on standard input is a JSON object::

    {"namespaces": ["tl-..-0-snd", ...], "period_ns": 10000000, "out": "/tmp/.../samples.npz",
     "max_runtime_s": 3600}

The sampler opens one NETLINK_SOCK_DIAG socket inside each namespace (``setns`` on a socket's
creating thread binds the socket to that namespace for good), prints ``ready``, and waits for
``start <t0 CLOCK_MONOTONIC ns>``. From then on it dumps every namespace's TCP sockets at
``t0 + j·period`` (j = 0, 1, ...) until ``stop`` or end of input, then writes the samples as a
NumPy ``.npz`` (one row per socket per tick: ``tick``, ``t_ns`` (actual dump time − t0),
``ns`` index, addresses, ports, and every field of :data:`tcpinfo.TCP_INFO_FIELDS`, −1 when absent;
plus ``netstat_*`` columns, one row per namespace per tick, of :data:`NETSTAT_FIELDS`) and prints
``done``.
"""

from __future__ import annotations

import ctypes
import ipaddress
import json
import os
import select
import sys
import time

import numpy as np

from .tcpinfo import FIELD_NAMES, DiagSocket

CLONE_NEWNET = 0x40000000


def setns(path: str) -> None:
    """Move the calling thread into the network namespace at *path* (setns(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


# Linux MIB counters (/proc/net/netstat, "TcpExt") read per namespace at every tick.
NETSTAT_FIELDS = (
    "TCPTimeouts",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPLossProbes",
    "TCPSackRecovery",
    "TCPRenoRecovery",
    "TCPLostRetransmit",
)


def open_sockets(namespaces: list[str]) -> tuple[list[DiagSocket], list[int]]:
    """A sock_diag socket and a /proc/net/netstat descriptor inside each namespace."""
    home = f"/proc/{os.getpid()}/task/{os.getpid()}/ns/net"
    home_fd = os.open(home, os.O_RDONLY)
    socks = []
    stats = []
    try:
        for ns in namespaces:
            setns(f"/run/netns/{ns}")
            socks.append(DiagSocket())
            # /proc/thread-self/net follows the opening thread's namespace at open time.
            stats.append(os.open("/proc/thread-self/net/netstat", os.O_RDONLY))
    finally:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setns(home_fd, CLONE_NEWNET)
        os.close(home_fd)
    return socks, stats


def read_netstat(fd: int) -> tuple[int, ...]:
    """The :data:`NETSTAT_FIELDS` counters from an open /proc/net/netstat (−1 if absent)."""
    text = os.pread(fd, 1 << 16, 0).decode()
    lines = text.splitlines()
    values: dict[str, int] = {}
    for head, vals in zip(lines[::2], lines[1::2], strict=False):
        if head.startswith("TcpExt:") and vals.startswith("TcpExt:"):
            values = dict(zip(head.split()[1:], (int(v) for v in vals.split()[1:]), strict=False))
    return tuple(values.get(f, -1) for f in NETSTAT_FIELDS)


class _Lines:
    """Non-blocking line reader for standard input."""

    def __init__(self) -> None:
        self.buf = b""
        self.eof = False

    def poll(self, timeout: float) -> list[str]:
        if self.eof:
            time.sleep(max(0.0, timeout))
            return []
        r, _, _ = select.select([sys.stdin.fileno()], [], [], max(0.0, timeout))
        if r:
            chunk = os.read(sys.stdin.fileno(), 4096)
            if not chunk:
                self.eof = True
                return ["stop"]
            self.buf += chunk
        lines = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            lines.append(line.decode().strip())
        return lines


I64_MAX = (1 << 63) - 1


def _i64(v: int | None) -> int:
    """−1 for an absent field; u64 values beyond int64 (``~0`` = unlimited) are clipped."""
    return -1 if v is None else min(v, I64_MAX)


def _addr(s: str) -> int:
    return int(ipaddress.IPv4Address(s)) if s else 0


def main() -> int:
    cfg = json.loads(sys.stdin.readline())
    namespaces = cfg["namespaces"]
    period = int(cfg["period_ns"])
    deadline = time.monotonic() + float(cfg.get("max_runtime_s", 3600))
    socks, stat_fds = open_sockets(namespaces)
    print("ready", flush=True)
    lines = _Lines()
    t0: int | None = None
    rows: list[tuple] = []
    nrows: list[tuple] = []
    tick = 0
    stop = False
    while not stop and time.monotonic() < deadline:
        wait = 0.5 if t0 is None else (t0 + tick * period - time.monotonic_ns()) / 1000000000.0
        for line in lines.poll(wait):
            word = line.split()
            if not word:
                continue
            if word[0] == "start":
                t0 = int(word[1])
                tick = 0
            elif word[0] == "stop":
                stop = True
        if stop or t0 is None:
            continue
        now = time.monotonic_ns()
        if now < t0 + tick * period:
            continue
        for i, ds in enumerate(socks):
            t = time.monotonic_ns() - t0
            nrows.append((tick, t, i, *read_netstat(stat_fds[i])))
            for s in ds.dump():
                if not s.info:
                    continue
                info = s.info
                rows.append(
                    (
                        tick,
                        t,
                        i,
                        _addr(s.src),
                        s.sport,
                        _addr(s.dst),
                        s.dport,
                        *tuple(_i64(info.get(f)) for f in FIELD_NAMES),
                    )
                )
        # Skip ticks we are too late for rather than bunching them up.
        tick = max(tick + 1, (time.monotonic_ns() - t0) // period)
    cols = ("tick", "t_ns", "ns", "src", "sport", "dst", "dport", *FIELD_NAMES)
    arr = np.array(rows, dtype=np.int64).reshape(len(rows), len(cols))
    ncols = ("tick", "t_ns", "ns", *NETSTAT_FIELDS)
    narr = np.array(nrows, dtype=np.int64).reshape(len(nrows), len(ncols))
    out = {c: arr[:, j] for j, c in enumerate(cols)}
    out.update({f"netstat_{c}": narr[:, j] for j, c in enumerate(ncols)})
    np.savez(cfg["out"], **out)
    for ds in socks:
        ds.close()
    for fd in stat_fds:
        os.close(fd)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
