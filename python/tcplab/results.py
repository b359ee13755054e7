"""From raw results (docs/design.md §4) of N trials to a summary, tables, plots and a run directory.

Definitions (also in docs/scenario-format.md, "Outputs"):

* **goodput** of a flow in a trial = 8 × bytes delivered to the receiver / active time, where the
  active time runs from the flow's start to its completion (sized transfer that finished) or else
  to ``min(stop, end of run)``.
* **statistics** over trials: ``{"mean", "min", "max", "sd"}`` with the sample standard deviation
  (n − 1 in the denominator; 0 for a single trial).
* **group**: the flows of one ``[[flow]]`` table (its streams); per trial a group's goodput and
  counters are the sums over its flows.
* **aggregate goodput** = 8 × bytes delivered by all flows / run duration, per trial.
* **Jain's fairness index** (Jain, Chiu & Hawe, DEC-TR-301, 1984): J = (Σx)² / (n·Σx²), from 1/n
  to 1; ``jain_index`` is taken over the groups' mean goodputs, ``jain_index_trials`` gives the
  statistics of the per-trial index. It is computed over the TCP groups (a UDP constant-rate
  source does not respond to congestion, so it is not part of a fairness comparison), or over all
  groups when there is no TCP group; null when all inputs are zero.
* **loss rate**: TCP retransmitted segments / segments sent; UDP (sent − received) / sent.
* **utilisation** of a bottleneck direction = busy time / run end.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .errors import OutputError

if TYPE_CHECKING:
    from .scenario import Scenario

__all__ = [
    "Result",
    "check_out",
    "default_out",
    "jain_index",
    "queues_frame",
    "stats",
    "summarize",
    "timeseries_frame",
    "write_atomic",
]

#: §4 series columns in order; *_ns columns other than time_ns are converted to *_ms.
SERIES_COLUMNS = (
    "flow",
    "time_ns",
    "goodput_bps",
    "delivered_bytes",
    "cwnd_bytes",
    "cwnd_segments",
    "ssthresh_bytes",
    "srtt_ns",
    "rttvar_ns",
    "rto_ns",
    "snd_una",
    "snd_nxt",
    "in_flight_bytes",
    "rwnd_bytes",
    "retransmits",
    "fast_retransmits",
    "timeouts",
    "dupacks",
    "sack_blocks",
    "pacing_rate_bps",
)
QUEUE_COLUMNS = (
    "link",
    "dir",
    "time_ns",
    "queue_pkts",
    "queue_bytes",
    "drops",
    "lost",
    "utilization",
)
CHANGE_COLUMNS = ("flow", "time_ns", "cwnd_bytes", "ssthresh_bytes", "in_flight_bytes")
COUNTERS = ("retransmits", "timeouts", "fast_retransmits", "dupacks")


# ---------------------------------------------------------------------------------------------
# Statistics


def stats(values: Sequence[float]) -> dict[str, float] | None:
    """Mean, min, max and sample SD (n − 1; 0 for one value) of *values*; None if empty."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return None
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "min": min(xs), "max": max(xs), "sd": sd}


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²) (Jain, Chiu, Hawe, DEC-TR-301, 1984); None for no
    values or all zeros. The one implementation: summaries, the runs catalog, study metrics and
    ``tcplab compare`` (kernel/compare.py) all call it."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    sq = math.fsum(x * x for x in xs)
    if sq == 0:
        return None
    return math.fsum(xs) ** 2 / (len(xs) * sq)


# ---------------------------------------------------------------------------------------------
# Tables


_LABELS = ("flow", "link", "dir", "group")


def _frame(
    raw_table: dict[str, list[Any]] | None,
    columns: Sequence[str],
    trial: int,
    flow_names: Sequence[str] = (),
) -> pd.DataFrame:
    """One trial's columnar table as a DataFrame with a leading ``trial`` column.

    Missing columns are NaN; numeric columns are numeric even when the engine wrote NaN as null
    (JSON); a ``flow`` column of indices (into the raw result's flow list) becomes names.
    """
    table = dict(raw_table or {})
    cols = list(columns) + [c for c in table if c not in columns]
    n = max((len(v) for v in table.values()), default=0)
    data: dict[str, Any] = {}
    for c in cols:
        values = table.get(c, [math.nan] * n)
        if c in _LABELS:
            if c == "flow" and flow_names and any(isinstance(v, int) for v in values):
                values = [flow_names[v] if isinstance(v, int) else v for v in values]
            data[c] = pd.Series(values)
        elif any(v is None for v in values):  # NaN written as null by a JSON engine
            data[c] = pd.Series(np.asarray(values, dtype=np.float64))
        else:
            data[c] = pd.Series(values)
    df = pd.DataFrame(data, columns=cols)
    df.insert(0, "trial", trial)
    return df


def _flow_names(raw: dict[str, Any]) -> list[str]:
    return [f["name"] for f in raw.get("flows", [])]


def _convert_times(df: pd.DataFrame) -> pd.DataFrame:
    renames = {}
    for c in df.columns:
        if c == "time_ns":
            df[c] = df[c].astype("float64") / 1e9
            renames[c] = "time_s"
        elif c.endswith("_ns"):
            df[c] = df[c].astype("float64") / 1e6
            renames[c] = c[:-3] + "_ms"
    return df.rename(columns=renames)


def _frames(
    tables: Sequence[dict[str, list[Any]] | None],
    columns: Sequence[str],
    names: Sequence[Sequence[str]] | None = None,
    groups: Sequence[dict[str, str]] | None = None,
) -> pd.DataFrame:
    """Every trial's table as one DataFrame: the same frame as concatenating :func:`_frame` of
    each trial (tests/test_results.py checks it), built column by column in one go — per-trial
    DataFrames cost milliseconds each, which dominated campaigns of short trials. Trials whose
    tables differ in their columns, or are empty, take the per-trial path.

    *names*: per trial, the flow names a ``flow`` column of indices maps to; *groups*: per trial,
    flow name → group, inserted as a ``group`` column after ``flow``."""
    n = len(tables)

    def per_trial() -> pd.DataFrame:
        frames = []
        for k, t in enumerate(tables):
            df = _frame(t, columns, k, names[k] if names else ())
            if groups is not None:
                df.insert(2, "group", df["flow"].map(groups[k]))
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    if n == 0:
        return pd.DataFrame()
    keys = [list((t or {}).keys()) for t in tables]
    lengths = [max((len(v) for v in (t or {}).values()), default=0) for t in tables]
    if any(k != keys[0] for k in keys) or min(lengths) == 0:
        return per_trial()
    if any(len(v) != m for t, m in zip(tables, lengths, strict=True) for v in t.values()):
        return per_trial()
    table0 = tables[0] or {}
    cols = list(columns) + [c for c in table0 if c not in columns]
    data: dict[str, Any] = {"trial": np.repeat(np.arange(n, dtype=np.int64), lengths)}
    for c in cols:
        if c in _LABELS:
            values: list[Any] = []
            group_values: list[Any] = []
            for k, t in enumerate(tables):
                v = t[c] if c in t else [math.nan] * lengths[k]
                if c == "flow" and names and names[k] and any(isinstance(x, int) for x in v):
                    v = [names[k][x] if isinstance(x, int) else x for x in v]
                values.extend(v)
                if c == "flow" and groups is not None:
                    g = groups[k]
                    group_values.extend(
                        g.get(f, math.nan) if isinstance(f, str) else math.nan for f in v
                    )
            data[c] = values
            if c == "flow" and groups is not None:
                data["group"] = group_values
            continue
        if c not in table0:
            data[c] = np.full(sum(lengths), math.nan)
            continue
        values = [x for t in tables for x in t[c]]
        if any(x is None for x in values):
            data[c] = np.asarray(values, dtype=np.float64)
        else:
            arr = np.asarray(values)
            if arr.dtype.kind not in "iuf":  # not plainly numeric: let pandas infer, as before
                return per_trial()
            data[c] = arr
    order = ["trial", *cols]
    if groups is not None:
        order.insert(order.index("flow") + 1 if "flow" in order else 2, "group")
    return pd.DataFrame({c: data[c] for c in order})


def timeseries_frame(raws: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Long table: one row per trial, flow and interval end; times in s, srtt/rttvar/rto in ms."""
    df = _frames(
        [raw.get("series") for raw in raws],
        SERIES_COLUMNS,
        names=[_flow_names(raw) for raw in raws],
        groups=[
            {f["name"]: f.get("group", f["name"]) for f in raw.get("flows", [])} for raw in raws
        ],
    )
    df = _convert_times(df)
    if "time_s" in df.columns:
        df = df.sort_values(["trial", "flow", "time_s"], kind="stable").reset_index(drop=True)
    return df


def queues_frame(raws: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Long table of monitored queues: trial, link, dir, time_s, queue_pkts, queue_bytes, ..."""
    return _convert_times(_frames([raw.get("queue_series") for raw in raws], QUEUE_COLUMNS))


def changes_frame(raws: Sequence[dict[str, Any]]) -> pd.DataFrame | None:
    """cwnd/ssthresh change log (when record_changes), or None if no trial has one."""
    if not any(raw.get("changes") for raw in raws):
        return None
    frames = [
        _frame(raw.get("changes"), CHANGE_COLUMNS, k, _flow_names(raw))
        for k, raw in enumerate(raws)
    ]
    return _convert_times(pd.concat(frames, ignore_index=True))


# ---------------------------------------------------------------------------------------------
# Summary


def ktrace_frame(raws: Sequence[dict[str, Any]]) -> pd.DataFrame | None:
    """The kernel tracepoints of every trial (kernel/ktrace.py), one row per event: ``trial``,
    ``flow``, ``end`` (``snd``/``rcv``), ``event``, ``time_s`` from the trial's time zero and
    the event's integer fields (NaN where an event has no such field); None when no trial
    recorded any."""
    parts = []
    for trial, raw in enumerate(raws):
        kt = (raw.get("kernel") or {}).get("tracepoints")
        if not kt:
            continue
        for flow, ends in kt["flows"].items():
            for end, events in ends.items():
                for event, cols in events.items():
                    df = pd.DataFrame({k: v for k, v in cols.items() if k != "t_ns"})
                    df.insert(0, "time_s", np.asarray(cols["t_ns"], dtype=np.int64) / 1e9)
                    df.insert(0, "event", event)
                    df.insert(0, "end", end)
                    df.insert(0, "flow", flow)
                    df.insert(0, "trial", trial)
                    parts.append(df)
    if not parts:
        return None
    out = pd.concat(parts, ignore_index=True, sort=False)
    return out.sort_values(["trial", "time_s"], kind="stable").reset_index(drop=True)


def _flow_trial(cfg: dict[str, Any], raw_flow: dict[str, Any], end_ns: int) -> dict[str, Any]:
    start = cfg["start_ns"]
    completion = raw_flow.get("completion_ns")
    stop = completion if completion is not None else min(cfg["stop_ns"], end_ns)
    active = stop - start
    delivered = raw_flow.get("bytes_delivered") or 0
    out: dict[str, Any] = {
        "goodput_bps": 8e9 * delivered / active if active > 0 else 0.0,
        "bytes_delivered": delivered,
        "completion_s": (completion - start) / 1e9 if completion is not None else None,
    }
    tcp = cfg["kind"] == "tcp"
    for c in COUNTERS:
        v = raw_flow.get(c)
        out[c] = v if (tcp and v is not None) else None
    if tcp:
        segs = raw_flow.get("segments_sent") or 0
        out["loss_num"] = raw_flow.get("retransmits") or 0
        out["loss_den"] = segs
    else:
        sent = raw_flow.get("udp_sent") or 0
        out["loss_num"] = sent - (raw_flow.get("udp_received") or 0)
        out["loss_den"] = sent
    return out


def _block(trials: Sequence[dict[str, Any]], sized: bool) -> dict[str, Any]:
    """Statistics over trials of one flow (or group)."""
    out: dict[str, Any] = {
        "goodput_bps": stats([t["goodput_bps"] for t in trials]),
        "goodput_bps_trials": [t["goodput_bps"] for t in trials],
        "bytes_delivered": stats([t["bytes_delivered"] for t in trials]),
    }
    for c in COUNTERS:
        vals = [t[c] for t in trials]
        out[c] = None if any(v is None for v in vals) else stats(vals)
    out["loss_rate"] = stats(
        [t["loss_num"] / t["loss_den"] if t["loss_den"] else 0.0 for t in trials]
    )
    if sized:
        done = [t["completion_s"] for t in trials if t["completion_s"] is not None]
        out["completion_s"] = stats(done)
        out["completed_trials"] = len(done)
    else:
        out["completion_s"] = None
    return out


def _sum_trials(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "goodput_bps": math.fsum(p["goodput_bps"] for p in parts),
        "bytes_delivered": sum(p["bytes_delivered"] for p in parts),
        "loss_num": sum(p["loss_num"] for p in parts),
        "loss_den": sum(p["loss_den"] for p in parts),
    }
    for c in COUNTERS:
        vals = [p[c] for p in parts]
        out[c] = None if any(v is None for v in vals) else sum(vals)
    comps = [p["completion_s"] for p in parts]
    out["completion_s"] = None if any(c is None for c in comps) else max(comps)
    return out


def summarize(
    scenario: Scenario,
    seeds: Sequence[int],
    configs: Sequence[dict[str, Any]],
    raws: Sequence[dict[str, Any]],
    wall_seconds: float,
    version: str,
) -> dict[str, Any]:
    """The summary.json document of a run (see the module docstring for the definitions)."""
    n = len(raws)
    flow_cfgs = configs[0]["flows"]
    per_flow: dict[str, list[dict[str, Any]]] = {f["name"]: [] for f in flow_cfgs}
    links: dict[tuple[str, str], list[dict[str, Any]]] = {}
    aggregate: list[float] = []
    for cfg, raw in zip(configs, raws, strict=True):
        end_ns = raw.get("end_ns") or cfg["duration_ns"]
        by_name = {f["name"]: f for f in raw.get("flows", [])}
        total_bytes = 0
        for fc in cfg["flows"]:
            rf = by_name.get(fc["name"])
            if rf is None:
                raise RuntimeError(f"the engine's result has no flow named {fc['name']!r}")
            t = _flow_trial(fc, rf, end_ns)
            per_flow[fc["name"]].append(t)
            total_bytes += t["bytes_delivered"]
        aggregate.append(8e9 * total_bytes / cfg["duration_ns"])
        for link in raw.get("links", []):
            busy = link.get("busy_ns") or 0
            links.setdefault((link["name"], link["dir"]), []).append(
                {
                    "utilization": busy / end_ns if end_ns else 0.0,
                    "drops": link.get("drops") or 0,
                    "lost": link.get("lost") or 0,
                    "packets": link.get("packets") or 0,
                }
            )

    flows: dict[str, Any] = {}
    groups_trials: dict[str, list[list[dict[str, Any]]]] = {}
    group_meta: dict[str, dict[str, Any]] = {}
    for f, fc in zip(scenario.flows, flow_cfgs, strict=True):
        sized = fc.get("bytes") is not None
        flows[f.name] = {
            "group": f.group,
            "kind": f.kind,
            "src": f.src,
            "dst": f.dst,
            "direction": f.direction,
            "cca": f.cca["name"] if f.cca else None,
            "base_rtt_ms": f.rtt_ns / 1e6,
            **_block(per_flow[f.name], sized),
        }
        groups_trials.setdefault(f.group, [[] for _ in range(n)])
        for k in range(n):
            groups_trials[f.group][k].append(per_flow[f.name][k])
        meta = group_meta.setdefault(
            f.group,
            {"kind": f.kind, "cca": flows[f.name]["cca"], "flows": [], "sized": sized},
        )
        meta["flows"].append(f.name)

    groups: dict[str, Any] = {}
    group_trial_goodput: dict[str, list[float]] = {}
    for g, per_trial in groups_trials.items():
        summed = [_sum_trials(parts) for parts in per_trial]
        meta = group_meta[g]
        groups[g] = {
            "kind": meta["kind"],
            "cca": meta["cca"],
            "flows": meta["flows"],
            **_block(summed, meta["sized"]),
        }
        group_trial_goodput[g] = [t["goodput_bps"] for t in summed]

    fair = [g for g in groups if groups[g]["kind"] == "tcp"] or list(groups)
    jain_trials = [jain_index([group_trial_goodput[g][k] for g in fair]) for k in range(n)]
    jt = [j for j in jain_trials if j is not None]
    means = [groups[g]["goodput_bps"]["mean"] for g in fair]

    bottleneck: dict[str, Any] = {}
    for d, label in (("ab", "forward"), ("ba", "reverse")):
        rows = links.get(("bottleneck", d))
        if not rows:
            continue
        bottleneck[label] = {
            "utilization": stats([r["utilization"] for r in rows]),
            "drops": stats([r["drops"] for r in rows]),
            "lost": stats([r["lost"] for r in rows]),
            "packets": stats([r["packets"] for r in rows]),
        }

    sim_packets = [int(raw.get("sim_packets") or 0) for raw in raws]
    background = _background_summary(configs, raws)
    return {
        "tcplab_version": version,
        "name": scenario.name,
        "description": scenario.description,
        "file": scenario.file,
        "engine": scenario.engine,
        "trials": n,
        "seed": scenario.seed,
        "seeds": list(seeds),
        "duration_s": scenario.duration_ns / 1e9,
        "interval_s": scenario.interval_ns / 1e9,
        "flows": flows,
        "groups": groups,
        "aggregate": {
            "goodput_bps": stats(aggregate),
            "goodput_bps_trials": aggregate,
            "jain_index": jain_index(means),
            "jain_index_trials": stats(jt),
            "jain_groups": fair,
        },
        "bottleneck": bottleneck,
        # Only with [[background]]: summaries of runs without it keep their keys.
        **({"background": background} if background else {}),
        "sim_packets": sum(sim_packets),
        "sim_packets_trials": sim_packets,
        "events": sum(int(raw.get("events") or 0) for raw in raws),
        "wall_seconds": wall_seconds,
        # The kernel engine marks a trial invalid when its link emulator missed the configured
        # rate or delay (tcplab.kernel); simulator trials are always valid.
        "valid": all(raw.get("valid", True) for raw in raws),
        "invalid_reasons": [
            f"trial {k}: {why}"
            for k, raw in enumerate(raws)
            for why in raw.get("invalid_reasons", [])
        ],
        # Kernel trials run again after an invalid attempt (tcplab.kernel.engine.run): why each
        # discarded attempt was invalid. Only when there were some, so other summaries keep their
        # keys.
        **(
            {"discarded_attempts": discarded}
            if (
                discarded := [
                    f"trial {k} attempt {i + 1}: {why}"
                    for k, raw in enumerate(raws)
                    for i, reasons in enumerate(
                        (raw.get("kernel") or {}).get("discarded_attempts") or []
                    )
                    for why in reasons
                ]
            )
            else {}
        ),
        "scenario": scenario.resolved,
    }


def _background_summary(
    configs: Sequence[dict[str, Any]], raws: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """``summary["background"]``: per ``[[background]]`` source, in aggregate (not per
    connection), statistics over trials of its goodput (8 × bytes delivered / duration), offered
    load, connections started/completed/failed, mean completion time of completed connections
    (arrival to last byte delivered), retransmissions, and for UDP the loss rate."""
    per: dict[str, list[dict[str, Any]]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for cfg, raw in zip(configs, raws, strict=True):
        dur = cfg["duration_ns"]
        for b in raw.get("background") or []:
            done = int(b.get("flows_completed") or 0)
            sent = int(b.get("udp_sent") or 0)
            per.setdefault(b["name"], []).append(
                {
                    "goodput_bps": 8e9 * int(b.get("bytes_delivered") or 0) / dur,
                    "offered_bps": float(b.get("load_bps") or 0),
                    "bytes_delivered": int(b.get("bytes_delivered") or 0),
                    "flows_started": int(b.get("flows_started") or 0),
                    "flows_completed": done,
                    "flows_failed": int(b.get("flows_failed") or 0),
                    "mean_completion_s": (
                        int(b.get("completion_ns_sum") or 0) / done / 1e9 if done else None
                    ),
                    "retransmits": int(b.get("retransmits") or 0),
                    "loss_rate": (
                        (sent - int(b.get("udp_received") or 0)) / sent if sent else None
                    ),
                    "pool_slots": int(b.get("pool_slots") or 0),
                }
            )
            meta.setdefault(b["name"], {"kind": b.get("kind"), "src": b["src"], "dst": b["dst"]})
    out: dict[str, Any] = {}
    for name, trials in per.items():
        block: dict[str, Any] = dict(meta[name])
        for key in trials[0]:
            vals = [t[key] for t in trials if t[key] is not None]
            block[key] = stats(vals) if vals else None
        block["goodput_bps_trials"] = [t["goodput_bps"] for t in trials]
        out[name] = block
    return out


def _clean(obj: Any) -> Any:
    """Replace NaN/inf (not valid JSON) by null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


# ---------------------------------------------------------------------------------------------
# Result and run directory


class Result:
    """The outcome of :func:`tcplab.run`: summary, tables and the raw results of every trial."""

    def __init__(
        self,
        scenario: Scenario,
        seeds: Sequence[int],
        configs: Sequence[dict[str, Any]],
        raws: Sequence[dict[str, Any]],
        wall_seconds: float,
        version: str,
    ) -> None:
        self.scenario = scenario
        self.seeds = list(seeds)
        self.configs = list(configs)
        self.raw = list(raws)
        self.wall_seconds = wall_seconds
        self.summary: dict[str, Any] = _clean(
            summarize(scenario, seeds, configs, raws, wall_seconds, version)
        )
        self.timeseries: pd.DataFrame = timeseries_frame(raws)
        self.queues: pd.DataFrame = queues_frame(raws)
        self.changes: pd.DataFrame | None = changes_frame(raws)
        #: The kernel's tracepoints (``--ktrace``), one row per event; None without.
        self.ktrace: pd.DataFrame | None = ktrace_frame(raws)
        #: pcap files of trial 0 (see tcplab.capture); moved into ``<out>/pcap/`` by write().
        self.captures: list[Path] = []
        self.out: Path | None = None

    def __repr__(self) -> str:
        return f"<tcplab.Result {self.scenario.name!r}: {len(self.raw)} trial(s), out={self.out}>"

    def write(self, out: str | os.PathLike[str]) -> Path:
        """Write the run directory *out* atomically (see :func:`write_atomic`)."""
        from . import plots

        def fill(d: Path) -> None:
            (d / "summary.json").write_text(
                json.dumps(self.summary, indent=2, allow_nan=False) + "\n", encoding="utf-8"
            )
            self.timeseries.to_parquet(d / "timeseries.parquet", index=False)
            self.queues.to_parquet(d / "queues.parquet", index=False)
            if self.changes is not None:
                self.changes.to_parquet(d / "changes.parquet", index=False)
            if self.ktrace is not None:
                self.ktrace.to_parquet(d / "ktrace.parquet", index=False)
            (d / "scenario.toml").write_text(self.scenario.resolved_toml(), encoding="utf-8")
            plots.write_plots(self, d)
            if self.captures:
                (d / "pcap").mkdir()
                for c in self.captures:
                    shutil.copyfile(c, d / "pcap" / c.name)

        self.out = write_atomic(Path(out), fill)
        if self.captures:
            # The scratch copies are no longer needed; point at the ones in the run directory.
            scratch = {c.parent for c in self.captures}
            self.captures = [self.out / "pcap" / c.name for c in self.captures]
            for sdir in scratch:
                shutil.rmtree(sdir, ignore_errors=True)
        return self.out


def check_out(out: str | os.PathLike[str]) -> Path:
    """Refuse an output directory that exists and is not empty (or is not a directory)."""
    p = Path(out)
    if p.exists():
        if not p.is_dir():
            raise OutputError(f"output {p} exists and is not a directory")
        if any(p.iterdir()):
            raise OutputError(
                f"output directory {p} exists and is not empty; choose another --out or remove it"
            )
    return p


def default_out(name: str, base: str | os.PathLike[str] = "runs") -> Path:
    """``runs/<name>-<YYYYmmdd-HHMMSS>`` (with ``-2``, ``-3``, ... if that is taken)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    p = Path(base) / f"{name}-{stamp}"
    k = 2
    while p.exists():
        p = Path(base) / f"{name}-{stamp}-{k}"
        k += 1
    return p


def _makedirs_tracked(d: Path) -> list[Path]:
    """Create *d* and missing parents; return the directories created, deepest first."""
    missing: list[Path] = []
    cur = d
    while not cur.exists():
        missing.append(cur)
        if cur.parent == cur:
            break
        cur = cur.parent
    for m in reversed(missing):
        with contextlib.suppress(FileExistsError):
            m.mkdir()
    return missing


def write_atomic(out: Path, fill: Callable[[Path], None]) -> Path:
    """Build the directory in a temporary sibling, then ``os.rename`` it to *out*.

    On any error the temporary directory, and any parent directories this call created, are
    removed, so nothing is left behind. *out* may exist only as an empty directory.
    """
    out = check_out(out).absolute()
    created = _makedirs_tracked(out.parent)
    tmp: Path | None = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        os.chmod(tmp, 0o755)
        fill(tmp)
        try:
            os.rename(tmp, out)
        except OSError as e:
            raise OutputError(f"cannot move the results into {out}: {e.strerror}") from e
        tmp = None
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        for d in created:
            try:
                d.rmdir()
            except OSError:
                break
        raise
    return out
