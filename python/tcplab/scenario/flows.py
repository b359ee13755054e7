"""``[[flow]]`` tables → expanded flows (one per iperf stream) and their automatic hosts.

:func:`validate_flow` runs the named steps in order — the table and its kind, the name, the end
points (:func:`~tcplab.scenario.topology.flow_endpoints`), the timing, the base RTT and host
placement (:func:`~tcplab.scenario.topology.place_flow`), then the TCP set-up
(:func:`~tcplab.scenario.personality.resolve_tcp`) or the UDP source — so the first bad field
found is the first in that order."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import units
from ..catalog import Catalog
from .defaults import DEFAULT_STACK, FLOW_TCP_KEYS, FLOW_UDP_KEYS
from .fields import (
    Ctx,
    Table,
    as_choice,
    as_duration,
    as_int,
    as_name,
    as_pos_bytes,
    as_rate,
    kinded_table,
    take_udp_payload,
)
from .model import Flow, Host, PathModel
from .personality import resolve_tcp
from .topology import Endpoints, Placement, flow_endpoints, place_flow

FLOW_KINDS = ("tcp", "udp")


def validate_flow(
    ctx: Ctx,
    data: Any,
    i: int,
    p: PathModel,
    named: Mapping[str, Host],
    tcp_defaults: Mapping[str, Any],
    catalog: Catalog,
    duration: int,
    groups: set[str],
    stack: str = DEFAULT_STACK,
) -> tuple[list[Flow], list[Host], dict[str, Any]]:
    """Validate ``flow.<i>`` (*data*) on path *p* with the named hosts *named*; *groups* holds
    the names of the flows before it (this one's is added). Returns the expanded flows, the
    automatic hosts made for them and the table as resolved."""
    t, kind = _flow_table(ctx, data, i)
    name = _flow_name(t, i, groups)
    ends = flow_endpoints(t, named)
    timing = _timing(t, kind, duration)
    place = place_flow(ctx, t, p, name, ends)
    if kind == "tcp":
        flows = _tcp_flows(ctx, t, name, ends, timing, place, catalog, tcp_defaults, stack)
    else:
        flows = [_udp_flow(t, name, ends, timing, place, p)]
    return flows, list(place.new_hosts), t.ordered_resolved()


def _flow_table(ctx: Ctx, data: Any, i: int) -> tuple[Table, str]:
    """The table of ``flow.<i>`` with the keys of its kind, and the kind."""
    return kinded_table(
        ctx, data, f"flow.{i}", "flow", "flows", FLOW_TCP_KEYS, FLOW_UDP_KEYS, "'tcp' or 'udp'"
    )


def _flow_name(t: Table, i: int, groups: set[str]) -> str:
    """The flow's (group's) name, default ``flow<i>``, unique among the flows."""
    name = t.take("name", as_name, default=f"flow{i}", literal=f"flow{i}")
    if name in groups:
        raise t.error("name", "is used by another [[flow]]", "a unique flow name")
    groups.add(name)
    t.take("kind", as_choice(FLOW_KINDS), default="tcp", literal="tcp")
    return name


@dataclass(frozen=True)
class Timing:
    """When a flow runs (ns): start, the start's random jitter, stop; ``bytes`` of a sized one."""

    start_ns: int
    jitter_ns: int
    stop_ns: int
    nbytes: int | None


def _timing(t: Table, kind: str, duration: int) -> Timing:
    """``start``, ``start_jitter`` and either ``stop`` or (TCP) ``bytes``, within the run."""
    start = t.take("start", as_duration, default=0, literal="0s")
    if start >= duration:
        raise t.error(
            "start",
            "is not before the end of the run",
            f"less than duration = {units.format_duration(duration)}",
        )
    jitter = t.take("start_jitter", as_duration, default=0)
    if start + jitter >= duration:
        raise t.error(
            "start_jitter",
            "can move the start past the end of the run",
            f"less than {units.format_duration(duration - start)} (duration − start)",
        )
    nbytes = None
    if kind == "tcp" and t.has("bytes"):
        if t.has("stop"):
            raise t.error(
                "bytes",
                "a flow is either sized (bytes) or timed (stop), not both",
                "remove stop (a sized transfer runs until done or until the end of the run)",
            )
        nbytes = t.take("bytes", as_pos_bytes)
        stop = duration
    else:
        stop = t.take("stop", as_duration, default=duration)
        if stop <= start + jitter:
            raise t.error(
                "stop",
                "is not after start" + (" + start_jitter" if jitter else ""),
                f"more than {units.format_duration(start + jitter)}",
            )
        if stop > duration:
            raise t.error(
                "stop",
                "is after the end of the run",
                f"at most duration = {units.format_duration(duration)}",
            )
    return Timing(start, jitter, stop, nbytes)


def _tcp_flows(
    ctx: Ctx,
    t: Table,
    name: str,
    ends: Endpoints,
    timing: Timing,
    place: Placement,
    catalog: Catalog,
    tcp_defaults: Mapping[str, Any],
    stack: str,
) -> list[Flow]:
    """One flow per stream (``streams``, iperf ``-P``), each with the resolved TCP set-up."""
    streams = t.take("streams", as_int(1, 10_000), default=1, literal=1)
    prelude = _app(t)
    setup = resolve_tcp(ctx, t, catalog, tcp_defaults, stack)
    return [
        Flow(
            name=f"{name}.{k}" if streams > 1 else name,
            group=name,
            kind="tcp",
            direction=ends.direction,
            src=place.src.name,
            dst=place.dst.name,
            start_ns=timing.start_ns,
            start_jitter_ns=timing.jitter_ns,
            stop_ns=timing.stop_ns,
            rtt_ns=place.rtt_ns,
            bytes=timing.nbytes,
            prelude_bytes=prelude[0] if prelude else None,
            prelude_gap_ns=prelude[1] if prelude else 0,
            cca=copy.deepcopy(setup.cca),
            tcp=dict(setup.knobs),
            receiver_tcp=dict(setup.receiver_knobs),
            sender_stack=setup.sender_stack,
            receiver_stack=setup.receiver_stack,
        )
        for k in range(streams)
    ]


#: The applications a TCP flow can run: ``bulk`` writes its data from the first moment (iperf 2,
#: and the ideal sender); ``iperf3`` first writes its 37-byte cookie on the data connection
#: (iperf3's COOKIE_SIZE) and starts the bulk when the server's answer comes back, about one
#: round trip later (crates/tcplab-sim/src/tcp/sender/mod.rs, ``Prelude``).
APPS = ("bulk", "iperf3")
IPERF3_COOKIE_BYTES = 37


def _app(t: Table) -> tuple[int, int] | None:
    """``app`` and ``app_delay``: the opening write (bytes) and the delay from its ACK to the
    bulk (ns), or None for a bulk application."""
    app = t.take("app", as_choice(APPS), default="bulk", literal="bulk")
    if app != "iperf3":
        if t.has("app_delay"):
            raise t.error(
                "app_delay",
                'applies to app = "iperf3" only',
                'remove app_delay, or set app = "iperf3"',
            )
        return None
    return IPERF3_COOKIE_BYTES, t.take("app_delay", as_duration, default=0, literal="0s")


def _udp_flow(
    t: Table, name: str, ends: Endpoints, timing: Timing, place: Placement, p: PathModel
) -> Flow:
    """A UDP constant-bit-rate source (iperf ``-u -b``): ``rate`` and ``payload``."""
    rate = t.take("rate", as_rate, required=True, allowed=units.RATE_EXAMPLE)
    payload = take_udp_payload(t, p.mtu)
    return Flow(
        name=name,
        group=name,
        kind="udp",
        direction=ends.direction,
        src=place.src.name,
        dst=place.dst.name,
        start_ns=timing.start_ns,
        start_jitter_ns=timing.jitter_ns,
        stop_ns=timing.stop_ns,
        rtt_ns=place.rtt_ns,
        rate_bps=rate,
        payload_bytes=payload,
    )
