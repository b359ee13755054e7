"""linux-6 times ACKs from the segments' send stamps in µs (knob `rtt_sampling`, issue #15).

Linux since 3.12 prefers the send time of the acknowledged segments to the timestamp echo and
keeps RTTs in µs since 3.15 (crates/tcplab-sim/src/tcp/sender/ack.rs `linux_rtt_samples`). On
a path whose RTT does not change, the estimator's RTTVAR then decays to nothing, where samples
read off the 1 ms timestamp clock keep about half a tick of quantisation noise in it.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import needs_core


def rttvar_ms(stack: str, **tcp: Any) -> float:
    import tcplab

    flow: dict[str, Any] = {
        "name": "f",
        "cca": "cubic",
        "sender_stack": stack,
        "receiver_stack": stack,
        # 16 segments per 10.4 ms at 20 Mbit/s: window-limited, no queue, a constant RTT.
        "window": "24KB",
    }
    if tcp:
        flow["tcp"] = tcp
    doc = {
        "name": "rtt-sampling",
        "duration": "5s",
        "interval": "0.5s",
        "seed": 3,
        "path": {"rate": "20Mbit", "rtt": "10.4ms", "queue": "1bdp"},
        "flow": [flow],
    }
    ts = tcplab.run(doc).timeseries
    return float(ts[ts.time_s >= 4.0].rttvar_ms.max())


@needs_core
def test_linux6_rtt_samples_have_no_clock_noise() -> None:
    assert rttvar_ms("linux-6") < 0.01


@needs_core
@pytest.mark.parametrize(
    ("stack", "tcp"),
    [("linux-6", {"rtt_sampling": "timestamps"}), ("linux-2.6.39", {})],
)
def test_timestamp_echo_samples_carry_the_tick(stack: str, tcp: dict[str, Any]) -> None:
    # The echo in whole 1 ms ticks: 10 or 11 ticks, never the path's fraction.
    assert rttvar_ms(stack, **tcp) > 0.1
