"""Fingerprints of simulator results, for refactors that must not change behaviour.

Runs a fixed set of short simulations across stack personalities and path conditions, the
shipped behaviour-script suites and the benchmark scenarios, and prints one SHA-256 per
configuration of what the simulator produced (per-flow summary, time series, queue series,
script pass tables, benchmark packet counts). Nothing is compared here: run it before and after
a change and diff the two outputs.

    .venv/bin/python benches/fingerprint.py > before.txt    # or: ... fingerprint.py LABEL ...
    ... change ...
    .venv/bin/python benches/fingerprint.py > after.txt
    diff before.txt after.txt
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

PY = sys.executable

# (label, scenario, --set overrides). Short durations; fine sampling so the time series show
# every difference in cwnd, snd_una, retransmits, ... at 100 ms resolution.
RUNS: list[tuple[str, str, list[str]]] = [
    ("quickstart-1gbit", "quickstart", ["path.rate=1Gbit", "duration=4s"]),
    ("quickstart-100m", "quickstart", ["duration=8s"]),
    ("reno-loss-nosack", "random-loss", ["duration=20s", "trials=2"]),
    (
        "linux-6-loss-sack",
        "random-loss",
        ["duration=20s", "trials=2", "tcp.sack=true", "stack=linux-6", "flow.0.cca=cubic"],
    ),
    (
        "linux-6-bbr-loss",
        "random-loss",
        ["duration=15s", "tcp.sack=true", "stack=linux-6", "flow.0.cca=bbr"],
    ),
    (
        "linux-6-bbr-1gbit",
        "quickstart",
        ["path.rate=1Gbit", "duration=4s", "stack=linux-6", "flow.0.cca=bbr"],
    ),
    ("windows-xp-loss", "random-loss", ["duration=20s", "stack=windows-xp"]),
    ("freebsd-5.3-loss", "random-loss", ["duration=20s", "stack=freebsd-5.3", "path.loss=3%"]),
    ("openbsd-3.5-loss", "random-loss", ["duration=20s", "stack=openbsd-3.5"]),
    ("linux-2.4.27-loss", "random-loss", ["duration=20s", "stack=linux-2.4.27", "path.loss=2%"]),
    ("linux-2.6.39-overflow", "quickstart", ["duration=10s", "stack=linux-2.6.39"]),
    ("linux-2.6.16-bic", "quickstart", ["duration=8s", "stack=linux-2.6.16", "path.queue=0.3bdp"]),
    ("windows-7-loss", "random-loss", ["duration=15s", "stack=windows-7"]),
    ("fairness", "fairness", ["duration=10s"]),
    ("udp-cross", "udp-cross", ["duration=10s", "flow.1.start=3s", "flow.1.stop=7s"]),
    ("reverse-path", "reverse-path", ["duration=10s"]),
    ("J2-5pct-both", "studies/jansen2005/J2", ["duration=20s", "trials=2"]),
    ("J4", "studies/jansen2005/J4", ["duration=10s", "trials=1"]),
    # [[background]] traffic: TCP mice from reused pool slots and on-off UDP (added 2026-11-26).
    ("S2-background", "studies/slac2003/S2", ["duration=20s", "trials=1"]),
]

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "python" / "tcplab" / "scenarios" / "scripts"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def table_hash(path: Path) -> str:
    t = pq.read_table(path)
    return sha(t.to_pandas().to_csv(index=False).encode())


def run_one(label: str, scenario: str, sets: list[str]) -> str:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out"
        cmd = [
            PY,
            "-m",
            "tcplab",
            "run",
            scenario,
            "--out",
            str(out),
            "--no-record",
            "--quiet",
            "--set",
            "interval=0.1s",
        ]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return f"{label}: FAILED rc={r.returncode} {r.stderr.strip()[-300:]}"
        parts = []
        for summary in sorted(out.rglob("summary.json")):
            s = json.loads(summary.read_text())
            keep = {k: s[k] for k in ("flows", "groups", "seeds") if k in s}
            parts.append(f"summary:{sha(json.dumps(keep, sort_keys=True).encode())}")
        for pqf in sorted(out.rglob("*.parquet")):
            parts.append(f"{pqf.relative_to(out)}:{table_hash(pqf)}")
        return f"{label}: " + " ".join(parts)


def main() -> None:
    only = set(sys.argv[1:])  # optional: run only these labels
    for label, scenario, sets in RUNS:
        if not only or label in only:
            print(run_one(label, scenario, sets), flush=True)
    if only:
        return
    r = subprocess.run([PY, "-m", "tcplab", "script", "--table"], capture_output=True, text=True)
    print(f"script-table: rc={r.returncode} {sha(r.stdout.encode())}", flush=True)
    # Every segment each shipped script makes its stack send, with times (--trace).
    for stack_dir in sorted(p for p in SCRIPTS.iterdir() if p.is_dir()):
        for pkt in sorted(stack_dir.glob("*.pkt")):
            # Relative to the checkout: the trace's last line names the script, and hashes
            # must not depend on where the tree is (a worktree, a CI clone).
            r = subprocess.run(
                [PY, "-m", "tcplab", "script", "--trace", "--stack", stack_dir.name,
                 str(pkt.relative_to(ROOT))],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )  # fmt: skip
            print(
                f"trace-{stack_dir.name}/{pkt.stem}: rc={r.returncode} {sha(r.stdout.encode())}",
                flush=True,
            )
    r = subprocess.run([PY, "-m", "tcplab", "bench", "--json"], capture_output=True, text=True)
    rows = json.loads(r.stdout)
    print("bench-packets: " + " ".join(f"{x['name']}={x['data_packets']}" for x in rows))


if __name__ == "__main__":
    main()
