"""Personality rules: how what an application asks of its socket changes the knobs a host's
personality gives it. The scenario validator (tcplab.scenario.personality) applies them; each
rule cites the OS behaviour it models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Stack

__all__ = ["configured_window", "host_knobs"]


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
    # Likewise `window_scaling = true` is a host configured to scale (XP's Tcp1323Opts set with
    # bit 0), which then sends the option in its SYN even at a window that needs no shift: p0f
    # 3.00b p0f.fp lists tuned Windows XP SYNs 'mss,nop,ws,nop,nop,sok' with shift 0 at window
    # 65535 beside the default 'mss,nop,nop,sok' (assumed: no Microsoft text says what
    # Tcp1323Opts = 1 or 3 does to the SYN) — unless the scenario sets
    # `window_scaling_offer_unscaled` itself.
    if (
        scenario_knobs.get("window_scaling") is True
        and "window_scaling_offer_unscaled" not in scenario_knobs
        and knobs.get("window_scaling_offer_unscaled") is False
    ):
        knobs["window_scaling_offer_unscaled"] = True
    return configured_window(knobs, scenario_knobs, window_set=window_set)


def configured_window(
    knobs: dict[str, Any], set_knobs: Mapping[str, Any], *, window_set: bool = False
) -> dict[str, Any]:
    """*knobs* with Windows' default receive-window algorithm (`rcvbuf_round_to_mss`: 16 KB in
    the SYN, rounded up to whole segments once established) switched off when the scenario
    configures the window (*window_set*, or `rcvbuf` among *set_knobs*): "When you add the
    TcpWindowSize value, it overrides the default window size algorithm" (Microsoft KB 224829,
    "TCP window size"; iperf's -w sets SO_RCVBUF, assumed to override it alike) — unless the
    scenario sets `rcvbuf_round_to_mss` itself.

    Likewise Windows Vista / 7 / Server 2008's 8,192-B SYN and SYN-ACK window (`syn_window`,
    measured on hosts at their defaults: p0f 3.09b p0f.fp, nmap-os-db) is switched off, so the
    configured buffer is offered from the SYN on (assumed, as for XP: setting SO_RCVBUF turns
    receive autotuning off for the socket; no Microsoft text read says what such a socket's SYN
    carries) — unless the scenario sets `syn_window` itself."""
    configured = window_set or "rcvbuf" in set_knobs
    if (
        configured
        and "rcvbuf_round_to_mss" not in set_knobs
        and knobs.get("rcvbuf_round_to_mss") is True
    ):
        knobs["rcvbuf_round_to_mss"] = False
    if configured and "syn_window" not in set_knobs and knobs.get("syn_window"):
        knobs["syn_window"] = 0
    return knobs
