"""``tcplab compare``: one scenario on the simulator and on the kernel, and a fidelity report.

The simulator runs with the scenario's TCP knobs as given plus Linux's behaviour for every knob
the scenario leaves open: the simulator's ``linux-6`` personality with this machine's buffer
limits (:func:`tcplab.kernel.linux.linux6_tcp_knobs`). Both runs use trial 0's seed, and random
(Bernoulli) loss is turned into the same explicit list of lost packets for both
(:func:`common_loss_pattern`): with tens of loss events per run, two independent draws differ by
±20 % in goodput on their own.

**Alignment.** A kernel flow starts when iperf3 has set up its control connection, some RTTs
after the scenario's start time. The simulated flows open as the kernel's iperf3 did
(:func:`iperf3_start`: the 37-byte cookie when the kernel's left, the bulk the kernel's gap
after its ACK, the hosts' timestamp clocks at the kernel run's phase) and the kernel's series
are shifted by the earliest flow's delay, so that both engines' flows start at ``t = start``
(records without the emulator's SYN and bulk times: :func:`start_stagger`, aligned on the first
bulk segment); the kernel's cumulative bytes and its cwnd (sampled every few ms) are
interpolated onto the simulator's time points.

**Metrics and tolerances** (per flow; :data:`TOLERANCES`):

* mean goodput over the flow's active time — relative difference ≤ 10 % (the issue's criterion);
* per-interval goodput — mean absolute difference ≤ 15 % of the kernel's mean goodput
  (correlation reported);
* cwnd trajectory on a common 10 ms grid — mean absolute difference ≤ 25 % of the kernel's mean
  cwnd and mean cwnd within 15 % (correlation reported);
* retransmitted segments — within max(10, 30 %) of each other; RTO timeouts — within
  max(2, 50 %);
* flows of one group that are exchangeable (the streams of one ``[[flow]]``) are judged as a
  group (:func:`_group_checks`): aggregate goodput and each sorted share within 10 %, Jain's
  fairness index within 0.05, summed retransmissions and timeouts as above.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError
from ..results import jain_index
from . import linux

__all__ = ["KERNEL_RECORD", "TOLERANCES", "compare", "fidelity", "linux_sim_config", "replay"]

TOLERANCES = {
    "mean_goodput_rel": 0.10,
    "interval_goodput_mae_rel": 0.15,
    "cwnd_mae_rel": 0.25,
    "cwnd_mean_rel": 0.15,
    "retransmits": (10, 0.30),
    "timeouts": (2, 0.50),
    "jain_abs": 0.05,
}
GRID_NS = 10_000_000


def linux_sim_config(config: dict[str, Any], known_knobs: set[str] | None = None) -> dict[str, Any]:
    """*config* for the simulator, with Linux's knobs where the scenario sets none.

    The ONE mapping is :func:`tcplab.kernel.linux.linux6_tcp_knobs`; *known_knobs* filters it
    to the knobs this simulator build has (default: ``tcplab._core.tcp_knobs()``).
    """
    if known_knobs is None:
        from ..catalog import default_catalog

        known_knobs = set(default_catalog().knobs)
    cfg = copy.deepcopy(config)
    for f in cfg["flows"]:
        if f.get("kind") != "tcp":
            continue
        mtu = 1500
        for link in cfg["links"]:
            if f["src"] in (link["a"], link["b"]):
                mtu = int(link.get("mtu", 1500))
                break
        base = {k: v for k, v in linux.linux6_tcp_knobs(mtu).items() if k in known_knobs}
        # The kernel's congestion control is Linux 6.x's too: the linux-6 personality's
        # parameters for it (e.g. CUBIC's jiffy clock), under any the scenario sets itself.
        cca = f.get("cca")
        if isinstance(cca, dict) and cca.get("name"):
            cca["params"] = {**linux.linux6_cca_params(cca["name"]), **(cca.get("params") or {})}
        # The receiver is a Linux host too: its side gets Linux's knobs under its own (e.g. the
        # buffers of ``window``). The scenario's config always writes ``receiver_tcp`` out (a
        # copy of ``tcp`` when the file gives the receiver nothing of its own, possibly empty),
        # and the simulator takes it as it stands: a side left empty here would run the
        # simulator's generic receiver (64 MB buffer, 200 ms delayed ACKs, no quick ACKs, no
        # SACK compression), not Linux's.
        for side in ("tcp", "receiver_tcp"):
            own = f.get(side) or {}
            mine = dict(base)
            if "rcvbuf" in own and "rcvbuf_autotune_max" not in own:
                # A fixed buffer (window = iperf -w = SO_RCVBUF) switches autotuning off (Linux
                # SOCK_RCVBUF_LOCK), as python/tcplab/stacks/rules.py does for personalities.
                mine.pop("rcvbuf_autotune_max", None)
            f[side] = {**mine, **own}
    return cfg


def start_stagger(kern: dict[str, Any]) -> dict[str, int]:
    """Per flow, how much later than the most punctual flow the kernel started it (ns).

    Each kernel flow starts some 100 ms after its scheduled time (iperf3's process and control
    connection) and the flows of one run not at the same instant: the two streams of one iperf3
    client start a few milliseconds apart. Those milliseconds decide a run: two CUBIC flows
    whose starts differ by 1-4 ms leave HyStart at windows of about 250 and 100 segments and
    split 59/37 Mbit/s in the simulator as on Linux, where simultaneous starts split 48/48
    (measured with validation scenario C). So the simulator starts each flow this much later,
    and both engines' series are aligned on the most punctual flow (:func:`common_start_offset`).
    """
    offs = {
        f["name"]: int(f["start_offset_ns"])
        for f in kern.get("kernel", {}).get("flows", [])
        if f.get("start_offset_ns") is not None
    }
    if not offs:
        return {}
    first = min(offs.values())
    return {name: v - first for name, v in offs.items()}


def common_start_offset(kern: dict[str, Any], stagger: dict[str, int]) -> dict[str, Any]:
    """*kern* with every flow's alignment offset set to the most punctual flow's, so that a
    kernel flow's own lateness (*stagger*) stays in its series, as it does in the simulator's."""
    if not stagger:
        return kern
    out = copy.deepcopy(kern)
    for f in out["kernel"]["flows"]:
        if f["name"] in stagger:
            f["start_offset_ns"] = int(f["start_offset_ns"]) - stagger[f["name"]]
            f["stagger_ns"] = stagger[f["name"]]
    return out


#: Linux's TCP timestamp clock: whole milliseconds of CLOCK_MONOTONIC (``tcp_clock_ms``).
KERNEL_TS_TICK_NS = 1_000_000


def iperf3_start(
    config: dict[str, Any], kern: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]] | None:
    """The kernel trial's own start of each flow, for the simulator: (*config* with every TCP
    flow opening as iperf3 does, *kern* aligned accordingly, the start stagger), or None when a
    TCP flow's SYN or first bulk segment was not seen (then :func:`start_stagger`'s alignment
    on the bulk applies).

    An iperf3 client writes a 37-byte cookie on the data connection as soon as it is up and
    starts its bulk when the server's answer on the control connection arrives, with the ACK
    of the cookie (the simulator's ``prelude_bytes``; crates/tcplab-sim/src/tcp/sender/mod.rs,
    ``Prelude``). Each simulated flow opens so that its cookie leaves when the kernel's did
    (relative to the trial's other flows: its SYN one empty-path round trip earlier, since a
    kernel handshake can take longer, e.g. a SYN-ACK that waited) and starts its bulk
    ``prelude_gap_ns`` after the cookie's ACK: the kernel flow's time from cookie to first bulk
    segment beyond one round trip of the empty path, the two iperf3 processes' own time
    (0.5-2.6 ms on this machine). So the receiver's autotuning interval starts at the
    handshake, a round trip and that gap before the bulk arrives, as in the kernel, and the
    sender's first RTT sample is the small cookie's. Records made before the cookie was kept
    (``first_data_ns``) take the SYN instead, the handshake counted as one round trip.

    Every host's timestamp clock gets the kernel run's phase (knob ``clock_phase``): Linux's
    ticks are whole milliseconds of CLOCK_MONOTONIC, and simulated time *s* is the kernel's
    ``t0_mono_ns`` + alignment offset + *s*. Which side of a tick an echo falls on decides the
    receiver's 1-ms RTT samples, hence where its autotuning intervals end.

    Approximation: queueing that the kernel flow's handshake or cookie met (a flow starting
    beside a running one) is counted in the gap and met again by the simulated flow; the
    one-way delay from sender to emulator is the same for every segment of a flow, so it
    cancels out of the differences."""
    from ..scenario.flows import IPERF3_COOKIE_BYTES
    from .result import base_rtt_ns
    from .topology import plan

    k = kern.get("kernel", {})
    kflows = {f["name"]: f for f in k.get("flows", [])}
    tcp = [f for f in config["flows"] if f.get("kind") == "tcp"]
    seen = [kflows.get(f["name"]) for f in tcp]
    if not tcp or any(o is None or not o.get("syn_ns") or not o.get("first_bulk_ns") for o in seen):
        return None
    p = plan(config)
    opened: dict[str, int] = {}
    gaps: dict[str, int] = {}
    for f, o in zip(tcp, seen, strict=True):
        assert o is not None
        lo = int(base_rtt_ns(config, p, f["src"], f["dst"])[0])
        # When the cookie left (kernel run time) and when the simulated SYN must leave for it.
        cookie = int(o.get("first_data_ns") or int(o["syn_ns"]) + lo)
        opened[f["name"]] = cookie - lo - int(f.get("start_ns", 0))
        gaps[f["name"]] = max(0, int(o["first_bulk_ns"]) - cookie - lo)
    first = min(opened.values())
    stagger = {name: v - first for name, v in opened.items()}
    cfg = staggered(config, stagger)
    phase = None
    if k.get("t0_mono_ns") is not None:
        phase = (int(k["t0_mono_ns"]) + first) % KERNEL_TS_TICK_NS
    for f in cfg["flows"]:
        if f["name"] in gaps:
            f["prelude_bytes"] = IPERF3_COOKIE_BYTES
            f["prelude_gap_ns"] = gaps[f["name"]]
            if phase is not None:
                for side in ("tcp", "receiver_tcp"):
                    f[side] = {**(f.get(side) or {}), "clock_phase": phase}
    # Each TCP flow's own offset, then all aligned on the earliest (minus its stagger).
    out = copy.deepcopy(kern)
    for f in out["kernel"]["flows"]:
        if f["name"] in opened:
            f["start_offset_ns"] = opened[f["name"]]
    return cfg, common_start_offset(out, stagger), stagger


def staggered(config: dict[str, Any], stagger: dict[str, int]) -> dict[str, Any]:
    """*config* with each flow's start delayed by its kernel *stagger* (stop times unchanged)."""
    cfg = copy.deepcopy(config)
    for f in cfg["flows"]:
        d = stagger.get(f["name"], 0)
        if d:
            f["start_ns"] = int(f.get("start_ns", 0)) + d
    return cfg


#: Samples of a direction's lateness below which its distribution is not given to the simulator.
MIN_LATENESS_SAMPLES = 100


#: Probability grid on which a measured lateness and the scenario's own jitter are summed.
SUM_GRID = 2001


def _quantiles(jitter: dict[str, Any] | None, p: np.ndarray) -> np.ndarray:
    """A link direction's jitter config (none, uniform or empirical) at probabilities *p*, ns."""
    model = (jitter or {}).get("model", "none")
    if model == "uniform":
        return p * float(jitter["max_ns"])  # type: ignore[index]
    if model == "empirical":
        v, q = np.asarray(jitter["cdf"], dtype=float).T  # type: ignore[index]
        return np.interp(p, q, v)
    return np.zeros_like(p)


def with_emulator_jitter(
    config: dict[str, Any], kern: dict[str, Any], model: str = "thread"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """*config* with each emulated link direction's measured lateness added as jitter, and what
    was applied per direction (mean and 99th percentile in µs, the distribution function).

    The kernel run's one-way delays are the configured ones plus the emulator's lateness, the
    time its thread sent a packet after the packet's due time (crates/tcplab-linkem/src/
    serve.rs; tens of µs on this 2-core machine, more under load). It is the testbed's own
    timing noise and decides, among other things, which of two flows loses at a drop-tail
    overflow (crates/tcplab-sim/src/link.rs, "Jitter"); without it the simulator's trials of a
    scenario without random loss are one run. The distribution given is the emulator's *own*
    lateness (``own_lateness``: packets that found it idle, one sample per late wake-up), not
    that of every packet: the simulator's link holds the packets behind a late one back by
    itself, as the emulator did, so drawing from the all-packet distribution would count each
    late wake-up several times over. It is added to any jitter the scenario itself asks for
    (which the emulator applied as well: the sum of independent draws). Within a direction the
    draws are independent per packet, as measured (an access lane's own lateness has a lag-1
    autocorrelation of 0.03; README, "The C/CUBIC disagreement is a phase effect"). Across
    directions they are not: one emulator thread serves them all, and packets of different
    directions due within a few µs leave in the same wake-up (lateness correlated +0.7,
    measured 2026-11-28). So with *model* ``"thread"`` (the default) and a kernel run that
    measured the thread's timing (``emulator.thread``), the directions are served by one
    simulated thread with that wake-up lateness and those send gaps instead
    (:func:`_thread_model`, crates/tcplab-sim/src/emuthread.rs); ``"lanes"`` keeps the
    independent draws per direction."""
    cfg = copy.deepcopy(config)
    emulator = kern.get("kernel", {}).get("emulator") or {}
    lanes = {
        (ln["name"], ln["dir"]): ln.get("own_lateness") or {} for ln in emulator.get("links", [])
    }
    applied: dict[str, Any] = {}
    thread = _thread_model(cfg, emulator, lanes) if model == "thread" else None
    if thread is not None:
        cfg["emulator_thread"], applied = thread
    for link in cfg["links"]:
        for d in ("ab", "ba"):
            if thread is not None and f"{link['name']}.{d}" in thread[0]["channels"]:
                continue
            late = lanes.get((link["name"], d), {})
            cdf = late.get("cdf") or []
            if int(late.get("count", 0)) < MIN_LATENESS_SAMPLES or len(cdf) < 2:
                continue
            ch = link[d]
            if ch.get("jitter", {}).get("model", "none") != "none":
                # The sum of two independent draws, from the grid of pairs of their quantiles
                # (its tails resolved to 1/SUM_GRID; only when the scenario has jitter itself).
                p = np.linspace(0.0, 1.0, SUM_GRID)
                own = _quantiles(ch["jitter"], p)
                measured = _quantiles({"model": "empirical", "cdf": cdf}, p)
                total = np.sort((own[:, None] + measured[None, :]).ravel())
                cdf = list(zip(np.maximum.accumulate(np.quantile(total, p)), p, strict=True))
            ch["jitter"] = {"model": "empirical", "cdf": [[int(a), float(b)] for a, b in cdf]}
            applied[f"{link['name']}.{d}"] = {
                "lateness_mean_us": float(late.get("mean_ns", 0.0)) / 1e3,
                "lateness_p99_us": float(late.get("p99_ns", 0)) / 1e3,
                "cdf": ch["jitter"]["cdf"],
            }
    return cfg, applied


def _thread_model(
    cfg: dict[str, Any], emulator: dict[str, Any], lanes: dict[tuple[str, str], Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The simulator's emulator thread (crates/tcplab-sim/src/emuthread.rs) from the kernel
    run's measured thread timing, serving every emulated direction without jitter of its own;
    None for a kernel result without that measurement (made before 2026-11-28) or with too few
    samples — then each direction gets its own lateness, drawn independently.

    Measured (README, "The real-kernel engine"): the emulator is one thread, and packets of
    different directions due within a few µs of each other leave in the same wake-up, one
    ``sendto`` (≈ 7 µs) after the other; their lateness is correlated (+0.7), which independent
    draws per direction cannot give."""
    t = emulator.get("thread") or {}
    wake, gap = t.get("wakeup_lateness") or {}, t.get("send_gap") or {}
    for h in (wake, gap):
        if int(h.get("count", 0)) < MIN_LATENESS_SAMPLES or len(h.get("cdf") or []) < 2:
            return None
    channels = [
        f"{link['name']}.{d}"
        for link in cfg["links"]
        for d in ("ab", "ba")
        if (link["name"], d) in lanes
        and (link[d].get("jitter") or {}).get("model", "none") == "none"
        and not link[d].get("tick_ns")
    ]
    if not channels:
        return None
    model = {
        "channels": channels,
        "wakeup": {"model": "empirical", "cdf": [[int(a), float(b)] for a, b in wake["cdf"]]},
        "send_gap": {"model": "empirical", "cdf": [[int(a), float(b)] for a, b in gap["cdf"]]},
    }
    applied = {
        f"emulator thread, {what}": {
            "lateness_mean_us": float(h.get("mean_ns", 0.0)) / 1e3,
            "lateness_p99_us": float(h.get("p99_ns", 0)) / 1e3,
            "cdf": model[key]["cdf"],
        }
        for what, key, h in (("wake-up", "wakeup", wake), ("send gap", "send_gap", gap))
    }
    return model, applied


def common_loss_pattern(config: dict[str, Any]) -> dict[str, Any]:
    """*config* with every Bernoulli loss replaced by the explicit list of lost packet indices it
    draws (``{"model": "list"}``, docs/scenario-format.md), so that both engines lose the same
    packets and the comparison measures the models, not two independent loss draws.

    The list covers every packet the link direction could carry in the run (its rate × duration
    in 40-byte packets); indices count the packets admitted to that direction — in the kernel
    engine only the scenario's flows' packets (crates/tcplab-linkem ``loss_only``). Drawn from a
    stream seeded by the trial seed and the link direction's name.
    """
    cfg = copy.deepcopy(config)
    for link in cfg["links"]:
        for d in ("ab", "ba"):
            ch = link[d]
            loss = ch.get("loss") or {}
            if loss.get("model") != "bernoulli":
                continue
            p = float(loss["p"])
            n = int(ch["rate_bps"] * cfg["duration_ns"] / 1e9 / (8 * 40)) + 1
            key = f"{cfg['seed']}:{link['name']}.{d}".encode()
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))
            # Geometric gaps between losses = Bernoulli(p) per packet.
            gaps = rng.geometric(p, size=int(n * p * 1.2) + 100)
            idx = np.cumsum(gaps) - 1
            ch["loss"] = {"model": "list", "packets": [int(i) for i in idx[idx < n]]}
    return cfg


# ---------------------------------------------------------------------------------------------
# Series helpers


def _flow_series(raw: dict[str, Any], idx: int, key: str) -> tuple[np.ndarray, np.ndarray]:
    s = raw["series"]
    flows = np.asarray(s["flow"])
    names = [f["name"] for f in raw["flows"]]
    # A column of names instead of indices is accepted too.
    mask = flows == names[idx] if flows.dtype.kind in "OU" else flows == idx
    t = np.asarray(s["time_ns"], dtype=float)[mask]
    v = np.asarray(
        [np.nan if x is None else x for x in np.asarray(s[key], dtype=object)[mask]], dtype=float
    )
    return t, v


def _step(t: np.ndarray, v: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Value of a step function (last sample at or before) at times *at*; NaN before the first."""
    if len(t) == 0:
        return np.full(len(at), np.nan)
    i = np.searchsorted(t, at, side="right") - 1
    out = np.where(i >= 0, v[np.clip(i, 0, None)], np.nan)
    return out.astype(float)


def _corr(a: np.ndarray, b: np.ndarray) -> float | None:
    m = np.isfinite(a) & np.isfinite(b)
    if m.sum() < 3 or np.std(a[m]) == 0 or np.std(b[m]) == 0:
        return None
    return float(np.corrcoef(a[m], b[m])[0, 1])


def _floats(xs: Any) -> np.ndarray:
    """*xs* as floats, None as NaN (a recorded series with gaps)."""
    return np.asarray([np.nan if x is None else x for x in xs], dtype=float)


# ssthresh at or above this many bytes is Linux's "infinite" initial value (0x7fffffff segments).
_SSTHRESH_INF = 1e12


def _reductions(t: np.ndarray, ssthresh: np.ndarray) -> np.ndarray:
    """Times at which a flow's ssthresh takes a new value, after its first finite one (the end of
    the first slow start is not counted): the flow's congestion responses, one per change."""
    ss = np.asarray(ssthresh, dtype=float)
    ok = np.isfinite(ss) & (ss < _SSTHRESH_INF)
    t, ss = np.asarray(t, dtype=float)[ok], ss[ok]
    if len(ss) < 2:
        return np.zeros(0)
    return t[1:][np.diff(ss) != 0]


def _loss_events(
    reductions: dict[str, np.ndarray],
    cwnd: dict[str, tuple[np.ndarray, np.ndarray]],
    rtt_ns: float,
) -> dict[str, int]:
    """Who responded to each congestion event of a group of flows: the flows' ssthresh changes
    (:func:`_reductions`) within two round trips of the first one are one event (the overflow
    that caused it is seen by every flow it hit within a round trip, and the kernel's samples
    are 20 ms apart); an event is ``several`` when more than one flow responded, else
    ``largest`` when the one flow that did had the largest cwnd of the group one round trip
    before the event, else ``other``. With drops falling on packets at random the largest flow
    takes about its share of the single-flow events; a deterministic phase (Floyd & Jacobson
    1992) can give them all to one flow (README, "The real-kernel engine", C/CUBIC)."""
    out = {"events": 0, "several": 0, "largest": 0, "other": 0}
    allr = sorted((float(x), name) for name, ts in reductions.items() for x in ts)
    window = 2.0 * rtt_ns
    i = 0
    while i < len(allr):
        t0 = allr[i][0]
        names = {allr[i][1]}
        j = i + 1
        while j < len(allr) and allr[j][0] - t0 < window:
            names.add(allr[j][1])
            j += 1
        out["events"] += 1
        if len(names) > 1:
            out["several"] += 1
        else:
            (who,) = names
            before = np.array([t0 - rtt_ns])
            sizes = {n: float(_step(*cwnd[n], before)[0]) for n in cwnd}
            mine = sizes.get(who, math.nan)
            rest = [v for n, v in sizes.items() if n != who and v == v]
            out["largest" if mine == mine and all(mine >= v for v in rest) else "other"] += 1
        i = j
    return out


def _within(a: float, b: float, abs_tol: float, rel_tol: float) -> bool:
    return abs(a - b) <= max(abs_tol, rel_tol * max(abs(a), abs(b)))


def _check(value: float | None, ok: bool | None, limit: str) -> dict[str, Any]:
    """One check; a value that is None or NaN could not be evaluated (``pass`` None)."""
    if value is None or value != value:
        ok = None
    return {"value": value, "pass": ok, "limit": limit}


def _verdict(checks: dict[str, Any]) -> str:
    """'pass' when every check passed, 'FAIL' when one failed, else 'not evaluated': a check
    that could not be evaluated (a kernel flow that moved no bytes gives NaN) is never a pass."""
    states = [c["pass"] for c in checks.values()]
    if any(x is False for x in states):
        return "FAIL"
    return "pass" if states and all(x is True for x in states) else "not evaluated"


def fidelity(
    config: dict[str, Any],
    sim: dict[str, Any] | None,
    kern: dict[str, Any],
    sim_error: str | None = None,
) -> dict[str, Any]:
    """Per-flow comparison of a simulator and a kernel raw result of the same config."""
    duration = int(config["duration_ns"])
    kflows = {f["name"]: f for f in kern.get("kernel", {}).get("flows", [])}
    fine = kern.get("kernel", {}).get("fine") or {}
    out_flows = []
    # Per engine and TCP flow: its ssthresh changes and cwnd steps; the kernel's smallest SRTT.
    responses: dict[str, dict[str, Any]] = {"sim": {}, "kernel": {}}
    srtt_min: dict[str, float] = {}
    for idx, fc in enumerate(config["flows"]):
        name = fc["name"]
        entry: dict[str, Any] = {
            "flow": name,
            "kind": fc["kind"],
            "cca": (fc.get("cca") or {}).get("name"),
        }
        kf = kflows.get(name, {})
        offset = kf.get("start_offset_ns") or 0
        entry["kernel_start_offset_ms"] = offset / 1e6
        start = int(fc.get("start_ns", 0))
        stop = min(int(fc.get("stop_ns") or duration), duration)
        if sim is None:
            entry["error"] = sim_error or "the simulator did not run"
            entry["pass"] = False
            out_flows.append(entry)
            continue
        sflow = sim["flows"][idx]
        kflow = kern["flows"][idx]
        # Mean goodput over each engine's active time.
        s_mean = sflow["bytes_delivered"] * 8e9 / max(1, stop - start)
        k_mean = kflow["bytes_delivered"] * 8e9 / max(1, stop - start - offset)
        rel = (s_mean - k_mean) / k_mean if k_mean else math.nan
        entry["mean_goodput_bps"] = {"sim": s_mean, "kernel": k_mean, "rel_diff": rel}
        # Per-interval goodput on the simulator's grid, kernel shifted by its start offset.
        ts, s_del = _flow_series(sim, idx, "delivered_bytes")
        fk = fine.get(name)
        if fk and fk["receiver_t_ns"]:
            kt = np.asarray(fk["receiver_t_ns"], dtype=float) - offset
            kd = np.asarray(fk["delivered_bytes"], dtype=float)
        else:
            kt, kd = _flow_series(kern, idx, "delivered_bytes")
            kt = kt - offset
        kt = np.concatenate([[start], kt])
        kd = np.concatenate([[0.0], kd])
        valid_t = ts[ts + offset <= duration]
        k_at = np.interp(valid_t, kt, kd)
        s_at = np.interp(valid_t, ts, s_del)
        prev_t = np.concatenate([[0.0], valid_t[:-1]])
        s_gp = np.diff(np.concatenate([[0.0], s_at])) * 8e9 / (valid_t - prev_t)
        k_gp = np.diff(np.concatenate([[0.0], k_at])) * 8e9 / (valid_t - prev_t)
        active = valid_t > start
        if active.any() and k_mean > 0:
            mae = float(np.mean(np.abs(s_gp[active] - k_gp[active]))) / k_mean
        else:
            mae = math.nan
        entry["interval_goodput"] = {
            "time_s": (valid_t / 1e9).tolist(),
            "sim_bps": s_gp.tolist(),
            "kernel_bps": k_gp.tolist(),
            "mae_rel": mae,
            "correlation": _corr(s_gp[active], k_gp[active]),
        }
        if fc["kind"] == "tcp":
            grid = np.arange(start + GRID_NS, min(stop, duration - offset), GRID_NS, dtype=float)
            ch = sim.get("changes") or {}
            if ch and len(ch.get("time_ns", [])):
                cf = np.asarray(ch["flow"])
                names = [f["name"] for f in sim["flows"]]
                m = (cf == idx) if cf.dtype.kind not in "OU" else (cf == names[idx])
                st = np.asarray(ch["time_ns"], dtype=float)[m]
                sc = np.asarray(ch["cwnd_bytes"], dtype=float)[m]
                if "ssthresh_bytes" in ch:
                    sss = _floats(ch["ssthresh_bytes"])[m]
                    responses["sim"][name] = (_reductions(st, sss), (st, sc))
            else:
                st, sc = _flow_series(sim, idx, "cwnd_bytes")
            if fk and fk["sender_t_ns"]:
                kt2 = np.asarray(fk["sender_t_ns"], dtype=float) - offset
                kc = np.asarray(fk["cwnd_bytes"], dtype=float)
                if fk.get("ssthresh_bytes") is not None:
                    kss = _floats(fk["ssthresh_bytes"])
                    responses["kernel"][name] = (_reductions(kt2, kss), (kt2, kc))
                rtts = [x for x in fk.get("srtt_ns") or [] if x is not None and x > 0]
                if rtts:
                    srtt_min[name] = float(min(rtts))
            else:
                kt2, kc = _flow_series(kern, idx, "cwnd_bytes")
                kt2 = kt2 - offset
            s_c = _step(st, sc, grid)
            k_c = _step(kt2, kc, grid)
            mss = 1448.0
            both = np.isfinite(s_c) & np.isfinite(k_c)
            if both.any():
                k_mean_c = float(np.mean(k_c[both]))
                s_mean_c = float(np.mean(s_c[both]))
                cmae = float(np.mean(np.abs(s_c[both] - k_c[both]))) / k_mean_c
                cmean = (s_mean_c - k_mean_c) / k_mean_c
            else:
                k_mean_c = s_mean_c = cmae = cmean = math.nan
            step = max(1, len(grid) // 2000)
            entry["cwnd"] = {
                "mean_rel": cmean,
                "time_s": (grid[::step] / 1e9).tolist(),
                "sim_segments": (s_c[::step] / mss).tolist(),
                "kernel_segments": (k_c[::step] / mss).tolist(),
                "mean_sim_bytes": s_mean_c,
                "mean_kernel_bytes": k_mean_c,
                "mae_rel": cmae,
                "correlation": _corr(s_c, k_c),
            }
            for key in ("retransmits", "timeouts"):
                entry[key] = {
                    "sim": float(sflow.get(key) or 0),
                    "kernel": float(kflow.get(key) or 0),
                }
        entry["checks"] = _flow_checks(entry)
        entry["verdict"] = _verdict(entry["checks"])
        entry["pass"] = entry["verdict"] == "pass"
        out_flows.append(entry)
    groups = _group_checks(config, out_flows)
    for g in groups:
        members = list(g["flows"])
        rtt = min((srtt_min[n] for n in members if n in srtt_min), default=math.nan)
        if len(members) < 2 or rtt != rtt:
            continue
        g["loss_events"] = {
            w: _loss_events(
                {n: responses[w][n][0] for n in members},
                {n: responses[w][n][1] for n in members},
                rtt,
            )
            for w in ("sim", "kernel")
            if all(n in responses[w] for n in members)
        }
    kernel_valid = bool(kern.get("valid", True))
    judged = [f for f in out_flows if not f.get("exchangeable")]
    return {
        "tolerances": {k: list(v) if isinstance(v, tuple) else v for k, v in TOLERANCES.items()},
        "kernel_valid": kernel_valid,
        "kernel_invalid_reasons": kern.get("invalid_reasons", []),
        "flows": out_flows,
        "groups": groups,
        "pass": kernel_valid
        and all(f.get("pass") for f in judged)
        and all(g["pass"] for g in groups),
    }


def _flow_checks(entry: dict[str, Any]) -> dict[str, Any]:
    """A flow's checks (:data:`TOLERANCES`) from the numbers of its report entry."""
    tol = TOLERANCES
    rel = entry["mean_goodput_bps"]["rel_diff"]
    checks = {
        "mean_goodput": _check(
            rel,
            abs(rel) <= tol["mean_goodput_rel"] if rel == rel else None,
            f"|rel diff| ≤ {tol['mean_goodput_rel']:.0%}",
        )
    }
    mae = entry["interval_goodput"]["mae_rel"]
    checks["interval_goodput"] = _check(
        mae,
        mae <= tol["interval_goodput_mae_rel"] if mae == mae else None,
        f"mean |diff| ≤ {tol['interval_goodput_mae_rel']:.0%} of kernel mean goodput",
    )
    c = entry.get("cwnd")
    if c is not None:
        cmae, cmean = c["mae_rel"], c["mean_rel"]
        checks["cwnd_mae"] = _check(
            cmae,
            cmae <= tol["cwnd_mae_rel"] if cmae == cmae else None,
            f"mean |diff| ≤ {tol['cwnd_mae_rel']:.0%} of kernel mean cwnd",
        )
        checks["cwnd_mean"] = _check(
            cmean,
            abs(cmean) <= tol["cwnd_mean_rel"] if cmean == cmean else None,
            f"|mean cwnd rel diff| ≤ {tol['cwnd_mean_rel']:.0%}",
        )
    for key in ("retransmits", "timeouts"):
        if key in entry:
            a, r = tol[key]
            sv, kv = entry[key]["sim"], entry[key]["kernel"]
            checks[key] = _check(sv - kv, _within(sv, kv, a, r), f"|diff| ≤ max({a}, {r:.0%})")
    return checks


def _nanmean(xs: list[Any]) -> float:
    v = [float(x) for x in xs if x is not None and x == x]
    return sum(v) / len(v) if v else math.nan


def merge_trials(
    config: dict[str, Any],
    reports: list[dict[str, Any]],
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One report from the reports of several trials of one scenario.

    A single run of a real stack is one draw: two identical flows sharing a drop-tail queue end
    a 30 s run with Jain's index anywhere from 0.88 to 1.0, decided by which flow loses first.
    With trials the comparison is between means: every per-flow number (goodput of each engine,
    per-interval and cwnd errors, correlations, retransmissions, timeouts) is averaged over the
    trials and the checks are made on the means; a group of exchangeable flows is judged by its
    shares sorted per trial, then averaged, and by the mean Jain index. Series and figures are
    trial 0's. Each flow keeps its per-trial goodputs (``trials``).

    *extra* are reports of further simulator trials without a kernel run of their own (each
    made against the kernel trial whose start stagger and lateness it borrowed): only their
    simulator side counts, in the simulator's means — a simulator trial costs a second where a
    kernel trial costs half a minute, so the model's expectation can be estimated far more
    precisely than the kernel's; the errors that need a pair (per-interval, cwnd series) stay
    those of the paired trials."""
    extra = extra or []
    if len(reports) == 1 and not extra:
        return reports[0]
    first = reports[0]
    flows = []
    for i, entry in enumerate(first["flows"]):
        each = [r["flows"][i] for r in reports]
        each_s = each + [r["flows"][i] for r in extra]
        bad = next((e for e in each_s if "error" in e), None)
        if bad is not None:
            flows.append(bad)
            continue
        m = copy.deepcopy(entry)
        s = _nanmean([e["mean_goodput_bps"]["sim"] for e in each_s])
        k = _nanmean([e["mean_goodput_bps"]["kernel"] for e in each])
        m["mean_goodput_bps"] = {
            "sim": s,
            "kernel": k,
            "rel_diff": (s - k) / k if k else math.nan,
        }
        m["trials"] = {
            "sim_goodput_bps": [e["mean_goodput_bps"]["sim"] for e in each_s],
            "kernel_goodput_bps": [e["mean_goodput_bps"]["kernel"] for e in each],
        }
        if "retransmits" in m:
            m["trials"]["sim_retransmits"] = [e["retransmits"]["sim"] for e in each_s]
            m["trials"]["kernel_retransmits"] = [e["retransmits"]["kernel"] for e in each]
        for key in ("mae_rel", "correlation"):
            m["interval_goodput"][key] = _nanmean([e["interval_goodput"][key] for e in each])
        if "cwnd" in m:
            m["cwnd"]["mean_sim_bytes"] = _nanmean([e["cwnd"]["mean_sim_bytes"] for e in each_s])
            for key in ("mean_kernel_bytes", "mae_rel", "correlation"):
                m["cwnd"][key] = _nanmean([e["cwnd"][key] for e in each])
            ks, kk = m["cwnd"]["mean_sim_bytes"], m["cwnd"]["mean_kernel_bytes"]
            m["cwnd"]["mean_rel"] = (ks - kk) / kk if kk else math.nan
        for key in ("retransmits", "timeouts"):
            if key in m:
                m[key] = {
                    "sim": _nanmean([e[key]["sim"] for e in each_s]),
                    "kernel": _nanmean([e[key]["kernel"] for e in each]),
                }
        m["checks"] = _flow_checks(m)
        m["verdict"] = _verdict(m["checks"])
        m["pass"] = m["verdict"] == "pass"
        flows.append(m)
    shares: dict[str, tuple[list[float], list[float], float, float]] = {}

    def group_of(r: dict[str, Any], name: str) -> dict[str, Any]:
        return next(x for x in r["groups"] if x["group"] == name)

    for g in first.get("groups") or []:
        per = [group_of(r, g["group"]) for r in reports]
        per_s = per + [group_of(r, g["group"]) for r in extra]
        n = len(g["goodput_bps"]["sim"])
        s_sorted = [_nanmean([p["goodput_bps"]["sim"][j] for p in per_s]) for j in range(n)]
        k_sorted = [_nanmean([p["goodput_bps"]["kernel"][j] for p in per]) for j in range(n)]
        shares[g["group"]] = (
            s_sorted,
            k_sorted,
            _nanmean([p["jain"]["sim"] for p in per_s]),
            _nanmean([p["jain"]["kernel"] for p in per]),
        )
    groups = _group_checks(config, flows, shares)
    for g in groups:
        per = [group_of(r, g["group"]) for r in reports]
        g["trials"] = {
            "jain_sim": [p["jain"]["sim"] for p in per + [group_of(r, g["group"]) for r in extra]],
            "jain_kernel": [p["jain"]["kernel"] for p in per],
        }
        # Summed retransmissions per trial: how far a mean of a few trials can be trusted
        # (on the kernel they are bimodal for C/CUBIC, README "The real-kernel engine").
        members = [f for f in flows if f.get("flow") in g["flows"]]
        for w in ("sim", "kernel"):
            cols = [f["trials"].get(f"{w}_retransmits") for f in members]
            if cols and all(c is not None for c in cols):
                g["trials"][f"retransmits_{w}"] = [sum(x) for x in zip(*cols, strict=True)]
        # Who takes the losses: per trial, the flows below the group's mean goodput, their share
        # of its goodput and of its retransmissions. Drops that fall on packets at random give
        # the two about equal; a share of losses far above the share of goodput is a phase
        # effect (Floyd & Jacobson 1992): the same flow finds the drop-tail queue full at every
        # overflow (README, "The real-kernel engine", C/CUBIC).
        for w, rs in (("sim", reports + extra), ("kernel", reports)):
            g["trials"][f"small_share_{w}"] = [
                _small_share([f for f in r["flows"] if f.get("flow") in g["flows"]], w) for r in rs
            ]
        # Who responds to each congestion event after slow start (:func:`_loss_events`).
        for w, rs in (("sim", reports + extra), ("kernel", reports)):
            ev = [group_of(r, g["group"]).get("loss_events", {}).get(w) for r in rs]
            if ev and all(e is not None for e in ev):
                g["trials"][f"loss_events_{w}"] = ev
        # How far each engine's mean can be trusted: the standard error of the mean Jain index.
        for w in ("sim", "kernel"):
            js = [x for x in g["trials"][f"jain_{w}"] if x == x]
            g["trials"][f"jain_{w}_sem"] = (
                float(np.std(js, ddof=1) / math.sqrt(len(js))) if len(js) > 1 else math.nan
            )
    valid = all(r["kernel_valid"] for r in reports)
    judged = [f for f in flows if not f.get("exchangeable")]
    out = dict(first)
    out.update(
        {
            "trials": len(reports),
            "sim_trials": len(reports) + len(extra),
            "kernel_valid": valid,
            "kernel_invalid_reasons": [x for r in reports for x in r["kernel_invalid_reasons"]],
            "flows": flows,
            "groups": groups,
            "sim_jitter_trials": [r.get("sim_jitter", {}) for r in reports],
            # Per kernel trial: the start stagger both engines used and the kernel hosts' own
            # counters (kernel/netstat.py: which HyStart test ended slow start, at which cwnd).
            "stagger_trials_ms": [r.get("start_stagger_ms", {}) for r in reports],
            "kernel_netstat_trials": [r.get("kernel_netstat", {}) for r in reports],
            "pass": valid and all(f.get("pass") for f in judged) and all(g["pass"] for g in groups),
        }
    )
    return out


def _loss_events_line(group: str, trials: dict[str, Any]) -> str:
    """fidelity.md's sentence on the congestion events of *group*, summed over the trials."""

    def total(w: str) -> str:
        keys = ("events", "several", "largest", "other")
        t = {k: sum(int(e[k]) for e in trials[f"loss_events_{w}"]) for k in keys}
        single = t["largest"] + t["other"]
        share = f"{t['largest'] / single:.0%}" if single else "–"
        return (
            f"{t['events']} events, {t['several']} with several flows responding, "
            f"{single} with one: the largest flow in {t['largest']} ({share})"
        )

    return (
        f"Congestion events after slow start in group {group} (ssthresh changes within two "
        f"round trips are one event): simulator {total('sim')}; kernel {total('kernel')}."
    )


def _small_share(flows: list[dict[str, Any]], w: str) -> dict[str, float]:
    """Of one trial's flows of a group (engine *w*), those below the mean goodput: their share
    of the goodput and of the retransmissions (NaN when nothing was retransmitted)."""
    good = [float(f["mean_goodput_bps"][w]) for f in flows]
    retx = [float(f["retransmits"][w]) for f in flows]
    total_g, total_r = sum(good), sum(retx)
    small = [i for i, x in enumerate(good) if x * len(good) < total_g]
    return {
        "goodput": sum(good[i] for i in small) / total_g if total_g > 0 else math.nan,
        "retransmits": sum(retx[i] for i in small) / total_r if total_r > 0 else math.nan,
    }


def _jain(xs: list[float]) -> float:
    """Jain's index (tcplab.results.jain_index); NaN when undefined (no bytes at all), which
    makes the fairness check "not evaluated", never a pass."""
    j = jain_index(xs)
    return math.nan if j is None else j


def _group_checks(
    config: dict[str, Any],
    flows: list[dict[str, Any]],
    shares: dict[str, tuple[list[float], list[float], float, float]] | None = None,
) -> list[dict[str, Any]]:
    """Checks of groups of exchangeable flows (the streams of one [[flow]] table: same
    algorithm, hosts and start). Which of them gets the larger share in a run is decided by
    chance — the first loss, the order of two ACKs —, so flow ``x.0`` of one engine has no
    particular counterpart in the other: such flows are judged as a group, by the aggregate
    goodput, the shares sorted from largest to smallest, Jain's fairness index, and the summed
    retransmissions and timeouts. Their per-flow numbers are still reported. *shares* (from
    :func:`merge_trials`) gives per group the sorted shares of each engine and the Jain indices
    to judge instead of those of *flows*."""
    tol = TOLERANCES
    by_group: dict[str, list[int]] = {}
    for i, fc in enumerate(config["flows"]):
        by_group.setdefault(fc.get("group") or fc["name"], []).append(i)
    out = []
    for g, idx in by_group.items():
        members = [flows[i] for i in idx]
        if len(idx) < 2 or any("error" in m or "mean_goodput_bps" not in m for m in members):
            continue
        cfgs = [config["flows"][i] for i in idx]
        keys = {
            (c["src"], c["dst"], c.get("start_ns", 0), (c.get("cca") or {}).get("name"))
            for c in cfgs
        }
        if len(keys) != 1:
            continue
        for m in members:
            m["exchangeable"] = True
        if shares is not None and g in shares:
            s, k, jain_s, jain_k = shares[g]
        else:
            s = sorted((m["mean_goodput_bps"]["sim"] for m in members), reverse=True)
            k = sorted((m["mean_goodput_bps"]["kernel"] for m in members), reverse=True)
            jain_s, jain_k = _jain(s), _jain(k)
        agg_rel = (sum(s) - sum(k)) / sum(k) if sum(k) else math.nan
        share_rel = [(a - b) / b if b else math.nan for a, b in zip(s, k, strict=True)]
        worst = max(share_rel, key=abs)
        checks = {
            "aggregate_goodput": _check(
                agg_rel,
                abs(agg_rel) <= tol["mean_goodput_rel"],
                f"|rel diff| ≤ {tol['mean_goodput_rel']:.0%}",
            ),
            "sorted_shares": _check(
                worst,
                abs(worst) <= tol["mean_goodput_rel"],
                f"each |rel diff| ≤ {tol['mean_goodput_rel']:.0%}",
            ),
            "fairness": _check(
                jain_s - jain_k,
                abs(jain_s - jain_k) <= tol["jain_abs"],
                f"|Jain index diff| ≤ {tol['jain_abs']}",
            ),
        }
        for key in ("retransmits", "timeouts"):
            a, r = tol[key]
            sv = sum(m.get(key, {}).get("sim", 0) for m in members)
            kv = sum(m.get(key, {}).get("kernel", 0) for m in members)
            checks[key] = _check(
                sv - kv, _within(sv, kv, a * len(idx), r), f"|diff| ≤ max({a}·n, {r:.0%})"
            )
        out.append(
            {
                "group": g,
                "flows": [m["flow"] for m in members],
                "goodput_bps": {"sim": s, "kernel": k},
                "jain": {"sim": jain_s, "kernel": jain_k},
                "checks": checks,
                "verdict": _verdict(checks),
                "pass": _verdict(checks) == "pass",
            }
        )
    return out


def _markdown(name: str, rep: dict[str, Any]) -> str:
    lines = [f"# Fidelity: {name}", ""]
    rp = rep.get("replay")
    if rp:
        lines += [
            f"**Replay** of the kernel trials recorded in `{rp['of']}`: the simulator's side was "
            "run again"
            + (
                " with " + ", ".join(f"`{o}`" for o in rp["overrides"]) + " (simulator only)"
                if rp["overrides"]
                else ""
            )
            + (
                ", with the emulator's lateness drawn per direction"
                if rp["emulator_jitter"] == "lanes"
                else ("" if rp["emulator_jitter"] else ", without the emulator's lateness")
            )
            + "; the kernel's side is the recorded one.",
            "",
        ]
    if rep.get("trials", 1) > 1:
        lines += [
            f"Means over {rep['trials']} trials (pairs of runs with the same seed and loss "
            "pattern); the simulator's means are over "
            f"{rep.get('sim_trials', rep['trials'])} trials (the ones beyond the pairs borrow "
            "a kernel trial's start stagger and lateness); checks are made on the means; the "
            "figure shows trial 0.",
            "",
        ]
    if not rep["kernel_valid"]:
        lines += ["**Kernel run invalid:** " + "; ".join(rep["kernel_invalid_reasons"]), ""]
    jit = rep.get("sim_jitter") or {}
    if jit:
        lines += [
            "The simulator's links carried the emulator's measured lateness as jitter (trial 0; "
            "mean / p99): "
            + ", ".join(
                f"{k} {v['lateness_mean_us']:.0f} / {v['lateness_p99_us']:.0f} µs"
                for k, v in jit.items()
            )
            + ".",
            "",
        ]
    lines += [
        "| flow | cca | goodput sim / kernel (Mbit/s) | diff | interval MAE | cwnd MAE | "
        "cwnd corr | retx sim / kernel | RTOs sim / kernel | result |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in rep["flows"]:
        if "error" in f:
            lines.append(
                f"| {f['flow']} | {f['cca']} | – | – | – | – | – | – | – | FAIL: {f['error']} |"
            )
            continue
        g = f["mean_goodput_bps"]
        c = f.get("cwnd", {})
        r = f.get("retransmits", {})
        t = f.get("timeouts", {})

        def pct(x: float | None) -> str:
            return "–" if x is None or x != x else f"{x:+.1%}"

        corr = c.get("correlation")
        lines.append(
            f"| {f['flow']} | {f['cca']} | {g['sim'] / 1e6:.2f} / {g['kernel'] / 1e6:.2f} | "
            f"{pct(g['rel_diff'])} | {pct(f['interval_goodput']['mae_rel'])} | "
            f"{pct(c.get('mae_rel'))} | {'–' if corr is None else f'{corr:.2f}'} | "
            f"{r.get('sim', '–'):.0f} / {r.get('kernel', '–'):.0f} | "
            f"{t.get('sim', 0):.0f} / {t.get('kernel', 0):.0f} | "
            f"{'pass' if f['pass'] else 'FAIL'} |"
            if r
            else f"| {f['flow']} | {f['cca']} | {g['sim'] / 1e6:.2f} / {g['kernel'] / 1e6:.2f} | "
            f"{pct(g['rel_diff'])} | {pct(f['interval_goodput']['mae_rel'])} | – | – | – | – | "
            f"{'pass' if f['pass'] else 'FAIL'} |"
        )
    groups = rep.get("groups") or []
    if groups:
        lines += [
            "",
            "Groups of exchangeable flows (judged together; their per-flow rows are informative):",
            "",
            "| group | goodput sim (Mbit/s) | goodput kernel (Mbit/s) | Jain sim / kernel "
            "| result |",
            "|---|---|---|---|---|",
        ]
        for g in groups:
            gs = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["sim"])
            gk = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["kernel"])
            lines.append(
                f"| {g['group']} | {gs} | {gk} | {g['jain']['sim']:.3f} / "
                f"{g['jain']['kernel']:.3f} | {g.get('verdict', 'pass' if g['pass'] else 'FAIL')} |"
            )
        for g in groups:
            tr = g.get("trials") or {}
            if "small_share_sim" not in tr:
                continue
            m = {
                (w, k): f"{_nanmean([x[k] for x in tr[f'small_share_{w}']]):.0%}"
                for w in ("sim", "kernel")
                for k in ("goodput", "retransmits")
            }
            lines += [
                "",
                f"Who takes the losses in group {g['group']} (per trial, the flows below the "
                "group's mean goodput; about equal shares of goodput and retransmissions when "
                "drops fall on packets at random): "
                f"simulator {m['sim', 'goodput']} of the goodput, "
                f"{m['sim', 'retransmits']} of the retransmissions; "
                f"kernel {m['kernel', 'goodput']}, {m['kernel', 'retransmits']}.",
            ]
            if "loss_events_sim" in tr and "loss_events_kernel" in tr:
                lines += ["", _loss_events_line(g["group"], tr)]
    lines += ["", "Failed checks:", ""]
    for f in rep["flows"]:
        for k, c in (f.get("checks") or {}).items():
            if c["pass"] is False:
                note = " (informative: judged with its group)" if f.get("exchangeable") else ""
                lines.append(f"* {f['flow']} {k}: {c['value']:.3g} (limit {c['limit']}){note}")
    for g in groups:
        for k, c in g["checks"].items():
            if c["pass"] is False:
                lines.append(f"* group {g['group']} {k}: {c['value']:.3g} (limit {c['limit']})")
    missing = [
        f"* {f['flow']} {k} (value {c['value']})"
        for f in rep["flows"]
        for k, c in (f.get("checks") or {}).items()
        if c["pass"] is None
    ] + [
        f"* group {g['group']} {k} (value {c['value']})"
        for g in groups
        for k, c in g["checks"].items()
        if c["pass"] is None
    ]
    if missing:
        lines += ["", "Not evaluated (no value to judge: such a flow cannot pass):", "", *missing]
    return "\n".join(lines) + "\n"


def _plot(rep: dict[str, Any], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flows = [f for f in rep["flows"] if "interval_goodput" in f]
    if not flows:
        return
    fig, axes = plt.subplots(len(flows), 2, figsize=(12, 3.2 * len(flows)), squeeze=False)
    for row, f in zip(axes, flows, strict=False):
        ig = f["interval_goodput"]
        row[0].plot(
            ig["time_s"], np.asarray(ig["sim_bps"]) / 1e6, label="sim", drawstyle="steps-pre"
        )
        row[0].plot(
            ig["time_s"], np.asarray(ig["kernel_bps"]) / 1e6, label="kernel", drawstyle="steps-pre"
        )
        row[0].set_ylabel("goodput (Mbit/s)")
        row[0].set_title(f"{f['flow']} ({f['cca']})")
        row[0].legend()
        if "cwnd" in f:
            c = f["cwnd"]
            row[1].plot(c["time_s"], c["sim_segments"], label="sim", lw=0.8)
            row[1].plot(c["time_s"], c["kernel_segments"], label="kernel", lw=0.8)
            row[1].set_ylabel("cwnd (segments)")
            row[1].legend()
        row[1].set_xlabel("time (s)")
        row[0].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


#: File in a ``tcplab compare --out`` directory that keeps each kernel trial's result, its
#: start stagger and the scenario as resolved, so that ``tcplab compare --replay`` can run the
#: simulator's side again without root (gzip-compressed JSON).
KERNEL_RECORD = "kernel-trials.json.gz"
#: Version of :data:`KERNEL_RECORD`'s layout; a record of another version is refused.
KERNEL_RECORD_VERSION = 1


def compare(
    scenario: str | Path,
    *,
    out: str | Path | None = None,
    overrides: list[str] | None = None,
    seed: int | None = None,
    sim_timeout: float = 600.0,
    trials: int | None = None,
    emulator_jitter: bool | str = True,
    sim_trials: int | None = None,
    ktrace: list[str] | None = None,
) -> dict[str, Any]:
    """Run *scenario* on both engines and return (and with *out*, write) the fidelity report.

    *ktrace*: Linux tcp tracepoints each kernel trial records (kernel/ktrace.py), kept in the
    kernel record (``result.kernel.tracepoints``).

    *trials* (default: the scenario's ``trials``) pairs of runs, trial *k* with the scenario's
    trial-*k* seed and loss pattern on both engines, merged by :func:`merge_trials`. With
    *emulator_jitter* the simulator's links get the emulator's measured lateness of that trial
    as jitter (:func:`with_emulator_jitter`). *sim_trials* (default: four times *trials* when
    there are several, else *trials*) is how many simulator trials make the simulator's means:
    the ones beyond *trials* use their own trial seeds with the start stagger and lateness of
    kernel trial ``k mod trials`` (see :func:`merge_trials`). The simulator runs in a child
    process killed after *sim_timeout* seconds. With *out* the kernel trials are kept as well
    (:data:`KERNEL_RECORD`), for :func:`replay`."""
    from .. import scenario as scenario_mod
    from ..seeds import trial_seed
    from . import run as kernel_run

    if out is not None:
        from ..results import check_out

        check_out(out)  # before a minute of runs, not after
    sc = scenario_mod.load(
        scenario, overrides=overrides or [], seed=seed, catalog=linux.kernel_catalog()
    )
    n = sc.trials if trials is None else trials
    if n < 1:
        raise UserError(f"compare: --trials {n}: must be at least 1")
    m = _sim_trial_count(n, sim_trials)
    kernels: list[tuple[dict[str, Any], dict[str, int]]] = []
    t_k = 0.0
    for k in range(n):
        kcfg = copy.deepcopy(common_loss_pattern(sc.config(trial_seed(sc.seed, k))))
        kcfg["meta"] = {"kernel": {"fine_series": True}}
        if ktrace:
            kcfg["meta"]["kernel"]["tracepoints"] = list(ktrace)
        t = time.perf_counter()
        kern = kernel_run(kcfg)
        t_k += time.perf_counter() - t
        stagger = start_stagger(kern)
        kernels.append((common_start_offset(kern, stagger), stagger))
    rep = _simulator_side(sc, kernels, m, emulator_jitter, sim_timeout)
    rep["file"] = str(scenario)
    rep["wall_s"]["kernel"] = t_k
    if out is not None:
        record = {
            "version": KERNEL_RECORD_VERSION,
            "file": str(scenario),
            "scenario": sc.resolved,
            "kernel_trials": [{"result": kr, "stagger_ns": st} for kr, st in kernels],
        }
        _write_report(out, sc.name, rep, record)
    return rep


def replay(
    record_dir: str | Path,
    *,
    out: str | Path | None = None,
    overrides: list[str] | None = None,
    sim_timeout: float = 600.0,
    emulator_jitter: bool | str = True,
    sim_trials: int | None = None,
) -> dict[str, Any]:
    """The fidelity report of a stored comparison with the simulator's side run again.

    *record_dir* is the ``--out`` directory of an earlier :func:`compare`: its kernel trials
    (:data:`KERNEL_RECORD`: each trial's result, start stagger and the emulator's measured
    lateness) are judged against new simulator runs of the same scenario, so that a change of
    the model — a new build, or *overrides* applied to the simulator's side only (e.g.
    ``tcp.grow_window_on_ooo=false``) — is measured against the same real-kernel runs, without
    root and in seconds. Trials, seeds, loss patterns and start staggers are the recorded ones;
    *sim_trials* as in :func:`compare`. Overrides that change the path or the flows make the
    comparison meaningless (the kernel ran the recorded scenario); the report names them
    (``replay.overrides``)."""
    from .. import scenario as scenario_mod

    src = Path(record_dir) / KERNEL_RECORD
    if out is not None:
        from ..results import check_out

        check_out(out)
    try:
        import gzip

        with gzip.open(src, "rt", encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        raise UserError(
            f"compare --replay {record_dir}: no {KERNEL_RECORD} there; replay needs the --out "
            "directory of a `tcplab compare` run (made by this version or later)"
        ) from None
    except (OSError, ValueError) as e:
        raise UserError(f"compare --replay: cannot read {src}: {e}") from None
    if record.get("version") != KERNEL_RECORD_VERSION:
        raise UserError(
            f"compare --replay: {src} has layout version {record.get('version')!r}, this "
            f"tcplab reads version {KERNEL_RECORD_VERSION}; rerun `tcplab compare`"
        )
    sc = scenario_mod.load(
        record["scenario"],
        overrides=overrides or [],
        file=record["file"],
        catalog=linux.kernel_catalog(),
    )
    kernels = [
        (t["result"], {k: int(v) for k, v in t["stagger_ns"].items()})
        for t in record["kernel_trials"]
    ]
    rep = _simulator_side(
        sc, kernels, _sim_trial_count(len(kernels), sim_trials), emulator_jitter, sim_timeout
    )
    rep["file"] = record["file"]
    rep["replay"] = {
        "of": str(record_dir),
        "overrides": list(overrides or []),
        "emulator_jitter": emulator_jitter,
    }
    if out is not None:
        _write_report(out, sc.name, rep, record)
    return rep


def _sim_trial_count(n: int, sim_trials: int | None) -> int:
    m = (4 * n if n > 1 else n) if sim_trials is None else sim_trials
    if m < n:
        raise UserError(
            f"compare: --sim-trials {m}: must be at least --trials ({n}), one simulator trial "
            "beside each kernel trial"
        )
    return m


def _simulator_side(
    sc: Any,
    kernels: list[tuple[dict[str, Any], dict[str, int]]],
    m: int,
    emulator_jitter: bool | str,
    sim_timeout: float,
) -> dict[str, Any]:
    """Simulate trials 0 … *m*−1 of *sc* beside the kernel trials *kernels* (each its result,
    aligned by :func:`common_start_offset`, and its start stagger) and merge the reports: trial
    *j* borrows the stagger and lateness of kernel trial ``j mod len(kernels)``."""
    from ..seeds import trial_seed

    n = len(kernels)
    scfg: dict[str, Any] = {}
    t_sim = 0.0

    def sim_side(j: int, kern: dict[str, Any], stagger: dict[str, int]) -> dict[str, Any]:
        nonlocal scfg, t_sim
        cfg = common_loss_pattern(sc.config(trial_seed(sc.seed, j)))
        start = iperf3_start(cfg, kern)
        if start is not None:
            run_cfg, kern, stagger = start
        else:
            run_cfg = staggered(cfg, stagger)
        scfg = linux_sim_config(run_cfg)
        jitter: dict[str, Any] = {}
        if emulator_jitter:
            model = "lanes" if emulator_jitter == "lanes" else "thread"
            scfg, jitter = with_emulator_jitter(scfg, kern, model)
        scfg["record_changes"] = True
        t = time.perf_counter()
        sim_raw, sim_error = run_sim(scfg, timeout=sim_timeout)
        t_sim += time.perf_counter() - t
        rep_j = fidelity(cfg, sim_raw, kern, sim_error)
        rep_j["start_stagger_ms"] = {name: v / 1e6 for name, v in stagger.items()}
        rep_j["kernel_netstat"] = kern.get("kernel", {}).get("netstat", {})
        rep_j["sim_jitter"] = jitter
        return rep_j

    reports = [sim_side(k, *kernels[k]) for k in range(n)]
    extra = [sim_side(j, *kernels[j % n]) for j in range(n, m)]
    cfg = common_loss_pattern(sc.config(trial_seed(sc.seed, n - 1)))
    rep = merge_trials(cfg, reports, extra)
    rep["scenario"] = sc.name
    rep["trials"] = n
    rep["sim_trials"] = m
    rep["wall_s"] = {"sim": t_sim}
    rep["sim_knobs"] = {f["name"]: f.get("tcp") for f in scfg["flows"] if f["kind"] == "tcp"}
    rep["kernel_emulator"] = kernels[-1][0].get("kernel", {}).get("emulator")
    return rep


def _write_report(out: str | Path, name: str, rep: dict[str, Any], record: dict[str, Any]) -> None:
    """fidelity.json, fidelity.md, compare.png and the kernel record, all or nothing."""
    import gzip

    from ..results import write_atomic

    def fill(d: Path) -> None:
        (d / "fidelity.json").write_text(json.dumps(rep, indent=1, default=_json_default))
        (d / "fidelity.md").write_text(_markdown(name, rep))
        _plot(rep, d / "compare.png", f"{name}: simulator vs kernel")
        # mtime=0: the same record compresses to the same bytes.
        with gzip.GzipFile(d / KERNEL_RECORD, "wb", mtime=0) as raw:
            raw.write(json.dumps(record, default=_record_default).encode())

    # All files appear together or not at all (results.write_atomic).
    write_atomic(Path(out), fill)


_SIM_CHILD = """
import json, sys
from tcplab import engines
cfg = json.loads(sys.stdin.read())
try:
    raw = engines.get_engine("sim")(cfg)
except Exception as e:  # reported to the parent as text
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
else:
    print(json.dumps({"raw": raw}))
"""


def run_sim(config: dict[str, Any], timeout: float) -> tuple[dict[str, Any] | None, str | None]:
    """The simulator's raw result of *config*, run in a child process so that a simulation that
    does not finish (the simulator cannot be interrupted while it runs) is killed after
    *timeout* seconds. Returns (raw, None) or (None, error message)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = (
        str(Path(__file__).resolve().parents[2]) + os.pathsep + env.get("PYTHONPATH", "")
    )
    try:
        p = subprocess.run(
            [sys.executable, "-c", _SIM_CHILD],
            input=json.dumps(config),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"simulator: did not finish within {timeout:.0f} s (killed)"
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"simulator: failed ({p.returncode}): {p.stderr.strip()[-500:]}"
    if "error" in out:
        return None, f"simulator: {out['error']}"
    return out["raw"], None


def _record_default(o: Any) -> Any:
    """JSON for the kernel record: arrays as lists (exact: floats round-trip through repr)."""
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.integer, np.floating)):
        return o.item()
    raise TypeError(f"kernel record: cannot store a {type(o).__name__}")


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    return str(o)
