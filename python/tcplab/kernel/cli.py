"""Command-line parts of the kernel engine: ``tcplab compare`` and ``tcplab kernel-cleanup``.

    tcplab compare SCENARIO [--out DIR] [--set F=V ...] [--seed S] [--trials N] [--sim-trials M]
                   [--sim-timeout S] [--no-emulator-jitter]
    tcplab compare --replay DIR [--out DIR2] [--set F=V ...] [--sim-trials M] [--sim-timeout S]
                   [--no-emulator-jitter]
    tcplab kernel-cleanup [--force]

Registered on the main parser by :func:`tcplab.kernel.add_subcommands`; each sets ``func``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_subcommands"]


def _compare(args: argparse.Namespace) -> int:
    from ..errors import UserError
    from .compare import compare, replay

    if (args.scenario is None) == (args.replay is None):
        raise UserError(
            "compare: give a SCENARIO to run on both engines, or --replay DIR to run the "
            "simulator's side of an earlier comparison again (not both)"
        )
    if args.replay is not None:
        for flag, value in (("--seed", args.seed), ("--trials", args.trials)):
            if value is not None:
                raise UserError(
                    f"compare --replay: {flag} cannot be used: a replay keeps the recorded "
                    "kernel trials and their seeds"
                )
    common = {
        "out": args.out,
        "overrides": args.overrides,
        "sim_timeout": args.sim_timeout,
        "sim_trials": args.sim_trials,
        "emulator_jitter": False if args.no_emulator_jitter else args.emulator_jitter,
    }
    ktrace = [x for x in args.ktrace.split(",") if x] if args.ktrace else None
    if args.replay is not None:
        if ktrace:
            raise UserError(
                "compare --replay: --ktrace cannot be used: a replay runs no kernel trials"
            )
        rep = replay(args.replay, **common)
    else:
        rep = compare(args.scenario, seed=args.seed, trials=args.trials, ktrace=ktrace, **common)
    if not rep["kernel_valid"]:
        print("kernel run INVALID: " + "; ".join(rep["kernel_invalid_reasons"]), file=sys.stderr)
    for f in rep["flows"]:
        if "error" in f:
            print(f"{f['flow']:<20} FAIL  {f['error']}")
            continue
        g = f["mean_goodput_bps"]
        fails = [k for k, c in f["checks"].items() if c["pass"] is False]
        print(
            f"{f['flow']:<20} goodput sim {g['sim'] / 1e6:8.2f}  kernel {g['kernel'] / 1e6:8.2f} "
            f"Mbit/s ({g['rel_diff']:+.1%})  {'pass' if f['pass'] else 'FAIL ' + ','.join(fails)}"
        )
    for g in rep.get("groups") or []:
        fails = [k for k, c in g["checks"].items() if c["pass"] is False]
        gs = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["sim"])
        gk = " + ".join(f"{x / 1e6:.2f}" for x in g["goodput_bps"]["kernel"])
        print(
            f"group {g['group']:<14} sim {gs}  kernel {gk} Mbit/s  Jain "
            f"{g['jain']['sim']:.3f} / {g['jain']['kernel']:.3f}  "
            f"{'pass' if g['pass'] else 'FAIL ' + ','.join(fails)}"
        )
    if rep.get("trials", 1) > 1:
        print(f"(means over {rep['trials']} kernel and {rep['sim_trials']} simulator trials)")
    if args.out:
        print(f"report: {args.out}/fidelity.md")
    return 0 if rep["pass"] else 3


def _cleanup(args: argparse.Namespace) -> int:
    from . import cleanup

    removed = cleanup(force=args.force)
    for n in removed:
        print(f"removed {n}")
    if not removed:
        print("nothing to clean up")
    return 0


def add_subcommands(subparsers: Any) -> None:
    c = subparsers.add_parser(
        "compare",
        help="run a scenario on the simulator and on the kernel and write a fidelity report",
        description=(
            "Run SCENARIO on the simulator with Linux's TCP behaviour and on the "
            "running Linux kernel in network namespaces (needs root), align the two in time, and "
            "report per flow mean and per-interval goodput, cwnd trajectories (correlation, mean "
            "absolute error), retransmissions and timeouts, each with pass/fail against stated "
            "tolerances; with several trials the checks are made on the means over trials. Exit "
            "status 3 when a check fails. With --replay DIR (no root needed) the kernel trials "
            "recorded by an earlier `compare --out DIR` are judged against new simulator runs, "
            "e.g. of another build or with --set applied to the simulator's side only."
        ),
    )
    c.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario TOML file")
    c.add_argument(
        "--replay",
        metavar="DIR",
        help="run only the simulator's side again, against the kernel trials recorded in DIR "
        "(the --out of an earlier compare)",
    )
    c.add_argument(
        "--out",
        metavar="DIR",
        help="write fidelity.json, fidelity.md, compare.png and the kernel trials "
        "(kernel-trials.json.gz, for --replay)",
    )
    c.add_argument("--set", dest="overrides", action="append", default=[], metavar="F=V")
    c.add_argument(
        "--ktrace",
        metavar="EVENT[,...]",
        help="record these Linux tcp tracepoints in every kernel trial (kept in the kernel "
        "record, kernel-trials.json.gz): tcp_probe, tcp_rcvbuf_grow, tcp_rcv_space_adjust, "
        "tcp_cong_state_set, tcp_retransmit_skb",
    )
    c.add_argument("--seed", type=int, metavar="S", help="scenario seed")
    c.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help="pairs of runs, judged on their means (default: the scenario's trials)",
    )
    c.add_argument(
        "--sim-trials",
        type=int,
        metavar="M",
        help="simulator trials behind the simulator's means, at least --trials (default: 4 × "
        "--trials when it is above 1): a simulator trial costs a second, a kernel trial half a "
        "minute",
    )
    c.add_argument(
        "--sim-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="kill the simulation if it runs longer than this (default 600 s)",
    )
    c.add_argument(
        "--emulator-jitter",
        choices=["thread", "lanes"],
        default="thread",
        help="how the simulator's links carry the emulator's measured timing: 'thread' (one "
        "emulator thread serving every direction, with its measured wake-up lateness and send "
        "gaps; per direction where the kernel run did not measure it) or 'lanes' (each "
        "direction's own lateness, drawn independently)",
    )
    c.add_argument(
        "--no-emulator-jitter",
        action="store_true",
        help="do not give the simulator's links the emulator's measured lateness as jitter "
        "(README: 'The real-kernel engine')",
    )
    c.set_defaults(func=_compare)
    k = subparsers.add_parser(
        "kernel-cleanup",
        help="remove network namespaces and processes left by interrupted kernel runs",
    )
    k.add_argument(
        "--force", action="store_true", help="also remove those of kernel runs still in progress"
    )
    k.set_defaults(func=_cleanup)
