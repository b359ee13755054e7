"""Tables of an experiment, published-vs-ours comparisons and checks of published observations.

* :func:`build_table`: one row per sweep point selected by the table's ``where``, keyed by the
  table's ``keys`` (sweep dimensions, as columns named like them: ``stack``, ``cca``, ``rtt_ms``),
  with one column per (metric, statistic over trials).
* :func:`compare`: for a ``[[report.published]]`` table, every published cell next to ours with the
  difference (ours − published) and the relative difference; a cell *agrees* when
  ``|ours − published| ≤ tolerance · |published|``, or ``≤ abs_tolerance`` for columns given one
  (bounded indices such as Jain's must be). Orderings: for each ``order`` column, do the
  rows rank the same (Kendall's τ between the rankings; exact agreement when every pair is in the
  same order), optionally within groups of a key (``within``); for each ``pairs`` entry, does the
  same column win in each row (which client, stack or algorithm does better).
* :func:`check`: a ``[[report.check]]``, a published observation stated as a test on our table.

Counting rules (issue "agreement report"), so that no number is counted twice or for free:

* A published row that is the exact mirror of an earlier one (a symmetric client1/client2 matrix
  published in full, per the table's ``mirror``) is the same measurement: it is compared once.
* A pair is scored only when it is a real comparison: rows whose two sides are the same
  configuration (XP against XP) are not scored, and neither are ties, pairs whose published values
  differ by less than the published spread (``spread``) or, where none is published, by less
  than ``tie`` (5 %) of the larger one.
* NaN fails: a row we have but whose value is NaN fails the cell, the ranking, the pair or the
  check, and the detail says so. A row we do not have at all (a ``--quick`` subset) is "not
  evaluated" and is never counted as agreement.

All functions work on plain pandas DataFrames, so they are tested on synthetic inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from . import metrics

__all__ = ["CheckResult", "Comparison", "build_table", "check", "compare", "kendall_tau"]


def build_table(
    table: Mapping[str, Any],
    metric_specs: Mapping[str, Mapping[str, Any]],
    points: Sequence[tuple[Mapping[str, str], Any]],
    trace_cache: dict | None = None,
) -> pd.DataFrame:
    """Our table: *points* are (coordinates, Result) pairs in sweep order."""
    keys = list(table["keys"])
    where = {k: str(v) for k, v in table.get("where", {}).items()}
    rows = []
    seen: set[tuple[str, ...]] = set()
    for coords, result in points:
        if any(coords.get(k) != v for k, v in where.items()):
            continue
        key = tuple(coords.get(k, "") for k in keys)
        if key in seen:
            raise ValueError(
                f"table {table.get('suffix') or '(main)'}: keys {keys} do not identify a point "
                f"({dict(zip(keys, key, strict=True))} occurs twice); add a key or a 'where'"
            )
        seen.add(key)
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        cache: dict[str, list[float]] = {}
        for col in table["columns"]:
            m = col["metric"]
            if m not in cache:
                cache[m] = metrics.evaluate(result, metric_specs[m], trace_cache)
            row[col["name"]] = metrics.statistic(cache[m], col["stat"])
        row["trials"] = len(cache[next(iter(cache))]) if cache else 0
        rows.append(row)
    if "mirror" in table:
        rows = _mirror(rows, table["mirror"])
    cols = keys + [c["name"] for c in table["columns"]] + ["trials"]
    return pd.DataFrame(rows, columns=cols)


def _mirror(rows: list[dict[str, Any]], spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Add the swapped row (keys a, b exchanged, paired columns exchanged) of every row whose
    swapped keys are absent: a symmetric pair experiment (client 1 / client 2) run once."""
    ka, kb = spec["keys"]
    have = {(r[ka], r[kb]) for r in rows}
    out = list(rows)
    for r in rows:
        if r[ka] == r[kb] or (r[kb], r[ka]) in have:
            continue
        m = dict(r)
        m[ka], m[kb] = r[kb], r[ka]
        for ca, cb in spec.get("columns", []):
            m[ca], m[cb] = r[cb], r[ca]
        out.append(m)
        have.add((m[ka], m[kb]))
    return out


# ---------------------------------------------------------------------------------------------
# Published vs ours


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's τ-a between two equally long sequences (pairs tied in either count 0)."""
    n = len(a)
    if n < 2:
        return math.nan
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            x = (a[i] > a[j]) - (a[i] < a[j])
            y = (b[i] > b[j]) - (b[i] < b[j])
            s += x * y
    return s / (n * (n - 1) / 2)


@dataclass
class OrderResult:
    column: str
    within: str | None
    group: str  #: the value of the ``within`` key ('' for the whole table)
    published: list[str]  #: row labels, best first
    ours: list[str]
    tau: float
    agree: bool


@dataclass
class PairResult:
    row: str
    a: str
    b: str
    published: str  #: column that is larger ('=' when equal)
    ours: str
    agree: bool | None  #: None: not scored (see ``why``)
    why: str = ""  #: why it is not scored, or why it fails (NaN)


@dataclass
class Comparison:
    """A published table next to ours."""

    table: str
    source: str
    keys: list[str]
    cells: pd.DataFrame  #: one row per (row, column): keys, column, published, ours, diff, ...
    orders: list[OrderResult] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    tolerance: float = 0.2
    note: str = ""
    role: str = "independent"  #: role of the cells: independent | fitted | input
    knob: list[str] = field(default_factory=list)  #: the fitted knobs, for role 'fitted'
    order_role: str = "independent"  #: role of the rankings
    pairs_role: str = "independent"  #: role of the pairs
    abs_tolerance: dict[str, float] = field(default_factory=dict)
    mirrored_rows: int = 0  #: published rows skipped as exact mirrors of earlier ones

    @property
    def cells_agree(self) -> tuple[int, int]:
        ok = self.cells["agree"].fillna(False).astype(bool)
        return int(ok.sum()), len(self.cells)

    @property
    def orders_agree(self) -> tuple[int, int]:
        """(agreeing, scored) over rankings and scored pairs."""
        items = [o.agree for o in self.orders] + [
            p.agree for p in self.pairs if p.agree is not None
        ]
        return sum(items), len(items)

    def agreement_by_role(self) -> dict[str, dict[str, int]]:
        """Cells and orderings (rankings and scored pairs) counted under each part's role."""
        out: dict[str, dict[str, int]] = {}

        def add(role: str, key: str, a: int, n: int) -> None:
            d = out.setdefault(role, {"cells_agree": 0, "cells": 0, "orders_agree": 0, "orders": 0})
            d[f"{key}_agree"] += a
            d[key] += n

        add(self.role, "cells", *self.cells_agree)
        add(self.order_role, "orders", sum(o.agree for o in self.orders), len(self.orders))
        scored = [bool(p.agree) for p in self.pairs if p.agree is not None]
        add(self.pairs_role, "orders", sum(scored), len(scored))
        return out

    @property
    def pairs_not_scored(self) -> int:
        return sum(p.agree is None for p in self.pairs)


def _label(keys: Sequence[str], row: Mapping[str, Any]) -> str:
    return " / ".join(str(row[k]) for k in keys)


def compare(published: Mapping[str, Any], ours: pd.DataFrame) -> Comparison:
    """Compare a ``[[report.published]]`` spec (with its rows) with our table *ours*."""
    keys = list(published["keys"])
    cols = list(published["columns"])
    tol = float(published.get("tolerance", 0.2))
    abs_tol = {k: float(v) for k, v in (published.get("abs_tolerance") or {}).items()}
    rows, mirrored = _unmirrored(published["rows"], keys, cols, published.get("mirror"))
    pub = pd.DataFrame([dict(zip(keys + cols, r, strict=True)) for r in rows], columns=keys + cols)
    for k in keys:
        pub[k] = pub[k].astype(str)
    ours = ours.copy()
    for k in keys:
        if k in ours.columns:
            ours[k] = ours[k].astype(str)
    ours["__have"] = True
    merged = pub.merge(ours, on=keys, how="left", suffixes=("__pub", "__ours"))
    merged["__have"] = merged["__have"].eq(True)
    cells = []
    for _, row in merged.iterrows():
        for c in cols:
            p = float(row[f"{c}__pub"]) if f"{c}__pub" in row else float(row[c])
            o_key = f"{c}__ours" if f"{c}__ours" in row else None
            have = bool(row.get("__have", False))
            o = float(row[o_key]) if o_key is not None and pd.notna(row[o_key]) else math.nan
            diff = o - p
            rel = diff / abs(p) if p else math.nan
            # relative tolerance (absolute for a published zero), or the column's absolute one
            bound = abs_tol[c] if c in abs_tol else tol * (abs(p) if p else 1.0)
            # no row of ours: not evaluated (None); a row whose value is NaN: fails
            agree = None if not have else (False if math.isnan(o) else bool(abs(diff) <= bound))
            cells.append(
                {
                    **{k: row[k] for k in keys},
                    "column": c,
                    "published": p,
                    "ours": o,
                    "diff": diff,
                    "rel_diff": rel,
                    "agree": agree,
                }
            )
    cells_df = pd.DataFrame(
        cells, columns=[*keys, "column", "published", "ours", "diff", "rel_diff", "agree"]
    )
    comp = Comparison(
        table=published.get("table", ""),
        source=published.get("source", ""),
        keys=keys,
        cells=cells_df,
        tolerance=tol,
        note=published.get("note", ""),
        role=_part_role(published, "cells"),
        knob=list(published.get("knob", [])),
        order_role=_part_role(published, "order"),
        pairs_role=_part_role(published, "pairs"),
        abs_tolerance=abs_tol,
        mirrored_rows=mirrored,
    )
    for o in published.get("order", []):
        comp.orders.extend(_orders(pub, ours, keys, o["column"], o.get("within")))
    mirror_keys = (published.get("mirror") or {}).get("keys")
    tie = float(published.get("tie", 0.05))
    spread = published.get("spread") or {}
    for a, b in published.get("pairs", []):
        for _, row in merged.iterrows():
            comp.pairs.append(_pair(row, keys, a, b, mirror_keys, tie, spread))
    return comp


def _part_role(published: Mapping[str, Any], part: str) -> str:
    return (published.get("role_of") or {}).get(part, published.get("role", "independent"))


def _unmirrored(
    rows: Sequence[Sequence[Any]],
    keys: Sequence[str],
    cols: Sequence[str],
    mirror: Mapping[str, Any] | None,
) -> tuple[list[Sequence[Any]], int]:
    """*rows* without those that exactly mirror an earlier row (keys a, b swapped and the paired
    columns swapped with equal values), and how many were dropped."""
    if not mirror or not all(k in keys for k in mirror.get("keys", [])):
        return list(rows), 0
    ia, ib = (list(keys).index(k) for k in mirror["keys"])
    n = len(keys)
    swap = {}
    for ca, cb in mirror.get("columns", []):
        if ca in cols and cb in cols:
            swap[n + cols.index(ca)] = n + cols.index(cb)
            swap[n + cols.index(cb)] = n + cols.index(ca)
    kept: list[Sequence[Any]] = []
    dropped = 0
    for r in rows:
        mirrored = False
        if r[ia] != r[ib]:
            for k in kept:
                if str(k[ia]) != str(r[ib]) or str(k[ib]) != str(r[ia]):
                    continue
                if any(str(k[i]) != str(r[i]) for i in range(n) if i not in (ia, ib)):
                    continue
                if all(r[i] == k[swap.get(i, i)] for i in range(n, len(r))):
                    mirrored = True
                    break
        if mirrored:
            dropped += 1
        else:
            kept.append(r)
    return kept, dropped


def _pair(
    row: Mapping[str, Any],
    keys: Sequence[str],
    a: str,
    b: str,
    mirror_keys: Sequence[str] | None,
    tie: float,
    spread: Mapping[str, str],
) -> PairResult:
    """Which of columns *a*, *b* is larger in one row, published vs ours (see the module doc for
    which pairs are scored)."""
    label = _label(keys, row)
    pa, pb = float(row[f"{a}__pub"]), float(row[f"{b}__pub"])
    pw = a if pa > pb else b if pb > pa else "="
    oa, ob = row.get(f"{a}__ours"), row.get(f"{b}__ours")
    have = bool(row.get("__have", False))
    ow = "–"
    if have and not (oa is None or ob is None or pd.isna(oa) or pd.isna(ob)):
        ow = a if oa > ob else b if ob > oa else "="
    if mirror_keys and str(row[mirror_keys[0]]) == str(row[mirror_keys[1]]):
        return PairResult(label, a, b, pw, ow, None, "same configuration on both sides")
    if a in spread and b in spread:
        margin = max(float(row[f"{spread[a]}__pub"]), float(row[f"{spread[b]}__pub"]))
        if abs(pa - pb) < margin:
            return PairResult(label, a, b, pw, ow, None, "a tie within the published spread")
    elif abs(pa - pb) < tie * max(abs(pa), abs(pb)):
        return PairResult(label, a, b, pw, ow, None, f"a tie (published within {tie:.0%})")
    if not have:
        return PairResult(label, a, b, pw, ow, None, "no row of ours (not run)")
    if ow == "–":
        return PairResult(label, a, b, pw, ow, False, "ours is NaN")
    return PairResult(label, a, b, pw, ow, pw == ow)


def _orders(
    pub: pd.DataFrame, ours: pd.DataFrame, keys: list[str], column: str, within: str | None
) -> list[OrderResult]:
    out = []
    groups = [("", pub)] if not within else list(pub.groupby(within, sort=False))
    label_keys = [k for k in keys if k != within]
    for gval, gpub in groups:
        g = gpub.merge(ours[[*keys, column]], on=keys, how="inner", suffixes=("__pub", "__ours"))
        if len(g) < 2:
            continue
        labels = [_label(label_keys, r) for _, r in g.iterrows()]
        p = g[f"{column}__pub"].astype(float).tolist()
        o = g[f"{column}__ours"].astype(float).tolist()
        if any(math.isnan(x) for x in o):  # a NaN has no rank: the ranking cannot agree
            rank_p = [labels[i] for i in sorted(range(len(p)), key=lambda i: -p[i])]
            nan = [labels[i] for i in range(len(o)) if math.isnan(o[i])]
            out.append(
                OrderResult(
                    column, within, str(gval), rank_p, ["NaN: " + ", ".join(nan)], 0.0, False
                )
            )
            continue
        tau = kendall_tau(p, o)
        rank_p = [labels[i] for i in sorted(range(len(p)), key=lambda i: -p[i])]
        rank_o = [labels[i] for i in sorted(range(len(o)), key=lambda i: -o[i])]
        out.append(OrderResult(column, within, str(gval), rank_p, rank_o, tau, rank_p == rank_o))
    return out


# ---------------------------------------------------------------------------------------------
# Checks of published observations


@dataclass
class CheckResult:
    claim: str
    kind: str
    passed: bool | None  #: None when it could not be evaluated
    detail: str
    source: str = ""
    note: str = ""
    role: str = "independent"  #: independent | fitted | input (tcplab.reproduce.spec)
    knob: list[str] = field(default_factory=list)  #: for 'fitted': the knobs chosen to match it
    input: str = ""  #: for 'input': the configured value the check restates


def _rows(df: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    if not where:
        return df
    mask = pd.Series(True, index=df.index)
    for k, v in where.items():
        vals = [str(x) for x in v] if isinstance(v, list) else [str(v)]
        mask &= df[k].astype(str).isin(vals)
    return df[mask]


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


def check(spec: Mapping[str, Any], table: pd.DataFrame, keys: Sequence[str]) -> CheckResult:
    """Evaluate one ``[[report.check]]`` on our *table* (whose key columns are *keys*).

    ``key`` names the key column whose values ``expect``/``a``/``b`` refer to (default: the first
    key); values are averaged over the other keys' rows unless ``where`` selects them.
    """
    kind = spec["kind"]
    claim, src, note = spec["claim"], spec.get("source", ""), spec.get("note", "")

    def result(ok: bool | None, detail: str) -> CheckResult:
        role = spec.get("role", "independent")
        return CheckResult(
            claim,
            kind,
            ok,
            detail,
            src,
            note,
            role,
            list(spec.get("knob", [])),
            spec.get("input", ""),
        )

    if kind == "not_modelled":  # an observation the engine cannot show; the note says why
        return result(None, "not evaluated: the model lacks what this needs (see the note)")
    col = spec["column"]
    key = spec.get("key", keys[0] if keys else None)
    df = _rows(table, spec.get("where"))

    if df.empty:
        return result(None, "not evaluated: no rows of ours (not run in this mode)")
    used = [col] + ([spec["other"]] if kind == "below" else [])
    nan = df[df[used].isna().any(axis=1)]
    if not nan.empty:  # NaN fails every check, and says where
        labels = "; ".join(_label(keys, r) or "(the row)" for _, r in nan.iterrows())
        return result(False, f"fails: {'/'.join(used)} is NaN in {len(nan)} row(s): {labels}")
    by = df.groupby(key, sort=False)[col].mean() if key else df[col]
    if kind in ("top", "bottom"):
        best = by.idxmax() if kind == "top" else by.idxmin()
        exp = [str(x) for x in spec.get("expect", [])]
        return result(
            str(best) in exp,
            f"{'highest' if kind == 'top' else 'lowest'} {col}: {best} ({_fmt(by[best])}); "
            f"expected one of {', '.join(exp)}",
        )
    if kind == "only_above":
        thr = float(spec["threshold"])
        above = sorted(str(k) for k, v in by.items() if v > thr)
        exp = sorted(str(x) for x in spec.get("expect", []))
        return result(
            above == exp,
            f"{col} > {_fmt(thr)}: {', '.join(above) or 'none'}; expected {', '.join(exp)}",
        )
    if kind == "order":
        exp = [str(x) for x in spec.get("expect", [])]
        sub = by[[k for k in by.index if str(k) in exp]]
        got = [str(k) for k in sub.sort_values(ascending=False).index]
        vals = ", ".join(f"{k} {_fmt(by[k])}" for k in sub.sort_values(ascending=False).index)
        return result(got == exp, f"ours: {vals}; expected order {' > '.join(exp)}")
    if kind == "range":
        lo = float(spec.get("lo", -math.inf))
        hi = float(spec.get("hi", math.inf))
        vals = df[col].astype(float)
        bad = df[(vals < lo) | (vals > hi)]
        labels = [f"{_label(keys, r)}: {_fmt(r[col])}" for _, r in bad.iterrows()]
        return result(
            bad.empty,
            f"{col} in [{_fmt(lo)}, {_fmt(hi)}]: "
            + (f"{len(df)} of {len(df)} rows" if bad.empty else "outside: " + "; ".join(labels)),
        )
    if kind == "ratio":
        lo = float(spec.get("lo", -math.inf))
        hi = float(spec.get("hi", math.inf))
        along = spec.get("along")
        a, b = str(spec["a"]), str(spec["b"])
        parts = []
        ok: bool | None = True
        groups = [("", df)] if not along else list(df.groupby(along, sort=False))
        for g, sub in groups:
            va = sub[sub[key].astype(str) == a][col].mean()
            vb = sub[sub[key].astype(str) == b][col].mean()
            r = va / vb if vb else math.nan
            if math.isnan(r):
                ok = None
            elif ok is not None:
                ok = ok and bool(lo <= r <= hi)
            parts.append(f"{g + ': ' if g else ''}{_fmt(r)}")
        return result(ok, f"{a}/{b} {col} ratio in [{_fmt(lo)}, {_fmt(hi)}]: " + ", ".join(parts))
    if kind in ("increasing", "decreasing"):
        along = spec.get("along", key)
        groups = (
            [("", df)] if not spec.get("key") or along == key else list(df.groupby(key, sort=False))
        )
        ok: bool | None = True
        parts = []
        for g, sub in groups:
            seq = sub.sort_values(along, key=lambda s: pd.to_numeric(s, errors="coerce"))[col]
            if seq.notna().sum() < 2:  # a trend needs two points (e.g. a --quick subset)
                ok = None
            d = seq.diff().dropna()
            good = bool((d >= 0).all() if kind == "increasing" else (d <= 0).all())
            if ok is not None:
                ok = ok and good
            parts.append(f"{g + ': ' if g else ''}" + " → ".join(_fmt(x) for x in seq.tolist()))
        return result(ok, f"{col} along {along}: " + "; ".join(parts))
    if kind == "below":
        other = spec["other"]
        factor = float(spec.get("factor", 1.0))
        bad = df[~(df[col].astype(float) < factor * df[other].astype(float))]
        labels = [
            f"{_label(keys, r)}: {_fmt(r[col])} vs {_fmt(factor * r[other])}"
            for _, r in bad.iterrows()
        ]
        return result(
            bad.empty,
            f"{col} < {factor:g} × {other}: "
            + (f"all {len(df)} rows" if bad.empty else "not in " + "; ".join(labels)),
        )
    if kind == "less":
        a, b = str(spec["a"]), str(spec["b"])
        va = by.get(a, math.nan)
        vb = by.get(b, math.nan)
        return result(
            bool(va < vb) if not (math.isnan(va) or math.isnan(vb)) else None,
            f"{a} {_fmt(va)} < {b} {_fmt(vb)}",
        )
    raise ValueError(f"unknown check kind {kind!r}")
