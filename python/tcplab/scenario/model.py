"""The validated scenario (:class:`Scenario`, its :class:`PathModel`, :class:`Host` and
:class:`Flow` objects) and its renderings: the normalized config of one trial (docs/design.md §3),
the resolved scenario as TOML, and the topology text of ``tcplab validate``."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from .. import units
from ..units import QueueSize
from .defaults import DEFAULT_STACK, ROUTERS
from .loss import show_loss


@dataclass(frozen=True)
class PathModel:
    """The bottleneck and access defaults after validation (all base units)."""

    rate_bps: int
    rtt_ns: int
    delay_ns: int
    queue: QueueSize
    queue_limit: tuple[int | None, int | None]
    mtu: int
    loss: dict[str, Any]
    access_rate_bps: int
    access_delay_ns: int
    host_queue_limit: tuple[int | None, int | None]
    reverse_rate_bps: int
    reverse_queue: QueueSize
    reverse_queue_limit: tuple[int | None, int | None]
    reverse_loss: dict[str, Any]
    #: Extra delay per packet after serialisation, uniform in [0, jitter] (``path.jitter``,
    #: ``path.reverse.jitter``; crates/tcplab-sim/src/link.rs "Jitter"); 0 = none.
    jitter_ns: int = 0
    reverse_jitter_ns: int = 0
    #: Timer granularity of a tick-driven emulator (``path.tick``, ``path.reverse.tick``;
    #: crates/tcplab-sim/src/link.rs "Timer ticks"): packets leave only at its multiples; 0 = none.
    tick_ns: int = 0
    reverse_tick_ns: int = 0
    #: Time-varying path: scenario.schedule.Step objects in time order (``[[path.schedule]]``).
    schedule: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Host:
    """An end host. ``auto`` hosts were created for one flow (``<flow>.snd`` / ``<flow>.rcv``)."""

    name: str
    side: str
    access_rate_bps: int
    access_delay_ns: int
    nic_rate_bps: int | None = None
    ring_pkts: int | None = None
    auto: bool = False

    @property
    def router(self) -> str:
        return ROUTERS[0] if self.side == "left" else ROUTERS[1]


@dataclass(frozen=True)
class Flow:
    """One expanded flow (one iperf stream); ``group`` is the [[flow]] table's name."""

    name: str
    group: str
    kind: str
    direction: str
    src: str
    dst: str
    start_ns: int
    stop_ns: int
    rtt_ns: int
    bytes: int | None = None
    #: The application's opening write before its bulk (bytes; iperf3's cookie) and the time
    #: from its acknowledgement to the first bulk write; None: bulk data from the start.
    prelude_bytes: int | None = None
    prelude_gap_ns: int = 0
    cca: dict[str, Any] | None = None
    tcp: dict[str, Any] | None = None
    receiver_tcp: dict[str, Any] | None = None
    sender_stack: str | None = None
    receiver_stack: str | None = None
    rate_bps: int | None = None
    payload_bytes: int | None = None
    start_jitter_ns: int = 0

    def start_for(self, seed: int) -> int:
        """Start time in the trial with seed *seed*: ``start`` plus, with ``start_jitter``, a
        uniform draw from [0, start_jitter] ns keyed by the trial seed and the flow name
        (first 8 bytes of sha256(f"tcplab-start:{seed}:{name}") modulo start_jitter + 1)."""
        if not self.start_jitter_ns:
            return self.start_ns
        digest = hashlib.sha256(f"tcplab-start:{seed}:{self.name}".encode()).digest()
        return self.start_ns + int.from_bytes(digest[:8], "big") % (self.start_jitter_ns + 1)

    def to_config(self, seed: int = 0) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "group": self.group,
            "kind": self.kind,
            "src": self.src,
            "dst": self.dst,
            "start_ns": self.start_for(seed),
            "stop_ns": self.stop_ns,
        }
        if self.kind == "tcp":
            d["bytes"] = self.bytes
            if self.prelude_bytes is not None:
                d["prelude_bytes"] = self.prelude_bytes
                d["prelude_gap_ns"] = self.prelude_gap_ns
            d["cca"] = copy.deepcopy(self.cca)
            d["tcp"] = dict(self.tcp or {})
            # The receiving host's knobs, always written out (docs/design.md §3; they differ
            # from "tcp" when the receiver runs another stack or has [flow.receiver_tcp]).
            rtcp = self.receiver_tcp if self.receiver_tcp is not None else d["tcp"]
            d["receiver_tcp"] = dict(rtcp)
        else:
            d["rate_bps"] = self.rate_bps
            d["payload_bytes"] = self.payload_bytes
        return d


@dataclass
class Scenario:
    """A validated, expanded scenario. :meth:`config` yields the normalized config of one trial."""

    file: str
    name: str
    description: str
    seed: int
    duration_ns: int
    interval_ns: int
    trials: int
    engine: str
    record_changes: bool
    path: PathModel
    hosts: list[Host]
    flows: list[Flow]
    nodes: list[dict[str, Any]]
    links: list[dict[str, Any]]
    resolved: dict[str, Any] = field(repr=False)
    #: Links or hosts ("host:NAME") whose packets trial 0 records as pcap (see tcplab.capture).
    capture: tuple[str, ...] = ()
    #: ``[run]``: where trials run (tcplab.executors); never changes results.
    run_options: dict[str, str] = field(default_factory=dict)
    #: ``[[background]]`` sources (tcplab.scenario.background.Background).
    background: list[Any] = field(default_factory=list)

    def config(self, seed: int) -> dict[str, Any]:
        """The normalized config (§3) of a trial whose seed is *seed*."""
        return {
            "seed": seed,
            "duration_ns": self.duration_ns,
            "interval_ns": self.interval_ns,
            "record_changes": self.record_changes,
            "nodes": copy.deepcopy(self.nodes),
            "links": copy.deepcopy(self.links),
            "flows": [f.to_config(seed) for f in self.flows],
            # Only when there is background: configs without it stay byte-identical.
            **({"background": [b.to_config() for b in self.background]} if self.background else {}),
        }

    @property
    def groups(self) -> list[str]:
        out: list[str] = []
        for f in self.flows:
            if f.group not in out:
                out.append(f.group)
        return out

    def resolved_toml(self) -> str:
        """The resolved scenario as TOML (every default written out; reproduces this run)."""
        import tomli_w

        header = (
            f"Resolved scenario '{self.name}' (from {self.file}), written by tcplab.\n"
            "Overrides (--set, --trials, --seed, --engine) are applied and constant defaults\n"
            "are written out; values derived from others (path delay, access rates and\n"
            "delays, flow RTTs, [path.reverse]) are computed from them as documented in\n"
            "docs/scenario-format.md. Running this file reproduces the run exactly."
        )
        comment = "".join(f"# {line}\n" for line in header.splitlines())
        return comment + "\n" + tomli_w.dumps(self.resolved)

    def topology_text(self) -> str:
        """A brief human-readable description of the expanded topology."""
        p = self.path
        h = units.human_rate
        d = units.human_duration
        lines = [
            f"scenario {self.name}: {len(self.flows)} flow(s), {self.trials} trial(s), seed "
            f"{self.seed}, duration {d(self.duration_ns)}, interval {d(self.interval_ns)}, "
            f"engine {self.engine}",
            f"  bottleneck r1->r2: {h(p.rate_bps)}, one-way delay {d(p.delay_ns)}, "
            f"queue {_show_limit(p.queue_limit)} ({_show_queue(p.queue)}), "
            f"loss {show_loss(p.loss)}, mtu {p.mtu}",
            f"  bottleneck r2->r1: {h(p.reverse_rate_bps)}, "
            f"queue {_show_limit(p.reverse_queue_limit)} ({_show_queue(p.reverse_queue)}), "
            f"loss {show_loss(p.reverse_loss)}",
            f"  base RTT {d(p.rtt_ns)}",
        ]
        if p.schedule:
            from .schedule import show_schedule  # (schedule imports this module)

            lines += ["  schedule:", *show_schedule(p)]
        lines += [
            "  hosts:",
        ]
        for host in self.hosts:
            extra = ""
            if host.nic_rate_bps is not None:
                extra += f", nic {h(host.nic_rate_bps)}"
            if host.ring_pkts is not None:
                extra += f", ring {host.ring_pkts} pkts"
            lines.append(
                f"    {host.name} ({host.side}, via {host.router}): "
                f"access {h(host.access_rate_bps)}, {d(host.access_delay_ns)}{extra}"
            )
        lines.append("  flows:")
        for f in self.flows:
            what = f"{f.kind} {f.cca['name']}" if f.kind == "tcp" and f.cca else f.kind
            if f.kind == "tcp" and (f.sender_stack, f.receiver_stack) != (DEFAULT_STACK,) * 2:
                what += f" [{f.sender_stack} -> {f.receiver_stack}]"
            if f.kind == "udp" and f.rate_bps is not None:
                what += f" {h(f.rate_bps)}"
            span = f"{d(f.start_ns)}..{d(f.stop_ns)}"
            if f.start_jitter_ns:
                span = f"{d(f.start_ns)} (+ up to {d(f.start_jitter_ns)})..{d(f.stop_ns)}"
            if f.bytes is not None:
                span += f", {units.format_bytes(f.bytes)}"
            lines.append(
                f"    {f.name} [{f.group}] {what}: {f.src} -> {f.dst} ({f.direction}), "
                f"RTT {d(f.rtt_ns)}, {span}"
            )
        if self.background:
            lines.append("  background:")
            lines.extend(b.describe() for b in self.background)
        return "\n".join(lines)


def _show_limit(limit: tuple[int | None, int | None]) -> str:
    pkts, nbytes = limit
    return f"{pkts} pkts" if pkts is not None else f"{nbytes} B"


def _show_queue(q: QueueSize) -> str:
    if q.kind == "bdp":
        return f"{float(q.amount):g} BDP"
    return "as given"
