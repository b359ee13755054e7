"""When a sender held back by the receive window may still grow cwnd (knob `cwnd_limited_rule`,
crates/tcplab-sim/src/tcp/sender/cwnd_use.rs; issue #15, fidelity).

A flow whose receiver offers less than the path's BDP never fills cwnd. Linux 2.6.26 to 3.15
then grows cwnd only while at most `tp->reordering` (3) segments of it are unused
(`tcp_is_cwnd_limited`), Linux 2.4 to 2.6.14 only while the flight fills it, and the BSD stacks
on every ACK outside fast recovery up to TCP_MAXWIN << snd_scale. Before 2026-11-29 every
personality let cwnd grow to about twice the receive window (the flight at least half of
cwnd), which these tests reject.
"""

from __future__ import annotations

from typing import Any

from conftest import needs_core

# 100 KB socket buffers (iperf -w) on a 100 Mbit/s x 50 ms path (BDP 625 KB): the receiver's
# window, about 69 segments, holds the flight; it needs window scale 1 (65 535 < 100 000 <=
# 131 070).
WINDOW = "100KB"


def series(stack: str, **tcp: Any) -> dict[str, Any]:
    import tcplab

    flow: dict[str, Any] = {
        "name": "f",
        "sender_stack": stack,
        "receiver_stack": stack,
        "window": WINDOW,
    }
    if tcp:
        flow["tcp"] = tcp
    doc = {
        "name": "rwnd-limited",
        "duration": "4s",
        "interval": "100ms",
        "seed": 1,
        "path": {"rate": "100Mbit", "rtt": "50ms", "queue": "1bdp"},
        "flow": [flow],
    }
    raw = tcplab.run(doc).raw[0]
    assert raw["flows"][0]["retransmits"] == 0  # no loss: only the window limits the flow
    return raw["series"]


def segments(s: dict[str, Any], key: str) -> list[float]:
    mss = s["cwnd_bytes"][-1] / s["cwnd_segments"][-1]
    return [v / mss for v in s[key]]


@needs_core
def test_linux_2_6_39_stops_reordering_segments_above_the_flight() -> None:
    s = series("linux-2.6.39")
    flight = max(segments(s, "in_flight_bytes"))
    rwnd = max(segments(s, "rwnd_bytes"))
    assert flight <= rwnd
    # cwnd grows while cwnd - flight <= 3 (tp->reordering); the ACK that finds 3 unused adds
    # its own segment: at most flight + 4. The old rule reached about 2 x flight (139 here).
    assert max(s["cwnd_segments"]) <= flight + 4, (max(s["cwnd_segments"]), flight)
    assert max(s["cwnd_segments"]) >= flight + 3


@needs_core
def test_linux_2_4_grows_only_while_the_flight_fills_cwnd() -> None:
    s = series("linux-2.4.27")
    flight = max(segments(s, "in_flight_bytes"))
    assert max(s["cwnd_segments"]) <= flight + 1, (max(s["cwnd_segments"]), flight)


@needs_core
def test_freebsd_grows_to_the_largest_scaled_window() -> None:
    s = series("freebsd-5.3")
    flight = max(segments(s, "in_flight_bytes"))
    assert flight <= max(segments(s, "rwnd_bytes"))
    # Every ACK outside fast recovery grows cwnd, whatever the flight, up to TCP_MAXWIN << 1
    # (the peer's window scale); the old rule stopped near 2 x flight (138 segments, above the
    # ceiling).
    assert max(s["cwnd_bytes"]) == 65_535 << 1
    assert max(s["cwnd_segments"]) > flight + 4
