"""Running the experiments of the studies and building their tables, comparisons and figures.

:func:`load_experiments` reads ``<studies>/<study>/*.toml`` (every file with a ``[report]``),
expands each sweep and validates every point before anything runs; :func:`run_experiments` runs all
trials of all points of all selected experiments in one pool of threads (the simulator releases
the GIL), longest first, then builds each experiment's :class:`Outcome`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep as sweep_mod
from ..errors import UserError
from ..results import Result
from . import figures as figures_mod
from . import spec as spec_mod
from . import tables as tables_mod

__all__ = [
    "Experiment",
    "Outcome",
    "Study",
    "load_experiments",
    "run_experiments",
]


@dataclass(frozen=True)
class Study:
    """A published study: where its scenarios are and how to cite it."""

    name: str  #: directory under scenarios/studies and the STUDY argument
    title: str
    citation: str
    testbed: str
    ids: tuple[str, ...]  #: experiment IDs of seed-experiments.md, in the paper's order
    notes: str = ""


@dataclass
class Experiment:
    study: Study
    file: Path
    report: spec_mod.Report
    points: list[tuple[sweep_mod.Point, Any]]  #: (Point, Scenario), quick mode applied
    quick: bool

    @property
    def id(self) -> str:
        return self.report.id

    @property
    def description(self) -> str:
        return self.points[0][1].description if self.points else ""


@dataclass
class Outcome:
    experiment: Experiment
    sweep: sweep_mod.SweepResult
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    comparisons: list[tables_mod.Comparison] = field(default_factory=list)
    checks: list[tables_mod.CheckResult] = field(default_factory=list)
    figures: list[tuple[Path, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    trials: int = 0
    sim_seconds: float = 0.0


def _id_key(exp_id: str) -> tuple[str, int]:
    m = re.match(r"^([A-Z]+)([0-9]+)$", exp_id)
    return (m.group(1), int(m.group(2))) if m else (exp_id, 0)


def load_experiments(
    studies_dir: Path,
    study: Study,
    *,
    quick: bool,
    only: Sequence[str] | None = None,
) -> list[Experiment]:
    """Every experiment of *study* (validated; quick-mode settings applied when *quick*)."""
    d = studies_dir / study.name
    if not d.is_dir():
        raise UserError(f"no scenarios for study {study.name!r} in {d}")
    out: list[Experiment] = []
    all_ids: list[str] = []
    for file in sorted(d.glob("*.toml")):
        doc, fname = sweep_mod.read_document(file)
        if "report" not in doc:
            continue
        dims = sweep_mod.coordinate_names(sweep_mod.dimensions(doc, fname))
        report = spec_mod.parse_report(doc, fname, dims)
        all_ids.append(report.id)
        if only and report.id not in only:
            continue
        overrides: list[str] = []
        trials = None
        if quick:
            overrides = list(report.quick.get("set", []))
            trials = report.quick.get("trials")
        loaded = sweep_mod.load_points(fname, overrides=overrides, trials=trials)
        if quick and report.quick.get("points"):
            keep = set(report.quick["points"])
            unknown = keep - {p.label for p, _ in loaded}
            if unknown:
                raise UserError(
                    f"{fname}: report.quick.points names no sweep point: "
                    + ", ".join(sorted(unknown))
                )
            loaded = [(p, sc) for p, sc in loaded if p.label in keep]
        out.append(Experiment(study, file, report, loaded, quick))
    # By ID; an ID's main file (J3.toml) before its companions (J3-*.toml).
    out.sort(key=lambda e: (_id_key(e.id), e.file.stem != e.id, e.file.name))
    if only:
        missing = set(only) - {e.id for e in out}
        if missing:
            raise UserError(
                f"study {study.name}: no experiment with ID {', '.join(sorted(missing))} "
                f"(IDs: {', '.join(sorted(set(all_ids), key=_id_key)) or 'none'})"
            )
    return out


def run_experiments(
    experiments: Sequence[Experiment],
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    figures_dir: Callable[[Experiment], Path] | None = None,
    executor: Any = None,
    ray_address: str | None = None,
    store: Any = None,
) -> tuple[list[Outcome], float]:
    """Run every trial of every experiment in one pool; returns the outcomes (tables,
    comparisons, checks, and figures when *figures_dir* gives a directory per experiment) and
    the wall time of the simulations."""
    combined: list[tuple[sweep_mod.Point, Any]] = []
    spans: list[tuple[int, int]] = []
    for e in experiments:
        spans.append((len(combined), len(combined) + len(e.points)))
        combined.extend(e.points)
    t0 = time.perf_counter()
    res = sweep_mod.run_sweep(
        combined,
        file="reproduce",
        jobs=jobs,
        progress=progress,
        executor=executor,
        ray_address=ray_address,
        store=store,
    )
    wall = time.perf_counter() - t0
    outcomes = []
    for e, (a, b) in zip(experiments, spans, strict=True):
        sw = sweep_mod.SweepResult(
            file=str(e.file),
            points=res.points[a:b],
            results=res.results[a:b],
            wall_seconds=wall,
        )
        out = Outcome(
            e,
            sw,
            trials=sum(len(r.raw) for r in sw.results),
            sim_seconds=sum(sum(getattr(r, "trial_seconds", [])) for r in sw.results),
        )
        build(out, figures_dir(e) if figures_dir else None)
        outcomes.append(out)
    return outcomes, wall


def build(out: Outcome, figures_dir: Path | None) -> None:
    """Fill *out*'s tables, comparisons, checks and (with a directory) figures."""
    rep = out.experiment.report
    pts: list[tuple[dict[str, str], Result]] = [
        (p.coords, r) for p, r in zip(out.sweep.points, out.sweep.results, strict=True)
    ]
    trace_cache: dict[str, Any] = {}
    for t in rep.tables:
        try:
            out.tables[t["suffix"]] = tables_mod.build_table(t, rep.metrics, pts, trace_cache)
        except (KeyError, ValueError, ImportError) as exc:
            out.errors.append(f"table {t['suffix'] or '(main)'}: {exc}")
            out.tables[t["suffix"]] = pd.DataFrame(columns=t["keys"])
    for p in rep.published:
        ours = out.tables.get(p["table"])
        if ours is None or ours.empty:
            continue
        out.comparisons.append(tables_mod.compare(p, ours))
    for c in rep.checks:
        table = out.tables.get(c["table"])
        keys = rep.table(c["table"])["keys"]
        try:
            out.checks.append(tables_mod.check(c, table, keys))
        except (KeyError, ValueError) as exc:
            out.checks.append(
                tables_mod.CheckResult(c["claim"], c["kind"], None, f"not evaluated: {exc}")
            )
    if figures_dir is not None and rep.figures:
        figures_dir.mkdir(parents=True, exist_ok=True)
        fpts = [
            (p.coords, p.label, r) for p, r in zip(out.sweep.points, out.sweep.results, strict=True)
        ]
        for f in rep.figures:
            try:
                out.figures.append(figures_mod.draw(f, fpts, figures_dir))
            except (KeyError, ValueError) as exc:
                out.errors.append(f"figure {f['name']}: {exc}")


def agreement(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Counts over *outcomes*, kept apart by role (tcplab.reproduce.spec): published cells
    within tolerance, orderings and pairs that agree, observations that hold, and what could
    not be evaluated. Only the ``independent`` counts are agreement; ``fitted`` results had a knob
    chosen to match them and ``input`` checks restate a configured value (sanity checks).

    The flat keys (``cells_agree``, ``cells``, ...) are the independent counts."""
    roles = ("independent", "fitted", "input")
    by: dict[str, dict[str, int]] = {
        r: dict.fromkeys(
            ("cells_agree", "cells", "orders_agree", "orders", "checks_hold", "checks", "na"), 0
        )
        for r in roles
    }
    pairs_not_scored = 0
    fitted: list[dict[str, Any]] = []
    for o in outcomes:
        for f in o.experiment.report.fitted:
            fitted.append({"experiment": o.experiment.id, **{k: str(v) for k, v in f.items()}})
        for c in o.comparisons:
            for role, counts in c.agreement_by_role().items():
                for k, v in counts.items():
                    by[role][k] += v
            pairs_not_scored += c.pairs_not_scored
        for ch in o.checks:
            b = by[ch.role]
            if ch.passed is None:
                b["na"] += 1
            else:
                b["checks"] += 1
                b["checks_hold"] += int(ch.passed)
    ind = by["independent"]
    return {
        "cells_agree": ind["cells_agree"],
        "cells": ind["cells"],
        "orders_agree": ind["orders_agree"],
        "orders": ind["orders"],
        "checks_hold": ind["checks_hold"],
        "checks": ind["checks"],
        "checks_not_evaluated": sum(b["na"] for b in by.values()),
        "pairs_not_scored": pairs_not_scored,
        "by_role": by,
        "fitted_knobs": fitted,
    }


def fmt_ratio(a: int, n: int) -> str:
    return "–" if n == 0 else f"{a}/{n}"


def nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return x
