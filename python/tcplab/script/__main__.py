"""``tcplab script FILE... [--stack NAME | --engine kernel] [--tolerance MS] [--check] [--table]``.

Runs behaviour scripts on the simulator (issue 14) or, with ``--engine kernel``, on this machine's
Linux TCP through a TUN device in a namespace (root), and prints each line's result; ``--check``
only parses. Exit status: 0 all passed, 1 a script failed, 2 a script is malformed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import TcplabError
from .match import DEFAULT_TOLERANCE, ScriptResult
from .parser import ScriptError, parse_file
from .sim import run_sim

SUITE = Path(__file__).resolve().parents[1] / "scenarios" / "scripts"
# Script directories whose expectations this machine's kernel (a recent Linux) can validate; the
# linux-2.4.27 / linux-2.6.39 scripts describe kernels that cannot run here.
KERNEL_DIRS = ("linux-6",)


def run_one(
    path: str, engine: str, stack: str, tolerance: float, trace: bool = False
) -> ScriptResult:
    """Parse and run one script on ``engine`` ("sim" with ``stack``, or "kernel")."""
    events = parse_file(path)
    if engine == "kernel":
        from .kernel import run_kernel

        return run_kernel(events, path, tolerance, trace=trace)
    return run_sim(events, path, stack, tolerance, trace)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tcplab script", description="Run packetdrill-style scripts.")
    ap.add_argument("files", nargs="*", metavar="FILE")
    ap.add_argument("--stack", default="linux-6", help="simulated personality (default linux-6)")
    ap.add_argument(
        "--engine",
        choices=("sim", "kernel"),
        default="sim",
        help="sim: the simulator's personality (default); kernel: this machine's Linux (root)",
    )
    ap.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE * 1000,
        help="timing tolerance of outbound segments, ms (default 4, as packetdrill)",
    )
    ap.add_argument("--check", action="store_true", help="parse only")
    ap.add_argument(
        "--trace",
        action="store_true",
        help="a tool for writing scripts: run only the inbound and system-call lines and print "
        "every segment the stack sends (never reports a pass)",
    )
    ap.add_argument(
        "--table",
        action="store_true",
        help="run the shipped suite (scripts/STACK/*.pkt on STACK; with --engine kernel the "
        "linux-6 scripts on the kernel) and print a pass table",
    )
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="print every line, not only failures"
    )
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    tol = args.tolerance / 1000
    if args.table:
        return table(tol, args.engine)
    if not args.files:
        ap.error("give at least one FILE (or --table)")
    status = 0
    label = "kernel" if args.engine == "kernel" else args.stack
    for path in args.files:
        if args.check:
            try:
                events = parse_file(path)
            except ScriptError as e:
                print(f"error: {e}", file=sys.stderr)
                status = 2
                continue
            print(f"{path}: ok ({len(events)} events)")
            continue
        try:
            res = run_one(path, args.engine, args.stack, tol, args.trace)
        except ScriptError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        except TcplabError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1 if type(e).__name__ == "EngineUnavailable" else 2
        if args.trace:
            print("\n".join(res.sent))
            print(f"{path}: TRACE ({label})")
            continue
        for r in res.lines:
            if args.verbose or not r.ok:
                mark = "ok  " if r.ok else "FAIL"
                print(
                    f"{path}:{r.line}: {mark} {r.text}" + (f"\n    {r.detail}" if r.detail else "")
                )
        print(f"{path}: {'PASS' if res.passed else 'FAIL'} ({label})")
        if not res.passed and status == 0:
            status = 1
    return status


def table(tolerance: float, engine: str = "sim") -> int:
    """Run every shipped script on the personality its directory names (or on the kernel, the
    Linux ones); print one row per directory and each failure."""
    rows = []
    for d in sorted(p for p in SUITE.iterdir() if p.is_dir()):
        if engine == "kernel" and d.name not in KERNEL_DIRS:
            continue  # older personalities' scripts describe other kernels
        results = [run_one(str(f), engine, d.name, tolerance) for f in sorted(d.glob("*.pkt"))]
        fails = [r for r in results if not r.passed]
        rows.append((d.name, len(results), len(results) - len(fails), fails))
    head = "scripts of" if engine == "kernel" else "stack"
    print(f"{head:<20} {'scripts':>7} {'pass':>5} {'fail':>5}   ({engine})")
    for name, n, ok, fails in rows:
        print(f"{name:<20} {n:>7} {ok:>5} {n - ok:>5}")
        for r in fails:
            bad = r.failure()
            where = f"{Path(r.path).name}:{bad.line}" if bad else Path(r.path).name
            print(f"    FAIL {where}: {bad.detail if bad else 'no lines'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
