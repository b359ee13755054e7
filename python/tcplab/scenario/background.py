"""``[[background]]`` tables: background (cross) traffic on the bottleneck, reported in aggregate
(docs/scenario-format.md, "Background traffic"; the engine side is crates/tcplab-sim/src/
background.rs).

Two kinds, named like the ``[[flow]]`` kinds:

* ``kind = "tcp"`` (default): many short TCP connections ("mice") arriving as a Poisson process,
  each transferring a size drawn from a bounded Pareto distribution; each one is a real TCP
  connection of the engine (handshake, the stacks' knobs, ``cca``) between the source's two
  automatic hosts ``<name>.snd`` and ``<name>.rcv``.
* ``kind = "udp"``: an on-off UDP source, sending at ``peak`` during on periods (exponential or
  Pareto lengths) and nothing in off periods.

The offered load is ``load`` × the bottleneck rate of the source's direction (or ``rate``), in
application bytes: for mice λ = load / (8 · E[S]) arrivals per second; for on-off UDP the mean
off period is E[on] · (peak / load − 1), so that peak · E[on] / (E[on] + E[off]) = load.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import units
from ..catalog import Catalog
from .defaults import NAME_RULE
from .fields import (
    Ctx,
    Invalid,
    Table,
    as_choice,
    as_duration,
    as_name,
    as_pos_bytes,
    as_pos_duration,
    as_rate,
    kinded_table,
    take_udp_payload,
)
from .model import Host, PathModel
from .personality import resolve_tcp
from .topology import Endpoints, place_flow

BG_KINDS = ("tcp", "udp")
BG_COMMON_KEYS = ("name", "kind", "direction", "start", "stop", "rtt", "load", "rate")
BG_TCP_KEYS = (
    *BG_COMMON_KEYS,
    "size_mean",
    "size_min",
    "size_max",
    "size_shape",
    "sender_stack",
    "receiver_stack",
    "cca",
    "tcp",
    "receiver_tcp",
)
BG_UDP_KEYS = (*BG_COMMON_KEYS, "peak", "on", "periods", "period_shape", "payload")

#: Defaults of the mice's size law (documented assumptions, docs/scenario-format.md):
#: tail index 1.2 — Crovella & Bestavros (IEEE/ACM ToN 5(6), 1997) found WWW transfer sizes
#: heavy-tailed with a tail index between 1 and 2, near 1.2 (UNVERIFIED: the exact estimate is
#: not in the project's reference); mean 50 KB and largest 10 MB: assumptions (UNVERIFIED), a
#: web-like mix of mostly small objects with rare large downloads.
DEFAULT_SIZE_SHAPE = 1.2
DEFAULT_SIZE_MEAN = "50KB"
DEFAULT_SIZE_MAX = "10MB"
#: On-off UDP: mean on period 500 ms (an assumption, UNVERIFIED), exponential periods (ns-2's
#: documented Exponential on/off source).
DEFAULT_ON = "500ms"
DEFAULT_PERIODS = "exponential"
PERIODS = ("exponential", "pareto")


@dataclass(frozen=True)
class Background:
    """One background source (a ``[[background]]`` table) after validation."""

    name: str
    kind: str
    direction: str
    src: str
    dst: str
    start_ns: int
    stop_ns: int
    rtt_ns: int
    load_bps: int
    #: TCP mice: bounded Pareto (shape, min, max bytes) and the TCP set-up.
    size_shape: float | None = None
    size_min: int | None = None
    size_max: int | None = None
    cca: dict[str, Any] | None = None
    tcp: dict[str, Any] | None = None
    receiver_tcp: dict[str, Any] | None = None
    sender_stack: str | None = None
    receiver_stack: str | None = None
    #: On-off UDP.
    peak_bps: int | None = None
    on_ns: int | None = None
    periods: str | None = None
    period_shape: float | None = None
    payload_bytes: int | None = None

    @property
    def size_mean(self) -> float | None:
        if self.kind != "tcp" or self.size_shape is None:
            return None
        return bounded_pareto_mean(self.size_shape, self.size_min or 1, self.size_max or 2)

    @property
    def arrivals_per_s(self) -> float | None:
        """λ = load / (8 · E[S]) (TCP mice)."""
        mean = self.size_mean
        return None if mean is None else self.load_bps / (8 * mean)

    def to_config(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "src": self.src,
            "dst": self.dst,
            "start_ns": self.start_ns,
            "stop_ns": self.stop_ns,
            "load_bps": self.load_bps,
        }
        if self.kind == "tcp":
            d["size_shape"] = self.size_shape
            d["size_min"] = self.size_min
            d["size_max"] = self.size_max
            d["cca"] = copy.deepcopy(self.cca)
            d["tcp"] = dict(self.tcp or {})
            d["receiver_tcp"] = dict(
                self.receiver_tcp if self.receiver_tcp is not None else d["tcp"]
            )
        else:
            d["peak_bps"] = self.peak_bps
            d["on_mean_ns"] = self.on_ns
            d["periods"] = self.periods
            if self.period_shape is not None:
                d["period_shape"] = self.period_shape
            d["payload_bytes"] = self.payload_bytes
        return d

    def describe(self) -> str:
        h = units.human_rate
        d = units.human_duration
        if self.kind == "tcp":
            what = (
                f"tcp mice {h(self.load_bps)} offered ({self.arrivals_per_s:.3g}/s, sizes "
                f"bounded Pareto α={self.size_shape:g} on {self.size_min}..{self.size_max} B, "
                f"mean {self.size_mean:.0f} B), {self.cca['name'] if self.cca else '?'}"
            )
        else:
            what = (
                f"udp on-off {h(self.load_bps)} mean, peak {h(self.peak_bps or 0)}, "
                f"on {d(self.on_ns or 0)} ({self.periods})"
            )
        return (
            f"    {self.name} [background] {what}: {self.src} -> {self.dst} ({self.direction}), "
            f"RTT {d(self.rtt_ns)}, {d(self.start_ns)}..{d(self.stop_ns)}"
        )


def bounded_pareto_mean(alpha: float, lo: float, hi: float) -> float:
    """E[X] of the bounded Pareto on [lo, hi] with shape alpha (Harchol-Balter, Crovella & Murta,
    JPDC 59(2), 1999, §3); the same closed form as crates/tcplab-sim/src/background.rs."""
    norm = 1.0 - (lo / hi) ** alpha
    c = alpha * lo**alpha / norm
    if abs(alpha - 1.0) < 1e-12:
        return c * math.log(hi / lo)
    return c * (hi ** (1.0 - alpha) - lo ** (1.0 - alpha)) / (1.0 - alpha)


def bounded_pareto_min_for_mean(alpha: float, mean: float, hi: float) -> float:
    """The lower bound that gives the bounded Pareto (alpha, ·, hi) the mean *mean* (< hi). The
    mean grows with the lower bound from 0 (lower bound → 0, alpha ≥ 1) to hi, so bisection."""
    lo_b, hi_b = mean * 1e-12, mean
    for _ in range(200):
        mid = math.sqrt(lo_b * hi_b)
        if bounded_pareto_mean(alpha, mid, hi) < mean:
            lo_b = mid
        else:
            hi_b = mid
    return math.sqrt(lo_b * hi_b)


def _as_fraction(v: Any) -> float:
    """A load as a fraction of the bottleneck rate: '30%' or 0.3, more than 0 and less than 1."""
    allowed = "a fraction of the bottleneck rate such as '30%' or 0.3 (more than 0, below 100%)"
    try:
        x = units.parse_probability(v)
    except units.UnitError as e:
        raise Invalid(e.problem, allowed) from None
    if not 0 < x < 1:
        raise Invalid("must be more than 0 and less than 100%", allowed)
    return x


def _as_shape(lo: float, what: str) -> Any:
    def conv(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise Invalid("is not a number", f"a number above {lo:g} ({what})")
        if v <= lo:
            raise Invalid(f"must be above {lo:g}", f"a number above {lo:g} ({what})")
        return float(v)

    return conv


def validate_background(
    ctx: Ctx,
    data: Any,
    i: int,
    p: PathModel,
    tcp_defaults: Mapping[str, Any],
    catalog: Catalog,
    duration: int,
    names: set[str],
    stack: str,
) -> tuple[Background, list[Host], dict[str, Any]]:
    """Validate ``background.<i>``; *names* holds the flow and background names before it (this
    one's is added: its automatic hosts are ``<name>.snd`` and ``<name>.rcv``)."""
    path = f"background.{i}"
    t, kind = kinded_table(
        ctx,
        data,
        path,
        "background",
        "background",
        BG_TCP_KEYS,
        BG_UDP_KEYS,
        "'tcp' (short TCP connections) or 'udp' (on-off UDP)",
    )
    name = t.take("name", as_name, default=f"bg{i}", literal=f"bg{i}", allowed=NAME_RULE)
    if name in names:
        raise t.error("name", "is used by another [[flow]] or [[background]]", "a unique name")
    names.add(name)
    t.take("kind", as_choice(BG_KINDS), default="tcp", literal="tcp")
    direction = t.take(
        "direction", as_choice(("forward", "reverse")), default="forward", literal="forward"
    )
    start = t.take("start", as_duration, default=0, literal="0s")
    if start >= duration:
        raise t.error(
            "start",
            "is not before the end of the run",
            f"less than duration = {units.format_duration(duration)}",
        )
    stop = t.take("stop", as_duration, default=duration)
    if stop <= start or stop > duration:
        raise t.error(
            "stop",
            "is not within the run after start",
            f"more than start = {units.format_duration(start)} and at most duration = "
            f"{units.format_duration(duration)}",
        )

    # Offered load: a fraction of the bottleneck rate in the source's direction, or a rate.
    link_rate = p.rate_bps if direction == "forward" else p.reverse_rate_bps
    if t.has("load") and t.has("rate"):
        raise t.error(
            "rate",
            "give load (a fraction of the bottleneck) or rate, not both",
            "remove one of them",
        )
    if not t.has("load") and not t.has("rate"):
        raise ctx.error(
            t.field("load"),
            "missing (required)",
            allowed="load = '30%' (of the bottleneck rate in this direction) or rate = '30Mbit'",
        )
    if t.has("load"):
        frac = t.take("load", _as_fraction)
        load_bps = round(frac * link_rate)
    else:
        load_bps = t.take("rate", as_rate)
        if load_bps >= link_rate:
            raise t.error(
                "rate",
                f"is not below the bottleneck rate {units.format_rate(link_rate)} in this "
                "direction (the offered load would saturate it)",
                f"less than {units.format_rate(link_rate)}",
            )

    place = place_flow(ctx, t, p, name, Endpoints(None, None, direction))
    common = {
        "name": name,
        "kind": kind,
        "direction": direction,
        "src": place.src.name,
        "dst": place.dst.name,
        "start_ns": start,
        "stop_ns": stop,
        "rtt_ns": place.rtt_ns,
        "load_bps": load_bps,
    }
    if kind == "tcp":
        bg = _tcp(ctx, t, common, catalog, tcp_defaults, stack)
    else:
        bg = _udp(t, common, p, load_bps)
    return bg, list(place.new_hosts), t.ordered_resolved()


def _tcp(
    ctx: Ctx,
    t: Table,
    common: dict[str, Any],
    catalog: Catalog,
    tcp_defaults: Mapping[str, Any],
    stack: str,
) -> Background:
    shape = t.take(
        "size_shape",
        _as_shape(0.0, "the tail index α of the bounded Pareto sizes"),
        default=DEFAULT_SIZE_SHAPE,
        literal=DEFAULT_SIZE_SHAPE,
    )
    size_max = t.take(
        "size_max",
        as_pos_bytes,
        default=units.parse_bytes(DEFAULT_SIZE_MAX),
        literal=DEFAULT_SIZE_MAX,
    )
    if t.has("size_mean") and t.has("size_min"):
        raise t.error(
            "size_min",
            "give size_mean or size_min, not both (either one fixes the other)",
            "remove one of them",
        )
    if t.has("size_min"):
        size_min = t.take("size_min", as_pos_bytes)
        if size_min >= size_max:
            raise t.error("size_min", "is not below size_max", f"less than {size_max}B")
    else:
        mean = t.take(
            "size_mean",
            as_pos_bytes,
            default=units.parse_bytes(DEFAULT_SIZE_MEAN),
            literal=DEFAULT_SIZE_MEAN,
        )
        if mean * 2 > size_max:
            raise ctx.error(
                t.field("size_mean"),
                f"is not below half of size_max ({size_max} B): a heavy tail needs room",
                t.raw("size_mean") if t.has("size_mean") else DEFAULT_SIZE_MEAN,
                f"at most {size_max // 2}B, or a larger size_max",
            )
        size_min = max(1, round(bounded_pareto_min_for_mean(shape, mean, size_max)))
    setup = resolve_tcp(ctx, t, catalog, tcp_defaults, stack)
    return Background(
        **common,
        size_shape=shape,
        size_min=size_min,
        size_max=size_max,
        cca=copy.deepcopy(setup.cca),
        tcp=dict(setup.knobs),
        receiver_tcp=dict(setup.receiver_knobs),
        sender_stack=setup.sender_stack,
        receiver_stack=setup.receiver_stack,
    )


def _udp(t: Table, common: dict[str, Any], p: PathModel, load_bps: int) -> Background:
    peak = t.take("peak", as_rate, required=True, allowed=units.RATE_EXAMPLE)
    if peak <= load_bps:
        raise t.error(
            "peak",
            f"is not above the mean load {units.format_rate(load_bps)} (an on-off source is "
            "on for load / peak of the time)",
            f"more than {units.format_rate(load_bps)}",
        )
    on = t.take("on", as_pos_duration, default=units.parse_duration(DEFAULT_ON), literal=DEFAULT_ON)
    periods = t.take(
        "periods", as_choice(PERIODS), default=DEFAULT_PERIODS, literal=DEFAULT_PERIODS
    )
    shape = None
    if periods == "pareto":
        shape = t.take(
            "period_shape",
            _as_shape(1.0, "the Pareto shape of on and off periods; above 1 for a finite mean"),
            required=True,
            allowed="a number above 1, e.g. 1.5",
        )
    elif t.has("period_shape"):
        raise t.error("period_shape", "only for periods = 'pareto'", "remove it")
    payload = take_udp_payload(t, p.mtu)
    return Background(
        **common,
        peak_bps=peak,
        on_ns=on,
        periods=periods,
        period_shape=shape,
        payload_bytes=payload,
    )


def validate_all(
    ctx: Ctx,
    raw: Any,
    p: PathModel,
    tcp_defaults: Mapping[str, Any],
    catalog: Catalog,
    duration: int,
    names: set[str],
    stack: str,
    engine: str,
) -> tuple[list[Background], list[Host], list[dict[str, Any]]]:
    """Every ``[[background]]`` table (the hook tcplab.scenario.validate calls)."""
    if not isinstance(raw, list):
        raise ctx.error(
            "background", "must be an array of tables (write [[background]])", raw, None
        )
    if raw and engine == "kernel":
        from ..kernel.background import KERNEL_REFUSAL

        raise ctx.error(
            "background",
            f"with engine = 'kernel': {KERNEL_REFUSAL}",
            allowed="engine = 'sim', or no [[background]] tables",
        )
    out: list[Background] = []
    hosts: list[Host] = []
    resolved: list[dict[str, Any]] = []
    for i, data in enumerate(raw):
        bg, new_hosts, res = validate_background(
            ctx, data, i, p, tcp_defaults, catalog, duration, names, stack
        )
        out.append(bg)
        hosts.extend(new_hosts)
        resolved.append(res)
    return out, hosts, resolved
