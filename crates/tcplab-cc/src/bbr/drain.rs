//! DRAIN: pace at 1/2.885 of BtlBw (cwnd gain stays 2.885) "to drain the queue created in
//! STARTUP … typically in a single round" until the data in flight is at most one BDP, then
//! PROBE_BW (Cardwell et al. 2016; L: net/ipv4/tcp_bbr.c `bbr_check_drain`). Entering DRAIN
//! sets `ssthresh` to the BDP, as Linux does ("set ssthresh … upon STARTUP exit").

use super::{Bbr, Mode};
use crate::AckEvent;

impl Bbr {
    /// Linux `bbr_check_drain`: STARTUP → DRAIN when the pipe is full; DRAIN → PROBE_BW when
    /// inflight ≤ BDP (with the quantization budget, Linux `bbr_inflight(bw, 1)`).
    pub(super) fn check_drain(&mut self, ev: &AckEvent) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            let s = self.inflight_target(self.btlbw(), 1.0);
            self.win.set_ssthresh(s);
        }
        if self.mode == Mode::Drain && ev.in_flight <= self.inflight_target(self.btlbw(), 1.0) {
            self.enter_probe_bw(ev.now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bbr, Synth};
    use super::*;
    use crate::{CongestionControl, MS};

    /// STARTUP up to a plateau at 8 Mbit/s with RTT 100 ms (BDP 100 kB = 100 segments).
    fn to_drain(in_flight_segs: u64) -> (Bbr, Synth) {
        let mut b = bbr(10);
        let mut s = Synth::new(100 * MS);
        s.in_flight_segs = Some(in_flight_segs);
        for bw in [1e6, 2e6, 4e6, 8e6, 8e6, 8e6, 8e6] {
            s.round(&mut b, bw, 100 * MS);
        }
        (b, s)
    }

    #[test]
    fn test_drain_entered_with_inverse_gain_and_bdp_ssthresh() {
        // 250 segments in flight ≫ BDP: DRAIN stays and paces at 1/2.885.
        let (b, _) = to_drain(250);
        assert_eq!(b.mode(), Mode::Drain);
        assert!((b.pacing_gain() - 1.0 / 2.885).abs() < 1e-12);
        assert_eq!(b.cwnd_gain(), 2.885);
        // ssthresh = BDP (100 segments) + quantization budget (3·2 segments at 8 Mbit/s
        // pacing: 1 ms of data is one segment, the minimum is 2), rounded up to even.
        assert_eq!(b.ssthresh(), 106_000);
    }

    #[test]
    fn test_drain_exits_to_probe_bw_when_inflight_at_most_bdp() {
        let (mut b, mut s) = to_drain(250);
        assert_eq!(b.mode(), Mode::Drain);
        s.in_flight_segs = Some(90);
        s.round(&mut b, 8e6, 100 * MS);
        assert_eq!(b.mode(), Mode::ProbeBw);
    }
}
