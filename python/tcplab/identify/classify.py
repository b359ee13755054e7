"""Rank candidate stacks and congestion controls for a capture.

1. Extract the capture's features and infer its path (rate, base RTT, buffer, random loss,
   duration) — :mod:`.features`.
2. Snap the path to the reference grid and get (simulate or load from the cache) the features of
   every candidate on it and on two neighbouring variants (half the buffer, more random loss),
   and, when the capture shows cross traffic, on two variants with it (UDP CBR, a
   window-limited TCP flow), one vector per reference seed — :mod:`.references`. A
   candidate's distance is the smallest over the variants (a profile likelihood over what the
   capture cannot pin down).
3. Re-extract the capture's features over the simulated duration (so both cover the same
   stretch of the transfer) and score every candidate by its nearest reference (1-nearest
   neighbour over seeds and path variants) under a normalised distance:

       D(c) = min over references r of c of  sum over features f measured in the capture of
              min(((x_f - r_f) / floor_f)^2, 16)

   ``floor_f`` (:data:`FLOORS`) is the feature's scale: what two captures of the same stack on
   nearby paths differ by. Nearest-neighbour rather than a Gaussian around the mean of the
   seeds because some behaviour is bimodal over seeds (a random loss in slow start, or none,
   changes the whole 10 s). A feature the capture shows but the reference does not costs 9
   (three scales); when a reference never loses where the capture does, the loss-reaction and
   growth features together cost 9 once. The cap of 16 (four scales) keeps one wildly-off
   feature from deciding alone.
   The confidence of a candidate is its share of exp(-D/2) (the likelihood under independent
   Gaussian features); marginals for the personality and the algorithm sum those shares.
"""

from __future__ import annotations

import math
import time
from pathlib import Path as FsPath
from typing import Any

import numpy as np

from .. import trace
from . import references as refs_mod
from .features import FEATURES, extract

#: Measurement noise per feature (in the feature's units; see features.FEATURES): what two
#: captures of one candidate differ by. The loss-reaction and growth features depend on the
#: path (how much of the loss is random, the buffer) more than the handshake features do, so
#: they get wider floors: a first version with floors 1.5-3 times smaller for beta, rec_new_rtt,
#: rec_rtts, ca_slope, ca_rel_slope, ca_curv and epoch_rtts let a wrong random-loss estimate
#: decide (BBR taken for CUBIC on validation path 0; disclosed in the README).
FLOORS: dict[str, float] = {
    "syn_sack": 0.2,
    "syn_ts": 0.2,
    "syn_wscale": 0.3,
    "rwnd_init": 0.3,
    "rwnd_max": 0.4,
    "iw": 0.5,
    "first_ack_ms": 5.0,
    "early_seg_per_ack": 0.15,
    "seg_per_ack": 0.15,
    "ss_growth": 0.1,
    "ss_exit_bdp": 0.5,
    "beta": 0.1,
    "rec_new_rtt": 0.3,
    "rec_rtts": 0.8,
    "rto_frac": 0.15,
    "ca_slope": 0.5,
    "ca_rel_slope": 0.6,
    "ca_curv": 0.8,
    "epoch_rtts": 0.4,
    "ca_top_frac": 0.12,
    "post_bdp": 0.35,
    "flight_cv": 0.08,
    "qdelay": 0.1,
    "cycle8": 0.15,
    "dip_frac": 0.015,
    "burst_frac": 0.1,
}
#: Relative part of the floor (of the candidate's mean), for features whose noise scales.
REL_FLOORS = {"first_ack_ms": 0.2, "qdelay": 0.2, "epoch_rtts": 0.0}
CAP = 16.0
MISSING = 9.0
#: Weight of a candidate's own spread (over its references) in a feature's scale; 0: off.
SPREAD_K = 0.0


#: Features of the receiver's buffer configuration.
WINDOW_FEATURES = ("syn_wscale", "rwnd_init", "rwnd_max")
#: Features that exist only when the transfer had loss episodes: a candidate that never loses
#: on the inferred path is charged MISSING once for the group, not once per feature.
LOSS_GROUP = (
    "beta",
    "rec_new_rtt",
    "rec_rtts",
    "rto_frac",
    "ca_slope",
    "ca_rel_slope",
    "ca_curv",
    "ca_top_frac",
    "post_bdp",
    "epoch_rtts",
)


def _score_one(
    x: dict[str, float | None],
    ref: dict[str, float | None],
    spread: dict[str, float] | None = None,
) -> tuple[float, dict[str, float]]:
    contrib: dict[str, float] = {}
    loss_charged = False
    ref_loses = any(ref.get(g) is not None for g in LOSS_GROUP)
    for f, xv in x.items():
        if xv is None:
            continue
        y = ref.get(f)
        if y is None:
            if f in LOSS_GROUP and not ref_loses:
                contrib[f] = 0.0 if loss_charged else MISSING
                loss_charged = True
            else:
                contrib[f] = MISSING
            continue
        floor = FLOORS[f] + REL_FLOORS.get(f, 0.0) * abs(y)
        if spread and f in spread:
            # per-candidate evidence weight: the feature's spread over this candidate's own
            # references widens its scale, and the Gaussian's normaliser log(scale^2) keeps
            # a candidate from gaining by being noisy
            wide = math.sqrt(floor * floor + spread[f] ** 2)
            z = (xv - y) / wide
            contrib[f] = min(z * z, CAP) + 2.0 * math.log(wide / floor)
        else:
            z = (xv - y) / floor
            contrib[f] = min(z * z, CAP)
    return float(sum(contrib.values())), contrib


def score(
    x: dict[str, float | None],
    refs: list[dict[str, float | None]],
    spread: dict[str, float] | None = None,
) -> tuple[float, dict[str, float], dict[str, float | None]]:
    """(D, per-feature contribution, the nearest reference's features) of one candidate: the
    nearest of its reference vectors (seeds) to the capture's features *x*."""
    best: tuple[float, dict[str, float], dict[str, float | None]] | None = None
    for r in refs:
        d, contrib = _score_one(x, r, spread)
        if best is None or d < best[0]:
            best = (d, contrib, {f: r.get(f) for f in contrib})
    assert best is not None
    return best


def rank(
    x: dict[str, float | None],
    libs: list[dict[str, list[dict[str, float | None]]]],
    cands: list[refs_mod.Candidate],
) -> tuple[dict[str, float], dict[str, dict[str, float]], dict[str, dict], dict[str, int]]:
    """Per candidate label: distance, per-feature contributions, the nearest reference's
    features, and the index of the path variant (of *libs*) it came from."""
    dist, contribs, means, chosen = {}, {}, {}, {}
    for c in cands:
        spread = None
        if SPREAD_K > 0:
            spread = {}
            for f in FLOORS:
                v = [r[f] for lib in libs for r in lib[c.label] if r.get(f) is not None]
                if len(v) >= 3:
                    spread[f] = SPREAD_K * float(np.std(v))
        best = None
        for vi, lib in enumerate(libs):
            sc = score(x, lib[c.label], spread)
            if best is None or sc[0] < best[0][0]:
                best = (sc, vi)
        assert best is not None
        (dist[c.label], contribs[c.label], means[c.label]), chosen[c.label] = best
    return dist, contribs, means, chosen


def _shares(d: dict[str, float]) -> dict[str, float]:
    m = min(d.values())
    w = {k: math.exp(-(v - m) / 2) for k, v in d.items()}
    s = sum(w.values())
    return {k: v / s for k, v in w.items()}


def identify(
    capture: str | FsPath,
    conn: int | None = None,
    jobs: int = 1,
    cands: list[refs_mod.Candidate] | None = None,
    use_cache: bool = True,
    top: int = 5,
    tcp: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Identify the sender of connection *conn* (default: the largest transfer) of *capture*.
    *tcp*: knob overrides for every reference (both hosts), for a capture whose hosts' socket
    buffers are known (``--probe`` and the kernel validation: this machine's tcp_rmem/wmem);
    ``rcvbuf = "observed"`` fixes the receive window at the largest the capture shows.
    Returns a JSON-ready dict (see ``tcplab identify --json``)."""
    t0 = time.perf_counter()
    cands = cands if cands is not None else refs_mod.candidates()
    rep = trace.analyze(capture, time_to=refs_mod.MAX_SIM_S + 1.0, graphs=True)
    ex = extract(rep, conn)
    grid = refs_mod.snap(ex.path)
    conn_rep = next(c for c in rep["connections"] if c["index"] == ex.conn)
    if ex.path.duration_s > grid["duration_s"] + 0.5:
        rep = trace.analyze(capture, time_to=conn_rep["first_s"] + grid["duration_s"], graphs=True)
        ex_w = extract(rep, ex.conn)
        ex_w.path = ex.path
        ex = ex_w
    if tcp:
        tcp = dict(tcp)
        if tcp.get("rcvbuf") == "observed":
            # The receiver is known: give the references the window the capture shows it
            # reached, fixed (autotuning off). The simulator's Linux receive autotuning grows
            # more slowly than this kernel's (measured with the kernel validation), which
            # otherwise holds the simulated sender below the buffer it filled for real.
            rw = ex.features.get("rwnd_max")
            if rw is None:
                tcp.pop("rcvbuf")
            else:
                tcp["rcvbuf"] = int(ex.mss * 2 ** (math.ceil(2 * rw) / 2))
                tcp["rcvbuf_autotune_max"] = "none"
        # the hosts' buffers are given: the receive-window features show that configuration,
        # not the candidate, and are left out of the score
        for f in WINDOW_FEATURES:
            if ex.features.get(f) is not None:
                ex.features[f] = None
                ex.why_missing[f] = "the hosts' socket buffers were given (reference_knobs)"
    t_feat = time.perf_counter() - t0
    vars_ = refs_mod.variants(grid)
    vars_ += refs_mod.cross_variants(grid, ex.path, ex.features.get("qdelay"))
    libs = [
        refs_mod.library(
            g,
            ex.vantage,
            cands,
            seeds=refs_mod.REF_SEEDS if vi == 0 else refs_mod.VARIANT_SEEDS,
            jobs=jobs,
            use_cache=use_cache,
            tcp=tcp,
        )
        for vi, g in enumerate(vars_)
    ]
    t_lib = time.perf_counter() - t0 - t_feat
    dist, contribs, means, chosen = rank(ex.features, libs, cands)
    conf = _shares(dist)
    order = sorted(dist, key=lambda k: (dist[k], k))
    by_stack: dict[str, float] = {}
    by_cca: dict[str, float] = {}
    best_stack: dict[str, float] = {}
    best_cca: dict[str, float] = {}
    for c in cands:
        by_stack[c.stack] = by_stack.get(c.stack, 0.0) + conf[c.label]
        by_cca[c.cca] = by_cca.get(c.cca, 0.0) + conf[c.label]
        best_stack[c.stack] = min(best_stack.get(c.stack, math.inf), dist[c.label])
        best_cca[c.cca] = min(best_cca.get(c.cca, math.inf), dist[c.label])
    stacks_rank = sorted(by_stack, key=lambda s: (-by_stack[s], best_stack[s], s))
    cca_rank = sorted(by_cca, key=lambda s: (-by_cca[s], best_cca[s], s))
    first, second = order[0], order[1] if len(order) > 1 else order[0]
    decided = []
    for f in contribs[first]:
        gain = contribs[second].get(f, 0.0) - contribs[first][f]
        if gain > 0.5:
            decided.append(
                {
                    "feature": f,
                    "capture": ex.features[f],
                    first: means[first].get(f),
                    second: means[second].get(f),
                    "weight": round(gain, 2),
                }
            )
    decided.sort(key=lambda d: -d["weight"])
    label_of = {c.label: c for c in cands}
    return {
        "capture": str(capture),
        "conn": ex.conn,
        "sender": ex.sender,
        "receiver": ex.receiver,
        "vantage": ex.vantage,
        "path": ex.path.as_dict(),
        "grid": grid,
        "features": {k: v for k, v in ex.features.items() if v is not None},
        "not_measured": {k: ex.why_missing.get(k, "") for k, v in ex.features.items() if v is None},
        "counts": ex.counts,
        "reference_knobs": tcp or {},
        "candidates": [
            {
                "label": k,
                "stack": label_of[k].stack,
                "cca": label_of[k].cca,
                "distance": round(dist[k], 3),
                "path_variant": vars_[chosen[k]],
                "confidence": round(conf[k], 4),
            }
            for k in order[: max(top, 1)]
        ],
        "stack": [{"stack": s, "confidence": round(by_stack[s], 4)} for s in stacks_rank[:top]],
        "cca": [{"cca": s, "confidence": round(by_cca[s], 4)} for s in cca_rank[:top]],
        "decided_by": decided[:6],
        "seconds": {
            "features": round(t_feat, 3),
            "references": round(t_lib, 3),
            "total": round(time.perf_counter() - t0, 3),
        },
    }


def format_result(r: dict[str, Any]) -> str:
    """The human-readable report of :func:`identify`."""
    p = r["path"]
    lines = [
        f"{r['capture']}: connection {r['conn']}, data {r['sender']} -> {r['receiver']}, "
        f"captured near the {r['vantage']}",
        f"path (inferred): {p['rate_mbps']:.4g} Mbit/s, base RTT {p['rtt_ms']:.4g} ms, buffer "
        f"{p['buffer_bdp']:.3g} BDP, random loss {p['loss']:.2%}; simulated on "
        f"{r['grid']['rate_bps'] / 1e6:.4g} Mbit/s, {r['grid']['rtt_s'] * 1e3:.4g} ms, "
        f"{r['grid']['buffer_bdp']:g} BDP, loss {r['grid']['loss']:.2%}, "
        f"{r['grid']['duration_s']:g} s",
    ]
    lines += [f"  note: {n}" for n in p["notes"]]
    lines.append("")
    lines.append("candidates (personality/CCA)      distance  confidence")
    for c in r["candidates"]:
        lines.append(f"  {c['label']:<32}{c['distance']:>8.1f}  {c['confidence']:>9.1%}")
    lines.append(
        "personality: " + ", ".join(f"{s['stack']} {s['confidence']:.0%}" for s in r["stack"][:3])
    )
    lines.append(
        "algorithm:   " + ", ".join(f"{s['cca']} {s['confidence']:.0%}" for s in r["cca"][:3])
    )
    if r["decided_by"]:
        first, second = r["candidates"][0]["label"], r["candidates"][1]["label"]
        lines.append("")
        lines.append(f"decided by (capture | {first} | {second}):")
        for d in r["decided_by"]:
            lines.append(
                f"  {d['feature']:<18} {_f(d['capture'])} | {_f(d[first])} | {_f(d[second])}"
                f"   ({FEATURES[d['feature']][0]})"
            )
    lines.append("")
    lines.append("measured: " + ", ".join(f"{k}={_f(v)}" for k, v in r["features"].items()))
    if r["not_measured"]:
        lines.append("not measurable in this capture:")
        for k, why in r["not_measured"].items():
            lines.append(f"  {k}: {why}")
    s = r["seconds"]
    lines.append(
        f"({s['total']:.1f} s: features {s['features']:.1f} s, references {s['references']:.1f} s)"
    )
    return "\n".join(lines)


def _f(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}"
