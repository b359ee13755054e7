"""Personality rules: how what an application asks of its socket changes the knobs a host's
personality gives it. The scenario validator (tcplab.scenario.personality) applies them; each
rule cites the OS behaviour it models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Stack

__all__ = ["host_knobs"]


def host_knobs(
    stack: Stack, scenario_knobs: Mapping[str, Any], *, window_set: bool
) -> dict[str, Any]:
    """The knobs of one end host of a flow: *stack*'s personality, then the scenario's knobs for
    the flow (*scenario_knobs*: ``[tcp]``, ``window``, ``[flow.tcp]``) over it.

    *window_set*: the flow sets ``window`` (iperf ``-w``, i.e. SO_SNDBUF/SO_RCVBUF on the
    socket). Setting SO_RCVBUF fixes the receive buffer, so receive autotuning is off for such a
    socket (Linux SOCK_RCVBUF_LOCK; assumed alike on Windows/macOS).
    """
    own = stack.knob_values()
    if window_set and own.get("rcvbuf_autotune_max") is not None:
        own["rcvbuf_autotune_max"] = None
    knobs = {**own, **scenario_knobs}
    # A scenario that sets `timestamps` means the connection (docs/scenario-format.md, "Stacks"):
    # `timestamps = true` is a host configured to use them, which also offers them in its SYN —
    # Windows' `Timestamps = Enabled`, "Enable TCP timestamps on outbound connections and allow
    # inbound connections to use TCP timestamps" (MSFT_NetTCPSetting, Windows 8 / Server 2012;
    # assumed alike for netsh `timestamps=enabled` on Vista/7 and for XP's Tcp1323Opts set to 2
    # or 3) — unless the scenario sets `timestamps_offer` itself. Without it the personality's
    # answer-only setting stands (windows-xp, windows-7: `timestamps_offer = false`).
    if scenario_knobs.get("timestamps") is True and "timestamps_offer" not in scenario_knobs:
        knobs["timestamps_offer"] = True
    return knobs
