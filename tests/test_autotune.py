"""Linux receive-buffer autotuning paced by the receiver's own RTT estimate (issue #15, §3).

A Linux receiver sizes its window from the bytes the application took in the last *estimated*
round trip (dynamic right-sizing). Linux estimates that round trip from timestamp echoes, which
include the queueing delay, and 6.18 adds a slow-start boost; the model used the handshake's RTT
for the whole connection instead, so on a path with a standing queue its window (twice the bytes
per handshake RTT) stayed under the path's capacity and a bulk flow never filled the buffer.

Measured on this machine's kernel (6.18, 2026-11-26): a reno flow on 24.4 Mbit/s × 22.5 ms with
1.39 BDP of drop-tail buffer was offered 1.62 MB of window within a second and retransmitted
130 segments in 20 s; the model before the change offered 133 KB and lost nothing, after it
1.53 MB and 132 retransmissions (cwnd per second within one segment of the kernel's).
The kernel check at the end repeats that measurement (root, kernel engine).
"""

from __future__ import annotations

from typing import Any

import pytest

import tcplab
from conftest import kernel_engine_skip_reason, needs_core

RATE = 24.4e6
RTT = 0.0225
BDP = RATE * RTT / 8  # bytes
BUFFER = 1.39  # BDP
KERNEL_SKIP = kernel_engine_skip_reason()


def bulk(receiver: str, duration: str = "4s", **receiver_tcp: Any) -> dict[str, Any]:
    flow: dict[str, Any] = {
        "name": "bulk",
        "cca": "reno",
        "sender_stack": "linux-6",
        "receiver_stack": receiver,
    }
    if receiver_tcp:
        flow["receiver_tcp"] = receiver_tcp
    return {
        "name": "autotune",
        "duration": duration,
        "interval": "500ms",
        "seed": 1,
        "path": {"rate": "24.4Mbit", "rtt": "22.5ms", "queue": f"{BUFFER} bdp"},
        "flow": [flow],
    }


def run(doc: dict[str, Any]) -> tuple[float, int]:
    """Largest offered window (bytes) and bottleneck drops."""
    raw = tcplab.run(doc).raw[0]
    drops = sum(link["drops"] for link in raw["links"])
    return largest_window(raw), drops


def largest_window(raw: dict[str, Any]) -> float:
    """The largest window offered to the only flow (index 0 in the raw series)."""
    s = raw["series"]
    return max(w for f, w in zip(s["flow"], s["rwnd_bytes"], strict=True) if f == 0)


@needs_core
@pytest.mark.parametrize("receiver", ["linux-6", "linux-2.6.29"])
def test_linux_receiver_window_outgrows_a_standing_queue(receiver: str) -> None:
    rwnd, drops = run(bulk(receiver))
    # The window grows past what the path holds (BDP + buffer), so the buffer overflows.
    assert rwnd > (1 + BUFFER) * BDP * 1.5, rwnd
    assert drops > 0


@needs_core
def test_with_the_handshake_rtt_the_window_stays_under_the_path() -> None:
    # The same receiver with the estimator the model had before: the handshake RTT.
    rwnd, drops = run(bulk("linux-6", rcv_rtt="handshake", rcvbuf_autotune_boost=False))
    assert rwnd < (1 + BUFFER) * BDP
    assert drops == 0


@needs_core
@pytest.mark.skipif(KERNEL_SKIP is not None, reason=KERNEL_SKIP or "")
def test_this_kernel_also_outgrows_the_queue(tmp_path) -> None:
    doc = bulk("linux-6", duration="4s")
    raw = tcplab.run(doc, engine="kernel").raw[0]
    rwnd = largest_window(raw)
    assert rwnd > (1 + BUFFER) * BDP * 1.5, rwnd
    assert raw["flows"][0]["retransmits"] > 0
