"""Graphs of one TCP connection direction, in tcptrace's conventions (tcptrace manual, "Graphs";
xplot colours as tcptrace draws them):

* **time-sequence graph** (``tsg``): time on x, sequence number (bytes, relative: the SYN is 0)
  on y. Each segment is a vertical bar from its first to its last byte: data black,
  retransmissions red, segments beyond the receiver's window deep pink, zero-window probes cyan,
  out-of-order fills blue, SYN/FIN grey. The ACK line (cumulative ACK from the receiver) is
  green, the advertised-window line (ACK + window) yellow, SACK blocks purple bars (invalid ones
  marked with a black x).
* **throughput**: new data sent and data acknowledged per interval (Mbit/s), and the running
  average.
* **rtt**: RTT samples (ms) over time, tcptrace's red dots.
* **outstanding**: bytes sent and not yet acknowledged (tcptrace's "owin" graph, red) with the
  receiver's advertised window (yellow).

Matplotlib's object API (``Figure`` + Agg canvas): no global state, no display needed. SVG files
carry no date and use a fixed id salt, so the same input gives the same file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["KIND_STYLE", "compare_graphs", "connection_graphs"]

#: Segment kind code (tcplab_trace SegKind) → (colour, legend label).
KIND_STYLE: dict[int, tuple[str, str]] = {
    0: ("black", "data"),
    1: ("red", "retransmission"),
    2: ("deeppink", "beyond receiver window"),
    3: ("darkcyan", "zero-window probe"),
    4: ("blue", "out-of-order fill"),
    5: ("grey", "SYN"),
    6: ("grey", "FIN"),
}
ACK_COLOR = "green"
WINDOW_COLOR = "gold"
SACK_COLOR = "purple"
RTT_COLOR = "red"
OUTSTANDING_COLOR = "red"
#: Beyond this many plain data segments, every k-th is drawn (all other kinds are kept); the
#: ACK and window lines, SACK blocks, RTT samples and outstanding-data steps are thinned alike.
#: A graph has about a thousand pixel columns: use --from/--to to see single packets.
MAX_DRAWN_SEGMENTS = 150_000
#: Colours for overlaid captures in comparison graphs.
COMPARE_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _figure(title: str, ylabel: str) -> tuple[Figure, Any]:
    fig = Figure(figsize=(10, 5.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_title(title, fontsize="medium")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Figure, base: Path, formats: Sequence[str]) -> list[Path]:
    fig.tight_layout()
    out = []
    for fmt in formats:
        p = base.with_suffix(f".{fmt}")
        meta = {"Date": None} if fmt == "svg" else {}
        # A fixed salt makes the SVG element ids, and so the file, reproducible.
        with rc_context({"svg.hashsalt": "tcplab-trace"}):
            fig.savefig(p, format=fmt, metadata=meta)
        out.append(p)
    return out


def _arr(s: dict[str, Any], key: str, dtype: Any = float) -> np.ndarray:
    return np.asarray(s.get(key, []), dtype=dtype)


def _step(n: int) -> int:
    """Stride that keeps at most MAX_DRAWN_SEGMENTS of *n* points."""
    return max(1, -(-n // MAX_DRAWN_SEGMENTS))


def _vbars(t: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Vertical line segments [(t, y0), (t, y1)] for a LineCollection."""
    return np.stack([np.column_stack([t, y0]), np.column_stack([t, y1])], axis=1)


def _empty(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes)


def _tsg(ax: Any, s: dict[str, Any], t_off: float = 0.0) -> str:
    """Draws a time-sequence graph; returns a note for the title (decimation) or ''."""
    t = _arr(s, "seg_t") - t_off
    y0, y1 = _arr(s, "seg_start"), _arr(s, "seg_end")
    kind = _arr(s, "seg_kind", int)
    note = ""
    handles = []
    for code, (color, label) in KIND_STYLE.items():
        m = kind == code
        if not m.any():
            continue
        idx = np.flatnonzero(m)
        if code == 0 and _step(len(idx)) > 1:
            step = _step(len(idx))
            idx = idx[::step]
            note = f" (every {step}th data segment, ACK and SACK drawn)"
        width = 1.6 if code else 0.9
        bars = LineCollection(_vbars(t[idx], y0[idx], y1[idx]), colors=color, linewidths=width)
        ax.add_collection(bars)
        # tcptrace marks each segment's top with an arrow head (and a letter such as "R" for
        # the unusual ones); a tick, or a cross for the unusual kinds, does here, so that a
        # segment stays visible when its bar is shorter than a pixel.
        marker = "_" if code in (0, 5, 6) else "x"
        size = 3 if marker == "_" else 5
        ax.plot(t[idx], y1[idx], linestyle="none", marker=marker, markersize=size, color=color)
        handles.append(
            Line2D([], [], color=color, marker=None if marker == "_" else "x", label=label)
        )
    at = _arr(s, "ack_t") - t_off
    if len(at):
        k = _step(len(at))
        ax.step(at[::k], _arr(s, "ack")[::k], where="post", color=ACK_COLOR, linewidth=1)
        ax.step(at[::k], _arr(s, "win_edge")[::k], where="post", color=WINDOW_COLOR, linewidth=1)
        handles.append(Line2D([], [], color=ACK_COLOR, label="ACK"))
        handles.append(Line2D([], [], color=WINDOW_COLOR, label="advertised window"))
    st = _arr(s, "sack_t") - t_off
    if len(st):
        sl, sr = _arr(s, "sack_left"), _arr(s, "sack_right")
        bad = _arr(s, "sack_valid", int) == 0
        k = _step(len(st))
        ax.add_collection(
            LineCollection(_vbars(st[::k], sl[::k], sr[::k]), colors=SACK_COLOR, linewidths=1.4)
        )
        handles.append(Line2D([], [], color=SACK_COLOR, label="SACK block"))
        if bad.any():
            ax.plot(st[bad], sr[bad], linestyle="none", marker="x", color="black", markersize=6)
            handles.append(
                Line2D([], [], color="black", marker="x", linestyle="none", label="invalid SACK")
            )
    if handles:
        ax.autoscale_view()
        # Keep the data readable: the window line may run far above it (a large receive
        # window); it is then cut at the top of the graph.
        tops = [a.max() for a in (y1, _arr(s, "ack"), _arr(s, "sack_right")) if len(a)]
        bottoms = [a.min() for a in (_arr(s, "seg_start"), _arr(s, "ack")) if len(a)]
        if tops and bottoms:
            lo, hi = min(bottoms), max(tops)
            span = max(hi - lo, 1.0)
            ax.set_ylim(lo - 0.05 * span, hi + 0.35 * span)
        ax.legend(handles=handles, loc="upper left", fontsize="small")
    else:
        _empty(ax, "segments in the time window")
    return note


def _bins(t_all: np.ndarray) -> np.ndarray | None:
    if len(t_all) == 0:
        return None
    lo, hi = float(t_all.min()), float(t_all.max())
    width = max((hi - lo) / 200.0, 1e-3)
    n = max(int(np.ceil((hi - lo) / width)), 1)
    return lo + width * np.arange(n + 1)


def _throughput(
    ax: Any, s: dict[str, Any], t_off: float = 0.0, color: str | None = None, label: str = ""
) -> bool:
    t = _arr(s, "seg_t") - t_off
    kind = _arr(s, "seg_kind", int)
    size = _arr(s, "seg_end") - _arr(s, "seg_start")
    new = (kind != 1) & (kind != 5) & (kind != 6)
    at = _arr(s, "ack_t") - t_off
    ack = _arr(s, "ack")
    edges = _bins(np.concatenate([t, at]))
    if edges is None:
        return False
    width = edges[1] - edges[0]
    sent, _ = np.histogram(t[new], bins=edges, weights=size[new])
    ax.step(
        edges[:-1],
        sent * 8 / width / 1e6,
        where="post",
        color=color or "black",
        linewidth=1,
        label=f"{label}new data sent".strip(),
    )
    if len(at):
        # Bytes newly acknowledged per bin: growth of the highest ACK so far.
        top = np.maximum.accumulate(ack)
        acked = np.diff(np.concatenate([[top[0]], top]))
        got, _ = np.histogram(at, bins=edges, weights=acked)
        ax.step(
            edges[:-1],
            got * 8 / width / 1e6,
            where="post",
            color=color or ACK_COLOR,
            linewidth=1,
            linestyle="--" if color else "-",
            label=f"{label}acknowledged".strip(),
        )
    if new.any():
        order = np.argsort(t[new], kind="stable")
        tt = t[new][order]
        cum = np.cumsum(size[new][order])
        dt = np.maximum(tt - tt[0], width)
        ax.plot(
            tt,
            cum * 8 / dt / 1e6,
            color=color or "blue",
            linewidth=0.8,
            alpha=0.6,
            linestyle=":",
            label=f"{label}running average".strip(),
        )
    return True


def _rtt(
    ax: Any, s: dict[str, Any], t_off: float = 0.0, color: str = RTT_COLOR, label: str | None = None
) -> bool:
    rt = _arr(s, "rtt_t") - t_off
    if not len(rt):
        return False
    k = _step(len(rt))
    ax.plot(
        rt[::k],
        _arr(s, "rtt_ms")[::k],
        linestyle="none",
        marker=".",
        markersize=3,
        color=color,
        label=label,
    )
    return True


def _outstanding(
    ax: Any, s: dict[str, Any], t_off: float = 0.0, color: str | None = None, label: str = ""
) -> bool:
    ot = _arr(s, "out_t") - t_off
    at = _arr(s, "ack_t") - t_off
    if not len(ot) and not len(at):
        return False
    if len(ot):
        order = np.argsort(ot, kind="stable")[:: _step(len(ot))]
        ax.step(
            ot[order],
            _arr(s, "outstanding")[order],
            where="post",
            color=color or OUTSTANDING_COLOR,
            linewidth=1,
            label=f"{label}outstanding data".strip(),
        )
    if len(at):
        k = _step(len(at))
        ax.step(
            at[::k],
            (_arr(s, "win_edge") - _arr(s, "ack"))[::k],
            where="post",
            color=color or WINDOW_COLOR,
            linewidth=1,
            linestyle="--" if color else "-",
            label=f"{label}advertised window".strip(),
        )
    return True


def _directions(conn: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(dir, src, dst) of the directions that sent data (or at least a SYN)."""
    out = []
    for d, src, dst in (("a2b", conn["a"], conn["b"]), ("b2a", conn["b"], conn["a"])):
        st = conn[d]
        if "series" in st and (st["data_pkts"] or st["syn_pkts"]):
            out.append((d, src, dst))
    return out


def connection_graphs(
    conn: dict[str, Any],
    directory: Path,
    formats: Sequence[str],
    prefix: str = "",
    title: str = "",
) -> list[Path]:
    """Write the four graphs of each direction of *conn* (a connection of a report made with
    graph series) into *directory*; returns the files written."""
    written: list[Path] = []
    i = conn["index"]
    for d, src, dst in _directions(conn):
        s = conn[d]["series"]
        head = f"{title + ': ' if title else ''}conn {i} {src} → {dst}"
        base = directory / f"{prefix}conn{i}_{d}"

        fig, ax = _figure(f"{head}: time-sequence graph", "sequence number (relative, bytes)")
        note = _tsg(ax, s)
        if note:
            ax.set_title(ax.get_title() + note, fontsize="medium")
        written += _save(fig, base.with_name(base.name + "_tsg"), formats)

        fig, ax = _figure(f"{head}: throughput", "Mbit/s")
        if _throughput(ax, s):
            ax.legend(loc="best", fontsize="small")
            ax.set_ylim(bottom=0)
        else:
            _empty(ax, "data")
        written += _save(fig, base.with_name(base.name + "_throughput"), formats)

        fig, ax = _figure(f"{head}: RTT samples", "RTT (ms)")
        if _rtt(ax, s):
            ax.set_ylim(bottom=0)
        else:
            _empty(ax, "RTT samples")
        written += _save(fig, base.with_name(base.name + "_rtt"), formats)

        fig, ax = _figure(f"{head}: outstanding data", "bytes")
        if _outstanding(ax, s):
            ax.legend(loc="best", fontsize="small")
            ax.set_ylim(bottom=0)
        else:
            _empty(ax, "data")
        written += _save(fig, base.with_name(base.name + "_outstanding"), formats)
    return written


def compare_graphs(
    pairs: Sequence[tuple[str, dict[str, Any]]],
    directory: Path,
    formats: Sequence[str],
    index: int,
) -> list[Path]:
    """Overlay connection *index* of several captures (label, connection), direction by
    direction, with times from each connection's first packet; returns the files written."""
    written: list[Path] = []
    for d in ("a2b", "b2a"):
        present = [(lab, c) for lab, c in pairs if any(x[0] == d for x in _directions(c))]
        if len(present) < 2:
            continue
        base = directory / f"compare_conn{index}_{d}"
        names = " vs ".join(lab for lab, _ in present)

        fig, ax = _figure(
            f"conn {index} {d}: time-sequence, {names}", "sequence number (relative, bytes)"
        )
        handles = []
        for k, (lab, c) in enumerate(present):
            s, col = c[d]["series"], COMPARE_COLORS[k % len(COMPARE_COLORS)]
            off = c["first_s"]
            t = _arr(s, "seg_t") - off
            y1 = _arr(s, "seg_end")
            retx = _arr(s, "seg_kind", int) == 1
            ax.plot(t[~retx], y1[~retx], linestyle="none", marker=".", markersize=2, color=col)
            ax.plot(t[retx], y1[retx], linestyle="none", marker="x", markersize=4, color=col)
            at = _arr(s, "ack_t") - off
            if len(at):
                ax.step(at, _arr(s, "ack"), where="post", color=col, linewidth=0.8, alpha=0.7)
            handles.append(
                Line2D([], [], color=col, marker=".", label=f"{lab} (x = retransmission)")
            )
        ax.legend(handles=handles, loc="upper left", fontsize="small")
        ax.set_xlabel("time since the connection's first packet (s)")
        written += _save(fig, base.with_name(base.name + "_tsg"), formats)

        overlays = (
            ("throughput", "Mbit/s", _throughput, ": ", "_throughput"),
            ("RTT samples", "RTT (ms)", _rtt, "", "_rtt"),
            ("outstanding data", "bytes", _outstanding, ": ", "_outstanding"),
        )
        for what, unit, draw, sep, suffix in overlays:
            fig, ax = _figure(f"conn {index} {d}: {what}, {names}", unit)
            for k, (lab, c) in enumerate(present):
                color = COMPARE_COLORS[k % len(COMPARE_COLORS)]
                draw(ax, c[d]["series"], c["first_s"], color, f"{lab}{sep}")
            ax.legend(loc="best", fontsize="small")
            ax.set_ylim(bottom=0)
            ax.set_xlabel("time since the connection's first packet (s)")
            written += _save(fig, base.with_name(base.name + suffix), formats)
    return written
