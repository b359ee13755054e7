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

from pathlib import Path
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


NOSACK_SCENARIO = (
    Path(__file__).resolve().parent.parent
    / "python/tcplab/kernel/validation/a-reno-20mbit-40ms-1bdp.toml"
)


@needs_core
def test_linux6_no_sack_recovery_exit_credits_linux_delivered_count() -> None:
    """linux-6 without SACK (Linux's PRR, `recovery_nosack = "prr-reno"`) on the no-SACK
    kernel record's path (tests/test_nosack_loss_state.py): slow start's overshoot leaves a
    recovery of several seconds, ended by one ACK that covers hundreds of segments. Linux
    counted those segments as delivered when their duplicate ACKs came (`tcp_add_reno_sack`)
    and credits the cumulative ACK with max(acked − sacked_out, 1) (`tcp_remove_reno_sacks`),
    the `delivered` that `tcp_cong_control` hands Reno. With `cwnd_limited_rule = "linux-6"`
    the window before the exit was cwnd-limited (PRR's first round trip sent new data up to
    cwnd), so Reno's additive increase runs on that ACK; credited with every acknowledged
    segment it added acked/cwnd: 581/69, cwnd 69 → 77 at 40.25 ms, and the next round trip
    overflowed the queue (goodput over the phases 3.98 against the kernel's 4.83 Mbit/s). With
    Linux's count the ACK adds at most one segment."""
    import tcplab

    exits = 0
    for rtt_us in (40_050, 40_250, 40_450):
        res = tcplab.run(
            NOSACK_SCENARIO,
            trials=1,
            overrides=[
                "engine=sim",
                "duration=10s",
                "interval=10ms",
                "stack=linux-6",
                "tcp.sack=false",
                "path.jitter=40us",
                f"path.rtt={rtt_us}us",
            ],
        )
        s = res.raw[0]["series"]
        mss = s["cwnd_bytes"][-1] / s["cwnd_segments"][-1]
        for i in range(1, len(s["snd_una"])):
            acked = (s["snd_una"][i] - s["snd_una"][i - 1]) / mss
            if acked < 200 or s["ssthresh_bytes"][i] is None:
                continue
            exits += 1
            # The next ACKs come a round trip later (40 ms): the sample holds the exit ACK's cwnd.
            assert s["cwnd_bytes"][i] <= s["ssthresh_bytes"][i] + mss, (rtt_us, i, acked)
    assert exits >= 3, exits
