"""``tcplab trace``: tcptrace-style analysis of packet captures, from either engine or anywhere.

    tcplab trace CAPTURE [CAPTURE ...] [--out DIR] [--from S] [--to S] [--graphs png,svg]
                 [--conn N,...] [--json]

Reads pcap and pcapng (Ethernet, Linux cooked SLL/SLL2, raw IP, BSD loopback; IPv4 and IPv6),
streaming, with the Rust analyzer (crates/tcplab-trace). For every TCP connection and direction
it reports what ``tcptrace -l -r`` reports (packets, data and unique bytes, retransmitted segments
and bytes, out-of-order segments, duplicate ACKs, SACK blocks, MSS and window-scale options,
advertised window min/avg/max, RTT samples min/avg/max/sd, throughput) and the anomalies the
studies looked for: segments sent beyond the receiver's advertised window, SACK blocks that cannot
be valid, zero-window probes.

Without ``--out`` a readable table (or, with ``--json``, the JSON report) goes to standard output.
With ``--out DIR`` the directory receives ``report.json``, ``connections.csv`` (one row per
connection direction) and ``graphs/`` (time-sequence, throughput, RTT and outstanding-data graphs
in tcptrace's conventions, see :mod:`tcplab.trace_plots`). The directory is written atomically:
built in a temporary sibling and renamed, so an error leaves nothing behind.

Several captures (say the simulator's and the kernel engine's capture of one scenario) are
analysed alike; their graphs are also overlaid connection by connection (``graphs/compare_*``),
times taken from each connection's first packet.

``--from``/``--to`` restrict the graphs to a time window, in seconds since the first packet of
each capture; the statistics always cover the whole capture.

Exit status: 0 success; 2 unreadable or malformed capture (the message names the byte offset),
bad option or output directory; 1 the Rust core lacks the trace functions.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import EngineUnavailable, UserError, run_command

__all__ = [
    "TraceError",
    "add_subcommand",
    "analyze",
    "format_table",
    "main_trace",
    "rows",
    "write_csv",
    "write_outputs",
]

#: Graph formats ``--graphs`` accepts.
GRAPH_FORMATS = ("png", "svg")
#: Connections graphed by default (those with the most unique bytes), to keep a capture of
#: thousands of connections from producing thousands of files.
DEFAULT_MAX_GRAPHED = 20


class TraceError(UserError, ValueError):
    """A capture cannot be read or analysed; the message names the file and byte offset."""


def _core() -> Any:
    try:
        from . import _core as core
    except ImportError as e:  # pragma: no cover - depends on the build
        raise EngineUnavailable(f"the tcplab Rust core is not built ({e})") from e
    if not hasattr(core, "analyze_capture"):
        raise EngineUnavailable(
            "this build of tcplab._core has no analyze_capture; rebuild it (maturin develop)"
        )
    return core


def analyze(
    path: str | Path,
    time_from: float | None = None,
    time_to: float | None = None,
    graphs: bool = False,
) -> dict[str, Any]:
    """Analyse the capture at *path*; returns the report dict (see ``tcplab._core``).

    With *graphs* each direction carries a ``series`` dict for the graphs, restricted to
    ``[time_from, time_to]`` seconds after the capture's first packet. Raises
    :class:`TraceError` for a missing, unreadable or malformed file.
    """
    if time_from is not None and time_to is not None and time_to < time_from:
        raise TraceError(f"time window ends ({time_to} s) before it starts ({time_from} s)")
    core = _core()
    try:
        rep: dict[str, Any] = core.analyze_capture(str(path), time_from, time_to, graphs)
    except (OSError, ValueError) as e:
        raise TraceError(str(e)) from e
    rep["file"] = str(path)
    return rep


# --------------------------------------------------------------------------------------------
# Tables and CSV

#: Columns identifying a row of connections.csv, before the per-direction statistics.
ID_COLUMNS = ("capture", "conn", "dir", "src", "dst")


def _dir_fields(rep: dict[str, Any]) -> list[str]:
    for c in rep["connections"]:
        return [k for k in c["a2b"] if k != "series"]
    return []


def rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per connection direction: ``ID_COLUMNS`` then the direction's statistics."""
    out = []
    for c in report["connections"]:
        for d, (src, dst) in (("a2b", (c["a"], c["b"])), ("b2a", (c["b"], c["a"]))):
            row: dict[str, Any] = {
                "capture": report.get("file", ""),
                "conn": c["index"],
                "dir": d,
                "src": src,
                "dst": dst,
            }
            row.update({k: v for k, v in c[d].items() if k != "series"})
            out.append(row)
    return out


def write_csv(reports: Sequence[dict[str, Any]], f: io.TextIOBase | Any) -> None:
    """Write the rows of every report as CSV (empty cells for missing values)."""
    fields: list[str] = []
    for r in reports:
        fields = _dir_fields(r)
        if fields:
            break
    w = csv.DictWriter(f, fieldnames=[*ID_COLUMNS, *fields], lineterminator="\n")
    w.writeheader()
    for r in reports:
        for row in rows(r):
            w.writerow({k: ("" if v is None else v) for k, v in row.items()})


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _opts(d: dict[str, Any]) -> str:
    parts = []
    if d["mss"] is not None:
        parts.append(f"mss {d['mss']}")
    if d["window_scale"] is not None:
        parts.append(f"ws {d['window_scale']}")
    if d["sack_permitted"]:
        parts.append("sack")
    if d["timestamps"]:
        parts.append("ts")
    return " ".join(parts) or "-"


def _rtt(d: dict[str, Any]) -> str:
    if not d["rtt_samples"]:
        return "-"
    sd = "-" if d["rtt_stdev_ms"] is None else f"{d['rtt_stdev_ms']:.1f}"
    return (
        f"{d['rtt_min_ms']:.1f}/{d['rtt_avg_ms']:.1f}/{d['rtt_max_ms']:.1f}/{sd}"
        f" ({d['rtt_samples']})"
    )


def _window(d: dict[str, Any]) -> str:
    return f"{d['win_min']:,}/{d['win_avg']:,.0f}/{d['win_max']:,}"


def _sack(d: dict[str, Any]) -> str:
    if not d["sack_pkts"]:
        return "-"
    return f"{d['sack_pkts']:,} pkts, {d['sack_blocks']:,} blocks, {d['dsack_pkts']:,} D-SACK"


def _invalid_sack(d: dict[str, Any]) -> str:
    n = d["invalid_sack_blocks"]
    if not n:
        return "0"
    parts = [
        (d["invalid_sack_reversed"], "reversed"),
        (d["invalid_sack_below_ack"], "below ack"),
        (d["invalid_sack_beyond_sent"], "beyond sent"),
        (d["invalid_sack_unsent"], "unsent"),
    ]
    return f"{n:,} (" + ", ".join(f"{k:,} {what}" for k, what in parts if k) + ")"


def _violations(d: dict[str, Any]) -> str:
    if not d["window_checked"]:
        return "not checked" if d["data_pkts"] else "-"
    return f"{d['window_violations']:,} ({d['window_violation_bytes']:,} bytes)"


def _throughput(d: dict[str, Any]) -> str:
    b = d["throughput_bps"]
    return "-" if b is None else f"{b / 1e6:,.3f} Mbit/s"


#: (label, function of a direction dict) for the readable table.
_TABLE = (
    ("packets", lambda d: _fmt(d["packets"])),
    ("data packets / bytes", lambda d: f"{d['data_pkts']:,} / {d['data_bytes']:,}"),
    ("unique bytes", lambda d: _fmt(d["unique_bytes"])),
    ("retransmitted pkts / bytes", lambda d: f"{d['rexmt_pkts']:,} / {d['rexmt_bytes']:,}"),
    ("out-of-order pkts", lambda d: _fmt(d["out_of_order_pkts"])),
    ("pure ACKs", lambda d: _fmt(d["pure_acks"])),
    ("dup ACKs received", lambda d: _fmt(d["dup_acks"])),
    ("SACKs sent", _sack),
    ("invalid SACK blocks", _invalid_sack),
    ("beyond receiver window", _violations),
    ("zero-window probes", lambda d: _fmt(d["zwnd_probe_pkts"])),
    ("zero windows advertised", lambda d: _fmt(d["win_zero_adv"])),
    ("SYN options", _opts),
    ("adv. window min/avg/max", _window),
    ("RTT ms min/avg/max/sd (n)", _rtt),
    ("throughput", _throughput),
)


def format_table(report: dict[str, Any]) -> str:
    """A readable per-connection table, tcptrace's ``a->b`` / ``b->a`` columns side by side."""
    cap = report["capture"]
    lines = [
        f"{report.get('file', 'capture')}: {report['format']}, {cap['records']:,} records, "
        f"{cap['tcp_packets']:,} TCP packets, {len(report['connections']):,} connections"
        + (f", {cap['malformed']:,} malformed" if cap["malformed"] else "")
        + (f", {cap['fragments']:,} fragments skipped" if cap["fragments"] else "")
    ]
    for c in report["connections"]:
        state = "complete" if c["complete"] else ("reset" if c["reset"] else "incomplete")
        lines.append("")
        lines.append(
            f"conn {c['index']}: {c['a']} <-> {c['b']}  ({state}, {c['packets']:,} packets, "
            f"{c['duration_s']:.3f} s from {c['first_s']:.3f} s)"
        )
        a2b, b2a = c["a2b"], c["b2a"]
        cells = [(label, f(a2b), f(b2a)) for label, f in _TABLE]
        w0 = max(len(x[0]) for x in cells)
        w1 = max(len("a->b"), *(len(x[1]) for x in cells))
        lines.append(f"  {'':<{w0}}  {'a->b':>{w1}}  {'b->a'}")
        for label, x, y in cells:
            lines.append(f"  {label:<{w0}}  {x:>{w1}}  {y}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Output directory


def _json_default(o: Any) -> Any:  # pragma: no cover - every value is a JSON type
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _strip_series(rep: dict[str, Any]) -> dict[str, Any]:
    out = dict(rep)
    conns = []
    for c in rep["connections"]:
        c2 = dict(c)
        for d in ("a2b", "b2a"):
            c2[d] = {k: v for k, v in c[d].items() if k != "series"}
        conns.append(c2)
    out["connections"] = conns
    return out


def _graphed(rep: dict[str, Any], conns: Sequence[int] | None, limit: int) -> list[int]:
    """Indices of the connections to graph: those asked for, else the biggest by data."""
    if conns is not None:
        have = {c["index"] for c in rep["connections"]}
        missing = [i for i in conns if i not in have]
        if missing:
            raise TraceError(
                f"{rep.get('file')}: no connection {', '.join(map(str, missing))} "
                f"(it has {len(have)})"
            )
        return list(conns)
    with_data = [
        c
        for c in rep["connections"]
        if c["a2b"]["data_pkts"] or c["b2a"]["data_pkts"] or c["a2b"]["syn_pkts"]
    ]
    with_data.sort(key=lambda c: -(c["a2b"]["unique_bytes"] + c["b2a"]["unique_bytes"]))
    return sorted(c["index"] for c in with_data[:limit])


def write_outputs(
    reports: Sequence[dict[str, Any]],
    out: str | Path,
    formats: Sequence[str] = ("png",),
    conns: Sequence[int] | None = None,
    max_graphed: int = DEFAULT_MAX_GRAPHED,
) -> Path:
    """Write ``report.json``, ``connections.csv`` and ``graphs/`` into *out*, atomically.

    *reports* come from :func:`analyze` (with ``graphs=True`` when *formats* is not empty).
    Returns the absolute output path.
    """
    from .results import write_atomic

    def fill(d: Path) -> None:
        body: Any
        if len(reports) == 1:
            body = _strip_series(reports[0])
        else:
            body = {"captures": [_strip_series(r) for r in reports]}
        (d / "report.json").write_text(
            json.dumps(body, indent=1, allow_nan=False, default=_json_default) + "\n"
        )
        with open(d / "connections.csv", "w", newline="") as f:
            write_csv(reports, f)
        if formats:
            from . import trace_plots

            g = d / "graphs"
            g.mkdir()
            labels = _labels([r["file"] for r in reports])
            chosen = [_graphed(r, conns, max_graphed) for r in reports]
            for r, label, idx in zip(reports, labels, chosen, strict=True):
                prefix = "" if len(reports) == 1 else f"{label}_"
                for c in r["connections"]:
                    if c["index"] in idx:
                        trace_plots.connection_graphs(c, g, formats, prefix=prefix, title=label)
            if len(reports) > 1:
                common = sorted(set.intersection(*(set(x) for x in chosen)))
                for i in common:
                    pairs = [
                        (label, next(c for c in r["connections"] if c["index"] == i))
                        for r, label in zip(reports, labels, strict=True)
                    ]
                    trace_plots.compare_graphs(pairs, g, formats, i)

    return write_atomic(Path(out), fill)


def _labels(files: Sequence[str]) -> list[str]:
    """Short distinct labels for captures: file stems, numbered if they repeat."""
    stems = [Path(f).stem or "capture" for f in files]
    seen: dict[str, int] = {}
    out = []
    for s in stems:
        seen[s] = seen.get(s, 0) + 1
        out.append(s if stems.count(s) == 1 else f"{s}{seen[s]}")
    return out


# --------------------------------------------------------------------------------------------
# Command line


def _formats(text: str) -> list[str]:
    if text.strip().lower() in ("", "none"):
        return []
    fs = [x.strip().lower() for x in text.split(",") if x.strip()]
    bad = [x for x in fs if x not in GRAPH_FORMATS]
    if bad:
        raise UserError(f"--graphs: unknown format(s) {', '.join(bad)}; use png, svg or none")
    return list(dict.fromkeys(fs))


def _conns(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--conn: expected connection numbers like 0,2, got {text!r}") from None
    if not out or any(i < 0 for i in out):
        raise UserError(f"--conn: expected connection numbers like 0,2, got {text!r}")
    return out


def add_subcommand(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``trace`` to the ``tcplab`` command's subparsers; dispatch with :func:`main_trace`."""
    t = subparsers.add_parser(
        "trace",
        help="tcptrace-style analysis and graphs of pcap/pcapng captures",
        description=(
            "Per-connection, per-direction TCP statistics of pcap/pcapng captures (tcptrace's, "
            "plus segments beyond the advertised window, invalid SACK blocks and zero-window "
            "probes), with time-sequence, throughput, RTT and outstanding-data graphs."
        ),
    )
    t.add_argument("captures", nargs="+", metavar="CAPTURE", help="pcap or pcapng file(s)")
    t.add_argument(
        "--out",
        metavar="DIR",
        help="write report.json, connections.csv and graphs/ into DIR (must not exist or be empty)",
    )
    t.add_argument(
        "--from",
        dest="time_from",
        type=float,
        metavar="S",
        help="graphs start S seconds after the capture's first packet",
    )
    t.add_argument(
        "--to", dest="time_to", type=float, metavar="S", help="graphs end S seconds after it"
    )
    t.add_argument(
        "--graphs",
        default="png",
        metavar="FMT",
        help="graph formats with --out: png, svg, png,svg or none (default png)",
    )
    t.add_argument(
        "--conn",
        metavar="N,...",
        help=f"connections to graph (default: the {DEFAULT_MAX_GRAPHED} carrying most data)",
    )
    t.add_argument("--json", action="store_true", help="print the JSON report, not the table")
    t.set_defaults(func=main_trace)
    return t


def main_trace(args: argparse.Namespace) -> int:
    """Run ``tcplab trace``; returns the exit status (errors are printed, not raised)."""
    return run_command(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    for name in ("time_from", "time_to"):
        v = getattr(args, name)
        if v is not None and not v >= 0:
            raise UserError(f"--{name[5:]} must be a time ≥ 0 s, got {v}")
    formats = _formats(args.graphs) if args.out else []
    conns = _conns(args.conn)
    if args.out:
        from .results import check_out

        check_out(args.out)  # fail before a long analysis
    reports = [
        analyze(p, args.time_from, args.time_to, graphs=bool(formats)) for p in args.captures
    ]
    if args.out:
        out = write_outputs(reports, args.out, formats, conns)
        if not args.json:
            for r in reports:
                print(format_table(r))
            print(f"results: {out}")
    if args.json:
        body = (
            _strip_series(reports[0])
            if len(reports) == 1
            else {"captures": [_strip_series(r) for r in reports]}
        )
        print(json.dumps(body, indent=1, allow_nan=False))
    elif not args.out:
        print("\n\n".join(format_table(r) for r in reports))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m tcplab.trace CAPTURE ...``."""
    p = argparse.ArgumentParser(prog="tcplab")
    add_subcommand(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(["trace", *(sys.argv[1:] if argv is None else argv)])
    return main_trace(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
