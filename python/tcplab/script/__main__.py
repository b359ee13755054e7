"""``python -m tcplab.script FILE... [--stack NAME] [--tolerance MS] [--check]``.

Runs behaviour scripts on the simulator (issue 14) and prints each line's result; ``--check``
only parses. Exit status: 0 all passed, 1 a script failed, 2 a script is malformed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .parser import ScriptError, parse_file
from .sim import DEFAULT_TOLERANCE, run_sim

SUITE = Path(__file__).resolve().parents[1] / "scenarios" / "scripts"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tcplab script", description="Run packetdrill-style scripts.")
    ap.add_argument("files", nargs="*", metavar="FILE")
    ap.add_argument("--stack", default="linux-6", help="simulated personality (default linux-6)")
    ap.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE * 1000,
        help="timing tolerance of outbound segments, ms (default 4, as packetdrill)",
    )
    ap.add_argument("--check", action="store_true", help="parse only")
    ap.add_argument(
        "--table",
        action="store_true",
        help="run the shipped suite (scripts/STACK/*.pkt on STACK) and print a pass table",
    )
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="print every line, not only failures"
    )
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.table:
        return table(args.tolerance / 1000)
    if not args.files:
        ap.error("give at least one FILE (or --table)")
    status = 0
    for path in args.files:
        try:
            events = parse_file(path)
        except ScriptError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        if args.check:
            print(f"{path}: ok ({len(events)} events)")
            continue
        res = run_sim(events, path, args.stack, args.tolerance / 1000)
        for r in res.lines:
            if args.verbose or not r.ok:
                mark = "ok  " if r.ok else "FAIL"
                print(
                    f"{path}:{r.line}: {mark} {r.text}" + (f"\n    {r.detail}" if r.detail else "")
                )
        print(f"{path}: {'PASS' if res.passed else 'FAIL'} ({args.stack})")
        if not res.passed and status == 0:
            status = 1
    return status


def table(tolerance: float) -> int:
    """Run every shipped script on the personality its directory names; print one row each."""
    rows = []
    for d in sorted(p for p in SUITE.iterdir() if p.is_dir()):
        results = [
            run_sim(parse_file(f), str(f), d.name, tolerance) for f in sorted(d.glob("*.pkt"))
        ]
        fails = [r for r in results if not r.passed]
        rows.append((d.name, len(results), len(results) - len(fails), fails))
    print(f"{'stack':<16} {'scripts':>7} {'pass':>5} {'fail':>5}")
    for name, n, ok, fails in rows:
        print(f"{name:<16} {n:>7} {ok:>5} {n - ok:>5}")
        for r in fails:
            bad = r.failure()
            where = f"{Path(r.path).name}:{bad.line}" if bad else Path(r.path).name
            print(f"    FAIL {where}: {bad.detail if bad else 'no lines'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
