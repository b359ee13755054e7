"""``tcplab reproduce``: the five published studies as scenario files, run and reported.

    tcplab reproduce STUDY|all|list [--out DIR] [--quick] [--only J1,J3] [--jobs N]

Each study (one module here: :mod:`.jansen2005`, :mod:`.iwanaga2010`, :mod:`.kumazoe2007`,
:mod:`.zhou2012`, :mod:`.slac2003`) has one scenario per experiment in
``scenarios/studies/<study>/<ID>.toml``, with the published trial counts and durations, a
``[sweep]`` over what the paper varies, and a ``[report]`` table mapping the results onto the
paper's tables (:mod:`.spec`). All trials of all selected experiments run in one pool of threads
across the cores, longest first; then :mod:`.report` writes ``<out>/<study>/<ID>.csv``, the
published-vs-ours comparisons, the checked observations, the figures and the HTML pages.
``--quick`` applies each scenario's ``[report.quick]`` (fewer trials, shorter runs).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from . import iwanaga2010, jansen2005, kumazoe2007, slac2003, zhou2012
from .core import Experiment, Outcome, Study, load_experiments, run_experiments

__all__ = ["STUDIES", "Experiment", "Outcome", "Study", "cli_main", "reproduce"]

#: The studies, in the order of seed-experiments.md.
STUDIES: dict[str, Study] = {
    m.STUDY.name: m.STUDY for m in (jansen2005, iwanaga2010, kumazoe2007, zhou2012, slac2003)
}


def _select(name: str) -> list[Study]:
    if name == "all":
        return list(STUDIES.values())
    if name not in STUDIES:
        from ..errors import nearest

        near = nearest(name, STUDIES)
        hint = f" (did you mean '{near}'?)" if near else ""
        raise UserError(
            f"unknown study {name!r}{hint}; known: {', '.join(STUDIES)}, or 'all' / 'list'"
        )
    return [STUDIES[name]]


def reproduce(
    study: str,
    out: str | Path,
    *,
    quick: bool = False,
    only: Sequence[str] | None = None,
    jobs: int | None = None,
    studies_dir: str | Path | None = None,
    progress=None,
    executor: Any = None,
    ray_address: str | None = None,
    store: Any = None,
    record: bool | str | Path = False,
    envelope: bool = False,
) -> Path:
    """Run *study* (a name or ``"all"``) and write the report into *out* (atomically: it must
    not exist or be empty). Returns the report directory.

    *executor*/*ray_address*: where trials run (:mod:`tcplab.executors`); *store*: a
    :class:`~tcplab.store.TrialStore` for resuming; *record*: record the run in the results
    catalog (True: the default results directory; or a directory) — :mod:`tcplab.runs`.
    *envelope*: also run every declared assumption at its low and high ends
    (:mod:`tcplab.reproduce.envelope`) and report the envelopes."""
    from .. import results
    from . import envelope as envelope_mod
    from . import report, spec

    base = spec.find_studies_dir(studies_dir)
    results.check_out(out)
    studies = _select(study)
    experiments: list[Experiment] = []
    per_study: dict[str, list[Experiment]] = {}
    for s in studies:
        exps = load_experiments(base, s, quick=quick, only=only if study != "all" else None)
        per_study[s.name] = exps
        experiments.extend(exps)
    if not experiments:
        raise UserError("nothing to run")
    envs = envelope_mod.plan(experiments) if envelope else []
    if envelope and not envs:
        raise UserError(
            "--envelope: no selected experiment declares an [assume] table "
            "(docs/scenario-format.md, 'Assumptions')"
        )
    variant_exps = [v.experiment for env in envs for v in env.variants]
    base_ids = {id(e) for e in experiments}
    t0 = time.perf_counter()
    done: dict[str, Any] = {}

    def fill(d: Path) -> None:
        def fig_dir(e: Experiment) -> Path | None:
            return d / e.study.name / "figures" if id(e) in base_ids else None

        outcomes, wall = run_experiments(
            [*experiments, *variant_exps],
            jobs=jobs,
            progress=progress,
            figures_dir=fig_dir,
            executor=executor,
            ray_address=ray_address,
            store=store,
        )
        done["outcomes"] = outcomes
        done["wall"] = wall
        by_exp = {id(o.experiment): o for o in outcomes}
        for env in envs:
            for v in env.variants:
                v.outcome = by_exp[id(v.experiment)]
        outcomes = [o for o in outcomes if id(o.experiment) in base_ids]
        rows = []
        for s in studies:
            sd = d / s.name
            sd.mkdir(exist_ok=True)
            outs = [by_exp[id(e)] for e in per_study[s.name]]
            study_envs = [
                (env, *envelope_mod.envelope_rows(env, by_exp[id(env.base)]))
                for env in envs
                if env.base.study.name == s.name
            ]
            rows.append((s, report.write_study(sd, s, outs, quick, envelopes=study_envs)))
        report.write_index(d, rows, wall, quick)
        total = time.perf_counter() - t0
        (d / "timing.txt").write_text(
            f"simulation wall time {wall:.1f} s; total {total:.1f} s; "
            f"{sum(o.trials for o in outcomes)} trials\n",
            encoding="utf-8",
        )

    path = results.write_atomic(Path(out), fill)
    if record:
        from .. import runs

        hits = store.hits if store is not None else 0
        runs.record(
            "reproduce",
            [
                (
                    {
                        "study": o.experiment.study.name,
                        "experiment": o.experiment.id,
                        "point": p.label or "base",
                    },
                    r,
                )
                for o in done["outcomes"]
                for p, r in zip(o.sweep.points, o.sweep.results, strict=True)
            ],
            root=None if record is True else record,
            file=f"studies:{study}",
            name=f"reproduce-{study}" + ("-quick" if quick else ""),
            executor=getattr(executor, "name", executor) or "local",
            wall_seconds=done["wall"],
            out=path,
            reused_trials=hits,
            series=False,
            extra={"quick": quick, "only": list(only or [])},
        )
    return path


def cli_main(args: argparse.Namespace) -> int:
    """``tcplab reproduce`` (see the module docstring)."""
    from .. import results, runner
    from . import spec

    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    if args.study == "list":
        base = spec.find_studies_dir(args.studies_dir)
        for s in STUDIES.values():
            exps = load_experiments(base, s, quick=False)
            n = sum(len(e.points) * e.points[0][1].trials for e in exps if e.points)
            print(
                f"{s.name}: {s.title} — {' '.join(dict.fromkeys(e.id for e in exps))} ({n} trials)"
            )
        return 0
    only = [x.strip() for x in args.only.split(",") if x.strip()] if args.only else None
    out = args.out or results.default_out(
        f"reproduce-{args.study}" + ("-quick" if args.quick else "")
    )
    bar = None
    if not args.quiet and (args.progress or sys.stderr.isatty()):

        class _Lazy:
            def __init__(self):
                self.bar = None

            def __call__(self, done, total):
                if self.bar is None:
                    self.bar = runner.ProgressBar(total)
                self.bar(done, total)

        bar = _Lazy()
    from ..cli import campaign_options

    ex, store, record = campaign_options(args, resume_default=True)
    t0 = time.perf_counter()
    d = reproduce(
        args.study,
        out,
        quick=args.quick,
        only=only,
        jobs=args.jobs,
        studies_dir=args.studies_dir,
        progress=bar,
        executor=ex,
        store=store,
        record=record,
        envelope=args.envelope,
    )
    if args.quiet:
        print(d)
        return 0
    print((d / "summary.md").read_text(encoding="utf-8").rstrip())
    reused = (
        f"; {store.hits} trial(s) reused from {store.root}"
        if store is not None and store.hits
        else ""
    )
    print(f"report: {d / 'index.html'} ({time.perf_counter() - t0:.0f} s{reused})")
    return 0
