"""Checks of the end-host knobs of issue #15 §3 (crates/tcplab-sim/src/host.rs): NIC receive
interrupt coalescing (``rx_coalesce``) and late host timers (``timer_slack``).

* ``rx_coalesce`` is 0 (off) or an interval the Intel e1000 driver accepts: its
  ``InterruptThrottleRate`` takes 100 to 100000 interrupts/s (Documentation/networking/
  device_drivers/ethernet/intel/e1000.rst), i.e. 10 µs to 10 ms between interrupts;
* ``timer_slack`` is at most 100 ms (the coarsest host timers in the sources are ticks of
  10 ms, HZ = 100, and Windows' 15.6 ms default resolution; a larger "slack" is a typo);
* a host has one NIC: every flow that sets ``rx_coalesce`` for the same host must give the same
  value (the engine refuses otherwise, naming its own field);
* the kernel engine cannot honour either (python/tcplab/kernel/hosts.py).
"""

from __future__ import annotations

from typing import Any

from .. import units
from .fields import Ctx, Invalid

US = 1_000
MS = 1_000_000

RX_COALESCE_MIN = 10 * US  # 100000 interrupts/s
RX_COALESCE_MAX = 10 * MS  # 100 interrupts/s
TIMER_SLACK_MAX = 100 * MS

HOST_KNOBS = ("rx_coalesce", "timer_slack")


def check_host_knob(name: str, value: Any) -> Any:
    """*value* (already converted to ns) if knob *name* allows it; :class:`Invalid` otherwise."""
    if name == "rx_coalesce" and value and not RX_COALESCE_MIN <= value <= RX_COALESCE_MAX:
        raise Invalid(
            f"is {units.format_duration(value)}: outside the interrupt intervals an e1000 NIC "
            "can be set to (InterruptThrottleRate 100 to 100000 interrupts/s)",
            "0 (off) or 10us to 10ms, e.g. '125us' (8000 interrupts/s)",
        )
    if name == "timer_slack" and value > TIMER_SLACK_MAX:
        raise Invalid(
            f"is {units.format_duration(value)}: larger than any host timer's lateness "
            "(ticks are 1 to 15.6 ms)",
            "0 (exact) up to 100ms, e.g. '50us' (Linux timer slack) or '4ms' (HZ = 250)",
        )
    return value


def check_hosts(ctx: Ctx, flows: list[Any], doc: dict[str, Any], engine: str) -> None:
    """Per-host consistency of ``rx_coalesce`` over the TCP flows, and the kernel engine's
    refusal (*flows*: the expanded :class:`~tcplab.scenario.model.Flow` objects; *doc*: the
    scenario document, to name the field where a value was written)."""
    flows_raw = doc.get("flow") or []
    index = {
        t.get("name"): i for i, t in enumerate(flows_raw) if isinstance(t, dict) and "name" in t
    }
    seen: dict[str, tuple[int, str]] = {}
    for f in flows:
        if f.kind != "tcp":
            continue
        i = index.get(f.group, 0)
        for host, side, knobs in (
            (f.src, "tcp", f.tcp or {}),
            (f.dst, "receiver_tcp", f.receiver_tcp or {}),
        ):
            fld = _where(doc, i, side, "rx_coalesce")
            if engine == "kernel":
                for knob in HOST_KNOBS:
                    if knobs.get(knob):
                        from ..kernel.hosts import KERNEL_REFUSALS

                        raise ctx.error(
                            _where(doc, i, side, knob),
                            f"with engine = 'kernel': {KERNEL_REFUSALS[knob]}",
                            units.format_duration(knobs[knob]),
                            f"engine = 'sim', or {knob} = 0",
                        )
            v = knobs.get("rx_coalesce") or 0
            if not v:
                continue
            if host in seen and seen[host][0] != v:
                other, ofld = seen[host]
                raise ctx.error(
                    fld,
                    f"gives host '{host}' rx_coalesce {units.format_duration(v)}, but {ofld} "
                    f"gives it {units.format_duration(other)}; a host has one NIC",
                    units.format_duration(v),
                    f"the same value for every flow on host '{host}'",
                )
            seen.setdefault(host, (v, fld))


def _where(doc: dict[str, Any], i: int, side: str, knob: str) -> str:
    """The field that gave flow *i*'s *side* (``tcp`` or ``receiver_tcp``) knob *knob*."""
    flows_raw = doc.get("flow") or []
    t = flows_raw[i] if 0 <= i < len(flows_raw) and isinstance(flows_raw[i], dict) else {}
    for s in (side, "tcp") if side == "receiver_tcp" else ("tcp",):
        if isinstance(t.get(s), dict) and knob in t[s]:
            return f"flow.{i}.{s}.{knob}"
    if isinstance(doc.get("tcp"), dict) and knob in doc["tcp"]:
        return f"tcp.{knob}"
    return f"flow.{i}.{side}.{knob}"
