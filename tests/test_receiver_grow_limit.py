"""Linux 2.x receivers stop growing their window early when their skbs are expensive (issue #15 §3).

Linux 2.4/2.6 `tcp_grow_window` raises `rcv_ssthresh` (the most the receiver offers) by two
segments per full in-order segment only if the skb's `truesize` (the driver's receive buffer plus
`struct sk_buff`), counted at 3/4 (`tcp_win_from_space`, `tcp_adv_win_scale` = 2), fits in the
segment's length; otherwise `__tcp_grow_window` lets it grow only while `rcv_ssthresh` is at most
half the target window (`tcp_full_space`, or from 2.6.15 the window of `tcp_rmem[2]`), a quarter
at twice the overhead, and so on (net/ipv4/tcp_input.c of 2.4.27 and 2.6.11, read for the facts).
Knobs `rcv_skb_truesize` (bytes; 2304 for linux-2.4.27 and 2.6.10, an e1000 2048-B buffer;
1792 for the later 2.6 personalities, e1000's 1522-B buffer: the fast path) and
`grow_target_rmem_max` (2.6.16 and later). The unit tests of the arithmetic are in
crates/tcplab-sim/src/tcp/receiver/recv_core.rs; these runs check that whole connections offer
what the rule allows.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import needs_core

MSS = 1448  # MTU 1500 with timestamps


def largest_window(receiver: str, window: str | None = None, **receiver_tcp: Any) -> float:
    """The largest window the receiver offered to a 3-s Reno bulk flow on 50 Mbit/s x 40 ms."""
    import tcplab

    flow: dict[str, Any] = {
        "name": "bulk",
        "cca": "reno",
        "sender_stack": "linux-2.6.29",
        "receiver_stack": receiver,
    }
    if window is not None:
        flow["window"] = window
    if receiver_tcp:
        flow["receiver_tcp"] = receiver_tcp
    doc = {
        "name": "grow-limit",
        "duration": "3s",
        "interval": "100ms",
        "seed": 1,
        "path": {"rate": "50Mbit", "rtt": "40ms", "queue": "1bdp"},
        "flow": [flow],
    }
    s = tcplab.run(doc).raw[0]["series"]
    return max(w for f, w in zip(s["flow"], s["rwnd_bytes"], strict=True) if f == 0)


@needs_core
@pytest.mark.parametrize("receiver", ["linux-2.4.27", "linux-2.6.10"])
def test_expensive_skbs_stop_the_window_at_half_the_buffer(receiver: str) -> None:
    buf = 256 * 1024
    # The personality's 2304-B truesize (3/4 of it, 1728 B, exceeds 1448 B): growth only while
    # rcv_ssthresh <= buf/2, so the window ends within one growth (two segments) above it.
    w = largest_window(receiver, "256KiB")
    assert buf // 2 < w <= buf // 2 + 2 * MSS, w
    # Knob off, or a truesize on the fast path (3/4 of 1792 = 1344 <= 1448): the whole buffer,
    # which 2.4 offers in whole segments also with window scaling (knob rcv_wnd_rule
    # "linux-2.4": 181 x 1448; 2.6 rounds a scaled window up to the scale's granularity instead).
    full = buf // MSS * MSS if receiver == "linux-2.4.27" else buf
    assert largest_window(receiver, "256KiB", rcv_skb_truesize=0) == full
    assert largest_window(receiver, "256KiB", rcv_skb_truesize=1792) == full
    # Twice the overhead per halving: 3/4 of 16640 B (a 16-KB jumbo-frame buffer) halved is
    # 6240 > 1448, halved three more times 780: growth only while rcv_ssthresh <= buf/16.
    w = largest_window(receiver, "256KiB", rcv_skb_truesize=16640)
    assert buf // 16 < w <= buf // 16 + 2 * MSS, w


@needs_core
def test_later_26_receivers_take_the_target_from_tcp_rmem_max() -> None:
    # linux-2.6.29 at MTU 1500: its 1792-B truesize is on the fast path, the window reaches the
    # set buffer.
    assert largest_window("linux-2.6.29", "256KiB") == 256 * 1024
    # An autotuned receiver (no window set) with 16-KB buffers: Linux >= 2.6.15 halves the
    # window of tcp_rmem[2] (rcvbuf_autotune_max, 3 MiB of window for this personality), so
    # growth stops once rcv_ssthresh passes 3 MiB / 16 = 196 608 B whatever the buffer is now.
    limit = 3145728 // 16
    w = largest_window("linux-2.6.29", rcv_skb_truesize=16640)
    assert limit < w <= limit + 2 * MSS, w
    # With the 2.4 / 2.6.10 target (the current buffer, 65 535 B of window at the start) 65535/16
    # is below the initial 4-segment window: nothing grows, and the window stays far smaller.
    held = largest_window("linux-2.6.29", rcv_skb_truesize=16640, grow_target_rmem_max=False)
    assert held < limit / 4, held
