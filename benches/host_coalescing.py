"""Effect of receive interrupt coalescing (knob ``rx_coalesce``, crates/tcplab-sim/src/host.rs)
on one CUBIC flow: goodput, retransmissions, the bottleneck queue and how bursty the ACKs are.

    .venv/bin/python benches/host_coalescing.py [--duration 10s] [--seeds 3]

Prints one row per (path, receiver coalescing interval): a 1 Gbit/s bottleneck, 20 ms RTT,
access links 10 Gbit/s (the scenario default) or as fast as the bottleneck, a BDP, 0.25 BDP or
32-packet drop-tail buffer; linux-6 stacks (receive-window autotuning, so a BDP buffer stays
partly filled by a window-limited flow). q_mean/q_max are of the bottleneck queue sampled every
100 ms after the first second. ACK bursts are runs of ACKs reaching the sender less than 5 µs
apart (a few serialisation times of an ACK on the 1 Gbit/s reverse bottleneck), from the
capture at the sender's access link, after the first second.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import struct

import tcplab
from tcplab import units

US, MS = 1_000, 1_000_000


def ack_times(path: str, sport: int | None = None) -> list[int]:
    """Arrival times of the pure ACKs towards the data sender in a pcap (nanosecond format)."""
    with open(path, "rb") as fh:
        data = fh.read()
    off, out, first = 24, [], None
    while off < len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off : off + 16])
        ip = data[off + 16 + 14 : off + 16 + incl]
        off += 16 + incl
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        sp, dp, _, _, doff, flags = struct.unpack(">HHIIBB", ip[ihl : ihl + 14])
        payload = total - ihl - (doff >> 4) * 4
        if first is None:
            first = sp  # the SYN's source port is the sender's
        if dp == first and payload == 0 and flags & 0x10:
            out.append(sec * 10**9 + frac)
    return out


def run(rate: str, access: str | None, queue: str, coalesce: str, duration: str, seed: int):
    path = {"rate": rate, "rtt": "20ms", "queue": queue}
    if access:
        path["access_rate"] = access
    rtcp = {"rx_coalesce": coalesce} if coalesce != "0" else {}
    doc = {
        "name": "coalescing",
        "seed": seed,
        "duration": duration,
        "interval": "100ms",
        "stack": "linux-6",
        "path": path,
        "flow": [{"name": "f", "cca": "cubic", "receiver_tcp": rtcp}],
    }
    r = tcplab.run(doc, pcap=["host:f.snd"])
    raw = r.raw[0]
    f = raw["flows"][0]
    dur = units.parse_duration(duration)
    q = raw["queue_series"]
    qs = [
        q["queue_pkts"][i]
        for i in range(len(q["time_ns"]))
        if q["link"][i] == "bottleneck" and q["dir"][i] == "ab" and q["time_ns"][i] > 1e9
    ]
    t = [x for x in ack_times(str(r.captures[0])) if x > 1e9]
    bursts, n = [], 1
    for prev, cur in itertools.pairwise(t):
        if cur - prev < 5 * US:
            n += 1
        else:
            bursts.append(n)
            n = 1
    bursts.append(n)
    return {
        "goodput": f["bytes_delivered"] * 8 / dur * 1e9 / 1e6,
        "retx": f["retransmits"],
        "q_mean": statistics.fmean(qs) if qs else float("nan"),
        "q_max": max(qs) if qs else 0,
        "burst_mean": statistics.fmean(bursts) if bursts else float("nan"),
        "in_bursts_ge4": sum(b for b in bursts if b >= 4) / max(1, sum(bursts)),
        "irq": (raw.get("hosts") or [{}])[0].get("interrupts", 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    print("access   queue     coalesce  goodput(Mbit/s)  retx  q_mean(pkt)  q_max  "
          "ACK burst mean  ACKs in bursts>=4  interrupts/s")  # fmt: skip
    for access, queue in ((None, "bdp"), (None, "0.25bdp"), (None, "32pkt"), ("1Gbit", "0.25bdp")):
        for co in ("0", "125us", "250us"):
            rows = [run("1Gbit", access, queue, co, a.duration, s) for s in range(1, a.seeds + 1)]
            m = {k: statistics.fmean(r[k] for r in rows) for k in rows[0]}
            dur_s = units.parse_duration(a.duration) / 1e9
            print(
                f"{access or '10Gbit':8} {queue:9} {co:9} {m['goodput']:15.1f}  {m['retx']:4.0f}"
                f"  {m['q_mean']:11.1f}  {m['q_max']:5.0f}  {m['burst_mean']:14.2f}"
                f"  {m['in_bursts_ge4']:17.2f}  {m['irq'] / dur_s:12.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
