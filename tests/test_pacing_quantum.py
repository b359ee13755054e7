"""Linux's paced senders send TSO-autosized buffers, not single segments (issue #15 §5, #12).

Since 4.20 a paced Linux flow (BBR; TCP's internal pacing) sends one buffer per pacing slot of
about 1 ms of data at the pacing rate, at least two segments (`tcp_tso_autosize`,
`bbr_min_tso_segs`), which the device cuts into back-to-back packets; the next slot is that
buffer's length at the pacing rate later (crates/tcplab-sim/src/tcp/sender/pacing.rs, knob
`pacing_quantum`). With one segment per slot the simulated BBR spread every packet evenly, and
identify took this kernel's BBR for loss-based algorithms whose bursts it had.

Measured on this machine's 6.18 kernel (kernel engine, sender-side captures, 2026-11-27): the
share of new-data departures that follow the previous one back to back (identify's
``burst_frac``) is 0.50 at 20 Mbit/s × 40 ms and 0.73 at 50 Mbit/s × 20 ms: buffers of 2 and
of about 4 segments. The model before: 0.01; now 0.50 and 0.75.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import back_to_back_share, kernel_engine_skip_reason, needs_core

KERNEL_SKIP = kernel_engine_skip_reason()


def doc(rate: str, rtt: str, queue: str = "1bdp", **tcp: Any) -> dict[str, Any]:
    flow: dict[str, Any] = {
        "name": "ident",
        "cca": "bbr",
        "sender_stack": "linux-6",
        "receiver_stack": "linux-6",
    }
    if tcp:
        flow["tcp"] = tcp
    return {
        "name": "pacing-quantum",
        "duration": "6s",
        "interval": "1s",
        "seed": 3,
        "path": {"rate": rate, "rtt": rtt, "queue": queue},
        "flow": [flow],
    }


@needs_core
@pytest.mark.parametrize(
    ("rate", "rtt", "lo", "hi"),
    # buffers of 2 segments (20 Mbit/s: 2.4 KB per ms) and of 3-5 (50 Mbit/s: 6 KB per ms at
    # the cruising rate, 1.25 and 0.75 of it in ProbeBW's probing phases)
    [("20Mbit", "40ms", 0.45, 0.55), ("50Mbit", "20ms", 0.68, 0.80)],
)
def test_linux6_bbr_sends_tso_sized_buffers(rate: str, rtt: str, lo: float, hi: float) -> None:
    share = back_to_back_share(doc(rate, rtt))
    assert lo <= share <= hi, share


@needs_core
def test_one_segment_per_slot_spreads_every_packet() -> None:
    share = back_to_back_share(doc("20Mbit", "40ms", pacing_quantum="segment"))
    assert share < 0.05, share


@needs_core
@pytest.mark.skipif(KERNEL_SKIP is not None, reason=KERNEL_SKIP or "")
def test_this_kernel_sends_bbr_in_buffers_too() -> None:
    kernel = back_to_back_share(doc("20Mbit", "40ms"), engine="kernel")
    sim = back_to_back_share(doc("20Mbit", "40ms"))
    assert abs(kernel - sim) < 0.1, (kernel, sim)
