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
