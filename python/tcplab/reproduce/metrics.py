"""Per-trial metrics of one sweep point, and statistics over trials.

A metric is declared in a study scenario's ``[report.metric.<name>]`` table (see
:mod:`tcplab.reproduce.spec`) and evaluated on the :class:`~tcplab.results.Result` of each sweep
point, giving one number per trial; a table column is a statistic of those numbers (mean, sd, …).

Kinds (``kind = ...``):

``goodput``
    Goodput of ``group`` (a ``[[flow]]`` table; a list of groups is summed) or of ``flow``, over its
    whole active time (docs/scenario-format.md, "Definitions"). ``t0``/``t1`` restrict it to a
    time window, from the cumulative delivered bytes of the time series. Times are seconds, or
    ``"N%"`` of the run's duration.
``aggregate``
    Sum of the goodputs of every TCP group (or of ``groups``), optionally in ``t0``–``t1``.
``jain``
    Jain's fairness index over the TCP groups (or ``groups``) of the trial, optionally in a window;
    with ``per = "flow"`` over their flows (the streams of ``streams = N`` groups).
``series_at``
    The value of a time-series ``column`` (``snd_una``, ``cwnd_segments``, …) of ``group``/``flow``
    at time ``t`` (the last sample at or before ``t``).
``counter``
    A TCP counter ``column`` (``retransmits``, ``timeouts``, ``dupacks``, ``fast_retransmits``,
    ``sack_blocks``) of ``group``: the whole run, or the increase from ``t0`` to ``t1``.
``initial_cwnd``
    The congestion window of ``group``'s first flow at its first change record (needs
    ``record_changes``), in segments of ``mss`` bytes (default: as the engine reports).
``time_to``
    Seconds from the flow's start until its per-interval goodput first reaches ``threshold``
    (in ``unit``); NaN if it never does.
``cwnd_growth``
    Time (ms) the congestion window of ``group`` takes to grow by one segment in congestion
    avoidance, from ``t0`` to ``t1``: over the sampling intervals in which cwnd ≥ ssthresh at both
    ends and the window was not reduced, their total time divided by the total growth in
    segments.
``trace``
    A field of the packet-trace analysis (``tcplab trace``) of the point's capture (trial 0 only):
    the sum of ``field`` over the connection directions sending data (``direction = "data"``) or
    carrying the ACKs (``"ack"``).

Units: ``bps``, ``kbps``, ``mbps``, ``gbps`` for rates; ``bytes``, ``kB``, ``MB`` for bytes;
``segments``; ``s``, ``ms``; ``""`` for pure numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..results import Result, jain_index

__all__ = ["UNITS", "evaluate", "statistic"]

UNITS: dict[str, float] = {
    "bps": 1.0,
    "kbps": 1e3,
    "mbps": 1e6,
    "gbps": 1e9,
    "bytes": 1.0,
    "kB": 1e3,
    "MB": 1e6,
    "segments": 1.0,
    "s": 1.0,
    "ms": 1e-3,
    "": 1.0,
}
KINDS = (
    "goodput",
    "aggregate",
    "jain",
    "series_at",
    "counter",
    "initial_cwnd",
    "time_to",
    "cwnd_growth",
    "trace",
)
_COUNT = re.compile(r"^count(>=|<=|>|<)(-?[0-9.]+(?:e-?[0-9]+)?)$")
STATS = ("mean", "sd", "min", "max", "median", "n")


# ---------------------------------------------------------------------------------------------
# Statistics over trials


def statistic(values: Sequence[float], stat: str) -> float:
    """*stat* of the per-trial *values*, ignoring NaN: mean, sd (n − 1), min, max, median, n
    (trials with a value), or ``count>=X`` (and ``>``, ``<=``, ``<``): trials meeting the bound."""
    xs = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    m = _COUNT.match(stat)
    if m:
        op, bound = m.group(1), float(m.group(2))
        cmp = {">=": np.greater_equal, "<=": np.less_equal, ">": np.greater, "<": np.less}[op]
        return float(np.count_nonzero(cmp(xs, bound)))
    if stat == "n":
        return float(len(xs))
    if len(xs) == 0:
        return math.nan
    if stat == "mean":
        return float(xs.mean())
    if stat == "sd":
        return float(xs.std(ddof=1)) if len(xs) > 1 else 0.0
    if stat == "min":
        return float(xs.min())
    if stat == "max":
        return float(xs.max())
    if stat == "median":
        return float(np.median(xs))
    raise ValueError(f"unknown statistic {stat!r}")


def valid_stat(stat: str) -> bool:
    return stat in STATS or bool(_COUNT.match(stat))


# ---------------------------------------------------------------------------------------------
# Helpers on a Result


def _groups_of(result: Result, spec: Mapping[str, Any]) -> list[str]:
    g = spec.get("group", spec.get("groups"))
    if g is None:
        groups = result.summary["groups"]
        return [n for n, b in groups.items() if b["kind"] == "tcp"] or list(groups)
    names = [g] if isinstance(g, str) else list(g)
    for n in names:
        if n not in result.summary["groups"]:
            raise KeyError(f"no flow group {n!r} (groups: {', '.join(result.summary['groups'])})")
    return names


def _flows_of(result: Result, spec: Mapping[str, Any]) -> list[str]:
    if "flow" in spec:
        f = spec["flow"]
        if f not in result.summary["flows"]:
            raise KeyError(f"no flow {f!r} (flows: {', '.join(result.summary['flows'])})")
        return [f]
    out: list[str] = []
    for g in _groups_of(result, spec):
        out.extend(result.summary["groups"][g]["flows"])
    return out


def _series(result: Result, flows: Sequence[str], trial: int) -> pd.DataFrame:
    ts = result.timeseries
    return ts[(ts["trial"] == trial) & (ts["flow"].isin(flows))]


def _at(df: pd.DataFrame, column: str, t: float, slack: float = 1e-9) -> float:
    """Sum over flows of *column* at the last sample at or before *t* + *slack* (0 before any
    sample); *slack* is half a sampling interval, so a time given as a fraction of the run
    (99.999 s) takes the sample it means (100 s)."""
    total = 0.0
    for _, rows in df.groupby("flow", sort=False):
        before = rows[rows["time_s"] <= t + slack]
        if len(before):
            v = before[column].iloc[-1]
            total += 0.0 if pd.isna(v) else float(v)
    return total


def seconds(value: Any, result: Result) -> float:
    """A time of a metric: seconds, or ``"N%"`` of the run's duration (so that a window keeps
    its place in the run when ``--quick`` shortens it)."""
    if isinstance(value, str) and value.endswith("%"):
        return float(value[:-1]) / 100.0 * result.scenario.duration_ns / 1e9
    return float(value)


def _window(spec: Mapping[str, Any], result: Result) -> tuple[float, float] | None:
    if "t0" not in spec and "t1" not in spec:
        return None
    t0 = seconds(spec.get("t0", 0.0), result)
    t1 = seconds(spec.get("t1", "100%"), result)
    return t0, t1


def _slack(result: Result) -> float:
    return result.scenario.interval_ns / 2e9


def _snap(t: float, result: Result) -> float:
    """*t* rounded to the sampling grid."""
    step = result.scenario.interval_ns / 1e9
    return round(t / step) * step


def _window_goodput(result: Result, flows: Sequence[str], trial: int, t0: float, t1: float):
    df = _series(result, flows, trial)
    t0, t1 = _snap(t0, result), _snap(t1, result)
    s = _slack(result)
    delivered = _at(df, "delivered_bytes", t1, s) - _at(df, "delivered_bytes", t0, s)
    return 8.0 * delivered / (t1 - t0) if t1 > t0 else math.nan


def _group_goodputs(result: Result, spec: Mapping[str, Any], groups: Sequence[str]):
    """Per group, the list of per-trial goodputs (bit/s), in the window if one is given."""
    w = _window(spec, result)
    out = {}
    for g in groups:
        if w is None:
            out[g] = list(result.summary["groups"][g]["goodput_bps_trials"])
        else:
            flows = result.summary["groups"][g]["flows"]
            out[g] = [_window_goodput(result, flows, k, *w) for k in range(len(result.raw))]
    return out


# ---------------------------------------------------------------------------------------------
# Evaluation


def evaluate(result: Result, spec: Mapping[str, Any], trace_cache: dict | None = None):
    """The per-trial values of metric *spec* on *result* (a list, one value per trial; one value
    for ``trace``), already divided by the metric's unit."""
    kind = spec["kind"]
    scale = UNITS[spec.get("unit", "")]
    n = len(result.raw)
    if kind == "goodput":
        if "flow" in spec:
            w = _window(spec, result)
            if w is None:
                vals = list(result.summary["flows"][spec["flow"]]["goodput_bps_trials"])
            else:
                vals = [_window_goodput(result, [spec["flow"]], k, *w) for k in range(n)]
        else:
            per = _group_goodputs(result, spec, _groups_of(result, spec))
            vals = [math.fsum(per[g][k] for g in per) for k in range(n)]
        return [v / scale for v in vals]
    if kind == "aggregate":
        per = _group_goodputs(result, spec, _groups_of(result, spec))
        return [math.fsum(per[g][k] for g in per) / scale for k in range(n)]
    if kind == "jain":
        if spec.get("per") == "flow":  # over the flows (streams) instead of the groups
            per = {}
            for f in _flows_of(result, spec):
                w = _window(spec, result)
                per[f] = (
                    list(result.summary["flows"][f]["goodput_bps_trials"])
                    if w is None
                    else [_window_goodput(result, [f], k, *w) for k in range(n)]
                )
        else:
            per = _group_goodputs(result, spec, _groups_of(result, spec))
        out = []
        for k in range(n):
            j = jain_index([per[g][k] for g in per])
            out.append(math.nan if j is None else j)
        return out
    if kind == "series_at":
        flows = _flows_of(result, spec)
        t = seconds(spec["t"], result)
        sl = _slack(result)
        return [_at(_series(result, flows, k), spec["column"], t, sl) / scale for k in range(n)]
    if kind == "counter":
        flows = _flows_of(result, spec)
        col = spec["column"]
        w = _window(spec, result)
        out = []
        for k in range(n):
            if w is None:
                out.append(
                    math.fsum(float(result.raw[k]["flows"][_idx(result, f)][col]) for f in flows)
                )
            else:
                df = _series(result, flows, k)
                sl = _slack(result)
                out.append(_at(df, col, w[1], sl) - _at(df, col, w[0], sl))
        return [v / scale for v in out]
    if kind == "initial_cwnd":
        return [_initial_cwnd(result, spec, k) / scale for k in range(n)]
    if kind == "time_to":
        flows = _flows_of(result, spec)
        thr = float(spec["threshold"]) * scale
        out = []
        for k in range(n):
            df = _series(result, flows, k).groupby("time_s", sort=True)["goodput_bps"].sum()
            start = min(result.configs[k]["flows"][_idx(result, f)]["start_ns"] for f in flows)
            hit = df[df >= thr]
            out.append(float(hit.index[0]) - start / 1e9 if len(hit) else math.nan)
        return out
    if kind == "cwnd_growth":
        return [_cwnd_growth(result, spec, k) for k in range(n)]
    if kind == "trace":
        return [_trace_value(result, spec, trace_cache)]
    raise ValueError(f"unknown metric kind {kind!r}")


def _idx(result: Result, flow: str) -> int:
    for i, f in enumerate(result.configs[0]["flows"]):
        if f["name"] == flow:
            return i
    raise KeyError(flow)


def _initial_cwnd(result: Result, spec: Mapping[str, Any], trial: int) -> float:
    flow = _flows_of(result, spec)[0]
    ch = result.changes
    if ch is not None:
        rows = ch[(ch["trial"] == trial) & (ch["flow"] == flow)]
        if len(rows):
            cwnd = float(rows["cwnd_bytes"].iloc[0])
            mss = spec.get("mss")
            if mss:
                return cwnd / float(mss)
            # The engine's own segment size: cwnd_bytes / cwnd_segments in the series, once the
            # connection is established (before the handshake the engine reports
            # cwnd_segments = cwnd_bytes: the MSS is not negotiated yet).
            df = _series(result, [flow], trial).dropna(subset=["cwnd_segments"])
            df = df[(df["cwnd_segments"] > 0) & (df["snd_nxt"] > 0)]
            if len(df):
                seg = float(df["cwnd_bytes"].iloc[0]) / float(df["cwnd_segments"].iloc[0])
                return cwnd / seg
            return math.nan
    df = _series(result, [flow], trial).dropna(subset=["cwnd_segments"])
    df = df[df["snd_nxt"] > 0]
    return float(df["cwnd_segments"].iloc[0]) if len(df) else math.nan


def _cwnd_growth(result: Result, spec: Mapping[str, Any], trial: int) -> float:
    """ms per segment of cwnd growth in congestion avoidance over [t0, t1]."""
    flow = _flows_of(result, spec)[0]
    df = _series(result, [flow], trial)
    w = _window(spec, result) or (0.0, result.scenario.duration_ns / 1e9)
    df = df[(df["time_s"] >= w[0]) & (df["time_s"] <= w[1])]
    if len(df) < 3:
        return math.nan
    cw = df["cwnd_bytes"].to_numpy(dtype=float)
    seg = df["cwnd_segments"].to_numpy(dtype=float)
    ss = df["ssthresh_bytes"].to_numpy(dtype=float)
    t = df["time_s"].to_numpy(dtype=float)
    est = df["snd_nxt"].to_numpy(dtype=float) > 0  # MSS negotiated (see _initial_cwnd)
    ok = est & (seg > 0)
    mss = float(np.median(cw[ok] / seg[ok])) if ok.any() else math.nan
    d = np.diff(cw)
    dt = np.diff(t)
    # Congestion avoidance: both samples at or above ssthresh and the window not reduced in
    # between (an interval with a loss is left out; intervals without growth count).
    ca = (cw[:-1] >= ss[:-1]) & (cw[1:] >= ss[1:]) & (d >= 0)
    grown = d[ca].sum() / mss if mss and mss > 0 else 0.0
    if grown <= 0:
        return math.nan
    return 1e3 * dt[ca].sum() / grown


def _trace_value(result: Result, spec: Mapping[str, Any], cache: dict | None) -> float:
    from .. import trace

    if not result.captures:
        raise ValueError("the point has no packet capture (set capture = [...] in the scenario)")
    total = 0.0
    field = spec["field"]
    want = spec.get("direction", "data")
    for path in result.captures:
        key = str(path)
        if cache is not None and key in cache:
            rep = cache[key]
        else:
            rep = trace.analyze(path)
            if cache is not None:
                cache[key] = rep
        for c in rep["connections"]:
            dirs = [c["a2b"], c["b2a"]]
            data = max(dirs, key=lambda d: d.get("unique_bytes") or d.get("data_bytes") or 0)
            chosen = data if want == "data" else (dirs[1] if data is dirs[0] else dirs[0])
            v = chosen.get(field)
            if v is None:
                raise KeyError(
                    f"the trace analysis has no field {field!r} (fields: "
                    + ", ".join(k for k in chosen if k != "series")
                    + ")"
                )
            total += float(v)
    return total / UNITS[spec.get("unit", "")]
