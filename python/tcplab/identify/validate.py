"""Validation of ``tcplab identify`` on simulated captures whose truth is known.

``python -m tcplab.identify.validate [--paths N] [--jobs J] [--out FILE.json]``

Test set: every personality with its default CCA, and every CCA on linux-6, each captured on
N test paths drawn from a fixed random generator (seed 20261125): rate log-uniform in
4-60 Mbit/s, base RTT log-uniform in 12-150 ms, buffer uniform in 0.3-2 BDP, random loss 0
(half the paths) or log-uniform in 1e-4-3e-3, and background traffic on some paths (UDP CBR at
10-25 % of the rate, or a window-limited CUBIC flow of 64 KB). Captures are taken near the sender,
every third path near the receiver. The paths are off the reference grid, the seeds (1000 + i)
are not reference seeds, and the references never contain background traffic. Each capture is
20 s long.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path as FsPath
from typing import Any

import numpy as np

from . import references as R

SEED = 20261125


#: Seeds of the captures of the default test set are SEED_BASE + i; a ``--holdout H`` set draws
#: its paths from generator seed H and its capture seeds from HOLDOUT_SEED_BASE + 100 * (H % 1000)
#: + i, disjoint from the reference seeds (references.REF_SEEDS) and from the default set.
SEED_BASE = 1000
HOLDOUT_SEED_BASE = 200_000


def test_paths(n: int, holdout: int | None = None) -> list[dict[str, Any]]:
    """*n* test paths: the default (tuning) set, or with *holdout* a fresh set drawn from that
    generator seed (use it for final numbers: nothing was tuned on it)."""
    if holdout is not None and holdout == SEED:
        raise ValueError(f"--holdout {holdout}: that is the default set's seed; pick another")
    rng = np.random.default_rng(SEED if holdout is None else holdout)
    seed0 = SEED_BASE if holdout is None else HOLDOUT_SEED_BASE + 100 * (holdout % 1000)
    out = []
    for i in range(n):
        rate = float(10 ** rng.uniform(math.log10(4e6), math.log10(60e6)))
        rtt = float(10 ** rng.uniform(math.log10(0.012), math.log10(0.150)))
        buf = float(rng.uniform(0.3, 2.0))
        loss = 0.0 if rng.uniform() < 0.5 else float(10 ** rng.uniform(-4, math.log10(3e-3)))
        bgk = ("none", "udp", "none", "tcp")[i % 4]
        bg: list[dict[str, Any]] = []
        if bgk == "udp":
            bg = [{"name": "bg", "kind": "udp", "rate": f"{rate * rng.uniform(0.1, 0.25):.0f}bit"}]
        elif bgk == "tcp":
            bg = [{"name": "bg", "cca": "cubic", "window": "64KB", "start": "1s"}]
        out.append(
            {
                "i": i,
                "grid": {
                    "rate_bps": round(rate),
                    "rtt_s": round(rtt, 5),
                    "buffer_bdp": round(buf, 3),
                    "loss": round(loss, 6),
                    "duration_s": 20.0,
                },
                "background": bgk,
                "extra_flows": bg,
                "vantage": "receiver" if i % 3 == 2 else "sender",
                "seed": seed0 + i,
                "holdout": holdout,
            }
        )
    return out


def test_cases(n_paths: int, holdout: int | None = None) -> list[dict[str, Any]]:
    cands = R.candidates()
    stacks = [c for c in cands if c.stack != "linux-6" or c.cca == "cubic"]
    ccas = [c for c in cands if c.stack == "linux-6"]
    cases = []
    for p in test_paths(n_paths, holdout):
        for c in cands:
            cases.append(
                {
                    **p,
                    "stack": c.stack,
                    "cca": c.cca,
                    "in_stack_set": c in stacks,
                    "in_cca_set": c in ccas,
                }
            )
    return cases


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from .classify import identify

    cand = R.Candidate(case["stack"], case["cca"])
    with tempfile.TemporaryDirectory(prefix="tcplab-ident-val-") as d:
        doc = R.scenario_doc(cand, case["grid"], case["seed"], case["extra_flows"])
        kept = R._report_path(doc, case["vantage"])  # development: keep the test capture
        if kept is not None and kept.with_suffix(".pcap").exists():
            cap = kept.with_suffix(".pcap")
        else:
            cap = R.simulate_capture(doc, case["vantage"], FsPath(d))
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                tmp = kept.with_suffix(".pcap.tmp")
                tmp.write_bytes(cap.read_bytes())
                os.replace(tmp, kept.with_suffix(".pcap"))
        t0 = time.perf_counter()
        try:
            r = identify(cap)
        except ValueError as e:
            return {**case, "error": str(e)}
        wall = time.perf_counter() - t0
    return {
        **case,
        "top": r["candidates"][0]["label"],
        "top_stack": r["stack"][0]["stack"],
        "top_cca": r["cca"][0]["cca"],
        "confidence": r["candidates"][0]["confidence"],
        "cca_conf": r["cca"][0]["confidence"],
        "stack_conf": r["stack"][0]["confidence"],
        "inferred": r["path"],
        "snapped": r["grid"],
        "seconds": wall,
        "top3": [c["label"] for c in r["candidates"][:3]],
        "top3_cca": [c["cca"] for c in r["cca"][:3]],
        "top3_stack": [c["stack"] for c in r["stack"][:3]],
        **_set_fields(r),
        "features": r["features"],
    }


def _set_fields(r: dict[str, Any]) -> dict[str, Any]:
    """The indistinguishable set of an identify result (classify.indistinguishable)."""
    ind = r["indistinguishable"]
    return {
        "set": ind["candidates"],
        "set_cca": ind["cca"],
        "set_stack": ind["stack"],
        "set_reasons": ind["reasons"],
        "seed_noise": ind["seed_noise"],
    }


def confusion(rows: list[dict[str, Any]], truth: str, pred: str) -> tuple[list[str], np.ndarray]:
    labels = sorted({r[truth] for r in rows} | {r[pred] for r in rows})
    ix = {k: i for i, k in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), int)
    for r in rows:
        m[ix[r[truth]], ix[r[pred]]] += 1
    return labels, m


def _acc(rows: list[dict[str, Any]], t: str, p: str) -> str:
    if not rows:
        return "-"
    n = sum(r[t] == r[p] for r in rows)
    return f"{n}/{len(rows)} ({n / len(rows):.0%})"


def _bdp(r: dict[str, Any]) -> float:
    g = r.get("grid")
    if not g:
        return math.nan
    return float(g["rate_bps"] * g["rtt_s"] / (1500 * 8))


def _set_line(cca_rows: list[dict[str, Any]], st_rows: list[dict[str, Any]]) -> str:
    """Set accuracy (the truth inside the indistinguishable set) beside the mean set size, and
    how many answers were a single candidate: a set of every candidate would score 100 %, so
    the one is never read without the other, nor instead of the top-1."""
    parts = []
    for name, rows, t, k in (
        ("CCA", cca_rows, "cca", "set_cca"),
        ("personality", st_rows, "stack", "set_stack"),
    ):
        rs = [r for r in rows if k in r]
        if not rs:
            continue
        hit = sum(r[t] in r[k] for r in rs)
        size = float(np.mean([len(r[k]) for r in rs]))
        single = [r for r in rs if len(r[k]) == 1]
        ok1 = sum(r[t] in r[k] for r in single)
        parts.append(
            f"{name} set accuracy {hit}/{len(rs)} ({hit / len(rs):.1%}), mean set size "
            f"{size:.2f}, single answers {len(single)} ({ok1} right)"
        )
    return "indistinguishable sets (not top-1): " + ("; ".join(parts) or "-")


def markdown(rows: list[dict[str, Any]]) -> str:
    ok = [r for r in rows if "error" not in r]
    out = []
    cca_rows = [r for r in ok if r["in_cca_set"]]
    st_rows = [r for r in ok if r["in_stack_set"]]
    acc_c = np.mean([r["top_cca"] == r["cca"] for r in cca_rows]) if cca_rows else math.nan
    acc_s = np.mean([r["top_stack"] == r["stack"] for r in st_rows]) if st_rows else math.nan
    acc_sc = np.mean([r["top_cca"] == r["cca"] for r in st_rows]) if st_rows else math.nan
    out.append(
        f"CCA top-1 (13 CCAs on linux-6): {acc_c:.1%} of {len(cca_rows)}; personality top-1 "
        f"(17 personalities, default CCA): {acc_s:.1%} of {len(st_rows)} "
        f"(their CCA: {acc_sc:.1%}); "
        f"errors: {len(rows) - len(ok)}"
    )
    # reno and newreno are the same window rules in tcplab-cc (crates/tcplab-cc/src/reno.rs:
    # "the same window rules, named newreno"); on one personality their captures are identical
    same = {"newreno": "reno"}
    merged = [
        same.get(r["top_cca"], r["top_cca"]) == same.get(r["cca"], r["cca"]) for r in cca_rows
    ]
    if cca_rows:
        out.append(f"CCA top-1 counting reno = newreno: {np.mean(merged):.1%}")
    t3c = [r["cca"] in r["top3_cca"] for r in cca_rows if "top3_cca" in r]
    t3s = [r["stack"] in r["top3_stack"] for r in st_rows if "top3_stack" in r]
    if t3c or t3s:
        out.append(
            f"in the top 3: CCA {np.mean(t3c) if t3c else math.nan:.1%}, personality "
            f"{np.mean(t3s) if t3s else math.nan:.1%}"
        )
    out.append(_set_line(cca_rows, st_rows))
    for name, key in (("vantage", "vantage"), ("background", "background")):
        parts = []
        for v in sorted({str(r.get(key)) for r in ok}):
            sub_c = [r for r in cca_rows if str(r.get(key)) == v]
            sub_s = [r for r in st_rows if str(r.get(key)) == v]
            if sub_c or sub_s:
                parts.append(
                    f"{v}: CCA {_acc(sub_c, 'cca', 'top_cca')}, personality "
                    f"{_acc(sub_s, 'stack', 'top_stack')}"
                )
        out.append(f"by {name}: " + "; ".join(parts))
    buckets = []
    for lo, hi in ((0, 38), (38, 1e9)):
        sub_c = [r for r in cca_rows if lo <= _bdp(r) < hi]
        sub_s = [r for r in st_rows if lo <= _bdp(r) < hi]
        buckets.append(
            f"BDP {'<' if lo == 0 else '>='} 38 packets: CCA {_acc(sub_c, 'cca', 'top_cca')}, "
            f"personality {_acc(sub_s, 'stack', 'top_stack')}"
        )
    out.append("by path BDP: " + "; ".join(buckets))
    for title, sub, t, p in (
        ("CCA (linux-6 captures)", cca_rows, "cca", "top_cca"),
        ("personality (default-CCA captures)", st_rows, "stack", "top_stack"),
    ):
        labels, m = confusion(sub, t, p)
        out.append(f"\n{title}: rows truth, columns identified\n")
        short = [
            lb.replace("linux-", "L").replace("windows-", "W").replace("freebsd-", "FB")
            for lb in labels
        ]
        out.append("| truth \\ identified | " + " | ".join(short) + " |")
        out.append("|---" * (len(labels) + 1) + "|")
        for i, lb in enumerate(labels):
            cells = [str(v) if v else "·" for v in m[i]]
            out.append(f"| {lb} | " + " | ".join(cells) + " |")
    for title, sub, t, p, k in (
        ("CCA", cca_rows, "cca", "top_cca", "set_cca"),
        ("personality", st_rows, "stack", "top_stack", "set_stack"),
    ):
        sub = [r for r in sub if k in r]
        if not sub:
            continue
        out.append(f"\n{title} indistinguishable sets, per truth\n")
        out.append(
            "| truth | captures | top-1 right | truth in set | mean set size | most often with |"
        )
        out.append("|---|---|---|---|---|---|")
        for lb in sorted({r[t] for r in sub}):
            rs = [r for r in sub if r[t] == lb]
            with_: dict[str, int] = {}
            for r in rs:
                for o in r[k]:
                    if o != lb:
                        with_[o] = with_.get(o, 0) + 1
            common = ", ".join(
                f"{o} {n}" for o, n in sorted(with_.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            )
            out.append(
                f"| {lb} | {len(rs)} | {sum(r[p] == lb for r in rs)} | "
                f"{sum(lb in r[k] for r in rs)} | {np.mean([len(r[k]) for r in rs]):.2f} | "
                f"{common or '-'} |"
            )
    secs = [r["seconds"] for r in ok]
    if secs:
        out.append(
            f"\nidentification time per capture: median {np.median(secs):.1f} s, max "
            f"{np.max(secs):.1f} s (references cached across captures on the same grid point)"
        )
    return "\n".join(out)


KERNEL_PATHS = (
    {"rate": "20Mbit", "rtt": "40ms", "queue": "bdp"},
    {"rate": "50Mbit", "rtt": "20ms", "queue": "0.5bdp", "loss": "0.1%"},
    {"rate": "10Mbit", "rtt": "80ms", "queue": "2bdp"},
)


def kernel_rows(
    trials: int, duration: str = "15s", keep: str | None = None, identify_now: bool = True
) -> list[dict[str, Any]]:
    """reno, cubic, bbr on this machine's kernel (kernel engine, needs root), *trials* each on
    the three :data:`KERNEL_PATHS`, captured near the sender and identified against every
    candidate. The truth is the CCA (and linux-6, the personality of a current kernel).
    *keep*: copy the captures and a manifest there (``--kernel-dir`` identifies them again);
    *identify_now* False only captures."""
    from .. import runner
    from ..errors import EngineError

    rows: list[dict[str, Any]] = []
    kept: dict[tuple[int, str, int], dict[str, Any]] = {}
    if keep and (FsPath(keep) / "manifest.json").exists():
        # resume: a capture kept by an earlier run of the same cell is reused
        for r in json.loads((FsPath(keep) / "manifest.json").read_text()):
            if "error" not in r and FsPath(r["capture"]).exists():
                kept[(r["i"], r["cca"], r["trial"])] = r
    for pi, path in enumerate(KERNEL_PATHS):
        for cca in ("reno", "cubic", "bbr"):
            for t in range(trials):
                if (pi, cca, t) in kept:
                    row = kept[(pi, cca, t)]
                    rows.append(_kernel_identify(row) if identify_now else row)
                    continue
                doc = {
                    "name": "identify-kernel",
                    "duration": duration,
                    "interval": "1s",
                    "trials": 1,
                    "seed": 5000 + 100 * pi + t,
                    "path": dict(path),
                    "flow": [{"name": "ident", "cca": cca}],
                }
                base = {"i": pi, "path": path, "cca": cca, "trial": t}
                try:
                    res = runner.run(doc, engine="kernel", pcap=["host:ident.snd"])
                except EngineError as e:
                    rows.append({**base, "error": str(e)})
                    print(f"kernel path {pi} {cca} trial {t}: {e}", file=sys.stderr)
                    continue
                row = {
                    **base,
                    "valid": res.summary.get("valid", True),
                    "capture": str(res.captures[0]),
                }
                if keep:
                    dst = FsPath(keep) / f"k{pi}-{cca}-{t}.pcap"
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_bytes(FsPath(res.captures[0]).read_bytes())
                    row["capture"] = str(dst)
                    _write_json(FsPath(keep) / "manifest.json", [*rows, row])
                if identify_now:
                    row = _kernel_identify(row)
                rows.append(row)
                print(
                    f"kernel path {pi} {cca} trial {t}: {row.get('top', 'captured')}",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def _write_json(path: FsPath, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)


def _kernel_identify(row: dict[str, Any]) -> dict[str, Any]:
    """Identify one kernel capture (*row* from :func:`kernel_rows`) against every candidate,
    the references using this host's socket buffers (tcp_rmem/tcp_wmem), with the receive
    window fixed at the largest the capture shows (see classify.identify)."""
    from .classify import identify
    from .probe import host_buffers

    tcp = host_buffers(observed_window=True)
    r = identify(row["capture"], tcp=tcp)
    return {
        **row,
        "stack": "linux-6",
        "in_cca_set": True,
        "in_stack_set": False,
        "top": r["candidates"][0]["label"],
        "top_cca": r["cca"][0]["cca"],
        "top_stack": r["stack"][0]["stack"],
        "top3": [c["label"] for c in r["candidates"][:3]],
        "top3_cca": [c["cca"] for c in r["cca"][:3]],
        **_set_fields(r),
        "inferred": r["path"],
        "features": r["features"],
        "seconds": r["seconds"]["total"],
    }


def kernel_identify_dir(d: str) -> list[dict[str, Any]]:
    """Identify the captures a ``--kernel N --keep DIR`` run kept (its manifest.json)."""
    man = FsPath(d) / "manifest.json"
    try:
        rows = json.loads(man.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"{man}: {e} (make it with --kernel N --keep {d})") from e
    out = []
    for row in rows:
        if "error" in row:
            out.append(row)
            continue
        r = _kernel_identify(row)
        out.append(r)
        print(
            f"kernel path {r['i']} {r['cca']} trial {r['trial']}: {r['top']}",
            file=sys.stderr,
            flush=True,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tcplab.identify.validate")
    ap.add_argument("--paths", type=int, default=6)
    ap.add_argument(
        "--holdout",
        type=int,
        metavar="SEED",
        help="draw the test paths and capture seeds from this generator seed instead of the "
        "default (tuning) set: the numbers to report",
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="identify-validation.json")
    ap.add_argument("--only", help="comma-separated labels (stack/cca) to test")
    ap.add_argument("--only-paths", help="comma-separated path indices (of --paths N) to test")
    ap.add_argument(
        "--kernel", type=int, metavar="TRIALS", help="real-kernel validation, TRIALS per cell"
    )
    ap.add_argument("--keep", metavar="DIR", help="with --kernel: keep the captures in DIR")
    ap.add_argument(
        "--capture-only", action="store_true", help="with --kernel --keep: only capture"
    )
    ap.add_argument("--kernel-dir", metavar="DIR", help="identify the captures kept in DIR")
    ap.add_argument("--report", metavar="FILE.json", help="print the tables of a saved run")
    args = ap.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            text = f.read()
        # a finished run's JSON list, or the lines of an unfinished run's .partial.jsonl
        saved = (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [json.loads(line) for line in text.splitlines() if line.strip()]
        )
        print(markdown(saved))
        return 0
    if args.kernel or args.kernel_dir:
        if args.capture_only and not args.keep:
            ap.error("--capture-only needs --keep DIR")
        if args.kernel_dir:
            rows = kernel_identify_dir(args.kernel_dir)
        else:
            rows = kernel_rows(args.kernel, keep=args.keep, identify_now=not args.capture_only)
        _write_json(FsPath(args.out), rows)
        if not args.capture_only:
            print(markdown(rows))
        return 0
    cases = test_cases(args.paths, args.holdout)
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if f"{c['stack']}/{c['cca']}" in keep]
    if args.only_paths:
        keep_i = {int(i) for i in args.only_paths.split(",")}
        cases = [c for c in cases if c["i"] in keep_i]
    # one grid point's references are computed by one process: order by path
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    partial = FsPath(args.out + ".partial.jsonl")  # every finished case, as it comes
    partial.unlink(missing_ok=True)
    with ProcessPoolExecutor(args.jobs) as ex:
        for k, r in enumerate(ex.map(run_case, cases, chunksize=4)):
            rows.append(r)
            with open(partial, "a") as f:
                f.write(json.dumps(r) + "\n")
            mark = (
                "ok" if r.get("top") == f"{r['stack']}/{r['cca']}" else r.get("top", r.get("error"))
            )
            print(
                f"[{k + 1}/{len(cases)} {time.time() - t0:.0f}s] path {r['i']} "
                f"{r['stack']}/{r['cca']}: {mark}",
                file=sys.stderr,
                flush=True,
            )
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rows, f, indent=1)
    os.replace(tmp, args.out)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
