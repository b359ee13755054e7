"""Unpaced Linux 6.x senders leave in runs of GSO-buffer size (issue #15 §5, knob `tso_model`).

Every Linux TCP socket builds GSO buffers since 4.17, whatever the device offers, and
`tcp_tso_should_defer` holds a buffer while less than a full `tcp_tso_autosize` buffer (about
1 ms of data at the socket's pacing rate, at least 2 segments) and less than a third of the
window is open (crates/tcplab-sim/src/tcp/sender/tso.rs). So an ACK-clocked CUBIC or Reno flow
does not answer each ACK of two segments with two segments: it waits for a buffer's worth.

Measured on this machine's 6.18 kernel (kernel engine, sender-side captures, one CUBIC flow,
2026-11-27): the share of new-data departures that follow the previous one back to back
(identify's ``burst_frac``) is 0.53 at 20 Mbit/s × 40 ms, 0.81 at 50 × 20 and 0.90 at 100 × 20
(buffers of 2, about 5 and about 10 segments); the model without the deferral gives 0.50 at
every rate (pairs, one per ACK), with it 0.50, 0.75 and 0.89.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import back_to_back_share, kernel_engine_skip_reason, needs_core

KERNEL_SKIP = kernel_engine_skip_reason()


def doc(rate: str, rtt: str, stacks: bool = True, **tcp: Any) -> dict[str, Any]:
    flow: dict[str, Any] = {"name": "ident", "cca": "cubic"}
    if stacks:
        # The kernel engine runs this machine's Linux (its CUBIC parameters have no
        # counterpart to set), so only the simulator's flow names the personality.
        flow.update(sender_stack="linux-6", receiver_stack="linux-6")
    if tcp:
        flow["tcp"] = tcp
    return {
        "name": "tso-linux6",
        "duration": "8s",
        "interval": "1s",
        "seed": 3,
        "path": {"rate": rate, "rtt": rtt, "queue": "1bdp"},
        "flow": [flow],
    }


@needs_core
@pytest.mark.parametrize(
    ("rate", "lo", "hi"),
    # buffers of 2 (20 Mbit/s: 2.9 KB per ms at 1.2 x the rate), about 5 and about 10 segments
    [("20Mbit", 0.45, 0.56), ("50Mbit", 0.70, 0.82), ("100Mbit", 0.84, 0.94)],
)
def test_linux6_cubic_leaves_in_buffer_sized_runs(rate: str, lo: float, hi: float) -> None:
    rtt = "40ms" if rate == "20Mbit" else "20ms"
    share = back_to_back_share(doc(rate, rtt))
    assert lo <= share <= hi, share


@needs_core
def test_without_gso_deferral_each_ack_releases_a_pair() -> None:
    # The same flow with the knob off: one pair per ACK of two segments, at any rate.
    share = back_to_back_share(doc("100Mbit", "20ms", tso=False))
    assert 0.45 <= share <= 0.56, share


@needs_core
@pytest.mark.skipif(KERNEL_SKIP is not None, reason=KERNEL_SKIP or "")
def test_this_kernel_defers_cubic_to_buffers_too() -> None:
    kernel = back_to_back_share(doc("100Mbit", "20ms", stacks=False), engine="kernel")
    sim = back_to_back_share(doc("100Mbit", "20ms"))
    assert kernel > 0.7, kernel  # far from the pairs (0.5) of a sender without the deferral
    assert abs(kernel - sim) < 0.1, (kernel, sim)


@needs_core
def test_linux6_write_buffers_split_into_runs_of_the_gso_size() -> None:
    """80 Mbit/s × 20 ms: GSO buffers of 7 segments cut from 45-segment write buffers (7 × 6 +
    3), and a part of a buffer is deferred even when only one segment is open. Measured on this
    machine's 6.18 kernel (sender capture after 3 s, one CUBIC flow, 2026-11-27): 90 % of the
    segments in runs of 7, 4 % in runs of 3, none in runs of 8 or more."""
    import collections
    import itertools

    import tcplab
    from conftest import pcap_tcp_rows

    res = tcplab.run(doc("80Mbit", "20ms") | {"duration": "6s"}, pcap=["host:ident.snd"])
    rows = [r for r in pcap_tcp_rows(res.captures[0]) if r[8] > 0]
    times = [r[0] for r in rows if r[0] - rows[0][0] > 3e9]
    runs, n = [], 1
    for a, b in itertools.pairwise(times):
        if b - a < 20_000:  # back to back: well under one 1500-byte time (150 µs)
            n += 1
        else:
            runs.append(n)
            n = 1
    runs.append(n)
    segs = collections.Counter()
    for r in runs:
        segs[min(r, 8)] += r
    total = sum(segs.values())
    assert segs[7] / total > 0.8, segs
    assert segs[8] / total < 0.02, segs  # before: a lone open segment left, 7 + 1 runs
