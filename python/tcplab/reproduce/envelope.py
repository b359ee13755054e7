"""Assumption envelopes: how far a study's unpublished parameters could move our answer.

A study scenario declares each parameter the paper does not publish once, in an ``[assume]``
table (docs/scenario-format.md, "Assumptions")::

    [assume.router_buffer]
    field = "path.queue"          # a dotted field as for --set (or a list, moved together)
    value = "16pkt"               # the value the scenario uses (checked: it must be)
    low = "8pkt"                  # the plausible range
    high = "64pkt"
    why = "Dummynet's default is 50 slots; the paper gives no buffer"
    fitted = "J3's five means"    # only if value was chosen by looking at a published number
    points = ["stack=linux"]      # optional: only these sweep points (labels) are moved

``points`` restricts an assumption to some points of the sweep (their labels): a property of one
of the swept stacks, such as the Linux sender's NIC offloads in a sweep over sender stacks. The
other points keep the scenario's values in every variant.

``tcplab reproduce --envelope`` runs, besides the scenario as it is, every experiment with each
assumption at its low and at its high end (one at a time, the others at their value), and, with
two or more assumptions, all at their low and all at their high ends together (the joint sample).
For every published cell the report gives our value, the envelope (the smallest and largest of our
values over these variants), the assumption that moves it most (largest |high − low| one at a
time), and whether the published number is *reachable*: within the cell's tolerance of the
envelope. A published number outside every plausible envelope points at a mechanism the model
lacks, not at an unknown parameter; the report says so. The envelope is spanned by the corners
only: a cell that is not monotone in an assumption may reach further inside the range. For each
published observation the report gives in how many variants it holds.

The ranges are not chosen by looking at published numbers; an assumption whose ``value`` was, says
``fitted`` (and the cells it was fitted to carry ``role = "fitted"`` in ``[report]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .. import sweep as sweep_mod
from ..errors import ScenarioError
from ..scenario.overrides import toml_literal
from . import core

__all__ = ["ASSUME_KEYS", "Assumption", "Variant", "envelope_rows", "parse_assumptions", "plan"]

ASSUME_KEYS = ("field", "value", "low", "high", "why", "source", "fitted", "points")


@dataclass(frozen=True)
class Assumption:
    name: str
    fields: tuple[str, ...]
    value: Any
    low: Any
    high: Any
    why: str
    source: str = ""
    fitted: str = ""
    #: Labels of the sweep points the assumption applies to; empty: every point.
    points: tuple[str, ...] = ()


@dataclass
class Variant:
    """One run of an experiment with some assumptions moved: ``{name: "low"|"high"}``."""

    label: str
    moved: dict[str, str]
    experiment: core.Experiment
    outcome: core.Outcome | None = None


@dataclass
class Envelope:
    """The variants of one experiment and what they give."""

    base: core.Experiment
    assumptions: list[Assumption]
    variants: list[Variant] = field(default_factory=list)


def parse_assumptions(doc: Mapping[str, Any], file: str) -> list[Assumption]:
    """The ``[assume]`` table of *doc* (structure only; :func:`plan` checks the values)."""
    raw = doc.get("assume")
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise ScenarioError(
            file,
            "assume",
            "must be a table of tables",
            value=raw,
            has_value=True,
            allowed="[assume.NAME] tables",
        )
    out = []
    for name, a in raw.items():
        path = f"assume.{name}"
        if not isinstance(a, Mapping):
            raise ScenarioError(
                file,
                path,
                "must be a table",
                value=a,
                has_value=True,
                allowed="field, value, low, high, why",
            )
        for k in a:
            if k not in ASSUME_KEYS:
                raise ScenarioError(
                    file, f"{path}.{k}", "unknown key", allowed="keys " + ", ".join(ASSUME_KEYS)
                )
        for k in ("field", "value", "low", "high", "why"):
            if k not in a:
                raise ScenarioError(
                    file,
                    f"{path}.{k}",
                    "missing (required)",
                    allowed="an assumption states field, value, low, high and why",
                )
        fields = a["field"]
        fields = (fields,) if isinstance(fields, str) else tuple(fields)
        if not fields or not all(isinstance(f, str) and f for f in fields):
            raise ScenarioError(
                file,
                f"{path}.field",
                "must be a dotted field or a list of them",
                value=a["field"],
                has_value=True,
            )
        for k in ("why", "source", "fitted"):
            if k in a and not isinstance(a[k], str):
                raise ScenarioError(
                    file, f"{path}.{k}", "must be a string", value=a[k], has_value=True
                )
        pts = a.get("points", ["*"])
        if not isinstance(pts, list) or not pts or not all(isinstance(x, str) and x for x in pts):
            raise ScenarioError(
                file,
                f"{path}.points",
                "must be a non-empty list of sweep point labels",
                value=pts,
                has_value=True,
            )
        if a["low"] == a["high"]:
            raise ScenarioError(
                file,
                f"{path}.high",
                "equals low: an assumption spans a range",
                value=a["high"],
                has_value=True,
            )
        out.append(
            Assumption(
                name=str(name),
                fields=fields,
                value=a["value"],
                low=a["low"],
                high=a["high"],
                why=a["why"],
                source=a.get("source", ""),
                fitted=a.get("fitted", ""),
                points=tuple(pts) if "points" in a else (),
            )
        )
    return out


def _overrides(
    assumptions: Sequence[Assumption], moved: Mapping[str, str], label: str | None = None
) -> list[str]:
    """The ``--set`` strings of *assumptions* (moved as *moved* says) for the sweep point
    *label*: an assumption restricted to other points (``points``) gives none there."""
    out = []
    for a in assumptions:
        if a.points and label not in a.points:
            continue
        v = {"low": a.low, "high": a.high}.get(moved.get(a.name, ""), a.value)
        out.extend(f"{f}={toml_literal(v)}" for f in a.fields)
    return out


def _load(
    exp: core.Experiment,
    assumptions: Sequence[Assumption],
    moved: Mapping[str, str],
    file: str,
) -> list[tuple[Any, Any]]:
    """The experiment's points with *assumptions* set (moved as *moved* says), each point with
    the overrides that apply to it (one load per distinct set of overrides)."""
    quick = exp.report.quick if exp.quick else {}
    keep = [p.label for p, _ in exp.points]
    by_label: dict[Any, Any] = {}
    groups: dict[tuple[str, ...], set[Any]] = {}
    for label in keep:
        groups.setdefault(tuple(_overrides(assumptions, moved, label)), set()).add(label)
    for extra, labels in groups.items():
        # Only this group's points: an override restricted to some points (``points``) may
        # be one the others do not accept (a parameter of one swept algorithm).
        loaded = sweep_mod.load_points(
            file,
            overrides=[*quick.get("set", []), *extra],
            trials=quick.get("trials") if exp.quick else None,
            only=labels,
        )
        for p, sc in loaded:
            if p.label in labels:
                by_label[p.label] = (p, sc)
    return [by_label[label] for label in keep if label in by_label]


def _with_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """*config* with every TCP knob table completed by the engine's defaults: a knob that is
    absent means its default, so setting it to the default (e.g. a receiver's ``rx_ring`` on a
    personality that leaves it unset) is not a different configuration."""
    from .. import _core

    defaults = {k["name"]: k["default"] for k in _core.tcp_knobs()}
    out = dict(config)
    for group in ("flows", "background"):
        items = []
        for item in config.get(group) or []:
            item = dict(item)
            for key in ("tcp", "receiver_tcp"):
                if isinstance(item.get(key), Mapping):
                    item[key] = {**defaults, **item[key]}
            items.append(item)
        if group in config:
            out[group] = items
    return out


def plan(experiments: Sequence[core.Experiment]) -> list[Envelope]:
    """The envelope variants of every experiment that declares assumptions (validated: each
    ``value`` must be what the scenario uses, and no assumed field may be a swept one)."""
    out = []
    for exp in experiments:
        file = str(exp.file)
        doc, _ = sweep_mod.read_document(exp.file)
        assumptions = parse_assumptions(doc, file)
        if not assumptions:
            continue
        dims = sweep_mod.dimensions(doc, file)
        swept = {f for d in dims for step in d.steps for f in step}
        for a in assumptions:
            for f in a.fields:
                if f in swept:
                    raise ScenarioError(
                        file,
                        f"assume.{a.name}.field",
                        "is a swept field; an assumption moves a field the sweep keeps fixed",
                        value=f,
                        has_value=True,
                    )
        # The declared value must be the scenario's: the configs with it set are the same.
        labels = {p.label for p, _ in sweep_mod.load_points(file)}
        for a in assumptions:
            unknown = [x for x in a.points if x not in labels]
            if unknown:
                raise ScenarioError(
                    file,
                    f"assume.{a.name}.points",
                    "names no sweep point",
                    value=unknown[0],
                    has_value=True,
                    allowed="labels of the sweep's points: " + ", ".join(map(str, sorted(labels))),
                )
        same = _load(exp, assumptions, {}, file)
        for (p, sc), (_, sc2) in zip(exp.points, same, strict=True):
            if _with_defaults(sc.config(sc.seed)) != _with_defaults(sc2.config(sc2.seed)):
                names = ", ".join(a.name for a in assumptions)
                raise ScenarioError(
                    file,
                    "assume",
                    f"a declared value differs from what the scenario uses (point "
                    f"{p.label or 'base'}; assumptions {names})",
                    allowed="write in each assume.NAME.value the value the scenario sets",
                )
        env = Envelope(exp, assumptions)
        moves: list[tuple[str, dict[str, str]]] = []
        for a in assumptions:
            moves.append((f"{a.name}=low", {a.name: "low"}))
            moves.append((f"{a.name}=high", {a.name: "high"}))
        if len(assumptions) >= 2:
            moves.append(("all low", {a.name: "low" for a in assumptions}))
            moves.append(("all high", {a.name: "high" for a in assumptions}))
        for label, moved in moves:
            pts = _load(exp, assumptions, moved, file)
            vexp = core.Experiment(exp.study, exp.file, exp.report, pts, exp.quick)
            env.variants.append(Variant(label, moved, vexp))
        out.append(env)
    return out


def _cell_key(df: pd.DataFrame, keys: Sequence[str]) -> list[tuple]:
    return [tuple(str(r[k]) for k in [*keys, "column"]) for _, r in df.iterrows()]


def _reachable(pub: float, lo: float, hi: float, tol_abs: float) -> bool | None:
    if any(math.isnan(x) for x in (pub, lo, hi)):
        return None
    return lo - tol_abs <= pub <= hi + tol_abs


def envelope_rows(
    env: Envelope, base: core.Outcome
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of ``envelope.csv`` (one per published cell) and ``envelope-checks.csv``."""
    rows: list[dict[str, Any]] = []
    names = [a.name for a in env.assumptions]
    for ci, c in enumerate(base.comparisons):
        keys = [k for k in c.keys if k in c.cells.columns]
        base_keys = _cell_key(c.cells, keys)
        by_variant: dict[str, dict[tuple, float]] = {}
        for v in env.variants:
            vc = (
                v.outcome.comparisons[ci] if v.outcome and ci < len(v.outcome.comparisons) else None
            )
            if vc is None:
                continue
            by_variant[v.label] = dict(
                zip(_cell_key(vc.cells, keys), vc.cells["ours"].astype(float), strict=True)
            )
        for (_, r), key in zip(c.cells.iterrows(), base_keys, strict=True):
            ours = float(r["ours"])
            vals = {lab: d.get(key, math.nan) for lab, d in by_variant.items()}
            allv = [x for x in [ours, *vals.values()] if not math.isnan(x)]
            lo = min(allv) if allv else math.nan
            hi = max(allv) if allv else math.nan
            swing = {
                n: abs(vals.get(f"{n}=high", math.nan) - vals.get(f"{n}=low", math.nan))
                for n in names
            }
            swing = {n: s for n, s in swing.items() if not math.isnan(s)}
            most = max(swing, key=lambda n: swing[n]) if swing else ""
            pub = float(r["published"])
            tol = c.abs_tolerance.get(str(r["column"]))
            tol_abs = tol if tol is not None else c.tolerance * abs(pub)
            reach = _reachable(pub, lo, hi, tol_abs)
            rows.append(
                {
                    "experiment": env.base.id,
                    "table": c.table,
                    **{k: r[k] for k in keys},
                    "column": r["column"],
                    "role": c.role,
                    "published": pub,
                    "ours": ours,
                    "agree": r["agree"],
                    "envelope_low": lo,
                    "envelope_high": hi,
                    "moved_most_by": most,
                    "swing": swing.get(most, math.nan) if most else math.nan,
                    "reachable": reach,
                    "verdict": (
                        "not evaluated"
                        if reach is None
                        else "agrees"
                        if bool(r["agree"])
                        else "within the envelope"
                        if reach
                        else "outside every plausible envelope: a missing mechanism"
                    ),
                }
            )
    checks: list[dict[str, Any]] = []
    for i, ch in enumerate(base.checks):
        held = [
            v.outcome.checks[i].passed
            for v in env.variants
            if v.outcome is not None and i < len(v.outcome.checks)
        ]
        checks.append(
            {
                "experiment": env.base.id,
                "claim": ch.claim,
                "role": ch.role,
                "holds": ch.passed,
                "holds_in_variants": sum(1 for h in held if h),
                "variants": len(held),
                "holds_in": ", ".join(
                    v.label
                    for v, h in zip(env.variants, held, strict=False)
                    if h and v.outcome is not None
                ),
            }
        )
    return rows, checks
