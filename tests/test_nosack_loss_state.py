"""A sender without SACK after a timeout: duplicate ACKs clock out retransmissions (Linux
`tcp_add_reno_sack` in `tcp_process_loss`, bounded by `tcp_limit_reno_sacked`; RFC 5682 §2.1
step 3a), crates/tcplab-sim/src/tcp/sender/send.rs `SendState::pipe`.

Before the rule, F-RTO's two new segments (step 2b) and their duplicate ACKs filled the window
of two that follows a timeout and the sender waited for the next timeout, again and again:
measured on this path (linux-6, Reno, SACK off, 40 µs jitter, 12 trials of 10 s) 11 of 12
trials at 0.9 Mbit/s with 29–32 timeouts each. The kernel engine on the same path (10 trials,
`tcplab compare --set tcp.sack=false`) had no timeout at all (README, "The real-kernel engine").
"""

from __future__ import annotations

from pathlib import Path

import tcplab

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "python/tcplab/kernel/validation/a-reno-20mbit-40ms-1bdp.toml"


def test_no_sack_sender_does_not_wait_for_timeout_after_timeout():
    res = tcplab.run(
        SCENARIO,
        trials=6,
        overrides=[
            "engine=sim",
            "duration=10s",
            "stack=linux-6",
            "tcp.sack=false",
            "path.jitter=40us",
        ],
    )
    f = res.summary["flows"]["reno"]
    # A stalled trial takes a timeout every ~300 ms (≈ 30 in 10 s) and moves 0.9 Mbit/s.
    assert f["timeouts"]["max"] <= 8, f["timeouts"]
    assert min(f["goodput_bps_trials"]) > 4e6, f["goodput_bps_trials"]


NOSACK_RECORD = ROOT / "tests/data/kernel-records-nosack/a-reno-20mbit-40ms-1bdp"


def test_no_sack_recovery_matches_the_kernel_record():
    """Six kernel trials of validation row A with SACK off on both ends (`tcplab compare
    --set tcp.sack=false`, 10 s, this project's VM, Linux 6.18, 2026-11-28 04:17 UTC), replayed:
    the kernel recovers slow start's ~190 losses one per round trip (NewReno) without a single
    timeout. The simulator used to take a timeout in 3 of 24 replayed trials (2 097
    retransmissions on average, +38 % goodput): a NewReno partial ACK marked the next hole lost,
    but its retransmission waited for the deflated window, which slow start's overshoot kept
    full, until the timer fired. RFC 6582 §3.2 step 3 sends it at once (episode.rs).

    cwnd is not checked: Linux runs PRR with duplicate ACKs counted as delivered segments
    (`tcp_add_reno_sack`) and reports cwnd = ssthresh during this receive-window-limited
    recovery, where the simulator's NewReno inflates the window (README, "The real-kernel
    engine")."""
    from tcplab.kernel.compare import replay

    rep = replay(NOSACK_RECORD)
    assert rep["kernel_valid"], rep["kernel_invalid_reasons"]
    (flow,) = rep["flows"]
    checks = {k: (c["value"], c["pass"]) for k, c in flow["checks"].items()}
    for name in ("mean_goodput", "interval_goodput", "retransmits", "timeouts"):
        assert checks[name][1], checks


def test_linux_prr_without_sack_matches_the_kernel_record_cwnd_included():
    """The same record replayed with Linux's PRR without SACK (knob `recovery_nosack =
    "prr-reno"`, crates/tcplab-sim/src/tcp/recovery.rs `Mode::PrrReno`, episode.rs
    `Episodes::reno_sacked`): each duplicate ACK counts as a delivered segment, PRR runs on
    Linux's in-flight (`tcp_packets_in_flight` without those segments), so the reported cwnd is
    Linux's — ssthresh through this receive-window-limited recovery — and every check passes,
    cwnd's included (measured 2026-11-28: goodput −0.4 %, cwnd MAE 0.65 % of the kernel's mean,
    retransmissions 192 against 192, no timeout). With NewReno (the test above) the cwnd checks
    fail (×3.2, the inflated window)."""
    from tcplab.kernel.compare import replay

    rep = replay(NOSACK_RECORD, overrides=["tcp.recovery_nosack=prr-reno"])
    assert rep["kernel_valid"], rep["kernel_invalid_reasons"]
    (flow,) = rep["flows"]
    checks = {k: (c["value"], c["pass"]) for k, c in flow["checks"].items()}
    names = (
        "mean_goodput",
        "interval_goodput",
        "cwnd_mae",
        "cwnd_mean",
        "retransmits",
        "timeouts",
    )
    assert set(names) <= set(checks), checks
    for name in names:
        assert checks[name][1], checks
