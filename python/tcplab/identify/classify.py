"""Rank candidate stacks and congestion controls for a capture.

1. Extract the capture's features and infer its path (rate, base RTT, buffer, random loss,
   duration) — :mod:`.features`.
2. Snap the path to the reference grid and get (simulate or load from the cache) the features of
   every candidate on it and on three neighbouring variants (half the buffer, or twice it for
   a capture without loss; the buffer's grid step on the inferred buffer's other side, which
   brackets it; one level more random loss), and, when the capture shows cross traffic, on
   two variants with it (UDP CBR, a window-limited TCP flow), one vector per reference seed
   (on a grid point without random loss, where both seeds give one trace, the second seed runs
   on the capture's own inferred path instead: references.reference_plan) — :mod:`.references`.
   A candidate's distance is the smallest over the variants (a profile likelihood over what the
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

from . import references as refs_mod
from . import tsrtt
from .features import CROSS_SHARE_MAX, FEATURES, Extracted, extract

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
    # The decrease is a constant of the algorithm's rule, not of the path: Reno 1/2 (RFC 5681
    # §3.1), CUBIC 0.7 (RFC 9438 §4.6), BIC 819/1024 (Linux tcp_bic.c), Scalable 7/8 (Kelly
    # 2003), macOS CUBIC 0.8; H-TCP's RTTmin/RTTmax and HSTCP's b(w) move with the path. The
    # feature reads it at the recovery's end (features._windows_at; FEATURE_VERSION 27: before
    # that with the growth of the round after recovery, Reno 0.52-0.565, BIC's binary search
    # 0.82 to 0.94). Its scale is `fitted` (on the readings before version 27, not refitted):
    # the robust standard deviation (1.4826 x the median absolute value) of the capture's
    # beta minus its true candidate's nearest reference's, 0.022 over the 129
    # tuning-set captures with losses (the default set of validate.py; rms 0.097, heavy-tailed,
    # which the cap of 16 bounds). It was 0.1, which let the growth features outweigh a
    # decrease of 0.8 against 0.875 (README, "Validation"). A capture's own standard error of
    # the median over its episodes (features.median_se; Extracted.se) adds to it in
    # quadrature: a kernel capture with two episodes read 0.51 and 0.55 for Reno's 0.47 in the
    # references. With it the tuning residuals' robust std in scales is 0.59 (conservative).
    "beta": 0.022,
    "rec_new_rtt": 0.3,
    "rec_rtts": 0.8,
    "rto_frac": 0.15,
    "ca_slope": 0.5,
    "ca_rel_slope": 0.6,
    "ca_curv": 0.8,
    "epoch_rtts": 0.4,
    "ca_top_frac": 0.12,
    "ca_slope_lowq": 0.5,
    "ca_slope_highq": 0.5,
    "post_bdp": 0.35,
    "flight_cv": 0.08,
    "qdelay": 0.1,
    "cycle8": 0.15,
    "dip_frac": 0.015,
    "burst_frac": 0.1,
    # log2 Hz: 0.15 is 11 %; the clock-rate fit (tsrtt.clock_rate) errs by about one tick over
    # the span plus, near the receiver, the queueing delay's change over it (measured within
    # 0.2 % on 10-s simulated captures of ten personalities at either vantage, OpenBSD's 2 Hz
    # within 2 %; unit tests), and the clocks of the personalities differ by factors of 2.5
    # or more (1000, 250, 100 and 2 Hz)
    "ts_hz": 0.15,
    "ts_hz_rcv": 0.15,
}
#: Relative part of the floor (of the candidate's mean), for features whose noise scales.
REL_FLOORS = {"first_ack_ms": 0.2, "qdelay": 0.2, "epoch_rtts": 0.0}
CAP = 16.0
#: Per-feature caps above :data:`CAP`. The sender's timestamp clock is a configuration fact
#: that no path, seed or cross traffic changes (the HZ the kernel was built with, RFC 7323
#: §5.4), measured to a few per cent, so a candidate whose clock runs at another rate is
#: charged up to 100 (ten scales): more than the capped differences of six other features,
#: which makes it a near-hard discriminator (Linux 2.6.10 at HZ 1000 against 2.6.16 at 250,
#: whose traces otherwise part late: README, "Validation"). Not a hard exclusion: a capture of
#: a stack built with another HZ than its personality file says must still rank by the rest.
#: The receiver's clock keeps the common cap: a real capture's receiver is often another OS
#: than its sender, while both ends of a reference run the candidate.
CAPS = {"ts_hz": 100.0}
MISSING = 9.0
#: Weight of a candidate's own spread (over its references) in a feature's scale; 0: off.
SPREAD_K = 0.0


#: Features of the receiver's buffer configuration.
WINDOW_FEATURES = ("syn_wscale", "rwnd_init", "rwnd_max")
#: Features of the receiver's ACK policy and clock (features.FEATURES: the delay of its first
#: ACK, segments per ACK at the start and overall, its timestamp clock). When the hosts are
#: given (identify's *tcp*: --probe and the kernel validation, this machine's own receiver),
#: they show that known receiver, not the candidate, and are left out with the window
#: features. The references run the candidate's receiver model, and where that model departs
#: from the real receiver the difference was charged to the sender: this machine's Linux 6.18
#: ACKed every second segment (seg_per_ack 2.0 on all 90 kernel validation captures), the
#: simulated linux-6 receiver every segment behind the simulated BBR on all three kernel paths
#: and behind every algorithm at 10 Mbit/s x 80 ms (1.0), a cost of 16 (the cap) that named
#: Westwood+ or Scalable for 7 of the 10 BBR captures at 50 Mbit/s x 20 ms (README,
#: "Validation", idkern). A choice made after seeing those captures, not a fitted value.
RECEIVER_FEATURES = ("first_ack_ms", "early_seg_per_ack", "seg_per_ack", "ts_hz_rcv")
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
    "ca_slope_lowq",
    "ca_slope_highq",
    "post_bdp",
    "epoch_rtts",
)


def _rwnd_gap(xv: float, y: float, ceiling: float | None) -> float:
    """How far the capture's largest advertised window *xv* is from what the candidate's
    receiver advertises, whose reference read *y* (log2 segments). A receiver that autotunes
    (*ceiling*: its rcvbuf_autotune_max in log2 segments) grows its buffer with the bytes the
    sender delivered per round trip, never lowering it, up to that ceiling (Linux
    tcp_rcv_space_adjust / 6.18's tcp_rcvbuf_grow; the simulator's model,
    crates/tcplab-sim/src/tcp/receiver/autotune.rs), and how far it grows follows slow start's
    overshoot, which flips with the path within its reading error (README, ident15: seen 5948
    path 3's H-TCP reached the 3 MB ceiling, 11.085, on its true path and 7.97-9.06 on every
    reference placement). So a window between the reference's and the ceiling costs nothing,
    one above the ceiling is charged from it. One under the reference's is charged from it as
    before: a fixed-window stack's capture shows there, and this side was not measured to
    flip. A fixed window (no ceiling, or a reference at it) is compared as a point."""
    if ceiling is None or y >= ceiling:
        return xv - y
    if xv < y:
        return xv - y
    return max(xv - ceiling, 0.0)


def _score_one(
    x: dict[str, float | None],
    ref: dict[str, float | None],
    spread: dict[str, float] | None = None,
    se: dict[str, float] | None = None,
    ceiling: float | None = None,
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
        if se and se.get(f):
            # the capture's own reading is a median of few episodes: its standard error adds
            # to the scale (independent errors add in quadrature)
            floor = math.hypot(floor, se[f])
        if spread and f in spread:
            # per-candidate evidence weight: the feature's spread over this candidate's own
            # references widens its scale, and the Gaussian's normaliser log(scale^2) keeps
            # a candidate from gaining by being noisy
            wide = math.sqrt(floor * floor + spread[f] ** 2)
            z = (xv - y) / wide
            contrib[f] = min(z * z, CAP) + 2.0 * math.log(wide / floor)
        else:
            gap = _rwnd_gap(xv, y, ceiling) if f == "rwnd_max" else xv - y
            z = gap / floor
            contrib[f] = min(z * z, CAPS.get(f, CAP))
    return float(sum(contrib.values())), contrib


def score(
    x: dict[str, float | None],
    refs: list[dict[str, float | None]],
    spread: dict[str, float] | None = None,
    se: dict[str, float] | None = None,
    ceiling: float | None = None,
) -> tuple[float, dict[str, float], dict[str, float | None]]:
    """(D, per-feature contribution, the nearest reference's features) of one candidate: the
    nearest of its reference vectors (seeds) to the capture's features *x*; *ceiling*: the
    candidate's autotuning ceiling (:func:`_rwnd_gap`)."""
    best: tuple[float, dict[str, float], dict[str, float | None]] | None = None
    for r in refs:
        d, contrib = _score_one(x, r, spread, se, ceiling)
        if best is None or d < best[0]:
            best = (d, contrib, {f: r.get(f) for f in contrib})
    assert best is not None
    return best


#: Features read in the first rounds of the transfer, up to the end of slow start (features.py:
#: the initial window, the first ACK's delay, the first 30 advancing ACKs, slow start's growth
#: and exit).
START_FEATURES = ("iw", "first_ack_ms", "early_seg_per_ack", "ss_growth", "ss_exit_bdp")


def alone_at_start(counts: dict[str, int], cross_onset_s: float | None) -> bool:
    """Whether the capture's slow start ended before its cross traffic began: the span the
    slow-start features read (``counts["ss_end_ms"]``) ends before the onset the capture shows
    (features.Path.cross_onset_s), so those rounds ran without the competitor."""
    end = counts.get("ss_end_ms")
    return cross_onset_s is not None and end is not None and end / 1e3 < cross_onset_s


def _start_substituted(
    x: dict[str, float | None],
    refs: list[dict[str, float | None]],
    lone: list[dict[str, float | None]],
    se: dict[str, float] | None,
    ceiling: float | None = None,
    spread: dict[str, float] | None = None,
) -> tuple[float, dict[str, float], dict[str, float | None]]:
    """:func:`score` of a cross-traffic variant's *refs* for a capture whose slow start ran
    alone (:func:`alone_at_start`): the start features are charged against the candidate's
    nearest lone-flow reference (*lone*, on those features only) instead. The variants start
    their competitor with the flow (references.cross_variants: which kind of cross traffic it
    is and when it began one flow's capture does not pin down, and starting it at the onset
    lost answers, README ident12 B), so their slow start shares the queue that the capture's
    did not; after the onset they model the capture, before it the lone flow does."""
    xs = {f: x.get(f) for f in START_FEATURES}
    best_lone: tuple[float, dict[str, float], dict[str, float | None]] | None = None
    for r in lone:
        d, contrib = _score_one(xs, r, se=se, ceiling=ceiling)
        if best_lone is None or d < best_lone[0]:
            best_lone = (d, contrib, {f: r.get(f) for f in contrib})
    best: tuple[float, dict[str, float], dict[str, float | None]] | None = None
    for r in refs:
        d, contrib = _score_one(x, r, spread, se=se, ceiling=ceiling)
        near = {f: r.get(f) for f in contrib}
        if best_lone is not None:
            d -= sum(contrib.get(f, 0.0) for f in START_FEATURES)
            d += best_lone[0]
            contrib = {**contrib, **best_lone[1]}
            near = {**near, **best_lone[2]}
        if best is None or d < best[0]:
            best = (d, contrib, near)
    assert best is not None
    return best


def seed_spread(refs: list[dict[str, float | None]]) -> float | None:
    """The sample standard deviation of the decrease (``beta``) over a candidate's references
    on the grid point (its reference seeds, references.REF_SEEDS), or None with fewer than two
    readings (a grid point without random loss runs one seed there: references.reference_plan).

    ``FLOORS["beta"]`` (0.022, `fitted`) is the reading error of a constant rule, Reno's 1/2 or
    CUBIC's 0.7. An algorithm without a multiplicative decrease reads whatever its window was
    doing when the loss came: on this machine's kernel at 50 Mbit/s x 20 ms, 0.5 BDP, 0.1 %
    loss Linux's BBR read 0.83-1.01 and the simulated BBR's two seeds 0.84 and 0.86 on the
    48.7 Mbit/s grid point, 0.98 and 1.10 on the 56.2 Mbit/s one, so against the constant's
    scale the nearest BBR reference paid up to 15.4 for what is its own seed-to-seed noise
    (README, "Validation", idkern). The scale of a feature is what two
    captures of one candidate on one path differ by (FLOORS), which for the decrease the
    candidate's seeds show; :func:`_score_one` widens the scale by it in quadrature and charges
    the Gaussian normaliser 2 log(wide / floor), so a candidate gains nothing by being noisy
    (0.2 of spread costs 4.4 whatever the capture reads). The two seeds of a rule-based
    algorithm differ by about the floor or less (Reno 0.486 and 0.490 on that path), which
    leaves its scale nearly as it was. No knob: the estimate of the spread is the seeds'."""
    v = [r["beta"] for r in refs if r.get("beta") is not None]
    return float(np.std(v, ddof=1)) if len(v) >= 2 else None


def rank(
    x: dict[str, float | None],
    libs: list[dict[str, list[dict[str, float | None]]]],
    cands: list[refs_mod.Candidate],
    se: dict[str, float] | None = None,
    cross: list[bool] | None = None,
    alone_start: bool = False,
    ceilings: dict[str, float] | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, float]], dict[str, dict], dict[str, int]]:
    """Per candidate label: distance, per-feature contributions, the nearest reference's
    features, and the index of the path variant (of *libs*) it came from. *se*: the capture's
    standard error per feature (Extracted.se), added to the feature's scale. *cross*: which
    of *libs* are cross-traffic variants; with *alone_start* (:func:`alone_at_start`) their
    start features are charged against the candidate's lone-flow references
    (:func:`_start_substituted`). *ceilings*: per candidate label, its receiver's autotuning
    ceiling in log2 segments (:func:`rwnd_ceilings`, :func:`_rwnd_gap`)."""
    cross = cross or [False] * len(libs)
    dist, contribs, means, chosen = {}, {}, {}, {}
    for c in cands:
        lone = [r for lib, xt in zip(libs, cross, strict=True) if not xt for r in lib[c.label]]
        spread = None
        # the decrease's scale for this candidate: its FLOORS value is a constant rule's reading
        # error, and an algorithm without a multiplicative decrease reads what its state was when
        # the loss came (BBR: the flight's phase of its gain cycle); the spread of the
        # candidate's own reference seeds on the grid point says which (seed_spread)
        sp = seed_spread(libs[0].get(c.label, [])) if libs else None
        if sp is not None:
            spread = {"beta": sp}
        if SPREAD_K > 0:
            spread = {}
            for f in FLOORS:
                v = [r[f] for lib in libs for r in lib[c.label] if r.get(f) is not None]
                if len(v) >= 3:
                    spread[f] = SPREAD_K * float(np.std(v))
        best = None
        for vi, lib in enumerate(libs):
            ceil = (ceilings or {}).get(c.label)
            if alone_start and cross[vi] and lone and SPREAD_K <= 0:
                sc = _start_substituted(x, lib[c.label], lone, se, ceil, spread)
            else:
                sc = score(x, lib[c.label], spread, se, ceil)
            if best is None or sc[0] < best[0][0]:
                best = (sc, vi)
        assert best is not None
        (dist[c.label], contribs[c.label], means[c.label]), chosen[c.label] = best
    return dist, contribs, means, chosen


def rwnd_ceilings(cands: list[refs_mod.Candidate], mss: int) -> dict[str, float]:
    """Per candidate label, the largest window its receiver's autotuning can advertise
    (the personality's rcvbuf_autotune_max, python/tcplab/stacks/*.toml), in log2 segments of
    *mss* as the ``rwnd_max`` feature; candidates whose receiver does not autotune have none."""
    out = {}
    for c in cands:
        v = _knobs(c.stack).get("rcvbuf_autotune_max")
        if isinstance(v, (int, float)) and v > 0 and mss > 0:
            out[c.label] = math.log2(float(v) / mss)
    return out


def seed_noise(
    x: dict[str, float | None],
    lib0: dict[str, list[dict[str, float | None]]],
    cands: list[refs_mod.Candidate],
    se: dict[str, float] | None = None,
    ceilings: dict[str, float] | None = None,
) -> float:
    """How much a candidate's distance to this capture moves with the reference seed alone.

    Every candidate is simulated on the grid point with two seeds (:data:`references.REF_SEEDS`);
    the two are the same stack on the same path, so the difference of their distances to the
    capture, ``|d(x, r_seed1) - d(x, r_seed2)|``, is what the simulation's randomness alone does
    to a distance. Under Gaussian noise of standard deviation s per distance, that difference
    has standard deviation s·sqrt(2), and so does the gap between two candidates' distances:
    the median over the candidates of ``|d1 - d2|`` is one standard deviation of a gap (an
    estimate from this trace's references, not a threshold chosen on accuracy; no knob).
    0 when no candidate has two seeds. *ceilings*: as in :func:`rank`."""
    spreads = []
    for c in cands:
        refs = lib0.get(c.label, [])
        if len(refs) >= 2:
            ceil = (ceilings or {}).get(c.label)
            d = [_score_one(x, r, se=se, ceiling=ceil)[0] for r in refs]
            spreads.append(max(d) - min(d))
    return float(np.median(spreads)) if spreads else 0.0


#: Distances closer than this are equal (float summation order), whatever the seed noise.
EXACT = 1e-6


def indistinguishable(dist: dict[str, float], noise: float) -> list[str]:
    """The candidates whose distance is within *noise* of the smallest: on this trace none of
    them can be preferred to another (ordered by distance, then name)."""
    m = min(dist.values())
    return sorted(
        (k for k, v in dist.items() if v - m <= noise + EXACT), key=lambda k: (dist[k], k)
    )


#: Windows (segments) under which an algorithm runs Reno's rule, or part of it, from its source.
RENO_REGION: dict[str, tuple[float, str]] = {
    "hstcp": (38, "its Low_Window 38 (RFC 3649 §5): Reno's increase and halving"),
    "ctcp": (
        41,
        "its low_window 41: the delay window stays 0 (draft-sridharan-tcpm-ctcp-02; "
        "crates/tcplab-cc/src/ctcp.rs)",
    ),
    "bic": (15, "its low_window 14 (Linux tcp_bic.c): Reno's increase and halving at or below"),
    "illinois": (15, "its win_thresh 15 (Linux tcp_illinois.c): alpha 1, beta 1/2"),
    "scalable": (
        100,
        "its ai_cnt 100 (Linux tcp_scalable.c since 5.7): Reno's increase (its decrease stays 1/8)",
    ),
}


def reno_window(cca: str, counts: dict[str, int]) -> int:
    """The capture's largest window of a round that *cca*'s threshold (:data:`RENO_REGION`) is
    read against, segments (0: not known). Compound's delay window runs only in congestion
    avoidance: in slow start dwnd stays 0 at any window (crates/tcplab-cc/src/ctcp.rs on_ack,
    after draft-sridharan-tcpm-ctcp-02 §3, which leaves slow start to the loss-based window),
    and at the slow-start overshoot's loss dwnd = (win·(1 − β) − cwnd/2)⁺ is 0 with β = 1/2
    and win = cwnd, so its decrease is Reno's too; its window is read after the first loss
    recovery (features: ``max_window_ca_seg``; the whole capture's without a loss). Tuning path 0
    (10.5 Mbit/s x 13.2 ms) read 44 segments over the whole capture, the slow-start overshoot
    against the 64 KB receive window, and about 21 after it (README, "Validation", winident).
    The other algorithms' thresholds also set their decrease (HSTCP's b(w), BIC's and
    Illinois's beta), which the overshoot's loss reads at its window: the whole capture's."""
    w = counts.get("max_window_seg", 0)
    if cca == "ctcp" and counts.get("max_window_ca_seg") is not None:
        w = counts["max_window_ca_seg"]
    return w


def reno_on_trace(cca: str, counts: dict[str, int]) -> bool:
    """Whether *cca*'s rules on this trace are Reno's, increase and decrease both, from the
    algorithm's source: reno and newreno always (the same rules in tcplab-cc); HSTCP, Compound,
    BIC and Illinois when the capture's largest window stayed under their threshold
    (:data:`RENO_REGION`; :func:`reno_window`). Not Scalable (its decrease stays 1/8) nor H-TCP
    (its backoff RTTmin/RTTmax is not Reno's halving)."""
    if cca in ("reno", "newreno"):
        return True
    w = reno_window(cca, counts)
    return cca in ("hstcp", "ctcp", "bic", "illinois") and 0 < w < RENO_REGION[cca][0]


def with_reno_equivalents(
    tied: list[str],
    label_of: dict[str, refs_mod.Candidate],
    dist: dict[str, float],
    counts: dict[str, int],
) -> list[str]:
    """*tied* plus, for each stack with a member whose rules on this trace are Reno's
    (:func:`reno_on_trace`), every candidate of that stack whose rules are Reno's too: they run
    the same rules on this path, so nothing in the trace can separate them, whatever their
    distances. The seed noise cannot show that where the references have no randomness (a grid
    point without random loss: two reference seeds give the same trace) and one candidate's
    path variant is nearer by a hair (ordered by distance, then name)."""
    stacks = {label_of[k].stack for k in tied if reno_on_trace(label_of[k].cca, counts)}
    extra = [
        k
        for k, c in label_of.items()
        if k not in tied and c.stack in stacks and reno_on_trace(c.cca, counts)
    ]
    return sorted([*tied, *extra], key=lambda k: (dist[k], k))


def capture_facts(ex: Extracted) -> dict[str, Any]:
    """What the knob rules of :func:`inactive_difference` read of a capture: the largest window
    of a round (segments), the fastest rate it shows (the inferred bottleneck, the packet-pair
    estimate and the flow's own rate, bit/s) and the largest receive window it advertised
    (bytes; None when not measured or left out)."""
    p = ex.path
    rw = ex.features.get("rwnd_max")
    return {
        "max_window_seg": ex.counts.get("max_window_seg", 0),
        "max_window_ca_seg": ex.counts.get("max_window_ca_seg"),
        "rate_bps": max(p.rate_bps, p.pair_rate_bps, p.flow_rate_bps),
        "rwnd_max_bytes": None if rw is None else ex.mss * 2.0**rw,
    }


def _mbit(v: float) -> str:
    return f"{v / 1e6:.4g} Mbit/s"


def _knob_inactive(knob: str, a: Any, b: Any, ka: dict, kb: dict, facts: dict) -> str | None:
    """Why a knob set to *a* on one personality and *b* on another cannot act on this capture
    (*facts*: :func:`capture_facts`), from what the knob does in the engine
    (crates/tcplab-sim/src/tcp/config.rs); None when it can (or no rule says it cannot)."""
    rate = facts.get("rate_bps") or 0.0
    if knob == "rx_capacity":
        # the receiving host's processing stage queues only packets arriving faster than it
        # takes them, and they arrive at most at the bottleneck's rate; below that it delays
        # each packet by its service time alone, as a little more path delay would
        caps = [v for v in (a, b) if v is not None]
        if caps and 0 < rate < min(caps):
            return (
                f"rx_capacity ({_show(a, _mbit)} / {_show(b, _mbit)}): a receive-processing "
                f"limit above the fastest rate in the capture ({_mbit(rate)}), so no packet "
                f"queues there; each waits only its service time (at most "
                f"{1500 * 8 / min(caps) * 1e6:.0f} µs for 1500 B), like a longer path"
            )
        return None
    if knob == "rx_ring":
        # the ring holds packets only while the processing stage (rx_capacity) or interrupt
        # coalescing (rx_coalesce) makes them wait
        for k in (ka, kb):
            if k.get("rx_coalesce") is not None:
                return None
            cap = k.get("rx_capacity")
            if cap is not None and not 0 < rate < cap:
                return None
        return f"rx_ring ({a} / {b}): no packet waits in the receive ring at this rate"
    if knob == "rcvbuf_autotune_max":
        # the autotuning limit clips the receive buffer only once the window reaches it
        w = facts.get("rwnd_max_bytes")
        if a is not None and b is not None and w is not None and w < min(a, b):
            return (
                f"rcvbuf_autotune_max ({a} / {b} B): the largest window advertised, "
                f"{w:.0f} B, never reached either limit"
            )
        return None
    return None


def _show(v: Any, fmt: Any) -> str:
    return "none" if v is None else fmt(v)


def inactive_difference(
    a: refs_mod.Candidate, b: refs_mod.Candidate, facts: dict[str, Any]
) -> list[str] | None:
    """Whether candidates *a* and *b* of different personalities differ on this capture only in
    what cannot act on it: every knob (engine defaults filled in) on which the personality files
    (python/tcplab/stacks/*.toml) differ must be inactive by a rule of :func:`_knob_inactive`,
    and the algorithms must be the same with the same parameters, or both run Reno's rules on
    this trace (:func:`reno_on_trace`; only with the algorithms' default parameters, for which
    those thresholds are read). Returns the reasons, one per difference, or None when something
    that differs can act (or no rule covers it: a knob without a rule counts as acting)."""
    ka, kb = _knobs(a.stack), _knobs(b.stack)
    out = []
    pa, pb = _params(a.stack, a.cca), _params(b.stack, b.cca)
    if (a.cca, pa) != (b.cca, pb):
        counts = {"max_window_seg": facts.get("max_window_seg", 0)}
        if facts.get("max_window_ca_seg") is not None:
            counts["max_window_ca_seg"] = facts["max_window_ca_seg"]
        if pa or pb or not (reno_on_trace(a.cca, counts) and reno_on_trace(b.cca, counts)):
            return None
        others = [c for c in (a.cca, b.cca) if c not in ("reno", "newreno")]
        w = max((reno_window(c, counts) for c in others), default=counts["max_window_seg"])
        after = " after slow start" if w != counts["max_window_seg"] else ""
        out.append(
            f"the algorithm ({a.cca} / {b.cca}): both run Reno's rules at a largest window"
            f"{after} of {w} segments"
        )
    for knob in sorted(set(ka) | set(kb)):
        if ka.get(knob) == kb.get(knob):
            continue
        why = _knob_inactive(knob, ka.get(knob), kb.get(knob), ka, kb, facts)
        if why is None:
            return None
        out.append(why)
    return out


def _knobs(stack: str) -> dict[str, Any]:
    """Every knob's value on *stack*: the engine's defaults overridden by the personality."""
    from .. import stacks
    from ..catalog import default_catalog

    cat = default_catalog()
    vals = {k: p.default for k, p in cat.knobs.items()}
    vals.update(stacks.get(stack, cat).knob_values())
    return vals


def _params(stack: str, cca: str) -> dict[str, Any]:
    from .. import stacks

    return stacks.get(stack).params_for(cca)


def with_personality_equivalents(
    tied: list[str],
    label_of: dict[str, refs_mod.Candidate],
    dist: dict[str, float],
    facts: dict[str, Any],
) -> tuple[list[str], list[str]]:
    """*tied* plus every candidate of another personality that differs from a member of *tied*
    only in what cannot act on this capture (:func:`inactive_difference`): nothing in the trace
    can separate them, whatever their distances. Returns the set (ordered by distance, then
    name) and the reasons, one line per added candidate."""
    extra: list[str] = []
    reasons: list[str] = []
    for k in sorted(label_of):
        if k in tied:
            continue
        for t in tied:
            if label_of[t].stack == label_of[k].stack:
                continue
            why = inactive_difference(label_of[t], label_of[k], facts)
            if why is not None:
                extra.append(k)
                reasons.append(
                    f"{label_of[t].stack} = {label_of[k].stack}: the personalities differ only "
                    "in what cannot act on this capture: " + "; ".join(why)
                )
                break
    return sorted([*tied, *extra], key=lambda k: (dist[k], k)), reasons


#: H-TCP's alpha is 1 (Reno's increase) for the first Delta_L = 1 s after a congestion event
#: (Leith & Shorten 2004 §3; crates/tcplab-cc/src/htcp.rs DELTA_L).
HTCP_DELTA_L_MS = 1000


def tie_reasons(
    labels: list[str],
    label_of: dict[str, refs_mod.Candidate],
    dist: dict[str, float],
    means: dict[str, dict[str, float | None]],
    noise: float,
    counts: dict[str, int],
    path: dict[str, Any],
) -> list[str]:
    """Why the candidates of an indistinguishable set (:func:`indistinguishable`) cannot be
    told apart on this trace: equal distances, the seed noise, and for each algorithm in the set
    whose rule on this path is Reno's (a window that never left its Reno region) the window and
    the threshold, from the algorithm's source."""
    if len(labels) < 2:
        return []
    out = []
    lo, hi = dist[labels[0]], dist[labels[-1]]
    if hi - lo <= EXACT:
        out.append(f"equal distances ({lo:.3f})")
    elif hi - lo > noise + EXACT:
        out.append(
            f"distances {lo:.3f}-{hi:.3f}; those beyond the reference seeds' noise ({noise:.3f}) "
            "run the same rules on this trace as a nearer one: Reno's, or the same with knobs "
            "that cannot act here (below)"
        )
    else:
        out.append(
            f"distances {lo:.3f}-{hi:.3f} differ by less than the reference seeds' noise on this "
            f"trace ({noise:.3f}: the median change of a candidate's distance between its two "
            "reference seeds)"
        )
    # nearest references with the same features: the same rules on this path
    groups: dict[str, list[str]] = {}
    for k in labels:
        key = repr(sorted((f, None if v is None else round(v, 9)) for f, v in means[k].items()))
        groups.setdefault(key, []).append(k)
    for g in groups.values():
        if len(g) > 1:
            out.append(f"{', '.join(g)}: identical nearest references (the same rule on this path)")
    ccas = {label_of[k].cca for k in labels}
    if counts.get("loss_episodes", 0) == 0:
        out.append(
            "no loss in the capture: the reaction to loss and the growth between losses, where "
            "loss-based algorithms differ, are not shown"
            + (" (the receive window held the flow)" if path.get("receiver_limited") else "")
        )
    if {"reno", "newreno"} <= ccas:
        out.append(
            "reno and newreno are the same window rules in tcplab-cc (crates/tcplab-cc/src/reno.rs)"
        )
    w = counts.get("max_window_seg", 0)
    for cca in sorted(ccas):
        wc = reno_window(cca, counts)
        if cca in RENO_REGION and 0 < wc < RENO_REGION[cca][0]:
            where = " after slow start" if wc != w else ""
            out.append(
                f"{cca}: window never left Reno's region: max window{where} {wc} segments < "
                f"{RENO_REGION[cca][1]}"
            )
    ep = counts.get("epoch_ms", 0)
    if "htcp" in ccas and 0 < ep <= HTCP_DELTA_L_MS:
        out.append(
            f"htcp: losses every {ep} ms <= Delta_L 1 s (Leith & Shorten 2004): alpha 1, Reno's "
            "increase"
        )
    lossy = counts.get("loss_episodes", 0) > 0
    # the next two concern the epochs after a loss: not given for a capture without one
    if "cubic" in ccas and w > 0 and lossy:
        # RFC 9438 §4.3: the Reno estimate grows alpha = 3(1-beta)/(1+beta) per RTT from
        # beta·W_max; CUBIC returns to W_max after K = cbrt(W_max(1-beta)/C) s. When the
        # estimate gets there first, the end of every epoch is the Reno-friendly AIMD.
        beta, c = 0.7, 0.4
        alpha = 3 * (1 - beta) / (1 + beta)
        t_est = (1 - beta) * w / alpha * path["rtt_ms"] / 1e3
        k = (w * (1 - beta) / c) ** (1 / 3)
        if t_est <= k:
            out.append(
                f"cubic: Reno-friendly region (RFC 9438 §4.3): at W_max {w} segments and RTT "
                f"{path['rtt_ms']:.3g} ms its Reno estimate regains W_max in {t_est:.2f} s, "
                f"before K = {k:.2f} s"
            )
    if "westwood" in ccas and {"reno", "newreno"} & ccas and lossy:
        b = path["buffer_bdp"]
        # Westwood+ sets the window to ~1 BDP after a loss, Reno to (1 + buffer)/2 BDP: equal
        # within the post_bdp feature's scale (FLOORS, log2 units)
        if abs(math.log2((1 + b) / 2)) < FLOORS["post_bdp"]:
            out.append(
                f"westwood: with a buffer of {b:.2g} BDP its window after a loss (bandwidth x "
                f"RTTmin, 1 BDP) is Reno's half window ({(1 + b) / 2:.2g} BDP) within the "
                "feature's scale"
            )
    return out


def _shares(d: dict[str, float]) -> dict[str, float]:
    m = min(d.values())
    w = {k: math.exp(-(v - m) / 2) for k, v in d.items()}
    s = sum(w.values())
    return {k: v / s for k, v in w.items()}


def observe(capture: str | FsPath, conn: int | None = None) -> tuple[Extracted, dict[str, Any]]:
    """What :func:`identify` reads of connection *conn* of *capture* before it looks at any
    reference: the inferred path (over the whole capture), the grid point it snaps to, and the
    features re-extracted over that grid point's duration (the stretch the references cover).
    Everything identify ranks by is a function of these (and of *tcp* there)."""
    rep = tsrtt.analyze(capture, time_to=refs_mod.MAX_SIM_S + 1.0)
    ex = extract(rep, conn)
    grid = refs_mod.snap(ex.path)
    conn_rep = next(c for c in rep["connections"] if c["index"] == ex.conn)
    if ex.path.duration_s > grid["duration_s"] + 0.5:
        rep = tsrtt.analyze(capture, time_to=conn_rep["first_s"] + grid["duration_s"])
        ex_w = extract(rep, ex.conn)
        ex_w.path = ex.path
        ex = ex_w
    return ex, grid


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
    ex, grid = observe(capture, conn)
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
        # not the candidate, and are left out of the score; so are the known receiver's ACK
        # policy and clock (RECEIVER_FEATURES)
        for f in WINDOW_FEATURES:
            if ex.features.get(f) is not None:
                ex.features[f] = None
                ex.why_missing[f] = "the hosts' socket buffers were given (reference_knobs)"
        for f in RECEIVER_FEATURES:
            if ex.features.get(f) is not None:
                ex.features[f] = None
                ex.why_missing[f] = "the receiving host was given (reference_knobs)"
    t_feat = time.perf_counter() - t0
    vars_ = refs_mod.variants(
        grid, ex.path.lossy, ex.path.buffer_bdp, refs_mod.measured_buffer_pkts(ex.path)
    )
    vars_ += refs_mod.cross_variants(grid, ex.path, ex.features.get("qdelay"))
    # the grid point with two seeds (on a grid point without random loss, one, and the capture's
    # own path with the other: references.reference_plan), then the variants with one
    plan = refs_mod.reference_plan(vars_[0], ex.path, vars_[1:])
    vars_ = [g for g, _ in plan]
    libs = [
        refs_mod.library(g, ex.vantage, cands, seeds=s, jobs=jobs, use_cache=use_cache, tcp=tcp)
        for g, s in plan
    ]
    t_lib = time.perf_counter() - t0 - t_feat
    # with the hosts' buffers given (tcp) the window features are left out anyway
    ceilings = None if tcp else rwnd_ceilings(cands, ex.mss)
    dist, contribs, means, chosen = rank(
        ex.features,
        libs,
        cands,
        ex.se,
        cross=[bool(g.get("cross") or g.get("cross_window")) for g in vars_],
        alone_start=alone_at_start(ex.counts, ex.path.cross_onset_s),
        ceilings=ceilings,
    )
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
    noise = seed_noise(ex.features, libs[0], cands, ex.se, ceilings)
    label_of = {c.label: c for c in cands}
    tied = with_reno_equivalents(indistinguishable(dist, noise), label_of, dist, ex.counts)
    tied, knob_reasons = with_personality_equivalents(tied, label_of, dist, capture_facts(ex))
    # what separated the best candidate from the nearest one outside the indistinguishable set
    first = order[0]
    second = next((k for k in order if k not in tied), order[-1])
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
    tie_ccas = sorted({label_of[k].cca for k in tied})
    tie_stacks = sorted({label_of[k].stack for k in tied})
    path_d = ex.path.as_dict()
    return {
        "capture": str(capture),
        "conn": ex.conn,
        "sender": ex.sender,
        "receiver": ex.receiver,
        "vantage": ex.vantage,
        "path": path_d,
        "grid": grid,
        "features": {k: v for k, v in ex.features.items() if v is not None},
        "not_measured": {k: ex.why_missing.get(k, "") for k, v in ex.features.items() if v is None},
        "feature_se": {k: round(v, 4) for k, v in ex.se.items() if v},
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
        "indistinguishable": {
            "candidates": tied,
            "cca": tie_ccas,
            "stack": tie_stacks,
            "seed_noise": round(noise, 3),
            "reasons": tie_reasons(tied, label_of, dist, means, noise, ex.counts, path_d)
            + knob_reasons,
        },
        "decided_by": decided[:6],
        "decided_against": second,
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
        f"{r['grid']['buffer_bdp']:g} BDP"
        + (f" ({r['grid']['buffer_pkts']} packets)" if r["grid"].get("buffer_pkts") else "")
        + f", loss {r['grid']['loss']:.2%}, "
        f"{r['grid']['duration_s']:g} s",
    ]
    lines += [f"  note: {n}" for n in p["notes"]]
    bs, on = p.get("busy_share"), p.get("cross_onset_s")
    if bs is not None and bs < CROSS_SHARE_MAX and on is not None:
        lines.append(
            f"  cross traffic: the flow had {bs:.0%} of the busy bottleneck, sharing it from "
            f"{on:.2f} s after its first data segment"
        )
    lines.append("")
    ind = r["indistinguishable"]
    if len(ind["candidates"]) > 1:
        lines.append(
            f"indistinguishable on this trace ({len(ind['candidates'])} candidates; no single "
            "answer): algorithm "
            + " = ".join(ind["cca"])
            + "; personality "
            + " = ".join(ind["stack"])
        )
        lines += [f"  because: {why}" for why in ind["reasons"]]
    else:
        lines.append(
            f"identified: {ind['candidates'][0]} (the next candidate is farther than the "
            f"reference seeds' noise, {ind['seed_noise']:.3g})"
        )
    lines.append("")
    lines.append("candidates (personality/CCA)      distance  confidence   (= indistinguishable)")
    for c in r["candidates"]:
        mark = "=" if c["label"] in ind["candidates"] else " "
        lines.append(f"{mark} {c['label']:<32}{c['distance']:>8.1f}  {c['confidence']:>9.1%}")
    lines.append(
        "personality: " + ", ".join(f"{s['stack']} {s['confidence']:.0%}" for s in r["stack"][:3])
    )
    lines.append(
        "algorithm:   " + ", ".join(f"{s['cca']} {s['confidence']:.0%}" for s in r["cca"][:3])
    )
    if r["decided_by"]:
        first, second = r["candidates"][0]["label"], r["decided_against"]
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
