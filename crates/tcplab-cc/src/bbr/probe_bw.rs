//! PROBE_BW: "BBR … cycles the pacing_gain … using an eight-phase cycle with the values 5/4,
//! 3/4, 1, 1, 1, 1, 1, 1. Each phase normally lasts for the estimated RTprop" (Cardwell et al.
//! 2016); cwnd gain 2 "to tolerate delayed/stretched ACKs" (L: net/ipv4/tcp_bbr.c).
//!
//! Phase advance (Linux `bbr_is_next_cycle_phase`), with `full` = the phase lasted more than
//! RTprop and `inflight` = data in flight before this ACK (`rs->prior_in_flight`):
//! * gain 1: advance when `full`;
//! * gain 5/4: advance when `full` and (a loss was seen, or `inflight ≥ inflight(BtlBw, 5/4)`) —
//!   the probe must actually raise inflight to 5/4·BDP;
//! * gain 3/4: advance when `full` or `inflight ≤ inflight(BtlBw, 1)` — the queue is drained.
//!
//! Linux starts the cycle at a random phase other than 3/4 (`bbr_cycle_rand = 7`), so that flows
//! entering PROBE_BW together do not probe in lockstep; the `auto` start draws it from the
//! flow's deterministic random stream (seeded by the stack from the trial seed and the flow,
//! docs/design.md §2).

use super::{Bbr, CycleStart, Mode};
use crate::{AckEvent, Nanos};

/// The pacing-gain cycle (Linux `bbr_pacing_gain`).
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

impl Bbr {
    /// Linux `bbr_reset_probe_bw_mode`.
    pub(super) fn enter_probe_bw(&mut self, now: Nanos) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = match self.p.cycle_start {
            CycleStart::Phase(i) => i % PACING_GAIN_CYCLE.len(),
            CycleStart::Auto => {
                // cycle_idx = CYCLE_LEN − 1 − rand(7), then advanced once: any phase but 1
                // (L: net/ipv4/tcp_bbr.c `bbr_reset_probe_bw_mode`, `bbr_cycle_rand` = 7).
                let r = (self.next_random() % 7) as usize;
                (PACING_GAIN_CYCLE.len() - 1 - r + 1) % PACING_GAIN_CYCLE.len()
            }
        };
        self.cycle_stamp = now;
    }

    /// Linux `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, ev: &AckEvent) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ev) {
            self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
            self.cycle_stamp = ev.now;
        }
    }

    fn is_next_cycle_phase(&self, ev: &AckEvent) -> bool {
        let full = self
            .min_rtt
            .is_some_and(|r| ev.now.saturating_sub(self.cycle_stamp) > r);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full;
        }
        let inflight = ev.prior_in_flight;
        let bw = self.btlbw();
        if gain > 1.0 {
            full && (self.pending_loss || inflight >= self.inflight_target(bw, gain))
        } else {
            full || inflight <= self.inflight_target(bw, 1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bbr_with, probe_bw};
    use super::super::{BbrParams, CycleStart};
    use crate::{CongestionControl, CongestionEvent, MS};

    #[test]
    fn test_auto_start_phase_is_never_the_drain_phase() {
        let mut seen = [false; 8];
        let mut b = bbr_with(
            10,
            BbrParams {
                cycle_start: CycleStart::Auto,
                ..BbrParams::default()
            },
        );
        for t in 0..1000u64 {
            b.enter_probe_bw(t * 7_919);
            seen[b.cycle_index()] = true;
        }
        assert!(!seen[1]);
        assert_eq!(seen.iter().filter(|&&x| x).count(), 7, "{seen:?}");
    }

    #[test]
    fn test_gain_one_phases_last_one_rtprop() {
        // In a gain-1 phase, the phase ends on the first ACK more than RTprop after its start:
        // with 100 ms rounds of ACKs 5 ms apart, at the first ACK of the round after the next
        // for the first phase, then one phase per round.
        let (mut b, mut s) = probe_bw(2);
        assert_eq!(b.cycle_index(), 2);
        let start = s.now;
        s.in_flight_segs = Some(100);
        let mut idx = vec![b.cycle_index()];
        while s.now < start + 700 * MS {
            s.round(&mut b, 8e6, 100 * MS);
            idx.push(b.cycle_index());
        }
        assert_eq!(idx, [2, 2, 3, 4, 5, 6, 7, 0], "{idx:?}");
    }

    #[test]
    fn test_probe_phase_needs_inflight_above_five_quarters_bdp() {
        // Gain 5/4 with inflight stuck at one BDP: the phase does not end after RTprop; once
        // inflight reaches 5/4·BDP (+ budget) it does.
        let (mut b, mut s) = probe_bw(0);
        assert_eq!(b.pacing_gain(), 1.25);
        s.in_flight_segs = Some(100);
        for _ in 0..3 {
            s.round(&mut b, 8e6, 100 * MS);
            assert_eq!(b.cycle_index(), 0);
        }
        s.in_flight_segs = Some(140);
        s.round(&mut b, 8e6, 100 * MS);
        assert_eq!(b.cycle_index(), 1);
        assert_eq!(b.pacing_gain(), 0.75);
        // A loss also ends the probe (the 5/4·BDP may not fit in the buffer).
        let (mut b, mut s) = probe_bw(0);
        s.in_flight_segs = Some(100);
        s.round(&mut b, 8e6, 100 * MS);
        s.round(&mut b, 8e6, 100 * MS);
        b.on_congestion_event(&CongestionEvent::default());
        s.round(&mut b, 8e6, 100 * MS);
        assert_eq!(b.cycle_index(), 1);
    }

    #[test]
    fn test_drain_phase_ends_early_when_inflight_at_most_bdp() {
        let (mut b, mut s) = probe_bw(1);
        assert_eq!(b.pacing_gain(), 0.75);
        // The first ACK of the 3/4 phase already sees inflight ≤ BDP (+ budget: 106 segments).
        s.in_flight_segs = Some(90);
        s.round(&mut b, 8e6, 100 * MS);
        assert_eq!(b.cycle_index(), 2);
    }

    #[test]
    fn test_pacing_rate_is_gain_times_btlbw_times_099() {
        let (mut b, mut s) = probe_bw(2);
        s.in_flight_segs = Some(100);
        s.round(&mut b, 8e6, 100 * MS);
        let want = b.pacing_gain() * 8e6 * 0.99;
        let got = b.pacing_rate().unwrap() as f64;
        assert!((got - want).abs() <= 1.0, "{got} vs {want}");
        assert_eq!(b.cwnd_gain(), 2.0);
    }
}
