"""The results catalog: every run recorded, queryable with SQL (DuckDB), comparable with ``diff``.

``tcplab run`` and ``tcplab reproduce`` record each run in the results directory
(:func:`tcplab.store.default_results_dir`: ``$TCPLAB_RESULTS`` or ``~/.local/share/tcplab``;
``--results-dir``; ``--no-record`` to skip)::

    runs/<RUN>/run.json        provenance: scenario file and name, overrides, seeds, points,
                               tcplab version and engine build, engine, executor, host, wall time,
                               output directory, trials reused from the store
    runs/<RUN>/run.parquet     the same, one row
    runs/<RUN>/flows.parquet   one row per (point, trial, flow): goodput, bytes, retransmissions,
                               timeouts, fast retransmits, dupACKs, loss rate, mean queueing delay
    runs/<RUN>/trials.parquet  one row per (point, trial): aggregate goodput, Jain's index over
                               the TCP flow groups (as in summary.json), engine seconds
    runs/<RUN>/series.parquet  the interval time series of every point (as timeseries.parquet)
    catalog.duckdb             views runs, flows, trials, series over all runs' Parquet files

A run directory is written atomically (:func:`tcplab.results.write_atomic`). ``RUN`` is the run's
id (``YYYYmmdd-HHMMSS-xxxxxx``), a unique prefix of it, ``latest`` / ``latest~N``, or the output
directory of the run. ``tcplab runs query`` opens the same views in memory, so it works while
another tcplab process is recording.

The mean queueing delay of a flow in a trial is the mean of its smoothed RTT samples (srtt, one per
interval, zeros before the first RTT sample excluded) minus the path's base RTT: an approximation
that includes the sender's RTT-estimator lag.
"""

from __future__ import annotations

import json
import math
import os
import platform
import secrets
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import results
from .errors import UserError
from .results import Result
from .store import build_id, default_results_dir

__all__ = ["RunRecord", "catalog_dir", "connect", "find_run", "list_runs", "load_run", "record"]

TABLES = ("runs", "flows", "trials", "series")
FILES = {
    "runs": "run.parquet",
    "flows": "flows.parquet",
    "trials": "trials.parquet",
    "series": "series.parquet",
}


def catalog_dir(root: str | os.PathLike[str] | None = None) -> Path:
    return Path(root) if root is not None else default_results_dir()


def _new_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def _flow_rows(run_id: str, tags: Mapping[str, str], r: Result) -> list[dict[str, Any]]:
    ts = r.timeseries
    qdelay: dict[tuple[int, str], float] = {}
    if len(ts) and "srtt_ms" in ts:
        s = ts[ts["srtt_ms"] > 0].groupby(["trial", "flow"])["srtt_ms"].mean()
        qdelay = {(int(k[0]), str(k[1])): float(v) for k, v in s.items()}
    rows = []
    for trial, (cfg, raw) in enumerate(zip(r.configs, r.raw, strict=True)):
        end_ns = raw.get("end_ns") or cfg["duration_ns"]
        by_name = {f["name"]: f for f in raw.get("flows", [])}
        for f, fc in zip(r.scenario.flows, cfg["flows"], strict=True):
            t = results._flow_trial(fc, by_name[fc["name"]], end_ns)
            base = f.rtt_ns / 1e6
            srtt = qdelay.get((trial, f.name))
            rows.append(
                {
                    "run_id": run_id,
                    **tags,
                    "trial": trial,
                    "seed": cfg["seed"],
                    "flow": f.name,
                    "group": f.group,
                    "kind": f.kind,
                    "cca": f.cca["name"] if f.cca else None,
                    "stack": f.sender_stack,
                    "goodput_bps": t["goodput_bps"],
                    "bytes_delivered": t["bytes_delivered"],
                    **{c: t[c] for c in results.COUNTERS},
                    "loss_rate": t["loss_num"] / t["loss_den"] if t["loss_den"] else 0.0,
                    "base_rtt_ms": base,
                    "queueing_delay_ms": (srtt - base) if srtt is not None else math.nan,
                }
            )
    return rows


def _trial_rows(run_id: str, tags: Mapping[str, str], r: Result) -> list[dict[str, Any]]:
    s = r.summary
    fair = [g for g, b in s["groups"].items() if b["kind"] == "tcp"] or list(s["groups"])
    secs = getattr(r, "trial_seconds", None)
    rows = []
    for trial in range(len(r.raw)):
        gp = [s["groups"][g]["goodput_bps_trials"][trial] for g in fair]
        j = results.jain_index(gp)
        rows.append(
            {
                "run_id": run_id,
                **tags,
                "trial": trial,
                "seed": r.seeds[trial],
                "aggregate_goodput_bps": s["aggregate"]["goodput_bps_trials"][trial],
                "jain": j if j is not None else math.nan,
                # engine seconds of the trial (campaign planning); NaN where not measured
                "engine_seconds": secs[trial] if secs else math.nan,
            }
        )
    return rows


class RunRecord(dict):
    """A run's provenance (run.json) as a dict, with the run's directory in ``.dir``."""

    dir: Path


def record(
    kind: str,
    entries: Sequence[tuple[Mapping[str, str], Result]],
    *,
    root: str | os.PathLike[str] | None = None,
    file: str = "",
    name: str = "",
    overrides: Sequence[str] = (),
    executor: str = "local",
    wall_seconds: float = 0.0,
    out: str | os.PathLike[str] | None = None,
    reused_trials: int = 0,
    series: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> RunRecord:
    """Record a run (*entries*: per point its tags, e.g. ``{"point": "rtt=50ms"}``, and result)."""
    from . import __version__

    base = catalog_dir(root)
    run_id = _new_id()
    engines = sorted({r.scenario.engine for _, r in entries})
    doc = RunRecord(
        run_id=run_id,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        created_ns=time.time_ns(),
        kind=kind,
        name=name or (entries[0][1].scenario.name if entries else ""),
        file=str(file),
        overrides=list(overrides),
        points=[dict(t) for t, _ in entries],
        seeds=[r.seeds for _, r in entries],
        trials=sum(len(r.raw) for _, r in entries),
        tcplab_version=__version__,
        build=build_id(engines[0]) if engines else "",
        engine=",".join(engines),
        executor=executor,
        host=platform.node(),
        wall_seconds=wall_seconds,
        out=str(Path(out).absolute()) if out is not None else "",
        reused_trials=reused_trials,
        **(dict(extra) if extra else {}),
    )
    flows = [row for tags, r in entries for row in _flow_rows(run_id, tags, r)]
    trials = [row for tags, r in entries for row in _trial_rows(run_id, tags, r)]

    def fill(d: Path) -> None:
        (d / "run.json").write_text(json.dumps(results._clean(doc), indent=2) + "\n", "utf-8")
        flat = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in doc.items()}
        pd.DataFrame([flat]).to_parquet(d / FILES["runs"], index=False)
        pd.DataFrame(flows).to_parquet(d / FILES["flows"], index=False)
        pd.DataFrame(trials).to_parquet(d / FILES["trials"], index=False)
        if series:
            frames = []
            for tags, r in entries:
                if len(r.timeseries):
                    f = r.timeseries.copy()
                    for k, v in reversed(list(tags.items())):
                        f.insert(0, k, v)
                    f.insert(0, "run_id", run_id)
                    frames.append(f)
            if frames:
                pd.concat(frames, ignore_index=True).to_parquet(d / FILES["series"], index=False)

    doc.dir = results.write_atomic(base / "runs" / run_id, fill)
    _refresh_duckdb(base)
    return doc


def _view_sql(base: Path) -> list[str]:
    out = []
    for table, fname in FILES.items():
        files = sorted((base / "runs").glob(f"*/{fname}"))
        if files:
            glob = str(base / "runs" / "*" / fname).replace("'", "''")
            out.append(
                f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM "
                f"read_parquet('{glob}', union_by_name = true)"
            )
    return out


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:  # pragma: no cover - a dependency of tcplab
        raise UserError("the results catalog needs DuckDB: pip install duckdb") from None
    return duckdb


def _refresh_duckdb(base: Path) -> None:
    """(Re)write catalog.duckdb's views; skipped if another process holds the database."""
    duckdb = _duckdb()
    try:
        con = duckdb.connect(str(base / "catalog.duckdb"))
    except duckdb.Error:
        return  # locked by another tcplab; `tcplab runs query` builds its views in memory anyway
    try:
        for sql in _view_sql(base):
            con.execute(sql)
    finally:
        con.close()


def connect(root: str | os.PathLike[str] | None = None) -> Any:
    """An in-memory DuckDB connection with the views runs, flows, trials, series."""
    base = catalog_dir(root)
    con = _duckdb().connect(":memory:")
    for sql in _view_sql(base):
        con.execute(sql)
    return con


def list_runs(root: str | os.PathLike[str] | None = None) -> list[RunRecord]:
    """Every recorded run, oldest first."""
    base = catalog_dir(root) / "runs"
    out = []
    for d in sorted(base.glob("*/run.json")):
        doc = RunRecord(json.loads(d.read_text("utf-8")))
        doc.dir = d.parent
        out.append(doc)
    out.sort(key=lambda r: (r.get("created_ns", 0), r["run_id"]))
    return out


def find_run(ref: str, root: str | os.PathLike[str] | None = None) -> RunRecord:
    """The run *ref* names: an id, a unique prefix, ``latest``/``latest~N``, or its output dir."""
    runs = list_runs(root)
    where = catalog_dir(root)
    if not runs:
        raise UserError(f"no runs recorded in {where} (run `tcplab run` first, or --results-dir)")
    if ref == "latest" or ref.startswith("latest~"):
        try:
            back = int(ref.split("~", 1)[1]) if "~" in ref else 0
        except ValueError:
            raise UserError(f"run {ref!r}: write latest~N with N a number") from None
        if back >= len(runs) or back < 0:
            raise UserError(f"run {ref!r}: only {len(runs)} run(s) recorded in {where}")
        return runs[-1 - back]
    exact = [r for r in runs if r["run_id"] == ref]
    if exact:
        return exact[0]
    p = Path(ref)
    if p.exists():
        ap = str(p.absolute())
        by_out = [r for r in runs if r.get("out") == ap]
        if by_out:
            return by_out[-1]
    pref = [r for r in runs if r["run_id"].startswith(ref)]
    if len(pref) == 1:
        return pref[0]
    if len(pref) > 1:
        raise UserError(
            f"run {ref!r} is ambiguous: {', '.join(r['run_id'] for r in pref[:5])}; "
            "give more of the id"
        )
    raise UserError(f"no run {ref!r} in {where} (see `tcplab runs list`)")


def load_run(
    ref: str, root: str | os.PathLike[str] | None = None
) -> tuple[RunRecord, pd.DataFrame, pd.DataFrame]:
    """A run's record, its flows frame and its trials frame."""
    run = find_run(ref, root)
    return (
        run,
        pd.read_parquet(run.dir / FILES["flows"]),
        pd.read_parquet(run.dir / FILES["trials"]),
    )


# CLI ------------------------------------------------------------------------------------------


def add_parsers(sub: Any) -> None:
    rs = sub.add_parser("runs", help="the results catalog: list, show and query recorded runs")
    rs.add_argument(
        "--results-dir",
        metavar="DIR",
        help="results directory (default $TCPLAB_RESULTS or ~/.local/share/tcplab)",
    )
    rsub = rs.add_subparsers(dest="runs_command", required=True)
    rsub.add_parser("list", help="one line per recorded run, newest last")
    sh = rsub.add_parser("show", help="a run's provenance and per-flow summary")
    sh.add_argument(
        "run", metavar="RUN", help="run id, unique prefix, latest[~N] or output directory"
    )
    q = rsub.add_parser("query", help="SQL (DuckDB) over the views runs, flows, trials, series")
    q.add_argument("sql", metavar="SQL")
    q.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    rs.set_defaults(func=cli_runs)


def cli_runs(args: Any) -> int:
    root = args.results_dir
    if args.runs_command == "list":
        runs = list_runs(root)
        if not runs:
            print(f"no runs recorded in {catalog_dir(root)}")
            return 0
        for r in runs:
            print(
                f"{r['run_id']}  {r['kind']:<9} {r['name'][:28]:<28} {r['trials']:>6} trials  "
                f"{r['engine']:<6} {r['executor']:<5} {r['wall_seconds']:8.1f}s  {r['out']}"
            )
        return 0
    if args.runs_command == "show":
        run, flows, _ = load_run(args.run, root)
        for k, v in run.items():
            if k in ("points", "seeds"):
                continue
            print(f"{k}: {v}")
        print(f"points: {len(run['points'])}")
        keys = [c for c in ("study", "experiment", "point") if c in flows.columns]
        cols = ["goodput_bps", "retransmits", "timeouts", "queueing_delay_ms"]
        g = flows.groupby([*keys, "flow"], sort=False)[cols].mean().reset_index()
        g["goodput_bps"] = g["goodput_bps"] / 1e6
        g = g.rename(columns={"goodput_bps": "goodput_mbps"})
        with pd.option_context("display.max_rows", 200, "display.width", 160):
            print(g.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        return 0
    con = connect(root)
    try:
        df = con.execute(args.sql).df()
    except Exception as e:  # duckdb.Error subclasses
        raise UserError(f"query failed: {e}") from None
    if args.csv:
        print(df.to_csv(index=False), end="")
    else:
        with pd.option_context("display.max_rows", 500, "display.width", 200):
            print(df.to_string(index=False))
    return 0
