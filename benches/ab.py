"""Byte-identity check of the simulator: run the 25 engine configurations in benches/ab/ with
the `runjson` example and write or compare its output (the wall-time line left out).

    cargo build --release -p tcplab-sim --example runjson
    python3 benches/ab.py --out /tmp/ab-before            # on the old code
    python3 benches/ab.py --out /tmp/ab-after --against /tmp/ab-before

The configurations are engine JSON (what `tcplab run` hands the engine): 21 of 2-30 s (c01-c21:
Reno, NewReno, CUBIC, BIC, HSTCP, FAST; one to four flows, UDP beside TCP, random loss, the
generic stack's recovery and Linux 2.x's rate-halving, paced NewReno) and four long Iwanaga
trials with TSO (i1*: one CUBIC flow, 100 s; i5*: two flows, CUBIC or Compound, 300 s). None has
a linux-6 sender. A refactor that is meant to change no result must leave every output
byte-identical (README, "Performance"); benches/fingerprint.py covers the Python side.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(HERE.parent / "target/release/examples/runjson"))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--against", type=Path, help="a previous --out to compare with")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    differ = []
    for cfg in sorted((HERE / "ab").glob("*.json")):
        res = subprocess.run([a.bin, str(cfg)], capture_output=True, text=True, check=True)
        text = "".join(ln + "\n" for ln in res.stdout.splitlines() if "run_wall_s" not in ln)
        (a.out / f"{cfg.stem}.txt").write_text(text)
        if a.against is not None:
            old = a.against / f"{cfg.stem}.txt"
            if not old.exists() or old.read_text() != text:
                differ.append(cfg.stem)
    if a.against is not None:
        n = len(list((HERE / "ab").glob("*.json")))
        print(
            f"{n - len(differ)}/{n} identical"
            + (f"; differ: {', '.join(differ)}" if differ else "")
        )
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
