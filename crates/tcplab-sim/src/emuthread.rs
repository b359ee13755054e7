//! One software emulator thread serving several link directions (knob `emulator_thread` of
//! the configuration; used by `tcplab compare` for the kernel engine's link emulator).
//!
//! The kernel engine's emulator (crates/tcplab-linkem/src/serve.rs) is one thread that sleeps
//! until the next packet of any of its link directions is due, wakes up some µs late, and then
//! sends every packet due by then, one `sendto` after the other. Measured on this project's
//! 2-core VM (a C/CUBIC kernel trial, 2026-11-28, 763 k departures on six directions, with the
//! emulator's `TCPLAB_LINKEM_TRACE`; README "The real-kernel engine"): a wake-up sends 3.2
//! packets on average; its lateness (first send − earliest due time) is 6.9 / 24.8 / 38.5 µs at
//! the 10th / 50th / 90th percentile; consecutive sends of one wake-up are 3.2 / 7.3 / 13.7 µs
//! apart. So packets of *different* directions due within a few µs of each other leave in the
//! same wake-up: their lateness, less each direction's median, is correlated +0.72 for due
//! times within 2 µs, +0.74 within 2–10 µs, +0.62 within 10–30 µs and +0.12 beyond, and
//! 0.03 once the earlier one had been sent before the later one was due. Independent draws per
//! direction (`jitter` on each direction, the model before this one) cannot give that.
//!
//! The model: in the order the packets fall due (the simulator's event order), a packet due at
//! `d` while the thread is still busy — its last send, at `free_at`, came after `d` — leaves
//! one send gap after that send; otherwise the thread wakes up for it and it leaves at `d` plus
//! a wake-up lateness. Both are drawn from their measured distributions (the emulator reports
//! them: `thread.wakeup_lateness`, `thread.send_gap`). Within a wake-up the thread serves in
//! due order, where the emulator serves its directions in a fixed order (an approximation).
//! The order within a direction is kept: a later packet of the same direction falls due later,
//! so it leaves in the same wake-up after it or in a later one.

use crate::config::JitterCfg;
use crate::link::Jitter;
use crate::rng::Rng;
use crate::time::Nanos;

/// The shared thread: its two measured distributions and when its last send happened.
#[derive(Clone, Debug)]
pub struct EmuThread {
    wakeup: Jitter,
    send_gap: Jitter,
    /// Time of the last send (0 before the first).
    free_at: Nanos,
    /// Wake-ups and sends so far (read by the tests).
    pub wakeups: u64,
    pub sends: u64,
}

impl EmuThread {
    /// Both configurations must have passed [`JitterCfg::check`]; each draws from its own
    /// random stream.
    pub fn new(wakeup: JitterCfg, send_gap: JitterCfg, wakeup_rng: Rng, gap_rng: Rng) -> EmuThread {
        EmuThread {
            wakeup: Jitter::new(wakeup, wakeup_rng),
            send_gap: Jitter::new(send_gap, gap_rng),
            free_at: 0,
            wakeups: 0,
            sends: 0,
        }
    }

    /// A packet fell due at `due` (now): the time it leaves (≥ `due`).
    #[inline]
    pub fn serve(&mut self, due: Nanos) -> Nanos {
        let at = if due < self.free_at {
            self.free_at + self.send_gap.draw()
        } else {
            self.wakeups += 1;
            due + self.wakeup.draw()
        };
        self.sends += 1;
        self.free_at = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(ns: u64) -> JitterCfg {
        JitterCfg::Empirical {
            cdf: vec![(ns, 0.0), (ns, 1.0)],
        }
    }

    #[test]
    fn packets_due_while_the_thread_is_late_share_its_wake_up() {
        let mut t = EmuThread::new(fixed(20_000), fixed(7_000), Rng::new(1), Rng::new(2));
        // Due at 1 ms: the thread wakes 20 µs late.
        assert_eq!(t.serve(1_000_000), 1_020_000);
        // Due 5 µs later (another direction): still inside the late wake-up, one gap later.
        assert_eq!(t.serve(1_005_000), 1_027_000);
        // Due at 1.019 ms, before the last send: one more gap.
        assert_eq!(t.serve(1_019_000), 1_034_000);
        assert_eq!((t.wakeups, t.sends), (1, 3));
        // Due after the last send: a wake-up of its own.
        assert_eq!(t.serve(1_034_000), 1_054_000);
        assert_eq!(t.wakeups, 2);
    }

    #[test]
    fn departures_keep_the_order_of_due_times() {
        let mut t = EmuThread::new(
            JitterCfg::Uniform { max_ns: 60_000 },
            JitterCfg::Uniform { max_ns: 14_000 },
            Rng::new(7),
            Rng::new(8),
        );
        let mut due = 0;
        let mut last = 0;
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            due += rng.next_u64() % 40_000;
            let at = t.serve(due);
            assert!(at >= due && at >= last, "due {due} left {at} after {last}");
            last = at;
        }
        assert!(t.wakeups < t.sends && t.wakeups > t.sends / 4);
    }
}
