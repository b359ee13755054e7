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
    return {**own, **scenario_knobs}
