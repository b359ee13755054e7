"""The kernel validation set: ``python -m tcplab.kernel.validate [--out DIR] [--only SUBSTR]
[--replay RUN]``.

Runs ``tcplab compare`` on every scenario in ``python/tcplab/kernel/validation/`` (reno, cubic
and bbr on three paths; see the files) and writes ``DIR/<scenario>/`` reports plus
``DIR/validation.md``, the table quoted in the README. Needs root. About 25-35 minutes with the
README's trial counts. ``--replay RUN`` (no root, a minute or two) judges the kernel trials
recorded in an earlier run's ``RUN/<scenario>/`` against new simulator runs instead
(``tcplab compare --replay``): a model change measured against the same kernel runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ..errors import UserError
from .compare import KERNEL_RECORD, compare, replay

VALIDATION_DIR = Path(__file__).with_name("validation")


def scenarios(only: str | None = None) -> list[Path]:
    files = sorted(VALIDATION_DIR.glob("*.toml"))
    return [f for f in files if only is None or only in f.name]


def _label(rep: dict) -> str:
    n, m = rep.get("trials", 1), rep.get("sim_trials", rep.get("trials", 1))
    if n == 1 and m == 1:
        return f"{rep.get('scenario', '?')}"
    return f"{rep.get('scenario', '?')} (means of {n} kernel / {m} simulator trials)"


def table(reports: list[dict]) -> str:
    lines = [
        "| scenario | flow | goodput sim / kernel (Mbit/s) | diff | interval MAE | "
        "cwnd sim / kernel (seg) | cwnd MAE | cwnd corr | retx sim / kernel | "
        "RTOs sim / kernel | kernel valid | result |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rep in reports:
        for f in rep["flows"]:
            name = _label(rep)
            if "error" in f:
                lines.append(
                    f"| {name} | {f['flow']} | – | – | – | – | – | – | – | – | "
                    f"{'yes' if rep['kernel_valid'] else 'NO'} | {f['error']} |"
                )
                continue
            g = f["mean_goodput_bps"]
            c = f.get("cwnd", {})
            r = f.get("retransmits", {"sim": 0, "kernel": 0})
            t = f.get("timeouts", {"sim": 0, "kernel": 0})
            corr = c.get("correlation")
            lines.append(
                f"| {name} | {f['flow']} | {g['sim'] / 1e6:.2f} / {g['kernel'] / 1e6:.2f} | "
                f"{g['rel_diff']:+.1%} | {f['interval_goodput']['mae_rel']:.1%} | "
                f"{c.get('mean_sim_bytes', float('nan')) / 1448:.0f} / "
                f"{c.get('mean_kernel_bytes', float('nan')) / 1448:.0f} | "
                f"{c.get('mae_rel', float('nan')):.1%} | "
                f"{'–' if corr is None else f'{corr:.2f}'} | "
                f"{r['sim']:.0f} / {r['kernel']:.0f} | {t['sim']:.0f} / {t['kernel']:.0f} | "
                f"{'yes' if rep['kernel_valid'] else 'NO'} | "
                f"{'(group)' if f.get('exchangeable') else 'pass' if f['pass'] else 'FAIL'} |"
            )
    glines = [
        "",
        "| scenario | group | goodput sim (Mbit/s) | goodput kernel (Mbit/s) | Jain sim / kernel | "
        "result |",
        "|---|---|---|---|---|---|",
    ]
    for rep in reports:
        for g in rep.get("groups") or []:
            gs = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["sim"])
            gk = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["kernel"])
            glines.append(
                f"| {_label(rep)} | {g['group']} | {gs} | {gk} | "
                f"{g['jain']['sim']:.3f} / {g['jain']['kernel']:.3f} | "
                f"{'pass' if g['pass'] else 'FAIL'} |"
            )
    if len(glines) > 3:
        lines += glines
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    """Write *text* to *path* atomically (a temporary sibling renamed over it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tcplab.kernel.validate")
    p.add_argument("--out", default="runs/kernel-validation", metavar="DIR")
    p.add_argument("--only", metavar="SUBSTR", help="only scenarios whose file name contains it")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="F=V")
    p.add_argument(
        "--trials", type=int, metavar="N", help="trials per scenario (default: each file's)"
    )
    p.add_argument(
        "--sim-trials",
        type=int,
        metavar="M",
        help="simulator trials per scenario (default: 4 × the kernel trials when above 1)",
    )
    p.add_argument(
        "--sim-timeout",
        type=float,
        default=180.0,
        metavar="S",
        help="kill a simulation that runs longer (default 180 s)",
    )
    p.add_argument(
        "--replay",
        metavar="RUN",
        help="no kernel runs: judge the kernel trials recorded in RUN (an earlier --out) "
        "against new simulator runs; --set applies to the simulator's side only",
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    files = scenarios(args.only)
    if args.replay is not None:
        if args.trials is not None:
            raise UserError("validate --replay: --trials cannot be used (the recorded trials are)")
        files = [f for f in files if (Path(args.replay) / f.stem / KERNEL_RECORD).is_file()]
        if not files:
            raise UserError(
                f"validate --replay {args.replay}: no recorded kernel trials there "
                f"(<scenario>/{KERNEL_RECORD} of a validation run made by this version or later)"
            )
        if out.resolve() == Path(args.replay).resolve():
            raise UserError("validate --replay: --out must differ from the recorded run")
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    for f in files:
        t = time.perf_counter()
        if args.replay is not None:
            rep = replay(
                Path(args.replay) / f.stem,
                out=out / f.stem,
                overrides=args.overrides,
                sim_timeout=args.sim_timeout,
                sim_trials=args.sim_trials,
            )
        else:
            rep = compare(
                f,
                out=out / f.stem,
                overrides=args.overrides,
                sim_timeout=args.sim_timeout,
                trials=args.trials,
                sim_trials=args.sim_trials,
            )
        reports.append(rep)
        print(
            f"{f.stem}: {'pass' if rep['pass'] else 'FAIL'} ({time.perf_counter() - t:.0f} s)",
            flush=True,
        )
    _write(out / "validation.md", table(reports))
    _write(
        out / "validation.json",
        json.dumps(
            [
                {
                    "scenario": r.get("scenario"),
                    "pass": r["pass"],
                    "kernel_valid": r["kernel_valid"],
                    "flows": [
                        {k: v for k, v in fl.items() if k not in ("interval_goodput", "cwnd")}
                        for fl in r["flows"]
                    ],
                }
                for r in reports
            ],
            indent=1,
            default=str,
        ),
    )
    print(table(reports))
    return 0 if all(r["pass"] for r in reports) else 3


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
