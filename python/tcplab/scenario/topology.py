"""The network of a scenario: the dumbbell's bottleneck (``[path]``), the shared hosts
(``[[host]]``), where each flow's end hosts are and how its base RTT is split into access delays,
and the nodes and links of the engine config (docs/design.md §3)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import units
from ..errors import nearest
from ..units import QueueSize, UnitError
from .defaults import (
    ACCESS_RATE_FACTOR,
    DEFAULT_ACCESS_DELAY,
    DEFAULT_HOST_QUEUE,
    DEFAULT_MTU,
    DEFAULT_QUEUE,
    DEFAULT_RTT,
    DIRECTIONS,
    HOST_KEYS,
    MTU_RANGE,
    NAME_RULE,
    PATH_KEYS,
    REVERSE_KEYS,
    ROUTERS,
    SIDES,
)
from .fields import (
    MISSING,
    Ctx,
    Invalid,
    Table,
    as_choice,
    as_duration,
    as_fixed_queue,
    as_int,
    as_jitter,
    as_name,
    as_pos_duration,
    as_rate,
    as_ring,
    as_tick,
)
from .loss import parse_loss
from .model import Host, PathModel

# ---------------------------------------------------------------------------------------------
# The bottleneck and the shared hosts


def validate_path(ctx: Ctx, data: Any) -> tuple[PathModel, dict[str, Any]]:
    t = Table(ctx, data, "path", PATH_KEYS, "[path]")
    rate = t.take("rate", as_rate, required=True, allowed=units.RATE_EXAMPLE)
    mtu = t.take("mtu", as_int(*MTU_RANGE, what="bytes"), default=DEFAULT_MTU, literal=DEFAULT_MTU)
    access_delay = t.take(
        "access_delay",
        as_duration,
        default=units.parse_duration(DEFAULT_ACCESS_DELAY),
        literal=DEFAULT_ACCESS_DELAY,
    )
    if t.has("delay"):
        delay = t.take("delay", as_duration)
        if t.has("rtt"):
            rtt = t.take("rtt", as_pos_duration)
            if rtt < 2 * delay:
                raise t.error(
                    "rtt",
                    f"is less than twice the bottleneck delay path.delay = "
                    f"{units.format_duration(delay)}",
                    f"at least {units.format_duration(2 * delay)}",
                )
        else:
            rtt = 2 * (delay + 2 * access_delay)
    else:
        rtt = t.take(
            "rtt", as_pos_duration, default=units.parse_duration(DEFAULT_RTT), literal=DEFAULT_RTT
        )
        delay = rtt // 2 - 2 * access_delay
        if delay < 0:
            raise t.error(
                "rtt",
                f"is too small for two access links of {units.format_duration(access_delay)} "
                "each way",
                f"at least {units.format_duration(4 * access_delay)}, or a smaller "
                "path.access_delay",
            )
    queue = t.take(
        "queue", units.parse_queue, default=units.parse_queue(DEFAULT_QUEUE), literal=DEFAULT_QUEUE
    )
    loss = {"model": "none"}
    if t.has("loss"):
        loss = parse_loss(ctx, "path.loss", t.raw("loss"))
        t.resolved["loss"] = t.raw("loss")
    else:
        t.resolved["loss"] = {"model": "none"}
    jitter = t.take("jitter", as_jitter, default=0, literal="0s")
    tick = t.take("tick", as_tick, default=0, literal="0s")
    access_rate = t.take("access_rate", as_rate, default=ACCESS_RATE_FACTOR * rate)
    host_queue = t.take(
        "host_queue",
        as_fixed_queue,
        default=units.parse_queue(DEFAULT_HOST_QUEUE),
        literal=DEFAULT_HOST_QUEUE,
    )

    rev = Table(ctx, data.get("reverse", {}), "path.reverse", REVERSE_KEYS, "[path.reverse]")
    rev_rate = rev.take("rate", as_rate, default=rate)
    rev_queue = rev.take("queue", units.parse_queue, default=queue)
    rev_jitter = rev.take("jitter", as_jitter, default=jitter)
    rev_tick = rev.take("tick", as_tick, default=tick)
    rev_loss = {"model": "none"}
    if rev.has("loss"):
        rev_loss = parse_loss(ctx, "path.reverse.loss", rev.raw("loss"))
        rev.resolved["loss"] = rev.raw("loss")

    def limit(tab: Table, q: QueueSize, link_rate: int) -> tuple[int | None, int | None]:
        try:
            return q.limit(link_rate, rtt, mtu)
        except UnitError as e:  # a BDP multiple too large for the engine
            raise (tab if tab.has("queue") else t).error("queue", e.problem, e.allowed) from None

    model = PathModel(
        rate_bps=rate,
        rtt_ns=rtt,
        delay_ns=delay,
        queue=queue,
        queue_limit=limit(t, queue, rate),
        mtu=mtu,
        loss=loss,
        access_rate_bps=access_rate,
        access_delay_ns=access_delay,
        host_queue_limit=host_queue.limit(access_rate, rtt, mtu),
        reverse_rate_bps=rev_rate,
        reverse_queue=rev_queue,
        reverse_queue_limit=limit(rev, rev_queue, rev_rate),
        reverse_loss=rev_loss,
        jitter_ns=jitter,
        reverse_jitter_ns=rev_jitter,
        tick_ns=tick,
        reverse_tick_ns=rev_tick,
    )
    resolved = t.ordered_resolved()
    if "reverse" in data:
        resolved["reverse"] = rev.ordered_resolved()
    return model, resolved


def validate_host(
    ctx: Ctx, data: Any, path: str, p: PathModel, earlier: list[Host]
) -> tuple[Host, dict[str, Any]]:
    t = Table(ctx, data, path, HOST_KEYS, "a [[host]]")
    name = t.take("name", as_name, required=True, allowed=NAME_RULE)
    if name in ROUTERS:
        raise t.error("name", "is reserved for a router", "any other name")
    if any(h.name == name for h in earlier):
        raise t.error("name", "is used by another [[host]]", "a unique name")
    side = t.take("side", as_choice(SIDES), required=True, allowed="'left' (r1) or 'right' (r2)")
    nic = t.take("nic_rate", as_rate, default=None)
    ring = t.take("ring", as_ring, default=None)
    access_rate = t.take("access_rate", as_rate, default=p.access_rate_bps)
    access_delay = t.take("access_delay", as_duration, default=p.access_delay_ns)
    host = Host(
        name=name,
        side=side,
        access_rate_bps=access_rate,
        access_delay_ns=access_delay,
        nic_rate_bps=nic,
        ring_pkts=ring,
    )
    return host, t.ordered_resolved()


# ---------------------------------------------------------------------------------------------
# One flow's end hosts


@dataclass(frozen=True)
class Endpoints:
    """Where a flow runs: its named end hosts (None: an automatic host is made for it) and its
    direction, forward (left → right, over r1 → r2) or reverse."""

    src: Host | None
    dst: Host | None
    direction: str

    @property
    def send_side(self) -> str:
        return "left" if self.direction == "forward" else "right"

    @property
    def recv_side(self) -> str:
        return "right" if self.direction == "forward" else "left"


def flow_endpoints(t: Table, named: Mapping[str, Host]) -> Endpoints:
    """``src``, ``dst`` and ``direction`` of the flow table *t*: the direction defaults to the one
    the named hosts' sides give (else forward), and must agree with them."""

    def host_ref(v: Any) -> Host:
        if not isinstance(v, str) or v not in named:
            near = nearest(v, named) if isinstance(v, str) else None
            hint = f" (did you mean '{near}'?)" if near else ""
            allowed = (
                "the name of a [[host]]: " + ", ".join(repr(n) for n in named)
                if named
                else "the name of a [[host]] (none are defined; omit src/dst to get "
                "automatic hosts)"
            )
            raise Invalid(f"unknown host{hint}", allowed)
        return named[v]

    src = t.take("src", host_ref, default=None)
    dst = t.take("dst", host_ref, default=None)
    if t.has("direction"):
        direction = t.take("direction", as_choice(DIRECTIONS))
    elif src is not None:
        direction = "forward" if src.side == "left" else "reverse"
    elif dst is not None:
        direction = "forward" if dst.side == "right" else "reverse"
    else:
        direction = "forward"
        t.resolved["direction"] = direction
    ends = Endpoints(src, dst, direction)
    send_side, recv_side = ends.send_side, ends.recv_side
    if src is not None and src.side != send_side:
        raise t.error(
            "src",
            f"host '{src.name}' is on the {src.side} side, but a {direction} flow sends from "
            f"the {send_side}",
            f"a host on the {send_side} side, or direction = "
            f"'{'reverse' if direction == 'forward' else 'forward'}'",
        )
    if dst is not None and dst.side != recv_side:
        raise t.error(
            "dst",
            f"host '{dst.name}' is on the {dst.side} side, but a {direction} flow is received on "
            f"the {recv_side}",
            f"a host on the {recv_side} side",
        )
    return ends


@dataclass(frozen=True)
class Placement:
    """A flow's end hosts with their access delays, and its base RTT."""

    src: Host
    dst: Host
    rtt_ns: int
    new_hosts: tuple[Host, ...]  #: the automatic hosts made for this flow


def place_flow(ctx: Ctx, t: Table, p: PathModel, name: str, ends: Endpoints) -> Placement:
    """The flow's base RTT (``rtt``, default ``path.rtt``) and end hosts: the base RTT is
    2 × (sender access + bottleneck + receiver access) one-way delays, so the access delays of
    the automatic hosts (``<flow>.snd``, ``<flow>.rcv``) share what the bottleneck and the named
    hosts leave of it; a flow between two named hosts has the RTT their delays give."""
    src, dst = ends.src, ends.dst
    rtt_given = t.has("rtt")
    rtt = t.take("rtt", as_pos_duration, default=p.rtt_ns)

    budget_ns = rtt // 2 - p.delay_ns  # one-way access delay to share between the two hosts
    fixed = (src.access_delay_ns if src else 0) + (dst.access_delay_ns if dst else 0)
    if src is not None and dst is not None:
        actual = 2 * (src.access_delay_ns + p.delay_ns + dst.access_delay_ns)
        if rtt_given and actual != rtt:
            raise t.error(
                "rtt",
                f"cannot be met: hosts '{src.name}' and '{dst.name}' have fixed access delays, "
                f"giving a base RTT of {units.format_duration(actual)}",
                f"{units.format_duration(actual)} or omit rtt",
            )
        rtt = actual
    elif budget_ns < fixed:
        minimum = 2 * (p.delay_ns + fixed)
        why = f"the bottleneck's one-way delay is {units.format_duration(p.delay_ns)}"
        if fixed:
            who = src.name if src else dst.name  # type: ignore[union-attr]
            why += f" and host '{who}' adds {units.format_duration(fixed)}"
        note = "" if rtt_given else " (the default, path.rtt)"
        raise ctx.error(
            t.field("rtt"),
            f"base RTT {units.format_duration(rtt)}{note} is too small: {why}",
            t.raw("rtt") if rtt_given else MISSING,
            f"at least {units.format_duration(minimum)}",
        )

    new_hosts: list[Host] = []
    if src is None or dst is None:
        free = budget_ns - fixed
        if src is None and dst is None:
            snd_delay, rcv_delay = free - free // 2, free // 2
        elif src is None:
            snd_delay, rcv_delay = free, 0
        else:
            snd_delay, rcv_delay = 0, free
        if src is None:
            src = Host(f"{name}.snd", ends.send_side, p.access_rate_bps, snd_delay, auto=True)
            new_hosts.append(src)
        if dst is None:
            dst = Host(f"{name}.rcv", ends.recv_side, p.access_rate_bps, rcv_delay, auto=True)
            new_hosts.append(dst)
    return Placement(src, dst, rtt, tuple(new_hosts))


# ---------------------------------------------------------------------------------------------
# Nodes and links of the engine config


def direction_config(
    rate: int,
    delay: int,
    limit: tuple[int | None, int | None],
    loss: Mapping[str, Any],
    jitter_ns: int = 0,
    tick_ns: int = 0,
) -> dict[str, Any]:
    """One direction of a link in the engine config: rate, delay, drop-tail queue, loss and
    (when not 0) uniform jitter and a timer tick."""
    d = {
        "rate_bps": rate,
        "delay_ns": delay,
        "queue": {"kind": "droptail", "limit_pkts": limit[0], "limit_bytes": limit[1]},
        "loss": dict(loss),
    }
    if jitter_ns:
        d["jitter"] = {"model": "uniform", "max_ns": jitter_ns}
    if tick_ns:
        d["tick_ns"] = tick_ns
    return d


def network(
    path: PathModel, hosts: list[Host]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The engine config's nodes (the routers r1, r2 and every host) and links (the monitored
    bottleneck r1 ↔ r2 and one access link per host)."""
    nodes: list[dict[str, Any]] = [{"name": r, "kind": "router"} for r in ROUTERS]
    for h in hosts:
        nodes.append(
            {
                "name": h.name,
                "kind": "host",
                "nic_rate_bps": h.nic_rate_bps,
                "nic_ring_pkts": h.ring_pkts,
            }
        )
    links: list[dict[str, Any]] = [
        {
            "name": "bottleneck",
            "a": ROUTERS[0],
            "b": ROUTERS[1],
            "mtu": path.mtu,
            "monitor": True,
            "ab": direction_config(
                path.rate_bps,
                path.delay_ns,
                path.queue_limit,
                path.loss,
                path.jitter_ns,
                path.tick_ns,
            ),
            "ba": direction_config(
                path.reverse_rate_bps,
                path.delay_ns,
                path.reverse_queue_limit,
                path.reverse_loss,
                path.reverse_jitter_ns,
                path.reverse_tick_ns,
            ),
        }
    ]
    for d in ("ab", "ba") if path.schedule else ():  # [[path.schedule]]: scenario/schedule.py
        if steps := [s for s in (st.direction(d) for st in path.schedule) if s is not None]:
            links[0][d]["schedule"] = steps
    for h in hosts:
        # Access link host ↔ router; both directions use host_queue and are lossless.
        leg = direction_config(
            h.access_rate_bps, h.access_delay_ns, path.host_queue_limit, {"model": "none"}
        )
        links.append(
            {
                "name": f"{h.name}.access",
                "a": h.name,
                "b": h.router,
                "mtu": path.mtu,
                "monitor": False,
                "ab": leg,
                "ba": copy.deepcopy(leg),
            }
        )
    return nodes, links
