"""Assemble the kernel engine's raw result (docs/design.md §4) from what a run recorded.

Sources, per column:

* goodput / ``delivered_bytes`` (TCP): the receiver's ``tcpi_bytes_received`` (in-order bytes
  received, what iperf's receiver counts), sampled at each interval end; UDP: payload bytes the
  emulator delivered to the receiver's last hop (crates/tcplab-linkem, ``count``).
* sender variables: the sender's TCP_INFO at each interval end — ``cwnd = snd_cwnd·snd_mss``,
  ``ssthresh`` (infinite while Linux's TCP_INFINITE_SSTHRESH), ``srtt/rttvar/rto`` from µs,
  ``snd_una = tcpi_bytes_acked`` (it counts the SYN, so it is SND.UNA − ISN as web100's),
  ``snd_nxt = 1 + bytes_sent − bytes_retrans``, ``in_flight = (unacked − sacked − lost +
  retrans)·mss`` (Linux ``tcp_packets_in_flight``), ``rwnd = tcpi_snd_wnd``, retransmissions
  ``tcpi_total_retrans``, timeouts ``tcpi_total_rto`` (Linux ≥ 6.7), pacing rate.
* fast retransmissions: the namespace's ``TcpExt.TCPFastRetrans`` (retransmissions outside the
  Loss state) when the flow is the only TCP sender in its namespace, else NaN.
* duplicate ACKs and SACK blocks: counted on the wire at the sender's first hop by the emulator
  (TCP_INFO has no such counters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..results import SERIES_COLUMNS
from .topology import Plan

__all__ = ["FlowInfo", "assemble", "base_rtt_ns", "load_samples", "validity"]

INFINITE_SSTHRESH = 0x7FFFFFFF  # Linux TCP_INFINITE_SSTHRESH

# Tolerances of the emulator self-check (see the README of this package for the measurements
# they were chosen from: on the 2-core development machine the mean lateness was 20-40 µs and
# p99 below 0.1 ms at 100 Mbit/s).
TOLERANCES = {
    "lateness_mean_ns": (250_000, 0.02),  # max(250 µs, 2 % of the link's delay)
    "lateness_p99_ns": (2_000_000, 0.10),  # max(2 ms, 10 % of the delay)
    "rate_rel": 0.02,  # achieved rate within ±2 % while backlogged
    "rate_min_span_ns": 200_000_000,  # ... measured over at least 200 ms of backlog
    "min_packets": 100,  # directions with fewer packets are not judged
    # A flow's minimum RTT may undercut the path's propagation delay by 0.2 ms, and exceed the
    # full-sized round trip by max(5 ms, 20 %).
    "min_rtt_below_ns": 200_000,
    "min_rtt_above": (5_000_000, 0.20),
}


@dataclass
class FlowInfo:
    index: int
    name: str
    kind: str
    src_ns_index: int
    dst_ns_index: int
    src_addr: str
    dst_addr: str
    port: int
    cport: int
    launched_ns: int | None = None
    applied: dict[str, str] = field(default_factory=dict)
    cca: str | None = None


def load_samples(path: Path) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError):
        return None


def _ip(addr: str) -> int:
    a, b, c, d = (int(x) for x in addr.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def _grid(duration: int, interval: int) -> list[int]:
    """Interval ends as the simulator samples them: k·interval, and the run's end."""
    ts = []
    t = interval
    while t < duration:
        ts.append(t)
        t += interval
    ts.append(duration)
    return ts


def _tx_ns(nbytes: int, rate_bps: int) -> float:
    return nbytes * 8e9 / rate_bps if rate_bps else 0.0


def _extremes(ch: dict[str, Any]) -> tuple[int, int, int]:
    """Smallest and largest one-way delay and smallest rate of a link direction over the run
    (they change with a time-varying path's steps, scenario/schedule.py)."""
    steps = ch.get("schedule") or []
    delays = [ch["delay_ns"], *(s["delay_ns"] for s in steps if "delay_ns" in s)]
    rates = [ch["rate_bps"], *(s["rate_bps"] for s in steps if "rate_bps" in s)]
    return min(delays), max(delays), min(rates)


def base_rtt_ns(cfg: dict[str, Any], plan: Plan, src: str, dst: str) -> tuple[float, float]:
    """Bounds of a flow's minimum RTT on an empty path: (propagation delays only — the RTT of
    the smallest segments, e.g. iperf's 37-byte cookie —, delays plus one serialisation per hop
    of a full-sized segment and a 52-byte ACK (40 B headers + 12 B timestamps))."""
    lo = hi = 0.0
    for li, d in plan.path(src, dst):
        lk = plan.links[li]
        dmin, dmax, rmin = _extremes(lk.ab if d == "ab" else lk.ba)
        lo += dmin
        hi += dmax + _tx_ns(lk.mtu, rmin)
    for li, d in plan.path(dst, src):
        lk = plan.links[li]
        dmin, dmax, rmin = _extremes(lk.ab if d == "ab" else lk.ba)
        lo += dmin
        hi += dmax + _tx_ns(52, rmin)
    return lo, hi


class _Rows:
    """The sampler rows of one socket, sorted by tick (only once established: before, Linux
    reports the default MSS of 536 and a meaningless window)."""

    def __init__(self, s: dict[str, np.ndarray] | None, mask: np.ndarray | None) -> None:
        if mask is not None and s is not None and "state" in s:
            # Drop the rows of the handshake (SYN_SENT); keep established and closing states.
            mask = mask & (s["state"] != 2)
        if s is None or mask is None or not mask.any():
            self.n = 0
            self.tick = np.zeros(0, dtype=np.int64)
            self.cols: dict[str, np.ndarray] = {}
            return
        order = np.argsort(s["tick"][mask], kind="stable")
        self.cols = {k: v[mask][order] for k, v in s.items() if not k.startswith("netstat_")}
        self.tick = self.cols["tick"]
        self.n = len(self.tick)

    def at(self, tick: int) -> int:
        """Index of the last row at or before *tick*, or −1."""
        return int(np.searchsorted(self.tick, tick, side="right")) - 1

    def get(self, name: str, i: int) -> float:
        if i < 0 or name not in self.cols:
            return math.nan
        v = int(self.cols[name][i])
        return math.nan if v < 0 else float(v)


def _socket_mask(s: dict[str, np.ndarray] | None, ns: int, la: str, lp: int, ra: str, rp: int):
    if s is None or "tick" not in s or len(s["tick"]) == 0:
        return None
    return (
        (s["ns"] == ns)
        & (s["src"] == _ip(la))
        & (s["sport"] == lp)
        & (s["dst"] == _ip(ra))
        & (s["dport"] == rp)
    )


def _netstat(s: dict[str, np.ndarray] | None, ns: int, field_: str):
    """(ticks, values) of one netstat counter of namespace *ns*."""
    if s is None or f"netstat_{field_}" not in s or len(s["netstat_tick"]) == 0:
        return None
    m = s["netstat_ns"] == ns
    order = np.argsort(s["netstat_tick"][m], kind="stable")
    return s["netstat_tick"][m][order], s[f"netstat_{field_}"][m][order]


def _series_at(series: dict[str, list], flow: str, key: str, t: int) -> float:
    """Last value of *key* for *flow* at or before time *t* in a columnar emulator series."""
    best_t, best_v = -1, math.nan
    for f, ts, v in zip(
        series.get("flow", []), series.get("time_ns", []), series.get(key, []), strict=False
    ):
        if f == flow and best_t < ts <= t:
            best_t, best_v = ts, float(v)
    return best_v


#: The simulator's series columns (docs/design.md §4), the same schema for both engines.
SERIES_KEYS = SERIES_COLUMNS


def _sender_vars(r: _Rows, i: int) -> dict[str, float]:
    g = r.get
    mss = g("snd_mss", i)
    cwnd = g("snd_cwnd", i)
    ss = g("snd_ssthresh", i)
    ssthresh = math.inf if ss >= INFINITE_SSTHRESH else ss * mss
    in_flight = (g("unacked", i) - g("sacked", i) - g("lost", i) + g("retrans", i)) * mss
    return {
        "cwnd_bytes": cwnd * mss,
        "cwnd_segments": cwnd,
        "ssthresh_bytes": ssthresh,
        "srtt_ns": g("rtt_us", i) * 1000,
        "rttvar_ns": g("rttvar_us", i) * 1000,
        "rto_ns": g("rto_us", i) * 1000,
        "snd_una": g("bytes_acked", i),
        "snd_nxt": 1 + g("bytes_sent", i) - g("bytes_retrans", i),
        "in_flight_bytes": in_flight,
        "rwnd_bytes": g("snd_wnd", i),
        "retransmits": g("total_retrans", i),
        "timeouts": g("total_rto", i),
        "pacing_rate_bps": g("pacing_rate", i) * 8,
    }


def _iperf_bytes(doc: dict[str, Any] | None, side: str) -> float:
    try:
        return float(doc["end"][side]["bytes"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return math.nan


def _iperf_udp_packets(doc: dict[str, Any] | None) -> float:
    try:
        return float(doc["end"]["sum"]["packets"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return math.nan


def validity(
    em_report: dict[str, Any],
    cfg: dict[str, Any],
    plan: Plan,
    min_rtts: dict[str, tuple],
    steal_ns: int | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The run's checks and the reasons it is invalid (empty: valid). *steal_ns*: the host's CPU
    steal time over the run (engine.cpu_steal_ns), named beside late packets when non-zero."""
    tol = TOLERANCES
    checks: list[dict[str, Any]] = []
    reasons: list[str] = []

    def add(what: str, measured: float, limit: str, ok: bool, why: str) -> None:
        checks.append({"check": what, "measured": measured, "limit": limit, "ok": ok})
        if not ok:
            reasons.append(why)

    if not em_report.get("links"):
        reasons.append("the link emulator produced no report")
    for lane in em_report.get("links", []):
        name = f"link {lane['name']} {lane['dir']}"
        c = lane.get("check", {})
        delay = lane.get("delay_ns", 0)
        for key in ("socket_drops", "oversize", "send_errors", "send_retries"):
            n = c.get(key, 0)
            add(
                f"{name} {key}",
                n,
                "0",
                n == 0,
                f"{name}: {n} {key.replace('_', ' ')} (frames the emulator could not handle: "
                "the machine could not keep up, or offloads were on)",
            )
        if lane.get("delivered", 0) < tol["min_packets"]:
            continue
        late = c.get("lateness", {})
        base, rel = tol["lateness_mean_ns"]
        lim = max(base, rel * delay)
        mean = float(late.get("mean_ns", 0.0))
        add(
            f"{name} mean extra delay",
            mean,
            f"≤ {lim:.0f} ns",
            mean <= lim,
            f"{name}: packets left {mean / 1e3:.0f} µs late on average (tolerance "
            f"{lim / 1e3:.0f} µs): the emulator could not keep up with the configured delay",
        )
        base, rel = tol["lateness_p99_ns"]
        lim = max(base, rel * delay)
        p99 = float(late.get("p99_ns", 0))
        add(
            f"{name} p99 extra delay",
            p99,
            f"≤ {lim:.0f} ns",
            p99 <= lim,
            f"{name}: 1 % of packets left more than {p99 / 1e6:.2f} ms late (tolerance "
            f"{lim / 1e6:.2f} ms)",
        )
        ach = c.get("achieved_rate_bps")
        if (
            ach is not None
            and c.get("rate_span_ns", 0) >= tol["rate_min_span_ns"]
            and lane.get("rate_bps")
        ):
            ratio = ach / lane["rate_bps"]
            ok = abs(ratio - 1) <= tol["rate_rel"]
            add(
                f"{name} achieved rate",
                ach,
                f"{lane['rate_bps']} ± {tol['rate_rel']:.0%}",
                ok,
                f"{name}: delivered {ach / 1e6:.3f} Mbit/s while backlogged, configured "
                f"{lane['rate_bps'] / 1e6:.3f} Mbit/s (tolerance ±{tol['rate_rel']:.0%})",
            )
    late = [c for c in checks if c["check"].endswith("extra delay") and not c["ok"]]
    if late and steal_ns:
        # A stall of the whole virtual machine: its CPUs were taken by the hypervisor, so the
        # emulator could not send on time however it was scheduled inside the machine.
        reasons.append(
            f"the hypervisor took {steal_ns / 1e6:.0f} ms of CPU time from this machine during "
            "the run (/proc/stat steal, all CPUs): the late packets are likely the host's "
            "stalls; run again on a quieter machine"
        )
    for flow, (measured, (base_lo, base_hi)) in min_rtts.items():
        if math.isnan(measured) or base_hi <= 0:  # NaN: no sample
            continue
        lo = base_lo - tol["min_rtt_below_ns"]
        a, r = tol["min_rtt_above"]
        hi = base_hi + max(a, r * base_hi)
        ok = lo <= measured <= hi
        add(
            f"flow {flow} min RTT",
            measured,
            f"[{lo:.0f}, {hi:.0f}] ns",
            ok,
            f"flow {flow}: minimum RTT {measured / 1e6:.3f} ms, the configured path gives "
            f"{base_lo / 1e6:.3f}-{base_hi / 1e6:.3f} ms",
        )
    return checks, reasons


def assemble(
    cfg: dict[str, Any],
    plan: Plan,
    flows: list[FlowInfo],
    *,
    samples: dict[str, np.ndarray] | None,
    period_ns: int,
    em_report: dict[str, Any],
    iperf: dict[int, dict[str, Any]],
    t0: int,
    steal_ns: int | None = None,
) -> dict[str, Any]:
    duration = int(cfg["duration_ns"])
    interval = int(cfg.get("interval_ns", 1_000_000_000))
    grid = _grid(duration, interval)
    series: dict[str, list] = {k: [] for k in SERIES_KEYS}
    changes: dict[str, list] = {
        "flow": [],
        "time_ns": [],
        "cwnd_bytes": [],
        "ssthresh_bytes": [],
        "in_flight_bytes": [],
    }
    watch = em_report.get("watch_series", {})
    fseries = em_report.get("flow_series", {})
    em_flows = {o["flow"]: o for o in em_report.get("flows", [])}
    em_counts = {c["flow"]: c for c in em_report.get("counts", [])}
    senders_per_ns: dict[int, int] = {}
    for f in flows:
        if f.kind == "tcp":
            senders_per_ns[f.src_ns_index] = senders_per_ns.get(f.src_ns_index, 0) + 1
    flow_totals = []
    kflows = []
    min_rtts: dict[str, tuple] = {}
    cfg_flows = cfg["flows"]
    sim_packets = 0
    for f in flows:
        fc = cfg_flows[f.index]
        last_tick = duration // period_ns
        tot: dict[str, Any] = {
            "name": f.name,
            "group": fc.get("group") or f.name,
            "kind": f.kind,
            "src": fc["src"],
            "dst": fc["dst"],
        }
        obs = em_flows.get(f.name, {})
        syn = obs.get("syn_mono_ns")
        first_data = obs.get("first_data_mono_ns")
        bulk = obs.get("first_bulk_mono_ns")
        start_ns = int(fc.get("start_ns", 0))
        # A flow that starts at start_ns sends its first full segment one handshake round trip
        # later (what the simulator does); the kernel flow starts later by start_offset_ns:
        # iperf3's process start, control connection and test start, then the handshake.
        hs_rtt = base_rtt_ns(cfg, plan, fc["src"], fc["dst"])[0]
        if bulk:
            offset = bulk - t0 - start_ns - int(hs_rtt)
        elif syn:
            offset = syn - t0 - start_ns
        else:
            offset = None
        kf: dict[str, Any] = {
            "name": f.name,
            "cca": f.cca,
            "launched_ns": f.launched_ns,
            "syn_ns": (syn - t0) if syn else None,
            # iperf3's cookie: the first data segment, sent as soon as the handshake is done.
            "first_data_ns": (first_data - t0) if first_data else None,
            "first_bulk_ns": (bulk - t0) if bulk else None,
            "start_offset_ns": offset,
            "applied_knobs": f.applied,
        }
        prev_t, prev_d = 0, 0.0
        if f.kind == "tcp":
            snd = _Rows(
                samples,
                _socket_mask(samples, f.src_ns_index, f.src_addr, f.cport, f.dst_addr, f.port),
            )
            rcv = _Rows(
                samples,
                _socket_mask(samples, f.dst_ns_index, f.dst_addr, f.port, f.src_addr, f.cport),
            )
            final_total = _iperf_bytes(iperf.get(f.index, {}).get("server"), "sum_received")
            fast = None
            if senders_per_ns.get(f.src_ns_index) == 1:
                fast = _netstat(samples, f.src_ns_index, "TCPFastRetrans")
            for t in grid:
                tick = t // period_ns
                ri = rcv.at(tick)
                d = rcv.get("bytes_received", ri)
                d = 0.0 if d != d else d
                if rcv.n and rcv.tick[-1] < tick - 2 and not math.isnan(final_total):
                    d = max(d, final_total)  # receiver closed: iperf's final count
                si = snd.at(tick)
                v = _sender_vars(snd, si)
                series["flow"].append(f.index)
                series["time_ns"].append(t)
                series["goodput_bps"].append((d - prev_d) * 8e9 / (t - prev_t))
                series["delivered_bytes"].append(int(d))
                for k, val in v.items():
                    series[k].append(val)
                if fast is not None and len(fast[0]):
                    j = int(np.searchsorted(fast[0], tick, side="right")) - 1
                    series["fast_retransmits"].append(float(fast[1][j]) if j >= 0 else 0.0)
                else:
                    series["fast_retransmits"].append(math.nan)
                series["dupacks"].append(_series_at(watch, f.name, "dupacks", t))
                series["sack_blocks"].append(_series_at(watch, f.name, "sack_blocks", t))
                prev_t, prev_d = t, d
            si = snd.at(last_tick)
            ri = rcv.at(last_tick)
            tot.update(
                {
                    "bytes_delivered": int(prev_d),
                    "data_packets_delivered": int(_nz(rcv.get("data_segs_in", ri))),
                    "bytes_sent": int(_nz(snd.get("bytes_sent", si))),
                    "segments_sent": int(_nz(snd.get("data_segs_out", si))),
                    "retransmits": int(_nz(snd.get("total_retrans", si))),
                    "fast_retransmits": series["fast_retransmits"][-1],
                    "timeouts": int(_nz(snd.get("total_rto", si))),
                    "dupacks": int(_nz(_series_at(watch, f.name, "dupacks", duration))),
                    "sack_blocks": int(_nz(_series_at(watch, f.name, "sack_blocks", duration))),
                    "dsack_blocks": int(_nz(snd.get("dsack_dups", si))),
                    "zero_window_probes": None,
                    "syn_retransmits": None,
                    "completion_ns": None,
                    "established": snd.n > 0,
                    "udp_sent": 0,
                    "udp_received": 0,
                }
            )
            sim_packets += tot["data_packets_delivered"]
            target = fc.get("bytes")
            if target and rcv.n:
                got = np.nonzero(rcv.cols["bytes_received"] >= int(target))[0]
                if len(got):
                    tot["completion_ns"] = int(rcv.cols["t_ns"][got[0]])
                elif not math.isnan(final_total) and final_total >= int(target):
                    tot["completion_ns"] = int(rcv.cols["t_ns"][-1])
            if cfg.get("record_changes") and snd.n:
                last = None
                for i in range(snd.n):
                    v = _sender_vars(snd, i)
                    key = (v["cwnd_bytes"], v["ssthresh_bytes"])
                    if key != last:
                        changes["flow"].append(f.index)
                        changes["time_ns"].append(int(snd.cols["t_ns"][i]))
                        changes["cwnd_bytes"].append(int(_nz(v["cwnd_bytes"])))
                        changes["ssthresh_bytes"].append(v["ssthresh_bytes"])
                        changes["in_flight_bytes"].append(int(_nz(v["in_flight_bytes"])))
                        last = key
            mr = snd.get("min_rtt_us", snd.n - 1) * 1000 if snd.n else math.nan
            kf["min_rtt_ns"] = mr
            min_rtts[f.name] = (mr, base_rtt_ns(cfg, plan, fc["src"], fc["dst"]))
            kf["iperf_server_bytes"] = final_total
            kf["samples_sender"] = snd.n
            kf["samples_receiver"] = rcv.n
        else:
            for t in grid:
                d = _series_at(fseries, f.name, "bytes", t)
                d = 0.0 if d != d else d
                series["flow"].append(f.index)
                series["time_ns"].append(t)
                series["goodput_bps"].append((d - prev_d) * 8e9 / (t - prev_t))
                series["delivered_bytes"].append(int(d))
                for k in SERIES_KEYS[4:]:
                    series[k].append(math.nan)
                prev_t, prev_d = t, d
            cnt = em_counts.get(f.name, {})
            received = int(_nz(_series_at(fseries, f.name, "packets", duration)))
            sent = _iperf_udp_packets(iperf.get(f.index, {}).get("client"))
            tot.update(
                {
                    "bytes_delivered": int(prev_d),
                    "data_packets_delivered": received,
                    "bytes_sent": None,
                    "segments_sent": None,
                    "retransmits": 0,
                    "fast_retransmits": 0,
                    "timeouts": 0,
                    "dupacks": 0,
                    "sack_blocks": 0,
                    "dsack_blocks": 0,
                    "zero_window_probes": 0,
                    "syn_retransmits": 0,
                    "completion_ns": None,
                    "established": cnt.get("packets", 0) > 0,
                    "udp_sent": int(sent) if sent == sent else None,
                    "udp_received": received,
                }
            )
            sim_packets += received
        client = iperf.get(f.index, {}).get("client") or {}
        kf["iperf_error"] = client.get("error")
        kf["iperf_intervals"] = [
            (iv["sum"]["start"], iv["sum"]["end"], iv["sum"]["bytes"])
            for iv in client.get("intervals", [])
            if "sum" in iv
        ]
        flow_totals.append(tot)
        kflows.append(kf)
    monitor = {lk.name: lk.monitor for lk in plan.links}
    links = []
    for lane in em_report.get("links", []):
        links.append(
            {
                k: lane.get(k)
                for k in (
                    "name",
                    "dir",
                    "from",
                    "to",
                    "rate_bps",
                    "delay_ns",
                    "packets",
                    "bytes",
                    "drops",
                    "lost",
                    "busy_ns",
                    "max_queue_pkts",
                )
            }
            | {"monitor": monitor.get(lane["name"], False)}
        )
    qs = em_report.get("queue_series", {})
    keep = [i for i, t in enumerate(qs.get("time_ns", [])) if t <= duration]
    queue_series = {k: [v[i] for i in keep] for k, v in qs.items()}
    checks, reasons = validity(em_report, cfg, plan, min_rtts, steal_ns)
    fine = None
    if ((cfg.get("meta") or {}).get("kernel") or {}).get("fine_series"):
        fine = _fine_series(flows, samples)
    raw: dict[str, Any] = {
        "engine": "kernel",
        "sim_packets": sim_packets,
        "events": 0,
        "end_ns": duration,
        "duration_ns": duration,
        "interval_ns": interval,
        "flows": flow_totals,
        "links": links,
        "series": series,
        "queue_series": queue_series,
        "changes": changes if cfg.get("record_changes") else None,
        "valid": not reasons,
        "invalid_reasons": reasons,
        "kernel": {
            "t0_mono_ns": t0,
            "sample_period_ns": period_ns,
            # CPU time the hypervisor took from this machine during the run (None: not reported).
            "host_steal_ns": steal_ns,
            "flows": kflows,
            "checks": checks,
            "tolerances": {
                k: list(v) if isinstance(v, tuple) else v for k, v in TOLERANCES.items()
            },
            "fine": fine,
            "emulator": {
                "realtime_priority": em_report.get("realtime_priority"),
                "stopped_by": em_report.get("stopped_by"),
                "links": [
                    {"name": lane["name"], "dir": lane["dir"], **lane.get("check", {})}
                    for lane in em_report.get("links", [])
                ],
                # The one thread's wake-up lateness and send gaps over all directions
                # (crates/tcplab-linkem/src/hist.rs ThreadTiming).
                "thread": em_report.get("thread"),
            },
        },
    }
    return raw


def _fine_series(flows: list[FlowInfo], samples: dict[str, np.ndarray] | None) -> dict:
    """Every sampler tick of each TCP flow (for ``tcplab compare``): sender cwnd/ssthresh/srtt/
    retransmissions and receiver bytes, with the tick's actual time."""
    out: dict[str, Any] = {}
    for f in flows:
        if f.kind != "tcp":
            continue
        snd = _Rows(
            samples, _socket_mask(samples, f.src_ns_index, f.src_addr, f.cport, f.dst_addr, f.port)
        )
        rcv = _Rows(
            samples, _socket_mask(samples, f.dst_ns_index, f.dst_addr, f.port, f.src_addr, f.cport)
        )
        sv = [_sender_vars(snd, i) for i in range(snd.n)]
        out[f.name] = {
            "sender_t_ns": [int(t) for t in snd.cols.get("t_ns", [])],
            "cwnd_bytes": [v["cwnd_bytes"] for v in sv],
            "cwnd_segments": [v["cwnd_segments"] for v in sv],
            "ssthresh_bytes": [v["ssthresh_bytes"] for v in sv],
            "srtt_ns": [v["srtt_ns"] for v in sv],
            "retransmits": [v["retransmits"] for v in sv],
            "timeouts": [v["timeouts"] for v in sv],
            "receiver_t_ns": [int(t) for t in rcv.cols.get("t_ns", [])],
            "delivered_bytes": [int(b) for b in rcv.cols.get("bytes_received", [])],
        }
    return out


def _nz(x: float) -> float:
    return 0.0 if x != x else x
