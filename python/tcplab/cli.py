"""The ``tcplab`` command line.

    tcplab run SCENARIO [--out DIR] [--trials N] [--seed S] [--set F=V ...] [--engine sim|kernel]
                        [--jobs N] [--quiet] [--progress]
    tcplab validate SCENARIO [--set F=V ...]
    tcplab list ccas|knobs|stacks
    tcplab show stack NAME
    tcplab bench [--json] [--only s1,s2,s3]
    tcplab reproduce STUDY|all|list [--out DIR] [--quick] [--only IDS] [--jobs N]

Exit status: 0 success; 2 bad input (scenario, value, override, output directory, or a config the
engine rejects) with the message on stderr and no traceback; 1 the engine is not available.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .errors import UserError, run_command

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tcplab",
        description="tcplab: run TCP experiments on a simulated (or real-kernel) dumbbell.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("run", help="run a scenario and write its results")
    r.add_argument(
        "scenario",
        metavar="SCENARIO",
        help="scenario TOML file, or a bundled scenario's name (see `tcplab list scenarios`)",
    )
    r.add_argument("--out", metavar="DIR", help="results directory (default runs/<name>-<time>)")
    r.add_argument("--trials", type=int, metavar="N", help="number of trials")
    r.add_argument("--seed", type=int, metavar="S", help="scenario seed")
    r.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="F=V",
        help="override a field by dotted path, e.g. --set path.rate=1Gbit --set flow.0.cca=reno",
    )
    r.add_argument("--engine", choices=("sim", "kernel"), help="engine (default: the scenario's)")
    r.add_argument("--jobs", type=int, metavar="N", help="parallel trials (default: CPU count)")
    r.add_argument(
        "--pcap",
        metavar="LINK|host:NAME[,...]",
        help="record trial 0's packets on these links/hosts as pcap files in <out>/pcap/",
    )
    r.add_argument(
        "--ktrace",
        metavar="EVENT[,...]",
        help="kernel engine: record these Linux tcp tracepoints in every trial into "
        "<out>/ktrace.parquet (tcp_probe, tcp_rcvbuf_grow, tcp_rcv_space_adjust, "
        "tcp_cong_state_set, tcp_retransmit_skb)",
    )
    r.add_argument(
        "--rerun-invalid",
        type=int,
        metavar="N",
        help="kernel engine: run a trial the link emulator marks invalid (host missed the "
        "configured rate or delay) again up to N times, after a pause of 2 s doubling each time "
        "(default 2; 0: keep the first attempt)",
    )
    r.add_argument("--quiet", action="store_true", help="print only where the results went")
    r.add_argument(
        "--progress", action="store_true", help="show a progress bar even if stderr is not a TTY"
    )
    add_campaign_args(r, resume_default=False)

    v = sub.add_parser("validate", help="check a scenario and show the expanded topology")
    v.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file or bundled name")
    v.add_argument("--set", dest="overrides", action="append", default=[], metavar="F=V")

    _add_reproduce_parser(sub)
    from . import diff as diff_mod
    from . import runs as runs_mod

    runs_mod.add_parsers(sub)
    diff_mod.add_parser(sub)
    # `tcplab script ...` is dispatched before parsing (tcplab.script has its own parser); this
    # entry only lists it in `tcplab --help`.
    sub.add_parser("script", help="run packetdrill-style behaviour scripts (tcplab script --help)")

    from .trace import add_subcommand as add_trace

    add_trace(sub)
    from .identify.cli import add_subcommand as add_identify

    add_identify(sub)  # tcplab identify
    from .kernel import add_subcommands as add_kernel

    add_kernel(sub)  # tcplab compare, tcplab kernel-cleanup

    ls = sub.add_parser("list", help="list what the engine provides")
    ls.add_argument("what", choices=("ccas", "knobs", "scenarios", "stacks"))

    sh = sub.add_parser("show", help="show one item in full (an OS stack personality)")
    sh.add_argument("what", choices=("stack",))
    sh.add_argument("name", metavar="NAME", help="a stack name (see `tcplab list stacks`)")

    b = sub.add_parser("bench", help="run the fixed benchmark scenarios s1, s2, s3")
    b.add_argument("--json", action="store_true", help="print a JSON list")
    b.add_argument("--only", metavar="LIST", help="comma-separated subset, e.g. s1,s3")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["script"]:  # behaviour scripts (issue 14) have their own argument parser
        from .script.__main__ import main as script_main

        return script_main(words[1:])
    args = _parser().parse_args(argv)
    return run_command(lambda: _dispatch(args))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("run", "validate"):
        from .bundled import resolve

        args.scenario = resolve(args.scenario)
    if args.command == "run":
        return _run(args)
    if args.command == "validate":
        return _validate(args)
    if args.command == "list":
        return _list(args)
    if args.command == "show":
        return _show(args)
    if args.command == "bench":
        return _bench(args)
    if getattr(args, "func", None) is not None:  # trace, identify, compare, kernel-cleanup
        return int(args.func(args))
    if args.command == "reproduce":
        return _reproduce(args)
    return 2  # pragma: no cover - argparse enforces a command


# ---------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from . import results, runner
    from . import scenario as scenario_mod

    if _is_sweep(args.scenario):
        return _run_sweep(args)
    sc = scenario_mod.load(
        args.scenario,
        overrides=args.overrides,
        trials=args.trials,
        seed=args.seed,
        engine=args.engine,
    )
    out = args.out if args.out is not None else results.default_out(sc.name)
    show_bar = not args.quiet and (args.progress or sys.stderr.isatty()) and sc.trials > 1
    pcap = [x for x in args.pcap.split(",") if x] if args.pcap else None
    ex, store, record = campaign_options(args, resume_default=False, scenario_run=sc.run_options)
    result = runner.run(
        sc,
        out=out,
        progress=show_bar,
        jobs=args.jobs,
        pcap=pcap,
        executor=ex,
        resume=store or False,
        ktrace=[x for x in args.ktrace.split(",") if x] if args.ktrace else None,
        rerun_invalid=args.rerun_invalid,
    )
    run_id = _record(
        args,
        record,
        "run",
        [({"point": "base"}, result)],
        sc.name,
        ex,
        result.wall_seconds,
        result.out,
        store,
    )
    if args.quiet:
        print(result.out)
    else:
        print(format_summary(result.summary))
        print(f"results: {result.out}{run_id}")
    return 0


def _record(args, record, kind, entries, name, ex, wall, out, store) -> str:
    """Record the run in the results catalog (tcplab.runs); returns ' (run ID)' or ''."""
    if not record:
        return ""
    from . import runs

    doc = runs.record(
        kind,
        entries,
        root=None if record is True else record,
        file=str(args.scenario),
        name=name,
        overrides=args.overrides,
        executor=ex.name,
        wall_seconds=wall,
        out=out,
        reused_trials=store.hits if store is not None else 0,
        extra={"trials_override": args.trials, "seed_override": args.seed},
    )
    reused = f", {store.hits} trial(s) reused" if store is not None and store.hits else ""
    return f" (run {doc['run_id']}{reused})"


def _validate(args: argparse.Namespace) -> int:
    from . import scenario as scenario_mod

    if _is_sweep(args.scenario):
        return _validate_sweep(args)
    sc = scenario_mod.load(args.scenario, overrides=args.overrides)
    print(f"ok: {sc.file}")
    print(sc.topology_text())
    return 0


# Sweeps (tcplab.sweep) and `tcplab reproduce` (tcplab.reproduce) --------------------------------


def _is_sweep(path: str) -> bool:
    from . import sweep

    return sweep.has_sweep(path)


def _run_sweep(args: argparse.Namespace) -> int:
    """``tcplab run`` on a scenario with a [sweep]: one row per point, ``sweep.csv`` and
    ``points/<label>/`` in the output directory."""
    from . import results, runner, sweep

    if args.pcap:
        raise UserError("--pcap is not supported for a sweep; set capture = [...] in the file")
    if args.ktrace:
        raise UserError("--ktrace is not supported for a sweep; run one point with tcplab run")
    loaded = sweep.load_points(
        args.scenario,
        overrides=args.overrides,
        trials=args.trials,
        seed=args.seed,
        engine=args.engine,
    )
    name = loaded[0][1].name
    out = args.out if args.out is not None else results.default_out(name)
    total = sum(sc.trials for _, sc in loaded)
    bar = None
    if not args.quiet and (args.progress or sys.stderr.isatty()) and total > 1:
        bar = runner.ProgressBar(total)
    ex, store, record = campaign_options(
        args, resume_default=False, scenario_run=loaded[0][1].run_options
    )
    res = sweep.run_sweep(
        loaded,
        file=args.scenario,
        out=out,
        jobs=args.jobs,
        progress=bar,
        executor=ex,
        store=store,
        rerun_invalid=args.rerun_invalid,
    )
    run_id = _record(
        args,
        record,
        "sweep",
        [({"point": p.label or "base"}, r) for p, r in res],
        name,
        ex,
        res.wall_seconds,
        res.out,
        store,
    )
    if args.quiet:
        print(res.out)
    else:
        print(sweep.format_table(res))
        print(f"results: {res.out} (sweep.csv, points/<label>/){run_id}")
    return 0


def _validate_sweep(args: argparse.Namespace) -> int:
    from . import sweep

    loaded = sweep.load_points(args.scenario, overrides=args.overrides)
    print(f"ok: {args.scenario}: sweep of {len(loaded)} point(s)")
    for p, sc in loaded:
        print(f"point {p.label}:")
        print("  " + sc.topology_text().replace("\n", "\n  "))
    return 0


def _add_reproduce_parser(sub: Any) -> None:
    rp = sub.add_parser(
        "reproduce",
        help="reproduce a published study (scenarios/studies/<study>) and write its report",
    )
    rp.add_argument(
        "study",
        metavar="STUDY",
        help="a study (jansen2005, iwanaga2010, kumazoe2007, zhou2012, slac2003), 'all' or 'list'",
    )
    rp.add_argument("--out", metavar="DIR", help="report directory (default runs/reproduce-<time>)")
    rp.add_argument(
        "--quick", action="store_true", help="fewer trials and shorter runs (minutes, for CI)"
    )
    rp.add_argument("--only", metavar="IDS", help="comma-separated experiment IDs, e.g. J1,J3")
    rp.add_argument(
        "--envelope",
        action="store_true",
        help="also run each [assume] parameter at its low and high end and report the envelopes",
    )
    rp.add_argument("--jobs", type=int, metavar="N", help="parallel trials (default: CPU count)")
    rp.add_argument("--studies-dir", metavar="DIR", help="where the study scenarios are")
    rp.add_argument("--quiet", action="store_true", help="print only where the report went")
    rp.add_argument(
        "--progress", action="store_true", help="show a progress bar even if stderr is not a TTY"
    )
    add_campaign_args(rp, resume_default=True)


def add_campaign_args(p: argparse.ArgumentParser, *, resume_default: bool) -> None:
    """--executor, --ray-address, --resume/--no-resume, --results-dir, --no-record."""
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where trials run (default: [run] executor, $TCPLAB_EXECUTOR, else local)",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="join this Ray cluster (default: [run] ray_address, $TCPLAB_RAY_ADDRESS, else a "
        "local Ray instance)",
    )
    p.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=resume_default,
        help="reuse trials stored by earlier runs of the same build and store new ones "
        f"(default: {'on' if resume_default else 'off'})",
    )
    p.add_argument(
        "--results-dir",
        metavar="DIR",
        help="trial store and run catalog (default $TCPLAB_RESULTS or ~/.local/share/tcplab)",
    )
    p.add_argument(
        "--no-record", action="store_true", help="do not record this run in the results catalog"
    )


def campaign_options(args: argparse.Namespace, *, resume_default: bool, scenario_run=None):
    """(executor, trial store or None, record target or False) from the campaign flags."""
    from .executors import get_executor
    from .store import TrialStore

    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    ex = get_executor(
        args.executor, jobs=args.jobs, ray_address=args.ray_address, scenario_run=scenario_run
    )
    resume = getattr(args, "resume", resume_default)
    store = TrialStore(args.results_dir) if resume else None
    record = False if args.no_record else (args.results_dir or True)
    return ex, store, record


def _reproduce(args: argparse.Namespace) -> int:
    from .reproduce import cli_main

    return cli_main(args)


def _list(args: argparse.Namespace) -> int:
    from .catalog import default_catalog

    if args.what == "scenarios":
        print(_format_scenarios())
        return 0
    cat = default_catalog()
    if args.what == "stacks":
        from . import stacks

        print(stacks.format_list(cat))
        return 0
    if args.what == "ccas":
        for c in cat.ccas.values():
            src = f" [{c.source}]" if c.source else ""
            print(f"{c.name}: {c.summary}{src}")
            for prm in c.params.values():
                extra = f" {{{'|'.join(prm.choices)}}}" if prm.choices else ""
                print(
                    f"    {prm.name} ({prm.kind}{extra}, default {prm.show_default()}): "
                    f"{_oneline(prm.doc)}"
                )
    else:
        for k in cat.knobs.values():
            extra = f" {{{'|'.join(k.choices)}}}" if k.choices else ""
            print(f"{k.name} ({k.kind}{extra}, default {k.show_default()}): {_oneline(k.doc)}")
    return 0


def _format_scenarios() -> str:
    """``tcplab list scenarios``: each bundled scenario's name and description (or the first
    line of its header comment), and where they are installed."""
    import tomllib

    from .bundled import names, scenarios_dir

    root = scenarios_dir()
    lines = [f"bundled scenarios (in {root}); run one with `tcplab run NAME`:"]
    for n in names():
        text = (root / f"{n}.toml").read_text("utf-8")
        desc = tomllib.loads(text).get("description", "")
        if not desc:
            first = text.lstrip().splitlines()[0] if text.strip() else ""
            desc = first.lstrip("# ").strip() if first.startswith("#") else ""
        lines.append(f"  {n:<28} {_oneline(str(desc))}")
    return "\n".join(lines)


def _show(args: argparse.Namespace) -> int:
    """``tcplab show stack NAME``: every knob with its value, difference from the default and
    source (python/tcplab/stacks)."""
    from . import stacks
    from .catalog import default_catalog

    cat = default_catalog()
    print(stacks.format_show(stacks.get(args.name, cat), cat))
    return 0


def _oneline(text: str) -> str:
    return " ".join(text.split())


def _bench(args: argparse.Namespace) -> int:
    from .bench import BENCHMARKS, run_benchmark
    from .catalog import default_catalog

    names = list(BENCHMARKS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        bad = [n for n in names if n not in BENCHMARKS]
        if bad or not names:
            raise UserError(
                f"--only: unknown benchmark(s) {', '.join(bad) or '(none given)'}; "
                f"known: {', '.join(BENCHMARKS)}"
            )
    cat = default_catalog()
    rows = []
    for n in names:
        row = run_benchmark(BENCHMARKS[n], cat)
        rows.append(row)
        if not args.json:
            print(
                f"{row['name']}: sim {row['sim_seconds']:.0f} s, wall {row['wall_seconds']:.3f} s, "
                f"{row['data_packets']} data packets, {row['packets_per_second']:,.0f} packets/s",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows))
    return 0


# ---------------------------------------------------------------------------------------------


def _mbit(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e6:.3f}"


def _count(block: dict[str, Any] | None, trials: int) -> str:
    if block is None:
        return "-"
    m = block["mean"]
    return f"{m:.0f}" if trials == 1 else f"{m:.1f}"


def format_summary(s: dict[str, Any]) -> str:
    """The readable summary table printed by ``tcplab run``."""
    n = s["trials"]
    lines = [
        f"{s['name']}: {n} trial(s), engine {s['engine']}, {s['duration_s']:g} s "
        + ("each" if s.get("engine") == "kernel" else "simulated")
        + (f", seed {s['seed']}" if n > 1 else f", seed {s['seed']} (trial seed {s['seeds'][0]})"),
        "",
    ]
    header = (
        f"{'flow':<18} {'cca':<9} {'mean':>10} {'min':>10} {'max':>10} {'sd':>9} "
        f"{'retx':>8} {'RTOs':>6}"
    )
    lines.append(f"{'':<28}{'goodput (Mbit/s)':^42}")
    lines.append(header)
    lines.append("-" * len(header))

    def row(label: str, b: dict[str, Any]) -> str:
        g = b["goodput_bps"]
        cca = b.get("cca") or b.get("kind") or ""
        if b.get("kind") == "udp":
            cca = "udp"
        return (
            f"{label:<18.18} {cca:<9.9} {_mbit(g['mean']):>10} {_mbit(g['min']):>10} "
            f"{_mbit(g['max']):>10} {_mbit(g['sd']):>9} {_count(b['retransmits'], n):>8} "
            f"{_count(b['timeouts'], n):>6}"
        )

    flows_by_group: dict[str, list[str]] = {}
    for name, f in s["flows"].items():
        flows_by_group.setdefault(f["group"], []).append(name)
    for g, names in flows_by_group.items():
        for name in names:
            lines.append(row(name, s["flows"][name]))
        if len(names) > 1:
            lines.append(row(f"[SUM] {g}", s["groups"][g]))
    agg = s["aggregate"]
    lines.append("-" * len(header))
    ag = agg["goodput_bps"]
    lines.append(
        f"aggregate goodput {_mbit(ag['mean'])} Mbit/s"
        + (f" (min {_mbit(ag['min'])}, max {_mbit(ag['max'])})" if n > 1 else "")
    )
    if agg["jain_index"] is not None and len(agg["jain_groups"]) > 1:
        jt = agg["jain_index_trials"]
        extra = f"; per trial mean {jt['mean']:.4f}, min {jt['min']:.4f}" if n > 1 and jt else ""
        lines.append(
            f"Jain fairness index {agg['jain_index']:.4f} over {len(agg['jain_groups'])} "
            f"groups{extra}"
        )
    for label in ("forward", "reverse"):
        b = s["bottleneck"].get(label)
        if b:
            lines.append(
                f"bottleneck {label}: utilisation {100 * b['utilization']['mean']:.1f}%, "
                f"drops {b['drops']['mean']:.0f}, random losses {b['lost']['mean']:.0f}"
                + (" (means over trials)" if n > 1 else "")
            )
    for name, b in s.get("background", {}).items():
        # [[background]] sources, in aggregate (tcplab.scenario.background).
        line = (
            f"background {name} ({b['kind']}): {b['goodput_bps']['mean'] / 1e6:.3f} Mbit/s "
            f"delivered, {b['offered_bps']['mean'] / 1e6:.3f} offered"
        )
        if b["kind"] == "tcp":
            line += (
                f"; {b['flows_completed']['mean']:.0f} of {b['flows_started']['mean']:.0f} "
                "connections completed"
            )
            if b["mean_completion_s"]:
                line += f", mean completion {b['mean_completion_s']['mean']:.3f} s"
        elif b["loss_rate"]:
            line += f"; loss {100 * b['loss_rate']['mean']:.2f}%"
        lines.append(line + (" (means over trials)" if n > 1 else ""))
    # Kernel runs (tcplab.kernel): say when the link emulator's self-check failed, so numbers
    # from a path the host did not carry are never read as a measurement of the scenario.
    discarded = s.get("discarded_attempts") or []
    if discarded:
        attempts = {why.split(":", 1)[0] for why in discarded}
        lines.append(
            f"{len(attempts)} kernel attempt(s) marked invalid and run again "
            "(summary.json discarded_attempts)"
        )
    if not s.get("valid", True):
        reasons = s.get("invalid_reasons") or []
        lines.append(
            f"INVALID: the link emulator missed the configured path ({len(reasons)} check(s) "
            "failed; summary.json invalid_reasons), e.g. " + "; ".join(reasons[:2])
        )
    # The kernel engine counts the data packets its hosts delivered (TCP_INFO, iperf3 for UDP);
    # nothing was simulated there.
    what = "data packets delivered" if s.get("engine") == "kernel" else "simulated data packets"
    lines.append(
        f"{what} {s['sim_packets']:,}; wall time {s['wall_seconds']:.2f} s"
        + (
            f" ({s['sim_packets'] / s['wall_seconds']:,.0f} packets/s)"
            if s["wall_seconds"] > 0
            else ""
        )
    )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
