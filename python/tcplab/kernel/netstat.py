"""The kernel's own TCP counters of each end host, as `nstat` shows them.

Linux keeps SNMP (RFC 4022's ``Tcp`` group) and extended TCP counters (``TcpExt``: HyStart
exits, SACK and RACK recoveries, loss probes, spurious retransmissions, undo, ...) per network
namespace in ``/proc/net/snmp`` and ``/proc/net/netstat`` (Documentation/networking/snmp_counter.rst
names and explains them). Each of the kernel engine's hosts is a namespace of its own, so the
difference between a reading before the flows start and one after they stop is what that host's
connections did in the trial. They say *why* a trial went as it did — e.g. which HyStart test
ended slow start (``TcpExtTCPHystartTrainDetect`` / ``…DelayDetect`` and the cwnd at which it
fired, ``…TrainCwnd`` / ``…DelayCwnd``) — and are reported as ``kernel.netstat`` in the raw result.
"""

from __future__ import annotations

from itertools import pairwise

from .netns import run_cmd

FILES = ("/proc/net/snmp", "/proc/net/netstat")
GROUPS = ("Tcp", "TcpExt")


def parse(text: str) -> dict[str, int]:
    """Counters of the ``Tcp`` and ``TcpExt`` groups in the two-line format of /proc/net/snmp
    and /proc/net/netstat (a header line of names, then a line of values, each starting with
    ``Group:``), as ``{"TcpExtTCPHystartTrainDetect": 1, ...}`` — the names `nstat` prints."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in pairwise(lines):
        hg, _, names = head.partition(":")
        vg, _, values = vals.partition(":")
        # A group's header and values lines are the only neighbours that share a group name.
        if hg != vg or hg not in GROUPS:
            continue
        for name, value in zip(names.split(), values.split(), strict=False):
            try:
                out[hg + name] = int(value)
            except ValueError:
                continue
    return out


def read(ns: str) -> dict[str, int]:
    """The counters of namespace *ns* now."""
    text = run_cmd(["ip", "netns", "exec", ns, "cat", *FILES], timeout=10.0)
    return parse(text)


# Gauges, not counters: their difference means nothing.
GAUGES = frozenset({"TcpRtoAlgorithm", "TcpRtoMin", "TcpRtoMax", "TcpMaxConn", "TcpCurrEstab"})


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What changed between two readings: counters that moved, by how much (gauges left out)."""
    return {
        k: v - before.get(k, 0)
        for k, v in sorted(after.items())
        if k not in GAUGES and v != before.get(k, 0)
    }
