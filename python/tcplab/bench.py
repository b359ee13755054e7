"""The three fixed benchmark scenarios (``tcplab bench``).

They match the peer-simulator scripts in /work/shared/peers (README.md there), so speed and
results can be compared side by side:

=== ============================================================================================
s1  1 CUBIC flow, 100 Mbit/s bottleneck, 50 ms base RTT, one-BDP drop-tail buffer, 60 s
s2  2 CUBIC flows, 1 Gbit/s, 180 ms, 64-packet buffer, 100 s
s3  8 NewReno flows, 100 Mbit/s, 100 ms, one-BDP buffer, 60 s
=== ============================================================================================

Common to all (as in the peers): N bulk senders → r1 → bottleneck → r2 → N receivers; access
links 1 Gbit/s, 0.1 ms one way, 100 000-packet queues (never drop); bottleneck one-way delay =
RTT/2 − 0.2 ms; MTU 1500 with timestamps (MSS 1448 payload), SACK, initial window 10, delayed ACKs
(the engine's default); socket buffers never limiting (4 × (BDP + buffer) packets, at least 2900
packets, as the ns-2 script's ``window_``); flow i starts at i·10 ms. Goodput is not the point
here: the timing is ``time.perf_counter()`` around ``tcplab._core.run`` only (JSON encoding and
result conversion to tables are outside), and ``data_packets`` is the raw result's
``sim_packets`` (data packets delivered to receivers).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any

from . import scenario as scenario_mod
from .catalog import Catalog, default_catalog, load_core
from .seeds import trial_seed

__all__ = ["BENCHMARKS", "Benchmark", "bench_scenario", "run_benchmark"]

PACKET = 1500
ACCESS_RATE = "1Gbit"
ACCESS_DELAY = "0.1ms"
ACCESS_QUEUE = "100000pkt"
STAGGER_MS = 10
SEED = 1


@dataclass(frozen=True)
class Benchmark:
    name: str
    flows: int
    cca: str
    rate_bps: int
    rtt_ms: int
    queue: str  # "bdp" or "<n>pkt"
    duration_s: int

    def bdp_pkts(self) -> int:
        return math.ceil(self.rate_bps * self.rtt_ms / 1000 / (8 * PACKET))

    def queue_pkts(self) -> int:
        return self.bdp_pkts() if self.queue == "bdp" else int(self.queue.removesuffix("pkt"))


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("s1", 1, "cubic", 100_000_000, 50, "bdp", 60),
        Benchmark("s2", 2, "cubic", 1_000_000_000, 180, "64pkt", 100),
        Benchmark("s3", 8, "newreno", 100_000_000, 100, "bdp", 60),
    )
}


def bench_scenario(b: Benchmark) -> dict[str, Any]:
    """The scenario document (as a parsed TOML file would be) of benchmark *b*."""
    window_pkts = max(4 * (b.bdp_pkts() + b.queue_pkts()), 2900)
    return {
        "name": f"bench-{b.name}",
        "description": f"tcplab bench {b.name}",
        "seed": SEED,
        "duration": f"{b.duration_s}s",
        "interval": "1s",
        "path": {
            "rate": b.rate_bps,
            "rtt": f"{b.rtt_ms}ms",
            "queue": b.queue,
            "mtu": PACKET,
            "access_rate": ACCESS_RATE,
            "access_delay": ACCESS_DELAY,
            "host_queue": ACCESS_QUEUE,
        },
        "tcp": {"timestamps": True, "sack": True, "initial_window": 10},
        "flow": [
            {
                "name": f"f{i}",
                "cca": b.cca,
                "start": f"{i * STAGGER_MS}ms",
                "window": window_pkts * PACKET,
            }
            for i in range(b.flows)
        ],
    }


def run_benchmark(b: Benchmark, catalog: Catalog | None = None) -> dict[str, Any]:
    """Run benchmark *b* once; returns name, sim_seconds, wall_seconds, data_packets,
    packets_per_second."""
    core = load_core()
    sc = scenario_mod.load(bench_scenario(b), catalog=catalog or default_catalog())
    config_json = json.dumps(sc.config(trial_seed(SEED, 0)))
    t0 = time.perf_counter()
    raw = core.run(config_json)
    wall = time.perf_counter() - t0
    packets = int(raw["sim_packets"])
    return {
        "name": b.name,
        "sim_seconds": sc.duration_ns / 1e9,
        "wall_seconds": wall,
        "data_packets": packets,
        "packets_per_second": packets / wall if wall > 0 else float("inf"),
    }
