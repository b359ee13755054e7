"""Figures like the papers', from the results of an experiment's sweep points.

Kinds (``[[report.figure]] kind = ...``):

``tsg``
    tcptrace-style time-sequence graphs of trial 0 of each point (one panel per point), from
    ``t0`` to ``t1`` seconds (default 0–1 s). When the point captured packets (``capture`` in the
    scenario) and the Rust core has the trace analyzer, the graph is drawn from the capture by
    ``tcplab trace`` (segments as bars, ACK and advertised-window lines, SACK blocks); otherwise
    from the sender's time series (``snd_nxt``: highest byte sent; ``snd_una``: bytes
    acknowledged; ``snd_una + rwnd``: the advertised window edge), sampled at the scenario's
    ``interval`` — the caption says which.
``panels``
    For each point, one figure with a panel per time-series ``columns`` entry (e.g. throughput,
    cwnd, cumulative retransmissions, duplicate ACKs, timeouts, snd_nxt) of ``group``, every trial
    drawn (trial 0 darker), as in web100 plots.
``flows``
    One panel per point: ``column`` of every flow against time (trial 0 or ``trial``), e.g. the
    1-s goodput of coexisting flows or their cwnd.

Column names: any time-series column (docs/scenario-format.md, "Outputs") or a unit-converted
form: ``goodput_mbps``/``goodput_gbps`` (from ``goodput_bps``), ``cwnd_kB``, ``snd_nxt_MB``,
``snd_una_MB``, ``rwnd_kB``, ``in_flight_kB``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..results import Result

__all__ = ["COLUMNS", "draw"]

#: derived column → (series column, divisor, axis label)
COLUMNS: dict[str, tuple[str, float, str]] = {
    "goodput_mbps": ("goodput_bps", 1e6, "throughput (Mbit/s)"),
    "goodput_gbps": ("goodput_bps", 1e9, "throughput (Gbit/s)"),
    "goodput_kbps": ("goodput_bps", 1e3, "throughput (kbit/s)"),
    "cwnd_segments": ("cwnd_segments", 1.0, "cwnd (segments)"),
    "cwnd_kB": ("cwnd_bytes", 1e3, "cwnd (kB)"),
    "ssthresh_kB": ("ssthresh_bytes", 1e3, "ssthresh (kB)"),
    "retransmits": ("retransmits", 1.0, "retransmissions (cumulative)"),
    "fast_retransmits": ("fast_retransmits", 1.0, "fast retransmissions (cumulative)"),
    "dupacks": ("dupacks", 1.0, "duplicate ACKs (cumulative)"),
    "timeouts": ("timeouts", 1.0, "timeouts (cumulative)"),
    "snd_nxt_MB": ("snd_nxt", 1e6, "snd_nxt (MB)"),
    "snd_una_MB": ("snd_una", 1e6, "snd_una (MB)"),
    "rwnd_kB": ("rwnd_bytes", 1e3, "advertised window (kB)"),
    "in_flight_kB": ("in_flight_bytes", 1e3, "in flight (kB)"),
    "srtt_ms": ("srtt_ms", 1.0, "smoothed RTT (ms)"),
}


def _column(name: str) -> tuple[str, float, str]:
    if name in COLUMNS:
        return COLUMNS[name]
    return name, 1.0, name


def _fig(n: int, ncols: int, w: float = 4.6, h: float = 3.0) -> tuple[Figure, list[Any]]:
    rows = max(1, math.ceil(n / ncols))
    fig = Figure(figsize=(w * ncols, h * rows + 0.6), dpi=90)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(rows, ncols, i + 1) for i in range(max(n, 1))]
    return fig, axes


def _select(points: Sequence[tuple[Mapping[str, str], str, Result]], where: Mapping[str, Any]):
    out = []
    for coords, label, r in points:
        ok = True
        for k, v in (where or {}).items():
            vals = [str(x) for x in v] if isinstance(v, list) else [str(v)]
            if coords.get(k) not in vals:
                ok = False
        if ok:
            out.append((coords, label, r))
    return out


def draw(
    spec: Mapping[str, Any],
    points: Sequence[tuple[Mapping[str, str], str, Result]],
    directory: Path,
) -> tuple[Path, str]:
    """Draw figure *spec* for *points* ((coords, label, Result) in sweep order) into
    *directory*; returns the PNG written and its caption."""
    sel = _select(points, spec.get("where", {}))
    kind = spec["kind"]
    path = directory / f"{spec['name']}.png"
    if kind == "tsg":
        caption = _tsg(spec, sel, path)
    elif kind == "panels":
        caption = _panels(spec, sel, path)
    elif kind == "flows":
        caption = _flows(spec, sel, path)
    else:  # pragma: no cover - checked by the spec parser
        raise ValueError(kind)
    return path, caption


def _title(label: str) -> str:
    return label.replace(",", ", ")


# ---------------------------------------------------------------------------------------------


def _trace_series(result: Result, t0: float, t1: float) -> dict[str, Any] | None:
    """The data direction's graph series of trial 0's capture, if the analyzer is available."""
    if not result.captures:
        return None
    try:
        from .. import trace

        rep = trace.analyze(result.captures[0], t0, t1, graphs=True)
    except Exception:
        return None
    best = None
    for c in rep.get("connections", []):
        for d in ("a2b", "b2a"):
            st = c[d]
            if "series" in st and (
                best is None or st.get("data_pkts", 0) > best.get("data_pkts", 0)
            ):
                best = st
    return best["series"] if best else None


def _tsg(spec: Mapping[str, Any], sel, path: Path) -> str:
    t0 = float(spec.get("t0", 0.0))
    t1 = float(spec.get("t1", 1.0))
    fig, axes = _fig(len(sel), min(3, max(1, len(sel))))
    sources = set()
    for ax, (_, label, r) in zip(axes, sel, strict=False):
        series = _trace_series(r, t0, t1)
        ax.set_title(_title(label), fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("sequence offset (kB)")
        ax.grid(True, alpha=0.3)
        if series is not None:
            from .. import trace_plots

            trace_plots._tsg(ax, series)
            ax.set_ylabel("sequence offset (bytes)")
            ax.set_xlim(t0, t1)
            sources.add("capture")
            continue
        sources.add("series")
        ts = r.timeseries
        group = spec.get("group") or next(iter(r.summary["groups"]))
        flows = r.summary["groups"][group]["flows"]
        df = ts[(ts["trial"] == 0) & (ts["flow"] == flows[0])]
        df = df[(df["time_s"] >= t0) & (df["time_s"] <= t1)]
        t = np.concatenate([[t0], df["time_s"].to_numpy()])
        nxt = np.concatenate([[0.0], df["snd_nxt"].to_numpy(dtype=float)]) / 1e3
        una = np.concatenate([[0.0], df["snd_una"].to_numpy(dtype=float)]) / 1e3
        win = una + np.concatenate([[np.nan], df["rwnd_bytes"].to_numpy(dtype=float)]) / 1e3
        ax.step(t, nxt, where="post", color="black", linewidth=1.2, label="snd_nxt (sent)")
        ax.step(t, una, where="post", color="green", linewidth=1.2, label="snd_una (ACKed)")
        ax.step(t, win, where="post", color="gold", linewidth=1, label="ACK + advertised window")
        ax.set_xlim(t0, t1)
        top = np.nanmax(nxt) if len(nxt) else 1.0
        ax.set_ylim(0, max(top, 1.0) * 1.3)
        ax.legend(loc="upper left", fontsize="x-small")
    for ax in axes[len(sel) :]:
        ax.set_visible(False)
    fig.suptitle(spec.get("title", "time-sequence graphs"), fontsize="large")
    fig.tight_layout()
    fig.savefig(path, format="png")
    how = (
        "drawn from the simulator's packet capture by tcplab trace"
        if sources == {"capture"}
        else "drawn from the sender's sampled state (snd_nxt, snd_una, advertised window), "
        "not from a packet capture"
        if sources == {"series"}
        else "drawn from captures where available, else from sampled sender state"
    )
    return f"{spec.get('title', 'Time-sequence graphs')}, trial 0, {t0:g}–{t1:g} s; {how}."


def _panels(spec: Mapping[str, Any], sel, path: Path) -> str:
    cols = list(spec.get("columns", ["goodput_mbps", "cwnd_segments"]))
    n = len(sel)
    fig = Figure(figsize=(3.3 * len(cols), 2.5 * max(n, 1) + 0.6), dpi=80)
    FigureCanvasAgg(fig)
    for i, (_, label, r) in enumerate(sel):
        ts = r.timeseries
        group = spec.get("group") or next(iter(r.summary["groups"]))
        flows = r.summary["groups"][group]["flows"]
        for j, c in enumerate(cols):
            ax = fig.add_subplot(max(n, 1), len(cols), i * len(cols) + j + 1)
            src, div, ylabel = _column(c)
            for k in sorted(ts["trial"].unique(), reverse=True):
                df = ts[(ts["trial"] == k) & (ts["flow"].isin(flows))]
                g = df.groupby("time_s", sort=True)[src].sum(min_count=1) / div
                ax.plot(
                    g.index,
                    g.to_numpy(),
                    linewidth=1.3 if k == 0 else 0.7,
                    alpha=1.0 if k == 0 else 0.45,
                    color="tab:blue" if k == 0 else "tab:gray",
                )
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize="x-small")
            if i == 0:
                ax.set_title(ylabel, fontsize="small")
            if j == 0:
                ax.set_ylabel(_title(label), fontsize="x-small")
            if i == n - 1:
                ax.set_xlabel("time (s)", fontsize="x-small")
    fig.suptitle(spec.get("title", ""), fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, format="png")
    return (
        f"{spec.get('title', 'Time series')}: one row per case, every trial drawn "
        "(trial 0 in blue, the others grey)."
    )


def _flows(spec: Mapping[str, Any], sel, path: Path) -> str:
    col = spec.get("column", "goodput_mbps")
    src, div, ylabel = _column(col)
    trial = int(spec.get("trial", 0))
    fig, axes = _fig(len(sel), min(3, max(1, len(sel))))
    for ax, (_, label, r) in zip(axes, sel, strict=False):
        ts = r.timeseries
        df = ts[ts["trial"] == trial]
        for flow in dict.fromkeys(df["flow"]):
            rows = df[df["flow"] == flow]
            y = rows[src].astype(float) / div
            if y.isna().all():
                continue
            ax.plot(rows["time_s"], y, linewidth=1.0, label=str(flow))
        ax.set_title(_title(label), fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        if df["flow"].nunique() <= 10:
            ax.legend(loc="best", fontsize="x-small")
    for ax in axes[len(sel) :]:
        ax.set_visible(False)
    fig.suptitle(spec.get("title", ""), fontsize="large")
    fig.tight_layout()
    fig.savefig(path, format="png")
    return f"{spec.get('title', ylabel)}: {ylabel} per flow, trial {trial}."
