"""The reference library: simulated feature vectors per candidate (personality x CCA) and path.

A *candidate* is a sender personality with a congestion control: every personality of
``python/tcplab/stacks`` with its default algorithm, and every algorithm of the engine on
``linux-6`` (the only personality whose kernel offers them all). Both ends of the simulated
connection run the candidate's personality (its receive window and delayed-ACK policy are
evidence too); the capture is taken at the same vantage point (sender or receiver host) as the
capture being identified.

Paths are snapped to a fixed grid (:func:`snap`) so that references are shared between
captures: rate and RTT on a logarithmic grid of 16 steps per decade (a factor 1.155), the buffer
on a factor-sqrt(2) grid from 1/8 to 8 BDP, random loss on {0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2},
the duration on {5, 10, 20, 30} s; every candidate is also simulated on two neighbours of
the point (:func:`variants`) and, when the capture shows cross traffic, on two variants with
it (:func:`cross_variants`). A reference is the feature vector of one simulated capture of
one candidate on one grid path with one of the reference seeds (:data:`REF_SEEDS`); it is computed
on first use, deterministically (the simulator is deterministic for a seed), and cached as JSON
under ``$TCPLAB_CACHE`` (default ``~/.cache/tcplab``)/``identify/``, keyed by the tcplab version,
the simulator build, the personality files, the feature-extractor version and the grid point.
Nothing is committed: a rebuilt simulator or a changed personality gets fresh references.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import pickle
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from .features import CROSS_SHARE_MAX, Path, extract

#: Bump when features.py changes what it measures: cached references are then recomputed.
FEATURE_VERSION = 27  # 27: the decrease read at the recovery's end (beta, post_bdp)
#: Seeds of the references. Validation captures use other seeds (tests and validate.py).
REF_SEEDS = (11, 12)
#: Seeds of the two neighbouring path variants (:func:`variants`); fewer references, for speed.
VARIANT_SEEDS = REF_SEEDS[:1]
MAX_SIM_S = 30.0
MAX_SIM_PACKETS = 150_000


@dataclass(frozen=True)
class Candidate:
    stack: str
    cca: str

    @property
    def label(self) -> str:
        return f"{self.stack}/{self.cca}"


def candidates() -> list[Candidate]:
    """Every personality with its default CCA, then linux-6 with every other CCA."""
    from .. import stacks
    from ..catalog import default_catalog

    cat = default_catalog()
    out = [Candidate(s.name, s.cca) for s in stacks.load_all(cat)]
    have = {c.label for c in out}
    for name in sorted(cat.ccas):
        c = Candidate("linux-6", name)
        if c.label not in have:
            out.append(c)
    return out


def _log_snap(x: float, steps_per_decade: int) -> float:
    k = round(math.log10(x) * steps_per_decade)
    return float(f"{10 ** (k / steps_per_decade):.4g}")


def snap(p: Path) -> dict[str, Any]:
    """The grid point nearest to the inferred path *p* (see the module docstring)."""
    rate = _log_snap(min(max(p.rate_bps, 100e3), 2e9), 16)
    rtt = _log_snap(min(max(p.rtt_s, 1e-3), 2.0), 16)
    # buffer: factor-sqrt(2) grid, the nearest point. It was rounded down for a capture with
    # loss episodes (the largest queue is at most the buffer). Since the buffer is read at the
    # onset of congestion losses (features.py: a drop-tail queue drops when full), it is the
    # buffer itself, and rounding it down by up to 0.75 step ran the references on a buffer up
    # to 1.3 times smaller than the capture's: seen 9898 path 4 (5.3 Mbit/s x 122 ms, 1.79
    # BDP, read 1.80) snapped to 1.41 BDP, where Reno's slow-start overshoot, recovery and
    # epochs are shorter than the capture's (distance 23.0, Illinois's 18.1); at 2.0 BDP, 1.5
    # and first. A candidate that a buffer rounded up would leave held by the receive window
    # still has the half-buffer variant (:func:`variants`).
    lb = 2 * math.log2(min(max(p.buffer_bdp, 0.125), 8.0))
    k = round(lb)
    buf = float(f"{2.0 ** (k / 2):.4g}")
    n_meas = measured_buffer_pkts(p)
    pkts = None
    if n_meas < PKT_GRID_MAX:
        # a buffer of a few packets: whole packets (see PKT_GRID_MAX), the nearest
        pkts = max(1, round(n_meas))
        buf = float(f"{pkts * PKT_BITS / (rate * rtt):.4g}")
    if p.loss <= 0.5e-4:
        loss = 0.0
    else:
        loss = min(LOSS_LEVELS[1:], key=lambda v: abs(math.log(v) - math.log(p.loss)))
    # at most MAX_SIM_PACKETS full-size packets per reference (speed), at most the capture
    cap = min(p.duration_s, MAX_SIM_S, max(5.0, MAX_SIM_PACKETS * 1500 * 8 / rate))
    dur = max([d for d in (5.0, 10.0, 20.0, 30.0) if d <= cap + 0.5] or [5.0])
    out = {"rate_bps": rate, "rtt_s": rtt, "buffer_bdp": buf, "loss": loss, "duration_s": dur}
    if pkts is not None:
        out["buffer_pkts"] = pkts
    return out


#: Bits of one full-size packet of the references (the scenarios' default 1500-byte MTU).
PKT_BITS = 1500 * 8

#: The buffer (in packets, as read from the capture) under which the grid is in whole packets.
#: The scenario rounds a BDP multiple up to whole packets (units.QueueSize.limit), so a
#: factor-sqrt(2) grid point of a few packets is not the buffer it names: on tuning-generator
#: path 23 of ``--paths 40`` (5.3 Mbit/s x 13.5 ms, BDP 6 packets, a 4-packet buffer) 0.5 and
#: 0.71 BDP are 3 and 5 packets and no reference had the capture's 4. The grid of whole
#: packets is the finer one where one packet is more than the sqrt(2) grid's own rounding (a
#: quarter of a factor 2, 19 %): under 1 / (2^(1/4) - 1) = 5.3 packets. Not fitted: the
#: crossover of the two roundings.
PKT_GRID_MAX = 1.0 / (2.0**0.25 - 1.0)


def measured_buffer_pkts(p: Path) -> float:
    """The buffer of the inferred path *p* in full-size packets (at its own rate and RTT)."""
    return p.buffer_bdp * p.rate_bps * p.rtt_s / PKT_BITS


LOSS_LEVELS = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2)


def variants(
    grid: dict[str, Any],
    lossy: bool = True,
    buffer_bdp: float | None = None,
    buffer_pkts: float | None = None,
) -> list[dict[str, Any]]:
    """The grid point and its neighbours on which every candidate is simulated: the buffer a
    factor 2 smaller (a factor 2 larger when the capture had no loss, *lossy* False) and, with
    *buffer_bdp* (the inferred buffer), the buffer's grid step on the inferred value's other
    side of the grid point. What a capture shows of the buffer (its largest queue) is a lower
    bound, and on either side of a regime boundary (a window that fills the buffer or does
    not) the same algorithm looks different; a candidate is scored on the variant that fits it
    best. A capture with losses filled its buffer (a drop-tail queue drops when full), so its
    largest queue is about the buffer; one without loss never filled it, and the buffer is
    only known to be at least that queue (and at least 1 BDP, features.py): the neighbour that
    matters is the larger buffer, where a candidate that would have overflowed the grid point's
    buffer (at the end of slow start, say) does not (measured on seen 1212 path 4, 1.57 BDP
    snapped to 1.0: Vegas's references lost at the end of slow start and the capture did not).

    The bracketing step: the grid rounds the inferred buffer by up to a quarter of a factor 2
    (19 %), and the step on its other side (one step up without loss, a lower bound) brackets
    it. Measured on tuning path 0 (10.5 Mbit/s x 13.2 ms, 0.83 BDP, read 0.93, snapped to 1.0):
    Westwood+'s and HSTCP's captures were nearer Compound's references at 1.0 and 0.5 BDP than
    their own (distances 4.37 and 3.39 against 2.46 and 3.13); at 0.71 BDP their own are the
    nearest (1.19, 1.53).

    And the random loss one level higher (1e-4 ... 3e-2): what a capture shows of random loss
    (losses at a short queue) is a lower bound too. For a while the bracket took its place (it
    moved no CCA answer of the 156 linux-6 captures of tuning-generator paths 0-11), but on
    held-out seed 4451 path 0 Scalable's nearest reference had been that variant, and dropping
    it lost the capture (README, "Validation"): both are kept, at the cost of one more
    reference per candidate.

    On a grid point in whole packets (``buffer_pkts``, :data:`PKT_GRID_MAX`) the neighbours are
    in whole packets too: half the buffer (twice it without loss) and one packet on the side of
    the inferred buffer in packets, *buffer_pkts* (one packet more without loss)."""
    out = [dict(grid)]
    if grid.get("buffer_pkts") is not None:
        n = grid["buffer_pkts"]
        bdp_pkts = grid["rate_bps"] * grid["rtt_s"] / PKT_BITS
        sizes = [max(1, round(n / 2)) if lossy else 2 * n]
        if buffer_pkts is not None:
            sizes.append(n + 1 if buffer_pkts >= n or not lossy else max(1, n - 1))
        for m in sizes:
            b = dict(grid, buffer_pkts=m, buffer_bdp=float(f"{m / bdp_pkts:.4g}"))
            if b not in out:
                out.append(b)
        return out + _loss_variant(grid)
    k0 = round(2 * math.log2(grid["buffer_bdp"]))
    steps = [-2 if lossy else 2]  # two sqrt(2) steps down, or up when the capture had no loss
    if buffer_bdp is not None:
        lb = 2 * math.log2(min(max(buffer_bdp, 0.125), 8.0))
        steps.append(1 if lb >= k0 or not lossy else -1)
    for step in steps:
        k = min(max(k0 + step, -6), 6)
        b = dict(grid, buffer_bdp=float(f"{2.0 ** (k / 2):.4g}"))
        if b not in out:
            out.append(b)
    return out + _loss_variant(grid)


def own_path(grid: dict[str, Any], p: Path) -> dict[str, Any]:
    """The capture's own inferred path *p* (rate, base RTT, buffer; to 4 significant digits)
    with the rest of grid point *grid* (random loss, duration; a buffer in whole packets stays
    the grid's, which is already the nearest whole number to the read).

    Why: a lone flow's slow-start overshoot and the loss episodes after it are not continuous in
    the path. Its outcome flips with a few per cent of RTT while the RTT grid rounds by up to
    7.5 %: a lone Reno at 100 Mbit/s alternates between one and two loss episodes every 1-2 ms of
    RTT around 50 ms (README, "Validation", ident13), and Illinois at 48.7 Mbit/s, 1.41 BDP reads
    a first new data 1.25 RTT after the first retransmission at the grid's 133.4 ms, 0.80 at 137
    and 0.78 at 127.8 ms, the capture's own RTT (held-out 7219 path 4, whose capture read 0.78
    and was named Compound). The grid point cannot stand for every outcome inside its cell; the
    capture's own path is the one point of the cell whose outcome is the capture's.

    Without loss in the capture (``p.lossy`` False) the buffer read is only a lower bound, the
    largest queue the flow built (features.py), and a buffer at the read is the one buffer the
    capture excludes: the packet at the top of the capture's largest queue would be dropped
    there, and a reference whose queue peaks where the capture's did loses where the capture
    did not. Its own path then takes the buffer one step above the read, the step
    :func:`variants` brackets a lossless capture's buffer with: a factor sqrt(2), or one whole
    packet on a grid in packets. Measured on seen held-out 8123 path 2 (9.6 Mbit/s x 93.2 ms,
    1.43 BDP, receiver side): Vegas's capture, lossless, read its buffer as 1.057 BDP (its
    largest queue); its reference on the own path with that buffer had a loss episode and read
    a median queue of 0.06 BDP and a flight CV of 0.011 against the capture's 0.28 and 0.18
    (named CUBIC); at 1.495 BDP, a step above, no loss, 0.27 and 0.17 (README, "Validation",
    ident15)."""
    out = dict(grid)
    out["rate_bps"] = float(f"{min(max(p.rate_bps, 100e3), 2e9):.4g}")
    out["rtt_s"] = float(f"{min(max(p.rtt_s, 1e-3), 2.0):.4g}")
    bdp_pkts = out["rate_bps"] * out["rtt_s"] / PKT_BITS
    if grid.get("buffer_pkts") is not None:
        if not p.lossy:
            # whole packets: the first above the largest queue read
            out["buffer_pkts"] = math.floor(measured_buffer_pkts(p)) + 1
        out["buffer_bdp"] = float(f"{out['buffer_pkts'] / bdp_pkts:.4g}")
    else:
        b = p.buffer_bdp if p.lossy else p.buffer_bdp * math.sqrt(2.0)
        out["buffer_bdp"] = float(f"{min(max(b, 0.125), 8.0):.4g}")
    return out


def reference_plan(
    grid: dict[str, Any], p: Path, others: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], tuple[int, ...]]]:
    """(path, seeds) of every library a capture is ranked against: the grid point with both
    :data:`REF_SEEDS`, then each of *others* (:func:`variants` after the grid point,
    :func:`cross_variants`) with :data:`VARIANT_SEEDS`.

    On a grid point without random loss the second seed is spent on the capture's own path
    (:func:`own_path`) instead: there the reference has no random element that acts on the
    flow (the simulator's random streams are the loss and jitter models, the ISN and the timer
    slack, crates/tcplab-sim/src/net.rs and sim.rs; the event order does not take the seed,
    event.rs: "a run without random elements stays the same run under every seed"), so its two
    seeds give one trace — measured at 21.5 Mbit/s x 48.7 ms, 1 BDP: linux-6 Reno, CUBIC, Vegas
    and Westwood+ read identical features under seeds 11 and 12, BBR within 0.1 % but for its
    growth's sign near 0 — and the second seed sampled nothing. With one seed on the grid point
    the seed noise (classify.seed_noise) is 0 there, as it was. No reference is added.

    Not on a grid point with random loss, where the two seeds sample the losses: the capture's
    own path as one more reference there (seed 11, 29 references more) lost Westwood+ on tuning
    path 0 (named H-TCP) and gained nothing on the tuning set (README, "Validation", ident14)."""
    if grid.get("loss"):
        return [(dict(grid), REF_SEEDS)] + [(g, VARIANT_SEEDS) for g in others]
    return (
        [(dict(grid), REF_SEEDS[:1])]
        + [(g, VARIANT_SEEDS) for g in others]
        + [(own_path(grid, p), REF_SEEDS[1:])]
    )


def _loss_variant(grid: dict[str, Any]) -> list[dict[str, Any]]:
    """The grid point with one level more random loss (none above the highest level)."""
    i = LOSS_LEVELS.index(grid["loss"]) if grid["loss"] in LOSS_LEVELS else 0
    return [dict(grid, loss=LOSS_LEVELS[i + 1])] if i + 1 < len(LOSS_LEVELS) else []


#: Shares of the bottleneck taken by cross traffic (:func:`cross_variant`), the grid for it.
CROSS_LEVELS = (0.1, 0.15, 0.2, 0.3, 0.45, 0.6)


def cross_variants(grid: dict[str, Any], p: Path, qdelay: float | None) -> list[dict[str, Any]]:
    """Variants of *grid* with cross traffic, when the capture shows some, else none.

    Cross traffic that shares the bottleneck queue shows as a flow that gets less than the
    packet-pair capacity while a queue stands (:attr:`features.Path.busy_share`). The variants
    run at that capacity with the rest taken by (1) a UDP CBR flow at that share (snapped to
    :data:`CROSS_LEVELS`), and (2) a window-limited CUBIC flow (Linux's default algorithm)
    whose window carries that share at the capture's median RTT (``qdelay``), snapped to a
    factor-sqrt(2) grid in packets, both starting with the flow: which kind it is, and when it
    started, a capture of one flow does not show. Cross traffic changes what a candidate shows:
    its queue is shared, its losses come sooner, its rate samples fall below the capacity."""
    bs = p.busy_share
    # CROSS_SHARE_MAX (features.py, `fitted`): the share under which a flow shares the queue
    if bs is None or bs >= CROSS_SHARE_MAX or p.pair_rate_bps <= 0:
        return []
    share = 1.0 - bs
    level = min(CROSS_LEVELS, key=lambda v: abs(math.log(v) - math.log(max(share, 0.01))))
    rate = _log_snap(min(max(p.pair_rate_bps, 100e3), 2e9), 16)
    out = [dict(grid, rate_bps=rate, cross=level)]
    w_pkts = share * rate / (1500 * 8) * p.rtt_s * (1.0 + max(qdelay or 0.0, 0.0))
    if w_pkts >= 2:
        k = round(2 * math.log2(w_pkts))
        out.append(dict(grid, rate_bps=rate, cross_window=int(2.0 ** (k / 2)) * 1500))
    return out


def scenario_doc(
    cand: Candidate,
    grid: dict[str, Any],
    seed: int,
    extra_flows: list[dict] | None = None,
    tcp: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The scenario (as a TOML-like dict) of one reference or validation run; *tcp*: knob
    overrides on both hosts (``[flow.tcp]``), e.g. a known host's socket-buffer limits."""
    flow: dict[str, Any] = {
        "name": "ident",
        "cca": cand.cca,
        "sender_stack": cand.stack,
        "receiver_stack": cand.stack,
    }
    if tcp:
        flow["tcp"] = dict(tcp)
    doc: dict[str, Any] = {
        "name": "identify",
        "duration": f"{grid['duration_s']}s",
        "interval": f"{grid['duration_s']}s",
        "trials": 1,
        "seed": seed,
        "path": {
            "rate": f"{grid['rate_bps']:.0f}bit",
            "rtt": f"{grid['rtt_s'] * 1e3:.4g}ms",
            # a grid point in whole packets (snap: PKT_GRID_MAX) names its packets
            "queue": (
                f"{grid['buffer_pkts']}pkt"
                if grid.get("buffer_pkts") is not None
                else f"{grid['buffer_bdp']:g}bdp"
            ),
        },
        "flow": [flow, *(extra_flows or [])],
    }
    if grid.get("loss"):
        doc["path"]["loss"] = grid["loss"]
    if grid.get("cross"):
        # cross traffic of a cross_variant: UDP CBR at that share of the capacity
        doc["flow"].append(
            {"name": "xt", "kind": "udp", "rate": f"{grid['cross'] * grid['rate_bps']:.0f}bit"}
        )
    if grid.get("cross_window"):
        # a window-limited competing TCP flow of a cross_variants
        doc["flow"].append({"name": "xt", "cca": "cubic", "window": f"{grid['cross_window']}B"})
    return doc


def simulate_capture(doc: dict[str, Any], vantage: str, out_dir: FsPath, sc: Any = None) -> FsPath:
    """Run *doc* on the simulator (trial 0 only, seed ``doc["seed"]``) and return the capture at
    *vantage* of flow ``ident``. *sc*: *doc* already loaded (a Scenario; its seed is not used),
    to validate one candidate's scenario once for all its seeds."""
    from .. import scenario as scenario_mod
    from ..capture import capture_specs
    from ..engines import get_engine

    if sc is None:
        sc = scenario_mod.load(doc)
    cfg = sc.config(int(doc["seed"]))
    host = "ident.snd" if vantage == "sender" else "ident.rcv"
    cfg["capture"] = capture_specs(cfg, [f"host:{host}"], out_dir)
    get_engine("sim")(cfg)
    return FsPath(cfg["capture"][0]["path"])


def features_of_capture(path: FsPath, time_to: float | None = None) -> tuple[dict, Any]:
    from . import tsrtt

    rep = tsrtt.analyze(path, time_to=time_to)
    return rep, extract(rep)


def reference_features(
    cand: Candidate,
    grid: dict[str, Any],
    seed: int,
    vantage: str,
    tcp: dict[str, Any] | None = None,
) -> dict[str, float | None]:
    """Simulate one reference and extract its features (uncached)."""
    from .. import scenario as scenario_mod

    doc = scenario_doc(cand, grid, seed, tcp=tcp)
    key = json.dumps(scenario_doc(cand, grid, 0, tcp=tcp), sort_keys=True)
    with _LOADED_LOCK:
        sc = _LOADED.get(key)
    if sc is None:
        sc = scenario_mod.load(doc)
        with _LOADED_LOCK:
            _LOADED[key] = sc
            if len(_LOADED) > 256:
                _LOADED.pop(next(iter(_LOADED)))
    keep = _report_path(doc, vantage)
    if keep is not None:
        # receiver-side reports carry the timestamp RTT samples (tsrtt.attach) since
        # FEATURE_VERSION 9, every report the timestamp clocks (tsrtt.attach_clocks) since 12;
        # one kept before lacks them
        keep = keep.with_name(keep.stem + "-clk.pkl")
    if keep is not None and keep.exists():
        with open(keep, "rb") as f:
            return extract(pickle.load(f)).features
    with tempfile.TemporaryDirectory(prefix="tcplab-ident-") as d:
        cap = simulate_capture(doc, vantage, FsPath(d), sc=sc)
        rep, ex = features_of_capture(cap)
    if keep is not None:
        _save_report(rep, keep)
    return ex.features


#: Analyzer reports (the packet series) of references kept for development
#: (``$TCPLAB_IDENTIFY_REPORTS``, unset by default): a change of features.py is then measured
#: without simulating the references again. Keyed by the scenario, the vantage, the simulator
#: build and the personality files; ~1-5 MB per reference.
REPORTS_ENV = "TCPLAB_IDENTIFY_REPORTS"


def _report_path(doc: dict[str, Any], vantage: str) -> FsPath | None:
    base = os.environ.get(REPORTS_ENV)
    if not base:
        return None
    from ..store import build_id

    # the personality files too: a knob changed in a toml (no rebuild) changes the capture, and
    # a report keyed without them was read back stale (the library cache, _key, had them)
    blob = json.dumps(
        {"doc": doc, "vantage": vantage, "build": build_id("sim"), "stacks": _stacks_digest()},
        sort_keys=True,
    )
    return FsPath(base) / f"{hashlib.sha256(blob.encode()).hexdigest()[:24]}.pkl"


def _save_report(rep: dict[str, Any], path: FsPath) -> None:
    import numpy as np

    for c in rep.get("connections", []):
        for d in ("a2b", "b2a"):
            ser = c[d].get("series")
            if ser:
                c[d]["series"] = {k: np.asarray(v) for k, v in ser.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(rep, f, protocol=5)
    os.replace(tmp, path)


#: Loaded (validated) reference scenarios, by their document without the seed: a candidate's
#: scenario is validated once for all its seeds.
_LOADED: dict[str, Any] = {}
_LOADED_LOCK = threading.Lock()


def cache_dir() -> FsPath:
    base = os.environ.get("TCPLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tcplab"
    )
    return FsPath(base) / "identify"


def _stacks_digest() -> str:
    """A digest of the shipped personality files: a reference depends on the knobs they set,
    which can change without a new simulator build."""
    h = hashlib.sha256()
    stacks_dir = FsPath(__file__).resolve().parent.parent / "stacks"
    for f in sorted(stacks_dir.glob("*.toml")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _key(
    grid: dict[str, Any],
    vantage: str,
    seeds: tuple[int, ...],
    cands: list[Candidate],
    tcp: dict[str, Any] | None,
) -> str:
    from .. import __version__
    from ..store import build_id

    blob = json.dumps(
        {
            "v": __version__,
            "build": build_id("sim"),
            "stacks": _stacks_digest(),
            "features": FEATURE_VERSION,
            "grid": grid,
            "vantage": vantage,
            "seeds": list(seeds),
            "cands": [c.label for c in cands],
            "tcp": tcp or {},
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def library(
    grid: dict[str, Any],
    vantage: str,
    cands: list[Candidate] | None = None,
    seeds: tuple[int, ...] = REF_SEEDS,
    jobs: int = 1,
    use_cache: bool = True,
    tcp: dict[str, Any] | None = None,
) -> dict[str, list[dict[str, float | None]]]:
    """Label -> one feature dict per seed, for every candidate on grid point *grid*."""
    cands = cands if cands is not None else candidates()
    path = cache_dir() / f"{_key(grid, vantage, seeds, cands, tcp)}.json"
    if not use_cache:
        return _compute_library(grid, vantage, cands, seeds, jobs, None, tcp)
    path.parent.mkdir(parents=True, exist_ok=True)
    # one process computes a grid point; another that needs it at the same time (validate.py's
    # workers) waits for it and reads the cache instead of simulating the same references
    with open(path.with_suffix(".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            if path.exists():
                try:
                    return json.loads(path.read_text())["refs"]  # type: ignore[no-any-return]
                except (OSError, ValueError, KeyError):
                    pass  # a damaged cache entry is recomputed
            return _compute_library(grid, vantage, cands, seeds, jobs, path, tcp)
        finally:
            fcntl.flock(lk, fcntl.LOCK_UN)


def _compute_library(
    grid: dict[str, Any],
    vantage: str,
    cands: list[Candidate],
    seeds: tuple[int, ...],
    jobs: int,
    path: FsPath | None,
    tcp: dict[str, Any] | None,
) -> dict[str, list[dict[str, float | None]]]:
    work = [(c, s) for c in cands for s in seeds]

    def one(item: tuple[Candidate, int]) -> dict[str, float | None]:
        return reference_features(item[0], grid, item[1], vantage, tcp)

    if jobs > 1:
        with ThreadPoolExecutor(jobs) as ex:
            feats = list(ex.map(one, work))
    else:
        feats = [one(w) for w in work]
    refs: dict[str, list[dict[str, float | None]]] = {}
    for (c, _), f in zip(work, feats, strict=True):
        refs.setdefault(c.label, []).append(f)
    if path is not None:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump({"grid": grid, "vantage": vantage, "refs": refs}, f)
        os.replace(tmp, path)
    return refs
