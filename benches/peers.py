"""Benchmark tcplab against the peer simulators in one run (README "Performance").

Runs `tcplab bench --json` (s1, s2, s3) and the same three scenarios on ns-2.35 with TCP-Linux
agents (../shared/peers/ns2_dumbbell.tcl; Debian package `ns2`), alternating rounds so machine
noise hits both alike, and prints a Markdown table of best-of-N wall seconds and delivered
packets per wall second, with tcplab's ratio over ns-2. ns-3 (PyPI `ns3`) is optional
(`--ns3 PYTHON`): it takes about a minute on s1/s3 and is stopped after `--ns3-timeout` on s2,
where its SACK recovery turns quadratic.

    python3 benches/peers.py [--rounds 3] [--peers ../shared/peers] [--ns3 /tmp/ns3-venv/bin/python]
        [--runjson LABEL=PATH ...]

`--runjson before=/tmp/runjson-old` also times a build of the `runjson` example (e.g. one made
from an earlier commit) on the same three configurations in every round, as an extra column:
engine before/after a change, measured in the same run as ns-2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# name: (flows, cc for ns-2, bw Mbit/s, rtt ms, queue, duration s); matches tcplab/bench.py.
SCENARIOS = {
    "s1": (1, "cubic", 100, 50, "bdp", 60),
    "s2": (2, "cubic", 1000, 180, "64", 100),
    "s3": (8, "reno", 100, 100, "bdp", 60),
}
NS3_TCP = {"cubic": "TcpCubic", "reno": "TcpNewReno"}


def tcplab_bench() -> dict[str, dict]:
    out = subprocess.run(
        [sys.executable, "-m", "tcplab", "bench", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {r["name"]: r for r in json.loads(out)}


CONFIGS = """
import json, sys
from tcplab import bench, scenario
from tcplab.catalog import default_catalog
from tcplab.seeds import trial_seed
out = {}
for name, b in bench.BENCHMARKS.items():
    sc = scenario.load(bench.bench_scenario(b), catalog=default_catalog())
    out[name] = sc.config(trial_seed(bench.SEED, 0))
json.dump(out, sys.stdout)
"""


def bench_configs(dir: Path) -> dict[str, Path]:
    """The normalized configs `tcplab bench` runs, written to *dir* (for `runjson`)."""
    out = subprocess.run(
        [sys.executable, "-c", CONFIGS], check=True, capture_output=True, text=True
    ).stdout
    paths = {}
    for name, cfg in json.loads(out).items():
        paths[name] = dir / f"{name}.json"
        paths[name].write_text(json.dumps(cfg))
    return paths


def runjson(binary: str, config: Path) -> dict:
    out = subprocess.run([binary, str(config)], check=True, capture_output=True, text=True).stdout
    vals = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in ("sim_packets", "run_wall_s"):
            vals[parts[0]] = float(parts[1])
    if "run_wall_s" not in vals:
        raise RuntimeError(f"{binary} printed no run_wall_s line (an older runjson?)")
    return {"wall_seconds": vals["run_wall_s"], "data_packets": int(vals["sim_packets"])}


def result_line(text: str) -> dict:
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError("peer printed no RESULT line:\n" + text[-2000:])


def ns2(peers: Path, name: str) -> dict:
    flows, cc, bw, rtt, q, dur = SCENARIOS[name]
    args = ["ns", str(peers / "ns2_dumbbell.tcl"), str(flows), cc, str(bw), str(rtt), q, str(dur)]
    r = result_line(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return {"wall_seconds": r["wall_run_s"], "data_packets": r["data_pkts_delivered"]}


def ns3(python: str, peers: Path, name: str, timeout: float) -> dict | None:
    flows, cc, bw, rtt, q, dur = SCENARIOS[name]
    args = [
        python,
        str(peers / "ns3_dumbbell.py"),
        "--flows", str(flows), "--tcp", NS3_TCP[cc], "--bw-mbps", str(bw),
        "--rtt-ms", str(rtt), "--queue", q, "--duration", str(dur),
    ]  # fmt: skip
    try:
        out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    r = result_line(out.stdout)
    return {"wall_seconds": r["wall_run_s"], "data_packets": r["data_pkts_delivered"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--peers", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "peers"
    )
    ap.add_argument("--ns3", metavar="PYTHON", help="python of a venv with the PyPI ns3 package")
    ap.add_argument("--ns3-timeout", type=float, default=300.0)
    ap.add_argument(
        "--runjson",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="also time this build of the runjson example (repeatable)",
    )
    args = ap.parse_args()
    extra = []
    for spec in args.runjson:
        label, sep, path = spec.partition("=")
        if not sep or not label or not Path(path).is_file():
            print(f"--runjson {spec!r}: give LABEL=PATH of a runjson binary", file=sys.stderr)
            return 2
        extra.append((label, path))
    tmp = tempfile.TemporaryDirectory()
    configs = bench_configs(Path(tmp.name)) if extra else {}
    if shutil.which("ns") is None:
        print("ns-2 is not installed: apt-get install -y ns2", file=sys.stderr)
        return 2
    best: dict[str, dict[str, dict]] = {"tcplab": {}, "ns-2.35": {}, "ns-3.44": {}}
    for label, _ in extra:
        best[label] = {}

    def keep(sim: str, name: str, r: dict | None) -> None:
        if r is None:
            return
        old = best[sim].get(name)
        if old is None or r["wall_seconds"] < old["wall_seconds"]:
            best[sim][name] = r

    for _ in range(args.rounds):
        for name, r in tcplab_bench().items():
            keep("tcplab", name, r)
        for name in SCENARIOS:
            keep("ns-2.35", name, ns2(args.peers, name))
        for label, path in extra:
            for name in SCENARIOS:
                keep(label, name, runjson(path, configs[name]))
    if args.ns3:
        for name in SCENARIOS:
            r = ns3(args.ns3, args.peers, name, args.ns3_timeout)
            keep("ns-3.44", name, r)
            if r is None:
                best["ns-3.44"][name] = {"timeout": args.ns3_timeout}

    print(
        f"best of {args.rounds} rounds (ns-3: one run), wall seconds of the run loop; "
        "delivered data packets per wall second"
    )
    print()
    labels = [label for label, _ in extra]
    head = ["tcplab", "ns-2.35", "ns-3.44", *labels]
    print(
        "| scenario | "
        + " | ".join(head)
        + " | tcplab ÷ ns-2 (packets/s) |"
        + "".join(f" {lb} ÷ ns-2 |" for lb in labels)
    )
    print("|---|" + "---|" * (len(head) + 1 + len(labels)))
    for name in SCENARIOS:
        cells = []
        for sim in head:
            r = best[sim].get(name)
            if r is None:
                cells.append("not run")
            elif "timeout" in r:
                cells.append(f"> {r['timeout']:.0f} s (stopped)")
            else:
                pps = r["data_packets"] / r["wall_seconds"]
                cells.append(f"{r['wall_seconds']:.2f} s ({pps / 1e3:,.0f} k/s)")
        n2 = best["ns-2.35"][name]
        ratios = []
        for sim in ("tcplab", *labels):
            t = best[sim][name]
            r = (t["data_packets"] / t["wall_seconds"]) / (n2["data_packets"] / n2["wall_seconds"])
            ratios.append(f"{r:.2f}×")
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
