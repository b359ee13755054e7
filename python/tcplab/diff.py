"""``tcplab diff RUN_A RUN_B``: what changed between two recorded runs, and is it significant?

Rows are matched by point (and study/experiment for ``reproduce`` runs) and flow name; each
(point, flow) and each point's aggregate gets, per metric, the mean over trials in A and in B,
the relative change, and Welch's two-sided t-test over the trials (unequal variances; p-value from
Student's t distribution with the Welch–Satterthwaite degrees of freedom). A change is
*significant* when p < alpha (default 0.05) and it is a *regression* when it is significant, in
the metric's bad direction and larger than the threshold given with ``--fail-on METRIC=PCT``;
``tcplab diff`` then exits with status 1 — the run-to-run check a CCA developer puts in CI.
With one trial per side no test is possible: such rows are marked ``n<2`` and never significant.

Metrics (the per-trial values of runs/<RUN>/flows.parquet and trials.parquet, tcplab.runs):

===================  ===================================================  ==============
metric               per flow / aggregate                                  worse when
===================  ===================================================  ==============
goodput              goodput_bps / aggregate_goodput_bps                  lower
retransmits          retransmitted segments / sum over flows              higher
timeouts             RTOs / sum over flows                                higher
queueing_delay       mean srtt − base RTT (ms) / mean over TCP flows      higher
jain                 — / Jain's index over the TCP groups                  lower
===================  ===================================================  ==============
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from . import runs as runs_mod
from .errors import UserError

__all__ = ["METRICS", "diff_runs", "welch"]

#: metric → (flows column, aggregate column or how to aggregate, +1 if higher is better)
METRICS: dict[str, tuple[str | None, str, int]] = {
    "goodput": ("goodput_bps", "aggregate_goodput_bps", +1),
    "retransmits": ("retransmits", "sum", -1),
    "timeouts": ("timeouts", "sum", -1),
    "queueing_delay": ("queueing_delay_ms", "mean", -1),
    "jain": (None, "jain", +1),
}


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with *df* degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betai(df / 2.0, 0.5, df / (df + t * t))


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float] | None:
    """Welch's t statistic and two-sided p-value, or None with fewer than 2 values a side."""
    a = [x for x in a if not math.isnan(x)]
    b = [x for x in b if not math.isnan(x)]
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    sa, sb = va / len(a), vb / len(b)
    if sa + sb == 0.0:
        return (0.0, 1.0) if ma == mb else (math.copysign(math.inf, mb - ma), 0.0)
    t = (mb - ma) / math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / ((sa * sa) / (len(a) - 1) + (sb * sb) / (len(b) - 1))
    return t, t_two_sided_p(t, df)


def _keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("study", "experiment", "point") if c in frame.columns]


def _aggregate(flows: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Per (point, trial): the aggregate value of every metric."""
    keys = _keys(trials)
    out = trials.copy()
    tcp = flows[flows["kind"] == "tcp"]
    g = flows.groupby([*keys, "trial"], dropna=False)
    for name, (col, how, _) in METRICS.items():
        if how == "sum" and col is not None:
            s = g[col].sum(min_count=1).rename(name)
            out = out.merge(s.reset_index(), on=[*keys, "trial"], how="left")
        elif how == "mean" and col is not None:
            s = tcp.groupby([*keys, "trial"], dropna=False)[col].mean().rename(name)
            out = out.merge(s.reset_index(), on=[*keys, "trial"], how="left")
        else:
            out[name] = out[how]
    return out


def diff_runs(
    ref_a: str,
    ref_b: str,
    *,
    root: Any = None,
    metrics: Sequence[str] = tuple(METRICS),
    alpha: float = 0.05,
    fail_on: dict[str, float] | None = None,
) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Compare two runs; returns (rows, regressions, {"a": run, "b": run})."""
    for m in [*metrics, *(fail_on or {})]:
        if m not in METRICS:
            raise UserError(f"unknown metric {m!r}; choose from {', '.join(METRICS)}")
    run_a, flows_a, trials_a = runs_mod.load_run(ref_a, root)
    run_b, flows_b, trials_b = runs_mod.load_run(ref_b, root)
    keys = _keys(flows_a)
    if keys != _keys(flows_b):
        raise UserError(
            f"runs {run_a['run_id']} and {run_b['run_id']} are of different kinds ({run_a['kind']} "
            f"vs {run_b['kind']}); diff compares runs of the same scenario, sweep or study"
        )
    rows: list[dict[str, Any]] = []

    def compare(
        where: dict[str, Any], flow: str, metric: str, va: list[float], vb: list[float]
    ) -> None:
        ma = sum(va) / len(va) if va else math.nan
        mb = sum(vb) / len(vb) if vb else math.nan
        if math.isnan(ma) or math.isnan(mb):
            rel = math.nan
        elif ma == 0.0:  # from nothing to something (e.g. 0 → 420 retransmissions): unbounded
            rel = 0.0 if mb == 0.0 else math.copysign(math.inf, mb)
        else:
            rel = (mb - ma) / abs(ma)
        w = welch(va, vb)
        sign = METRICS[metric][2]
        worse = (mb - ma) * sign < 0
        rows.append(
            {
                **where,
                "flow": flow,
                "metric": metric,
                "n_a": len(va),
                "n_b": len(vb),
                "mean_a": ma,
                "mean_b": mb,
                "change": rel,
                "p_value": w[1] if w else math.nan,
                "significant": bool(w is not None and w[1] < alpha),
                "worse": bool(worse and mb != ma),
            }
        )

    ga = (
        flows_a.groupby([*keys, "flow"], sort=False)
        if keys
        else flows_a.groupby(["flow"], sort=False)
    )
    fb = {
        k: v
        for k, v in (
            flows_b.groupby([*keys, "flow"], sort=False)
            if keys
            else flows_b.groupby(["flow"], sort=False)
        )
    }
    for k, part_a in ga:
        k = k if isinstance(k, tuple) else (k,)
        part_b = fb.get(k)
        if part_b is None:
            continue
        where = dict(zip(keys, k[:-1], strict=True))
        for m in metrics:
            col = METRICS[m][0]
            if col is None:
                continue
            va = [float(x) for x in part_a[col].dropna()]
            vb = [float(x) for x in part_b[col].dropna()]
            if va or vb:
                compare(where, str(k[-1]), m, va, vb)
    agg_a, agg_b = _aggregate(flows_a, trials_a), _aggregate(flows_b, trials_b)
    gb = {k: v for k, v in (agg_b.groupby(keys, sort=False) if keys else [((), agg_b)])}
    for k, part_a in agg_a.groupby(keys, sort=False) if keys else [((), agg_a)]:
        k = k if isinstance(k, tuple) else (k,)
        part_b = gb.get(k if keys else ())
        if part_b is None:
            continue
        where = dict(zip(keys, k, strict=True))
        for m in metrics:
            va = [float(x) for x in part_a[m].dropna()]
            vb = [float(x) for x in part_b[m].dropna()]
            if va or vb:
                compare(where, "(aggregate)", m, va, vb)
    if not rows:
        raise UserError(
            f"runs {run_a['run_id']} and {run_b['run_id']} have no point and flow in common"
        )
    df = pd.DataFrame(rows)
    regressions = []
    for m, pct in (fail_on or {}).items():
        bad = df[
            (df["metric"] == m) & df["significant"] & df["worse"] & (df["change"].abs() * 100 > pct)
        ]
        for _, r in bad.iterrows():
            where = " ".join(f"{k}={r[k]}" for k in keys)
            regressions.append(
                f"{where + ' ' if where else ''}{r['flow']}: {m} "
                f"{r['mean_a']:.6g} → {r['mean_b']:.6g} "
                f"({r['change'] * 100:+.1f} %, p = {r['p_value']:.3g}) exceeds {pct:g} %"
            )
    return df, regressions, {"a": run_a, "b": run_b}


def _parse_fail_on(items: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for it in items:
        name, sep, pct = it.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(pct.strip().rstrip("%"))
        except ValueError:
            raise UserError(
                f"--fail-on {it!r}: write METRIC=PERCENT, e.g. goodput=5% "
                f"(metrics: {', '.join(METRICS)})"
            ) from None
        if out[name.strip()] < 0:
            raise UserError(f"--fail-on {it!r}: the threshold must be ≥ 0 %")
    return out


def add_parser(sub: Any) -> None:
    d = sub.add_parser("diff", help="compare two recorded runs per flow, with a test over trials")
    d.add_argument(
        "run_a", metavar="RUN_A", help="baseline run (id, prefix, latest~N or output dir)"
    )
    d.add_argument("run_b", metavar="RUN_B", help="run to compare with the baseline")
    d.add_argument("--results-dir", metavar="DIR", help="results directory (see tcplab runs)")
    d.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help=f"metrics to show ({', '.join(METRICS)}; default all)",
    )
    d.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    d.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="METRIC=PCT",
        help="exit 1 if METRIC regresses significantly by more than PCT %% (e.g. goodput=5%%)",
    )
    d.add_argument("--all", action="store_true", help="show unchanged rows too")
    d.add_argument("--json", action="store_true", help="print JSON rows")
    d.set_defaults(func=cli_diff)


def cli_diff(args: Any) -> int:
    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha {args.alpha}: must be between 0 and 1")
    fail_on = _parse_fail_on(args.fail_on)
    metrics = args.metric or list(METRICS)
    df, regressions, meta = diff_runs(
        args.run_a,
        args.run_b,
        root=args.results_dir,
        metrics=metrics,
        alpha=args.alpha,
        fail_on=fail_on,
    )
    if args.json:
        print(
            json.dumps(
                {"rows": json.loads(df.to_json(orient="records")), "regressions": regressions},
                indent=2,
            )
        )
    else:
        a, b = meta["a"], meta["b"]
        print(
            f"A = {a['run_id']} ({a['name']}, {a['trials']} trials)   "
            f"B = {b['run_id']} ({b['name']}, {b['trials']} trials)"
        )
        shown = df if args.all else df[df["significant"]]
        if shown.empty:
            print(f"no significant change (alpha {args.alpha}) in {len(df)} comparisons")
        else:
            out = shown.copy()
            out["change"] = out["change"].map(
                lambda x: f"{x * 100:+.1f}%" if not math.isnan(x) else ""
            )
            out["p_value"] = out["p_value"].map(
                lambda x: f"{x:.3g}" if not math.isnan(x) else "n<2"
            )
            with pd.option_context("display.max_rows", 500, "display.width", 200):
                print(
                    out.drop(columns=["worse"]).to_string(
                        index=False, float_format=lambda x: f"{x:.4g}"
                    )
                )
            print(
                f"{int(df['significant'].sum())} of {len(df)} comparisons significant "
                f"(alpha {args.alpha})"
            )
        for r in regressions:
            print(f"REGRESSION {r}")
    return 1 if regressions else 0
