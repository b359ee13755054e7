"""What a Linux 6.x receiver ACKs, end to end (issue #15 §3, end hosts).

Measured on this machine's 6.18 kernel (kernel engine, sender-side capture, one CUBIC flow,
74 Mbit/s × 20 ms, 2026-11-27): every GSO buffer's last segment carries PSH (16 % of the data
segments, one per run of back-to-back segments), and the receiver ACKs a run of 7 as 2 + 2 + 2
+ 1 segments: its application's read empties the queue after the pushed segment and the held ACK
leaves with it (`tcp_cleanup_rbuf`; knob `ack_pushed_on_read`). In steady state 24 % of its ACKs
cover one segment, 1.77 segments per ACK; in the first half second, while the window grows and
every growing segment keeps a quick ACK (`quickack_on_growth`), 49 % and 1.50.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conftest import kernel_engine_skip_reason, needs_core, pcap_tcp_rows

PSH = 0x08
KERNEL_SKIP = kernel_engine_skip_reason()


def run(
    receiver: str,
    sender: str = "linux-6",
    seconds: int = 5,
    engine: str = "sim",
    cca: str = "cubic",
    rate: str = "74Mbit",
) -> list[list[Any]]:
    import tcplab

    flow: dict[str, Any] = {"name": "f", "cca": cca}
    if engine == "sim":
        # the kernel engine runs this machine's Linux on both ends
        flow.update(sender_stack=sender, receiver_stack=receiver)
    doc = {
        "name": "acks",
        "duration": f"{seconds}s",
        "interval": "1s",
        "seed": 3,
        "path": {"rate": rate, "rtt": "20ms", "queue": "bdp"},
        "flow": [flow],
    }
    return pcap_tcp_rows(tcplab.run(doc, engine=engine, pcap=["host:f.snd"]).captures[0])


def acks_after(rows: list[list[Any]], t0_ns: float, t1_ns: float) -> list[float]:
    """Segments (of the flow's largest payload) acknowledged by each pure ACK in [t0, t1)."""
    mss = max(r[8] for r in rows)
    # the bulk connection: the port pair that carries the most data (iperf3 has a control
    # connection to the same server port)
    carried: dict[tuple[int, int], int] = {}
    for r in rows:
        carried[(r[1], r[2])] = carried.get((r[1], r[2]), 0) + r[8]
    sport, dport = max(carried, key=lambda k: carried[k])
    start = rows[0][0]
    out, last = [], None
    for r in rows:
        if (r[1], r[2]) != (dport, sport) or r[8] != 0:
            continue
        if last is not None and r[4] > last and t0_ns <= r[0] - start < t1_ns:
            out.append((r[4] - last) / mss)
        last = r[4] if last is None else max(last, r[4])
    return out


@needs_core
def test_linux6_pushes_the_last_segment_of_each_gso_buffer() -> None:
    rows = [r for r in run("linux-6") if r[8] > 0]
    late = [r for r in rows if r[0] - rows[0][0] > 3e9]
    pushed = [r for r in late if r[5] & PSH]
    # runs of 7 at this rate (test_tso_linux6): one PSH in 6-7 segments
    assert 0.12 < len(pushed) / len(late) < 0.2, len(pushed) / len(late)
    # and it ends a run: back to back is < 20 µs (a 1500-byte time at the bottleneck: 162 µs).
    # Kernel: 99 % of run ends carry PSH, 0.9 % of PSH segments have another buffer right behind.
    pairs = list(itertools.pairwise(late))
    ends = [a for a, b in pairs if b[0] - a[0] >= 20_000]
    assert sum(1 for a in ends if a[5] & PSH) / len(ends) > 0.95
    behind = [b[0] - a[0] < 20_000 for a, b in pairs if a[5] & PSH]
    assert sum(behind) / len(behind) < 0.03


@needs_core
def test_a_paced_linux6_sender_pushes_once_per_pacing_buffer() -> None:
    """BBR paces one GSO buffer per slot (`tcp_tso_autosize`: 1 ms of the pacing rate, at least
    `bbr_min_tso_segs` = 2 segments; about 4 at 50 Mbit/s) and `tcp_gso_segment` keeps the
    buffer's PSH on its last segment: so about one data segment in four carries PSH, and the
    linux-6 receiver, which ACKs a pushed segment once it is read (`ack_pushed_on_read`), still
    ACKs about every second segment. Before 2026-11-29 the model marked every paced segment
    as a buffer end, and its receiver ACKed every segment (1.08 segments per ACK) where this
    machine's 6.18 receiver ACKed every second behind BBR (identify's kernel captures)."""
    rows = run("linux-6", cca="bbr", rate="50Mbit")
    data = [r for r in rows if r[8] > 0 and r[0] - rows[0][0] > 3e9]
    pushed = sum(1 for r in data if r[5] & PSH) / len(data)
    assert 0.15 < pushed < 0.4, pushed
    steady = acks_after(rows, 3e9, 5e9)
    assert 1.6 < sum(steady) / len(steady) < 2.1, sum(steady) / len(steady)


@needs_core
@pytest.mark.skipif(KERNEL_SKIP is not None, reason=KERNEL_SKIP or "")
def test_this_kernel_acks_a_paced_bbr_flow_like_the_linux6_receiver() -> None:
    kernel = acks_after(run("linux-6", engine="kernel", cca="bbr", rate="50Mbit"), 3e9, 5e9)
    sim = acks_after(run("linux-6", cca="bbr", rate="50Mbit"), 3e9, 5e9)
    assert sum(kernel) / len(kernel) > 1.5, sum(kernel) / len(kernel)  # not every segment
    assert sum(kernel) / len(kernel) == pytest.approx(sum(sim) / len(sim), abs=0.25)


@needs_core
def test_senders_without_gso_buffers_push_only_their_last_segment() -> None:
    rows = [r for r in run("linux-6", sender="windows-7", seconds=2) if r[8] > 0]
    assert not any(r[5] & PSH for r in rows[:-1])


@needs_core
def test_linux6_receiver_acks_a_pushed_run_end_at_once() -> None:
    rows = run("linux-6")
    steady = acks_after(rows, 3e9, 5e9)
    one = sum(1 for a in steady if a < 1.5) / len(steady)
    mean = sum(steady) / len(steady)
    assert 0.18 < one < 0.32 and 1.65 < mean < 1.85, (one, mean)  # kernel 0.24, 1.77
    start = acks_after(rows, 0, 0.5e9)
    one = sum(1 for a in start if a < 1.5) / len(start)
    assert one > 0.35, one  # kernel 0.49: the growing window's quick ACKs


@needs_core
def test_a_receiver_without_the_rules_acks_every_second_segment() -> None:
    # the same linux-6 sender (PSH at each buffer's end) to a Windows 7 receiver
    steady = acks_after(run("windows-7"), 3e9, 5e9)
    assert sum(steady) / len(steady) == pytest.approx(2.0, abs=0.05)


def one_segment_share(acks: list[float]) -> float:
    return sum(1 for a in acks if a < 1.5) / len(acks)


@needs_core
@pytest.mark.skipif(KERNEL_SKIP is not None, reason=KERNEL_SKIP or "")
def test_this_kernel_acks_like_the_linux6_receiver() -> None:
    kernel = acks_after(run("linux-6", engine="kernel"), 3e9, 5e9)
    sim = acks_after(run("linux-6"), 3e9, 5e9)
    assert one_segment_share(kernel) > 0.12, one_segment_share(kernel)  # not every second
    assert abs(one_segment_share(kernel) - one_segment_share(sim)) < 0.08
    assert sum(kernel) / len(kernel) == pytest.approx(sum(sim) / len(sim), abs=0.12)


@needs_core
def test_a_macos_receiver_stretches_its_acks_to_every_eighth_segment() -> None:
    """XNU's stretch ACKs (knobs stretch_ack_*, receiver/stretch.rs): a bulk sender that never
    pushes (FreeBSD 5.3) streams into a macOS receiver, which ACKs every 8th segment once the
    512-segment wait is over; every second segment with the rule off."""
    rows = run("macos", sender="freebsd-5.3")
    steady = acks_after(rows, 3e9, 5e9)
    assert sum(1 for a in steady if 7.5 < a < 8.5) / len(steady) > 0.9, steady[:20]
    start = acks_after(rows, 0, 0.05e9)  # the first segments: the wait, every second one
    assert start and max(start) <= 2.05, start


@needs_core
def test_a_macos_receiver_acks_pushed_segments_at_once() -> None:
    """The linux-6 sender pushes the last segment of each GSO buffer: the macOS receiver ACKs
    each at once (`ack_on_push`) and restarts its count, so its ACKs cover fewer than 8."""
    steady = acks_after(run("macos"), 3e9, 5e9)
    mean = sum(steady) / len(steady)
    assert 3.0 < mean < 6.0, mean  # 100 Mbit/s x 20 ms run in the README: 4.1
