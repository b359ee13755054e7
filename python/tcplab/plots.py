"""Plots of a run: goodput.png and cwnd.png (per flow over time, trial 0).

Uses matplotlib's object API (``Figure`` + Agg canvas), not pyplot: no global state, safe in
threads and without a display.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from .results import Result

__all__ = ["write_plots"]


def _figure(title: str, ylabel: str) -> tuple[Figure, object]:
    fig = Figure(figsize=(9, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_title(title)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _plot(result: Result, column: str, scale: float, ylabel: str, what: str, path: Path) -> None:
    ts = result.timeseries
    seed = result.seeds[0] if result.seeds else None
    n = len(result.raw)
    title = f"{result.scenario.name}: {what}, trial 0 of {n} (seed {seed})"
    fig, ax = _figure(title, ylabel)
    plotted = 0
    if not ts.empty and column in ts.columns:
        t0 = ts[ts["trial"] == 0]
        for flow in dict.fromkeys(t0["flow"]):  # first-appearance order
            rows = t0[t0["flow"] == flow]
            y = rows[column].astype("float64") / scale
            if y.isna().all():
                continue  # e.g. cwnd of a UDP flow
            ax.plot(rows["time_s"], y, label=str(flow), linewidth=1.2)  # type: ignore[attr-defined]
            plotted += 1
    if plotted:
        if plotted <= 16:
            ax.legend(loc="best", fontsize="small")  # type: ignore[attr-defined]
        ax.set_ylim(bottom=0)  # type: ignore[attr-defined]
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)  # type: ignore[attr-defined]
    fig.tight_layout()
    fig.savefig(path, format="png")


def write_plots(result: Result, directory: Path) -> None:
    """Write goodput.png (Mbit/s per interval) and cwnd.png (segments) into *directory*."""
    _plot(
        result,
        "goodput_bps",
        1e6,
        "goodput (Mbit/s)",
        "goodput per interval",
        directory / "goodput.png",
    )
    _plot(
        result, "cwnd_segments", 1.0, "cwnd (segments)", "congestion window", directory / "cwnd.png"
    )
