"""Campaign executors, measured in one run (README "Campaigns on Ray").

Prints, for the same work on this machine:

* a sweep of N short trials (1 s of simulated time each, default N = 1000): wall seconds on the
  local executor (1 and 2 threads) and on Ray with 1 and 2 workers; the Ray 2-vs-1 speed-up;
* a set of long trials (about 1 s of engine time each): Ray's per-trial overhead against the local
  executor with the same parallelism (ratio of wall times − 1);
* ``tcplab reproduce all --quick`` on the local executor and on Ray with 1 and 2 workers.

Each Ray measurement starts its own local Ray instance in a fresh process, outside the timed
part (`ray.init` takes seconds); the timed part is the trials and the assembly of results, with
no writing. Results are checked identical across executors.

    python3 benches/campaign.py [--sweep-trials 1000] [--long-trials 24] [--parts sweep,long]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import json, sys, time, hashlib
    from tcplab import executors, sweep
    kind, executor, jobs, arg = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if executor == "ray":
        ex = executors.RayExecutor(jobs=jobs)
        ex._init()  # start Ray outside the timed part
    else:
        ex = executors.LocalExecutor(jobs)
    if kind == "reproduce":
        import tempfile, pathlib
        from tcplab.reproduce import reproduce
        out = pathlib.Path(tempfile.mkdtemp()) / "r"
        t = time.perf_counter()
        reproduce("all", out, quick=True, executor=ex)
        wall = time.perf_counter() - t
        h = hashlib.sha256()  # every table of ours and every comparison (not the timings)
        for f in sorted(out.rglob("*.csv")):
            if f.name != "summary.csv":
                h.update(f.read_bytes())
        digest = h.hexdigest()[:12]
    else:
        loaded = sweep.load_points(arg)
        t = time.perf_counter()
        res = sweep.run_sweep(loaded, executor=ex)
        wall = time.perf_counter() - t
        digest = hashlib.sha256(
            json.dumps([r.summary["aggregate"]["goodput_bps_trials"] for r in res.results]).encode()
        ).hexdigest()[:12]
    print(json.dumps({"wall": wall, "digest": digest}))
    """
)

SHORT = """
name = "short"
duration = "1s"
seed = 3
trials = {trials}
[path]
rate = "50Mbit"
rtt = "40ms"
loss = 0.001
[[flow]]
cca = "cubic"
"""

LONG = """
name = "long"
duration = "{seconds}s"
seed = 3
trials = {trials}
[path]
rate = "1Gbit"
rtt = "20ms"
[[flow]]
cca = "cubic"
"""


def child(kind: str, executor: str, jobs: int, arg: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, executor, str(jobs), arg],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep-trials", type=int, default=1000)
    ap.add_argument("--long-trials", type=int, default=24)
    ap.add_argument("--long-seconds", type=float, default=60.0, help="simulated s per long trial")
    ap.add_argument(
        "--parts", default="sweep,long,reproduce", help="comma-separated subset of the three"
    )
    a = ap.parse_args()
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp(prefix="tcplab-bench-"))
    short = d / "short.toml"
    short.write_text(SHORT.format(trials=a.sweep_trials))
    long = d / "long.toml"
    long.write_text(LONG.format(trials=a.long_trials, seconds=a.long_seconds))
    rows = []

    def measure(label: str, kind: str, arg: str) -> None:
        r = {
            (ex, j): child(kind, ex, j, arg)
            for ex, j in (("local", 1), ("local", 2), ("ray", 1), ("ray", 2))
        }
        digests = {v["digest"] for v in r.values()}
        w = {k: v["wall"] for k, v in r.items()}
        rows.append(
            {
                "work": label,
                "local_1": w[("local", 1)],
                "local_2": w[("local", 2)],
                "ray_1": w[("ray", 1)],
                "ray_2": w[("ray", 2)],
                "ray_speedup_2v1": w[("ray", 1)] / w[("ray", 2)],
                "ray_overhead_1": w[("ray", 1)] / w[("local", 1)] - 1,
                "ray_overhead_2": w[("ray", 2)] / w[("local", 2)] - 1,
                "identical": len(digests) == 1,
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr)

    parts = a.parts.split(",")
    if "sweep" in parts:
        measure(f"sweep, {a.sweep_trials} trials of 1 s simulated", "sweep", str(short))
    if "long" in parts:
        measure(f"{a.long_trials} trials of {a.long_seconds:g} s at 1 Gbit/s", "sweep", str(long))
    if "reproduce" in parts:
        measure("reproduce all --quick", "reproduce", "")
    print(
        "| work | local 1 thread | local 2 | Ray 1 worker | Ray 2 | Ray 2 vs 1 "
        "| Ray overhead (1 / 2)"
        " | identical |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['work']} | {r['local_1']:.1f} s | {r['local_2']:.1f} s | {r['ray_1']:.1f} s | "
            f"{r['ray_2']:.1f} s | {r['ray_speedup_2v1']:.2f}× | "
            f"{r['ray_overhead_1'] * 100:+.1f} % / {r['ray_overhead_2'] * 100:+.1f} % | "
            f"{'yes' if r['identical'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()
