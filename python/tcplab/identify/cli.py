"""``tcplab identify``: the command line (registered from tcplab/cli.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import UserError


def add_subcommand(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "identify",
        help="which stack and congestion control produced a capture",
        description=(
            "Identify the sender's OS personality and congestion control from a pcap/pcapng "
            "capture of a bulk transfer taken near the sender or the receiver, by comparing its "
            "features with simulations of every candidate on the path inferred from it. With "
            "--probe: run a local Linux CCA on the kernel engine behind an emulated bottleneck "
            "with drops, and identify it from its capture."
        ),
    )
    p.add_argument("capture", nargs="?", metavar="CAPTURE", help="pcap or pcapng file")
    p.add_argument("--conn", type=int, metavar="N", help="connection index (default: most data)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--top", type=int, default=5, metavar="K", help="candidates shown (default 5)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="threads simulating references")
    p.add_argument(
        "--no-cache", action="store_true", help="recompute the references, do not store them"
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="active mode: kernel engine, this machine's Linux TCP (needs root, iperf3, tcpdump)",
    )
    p.add_argument("--cca", default="cubic", help="with --probe: the local CCA to probe")
    p.add_argument("--rate", default="20Mbit", help="with --probe: bottleneck rate")
    p.add_argument("--rtt", default="40ms", help="with --probe: base RTT")
    p.add_argument(
        "--drops",
        default="4s,9s,14s",
        help="with --probe: times at which one packet is dropped (approximate: converted to "
        "packet indices at the bottleneck rate)",
    )
    p.add_argument("--duration", default="20s", help="with --probe: run length")
    p.set_defaults(func=main_identify)
    return p


def main_identify(args: argparse.Namespace) -> int:
    # Errors (UserError, EngineUnavailable) reach the user through tcplab.cli's run_command.
    if args.probe:
        from .probe import probe

        if args.capture:
            raise UserError("identify --probe takes no CAPTURE (it makes its own)")
        r = probe(
            args.cca,
            rate=args.rate,
            rtt=args.rtt,
            drops=args.drops,
            duration=args.duration,
            jobs=args.jobs,
        )
    else:
        if not args.capture:
            raise UserError("identify needs a CAPTURE file (or --probe)")
        from .classify import identify

        try:
            r = identify(
                args.capture,
                conn=args.conn,
                jobs=args.jobs,
                use_cache=not args.no_cache,
                top=args.top,
            )
        except ValueError as e:
            # The trace reader's messages already start with the file name.
            msg = str(e) if str(e).startswith(str(args.capture)) else f"{args.capture}: {e}"
            raise UserError(msg) from e
    if args.json:
        print(json.dumps(r, indent=1, allow_nan=False))
    else:
        from .classify import format_result

        if "probe" in r:
            pr = r["probe"]
            print(
                f"probe: local Linux TCP with {pr['cca']} on {pr['rate']}, {pr['rtt']}, drops at "
                f"packets {pr['drop_packets']}; cwnd reduction per drop (TCP_INFO): "
                + ", ".join(f"{b:.2f}" for b in pr["cwnd_beta"])
            )
        print(format_result(r))
    return 0
